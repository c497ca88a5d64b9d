"""Active memory: one model session an agent's chat and scheduled runs share.

The rules, all pure:

- Off by default. While off, nothing is offered to resume; the stored session stays.
- Turning it on, and Reset, start fresh: no session id, and the runs-since-reset
  anchor moves to now.
- A run that reports the session id it finished with, while active memory is on,
  hands that id to the next run and counts as one successful run since the reset.
- Past a threshold of runs the session is flagged: it keeps growing, and a reset
  keeps runs fast.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from agent_memory.domain.errors import FieldViolation, check
from agent_memory.domain.history import CLOCK_SKEW
from agent_memory.domain.memory import owner_violations
from agent_memory.domain.text_rules import CONTROL_CHARACTERS, text_violations

RUN_ID_MAX_CHARS = 255
SESSION_ID_MAX_CHARS = 255
# What a session id (a model provider's token) must not hold, as the inside of a
# regular expression class: whitespace (every character str.isspace takes) and
# control characters. The OpenAPI document states the same class.
SESSION_ID_FORBIDDEN = (
    r"\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000" + CONTROL_CHARACTERS
)
_NOT_IN_SESSION_ID = re.compile(f"[{SESSION_ID_FORBIDDEN}]")


class RunKind(StrEnum):
    """What started a run: its schedule (or a person, by hand), or a chat message.
    Both share the session; only scheduled runs count toward the reset warning."""

    SCHEDULED = "scheduled"
    CHAT = "chat"


class ActiveSessionStatus(StrEnum):
    FRESH = "fresh"
    CARRYING_CONTEXT = "carrying_context"


@dataclass(frozen=True)
class StoredSession:
    """What is kept for an agent, whether or not active memory is on now."""

    session_id: str | None
    session_updated_at: datetime | None
    last_reset_at: datetime


@dataclass(frozen=True)
class RunSession:
    """One finished run: the session it resumed and the one it ended with."""

    run_id: str
    session_id_before: str | None
    session_id_after: str | None
    kind: RunKind = RunKind.SCHEDULED
    # When its prompt was rendered (the render's render_time), so it can be rendered
    # again as it was; None when the orchestrator did not say.
    render_time: datetime | None = None

    @property
    def succeeded(self) -> bool:
        """Only a run that reported the session it ended with can be resumed from."""
        return self.session_id_after is not None


@dataclass(frozen=True)
class RecordedRun:
    """A run as stored: whether its session became the agent's, and when."""

    run: RunSession
    carried: bool
    recorded_at: datetime


@dataclass(frozen=True)
class ActiveSession:
    """What an orchestrator needs before a run: what to resume, and how big it has grown."""

    agent_id: str
    enabled: bool
    session_id: str | None
    status: ActiveSessionStatus
    runs_since_reset: int
    session_age: timedelta | None
    warning: bool
    warning_threshold: int
    last_reset_at: datetime | None
    updated_at: datetime | None


def active_session(
    agent_id: str,
    *,
    enabled: bool,
    stored: StoredSession | None,
    runs_since_reset: int,
    now: datetime,
    warning_threshold: int,
) -> ActiveSession:
    """The session as offered to the next run. Disabled agents are offered nothing."""
    last_reset_at = stored.last_reset_at if stored is not None else None
    if not enabled or stored is None or stored.session_id is None:
        return ActiveSession(
            agent_id=agent_id,
            enabled=enabled,
            session_id=None,
            status=ActiveSessionStatus.FRESH,
            runs_since_reset=runs_since_reset if enabled else 0,
            session_age=None,
            warning=enabled and runs_since_reset > warning_threshold,
            warning_threshold=warning_threshold,
            last_reset_at=last_reset_at,
            updated_at=None,
        )
    updated_at = stored.session_updated_at
    age = max(now - updated_at, timedelta(0)) if updated_at is not None else None
    return ActiveSession(
        agent_id=agent_id,
        enabled=True,
        session_id=stored.session_id,
        status=ActiveSessionStatus.CARRYING_CONTEXT,
        runs_since_reset=runs_since_reset,
        session_age=age,
        warning=runs_since_reset > warning_threshold,
        warning_threshold=warning_threshold,
        last_reset_at=last_reset_at,
        updated_at=updated_at,
    )


def _session_id_violations(path: str, value: str) -> list[FieldViolation]:
    if len(value) > SESSION_ID_MAX_CHARS:
        return text_violations(path, value, max_chars=SESSION_ID_MAX_CHARS)
    if _NOT_IN_SESSION_ID.search(value):
        return [
            FieldViolation(
                path, "must not contain spaces or control characters", "INVALID_CHARACTER"
            )
        ]
    return []


def run_session(
    agent_id: str,
    run_id: str,
    session_id_before: str,
    session_id_after: str,
    kind: RunKind = RunKind.SCHEDULED,
    render_time: datetime | None = None,
) -> RunSession:
    """Validate a finished run's report; empty session ids mean "none".

    Raises:
        InvalidArgument: a bad agent id, run id or session id.
    """
    violations = owner_violations("agent_id", agent_id)
    violations += text_violations("run_id", run_id, max_chars=RUN_ID_MAX_CHARS)
    violations += _session_id_violations("session_id_before", session_id_before)
    violations += _session_id_violations("session_id_after", session_id_after)
    check(violations)
    return RunSession(
        run_id=run_id,
        session_id_before=session_id_before or None,
        session_id_after=session_id_after or None,
        kind=kind,
        render_time=render_time,
    )


def check_render_time(render_time: datetime | None, *, now: datetime) -> None:
    """A run's prompt was rendered before it finished: not later than ``now``, give or
    take another replica's clock.

    Raises:
        InvalidArgument: ``render_time`` is in the future (reason ``IN_THE_FUTURE``).
    """
    if render_time is not None and render_time > now + CLOCK_SKEW:
        check(
            [
                FieldViolation(
                    "render_time",
                    f"{render_time.isoformat()} is in the future; a run's prompt is "
                    "rendered before the run is recorded",
                    "IN_THE_FUTURE",
                )
            ]
        )
