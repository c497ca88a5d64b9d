"""No secret at rest, and no line break where one line is meant: every string a write's
request carries is checked before it runs.

The request is walked through its descriptor, not through a list of the fields some
use case happens to store: every string field, repeated or not, map keys and values,
nested messages, the set member of a oneof, and the contents of
``google.protobuf.Struct``, ``Value`` and ``ListValue`` (member names included). A
field added to a request is covered the day it is added.

Line breaks: a field holds one line (an id, a key, a tag, a summary, a note, an
action) unless it is named in :data:`MULTI_LINE`, so a field added to a request is
one line until someone says why it may hold more. Every character ``str.splitlines``
breaks at counts, not only ``\n``: the renderer must never meet a ``\x1e`` that a
reader of its output would take for a new line.

Which RPCs only read comes from the one table of roles (:mod:`agent_memory.api.roles`):
the methods a ``reader`` may call store nothing; every other method, present or
future, is scanned (fail closed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from agent_memory.api.roles import METHOD_ROLES
from agent_memory.domain.errors import FieldViolation, check
from agent_memory.domain.identity import Role
from agent_memory.domain.screening import refuse_secrets_in
from agent_memory.proto_json import is_map

NOT_STORING: frozenset[str] = frozenset(
    method for method, role in METHOD_ROLES.items() if role is Role.READER
)
"""Full method names of the reads: what a ``reader`` key may call stores nothing (its
queries, personas and page tokens are used to answer), so it is not scanned. A
method missing from the role table is not a read, and is scanned."""

NOT_REFUSED: Mapping[str, str] = {
    "agentmemory.v1.ExtractMemoriesRequest.transcript": (
        "credentials turn up in conversations; the transcript is stored with them "
        "redacted, only until its pass ends, and the model sees it redacted"
    ),
}
"""Fields of writes that are not refused for a secret, by full field name, with why."""

MULTI_LINE: Mapping[str, str] = {
    "agentmemory.v1.UpsertMemoryRequest.value": "a fact may be a list or a paragraph",
    "agentmemory.v1.Memory.value": "a fact may be a list or a paragraph",
    "agentmemory.v1.MemorizeRequest.content": "a fact may be a list or a paragraph",
    "agentmemory.v1.RecordLearningRequest.content": "a learning may be a paragraph",
    "agentmemory.v1.Grounding.quote": "a quote keeps the lines it had",
    "agentmemory.v1.ConversationMessage.content": "a message keeps the lines it had",
    "agentmemory.v1.Conversation.raw_events": "an event is JSON as the provider sent it",
    "agentmemory.v1.ExtractMemoriesRequest.transcript": "a transcript is many lines",
    "agentmemory.v1.WriteBlockRequest.content": "a block is lines",
}
"""Text fields of writes that may hold line breaks, by full field name, with why. The
renderer flattens those that it shows on one line; a core block keeps its lines."""

# Every character str.splitlines breaks a line at.
LINE_BREAK_CHARACTERS = r"\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAKS = re.compile(f"[{LINE_BREAK_CHARACTERS}]")
LINE_BREAK = "LINE_BREAK"

_STRUCT = "google.protobuf.Struct"
_VALUE = "google.protobuf.Value"
_LIST = "google.protobuf.ListValue"
_TEXT_TYPES = (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES)


def stores_request(method: str) -> bool:
    """Whether the request of ``method`` (a full gRPC method name) may be stored."""
    return method not in NOT_STORING


def stored_texts(message: Message, path: str = "") -> Iterator[tuple[str, str]]:
    """Every non-empty string in ``message``, as (field path, text), in field order.

    Paths read like the field violations elsewhere: ``groundings[0].quote``,
    ``conversation.messages[1].role``, ``metadata.fields["note"]``. A Struct member is
    given as JSON shows it, name and value together (``"aws_secret": "…"``), so a
    detector that needs a credential's name beside it still sees it; the member's
    name is also given alone, at the path of the map (``metadata.fields``), which
    never repeats the name, so a secret there is not echoed. A message with a ``key``
    and a ``value`` gives the value beside its key, at the value's path, for the same
    reason. Fields in :data:`NOT_REFUSED` are skipped.
    """
    name = message.DESCRIPTOR.full_name
    if name == _STRUCT:
        yield from _struct(message, path)
        return
    if name == _VALUE:
        yield from _value(message, path)
        return
    if name == _LIST:
        yield from _list(message, path)
        return
    named_value = _named_value(message)
    for field, value in message.ListFields():
        if field.full_name in NOT_REFUSED:
            continue
        at = f"{path}.{field.name}" if path else field.name
        if named_value is not None and field.name == "value":
            yield at, named_value  # the value with its name: scanned once, the two together
        elif is_map(field):
            yield from _map(field, value, at)
        elif field.is_repeated:
            for i, item in enumerate(value):
                yield from _single(field, item, f"{at}[{i}]")
        else:
            yield from _single(field, value, at)


def refuse_line_breaks(method: str, request: Message) -> None:
    """Refuse a write whose request holds a line break in a field meant for one line.

    Raises:
        InvalidArgument: reason ``LINE_BREAK``, naming every such field.
    """
    if stores_request(method):
        check(line_break_violations(request))


def line_break_violations(message: Message, path: str = "") -> list[FieldViolation]:
    """Every one-line text field under ``message`` that holds a line break. JSON data
    (``google.protobuf.Struct``) and bytes are not text a prompt shows, and are left."""
    found: list[FieldViolation] = []
    for field, value in message.ListFields():
        at = f"{path}.{field.name}" if path else field.name
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            if field.message_type.full_name.startswith("google.protobuf."):
                continue
            if is_map(field):
                value_field = field.message_type.fields_by_name["value"]
                for key in sorted(value):
                    found += _one_line(field, key, f"{at}[{_key(key)}]")
                    item = value[key]
                    if isinstance(item, Message):
                        found += line_break_violations(item, f"{at}[{_key(key)}]")
                    elif isinstance(item, str):
                        found += _one_line(value_field, item, f"{at}[{_key(key)}]")
                continue
            items = enumerate(value) if field.is_repeated else [(None, value)]
            for i, item in items:
                found += line_break_violations(item, at if i is None else f"{at}[{i}]")
        elif field.type == FieldDescriptor.TYPE_STRING:
            items = enumerate(value) if field.is_repeated else [(None, value)]
            for i, item in items:
                found += _one_line(field, item, at if i is None else f"{at}[{i}]")
    return found


def one_line(field: FieldDescriptor) -> bool:
    """Whether a string field of a write holds one line (not named in MULTI_LINE)."""
    return field.full_name not in MULTI_LINE


def _one_line(field: FieldDescriptor, text: object, path: str) -> list[FieldViolation]:
    if not one_line(field) or not isinstance(text, str):
        return []
    found = _LINE_BREAKS.search(text)
    if found is None:
        return []
    char = f"U+{ord(found.group()):04X}"
    return [FieldViolation(path, f"must be one line, without a line break ({char})", LINE_BREAK)]


async def refuse_stored_secrets(method: str, request: Message) -> None:
    """Refuse a write whose request carries a secret in any string it could store.

    Raises:
        InvalidArgument: reason ``SECRET_IN_VALUE``, naming the first such field.
    """
    if stores_request(method):
        await refuse_secrets_in(list(stored_texts(request)))


def _named_value(message: Message) -> str | None:
    """A message's ``key`` and ``value`` together, as a note would read them, or None:
    a credential is often known by its name alone (``db-password`` = ``Tr0ub4dor&3``).
    Whatever the value alone would show, it shows beside its name too."""
    fields = message.DESCRIPTOR.fields_by_name
    if "key" not in fields or "value" not in fields:
        return None
    key, value = getattr(message, "key", None), getattr(message, "value", None)
    if isinstance(key, str) and isinstance(value, str) and key and value:
        return f"{key}: {value}"
    return None


def _single(field: FieldDescriptor, value: Any, path: str) -> Iterator[tuple[str, str]]:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        yield from stored_texts(value, path)
    elif field.type in _TEXT_TYPES:
        yield from _text(value, path)


def _text(value: str | bytes, path: str) -> Iterator[tuple[str, str]]:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    if text:
        yield path, text


def _map(field: FieldDescriptor, entries: Any, path: str) -> Iterator[tuple[str, str]]:
    key_field = field.message_type.fields_by_name["key"]
    value_field = field.message_type.fields_by_name["value"]
    for key in sorted(entries):
        if key_field.type in _TEXT_TYPES:
            yield from _text(key, path)
        yield from _single(value_field, entries[key], f"{path}[{_key(key)}]")


def _key(key: object) -> str:
    return json.dumps(key, ensure_ascii=False) if isinstance(key, str) else str(key)


def _struct(message: Any, path: str) -> Iterator[tuple[str, str]]:
    at = f"{path}.fields" if path else "fields"
    for key in sorted(message.fields):
        yield from _text(key, at)
        member = message.fields[key]
        member_path = f"{at}[{_key(key)}]"
        if member.WhichOneof("kind") == "string_value":
            yield member_path, f"{_key(key)}: {json.dumps(member.string_value, ensure_ascii=False)}"
        else:
            yield from _value(member, member_path)


def _value(message: Any, path: str) -> Iterator[tuple[str, str]]:
    kind = message.WhichOneof("kind")
    if kind == "string_value":
        yield from _text(message.string_value, path)
    elif kind == "struct_value":
        yield from _struct(message.struct_value, path)
    elif kind == "list_value":
        yield from _list(message.list_value, path)


def _list(message: Any, path: str) -> Iterator[tuple[str, str]]:
    at = f"{path}.values" if path else "values"
    for i, item in enumerate(message.values):
        yield from _value(item, f"{at}[{i}]")
