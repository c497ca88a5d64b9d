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

# Whose memory an audit event is about, from its snapshots (an owner never changes);
# the expression ix_memory_events_owner indexes.
_EVENT_OWNER: LiteralString = "(coalesce(e.new_memory, e.old_memory) ->> 'owner_id')"
_EVENT_SCOPE: LiteralString = "(coalesce(e.new_memory, e.old_memory) ->> 'scope')"

# The conversations the owner's memories draw on, or drew on (known from the audit
# snapshots of memories deleted or changed before), read before they all go.
_CONVERSATIONS_OF: LiteralString = f"""
SELECT conversation_provider AS provider, conversation_id
FROM memories
WHERE {_OWNED} AND conversation_id IS NOT NULL
UNION
SELECT s.snapshot ->> 'conversation_provider', s.snapshot ->> 'conversation_id'
FROM memory_events AS e
CROSS JOIN LATERAL (VALUES (e.old_memory), (e.new_memory)) AS s(snapshot)
WHERE e.tenant_id = %(tenant_id)s AND {_EVENT_OWNER} = %(owner_id)s
  AND {_EVENT_SCOPE} = %(scope)s
  AND s.snapshot ->> 'conversation_id' IS NOT NULL
"""

# The audit events of the owner's memories, deleted ones included (known by their
# snapshots), emptied of every snapshot.
_TOMBSTONES: LiteralString = f"""
WITH emptied AS (
    UPDATE memory_events AS e
    SET old_memory = NULL, new_memory = NULL
    WHERE e.tenant_id = %(tenant_id)s AND {_EVENT_OWNER} = %(owner_id)s
      AND {_EVENT_SCOPE} = %(scope)s
    RETURNING 1
)
SELECT count(*) AS n FROM emptied
"""

# The memories, each with a DELETED event that names no content: its history ends
# with its deletion, as any deleted memory's does.
_MEMORIES: LiteralString = f"""
WITH gone AS (DELETE FROM memories WHERE {_OWNED} RETURNING tenant_id, id),
ended AS (
    INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,
                               occurred_at, old_memory, new_memory)
    SELECT tenant_id, gen_random_uuid(), id, 'deleted', %(actor)s, clock_timestamp(),
           NULL, NULL
    FROM gone
)
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
          WHERE m.tenant_id = %(tenant_id)s AND m.conversation_provider = c.provider
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


# An agent's blocks are every user's agent-scoped blocks of it; a user's are theirs; a
# workspace's are the tenant's (no user), its id in the owner column.
_OF_AGENT: LiteralString = "scope = 'agent' AND agent_id = %(agent_id)s"
_OF_USER: LiteralString = "user_id = %(user_id)s"
_OF_WORKSPACE: LiteralString = (
    "user_id = '' AND scope = 'workspace' AND agent_id = %(workspace_id)s"
)


# Locks the blocks first, in the order WriteBlock takes them, so that a concurrent
# write waits for the forget instead of adding lines or versions behind it.
def _lock_blocks(where: LiteralString) -> LiteralString:
    return f"""
SELECT count(*) AS n FROM (
    SELECT 1 FROM blocks WHERE tenant_id = %(tenant_id)s AND {where}
    ORDER BY user_id, scope, agent_id, label
    FOR UPDATE
) AS locked
"""


_REEXAMINATIONS_OF_AGENT: LiteralString = """
WITH gone AS (
    DELETE FROM reexaminations AS r
    USING decisions AS d
    WHERE r.tenant_id = %(tenant_id)s AND d.tenant_id = %(tenant_id)s
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
        params = {
            "tenant_id": self._principal.tenant_id,
            "scope": scope,
            "owner_id": owner_id,
            "actor": self._principal.user_id,
        }
        drawn_on = await fetch_all(self._conn, _CONVERSATIONS_OF, params)
        # Memories before their events: an update committed meanwhile has its event
        # emptied too.
        memories = await self._count(_MEMORIES, params)
        audit_events = await self._count(_TOMBSTONES, params)
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
        await self._count(_lock_blocks(where), params)
        lines = await self._count(_delete("archival_lines", where), params)
        await self._count(_delete("archival_vocabulary", where), params)
        await self._count(_delete("archival_terms", where), params)
        versions = await self._count(_delete("block_versions", where), params)
        blocks = await self._count(_delete("blocks", where), params)
        return ForgetCounts(blocks=blocks, block_versions=versions, archival_lines=lines)

    async def agent(self, agent_id: str) -> ForgetCounts:
        params = {"tenant_id": self._principal.tenant_id, "agent_id": agent_id}
        # Its extraction passes first: a pass finishing meanwhile writes its facts
        # before the memories below are deleted, or finds its job gone and writes none.
        jobs = await self._count(_delete("extraction_jobs", "agent_id = %(agent_id)s"), params)
        counts = await self._memories_of("agent", agent_id)
        counts += await self._blocks(_OF_AGENT, params)
        reexaminations = await self._count(_REEXAMINATIONS_OF_AGENT, params)
        decisions = await self._count(_delete("decisions", "agent_id = %(agent_id)s"), params)
        agent_state = 0
        for table in ("agent_settings", "active_sessions", "agent_runs"):
            agent_state += await self._count(_delete(table, "agent_id = %(agent_id)s"), params)
        return counts + ForgetCounts(
            decisions=decisions,
            reexaminations=reexaminations,
            extraction_jobs=jobs,
            agent_state=agent_state,
        )

    async def workspace(self, workspace_id: str) -> ForgetCounts:
        params = {"tenant_id": self._principal.tenant_id, "workspace_id": workspace_id}
        # The passes that would write to it, whichever agent's: their transcripts
        # speak of it. First, as for an agent.
        jobs = await self._count(
            _delete("extraction_jobs", "workspace_id = %(workspace_id)s"), params
        )
        counts = await self._memories_of("workspace", workspace_id)
        counts += await self._blocks(_OF_WORKSPACE, params)
        settings = await self._count(
            _delete("workspace_settings", "workspace_id = %(workspace_id)s"), params
        )
        return counts + ForgetCounts(extraction_jobs=jobs, agent_state=settings)

    async def user(self) -> ForgetCounts:
        params = {"tenant_id": self._principal.tenant_id, "user_id": self._principal.user_id}
        return await self._blocks(_OF_USER, params)
