"""The OpenAPI 3.1 document of the HTTP/JSON API, made from the proto descriptors.

Paths come from the ``google.api.http`` routes (:mod:`agent_memory.http.routes`),
schemas from the message descriptors under the proto3 JSON mapping, and every
description from the comments of the proto files, read from the descriptor set
``scripts/generate_protos.py`` installs beside the generated code. Nothing here
names an RPC or a message of the contract: a new one is documented by itself.
"""

from __future__ import annotations

import copy
import importlib.metadata
import importlib.resources
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any, Final, cast

import grpc
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

from agent_memory.api.field_rules import (
    Choice,
    Items,
    Mask,
    Span,
    Text,
    at_most,
    rule_of,
    without,
)
from agent_memory.api.stored_text import LINE_BREAK_CHARACTERS, one_line, stores_request
from agent_memory.http.routes import Route, field_at, routes
from agent_memory.http.transcoder import HTTP_STATUS, etag_resource, infers_mask
from agent_memory.proto_json import (
    OUTPUT_ONLY,
    REQUIRED,
    field_behaviors,
    is_map,
    is_uuid_field,
)

# A variable of a route template: {field.path} or {field.path=pattern}.
_VARIABLE = re.compile(r"\{([^}=]+)(?:=[^}]*)?\}")

_SCHEMAS = "#/components/schemas/"
# How many to answer (AIP-158's page_size, and the limits of the calls that answer
# one page): a negative count is refused, zero means the server's default.
_COUNTS = frozenset({"page_size", "limit"})
_STATUS = "google.rpc.Status"
_T = FieldDescriptor
_INT64: dict[str, Any] = {"type": ["string", "integer"], "format": "int64"}
_UINT64: dict[str, Any] = {"type": ["string", "integer"], "minimum": 0}
# proto3 JSON: 64-bit integers are decimal strings (a number is accepted too).
_SCALARS: dict[int, dict[str, Any]] = {
    _T.TYPE_DOUBLE: {"type": "number", "format": "double"},
    _T.TYPE_FLOAT: {"type": "number", "format": "float"},
    _T.TYPE_INT32: {"type": "integer", "format": "int32"},
    _T.TYPE_SINT32: {"type": "integer", "format": "int32"},
    _T.TYPE_SFIXED32: {"type": "integer", "format": "int32"},
    _T.TYPE_UINT32: {"type": "integer", "format": "int64", "minimum": 0, "maximum": 2**32 - 1},
    _T.TYPE_FIXED32: {"type": "integer", "format": "int64", "minimum": 0, "maximum": 2**32 - 1},
    _T.TYPE_INT64: _INT64,
    _T.TYPE_SINT64: _INT64,
    _T.TYPE_SFIXED64: _INT64,
    _T.TYPE_UINT64: _UINT64,
    _T.TYPE_FIXED64: _UINT64,
    _T.TYPE_BOOL: {"type": "boolean"},
    _T.TYPE_STRING: {"type": "string"},
    _T.TYPE_BYTES: {"type": "string", "contentEncoding": "base64"},
}
_WRAPPERS: dict[str, int] = {
    "google.protobuf.DoubleValue": _T.TYPE_DOUBLE,
    "google.protobuf.FloatValue": _T.TYPE_FLOAT,
    "google.protobuf.Int64Value": _T.TYPE_INT64,
    "google.protobuf.UInt64Value": _T.TYPE_UINT64,
    "google.protobuf.Int32Value": _T.TYPE_INT32,
    "google.protobuf.UInt32Value": _T.TYPE_UINT32,
    "google.protobuf.BoolValue": _T.TYPE_BOOL,
    "google.protobuf.StringValue": _T.TYPE_STRING,
    "google.protobuf.BytesValue": _T.TYPE_BYTES,
}


# Well-known messages with a JSON form of their own: one string each, so they
# can also travel in a path or a query string.
_TEXT_TYPES: dict[str, dict[str, Any]] = {
    "google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
    "google.protobuf.Duration": {
        "type": "string",
        # Seconds within protobuf's range: at most 315,576,000,000 (10,000 years).
        "pattern": rf"^-?{at_most(315_576_000_000)}(\.[0-9]{{1,9}})?s$",
        "description": "Seconds with up to nine fractional digits and an `s`, e.g. `1.5s`.",
    },
    "google.protobuf.FieldMask": {
        "type": "string",
        "description": "Comma-separated field paths, each of dotted lowerCamelCase names.",
    },
    **{name: _SCALARS[kind] for name, kind in _WRAPPERS.items()},
}
# ... and JSON values that are not one string: body only.
_JSON_TYPES: dict[str, dict[str, Any]] = {
    "google.protobuf.Struct": {"type": "object"},
    "google.protobuf.Value": {},
    "google.protobuf.ListValue": {"type": "array"},
    "google.protobuf.Empty": {"type": "object"},
    "google.protobuf.Any": {
        "type": "object",
        "properties": {"@type": {"type": "string"}},
        "required": ["@type"],
    },
}
# Free JSON as stored: jsonb holds no NUL, in a member's name or in a string.
_NO_NUL: dict[str, Any] = {"pattern": "^[^\\x00]*$"}
_STORED_JSON_COMPONENTS: dict[str, Any] = {
    "google.protobuf.Struct": {
        "type": "object",
        "description": "A JSON object; no NUL character in a name or a string.",
        "propertyNames": _NO_NUL,
        "additionalProperties": {"$ref": "#/components/schemas/google.protobuf.Value"},
    },
    # Any JSON value: each keyword holds for its own type only (a string's pattern, an
    # array's items, an object's members), so no value needs to be told apart first.
    "google.protobuf.Value": {
        "description": "Any JSON value; no NUL character in a name or a string.",
        **_NO_NUL,
        "items": {"$ref": "#/components/schemas/google.protobuf.Value"},
        "propertyNames": _NO_NUL,
        "additionalProperties": {"$ref": "#/components/schemas/google.protobuf.Value"},
    },
}
_STORED_JSON: dict[str, dict[str, Any]] = {
    "google.protobuf.Struct": {"$ref": "#/components/schemas/google.protobuf.Struct"},
    "google.protobuf.Value": {"$ref": "#/components/schemas/google.protobuf.Value"},
    "google.protobuf.ListValue": {
        "type": "array",
        "items": {"$ref": "#/components/schemas/google.protobuf.Value"},
    },
}
_STATUS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": (
        "google.rpc.Status in proto JSON, sent with the HTTP status of its code: "
        + ", ".join(
            f"{status} {code.name}"
            for code, status in sorted(HTTP_STATUS.items(), key=lambda item: item[1])
            if code is not grpc.StatusCode.OK
        )
        + "."
    ),
    "properties": {
        "code": {"type": "integer", "format": "int32", "description": "The google.rpc.Code."},
        "message": {"type": "string", "description": "A developer-facing English message."},
        "details": {
            "type": "array",
            "description": "e.g. google.rpc.ErrorInfo with a stable reason, google.rpc.BadRequest.",
            "items": _JSON_TYPES["google.protobuf.Any"],
        },
    },
}
_DESCRIPTION = """\
HTTP/JSON transcoding of the agent-memory gRPC contract: every operation calls one \
RPC, named by its operationId (`Service_Method`). Requests and responses use the \
proto3 JSON mapping (lowerCamelCase field names, 64-bit integers as strings, enums \
by name, timestamps in RFC 3339). Errors are `google.rpc.Status` as JSON, with the \
standard HTTP status of their code.

Send an API key as `Authorization: Bearer <key>`. In the server's unauthenticated \
local mode no key is needed and the `x-tenant-id` / `x-user-id` headers name the caller."""


@dataclass(frozen=True)
class _Source:
    """What the proto source says beyond the runtime descriptors."""

    comments: dict[str, str]  # by full name; enum values as <enum full name>.<value>
    oneofs: frozenset[str]  # full names of the real oneofs (not proto3 ``optional``)


_Path = tuple[int, ...]
_Named = Iterator[tuple[str, str, _Path]]  # kind, full name, source path


def _enum_names(enum: descriptor_pb2.EnumDescriptorProto, name: str, path: _Path) -> _Named:
    yield "enum", name, path
    for i, value in enumerate(enum.value):
        yield "value", f"{name}.{value.name}", (*path, 2, i)


def _message_names(message: descriptor_pb2.DescriptorProto, name: str, path: _Path) -> _Named:
    """The message, its fields, real oneofs, nested messages and enums."""
    yield "message", name, path
    for i, field in enumerate(message.field):
        yield "field", f"{name}.{field.name}", (*path, 2, i)
    synthetic = {field.oneof_index for field in message.field if field.proto3_optional}
    for i, oneof in enumerate(message.oneof_decl):
        if i not in synthetic:
            yield "oneof", f"{name}.{oneof.name}", (*path, 8, i)
    for i, nested in enumerate(message.nested_type):
        yield from _message_names(nested, f"{name}.{nested.name}", (*path, 3, i))
    for i, enum in enumerate(message.enum_type):
        yield from _enum_names(enum, f"{name}.{enum.name}", (*path, 4, i))


def _file_names(file: descriptor_pb2.FileDescriptorProto) -> _Named:
    """Every element of a proto file that may carry a comment."""
    for i, message in enumerate(file.message_type):
        yield from _message_names(message, f"{file.package}.{message.name}", (4, i))
    for i, enum in enumerate(file.enum_type):
        yield from _enum_names(enum, f"{file.package}.{enum.name}", (5, i))
    for i, service in enumerate(file.service):
        yield "service", f"{file.package}.{service.name}", (6, i)
        for j, method in enumerate(service.method):
            yield "method", f"{file.package}.{service.name}.{method.name}", (6, i, 2, j)


def _clean(comment: str) -> str:
    """A comment as written, without the space after each ``//``."""
    return "\n".join(line.removeprefix(" ") for line in comment.splitlines()).strip()


@cache
def _source() -> _Source:
    """Comments and real oneofs of our proto files, from the installed descriptor set."""
    data = importlib.resources.files("agentmemory.v1").joinpath("descriptors.binpb").read_bytes()
    comments: dict[str, str] = {}
    oneofs: set[str] = set()
    for file in descriptor_pb2.FileDescriptorSet.FromString(data).file:
        at = {
            tuple(where.path): _clean(where.leading_comments or where.trailing_comments)
            for where in file.source_code_info.location
        }
        for kind, name, path in _file_names(file):
            if at.get(path):
                comments[name] = at[path]
            if kind == "oneof":
                oneofs.add(name)
    return _Source(comments, frozenset(oneofs))


def _ref(full_name: str) -> dict[str, Any]:
    return {"$ref": _SCHEMAS + full_name}


def _join(*parts: str) -> str:
    """The non-empty parts as paragraphs."""
    return "\n\n".join(part for part in parts if part)


def _summary(text: str) -> str:
    """The first sentence of a comment, on one line."""
    flat = " ".join(text.split())
    found = re.match(r"(.+?(?<!e\.g)(?<!i\.e)\.)(?:\s|$)", flat)
    return found.group(1) if found else flat


class _Schemas:
    """Builds ``components.schemas``: each message and enum reached, by full name."""

    def __init__(
        self,
        source: _Source,
        name: Callable[[FieldDescriptor], str] | None = None,
        *,
        stored_json: bool = False,
    ) -> None:
        """``name``: how a field is named in the JSON (its proto JSON name unless said).
        ``stored_json``: a free JSON value (Struct, Value, ListValue) as the server
        stores it, a schema that refers to itself: no NUL in a name or a string
        (PostgreSQL's jsonb cannot hold one; ``text_rules.json_violations``)."""
        self.source = source
        self.name = name or _json_name
        self.components: dict[str, Any] = {_STATUS: copy.deepcopy(_STATUS_SCHEMA)}
        self.stored_json = stored_json

    def members(self, field: FieldDescriptor) -> list[FieldDescriptor]:
        """The fields of the real oneof ``field`` belongs to; empty when none."""
        oneof = field.containing_oneof
        if oneof is None or oneof.full_name not in self.source.oneofs:
            return []
        return list(oneof.fields)

    def message(self, descriptor: Descriptor) -> dict[str, Any]:
        """A reference to the message's schema, or the well-known type's JSON form."""
        name = descriptor.full_name
        if self.stored_json and name in _STORED_JSON:
            self.components.update(copy.deepcopy(_STORED_JSON_COMPONENTS))
            return copy.deepcopy(_STORED_JSON[name])
        if name in _TEXT_TYPES or name in _JSON_TYPES:
            return copy.deepcopy(_TEXT_TYPES.get(name) or _JSON_TYPES[name])
        if name not in self.components:
            self.components[name] = {}  # reserved first: a message may contain itself
            properties = {self.name(field): self.field(field) for field in descriptor.fields}
            # Closed: the server refuses a field the message does not have.
            schema: dict[str, Any] = {
                "type": "object",
                "properties": properties,
                "additionalProperties": False,
            }
            required = [self.name(f) for f in descriptor.fields if _must_send(f)]
            if required:
                schema["required"] = required
            exclusive = self.exclusive(descriptor)
            if exclusive:
                schema["not"] = exclusive
            comment = self.source.comments.get(name, "")
            self.components[name] = {"description": comment, **schema} if comment else schema
        return _ref(name)

    def exclusive(self, descriptor: Descriptor) -> dict[str, Any] | None:
        """What no message may hold: two members of one of its real oneofs (the
        server refuses them), as a schema to put under ``not``."""
        pairs = [
            {"required": [self.name(first), self.name(second)]}
            for oneof in descriptor.oneofs
            if oneof.full_name in self.source.oneofs
            for i, first in enumerate(oneof.fields)
            for second in list(oneof.fields)[i + 1 :]
        ]
        if not pairs:
            return None
        return pairs[0] if len(pairs) == 1 else {"anyOf": pairs}

    def enum(self, descriptor: EnumDescriptor) -> dict[str, Any]:
        """A reference to the enum's schema: its value names, each explained."""
        name = descriptor.full_name
        if name == "google.protobuf.NullValue":
            return {"type": "null"}
        if name not in self.components:
            comments = self.source.comments
            lines = [
                f"- `{value.name}`: {' '.join(comments.get(f'{name}.{value.name}', '').split())}"
                for value in descriptor.values
            ]
            self.components[name] = {
                "type": "string",
                "enum": [value.name for value in descriptor.values],
                "description": _join(comments.get(name, ""), "\n".join(lines)),
            }
        return _ref(name)

    def value(self, field: FieldDescriptor) -> dict[str, Any]:
        """The schema of one value of the field, ignoring ``repeated``: a required
        enum without its zero value (the server refuses it as unset), a UUID field's
        format, a non-negative count, and the limits of its rule (``field_rules``)."""
        required = _must_send(field)
        if field.type == _T.TYPE_ENUM:
            schema = self.enum(field.enum_type)
            chosen = rule_of(field)
            if isinstance(chosen, Choice) and "$ref" in schema:
                values: dict[str, Any] = copy.deepcopy(self.components[field.enum_type.full_name])
                return {**values, **chosen.schema(given=required)}
            if required and "$ref" in schema:
                named: dict[str, Any] = copy.deepcopy(self.components[field.enum_type.full_name])
                unset = {value.name for value in field.enum_type.values if value.number == 0}
                named["enum"] = [name for name in named["enum"] if name not in unset]
                return named
            return schema
        if field.type == _T.TYPE_MESSAGE:
            schema = self.message(field.message_type)
            if required and schema.get("type") == "string":  # a field mask, a time
                schema["minLength"] = 1
            mask = rule_of(field)
            if isinstance(mask, Mask | Span):
                schema.update(mask.schema(given=required))
            return schema
        schema = copy.deepcopy(_SCALARS[field.type])
        if field.type == _T.TYPE_STRING and is_uuid_field(field):
            schema["format"] = "uuid"
        elif field.type == _T.TYPE_STRING and required:
            schema["minLength"] = 1
        if field.name in _COUNTS:
            schema["minimum"] = 0
        # A write's text is one line unless the contract says why not (stored_text).
        text = field.type == _T.TYPE_STRING and field.containing_type.full_name in _written()
        also = LINE_BREAK_CHARACTERS if text and one_line(field) else ""
        rule = rule_of(field)
        if isinstance(rule, Items):
            rule = rule.each if field.is_repeated else None
        if rule is not None:
            # An empty text is one given when it cannot mean unset: an item of a list,
            # a field with presence (proto3 optional, a oneof member).
            given = field.is_repeated or field.has_presence or required
            schema.update(rule.schema(given=given, also=also))
        elif also and "format" not in schema:
            schema["pattern"] = without(also)
        return schema

    def field(self, field: FieldDescriptor) -> dict[str, Any]:
        """The schema of a field as a property, with its comment and oneof."""
        if is_map(field):
            value_field = field.message_type.fields_by_name["value"]
            schema: dict[str, Any] = {
                "type": "object",
                "additionalProperties": self.value(value_field),
            }
        elif field.is_repeated:
            schema = {"type": "array", "items": self.value(field)}
            if REQUIRED in field_behaviors(field):
                schema["minItems"] = 1
            listed = rule_of(field)
            if isinstance(listed, Items):
                schema.update(listed.schema(given=True))
        else:
            schema = self.value(field)
        comment = self.source.comments.get(field.full_name, "")
        oneof = field.containing_oneof
        members = self.members(field)
        if oneof is not None and members:
            names = ", ".join(self.name(member) for member in members)
            said = self.source.comments.get(oneof.full_name, "")
            comment = _join(comment, f"One of {oneof.name}: {names}. {said}".strip())
        if comment:
            schema["description"] = _join(comment, schema.get("description", ""))
        if OUTPUT_ONLY in field_behaviors(field):
            schema["readOnly"] = True
        return schema


def input_schema(message: type[Message], *, proto_names: bool = False) -> dict[str, Any]:
    """The JSON form of a message a caller writes, self-contained for a tool's input
    schema: every reference inlined, output-only fields left out, each field with its
    comment from the contract. ``proto_names``: fields by their names in the contract
    (``message_position``) rather than their JSON names (``messagePosition``); the
    protobuf JSON parser takes either."""
    schemas = _Schemas(_source(), (lambda field: field.name) if proto_names else None)
    root = schemas.message(cast(Descriptor, message.DESCRIPTOR))

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return inline(schemas.components[node["$ref"].rsplit("/", 1)[-1]])
        out = {key: inline(value) for key, value in node.items()}
        if out.get("type") == "object" and isinstance(out.get("properties"), dict):
            out["properties"] = {
                name: schema
                for name, schema in out["properties"].items()
                if not (isinstance(schema, dict) and schema.get("readOnly"))
            }
        return out

    found: dict[str, Any] = inline(root)
    return found


@cache
def _written() -> frozenset[str]:
    """The messages a write's request holds, its own included: their texts are
    checked as stored (``api/stored_text.py``); a read's are not."""
    found: set[str] = set()

    def reach(message: Descriptor) -> None:
        if message.full_name in found or message.full_name.startswith("google."):
            return
        found.add(message.full_name)
        for field in message.fields:
            if field.message_type is not None:
                reach(field.message_type)

    for route in routes():
        if stores_request(route.grpc_path):
            reach(route.request)
    return frozenset(found)


def _must_send(field: FieldDescriptor) -> bool:
    """Whether a request without the field is refused: a required field whose absence
    the server can tell (a zero number or false reads as unset, so those are not)."""
    if REQUIRED not in field_behaviors(field):
        return False
    rule = rule_of(field)
    if isinstance(rule, Text) and not rule.min_chars:
        return False  # required, yet an empty text is taken: no absence to tell
    plain = field.type not in (_T.TYPE_STRING, _T.TYPE_BYTES, _T.TYPE_ENUM, _T.TYPE_MESSAGE)
    return not (plain and not field.is_repeated and field.containing_oneof is None)


def _json_name(field: FieldDescriptor) -> str:
    """The field's proto JSON name; the protobuf stubs do not declare the attribute."""
    name: str = field.json_name  # type: ignore[attr-defined]
    return name


def _query(
    schemas: _Schemas,
    message: Descriptor,
    skip: set[str],
    prefix: tuple[str, str] = ("", ""),
    within: tuple[str, ...] = (),
) -> Iterator[dict[str, Any]]:
    """Query parameters for the fields of ``message`` not in ``skip`` (proto paths),
    named by dotted JSON names, through singular message fields."""
    for field in message.fields:
        path, name = prefix[0] + field.name, prefix[1] + _json_name(field)
        kind = field.message_type.full_name if field.message_type else ""
        if path in skip or is_map(field) or kind in _JSON_TYPES:
            continue
        if kind and kind not in _TEXT_TYPES:
            if not field.is_repeated and kind not in within:
                yield from _query(
                    schemas, field.message_type, skip, (path + ".", name + "."), (*within, kind)
                )
            continue
        schema = schemas.field(field)
        parameter: dict[str, Any] = {"name": name, "in": "query", "schema": schema}
        if _must_send(field) and not within:
            parameter["required"] = True
        if "description" in schema:
            parameter["description"] = schema.pop("description")
        if field.is_repeated:
            parameter.update(style="form", explode=True)
        yield parameter


class PathNameError(ValueError):
    """Routes whose paths the document cannot name as OpenAPI requires."""


@dataclass(frozen=True)
class _DocPath:
    """A route's path in the document, and the parameter name of each variable."""

    path: str
    names: dict[str, str]  # by field path, in path order

    @property
    def shape(self) -> str:
        """The path with every parameter unnamed: equal shapes are the same path to OpenAPI."""
        return re.sub(r"\{[^}]*\}", "{}", self.path)


def _path(route: Route) -> _DocPath:
    """The route's template with each variable named by the last segment of its field
    path (``{owner.agent_id}`` is ``{agent_id}``), as a reader of the API knows it.

    Raises:
        PathNameError: two variables of the template end in the same name.
    """
    names: dict[str, str] = {}

    def name(match: re.Match[str]) -> str:
        variable = match.group(1)
        last = variable.rpartition(".")[2]
        if last in names.values():
            raise PathNameError(
                f"{route.method.full_name}: {route.template} would name two parameters"
                f" {{{last}}}, and a path cannot hold two of one name"
            )
        names[variable] = last
        return "{" + last + "}"

    return _DocPath(_VARIABLE.sub(name, route.template), names)


def _paths(bound: list[Route]) -> list[_DocPath]:
    """The document's path of each route.

    Raises:
        PathNameError: a template names two parameters alike, two routes of one verb
            end on one path, or two paths differ only in their parameter names (OpenAPI
            holds such paths for one and forbids both).
    """
    found = [_path(route) for route in bound]
    seen: dict[tuple[str, str], Route] = {}
    shapes: dict[str, str] = {}
    for route, where in zip(bound, found, strict=True):
        other = seen.setdefault((where.path, route.verb), route)
        if other is not route:
            raise PathNameError(
                f"{other.method.full_name} ({other.template}) and {route.method.full_name}"
                f" ({route.template}) are both {route.verb.upper()} {where.path}"
            )
        first = shapes.setdefault(where.shape, where.path)
        if first != where.path:
            raise PathNameError(
                f"{first} and {where.path} differ only in parameter names"
                f" ({route.method.full_name}: {route.template})"
            )
    return found


def _parameters(schemas: _Schemas, route: Route, where: _DocPath) -> list[dict[str, Any]]:
    """The path parameters of the route, then its query parameters."""
    parameters: list[dict[str, Any]] = []
    skip = {route.body} if route.body else set()
    for variable in route.variables:
        field = field_at(route.request, variable)
        schema = schemas.value(field)
        parameters.append(
            {
                "name": where.names[variable],
                "in": "path",
                "required": True,
                "description": _join(
                    f"Sets `{variable}`.", schemas.source.comments.get(field.full_name, "")
                ),
                "schema": schema,
            }
        )
        # The path settles a oneof: its other members cannot be sent.
        parent, dot, _ = variable.rpartition(".")
        skip.update(parent + dot + member.name for member in schemas.members(field))
        skip.add(variable)
    if route.body != "*":
        parameters.extend(_query(schemas, route.request, skip))
    names = {_json_name(field): field.name for field in route.request.fields}
    for parameter in parameters:
        field_name = names.get(parameter["name"]) if parameter["in"] == "query" else None
        if field_name == "update_mask" and infers_mask(route):
            parameter.pop("required", None)
            said = re.sub(r"^(?:Required|Optional)\.\s*", "", parameter.get("description", ""))
            rule = rule_of(route.request.fields_by_name["update_mask"])
            some = _BODY_MASK_NAMES_ONE if isinstance(rule, Mask) and rule.min_paths else ""
            parameter["description"] = _join(f"{_BODY_MASK} {some}".strip(), said)
        elif field_name == "etag":
            parameter["description"] = _join(parameter.get("description", ""), _STALE_ETAG)
    return parameters


# How the HTTP side reads a partial update without a mask (the transcoder's body_mask).
_BODY_MASK: Final = (
    "Optional. Without it, the mask is the fields the body holds, each by its proto path "
    "and whatever its value: a field sent as `false`, `0` or empty is changed too. Fields "
    "of the body this mask cannot name are left as they are. (Over gRPC, where a field at "
    "its default is not told from one left out, an unset mask names only the fields set "
    "to other values.)"
)
_BODY_MASK_NAMES_ONE: Final = (
    "A request without it whose body holds none of the fields it may name is 400 (reason "
    "EMPTY_FIELD_MASK): it names nothing to change."
)
_STALE_ETAG: Final = (
    "Over HTTP, as with If-Match: when it is stale, the answer is 412 Precondition Failed "
    "(not the 409 of ABORTED) and nothing changes."
)


def _without(schema: dict[str, Any], names: set[str]) -> dict[str, Any]:
    """A copy of an object schema without the properties ``names``."""
    schema = copy.deepcopy(schema)
    schema["properties"] = {k: v for k, v in schema["properties"].items() if k not in names}
    required = [name for name in schema.pop("required", []) if name not in names]
    if required:
        schema["required"] = required
    exclusive = schema.pop("not", None)
    if exclusive is not None:
        pairs = [
            pair
            for pair in exclusive.get("anyOf", [exclusive])
            if not names & set(pair["required"])
        ]
        if pairs:
            schema["not"] = pairs[0] if len(pairs) == 1 else {"anyOf": pairs}
    return schema


def _body(schemas: _Schemas, route: Route) -> dict[str, Any]:
    """The schema of the route's body: the request (``*``) or its body field, without
    what the path sets (a field the path settles, with the rest of its oneof, is not
    the body's to send). A partial update's resource requires nothing: the body holds
    the fields its mask names."""
    whole = route.body == "*"
    message = route.request if whole else route.request.fields_by_name[route.body].message_type
    if message is None or message.full_name in _TEXT_TYPES or message.full_name in _JSON_TYPES:
        return schemas.field(route.request.fields_by_name[route.body])
    reference = schemas.message(message)
    bound: set[str] = set()
    for variable in route.variables:
        parts = variable.split(".")
        if not whole:
            if parts[0] != route.body:
                continue
            parts = parts[1:]
        field = message.fields_by_name[parts[0]]
        bound.add(schemas.name(field))
        if len(parts) == 1:
            bound.update(schemas.name(member) for member in schemas.members(field))
    partial = not whole and "update_mask" in route.request.fields_by_name
    if not bound and not partial:
        return reference
    schema = _without(schemas.components[message.full_name], bound)
    if partial:
        schema.pop("required", None)
    return schema


def _operation(
    schemas: _Schemas, route: Route, where: _DocPath, operation_id: str
) -> dict[str, Any]:
    """The OpenAPI operation of one route."""
    method = route.method
    comment = schemas.source.comments.get(method.full_name, "")
    operation: dict[str, Any] = {
        "operationId": operation_id,
        "tags": [method.containing_service.name],
        "summary": _summary(comment) or method.name,
        "description": comment or method.name,
    }
    parameters = _parameters(schemas, route, where)
    if parameters:
        operation["parameters"] = parameters
    if route.body:
        schema = _body(schemas, route)
        body = schemas.components.get(schema.get("$ref", "").rsplit("/", 1)[-1], schema)
        operation["requestBody"] = {
            # A body with no required field may be left out: it is then empty.
            "required": bool(body.get("required")),
            "content": {"application/json": {"schema": schema}},
        }
        if route.variables:
            bound = ", ".join(
                f"`{variable}` from `{{{where.names[variable]}}}`" for variable in route.variables
            )
            operation["requestBody"]["description"] = f"The path sets {bound}."
    answer = schemas.message(route.response)
    described = schemas.source.comments.get(route.response.full_name, route.response.name)
    if route.streaming:
        ok = {
            "description": f"{described} A stream as newline-delimited JSON: one"
            f" {route.response.name} per line, each sent as it is found. A failure after"
            ' the first line ends the stream with a last line `{"error":'
            " <google.rpc.Status>}`. A request whose Accept header names"
            " `application/json` and not `application/x-ndjson` gets the whole stream"
            " as one JSON array instead, or the error's status.",
            "content": {
                # Each line's schema: OpenAPI 3.1 has no keyword for a sequence's items.
                "application/x-ndjson": {"schema": answer},
                "application/json": {"schema": {"type": "array", "items": answer}},
            },
        }
    else:
        ok = {"description": described, "content": {"application/json": {"schema": answer}}}
    responses: dict[str, Any] = {"200": ok}
    if etag_resource(route.response) is not None:
        ok["headers"] = {"ETag": _ETAG_HEADER}
        if route.verb == "get":
            operation.setdefault("parameters", []).append(_IF_NONE_MATCH)
            responses["304"] = {
                "description": "The resource is as the If-None-Match etag says: no body.",
                "headers": {"ETag": _ETAG_HEADER},
            }
    if "etag" in route.request.fields_by_name:
        # The header is the request's etag: the same etags are taken.
        etag = schemas.field(route.request.fields_by_name["etag"])
        etag.pop("description", None)
        operation.setdefault("parameters", []).append({**_IF_MATCH, "schema": etag})
        responses["412"] = {
            "description": "The resource changed since the etag the request states (If-Match, "
            "or its etag) was read: nothing changed (reason ETAG_MISMATCH or BLOCK_CONFLICT; "
            "the details carry the current etag).",
            "content": {"application/json": {"schema": _ref(_STATUS)}},
        }
    if route.body:
        responses["415"] = {
            "description": "The body was sent with a Content-Type that is not JSON (reason "
            "UNSUPPORTED_MEDIA_TYPE): send it with Content-Type: application/json, or any "
            "application/*+json. A body without a Content-Type is read as JSON.",
            "content": {"application/json": {"schema": _ref(_STATUS)}},
        }
    responses["default"] = {"$ref": "#/components/responses/Error"}
    operation["responses"] = responses
    return operation


_ETAG_HEADER: Final = {
    "description": "The resource's concurrency token: send it back in If-Match (to change "
    "it only as read) or If-None-Match (to read it only if it changed).",
    "schema": {"type": "string"},
}
_IF_NONE_MATCH: Final = {
    "name": "If-None-Match",
    "in": "header",
    "required": False,
    "description": "Etags (comma-separated): when one is the resource's, the answer is 304 "
    "with no body.",
    "schema": {"type": "string"},
}
_IF_MATCH: Final = {
    "name": "If-Match",
    "in": "header",
    "required": False,
    "description": "The etag the change expects (the request's etag; `*`: the resource as "
    "it is now). When the resource's differs, the answer is 412 and nothing changes.",
    "schema": {"type": "string"},
}


def _fixed_paths() -> dict[str, Any]:
    """The routes that are no RPC, served without a key: the health check and this document."""
    health = {
        "type": "object",
        "properties": {"status": {"type": "string", "enum": ["SERVING", "NOT_SERVING"]}},
    }

    def answer(description: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {"description": description, "content": {"application/json": {"schema": schema}}}

    return {
        "/healthz": {
            "get": {
                "operationId": "healthz",
                "summary": "Whether the server can serve: its database answers.",
                "security": [],
                "responses": {
                    "200": answer("The database answers: SERVING.", health),
                    "503": answer("The database does not answer: NOT_SERVING.", health),
                },
            }
        },
        "/v1/openapi.json": {
            "get": {
                "operationId": "openapi",
                "summary": "This OpenAPI document.",
                "security": [],
                "responses": {"200": answer("The OpenAPI 3.1 document.", {"type": "object"})},
            }
        },
    }


def _binding_name(route: Route) -> str:
    """What tells one of a method's routes from the others, for its operation id: the
    owner its path names (``_ForAgent``, ``_ForWorkspace``). A route that names no owner
    (a resource by its own id) keeps the method's plain name, which it had before the
    method had routes by owner too: a generated client's names stay as they were."""
    owners = [v.split(".")[-1] for v in route.variables]
    owners = [o.removesuffix("_id") for o in owners if o.endswith("_id")]
    return "_For" + "".join(o.title().replace("_", "") for o in owners) if owners else ""


@cache
def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1.0 document of every HTTP route of the contract.

    Built once and cached: callers must not change the returned dictionary. Each path
    parameter is named by the last segment of the field path it binds, and says the
    field in its description.

    Returns:
        The document as JSON-ready dictionaries and lists.

    Raises:
        PathNameError: the routes cannot be named as OpenAPI requires (see ``_paths``).
    """
    schemas = _Schemas(_source(), stored_json=True)
    paths: dict[str, Any] = {}
    tags: dict[str, str] = {}
    bound = list(routes())
    bindings = Counter(route.method.full_name for route in bound)
    for route, where in zip(bound, _paths(bound), strict=True):
        service = route.method.containing_service
        tags.setdefault(service.name, schemas.source.comments.get(service.full_name, ""))
        operation_id = f"{service.name}_{route.method.name}"
        if bindings[route.method.full_name] > 1:
            operation_id += _binding_name(route)
        operation = _operation(schemas, route, where, operation_id)
        paths.setdefault(where.path, {})[route.verb] = operation
    paths.update(_fixed_paths())
    error = {"$ref": _SCHEMAS + _STATUS}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "agent-memory",
            "version": importlib.metadata.version("agent-memory"),
            "description": _DESCRIPTION,
        },
        # Relative: the server that serves this document serves the API.
        "servers": [{"url": "/", "description": "this agent-memory server"}],
        "tags": [{"name": name, "description": text} for name, text in tags.items()],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "schemas": dict(sorted(schemas.components.items())),
            "responses": {
                "Error": {
                    "description": "The error: google.rpc.Status as JSON, with the standard"
                    " HTTP status of its code.",
                    "content": {"application/json": {"schema": error}},
                }
            },
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An API key. In the server's unauthenticated local mode no"
                    " key is needed and the `x-tenant-id` / `x-user-id` headers name the caller.",
                }
            },
        },
    }
