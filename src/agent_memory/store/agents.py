"""Agent settings queries."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from agent_memory.domain.agents import AgentSettings
from agent_memory.store.models import AgentSettingsRow


def _to_domain(row: AgentSettingsRow) -> AgentSettings:
    return AgentSettings(
        agent_id=row.agent_id,
        memory_enabled=row.memory_enabled,
        updated_at=row.updated_at,
        active_memory_enabled=row.active_memory_enabled,
    )


async def get(
    session: AsyncSession, *, tenant_id: str, agent_id: str, for_update: bool = False
) -> AgentSettings:
    """The agent's settings; an agent never written reads as the defaults.

    With ``for_update`` a stored row stays locked until the transaction ends.
    """
    stmt = select(AgentSettingsRow).where(
        AgentSettingsRow.tenant_id == tenant_id, AgentSettingsRow.agent_id == agent_id
    )
    if for_update:
        stmt = stmt.with_for_update()
    row = await session.scalar(stmt, execution_options={"populate_existing": True})
    if row is None:
        return AgentSettings(agent_id=agent_id)
    return _to_domain(row)


async def put(
    session: AsyncSession, *, tenant_id: str, settings: AgentSettings, actor: str
) -> AgentSettings:
    stmt = insert(AgentSettingsRow).values(
        tenant_id=tenant_id,
        agent_id=settings.agent_id,
        memory_enabled=settings.memory_enabled,
        active_memory_enabled=settings.active_memory_enabled,
        updated_by=actor,
    )
    upsert = stmt.on_conflict_do_update(
        index_elements=[AgentSettingsRow.tenant_id, AgentSettingsRow.agent_id],
        set_={
            "memory_enabled": stmt.excluded.memory_enabled,
            "active_memory_enabled": stmt.excluded.active_memory_enabled,
            "updated_by": stmt.excluded.updated_by,
            "updated_at": func.clock_timestamp(),
        },
    ).returning(AgentSettingsRow)
    row = (await session.scalars(upsert, execution_options={"populate_existing": True})).one()
    return _to_domain(row)
