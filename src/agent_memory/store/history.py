"""Reads of the state as it was at a past instant, rebuilt from what the store keeps.

A memory's audit events hold the whole row after each change (``new_memory``), so the
row as it was at ``as_of`` is its newest event at or before then, unless that event
deleted it. Expiry and forgetting empty or delete a memory's events: what has since
expired or been forgotten is gone from every past instant too. A block as it was is its
newest version written by then.

The memory statements of the other modules read as of an instant unchanged: their
``memories AS m`` becomes the rows rebuilt from the events, and their ``now()`` the
instant (:func:`at_instant`).
"""

from __future__ import annotations

from typing import LiteralString

from agent_memory.store.columns import internal
from agent_memory.store.models import MemoryRow

# What an event keeps of a memory: the row but its tenant (the event's own) and the
# service's bookkeeping (its vector is remade from the text, never read from the past).
_LEFT_OUT: LiteralString = ",".join(("tenant_id", *internal(MemoryRow)))


def snapshot(row: LiteralString) -> LiteralString:
    """The snapshot an audit event keeps of the memory ``row``."""
    return f"to_jsonb({row}) - '{{{_LEFT_OUT}}}'::text[]"


# Which events a rebuilt listing reads: those of one memory, of one owner, or of the
# two owners a render or a recall reads (each through an index of the events).
BY_ID: LiteralString = "e.memory_id = %(id)s"
_OWNER: LiteralString = "(coalesce(e.new_memory, e.old_memory) ->> 'owner_id')"
BY_OWNER: LiteralString = f"{_OWNER} = %(owner_id)s"
BY_AGENT_OR_WORKSPACE: LiteralString = (
    f"{_OWNER} IN (%(agent_id)s, coalesce(%(workspace_id)s::text, %(agent_id)s))"
)


def memories_at(events: LiteralString) -> LiteralString:
    """The memories rows as they were at ``%(as_of)s``, of the events ``events`` selects
    (``e``): each memory's newest event by then, unless it deleted the memory, or the
    memory has expired since (its row waits for the sweeper; its past goes with it).

    A use that slides a memory's expiry writes no event: a memory still stored and
    live never expired, so its expiry then is read as the later of the one its event
    holds and its expiry now (a memory with no expiry then had none to slide).

    A memory held for review then, or held now, is read as held: a past read never
    shows a model what a person has not approved (an event older than the flag holds
    none: not held then); with the reason of the hold then, else of the one now.

    The person who wrote the text is read from the event; an event older than that
    column holds none, and reads as the rule of its day: a MANUAL memory is the
    person's who last changed it.

    The row is made in FROM, where it is made once: in a select list, ``(f(x)).*`` calls
    ``f`` once for each column."""
    return f"""(
    SELECT r.*
    FROM (SELECT DISTINCT ON (e.memory_id) e.tenant_id, e.memory_id, e.new_memory
          FROM memory_events AS e
          WHERE e.tenant_id = %(tenant_id)s AND {events} AND e.occurred_at <= %(as_of)s
          ORDER BY e.memory_id, e.occurred_at DESC, e.id DESC) AS e
    LEFT JOIN memories AS x ON x.tenant_id = %(tenant_id)s AND x.id = e.memory_id
    CROSS JOIN LATERAL jsonb_populate_record(NULL::memories, e.new_memory || jsonb_build_object(
        'tenant_id', e.tenant_id,
        'held_for_review', coalesce((e.new_memory ->> 'held_for_review')::boolean, false)
                           OR coalesce(x.held_for_review, false),
        'hold_reason', CASE WHEN coalesce((e.new_memory ->> 'held_for_review')::boolean, false)
                            THEN e.new_memory ->> 'hold_reason' ELSE x.hold_reason END,
        'text_by', CASE WHEN e.new_memory ? 'text_by' THEN e.new_memory ->> 'text_by'
                        WHEN e.new_memory ->> 'source' = 'manual'
                        THEN e.new_memory ->> 'updated_by' END,
        'expire_time', greatest((e.new_memory ->> 'expire_time')::timestamptz,
                                CASE WHEN e.new_memory ->> 'expire_time' IS NOT NULL
                                     THEN x.expire_time END))) AS r
    WHERE e.new_memory IS NOT NULL
      AND (x.expire_time IS NULL OR x.expire_time > statement_timestamp()))"""


_TABLE: LiteralString = "FROM memories AS m"
_NOW: LiteralString = "now()"
_AS_OF: LiteralString = "%(as_of)s::timestamptz"


def at_instant(statement: LiteralString, events: LiteralString) -> LiteralString:
    """``statement``, a read of ``memories AS m`` as of now, read as of ``%(as_of)s``:
    the rows rebuilt from ``events``, expiry and validity judged at that instant."""
    if _TABLE not in statement:
        raise ValueError("a statement read as of an instant reads memories AS m")
    return statement.replace(_TABLE, f"FROM {memories_at(events)} AS m").replace(_NOW, _AS_OF)


# The newest version by then of each block one of (user, scope, agent) names, of one
# label: a block deleted since took its versions with it.
def blocks_at(label: LiteralString, keys: LiteralString) -> LiteralString:
    return f"""(
    SELECT DISTINCT ON (v.user_id, v.scope, v.agent_id) v.scope, v.agent_id, v.content
    FROM block_versions AS v
    WHERE v.tenant_id = %(tenant_id)s AND v.label = {label}
      AND (v.user_id, v.scope, v.agent_id) IN {keys}
      AND v.written_at <= %(as_of)s
    ORDER BY v.user_id, v.scope, v.agent_id, v.version DESC)"""


# Where the last sweep of the history stopped (no row: nowhere yet).
HISTORY_SWEPT: LiteralString = "SELECT swept_at, swept_id FROM history_sweep"
# The events that crossed the horizon of the history kept since then, in the order they
# did (across tenants: a read that locks nothing).
HISTORY_CROSSED: LiteralString = """
SELECT e.tenant_id, e.memory_id, e.occurred_at, e.id, e.new_memory IS NULL AS gone
FROM memory_events AS e
WHERE (e.occurred_at, e.id) > (%(after_at)s, %(after_id)s)
  AND e.occurred_at < statement_timestamp() - %(kept)s::interval
ORDER BY e.occurred_at, e.id
LIMIT %(limit)s
"""
# Of one tenant's crossed events, each is now its memory's state at the horizon: the
# memory's older events go, and so does the event itself where it left no memory (a
# deletion, or a tombstone of expiry or forgetting).
PRUNE_EVENTS: LiteralString = """
DELETE FROM memory_events AS e
USING unnest(%(memory_ids)s::uuid[], %(ats)s::timestamptz[], %(ids)s::uuid[],
             %(gone)s::boolean[]) AS c(memory_id, occurred_at, id, gone)
WHERE e.tenant_id = %(tenant_id)s AND e.memory_id = c.memory_id
  AND ((e.occurred_at, e.id) < (c.occurred_at, c.id) OR (c.gone AND e.id = c.id))
"""
# The sweep has gone as far as this event (never back: sweeps may overlap).
HISTORY_SWEEP_REACHED: LiteralString = """
INSERT INTO history_sweep AS h (swept_at, swept_id) VALUES (%(at)s, %(id)s)
ON CONFLICT (one) DO UPDATE SET swept_at = excluded.swept_at, swept_id = excluded.swept_id
WHERE (h.swept_at, h.swept_id) < (excluded.swept_at, excluded.swept_id)
"""

# The core blocks a render shows, as of then (the keys as prompts.py names them).
CORES_AT: LiteralString = f"""(
    SELECT json_object_agg(c.scope, c.content) FROM {
    blocks_at(
        "'core'",
        '''((%(user_core)s, 'user', ''), (%(agent_core)s, 'agent', %(agent_id)s),
                (%(workspace_core)s, 'workspace', %(block_workspace_id)s))''',
    )
} AS c
) AS cores"""

_ARCHIVAL_KEYS: LiteralString = """((%(user_id)s, 'user', ''), (%(user_id)s, 'agent', %(agent_id)s),
                ('', 'workspace', %(block_workspace_id)s))"""
ARCHIVAL_AT: LiteralString = blocks_at("'archival'", _ARCHIVAL_KEYS)

# Whether the caller had archival lines then.
HAS_ARCHIVAL_AT: LiteralString = (
    f"EXISTS (SELECT FROM {ARCHIVAL_AT} AS a WHERE btrim(a.content, E' \\t\\n') <> '')"
)
