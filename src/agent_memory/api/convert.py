"""Proto <-> domain conversion. Servicers do nothing else but call use cases."""

from __future__ import annotations

import dataclasses
import types
import uuid
from collections.abc import Callable, Collection, Container, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar, get_type_hints

from google.protobuf import duration_pb2, struct_pb2, timestamp_pb2
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from agent_memory.config import Settings
from agent_memory.domain.active_sessions import (
    ActiveSession,
    ActiveSessionStatus,
    RecordedRun,
    RunKind,
)
from agent_memory.domain.agents import AgentSettings, WorkspaceSettings
from agent_memory.domain.errors import FieldViolation, ResourceExhausted, check
from agent_memory.domain.events import MemoryEvent, MemoryEventType
from agent_memory.domain.forgetting import ForgetCounts
from agent_memory.domain.memorize import Conversation, ConversationMessage, MemorizeInput
from agent_memory.domain.memory import (
    PATCH_CLEARS,
    PATCH_FIELDS,
    Expiration,
    Grounding,
    HoldReason,
    Memory,
    MemoryPatch,
    MemorySource,
    Owner,
    OwnerSummary,
    Scope,
    confidence_violations,
    validate_patch,
)
from agent_memory.domain.paging import Page
from agent_memory.proto_json import OUTPUT_ONLY, field_behaviors
from agentmemory.v1 import memory_pb2, memory_service_pb2

T = TypeVar("T")
M = TypeVar("M", bound=Message)


# The rows of one response come to at most this many bytes: a paged listing hands the
# rest on with its next page token, an unpaged one that does not fit is refused. Half
# the gRPC message limit's default (Settings.max_message_bytes), so a response of large
# rows stays well under it.
def response_budget(max_message_bytes: int) -> int:
    """How many bytes of rows one response may carry under a message limit."""
    return max_message_bytes // 2


RESPONSE_MAX_BYTES = response_budget(Settings.max_message_bytes)


_REPEATED_OVERHEAD = 6  # the tag and length prefix of one element of a repeated field

SCOPES_OUT = {
    Scope.AGENT: memory_pb2.SCOPE_AGENT,
    Scope.WORKSPACE: memory_pb2.SCOPE_WORKSPACE,
    Scope.USER: memory_pb2.SCOPE_USER,
}
_SOURCES = {
    MemorySource.MANUAL: memory_pb2.MEMORY_SOURCE_MANUAL,
    MemorySource.AUTO: memory_pb2.MEMORY_SOURCE_AUTO,
    MemorySource.DIRECTOR: memory_pb2.MEMORY_SOURCE_DIRECTOR,
    MemorySource.MEMORIZE: memory_pb2.MEMORY_SOURCE_MEMORIZE,
}
_SOURCES_IN = {v: k for k, v in _SOURCES.items()}
# Each reason of a hold as the contract's value of the same name (one missing there
# fails at import).
HOLD_REASONS: dict[HoldReason, memory_pb2.HoldReason] = {
    r: getattr(memory_pb2, f"HOLD_REASON_{r.name}") for r in HoldReason
}
HOLD_REASONS_IN = {v: k for k, v in HOLD_REASONS.items()}


def source_value_name(source: MemorySource) -> str:
    """The name of the contract's MemorySource value for ``source``."""
    return str(memory_pb2.MemorySource.Name(_SOURCES[source]))


# Paths of Memory that UpdateMemory may change (AIP-134).
UPDATABLE_MEMORY_FIELDS = PATCH_FIELDS


def fitted_page(
    page: Page[T], to_proto: Callable[[T], M], *, budget: int = RESPONSE_MAX_BYTES
) -> tuple[list[M], str]:
    """The page's rows as messages, as many as fit in ``budget`` bytes (always the first),
    and the token that continues right after the last one sent."""
    messages: list[M] = []
    used = 0
    for item in page.items:
        message = to_proto(item)
        used += message.ByteSize() + _REPEATED_OVERHEAD
        if messages and used > budget:
            return messages, page.cut(len(messages)).next_page_token
        messages.append(message)
    return messages, page.next_page_token


def fitted_all(
    items: Sequence[T],
    to_proto: Callable[[T], M],
    *,
    what: str,
    advice: str,
    budget: int = RESPONSE_MAX_BYTES,
) -> list[M]:
    """Every row as a message, for a listing without pages.

    Raises:
        ResourceExhausted: together they come to more than ``budget`` bytes (reason
            ``RESPONSE_TOO_LARGE``); ``advice`` says how to ask for less.
    """
    messages = [to_proto(item) for item in items]
    size = sum(m.ByteSize() + _REPEATED_OVERHEAD for m in messages)
    if size > budget:
        raise ResourceExhausted(
            f"the {len(messages)} {what} come to {size} bytes, more than one response "
            f"holds ({budget}); {advice}",
            reason="RESPONSE_TOO_LARGE",
            metadata={"size_bytes": str(size), "max_bytes": str(budget)},
        )
    return messages


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def timestamp(value: datetime | None) -> timestamp_pb2.Timestamp | None:
    """Exact to the microsecond, so a time sent back as a precondition matches. Counted
    from the epoch as an interval of whole days, seconds and microseconds, as
    ``Timestamp.FromDatetime`` counts it, in a third of its time (every response holds
    a few)."""
    if value is None:
        return None
    if value.tzinfo is None:  # read as local time, as astimezone reads it
        value = value.astimezone(UTC)
    since = value - _EPOCH
    return timestamp_pb2.Timestamp(
        seconds=since.days * 86_400 + since.seconds, nanos=since.microseconds * 1000
    )


# google.protobuf.Timestamp's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
_MIN_SECONDS = -62_135_596_800
_MAX_SECONDS = 253_402_300_799


def check_timestamp(value: timestamp_pb2.Timestamp, path: str) -> None:
    """Raises: InvalidArgument — the Timestamp is outside its documented range."""
    if not (_MIN_SECONDS <= value.seconds <= _MAX_SECONDS and 0 <= value.nanos < 1_000_000_000):
        check(
            [
                FieldViolation(
                    path,
                    "must be a valid timestamp (0001-01-01 to 9999-12-31, nanos in [0, 1e9))",
                    "INVALID_TIMESTAMP",
                )
            ]
        )


def datetime_from_proto(value: timestamp_pb2.Timestamp, path: str) -> datetime:
    """A timezone-aware UTC datetime. Raises: InvalidArgument — out of range."""
    check_timestamp(value, path)
    return value.ToDatetime(tzinfo=UTC)


def optional_time(message: Any, name: str, prefix: str = "") -> datetime | None:
    """The message's Timestamp field ``name`` when set, else None.

    Raises: InvalidArgument — out of range (the path is ``prefix`` + ``name``)."""
    if not message.HasField(name):
        return None
    return datetime_from_proto(getattr(message, name), f"{prefix}{name}")


# google.protobuf.Duration's range: about 10,000 years either way.
_MAX_DURATION_SECONDS = 315_576_000_000


def expiration_from_proto(
    request: memory_service_pb2.UpsertMemoryRequest | memory_service_pb2.MemorizeRequest,
) -> Expiration | None:
    """The request's ``expiration`` oneof: an instant, a time to live, or None.

    Raises:
        InvalidArgument: a Timestamp or Duration outside its documented range.
    """
    chosen = request.WhichOneof("expiration")
    if chosen == "expire_time":
        return datetime_from_proto(request.expire_time, "expire_time")
    if chosen == "ttl":
        return duration_from_proto(request.ttl, "ttl")
    return None


def duration_from_proto(duration: duration_pb2.Duration, path: str) -> timedelta:
    """Raises: InvalidArgument — a Duration outside its documented range."""
    if not (
        abs(duration.seconds) <= _MAX_DURATION_SECONDS
        and abs(duration.nanos) < 1_000_000_000
        and (duration.seconds * duration.nanos >= 0)
    ):
        check([FieldViolation(path, "must be a valid duration", "INVALID_DURATION")])
    return duration.ToTimedelta()


def owner_from_proto(owner: memory_pb2.MemoryOwner, present: bool) -> Owner | None:
    """``None`` when no owner was set: the use case reports it as a field violation."""
    kind = owner.WhichOneof("kind") if present else None
    if kind == "agent_id":
        return Owner(Scope.AGENT, owner.agent_id)
    if kind == "workspace_id":
        return Owner(Scope.WORKSPACE, owner.workspace_id)
    return None


def source_from_proto(value: int) -> MemorySource:
    """The source a request names; numbers the enum does not define never get here (the
    interceptor refuses them for every request, see api.request_checks)."""
    if value == memory_pb2.MEMORY_SOURCE_UNSPECIFIED:
        return MemorySource.MANUAL
    return _SOURCES_IN[value]  # type: ignore[index]


_EVENT_TYPES = {
    MemoryEventType.CREATED: memory_pb2.MEMORY_EVENT_TYPE_CREATED,
    MemoryEventType.UPDATED: memory_pb2.MEMORY_EVENT_TYPE_UPDATED,
    MemoryEventType.PINNED: memory_pb2.MEMORY_EVENT_TYPE_PINNED,
    MemoryEventType.UNPINNED: memory_pb2.MEMORY_EVENT_TYPE_UNPINNED,
    MemoryEventType.DELETED: memory_pb2.MEMORY_EVENT_TYPE_DELETED,
    MemoryEventType.SUPERSEDED: memory_pb2.MEMORY_EVENT_TYPE_SUPERSEDED,
}


def struct(data: Any) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(dict(data))
    return message


def plain(message: struct_pb2.Struct) -> dict[str, Any]:
    """The Struct as plain Python values. NaN and the infinities are kept, for validation
    to refuse with the field's path (JSON conversion would fail on them without one)."""
    return {key: _plain_value(value) for key, value in message.fields.items()}


def _plain_value(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return plain(value.struct_value)
    if kind == "list_value":
        return [_plain_value(v) for v in value.list_value.values]
    if kind is None or kind == "null_value":
        return None
    return getattr(value, kind)


def grounding_to_proto(g: Grounding) -> memory_pb2.Grounding:
    message = memory_pb2.Grounding(
        message_position=g.message_position,
        provider_message_id=g.provider_message_id,
        start_character=g.start_character,
        end_character=g.end_character,
        quote=g.quote,
        metadata=struct(g.metadata),
    )
    for name in ("raw_event_index", "raw_start_character", "raw_end_character"):
        value = getattr(g, name)
        if value is not None:
            setattr(message, name, value)
    return message


def grounding_from_proto(g: memory_pb2.Grounding) -> Grounding:
    return Grounding(
        message_position=g.message_position,
        provider_message_id=g.provider_message_id,
        start_character=g.start_character,
        end_character=g.end_character,
        quote=g.quote,
        raw_event_index=g.raw_event_index if g.HasField("raw_event_index") else None,
        raw_start_character=g.raw_start_character if g.HasField("raw_start_character") else None,
        raw_end_character=g.raw_end_character if g.HasField("raw_end_character") else None,
        metadata=plain(g.metadata),
    )


def conversation_from_proto(c: memory_pb2.Conversation, path: str) -> Conversation:
    """The snapshot a message carries, its output-only fields ignored. Raises:
    InvalidArgument — a message's ``created_at`` out of range."""
    return Conversation(
        provider=c.provider,
        conversation_id=c.conversation_id,
        messages=tuple(
            ConversationMessage(
                role=m.role,
                content=m.content,
                provider_message_id=m.provider_message_id,
                created_at=datetime_from_proto(m.created_at, f"{path}.messages[{i}].created_at")
                if m.HasField("created_at")
                else None,
            )
            for i, m in enumerate(c.messages)
        ),
        raw_events=tuple(c.raw_events),
    )


def memorize_input(request: memory_service_pb2.MemorizeRequest) -> MemorizeInput:
    conversation = None
    if request.HasField("conversation"):
        conversation = conversation_from_proto(request.conversation, "conversation")
    return MemorizeInput(
        content=request.content,
        tags=tuple(request.tags),
        confidence=request.confidence if request.HasField("confidence") else None,
        memory_key=request.memory_key,
        metadata=plain(request.metadata),
        groundings=tuple(grounding_from_proto(g) for g in request.groundings),
        conversation=conversation,
        expiration=expiration_from_proto(request),
        supersedes=tuple(request.supersedes),
        valid_start_time=optional_time(request, "valid_start_time"),
        valid_end_time=optional_time(request, "valid_end_time"),
    )


def event_to_proto(event: MemoryEvent) -> memory_pb2.MemoryEvent:
    return memory_pb2.MemoryEvent(
        id=str(event.id),
        memory_id=str(event.memory_id),
        type=_EVENT_TYPES[event.type],
        actor_user_id=event.actor_user_id,
        occurred_at=timestamp(event.occurred_at),
        old_memory=memory_to_proto(event.old) if event.old else None,
        new_memory=memory_to_proto(event.new) if event.new else None,
    )


_TIMESTAMP = "google.protobuf.Timestamp"
_STRUCT = "google.protobuf.Struct"


def _well_known(field: FieldDescriptor) -> str:
    return field.message_type.full_name if field.message_type is not None else ""


_Plan = tuple[tuple[str, str, bool, bool, bool], ...]
_PLANS: dict[tuple[type[Any], type[Message]], _Plan] = {}


def _shared_fields(record: type[Any], message_type: type[Message]) -> _Plan:
    """The fields a record and a message share, by name, with what converting them
    needs: the message field's well-known type, whether it repeats, whether it tracks
    presence, and whether the record's field may be None. Worked out once per pair: a
    call converts by this plan, without reading type hints or descriptors again."""
    known = _PLANS.get((record, message_type))
    if known is not None:
        return known
    descriptor = message_type.DESCRIPTOR
    hints = get_type_hints(record)
    plan = []
    for f in dataclasses.fields(record):
        field = descriptor.fields_by_name.get(f.name)
        if field is None:
            continue
        plan.append(
            (
                f.name,
                _well_known(field),
                field.is_repeated,
                field.has_presence,
                isinstance(hints[f.name], types.UnionType),
            )
        )
    _PLANS[(record, message_type)] = tuple(plan)
    return _PLANS[(record, message_type)]


def fields_to_proto(
    record: Any, message_type: type[Message], *, skip: Container[str] = ()
) -> dict[str, Any]:
    """The fields of ``message_type`` set from the record's fields of the same names, by
    type: an instant as a Timestamp, a mapping as a Struct, an id as its text, a sequence
    as a repeated field; a None is left unset. The caller sets enums and what has another
    name."""
    found: dict[str, Any] = {}
    for name, known, repeated, _, _ in _shared_fields(type(record), message_type):
        value = getattr(record, name)
        if value is None or name in skip:
            continue
        if known == _TIMESTAMP:
            value = timestamp(value)
        elif known == _STRUCT:
            value = struct(value)
        elif isinstance(value, uuid.UUID):
            value = str(value)
        elif repeated:
            value = list(value)
        found[name] = value
    return found


def fields_from_proto(
    message: Message,
    record: type[Any],
    *,
    prefix: str = "",
    skip: Container[str] = (),
    only: Container[str] | None = None,
) -> dict[str, Any]:
    """The fields of ``record`` read from the message's fields of the same names, by
    type: a Timestamp as an instant (None when unset), a Struct as a dict, a repeated
    field as a tuple, an optional field None when unset, and an empty text None where
    the record's field may be None (unless ``only`` names it). The caller reads enums,
    ids and what has another name.

    Raises: InvalidArgument — an instant out of range (its path is ``prefix`` + name)."""
    found: dict[str, Any] = {}
    for name, known, repeated, presence, nullable in _shared_fields(record, type(message)):
        if name in skip or (only is not None and name not in only):
            continue
        value = getattr(message, name)
        if known == _TIMESTAMP:
            value = optional_time(message, name, prefix)
        elif known == _STRUCT:
            value = plain(value)
        elif repeated:
            value = tuple(value)
        else:
            unset = presence and not message.HasField(name)
            # A path a mask names takes its value as it is, empty too.
            empty = only is None and value == "" and nullable
            value = None if unset or empty else value
        found[name] = value
    return found


def memory_to_proto(memory: Memory) -> memory_pb2.Memory:
    """Every field of the memory named as one of the message, and what the message
    says otherwise: owner, source, groundings, and what derives from the memory."""
    return memory_pb2.Memory(
        **fields_to_proto(memory, memory_pb2.Memory, skip=("source", "groundings", "hold_reason")),
        scope=SCOPES_OUT[memory.owner.scope],
        agent_id=memory.owner.agent_id,
        workspace_id=memory.owner.workspace_id,
        source=_SOURCES[memory.source],
        hold_reason=HOLD_REASONS[memory.hold_reason] if memory.hold_reason else None,
        read_only=memory.read_only,
        groundings=[grounding_to_proto(g) for g in memory.groundings],
        etag=memory.etag,
    )


def owner_summary_to_proto(summary: OwnerSummary) -> memory_service_pb2.OwnerSummary:
    return memory_service_pb2.OwnerSummary(
        id=summary.owner.id,
        memory_count=summary.memory_count,
        last_activity_time=timestamp(summary.last_activity_time),
        memory_enabled=summary.memory_enabled,
    )


def _populated(message: Message, name: str) -> bool:
    field = message.DESCRIPTOR.fields_by_name[name]
    return message.HasField(name) if field.has_presence else bool(getattr(message, name))


def memory_patch(memory: memory_pb2.Memory, paths: list[str] | None) -> MemoryPatch:
    """The AIP-134 patch: named paths, or every populated updatable field without a mask.
    A path named but not set clears a field that may be empty (AIP-214 for the expiry;
    an open end for the fact's period).

    A field the mask leaves out is ignored, but a value out of its bounds is refused
    wherever it stands in the memory sent: the request is malformed, whatever the
    memory stored is.

    Raises:
        InvalidArgument: a malformed mask, or a value of the memory out of its bounds.
    """
    given = [name for name in UPDATABLE_MEMORY_FIELDS if _populated(memory, name)]
    body = MemoryPatch(**fields_from_proto(memory, MemoryPatch, prefix="memory.", only=given))
    validate_patch(body)
    confidence = memory.confidence if memory.HasField("confidence") else None
    check(confidence_violations("memory.confidence", confidence))
    if paths is None:
        if given:
            return body  # without a mask: the fields given, none of them cleared
        paths = given
    unknown = [p for p in paths if p not in UPDATABLE_MEMORY_FIELDS]
    check(
        [
            FieldViolation(
                "update_mask",
                f"{p!r} cannot be updated; updatable: {', '.join(UPDATABLE_MEMORY_FIELDS)}",
                "INVALID_FIELD_MASK",
            )
            for p in unknown
        ]
    )
    if not paths:
        check([FieldViolation("update_mask", "names no field to update", "EMPTY_FIELD_MASK")])
    clears: dict[str, Any] = {
        flag: True
        for name, flag in PATCH_CLEARS.items()
        if name in paths and not memory.HasField(name)
    }
    return MemoryPatch(
        **fields_from_proto(memory, MemoryPatch, prefix="memory.", only=paths), **clears
    )


def settings_to_proto(settings: AgentSettings) -> memory_pb2.AgentSettings:
    return memory_pb2.AgentSettings(
        agent_id=settings.agent_id,
        memory_enabled=settings.memory_enabled,
        updated_at=timestamp(settings.updated_at),
        active_memory_enabled=settings.active_memory_enabled,
        review_decisions=settings.review_decisions,
        expiry_slide=_slide(settings.expiry_slide),
    )


def workspace_settings_to_proto(settings: WorkspaceSettings) -> memory_pb2.WorkspaceSettings:
    return memory_pb2.WorkspaceSettings(
        workspace_id=settings.workspace_id,
        expiry_slide=_slide(settings.expiry_slide),
        updated_at=timestamp(settings.updated_at),
    )


def _slide(slide: timedelta) -> duration_pb2.Duration | None:
    """Unset when off, as the contract says a slide of zero reads."""
    if not slide:
        return None
    duration = duration_pb2.Duration()
    duration.FromTimedelta(slide)
    return duration


def writable_settings(message: Any, key: str) -> frozenset[str]:
    """The settings an update may change: the fields of the settings message (a
    descriptor) but its key and those the contract marks output only."""
    return frozenset(
        f.name
        for f in message.DESCRIPTOR.fields
        if f.name != key and OUTPUT_ONLY not in field_behaviors(f)
    )


def settings_changes(
    wanted: Message, mask: Sequence[str] | None, writable: Collection[str]
) -> dict[str, bool | timedelta]:
    """The new values of the settings an update changes: those its mask names, or
    without one (AIP-134) those the request populates (a switch sent as true, a slide
    that is set), each as the use cases take it.

    Raises:
        InvalidArgument: a path that is not a writable setting, or a bad duration.
    """
    fields = wanted.DESCRIPTOR.fields_by_name
    paths = (
        set(mask)
        if mask is not None
        else {
            name
            for name in writable
            if (
                wanted.HasField(name)
                if fields[name].type == FieldDescriptor.TYPE_MESSAGE
                else getattr(wanted, name)
            )
        }
    )
    check(
        [
            FieldViolation("update_mask", f"{p!r} cannot be updated", "INVALID_FIELD_MASK")
            for p in sorted(paths - set(writable))
        ]
    )
    changes: dict[str, bool | timedelta] = {}
    for name in sorted(paths):
        if fields[name].type == FieldDescriptor.TYPE_MESSAGE:  # the slide, a Duration
            changes[name] = duration_from_proto(getattr(wanted, name), f"settings.{name}")
        else:
            changes[name] = bool(getattr(wanted, name))
    return changes


_RUN_KINDS = {
    RunKind.SCHEDULED: memory_pb2.RUN_KIND_SCHEDULED,
    RunKind.CHAT: memory_pb2.RUN_KIND_CHAT,
}


def run_kind_from_proto(kind: int) -> RunKind:
    """An unset kind is a scheduled run, as before runs said what started them.

    Raises: InvalidArgument — a value the contract does not define."""
    if kind == memory_pb2.RUN_KIND_UNSPECIFIED:
        return RunKind.SCHEDULED
    for known, value in _RUN_KINDS.items():
        if value == kind:
            return known
    check([FieldViolation("kind", "must be RUN_KIND_SCHEDULED or RUN_KIND_CHAT", "INVALID_KIND")])
    raise AssertionError  # pragma: no cover - check raised


def run_to_proto(recorded: RecordedRun) -> memory_pb2.AgentRun:
    run = recorded.run
    return memory_pb2.AgentRun(
        run_id=run.run_id,
        kind=_RUN_KINDS[run.kind],
        session_id_before=run.session_id_before or "",
        session_id_after=run.session_id_after or "",
        carried=recorded.carried,
        recorded_at=timestamp(recorded.recorded_at),
        render_time=timestamp(run.render_time),
    )


_SESSION_STATUSES = {
    ActiveSessionStatus.FRESH: memory_pb2.ACTIVE_SESSION_STATUS_FRESH,
    ActiveSessionStatus.CARRYING_CONTEXT: memory_pb2.ACTIVE_SESSION_STATUS_CARRYING_CONTEXT,
}


def active_session_to_proto(session: ActiveSession) -> memory_pb2.ActiveSession:
    age = None
    if session.session_age is not None:
        age = duration_pb2.Duration()
        age.FromTimedelta(session.session_age)
    return memory_pb2.ActiveSession(
        agent_id=session.agent_id,
        session_id=session.session_id or "",
        status=_SESSION_STATUSES[session.status],
        runs_since_reset=session.runs_since_reset,
        session_age=age,
        warning=session.warning,
        last_reset_at=timestamp(session.last_reset_at),
        enabled=session.enabled,
        updated_at=timestamp(session.updated_at),
        warning_threshold=session.warning_threshold,
    )


def forget_counts_to_proto(counts: ForgetCounts) -> memory_service_pb2.ForgetCounts:
    return memory_service_pb2.ForgetCounts(
        **{f.name: getattr(counts, f.name) for f in dataclasses.fields(counts)}
    )
