"""Agent settings queries."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from agent_memory.domain.agents import AgentSettings
from agent_memory.store.models import AgentSettingsRow


async def get(session: AsyncSession, *, tenant_id: str, agent_id: str) -> AgentSettings:
    """The agent's settings; an agent never written reads as the defaults."""
    row = await session.scalar(
        select(AgentSettingsRow).where(
            AgentSettingsRow.tenant_id == tenant_id, AgentSettingsRow.agent_id == agent_id
        )
    )
    if row is None:
        return AgentSettings(agent_id=agent_id)
    return AgentSettings(
        agent_id=agent_id, memory_enabled=row.memory_enabled, updated_at=row.updated_at
    )


async def put(
    session: AsyncSession, *, tenant_id: str, settings: AgentSettings, actor: str
) -> AgentSettings:
    stmt = insert(AgentSettingsRow).values(
        tenant_id=tenant_id,
        agent_id=settings.agent_id,
        memory_enabled=settings.memory_enabled,
        updated_by=actor,
    )
    upsert = stmt.on_conflict_do_update(
        index_elements=[AgentSettingsRow.tenant_id, AgentSettingsRow.agent_id],
        set_={
            "memory_enabled": stmt.excluded.memory_enabled,
            "updated_by": stmt.excluded.updated_by,
            "updated_at": func.clock_timestamp(),
        },
    ).returning(AgentSettingsRow)
    row = (await session.scalars(upsert, execution_options={"populate_existing": True})).one()
    return AgentSettings(
        agent_id=row.agent_id, memory_enabled=row.memory_enabled, updated_at=row.updated_at
    )
