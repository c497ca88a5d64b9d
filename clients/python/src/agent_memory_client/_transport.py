"""The two ways of running an operation of ``_ops``: :class:`SyncTransport` blocks on
a ``grpc`` channel, :class:`AsyncTransport` awaits a ``grpc.aio`` one. Everything a
client method does beyond building its request and unwrapping its answer is here:
the deadline, the credentials, the typed errors, paging and streams."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from types import TracebackType
from typing import Any, Self

import grpc
import grpc.aio
from google.protobuf.message import Message

from agent_memory_client import types
from agent_memory_client._base import ClientBase
from agent_memory_client._channel import Connection
from agent_memory_client._ops import Op, Pages, T
from agent_memory_client.errors import error_from_rpc


class SyncTransport(ClientBase):
    """Runs each operation on a blocking channel."""

    def _open(self, connection: Connection) -> grpc.Channel:
        arguments = connection.channel_arguments()
        if connection.tls is None:
            return grpc.insecure_channel(connection.target, options=arguments)
        return grpc.secure_channel(connection.target, connection.tls.credentials(), arguments)

    def _run(self, op: Op[T], timeout: float | None) -> T:
        method = getattr(self._stubs[op.service], op.method)
        try:
            response = method(
                op.request,
                timeout=self.connection.deadline(timeout),
                metadata=self.connection.metadata,
            )
        except grpc.RpcError as exc:
            raise error_from_rpc(exc) from exc
        return op.unwrap(response)

    def _pages(self, pages: Pages[T], timeout: float | None) -> Iterator[T]:
        token = ""
        while True:
            items, token = self._run(pages.page(token), timeout)
            yield from items
            if not token:
                return

    def call(self, rpc: str, request: Message, *, timeout: float | None = None) -> Any:
        """Any unary RPC by name with a request built by hand, e.g.
        ``call("UpdateMemory", UpdateMemoryRequest(...))``, with the client's
        credentials, deadline, retries and typed errors. Answers the response's
        record (``types.UpdateMemoryResponse``), its message at ``.proto``."""
        return self._run(self._any_rpc(rpc, request), timeout)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncTransport(ClientBase):
    """Runs each operation on an asyncio channel."""

    def _open(self, connection: Connection) -> grpc.aio.Channel:
        arguments = connection.channel_arguments()
        if connection.tls is None:
            return grpc.aio.insecure_channel(connection.target, options=arguments)
        return grpc.aio.secure_channel(connection.target, connection.tls.credentials(), arguments)

    async def _run(self, op: Op[T], timeout: float | None) -> T:
        method = getattr(self._stubs[op.service], op.method)
        try:
            response = await method(
                op.request,
                timeout=self.connection.deadline(timeout),
                metadata=self.connection.metadata,
            )
        except grpc.RpcError as exc:
            raise error_from_rpc(exc) from exc
        return op.unwrap(response)

    async def _pages(self, pages: Pages[T], timeout: float | None) -> AsyncGenerator[T, None]:
        token = ""
        while True:
            items, token = await self._run(pages.page(token), timeout)
            for item in items:
                yield item
            if not token:
                return

    async def call(self, rpc: str, request: Message, *, timeout: float | None = None) -> Any:
        """See :meth:`MemoryClient.call`."""
        return await self._run(self._any_rpc(rpc, request), timeout)

    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


class RecallStream(Iterator[types.RecallResponse]):
    """Recall's ranked matches as they arrive, best first.

    Stopping early cancels the stream on the server: leave a ``with`` block, call
    :meth:`close`, or drop the last reference (breaking out of
    ``for match in client.recall(...)`` does).
    """

    def __init__(self, call: Any) -> None:
        self._call = call
        self._closed = False

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> types.RecallResponse:
        if self._closed:
            raise StopIteration
        try:
            match = next(self._call)
        except grpc.RpcError as exc:
            if self._closed:  # closed from another thread while waiting
                raise StopIteration from None
            raise error_from_rpc(exc) from exc
        return types.RecallResponse.from_proto(match)

    def close(self) -> None:
        """Cancel the stream; it ends there (a no-op once it has ended)."""
        self._closed = True
        self._call.cancel()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __del__(self) -> None:
        call = getattr(self, "_call", None)
        if call is not None:
            call.cancel()


class AsyncRecallStream(AsyncIterator[types.RecallResponse]):
    """Recall's ranked matches as they arrive, best first.

    Stopping early cancels the stream on the server: leave an ``async with`` block,
    call :meth:`aclose`, or drop the last reference to it.
    """

    def __init__(self, call: Any) -> None:
        self._call = call
        self._closed = False

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> types.RecallResponse:
        if self._closed:
            raise StopAsyncIteration
        try:
            match = await self._call.read()
        except grpc.RpcError as exc:
            raise error_from_rpc(exc) from exc
        except asyncio.CancelledError:
            if self._closed:  # our own aclose(), not the task's cancellation
                raise StopAsyncIteration from None
            raise
        if match is grpc.aio.EOF:
            raise StopAsyncIteration
        return types.RecallResponse.from_proto(match)

    async def aclose(self) -> None:
        """Cancel the stream; it ends there (a no-op once it has ended)."""
        self._closed = True
        self._call.cancel()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def __del__(self) -> None:
        call = getattr(self, "_call", None)
        if call is not None and not call.done():
            with contextlib.suppress(RuntimeError):  # its event loop is already closed
                call.cancel()
