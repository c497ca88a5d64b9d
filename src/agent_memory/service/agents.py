"""Agent settings use cases."""

from __future__ import annotations

from agent_memory.domain.agents import AgentSettings
from agent_memory.domain.errors import check
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import owner_violations
from agent_memory.store import active_sessions
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
        self,
        principal: Principal,
        agent_id: str,
        *,
        memory_enabled: bool | None,
        active_memory_enabled: bool | None = None,
    ) -> AgentSettings:
        """Change the switches given; ``None`` leaves one as it is.

        Turning active memory on starts the agent's shared session fresh, as a reset
        does; turning it off keeps the session stored but unused.

        Raises:
            InvalidArgument: a bad agent id.
        """
        check(owner_violations("settings.agent_id", agent_id))
        tenant = principal.tenant_id
        async with self._db.transaction() as session:
            current = await store.get(session, tenant_id=tenant, agent_id=agent_id, for_update=True)
            wanted = AgentSettings(
                agent_id=agent_id,
                memory_enabled=current.memory_enabled if memory_enabled is None else memory_enabled,
                active_memory_enabled=current.active_memory_enabled
                if active_memory_enabled is None
                else active_memory_enabled,
            )
            if wanted.active_memory_enabled and not current.active_memory_enabled:
                await active_sessions.reset(session, tenant_id=tenant, agent_id=agent_id)
            return await store.put(
                session, tenant_id=tenant, settings=wanted, actor=principal.user_id
            )
