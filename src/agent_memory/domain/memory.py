"""Memory rows: scoped key/value facts with a source, a pin and an importance."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from agent_memory.domain.errors import FieldViolation, check

KEY_MAX_CHARS = 255
VALUE_MAX_CHARS = 2000
OWNER_ID_MAX_CHARS = 255
IMPORTANCE_MIN = 0
IMPORTANCE_MAX = 100


class Scope(StrEnum):
    AGENT = "agent"
    WORKSPACE = "workspace"
    USER = "user"


class MemorySource(StrEnum):
    MANUAL = "manual"
    AUTO = "auto"
    DIRECTOR = "director"
    MEMORIZE = "memorize"

    @property
    def read_only(self) -> bool:
        """Only rows written by hand may have their key, value or importance edited."""
        return self is not MemorySource.MANUAL


@dataclass(frozen=True)
class Owner:
    """Exactly one owner: an agent or a workspace, both the orchestrator's own ids."""

    scope: Scope
    id: str

    @property
    def agent_id(self) -> str:
        return self.id if self.scope is Scope.AGENT else ""

    @property
    def workspace_id(self) -> str:
        return self.id if self.scope is Scope.WORKSPACE else ""


@dataclass(frozen=True)
class Grounding:
    """A span of a conversation that supports a memory: proof, not decoration."""

    message_position: int = 0
    provider_message_id: str = ""
    start_character: int = 0
    end_character: int = 0
    quote: str = ""
    raw_event_index: int | None = None
    raw_start_character: int | None = None
    raw_end_character: int | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Memory:
    id: uuid.UUID
    owner: Owner
    key: str
    value: str
    pinned: bool
    importance: int
    source: MemorySource
    created_at: datetime
    updated_at: datetime
    version: int
    tags: tuple[str, ...] = ()
    confidence: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    groundings: tuple[Grounding, ...] = ()
    conversation_provider: str | None = None
    conversation_id: str | None = None

    @property
    def read_only(self) -> bool:
        return self.source.read_only

    @property
    def etag(self) -> str:
        return etag_for(self.version)


@dataclass(frozen=True)
class MemoryPatch:
    """The fields an update changes; ``None`` means "leave as it is"."""

    key: str | None = None
    value: str | None = None
    pinned: bool | None = None
    importance: int | None = None

    @property
    def touches_content(self) -> bool:
        return self.key is not None or self.value is not None or self.importance is not None


def etag_for(version: int) -> str:
    return f'W/"{version}"'


def version_from_etag(etag: str) -> int | None:
    """The version an etag names, or ``None`` when it is not one of ours."""
    if etag.startswith('W/"') and etag.endswith('"'):
        digits = etag[3:-1]
        if digits.isascii() and digits.isdigit() and len(digits) < 19:
            return int(digits)
    return None


def text_violations(
    path: str, text: str, *, max_chars: int, min_chars: int = 1
) -> list[FieldViolation]:
    """Length in Unicode code points, and no NUL (PostgreSQL text cannot hold it)."""
    if len(text) < min_chars:
        if min_chars == 1:
            return [FieldViolation(path, "must not be empty", "REQUIRED")]
        return [FieldViolation(path, f"must be at least {min_chars} characters", "TOO_SHORT")]
    if len(text) > max_chars:
        return [
            FieldViolation(
                path,
                f"must be at most {max_chars} characters (got {len(text)})",
                "TOO_LONG",
            )
        ]
    if "\x00" in text:
        return [FieldViolation(path, "must not contain NUL characters", "INVALID_CHARACTER")]
    return []


def owner_violations(path: str, owner_id: str) -> list[FieldViolation]:
    return text_violations(path, owner_id, max_chars=OWNER_ID_MAX_CHARS)


def importance_violations(path: str, importance: int) -> list[FieldViolation]:
    if not IMPORTANCE_MIN <= importance <= IMPORTANCE_MAX:
        return [
            FieldViolation(
                path,
                f"must be between {IMPORTANCE_MIN} and {IMPORTANCE_MAX} (got {importance})",
                "OUT_OF_RANGE",
            )
        ]
    return []


def validate_new_memory(*, key: str, value: str, importance: int | None, prefix: str = "") -> None:
    violations = text_violations(f"{prefix}key", key, max_chars=KEY_MAX_CHARS)
    violations += text_violations(f"{prefix}value", value, max_chars=VALUE_MAX_CHARS)
    if importance is not None:
        violations += importance_violations(f"{prefix}importance", importance)
    check(violations)


def validate_patch(patch: MemoryPatch, *, prefix: str = "memory.") -> None:
    violations: list[FieldViolation] = []
    if patch.key is not None:
        violations += text_violations(f"{prefix}key", patch.key, max_chars=KEY_MAX_CHARS)
    if patch.value is not None:
        violations += text_violations(f"{prefix}value", patch.value, max_chars=VALUE_MAX_CHARS)
    if patch.importance is not None:
        violations += importance_violations(f"{prefix}importance", patch.importance)
    check(violations)


def parse_memory_id(path: str, raw: str) -> uuid.UUID:
    """Memory ids are UUIDs; anything else is a malformed request, not a missing row."""
    if not raw:
        check([FieldViolation(path, "must not be empty", "REQUIRED")])
    try:
        return uuid.UUID(raw)
    except ValueError:
        check([FieldViolation(path, "must be a memory id (a UUID)", "INVALID_ID")])
        raise  # unreachable: check() raised
