"""The background indexer's queue: lines and memories without a current vector,
claimed under leases with SKIP LOCKED and given their vectors.

Nothing is queued: a row is due when its vector is missing, was made from another
text (its ``embedded_hash`` is not its text's hash: every write of any kind makes a
row due by construction), or was made by another model. Two partial indexes find
such rows without reading the others. A claim sets ``index_lease_until``; the
vector is stored only where the text is still the one claimed, so a row changed
meanwhile is claimed again for its new text.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any, LiteralString

from agent_memory.domain.indexing import Claimed, LineToIndex, MemoryToIndex, Vector
from agent_memory.store.memories import current
from agent_memory.store.repositories import IndexQueue
from agent_memory.store.sql import Connection, execute, fetch_all, fetch_one
from agent_memory.store.vectors import PGVECTOR_INSTALLED, line_hash, memory_hash

_LINE_KEY: LiteralString = "tenant_id, user_id, scope, agent_id, line_number"


# A row is due in one of three ways, each claimed on its own so that an index serves
# each whatever the model (every statement is planned once, generically): its text
# changed since its vector was made (or it has none), or its vector is of a model
# ordered before or after the claiming one. Each orders by its index's key, so the
# planner walks the index rather than the table. The rows claimed are locked by that
# scan and updated by their ctid: a generic plan cannot tell how few rows a LIMIT
# parameter leaves, and would read the whole table to find them again.
# Stale rows are taken tenant by tenant, from the one after where the last claim ended
# (and round again), so a tenant with a long backlog does not hold up the others.
_WAYS: dict[str, tuple[LiteralString, LiteralString]] = {
    "stale": (
        "{a}.embedded_hash IS DISTINCT FROM {hashed}"
        " AND ({a}.tenant_id > %(after)s) = %(after_first)s",
        "{a}.tenant_id",
    ),
    "older": ("{a}.embedding_model < %(model)s", "{a}.embedding_model"),
    "newer": ("{a}.embedding_model > %(model)s", "{a}.embedding_model DESC"),
}
_FREE: LiteralString = "({a}.index_lease_until IS NULL OR {a}.index_lease_until < now())"


def _claim_lines(way: str) -> LiteralString:
    due, order = _WAYS[way]
    return f"""
WITH due AS (
    SELECT l.ctid FROM archival_lines AS l
    WHERE {due.format(a="l", hashed=line_hash("l"))} AND {_FREE.format(a="l")}
    ORDER BY {order.format(a="l")}
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE archival_lines AS l SET index_lease_until = now() + %(lease)s
WHERE l.ctid = ANY (ARRAY(SELECT ctid FROM due))
RETURNING l.tenant_id, l.user_id, l.scope, l.agent_id, l.line_number, l.content,
          {line_hash("l")} AS text_hash
"""


def _claim_memories(way: str) -> LiteralString:
    due, order = _WAYS[way]
    return f"""
WITH due AS (
    SELECT m.ctid FROM memories AS m
    WHERE {due.format(a="m", hashed=memory_hash("m"))} AND {_FREE.format(a="m")}
      AND {current("m")}
    ORDER BY {order.format(a="m")}
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE memories AS m SET index_lease_until = now() + %(lease)s
WHERE m.ctid = ANY (ARRAY(SELECT ctid FROM due))
RETURNING m.tenant_id, m.id, m.key, m.value, {memory_hash("m")} AS text_hash
"""


# Each way in turn; the stale one twice: the tenants after the last claim's, then the
# others.
_TURNS = [("stale", True), ("stale", False), ("older", False), ("newer", False)]
_CLAIM_LINES = [(_claim_lines(way), first) for way, first in _TURNS]
_CLAIM_MEMORIES = [(_claim_memories(way), first) for way, first in _TURNS]
# Of a claim, the share kept for memories when lines are waiting too.
MEMORY_SHARE = 4

# A vector is kept only where the text is still the one it was made from.
_STORE_LINES: LiteralString = f"""
UPDATE archival_lines AS l
SET embedding = x.embedding::real[], embedding_model = %(model)s, embedded_hash = x.text_hash,
    index_lease_until = NULL
FROM unnest(%(tenant_ids)s::text[], %(user_ids)s::text[], %(scopes)s::text[],
            %(agent_ids)s::text[], %(line_numbers)s::integer[], %(hashes)s::bigint[],
            %(embeddings)s::text[])
     AS x({_LINE_KEY}, text_hash, embedding)
WHERE (l.tenant_id, l.user_id, l.scope, l.agent_id, l.line_number)
    = (x.tenant_id, x.user_id, x.scope, x.agent_id, x.line_number)
  AND {line_hash("l")} = x.text_hash
"""

_STORE_MEMORIES: LiteralString = f"""
UPDATE memories AS m
SET embedding = x.embedding::real[], embedding_model = %(model)s, embedded_hash = x.text_hash,
    index_lease_until = NULL
FROM unnest(%(tenant_ids)s::text[], %(ids)s::uuid[], %(hashes)s::bigint[],
            %(embeddings)s::text[])
     AS x(tenant_id, id, text_hash, embedding)
WHERE m.tenant_id = x.tenant_id AND m.id = x.id AND {memory_hash("m")} = x.text_hash
"""

_RELEASE_LINES: LiteralString = f"""
UPDATE archival_lines AS l SET index_lease_until = NULL
FROM unnest(%(tenant_ids)s::text[], %(user_ids)s::text[], %(scopes)s::text[],
            %(agent_ids)s::text[], %(line_numbers)s::integer[]) AS x({_LINE_KEY})
WHERE (l.tenant_id, l.user_id, l.scope, l.agent_id, l.line_number)
    = (x.tenant_id, x.user_id, x.scope, x.agent_id, x.line_number)
"""

_RELEASE_MEMORIES: LiteralString = """
UPDATE memories AS m SET index_lease_until = NULL
FROM unnest(%(tenant_ids)s::text[], %(ids)s::uuid[]) AS x(tenant_id, id)
WHERE m.tenant_id = x.tenant_id AND m.id = x.id
"""


def _array(vector: Vector | None) -> str | None:
    """PostgreSQL's text form of a real[] (``None``: no vector)."""
    return None if vector is None else "{" + ",".join(repr(float(x)) for x in vector) + "}"


def _line_keys(lines: Sequence[LineToIndex]) -> dict[str, Any]:
    return {
        "tenant_ids": [x.tenant_id for x in lines],
        "user_ids": [x.user_id for x in lines],
        "scopes": [x.scope for x in lines],
        "agent_ids": [x.agent_id for x in lines],
        "line_numbers": [x.line_number for x in lines],
    }


def _memory_keys(memories: Sequence[MemoryToIndex]) -> dict[str, Any]:
    return {"tenant_ids": [x.tenant_id for x in memories], "ids": [x.memory_id for x in memories]}


class PgIndexQueue(IndexQueue):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    async def vectors_available(self) -> bool:
        row = await fetch_one(self._conn, PGVECTOR_INSTALLED, {})
        return bool(row and row["installed"])

    async def claim(
        self, *, model: str, limit: int, lease: timedelta, after_tenant: str = ""
    ) -> Claimed:
        lines: list[LineToIndex] = []
        memories: list[MemoryToIndex] = []
        reserved = limit // MEMORY_SHARE

        async def take_lines(room: int) -> None:
            for statement, after_first in _CLAIM_LINES:
                if len(lines) >= room:
                    return
                params = {
                    "model": model,
                    "limit": room - len(lines),
                    "lease": lease,
                    "after": after_tenant,
                    "after_first": after_first,
                }
                lines.extend(
                    LineToIndex(
                        tenant_id=r["tenant_id"],
                        user_id=r["user_id"],
                        scope=r["scope"],
                        agent_id=r["agent_id"],
                        line_number=r["line_number"],
                        content=r["content"],
                        text_hash=r["text_hash"],
                    )
                    for r in await fetch_all(self._conn, statement, params)
                )

        await take_lines(limit - reserved)
        for statement, after_first in _CLAIM_MEMORIES:
            if len(lines) + len(memories) >= limit:
                break
            params = {
                "model": model,
                "limit": limit - len(lines) - len(memories),
                "lease": lease,
                "after": after_tenant,
                "after_first": after_first,
            }
            memories.extend(
                MemoryToIndex(
                    tenant_id=r["tenant_id"],
                    memory_id=r["id"],
                    key=r["key"],
                    value=r["value"],
                    text_hash=r["text_hash"],
                )
                for r in await fetch_all(self._conn, statement, params)
            )
        await take_lines(limit - len(memories))
        return Claimed(lines=lines, memories=memories)

    async def store(
        self,
        *,
        model: str,
        lines: Sequence[tuple[LineToIndex, Vector | None]],
        memories: Sequence[tuple[MemoryToIndex, Vector | None]],
    ) -> int:
        kept = 0
        if lines:
            params = {
                **_line_keys([x for x, _ in lines]),
                "hashes": [x.text_hash for x, _ in lines],
                "embeddings": [_array(v) for _, v in lines],
                "model": model,
            }
            kept += await execute(self._conn, _STORE_LINES, params)
        if memories:
            params = {
                **_memory_keys([x for x, _ in memories]),
                "hashes": [x.text_hash for x, _ in memories],
                "embeddings": [_array(v) for _, v in memories],
                "model": model,
            }
            kept += await execute(self._conn, _STORE_MEMORIES, params)
        return kept

    async def release(
        self, *, lines: Sequence[LineToIndex], memories: Sequence[MemoryToIndex]
    ) -> None:
        if lines:
            await execute(self._conn, _RELEASE_LINES, _line_keys(lines))
        if memories:
            await execute(self._conn, _RELEASE_MEMORIES, _memory_keys(memories))
