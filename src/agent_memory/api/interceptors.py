"""Authentication and error mapping, applied around every agentmemory RPC; and the
telemetry of every call, applied around everything the server serves."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Protocol

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from opentelemetry import trace

from agent_memory.api.handlers import Behaviour
from agent_memory.api.request_checks import checked, decoded, decoding
from agent_memory.api.roles import authorize
from agent_memory.api.stored_text import refuse_line_breaks, refuse_stored_secrets
from agent_memory.domain.errors import ServiceError, Unauthenticated
from agent_memory.domain.identity import Principal, Role
from agent_memory.service.keys import validate_identity
from agent_memory.status import plain_status, to_status
from agent_memory.telemetry.metrics import Metrics
from agent_memory.telemetry.tracing import log_failure, set_caller, set_cancelled

log = logging.getLogger(__name__)

SERVICE_PREFIX = "/agentmemory.v1."
DEFAULT_LOCAL_IDENTITY = "default"


@functools.cache
def reads_only(method: str) -> bool:
    """Whether the contract marks ``method`` (``/agentmemory.v1.Service/Method``) as free
    of side effects (its ``idempotency_level`` is ``NO_SIDE_EFFECTS``)."""
    name = method.strip("/").replace("/", ".")
    try:
        found = descriptor_pool.Default().FindMethodByName(name)  # type: ignore[no-untyped-call]
    except KeyError:
        return False
    return bool(
        found.GetOptions().idempotency_level == descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS
    )


class Authenticator(Protocol):
    async def authenticate(self, key: str) -> Principal: ...


class BearerAuth:
    """``authorization: Bearer <key>`` metadata, checked against stored key hashes."""

    def __init__(self, keys: Authenticator) -> None:
        self._keys = keys

    async def __call__(self, metadata: Sequence[tuple[str, str | bytes]]) -> Principal:
        values = [v for k, v in metadata if k == "authorization"]
        if len(values) > 1:
            # Which one to believe? Neither: a proxy may have added one.
            raise Unauthenticated(
                f"{len(values)} authorization headers: send exactly one, "
                "'authorization: Bearer <key>'",
                reason="MISSING_CREDENTIALS",
            )
        if not values or not isinstance(values[0], str):
            raise Unauthenticated(
                "missing credentials: send 'authorization: Bearer <key>' metadata",
                reason="MISSING_CREDENTIALS",
            )
        scheme, _, key = values[0].partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise Unauthenticated(
                "malformed authorization metadata: expected 'Bearer <key>'",
                reason="MISSING_CREDENTIALS",
            )
        return await self._keys.authenticate(key.strip())


class LocalIdentity:
    """Unauthenticated local mode: the caller says who it is in metadata, and acts
    as orchestrator."""

    async def __call__(self, metadata: Sequence[tuple[str, str | bytes]]) -> Principal:
        found = {k: v for k, v in metadata if k in {"x-tenant-id", "x-user-id"}}
        tenant = found.get("x-tenant-id", DEFAULT_LOCAL_IDENTITY)
        user = found.get("x-user-id", DEFAULT_LOCAL_IDENTITY)
        if not isinstance(tenant, str) or not isinstance(user, str):
            raise Unauthenticated("x-tenant-id and x-user-id must be text", reason="BAD_IDENTITY")
        validate_identity(tenant, user)
        return Principal(tenant_id=tenant, user_id=user, role=Role.ORCHESTRATOR)


IdentifyCaller = Callable[[Sequence[tuple[str, str | bytes]]], Awaitable[Principal]]


class ServiceInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Identifies the caller, checks its role against the method's (see
    :mod:`agent_memory.api.roles`), then runs the servicer's method with the caller
    and the request (:mod:`agent_memory.api.handlers`); every error leaves through
    here.

    Every handler kind is wrapped (unary or streaming requests and responses), so no
    agentmemory RPC, present or future, runs without an identified caller. Domain
    errors become rich statuses; anything unexpected becomes INTERNAL with a
    generic message, and its traceback goes to the log. A method's wrapped handler
    is built once and reused.
    """

    def __init__(
        self,
        identify: IdentifyCaller,
        *,
        wrote: Callable[[Principal], None] | None = None,
    ) -> None:
        """``wrote`` is told the caller of every call of a method with side effects (by
        its ``idempotency_level``), as it starts and as it ends: the caller's next
        reads see what it wrote."""
        self._identify = identify
        self._wrote = wrote
        self._handlers: dict[str, grpc.RpcMethodHandler] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        method: str = details.method
        wrapped = self._handlers.get(method)
        if wrapped is not None:
            return wrapped
        handler = await continuation(details)
        if handler is None or not method.startswith(SERVICE_PREFIX):
            return handler
        wrapped = self._wrap(method, handler)
        self._handlers[method] = wrapped
        return wrapped

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        codecs = {
            # A request that does not decode reaches the behaviour as a marker that
            # ``checked`` refuses, instead of failing inside gRPC.
            "request_deserializer": decoding(handler.request_deserializer, method),
            "response_serializer": handler.response_serializer,
        }
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._answer(method, handler.unary_unary), **codecs
            )
        if handler.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(
                self._answer(method, handler.stream_unary), **codecs
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._stream(method, handler.unary_stream), **codecs
            )
        return grpc.stream_stream_rpc_method_handler(
            self._stream(method, handler.stream_stream), **codecs
        )

    def _marks(self, method: str, caller: Principal | None) -> None:
        """A call with side effects: its caller's reads go where its writes went (told
        as the call starts, and as it ends)."""
        if self._wrote is not None and caller is not None and not reads_only(method):
            self._wrote(caller)

    async def admit(self, method: str, metadata: Sequence[tuple[str, str | bytes]]) -> Principal:
        """The caller ``metadata`` names, once its role allows ``method``: what every
        call passes first. Another transport asks it before reading a request.

        Raises:
            Unauthenticated: no valid credentials.
            PermissionDenied: the key's role is below the method's.
        """
        principal = await self._identify(tuple(metadata))
        # Said on the call's span before the role is checked: a refused call is someone's.
        set_caller(trace.get_current_span(), principal.tenant_id, principal.user_id)
        authorize(principal, method)
        return principal

    async def _caller(self, method: str, context: grpc.aio.ServicerContext) -> Principal:
        # A transport that admits the caller before it builds the request (HTTP, to
        # read no body of an unknown caller) hands the principal on with the call.
        admitted = getattr(context, "admitted", None)
        if isinstance(admitted, Principal):
            return admitted
        return await self.admit(method, context.invocation_metadata() or ())

    async def _prepared(self, method: str, caller: Principal, request: Any) -> Any:
        """What every call does with its request once its caller is known: marks the
        caller's writes, decodes it, says it on the span and checks it."""
        self._marks(method, caller)
        request = decoded(request)
        _describe_call(caller, request)
        # A secret first, whatever else the text breaks: refused as the secret it is
        # (a credential pasted as an id is not "not a UUID").
        return checked(await _scanned(method, request))

    def _answer(
        self, method: str, behaviour: Behaviour
    ) -> Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]]:
        """One response, for one request or a stream of them."""

        async def run(request: Any, context: grpc.aio.ServicerContext) -> Any:
            caller = None
            try:
                caller = await self._caller(method, context)
                request = await self._prepared(method, caller, request)
                result = behaviour(caller, request)
                if inspect.isawaitable(result):
                    result = await result
                return result
            except asyncio.CancelledError:
                set_cancelled(trace.get_current_span())
                raise
            except Exception as exc:
                await _abort(context, method, exc)
            finally:
                self._marks(method, caller)

        return run

    def _stream(
        self, method: str, behaviour: Behaviour
    ) -> Callable[[Any, grpc.aio.ServicerContext], AsyncIterator[Any]]:
        """A stream of responses, for one request or a stream of them."""

        async def run(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            caller = None
            try:
                caller = await self._caller(method, context)
                request = await self._prepared(method, caller, request)
                async with contextlib.aclosing(behaviour(caller, request)) as items:
                    async for item in items:
                        yield item
            except asyncio.CancelledError:
                set_cancelled(trace.get_current_span())
                raise
            except Exception as exc:
                await _abort(context, method, exc)
            finally:
                self._marks(method, caller)

        return run


def _describe_call(caller: Principal, request: Any) -> None:
    """The caller, and the workspace and chain the request names, on the call's span
    (every call passes here once its caller is known)."""
    span = trace.get_current_span()
    if not span.is_recording():
        return
    workspace = chain = None
    if isinstance(request, Message):  # a stream of requests names them request by request
        workspaces, chains = _scope_paths(request.DESCRIPTOR)
        workspace, chain = _first_set(request, workspaces), _first_set(request, chains)
    set_caller(span, caller.tenant_id, caller.user_id, workspace=workspace, chain=chain)


# Where a request names its workspace, and its run or chain of runs (a chain first):
# fields of these names at its top level, or in a message field there (an owner).
_WORKSPACE_FIELDS = ("workspace_id",)
_CHAIN_FIELDS = ("chain_id", "session_id", "run_id")
_Paths = tuple[tuple[str, ...], ...]


@functools.cache
def _scope_paths(descriptor: Descriptor) -> tuple[_Paths, _Paths]:
    """The paths of a request's workspace fields, and of its run or chain fields."""

    def text(field: FieldDescriptor | None) -> bool:
        return field is not None and field.type == field.TYPE_STRING and not field.is_repeated

    def paths(names: tuple[str, ...]) -> _Paths:
        found: list[tuple[str, ...]] = [
            (n,) for n in names if text(descriptor.fields_by_name.get(n))
        ]
        for f in descriptor.fields:
            if f.message_type is not None and not f.is_repeated:
                inner = f.message_type.fields_by_name
                found += [(f.name, n) for n in names if text(inner.get(n))]
        return tuple(found)

    return paths(_WORKSPACE_FIELDS), paths(_CHAIN_FIELDS)


def _first_set(request: Message, paths: _Paths) -> str | None:
    """The first of the text fields at ``paths`` that the request sets."""
    for path in paths:
        value: Any = request
        for name in path:
            value = getattr(value, name)
        if value:
            return str(value)
    return None


class CallTelemetry(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """The outermost interceptor: every call of every method the server serves is
    counted and timed by method and status code (:class:`Metrics`), so a new RPC is
    measured by construction.

    A method that streams its responses runs as one coroutine that writes them
    (``context.write``) and closes the stream it writes from before it returns, in the
    call's own task. A client that cancels mid-stream then stops the call where it
    waits to write, and everything the stream set in the call's context (the span the
    tracing made current) is unset where it was set. An async generator that gRPC
    iterated would instead be left suspended, and closed later by the garbage
    collector in another context, where that fails. The span of a cancelled call says
    so (code CANCELLED), not the OK it started with.
    """

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics
        # Each method's handler as last wrapped, and what it was wrapped from (with
        # tracing on, the handler inside is a new one for every call).
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None:
            return None
        method: str = details.method
        known = self._wrapped.get(method)
        if known is not None and known[0] is handler:
            return known[1]
        wrapped = self._wrap(method, handler)
        self._wrapped[method] = (handler, wrapped)
        return wrapped

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        codecs = {
            "request_deserializer": handler.request_deserializer,
            "response_serializer": handler.response_serializer,
        }
        kinds = (
            (handler.unary_unary, grpc.unary_unary_rpc_method_handler),
            (handler.stream_unary, grpc.stream_unary_rpc_method_handler),
            (handler.unary_stream, grpc.unary_stream_rpc_method_handler),
            (handler.stream_stream, grpc.stream_stream_rpc_method_handler),
        )
        for behaviour, make in kinds:
            if behaviour is None:
                continue
            if inspect.isasyncgenfunction(behaviour):
                return make(self._streaming(method, behaviour), **codecs)
            if inspect.iscoroutinefunction(behaviour):
                return make(self._awaiting(method, behaviour), **codecs)
            # A blocking handler, which gRPC runs on a thread: none is served here.
            return handler
        return handler

    def _awaiting(
        self, method: str, behaviour: Callable[..., Awaitable[Any]]
    ) -> Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]]:
        """One response (or responses the method writes itself)."""

        async def run(request: Any, context: grpc.aio.ServicerContext) -> Any:
            started = time.perf_counter()
            code = grpc.StatusCode.UNKNOWN
            try:
                result = await behaviour(request, context)
                code = _code_set(context) or grpc.StatusCode.OK
                return result
            except BaseException as exc:
                code = _ending_code(exc, context)
                raise
            finally:
                self._ended(method, code, started)

        return run

    def _streaming(
        self, method: str, behaviour: Callable[..., AsyncGenerator[Any, None]]
    ) -> Callable[[Any, grpc.aio.ServicerContext], Awaitable[None]]:
        """Responses, written as the method's stream yields them."""

        async def run(request: Any, context: grpc.aio.ServicerContext) -> None:
            started = time.perf_counter()
            code = grpc.StatusCode.UNKNOWN
            responses = behaviour(request, context)
            try:
                async for response in responses:
                    await context.write(response)
                code = _code_set(context) or grpc.StatusCode.OK
            except BaseException as exc:
                code = _ending_code(exc, context)
                left = code is not grpc.StatusCode.CANCELLED and _client_left(exc, context)
                if left:
                    code = grpc.StatusCode.CANCELLED
                if code is grpc.StatusCode.CANCELLED:
                    # Cancelled while it waited to write: the stream, still open, keeps
                    # the call's span current.
                    set_cancelled(trace.get_current_span())
                if left:
                    return  # a write the client had already left: nothing to report
                raise
            finally:
                await responses.aclose()
                self._ended(method, code, started)

        return run

    def _ended(self, method: str, code: grpc.StatusCode, started: float) -> None:
        if self._metrics.enabled:
            self._metrics.call_ended(method, code.name, time.perf_counter() - started, "grpc")


def _code_set(context: grpc.aio.ServicerContext) -> grpc.StatusCode | None:
    """The code the call set on its context (``set_code``, ``abort``), if any."""
    code = context.code()
    if code is None or isinstance(code, grpc.StatusCode):
        return code
    return _CODES.get(code)


def _client_left(exc: BaseException, context: grpc.aio.ServicerContext) -> bool:
    """Whether ``exc`` is a write failing because the client cancelled the call: the
    cancellation may reach the call just after the write that finds it gone."""
    return isinstance(exc, Exception) and (
        context.cancelled() or type(exc).__name__ == "ExecuteBatchError"
    )


# A client's deadline usually reaches the server as the client's cancellation, sent when
# the client's own timer fires: a little before the server's copy of the deadline, which
# started when the request arrived. A cancellation this close to the deadline is its.
DEADLINE_MARGIN_SECONDS = 0.25


def _ending_code(exc: BaseException, context: grpc.aio.ServicerContext) -> grpc.StatusCode:
    """The code a call that raised ``exc`` ends with: a call cancelled at its deadline
    ended by the deadline, not by its client."""
    if isinstance(exc, asyncio.CancelledError):
        remaining = context.time_remaining()
        if remaining is not None and remaining <= DEADLINE_MARGIN_SECONDS:
            return grpc.StatusCode.DEADLINE_EXCEEDED
        return grpc.StatusCode.CANCELLED
    if isinstance(exc, grpc.aio.AbortError):
        return _code_set(context) or grpc.StatusCode.UNKNOWN
    return grpc.StatusCode.UNKNOWN


_CODES = {code.value[0]: code for code in grpc.StatusCode}


async def _scanned(method: str, request: Any) -> Any:
    """The request, once no string it could store carries a secret or a line break
    where one line is meant; a stream of requests is scanned one request at a time, as
    the servicer reads it.

    Raises:
        InvalidArgument: reason ``SECRET_IN_VALUE`` or ``LINE_BREAK`` (a single request).
    """
    if isinstance(request, Message):
        # A secret first: a key made of a PEM block is refused as the secret it is.
        await refuse_stored_secrets(method, request)
        refuse_line_breaks(method, request)
        return request
    return _scanning(method, request)


async def _scanning(method: str, requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for request in requests:
        request = decoded(request)
        await refuse_stored_secrets(method, request)
        refuse_line_breaks(method, request)
        yield request


async def _abort(context: grpc.aio.ServicerContext, method: str, exc: Exception) -> None:
    if isinstance(exc, grpc.aio.AbortError):
        raise exc
    if isinstance(exc, ServiceError):
        status = to_status(exc)
    elif isinstance(exc, NotImplementedError):
        # The answer for an RPC of the contract that its servicer has no method for
        # yet (api/handlers.py; tests/e2e/test_server.py covers it).
        name = method.rsplit("/", 1)[-1]
        status = plain_status(
            grpc.StatusCode.UNIMPLEMENTED, f"{name} is not implemented yet", "NOT_IMPLEMENTED"
        )
    else:
        log_failure(log, exc, "unexpected error in %s", method)
        status = plain_status(grpc.StatusCode.INTERNAL, "internal error", "INTERNAL")
    try:
        await context.abort(status.code, status.details, status.trailing_metadata)
    except grpc.aio.AbortError as abort:
        # The abort stands alone: tracing records it with its stack, which would
        # otherwise go on to the error it answers, message and all.
        raise abort from None
