"""What every request must be before a servicer sees it: decodable, and its enums defined.

Both checks work from the proto descriptors, so an RPC or field added to the
contract is covered without a line here.

- A request that does not decode (truncated or malformed bytes, a string field
  that is not UTF-8) is handed on as :class:`Undecodable` instead of failing
  inside gRPC, and refused as INVALID_ARGUMENT naming the field where decoding
  broke, with reason ``UNDECODABLE_REQUEST``.
- proto3 enums are open: a client may send any int32 in an enum field. Every enum
  field of a request, nested or repeated, must hold a number its enum defines;
  anything else is INVALID_ARGUMENT with reason ``INVALID_ENUM``.
- A string field the contract declares a UUID (``google.api.field_info`` format
  ``UUID4``) must hold one, in its canonical hyphenated form, when it is set;
  anything else is INVALID_ARGUMENT with reason ``INVALID_ID``. The OpenAPI
  document reads the same annotation (``format: uuid``).
- A JSON value (``google.protobuf.Struct``, ``Value``, ``ListValue``: metadata, a
  decision's result) nests at most :data:`JSON_MAX_DEPTH` levels, anywhere in a
  request; deeper is INVALID_ARGUMENT with reason ``TOO_DEEP``. The answers that give
  a stored value back wrap it a few messages deeper than the request did, and the
  protobuf runtime decodes 100 levels: a deeper value would be stored but could not
  be read back.
"""

from __future__ import annotations

import functools
import re
from collections.abc import AsyncIterable, AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from google.protobuf import descriptor_pool
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from agent_memory.domain.errors import FieldViolation, InvalidArgument
from agent_memory.proto_json import is_map, is_uuid_field, reaches
from agent_memory.status import Unreadable

UNDECODABLE_REQUEST = "UNDECODABLE_REQUEST"
INVALID_ENUM = "INVALID_ENUM"
INVALID_ID = "INVALID_ID"
TOO_DEEP = "TOO_DEEP"
#: How many levels a JSON value may nest (``{"a": {"b": 1}}`` is 2): each level is up to
#: three messages on the wire (Struct, its entry, Value), under a handful of wrappers.
JSON_MAX_DEPTH: Final = 20
# A UUID as RFC 9562 writes it: 8-4-4-4-12 hexadecimal digits.
_UUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\Z")

Deserializer = Callable[[bytes], Any]


@dataclass(frozen=True)
class Undecodable:
    """Stands in for a request whose bytes are no valid message of its type."""

    type_name: str
    field: str  # where decoding broke; empty when no field can be named
    problem: str

    def error(self) -> InvalidArgument:
        what = f"the request is not a valid {self.type_name or 'request'} message"
        return InvalidArgument(
            [FieldViolation(self.field, self.problem, UNDECODABLE_REQUEST)],
            message=f"{what}: {self.field or 'the message'} {self.problem}",
            reason=UNDECODABLE_REQUEST,
        )


def request_descriptor(method: str) -> Descriptor | None:
    """The request type of ``/package.Service/Method``, when the default pool has it."""
    service, _, name = method.lstrip("/").rpartition("/")
    try:
        pool = descriptor_pool.Default()  # type: ignore[no-untyped-call]
        found = pool.FindServiceByName(service).methods_by_name.get(name)
    except KeyError:
        return None
    return found.input_type if found is not None else None


def decoding(deserialize: Deserializer | None, method: str) -> Deserializer | None:
    """``deserialize``, answering :class:`Undecodable` where it would raise."""
    if deserialize is None:
        return None
    descriptor = request_descriptor(method)
    type_name = descriptor.full_name if descriptor is not None else ""

    def decode(raw: bytes) -> Any:
        try:
            return deserialize(raw)
        except Exception:  # any failure to decode bytes is the caller's bad request
            field, problem = ("", "is not well-formed protobuf")
            if descriptor is not None:
                field, problem = broken_field(descriptor, bytes(raw))
            return Undecodable(type_name, field, problem)

    return decode


def decoded(request: Any) -> Any:
    """The request, once it decoded (a stream of requests is checked as it is read).

    Raises:
        InvalidArgument: undecodable (``UNDECODABLE_REQUEST``).
    """
    if isinstance(request, Undecodable | Unreadable):
        raise request.error()
    return request


def checked(request: Any) -> Any:
    """The request once it decoded and its enums hold defined values; a stream of
    requests comes back as a stream that checks each one as it is read.

    Raises:
        InvalidArgument: undecodable (``UNDECODABLE_REQUEST``), or an enum field holds
            a number its enum does not define (``INVALID_ENUM``), or a UUID field
            holds something else (``INVALID_ID``), or a JSON value nests too deeply
            (``TOO_DEEP``).
    """
    if isinstance(request, Undecodable | Unreadable):
        raise request.error()
    if isinstance(request, Message):
        refuse_malformed([("", request)])
        return request
    if isinstance(request, AsyncIterable):
        return _checked_stream(request)
    return request


def refuse_malformed(parts: Sequence[tuple[str, Message]]) -> None:
    """Refuse messages (each under its path prefix) that break a rule of
    :data:`MESSAGE_CHECKS`: the first rule broken, with every field that breaks it.

    Raises:
        InvalidArgument: ``INVALID_ENUM``, ``INVALID_ID`` or ``TOO_DEEP``.
    """
    for violations_of, reason in MESSAGE_CHECKS:
        violations = [v for prefix, m in parts for v in violations_of(m, prefix)]
        if violations:
            raise InvalidArgument(violations, reason=reason)


async def _checked_stream(requests: AsyncIterable[Any]) -> AsyncIterator[Any]:
    async for request in requests:
        yield checked(request)


# --- enums ---------------------------------------------------------------------------


def enum_violations(message: Message, prefix: str = "") -> list[FieldViolation]:
    """Every enum field under ``message`` (nested, repeated, map values) whose number
    its enum type does not define."""
    found: list[FieldViolation] = []
    for field, value in message.ListFields():
        path = prefix + field.name
        if field.type == FieldDescriptor.TYPE_ENUM:
            numbers = list(enumerate(value)) if field.is_repeated else [(None, value)]
            for i, number in numbers:
                if field.enum_type.values_by_number.get(number) is None:
                    found.append(_bad_enum(path if i is None else f"{path}[{i}]", field, number))
        elif field.message_type is not None and _holds_enums(field.message_type):
            if is_map(field):
                found += _map_violations(path, field, value)
            elif field.is_repeated:
                for i, item in enumerate(value):
                    found += enum_violations(item, f"{path}[{i}].")
            else:
                found += enum_violations(value, f"{path}.")
    return found


def _map_violations(path: str, field: FieldDescriptor, entries: Any) -> list[FieldViolation]:
    found: list[FieldViolation] = []
    value_field = field.message_type.fields_by_name["value"]
    for key in sorted(entries):
        item = entries[key]
        item_path = f"{path}[{key!r}]"
        if value_field.type == FieldDescriptor.TYPE_ENUM:
            if value_field.enum_type.values_by_number.get(item) is None:
                found.append(_bad_enum(item_path, value_field, item))
        elif value_field.message_type is not None:
            found += enum_violations(item, f"{item_path}.")
    return found


def _bad_enum(path: str, field: FieldDescriptor, number: int) -> FieldViolation:
    enum = field.enum_type
    names = ", ".join(v.name for v in enum.values)
    return FieldViolation(path, f"{number} is not a value of {enum.name} ({names})", INVALID_ENUM)


@functools.cache  # a descriptor's, asked of every field of every request
def _is_enum(field: FieldDescriptor) -> bool:
    return bool(field.type == FieldDescriptor.TYPE_ENUM)


def _holds_enums(descriptor: Descriptor) -> bool:
    """Whether a message of this type can hold an enum field anywhere inside it."""
    return bool(reaches(descriptor, _is_enum))


# --- formats --------------------------------------------------------------------


def format_violations(message: Message, prefix: str = "") -> list[FieldViolation]:
    """Every set UUID field under ``message`` (nested and repeated) that holds no UUID."""
    found: list[FieldViolation] = []
    for field, value in message.ListFields():
        path = prefix + field.name
        if is_uuid_field(field):
            items = list(enumerate(value)) if field.is_repeated else [(None, value)]
            for i, text in items:
                if not _UUID.match(text):
                    where = path if i is None else f"{path}[{i}]"
                    found.append(FieldViolation(where, "must be a UUID", INVALID_ID))
        elif (
            field.message_type is not None
            and not is_map(field)
            and reaches(field.message_type, is_uuid_field)
        ):
            for i, item in enumerate(value) if field.is_repeated else [(None, value)]:
                inner = f"{path}." if i is None else f"{path}[{i}]."
                found += format_violations(item, inner)
    return found


# --- JSON values ---------------------------------------------------------------------

_JSON_TYPES = frozenset(
    {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"}
)


@functools.cache  # a descriptor's, asked of every field of every request
def _is_json(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.full_name in _JSON_TYPES


def json_depth_violations(message: Message, prefix: str = "") -> list[FieldViolation]:
    """Every JSON value under ``message`` (nested, repeated, map values) that nests more
    than :data:`JSON_MAX_DEPTH` levels."""
    found: list[FieldViolation] = []
    for field, value in message.ListFields():
        if field.message_type is None or not reaches(field.message_type, _is_json):
            continue  # (a JSON type reaches itself)
        path = prefix + field.name
        if is_map(field):
            value_field = field.message_type.fields_by_name["value"]
            items = [(f"{path}[{key!r}]", value[key]) for key in sorted(value)]
            if value_field.message_type is None:
                continue
            json = _is_json(value_field)
        else:
            items = (
                [(f"{path}[{i}]", v) for i, v in enumerate(value)]
                if field.is_repeated
                else [(path, value)]
            )
            json = _is_json(field)
        for where, item in items:
            if not json:
                found += json_depth_violations(item, f"{where}.")
            elif _depth(item) > JSON_MAX_DEPTH:
                found.append(
                    FieldViolation(
                        where, f"must nest at most {JSON_MAX_DEPTH} levels deep", TOO_DEEP
                    )
                )
    return found


def _depth(value: Any) -> int:
    """How many objects and arrays a JSON value nests: 0 for a scalar."""
    name = value.DESCRIPTOR.full_name
    if name == "google.protobuf.Value":
        kind = value.WhichOneof("kind")
        return _depth(getattr(value, kind)) if kind in ("struct_value", "list_value") else 0
    items = value.fields.values() if name == "google.protobuf.Struct" else value.values
    return 1 + max((_depth(item) for item in items), default=0)


# --- where decoding broke ------------------------------------------------------------

_VARINT, _FIXED64, _LENGTH, _START_GROUP, _END_GROUP, _FIXED32 = range(6)
_MAX_VARINT_BYTES = 10
_MAX_DEPTH = 100  # as deep as the protobuf runtime decodes
_NOT_UTF8 = "must be valid UTF-8"
_MALFORMED = "is not well-formed protobuf (truncated or malformed)"


class _Broken(Exception):
    def __init__(self, path: str, problem: str = _MALFORMED) -> None:
        super().__init__(path)
        self.path = path
        self.problem = problem


def broken_field(descriptor: Descriptor, raw: bytes) -> tuple[str, str]:
    """Where ``raw`` stops being a valid ``descriptor`` message, and what is wrong there.

    The path names the innermost field of the request's own types (a well-known
    type such as Struct counts as one field); it is empty when the break is in the
    framing of the request itself. Unknown fields are skipped as the runtime skips
    them, and a known field sent with another wire type counts as unknown.
    """
    try:
        _walk(descriptor, raw, 0, len(raw), "", 0)
    except _Broken as broken:
        return broken.path, broken.problem
    return "", _MALFORMED


def _walk(
    descriptor: Descriptor | None, data: bytes, pos: int, end: int, prefix: str, depth: int
) -> None:
    here = prefix.removesuffix(".")
    if depth > _MAX_DEPTH:
        raise _Broken(here, "is nested too deeply")
    seen: dict[int, int] = {}
    while pos < end:
        tag, pos = _varint(data, pos, end, here)
        number, wire = tag >> 3, tag & 7
        if number == 0 or wire > _FIXED32:
            raise _Broken(here)
        field = descriptor.fields_by_number.get(number) if descriptor is not None else None
        path = here
        if field is not None:
            index = seen.get(number, 0)
            seen[number] = index + 1
            path = prefix + field.name + (f"[{index}]" if field.is_repeated else "")
        if wire == _VARINT:
            _, pos = _varint(data, pos, end, path)
        elif wire in (_FIXED64, _FIXED32):
            pos += 8 if wire == _FIXED64 else 4
            if pos > end:
                raise _Broken(path)
        elif wire == _LENGTH:
            length, pos = _varint(data, pos, end, path)
            if pos + length > end:
                raise _Broken(path)
            if field is not None:
                _check_value(field, data, pos, pos + length, path, depth)
            pos += length
        elif wire == _START_GROUP:
            pos = _skip_group(data, pos, end, number, path, depth)
        else:  # an end-group tag that closes no group
            raise _Broken(here)


def _check_value(
    field: FieldDescriptor, data: bytes, start: int, end: int, path: str, depth: int
) -> None:
    if field.type == FieldDescriptor.TYPE_STRING:
        try:
            data[start:end].decode("utf-8")
        except UnicodeDecodeError:
            raise _Broken(path, _NOT_UTF8) from None
    elif field.type == FieldDescriptor.TYPE_MESSAGE:
        if field.message_type.full_name.startswith("google.protobuf."):
            try:
                _walk(field.message_type, data, start, end, "", depth + 1)
            except _Broken as inner:
                raise _Broken(path, inner.problem) from None
        else:
            _walk(field.message_type, data, start, end, f"{path}.", depth + 1)


def _skip_group(data: bytes, pos: int, end: int, number: int, path: str, depth: int) -> int:
    if depth > _MAX_DEPTH:
        raise _Broken(path, "is nested too deeply")
    while pos < end:
        tag, pos = _varint(data, pos, end, path)
        inner, wire = tag >> 3, tag & 7
        if inner == 0 or wire > _FIXED32:
            raise _Broken(path)
        if wire == _END_GROUP:
            if inner != number:
                raise _Broken(path)
            return pos
        if wire == _VARINT:
            _, pos = _varint(data, pos, end, path)
        elif wire in (_FIXED64, _FIXED32):
            pos += 8 if wire == _FIXED64 else 4
        elif wire == _LENGTH:
            length, pos = _varint(data, pos, end, path)
            pos += length
        else:
            pos = _skip_group(data, pos, end, inner, path, depth + 1)
        if pos > end:
            raise _Broken(path)
    raise _Broken(path)


def _varint(data: bytes, pos: int, end: int, path: str) -> tuple[int, int]:
    value = 0
    for shift in range(0, 7 * _MAX_VARINT_BYTES, 7):
        if pos >= end:
            raise _Broken(path)
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
    raise _Broken(path)


MESSAGE_CHECKS: Final[tuple[tuple[Callable[[Message, str], list[FieldViolation]], str], ...]] = (
    (enum_violations, INVALID_ENUM),
    (format_violations, INVALID_ID),
    (json_depth_violations, TOO_DEEP),
)
"""What every message a write takes is checked for, in this order, each rule with its
reason: an API request (:func:`checked`) and an import's record alike."""
