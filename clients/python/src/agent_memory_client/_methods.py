# Written by scripts/generate_client.py from _ops.py; never edit it by hand: change
# _ops.py, then run `make generate` (or `python scripts/generate_client.py`).
"""Every operation ``_ops`` declares, as a method of both clients: blocking on
:class:`MemoryMethods`, awaited on :class:`AsyncMemoryMethods`."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable, Iterator, Mapping
from datetime import timedelta
from typing import Any

from agent_memory_client import _ops, types
from agent_memory_client._ops import (
    ArchivalModeName,
    BlockLabelName,
    ConversationViewName,
    ReExaminableName,
    ResolutionStatusName,
    RunKindName,
    SourceName,
    Timestamp,
)
from agent_memory_client._transport import (
    AsyncRecallStream,
    AsyncTransport,
    RecallStream,
    SyncTransport,
)
from agentmemory.v1 import memory_pb2


class MemoryMethods(SyncTransport):
    """The operations of :class:`~agent_memory_client.MemoryClient`."""

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
        create_only: bool = False,
        valid_start_time: Timestamp | None = None,
        valid_end_time: Timestamp | None = None,
        note: str | None = None,
        timeout: float | None = None,
    ) -> types.Memory:
        """Create or update the memory with this key, of an agent or a workspace;
        ``expire_time`` or ``ttl`` makes it expire (None keeps the stored expiry);
        ``valid_start_time`` and ``valid_end_time`` say when the fact holds in the world
        (each None keeps the stored one); ``note`` is a line for the people who read the
        memory, never shown to a model (None keeps the stored one). With ``create_only``
        an existing key is left alone and the call raises AlreadyExists.
        ``upsert_memory_result`` also says whether the call created the memory."""
        return self._run(
            _ops.upsert_memory(
                key,
                value,
                agent_id=agent_id,
                workspace_id=workspace_id,
                pinned=pinned,
                importance=importance,
                source=source,
                expire_time=expire_time,
                ttl=ttl,
                create_only=create_only,
                valid_start_time=valid_start_time,
                valid_end_time=valid_end_time,
                note=note,
            ),
            timeout,
        )

    def upsert_memory_result(
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
        create_only: bool = False,
        valid_start_time: Timestamp | None = None,
        valid_end_time: Timestamp | None = None,
        note: str | None = None,
        timeout: float | None = None,
    ) -> types.UpsertMemoryResponse:
        """The same call as :meth:`upsert_memory`, answering the whole response: ``.memory``
        and ``.created``."""
        return self._run(
            _ops.upsert_memory(
                key,
                value,
                agent_id=agent_id,
                workspace_id=workspace_id,
                pinned=pinned,
                importance=importance,
                source=source,
                expire_time=expire_time,
                ttl=ttl,
                create_only=create_only,
                valid_start_time=valid_start_time,
                valid_end_time=valid_end_time,
                note=note,
            ).answering(types.UpsertMemoryResponse),
            timeout,
        )

    def list_agents(
        self, *, page_size: int = 100, timeout: float | None = None
    ) -> Iterator[types.OwnerSummary]:
        """Every agent of the tenant that holds a memory or has settings, by id, with
        its count of current memories and its last activity, fetching page after page."""
        return self._pages(_ops.list_agents(page_size=page_size), timeout)

    def list_workspaces(
        self, *, page_size: int = 100, timeout: float | None = None
    ) -> Iterator[types.OwnerSummary]:
        """Every workspace of the tenant that holds a memory, by id, with its count of
        current memories and its last activity, fetching page after page."""
        return self._pages(_ops.list_workspaces(page_size=page_size), timeout)

    def get_caller(self, *, timeout: float | None = None) -> types.Caller:
        """Who this client's key stands for: tenant, user, role and key id."""
        return self._run(_ops.get_caller(), timeout)

    def get_memory(
        self,
        memory_id: str = "",
        *,
        key: str | None = None,
        agent_id: str | None = None,
        workspace_id: str | None = None,
        as_of_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.Memory:
        """A memory by id, or by its ``key`` and owner (``agent_id`` or
        ``workspace_id``) instead; NotFound when absent. With ``as_of_time``, the
        memory as it was then."""
        return self._run(
            _ops.get_memory(
                memory_id,
                key=key,
                agent_id=agent_id,
                workspace_id=workspace_id,
                as_of_time=as_of_time,
            ),
            timeout,
        )

    def update_memory(
        self,
        memory_id: str,
        *,
        key: str | None = None,
        value: str | None = None,
        pinned: bool | None = None,
        importance: int | None = None,
        expire_time: Timestamp | None = None,
        tags: Iterable[str] | None = None,
        update_mask: Iterable[str] | None = None,
        etag: str | None = None,
        valid_start_time: Timestamp | None = None,
        valid_end_time: Timestamp | None = None,
        note: str | None = None,
        held_for_review: bool | None = None,
        timeout: float | None = None,
    ) -> types.Memory:
        """Change some fields of a memory: those given (not None), or those
        ``update_mask`` names, where a field named but not given is cleared
        (``expire_time``: it stops expiring; ``tags``: none left; ``valid_start_time``
        or ``valid_end_time``: the fact's period is open at that end; ``note``: none).
        ``held_for_review=False`` approves a memory held for review (it reaches prompts and
        recall again); True holds one. Only manual memories change key, value or importance
        (else ReadOnlyMemory). With ``etag``, only if the memory has not changed since
        (else EtagMismatch)."""
        return self._run(
            _ops.update_memory(
                memory_id,
                key=key,
                value=value,
                pinned=pinned,
                importance=importance,
                expire_time=expire_time,
                tags=tags,
                update_mask=update_mask,
                etag=etag,
                valid_start_time=valid_start_time,
                valid_end_time=valid_end_time,
                note=note,
                held_for_review=held_for_review,
            ),
            timeout,
        )

    def pin_memory(
        self, memory_id: str, pinned: bool = True, *, timeout: float | None = None
    ) -> types.Memory:
        """Pin a memory of any source, or with ``pinned=False`` unpin it."""
        return self._run(_ops.pin_memory(memory_id, pinned), timeout)

    def delete_memory(
        self, memory_id: str, *, etag: str | None = None, timeout: float | None = None
    ) -> None:
        """Delete a memory; with ``etag``, only if it has not changed since."""
        return self._run(_ops.delete_memory(memory_id, etag=etag), timeout)

    def list_memories(
        self,
        *,
        agent_id: str | None = None,
        workspace_id: str | None = None,
        page_size: int = 100,
        show_expired: bool = False,
        show_superseded: bool = False,
        filter: str = "",
        order_by: str = "",
        as_of_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> Iterator[types.Memory]:
        """Every memory of an agent or a workspace, fetching page after page; with
        ``show_expired`` also those that expired and are not deleted yet, with
        ``show_superseded`` also those another memory superseded. ``filter`` (AIP-160,
        e.g. ``'text:"deploy" (source = manual OR pinned = true)'``; AND, OR, NOT and
        parentheses, OR binding tighter than AND) keeps those that match; ``order_by``
        (fields of ``key``, ``importance``, ``created_at`` and ``updated_at`` separated
        by commas, each optionally followed by ``desc``) orders them. With
        ``as_of_time``, the memories as they were then."""
        return self._pages(
            _ops.list_memories(
                agent_id=agent_id,
                workspace_id=workspace_id,
                page_size=page_size,
                show_expired=show_expired,
                show_superseded=show_superseded,
                filter=filter,
                order_by=order_by,
                as_of_time=as_of_time,
            ),
            timeout,
        )

    def list_memories_page(
        self,
        *,
        agent_id: str | None = None,
        workspace_id: str | None = None,
        page_size: int = 100,
        page_token: str = "",
        show_expired: bool = False,
        show_superseded: bool = False,
        filter: str = "",
        order_by: str = "",
        as_of_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.ListMemoriesResponse:
        """One page of :meth:`list_memories`, as the server answers it: the memories,
        ``next_page_token`` and ``total_size`` (how many match across all pages)."""
        return self._run(
            _ops.list_memories_page(
                agent_id=agent_id,
                workspace_id=workspace_id,
                page_size=page_size,
                page_token=page_token,
                show_expired=show_expired,
                show_superseded=show_superseded,
                filter=filter,
                order_by=order_by,
                as_of_time=as_of_time,
            ),
            timeout,
        )

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
        conversation: memory_pb2.Conversation | types.Conversation | None = None,
        groundings: Iterable[memory_pb2.Grounding | types.Grounding] = (),
        supersedes: Iterable[str] = (),
        valid_start_time: Timestamp | None = None,
        valid_end_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.Memory:
        """Store a fact the agent decided to keep (source MEMORIZE); ``supersedes``
        names memories of the same owner that it updates or contradicts (ending their
        periods), ``valid_start_time`` and ``valid_end_time`` when the fact holds. The
        ``conversation`` and its ``groundings`` may be messages or records.
        ``memorize_result`` also says whether the call created the memory, and gives the
        memories it superseded as stored."""
        return self._run(
            _ops.memorize(
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
                valid_start_time=valid_start_time,
                valid_end_time=valid_end_time,
            ),
            timeout,
        )

    def memorize_result(
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
        conversation: memory_pb2.Conversation | types.Conversation | None = None,
        groundings: Iterable[memory_pb2.Grounding | types.Grounding] = (),
        supersedes: Iterable[str] = (),
        valid_start_time: Timestamp | None = None,
        valid_end_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.MemorizeResponse:
        """The same call as :meth:`memorize`, answering the whole response: ``.memory``,
        ``.created`` and ``.superseded``."""
        return self._run(
            _ops.memorize(
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
                valid_start_time=valid_start_time,
                valid_end_time=valid_end_time,
            ).answering(types.MemorizeResponse),
            timeout,
        )

    def record_learning(
        self, content: str, *, chain_agent_ids: Iterable[str], timeout: float | None = None
    ) -> types.Memory:
        """Store a director learning on the first agent of the chain (source DIRECTOR)."""
        return self._run(_ops.record_learning(content, chain_agent_ids=chain_agent_ids), timeout)

    def list_learnings(
        self,
        *,
        chain_agent_ids: Iterable[str],
        limit: int | None = None,
        timeout: float | None = None,
    ) -> list[types.Memory]:
        """The newest learnings of every agent of the chain, newest first (at most
        ``limit``; None: the server's default, 20)."""
        return self._run(_ops.list_learnings(chain_agent_ids=chain_agent_ids, limit=limit), timeout)

    def list_memory_events(
        self, memory_id: str, *, page_size: int = 100, timeout: float | None = None
    ) -> Iterator[types.MemoryEvent]:
        """A memory's audit history, oldest first, fetching page after page; it outlives
        the memory's deletion."""
        return self._pages(_ops.list_memory_events(memory_id, page_size=page_size), timeout)

    def get_agent_settings(
        self, agent_id: str, *, timeout: float | None = None
    ) -> types.AgentSettings:
        """An agent's memory settings; the defaults (all off) when never written."""
        return self._run(_ops.get_agent_settings(agent_id), timeout)

    def update_agent_settings(
        self,
        agent_id: str,
        *,
        memory_enabled: bool | None = None,
        active_memory_enabled: bool | None = None,
        review_decisions: bool | None = None,
        expiry_slide: timedelta | None = None,
        timeout: float | None = None,
    ) -> types.AgentSettings:
        """Turn an agent's switches on or off and set how far a use moves the expiry of
        its memories (``expiry_slide``, ``timedelta(0)`` turns it off): those given (not
        None) change, the others stay as they are."""
        return self._run(
            _ops.update_agent_settings(
                agent_id,
                memory_enabled=memory_enabled,
                active_memory_enabled=active_memory_enabled,
                review_decisions=review_decisions,
                expiry_slide=expiry_slide,
            ),
            timeout,
        )

    def get_workspace_settings(
        self, workspace_id: str, *, timeout: float | None = None
    ) -> types.WorkspaceSettings:
        """A workspace's memory settings; the defaults (all off) when never written."""
        return self._run(_ops.get_workspace_settings(workspace_id), timeout)

    def update_workspace_settings(
        self,
        workspace_id: str,
        *,
        expiry_slide: timedelta | None = None,
        timeout: float | None = None,
    ) -> types.WorkspaceSettings:
        """Set how far a use moves the expiry of the workspace's memories
        (``timedelta(0)`` turns it off); None leaves it as it is."""
        return self._run(
            _ops.update_workspace_settings(workspace_id, expiry_slide=expiry_slide), timeout
        )

    def extract_memories(
        self,
        agent_id: str,
        *,
        transcript: str,
        session_id: str | None = None,
        chain_id: str | None = None,
        workspace_id: str | None = None,
        queued: bool = False,
        timeout: float | None = None,
    ) -> types.ExtractMemoriesResponse:
        """Run one automatic extraction pass over a finished run's transcript, of a
        single run (``session_id``) or a chain of runs (``chain_id``): ``.outcome``,
        ``.written``, ``.dropped``, ``.usage``. With ``queued`` the pass runs later:
        read it with ``get_extraction_job(.job_id)``."""
        return self._run(
            _ops.extract_memories(
                agent_id,
                transcript=transcript,
                session_id=session_id,
                chain_id=chain_id,
                workspace_id=workspace_id,
                queued=queued,
            ),
            timeout,
        )

    def get_usage(
        self,
        *,
        synthetic_session_id_prefix: str = "",
        start_time: Timestamp | None = None,
        end_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.GetUsageResponse:
        """Recorded model usage (``.records``, oldest first) and its totals, of the
        synthetic session ids with this prefix, from ``start_time`` until before
        ``end_time``."""
        return self._run(
            _ops.get_usage(
                synthetic_session_id_prefix=synthetic_session_id_prefix,
                start_time=start_time,
                end_time=end_time,
            ),
            timeout,
        )

    def get_active_session(
        self, agent_id: str, *, timeout: float | None = None
    ) -> types.ActiveSession:
        """The model session the agent's next run resumes, with its runs since the last
        reset and the reset warning."""
        return self._run(_ops.get_active_session(agent_id), timeout)

    def record_run_session(
        self,
        agent_id: str,
        *,
        run_id: str,
        session_id_before: str = "",
        session_id_after: str = "",
        kind: RunKindName = "scheduled",
        render_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.ActiveSession:
        """Record a finished run with the session id it resumed and the one it ended
        with (empty when it failed); the same run again changes nothing. ``kind`` says
        what started it: only scheduled runs count toward the reset warning.
        ``render_time`` (its prompt's render's ``render_time``) is kept with the run, so
        the prompt can be rendered again as it was. Answers the agent's active session
        after it."""
        return self._run(
            _ops.record_run_session(
                agent_id,
                run_id=run_id,
                session_id_before=session_id_before,
                session_id_after=session_id_after,
                kind=kind,
                render_time=render_time,
            ),
            timeout,
        )

    def list_agent_runs(
        self, agent_id: str, *, page_size: int = 100, timeout: float | None = None
    ) -> Iterator[types.AgentRun]:
        """Every recorded run of the agent, newest first: what started it, and the
        session ids before and after it."""
        return self._pages(_ops.list_agent_runs(agent_id, page_size=page_size), timeout)

    def reset_active_session(
        self, agent_id: str, *, timeout: float | None = None
    ) -> types.ActiveSession:
        """Start the agent's next run clean: its session id is cleared and the runs
        since the last reset count from now."""
        return self._run(_ops.reset_active_session(agent_id), timeout)

    def forget_agent(
        self, agent_id: str, *, validate_only: bool = False, timeout: float | None = None
    ) -> types.ForgetCounts:
        """Forget an agent in the caller's tenant: its memories, blocks, settings,
        sessions, decisions and extraction passes. Answers what went, by kind; with
        ``validate_only``, what would go, and nothing changes."""
        return self._run(_ops.forget_agent(agent_id, validate_only=validate_only), timeout)

    def forget_workspace(
        self, workspace_id: str, *, validate_only: bool = False, timeout: float | None = None
    ) -> types.ForgetCounts:
        """Forget a workspace in the caller's tenant, as ``forget_agent`` an agent."""
        return self._run(_ops.forget_workspace(workspace_id, validate_only=validate_only), timeout)

    def forget_user(
        self, *, validate_only: bool = False, timeout: float | None = None
    ) -> types.ForgetCounts:
        """Forget the caller's own user: its blocks of every scope, with their versions
        and archival lines."""
        return self._run(_ops.forget_user(validate_only=validate_only), timeout)

    def get_conversation(
        self, conversation_id: str, *, provider: str = "", timeout: float | None = None
    ) -> types.Conversation:
        """The conversation snapshot Memorize kept, messages and raw events included;
        an empty ``provider`` is the one Memorize files a snapshot without one under."""
        return self._run(_ops.get_conversation(conversation_id, provider=provider), timeout)

    def list_conversations(
        self,
        *,
        view: ConversationViewName = "basic",
        page_size: int = 100,
        timeout: float | None = None,
    ) -> Iterator[types.Conversation]:
        """Every conversation snapshot of the tenant, most recently updated first,
        fetching page after page; ``view="full"`` brings messages and raw events too,
        the default only their counts."""
        return self._pages(_ops.list_conversations(view=view, page_size=page_size), timeout)

    def get_extraction_job(
        self, job_id: str, *, timeout: float | None = None
    ) -> types.ExtractionJob:
        """A queued extraction pass by the ``job_id`` ExtractMemories answered: its
        state, and once done what it wrote, dropped and cost."""
        return self._run(_ops.get_extraction_job(job_id), timeout)

    def get_block(
        self,
        label: BlockLabelName,
        *,
        agent_id: str | None = None,
        user_id: str | None = None,
        workspace_id: str | None = None,
        as_of_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.Block:
        """The user's block, with ``agent_id`` the agent's, or with ``workspace_id`` the
        workspace's (shared by the tenant's users); NotFound when absent. An orchestrator
        may read another user's with ``user_id``. With ``as_of_time``, the block as it
        was then."""
        return self._run(
            _ops.get_block(
                label,
                agent_id=agent_id,
                user_id=user_id,
                workspace_id=workspace_id,
                as_of_time=as_of_time,
            ),
            timeout,
        )

    def delete_block(
        self,
        label: BlockLabelName,
        *,
        agent_id: str | None = None,
        expected_updated_at: Timestamp | None = None,
        etag: str | None = None,
        workspace_id: str | None = None,
        timeout: float | None = None,
    ) -> None:
        """Delete a block (with ``workspace_id``, the workspace's) with its versions and
        archival lines; NotFound when absent. With ``expected_updated_at`` or ``etag`` (the
        block's, as read), only if nobody wrote it since (else BlockConflict)."""
        return self._run(
            _ops.delete_block(
                label,
                agent_id=agent_id,
                expected_updated_at=expected_updated_at,
                etag=etag,
                workspace_id=workspace_id,
            ),
            timeout,
        )

    def list_blocks(
        self,
        *,
        agent_id: str | None = None,
        user_id: str | None = None,
        workspace_id: str | None = None,
        timeout: float | None = None,
    ) -> list[types.Block]:
        """The user's blocks, and with ``agent_id`` the agent's too; with ``workspace_id``
        the workspace's (alone, or after the user's and the agent's with ``agent_id``). An
        orchestrator may read another user's with ``user_id``."""
        return self._run(
            _ops.list_blocks(agent_id=agent_id, user_id=user_id, workspace_id=workspace_id), timeout
        )

    def write_block(
        self,
        label: BlockLabelName,
        content: str,
        *,
        agent_id: str | None = None,
        expected_updated_at: Timestamp | None = None,
        etag: str | None = None,
        workspace_id: str | None = None,
        timeout: float | None = None,
    ) -> types.Block:
        """Replace a block's content (with ``workspace_id``, the workspace's, which the
        tenant's users share), compare-and-set: ``expected_updated_at`` is the
        ``updated_at`` last read (or ``etag`` the ``etag`` last read; ``"*"``: the block
        as it is now), or neither to create a block that must not exist yet. Raises
        BlockConflict (with the block's current ``updated_at`` and etag) when stale."""
        return self._run(
            _ops.write_block(
                label,
                content,
                agent_id=agent_id,
                expected_updated_at=expected_updated_at,
                etag=etag,
                workspace_id=workspace_id,
            ),
            timeout,
        )

    def list_block_versions(
        self,
        label: BlockLabelName,
        *,
        agent_id: str | None = None,
        page_size: int = 100,
        user_id: str | None = None,
        workspace_id: str | None = None,
        timeout: float | None = None,
    ) -> Iterator[types.BlockVersion]:
        """The kept versions of the user's block (with ``agent_id``, the agent's; with
        ``workspace_id``, the workspace's), newest first, fetching page after page;
        NotFound when the block is absent. An orchestrator may read another user's with
        ``user_id``."""
        return self._pages(
            _ops.list_block_versions(
                label,
                agent_id=agent_id,
                page_size=page_size,
                user_id=user_id,
                workspace_id=workspace_id,
            ),
            timeout,
        )

    def recall(
        self,
        query: str,
        *,
        agent_id: str | None = None,
        workspace_id: str | None = None,
        limit: int | None = None,
        min_score: float | None = None,
        include_memories: bool = False,
        as_of_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> RecallStream:
        """Archival lines (and with ``include_memories`` memories, of the agent and
        of ``workspace_id``) ranked for ``query``, streamed best first; matches
        scoring under ``min_score`` are left out. With ``as_of_time``, what there was
        then, ranked by words."""
        return RecallStream(
            self._start_stream(
                _ops.recall(
                    query,
                    agent_id=agent_id,
                    workspace_id=workspace_id,
                    limit=limit,
                    min_score=min_score,
                    include_memories=include_memories,
                    as_of_time=as_of_time,
                ),
                timeout,
            )
        )

    def get_recall_status(self, *, timeout: float | None = None) -> types.RecallStatus:
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
        archival_min_score: float | None = None,
        include_user_core: bool | None = None,
        include_agent_core: bool | None = None,
        include_recent_decisions: bool | None = None,
        recent_decisions_limit: int | None = None,
        include_workspace_core: bool | None = None,
        count_tokens: bool = False,
        as_of_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.RenderPromptResponse:
        """The memory part of the agent's system prompt for this run. The recent
        decisions are included as ``include_recent_decisions`` says, or, when it is
        None, as the agent's ``review_decisions`` setting says; with ``workspace_id``,
        the workspace's core block unless ``include_workspace_core`` is False; the
        user's and the agent's core blocks unless ``include_user_core`` or
        ``include_agent_core`` is False. ``archival_min_score`` is the floor of an
        archival reminder in AUTO mode; ``count_tokens`` counts each section's tokens.
        With ``as_of_time`` (a past render's ``render_time``), the prompt as it was
        then: the same bytes that render gave."""
        return self._run(
            _ops.render_prompt(
                agent_id,
                workspace_id=workspace_id,
                user_message=user_message,
                persona=persona,
                archival_mode=archival_mode,
                archival_limit=archival_limit,
                archival_min_score=archival_min_score,
                include_user_core=include_user_core,
                include_agent_core=include_agent_core,
                include_recent_decisions=include_recent_decisions,
                recent_decisions_limit=recent_decisions_limit,
                include_workspace_core=include_workspace_core,
                count_tokens=count_tokens,
                as_of_time=as_of_time,
            ),
            timeout,
        )

    def register_card_type(
        self,
        name: str,
        *,
        re_examinable: ReExaminableName = "never",
        actions: Iterable[str] = (),
        decision_actions: Iterable[str] = (),
        timeout: float | None = None,
    ) -> types.CardType:
        """Register a kind of decision card, or replace the one of this name: whether
        its decisions may be re-examined, the words a re-examination may suggest
        (``actions``) and those a decision may take (``decision_actions``); empty allows
        any uppercase word."""
        return self._run(
            _ops.register_card_type(
                name,
                re_examinable=re_examinable,
                actions=actions,
                decision_actions=decision_actions,
            ),
            timeout,
        )

    def register_card_type_result(
        self,
        name: str,
        *,
        re_examinable: ReExaminableName = "never",
        actions: Iterable[str] = (),
        decision_actions: Iterable[str] = (),
        timeout: float | None = None,
    ) -> types.RegisterCardTypeResponse:
        """The same call as :meth:`register_card_type`, answering the whole response:
        ``.card_type`` and ``.created``."""
        return self._run(
            _ops.register_card_type(
                name,
                re_examinable=re_examinable,
                actions=actions,
                decision_actions=decision_actions,
            ).answering(types.RegisterCardTypeResponse),
            timeout,
        )

    def record_decision(
        self,
        agent_id: str,
        *,
        run_id: str,
        card_type: str,
        action: str,
        summary: str,
        result: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> types.Decision:
        """Record one run's decision, OPEN, on a registered card type: its ``action`` in
        one uppercase word, a one-line ``summary`` and the run's structured ``result``
        (JSON-like values). The same run again with the same decision changes nothing."""
        return self._run(
            _ops.record_decision(
                agent_id,
                run_id=run_id,
                card_type=card_type,
                action=action,
                summary=summary,
                result=result,
            ),
            timeout,
        )

    def record_decision_result(
        self,
        agent_id: str,
        *,
        run_id: str,
        card_type: str,
        action: str,
        summary: str,
        result: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> types.RecordDecisionResponse:
        """The same call as :meth:`record_decision`, answering the whole response:
        ``.decision`` and ``.created``."""
        return self._run(
            _ops.record_decision(
                agent_id,
                run_id=run_id,
                card_type=card_type,
                action=action,
                summary=summary,
                result=result,
            ).answering(types.RecordDecisionResponse),
            timeout,
        )

    def get_decision(self, decision_id: str, *, timeout: float | None = None) -> types.Decision:
        """One decision with its full result; NotFound when absent."""
        return self._run(_ops.get_decision(decision_id), timeout)

    def list_recent_decisions(
        self,
        agent_id: str,
        *,
        limit: int | None = None,
        include_result: bool = False,
        card_type: str = "",
        timeout: float | None = None,
    ) -> list[types.Decision]:
        """The agent's newest decisions first (of ``card_type`` only, when given), each
        with its ``compact`` line, and with ``include_result`` its full result.
        ``list_recent_decisions_result`` also gives the server time the lines' ages are
        measured from (``.as_of``)."""
        return self._run(
            _ops.list_recent_decisions(
                agent_id, limit=limit, include_result=include_result, card_type=card_type
            ),
            timeout,
        )

    def list_recent_decisions_result(
        self,
        agent_id: str,
        *,
        limit: int | None = None,
        include_result: bool = False,
        card_type: str = "",
        timeout: float | None = None,
    ) -> types.ListRecentDecisionsResponse:
        """The same call as :meth:`list_recent_decisions`, answering the whole response:
        ``.decisions`` and ``.as_of``."""
        return self._run(
            _ops.list_recent_decisions(
                agent_id, limit=limit, include_result=include_result, card_type=card_type
            ).answering(types.ListRecentDecisionsResponse),
            timeout,
        )

    def resolve_decision(
        self,
        decision_id: str,
        resolution_status: ResolutionStatusName = "resolved",
        *,
        timeout: float | None = None,
    ) -> types.Decision:
        """Set where a decision stands (``"resolved"``, ``"expired"`` or back to
        ``"open"``); its result never changes."""
        return self._run(_ops.resolve_decision(decision_id, resolution_status), timeout)

    def record_reexamination(
        self,
        decision_id: str,
        *,
        run_id: str,
        conviction_score: int,
        notes: str,
        suggested_action: str,
        timeout: float | None = None,
    ) -> types.Reexamination:
        """Record a later run's fresh read on a decision: a ``conviction_score`` from 0
        (invalidated) to 100 (confirmed), one sentence of ``notes`` and an advisory
        ``suggested_action``. The decision itself never changes."""
        return self._run(
            _ops.record_reexamination(
                decision_id,
                run_id=run_id,
                conviction_score=conviction_score,
                notes=notes,
                suggested_action=suggested_action,
            ),
            timeout,
        )

    def record_reexamination_result(
        self,
        decision_id: str,
        *,
        run_id: str,
        conviction_score: int,
        notes: str,
        suggested_action: str,
        timeout: float | None = None,
    ) -> types.RecordReexaminationResponse:
        """The same call as :meth:`record_reexamination`, answering the whole response:
        ``.reexamination`` and ``.created``."""
        return self._run(
            _ops.record_reexamination(
                decision_id,
                run_id=run_id,
                conviction_score=conviction_score,
                notes=notes,
                suggested_action=suggested_action,
            ).answering(types.RecordReexaminationResponse),
            timeout,
        )

    def list_reexaminations(
        self, decision_id: str, *, timeout: float | None = None
    ) -> list[types.Reexamination]:
        """A decision's re-examinations, its conviction history, oldest first."""
        return self._run(_ops.list_reexaminations(decision_id), timeout)

    def render_reexamination_prompt(
        self, decision_id: str, *, timeout: float | None = None
    ) -> types.RenderReexaminationPromptResponse:
        """The prompt of a fresh run that re-examines a decision (``.prompt``), with the
        words its suggested action may take (``.allowed_actions``, empty for any)."""
        return self._run(_ops.render_reexamination_prompt(decision_id), timeout)


class AsyncMemoryMethods(AsyncTransport):
    """The operations of :class:`~agent_memory_client.AsyncMemoryClient`."""

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
        create_only: bool = False,
        valid_start_time: Timestamp | None = None,
        valid_end_time: Timestamp | None = None,
        note: str | None = None,
        timeout: float | None = None,
    ) -> types.Memory:
        """Create or update the memory with this key, of an agent or a workspace;
        ``expire_time`` or ``ttl`` makes it expire (None keeps the stored expiry);
        ``valid_start_time`` and ``valid_end_time`` say when the fact holds in the world
        (each None keeps the stored one); ``note`` is a line for the people who read the
        memory, never shown to a model (None keeps the stored one). With ``create_only``
        an existing key is left alone and the call raises AlreadyExists.
        ``upsert_memory_result`` also says whether the call created the memory."""
        return await self._run(
            _ops.upsert_memory(
                key,
                value,
                agent_id=agent_id,
                workspace_id=workspace_id,
                pinned=pinned,
                importance=importance,
                source=source,
                expire_time=expire_time,
                ttl=ttl,
                create_only=create_only,
                valid_start_time=valid_start_time,
                valid_end_time=valid_end_time,
                note=note,
            ),
            timeout,
        )

    async def upsert_memory_result(
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
        create_only: bool = False,
        valid_start_time: Timestamp | None = None,
        valid_end_time: Timestamp | None = None,
        note: str | None = None,
        timeout: float | None = None,
    ) -> types.UpsertMemoryResponse:
        """The same call as :meth:`upsert_memory`, answering the whole response: ``.memory``
        and ``.created``."""
        return await self._run(
            _ops.upsert_memory(
                key,
                value,
                agent_id=agent_id,
                workspace_id=workspace_id,
                pinned=pinned,
                importance=importance,
                source=source,
                expire_time=expire_time,
                ttl=ttl,
                create_only=create_only,
                valid_start_time=valid_start_time,
                valid_end_time=valid_end_time,
                note=note,
            ).answering(types.UpsertMemoryResponse),
            timeout,
        )

    def list_agents(
        self, *, page_size: int = 100, timeout: float | None = None
    ) -> AsyncGenerator[types.OwnerSummary, None]:
        """Every agent of the tenant that holds a memory or has settings, by id, with
        its count of current memories and its last activity, fetching page after page."""
        return self._pages(_ops.list_agents(page_size=page_size), timeout)

    def list_workspaces(
        self, *, page_size: int = 100, timeout: float | None = None
    ) -> AsyncGenerator[types.OwnerSummary, None]:
        """Every workspace of the tenant that holds a memory, by id, with its count of
        current memories and its last activity, fetching page after page."""
        return self._pages(_ops.list_workspaces(page_size=page_size), timeout)

    async def get_caller(self, *, timeout: float | None = None) -> types.Caller:
        """Who this client's key stands for: tenant, user, role and key id."""
        return await self._run(_ops.get_caller(), timeout)

    async def get_memory(
        self,
        memory_id: str = "",
        *,
        key: str | None = None,
        agent_id: str | None = None,
        workspace_id: str | None = None,
        as_of_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.Memory:
        """A memory by id, or by its ``key`` and owner (``agent_id`` or
        ``workspace_id``) instead; NotFound when absent. With ``as_of_time``, the
        memory as it was then."""
        return await self._run(
            _ops.get_memory(
                memory_id,
                key=key,
                agent_id=agent_id,
                workspace_id=workspace_id,
                as_of_time=as_of_time,
            ),
            timeout,
        )

    async def update_memory(
        self,
        memory_id: str,
        *,
        key: str | None = None,
        value: str | None = None,
        pinned: bool | None = None,
        importance: int | None = None,
        expire_time: Timestamp | None = None,
        tags: Iterable[str] | None = None,
        update_mask: Iterable[str] | None = None,
        etag: str | None = None,
        valid_start_time: Timestamp | None = None,
        valid_end_time: Timestamp | None = None,
        note: str | None = None,
        held_for_review: bool | None = None,
        timeout: float | None = None,
    ) -> types.Memory:
        """Change some fields of a memory: those given (not None), or those
        ``update_mask`` names, where a field named but not given is cleared
        (``expire_time``: it stops expiring; ``tags``: none left; ``valid_start_time``
        or ``valid_end_time``: the fact's period is open at that end; ``note``: none).
        ``held_for_review=False`` approves a memory held for review (it reaches prompts and
        recall again); True holds one. Only manual memories change key, value or importance
        (else ReadOnlyMemory). With ``etag``, only if the memory has not changed since
        (else EtagMismatch)."""
        return await self._run(
            _ops.update_memory(
                memory_id,
                key=key,
                value=value,
                pinned=pinned,
                importance=importance,
                expire_time=expire_time,
                tags=tags,
                update_mask=update_mask,
                etag=etag,
                valid_start_time=valid_start_time,
                valid_end_time=valid_end_time,
                note=note,
                held_for_review=held_for_review,
            ),
            timeout,
        )

    async def pin_memory(
        self, memory_id: str, pinned: bool = True, *, timeout: float | None = None
    ) -> types.Memory:
        """Pin a memory of any source, or with ``pinned=False`` unpin it."""
        return await self._run(_ops.pin_memory(memory_id, pinned), timeout)

    async def delete_memory(
        self, memory_id: str, *, etag: str | None = None, timeout: float | None = None
    ) -> None:
        """Delete a memory; with ``etag``, only if it has not changed since."""
        return await self._run(_ops.delete_memory(memory_id, etag=etag), timeout)

    def list_memories(
        self,
        *,
        agent_id: str | None = None,
        workspace_id: str | None = None,
        page_size: int = 100,
        show_expired: bool = False,
        show_superseded: bool = False,
        filter: str = "",
        order_by: str = "",
        as_of_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> AsyncGenerator[types.Memory, None]:
        """Every memory of an agent or a workspace, fetching page after page; with
        ``show_expired`` also those that expired and are not deleted yet, with
        ``show_superseded`` also those another memory superseded. ``filter`` (AIP-160,
        e.g. ``'text:"deploy" (source = manual OR pinned = true)'``; AND, OR, NOT and
        parentheses, OR binding tighter than AND) keeps those that match; ``order_by``
        (fields of ``key``, ``importance``, ``created_at`` and ``updated_at`` separated
        by commas, each optionally followed by ``desc``) orders them. With
        ``as_of_time``, the memories as they were then."""
        return self._pages(
            _ops.list_memories(
                agent_id=agent_id,
                workspace_id=workspace_id,
                page_size=page_size,
                show_expired=show_expired,
                show_superseded=show_superseded,
                filter=filter,
                order_by=order_by,
                as_of_time=as_of_time,
            ),
            timeout,
        )

    async def list_memories_page(
        self,
        *,
        agent_id: str | None = None,
        workspace_id: str | None = None,
        page_size: int = 100,
        page_token: str = "",
        show_expired: bool = False,
        show_superseded: bool = False,
        filter: str = "",
        order_by: str = "",
        as_of_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.ListMemoriesResponse:
        """One page of :meth:`list_memories`, as the server answers it: the memories,
        ``next_page_token`` and ``total_size`` (how many match across all pages)."""
        return await self._run(
            _ops.list_memories_page(
                agent_id=agent_id,
                workspace_id=workspace_id,
                page_size=page_size,
                page_token=page_token,
                show_expired=show_expired,
                show_superseded=show_superseded,
                filter=filter,
                order_by=order_by,
                as_of_time=as_of_time,
            ),
            timeout,
        )

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
        conversation: memory_pb2.Conversation | types.Conversation | None = None,
        groundings: Iterable[memory_pb2.Grounding | types.Grounding] = (),
        supersedes: Iterable[str] = (),
        valid_start_time: Timestamp | None = None,
        valid_end_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.Memory:
        """Store a fact the agent decided to keep (source MEMORIZE); ``supersedes``
        names memories of the same owner that it updates or contradicts (ending their
        periods), ``valid_start_time`` and ``valid_end_time`` when the fact holds. The
        ``conversation`` and its ``groundings`` may be messages or records.
        ``memorize_result`` also says whether the call created the memory, and gives the
        memories it superseded as stored."""
        return await self._run(
            _ops.memorize(
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
                valid_start_time=valid_start_time,
                valid_end_time=valid_end_time,
            ),
            timeout,
        )

    async def memorize_result(
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
        conversation: memory_pb2.Conversation | types.Conversation | None = None,
        groundings: Iterable[memory_pb2.Grounding | types.Grounding] = (),
        supersedes: Iterable[str] = (),
        valid_start_time: Timestamp | None = None,
        valid_end_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.MemorizeResponse:
        """The same call as :meth:`memorize`, answering the whole response: ``.memory``,
        ``.created`` and ``.superseded``."""
        return await self._run(
            _ops.memorize(
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
                valid_start_time=valid_start_time,
                valid_end_time=valid_end_time,
            ).answering(types.MemorizeResponse),
            timeout,
        )

    async def record_learning(
        self, content: str, *, chain_agent_ids: Iterable[str], timeout: float | None = None
    ) -> types.Memory:
        """Store a director learning on the first agent of the chain (source DIRECTOR)."""
        return await self._run(
            _ops.record_learning(content, chain_agent_ids=chain_agent_ids), timeout
        )

    async def list_learnings(
        self,
        *,
        chain_agent_ids: Iterable[str],
        limit: int | None = None,
        timeout: float | None = None,
    ) -> list[types.Memory]:
        """The newest learnings of every agent of the chain, newest first (at most
        ``limit``; None: the server's default, 20)."""
        return await self._run(
            _ops.list_learnings(chain_agent_ids=chain_agent_ids, limit=limit), timeout
        )

    def list_memory_events(
        self, memory_id: str, *, page_size: int = 100, timeout: float | None = None
    ) -> AsyncGenerator[types.MemoryEvent, None]:
        """A memory's audit history, oldest first, fetching page after page; it outlives
        the memory's deletion."""
        return self._pages(_ops.list_memory_events(memory_id, page_size=page_size), timeout)

    async def get_agent_settings(
        self, agent_id: str, *, timeout: float | None = None
    ) -> types.AgentSettings:
        """An agent's memory settings; the defaults (all off) when never written."""
        return await self._run(_ops.get_agent_settings(agent_id), timeout)

    async def update_agent_settings(
        self,
        agent_id: str,
        *,
        memory_enabled: bool | None = None,
        active_memory_enabled: bool | None = None,
        review_decisions: bool | None = None,
        expiry_slide: timedelta | None = None,
        timeout: float | None = None,
    ) -> types.AgentSettings:
        """Turn an agent's switches on or off and set how far a use moves the expiry of
        its memories (``expiry_slide``, ``timedelta(0)`` turns it off): those given (not
        None) change, the others stay as they are."""
        return await self._run(
            _ops.update_agent_settings(
                agent_id,
                memory_enabled=memory_enabled,
                active_memory_enabled=active_memory_enabled,
                review_decisions=review_decisions,
                expiry_slide=expiry_slide,
            ),
            timeout,
        )

    async def get_workspace_settings(
        self, workspace_id: str, *, timeout: float | None = None
    ) -> types.WorkspaceSettings:
        """A workspace's memory settings; the defaults (all off) when never written."""
        return await self._run(_ops.get_workspace_settings(workspace_id), timeout)

    async def update_workspace_settings(
        self,
        workspace_id: str,
        *,
        expiry_slide: timedelta | None = None,
        timeout: float | None = None,
    ) -> types.WorkspaceSettings:
        """Set how far a use moves the expiry of the workspace's memories
        (``timedelta(0)`` turns it off); None leaves it as it is."""
        return await self._run(
            _ops.update_workspace_settings(workspace_id, expiry_slide=expiry_slide), timeout
        )

    async def extract_memories(
        self,
        agent_id: str,
        *,
        transcript: str,
        session_id: str | None = None,
        chain_id: str | None = None,
        workspace_id: str | None = None,
        queued: bool = False,
        timeout: float | None = None,
    ) -> types.ExtractMemoriesResponse:
        """Run one automatic extraction pass over a finished run's transcript, of a
        single run (``session_id``) or a chain of runs (``chain_id``): ``.outcome``,
        ``.written``, ``.dropped``, ``.usage``. With ``queued`` the pass runs later:
        read it with ``get_extraction_job(.job_id)``."""
        return await self._run(
            _ops.extract_memories(
                agent_id,
                transcript=transcript,
                session_id=session_id,
                chain_id=chain_id,
                workspace_id=workspace_id,
                queued=queued,
            ),
            timeout,
        )

    async def get_usage(
        self,
        *,
        synthetic_session_id_prefix: str = "",
        start_time: Timestamp | None = None,
        end_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.GetUsageResponse:
        """Recorded model usage (``.records``, oldest first) and its totals, of the
        synthetic session ids with this prefix, from ``start_time`` until before
        ``end_time``."""
        return await self._run(
            _ops.get_usage(
                synthetic_session_id_prefix=synthetic_session_id_prefix,
                start_time=start_time,
                end_time=end_time,
            ),
            timeout,
        )

    async def get_active_session(
        self, agent_id: str, *, timeout: float | None = None
    ) -> types.ActiveSession:
        """The model session the agent's next run resumes, with its runs since the last
        reset and the reset warning."""
        return await self._run(_ops.get_active_session(agent_id), timeout)

    async def record_run_session(
        self,
        agent_id: str,
        *,
        run_id: str,
        session_id_before: str = "",
        session_id_after: str = "",
        kind: RunKindName = "scheduled",
        render_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.ActiveSession:
        """Record a finished run with the session id it resumed and the one it ended
        with (empty when it failed); the same run again changes nothing. ``kind`` says
        what started it: only scheduled runs count toward the reset warning.
        ``render_time`` (its prompt's render's ``render_time``) is kept with the run, so
        the prompt can be rendered again as it was. Answers the agent's active session
        after it."""
        return await self._run(
            _ops.record_run_session(
                agent_id,
                run_id=run_id,
                session_id_before=session_id_before,
                session_id_after=session_id_after,
                kind=kind,
                render_time=render_time,
            ),
            timeout,
        )

    def list_agent_runs(
        self, agent_id: str, *, page_size: int = 100, timeout: float | None = None
    ) -> AsyncGenerator[types.AgentRun, None]:
        """Every recorded run of the agent, newest first: what started it, and the
        session ids before and after it."""
        return self._pages(_ops.list_agent_runs(agent_id, page_size=page_size), timeout)

    async def reset_active_session(
        self, agent_id: str, *, timeout: float | None = None
    ) -> types.ActiveSession:
        """Start the agent's next run clean: its session id is cleared and the runs
        since the last reset count from now."""
        return await self._run(_ops.reset_active_session(agent_id), timeout)

    async def forget_agent(
        self, agent_id: str, *, validate_only: bool = False, timeout: float | None = None
    ) -> types.ForgetCounts:
        """Forget an agent in the caller's tenant: its memories, blocks, settings,
        sessions, decisions and extraction passes. Answers what went, by kind; with
        ``validate_only``, what would go, and nothing changes."""
        return await self._run(_ops.forget_agent(agent_id, validate_only=validate_only), timeout)

    async def forget_workspace(
        self, workspace_id: str, *, validate_only: bool = False, timeout: float | None = None
    ) -> types.ForgetCounts:
        """Forget a workspace in the caller's tenant, as ``forget_agent`` an agent."""
        return await self._run(
            _ops.forget_workspace(workspace_id, validate_only=validate_only), timeout
        )

    async def forget_user(
        self, *, validate_only: bool = False, timeout: float | None = None
    ) -> types.ForgetCounts:
        """Forget the caller's own user: its blocks of every scope, with their versions
        and archival lines."""
        return await self._run(_ops.forget_user(validate_only=validate_only), timeout)

    async def get_conversation(
        self, conversation_id: str, *, provider: str = "", timeout: float | None = None
    ) -> types.Conversation:
        """The conversation snapshot Memorize kept, messages and raw events included;
        an empty ``provider`` is the one Memorize files a snapshot without one under."""
        return await self._run(_ops.get_conversation(conversation_id, provider=provider), timeout)

    def list_conversations(
        self,
        *,
        view: ConversationViewName = "basic",
        page_size: int = 100,
        timeout: float | None = None,
    ) -> AsyncGenerator[types.Conversation, None]:
        """Every conversation snapshot of the tenant, most recently updated first,
        fetching page after page; ``view="full"`` brings messages and raw events too,
        the default only their counts."""
        return self._pages(_ops.list_conversations(view=view, page_size=page_size), timeout)

    async def get_extraction_job(
        self, job_id: str, *, timeout: float | None = None
    ) -> types.ExtractionJob:
        """A queued extraction pass by the ``job_id`` ExtractMemories answered: its
        state, and once done what it wrote, dropped and cost."""
        return await self._run(_ops.get_extraction_job(job_id), timeout)

    async def get_block(
        self,
        label: BlockLabelName,
        *,
        agent_id: str | None = None,
        user_id: str | None = None,
        workspace_id: str | None = None,
        as_of_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.Block:
        """The user's block, with ``agent_id`` the agent's, or with ``workspace_id`` the
        workspace's (shared by the tenant's users); NotFound when absent. An orchestrator
        may read another user's with ``user_id``. With ``as_of_time``, the block as it
        was then."""
        return await self._run(
            _ops.get_block(
                label,
                agent_id=agent_id,
                user_id=user_id,
                workspace_id=workspace_id,
                as_of_time=as_of_time,
            ),
            timeout,
        )

    async def delete_block(
        self,
        label: BlockLabelName,
        *,
        agent_id: str | None = None,
        expected_updated_at: Timestamp | None = None,
        etag: str | None = None,
        workspace_id: str | None = None,
        timeout: float | None = None,
    ) -> None:
        """Delete a block (with ``workspace_id``, the workspace's) with its versions and
        archival lines; NotFound when absent. With ``expected_updated_at`` or ``etag`` (the
        block's, as read), only if nobody wrote it since (else BlockConflict)."""
        return await self._run(
            _ops.delete_block(
                label,
                agent_id=agent_id,
                expected_updated_at=expected_updated_at,
                etag=etag,
                workspace_id=workspace_id,
            ),
            timeout,
        )

    async def list_blocks(
        self,
        *,
        agent_id: str | None = None,
        user_id: str | None = None,
        workspace_id: str | None = None,
        timeout: float | None = None,
    ) -> list[types.Block]:
        """The user's blocks, and with ``agent_id`` the agent's too; with ``workspace_id``
        the workspace's (alone, or after the user's and the agent's with ``agent_id``). An
        orchestrator may read another user's with ``user_id``."""
        return await self._run(
            _ops.list_blocks(agent_id=agent_id, user_id=user_id, workspace_id=workspace_id), timeout
        )

    async def write_block(
        self,
        label: BlockLabelName,
        content: str,
        *,
        agent_id: str | None = None,
        expected_updated_at: Timestamp | None = None,
        etag: str | None = None,
        workspace_id: str | None = None,
        timeout: float | None = None,
    ) -> types.Block:
        """Replace a block's content (with ``workspace_id``, the workspace's, which the
        tenant's users share), compare-and-set: ``expected_updated_at`` is the
        ``updated_at`` last read (or ``etag`` the ``etag`` last read; ``"*"``: the block
        as it is now), or neither to create a block that must not exist yet. Raises
        BlockConflict (with the block's current ``updated_at`` and etag) when stale."""
        return await self._run(
            _ops.write_block(
                label,
                content,
                agent_id=agent_id,
                expected_updated_at=expected_updated_at,
                etag=etag,
                workspace_id=workspace_id,
            ),
            timeout,
        )

    def list_block_versions(
        self,
        label: BlockLabelName,
        *,
        agent_id: str | None = None,
        page_size: int = 100,
        user_id: str | None = None,
        workspace_id: str | None = None,
        timeout: float | None = None,
    ) -> AsyncGenerator[types.BlockVersion, None]:
        """The kept versions of the user's block (with ``agent_id``, the agent's; with
        ``workspace_id``, the workspace's), newest first, fetching page after page;
        NotFound when the block is absent. An orchestrator may read another user's with
        ``user_id``."""
        return self._pages(
            _ops.list_block_versions(
                label,
                agent_id=agent_id,
                page_size=page_size,
                user_id=user_id,
                workspace_id=workspace_id,
            ),
            timeout,
        )

    def recall(
        self,
        query: str,
        *,
        agent_id: str | None = None,
        workspace_id: str | None = None,
        limit: int | None = None,
        min_score: float | None = None,
        include_memories: bool = False,
        as_of_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> AsyncRecallStream:
        """Archival lines (and with ``include_memories`` memories, of the agent and
        of ``workspace_id``) ranked for ``query``, streamed best first; matches
        scoring under ``min_score`` are left out. With ``as_of_time``, what there was
        then, ranked by words."""
        return AsyncRecallStream(
            self._start_stream(
                _ops.recall(
                    query,
                    agent_id=agent_id,
                    workspace_id=workspace_id,
                    limit=limit,
                    min_score=min_score,
                    include_memories=include_memories,
                    as_of_time=as_of_time,
                ),
                timeout,
            )
        )

    async def get_recall_status(self, *, timeout: float | None = None) -> types.RecallStatus:
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
        archival_min_score: float | None = None,
        include_user_core: bool | None = None,
        include_agent_core: bool | None = None,
        include_recent_decisions: bool | None = None,
        recent_decisions_limit: int | None = None,
        include_workspace_core: bool | None = None,
        count_tokens: bool = False,
        as_of_time: Timestamp | None = None,
        timeout: float | None = None,
    ) -> types.RenderPromptResponse:
        """The memory part of the agent's system prompt for this run. The recent
        decisions are included as ``include_recent_decisions`` says, or, when it is
        None, as the agent's ``review_decisions`` setting says; with ``workspace_id``,
        the workspace's core block unless ``include_workspace_core`` is False; the
        user's and the agent's core blocks unless ``include_user_core`` or
        ``include_agent_core`` is False. ``archival_min_score`` is the floor of an
        archival reminder in AUTO mode; ``count_tokens`` counts each section's tokens.
        With ``as_of_time`` (a past render's ``render_time``), the prompt as it was
        then: the same bytes that render gave."""
        return await self._run(
            _ops.render_prompt(
                agent_id,
                workspace_id=workspace_id,
                user_message=user_message,
                persona=persona,
                archival_mode=archival_mode,
                archival_limit=archival_limit,
                archival_min_score=archival_min_score,
                include_user_core=include_user_core,
                include_agent_core=include_agent_core,
                include_recent_decisions=include_recent_decisions,
                recent_decisions_limit=recent_decisions_limit,
                include_workspace_core=include_workspace_core,
                count_tokens=count_tokens,
                as_of_time=as_of_time,
            ),
            timeout,
        )

    async def register_card_type(
        self,
        name: str,
        *,
        re_examinable: ReExaminableName = "never",
        actions: Iterable[str] = (),
        decision_actions: Iterable[str] = (),
        timeout: float | None = None,
    ) -> types.CardType:
        """Register a kind of decision card, or replace the one of this name: whether
        its decisions may be re-examined, the words a re-examination may suggest
        (``actions``) and those a decision may take (``decision_actions``); empty allows
        any uppercase word."""
        return await self._run(
            _ops.register_card_type(
                name,
                re_examinable=re_examinable,
                actions=actions,
                decision_actions=decision_actions,
            ),
            timeout,
        )

    async def register_card_type_result(
        self,
        name: str,
        *,
        re_examinable: ReExaminableName = "never",
        actions: Iterable[str] = (),
        decision_actions: Iterable[str] = (),
        timeout: float | None = None,
    ) -> types.RegisterCardTypeResponse:
        """The same call as :meth:`register_card_type`, answering the whole response:
        ``.card_type`` and ``.created``."""
        return await self._run(
            _ops.register_card_type(
                name,
                re_examinable=re_examinable,
                actions=actions,
                decision_actions=decision_actions,
            ).answering(types.RegisterCardTypeResponse),
            timeout,
        )

    async def record_decision(
        self,
        agent_id: str,
        *,
        run_id: str,
        card_type: str,
        action: str,
        summary: str,
        result: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> types.Decision:
        """Record one run's decision, OPEN, on a registered card type: its ``action`` in
        one uppercase word, a one-line ``summary`` and the run's structured ``result``
        (JSON-like values). The same run again with the same decision changes nothing."""
        return await self._run(
            _ops.record_decision(
                agent_id,
                run_id=run_id,
                card_type=card_type,
                action=action,
                summary=summary,
                result=result,
            ),
            timeout,
        )

    async def record_decision_result(
        self,
        agent_id: str,
        *,
        run_id: str,
        card_type: str,
        action: str,
        summary: str,
        result: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> types.RecordDecisionResponse:
        """The same call as :meth:`record_decision`, answering the whole response:
        ``.decision`` and ``.created``."""
        return await self._run(
            _ops.record_decision(
                agent_id,
                run_id=run_id,
                card_type=card_type,
                action=action,
                summary=summary,
                result=result,
            ).answering(types.RecordDecisionResponse),
            timeout,
        )

    async def get_decision(
        self, decision_id: str, *, timeout: float | None = None
    ) -> types.Decision:
        """One decision with its full result; NotFound when absent."""
        return await self._run(_ops.get_decision(decision_id), timeout)

    async def list_recent_decisions(
        self,
        agent_id: str,
        *,
        limit: int | None = None,
        include_result: bool = False,
        card_type: str = "",
        timeout: float | None = None,
    ) -> list[types.Decision]:
        """The agent's newest decisions first (of ``card_type`` only, when given), each
        with its ``compact`` line, and with ``include_result`` its full result.
        ``list_recent_decisions_result`` also gives the server time the lines' ages are
        measured from (``.as_of``)."""
        return await self._run(
            _ops.list_recent_decisions(
                agent_id, limit=limit, include_result=include_result, card_type=card_type
            ),
            timeout,
        )

    async def list_recent_decisions_result(
        self,
        agent_id: str,
        *,
        limit: int | None = None,
        include_result: bool = False,
        card_type: str = "",
        timeout: float | None = None,
    ) -> types.ListRecentDecisionsResponse:
        """The same call as :meth:`list_recent_decisions`, answering the whole response:
        ``.decisions`` and ``.as_of``."""
        return await self._run(
            _ops.list_recent_decisions(
                agent_id, limit=limit, include_result=include_result, card_type=card_type
            ).answering(types.ListRecentDecisionsResponse),
            timeout,
        )

    async def resolve_decision(
        self,
        decision_id: str,
        resolution_status: ResolutionStatusName = "resolved",
        *,
        timeout: float | None = None,
    ) -> types.Decision:
        """Set where a decision stands (``"resolved"``, ``"expired"`` or back to
        ``"open"``); its result never changes."""
        return await self._run(_ops.resolve_decision(decision_id, resolution_status), timeout)

    async def record_reexamination(
        self,
        decision_id: str,
        *,
        run_id: str,
        conviction_score: int,
        notes: str,
        suggested_action: str,
        timeout: float | None = None,
    ) -> types.Reexamination:
        """Record a later run's fresh read on a decision: a ``conviction_score`` from 0
        (invalidated) to 100 (confirmed), one sentence of ``notes`` and an advisory
        ``suggested_action``. The decision itself never changes."""
        return await self._run(
            _ops.record_reexamination(
                decision_id,
                run_id=run_id,
                conviction_score=conviction_score,
                notes=notes,
                suggested_action=suggested_action,
            ),
            timeout,
        )

    async def record_reexamination_result(
        self,
        decision_id: str,
        *,
        run_id: str,
        conviction_score: int,
        notes: str,
        suggested_action: str,
        timeout: float | None = None,
    ) -> types.RecordReexaminationResponse:
        """The same call as :meth:`record_reexamination`, answering the whole response:
        ``.reexamination`` and ``.created``."""
        return await self._run(
            _ops.record_reexamination(
                decision_id,
                run_id=run_id,
                conviction_score=conviction_score,
                notes=notes,
                suggested_action=suggested_action,
            ).answering(types.RecordReexaminationResponse),
            timeout,
        )

    async def list_reexaminations(
        self, decision_id: str, *, timeout: float | None = None
    ) -> list[types.Reexamination]:
        """A decision's re-examinations, its conviction history, oldest first."""
        return await self._run(_ops.list_reexaminations(decision_id), timeout)

    async def render_reexamination_prompt(
        self, decision_id: str, *, timeout: float | None = None
    ) -> types.RenderReexaminationPromptResponse:
        """The prompt of a fresh run that re-examines a decision (``.prompt``), with the
        words its suggested action may take (``.allowed_actions``, empty for any)."""
        return await self._run(_ops.render_reexamination_prompt(decision_id), timeout)
