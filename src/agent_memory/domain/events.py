"""The audit trail of a memory: every create, update, pin and delete."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from agent_memory.domain.memory import Memory


class MemoryEventType(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    PINNED = "pinned"
    UNPINNED = "unpinned"
    DELETED = "deleted"
    SUPERSEDED = "superseded"


@dataclass(frozen=True)
class MemoryEvent:
    """Who changed a memory, when, and its value before and after."""

    id: uuid.UUID
    memory_id: uuid.UUID
    type: MemoryEventType
    actor_user_id: str
    occurred_at: datetime
    old: Memory | None
    new: Memory | None
