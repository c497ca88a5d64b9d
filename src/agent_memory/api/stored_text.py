"""No secret at rest: every string a write's request carries is scanned before it runs.

The request is walked through its descriptor, not through a list of the fields some
use case happens to store: every string field, repeated or not, map keys and values,
nested messages, the set member of a oneof, and the contents of
``google.protobuf.Struct``, ``Value`` and ``ListValue`` (member names included). A
field added to a request is covered the day it is added.

Which RPCs only read comes from the one table of roles (:mod:`agent_memory.api.roles`):
the methods a ``reader`` may call store nothing; every other method, present or
future, is scanned (fail closed).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from agent_memory.api.roles import METHOD_ROLES
from agent_memory.domain.identity import Role
from agent_memory.domain.secrets import refuse_secrets_in

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
        elif _is_map(field):
            yield from _map(field, value, at)
        elif field.is_repeated:
            for i, item in enumerate(value):
                yield from _single(field, item, f"{at}[{i}]")
        else:
            yield from _single(field, value, at)


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


def _is_map(field: FieldDescriptor) -> bool:
    entry = field.message_type
    return field.is_repeated and entry is not None and entry.GetOptions().map_entry


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
