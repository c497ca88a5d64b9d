"""Recall and prompt rendering use cases."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from datetime import datetime
from typing import TypeVar

from agent_memory.config import Settings
from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockScope
from agent_memory.domain.decisions import Decision, compact_line, recent_limit
from agent_memory.domain.errors import Timeout, Unavailable
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import MemoryLine, MemoryRows, Owner, Scope
from agent_memory.domain.recall import (
    DEFAULT_LIMIT,
    DEFAULT_REMINDER_MIN_SCORE,
    ArchivalMode,
    PromptRead,
    PromptState,
    RankQuery,
    RecallMatch,
    RecallQuery,
    RenderRequest,
)
from agent_memory.embed import Embedder, usable
from agent_memory.render import prompt
from agent_memory.store.repositories import Store, Tx

log = logging.getLogger(__name__)
T = TypeVar("T")


class Recall:
    def __init__(
        self, store: Store, settings: Settings, *, embedder: Embedder | None = None
    ) -> None:
        self._store = store
        self._agent_cap = settings.render_agent_memory_cap
        self._workspace_cap = settings.render_workspace_memory_cap
        self._embedder = embedder
        self._weight = settings.embedding_weight
        self._vectors: bool | None = None  # None: not known yet
        self._vectors_lock = asyncio.Lock()

    async def _vectors_ready(self, principal: Principal) -> bool:
        """Whether recall can compare embeddings (pgvector is installed): asked once.
        When it cannot, recall stays lexical and the log says why, once."""
        if self._embedder is None:
            return False
        if self._vectors is None:
            async with self._vectors_lock:
                if self._vectors is None:
                    try:
                        async with self._store.connection(principal) as tx:
                            self._vectors = await tx.recall.vectors_available()
                    except (Unavailable, Timeout):
                        return False  # the database is out of reach: ask next time
                    if not self._vectors:
                        log.warning("recall stays lexical: this database has no pgvector")
        return self._vectors

    async def _embed_query(self, principal: Principal, query: str) -> list[float] | None:
        """The query's embedding when recall can use it; ``None`` means lexical only.

        Called before any connection is taken: none is held across a network call.
        """
        if self._embedder is None or not query.strip() or not await self._vectors_ready(principal):
            return None
        try:
            vectors = await self._embedder.embed([query])
        except Exception as exc:
            log.warning("recall is lexical for this query: the embedder failed: %s", exc)
            return None
        if not usable(vectors, 1):
            log.warning("recall is lexical for this query: the embedder's vector is unusable")
            return None
        return vectors[0]

    def _rank_query(
        self,
        *,
        agent_id: str,
        query: str,
        limit: int,
        min_score: float | None,
        embedding: list[float] | None,
        include_memories: bool = False,
        workspace_id: str | None = None,
    ) -> RankQuery:
        return RankQuery(
            agent_id=agent_id,
            query=query,
            limit=limit,
            min_score=min_score or 0.0,
            include_memories=include_memories,
            workspace_id=workspace_id or "",
            embedding=embedding,
            weight=self._weight,
        )

    async def recall(self, principal: Principal, query: RecallQuery) -> AsyncIterator[RecallMatch]:
        """Matches from the caller's user archival block and the agent's archival block
        (and memories when asked), best first. Every match is read before the first is
        yielded, and the connection is back in the pool by then: a slow reader holds
        nothing.

        Raises:
            InvalidArgument: a malformed query.
        """
        q = query.validated()
        embedding = await self._embed_query(principal, q.query)
        ranked = self._rank_query(
            agent_id=q.agent_id,
            query=q.query,
            limit=q.limit,
            min_score=q.min_score,
            embedding=embedding,
            include_memories=q.include_memories,
            workspace_id=q.workspace_id,
        )
        async with self._store.connection(principal) as tx:
            matches = await tx.recall.rank(ranked)
        for match in matches:
            yield match

    async def render(
        self, principal: Principal, request: RenderRequest
    ) -> tuple[prompt.Rendered, list[str]]:
        """The memory part of the system prompt, read in one round trip.

        When that read fails, each section is read on its own: a section whose read
        fails is left out and named in the warnings, and the render still succeeds.

        Raises:
            InvalidArgument: a malformed request.
        """
        request.validate()
        policy = request.policy
        archival = None
        if policy.archival_mode is ArchivalMode.AUTO and request.user_message.strip():
            archival = self._rank_query(
                agent_id=request.agent_id,
                query=request.user_message,
                limit=policy.archival_limit or DEFAULT_LIMIT,
                min_score=DEFAULT_REMINDER_MIN_SCORE
                if policy.archival_min_score is None
                else policy.archival_min_score,
                embedding=await self._embed_query(principal, request.user_message),
            )
        read = PromptRead(
            agent_id=request.agent_id,
            workspace_id=request.workspace_id,
            user_core=policy.include_user_core,
            agent_core=policy.include_agent_core,
            agent_cap=self._agent_cap,
            workspace_cap=self._workspace_cap,
            decisions_limit=recent_limit(policy.recent_decisions_limit)
            if policy.include_recent_decisions
            else None,
            archival=archival,
        )
        warnings: list[str] = []
        try:
            async with self._store.connection(principal) as tx:
                try:
                    state = await tx.prompts.read(read)
                except Unavailable:
                    raise
                except Timeout as exc:
                    if read.archival is None:
                        raise
                    # The ranking is what takes time: read the rest without it, once.
                    log.warning("render: archival left out: %s", exc)
                    warnings.append("archival: left out, it could not be read (Timeout)")
                    state = await tx.prompts.read(replace(read, archival=None))
                except Exception as exc:
                    log.info("render: reading section by section: %s", exc)
                    state = await _read_sections(tx, read, warnings)
        except Unavailable as exc:
            log.warning("render: every memory section left out: %s", exc)
            warnings = [f"memory: left out, the database is unavailable ({exc.reason})"]
            state = PromptState()
        return prompt.render(_render_input(request.persona, state)), warnings


def _render_input(persona: str, state: PromptState) -> prompt.RenderInput:
    decisions = None
    if state.decisions is not None and state.now is not None:
        decisions = [compact_line(d, state.now) for d in state.decisions]
    return prompt.RenderInput(
        persona=persona,
        user_core=state.user_core,
        agent_core=state.agent_core,
        agent_memory=state.agent_memory,
        workspace_memory=state.workspace_memory,
        recent_decisions=decisions,
        archival=state.archival,
    )


async def _read_sections(tx: Tx, read: PromptRead, warnings: list[str]) -> PromptState:
    """Each part of the render on its own; one whose read fails is left out with a warning.

    Raises:
        Unavailable: the database dropped the connection (no section can be read).
    """

    async def section(name: str, reading: Callable[[], Awaitable[T]]) -> T | None:
        try:
            return await reading()
        except Unavailable:
            raise
        except Exception as exc:
            log.warning("render: %s left out: %s", name, exc)
            warnings.append(f"{name}: left out, it could not be read ({type(exc).__name__})")
            return None

    async def core(key: BlockKey) -> str | None:
        block = await tx.blocks.get(key)
        return block.content if block else None

    async def rows(owner: Owner, cap: int) -> MemoryRows:
        found = await tx.memories.list_page(owner, after=None, limit=cap)
        total = await tx.memories.count(owner) if len(found) == cap else len(found)
        lines = [MemoryLine.of(m) for m in found]
        return MemoryRows(rows=lines, left_out=max(total - len(found), 0))

    async def agent_memory() -> MemoryRows | None:
        if not (await tx.agents.get(read.agent_id)).memory_enabled:
            return None
        return await rows(Owner(Scope.AGENT, read.agent_id), read.agent_cap)

    user_core = agent_core = None
    if read.user_core:
        user_core = await section(
            prompt.USER_CORE, lambda: core(BlockKey(BlockLabel.CORE, BlockScope.USER))
        )
    if read.agent_core:
        agent_core = await section(
            prompt.AGENT_CORE,
            lambda: core(BlockKey(BlockLabel.CORE, BlockScope.AGENT, read.agent_id)),
        )
    agent_rows = await section(prompt.AGENT_MEMORY, agent_memory)
    workspace_rows = None
    if read.workspace_id is not None:
        owner = Owner(Scope.WORKSPACE, read.workspace_id)
        workspace_rows = await section(
            prompt.WORKSPACE_MEMORY, lambda: rows(owner, read.workspace_cap)
        )

    async def recent_decisions(limit: int) -> tuple[list[Decision], datetime]:
        found = await tx.decisions.recent(read.agent_id, limit=limit, with_result=False)
        return found, await tx.clock.now()

    decisions, now = None, None
    if read.decisions_limit is not None:
        limit = read.decisions_limit
        found = await section(prompt.RECENT_DECISIONS, lambda: recent_decisions(limit))
        if found is not None:
            decisions, now = found
    archival: list[RecallMatch] = []
    if read.archival is not None:
        ranking = read.archival
        archival = await section("archival", lambda: tx.recall.rank(ranking)) or []
    return PromptState(
        now=now,
        user_core=user_core,
        agent_core=agent_core,
        agent_memory=agent_rows,
        workspace_memory=workspace_rows,
        decisions=decisions,
        archival=archival,
    )
