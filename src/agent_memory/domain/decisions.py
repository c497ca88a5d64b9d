"""Decision cards, their compact review lines, and re-examinations.

A decision is one run's structured result. Its result is written once; a
re-examination is a later run's conviction on it, kept beside it, never in it.
Card types are data: whether their decisions may be re-examined, and the
action words their decisions and re-examinations may use.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from agent_memory.domain.errors import FailedPrecondition, FieldViolation, check
from agent_memory.domain.memory import owner_violations
from agent_memory.domain.screening import refuse_instructions
from agent_memory.domain.text_rules import identifier_violations, json_violations, text_violations

CARD_TYPE_NAME_MAX_CHARS = 64
ACTION_MAX_CHARS = 32
MAX_ACTIONS = 50
RUN_ID_MAX_CHARS = 255
SUMMARY_MAX_CHARS = 200
NOTES_MAX_CHARS = 500
RESULT_MAX_BYTES = 64 * 1024
CONVICTION_MIN = 0
CONVICTION_MAX = 100
RECENT_DEFAULT = 5
RECENT_MAX = 50

COMPACT_SEPARATOR = " \u00b7 "  # a middle dot: "2d ago · WAIT · range unresolved"

CARD_TYPE_NAME_PATTERN = r"[a-z][a-z0-9_-]*"
ACTION_PATTERN = r"[A-Z][A-Z0-9_]*"
_CARD_TYPE_NAME = re.compile(CARD_TYPE_NAME_PATTERN)
_ACTION = re.compile(ACTION_PATTERN)


class ReExaminable(StrEnum):
    NEVER = "never"
    ALWAYS = "always"
    UNTIL_RESOLVED = "until_resolved"


class ResolutionStatus(StrEnum):
    OPEN = "open"
    RESOLVED = "resolved"
    EXPIRED = "expired"


@dataclass(frozen=True)
class CardType:
    name: str
    re_examinable: ReExaminable = ReExaminable.NEVER
    actions: tuple[str, ...] = ()
    decision_actions: tuple[str, ...] = ()
    created_at: datetime | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True)
class NewDecision:
    run_id: str
    agent_id: str
    card_type: str
    action: str
    summary: str
    result: Mapping[str, Any]


@dataclass(frozen=True)
class Decision:
    id: uuid.UUID
    run_id: str
    agent_id: str
    card_type: str
    action: str
    summary: str
    result: Mapping[str, Any] | None  # None when the listing left it out
    resolution_status: ResolutionStatus
    created_at: datetime
    resolved_at: datetime | None = None
    latest_conviction_score: int | None = None
    reexamination_count: int = 0
    compact: str = ""

    def same_as(self, new: NewDecision) -> bool:
        """Whether ``new`` is this decision sent again (a retry, not a second decision)."""
        return (
            self.agent_id,
            self.card_type,
            self.action,
            self.summary,
            result_json(self.result or {}),
        ) == (new.agent_id, new.card_type, new.action, new.summary, result_json(new.result))


@dataclass(frozen=True)
class NewReexamination:
    parent_decision_id: uuid.UUID
    run_id: str
    conviction_score: int
    notes: str
    suggested_action: str


@dataclass(frozen=True)
class Reexamination:
    id: uuid.UUID
    parent_decision_id: uuid.UUID
    run_id: str
    conviction_score: int
    notes: str
    suggested_action: str
    created_at: datetime

    def same_as(self, new: NewReexamination) -> bool:
        return (
            self.parent_decision_id,
            self.conviction_score,
            self.notes,
            self.suggested_action,
        ) == (new.parent_decision_id, new.conviction_score, new.notes, new.suggested_action)


# --- the compact review line ------------------------------------------------------------


def relative_age(age: timedelta) -> str:
    """Whole seconds, minutes, hours or days, rounded down: ``45s``, ``12m``, ``5h``, ``2d``.

    A negative age (a clock step back) reads as ``0s``.
    """
    seconds = max(int(age.total_seconds()), 0)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


def compact_line(decision: Decision, now: datetime) -> str:
    """The review line an agent reads instead of its old transcript.

    ``2d ago · WAIT · range unresolved``: age as of ``now``, action, summary.
    """
    age = relative_age(now - decision.created_at)
    # One line whatever a summary stored before line breaks were refused holds.
    summary = " ".join(decision.summary.split())
    return COMPACT_SEPARATOR.join((f"{age} ago", decision.action, summary))


# --- validation -------------------------------------------------------------------------


def action_violations(path: str, action: str, allowed: Sequence[str] = ()) -> list[FieldViolation]:
    """An uppercase word of at most 32 characters; one of ``allowed`` when there are any."""
    if not action:
        return [FieldViolation(path, "must not be empty", "REQUIRED")]
    if len(action) > ACTION_MAX_CHARS or not _ACTION.fullmatch(action):
        return [
            FieldViolation(
                path,
                f"must be an uppercase word matching ^[A-Z][A-Z0-9_]*$ of at most "
                f"{ACTION_MAX_CHARS} characters",
                "INVALID_ACTION",
            )
        ]
    if allowed and action not in allowed:
        return [
            FieldViolation(
                path, f"must be one of the card type's actions: {', '.join(allowed)}", "NOT_ALLOWED"
            )
        ]
    return []


def card_type_name_violations(path: str, name: str) -> list[FieldViolation]:
    if not name:
        return [FieldViolation(path, "must not be empty", "REQUIRED")]
    if len(name) > CARD_TYPE_NAME_MAX_CHARS or not _CARD_TYPE_NAME.fullmatch(name):
        return [
            FieldViolation(
                path,
                "must be a slug: lowercase letters, digits, '-' and '_', starting with a "
                f"letter, at most {CARD_TYPE_NAME_MAX_CHARS} characters",
                "INVALID_NAME",
            )
        ]
    return []


def _vocabulary_violations(path: str, words: Sequence[str]) -> list[FieldViolation]:
    if len(words) > MAX_ACTIONS:
        return [FieldViolation(path, f"must list at most {MAX_ACTIONS} actions", "TOO_MANY")]
    violations: list[FieldViolation] = []
    for i, word in enumerate(words):
        violations += action_violations(f"{path}[{i}]", word)
    if len(set(words)) != len(words):
        violations.append(FieldViolation(path, "must not repeat an action", "DUPLICATE"))
    return violations


def validate_card_type(card_type: CardType) -> None:
    """Raises: InvalidArgument — a bad name or action word."""
    violations = card_type_name_violations("card_type.name", card_type.name)
    violations += _vocabulary_violations("card_type.actions", card_type.actions)
    violations += _vocabulary_violations("card_type.decision_actions", card_type.decision_actions)
    check(violations)


def _one_line_violations(path: str, text: str, max_chars: int) -> list[FieldViolation]:
    violations = text_violations(path, text, max_chars=max_chars)
    if not violations and any(c in text for c in "\r\n\u2028\u2029\x85"):
        violations.append(FieldViolation(path, "must be one line", "MULTILINE"))
    return violations


def result_json(result: Mapping[str, Any]) -> str:
    """The result as the compact JSON that is measured, scanned for secrets and stored."""
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def validate_decision(decision: NewDecision) -> str:
    """Check the shape of a decision; returns its result as JSON.

    Raises:
        InvalidArgument: a bad run id, agent id, card type name, action, summary or
            result; or a summary that reads as an instruction to the assistant (reason
            ``INSTRUCTION_NOT_FACT``), since a summary reaches later runs' prompts.
    """
    violations = identifier_violations(
        "decision.run_id", decision.run_id, max_chars=RUN_ID_MAX_CHARS
    )
    violations += owner_violations("decision.agent_id", decision.agent_id)
    violations += card_type_name_violations("decision.card_type", decision.card_type)
    violations += action_violations("decision.action", decision.action)
    violations += _one_line_violations("decision.summary", decision.summary, SUMMARY_MAX_CHARS)
    unstorable = json_violations("decision.result", decision.result)
    dumped = "" if unstorable else result_json(decision.result)
    if unstorable:
        violations += unstorable
    elif len(dumped.encode()) > RESULT_MAX_BYTES:
        violations.append(
            FieldViolation(
                "decision.result",
                f"must be at most {RESULT_MAX_BYTES} bytes as JSON (got {len(dumped.encode())})",
                "TOO_LARGE",
            )
        )
    check(violations)
    refuse_instructions("decision.summary", decision.summary)
    return dumped


def validate_reexamination(item: NewReexamination) -> None:
    """Check the shape of a re-examination; the card type's vocabulary is checked later.

    Raises:
        InvalidArgument: a bad run id, conviction score, notes or suggested action; or
            notes that read as an instruction to the assistant (reason
            ``INSTRUCTION_NOT_FACT``), since notes reach later runs' prompts.
    """
    violations = identifier_violations("run_id", item.run_id, max_chars=RUN_ID_MAX_CHARS)
    if not CONVICTION_MIN <= item.conviction_score <= CONVICTION_MAX:
        violations.append(
            FieldViolation(
                "conviction_score",
                f"must be between {CONVICTION_MIN} and {CONVICTION_MAX} "
                f"(got {item.conviction_score})",
                "OUT_OF_RANGE",
            )
        )
    violations += _one_line_violations("notes", item.notes, NOTES_MAX_CHARS)
    violations += action_violations("suggested_action", item.suggested_action)
    check(violations)
    refuse_instructions("notes", item.notes)


def recent_limit(requested: int) -> int:
    """Zero means the default (5); above 50 is lowered to 50; negative is refused."""
    if requested < 0:
        check([FieldViolation("limit", "must not be negative", "OUT_OF_RANGE")])
    return min(requested or RECENT_DEFAULT, RECENT_MAX)


def parse_decision_id(path: str, raw: str) -> uuid.UUID:
    """Decision ids are UUIDs; anything else is a malformed request, not a missing row."""
    if not raw:
        check([FieldViolation(path, "must not be empty", "REQUIRED")])
    try:
        return uuid.UUID(raw)
    except ValueError:
        check([FieldViolation(path, "must be a decision id (a UUID)", "INVALID_ID")])
        raise  # unreachable: check() raised


# --- re-examination rules ---------------------------------------------------------------


def reexamination_refusal(card_type: CardType, decision: Decision) -> FailedPrecondition | None:
    """Why ``decision`` may not be re-examined under ``card_type``'s rules, if it may not."""
    metadata = {
        "decision_id": str(decision.id),
        "card_type": card_type.name,
        "re_examinable": card_type.re_examinable.value,
    }
    if card_type.re_examinable is ReExaminable.NEVER:
        return FailedPrecondition(
            f"decisions of card type {card_type.name!r} are not re-examinable",
            reason="NOT_RE_EXAMINABLE",
            metadata=metadata,
        )
    if (
        card_type.re_examinable is ReExaminable.UNTIL_RESOLVED
        and decision.resolution_status is not ResolutionStatus.OPEN
    ):
        return FailedPrecondition(
            f"decision {decision.id} is {decision.resolution_status.value}; card type "
            f"{card_type.name!r} is re-examinable only until resolved",
            reason="DECISION_CLOSED",
            metadata={**metadata, "resolution_status": decision.resolution_status.value},
        )
    return None
