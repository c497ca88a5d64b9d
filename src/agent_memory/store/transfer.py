"""A tenant's memories, conversations, blocks, card types and decisions, as export
records (JSON objects, see ``docs/export-format.md``), and back.

Each record names its fields one by one: the format is a contract of its own, not a
copy of the tables, so a column added to a table reaches it only when the format says
so. An import writes each record only where nothing holds its key yet, so importing
the same file twice changes nothing the second time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, LiteralString

from psycopg.types.json import Jsonb

from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockScope
from agent_memory.domain.identity import Principal
from agent_memory.store.blocks import PgBlocks
from agent_memory.store.memories import live
from agent_memory.store.sql import Connection, fetch_all, fetch_one

# Who the audit trail says created an imported memory.
IMPORT_ACTOR = "agent-memory:import"

# Export, kind by kind, in the order an import needs them (card types before the
# decisions that use them).
_EXPORTS: tuple[tuple[str, LiteralString], ...] = (
    (
        "card_type",
        """
SELECT jsonb_build_object(
    'kind', 'card_type', 'name', name, 're_examinable', re_examinable,
    'actions', to_jsonb(actions), 'decision_actions', to_jsonb(decision_actions)) AS record
FROM card_types WHERE tenant_id = %(tenant_id)s ORDER BY name
""",
    ),
    (
        "conversation",
        """
SELECT jsonb_build_object(
    'kind', 'conversation', 'provider', provider, 'conversation_id', conversation_id,
    'messages', messages, 'raw_events', raw_events) AS record
FROM conversations WHERE tenant_id = %(tenant_id)s ORDER BY provider, conversation_id
""",
    ),
    (
        "memory",
        f"""
SELECT jsonb_build_object(
    'kind', 'memory', 'id', m.id, 'scope', m.scope, 'owner_id', m.owner_id, 'key', m.key,
    'value', m.value, 'pinned', m.pinned, 'importance', m.importance, 'source', m.source,
    'tags', to_jsonb(m.tags), 'confidence', m.confidence, 'metadata', m.metadata,
    'conversation_provider', m.conversation_provider, 'conversation_id', m.conversation_id,
    'created_at', m.created_at, 'updated_at', m.updated_at, 'expire_time', m.expire_time,
    'superseded_by', m.superseded_by,
    'groundings', coalesce((
        SELECT jsonb_agg(jsonb_build_object(
            'message_position', g.message_position,
            'provider_message_id', g.provider_message_id,
            'start_character', g.start_character, 'end_character', g.end_character,
            'quote', g.quote, 'raw_event_index', g.raw_event_index,
            'raw_start_character', g.raw_start_character,
            'raw_end_character', g.raw_end_character, 'metadata', g.metadata)
            ORDER BY g.ordinal)
        FROM memory_groundings AS g
        WHERE g.tenant_id = m.tenant_id AND g.memory_id = m.id), '[]'::jsonb)) AS record
FROM memories AS m
WHERE m.tenant_id = %(tenant_id)s AND {live("m")}
ORDER BY m.scope, m.owner_id, m.key
""",
    ),
    (
        "block",
        """
SELECT jsonb_build_object(
    'kind', 'block', 'user_id', user_id, 'scope', scope, 'agent_id', agent_id,
    'label', label, 'content', content) AS record
FROM blocks WHERE tenant_id = %(tenant_id)s ORDER BY user_id, scope, agent_id, label
""",
    ),
    (
        "decision",
        """
SELECT jsonb_build_object(
    'kind', 'decision', 'id', d.id, 'run_id', d.run_id, 'agent_id', d.agent_id,
    'card_type', d.card_type, 'action', d.action, 'summary', d.summary, 'result', d.result,
    'resolution_status', d.resolution_status, 'created_at', d.created_at,
    'resolved_at', d.resolved_at,
    'reexaminations', coalesce((
        SELECT jsonb_agg(jsonb_build_object(
            'id', r.id, 'run_id', r.run_id, 'conviction_score', r.conviction_score,
            'notes', r.notes, 'suggested_action', r.suggested_action,
            'created_at', r.created_at) ORDER BY r.created_at, r.id)
        FROM reexaminations AS r
        WHERE r.tenant_id = d.tenant_id AND r.parent_decision_id = d.id), '[]'::jsonb)) AS record
FROM decisions AS d WHERE d.tenant_id = %(tenant_id)s ORDER BY d.created_at, d.id
""",
    ),
)

KINDS = tuple(kind for kind, _ in _EXPORTS)

_IMPORT_CARD_TYPE: LiteralString = """
WITH r AS (SELECT %(record)s::jsonb AS r),
inserted AS (
    INSERT INTO card_types (tenant_id, name, re_examinable, actions, decision_actions)
    SELECT %(tenant_id)s, r ->> 'name', r ->> 're_examinable',
           ARRAY(SELECT jsonb_array_elements_text(r -> 'actions')),
           ARRAY(SELECT jsonb_array_elements_text(r -> 'decision_actions'))
    FROM r
    ON CONFLICT DO NOTHING
    RETURNING 1
)
SELECT count(*) AS n FROM inserted
"""

_IMPORT_CONVERSATION: LiteralString = """
WITH r AS (SELECT %(record)s::jsonb AS r),
inserted AS (
    INSERT INTO conversations (tenant_id, provider, conversation_id, messages, message_count,
                               raw_events, raw_event_count)
    SELECT %(tenant_id)s, r ->> 'provider', r ->> 'conversation_id', r -> 'messages',
           jsonb_array_length(r -> 'messages'),
           coalesce(r -> 'raw_events', '[]'::jsonb),
           jsonb_array_length(coalesce(r -> 'raw_events', '[]'::jsonb))
    FROM r
    ON CONFLICT DO NOTHING
    RETURNING 1
)
SELECT count(*) AS n FROM inserted
"""

_IMPORT_MEMORY: LiteralString = """
WITH r AS (SELECT %(record)s::jsonb AS r),
inserted AS (
    INSERT INTO memories (tenant_id, id, scope, owner_id, key, value, pinned, importance,
                          source, tags, confidence, metadata, conversation_provider,
                          conversation_id, created_at, updated_at, expire_time,
                          superseded_by, created_by, updated_by)
    SELECT %(tenant_id)s, (r ->> 'id')::uuid, r ->> 'scope', r ->> 'owner_id', r ->> 'key',
           r ->> 'value', coalesce((r ->> 'pinned')::boolean, false),
           coalesce((r ->> 'importance')::smallint, 0),
           r ->> 'source', ARRAY(SELECT jsonb_array_elements_text(r -> 'tags')),
           (r ->> 'confidence')::float8, coalesce(r -> 'metadata', '{}'::jsonb),
           r ->> 'conversation_provider', r ->> 'conversation_id',
           (r ->> 'created_at')::timestamptz, (r ->> 'updated_at')::timestamptz,
           (r ->> 'expire_time')::timestamptz, (r ->> 'superseded_by')::uuid,
           %(actor)s, %(actor)s
    FROM r
    ON CONFLICT DO NOTHING
    RETURNING *
),
groundings AS (
    INSERT INTO memory_groundings (tenant_id, memory_id, ordinal, message_position,
                                   provider_message_id, start_character, end_character,
                                   quote, raw_event_index, raw_start_character,
                                   raw_end_character, metadata)
    SELECT i.tenant_id, i.id, (g.ordinal - 1)::smallint, (g.item ->> 'message_position')::int,
           g.item ->> 'provider_message_id', (g.item ->> 'start_character')::int,
           (g.item ->> 'end_character')::int, g.item ->> 'quote',
           (g.item ->> 'raw_event_index')::int, (g.item ->> 'raw_start_character')::int,
           (g.item ->> 'raw_end_character')::int, coalesce(g.item -> 'metadata', '{}'::jsonb)
    FROM inserted AS i, r,
         jsonb_array_elements(r -> 'groundings') WITH ORDINALITY AS g(item, ordinal)
),
created AS (
    INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,
                               occurred_at, old_memory, new_memory)
    SELECT i.tenant_id, gen_random_uuid(), i.id, 'created', %(actor)s, clock_timestamp(),
           NULL, to_jsonb(i) - 'tenant_id'
    FROM inserted AS i
)
SELECT count(*) AS n FROM inserted
"""

_IMPORT_DECISION: LiteralString = """
WITH r AS (SELECT %(record)s::jsonb AS r),
inserted AS (
    INSERT INTO decisions (tenant_id, id, run_id, agent_id, card_type, action, summary,
                           result, resolution_status, created_at, resolved_at)
    SELECT %(tenant_id)s, (r ->> 'id')::uuid, r ->> 'run_id', r ->> 'agent_id',
           r ->> 'card_type', r ->> 'action', r ->> 'summary', r -> 'result',
           r ->> 'resolution_status', (r ->> 'created_at')::timestamptz,
           (r ->> 'resolved_at')::timestamptz
    FROM r
    ON CONFLICT DO NOTHING
    RETURNING tenant_id, id
),
reexaminations AS (
    INSERT INTO reexaminations (tenant_id, id, parent_decision_id, run_id, conviction_score,
                                notes, suggested_action, created_at)
    SELECT i.tenant_id, (x ->> 'id')::uuid, i.id, x ->> 'run_id',
           (x ->> 'conviction_score')::smallint, x ->> 'notes', x ->> 'suggested_action',
           (x ->> 'created_at')::timestamptz
    FROM inserted AS i, r, jsonb_array_elements(r -> 'reexaminations') AS x
    ON CONFLICT DO NOTHING
)
SELECT count(*) AS n FROM inserted
"""

_IMPORTS: dict[str, LiteralString] = {
    "card_type": _IMPORT_CARD_TYPE,
    "conversation": _IMPORT_CONVERSATION,
    "memory": _IMPORT_MEMORY,
    "decision": _IMPORT_DECISION,
}


class PgTransfer:
    """One tenant's records, out and in, on one connection (an import belongs in one
    transaction: a file that fails halfway writes nothing)."""

    def __init__(self, conn: Connection, tenant_id: str, *, keep_versions: int) -> None:
        self._conn = conn
        self._tenant = tenant_id
        self._keep = keep_versions

    async def export(self) -> AsyncIterator[dict[str, Any]]:
        for _, statement in _EXPORTS:
            for row in await fetch_all(self._conn, statement, {"tenant_id": self._tenant}):
                yield dict(row["record"])

    async def put(self, record: Mapping[str, Any]) -> bool:
        """Write one record where nothing holds its key; whether it was written."""
        kind = record["kind"]
        if kind == "block":
            return await self._put_block(record)
        params = {"tenant_id": self._tenant, "record": Jsonb(dict(record)), "actor": IMPORT_ACTOR}
        row = await fetch_one(self._conn, _IMPORTS[kind], params)
        return bool(row and row["n"])

    async def _put_block(self, record: Mapping[str, Any]) -> bool:
        """Through the block store, which keeps its version and archival lines."""
        scope = BlockScope(record["scope"])
        key = BlockKey(BlockLabel(record["label"]), scope, record.get("agent_id") or "")
        # Imported lines have no vectors yet: the indexer embeds them.
        blocks = PgBlocks(self._conn, Principal(self._tenant, str(record["user_id"])), None)
        outcome = await blocks.write(key, str(record["content"]), expected=None, keep=self._keep)
        return outcome.written is not None
