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

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, LiteralString, TypeVar

from agent_memory.domain.indexing import (
    WAITING_BOUND,
    WORKER_SILENCE_SECONDS,
    Claimed,
    IndexingStatus,
    LineToIndex,
    MemoryToIndex,
    Vector,
    WorkerBeat,
)
from agent_memory.domain.memory import HoldReason
from agent_memory.store.history import snapshot
from agent_memory.store.memory_sql import as_param, current, live
from agent_memory.store.repositories import IndexQueue
from agent_memory.store.sql import Connection, Row, execute, fetch_all, fetch_one
from agent_memory.store.vectors import (
    PGVECTOR_INSTALLED,
    line_hash,
    memory_hash,
    real_array,
    unread,
    unscreened,
)

T = TypeVar("T")

# A row is due in one of three ways, each claimed on its own so that an index serves
# each whatever the model (every statement is planned once, generically): its text
# changed since its vector was made (or it has none), or its vector is of a model
# ordered before or after the claiming one. Each orders by its index's key, so the
# planner walks the index rather than the table. The rows claimed are locked by that
# scan and updated by their ctid: a generic plan cannot tell how few rows a LIMIT
# parameter leaves, and would read the whole table to find them again.
# Stale rows are taken from the tenants after where the last claim ended (and round
# again), the tenants found sharing a claim evenly, so that a tenant with a long backlog
# takes no more than its share and holds up no one.
# Each way: which rows are due, the order a claim takes them in, and the order the
# tenants holding them are found in.
_WAYS: dict[str, tuple[LiteralString, LiteralString, LiteralString]] = {
    "stale": ("{a}.embedded_hash IS DISTINCT FROM {hashed}", "{a}.tenant_id", "{a}.tenant_id"),
    "older": ("{a}.embedding_model < %(model)s", "{a}.embedding_model", "min({a}.embedding_model)"),
    "newer": (
        "{a}.embedding_model > %(model)s",
        "{a}.embedding_model DESC",
        "max({a}.embedding_model) DESC",
    ),
}
# Each way in turn; the stale one twice: the tenants after the last claim's, then the
# others (up to that one).
_TURNS = [("stale", True), ("stale", False), ("older", False), ("newer", False)]
# Who the audit trail says held a memory for review.
SCREEN_ACTOR = "agent-memory:screen"

# Of a claim, the share kept for memories when lines are waiting too.
MEMORY_SHARE = 4


@dataclass(frozen=True)
class _Embedded:
    """A table whose rows get vectors, and every statement of the queue over it: the
    row's key (column, type, and the field of the claimed item that holds it), the
    hash of what its vector is made from, the columns a claim reads for it, and which
    of its rows are embedded at all."""

    table: LiteralString
    a: LiteralString
    key: tuple[tuple[LiteralString, LiteralString, str], ...]
    hashed: LiteralString
    reads: LiteralString
    only: LiteralString = "true"
    # Memories only: the store also holds for review those the learned screens flag,
    # with an audit event for each.
    screened: bool = False

    def due(self, way: str) -> LiteralString:
        """The rows due in ``way`` (the table's alias is ``a``)."""
        a = self.a
        due, _, _ = _WAYS[way]
        return f"""{due.format(a=a, hashed=self.hashed)}
      AND ({a}.index_lease_until IS NULL OR {a}.index_lease_until < now()) AND {self.only}"""

    def tenants(self, way: str) -> LiteralString:
        """The first tenants, in the way's order, with rows due: a read across tenants
        that locks nothing, so that each claim names one tenant (a sharded database
        routes it to that tenant's shard).

        Stale rows are found tenant after tenant between two bounds, one index probe
        each (the next tenant with a row due after the last one found): a long backlog
        is passed over, not read, whatever its size."""
        _, _, order = _WAYS[way]
        a = self.a
        if way == "stale":

            def nearest(after: LiteralString) -> LiteralString:
                return f"""(SELECT {a}.tenant_id FROM {self.table} AS {a}
              WHERE {a}.tenant_id > {after} AND {self.due(way)}
              ORDER BY {a}.tenant_id LIMIT 1)"""

            return f"""
WITH RECURSIVE found(tenant_id, n) AS (
    SELECT {nearest("%(from)s")}, 1
    UNION ALL
    SELECT {nearest("f.tenant_id")}, f.n + 1
    FROM found AS f
    WHERE f.tenant_id IS NOT NULL AND f.n < %(tenants)s
      AND (%(to)s::text IS NULL OR f.tenant_id < %(to)s)
)
SELECT tenant_id FROM found
WHERE tenant_id IS NOT NULL AND (%(to)s::text IS NULL OR tenant_id <= %(to)s)
"""
        return f"""
SELECT {a}.tenant_id FROM {self.table} AS {a}
WHERE {self.due(way)}
GROUP BY {a}.tenant_id
ORDER BY {order.format(a=a)}
LIMIT %(tenants)s
"""

    def claim(self, way: str) -> LiteralString:
        _, order, _ = _WAYS[way]
        a = self.a
        keys = ", ".join(f"{a}.{column} AS {field}" for column, _, field in self.key)
        return f"""
WITH due AS (
    SELECT {a}.ctid FROM {self.table} AS {a}
    WHERE {a}.tenant_id = %(tenant_id)s AND {self.due(way)}
    ORDER BY {order.format(a=a)}
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE {self.table} AS {a} SET index_lease_until = now() + %(lease)s
WHERE {a}.tenant_id = %(tenant_id)s AND {a}.ctid = ANY (ARRAY(SELECT ctid FROM due))
RETURNING {keys}, {self.reads}, {self.hashed} AS text_hash
"""

    def _matching(
        self, *extra: tuple[LiteralString, LiteralString], joined: bool = False
    ) -> LiteralString:
        """``FROM unnest(...) AS x ... WHERE`` the row is the one of ``x`` (``joined``: the
        table is read in that FROM too)."""
        columns = [(c, t) for c, t, _ in self.key] + list(extra)
        arrays = ", ".join(f"%({c})s::{t}[]" for c, t in columns)
        names = ", ".join(c for c, _ in columns)
        row = ", ".join(f"{self.a}.{c}" for c, _, _ in self.key)
        given = ", ".join(f"x.{c}" for c, _, _ in self.key)
        table = f"{self.table} AS {self.a}, " if joined else ""
        return (
            f"FROM {table}unnest({arrays}) AS x({names})\n"
            f"WHERE {self.a}.tenant_id = %(one_tenant)s AND ({row}) = ({given})"
        )

    @property
    def store(self) -> LiteralString:
        """A vector is kept only where the text is still the one it was made from."""
        if not self.screened:
            return f"""
UPDATE {self.table} AS {self.a}
SET embedding = x.embedding::real[], embedding_model = %(model)s, embedded_hash = x.text_hash,
    index_lease_until = NULL
{self._matching(("text_hash", "bigint"), ("embedding", "text"))}
  AND {self.hashed} = x.text_hash
"""
        a = self.a
        row = ", ".join(f"{a}.{c}" for c, _, _ in self.key)
        given = ", ".join(f"o.{c}" for c, _, _ in self.key)
        # o: the row as it is (locked), with what the worker read of it: x.hold, why a
        # screen holds the text (NULL: it does not), and x.judged, whether the screens
        # read it. They only ever hold. A text they read while the memory is held
        # replaces the reason a screen gave for the text before it (one they do not
        # hold leaves none), while a caller's request stands until a screen holds the
        # text. A change of the hold is a change of the memory: a new version, so a new
        # etag, audited with the memory as it was.
        held = "o.was_held OR o.hold IS NOT NULL"
        reason = """CASE WHEN o.hold IS NOT NULL THEN o.hold
            WHEN o.judged AND o.was_reason <> 'requested' THEN NULL
            ELSE o.was_reason END"""
        changed = f"(o.was_held, o.was_reason) IS DISTINCT FROM ({held}, {reason})"
        matching = self._matching(
            ("text_hash", "bigint"),
            ("embedding", "text"),
            ("hold", "text"),
            ("judged", "boolean"),
            joined=True,
        )
        # What the screens read counts only on a text they have not read: one a person
        # let go from a hold while it was read stands (an approval counts as read).
        unread_text = unread(a, "x.text_hash")
        return f"""
WITH o AS (
    SELECT x.tenant_id, x.id, x.text_hash, x.embedding,
           CASE WHEN {unread_text} THEN x.hold END AS hold,
           x.judged AND {unread_text} AS judged,
           {a}.held_for_review AS was_held, {a}.hold_reason AS was_reason,
           {a}.version AS was_version
    {matching}
      AND {self.hashed} = x.text_hash
    FOR UPDATE OF {a}
),
stored AS (
    UPDATE {self.table} AS {a}
    SET embedding = coalesce(o.embedding, {a}.embedding::real[]::text)::real[],
        embedding_model = %(model)s,
        embedded_hash = o.text_hash, index_lease_until = NULL,
        held_for_review = {held}, hold_reason = {reason},
        screened_hash = CASE WHEN o.judged THEN o.text_hash ELSE {a}.screened_hash END,
        version = o.was_version + ({changed})::int
    FROM o
    WHERE {a}.tenant_id = %(one_tenant)s AND ({row}) = ({given})
    RETURNING {a}.*, ({changed}) AS changed,
        jsonb_build_object('held_for_review', o.was_held, 'hold_reason', o.was_reason,
                           'version', o.was_version) AS was
),
held AS (
    INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,
                               occurred_at, old_memory, new_memory)
    SELECT s.tenant_id, gen_random_uuid(), s.id, 'updated', %(actor)s, clock_timestamp(),
           {snapshot("s")} - '{{changed,was}}'::text[] || s.was,
           {snapshot("s")} - '{{changed,was}}'::text[]
    FROM stored AS s
    WHERE s.changed
)
SELECT count(*) AS n FROM stored
"""

    @property
    def release(self) -> LiteralString:
        return f"UPDATE {self.table} AS {self.a} SET index_lease_until = NULL\n{self._matching()}"

    def keys(self, items: Sequence[object]) -> dict[str, Any]:
        """The parameters naming ``items`` (claimed from this table, of one tenant)."""
        named = {column: [getattr(x, f) for x in items] for column, _, f in self.key}
        return {**named, "one_tenant": named["tenant_id"][0]}


_LINES = _Embedded(
    table="archival_lines",
    a="l",
    key=(
        ("tenant_id", "text", "tenant_id"),
        ("user_id", "text", "user_id"),
        ("scope", "text", "scope"),
        ("agent_id", "text", "agent_id"),
        ("line_number", "integer", "line_number"),
    ),
    hashed=line_hash("l"),
    reads="l.content",
)
# Whether the screens judge a memory claimed: a person did not write its text and they
# have not read it, whatever its source (an approval counts as read: it holds for the
# text approved).
_JUDGED: LiteralString = f"({unread('m', memory_hash('m'))})"
_MEMORIES = _Embedded(
    table="memories",
    a="m",
    key=(("tenant_id", "text", "tenant_id"), ("id", "uuid", "memory_id")),
    hashed=memory_hash("m"),
    reads=f"m.key, m.value, {_JUDGED} AS judged",
    only=current("m"),
    screened=True,
)
_Turn = tuple[LiteralString, LiteralString, bool]
_CLAIM_LINES: list[_Turn] = [
    (_LINES.tenants(way), _LINES.claim(way), first) for way, first in _TURNS
]
_CLAIM_MEMORIES: list[_Turn] = [
    (_MEMORIES.tenants(way), _MEMORIES.claim(way), first) for way, first in _TURNS
]
# The current memories whose vector of their text, made by the claiming
# worker's model, the learned screens have not read (embedded before the screens
# existed), through their own index, which holds no other row: the next tenant that has
# some after the last one judged (one index probe), then a batch of its, claimed under a
# lease as the other claims are, read with their vector.
# (A memory expired but not yet swept is not judged, nor makes its tenant one to visit.)
_UNSCREENED: LiteralString = (
    f"""{unscreened("m")} AND m.embedding_model = %(model)s AND {live("m")}"""
)
NEXT_UNSCREENED_TENANT: LiteralString = f"""
SELECT m.tenant_id FROM memories AS m
WHERE {_UNSCREENED} AND m.tenant_id > %(after)s
ORDER BY m.tenant_id
LIMIT 1
"""
# The reads across tenants that find who has rows due (they lock and change nothing).
INDEX_DISCOVERY: tuple[LiteralString, ...] = (
    *(find for find, _, _ in [*_CLAIM_LINES, *_CLAIM_MEMORIES]),
    NEXT_UNSCREENED_TENANT,
)
CLAIM_UNSCREENED: LiteralString = f"""
WITH due AS (
    SELECT m.ctid FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND {_UNSCREENED}
      AND (m.index_lease_until IS NULL OR m.index_lease_until < now())
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE memories AS m SET index_lease_until = now() + %(lease)s
WHERE m.tenant_id = %(tenant_id)s AND m.ctid = ANY (ARRAY(SELECT ctid FROM due))
RETURNING m.tenant_id, m.id AS memory_id, m.key, m.value,
          {memory_hash("m")} AS text_hash, m.embedding::real[] AS vector
"""


# An index worker's heartbeat, which also lets go of the rows of workers long gone; and
# its goodbye. The table is the service's own (no tenant's rows): a reference table.
BEAT: LiteralString = """
WITH gone AS (
    DELETE FROM index_workers WHERE seen_at < now() - interval '1 hour'
)
INSERT INTO index_workers AS w (worker, model, embedded, per_second)
VALUES (%(worker)s, %(model)s, %(embedded)s, %(per_second)s)
ON CONFLICT (worker) DO UPDATE
SET model = excluded.model, embedded = excluded.embedded, per_second = excluded.per_second,
    seen_at = now()
"""
LEAVE: LiteralString = "DELETE FROM index_workers WHERE worker = %(worker)s"


def _indexing_status(line_tenants: LiteralString, memory_tenants: LiteralString) -> LiteralString:
    return f"""
SELECT (SELECT count(*) FROM (
            SELECT FROM archival_lines AS l
            WHERE {line_tenants}
              AND l.embedded_hash IS DISTINCT FROM {line_hash("l")}
            LIMIT %(bound)s) AS x) AS lines,
       (SELECT count(*) FROM (
            SELECT FROM memories AS m
            WHERE {memory_tenants}
              AND m.embedded_hash IS DISTINCT FROM {memory_hash("m")} AND {current("m")}
            LIMIT %(bound)s) AS x) AS memories,
       (SELECT count(*) FROM index_workers AS w
        WHERE w.model = %(model)s
          AND w.seen_at > now() - interval '{WORKER_SILENCE_SECONDS} seconds') AS workers,
       (SELECT coalesce(sum(w.per_second), 0) FROM index_workers AS w
        WHERE w.model = %(model)s
          AND w.seen_at > now() - interval '{WORKER_SILENCE_SECONDS} seconds') AS per_second
"""


# How indexing stands for a tenant: its rows waiting for a vector of their text as it is
# (found through the queue's own index, counted up to a bound), and the workers of the
# model heard from lately.
INDEXING_STATUS = _indexing_status("l.tenant_id = %(tenant_id)s", "m.tenant_id = %(tenant_id)s")
# The same across every tenant, for the service's own gauges.
INDEXING_OVERVIEW = _indexing_status("true", "true")


def indexing_status(row: Row) -> IndexingStatus:
    """The status from the row of :data:`INDEXING_STATUS`."""
    lines, memories = int(row["lines"]), int(row["memories"])
    return IndexingStatus(
        waiting_lines=lines,
        waiting_memories=memories,
        waiting_capped=max(lines, memories) >= WAITING_BOUND,
        workers=int(row["workers"]),
        per_second=float(row["per_second"]),
    )


def status_params(tenant_id: str, model: str) -> dict[str, Any]:
    return {"tenant_id": tenant_id, "model": model, "bound": WAITING_BOUND}


def _by_tenant(items: Sequence[T], tenant_of: Callable[[T], str]) -> list[list[T]]:
    """``items`` in groups of one tenant each, in the order they came."""
    groups: dict[str, list[T]] = {}
    for item in items:
        groups.setdefault(tenant_of(item), []).append(item)
    return list(groups.values())


def _stored(
    table: _Embedded,
    model: str,
    done: Sequence[tuple[Any, Vector]],
    holds: Mapping[uuid.UUID, HoldReason],
    screened: bool,
    fresh_vectors: bool = True,
) -> dict[str, Any]:
    params = {
        **table.keys([x for x, _ in done]),
        "text_hash": [x.text_hash for x, _ in done],
        # None: the vector stored is the one read, kept as it is.
        "embedding": [real_array(v) if fresh_vectors else None for _, v in done],
        "model": model,
    }
    if table.screened:
        params["hold"] = [as_param(holds.get(x.memory_id)) for x, _ in done]
        params["judged"] = [x.judged and screened for x, _ in done]
        params["actor"] = SCREEN_ACTOR
    return params


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

        async def take(statements: list[_Turn], room: int, into: list[Any], kind: Any) -> bool:
            """Claim into ``into`` up to ``room``, the tenants with rows due sharing it
            evenly (what one leaves goes to those that had more); whether the table
            may hold more."""
            for find, claim, after_first in statements:
                if room <= 0:
                    return True
                params = {
                    "model": model,
                    "from": after_tenant if after_first else "",
                    "to": None if after_first else after_tenant,  # None: no bound
                    "tenants": room,
                    "lease": lease,
                }
                waiting = [t["tenant_id"] for t in await fetch_all(self._conn, find, params)]
                while waiting and room > 0:
                    share = max(1, room // len(waiting))
                    more = []
                    for tenant in waiting:
                        asked = min(share, room)
                        if asked <= 0:
                            break
                        params.update(tenant_id=tenant, limit=asked)
                        found = [kind(**r) for r in await fetch_all(self._conn, claim, params)]
                        into.extend(found)
                        room -= len(found)
                        if len(found) == asked:
                            more.append(tenant)
                    waiting = more
            return room <= 0

        more_lines = await take(_CLAIM_LINES, limit - limit // MEMORY_SHARE, lines, LineToIndex)
        await take(_CLAIM_MEMORIES, limit - len(lines), memories, MemoryToIndex)
        if more_lines:  # what the memories left is for lines
            await take(_CLAIM_LINES, limit - len(lines) - len(memories), lines, LineToIndex)
        return Claimed(lines=lines, memories=memories)

    async def claim_unscreened(
        self, *, model: str, limit: int, lease: timedelta, after_tenant: str = ""
    ) -> tuple[list[tuple[MemoryToIndex, Vector]], str]:
        for after in dict.fromkeys((after_tenant, "")):  # after the last one, then round
            row = await fetch_one(
                self._conn, NEXT_UNSCREENED_TENANT, {"model": model, "after": after}
            )
            if row is not None:
                break
        else:
            return [], ""
        tenant: str = row["tenant_id"]
        params = {"model": model, "tenant_id": tenant, "limit": limit, "lease": lease}
        found: list[tuple[MemoryToIndex, Vector]] = []
        for claimed in await fetch_all(self._conn, CLAIM_UNSCREENED, params):
            vector = claimed.pop("vector")
            found.append((MemoryToIndex(**claimed, judged=True), vector))
        return found, tenant

    async def store(
        self,
        *,
        model: str,
        lines: Sequence[tuple[LineToIndex, Vector]],
        memories: Sequence[tuple[MemoryToIndex, Vector]],
        holds: Mapping[uuid.UUID, HoldReason] | None = None,
        screened: bool = False,
        fresh_vectors: bool = True,
    ) -> int:
        kept = 0
        tables: list[tuple[_Embedded, Sequence[tuple[Any, Vector]]]] = [
            (_LINES, lines),
            (_MEMORIES, memories),
        ]
        for table, done in tables:
            for group in _by_tenant(done, lambda pair: str(pair[0].tenant_id)):
                params = _stored(table, model, group, holds or {}, screened, fresh_vectors)
                if table.screened:
                    row = await fetch_one(self._conn, table.store, params)
                    kept += int(row["n"]) if row else 0
                else:
                    kept += await execute(self._conn, table.store, params)
        return kept

    async def beat(self, beat: WorkerBeat) -> None:
        await execute(
            self._conn,
            BEAT,
            {
                "worker": beat.worker,
                "model": beat.model,
                "embedded": beat.embedded,
                "per_second": beat.per_second,
            },
        )

    async def leave(self, worker: str) -> None:
        await execute(self._conn, LEAVE, {"worker": worker})

    async def release(
        self, *, lines: Sequence[LineToIndex], memories: Sequence[MemoryToIndex]
    ) -> None:
        tables: list[tuple[_Embedded, Sequence[Any]]] = [(_LINES, lines), (_MEMORIES, memories)]
        for table, held in tables:
            for group in _by_tenant(held, lambda item: str(item.tenant_id)):
                await execute(self._conn, table.release, table.keys(group))
