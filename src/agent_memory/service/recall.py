"""Recall and prompt rendering use cases."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from agent_memory.config import Settings
from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockScope
from agent_memory.domain.decisions import compact_line, recent_limit
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import Owner, Scope
from agent_memory.domain.recall import (
    DEFAULT_LIMIT,
    ArchivalMode,
    RecallMatch,
    RecallQuery,
    RenderRequest,
)
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
    def __init__(self, db: Database, settings: Settings) -> None:
        self._db = db
        self._agent_cap = settings.render_agent_memory_cap
        self._workspace_cap = settings.render_workspace_memory_cap

    async def recall(self, principal: Principal, query: RecallQuery) -> AsyncIterator[RecallMatch]:
        """Matches from the caller's user archival block and the agent's archival block
        (and memories when asked), best first, as they are produced.

        Raises:
            InvalidArgument: a malformed query.
        """
        q = query.validated()
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
            ):
                yield match

    async def render(
        self, principal: Principal, request: RenderRequest
    ) -> tuple[prompt.Rendered, list[str]]:
        """The memory part of the system prompt. A section whose read fails is left out
        and named in the warnings; the render itself still succeeds.

        Raises:
            InvalidArgument: a malformed request.
        """
        request.validate()
        policy = request.policy
        warnings: list[str] = []

        async def section(name: str, read: Callable[[], Awaitable[T]]) -> T | None:
            try:
                return await read()
            except Exception as exc:
                log.warning("render: %s left out: %s", name, exc)
                warnings.append(f"{name}: left out, it could not be read ({type(exc).__name__})")
                return None

        user_core = agent_core = None
        if policy.include_user_core:
            user_core = await section(
                prompt.USER_CORE,
                lambda: self._core(principal, BlockKey(BlockLabel.CORE, BlockScope.USER)),
            )
        if policy.include_agent_core:
            agent_core = await section(
                prompt.AGENT_CORE,
                lambda: self._core(
                    principal, BlockKey(BlockLabel.CORE, BlockScope.AGENT, request.agent_id)
                ),
            )
        agent_memory = await section(
            prompt.AGENT_MEMORY, lambda: self._agent_memory(principal, request.agent_id)
        )
        workspace_memory = None
        if request.workspace_id is not None:
            owner = Owner(Scope.WORKSPACE, request.workspace_id)
            workspace_memory = await section(
                prompt.WORKSPACE_MEMORY,
                lambda: self._rows(principal, owner, self._workspace_cap),
            )
        recent_decisions = None
        if policy.include_recent_decisions:
            recent_decisions = await section(
                prompt.RECENT_DECISIONS,
                lambda: self._recent_decisions(
                    principal, request.agent_id, policy.recent_decisions_limit
                ),
            )
        archival: list[RecallMatch] = []
        if policy.archival_mode is ArchivalMode.AUTO and request.user_message.strip():
            query = RecallQuery(
                query=request.user_message,
                agent_id=request.agent_id,
                limit=policy.archival_limit or DEFAULT_LIMIT,
                min_score=policy.archival_min_score,
            )
            found = await section("archival", lambda: self._collect(self.recall(principal, query)))
            archival = found or []
        rendered = prompt.render(
            prompt.RenderInput(
                persona=request.persona,
                user_core=user_core,
                agent_core=agent_core,
                agent_memory=agent_memory,
                workspace_memory=workspace_memory,
                recent_decisions=recent_decisions,
                archival=archival,
            )
        )
        return rendered, warnings

    async def _core(self, principal: Principal, key: BlockKey) -> str | None:
        async with self._db.transaction() as session:
            block = await block_store.get(
                session, tenant_id=principal.tenant_id, user_id=principal.user_id, key=key
            )
        return block.content if block else None

    async def _agent_memory(self, principal: Principal, agent_id: str) -> prompt.MemoryRows | None:
        async with self._db.transaction() as session:
            settings = await agent_store.get(
                session, tenant_id=principal.tenant_id, agent_id=agent_id
            )
        if not settings.memory_enabled:
            return None
        return await self._rows(principal, Owner(Scope.AGENT, agent_id), self._agent_cap)

    async def _rows(self, principal: Principal, owner: Owner, cap: int) -> prompt.MemoryRows:
        async with self._db.transaction() as session:
            rows = await memory_store.list_page(
                session, tenant_id=principal.tenant_id, owner=owner, after=None, limit=cap
            )
            total = (
                await memory_store.count(session, tenant_id=principal.tenant_id, owner=owner)
                if len(rows) == cap
                else len(rows)
            )
        return prompt.MemoryRows(rows=rows, left_out=max(total - len(rows), 0))

    async def _recent_decisions(self, principal: Principal, agent_id: str, limit: int) -> list[str]:
        """Compact review lines, ``2d ago · WAIT · range unresolved``, newest first."""
        async with self._db.transaction() as session:
            now = await clock.now(session)
            found = await decision_store.recent_decisions(
                session,
                tenant_id=principal.tenant_id,
                agent_id=agent_id,
                limit=recent_limit(limit),
                with_result=False,
            )
        return [compact_line(d, now) for d in found]

    @staticmethod
    async def _collect(matches: AsyncIterator[RecallMatch]) -> list[RecallMatch]:
        return [m async for m in matches]
