"""Authentication and error mapping, applied around every agentmemory RPC."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, Protocol

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message import Message

from agent_memory.api.request_checks import checked, decoding
from agent_memory.api.roles import authorize
from agent_memory.api.stored_text import refuse_line_breaks, refuse_stored_secrets
from agent_memory.domain.errors import ServiceError, Unauthenticated
from agent_memory.domain.identity import Principal, Role
from agent_memory.service.keys import validate_identity
from agent_memory.status import plain_status, to_status
from agent_memory.telemetry.tracing import log_failure

log = logging.getLogger(__name__)

SERVICE_PREFIX = "/agentmemory.v1."
DEFAULT_LOCAL_IDENTITY = "default"

_principal: contextvars.ContextVar[Principal] = contextvars.ContextVar("principal")


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


def current_principal() -> Principal:
    """The caller of the RPC being served; set before any servicer code runs."""
    return _principal.get()


class Authenticator(Protocol):
    async def authenticate(self, key: str) -> Principal: ...


class BearerAuth:
    """``authorization: Bearer <key>`` metadata, checked against stored key hashes."""

    def __init__(self, keys: Authenticator) -> None:
        self._keys = keys

    async def __call__(self, metadata: Sequence[tuple[str, str | bytes]]) -> Principal:
        values = [v for k, v in metadata if k == "authorization"]
        if len(values) != 1 or not isinstance(values[0], str):
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
    :mod:`agent_memory.api.roles`), then runs the servicer; every error leaves
    through here.

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

    def _marks(self, method: str) -> None:
        """A call with side effects: its caller's reads go where its writes went."""
        if self._wrote is not None and not reads_only(method):
            self._wrote(current_principal())

    @contextlib.contextmanager
    def _writing(self, method: str) -> Iterator[None]:
        """As the call ends, its caller wrote (when the method writes)."""
        try:
            yield
        finally:
            principal = _principal.get(None)
            if self._wrote is not None and principal is not None and not reads_only(method):
                self._wrote(principal)

    async def admit(self, method: str, metadata: Sequence[tuple[str, str | bytes]]) -> Principal:
        """The caller ``metadata`` names, once its role allows ``method``: what every
        call passes first. Another transport asks it before reading a request.

        Raises:
            Unauthenticated: no valid credentials.
            PermissionDenied: the key's role is below the method's.
        """
        principal = await self._identify(tuple(metadata))
        authorize(principal, method)
        return principal

    async def _caller(self, method: str, context: grpc.aio.ServicerContext) -> None:
        # A transport that admits the caller before it builds the request (HTTP, to
        # read no body of an unknown caller) hands the principal on with the call.
        admitted = getattr(context, "admitted", None)
        if isinstance(admitted, Principal):
            _principal.set(admitted)
            return
        _principal.set(await self.admit(method, context.invocation_metadata() or ()))

    def _answer(
        self, method: str, behaviour: Callable[..., Any]
    ) -> Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]]:
        """One response, for one request or a stream of them."""

        async def run(request: Any, context: grpc.aio.ServicerContext) -> Any:
            with self._writing(method):
                try:
                    await self._caller(method, context)
                    self._marks(method)
                    request = checked(request)
                    request = await _scanned(method, request)
                    result = behaviour(request, context)
                    if inspect.isawaitable(result):
                        result = await result
                    return result
                except Exception as exc:
                    await _abort(context, method, exc)

        return run

    def _stream(
        self, method: str, behaviour: Callable[..., Any]
    ) -> Callable[[Any, grpc.aio.ServicerContext], AsyncIterator[Any]]:
        """A stream of responses, for one request or a stream of them."""

        async def run(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            with self._writing(method):
                try:
                    await self._caller(method, context)
                    self._marks(method)
                    request = checked(request)
                    request = await _scanned(method, request)
                    async for item in behaviour(request, context):
                        yield item
                except Exception as exc:
                    await _abort(context, method, exc)

        return run


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
        await refuse_stored_secrets(method, request)
        refuse_line_breaks(method, request)
        yield request


async def _abort(context: grpc.aio.ServicerContext, method: str, exc: Exception) -> None:
    if isinstance(exc, grpc.aio.AbortError):
        raise exc
    if isinstance(exc, ServiceError):
        status = to_status(exc)
    elif isinstance(exc, NotImplementedError):
        # The generated base servicer's answer for an RPC of the contract that has no
        # method yet (tests/e2e/test_server.py covers it).
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
