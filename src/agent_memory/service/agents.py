"""Agent and workspace settings use cases."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from typing import Any

from agent_memory.domain.agents import AgentSettings, WorkspaceSettings, expiry_slide_violations
from agent_memory.domain.errors import check
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import owner_violations
from agent_memory.store.repositories import Store

# What a setting is given as: a switch, or a span of time (the expiry slide).
SettingValue = bool | timedelta


def _slide_checked(changes: Mapping[str, SettingValue]) -> None:
    """Raises: InvalidArgument — a slide below zero or past its bound."""
    slide = changes.get("expiry_slide")
    if isinstance(slide, timedelta):
        check(expiry_slide_violations("settings.expiry_slide", slide))


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
        changes: Mapping[str, SettingValue],
    ) -> AgentSettings:
        """Change the settings ``changes`` names (fields of :class:`AgentSettings`); the
        others stay as they are. Settings stored already that would not change are not
        written (their ``updated_at`` stays).

        Turning active memory on starts the agent's shared session fresh, as a reset
        does; turning it off keeps the session stored but unused.

        Raises:
            InvalidArgument: a bad agent id, or an expiry slide out of range.
        """
        check(owner_violations("settings.agent_id", agent_id))
        _slide_checked(changes)
        async with self._store.transaction(principal) as tx:
            current = await tx.agents.get(agent_id, lock=True)
            switches: dict[str, Any] = dict(changes)
            wanted = replace(current, **switches)
            if wanted == current and current.updated_at is not None:
                return current  # nothing changes: not even when it last changed
            if wanted.active_memory_enabled and not current.active_memory_enabled:
                await tx.sessions.reset(agent_id)
            return await tx.agents.put(wanted)


class Workspaces:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def settings(self, principal: Principal, workspace_id: str) -> WorkspaceSettings:
        """A workspace's settings; a workspace never configured reads as the defaults."""
        check(owner_violations("workspace_id", workspace_id))
        async with self._store.connection(principal) as tx:
            return await tx.workspaces.get(workspace_id)

    async def update_settings(
        self,
        principal: Principal,
        workspace_id: str,
        changes: Mapping[str, SettingValue],
    ) -> WorkspaceSettings:
        """Change the settings ``changes`` names (fields of :class:`WorkspaceSettings`);
        the others stay as they are. Settings stored already that would not change are
        not written (their ``updated_at`` stays).

        Raises:
            InvalidArgument: a bad workspace id, or an expiry slide out of range.
        """
        check(owner_violations("settings.workspace_id", workspace_id))
        _slide_checked(changes)
        async with self._store.transaction(principal) as tx:
            current = await tx.workspaces.get(workspace_id, lock=True)
            given: dict[str, Any] = dict(changes)
            wanted = replace(current, **given)
            if wanted == current and current.updated_at is not None:
                return current  # nothing changes: not even when it last changed
            return await tx.workspaces.put(wanted)
