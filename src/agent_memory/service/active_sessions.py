"""Active memory use cases: read the shared session, record a finished run, reset."""

from __future__ import annotations

from datetime import datetime

from agent_memory.domain.active_sessions import (
    ActiveSession,
    RecordedRun,
    RunKind,
    StoredSession,
    active_session,
    check_render_time,
    run_session,
)
from agent_memory.domain.errors import AlreadyExists, check
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import owner_violations
from agent_memory.domain.paging import Page, page_size, paged, refuse_page_token
from agent_memory.service.page_tokens import page_tokens
from agent_memory.store.repositories import Store, Tx

DEFAULT_WARNING_RUNS = 20


class ActiveSessions:
    def __init__(self, store: Store, *, warning_runs: int = DEFAULT_WARNING_RUNS) -> None:
        self._store = store
        self._warning_runs = warning_runs

    async def get(self, principal: Principal, agent_id: str) -> ActiveSession:
        """The session the agent's next run resumes, if any.

        Raises:
            InvalidArgument: a bad agent id.
        """
        check(owner_violations("agent_id", agent_id))
        async with self._store.connection(principal) as tx:
            stored = await tx.sessions.get(agent_id)
            return await self._view(tx, agent_id, stored)

    async def record_run(
        self,
        principal: Principal,
        *,
        agent_id: str,
        run_id: str,
        session_id_before: str,
        session_id_after: str,
        kind: RunKind = RunKind.SCHEDULED,
        render_time: datetime | None = None,
    ) -> ActiveSession:
        """Record a finished run; while active memory is on, carry its session forward
        (a chat turn's too, though only scheduled runs count toward the warning).

        Runs of one agent finishing at once queue on the agent's session row, so each
        is counted and the last one to finish leaves its session id.

        ``render_time`` (when the run's prompt was rendered) is kept with the run, so
        its prompt can be rendered again as it was.

        Raises:
            InvalidArgument: a bad agent id, run id or session id, or a render time
                in the future.
            AlreadyExists: the run id was recorded with other session ids, kind or
                render time (reason ``RUN_ALREADY_RECORDED``).
        """
        run = run_session(agent_id, run_id, session_id_before, session_id_after, kind, render_time)
        async with self._store.transaction(principal) as tx:
            if render_time is not None:
                check_render_time(render_time, now=await tx.clock.now())
            stored = await tx.sessions.get(agent_id, lock=True)
            # Read after the lock: an enable that reset the session is seen by this run.
            settings = await tx.agents.get(agent_id)
            carried = settings.active_memory_enabled and run.succeeded
            if carried and stored is None:
                await tx.sessions.ensure(agent_id)
                stored = await tx.sessions.get(agent_id, lock=True)
            recorded_at = await tx.sessions.insert_run(
                agent_id,
                run,
                carried=carried,
                after=stored.last_reset_at if carried and stored is not None else None,
            )
            if recorded_at is None:
                existing = await tx.sessions.find_run(agent_id, run.run_id)
                if existing != run:
                    raise AlreadyExists(
                        f"run {run.run_id!r} of agent {agent_id!r} was already recorded "
                        "with other session ids, as another kind of run or with another "
                        "render time",
                        reason="RUN_ALREADY_RECORDED",
                        metadata={"agent_id": agent_id, "run_id": run.run_id},
                    )
            elif carried and run.session_id_after is not None:
                stored = await tx.sessions.carry(agent_id, run.session_id_after, recorded_at)
            return await self._view(tx, agent_id, stored, enabled=settings.active_memory_enabled)

    async def runs(
        self, principal: Principal, agent_id: str, *, size: int, token: str
    ) -> Page[RecordedRun]:
        """The agent's recorded runs, newest first, with the session ids before and
        after each.

        Raises:
            InvalidArgument: a bad agent id, page size or page token.
        """
        check(owner_violations("agent_id", agent_id))
        limit = page_size(size)
        tokens = await page_tokens(
            self._store, principal, token, owner=["agent", agent_id], listing=["runs"]
        )
        raw = tokens.open(token, arity=2)
        after: tuple[datetime, str] | None = None
        if raw is not None:
            try:
                at = datetime.fromisoformat(str(raw[0]))
            except ValueError:
                refuse_page_token()
            if at.tzinfo is None or not isinstance(raw[1], str):
                refuse_page_token()
            after = (at, raw[1])
        async with self._store.connection(principal) as tx:
            rows = await tx.sessions.list_runs(agent_id, after=after, limit=limit + 1)
        return paged(rows, limit, tokens, lambda r: [r.recorded_at.isoformat(), r.run.run_id])

    async def reset(self, principal: Principal, agent_id: str) -> ActiveSession:
        """Forget the agent's session id and restart the runs count: the next run is fresh.

        Raises:
            InvalidArgument: a bad agent id.
        """
        check(owner_violations("agent_id", agent_id))
        async with self._store.transaction(principal) as tx:
            stored = await tx.sessions.reset(agent_id)
            return await self._view(tx, agent_id, stored)

    async def _view(
        self, tx: Tx, agent_id: str, stored: StoredSession | None, *, enabled: bool | None = None
    ) -> ActiveSession:
        """The session as a caller sees it; ``enabled``: the agent's switch when the caller
        has already read it in this transaction."""
        if enabled is None:
            enabled = (await tx.agents.get(agent_id)).active_memory_enabled
        runs = 0
        if enabled and stored is not None:
            runs = await tx.sessions.runs_since(agent_id, stored.last_reset_at)
        return active_session(
            agent_id,
            enabled=enabled,
            stored=stored,
            runs_since_reset=runs,
            now=await tx.clock.now(),
            warning_threshold=self._warning_runs,
        )
