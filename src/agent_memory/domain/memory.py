"""Memory rows: scoped key/value facts with a source, a pin and an importance."""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from agent_memory.domain.errors import FieldViolation, check
from agent_memory.domain.text_rules import (
    identifier_violations,
    invisible,
    name_violations,
    text_violations,
)

KEY_MAX_CHARS = 255
VALUE_MAX_CHARS = 2000
OWNER_ID_MAX_CHARS = 255
IMPORTANCE_MIN = 0
IMPORTANCE_MAX = 100
LEARNING_KEY_PREFIX = "director:learning:"
AUTO_KEY_PREFIX = "auto:"
MEMORIZE_KEY_PREFIX = "memorize:"
TTL_MAX = timedelta(days=3650)

# An expiration as a request gives it (AIP-214): an instant, or a time to live from now.
Expiration = datetime | timedelta


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


class HoldReason(StrEnum):
    """Why a memory is held for review: what a person should check before letting it
    go."""

    INSTRUCTION = "instruction"  # a learned screen read it as an order to the assistant
    CREDENTIAL = "credential"  # a learned screen read it as a password, code or key
    REQUESTED = "requested"  # a caller held it (UpdateMemory)


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
    expire_time: datetime | None = None
    superseded_by: uuid.UUID | None = None
    last_used_time: datetime | None = None  # when a render or a recall last showed it
    # Whether its vector of the model recall runs is stored, made from its text as it
    # is; None where that is not known: recall is by words only, or an audit snapshot.
    embedded: bool | None = None
    # When the fact holds in the world (None: open at that end); not expire_time,
    # which deletes the memory. Only facts valid now are rendered and recalled.
    valid_start_time: datetime | None = None
    valid_end_time: datetime | None = None
    note: str = ""  # for the people who read it, never shown to a model
    # Kept out of prompts and recall until a person clears it (a learned screen read a
    # model-written memory as an instruction to the assistant or as a credential, or a
    # person held it).
    held_for_review: bool = False
    # Why it is held (None when it is not, or was held before reasons were kept).
    hold_reason: HoldReason | None = None

    def valid_at(self, when: datetime) -> bool:
        """Whether the fact holds at ``when``: its period has started and not ended."""
        return valid_at(self.valid_start_time, self.valid_end_time, when)

    @property
    def read_only(self) -> bool:
        return self.source.read_only

    @property
    def etag(self) -> str:
        return etag_for(self.version)


def valid_at(start: datetime | None, end: datetime | None, when: datetime) -> bool:
    """Whether a period (None: open at that end) holds at ``when``: started at or
    before it, and ending after it."""
    return (start is None or start <= when) and (end is None or end > when)


def utc_day(when: datetime) -> str:
    """The UTC day of an instant, as a prompt dates things: ``2026-11-26``."""
    return when.astimezone(UTC).date().isoformat()


@dataclass(frozen=True)
class MemoryLine:
    """A memory as a prompt shows it."""

    key: str
    value: str
    source: MemorySource = MemorySource.MANUAL
    day: str = ""  # the UTC day it was last written, ``2026-11-26``
    # The person who wrote its text, else the user who last wrote it or whose
    # conversation it was drawn from.
    by: str = ""
    since: str = ""  # the UTC day its period started, when it has a start
    until: str = ""  # the UTC day its period ends, when it has an end
    # Whether a person wrote its present text (Principal.person); not known, so not
    # claimed, where the row is read without it.
    by_person: bool = False

    @classmethod
    def of(cls, memory: Memory) -> MemoryLine:
        return cls(
            memory.key,
            memory.value,
            memory.source,
            utc_day(memory.updated_at),
            since=utc_day(memory.valid_start_time) if memory.valid_start_time else "",
            until=utc_day(memory.valid_end_time) if memory.valid_end_time else "",
        )


@dataclass(frozen=True)
class MemoryRows:
    """The first rows of an owner's listing, and how many more there are (counted up to
    a bound: past it, ``at_least`` says the owner holds that many more, or more)."""

    rows: Sequence[MemoryLine]
    left_out: int = 0
    at_least: bool = False


@dataclass(frozen=True)
class Evidence:
    """Where a memory came from, as Memorize and extraction record it.

    A write that carries evidence replaces all of it; one without leaves it as it is.
    """

    tags: tuple[str, ...] = ()
    confidence: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    conversation_provider: str | None = None
    conversation_id: str | None = None


@dataclass(frozen=True)
class MemoryWrite:
    """A write at (owner, key) by one source.

    A new row takes every field (``pinned`` false and ``importance`` 0 when not
    given). An existing row of the same source takes the value, ``pinned`` and
    ``importance`` when given, and the evidence when given.
    """

    owner: Owner
    key: str
    source: MemorySource
    value: str
    pinned: bool | None = None
    importance: int | None = None
    evidence: Evidence | None = None
    # When it expires: an instant, or a time to live the database adds to its clock at
    # the write. None keeps the stored expiry (none on create).
    expiration: Expiration | None = None
    # When the fact holds in the world; each None keeps the stored one (none on create).
    valid_start_time: datetime | None = None
    valid_end_time: datetime | None = None
    note: str | None = None  # None keeps the stored one


@dataclass(frozen=True)
class Written:
    """A write that landed: the memory as stored, and whether it was new."""

    memory: Memory
    created: bool


@dataclass(frozen=True)
class KeyHeld:
    """Nothing was written: the key belongs to a memory of another source."""

    current: Memory


# The fields of a memory only a MANUAL one may change (a read-only memory keeps them).
CONTENT_FIELDS = ("key", "value", "importance")


@dataclass(frozen=True)
class MemoryPatch:
    """The fields an update changes; ``None`` means "leave as it is"."""

    key: str | None = None
    value: str | None = None
    pinned: bool | None = None
    importance: int | None = None
    expire_time: datetime | None = None
    clear_expiry: bool = False  # the memory no longer expires
    tags: tuple[str, ...] | None = None
    valid_start_time: datetime | None = None
    clear_valid_start: bool = False  # the fact's period is open at its start
    valid_end_time: datetime | None = None
    clear_valid_end: bool = False  # the fact's period is open at its end
    note: str | None = None
    held_for_review: bool | None = None  # False: a person approves the memory

    @property
    def touches_content(self) -> bool:
        """Whether it changes a field of :data:`CONTENT_FIELDS`."""
        return any(getattr(self, name) is not None for name in CONTENT_FIELDS)

    @property
    def touches_expiry(self) -> bool:
        return self.expire_time is not None or self.clear_expiry

    def values(self) -> dict[str, Any]:
        """The fields it sets, by name (not those it leaves or clears)."""
        return {n: v for n in PATCH_FIELDS if (v := getattr(self, n)) is not None}

    def cleared(self) -> frozenset[str]:
        """The fields it empties, by name."""
        return frozenset(n for n, flag in PATCH_CLEARS.items() if getattr(self, flag))

    def applied(self) -> dict[str, Any]:
        """What it changes of a memory, by field: what it sets, and None for what it
        clears."""
        return {**self.values(), **dict.fromkeys(self.cleared())}

    def changes(self, current: Memory) -> MemoryPatch:
        """Only the fields that would change ``current``."""
        clears: dict[str, Any] = {
            PATCH_CLEARS[n]: True for n in self.cleared() if getattr(current, n) is not None
        }
        return MemoryPatch(
            **{n: v for n, v in self.values().items() if v != getattr(current, n)}, **clears
        )

    def period_of(self, current: Memory) -> tuple[datetime | None, datetime | None]:
        """The fact's period once this patch applies to ``current``."""
        start = self.valid_start_time or current.valid_start_time
        end = self.valid_end_time or current.valid_end_time
        return (
            None if self.clear_valid_start else start,
            None if self.clear_valid_end else end,
        )

    @property
    def touches_period(self) -> bool:
        return (
            self.valid_start_time is not None
            or self.valid_end_time is not None
            or self.clear_valid_start
            or self.clear_valid_end
        )

    @property
    def empty(self) -> bool:
        return self == MemoryPatch()

    @property
    def only_pin(self) -> bool:
        return self.pinned is not None and replace(self, pinned=None).empty


# The flag of a patch that empties a field, by the field: what an update mask clears
# when it names the field without a value.
PATCH_CLEARS: Mapping[str, str] = {
    "expire_time": "clear_expiry",
    "valid_start_time": "clear_valid_start",
    "valid_end_time": "clear_valid_end",
}
# The fields a patch sets: those of a memory an update mask may name.
PATCH_FIELDS: tuple[str, ...] = tuple(
    f.name for f in fields(MemoryPatch) if f.name not in PATCH_CLEARS.values()
)


# A memory's place in its owner's listing order (agent: pinned, importance, key;
# workspace: pinned, importance, updated_at, id), as a page token carries it.
ListingPosition = tuple[bool, int, str] | tuple[bool, int, datetime, uuid.UUID]


@dataclass(frozen=True)
class OwnerSummary:
    """An agent or a workspace of the tenant, as a list of them shows it: how many
    current memories it holds, when one last changed (or its settings did), and, for
    an agent, whether memory is on for it."""

    owner: Owner
    memory_count: int
    last_activity_time: datetime | None
    memory_enabled: bool = False


def listing_position(memory: Memory) -> ListingPosition:
    if memory.owner.scope is Scope.AGENT:
        return (memory.pinned, memory.importance, memory.key)
    return (memory.pinned, memory.importance, memory.updated_at, memory.id)


def position_to_token(
    position: Sequence[str | int | bool | datetime | uuid.UUID],
) -> list[str | int | bool]:
    """The position as JSON-safe values for a page token."""
    return [
        v.isoformat() if isinstance(v, datetime) else str(v) if isinstance(v, uuid.UUID) else v
        for v in position
    ]


def position_from_token(scope: Scope, raw: Sequence[Any]) -> ListingPosition:
    """Undo :func:`position_to_token`. Raises ValueError for a position we did not make."""
    expected = 3 if scope is Scope.AGENT else 4
    if (
        len(raw) != expected
        or not isinstance(raw[0], bool)
        or type(raw[1]) is not int
        or not IMPORTANCE_MIN <= raw[1] <= IMPORTANCE_MAX
        or not all(isinstance(v, str) for v in raw[2:])
    ):
        raise ValueError("not a listing position")
    if scope is Scope.AGENT:
        if text_violations("key", raw[2], max_chars=KEY_MAX_CHARS):
            raise ValueError("not a listing position")
        return (raw[0], raw[1], raw[2])
    updated_at = datetime.fromisoformat(raw[2])
    if updated_at.tzinfo is None:
        raise ValueError("not a listing position")
    return (raw[0], raw[1], updated_at, uuid.UUID(raw[3]))


def etag_for(version: int) -> str:
    return f'W/"{version}"'


# A memory's etag: its version, weak (RFC 9110), as etag_for writes it.
ETAG_PATTERN = r'W/"([0-9]{1,18})"'
_ETAG = re.compile(ETAG_PATTERN)


def version_from_etag(etag: str) -> int | None:
    """The version an etag names, or ``None`` when it is not one of ours."""
    found = _ETAG.fullmatch(etag)
    return int(found.group(1)) if found is not None else None


def owner_violations(path: str, owner_id: str) -> list[FieldViolation]:
    return name_violations(path, owner_id, max_chars=OWNER_ID_MAX_CHARS)


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


def confidence_violations(path: str, confidence: float | None) -> list[FieldViolation]:
    """A confidence, when given, is a probability: from 0 to 1."""
    if confidence is not None and not 0.0 <= confidence <= 1.0:
        return [FieldViolation(path, f"must be between 0 and 1 (got {confidence})", "OUT_OF_RANGE")]
    return []


def reserved_key_violations(path: str, key: str, source: MemorySource) -> list[FieldViolation]:
    """The key prefixes of the memories the service names itself belong to their
    source: a memory of another source under one would pass for extraction's, a
    director's learning or Memorize's. A key is read as it looks (:func:`key_as_seen`):
    ``AUTO:x``, `` auto:x``, ``auto\uff1ax`` (a fullwidth colon) and ``au\u200bto:x`` (a
    zero-width space) are as reserved as ``auto:x``."""
    seen = key_as_seen(key)
    for owner, reserved in (
        (MemorySource.AUTO, AUTO_KEY_PREFIX),
        (MemorySource.DIRECTOR, LEARNING_KEY_PREFIX),
        (MemorySource.MEMORIZE, MEMORIZE_KEY_PREFIX),
    ):
        if seen.startswith(reserved) and source is not owner:
            return [
                FieldViolation(
                    path,
                    f"keys starting with {reserved!r} (in any case or width, after spaces "
                    f"or invisible characters) are reserved for memories of source "
                    f"{owner.value}",
                    "RESERVED_KEY",
                )
            ]
    return []


def key_as_seen(key: str) -> str:
    """A key as a reader tells it apart: compatibility forms folded (NFKC: widths,
    ligatures, compatibility colons), case folded, characters that show nothing
    dropped, leading spaces stripped."""
    if key.isascii():  # no ASCII character folds further, nor shows nothing
        return key.lower().lstrip()
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", key).casefold())
    return "".join(c for c in folded if not invisible(c)).lstrip()


def validate_new_memory(
    *,
    key: str,
    value: str,
    importance: int | None,
    source: MemorySource,
    prefix: str = "",
) -> None:
    violations = identifier_violations(f"{prefix}key", key, max_chars=KEY_MAX_CHARS)
    violations += reserved_key_violations(f"{prefix}key", key, source)
    violations += text_violations(f"{prefix}value", value, max_chars=VALUE_MAX_CHARS)
    if importance is not None:
        violations += importance_violations(f"{prefix}importance", importance)
    check(violations)


def checked_expiration(
    expiration: Expiration | None, now: datetime, *, prefix: str = ""
) -> Expiration | None:
    """``expiration`` once it is known to be in range: an instant after ``now`` and at
    most :data:`TTL_MAX` away, or a time to live above zero and at most that.

    Raises:
        InvalidArgument: an instant not after ``now``, or a time to live not above
            zero or over :data:`TTL_MAX`.
    """
    if expiration is None:
        return None
    if isinstance(expiration, timedelta):
        if not timedelta(0) < expiration <= TTL_MAX:
            check(
                [
                    FieldViolation(
                        f"{prefix}ttl",
                        f"must be more than 0 and at most {TTL_MAX.days} days",
                        "OUT_OF_RANGE",
                    )
                ]
            )
        return expiration
    if expiration <= now:
        check([FieldViolation(f"{prefix}expire_time", "must be in the future", "OUT_OF_RANGE")])
    if expiration - now > TTL_MAX:
        check(
            [
                FieldViolation(
                    f"{prefix}expire_time",
                    f"must be at most {TTL_MAX.days} days away",
                    "OUT_OF_RANGE",
                )
            ]
        )
    return expiration


def period_violations(
    start: datetime | None, end: datetime | None, *, prefix: str = "", stored: bool = False
) -> list[FieldViolation]:
    """A fact's period must end after it starts (either end may be open). ``stored``:
    one of the two is the memory's as stored, which the request did not change."""
    if start is None or end is None or end > start:
        return []
    held = " (the stored valid_start_time included)" if stored else ""
    return [
        FieldViolation(
            f"{prefix}valid_end_time",
            f"must be after valid_start_time{held}",
            "INVALID_PERIOD",
        )
    ]


class PeriodInverted(ValueError):
    """A write would leave a memory's period ending before it starts: a bound it gave
    with the other as stored. The statement changed nothing."""


# The longest each optional text field of a memory may be, by name (empty is allowed):
# what a write, an update and an import check of it.
OPTIONAL_TEXT_MAX_CHARS: Mapping[str, int] = {"note": VALUE_MAX_CHARS}


def optional_text_violations(values: Mapping[str, Any], prefix: str = "") -> list[FieldViolation]:
    """The optional text fields among ``values`` (by name) past their length, or holding
    a NUL; None or empty is allowed."""
    return [
        violation
        for name, most in OPTIONAL_TEXT_MAX_CHARS.items()
        if values.get(name)
        for violation in text_violations(f"{prefix}{name}", values[name], max_chars=most)
    ]


def validate_patch(patch: MemoryPatch, *, prefix: str = "memory.") -> None:
    violations = optional_text_violations(patch.values(), prefix)
    if patch.key is not None:
        violations += identifier_violations(f"{prefix}key", patch.key, max_chars=KEY_MAX_CHARS)
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
