"""Agent settings use cases."""

from __future__ import annotations

from agent_memory.domain.agents import AgentSettings
from agent_memory.domain.errors import check
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import owner_violations
from agent_memory.store.repositories import Store


class Agents:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def settings(self, principal: Principal, agent_id: str) -> AgentSettings:
        """An agent's settings; an agent never configured reads as the defaults."""
        check(owner_violations("agent_id", agent_id))
        async with self._store.connection(principal) as tx:
            return await tx.agents.get(agent_id)

    async def update_settings(
        self,
        principal: Principal,
        agent_id: str,
        *,
        memory_enabled: bool | None,
        active_memory_enabled: bool | None = None,
        review_decisions: bool | None = None,
    ) -> AgentSettings:
        """Change the switches given; ``None`` leaves one as it is.

        Turning active memory on starts the agent's shared session fresh, as a reset
        does; turning it off keeps the session stored but unused.

        Raises:
            InvalidArgument: a bad agent id.
        """
        check(owner_violations("settings.agent_id", agent_id))
        async with self._store.transaction(principal) as tx:
            current = await tx.agents.get(agent_id, lock=True)
            wanted = AgentSettings(
                agent_id=agent_id,
                memory_enabled=current.memory_enabled if memory_enabled is None else memory_enabled,
                active_memory_enabled=current.active_memory_enabled
                if active_memory_enabled is None
                else active_memory_enabled,
                review_decisions=current.review_decisions
                if review_decisions is None
                else review_decisions,
            )
            if wanted.active_memory_enabled and not current.active_memory_enabled:
                await tx.sessions.reset(agent_id)
            return await tx.agents.put(wanted)
