"""Forgetting: every stored text of an agent, a workspace or a user, removed in the
caller's transaction.

Each statement counts what it removed, so a dry run is the same statements rolled
back. What is kept: the audit trail's events as content-free tombstones (type, actor,
time, memory id; their snapshots emptied) and the usage ledger's token counts and
cost, which hold no text.
"""

from __future__ import annotations

from typing import Any, LiteralString

from agent_memory.domain.forgetting import ForgetCounts
from agent_memory.domain.identity import Principal
from agent_memory.store.repositories import ForgetRepository
from agent_memory.store.sql import Connection, fetch_all, fetch_one

_OWNED: LiteralString = """
tenant_id = %(tenant_id)s AND scope = %(scope)s AND owner_id = %(owner_id)s"""

# The conversations the owner's memories draw on, read before the memories go.
_CONVERSATIONS_OF: LiteralString = f"""
SELECT DISTINCT conversation_provider AS provider, conversation_id
FROM memories
WHERE {_OWNED} AND conversation_id IS NOT NULL
"""

# The audit events of the owner's memories, deleted ones included (known by their
# snapshots), emptied of every snapshot.
_TOMBSTONES: LiteralString = """
WITH emptied AS (
    UPDATE memory_events
    SET old_memory = NULL, new_memory = NULL
    WHERE tenant_id = %(tenant_id)s
      AND (old_memory IS NOT NULL OR new_memory IS NOT NULL)
      AND coalesce(new_memory, old_memory) ->> 'scope' = %(scope)s
      AND coalesce(new_memory, old_memory) ->> 'owner_id' = %(owner_id)s
    RETURNING 1
)
SELECT count(*) AS n FROM emptied
"""

_MEMORIES: LiteralString = f"""
WITH gone AS (DELETE FROM memories WHERE {_OWNED} RETURNING 1)
SELECT count(*) AS n FROM gone
"""

# Of the conversations read before, those no memory draws on any more.
_UNUSED_CONVERSATIONS: LiteralString = """
WITH gone AS (
    DELETE FROM conversations AS c
    USING unnest(%(providers)s::text[], %(conversation_ids)s::text[]) AS k(provider, id)
    WHERE c.tenant_id = %(tenant_id)s AND c.provider = k.provider
      AND c.conversation_id = k.id
      AND NOT EXISTS (
          SELECT FROM memories AS m
          WHERE m.tenant_id = c.tenant_id AND m.conversation_provider = c.provider
            AND m.conversation_id = c.conversation_id)
    RETURNING 1
)
SELECT count(*) AS n FROM gone
"""


def _delete(table: LiteralString, where: LiteralString) -> LiteralString:
    return f"""
WITH gone AS (DELETE FROM {table} WHERE tenant_id = %(tenant_id)s AND {where} RETURNING 1)
SELECT count(*) AS n FROM gone
"""


# An agent's blocks are every user's agent-scoped blocks of it; a user's are theirs.
_OF_AGENT: LiteralString = "scope = 'agent' AND agent_id = %(agent_id)s"
_OF_USER: LiteralString = "user_id = %(user_id)s"

_REEXAMINATIONS_OF_AGENT: LiteralString = """
WITH gone AS (
    DELETE FROM reexaminations AS r
    USING decisions AS d
    WHERE r.tenant_id = %(tenant_id)s AND d.tenant_id = r.tenant_id
      AND d.id = r.parent_decision_id AND d.agent_id = %(agent_id)s
    RETURNING 1
)
SELECT count(*) AS n FROM gone
"""


class PgForget(ForgetRepository):
    def __init__(self, conn: Connection, principal: Principal) -> None:
        self._conn = conn
        self._principal = principal

    async def _count(self, statement: LiteralString, params: dict[str, Any]) -> int:
        row = await fetch_one(self._conn, statement, params)
        return int(row["n"]) if row else 0

    async def _memories_of(self, scope: str, owner_id: str) -> ForgetCounts:
        """An owner's memories, their audit snapshots and the conversations only they
        drew on."""
        params = {"tenant_id": self._principal.tenant_id, "scope": scope, "owner_id": owner_id}
        drawn_on = await fetch_all(self._conn, _CONVERSATIONS_OF, params)
        audit_events = await self._count(_TOMBSTONES, params)
        memories = await self._count(_MEMORIES, params)
        conversations = await self._count(
            _UNUSED_CONVERSATIONS,
            {
                **params,
                "providers": [r["provider"] for r in drawn_on],
                "conversation_ids": [r["conversation_id"] for r in drawn_on],
            },
        )
        return ForgetCounts(
            memories=memories, audit_events=audit_events, conversations=conversations
        )

    async def _blocks(self, where: LiteralString, params: dict[str, Any]) -> ForgetCounts:
        """Blocks, their versions and their archival lines (and line statistics)."""
        lines = await self._count(_delete("archival_lines", where), params)
        await self._count(_delete("archival_vocabulary", where), params)
        versions = await self._count(_delete("block_versions", where), params)
        blocks = await self._count(_delete("blocks", where), params)
        return ForgetCounts(blocks=blocks, block_versions=versions, archival_lines=lines)

    async def agent(self, agent_id: str) -> ForgetCounts:
        params = {"tenant_id": self._principal.tenant_id, "agent_id": agent_id}
        counts = await self._memories_of("agent", agent_id)
        counts += await self._blocks(_OF_AGENT, params)
        reexaminations = await self._count(_REEXAMINATIONS_OF_AGENT, params)
        decisions = await self._count(_delete("decisions", "agent_id = %(agent_id)s"), params)
        agent_state = 0
        for table in ("agent_settings", "active_sessions", "agent_runs"):
            agent_state += await self._count(_delete(table, "agent_id = %(agent_id)s"), params)
        jobs = await self._count(_delete("extraction_jobs", "agent_id = %(agent_id)s"), params)
        return counts + ForgetCounts(
            decisions=decisions,
            reexaminations=reexaminations,
            extraction_jobs=jobs,
            agent_state=agent_state,
        )

    async def workspace(self, workspace_id: str) -> ForgetCounts:
        params = {"tenant_id": self._principal.tenant_id, "workspace_id": workspace_id}
        counts = await self._memories_of("workspace", workspace_id)
        jobs = await self._count(
            _delete("extraction_jobs", "workspace_id = %(workspace_id)s"), params
        )
        return counts + ForgetCounts(extraction_jobs=jobs)

    async def user(self) -> ForgetCounts:
        params = {"tenant_id": self._principal.tenant_id, "user_id": self._principal.user_id}
        counts = await self._blocks(_OF_USER, params)
        jobs = await self._count(_delete("extraction_jobs", "actor_user_id = %(user_id)s"), params)
        return counts + ForgetCounts(extraction_jobs=jobs)
