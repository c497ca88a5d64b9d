"""Agent settings use cases."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

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
        changes: Mapping[str, bool],
    ) -> AgentSettings:
        """Change the switches ``changes`` names (fields of :class:`AgentSettings`); the
        others stay as they are.

        Turning active memory on starts the agent's shared session fresh, as a reset
        does; turning it off keeps the session stored but unused.

        Raises:
            InvalidArgument: a bad agent id.
        """
        check(owner_violations("settings.agent_id", agent_id))
        async with self._store.transaction(principal) as tx:
            current = await tx.agents.get(agent_id, lock=True)
            switches: dict[str, Any] = dict(changes)
            wanted = replace(current, **switches)
            if wanted.active_memory_enabled and not current.active_memory_enabled:
                await tx.sessions.reset(agent_id)
            return await tx.agents.put(wanted)
