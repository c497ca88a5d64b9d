"""Per-agent and per-workspace memory settings."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from agent_memory.domain.errors import FieldViolation
from agent_memory.domain.memory import TTL_MAX

# A use moves an expiry at most this far ahead of it: as far as a time to live reaches.
EXPIRY_SLIDE_MAX = TTL_MAX


@dataclass(frozen=True)
class AgentSettings:
    """Agent memory and active memory are off until the orchestrator turns them on."""

    agent_id: str
    memory_enabled: bool = False
    updated_at: datetime | None = None
    active_memory_enabled: bool = False
    # Review previous decisions: a render adds the recent decision cards unless its
    # request says otherwise.
    review_decisions: bool = False
    # A memory of the agent that expires and is rendered or recalled expires no sooner
    # than this long after the use; zero leaves expiries where they are.
    expiry_slide: timedelta = timedelta(0)


@dataclass(frozen=True)
class WorkspaceSettings:
    """A workspace's settings; a workspace never configured reads as these defaults."""

    workspace_id: str
    # As AgentSettings.expiry_slide, for the workspace's memories.
    expiry_slide: timedelta = timedelta(0)
    updated_at: datetime | None = None


def expiry_slide_violations(path: str, slide: timedelta) -> list[FieldViolation]:
    """A slide is zero (off) or up to :data:`EXPIRY_SLIDE_MAX`."""
    if timedelta(0) <= slide <= EXPIRY_SLIDE_MAX:
        return []
    return [
        FieldViolation(
            path, f"must be from 0 to {EXPIRY_SLIDE_MAX.days} days (0 is off)", "OUT_OF_RANGE"
        )
    ]
