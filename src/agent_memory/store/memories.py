"""Memories, each change in one statement with its audit event.

The audit event's snapshots are the stored rows themselves (``to_jsonb``), read back
through :func:`memory_from_row` like any other row, so a new column reaches the
audit trail without a line of code.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, LiteralString

import psycopg
from psycopg.types.json import Jsonb

from agent_memory.domain.errors import AlreadyExists
from agent_memory.domain.events import MemoryEventType
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import (
    LEARNING_KEY_PREFIX,
    Grounding,
    KeyHeld,
    ListingPosition,
    Memory,
    MemoryPatch,
    MemorySource,
    MemoryWrite,
    Owner,
    OwnerSummary,
    PeriodInverted,
    Scope,
    Written,
)
from agent_memory.domain.memory_query import (
    CURRENT,
    FILTER_MAX_CHARS,
    NATURAL,
    AllOf,
    AnyOf,
    Condition,
    MemoryOrder,
    MemoryQuery,
    Not,
    OrderPosition,
)
from agent_memory.store.columns import (
    EVIDENCE,
    MERGED,
    PATCHED,
    WRITTEN,
    clearable,
    compact,
    insert_columns,
    insert_values,
    merged,
    named,
    patched,
    stamps,
)
from agent_memory.store.history import (
    BY_ID,
    BY_OWNER,
    HISTORY_CROSSED,
    HISTORY_SWEEP_REACHED,
    HISTORY_SWEPT,
    PRUNE_EVENTS,
    at_instant,
    snapshot,
)
from agent_memory.store.memory_sql import (
    GROUNDINGS,
    agent_order,
    columns,
    current,
    live,
    mark_used,
    memory_from_row,
    owned_by,
    params_of,
    unheld,
    valid_now,
    workspace_order,
)
from agent_memory.store.models import MemoryRow
from agent_memory.store.repositories import ExpirySweep, MemoryRepository
from agent_memory.store.sql import (
    Connection,
    Row,
    execute,
    fetch_all,
    fetch_one,
)
from agent_memory.store.vectors import current_vector, memory_hash


def embedded(a: LiteralString) -> LiteralString:
    """Whether memory ``a`` has its vector of the model recall runs (the parameter
    ``index_model``), made from its key and value as they are now: read from the row
    itself, at no cost but a hash of its text. NULL when recall is by words only."""
    model: LiteralString = "%(index_model)s::text"
    return (
        f"CASE WHEN {model} IS NULL THEN NULL"
        f" ELSE coalesce({current_vector(a, memory_hash(a), model)}, false) END AS embedded"
    )


def returned(alias: LiteralString) -> LiteralString:
    """What the statements of memories return of the row ``alias``: its columns and
    whether it is embedded."""
    return f"{columns(alias)}, {embedded(alias)}"


def _event(
    kind: LiteralString, old: LiteralString | None, new: LiteralString | None
) -> LiteralString:
    """The audit insert of one event per row of the CTE ``new`` (the row after the change)
    and ``old`` (before it); a creation has no ``old``, a deletion no ``new``. A change
    happened when the row says it was made (its ``updated_at``), so that the memory read
    as of that instant is the one written; a deletion, when its event is written."""
    at: LiteralString = "clock_timestamp()" if new is None else f"{new}.updated_at"
    if old is None:
        assert new is not None
        row, rows = new, new
    elif new is None:
        row, rows = old, old
    else:
        row, rows = new, f"{new} JOIN {old} ON {old}.id = {new}.id"
    return f"""
    INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,
                               occurred_at, old_memory, new_memory)
    SELECT {row}.tenant_id, gen_random_uuid(), {row}.id, {kind}, %(actor)s,
           {at}, {_snapshot(old)}, {_snapshot(new)}
    FROM {rows}"""


def _snapshot(name: LiteralString | None) -> LiteralString:
    """A row as the audit keeps it: the stored row itself, less the tenant."""
    return "NULL::jsonb" if name is None else snapshot(name)


_AT_KEY = """
    tenant_id = %(tenant_id)s AND scope = %(scope)s AND owner_id = %(owner_id)s
    AND key = %(key)s"""

# Who wrote the text (``%(person)s``: the writer where a person, else NULL): a person's
# own words count as read by the learned screens (see Principal.person). A write of the
# key's text makes it the writer's, the same text too.
_NEW_ROW = f"""
    INSERT INTO memories ({insert_columns(MemoryRow)}, text_by)
    SELECT {insert_values(MemoryRow)}, %(person)s"""


def _write(lock: LiteralString) -> LiteralString:
    """Read the row at the key, if any: update it when the source matches and it is still
    the version read, insert one when there is none, and report it when it belongs to
    another source ("held") or changed since it was read ("moved").

    Without a lock nothing waits and nothing is written twice to the row; a concurrent
    insert of the key makes the insert do nothing and the statement return no row. With
    ``FOR UPDATE`` the read waits for a concurrent writer and sees what it left.
    """
    return f"""
WITH current AS (
    SELECT * FROM memories AS m WHERE {_AT_KEY} AND {live("m")}
    {lock}
),
updated AS (
    UPDATE memories AS m
    SET {merged(MemoryRow, "m")}, text_by = %(person)s
    WHERE {_AT_KEY} AND m.id = (SELECT id FROM current)
      AND m.version = (SELECT version FROM current)
      AND (SELECT source FROM current) = %(source)s
    RETURNING m.*
),
inserted AS ({_NEW_ROW}
    WHERE NOT EXISTS (SELECT FROM current)
    ON CONFLICT (tenant_id, scope, owner_id, key) DO NOTHING
    RETURNING *
),
created_event AS ({_event("'created'", None, "inserted")}),
updated_event AS ({_event("'updated'", "current", "updated")}),
outcomes AS (
    SELECT 'created' AS outcome, n.* FROM inserted AS n
    UNION ALL SELECT 'updated', n.* FROM updated AS n
    UNION ALL SELECT 'held', c.* FROM current AS c WHERE c.source <> %(source)s
    UNION ALL
    SELECT 'moved', c.* FROM current AS c
    WHERE c.source = %(source)s AND NOT EXISTS (SELECT FROM updated)
)
SELECT n.outcome, {returned("n")} FROM outcomes AS n
"""


# Compacted: psycopg parses a statement of more than 4,096 bytes again at every call.
_WRITE = compact(_write(""))
_WRITE_LOCKED = compact(_write("FOR UPDATE"))

_CREATE: LiteralString = f"""
WITH inserted AS ({_NEW_ROW}
    ON CONFLICT (tenant_id, scope, owner_id, key) DO NOTHING
    RETURNING *
),
created_event AS ({_event("'created'", None, "inserted")})
SELECT {returned("n")} FROM inserted AS n
"""

_GET: LiteralString = f"""
SELECT {returned("m")}, {GROUNDINGS}
FROM memories AS m
WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s AND {live("m")}
"""
_GET_LOCKED: LiteralString = _GET + "FOR UPDATE OF m"

_FIND_BY_KEY: LiteralString = (
    f"SELECT {returned('m')} FROM memories AS m WHERE {_AT_KEY} AND {live('m')}"
)
_GET_BY_KEY: LiteralString = (
    f"SELECT {returned('m')}, {GROUNDINGS} FROM memories AS m WHERE {_AT_KEY} AND {live('m')}"
)

# One change of a locked row: "changed" holds the new row when the change applies.
_CHANGE_OLD: LiteralString = f"""
WITH old AS (
    SELECT * FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s AND {live("m")}
    FOR UPDATE
),"""
_CHANGED_OR_OLD: LiteralString = f"""
SELECT {returned("m")}, {GROUNDINGS}
FROM (SELECT * FROM changed UNION ALL SELECT * FROM old WHERE NOT EXISTS (SELECT FROM changed))
     AS m
"""

# Why a memory is held once an update by mask applies: none once it is let go, the
# reason it had while it stays held, and a caller's request when the update holds it.
_HOLD_REASON: LiteralString = """CASE
    WHEN NOT coalesce(%(held_for_review)s::boolean, old.held_for_review) THEN NULL
    WHEN old.held_for_review THEN old.hold_reason
    ELSE 'requested' END"""

# An approval counts as the screens' reading of the text let go: the index worker never
# holds that text again (a new text is judged again).
_SCREENED: LiteralString = f"""CASE
    WHEN old.held_for_review AND NOT coalesce(%(held_for_review)s::boolean, true)
    THEN {memory_hash("old")} ELSE old.screened_hash END"""
# A new key or value makes the text the caller's: a person's (see Principal.person) when
# the rest of it was a person's already, or they give both; else no person's. A change
# that leaves both (a pin, a note, a period) leaves whose it is.
_BY_PERSON: LiteralString = """CASE
    WHEN %(key)s::text IS NOT NULL OR %(value)s::text IS NOT NULL
    THEN CASE WHEN old.text_by IS NOT NULL
                   OR (%(key)s::text IS NOT NULL AND %(value)s::text IS NOT NULL)
              THEN %(person)s::text END
    ELSE old.text_by END"""

_UPDATE: LiteralString = (
    _CHANGE_OLD
    + f"""
changed AS (
    UPDATE memories AS m
    SET {patched(MemoryRow, "m")}, hold_reason = {_HOLD_REASON}, screened_hash = {_SCREENED},
        text_by = {_BY_PERSON}
    FROM old
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s
    RETURNING m.*
),
event AS ({_event("%(event)s", "old", "changed")})
"""
    + _CHANGED_OR_OLD
)

_PIN: LiteralString = (
    _CHANGE_OLD
    + f"""
changed AS (
    UPDATE memories AS m
    SET pinned = %(pinned)s, {stamps(MemoryRow, "m")}
    FROM old
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s AND old.pinned <> %(pinned)s
    RETURNING m.*
),
event AS ({_event("CASE WHEN %(pinned)s THEN 'pinned' ELSE 'unpinned' END", "old", "changed")})
"""
    + _CHANGED_OR_OLD
)

# Superseding a memory: a new version that names its replacement, with its event. A
# memory of another owner than the replacement's, or already superseded by it, is left
# as it is (and returned so, for the caller to tell which). Its fact's period ends when
# the replacement was written (``at``), unless it ended before; a period that had not
# started by then is left as it is (it never held, and the memory is left out anyway).
_SUPERSEDE: LiteralString = (
    _CHANGE_OLD
    + f"""
changed AS (
    UPDATE memories AS m
    SET superseded_by = %(by)s,
        valid_end_time = CASE
            WHEN old.valid_start_time IS NULL OR old.valid_start_time < %(at)s::timestamptz
            THEN least(coalesce(old.valid_end_time, %(at)s::timestamptz), %(at)s::timestamptz)
            ELSE old.valid_end_time END,
        {stamps(MemoryRow, "m")}
    FROM old
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s
      AND old.scope = %(scope)s AND old.owner_id = %(owner_id)s AND old.id <> %(by)s
      AND old.superseded_by IS DISTINCT FROM %(by)s
    RETURNING m.*
),
event AS ({_event("'superseded'", "old", "changed")})
"""
    + _CHANGED_OR_OLD
)

_DELETE: LiteralString = (
    _CHANGE_OLD
    + f"""
gone AS (
    DELETE FROM memories AS m
    USING old
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(id)s
      AND (%(version)s::bigint IS NULL OR old.version = %(version)s::bigint)
    RETURNING m.id
),
event AS ({_event("'deleted'", "old", None)} WHERE EXISTS (SELECT FROM gone))
SELECT {returned("old")}, EXISTS (SELECT FROM gone) AS deleted FROM old
"""
)

# Who the audit trail says deleted a memory that expired.
EXPIRY_ACTOR = "agent-memory:expiry"


def _expired_deletion(rows: LiteralString) -> LiteralString:
    """Delete the expired memories ``rows`` selects (``FOR UPDATE``); the count deleted.

    Expired means gone: as forgetting does, each memory's audit events become
    content-free tombstones (their snapshots emptied), and its DELETED event names no
    content either. Groundings go with their memory."""
    return f"""
WITH old AS ({rows}),
gone AS (
    DELETE FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = ANY (ARRAY(SELECT id FROM old))
    RETURNING m.tenant_id, m.id
),
emptied AS (
    UPDATE memory_events AS e SET old_memory = NULL, new_memory = NULL
    WHERE e.tenant_id = %(tenant_id)s AND e.memory_id = ANY (ARRAY(SELECT id FROM gone))
      AND (e.old_memory IS NOT NULL OR e.new_memory IS NOT NULL)
),
event AS (
    INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,
                               occurred_at, old_memory, new_memory)
    SELECT gone.tenant_id, gen_random_uuid(), gone.id, 'deleted', %(actor)s,
           clock_timestamp(), NULL, NULL
    FROM gone
)
SELECT count(*) AS n FROM gone
"""


_DELETE_EXPIRED_AT_KEY: LiteralString = _expired_deletion(
    f"SELECT * FROM memories AS m WHERE {_AT_KEY} AND m.expire_time <= now() FOR UPDATE"
)

# The tenants holding expired memories: a read across tenants that locks nothing, so
# that each sweep names one tenant (a sharded database routes it to that tenant's shard).
EXPIRED_TENANTS: LiteralString = """
SELECT DISTINCT m.tenant_id FROM memories AS m WHERE m.expire_time <= now() LIMIT %(limit)s
"""
# One tenant's, oldest expiry first, at most a batch; rows another sweeper (another
# replica) holds are skipped, not waited for.
SWEEP_EXPIRED: LiteralString = _expired_deletion(
    """SELECT * FROM memories AS m WHERE m.tenant_id = %(tenant_id)s AND m.expire_time <= now()
    ORDER BY m.expire_time LIMIT %(limit)s FOR UPDATE SKIP LOCKED"""
)

_DELETE_GROUNDINGS: LiteralString = """
DELETE FROM memory_groundings WHERE tenant_id = %(tenant_id)s AND memory_id = %(id)s
"""
_INSERT_GROUNDINGS: LiteralString = """
INSERT INTO memory_groundings (tenant_id, memory_id, ordinal, message_position,
                               provider_message_id, start_character, end_character, quote,
                               raw_event_index, raw_start_character, raw_end_character,
                               metadata)
SELECT %(tenant_id)s, %(id)s, g.ordinal, g.message_position, g.provider_message_id,
       g.start_character, g.end_character, g.quote, g.raw_event_index,
       g.raw_start_character, g.raw_end_character, coalesce(g.metadata, '{}')
FROM jsonb_to_recordset(%(groundings)s::jsonb) AS g(
    ordinal smallint, message_position integer, provider_message_id text,
    start_character integer, end_character integer, quote text, raw_event_index integer,
    raw_start_character integer, raw_end_character integer, metadata jsonb)
"""


# Listing orders, each ending in a unique column, and the keyset predicate that continues
# each after a position.
_OWNED: LiteralString = f"""
SELECT {returned("m")}, {GROUNDINGS}
FROM memories AS m
WHERE {owned_by("m", "%(scope)s", "%(owner_id)s")}"""


_AGENT_ORDER: LiteralString = f" ORDER BY {agent_order('m')} LIMIT %(limit)s"
_AGENT_AFTER: LiteralString = """
  AND (m.pinned < %(pinned)s
       OR (m.pinned = %(pinned)s AND (m.importance < %(importance)s
           OR (m.importance = %(importance)s AND m.key > %(key)s))))"""
_WORKSPACE_ORDER: LiteralString = f" ORDER BY {workspace_order('m')} LIMIT %(limit)s"
_WORKSPACE_AFTER: LiteralString = """
  AND (m.pinned < %(pinned)s
       OR (m.pinned = %(pinned)s AND (m.importance < %(importance)s
           OR (m.importance = %(importance)s AND (m.updated_at < %(updated_at)s
               OR (m.updated_at = %(updated_at)s AND m.id > %(id)s))))))"""
_ORDERS: dict[Scope, tuple[LiteralString, LiteralString]] = {
    Scope.AGENT: (_AGENT_AFTER, _AGENT_ORDER),
    Scope.WORKSPACE: (_WORKSPACE_AFTER, _WORKSPACE_ORDER),
}
# What a listing adds of expired and superseded rows where its filter says nothing.
_EXPIRED: dict[bool, LiteralString] = {
    True: " AND m.expire_time IS NOT NULL AND m.expire_time <= now()",
    False: f" AND {live('m')}",
}
_SUPERSEDED: dict[bool, LiteralString] = {
    True: " AND m.superseded_by IS NOT NULL",
    False: " AND m.superseded_by IS NULL",
}
# A filter's restrictions: each a fixed fragment around the parameter ``{p}`` names.
# None of them is ever NULL, so that NOT means "not" (SQL's NOT NULL is NULL).
_COLUMNS: dict[str, LiteralString] = {
    "key": "m.key",
    "source": "m.source",
    "pinned": "m.pinned",
    "held_for_review": "m.held_for_review",
    "importance": "m.importance",
    "create_time": "m.created_at",
    "update_time": "m.updated_at",
    # An open end compares as the beginning (start) or the end (end) of time.
    "valid_start_time": "coalesce(m.valid_start_time, '-infinity'::timestamptz)",
    "valid_end_time": "coalesce(m.valid_end_time, 'infinity'::timestamptz)",
}
_OPERATORS: dict[str, LiteralString] = {
    "=": "=",
    "!=": "<>",
    "<": "<",
    "<=": "<=",
    ">": ">",
    ">=": ">=",
}
_TEXT: LiteralString = (
    "(strpos(lower(m.key), lower(%({p})s)) > 0 OR strpos(lower(m.value), lower(%({p})s)) > 0)"
)
_TAG: LiteralString = "m.tags @> ARRAY[%({p})s::text]"
_IS_EXPIRED: dict[bool, LiteralString] = {
    True: "(m.expire_time IS NOT NULL AND m.expire_time <= now())",
    False: live("m"),
}
_IS_SUPERSEDED: dict[bool, LiteralString] = {
    True: "m.superseded_by IS NOT NULL",
    False: "m.superseded_by IS NULL",
}
_IS_VALID: dict[bool, LiteralString] = {True: valid_now("m"), False: f"NOT {valid_now('m')}"}
_JOINED: dict[type, LiteralString] = {AllOf: " AND ", AnyOf: " OR "}


def _condition(condition: Condition, params: dict[str, Any]) -> LiteralString:
    """``condition`` as SQL over the row ``m``: fixed fragments joined as the filter
    joins them, each value a parameter put in ``params`` (``filter_0``, ...)."""
    if isinstance(condition, Not):
        return f"NOT {_condition(condition.operand, params)}"
    if isinstance(condition, AllOf | AnyOf):
        parts = [_condition(c, params) for c in condition.operands]
        return "(" + _JOINED[type(condition)].join(parts) + ")"
    field, value = condition.field, condition.value
    if field == "expired":
        return _IS_EXPIRED[bool(value)]
    if field == "superseded":
        return _IS_SUPERSEDED[bool(value)]
    if field == "valid":
        return _IS_VALID[bool(value)]
    name = _PARAMETERS[sum(1 for taken in params if taken.startswith("filter_"))]
    params[name] = value.value if isinstance(value, MemorySource) else value
    if field == "text":
        return _TEXT.replace("{p}", name)
    if field == "tag":
        return _TAG.replace("{p}", name)
    return f"{_COLUMNS[field]} {_OPERATORS[condition.op]} %({name})s"


# A filter's parameter names: a filter of FILTER_MAX_CHARS characters holds fewer
# values (each takes a character and a separator at least).
_PARAMETERS: tuple[LiteralString, ...] = tuple(f"filter_{n}" for n in range(FILTER_MAX_CHARS))


def _restrictions(query: MemoryQuery, params: dict[str, Any]) -> LiteralString:
    """The filter as SQL after the owner's rows, its values put in ``params``."""
    sql: LiteralString = ""
    if query.expired is not None:
        sql += _EXPIRED[query.expired]
    if query.superseded is not None:
        sql += _SUPERSEDED[query.superseded]
    if query.condition is not None:
        sql += f"\n  AND {_condition(query.condition, params)}"
    return sql


# Orders a request names: each field's column, and its comparison after a position.
_ORDER_COLUMNS: dict[str, LiteralString] = {
    "key": "m.key",
    "importance": "m.importance",
    "created_at": "m.created_at",
    "updated_at": "m.updated_at",
}
_DIRECTIONS: dict[bool, tuple[LiteralString, LiteralString]] = {
    False: (">", "ASC"),
    True: ("<", "DESC"),
}


def _named_order(
    order: MemoryOrder, after: OrderPosition | None, params: dict[str, Any]
) -> LiteralString:
    """The keyset predicate that continues ``order`` after ``after`` (its values put in
    ``params``), then the ORDER BY and LIMIT. The order ends in the key, unique for an
    owner: rows past a position are those greater in the first field that differs,
    ``f1 > v1 OR (f1 = v1 AND (f2 > v2 OR (f2 = v2 AND ...)))``."""
    sql: LiteralString = ""
    if after is not None:
        keyset: LiteralString = ""
        for n, (name, descending) in reversed(list(enumerate(order.fields))):
            column, value = _ORDER_COLUMNS[name], _AFTER[n]
            params[value] = after[n]
            past: LiteralString = f"{column} {_DIRECTIONS[descending][0]} %({value})s"
            keyset = past if not keyset else f"({past} OR ({column} = %({value})s AND {keyset}))"
        sql += f"\n  AND {keyset}"
    ordering = ", ".join(
        f"{_ORDER_COLUMNS[name]} {_DIRECTIONS[descending][1]}" for name, descending in order.fields
    )
    return sql + f" ORDER BY {ordering} LIMIT %(limit)s"


# The parameter names of a position's values: an order has at most one of each field.
_AFTER: tuple[LiteralString, ...] = tuple(f"after_{n}" for n in range(len(_ORDER_COLUMNS)))


_MARK_USED: LiteralString = mark_used("SELECT unnest(%(ids)s::uuid[])")

_MATCHING: LiteralString = f"""
SELECT count(*) AS n FROM memories AS m
WHERE {owned_by("m", "%(scope)s", "%(owner_id)s")}"""

_COUNT: LiteralString = f"""
SELECT count(*) AS n FROM memories AS m
WHERE {owned_by("m", "%(scope)s", "%(owner_id)s")} AND {current("m")}
"""

_RECENT: LiteralString = f"""
SELECT {returned("m")} FROM memories AS m
JOIN unnest(%(scopes)s::text[], %(owner_ids)s::text[]) AS o(scope, owner_id)
  ON m.scope = o.scope AND m.owner_id = o.owner_id
WHERE m.tenant_id = %(tenant_id)s AND {current("m")}
ORDER BY m.updated_at DESC, m.id
LIMIT %(limit)s
"""

_LEARNINGS: LiteralString = f"""
SELECT {returned("m")} FROM memories AS m
WHERE tenant_id = %(tenant_id)s AND source = 'director' AND scope = 'agent'
  AND owner_id = ANY (%(agent_ids)s::text[]) AND starts_with(key, %(prefix)s)
  AND {current("m")} AND {unheld("m")}
ORDER BY created_at DESC, key DESC
LIMIT %(limit)s
"""


# The tenant's owners of one scope, by id: those holding a memory (with how many are
# current, and the last change of any), and for agents those with settings too.
_OWNERS: LiteralString = f"""
WITH held AS (
    SELECT m.owner_id AS id, count(*) FILTER (WHERE {current("m")}) AS n,
           max(m.updated_at) AS at, false AS enabled
    FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.scope = %(scope)s AND m.owner_id > %(after)s
    GROUP BY m.owner_id
),
configured AS (
    SELECT s.agent_id AS id, 0::bigint AS n, s.updated_at AS at, s.memory_enabled AS enabled
    FROM agent_settings AS s
    WHERE s.tenant_id = %(tenant_id)s AND %(scope)s = 'agent' AND s.agent_id > %(after)s
)
SELECT o.id, sum(o.n)::int AS memory_count, max(o.at) AS last_activity,
       bool_or(o.enabled) AS memory_enabled
FROM (SELECT * FROM held UNION ALL SELECT * FROM configured) AS o
GROUP BY o.id
ORDER BY o.id
LIMIT %(limit)s
"""


# What a write gives of the columns an insert or an upsert takes, and of its evidence.
_WRITTEN = named(MemoryRow, WRITTEN | MERGED)
_EVIDENCE = named(MemoryRow, EVIDENCE)
_NO_EVIDENCE = dict.fromkeys(_EVIDENCE)


def _write_params(principal: Principal, write: MemoryWrite) -> dict[str, Any]:
    e = write.evidence
    return {
        **params_of(write, _WRITTEN),
        **(params_of(e, _EVIDENCE) if e else _NO_EVIDENCE),
        "tenant_id": principal.tenant_id,
        "actor": principal.user_id,
        "person": principal.person_id,
        "id": uuid.uuid4(),
        "scope": write.owner.scope.value,
        "owner_id": write.owner.id,
        "evidence": e is not None,
        "expire_time": write.expiration if isinstance(write.expiration, datetime) else None,
        "ttl": write.expiration if isinstance(write.expiration, timedelta) else None,
    }


def _patch_params(patch: MemoryPatch) -> dict[str, Any]:
    """An update's parameters: each patchable column's value (None keeps it) and, for
    one that may be empty, whether the patch clears it."""
    cleared = patch.cleared()
    return {
        **params_of(patch, _PATCHED),
        **{f"clear_{name}": name in cleared for name in _CLEARABLE},
        "ttl": None,
    }


_PATCHED = named(MemoryRow, PATCHED)
_CLEARABLE = clearable(MemoryRow)


def _period_inverted(exc: psycopg.errors.CheckViolation) -> None:
    """A write refused by the period's constraint, as the repository's contract says it:
    a bound the write gave against the other as stored. Other violations pass on."""
    if exc.diag.constraint_name == "ck_memories_valid_period":
        raise PeriodInverted("the period would end before it starts") from exc


class PgMemories(MemoryRepository):
    def __init__(
        self,
        conn: Connection,
        principal: Principal,
        index_model: str | None = None,
        *,
        as_of: datetime | None = None,
    ) -> None:
        """``index_model``: the model recall runs, whose vector makes a memory
        ``embedded``; ``None`` when recall is by words only. ``as_of``: read the
        memories as they were then (see :mod:`agent_memory.store.history`); such a
        repository only reads."""
        self._conn = conn
        self._principal = principal
        self._tenant: dict[str, Any] = {
            "tenant_id": principal.tenant_id,
            "index_model": index_model,
            "as_of": as_of,
        }
        self._as_of = as_of

    def _read(self, statement: LiteralString, events: LiteralString) -> LiteralString:
        """``statement`` as of this repository's instant, if it has one."""
        return statement if self._as_of is None else at_instant(statement, events)

    def _changing(self, **params: Any) -> dict[str, Any]:
        principal = self._principal
        return {
            **self._tenant,
            "actor": principal.user_id,
            "person": principal.person_id,
            **params,
        }

    async def write(self, write: MemoryWrite) -> Written | KeyHeld | None:
        params = {**self._tenant, **_write_params(self._principal, write)}
        try:
            row = await fetch_one(self._conn, _WRITE, params)
            if row is not None and row["outcome"] == "moved":
                # Another writer changed the row since it was read: wait for it, then write.
                row = await fetch_one(self._conn, _WRITE_LOCKED, params)
        except psycopg.errors.CheckViolation as exc:
            _period_inverted(exc)
            raise
        if row is None or row["outcome"] == "moved":
            return None
        memory = memory_from_row(row)
        if row["outcome"] == "held":
            return KeyHeld(memory)
        return Written(memory, created=row["outcome"] == "created")

    async def create(self, write: MemoryWrite) -> Memory | None:
        params = {**self._tenant, **_write_params(self._principal, write)}
        row = await fetch_one(self._conn, _CREATE, params)
        return memory_from_row(row) if row else None

    async def get(self, memory_id: uuid.UUID, *, lock: bool = False) -> Memory | None:
        statement = _GET_LOCKED if lock else self._read(_GET, BY_ID)
        row = await fetch_one(self._conn, statement, {**self._tenant, "id": memory_id})
        return memory_from_row(row) if row else None

    async def find_by_key(
        self, owner: Owner, key: str, *, groundings: bool = False
    ) -> Memory | None:
        params = {**self._tenant, "scope": owner.scope.value, "owner_id": owner.id, "key": key}
        statement = self._read(_GET_BY_KEY if groundings else _FIND_BY_KEY, BY_OWNER)
        row = await fetch_one(self._conn, statement, params)
        return memory_from_row(row) if row else None

    async def update(
        self, memory_id: uuid.UUID, patch: MemoryPatch, event: MemoryEventType
    ) -> Memory:
        params = self._changing(
            id=memory_id,
            **_patch_params(patch),
            event=event.value,
        )
        try:
            row = await fetch_one(self._conn, _UPDATE, params)
        except psycopg.errors.CheckViolation as exc:
            _period_inverted(exc)
            raise
        except psycopg.errors.UniqueViolation as exc:
            raise AlreadyExists(
                f"key {patch.key!r} is already used by another memory of the same owner",
                reason="KEY_TAKEN",
            ) from exc
        if row is None:
            raise LookupError(f"memory {memory_id} does not exist")
        return memory_from_row(row)

    async def pin(self, memory_id: uuid.UUID, pinned: bool) -> Memory | None:
        row = await fetch_one(self._conn, _PIN, self._changing(id=memory_id, pinned=pinned))
        return memory_from_row(row) if row else None

    async def supersede(self, memory_id: uuid.UUID, by: Memory) -> Memory | None:
        params = self._changing(
            id=memory_id,
            by=by.id,
            scope=by.owner.scope.value,
            owner_id=by.owner.id,
            at=by.updated_at,
        )
        row = await fetch_one(self._conn, _SUPERSEDE, params)
        return memory_from_row(row) if row else None

    async def delete(
        self, memory_id: uuid.UUID, *, version: int | None = None
    ) -> tuple[Memory | None, bool]:
        row = await fetch_one(self._conn, _DELETE, self._changing(id=memory_id, version=version))
        if row is None:
            return None, False
        return memory_from_row(row), bool(row["deleted"])

    async def replace_groundings(
        self, memory_id: uuid.UUID, groundings: Sequence[Grounding]
    ) -> None:
        params = {**self._tenant, "id": memory_id}
        await execute(self._conn, _DELETE_GROUNDINGS, params)
        if groundings:
            rows = [
                {**dataclasses.asdict(g), "metadata": dict(g.metadata), "ordinal": i}
                for i, g in enumerate(groundings)
            ]
            await execute(self._conn, _INSERT_GROUNDINGS, {**params, "groundings": Jsonb(rows)})

    async def list_page(
        self,
        owner: Owner,
        *,
        after: ListingPosition | OrderPosition | None,
        limit: int,
        query: MemoryQuery = CURRENT,
        order: MemoryOrder = NATURAL,
    ) -> list[Memory]:
        params: dict[str, Any] = {
            **self._tenant,
            "scope": owner.scope.value,
            "owner_id": owner.id,
            "limit": limit,
        }
        sql = _OWNED + _restrictions(query, params)
        if order.natural:
            keyset, ordering = _ORDERS[owner.scope]
            if after is not None:
                names: tuple[str, ...] = ("pinned", "importance", "key")
                if owner.scope is Scope.WORKSPACE:
                    names = ("pinned", "importance", "updated_at", "id")
                params.update(zip(names, after, strict=True))
            sql += (keyset if after else "") + ordering
        else:
            sql += _named_order(order, after, params)  # type: ignore[arg-type]
        rows = await fetch_all(self._conn, self._read(sql, BY_OWNER), params)
        return [memory_from_row(r) for r in rows]

    async def mark_used(self, ids: Sequence[uuid.UUID]) -> None:
        if ids:
            await execute(self._conn, _MARK_USED, {**self._tenant, "ids": list(ids)})

    async def count_matching(self, owner: Owner, query: MemoryQuery) -> int:
        params: dict[str, Any] = {**self._tenant, "scope": owner.scope.value, "owner_id": owner.id}
        statement = self._read(_MATCHING + _restrictions(query, params), BY_OWNER)
        row = await fetch_one(self._conn, statement, params)
        return int(row["n"]) if row else 0

    async def delete_expired(self, owner: Owner, key: str) -> bool:
        params = {
            **self._tenant,
            "scope": owner.scope.value,
            "owner_id": owner.id,
            "key": key,
            "actor": EXPIRY_ACTOR,
        }
        row = await fetch_one(self._conn, _DELETE_EXPIRED_AT_KEY, params)
        return bool(row and row["n"])

    async def count(self, owner: Owner) -> int:
        params = {**self._tenant, "scope": owner.scope.value, "owner_id": owner.id}
        row = await fetch_one(self._conn, _COUNT, params)
        return int(row["n"]) if row else 0

    async def recent(self, owners: Sequence[Owner], limit: int) -> list[Memory]:
        if not owners or limit <= 0:
            return []
        params = {
            **self._tenant,
            "scopes": [o.scope.value for o in owners],
            "owner_ids": [o.id for o in owners],
            "limit": limit,
        }
        return [memory_from_row(r) for r in await fetch_all(self._conn, _RECENT, params)]

    async def learnings(self, agent_ids: Sequence[str], limit: int) -> list[Memory]:
        params = {
            **self._tenant,
            "agent_ids": list(agent_ids),
            "prefix": LEARNING_KEY_PREFIX,
            "limit": limit,
        }
        return [memory_from_row(r) for r in await fetch_all(self._conn, _LEARNINGS, params)]

    async def owners(self, scope: Scope, *, after: str, limit: int) -> list[OwnerSummary]:
        params = {**self._tenant, "scope": scope.value, "after": after, "limit": limit}
        return [
            OwnerSummary(
                Owner(scope, r["id"]),
                int(r["memory_count"]),
                r["last_activity"],
                bool(r["memory_enabled"]),
            )
            for r in await fetch_all(self._conn, _OWNERS, params)
        ]


# Where a sweep of the history starts when none has run: before every event.
_DAWN = datetime.min.replace(tzinfo=UTC)
_NO_ID = uuid.UUID(int=0)
# A crossed event's columns, as the arrays the pruning statement takes.
_CROSSED_COLUMNS = {"memory_ids": "memory_id", "ats": "occurred_at", "ids": "id", "gone": "gone"}


class PgExpirySweep(ExpirySweep):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    async def prune_history(self, kept: timedelta, limit: int) -> int:
        swept = await fetch_one(self._conn, HISTORY_SWEPT, {})
        after = (swept["swept_at"], swept["swept_id"]) if swept else (_DAWN, _NO_ID)
        crossed = await fetch_all(
            self._conn,
            HISTORY_CROSSED,
            {"after_at": after[0], "after_id": after[1], "kept": kept, "limit": limit},
        )
        by_tenant: dict[str, list[Row]] = {}
        for event in crossed:
            by_tenant.setdefault(event["tenant_id"], []).append(event)
        for tenant, events in by_tenant.items():
            await execute(
                self._conn,
                PRUNE_EVENTS,
                {
                    "tenant_id": tenant,
                    **{
                        name: [e[column] for e in events]
                        for name, column in _CROSSED_COLUMNS.items()
                    },
                },
            )
        if crossed:
            last = crossed[-1]
            reached = {"at": last["occurred_at"], "id": last["id"]}
            await execute(self._conn, HISTORY_SWEEP_REACHED, reached)
        return len(crossed)

    async def sweep(self, limit: int) -> int:
        swept = 0
        for tenant in await fetch_all(self._conn, EXPIRED_TENANTS, {"limit": limit}):
            params = {"tenant_id": tenant["tenant_id"], "limit": limit - swept}
            row = await fetch_one(self._conn, SWEEP_EXPIRED, {**params, "actor": EXPIRY_ACTOR})
            swept += int(row["n"]) if row else 0
            if swept >= limit:
                break
        return swept
