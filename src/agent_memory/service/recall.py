"""Recall and prompt rendering use cases."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from agent_memory.config import Settings
from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockScope
from agent_memory.domain.decisions import compact_line, recent_limit
from agent_memory.domain.errors import Timeout, Unavailable
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import Owner, Scope
from agent_memory.domain.recall import (
    DEFAULT_LIMIT,
    ArchivalMode,
    RecallMatch,
    RecallQuery,
    RenderRequest,
)
from agent_memory.embed import Embedder, usable
from agent_memory.render import prompt
from agent_memory.store import agents as agent_store
from agent_memory.store import blocks as block_store
from agent_memory.store import clock
from agent_memory.store import decisions as decision_store
from agent_memory.store import memories as memory_store
from agent_memory.store import recall as recall_store
from agent_memory.store.database import Database

log = logging.getLogger(__name__)
T = TypeVar("T")


class Recall:
    def __init__(
        self, db: Database, settings: Settings, *, embedder: Embedder | None = None
    ) -> None:
        self._db = db
        self._agent_cap = settings.render_agent_memory_cap
        self._workspace_cap = settings.render_workspace_memory_cap
        self._embedder = embedder
        self._weight = settings.embedding_weight
        self._vector: bool | None = None  # None: not known yet
        self._vector_lock = asyncio.Lock()

    async def _vector_ready(self) -> bool:
        """Whether recall can compare embeddings: decided once, installing pgvector
        on first use. When it cannot, recall stays lexical and the log says why once."""
        if self._embedder is None:
            return False
        if self._vector is None:
            async with self._vector_lock:
                if self._vector is None:
                    ready = await self._install_pgvector()
                    if ready is None:
                        return False  # the database is out of reach: decide next time
                    self._vector = ready
        return self._vector

    async def _install_pgvector(self) -> bool | None:
        try:
            async with self._db.transaction() as session:
                if not await recall_store.pgvector_available(session):
                    log.warning("recall stays lexical: this PostgreSQL has no pgvector")
                    return False
                if not await recall_store.pgvector_installed(session):
                    await recall_store.install_pgvector(session)
            return True
        except (Unavailable, Timeout):
            return None
        except Exception as exc:
            # Another replica may have installed it at the same moment.
            try:
                async with self._db.transaction() as session:
                    if await recall_store.pgvector_installed(session):
                        return True
            except Exception:
                pass
            log.warning("recall stays lexical: pgvector could not be installed: %s", exc)
            return False

    async def _embed_query(self, query: str) -> list[float] | None:
        """The query's embedding when recall can use it; ``None`` means lexical only.

        Called before any transaction opens: none is held across a network call.
        """
        if self._embedder is None or not query.strip() or not await self._vector_ready():
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

    async def recall(self, principal: Principal, query: RecallQuery) -> AsyncIterator[RecallMatch]:
        """Matches from the caller's user archival block and the agent's archival block
        (and memories when asked), best first, as they are produced.

        Raises:
            InvalidArgument: a malformed query.
        """
        q = query.validated()
        embedding = await self._embed_query(q.query)
        async with self._db.transaction() as session:
            async for match in recall_store.rank(
                session,
                tenant_id=principal.tenant_id,
                user_id=principal.user_id,
                agent_id=q.agent_id,
                query=q.query,
                limit=q.limit,
                min_score=q.min_score or 0.0,
                include_memories=q.include_memories,
                workspace_id=q.workspace_id,
                query_embedding=embedding,
                embedding_weight=self._weight,
            ):
                yield match

    async def render(
        self, principal: Principal, request: RenderRequest
    ) -> tuple[prompt.Rendered, list[str]]:
        """The memory part of the system prompt. A section whose read fails is left out
        and named in the warnings; the render itself still succeeds.

        Every section is read over one connection; a failed read is rolled back so it
        cannot spoil the others.

        Raises:
            InvalidArgument: a malformed request.
        """
        request.validate()
        warnings: list[str] = []
        embedding = None
        if request.policy.archival_mode is ArchivalMode.AUTO:
            embedding = await self._embed_query(request.user_message)
        try:
            async with self._db.reads() as session:
                data = await self._read_sections(session, principal, request, warnings, embedding)
        except Unavailable as exc:
            log.warning("render: every memory section left out: %s", exc)
            warnings = [f"memory: left out, the database is unavailable ({exc.reason})"]
            data = prompt.RenderInput(persona=request.persona)
        return prompt.render(data), warnings

    async def _read_sections(
        self,
        session: AsyncSession,
        principal: Principal,
        request: RenderRequest,
        warnings: list[str],
        embedding: list[float] | None,
    ) -> prompt.RenderInput:
        policy = request.policy
        tenant, user = principal.tenant_id, principal.user_id

        async def section(name: str, read: Callable[[], Awaitable[T]]) -> T | None:
            try:
                return await read()
            except Exception as exc:
                # The failed statement spoiled the transaction: roll it back, and the
                # next section's statement starts a fresh one.
                await session.rollback()
                log.warning("render: %s left out: %s", name, exc)
                warnings.append(f"{name}: left out, it could not be read ({type(exc).__name__})")
                return None

        async def core(key: BlockKey) -> str | None:
            block = await block_store.get(session, tenant_id=tenant, user_id=user, key=key)
            return block.content if block else None

        async def rows(owner: Owner, cap: int) -> prompt.MemoryRows:
            found = await memory_store.list_page(
                session, tenant_id=tenant, owner=owner, after=None, limit=cap
            )
            total = len(found)
            if total == cap:
                total = await memory_store.count(session, tenant_id=tenant, owner=owner)
            return prompt.MemoryRows(rows=found, left_out=max(total - len(found), 0))

        async def agent_memory() -> prompt.MemoryRows | None:
            settings = await agent_store.get(session, tenant_id=tenant, agent_id=request.agent_id)
            if not settings.memory_enabled:
                return None
            return await rows(Owner(Scope.AGENT, request.agent_id), self._agent_cap)

        async def recent_decisions() -> list[str]:
            now = await clock.now(session)
            found = await decision_store.recent_decisions(
                session,
                tenant_id=tenant,
                agent_id=request.agent_id,
                limit=recent_limit(policy.recent_decisions_limit),
                with_result=False,
            )
            return [compact_line(d, now) for d in found]

        async def archival() -> list[RecallMatch]:
            return [
                m
                async for m in recall_store.rank(
                    session,
                    tenant_id=tenant,
                    user_id=user,
                    agent_id=request.agent_id,
                    query=request.user_message,
                    limit=policy.archival_limit or DEFAULT_LIMIT,
                    min_score=policy.archival_min_score or 0.0,
                    include_memories=False,
                    workspace_id=None,
                    query_embedding=embedding,
                    embedding_weight=self._weight,
                )
            ]

        user_core = agent_core = None
        if policy.include_user_core:
            user_core = await section(
                prompt.USER_CORE, lambda: core(BlockKey(BlockLabel.CORE, BlockScope.USER))
            )
        if policy.include_agent_core:
            agent_core = await section(
                prompt.AGENT_CORE,
                lambda: core(BlockKey(BlockLabel.CORE, BlockScope.AGENT, request.agent_id)),
            )
        agent_rows = await section(prompt.AGENT_MEMORY, agent_memory)
        workspace_rows = None
        if request.workspace_id is not None:
            owner = Owner(Scope.WORKSPACE, request.workspace_id)
            workspace_rows = await section(
                prompt.WORKSPACE_MEMORY, lambda: rows(owner, self._workspace_cap)
            )
        decisions = None
        if policy.include_recent_decisions:
            decisions = await section(prompt.RECENT_DECISIONS, recent_decisions)
        matches: list[RecallMatch] = []
        if policy.archival_mode is ArchivalMode.AUTO and request.user_message.strip():
            matches = await section("archival", archival) or []
        return prompt.RenderInput(
            persona=request.persona,
            user_core=user_core,
            agent_core=agent_core,
            agent_memory=agent_rows,
            workspace_memory=workspace_rows,
            recent_decisions=decisions,
            archival=matches,
        )
