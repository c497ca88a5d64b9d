"""HTTP/JSON to the gRPC service code, driven by the ``google.api.http`` routes.

A request is matched to a route (:mod:`agent_memory.http.routes`), its path
variables, query parameters and body become the RPC's request message through the
proto JSON mapping, and the message goes to the very handler gRPC calls: the one
the service interceptor wrapped, so authentication, roles, request checks, the
secret scan and error mapping are the same code on both sides. Answers go back as
proto JSON; a server stream as newline-delimited JSON, one message a line, each
line sent as it is produced. Errors are the ``google.rpc.Status`` JSON with the
HTTP status of the standard mapping.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import grpc
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status
from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import TracerProvider
from starlette.background import BackgroundTask
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse

from agent_memory.api.field_rules import Mask, rule_of
from agent_memory.config import is_loopback
from agent_memory.domain.errors import FieldViolation, InvalidArgument, ServiceError
from agent_memory.domain.identity import Principal
from agent_memory.domain.text_rules import DuplicateKey, parse_json
from agent_memory.http.routes import VERBS, Route, RouteError, field_at, routes
from agent_memory.proto_json import (
    OUTPUT_ONLY,
    SCALAR_MESSAGES,
    as_proto_json,
    field_behaviors,
    field_named,
    lone_surrogates,
    loose_values,
    may_hold_lone_surrogate,
    parse_problem,
)
from agent_memory.status import Unreadable, plain_status_message, status_message
from agent_memory.telemetry.metrics import Metrics
from agent_memory.telemetry.tracing import set_cancelled

JSON = "application/json"
NDJSON = "application/x-ndjson"

# google.rpc.Code to HTTP, as the code's own documentation maps it, except that
# FAILED_PRECONDITION answers 412 Precondition Failed: here it always means a
# state the request relied on (a row's source, an etag) does not hold.
HTTP_STATUS: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.OK: 200,
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNKNOWN: 500,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.FAILED_PRECONDITION: 412,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.INTERNAL: 500,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DATA_LOSS: 500,
}
_CODES = {code.value[0]: code for code in grpc.StatusCode}
# Answers of the API are the caller's data: never cached, never sniffed as another type.
API_HEADERS = {"cache-control": "no-store", "x-content-type-options": "nosniff"}
# Bodies up to this size parse on the event loop; larger ones in a thread.
_PARSE_INLINE_BYTES = 64 * 1024
# The methods the routes serve, by their names in a request, which are case-sensitive
# (RFC 9110): ``get`` is no GET. HEAD is a GET answered without its body.
_ROUTE_VERBS = {verb.upper(): verb for verb in VERBS} | {"HEAD": "get"}
# Request headers that describe the HTTP exchange, not the caller: not metadata.
_NOT_METADATA = frozenset(
    {"host", "content-length", "content-type", "connection", "accept", "accept-encoding"}
)


class Aborted(grpc.aio.AbortError):  # type: ignore[misc]
    """An RPC ended with a status: what ``context.abort`` raises for an HTTP call."""

    def __init__(self, status: status_pb2.Status) -> None:
        super().__init__(status.message)
        self.status = status


class HttpCallContext:
    """The part of ``grpc.aio.ServicerContext`` the service interceptor uses, for a
    call that arrived over HTTP: the caller's metadata, ``abort``, and the caller
    already admitted from the headers (so the handler does not identify it again)."""

    def __init__(self, metadata: Sequence[tuple[str, str]], admitted: Principal) -> None:
        self._metadata = tuple(metadata)
        self.admitted = admitted

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    async def abort(
        self,
        code: grpc.StatusCode,
        details: str = "",
        trailing_metadata: Sequence[tuple[str, str | bytes]] = (),
    ) -> None:
        """Raise :class:`Aborted` with the rich status the trailers carry, or a
        plain one built from ``code`` and ``details``."""
        for key, value in trailing_metadata:
            if key == rpc_status.GRPC_DETAILS_METADATA_KEY and isinstance(value, bytes):
                raise Aborted(status_pb2.Status.FromString(value))
        raise Aborted(status_pb2.Status(code=code.value[0], message=details))


@dataclass(frozen=True)
class _HandlerCallDetails:
    method: str
    invocation_metadata: tuple[tuple[str, str], ...]


class HandlerTable:
    """Stands in for a ``grpc.aio.Server`` when servicers register, and keeps each
    method's handler, so HTTP calls reach the same handlers gRPC does."""

    def __init__(self) -> None:
        self.handlers: dict[str, grpc.RpcMethodHandler] = {}

    def add_generic_rpc_handlers(self, handlers: Iterable[grpc.GenericRpcHandler]) -> None:
        """Generated registration calls this too; the registered handlers suffice."""

    def add_registered_method_handlers(
        self, service: str, handlers: Mapping[str, grpc.RpcMethodHandler]
    ) -> None:
        for name, handler in handlers.items():
            self.handlers[f"/{service}/{name}"] = handler

    async def intercepted(
        self, interceptor: grpc.aio.ServerInterceptor
    ) -> dict[str, grpc.RpcMethodHandler]:
        """Every handler as ``interceptor`` wraps it for gRPC."""

        async def continuation(details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
            return self.handlers[details.method]

        wrapped = {}
        for method in self.handlers:
            wrapped[method] = await interceptor.intercept_service(
                continuation, _HandlerCallDetails(method, ())
            )
        return wrapped


class StatusResponse(Response):
    """An answer that is a ``google.rpc.Status``, and its code: an answer of the API,
    wherever it is made, with the API's headers."""

    def __init__(self, status: status_pb2.Status, http_status: int | None = None) -> None:
        self.code = _CODES.get(status.code, grpc.StatusCode.UNKNOWN)
        super().__init__(
            _json_line(status),
            status_code=http_status or HTTP_STATUS.get(self.code, 500),
            media_type=JSON,
            headers=API_HEADERS,
        )


def status_response(status: status_pb2.Status, http_status: int | None = None) -> Response:
    """The ``google.rpc.Status`` JSON, with the HTTP status of its code."""
    response = StatusResponse(status, http_status)
    if response.code is grpc.StatusCode.UNAUTHENTICATED:
        response.headers["www-authenticate"] = 'Bearer realm="agent-memory"'
    return response


def plain_response(code: grpc.StatusCode, message: str, reason: str, http_status: int) -> Response:
    """A transport-level refusal (no route, wrong method, body too large) as a Status."""
    return status_response(plain_status_message(code, message, reason), http_status)


def _json_line(message: Message) -> bytes:
    return (
        json.dumps(json_format.MessageToDict(message), separators=(",", ":"), ensure_ascii=False)
        + "\n"
    ).encode()


def _bool(text: str) -> bool:
    if text.lower() in ("true", "1"):
        return True
    if text.lower() in ("false", "0"):
        return False
    raise json_format.ParseError(f"expected true or false, got {text!r}")


Admit = Callable[[str, Sequence[tuple[str, str]]], Awaitable[Principal]]


class Transcoder:
    """Serves every route of the contract over the wrapped gRPC handlers.

    Args:
        handlers: each method's handler as the service interceptor wrapped it,
            keyed by ``/package.Service/Method``.
        admit: identifies the caller from its metadata and checks its role for a
            method, raising the service's error otherwise; run before the body is
            read, so an unknown caller costs no parsing.
        max_message_bytes: the largest request message, as gRPC's receive limit.
        loopback_hosts_only: answer only requests addressed to a loopback name (the
            unauthenticated local mode: a page on another site that resolves its
            own name to 127.0.0.1 must not reach it).
    """

    def __init__(
        self,
        handlers: Mapping[str, grpc.RpcMethodHandler],
        *,
        admit: Admit,
        max_message_bytes: int,
        loopback_hosts_only: bool = False,
        tracer_provider: TracerProvider | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self._handlers = dict(handlers)
        self._metrics = metrics or Metrics()
        self._admit = admit
        self._tracer = tracer_provider.get_tracer(__name__) if tracer_provider is not None else None
        self._max_message_bytes = max_message_bytes
        self._loopback_hosts_only = loopback_hosts_only
        # JSON spends more bytes than protobuf on the same message (names, quotes,
        # escapes, base64): the body may be this much larger before it is refused
        # unread; the parsed message then meets gRPC's own limit.
        self._max_body_bytes = 2 * max_message_bytes
        self._routes = routes()
        self._classes = {
            route.grpc_path: message_factory.GetMessageClass(route.request)
            for route in self._routes
        }
        missing = sorted({r.grpc_path for r in self._routes} - set(self._handlers))
        if missing:
            raise RouteError(f"routes without a served method: {', '.join(missing)}")

    def match(self, verb: str | None, raw_path: str) -> tuple[Route | None, list[str], list[str]]:
        """The route for ``verb`` (lower case; None for a method no route serves) and the
        raw path, its variables' encoded values, and otherwise the verbs the path's
        routes take (for 405; none when no route has the path).

        Where several templates match, the one with the most literal text wins, so
        ``/v1/memories/x:pin`` is the pin route's path (405 for a GET) rather than a
        memory id that ends in ``:pin``.
        """
        found = [(r, m) for r in self._routes if (m := r.pattern.match(raw_path)) is not None]
        if not found:
            return None, [], []
        best = max(route.literal_chars for route, _ in found)
        found = [(route, m) for route, m in found if route.literal_chars == best]
        for route, matched in found:
            if route.verb == verb:
                return route, list(matched.groups()), []
        return None, [], [route.verb.upper() for route, _ in found]

    async def __call__(self, request: Request) -> Response:
        """The answer to one request of the API, whatever it is (a refusal too), with
        the headers every answer of the API carries."""
        response = await self._answer(request)
        response.headers.update(API_HEADERS)
        return response

    async def _answer(self, request: Request) -> Response:
        refused = self.refused_origin(request)
        if refused is not None:
            return refused
        verb = _ROUTE_VERBS.get(request.method)
        route, values, allowed = self.match(verb, raw_path(request))
        if route is None:
            return self._no_route(request, allowed)
        metadata = caller_metadata(request)
        # Every call of a route ends here, or (a stream) where its stream ends: measured
        # by construction, as the gRPC side's interceptor measures its calls.
        ending = _Ending(route.grpc_path, self._span(route, request), self._metrics)
        try:
            with trace.use_span(ending.span, end_on_exit=False):
                response = await self._serve(route, request, values, metadata, ending)
        except BaseException as exc:
            ending.span.set_status(trace.StatusCode.ERROR)
            ending.ended(_escaped_code(exc))
            raise
        ending.span.set_attribute("http.response.status_code", response.status_code)
        if response.status_code >= 500:
            ending.span.set_status(trace.StatusCode.ERROR)
        if response.background is None:  # a stream ends its span when it ends
            code = response.code if isinstance(response, StatusResponse) else None
            ending.ended(code or _code_of_http(response.status_code))
        return response

    def refused_origin(self, request: Request) -> Response | None:
        """Browsers may send a request from another site's page (a form, a fetch
        with a body type that needs no preflight): refused, as is a request for
        a name that is not loopback in the local mode (DNS rebinding)."""
        host = request.headers.get("host", "")
        origin = request.headers.get("origin")
        site = request.headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            problem = f"a {site} request from a browser"
        elif origin is not None and _site(origin) != (request.url.scheme, host.lower()):
            problem = f"a request from the page of origin {origin!r}"
        elif self._loopback_hosts_only and not is_loopback(_host_name(host)):
            problem = f"a request for host {host!r} in the local mode, which answers loopback only"
        else:
            return None
        return plain_response(
            grpc.StatusCode.PERMISSION_DENIED,
            f"refused {problem}: call the API from the panel of this server or from a client",
            "CROSS_ORIGIN",
            403,
        )

    def _no_route(self, request: Request, allowed: list[str]) -> Response:
        """405 with the methods the path takes, for a path some route has; else 404,
        whatever the method."""
        if allowed:
            verbs = allow_header(allowed)
            response = plain_response(
                grpc.StatusCode.UNIMPLEMENTED,
                f"{request.method} is not allowed on {raw_path(request)}; allowed: {verbs}",
                "METHOD_NOT_ALLOWED",
                405,
            )
            response.headers["allow"] = verbs
            return response
        return plain_response(
            grpc.StatusCode.NOT_FOUND,
            f"no route for {request.method} {raw_path(request)}",
            "NO_ROUTE",
            404,
        )

    async def _serve(
        self,
        route: Route,
        request: Request,
        values: list[str],
        metadata: list[tuple[str, str]],
        ending: _Ending,
    ) -> Response:
        try:
            # Who calls, and may they, before a byte of the body is read.
            caller = await self._admit(route.grpc_path, metadata)
        except ServiceError as refused:
            return status_response(status_message(refused))
        if route.body:
            not_json = _not_json(request)
            if not_json is not None:
                return not_json
        body = await self._body(request)
        if isinstance(body, Response):
            return body
        message: Message | Unreadable
        try:
            query = _query(request.scope.get("query_string", b""))
            if len(body) > _PARSE_INLINE_BYTES:
                # A large body parses off the event loop, which gRPC calls share.
                message = await asyncio.to_thread(self.request_message, route, values, query, body)
            else:
                message = self.request_message(route, values, query, body)
        except InvalidArgument as exc:
            # Refused by the handler, which answers as gRPC answers bytes that do
            # not decode.
            message = Unreadable(exc)
        if isinstance(message, Message):
            precondition = _apply_if_match(route, request, message)
            if precondition is not None:
                return precondition
        if isinstance(message, Message) and message.ByteSize() > self._max_message_bytes:
            return plain_response(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"request message is {message.ByteSize()} bytes; the limit is "
                f"{self._max_message_bytes}",
                "MESSAGE_TOO_LARGE",
                413,
            )
        context = HttpCallContext(metadata, caller)
        handler = self._handlers[route.grpc_path]
        if route.streaming:
            if _wants_whole(request.headers.get("accept", "")):
                return await self._whole(handler.unary_stream, message, context)
            return await self._stream(handler.unary_stream, message, context, ending)
        try:
            answer = await handler.unary_unary(message, context)
        except Aborted as aborted:
            if _reason(aborted.status) in _STALE and _states_etag(message):
                # A stale etag, sent as If-Match or in the request alike: RFC 9110's
                # failed precondition.
                return status_response(aborted.status, 412)
            return status_response(aborted.status)
        tag = _etag_of(answer)
        if tag and route.verb == "get" and _none_match(request.headers.get("if-none-match"), tag):
            return Response(status_code=304, headers={"etag": tag})
        response = Response(_json_line(answer), media_type=JSON)
        if tag:
            response.headers["etag"] = tag
        return response

    def _span(self, route: Route, request: Request) -> trace.Span:
        """A server span named as the gRPC one, so both transports read alike, in the
        trace the caller's ``traceparent`` names; the database's spans nest in it.
        Non-recording when tracing is off."""
        if self._tracer is None:
            return trace.INVALID_SPAN
        service, method = route.grpc_path.lstrip("/").split("/")
        return self._tracer.start_span(
            route.grpc_path,
            context=propagate.extract(request.headers),
            kind=trace.SpanKind.SERVER,
            attributes={
                "rpc.system": "grpc",
                "rpc.service": service,
                "rpc.method": method,
                "http.request.method": request.method,
                "http.route": route.template,
            },
        )

    async def _body(self, request: Request) -> bytes | Response:
        too_large = plain_response(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"request body is over {self._max_body_bytes} bytes",
            "MESSAGE_TOO_LARGE",
            413,
        )
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._max_body_bytes:
            return too_large
        size = 0
        chunks: list[bytes] = []
        async for chunk in request.stream():
            size += len(chunk)
            if size > self._max_body_bytes:
                return too_large
            chunks.append(chunk)
        return b"".join(chunks)

    def request_message(
        self,
        route: Route,
        values: Sequence[str],
        query: Sequence[tuple[str, str]],
        body: bytes,
    ) -> Message:
        """The RPC's request from the body, then the query, then the path.

        Raises:
            InvalidArgument: a body that is not the message's JSON, an unknown or
                malformed query parameter, a path value of the wrong type, or one
                that contradicts the body or query.
        """
        message: Message = self._classes[route.grpc_path]()
        document: Any = None
        if route.body:
            document = self._parse_body(route, message, body)
        elif body.strip():
            raise InvalidArgument(
                [FieldViolation("body", f"{route.verb.upper()} {route.template} takes no body")]
            )
        if query:
            if route.body == "*":
                names = ", ".join(sorted({name for name, _ in query}))
                raise InvalidArgument(
                    [FieldViolation(names, "this route takes every field in the body")]
                )
            self._merge(message, route, query, bound=set(route.variables), origin="query")
        path: list[tuple[str, str]] = []
        for variable, raw in zip(route.variables, values, strict=True):
            try:
                path.append((variable, unquote(raw, errors="strict")))
            except UnicodeDecodeError as exc:
                raise InvalidArgument([FieldViolation(variable, "is not UTF-8")]) from exc
        self._merge(message, route, path, bound=set(), origin="path")
        if isinstance(document, dict) and infers_mask(route) and not message.HasField(_MASK):
            paths = body_mask(route, document)
            if paths:
                getattr(message, _MASK).paths.extend(paths)
        return message

    def _parse_body(self, route: Route, message: Message, body: bytes) -> Any:
        """Parse the body into ``message``; the body's JSON document.

        Raises:
            InvalidArgument: the body is not the JSON of the message or its body field.
        """
        try:
            document = parse_json(body) if body.strip() else {}
        except DuplicateKey as exc:
            raise InvalidArgument([FieldViolation("body", str(exc), "DUPLICATE_KEY")]) from exc
        except UnicodeDecodeError as exc:
            raise InvalidArgument([FieldViolation("body", "not JSON: not UTF-8")]) from exc
        except RecursionError as exc:
            raise InvalidArgument([FieldViolation("body", "not JSON: nested too deeply")]) from exc
        except ValueError as exc:  # JSONDecodeError: where and what
            raise InvalidArgument([FieldViolation("body", f"not JSON: {exc}")]) from exc
        field = message.DESCRIPTOR.fields_by_name.get(route.body)
        whole = document if route.body == "*" else {field.json_name: document}
        # Text that is no Unicode (a lone surrogate of a \u escape) is refused here,
        # once: nothing after this, and no descriptor lookup, sees one.
        broken = lone_surrogates(whole) if may_hold_lone_surrogate(body) else []
        if broken:
            raise InvalidArgument(
                [
                    FieldViolation("body", f"{at}: {problem}" if at else problem)
                    for at, problem in broken
                ]
            )
        if (route.body == "*" or field.message_type is not None) and not isinstance(document, dict):
            raise InvalidArgument([FieldViolation("body", "must be a JSON object")])
        loose = loose_values(whole, route.request)
        if loose:
            raise InvalidArgument(
                [FieldViolation("body", f"{at}: {problem}") for at, problem in loose]
            )
        try:
            json_format.ParseDict(as_proto_json(whole, route.request), message)
        except json_format.ParseError as exc:
            problem = parse_problem(exc, message)
            raise InvalidArgument([FieldViolation("body", problem)]) from exc
        except (ValueError, RecursionError) as exc:  # digits beyond int(), deep nesting
            raise InvalidArgument([FieldViolation("body", _UNREADABLE)]) from exc
        return document

    def _merge(
        self,
        message: Message,
        route: Route,
        pairs: Sequence[tuple[str, str]],
        *,
        bound: set[str],
        origin: str,
    ) -> None:
        """Set the fields named by dotted paths (proto or JSON names) from text."""
        seen: set[str] = set()
        for name, text in pairs:
            path = _proto_path(route, name)
            if path is None or path in bound or (origin == "query" and _in_body(path, route)):
                raise InvalidArgument(
                    [FieldViolation(name, f"not a {origin} parameter of {route.template}")]
                )
            field = field_at(route.request, path)
            value: Any = text
            try:
                if field.type == FieldDescriptor.TYPE_BOOL:
                    value = _bool(text)
                elif (
                    field.type == FieldDescriptor.TYPE_MESSAGE
                    and field.message_type.full_name not in SCALAR_MESSAGES
                ):
                    raise json_format.ParseError(
                        f"{field.message_type.full_name} cannot be given as one value"
                    )
            except json_format.ParseError as exc:
                raise InvalidArgument([FieldViolation(name, str(exc))]) from exc
            if not field.is_repeated:
                if path in seen:
                    raise InvalidArgument([FieldViolation(name, "given more than once")])
                seen.add(path)
            *parents, leaf = path.split(".")
            document: dict[str, Any] = {}
            node = document
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = [value] if field.is_repeated else value
            loose = loose_values(document, route.request, typed=False)
            if loose:
                raise InvalidArgument([FieldViolation(path, loose[0][1])])
            parsed = type(message)()
            try:
                json_format.ParseDict(as_proto_json(document, route.request), parsed)
            except json_format.ParseError as exc:
                problem = parse_problem(exc, parsed).split(": ", 1)[-1]
                raise InvalidArgument([FieldViolation(name, problem)]) from exc
            except ValueError as exc:
                raise InvalidArgument([FieldViolation(name, _UNREADABLE)]) from exc
            if origin == "path":
                _refuse_contradiction(path, message, parsed)
            message.MergeFrom(parsed)

    async def _whole(
        self,
        behaviour: Callable[[Message | Unreadable, Any], AsyncIterator[Message]],
        message: Message | Unreadable,
        context: HttpCallContext,
    ) -> Response:
        """A stream read to its end and answered as one JSON array, for a caller that
        accepts JSON and not NDJSON; a failure at any point answers with its status."""
        answers = behaviour(message, context)
        items: list[Any] = []
        try:
            async for answer in answers:
                items.append(json_format.MessageToDict(answer))
        except Aborted as aborted:
            return status_response(aborted.status)
        finally:
            await _close(answers)
        body = json.dumps(items, separators=(",", ":"), ensure_ascii=False) + "\n"
        return Response(body.encode(), media_type=JSON)

    async def _stream(
        self,
        behaviour: Callable[[Message | Unreadable, Any], AsyncIterator[Message]],
        message: Message | Unreadable,
        context: HttpCallContext,
        ending: _Ending,
    ) -> Response:
        """NDJSON, one response a line, each line flushed as produced. A failure
        before the first message answers with its status; a later one ends the
        stream with a last ``{"error": Status}`` line."""
        answers = behaviour(message, context)
        try:
            first = await anext(answers)
        except StopAsyncIteration:
            return Response(b"", media_type=NDJSON)
        except Aborted as aborted:
            return status_response(aborted.status)

        async def lines() -> AsyncGenerator[bytes, None]:
            code = grpc.StatusCode.CANCELLED  # unless it gets to its end
            try:
                yield _json_line(first)
                while True:
                    # The span is current while the stream works, not across a yield:
                    # a stream its client left is closed elsewhere, where what it set
                    # in the context could not be unset.
                    with trace.use_span(ending.span, end_on_exit=False):
                        try:
                            answer = await anext(answers)
                        except StopAsyncIteration:
                            break
                    yield _json_line(answer)
                code = grpc.StatusCode.OK
            except Aborted as aborted:
                code = _CODES.get(aborted.status.code, grpc.StatusCode.UNKNOWN)
                error = {"error": json_format.MessageToDict(aborted.status)}
                yield (json.dumps(error, separators=(",", ":")) + "\n").encode()
            finally:
                await _close(answers)
                ending.ended(code)

        body = lines()

        async def finished() -> None:
            # Once the stream has ended, or its caller has gone (then the stream is
            # closed here, in the call's own task, and ends as cancelled).
            await body.aclose()
            ending.ended(grpc.StatusCode.CANCELLED)

        return StreamingResponse(
            body,
            media_type=NDJSON,
            headers={"x-accel-buffering": "no"},
            background=BackgroundTask(finished),
        )


class _Ending:
    """How one HTTP call ends, said once: its span ends (as cancelled when its client
    went away) and the call is counted by method and code."""

    def __init__(self, method: str, span: trace.Span, metrics: Metrics) -> None:
        self.span = span
        self._method = method
        self._metrics = metrics
        self._started = time.perf_counter()
        self._done = False

    def ended(self, code: grpc.StatusCode) -> None:
        if self._done:
            return
        self._done = True
        if code is grpc.StatusCode.CANCELLED:
            set_cancelled(self.span)
        self.span.end()
        if self._metrics.enabled:
            seconds = time.perf_counter() - self._started
            self._metrics.call_ended(self._method, code.name, seconds, "http")


def caller_metadata(request: Request) -> list[tuple[str, str]]:
    """The request's headers that describe its caller, as gRPC metadata."""
    return [(k, v) for k, v in request.headers.items() if k not in _NOT_METADATA]


def _code_of_http(status: int) -> grpc.StatusCode:
    """The code of an answer that carries no Status (an answer, or Not Modified)."""
    return grpc.StatusCode.OK if status < 400 else grpc.StatusCode.UNKNOWN


def _escaped_code(exc: BaseException) -> grpc.StatusCode:
    """The code of a call that ``exc`` ended before it was answered."""
    if isinstance(exc, asyncio.CancelledError | ClientDisconnect):
        return grpc.StatusCode.CANCELLED
    if isinstance(exc, TimeoutError):  # its body came too slowly
        return grpc.StatusCode.DEADLINE_EXCEEDED
    return grpc.StatusCode.INTERNAL


def _refuse_contradiction(variable: str, message: Message, parsed: Message) -> None:
    """A path value may not override what the body or query set differently: another
    member of its oneof, or the same field with another value."""
    *parents, leaf = variable.split(".")
    before, after = message, parsed
    for part in parents:
        before, after = getattr(before, part), getattr(after, part)
    oneof = before.DESCRIPTOR.fields_by_name[leaf].containing_oneof
    chosen = before.WhichOneof(oneof.name) if oneof is not None else None
    if chosen is not None and chosen != leaf:
        raise InvalidArgument(
            [FieldViolation(variable, f"the path sets it; the request also sets {chosen}")]
        )
    earlier = getattr(before, leaf)
    if earlier and earlier != getattr(after, leaf):
        raise InvalidArgument(
            [FieldViolation(variable, "the path and the request give different values")]
        )


def _not_json(request: Request) -> Response | None:
    """A body of another media type than JSON (a form, plain text) is refused unread,
    where its Content-Type says so: ``application/json`` and any ``application/*+json``
    are JSON, whatever their parameters (JSON is UTF-8, a charset changes nothing). A
    body without a Content-Type is read as JSON. A body in a Content-Encoding (gzip)
    is refused too: it is read as sent, never decompressed."""
    given = request.headers.get("content-type")
    length = request.headers.get("content-length") or "0"
    if "transfer-encoding" not in request.headers and not length.strip().lstrip("0"):
        return None  # no body to read
    coding = request.headers.get("content-encoding", "identity").strip().lower()
    if coding not in ("", "identity"):
        return plain_response(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"the body is sent with Content-Encoding {coding}: send it uncompressed",
            "UNSUPPORTED_MEDIA_TYPE",
            415,
        )
    if given is None:
        return None
    media = given.split(";", 1)[0].strip().lower()
    if media == JSON or (media.startswith("application/") and media.endswith("+json")):
        return None
    said = f"Content-Type {media}" if media else "an empty Content-Type"
    return plain_response(
        grpc.StatusCode.INVALID_ARGUMENT,
        f"the body is sent as {said}: send JSON, with Content-Type: {JSON}",
        "UNSUPPORTED_MEDIA_TYPE",
        415,
    )


def _wants_whole(accept: str) -> bool:
    """Whether an Accept header takes JSON and not NDJSON: the stream then answers as
    one JSON array. NDJSON is the answer otherwise (no header, ``*/*``, or both named)."""
    types = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    return JSON in types and NDJSON not in types


def _host_name(host: str) -> str:
    """The name of a Host header, without its port (IPv6 in brackets)."""
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _query(raw: bytes) -> list[tuple[str, str]]:
    """Query parameters, refusing text that is not UTF-8 rather than replacing it (the
    parameter named, where its name is UTF-8)."""
    found: list[tuple[str, str]] = []
    # Bytes for bytes first (latin-1), then each name and value read as UTF-8.
    for name, value in parse_qsl(raw.decode("latin-1"), keep_blank_values=True, encoding="latin-1"):
        try:
            name = name.encode("latin-1").decode()
        except UnicodeDecodeError as exc:
            raise InvalidArgument([FieldViolation("query", "is not UTF-8")]) from exc
        try:
            found.append((name, value.encode("latin-1").decode()))
        except UnicodeDecodeError as exc:
            raise InvalidArgument([FieldViolation(name, "is not UTF-8")]) from exc
    return found


async def _close(answers: AsyncIterator[Message]) -> None:
    close: Callable[[], Awaitable[None]] | None = getattr(answers, "aclose", None)
    if close is not None:
        await close()


# The reasons of an ABORTED call whose precondition (an etag) no longer holds.
_STALE = frozenset({"ETAG_MISMATCH", "BLOCK_CONFLICT"})


def allow_header(verbs: Iterable[str]) -> str:
    """The ``Allow`` header of a path whose routes take ``verbs``: each method once,
    sorted, with HEAD beside GET (a GET route answers HEAD too)."""
    methods = {verb.upper() for verb in verbs}
    if "GET" in methods:
        methods.add("HEAD")
    return ", ".join(sorted(methods))


def _states_etag(message: Message | Unreadable) -> bool:
    """Whether the request states an etag (from If-Match, its query or its body), empty
    too where the field tells empty from absent: then a stale one is a failed
    precondition, 412."""
    if not isinstance(message, Message):
        return False
    field = message.DESCRIPTOR.fields_by_name.get("etag")
    if field is None:
        return False
    return message.HasField("etag") if field.has_presence else bool(getattr(message, "etag"))  # noqa: B009


def raw_path(request: Request) -> str:
    """The request's path as it was sent, still percent-encoded: what routes match, and
    what a refusal quotes (a decoded one loses a line break it held)."""
    raw = request.scope.get("raw_path")
    if raw is None:
        return str(request.url.path)
    return str(raw.decode("latin-1").split("?", 1)[0])


# The request field of a partial update's mask (AIP-134).
_MASK = "update_mask"


@functools.cache
def infers_mask(route: Route) -> bool:
    """Whether the route is a partial update whose body is the resource, beside an
    ``update_mask``: without a mask, the fields its body holds are the mask."""
    mask = route.request.fields_by_name.get(_MASK)
    if mask is None or mask.message_type is None or route.body in ("", "*"):
        return False
    resource = route.request.fields_by_name[route.body]
    return (
        mask.message_type.full_name == "google.protobuf.FieldMask"
        and resource.message_type is not None
        and not resource.is_repeated
    )


def body_mask(route: Route, document: Mapping[str, Any]) -> list[str]:
    """The update mask a body without one implies (as grpc-gateway infers it): the proto
    path of each field the body holds, whatever its value (``false``, ``0``, an empty
    list too), so a field can be set to its default without naming it.

    Only paths the method's mask takes (``field_rules``) are named, a field of a nested
    message by its dotted path where the mask takes those; the body's other fields are
    left out, as a mask that does not name them leaves them, and so are fields the path
    sets (the resource's id) and output-only ones (AIP-203: ignored when sent). A mask
    with no rule takes any field: nested messages are then named field by field.
    """
    resource, takes, bound = _mask_scope(route)
    return list(dict.fromkeys(_given_paths(document, resource, takes, bound, "")))


@functools.cache
def _mask_scope(route: Route) -> tuple[Descriptor, frozenset[str] | None, frozenset[str]]:
    """What :func:`body_mask` reads of a route, once: the resource, the paths its mask
    takes (None: any) and the fields its path sets."""
    rule = rule_of(route.request.fields_by_name[_MASK])
    takes = frozenset(rule.paths) if isinstance(rule, Mask) else None
    prefix = route.body + "."
    bound = frozenset(v.removeprefix(prefix) for v in route.variables if v.startswith(prefix))
    return route.request.fields_by_name[route.body].message_type, takes, bound


def _given_paths(
    document: Mapping[str, Any],
    message: Descriptor,
    takes: frozenset[str] | None,
    bound: frozenset[str],
    prefix: str,
) -> Iterator[str]:
    """The paths of :func:`body_mask` within one message of the body, under ``prefix``."""
    for name, value in document.items():
        field = field_named(message, name)
        if field is None or OUTPUT_ONLY in field_behaviors(field):
            continue
        path = prefix + field.name
        if path in bound:
            continue
        nested = (
            isinstance(value, dict)
            and bool(value)
            and field.message_type is not None
            and not field.is_repeated
            and not field.message_type.full_name.startswith("google.protobuf.")
        )
        deeper = takes is None or any(taken.startswith(path + ".") for taken in takes)
        if takes is not None and path in takes:
            yield path
        elif nested and deeper:
            yield from _given_paths(value, field.message_type, takes, bound, path + ".")
        elif takes is None:
            yield path


def _apply_if_match(route: Route, request: Request, message: Message) -> Response | None:
    """``If-Match`` as the request's etag: the change applies only to the memory as the
    caller read it (``*``: as it is now). A route that compares no etag refuses one
    rather than ignore it, and so does a second etag that differs from the request's."""
    given = request.headers.get("if-match")
    if given is None:
        return None
    given = given.strip()
    if "etag" not in route.request.fields_by_name:
        return plain_response(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"{route.verb.upper()} {route.template} compares no etag; send it without If-Match",
            "IF_MATCH_NOT_SUPPORTED",
            400,
        )
    if "," in given:
        return plain_response(
            grpc.StatusCode.INVALID_ARGUMENT,
            "If-Match: give one etag, as the resource's ETag header said it",
            "IF_MATCH_NOT_SUPPORTED",
            400,
        )
    current = getattr(message, "etag", "")
    if _states_etag(message) and current != given and given != "*":
        return plain_response(
            grpc.StatusCode.INVALID_ARGUMENT,
            "If-Match and the request's etag differ; send one of them",
            "IF_MATCH_CONTRADICTS",
            400,
        )
    if given != "*" or not current:
        # "*" is the resource as it is now: the service knows what that asks of it.
        setattr(message, "etag", given)  # noqa: B010 - a field of whichever request this is
    return None


@functools.cache
def etag_resource(answer: Descriptor) -> str | None:
    """Where an answer carries its etag: ``""`` for a field of its own, the name of its
    one resource field that has one (a GetMemoryResponse's ``memory``), or None when it
    carries none. The ETag header comes from there, and the OpenAPI document says so."""
    if "etag" in answer.fields_by_name:
        return ""
    resources = [
        f.name
        for f in answer.fields
        if f.message_type is not None
        and not f.is_repeated
        and "etag" in f.message_type.fields_by_name
    ]
    return resources[0] if len(resources) == 1 else None


def _etag_of(answer: Message) -> str:
    """The answer's etag, or its one resource's (a GetMemoryResponse's memory)."""
    where = etag_resource(answer.DESCRIPTOR)
    if where is None or (where and not answer.HasField(where)):
        return ""
    holder = getattr(answer, where) if where else answer
    return str(getattr(holder, "etag"))  # noqa: B009


def _none_match(header: str | None, tag: str) -> bool:
    """Whether ``If-None-Match`` names ``tag`` (compared weakly, as RFC 9110 has it)."""
    if header is None:
        return False
    opaque = tag.removeprefix("W/")
    for given in header.split(","):
        given = given.strip()
        if given == "*" or given.removeprefix("W/") == opaque:
            return True
    return False


def _reason(status: status_pb2.Status) -> str:
    """The reason of the status's ErrorInfo."""
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return str(info.reason)
    return ""


def _site(origin: str) -> tuple[str, str]:
    """An Origin header's scheme and host (with its port), as this server's are
    compared with it: ``https://host`` is another origin than ``http://host``."""
    parts = urlsplit(origin)
    return parts.scheme.lower(), parts.netloc.lower()


_UNREADABLE = "cannot be read: a number with too many digits, or nesting too deep"


def _in_body(path: str, route: Route) -> bool:
    return route.body == "*" or path.split(".")[0] == route.body


def _proto_path(route: Route, name: str) -> str | None:
    """The dotted proto field path a parameter names, by proto or JSON names."""
    descriptor: Descriptor | None = route.request
    parts: list[str] = []
    for piece in name.split("."):
        if descriptor is None:
            return None
        field = descriptor.fields_by_name.get(piece) or next(
            (f for f in descriptor.fields if f.json_name == piece), None
        )
        if field is None:
            return None
        parts.append(field.name)
        descriptor = field.message_type if field.message_type is not None else None
        if descriptor is not None and descriptor.full_name in SCALAR_MESSAGES:
            descriptor = None
    return ".".join(parts)
