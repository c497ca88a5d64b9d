"""The blocking client: :class:`MemoryClient`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from types import TracebackType
from typing import Any, Self

import grpc
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
from agentmemory.v1 import (
    block_pb2,
    decision_pb2,
    decision_service_pb2,
    memory_pb2,
    recall_pb2,
    recall_service_pb2,
)

DEFAULT_CAS_ATTEMPTS = 5


class RecallStream(Iterator[recall_service_pb2.RecallResponse]):
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

    def __next__(self) -> recall_service_pb2.RecallResponse:
        if self._closed:
            raise StopIteration
        try:
            match: recall_service_pb2.RecallResponse = next(self._call)
        except grpc.RpcError as exc:
            if self._closed:  # closed from another thread while waiting
                raise StopIteration from None
            raise error_from_rpc(exc) from exc
        return match

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


class MemoryClient(ClientBase):
    """A blocking client of the agent-memory service.

    Args:
        target: ``HOST:PORT`` of the service (default ``127.0.0.1:50051``).
        api_key: the key to call with (``authorization: Bearer``).
        tenant_id, user_id: who the caller is, for a server in unauthenticated
            local mode (``--insecure-local``); not with ``api_key``.
        tls: ``True`` for TLS with the system's roots, or a :class:`TLS`.
        timeout: the deadline of each call, in seconds, unless a call says otherwise.
        attempts: how many times a call safe to repeat is tried when the service is
            UNAVAILABLE, with exponential backoff (1 turns retries off; at most 5).
        options: extra gRPC channel arguments.

    Every failed call raises a subclass of
    :class:`~agent_memory_client.errors.AgentMemoryError`.
    """

    def _open(self, connection: Connection) -> grpc.Channel:
        arguments = connection.channel_arguments()
        if connection.tls is None:
            return grpc.insecure_channel(connection.target, options=arguments)
        return grpc.secure_channel(connection.target, connection.tls.credentials(), arguments)

    # -- plumbing -------------------------------------------------------------------

    def _run(self, op: _ops.Op[_ops.T], timeout: float | None) -> _ops.T:
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

    def call(self, rpc: str, request: Message, *, timeout: float | None = None) -> Any:
        """Any unary RPC by name, e.g. ``call("ListLearnings", ListLearningsRequest(...))``,
        with the client's credentials, deadline, retries and typed errors."""
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

    # -- memories -------------------------------------------------------------------

    def upsert_memory(
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
        """Create or update the memory with this key, of an agent or a workspace;
        ``expire_time`` or ``ttl`` makes it expire (None keeps the stored expiry)."""
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
        return self._run(op, timeout)

    def get_memory(self, memory_id: str, *, timeout: float | None = None) -> memory_pb2.Memory:
        return self._run(_ops.get_memory(memory_id), timeout)

    def list_memories(
        self,
        *,
        agent_id: str | None = None,
        workspace_id: str | None = None,
        page_size: int = 100,
        show_expired: bool = False,
        show_superseded: bool = False,
        timeout: float | None = None,
    ) -> Iterator[memory_pb2.Memory]:
        """Every memory of an agent or a workspace, fetching page after page; with
        ``show_expired`` also those that expired and are not deleted yet, with
        ``show_superseded`` also those another memory superseded."""
        owner = _ops.owner(agent_id, workspace_id)
        token = ""
        while True:
            page = self._run(
                _ops.list_memories_page(owner, page_size, token, show_expired, show_superseded),
                timeout,
            )
            yield from page.memories
            token = page.next_page_token
            if not token:
                return

    def pin_memory(
        self, memory_id: str, pinned: bool = True, *, timeout: float | None = None
    ) -> memory_pb2.Memory:
        return self._run(_ops.pin_memory(memory_id, pinned), timeout)

    def delete_memory(
        self, memory_id: str, *, etag: str | None = None, timeout: float | None = None
    ) -> None:
        """Delete a memory; with ``etag``, only if it has not changed since."""
        self._run(_ops.delete_memory(memory_id, etag), timeout)

    def memorize(
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
        """Store a fact the agent decided to keep (source MEMORIZE); ``supersedes``
        names memories of the same owner that it updates or contradicts."""
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
        return self._run(op, timeout)

    def get_conversation(
        self, conversation_id: str, *, provider: str = "", timeout: float | None = None
    ) -> memory_pb2.Conversation:
        """The conversation snapshot Memorize kept, messages and raw events included;
        an empty ``provider`` is the one Memorize files a snapshot without one under."""
        return self._run(_ops.get_conversation(conversation_id, provider), timeout)

    def list_conversations(
        self,
        *,
        view: ConversationViewName = "basic",
        page_size: int = 100,
        timeout: float | None = None,
    ) -> Iterator[memory_pb2.Conversation]:
        """Every conversation snapshot of the tenant, most recently updated first,
        fetching page after page; ``view="full"`` brings messages and raw events too,
        the default only their counts."""
        token = ""
        while True:
            page = self._run(_ops.list_conversations_page(view, page_size, token), timeout)
            yield from page.conversations
            token = page.next_page_token
            if not token:
                return

    def get_extraction_job(
        self, job_id: str, *, timeout: float | None = None
    ) -> memory_pb2.ExtractionJob:
        """A queued extraction pass by the ``job_id`` ExtractMemories answered: its
        state, and once done what it wrote, dropped and cost."""
        return self._run(_ops.get_extraction_job(job_id), timeout)

    # -- blocks ---------------------------------------------------------------------

    def get_block(
        self, label: BlockLabelName, *, agent_id: str | None = None, timeout: float | None = None
    ) -> block_pb2.Block:
        """The user's block, or with ``agent_id`` the agent's; NotFound when absent."""
        return self._run(_ops.get_block(label, agent_id), timeout)

    def write_block(
        self,
        label: BlockLabelName,
        content: str,
        *,
        agent_id: str | None = None,
        expected_updated_at: Timestamp | None = None,
        timeout: float | None = None,
    ) -> block_pb2.Block:
        """Replace a block's content, compare-and-set: ``expected_updated_at`` is the
        ``updated_at`` last read, or None to create a block that must not exist yet.
        Raises BlockConflict (with the block's current ``updated_at``) when stale."""
        return self._run(_ops.write_block(label, content, agent_id, expected_updated_at), timeout)

    def update_block(
        self,
        label: BlockLabelName,
        change: Callable[[str], str],
        *,
        agent_id: str | None = None,
        attempts: int = DEFAULT_CAS_ATTEMPTS,
        timeout: float | None = None,
    ) -> block_pb2.Block:
        """Read the block, apply ``change`` to its content ("" when absent) and write
        the result compare-and-set; on a conflict, read again and re-apply, up to
        ``attempts`` times in all, then raise the last BlockConflict."""
        for attempt in range(1, attempts + 1):
            try:
                block = self.get_block(label, agent_id=agent_id, timeout=timeout)
                current, expected = block.content, block.updated_at
            except NotFound:
                block, current, expected = None, "", None
            content = change(current)
            if block is not None and content == current:
                return block
            try:
                return self.write_block(
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

    def list_blocks(
        self, *, agent_id: str | None = None, timeout: float | None = None
    ) -> list[block_pb2.Block]:
        """The user's blocks, and with ``agent_id`` the agent's too."""
        return self._run(_ops.list_blocks(agent_id), timeout)

    # -- recall and prompts -----------------------------------------------------------

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
    ) -> RecallStream:
        """Archival lines (and with ``include_memories`` memories, of the agent and
        of ``workspace_id``) ranked for ``query``, streamed best first; matches
        scoring under ``min_score`` are left out."""
        call = self._start_recall(
            query,
            agent_id=agent_id,
            workspace_id=workspace_id,
            limit=limit,
            min_score=min_score,
            include_memories=include_memories,
            timeout=timeout,
        )
        return RecallStream(call)

    def get_recall_status(self, *, timeout: float | None = None) -> recall_pb2.RecallStatus:
        """How the server ranks recall: by words, or by words and meaning (and the
        model). A block's ``indexed_line_count`` says how many of its lines have a
        vector yet."""
        return self._run(_ops.get_recall_status(), timeout)

    def render_prompt(
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
        """The memory part of the agent's system prompt for this run."""
        op = _ops.render_prompt(
            agent_id,
            workspace_id=workspace_id,
            user_message=user_message,
            persona=persona,
            archival_mode=archival_mode,
            archival_limit=archival_limit,
            include_recent_decisions=include_recent_decisions,
        )
        return self._run(op, timeout)

    def list_recent_decisions(
        self, agent_id: str, *, limit: int | None = None, timeout: float | None = None
    ) -> list[decision_pb2.Decision]:
        """The agent's newest decisions first, each with its ``compact`` line."""
        return self._run(_ops.list_recent_decisions(agent_id, limit), timeout)

    def render_reexamination_prompt(
        self, decision_id: str, *, timeout: float | None = None
    ) -> decision_service_pb2.RenderReexaminationPromptResponse:
        """The prompt of a fresh run that re-examines a decision (``.prompt``), with the
        words its suggested action may take (``.allowed_actions``, empty for any)."""
        return self._run(_ops.render_reexamination_prompt(decision_id), timeout)
