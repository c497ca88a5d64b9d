"""Active session and run queries. Every statement is confined to one tenant; none commits.

The agent's ``active_sessions`` row is the lock that serialises runs finishing at
once, resets and enables. Times come from the database clock, read after that lock
is held, so a run recorded after a reset is always later than its anchor.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Interval, func, literal, literal_column, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from agent_memory.domain.active_sessions import RunSession, StoredSession
from agent_memory.store.models import ActiveSessionRow, AgentRunRow

_MICROSECOND = literal_column("interval '1 microsecond'", Interval)


def _stored(row: ActiveSessionRow) -> StoredSession:
    return StoredSession(
        session_id=row.session_id,
        session_updated_at=row.session_updated_at,
        last_reset_at=row.last_reset_at,
    )


async def get(
    session: AsyncSession, *, tenant_id: str, agent_id: str, for_update: bool = False
) -> StoredSession | None:
    """The agent's stored session; with ``for_update``, locked until the transaction ends."""
    stmt = select(ActiveSessionRow).where(
        ActiveSessionRow.tenant_id == tenant_id, ActiveSessionRow.agent_id == agent_id
    )
    if for_update:
        stmt = stmt.with_for_update()
    row = await session.scalar(stmt, execution_options={"populate_existing": True})
    return _stored(row) if row is not None else None


async def ensure(session: AsyncSession, *, tenant_id: str, agent_id: str) -> None:
    """Create the agent's row, fresh and anchored now, unless it exists."""
    now = func.clock_timestamp()
    await session.execute(
        insert(ActiveSessionRow)
        .values(tenant_id=tenant_id, agent_id=agent_id, last_reset_at=now, updated_at=now)
        .on_conflict_do_nothing(
            index_elements=[ActiveSessionRow.tenant_id, ActiveSessionRow.agent_id]
        )
    )


async def reset(session: AsyncSession, *, tenant_id: str, agent_id: str) -> StoredSession:
    """Forget the session id and move the anchor to now (after every run already counted)."""
    now = func.clock_timestamp()
    stmt = insert(ActiveSessionRow).values(
        tenant_id=tenant_id,
        agent_id=agent_id,
        session_id=None,
        session_updated_at=None,
        last_reset_at=now,
        updated_at=now,
    )
    upsert = stmt.on_conflict_do_update(
        index_elements=[ActiveSessionRow.tenant_id, ActiveSessionRow.agent_id],
        set_={
            "session_id": None,
            "session_updated_at": None,
            # GREATEST skips NULL: strictly after the last carried run even if the clock lags.
            "last_reset_at": func.greatest(now, ActiveSessionRow.session_updated_at + _MICROSECOND),
            "updated_at": now,
        },
    ).returning(ActiveSessionRow)
    row = (await session.scalars(upsert, execution_options={"populate_existing": True})).one()
    return _stored(row)


async def find_run(
    session: AsyncSession, *, tenant_id: str, agent_id: str, run_id: str
) -> RunSession | None:
    row = await session.scalar(
        select(AgentRunRow).where(
            AgentRunRow.tenant_id == tenant_id,
            AgentRunRow.agent_id == agent_id,
            AgentRunRow.run_id == run_id,
        )
    )
    if row is None:
        return None
    return RunSession(
        run_id=row.run_id,
        session_id_before=row.session_id_before,
        session_id_after=row.session_id_after,
    )


async def insert_run(
    session: AsyncSession,
    *,
    tenant_id: str,
    agent_id: str,
    run: RunSession,
    carried: bool,
    after: datetime | None,
) -> datetime | None:
    """Record a run, strictly later than ``after``; ``None`` when the run id is taken."""
    recorded_at = func.clock_timestamp()
    if after is not None:
        floor = literal(after, DateTime(timezone=True)) + _MICROSECOND
        recorded_at = func.greatest(recorded_at, floor)
    stmt = (
        insert(AgentRunRow)
        .values(
            tenant_id=tenant_id,
            agent_id=agent_id,
            run_id=run.run_id,
            session_id_before=run.session_id_before,
            session_id_after=run.session_id_after,
            carried=carried,
            recorded_at=recorded_at,
        )
        .on_conflict_do_nothing(
            index_elements=[AgentRunRow.tenant_id, AgentRunRow.agent_id, AgentRunRow.run_id]
        )
        .returning(AgentRunRow.recorded_at)
    )
    inserted: datetime | None = (await session.execute(stmt)).scalar_one_or_none()
    return inserted


async def carry(
    session: AsyncSession, *, tenant_id: str, agent_id: str, session_id: str, at: datetime
) -> StoredSession:
    """Make ``session_id`` the one the agent's next run resumes."""
    stmt = (
        update(ActiveSessionRow)
        .where(ActiveSessionRow.tenant_id == tenant_id, ActiveSessionRow.agent_id == agent_id)
        .values(session_id=session_id, session_updated_at=at, updated_at=func.clock_timestamp())
        .returning(ActiveSessionRow)
    )
    row = (await session.scalars(stmt, execution_options={"populate_existing": True})).one()
    return _stored(row)


async def runs_since(
    session: AsyncSession, *, tenant_id: str, agent_id: str, anchor: datetime
) -> int:
    """Carried (successful, active-memory) runs recorded after ``anchor``."""
    count: int = (
        await session.execute(
            select(func.count()).where(
                AgentRunRow.tenant_id == tenant_id,
                AgentRunRow.agent_id == agent_id,
                AgentRunRow.carried,
                AgentRunRow.recorded_at > anchor,
            )
        )
    ).scalar_one()
    return count
