"""The export format's records as the API's own messages in proto JSON, and back.

A record is one JSON object: its ``kind``, and the message of that kind under the
kind's name (fields by their proto names, enums by name, times in RFC 3339)::

    {"kind": "card_type", "card_type": {...CardType...}}
    {"kind": "conversation", "conversation": {...Conversation...}}
    {"kind": "memory", "memory": {...Memory...}, "screened": "..."}  (screened: when sealed)
    {"kind": "block", "user_id": "ana", "block": {...Block...}, "screened": "..."}
    {"kind": "decision", "decision": {...Decision...}, "reexaminations": [{...}, ...]}

A record is written by the converters the API's reads use, less the fields of
:data:`NOT_EXPORTED`. It is read with ``json_format`` into the same messages (a
field the message does not have is refused, never dropped), and checked as the API
checks every write before a use case sees it: every enum holds a value its enum
defines (:func:`~agent_memory.api.request_checks.enum_violations`), no string holds a
secret (:func:`~agent_memory.api.stored_text.stored_texts`), and no field meant for
one line holds a line break
(:func:`~agent_memory.api.stored_text.line_break_violations`). Then it becomes domain
types; the import use case (:mod:`agent_memory.service.transfer`) checks the rest.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from agent_memory.api.block_convert import content_to_proto, key_from_proto
from agent_memory.api.convert import (
    HOLD_REASONS_IN,
    conversation_from_proto,
    datetime_from_proto,
    fields_from_proto,
    grounding_from_proto,
    memory_to_proto,
    source_from_proto,
)
from agent_memory.api.decision_convert import (
    card_type_from_proto,
    card_type_to_proto,
    decision_to_proto,
    new_decision,
    reexamination_to_proto,
    resolution_status_from_proto,
)
from agent_memory.api.evidence_convert import conversation_to_proto
from agent_memory.api.request_checks import refuse_malformed
from agent_memory.api.stored_text import MULTI_LINE, line_break_violations, stored_texts
from agent_memory.detectors.secrets import redact_secrets
from agent_memory.domain.decisions import CardType, Decision, Reexamination
from agent_memory.domain.errors import FieldViolation, check, under
from agent_memory.domain.memorize import StoredConversation
from agent_memory.domain.memory import HoldReason, Memory, Owner, Scope
from agent_memory.domain.screening import refuse_secrets_in
from agent_memory.domain.transfer import (
    KINDS,
    DecisionRecord,
    FormatError,
    MemoryRecord,
    Record,
    UserBlock,
    kind_of,
)
from agent_memory.proto_json import field_named, lone_surrogates, parse_problem
from agentmemory.v1 import block_pb2, decision_pb2, memory_pb2

MESSAGES: Mapping[str, type[Message]] = {
    "card_type": decision_pb2.CardType,
    "conversation": memory_pb2.Conversation,
    "memory": memory_pb2.Memory,
    "block": block_pb2.Block,
    "decision": decision_pb2.Decision,
}
"""The message each kind of record holds, under the kind's name."""

# What a record holds beside its kind and its message.
_BESIDE: Mapping[str, tuple[str, ...]] = {
    "block": ("user_id", "screened"),
    "memory": ("screened",),
    "decision": ("reexaminations",),
}

NOT_EXPORTED: Mapping[str, str] = {
    "agentmemory.v1.Memory.read_only": "derived from source",
    "agentmemory.v1.Memory.last_used_time": (
        "when this deployment last showed it to a model: an imported copy has not been used"
    ),
    "agentmemory.v1.Memory.etag": (
        "derived from the memory's version: an imported memory starts again at version 1 "
        "(an etag guards writes to one copy, not across copies)"
    ),
    "agentmemory.v1.Memory.embedded": (
        "whether this deployment's indexer has stored its vector: the importing deployment "
        "embeds the copy itself, with the model it runs"
    ),
    "agentmemory.v1.Block.char_count": "derived from content",
    "agentmemory.v1.Block.entry_count": "derived from content",
    "agentmemory.v1.Block.version": (
        "an import writes a block as WriteBlock creates one, at version 1; "
        "earlier versions are not exported"
    ),
    "agentmemory.v1.Block.created_at": "an import writes a block now, as WriteBlock does",
    "agentmemory.v1.Block.updated_at": "an import writes a block now, as WriteBlock does",
    "agentmemory.v1.Block.etag": (
        "derived from the version and updated_at the import gives the block anew "
        "(an etag guards writes to one copy, not across copies)"
    ),
    "agentmemory.v1.Block.indexed_line_count": (
        "the importing side's indexer embeds an imported block's lines in the background"
    ),
    "agentmemory.v1.Conversation.message_count": "derived: how many messages it holds",
    "agentmemory.v1.Conversation.raw_event_count": "derived: how many raw events it holds",
    "agentmemory.v1.Decision.compact": "derived: the review line, aged by the reader's clock",
    "agentmemory.v1.Decision.latest_conviction_score": "derived from the re-examinations",
    "agentmemory.v1.Decision.reexamination_count": "derived from the re-examinations",
}
"""Fields of the records' messages that an export leaves out, by full name, with why:
output only and derived from the rest, or made anew by the import. An import ignores
them."""

WRITTEN_AS: Mapping[str, str] = {
    "agentmemory.v1.Block.content": "agentmemory.v1.WriteBlockRequest.content",
}
"""Fields of the records' messages that the API writes through a field of a request,
whose line rule (:data:`~agent_memory.api.stored_text.MULTI_LINE`) they take."""

_PARSE_ERROR_MAX_CHARS = 300


class ProtoJsonRecords:
    """Records to and from JSON objects: the format of ``agent-memory export``."""

    def encode(self, record: Record) -> dict[str, Any]:
        kind = kind_of(record)
        fields: dict[str, Any] = {"kind": kind}
        if isinstance(record, CardType):
            message: Message = card_type_to_proto(record)
        elif isinstance(record, StoredConversation):
            message = conversation_to_proto(record)
        elif isinstance(record, MemoryRecord):
            message = memory_to_proto(record.memory)
            if record.attestation:
                fields["screened"] = record.attestation
        elif isinstance(record, UserBlock):
            fields["user_id"] = record.user_id
            message = content_to_proto(record.key, record.content)
            if record.attestation:
                fields["screened"] = record.attestation
        else:
            message = decision_to_proto(record.decision)
            fields["reexaminations"] = [
                _json(reexamination_to_proto(r)) for r in record.reexaminations
            ]
        fields[kind] = _json(message)
        return fields

    async def decode(self, fields: Any) -> Record:
        """The record a JSON object holds, once the API's checks pass.

        Raises:
            FormatError: not a record of a known kind, or its message is no valid
                proto JSON of its type.
            InvalidArgument: a field the API would refuse, named by its path in the
                record (``memory.groundings[0].quote``).
        """
        kind = _kind(fields)
        # Text that is no Unicode (a lone surrogate of a \u escape), refused as the HTTP
        # API refuses it, before the parser or a check meets it.
        broken = lone_surrogates(fields)
        if broken:
            at, problem = broken[0]
            raise FormatError(f"{at}: {problem}" if at else problem)
        message = _parsed(fields[kind], MESSAGES[kind](), kind)
        beside: list[tuple[str, Message]] = []
        if kind == "decision":
            items = fields.get("reexaminations", [])
            if not isinstance(items, list):
                raise FormatError("reexaminations: must be a list of Reexamination messages")
            beside = [
                (
                    f"reexaminations[{i}]",
                    _parsed(item, decision_pb2.Reexamination(), f"reexaminations[{i}]"),
                )
                for i, item in enumerate(items)
            ]
        user_id = fields.get("user_id", "")
        if kind == "block" and not isinstance(user_id, str):
            raise FormatError("user_id: must be a string")
        screened = fields.get("screened", "")
        if not isinstance(screened, str):
            raise FormatError("screened: must be the string an export wrote")
        await _checked(kind, message, beside, user_id)
        return _record(kind, message, [m for _, m in beside], user_id, screened)


def _json(message: Message) -> dict[str, Any]:
    _clear_not_exported(message)
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def _clear_not_exported(message: Message) -> None:
    for field, value in message.ListFields():
        if field.full_name in NOT_EXPORTED:
            message.ClearField(field.name)
        elif field.type == FieldDescriptor.TYPE_MESSAGE and _ours(field):
            for item in value if field.is_repeated else [value]:
                _clear_not_exported(item)


def _ours(field: FieldDescriptor) -> bool:
    return bool(field.message_type.full_name.startswith("agentmemory."))


def _kind(fields: Any) -> str:
    if not isinstance(fields, dict):
        raise FormatError("a record must be a JSON object")
    kind = fields.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        raise FormatError(f"unknown kind {kind!r}; known: {', '.join(KINDS)}")
    if kind not in fields:
        raise FormatError(f"a {kind} record holds its {MESSAGES[kind].DESCRIPTOR.name} in {kind}")
    known = {"kind", kind, *_BESIDE.get(kind, ())}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise FormatError(
            f"a {kind} record holds {', '.join(sorted(known))}; not {', '.join(unknown)}"
        )
    return kind


def _parsed(value: Any, message: Message, where: str) -> Message:
    """``value`` read into ``message``, its output-only fields dropped.

    Raises:
        FormatError: not proto JSON of the message's type (the reason cut to one line,
            without a secret it might quote).
    """
    _check_shape(value, cast(Descriptor, message.DESCRIPTOR), where)
    try:
        json_format.ParseDict(value, message)
    except (json_format.ParseError, ValueError, TypeError, RecursionError) as exc:
        reason = redact_secrets(parse_problem(exc, message))
        if len(reason) > _PARSE_ERROR_MAX_CHARS:
            reason = reason[:_PARSE_ERROR_MAX_CHARS] + "..."
        raise FormatError(f"{where}: not a valid {message.DESCRIPTOR.name}: {reason}") from None
    _clear_not_exported(message)
    return message


def _check_shape(value: Any, descriptor: Descriptor, where: str) -> None:
    """That ``value`` is a JSON object, and every message it holds (``json_format``
    would read a string as one, letter by letter) is one too, lists where lists go.

    Raises: FormatError — naming the first place that is not.
    """
    if not isinstance(value, dict):
        raise FormatError(f"{where}: must be a {descriptor.name} (a JSON object)")
    for name, item in value.items():
        field = field_named(descriptor, name)
        if field is None or field.type != FieldDescriptor.TYPE_MESSAGE or not _ours(field):
            continue  # json_format reads (or refuses) the rest
        at = f"{where}.{field.name}"
        if not field.is_repeated:
            _check_shape(item, field.message_type, at)
        elif not isinstance(item, list):
            raise FormatError(f"{at}: must be a list of {field.message_type.name}")
        else:
            for i, element in enumerate(item):
                _check_shape(element, field.message_type, f"{at}[{i}]")


async def _checked(
    kind: str, message: Message, beside: list[tuple[str, Message]], user_id: str
) -> None:
    """The checks the API runs on every write's request, in its order: enums, ids and
    JSON depth, secrets, line breaks.

    Raises:
        InvalidArgument: reasons ``INVALID_ENUM``, ``INVALID_ID``, ``TOO_DEEP``,
            ``SECRET_IN_VALUE``, ``LINE_BREAK``.
    """
    parts = [(kind, message), *beside]
    refuse_malformed([(f"{at}.", m) for at, m in parts])
    texts = [t for at, m in parts for t in stored_texts(m, at)]
    await refuse_secrets_in([("user_id", user_id), *texts] if user_id else texts)
    check([v for at, m in parts for v in line_break_violations(_one_line_fields(m), at)])


def _one_line_fields(message: Message) -> Message:
    """The message without the fields whose request field may hold several lines."""
    copy = type(message)()
    copy.CopyFrom(message)
    for field in copy.DESCRIPTOR.fields:
        if WRITTEN_AS.get(field.full_name) in MULTI_LINE:
            copy.ClearField(field.name)
    return copy


def _record(
    kind: str, message: Any, reexaminations: list[Any], user_id: str, screened: str
) -> Record:
    if kind == "card_type":
        return _card_type(message)
    if kind == "conversation":
        return _conversation(message)
    if kind == "memory":
        return MemoryRecord(_memory(message), attestation=screened)
    if kind == "block":
        with under("block."):
            key = key_from_proto(
                message.label, message.scope, message.agent_id, message.workspace_id
            )
        return UserBlock(user_id, key, message.content, attestation=screened)
    decision = _decision(message)
    return DecisionRecord(
        decision,
        tuple(
            _reexamination(item, decision.id, f"reexaminations[{i}]")
            for i, item in enumerate(reexaminations)
        ),
    )


def _card_type(message: decision_pb2.CardType) -> CardType:
    card_type = card_type_from_proto(message)
    return CardType(
        name=card_type.name,
        re_examinable=card_type.re_examinable,
        actions=card_type.actions,
        decision_actions=card_type.decision_actions,
        created_at=_time(message, "created_at", "card_type"),
        updated_at=_time(message, "updated_at", "card_type"),
    )


def _conversation(message: memory_pb2.Conversation) -> StoredConversation:
    conversation = conversation_from_proto(message, "conversation")
    return StoredConversation(
        conversation,
        message_count=len(conversation.messages),
        raw_event_count=len(conversation.raw_events),
        created_at=_time(message, "created_at", "conversation"),
        updated_at=_time(message, "updated_at", "conversation"),
    )


# The fields of Memory an import reads itself: its ids, owner, source, groundings and
# required times, and what is not exported.
_MEMORY_READ_APART = (
    "id",
    "superseded_by",
    "source",
    "groundings",
    "hold_reason",
    "created_at",
    "updated_at",
    *(n.rpartition(".")[2] for n in NOT_EXPORTED if n.startswith("agentmemory.v1.Memory.")),
)


def _memory(message: memory_pb2.Memory) -> Memory:
    """Every field of the record named as one of Memory, as the API reads it, and
    what the record says otherwise; an import starts the memory at version 1."""
    return Memory(
        **fields_from_proto(message, Memory, prefix="memory.", skip=_MEMORY_READ_APART),
        id=_id(message.id, "memory.id", "a memory id"),
        owner=_owner(message),
        source=source_from_proto(message.source),
        hold_reason=_hold_reason(message),
        created_at=_time(message, "created_at", "memory"),
        updated_at=_time(message, "updated_at", "memory"),
        version=1,
        groundings=tuple(grounding_from_proto(g) for g in message.groundings),
        superseded_by=_id(message.superseded_by, "memory.superseded_by", "a memory id")
        if message.superseded_by
        else None,
    )


def _hold_reason(message: memory_pb2.Memory) -> HoldReason | None:
    """Why the record's memory is held: none unless it is held, and a value the contract
    names (an unknown one is refused before this reads it, as every enum is)."""
    if not message.held_for_review:
        return None
    return HOLD_REASONS_IN.get(message.hold_reason)


def _owner(message: memory_pb2.Memory) -> Owner:
    """The owner its scope names; the id of the other kind of owner must be empty."""
    if message.scope == memory_pb2.SCOPE_AGENT:
        owner, other = Owner(Scope.AGENT, message.agent_id), "workspace_id"
    elif message.scope == memory_pb2.SCOPE_WORKSPACE:
        owner, other = Owner(Scope.WORKSPACE, message.workspace_id), "agent_id"
    else:
        check(
            [FieldViolation("memory.scope", "must be SCOPE_AGENT or SCOPE_WORKSPACE", "REQUIRED")]
        )
        raise AssertionError  # unreachable: check() raised
    if getattr(message, other):
        check(
            [
                FieldViolation(
                    f"memory.{other}",
                    f"must be empty for {memory_pb2.Scope.Name(message.scope)}",
                    "NOT_ALLOWED",
                )
            ]
        )
    return owner


def _decision(message: decision_pb2.Decision) -> Decision:
    new = new_decision(message)
    with under("decision."):
        status = resolution_status_from_proto(message.resolution_status)
    return Decision(
        id=_id(message.id, "decision.id", "a decision id"),
        run_id=new.run_id,
        agent_id=new.agent_id,
        card_type=new.card_type,
        action=new.action,
        summary=new.summary,
        result=new.result,
        resolution_status=status,
        created_at=_time(message, "created_at", "decision"),
        resolved_at=datetime_from_proto(message.resolved_at, "decision.resolved_at")
        if message.HasField("resolved_at")
        else None,
    )


def _reexamination(
    message: decision_pb2.Reexamination, decision_id: uuid.UUID, at: str
) -> Reexamination:
    parent = message.parent_decision_id
    if parent and parent != str(decision_id):
        check(
            [
                FieldViolation(
                    f"{at}.parent_decision_id",
                    "must be the id of the decision the record holds",
                    "INVALID_ID",
                )
            ]
        )
    if not message.HasField("conviction_score"):
        check([FieldViolation(f"{at}.conviction_score", "is required (0 to 100)", "REQUIRED")])
    return Reexamination(
        id=_id(message.id, f"{at}.id", "a re-examination id"),
        parent_decision_id=decision_id,
        run_id=message.run_id,
        conviction_score=message.conviction_score,
        notes=message.notes,
        suggested_action=message.suggested_action,
        created_at=_time(message, "created_at", at),
    )


def _id(raw: str, path: str, what: str) -> uuid.UUID:
    """Raises: InvalidArgument — empty, or not a UUID."""
    if not raw:
        check([FieldViolation(path, "is required", "REQUIRED")])
    try:
        return uuid.UUID(raw)
    except ValueError:
        check([FieldViolation(path, f"must be {what} (a UUID)", "INVALID_ID")])
        raise  # unreachable: check() raised


def _time(message: Message, name: str, at: str) -> datetime:
    """A time the record must carry. Raises: InvalidArgument — absent or out of range."""
    if not message.HasField(name):
        check([FieldViolation(f"{at}.{name}", "is required", "REQUIRED")])
    return datetime_from_proto(getattr(message, name), f"{at}.{name}")
