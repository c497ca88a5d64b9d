"""Memorize: one idempotent memory with tags, confidence, groundings and a conversation."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from agent_memory.domain.errors import FieldViolation, check
from agent_memory.domain.memory import (
    KEY_MAX_CHARS,
    MEMORIZE_KEY_PREFIX,
    VALUE_MAX_CHARS,
    Expiration,
    Grounding,
    MemorySource,
    confidence_violations,
    period_violations,
    reserved_key_violations,
)
from agent_memory.domain.screening import refuse_instructions
from agent_memory.domain.text_rules import identifier_violations, json_violations, text_violations

QUOTE_MAX_CHARS = 2000
TAG_MAX_CHARS = 64
MAX_TAGS = 32
MAX_GROUNDINGS = 100
MAX_SUPERSEDES = 20
CONVERSATION_ID_MAX_CHARS = 255
PROVIDER_MAX_CHARS = 64
MAX_MESSAGES = 10_000
# Raw provider events: as many as messages; one event is a streamed chunk or a whole
# message as the provider sent it, usually JSON, and a long tool result fits.
MAX_RAW_EVENTS = 10_000
# A snapshot's text (message contents and raw events, in UTF-8): what one read of it can
# return whole, under the response budget of the default message limit.
SNAPSHOT_MAX_BYTES = 1_500_000
RAW_EVENT_MAX_CHARS = 100_000
ROLE_MAX_CHARS = 64
MESSAGE_ID_MAX_CHARS = 255
# A tag as a write gives it, before it is made a slug of at most TAG_MAX_CHARS.
TAG_INPUT_MAX_CHARS = 256
METADATA_MAX_BYTES = 64 * 1024
# The metadata of one memory and of all its groundings together, as JSON: with the other
# limits a memory comes to well under 2 MB as a message, so it always fits in a response
# (and an audit event, which holds it twice, in one too).
MEMORY_METADATA_MAX_BYTES = 256 * 1024
DEFAULT_PROVIDER = "unknown"


@dataclass(frozen=True)
class ConversationMessage:
    role: str
    content: str
    provider_message_id: str = ""
    created_at: datetime | None = None


@dataclass(frozen=True)
class Conversation:
    """A snapshot of the conversation a memory was drawn from; stored once per id."""

    provider: str
    conversation_id: str
    messages: tuple[ConversationMessage, ...] = ()
    raw_events: tuple[str, ...] = ()

    @property
    def is_reference(self) -> bool:
        """No message and no raw event: it names the snapshot stored under its id and
        changes nothing of it."""
        return not self.messages and not self.raw_events


@dataclass(frozen=True)
class StoredConversation:
    """A snapshot as stored, with its counts and times; ``conversation`` holds its
    messages and raw events only when they were read (the full view)."""

    conversation: Conversation
    message_count: int
    raw_event_count: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class MemorizeInput:
    content: str
    tags: tuple[str, ...] = ()
    confidence: float | None = None
    memory_key: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    groundings: tuple[Grounding, ...] = ()
    conversation: Conversation | None = None
    expiration: Expiration | None = None
    supersedes: tuple[str, ...] = ()  # ids of memories this one replaces
    valid_start_time: datetime | None = None  # when the fact starts to hold
    valid_end_time: datetime | None = None  # when it stops


def slug_tag(tag: str) -> str:
    """:func:`slugged` to a tag's length."""
    return slugged(tag, TAG_MAX_CHARS)


def slugged(text: str, max_chars: int) -> str:
    """Lowercase (compatibility forms folded: fullwidth letters are the plain ones), runs
    of anything but letters, digits and their marks, in any script, to one dash,
    trimmed, at most ``max_chars``: a Cyrillic or a Japanese tag stays itself,
    ``Ünïcödé Tag`` is ``ünïcödé-tag``."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    kept = "".join(c if unicodedata.category(c)[0] in "LNM" else " " for c in folded)
    slug = "-".join(kept.split())
    return slug.lstrip("-")[:max_chars].strip("-")


def normalise_tags(tags: Sequence[str]) -> tuple[str, ...]:
    """Slugged, de-duplicated tags in first-seen order; tags that slug to nothing drop."""
    seen: list[str] = []
    for tag in tags:
        slug = slug_tag(tag)
        if slug and slug not in seen:
            seen.append(slug)
    return tuple(seen)


def cut_quote(grounding: Grounding) -> Grounding:
    if len(grounding.quote) <= QUOTE_MAX_CHARS:
        return grounding
    return Grounding(**{**grounding.__dict__, "quote": grounding.quote[:QUOTE_MAX_CHARS]})


def prepare(raw: MemorizeInput) -> MemorizeInput:
    """Validate, then normalise tags and cut quotes.

    Raises:
        InvalidArgument: content, key, confidence, groundings or conversation is malformed,
            or the period ends before it starts;
            or, reason ``INSTRUCTION_NOT_FACT``, content reads as an instruction to the
            assistant rather than a fact.
    """
    violations = text_violations("content", raw.content, max_chars=VALUE_MAX_CHARS)
    if raw.memory_key:
        violations += identifier_violations("memory_key", raw.memory_key, max_chars=KEY_MAX_CHARS)
        violations += reserved_key_violations("memory_key", raw.memory_key, MemorySource.MEMORIZE)
    violations += confidence_violations("confidence", raw.confidence)
    if len(raw.tags) > MAX_TAGS:
        violations.append(FieldViolation("tags", f"at most {MAX_TAGS} tags", "TOO_MANY"))
    for i, tag in enumerate(raw.tags):
        violations += text_violations(f"tags[{i}]", tag, max_chars=TAG_INPUT_MAX_CHARS, min_chars=0)
    if len(raw.groundings) > MAX_GROUNDINGS:
        violations.append(
            FieldViolation("groundings", f"at most {MAX_GROUNDINGS} groundings", "TOO_MANY")
        )
    violations += metadata_violations("metadata", raw.metadata)
    for i, g in enumerate(raw.groundings):
        violations += grounding_violations(f"groundings[{i}]", g)
    if raw.conversation is not None:
        violations += conversation_violations(raw.conversation)
    elif raw.groundings:
        violations.append(
            FieldViolation(
                "conversation",
                "groundings point into a conversation snapshot: send the conversation "
                "they point into (its id is enough when it is stored already)",
                "REQUIRED",
            )
        )
    violations += period_violations(raw.valid_start_time, raw.valid_end_time)
    if not violations:
        violations += total_metadata_violations(raw.metadata, raw.groundings)
    check(violations)
    refuse_instructions("content", raw.content)
    conversation = raw.conversation
    if conversation is not None and not conversation.provider:
        conversation = replace(conversation, provider=DEFAULT_PROVIDER)
    # Every other field as given: a new one is carried without a line here.
    return replace(
        raw,
        tags=normalise_tags(raw.tags),
        groundings=tuple(cut_quote(g) for g in raw.groundings),
        conversation=conversation,
    )


def grounding_violations(path: str, g: Grounding) -> list[FieldViolation]:
    """The limits of one grounding as Memorize takes it, under the field path ``path``."""
    found: list[FieldViolation] = []
    for name in ("message_position", "start_character", "end_character"):
        if getattr(g, name) < 0:
            found.append(FieldViolation(f"{path}.{name}", "must not be negative", "OUT_OF_RANGE"))
    if g.end_character < g.start_character:
        found.append(
            FieldViolation(
                f"{path}.end_character", "must not be before start_character", "OUT_OF_RANGE"
            )
        )
    for name in ("raw_event_index", "raw_start_character", "raw_end_character"):
        value = getattr(g, name)
        if value is not None and value < 0:
            found.append(FieldViolation(f"{path}.{name}", "must not be negative", "OUT_OF_RANGE"))
    if g.raw_event_index is None and (
        g.raw_start_character is not None or g.raw_end_character is not None
    ):
        found.append(
            FieldViolation(
                f"{path}.raw_event_index",
                "is required with raw_start_character or raw_end_character",
                "REQUIRED",
            )
        )
    if (
        g.raw_start_character is not None
        and g.raw_end_character is not None
        and g.raw_end_character < g.raw_start_character
    ):
        found.append(
            FieldViolation(
                f"{path}.raw_end_character",
                "must not be before raw_start_character",
                "OUT_OF_RANGE",
            )
        )
    found += text_violations(
        f"{path}.provider_message_id",
        g.provider_message_id,
        max_chars=MESSAGE_ID_MAX_CHARS,
        min_chars=0,
    )
    if "\x00" in g.quote:
        found.append(
            FieldViolation(f"{path}.quote", "must not contain NUL characters", "INVALID_CHARACTER")
        )
    found += metadata_violations(f"{path}.metadata", g.metadata)
    return found


def conversation_violations(c: Conversation, at: str = "conversation") -> list[FieldViolation]:
    """The limits of a snapshot as Memorize takes it, under the field path ``at``."""
    found = text_violations(
        f"{at}.conversation_id", c.conversation_id, max_chars=CONVERSATION_ID_MAX_CHARS
    )
    found += text_violations(
        f"{at}.provider", c.provider, max_chars=PROVIDER_MAX_CHARS, min_chars=0
    )
    if len(c.messages) > MAX_MESSAGES:
        found.append(
            FieldViolation(f"{at}.messages", f"at most {MAX_MESSAGES} messages", "TOO_MANY")
        )
    for i, m in enumerate(c.messages):
        path = f"{at}.messages[{i}]"
        # An empty role is taken (and kept: snapshots stored before hold them), though
        # the contract asks for one.
        found += identifier_violations(
            f"{path}.role", m.role, max_chars=ROLE_MAX_CHARS, min_chars=0
        )
        found += identifier_violations(
            f"{path}.provider_message_id",
            m.provider_message_id,
            max_chars=MESSAGE_ID_MAX_CHARS,
            min_chars=0,
        )
        if "\x00" in m.content:
            found.append(
                FieldViolation(
                    f"{path}.content", "must not contain NUL characters", "INVALID_CHARACTER"
                )
            )
    if len(c.raw_events) > MAX_RAW_EVENTS:
        found.append(
            FieldViolation(f"{at}.raw_events", f"at most {MAX_RAW_EVENTS} raw events", "TOO_MANY")
        )
    for i, event in enumerate(c.raw_events):
        path = f"{at}.raw_events[{i}]"
        if len(event) > RAW_EVENT_MAX_CHARS:
            found.append(
                FieldViolation(
                    path,
                    f"must be at most {RAW_EVENT_MAX_CHARS} characters (got {len(event)})",
                    "TOO_LONG",
                )
            )
        if "\x00" in event:
            found.append(
                FieldViolation(path, "must not contain NUL characters", "INVALID_CHARACTER")
            )
    size = snapshot_bytes(c)
    if size > SNAPSHOT_MAX_BYTES:
        found.append(
            FieldViolation(
                at,
                f"message contents and raw events must be at most {SNAPSHOT_MAX_BYTES} bytes "
                f"(got {size}), so that the snapshot reads back whole",
                "TOO_LARGE",
            )
        )
    return found


def snapshot_bytes(c: Conversation) -> int:
    """The UTF-8 size of a snapshot's message contents and raw events."""
    return sum(len(m.content.encode()) for m in c.messages) + sum(
        len(e.encode()) for e in c.raw_events
    )


def points_into_message(g: Grounding) -> bool:
    """Whether a grounding points into a message: unless it names a raw event and
    leaves every message field at zero."""
    return g.raw_event_index is None or bool(
        g.message_position or g.start_character or g.end_character
    )


def dangling_grounding_violations(
    groundings: Sequence[Grounding], stored: Conversation
) -> list[FieldViolation]:
    """The groundings that point at a message, raw event or span ``stored`` (the
    snapshot as stored after the merge) does not have, each named at its field."""
    found: list[FieldViolation] = []
    where = f"conversation {stored.conversation_id!r}"
    for i, g in enumerate(groundings):
        path = f"groundings[{i}]"
        if points_into_message(g):
            count = len(stored.messages)
            if g.message_position >= count:
                found.append(
                    _past_end(f"{path}.message_position", f"{where} has {_many(count, 'message')}")
                )
            else:
                length = len(stored.messages[g.message_position].content)
                if g.end_character > length:
                    found.append(
                        _past_end(
                            f"{path}.end_character",
                            f"message {g.message_position} of {where} has "
                            + _many(length, "character"),
                        )
                    )
        if g.raw_event_index is None:
            continue
        count = len(stored.raw_events)
        if g.raw_event_index >= count:
            found.append(
                _past_end(f"{path}.raw_event_index", f"{where} has {_many(count, 'raw event')}")
            )
            continue
        length = len(stored.raw_events[g.raw_event_index])
        for name in ("raw_start_character", "raw_end_character"):
            value = getattr(g, name)
            if value is not None and value > length:
                found.append(
                    _past_end(
                        f"{path}.{name}",
                        f"raw event {g.raw_event_index} of {where} has "
                        + _many(length, "character"),
                    )
                )
    return found


def _many(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _past_end(path: str, what: str) -> FieldViolation:
    return FieldViolation(path, f"points past the end: {what}", "OUT_OF_RANGE")


def metadata_violations(path: str, metadata: Mapping[str, Any]) -> list[FieldViolation]:
    """What jsonb cannot hold, and at most :data:`METADATA_MAX_BYTES` as JSON."""
    found = json_violations(path, metadata)
    if found:
        return found
    size = len(json.dumps(metadata, ensure_ascii=False, separators=(",", ":")).encode())
    if size > METADATA_MAX_BYTES:
        found.append(
            FieldViolation(
                path,
                f"must be at most {METADATA_MAX_BYTES} bytes as JSON (got {size})",
                "TOO_LARGE",
            )
        )
    return found


def total_metadata_violations(
    metadata: Mapping[str, Any], groundings: Sequence[Grounding], prefix: str = ""
) -> list[FieldViolation]:
    """At most :data:`MEMORY_METADATA_MAX_BYTES` of metadata in all, a memory's and its
    groundings', named at the field where the running total passes it."""
    fields = [(f"{prefix}metadata", metadata)]
    fields += [(f"{prefix}groundings[{i}].metadata", g.metadata) for i, g in enumerate(groundings)]
    total = 0
    for path, metadata in fields:
        if not metadata:
            continue
        total += len(json.dumps(metadata, ensure_ascii=False, separators=(",", ":")).encode())
        if total > MEMORY_METADATA_MAX_BYTES:
            return [
                FieldViolation(
                    path,
                    "the metadata of a memory and of its groundings must come to at most "
                    f"{MEMORY_METADATA_MAX_BYTES} bytes as JSON together (got {total} "
                    "up to here)",
                    "TOO_LARGE",
                )
            ]
    return []


def content_key(item: MemorizeInput) -> str:
    """The idempotency key when none is given: a stable hash of what makes the memory."""
    canonical = json.dumps(
        {
            "content": item.content,
            "tags": sorted(item.tags),
            "conversation_id": item.conversation.conversation_id if item.conversation else "",
            "groundings": [_grounding_identity(g) for g in item.groundings],
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return MEMORIZE_KEY_PREFIX + hashlib.sha256(canonical.encode()).hexdigest()[:40]


# A content key, as a pattern Python and PostgreSQL read alike (the prefix holds no
# character a pattern gives a meaning to).
CONTENT_KEY_PATTERN = MEMORIZE_KEY_PREFIX + "[0-9a-f]{40}"
_CONTENT_KEY = re.compile(CONTENT_KEY_PATTERN)


def is_content_key(key: str) -> bool:
    """Whether ``key`` is a content hash Memorize made, which means nothing to a reader."""
    return _CONTENT_KEY.fullmatch(key) is not None


def shows_key(key: str, source: MemorySource) -> bool:
    """Whether a reader (a prompt, a recall result) is shown a memory's key: where its
    writer chose it by name. Keys that machines made (extraction's, the director's, Memorize's,
    a content hash) are storage details."""
    return source is MemorySource.MANUAL and not is_content_key(key)


def _grounding_identity(g: Grounding) -> list[Any]:
    return [
        g.message_position,
        g.provider_message_id,
        g.start_character,
        g.end_character,
        g.quote,
        g.raw_event_index,
        g.raw_start_character,
        g.raw_end_character,
    ]


def tag_violations(path: str, tags: Sequence[str]) -> list[FieldViolation]:
    """The limits of a memory's tags, as Memorize and UpdateMemory take them."""
    violations = []
    if len(tags) > MAX_TAGS:
        violations.append(FieldViolation(path, f"at most {MAX_TAGS} tags", "TOO_MANY"))
    for i, tag in enumerate(tags):
        violations += text_violations(
            f"{path}[{i}]", tag, max_chars=TAG_INPUT_MAX_CHARS, min_chars=0
        )
    return violations


def superseded_ids(supersedes: Sequence[str]) -> list[uuid.UUID]:
    """The ids a Memorize supersedes, each once, in the order given.

    Raises:
        InvalidArgument: too many ids, or one that is not a memory id.
    """
    violations: list[FieldViolation] = []
    if len(supersedes) > MAX_SUPERSEDES:
        violations.append(FieldViolation("supersedes", f"at most {MAX_SUPERSEDES} ids", "TOO_MANY"))
    ids: list[uuid.UUID] = []
    for i, raw in enumerate(supersedes):
        try:
            parsed = uuid.UUID(raw)
        except ValueError:
            violations.append(
                FieldViolation(f"supersedes[{i}]", "must be a memory id (a UUID)", "INVALID_ID")
            )
            continue
        if parsed not in ids:
            ids.append(parsed)
    check(violations)
    return ids


def memory_key(item: MemorizeInput) -> str:
    return item.memory_key or content_key(item)
