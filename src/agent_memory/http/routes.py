"""The HTTP routes of the contract, read from each RPC's ``google.api.http`` rule.

Nothing here names an RPC: an RPC added to the protos with its annotation gets a
route, and one without an annotation is an error at import time of the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from google.api import annotations_pb2, http_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor

from agentmemory.v1 import (
    block_service_pb2,
    decision_service_pb2,
    memory_service_pb2,
    recall_service_pb2,
)

_FILES = (memory_service_pb2, block_service_pb2, recall_service_pb2, decision_service_pb2)
# The HTTP methods a rule may name, as google.api.HttpRule names its fields.
VERBS = ("get", "put", "post", "delete", "patch")
# A path variable: {field.path} or {field.path=pattern}; this contract uses only
# single-segment variables, so a pattern other than "*" is refused.
_VARIABLE = re.compile(r"\{([a-z_][a-z0-9_.]*)(?:=([^}]*))?\}")


class RouteError(Exception):
    """An RPC's HTTP rule that this transcoder cannot serve."""


@dataclass(frozen=True)
class Route:
    """One HTTP binding of one RPC."""

    method: MethodDescriptor
    verb: str  # lower case: get, post, patch, delete, put
    template: str  # as annotated: /v1/memories/{id}:pin
    body: str  # "" (no body), "*" (the whole request) or a top-level field name
    variables: tuple[str, ...]  # field paths bound by the path, in order
    pattern: re.Pattern[str]  # matches a raw (percent-encoded) path; groups: the variables

    @property
    def literal_chars(self) -> int:
        """How much of the template is literal text: the more, the more specific."""
        return len(_VARIABLE.sub("", self.template))

    @property
    def grpc_path(self) -> str:
        """``/package.Service/Method``, as gRPC names the method."""
        return f"/{self.method.containing_service.full_name}/{self.method.name}"

    @property
    def streaming(self) -> bool:
        """Whether the RPC streams its responses (NDJSON over HTTP)."""
        return bool(self.method.server_streaming)

    @property
    def request(self) -> Descriptor:
        """The RPC's request message."""
        descriptor: Descriptor = self.method.input_type
        return descriptor

    @property
    def response(self) -> Descriptor:
        """The RPC's response message (one stream item, when streaming)."""
        descriptor: Descriptor = self.method.output_type
        return descriptor


def field_at(message: Descriptor, path: str) -> FieldDescriptor:
    """The field a dotted path names, through singular message fields (the last may be
    repeated).

    Raises:
        RouteError: no such field, or the path crosses a repeated or scalar field.
    """
    descriptor: Descriptor | None = message
    field: FieldDescriptor | None = None
    for name in path.split("."):
        if descriptor is None:
            raise RouteError(f"{message.full_name}: {path!r} crosses a non-message field")
        if field is not None and field.is_repeated:
            raise RouteError(f"{message.full_name}: {path!r} crosses a repeated field")
        field = descriptor.fields_by_name.get(name)
        if field is None:
            raise RouteError(f"{message.full_name} has no field {path!r}")
        descriptor = field.message_type
    assert field is not None
    return field


def _route(method: MethodDescriptor, rule: http_pb2.HttpRule) -> Route:
    kind = rule.WhichOneof("pattern")
    if kind not in VERBS:
        raise RouteError(f"{method.full_name}: unsupported HTTP rule {kind!r}")
    template: str = getattr(rule, kind)
    variables: list[str] = []
    parts: list[str] = []
    position = 0
    for match in _VARIABLE.finditer(template):
        name, segment = match.group(1), match.group(2)
        if segment not in (None, "*"):
            raise RouteError(f"{method.full_name}: multi-segment variable {match.group(0)}")
        field_at(method.input_type, name)
        parts.append(re.escape(template[position : match.start()]))
        # Percent-encoded, a value holds no "/"; a ":" may belong to it, the
        # shortest match leaves a custom verb (":pin") to the template.
        parts.append("([^/]+?)")
        variables.append(name)
        position = match.end()
    parts.append(re.escape(template[position:]))
    if rule.body not in ("", "*"):
        field_at(method.input_type, rule.body)
    return Route(
        method=method,
        verb=kind,
        template=template,
        body=rule.body,
        variables=tuple(variables),
        pattern=re.compile("".join(parts) + r"\Z"),
    )


def method_routes(method: MethodDescriptor) -> list[Route]:
    """Every binding of one RPC: its rule, then its additional bindings.

    Raises:
        RouteError: the RPC has no ``google.api.http`` rule, or one we cannot serve.
    """
    options = method.GetOptions()
    if not options.HasExtension(annotations_pb2.http):
        raise RouteError(f"{method.full_name} has no google.api.http annotation")
    rule: http_pb2.HttpRule = options.Extensions[annotations_pb2.http]
    return [_route(method, rule), *(_route(method, extra) for extra in rule.additional_bindings)]


@cache
def routes() -> tuple[Route, ...]:
    """Every route of every agentmemory service, in contract order."""
    found: list[Route] = []
    for module in _FILES:
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                found.extend(method_routes(method))
    return tuple(found)
