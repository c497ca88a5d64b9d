"""Forgetting on request: an agent, a workspace or the caller's own user, in one
transaction; a dry run (``validate_only``) is the same transaction rolled back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agent_memory.domain.errors import check
from agent_memory.domain.forgetting import ForgetCounts
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import owner_violations
from agent_memory.store.repositories import ForgetRepository, Store


class _DryRun(Exception):
    """Ends a dry run's transaction (rolled back) with what it counted."""

    def __init__(self, counts: ForgetCounts) -> None:
        super().__init__("dry run")
        self.counts = counts


class Forgetting:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def agent(
        self, principal: Principal, agent_id: str, *, validate_only: bool = False
    ) -> ForgetCounts:
        """Raises: InvalidArgument — a malformed agent id."""
        check(owner_violations("agent_id", agent_id))
        return await self._run(principal, lambda f: f.agent(agent_id), validate_only)

    async def workspace(
        self, principal: Principal, workspace_id: str, *, validate_only: bool = False
    ) -> ForgetCounts:
        """Raises: InvalidArgument — a malformed workspace id."""
        check(owner_violations("workspace_id", workspace_id))
        return await self._run(principal, lambda f: f.workspace(workspace_id), validate_only)

    async def user(self, principal: Principal, *, validate_only: bool = False) -> ForgetCounts:
        return await self._run(principal, lambda f: f.user(), validate_only)

    async def _run(
        self,
        principal: Principal,
        forget: Callable[[ForgetRepository], Awaitable[ForgetCounts]],
        validate_only: bool,
    ) -> ForgetCounts:
        try:
            async with self._store.transaction(principal) as tx:
                counts = await forget(tx.forget)
                if validate_only:
                    raise _DryRun(counts)
        except _DryRun as dry:
            return dry.counts
        return counts
