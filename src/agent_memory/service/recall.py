"""Recall and prompt rendering use cases."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import TypeVar

from agent_memory.config import Settings
from agent_memory.domain.agents import AgentSettings
from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockScope
from agent_memory.domain.decisions import recent_limit
from agent_memory.domain.errors import Timeout, Unavailable
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import MemoryLine, MemoryRows, Owner, Scope, utc_day
from agent_memory.domain.memory_query import SHOWN
from agent_memory.domain.recall import (
    DEFAULT_LIMIT,
    DEFAULT_REMINDER_MIN_SCORE,
    DEFAULT_REMINDER_MIN_WORDS,
    ArchivalMode,
    LexicalPart,
    PromptRead,
    PromptState,
    RankQuery,
    RecallMatch,
    RecallMode,
    RecallQuery,
    RecallStatus,
    RenderRequest,
)
from agent_memory.embed import HOW_TO_GET_MEANING, NONE, NOT_INSTALLED, Embedder, chosen
from agent_memory.render import prompt
from agent_memory.service.meaning import QuerySide, Searched
from agent_memory.store.repositories import Store, Tx
from agent_memory.telemetry.metrics import Metrics

log = logging.getLogger(__name__)
T = TypeVar("T")


class Recall:
    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self._store = store
        self._metrics = metrics or Metrics()
        self._settings = settings
        self._embedder = embedder
        self._agent_cap = settings.render_agent_memory_cap
        self._workspace_cap = settings.render_workspace_memory_cap
        self._query_side = (
            QuerySide(embedder, weight=settings.embedding_weight) if embedder else None
        )
        self._vectors: bool | None = None  # None: not known yet
        self._vectors_lock = asyncio.Lock()

    async def status(self, principal: Principal) -> RecallStatus:
        """How recall ranks on this server, and why; by meaning, how indexing stands for
        the caller's tenant (left out while the database cannot say)."""
        meaning = await self.by_meaning(principal)
        status = recall_status(self._settings, self._embedder, pgvector=self._vectors)
        if not meaning or self._embedder is None:
            return status
        try:
            async with self._store.reading(principal) as tx:
                indexing = await tx.recall.indexing(self._embedder.model)
        except (Unavailable, Timeout) as exc:
            log.info("indexing status left out: %s", exc)
            return status
        return replace(status, indexing=indexing)

    async def by_meaning(self, principal: Principal) -> bool:
        """Whether recall ranks by meaning too: an embedder, and pgvector to compare its
        vectors (asked once). When there is no pgvector, the log says so, once."""
        if self._query_side is None:
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

    def _rank_query(
        self,
        *,
        agent_id: str,
        query: str,
        limit: int,
        min_score: float | None,
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
            scan=self._settings.recall_scan_rows,
            cap=self._settings.recall_candidates,
        )

    async def recall(self, principal: Principal, query: RecallQuery) -> AsyncIterator[RecallMatch]:
        """Matches from the caller's user archival block, the agent's archival block and
        the workspace's (when the query names one), and memories when asked, best
        first. Every match is read before the first is yielded, and the connection is
        back in the pool by then: a slow reader holds nothing.

        Raises:
            InvalidArgument: a malformed query.
        """
        q = query.validated()
        ranked = self._rank_query(
            agent_id=q.agent_id,
            query=q.query,
            limit=q.limit,
            min_score=q.min_score,
            include_memories=q.include_memories,
            workspace_id=q.workspace_id,
        )
        if q.as_of is not None:
            # The past is searched by words: the lines of then have no vectors kept.
            async with self._store.reading(principal, as_of=q.as_of) as tx:
                matches = await tx.recall.rank(ranked)
            mode = RecallMode.LEXICAL
        elif await self.by_meaning(principal):
            matches, mode = await self._rank_by_meaning(principal, ranked)
        else:
            async with self._store.reading(principal) as tx:
                matches = await tx.recall.rank(ranked)
                unmarked = tx.standby
            if unmarked:
                await self._mark_used(principal, [m.memory_id for m in matches])
            mode = RecallMode.LEXICAL
        self._metrics.recall_ranked(mode.value)
        for match in matches:
            yield match

    async def _mark_used(self, principal: Principal, ids: list[uuid.UUID | None]) -> None:
        """Record on the primary that memories a standby read returned reached a model:
        a hint, so a failure costs the caller nothing but a line in the log."""
        found = [i for i in ids if i is not None]
        if not found:
            return
        try:
            async with self._store.connection(principal) as tx:
                await tx.memories.mark_used(found)
        except (Unavailable, Timeout) as exc:
            log.info("could not record the use of %d memories: %s", len(found), exc)

    async def _rank_by_meaning(
        self, principal: Principal, ranked: RankQuery
    ) -> tuple[list[RecallMatch], RecallMode]:
        """The lexical half runs while the query is embedded; then one statement fuses
        both (by words alone when the embedder failed: the mode says which). No
        connection is held while the embedding is awaited."""
        assert self._query_side is not None
        searched = _searched(principal, ranked.agent_id, ranked.workspace_id)
        started = self._query_side.start(searched, ranked.query)
        try:
            async with self._store.reading(principal) as tx:
                lexical = await tx.recall.lexical(ranked)
            return await self._fused(principal, searched, ranked, lexical, started)
        finally:
            if started is not None and not started.done():
                started.cancel()

    async def _fused(
        self,
        principal: Principal,
        searched: Searched,
        ranked: RankQuery,
        lexical: LexicalPart,
        started: asyncio.Task[list[float] | None] | None,
    ) -> tuple[list[RecallMatch], RecallMode]:
        """The ranking by words and meaning, from its lexical half and the query's
        embedding (``started`` when it was begun); by words when the embedder failed."""
        assert self._query_side is not None
        meaning = await self._query_side.finish(searched, ranked.query, lexical.speakers, started)
        async with self._store.reading(principal) as tx:
            if meaning is None:
                matches = await tx.recall.rank(ranked)
            else:
                matches = await tx.recall.fuse(ranked, lexical, meaning)
            unmarked = tx.standby
        if unmarked:
            await self._mark_used(principal, [m.memory_id for m in matches])
        return matches, RecallMode.LEXICAL if meaning is None else RecallMode.HYBRID

    async def render(
        self, principal: Principal, request: RenderRequest
    ) -> tuple[prompt.Rendered, list[str], datetime]:
        """The memory part of the system prompt, read in one round trip (and, when recall
        ranks by meaning and the policy pushes archival lines, a second for them), with
        the instant whose memory it shows: rendered as of that instant, the same bytes
        come back (but for what has since expired or been forgotten). As of an instant,
        archival reminders are ranked by words.

        When that read fails, each section is read on its own: a section whose read
        fails is left out and named in the warnings, and the render still succeeds.

        Raises:
            InvalidArgument: a malformed request.
        """
        request.validate()
        policy = request.policy
        archival = None
        if policy.archival_mode is ArchivalMode.AUTO and request.user_message.strip():
            # A reminder arrives unasked and is shown alone: a line must earn its place by
            # itself, by words and meaning (or by words alone where it has no vector).
            floor = policy.archival_min_score
            archival = replace(
                self._rank_query(
                    agent_id=request.agent_id,
                    query=request.user_message,
                    limit=policy.archival_limit or DEFAULT_LIMIT,
                    min_score=0.0,
                    workspace_id=request.workspace_id,
                ),
                min_own=DEFAULT_REMINDER_MIN_SCORE if floor is None else floor,
                min_own_words=DEFAULT_REMINDER_MIN_WORDS if floor is None else floor,
            )
        by_meaning = (
            archival is not None and request.as_of is None and await self.by_meaning(principal)
        )
        read = PromptRead(
            agent_id=request.agent_id,
            workspace_id=request.workspace_id,
            user_core=policy.include_user_core,
            agent_core=policy.include_agent_core,
            workspace_core=policy.include_workspace_core and request.workspace_id is not None,
            agent_cap=self._agent_cap,
            workspace_cap=self._workspace_cap,
            decisions_limit=recent_limit(policy.recent_decisions_limit)
            if policy.include_recent_decisions is not False
            else None,
            decisions_if_reviewed=policy.include_recent_decisions is None,
            archival=archival,
            archival_lexical=by_meaning,
            archival_hint=policy.archival_mode is ArchivalMode.TOOL_ONLY,
        )
        searched = _searched(principal, request.agent_id, request.workspace_id or "")
        started = None
        if by_meaning:
            assert self._query_side is not None
            started = self._query_side.start(searched, request.user_message)
        try:
            state, warnings = await self._read(principal, read, request.as_of)
            if state.archival_lexical is not None and archival is not None:
                state = await self._fuse_archival(
                    principal, searched, archival, state, started, warnings
                )
        finally:
            if started is not None and not started.done():
                started.cancel()
        render_time = state.read_at or request.as_of or datetime.now(UTC)
        rendered = prompt.render(_render_input(principal, request, state, render_time))
        return rendered, warnings, render_time

    async def _read(
        self, principal: Principal, read: PromptRead, as_of: datetime | None = None
    ) -> tuple[PromptState, list[str]]:
        warnings: list[str] = []
        if as_of is not None:
            # A past render reads what it can or fails: nothing is left out quietly.
            async with self._store.reading(principal, as_of=as_of) as tx:
                return await tx.prompts.read(read), warnings
        try:
            async with self._store.reading(principal) as tx:
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
        if state.unmarked:
            await self._mark_used(principal, list(state.unmarked))
        return state, warnings

    async def _fuse_archival(
        self,
        principal: Principal,
        searched: Searched,
        archival: RankQuery,
        state: PromptState,
        started: asyncio.Task[list[float] | None] | None,
        warnings: list[str],
    ) -> PromptState:
        """The archival reminders ranked by meaning too, from the lexical half the read
        brought; left out with a warning when they cannot be read."""
        assert state.archival_lexical is not None
        try:
            found, _ = await self._fused(
                principal, searched, archival, state.archival_lexical, started
            )
        except Exception as exc:
            log.warning("render: archival left out: %s", exc)
            warnings.append(f"archival: left out, it could not be read ({type(exc).__name__})")
            found = []
        return replace(state, archival=found, archival_lexical=None)


def _searched(principal: Principal, agent_id: str, workspace_id: str) -> Searched:
    """The blocks a ranking searches: the caller's, the agent's of the caller, and the
    workspace's (empty: none)."""
    return (principal.tenant_id, principal.user_id, agent_id, workspace_id)


def recall_status(
    settings: Settings, embedder: Embedder | None, *, pgvector: bool | None
) -> RecallStatus:
    """How recall ranks with these settings and this embedder, on a database that has
    pgvector or not (``None``: not known, as when the database was out of reach)."""
    _, why = chosen(settings)
    if embedder is None:
        if why == NOT_INSTALLED:
            detail = f"by words: {NOT_INSTALLED}; for recall by meaning, {HOW_TO_GET_MEANING}"
        else:
            detail = f"by words: {why}"
        return RecallStatus(RecallMode.LEXICAL, NONE, "", detail)
    if not pgvector:
        detail = (
            f"by words: this database has no pgvector to compare vectors of {embedder.model} "
            "(install the extension in it, or use the embedded database)"
            if pgvector is False
            else "by words while the database cannot be asked whether it has pgvector"
        )
        return RecallStatus(RecallMode.LEXICAL, embedder.kind, embedder.model, detail)
    return RecallStatus(
        RecallMode.HYBRID,
        embedder.kind,
        embedder.model,
        f"by words and meaning with {embedder.describe()} ({why}); new lines and memories are "
        "embedded in the background",
    )


def _render_input(
    principal: Principal, request: RenderRequest, state: PromptState, at: datetime
) -> prompt.RenderInput:
    return prompt.RenderInput(
        persona=request.persona,
        user_id=principal.user_id,
        agent_id=request.agent_id,
        workspace_id=request.workspace_id or "",
        today=utc_day(at),
        user_core=state.user_core,
        agent_core=state.agent_core,
        workspace_core=state.workspace_core,
        agent_memory=state.agent_memory,
        workspace_memory=state.workspace_memory,
        recent_decisions=state.decisions,
        archival=state.archival,
        archival_hint=state.has_archival,
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
        found = await tx.memories.list_page(owner, after=None, limit=cap, query=SHOWN)
        counted = len(found) == cap
        total = await tx.memories.count_matching(owner, SHOWN) if counted else len(found)
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
    workspace_core = None
    if read.workspace_core and read.workspace_id is not None:
        key = BlockKey(BlockLabel.CORE, BlockScope.WORKSPACE, workspace_id=read.workspace_id)
        workspace_core = await section(prompt.WORKSPACE_CORE, lambda: core(key))
    agent_rows = await section(prompt.AGENT_MEMORY, agent_memory)
    workspace_rows = None
    if read.workspace_id is not None:
        owner = Owner(Scope.WORKSPACE, read.workspace_id)
        workspace_rows = await section(
            prompt.WORKSPACE_MEMORY, lambda: rows(owner, read.workspace_cap)
        )

    decisions = None
    reviewed = (
        not read.decisions_if_reviewed
        or (
            await section(prompt.RECENT_DECISIONS, lambda: tx.agents.get(read.agent_id))
            or AgentSettings(read.agent_id)
        ).review_decisions
    )
    if read.decisions_limit is not None and reviewed:
        limit = read.decisions_limit
        decisions = await section(
            prompt.RECENT_DECISIONS,
            lambda: tx.decisions.recent(read.agent_id, limit=limit, with_result=False),
        )
    archival: list[RecallMatch] = []
    if read.archival is not None:
        ranking = read.archival
        archival = await section("archival", lambda: tx.recall.rank(ranking)) or []
    has_archival = False
    if read.archival_hint:
        has_archival = bool(
            await section(
                prompt.ARCHIVAL_HINT,
                lambda: tx.recall.has_archival(read.agent_id, read.workspace_id or ""),
            )
        )
    return PromptState(
        user_core=user_core,
        agent_core=agent_core,
        workspace_core=workspace_core,
        agent_memory=agent_rows,
        workspace_memory=workspace_rows,
        decisions=decisions,
        archival=archival,
        has_archival=has_archival,
    )
