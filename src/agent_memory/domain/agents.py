"""Per-agent memory settings."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


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
