"""Agent settings use cases."""

from __future__ import annotations

from agent_memory.domain.agents import AgentSettings
from agent_memory.domain.errors import check
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import owner_violations
from agent_memory.store import agents as store
from agent_memory.store.database import Database


class Agents:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def settings(self, principal: Principal, agent_id: str) -> AgentSettings:
        """An agent's settings; an agent never configured reads as the defaults."""
        check(owner_violations("agent_id", agent_id))
        async with self._db.transaction() as session:
            return await store.get(session, tenant_id=principal.tenant_id, agent_id=agent_id)

    async def update_settings(
        self, principal: Principal, agent_id: str, *, memory_enabled: bool | None
    ) -> AgentSettings:
        check(owner_violations("settings.agent_id", agent_id))
        async with self._db.transaction() as session:
            current = await store.get(session, tenant_id=principal.tenant_id, agent_id=agent_id)
            wanted = AgentSettings(
                agent_id=agent_id,
                memory_enabled=current.memory_enabled if memory_enabled is None else memory_enabled,
            )
            return await store.put(
                session, tenant_id=principal.tenant_id, settings=wanted, actor=principal.user_id
            )
