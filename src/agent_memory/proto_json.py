"""Proto JSON as the HTTP side and import read it: the forms people write (short enum
values, snake_case field mask paths) written out as proto JSON takes them, and a
parser's complaint said in the contract's words, never in Python's.

``json_format`` reports a bad value with the text of whatever Python call failed
(``invalid literal for int() with base 10``, ``time data '2026-04' does not match
format``). :func:`parse_problem` finds the field the complaint is about, by the path
or the name it gives, and says what that field takes instead.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any, cast

from google.api import field_behavior_pb2, field_info_pb2
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

__all__ = [
    "LONE_SURROGATE",
    "SCALAR_MESSAGES",
    "as_proto_json",
    "camel_mask",
    "enum_value",
    "field_named",
    "is_map",
    "is_uuid_field",
    "lone_surrogates",
    "loose_values",
    "may_hold_lone_surrogate",
    "parse_problem",
    "reaches",
]

# "... at UpsertMemoryRequest.owner.agentId" and "Failed to parse importance field: ..."
_AT_PATH = re.compile(r" at (\w+)((?:\.\w+)*)\.?$")
_FAILED_FIELD = re.compile(r"Failed to parse (\w+) field")
# 'should not have multiple "expiration" oneof fields': which oneof.
_ONEOF = re.compile(r'multiple "(\w+)" oneof fields')
# 'Message type "agentmemory.v1.MemoryOwner" ', before what the parser says of it.
_MESSAGE_TYPE = re.compile(r'^Message type "[\w.]+" ')
# '... at "UpsertMemoryRequest.owner".': where in the document (the message type first).
_AT_QUOTED = re.compile(r' at "\w+((?:\.\w+|\[\d+\])*)"')

_INTEGERS = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}
_WELL_KNOWN = {
    "google.protobuf.Timestamp": (
        "must be an RFC 3339 time with its zone, such as 2026-04-01T09:00:00Z"
    ),
    "google.protobuf.Duration": "must be a duration in seconds ending in s, such as 3600s",
    "google.protobuf.FieldMask": "must be field names separated by commas, such as value,pinned",
}


def field_named(descriptor: Descriptor, name: str) -> FieldDescriptor | None:
    """The field of a message by its proto name or its JSON name."""
    return descriptor.fields_by_name.get(name) or next(
        (f for f in descriptor.fields if f.json_name == name), None
    )


def _by_path(descriptor: Descriptor, path: list[str]) -> FieldDescriptor | None:
    field: FieldDescriptor | None = None
    for name in path:
        if descriptor is None:
            return None
        field = field_named(descriptor, name)
        if field is None:
            return None
        descriptor = field.message_type
    return field


def _by_name(descriptor: Descriptor, name: str) -> FieldDescriptor | None:
    """The first field named ``name`` in the message or the messages it holds."""
    seen: set[str] = set()
    queue = [descriptor]
    while queue:
        current = queue.pop(0)
        if current.full_name in seen:
            continue
        seen.add(current.full_name)
        found = field_named(current, name)
        if found is not None:
            return found
        queue.extend(f.message_type for f in current.fields if f.message_type is not None)
    return None


def _what_it_takes(field: FieldDescriptor) -> str:
    if field.message_type is not None:  # a message, a map or a Struct alike
        return _WELL_KNOWN.get(field.message_type.full_name, "must be a JSON object")
    if field.type in _INTEGERS:
        low, high = _INTEGERS[field.type]
        return f"must be a whole number from {low} to {high}"
    if field.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        return "must be a number"
    if field.type == FieldDescriptor.TYPE_BOOL:
        return "must be true or false"
    if field.type == FieldDescriptor.TYPE_ENUM:
        names = ", ".join(v.name for v in field.enum_type.values)
        return f"must be one of {names}"
    if field.type == FieldDescriptor.TYPE_BYTES:
        return "must be base64 text"
    return "must be a string"


def parse_problem(error: Exception, message: Message) -> str:
    """What a parser's complaint about a document of ``message``'s type means to its
    sender: the field, and what it takes. A complaint this cannot place keeps its
    first line, without the message type it names."""
    descriptor = cast(Descriptor, message.DESCRIPTOR)
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    oneof = _ONEOF.search(text)
    if oneof is not None:
        at = _AT_QUOTED.search(text)
        inside = at.group(1).lstrip(".") if at is not None else ""
        # The message the oneof is in: the request's, or one at the path (indexes aside).
        path = [n for n in re.sub(r"\[\d+\]", "", inside).split(".") if n]
        held: Descriptor | None = descriptor
        if path:
            holder = _by_path(descriptor, path)
            held = holder.message_type if holder is not None else None
        group = held.oneofs_by_name.get(oneof.group(1)) if held is not None else None
        if group is not None:
            names = [f.json_name for f in group.fields]
            either = f"{', '.join(names[:-1])} or {names[-1]}"
            said = f"give {either}, not both" if len(names) == 2 else f"give one of {either}"
            return f"{inside}: {said}" if inside else said
    if "has no field named" in text or "oneof" in text:
        # Already in the contract's words (a name no field has, two of a oneof), but
        # for the message type it names: said of the field it is in, if nested.
        said = _FAILED_FIELD.split(text)[-1].lstrip(": ")
        cut = said.rfind(" at ")
        said = _MESSAGE_TYPE.sub("", (said[:cut] if cut > 0 else said).rstrip("."))
        at = _AT_QUOTED.search(text)
        inside = at.group(1).lstrip(".") if at is not None else ""
        return f"{inside}: {said}" if inside else said
    field: FieldDescriptor | None = None
    path_name = ""
    at = _AT_PATH.search(text)
    if at is not None and at.group(2):
        names = at.group(2).lstrip(".").split(".")
        field = _by_path(descriptor, names)
        path_name = ".".join(names)
    failed = _FAILED_FIELD.findall(text)
    if field is None and failed:
        # Nested: "Failed to parse owner field: Failed to parse agentId field: ..."
        field = _by_path(descriptor, failed)
        path_name = ".".join(failed)
        if field is None:
            field, path_name = _by_name(descriptor, failed[-1]), failed[-1]
    if field is None:
        cut = text.rfind(" at ")
        return text[:cut] if cut > 0 else text
    takes = _what_it_takes(field)
    if field.is_repeated and field.message_type is None:
        takes = f"must be a list; each item {takes}"
    return f"{path_name}: {takes}" if path_name else takes


def enum_value(enum: EnumDescriptor, text: str) -> str:
    """An enum value as given, or written out whole when given in its short form: the
    one value whose name ends in ``_`` and the text (``core`` for ``BLOCK_LABEL_CORE``,
    ``manual`` for ``MEMORY_SOURCE_MANUAL``). Anything else is left for the parser to
    refuse."""
    if text in enum.values_by_name:
        return text
    wanted = "_" + text.upper()
    found = [v.name for v in enum.values if v.name.endswith(wanted)]
    return found[0] if len(found) == 1 and text.strip() else text


def as_proto_json(document: Any, descriptor: Descriptor) -> Any:
    """``document`` (JSON of ``descriptor``'s message) with what people write written
    out as proto JSON takes it: an enum value in its short form, a field mask with
    snake_case paths. Nothing else changes; the parser judges the rest. Messages that
    hold neither (a conversation's many messages) are not walked."""
    if not isinstance(document, dict) or not _rewritable(descriptor):
        return document
    out: dict[str, Any] = {}
    for key, value in document.items():
        field = field_named(descriptor, key) if isinstance(key, str) else None
        if field is not None and _is_mask(field) and isinstance(value, str):
            value = camel_mask(value)
        elif field is not None and field.enum_type is not None:
            if isinstance(value, str):
                value = enum_value(field.enum_type, value)
            elif isinstance(value, list):
                value = [enum_value(field.enum_type, v) if isinstance(v, str) else v for v in value]
        elif field is not None and field.message_type is not None:
            inner = field.message_type
            if not is_map(field) and not inner.full_name.startswith("google.protobuf."):
                if isinstance(value, list):
                    value = [as_proto_json(v, inner) for v in value]
                else:
                    value = as_proto_json(value, inner)
        out[key] = value
    return out


# Fields whose JSON value may be null: null is a value of theirs, not "unset".
_NULLABLE = frozenset({"google.protobuf.Value", "google.protobuf.NullValue"})
# The well-known messages whose JSON is one string, number or bool: times, field
# masks and the wrappers (what a query parameter may give whole).
SCALAR_MESSAGES = frozenset(
    {
        "google.protobuf.Timestamp",
        "google.protobuf.Duration",
        "google.protobuf.FieldMask",
        *(
            f"google.protobuf.{kind}Value"
            for kind in ("Double", "Float", "Int64", "UInt64", "Int32", "UInt32", "Bool")
        ),
        "google.protobuf.StringValue",
        "google.protobuf.BytesValue",
    }
)
# Messages whose JSON form may be other than an object: those, any value, a list.
_NOT_OBJECTS = SCALAR_MESSAGES | {"google.protobuf.Value", "google.protobuf.ListValue"}


def loose_values(
    document: Any, descriptor: Descriptor, prefix: str = "", *, typed: bool = True
) -> list[tuple[str, str]]:
    """Where ``document`` says what the protobuf parser takes but the contract's JSON
    does not (and the OpenAPI document forbids): null for a field, which the parser
    reads as unset, an enum value by number, and (``typed``: a JSON body, not text of
    a query) a value of another JSON type than the field's where the parser would take
    it or misread it: true or false for a number or an enum, a number in quotes where
    the document says a number, anything but an object for a message (the parser
    walks a string's characters as field names, and takes an empty one as an empty
    message), anything but a list for a repeated field. Each as (field path,
    problem); unknown fields and other wrong types are the parser's to refuse."""
    found: list[tuple[str, str]] = []
    if not isinstance(document, dict):
        return found
    for key, value in document.items():
        field = field_named(descriptor, key) if isinstance(key, str) else None
        if field is None:
            continue
        path = prefix + key
        kind = field.message_type or field.enum_type
        if value is None:
            if kind is None or kind.full_name not in _NULLABLE:
                found.append((path, "must not be null: leave the field out to leave it unset"))
            continue
        listed = field.is_repeated and not is_map(field)
        if typed:
            shape = _shape_problems(field, value, path)
            if shape:
                found += shape
                continue
        values = value if isinstance(value, list) and listed else [value]
        if field.message_type is not None and field.message_type.full_name == _TIMESTAMP:
            if any(isinstance(item, str) and _bad_offset(item) for item in values):
                found.append((path, _WELL_KNOWN[_TIMESTAMP]))
        elif field.enum_type is not None and field.enum_type.full_name not in _NULLABLE:
            for item in values:
                if _is_number(item):
                    names = ", ".join(v.name for v in field.enum_type.values)
                    found.append((path, f"must be one of {names}, by name"))
        elif field.message_type is not None and not field.message_type.full_name.startswith(
            "google.protobuf."
        ):
            inner = field.message_type
            if is_map(field):
                value_field = inner.fields_by_name["value"]
                if isinstance(value, dict) and value_field.message_type is not None:
                    for name, item in value.items():
                        found += loose_values(
                            item, value_field.message_type, f"{path}.{name}.", typed=typed
                        )
            else:
                for i, item in enumerate(values):
                    at = f"{path}[{i}]." if listed else f"{path}."
                    found += loose_values(item, inner, at, typed=typed)
    return found


_TIMESTAMP = "google.protobuf.Timestamp"
# A zone offset as the protobuf parser reads one (any digits), and as RFC 3339 has it.
_ANY_OFFSET = re.compile(r"[+-]\d+:\d+\Z")
_OFFSET = re.compile(r"[+-](?:[01]\d|2[0-3]):[0-5]\d\Z")


def _bad_offset(text: str) -> bool:
    """Whether a time ends in a zone offset RFC 3339 does not have (``+99:99``, ``+1:5``),
    which the protobuf parser would take, and move the time by."""
    return _ANY_OFFSET.search(text) is not None and _OFFSET.search(text) is None


# Numbers the document gives as JSON numbers; 64-bit ones may be strings in it too.
_JSON_NUMBERS = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SFIXED32,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_FIXED32,
        FieldDescriptor.TYPE_FLOAT,
        FieldDescriptor.TYPE_DOUBLE,
    }
)


def _shape_problems(field: FieldDescriptor, value: Any, path: str) -> list[tuple[str, str]]:
    """Where ``value`` is not of the JSON type ``field`` takes, as the parser would not
    say it (see :func:`loose_values`): a repeated field's items each at its index."""
    if field.is_repeated and not is_map(field):
        if not isinstance(value, list):
            return [(path, f"must be a list; each item {_what_it_takes(field)}")]
        return [
            (f"{path}[{i}]", problem)
            for i, item in enumerate(value)
            if (problem := _mistyped(field, item)) is not None
        ]
    problem = _mistyped(field, value)
    return [(path, problem)] if problem is not None else []


def _mistyped(field: FieldDescriptor, value: Any) -> str | None:
    """What one value of ``field`` (an item, for a list) must be instead, when it is a
    bool where a number or an enum goes, a string where a number goes, or anything but
    an object where a message goes; None otherwise."""
    if field.message_type is not None:
        if isinstance(value, dict) or field.message_type.full_name in _NOT_OBJECTS:
            return None
        return _what_it_takes(field)
    if isinstance(value, bool):
        return _what_it_takes(field) if field.type != FieldDescriptor.TYPE_BOOL else None
    if isinstance(value, str) and field.type in _JSON_NUMBERS:
        if field.type in _INTEGERS:
            return f"{_what_it_takes(field)}, written as a JSON number, not a string"
        return "must be a JSON number, not a string"
    return None


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    return isinstance(value, str) and value.strip().lstrip("-").isdigit()


# A character of a surrogate pair's range: JSON's \u escapes can name one alone, which
# no Unicode text holds (a pair of escapes is read whole, as one character past U+FFFF).
LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
# JSON spells a surrogate only as an escape (a raw one is no UTF-8): text without one
# holds none, and is not walked.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def may_hold_lone_surrogate(raw: bytes) -> bool:
    """Whether JSON text ``raw`` may parse to a string holding a lone surrogate."""
    return _SURROGATE_ESCAPE.search(raw) is not None


def lone_surrogates(document: Any) -> list[tuple[str, str]]:
    """Where parsed JSON holds a lone surrogate (an escape such as ``\\ud800`` with no
    partner), which is no Unicode text: in a string, or in a key of an object. Each as
    (JSON path, problem), in the document's order: a string's path, or for a key the
    path of the object it is in (``""`` for the document itself)."""
    found: list[tuple[str, str]] = []
    # (path, node) to walk, or (path, problem) found: popped in the document's order.
    stack: list[tuple[str, Any, bool]] = [("", document, False)]
    while stack:
        path, node, said = stack.pop()
        if said:
            found.append((path, node))
        elif isinstance(node, str):
            hit = LONE_SURROGATE.search(node)
            if hit is not None:
                found.append((path, f"is not valid Unicode: it holds {_lone(hit.group())}"))
        elif isinstance(node, dict):
            entries: list[tuple[str, Any, bool]] = []
            for key, value in node.items():
                hit = LONE_SURROGATE.search(key)
                if hit is None:
                    entries.append((f"{path}.{key}" if path else key, value, False))
                    continue
                shown = json.dumps(key[:40]) + ("..." if len(key) > 40 else "")
                problem = f"has a key, {shown}, that is not valid Unicode: it holds "
                entries.append((path, problem + _lone(hit.group()), True))
            stack.extend(reversed(entries))
        elif isinstance(node, list):
            stack.extend((f"{path}[{i}]", node[i], False) for i in reversed(range(len(node))))
    return found


def _lone(character: str) -> str:
    return f"the lone surrogate U+{ord(character):04X}"


@functools.cache
def reaches(descriptor: Descriptor, wanted: Callable[[FieldDescriptor], bool]) -> bool:
    """Whether a message of this type holds, anywhere inside it, a field ``wanted``
    says yes to (``wanted``: a function of the module, so the answer is remembered)."""
    return _reaches(descriptor, wanted, frozenset())


def _reaches(
    descriptor: Descriptor, wanted: Callable[[FieldDescriptor], bool], seen: frozenset[str]
) -> bool:
    if descriptor.full_name in seen:
        return False
    inside = seen | {descriptor.full_name}
    for field in descriptor.fields:
        if wanted(field):
            return True
        if field.message_type is not None and _reaches(field.message_type, wanted, inside):
            return True
    return False


def _rewritten(field: FieldDescriptor) -> bool:
    return field.enum_type is not None or _is_mask(field)


def _rewritable(descriptor: Descriptor) -> bool:
    """Whether the message, or one it holds, has an enum or a field mask field."""
    return bool(reaches(descriptor, _rewritten))


def _is_mask(field: FieldDescriptor) -> bool:
    return field.message_type is not None and (
        field.message_type.full_name == "google.protobuf.FieldMask"
    )


def camel_mask(text: str) -> str:
    """A field mask as its JSON form takes it (``expireTime,value``) from paths given
    either way (``expire_time,value`` too): proto JSON reads only the first."""
    return ",".join(
        ".".join(_camel(part) for part in path.strip().split(".")) for path in text.split(",")
    )


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


REQUIRED = field_behavior_pb2.FieldBehavior.REQUIRED
OUTPUT_ONLY = field_behavior_pb2.FieldBehavior.OUTPUT_ONLY


@functools.cache  # a descriptor's, asked of every field of every request
def is_map(field: FieldDescriptor) -> bool:
    """Whether ``field`` is a map (a repeated entry message the compiler made)."""
    entry = field.message_type
    return bool(field.is_repeated and entry is not None and entry.GetOptions().map_entry)


def field_behaviors(field: FieldDescriptor) -> set[int]:
    """The field's ``google.api.field_behavior`` annotations (AIP-203)."""
    return set(field.GetOptions().Extensions[field_behavior_pb2.field_behavior])


UUID4 = field_info_pb2.FieldInfo.Format.UUID4


@functools.cache
def is_uuid_field(field: FieldDescriptor) -> bool:
    """Whether the contract declares the string field a UUID (``google.api.field_info``
    format ``UUID4``, AIP-202). Asked of every field of every request: the answer is
    the descriptor's, kept."""
    options = field.GetOptions()
    if not options.HasExtension(field_info_pb2.field_info):
        return False
    return bool(options.Extensions[field_info_pb2.field_info].format == UUID4)
