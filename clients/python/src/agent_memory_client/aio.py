"""The asyncio client: :class:`AsyncMemoryClient`, the same methods as
:class:`~agent_memory_client.MemoryClient`, awaited."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable
from datetime import timedelta
from types import TracebackType
from typing import Any, Self

import grpc
import grpc.aio
from google.protobuf.message import Message

from agent_memory_client import _ops
from agent_memory_client._base import ClientBase
from agent_memory_client._channel import (
    Connection,
)
from agent_memory_client._ops import (
    ArchivalModeName,
    BlockLabelName,
    ConversationViewName,
    SourceName,
    Timestamp,
)
from agent_memory_client.errors import BlockConflict, NotFound, error_from_rpc
from agent_memory_client.sync import DEFAULT_CAS_ATTEMPTS
from agentmemory.v1 import (
    block_pb2,
    decision_pb2,
    decision_service_pb2,
    memory_pb2,
    recall_pb2,
    recall_service_pb2,
)


class AsyncRecallStream(AsyncIterator[recall_service_pb2.RecallResponse]):
    """Recall's ranked matches as they arrive, best first.

    Stopping early cancels the stream on the server: leave an ``async with`` block,
    call :meth:`aclose`, or drop the last reference to it.
    """

    def __init__(self, call: Any) -> None:
        self._call = call
        self._closed = False

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> recall_service_pb2.RecallResponse:
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
        found: recall_service_pb2.RecallResponse = match
        return found

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


class AsyncMemoryClient(ClientBase):
    """An asyncio client of the agent-memory service; the arguments are those of
    :class:`~agent_memory_client.MemoryClient`. Create it inside the event loop
    that uses it."""

    def _open(self, connection: Connection) -> grpc.aio.Channel:
        arguments = connection.channel_arguments()
        if connection.tls is None:
            return grpc.aio.insecure_channel(connection.target, options=arguments)
        return grpc.aio.secure_channel(connection.target, connection.tls.credentials(), arguments)

    async def _run(self, op: _ops.Op[_ops.T], timeout: float | None) -> _ops.T:
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

    async def upsert_memory(
        self,
        key: str,
        value: str,
        *,
        agent_id: str | None = None,
        workspace_id: str | None = None,
        pinned: bool | None = None,
        importance: int | None = None,
        source: SourceName = "manual",
        expire_time: Timestamp | None = None,
        ttl: timedelta | None = None,
        timeout: float | None = None,
    ) -> memory_pb2.Memory:
        op = _ops.upsert_memory(
            key,
            value,
            agent_id=agent_id,
            workspace_id=workspace_id,
            pinned=pinned,
            importance=importance,
            source=source,
            expire_time=expire_time,
            ttl=ttl,
        )
        return await self._run(op, timeout)

    async def get_memory(
        self, memory_id: str, *, timeout: float | None = None
    ) -> memory_pb2.Memory:
        return await self._run(_ops.get_memory(memory_id), timeout)

    async def list_memories(
        self,
        *,
        agent_id: str | None = None,
        workspace_id: str | None = None,
        page_size: int = 100,
        show_expired: bool = False,
        show_superseded: bool = False,
        timeout: float | None = None,
    ) -> AsyncGenerator[memory_pb2.Memory, None]:
        owner = _ops.owner(agent_id, workspace_id)
        token = ""
        while True:
            page = await self._run(
                _ops.list_memories_page(owner, page_size, token, show_expired, show_superseded),
                timeout,
            )
            for memory in page.memories:
                yield memory
            token = page.next_page_token
            if not token:
                return

    async def pin_memory(
        self, memory_id: str, pinned: bool = True, *, timeout: float | None = None
    ) -> memory_pb2.Memory:
        return await self._run(_ops.pin_memory(memory_id, pinned), timeout)

    async def delete_memory(
        self, memory_id: str, *, etag: str | None = None, timeout: float | None = None
    ) -> None:
        await self._run(_ops.delete_memory(memory_id, etag), timeout)

    async def memorize(
        self,
        content: str,
        *,
        agent_id: str | None = None,
        workspace_id: str | None = None,
        tags: Iterable[str] = (),
        memory_key: str = "",
        confidence: float | None = None,
        expire_time: Timestamp | None = None,
        ttl: timedelta | None = None,
        conversation: memory_pb2.Conversation | None = None,
        groundings: Iterable[memory_pb2.Grounding] = (),
        supersedes: Iterable[str] = (),
        timeout: float | None = None,
    ) -> memory_pb2.Memory:
        op = _ops.memorize(
            content,
            agent_id=agent_id,
            workspace_id=workspace_id,
            tags=tags,
            memory_key=memory_key,
            confidence=confidence,
            expire_time=expire_time,
            ttl=ttl,
            conversation=conversation,
            groundings=groundings,
            supersedes=supersedes,
        )
        return await self._run(op, timeout)

    async def get_conversation(
        self, conversation_id: str, *, provider: str = "", timeout: float | None = None
    ) -> memory_pb2.Conversation:
        return await self._run(_ops.get_conversation(conversation_id, provider), timeout)

    async def list_conversations(
        self,
        *,
        view: ConversationViewName = "basic",
        page_size: int = 100,
        timeout: float | None = None,
    ) -> AsyncGenerator[memory_pb2.Conversation, None]:
        token = ""
        while True:
            page = await self._run(_ops.list_conversations_page(view, page_size, token), timeout)
            for conversation in page.conversations:
                yield conversation
            token = page.next_page_token
            if not token:
                return

    async def get_extraction_job(
        self, job_id: str, *, timeout: float | None = None
    ) -> memory_pb2.ExtractionJob:
        return await self._run(_ops.get_extraction_job(job_id), timeout)

    async def get_block(
        self, label: BlockLabelName, *, agent_id: str | None = None, timeout: float | None = None
    ) -> block_pb2.Block:
        return await self._run(_ops.get_block(label, agent_id), timeout)

    async def write_block(
        self,
        label: BlockLabelName,
        content: str,
        *,
        agent_id: str | None = None,
        expected_updated_at: Timestamp | None = None,
        timeout: float | None = None,
    ) -> block_pb2.Block:
        op = _ops.write_block(label, content, agent_id, expected_updated_at)
        return await self._run(op, timeout)

    async def update_block(
        self,
        label: BlockLabelName,
        change: Callable[[str], str] | Callable[[str], Awaitable[str]],
        *,
        agent_id: str | None = None,
        attempts: int = DEFAULT_CAS_ATTEMPTS,
        timeout: float | None = None,
    ) -> block_pb2.Block:
        """See :meth:`MemoryClient.update_block`; ``change`` may be a coroutine
        function."""
        for attempt in range(1, attempts + 1):
            try:
                block = await self.get_block(label, agent_id=agent_id, timeout=timeout)
                current, expected = block.content, block.updated_at
            except NotFound:
                block, current, expected = None, "", None
            changed = change(current)
            content = changed if isinstance(changed, str) else await changed
            if block is not None and content == current:
                return block
            try:
                return await self.write_block(
                    label,
                    content,
                    agent_id=agent_id,
                    expected_updated_at=expected,
                    timeout=timeout,
                )
            except BlockConflict:
                if attempt == attempts:
                    raise
        msg = f"attempts must be at least 1, not {attempts!r}"
        raise ValueError(msg)

    async def list_blocks(
        self, *, agent_id: str | None = None, timeout: float | None = None
    ) -> list[block_pb2.Block]:
        return await self._run(_ops.list_blocks(agent_id), timeout)

    def recall(
        self,
        query: str,
        *,
        agent_id: str | None = None,
        workspace_id: str | None = None,
        limit: int | None = None,
        min_score: float | None = None,
        include_memories: bool = False,
        timeout: float | None = None,
    ) -> AsyncRecallStream:
        """See :meth:`MemoryClient.recall`: ``async for match in client.recall(...)``."""
        call = self._start_recall(
            query,
            agent_id=agent_id,
            workspace_id=workspace_id,
            limit=limit,
            min_score=min_score,
            include_memories=include_memories,
            timeout=timeout,
        )
        return AsyncRecallStream(call)

    async def get_recall_status(self, *, timeout: float | None = None) -> recall_pb2.RecallStatus:
        """How the server ranks recall: by words, or by words and meaning (and the
        model). A block's ``indexed_line_count`` says how many of its lines have a
        vector yet."""
        return await self._run(_ops.get_recall_status(), timeout)

    async def render_prompt(
        self,
        agent_id: str,
        *,
        workspace_id: str | None = None,
        user_message: str = "",
        persona: str = "",
        archival_mode: ArchivalModeName | None = None,
        archival_limit: int | None = None,
        include_recent_decisions: bool = False,
        timeout: float | None = None,
    ) -> recall_service_pb2.RenderPromptResponse:
        op = _ops.render_prompt(
            agent_id,
            workspace_id=workspace_id,
            user_message=user_message,
            persona=persona,
            archival_mode=archival_mode,
            archival_limit=archival_limit,
            include_recent_decisions=include_recent_decisions,
        )
        return await self._run(op, timeout)

    async def list_recent_decisions(
        self, agent_id: str, *, limit: int | None = None, timeout: float | None = None
    ) -> list[decision_pb2.Decision]:
        return await self._run(_ops.list_recent_decisions(agent_id, limit), timeout)

    async def render_reexamination_prompt(
        self, decision_id: str, *, timeout: float | None = None
    ) -> decision_service_pb2.RenderReexaminationPromptResponse:
        return await self._run(_ops.render_reexamination_prompt(decision_id), timeout)
