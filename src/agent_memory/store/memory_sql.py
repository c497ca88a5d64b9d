"""How the store's statements speak of memories, for every module that reads them:
the columns a select returns and how a row (or an audit snapshot) reads back as a
:class:`Memory`, how a record's fields become a statement's parameters, which rows are
an owner's, live, current, valid or shown now, the orders owners' memories are listed
in, and the update that marks memories used as a statement shows them."""

from __future__ import annotations

import dataclasses
import enum
import types
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, LiteralString, get_args, get_origin, get_type_hints

from psycopg.types.json import Jsonb

from agent_memory.domain.memory import Grounding, Memory, Owner, Scope
from agent_memory.store.columns import OUTPUT, named, output
from agent_memory.store.models import MemoryRow
from agent_memory.store.sql import as_time, as_uuid


def columns(alias: LiteralString) -> LiteralString:
    """The memory columns of the row ``alias``, for a select list."""
    return output(MemoryRow, alias)


# A memory ``m``'s groundings, in order, as a JSON array of their rows.
GROUNDINGS = """(
    SELECT coalesce(json_agg(g ORDER BY g.ordinal), '[]')
    FROM memory_groundings AS g
    WHERE g.tenant_id = %(tenant_id)s AND g.memory_id = m.id
) AS groundings"""


def _reader(hint: Any) -> Callable[[Any], Any]:
    """How a stored value becomes a domain field of type ``hint``: by the type itself,
    so a column named as its field needs no line of its own."""
    if isinstance(hint, types.UnionType):  # X | None: read as X
        hint = next(t for t in get_args(hint) if t is not type(None))
    kind = get_origin(hint) or hint
    if kind is datetime:
        return as_time
    if kind is uuid.UUID:
        return as_uuid
    if kind is tuple:
        return tuple
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return kind
    return lambda value: value


def as_param(value: Any) -> Any:
    """A domain value as a statement's parameter: an enum by its value, a tuple as an
    array, a mapping as JSON."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return Jsonb(dict(value))
    return value


def params_of(record: Any, names: Sequence[str]) -> dict[str, Any]:
    """The parameters of a statement named as the fields of ``record`` it has of
    ``names`` (the columns a statement takes), as the statement takes them."""
    have = {f.name for f in dataclasses.fields(record)}
    return {n: as_param(getattr(record, n)) for n in names if n in have}


# Each field of a memory stored in the column of its name, with how it is read back.
_HINTS = get_type_hints(Memory)
_FROM_ROW: dict[str, Callable[[Any], Any]] = {
    name: _reader(_HINTS[name])
    for name in named(MemoryRow, OUTPUT)
    if name in {f.name for f in dataclasses.fields(Memory)}
}


def memory_from_row(row: Mapping[str, Any]) -> Memory:
    """A memory from a row of ``memories`` or from an audit snapshot (its JSON): every
    field stored in the column of its name (an absent or NULL one keeps its default),
    its owner, groundings and whether it is embedded."""
    return Memory(
        owner=Owner(Scope(row["scope"]), row["owner_id"]),
        groundings=tuple(_grounding(g) for g in row.get("groundings") or ()),
        embedded=row.get("embedded"),
        **{name: read(row[name]) for name, read in _FROM_ROW.items() if row.get(name) is not None},
    )


def _grounding(g: Mapping[str, Any]) -> Grounding:
    return Grounding(
        message_position=g["message_position"],
        provider_message_id=g["provider_message_id"],
        start_character=g["start_character"],
        end_character=g["end_character"],
        quote=g["quote"],
        raw_event_index=g["raw_event_index"],
        raw_start_character=g["raw_start_character"],
        raw_end_character=g["raw_end_character"],
        metadata=g["metadata"] or {},
    )


def owned_by(a: LiteralString, scope: LiteralString, owner: LiteralString) -> LiteralString:
    """The rows of ``a`` that the owner (``scope``, ``owner``: SQL) has in the tenant."""
    return f"{a}.tenant_id = %(tenant_id)s AND {a}.scope = {scope} AND {a}.owner_id = {owner}"


def live(a: LiteralString) -> LiteralString:
    """The rows of ``a`` that have not expired (AIP-214): every read but the listing
    that asks for expired rows leaves the others out, before the sweeper deletes them."""
    return f"({a}.expire_time IS NULL OR {a}.expire_time > now())"


def valid_now(a: LiteralString) -> LiteralString:
    """The rows of ``a`` whose fact holds now: its period (either end may be open, a
    NULL bound of a range is unbounded) has started, at or before now, and not ended,
    after it. What rendering and recall show; never NULL. The period's constraint keeps
    the range well formed."""
    return f"tstzrange({a}.valid_start_time, {a}.valid_end_time) @> now()"


def unheld(a: LiteralString) -> LiteralString:
    """The rows of ``a`` not held for review: what a model may be shown (a row rebuilt
    from an audit snapshot older than the column reads it as false)."""
    return f"NOT {a}.held_for_review"


def shown_now(a: LiteralString) -> LiteralString:
    """The rows of ``a`` a prompt shows now: current (live, not superseded), not held
    for review and valid now, its expiry and its period read as one range, for a
    statement that must stay short (:func:`live` and :func:`valid_now` say the same at
    more length)."""
    return (
        f"{a}.superseded_by IS NULL AND {unheld(a)}"
        f" AND tstzrange({a}.valid_start_time, {a}.valid_end_time)"
        f" * tstzrange(NULL, {a}.expire_time) @> now()"
    )


def current(a: LiteralString) -> LiteralString:
    """The rows of ``a`` that are live and not superseded: what listings, rendering,
    recall and extraction see. A superseded memory stays readable by id."""
    return f"{live(a)} AND {a}.superseded_by IS NULL"


def agent_order(a: LiteralString) -> LiteralString:
    """An agent's memories: pinned first, then by importance, then by key."""
    return f"{a}.pinned DESC, {a}.importance DESC, {a}.key"


def workspace_order(a: LiteralString) -> LiteralString:
    """A workspace's memories: pinned first, then by importance, then the most recent."""
    return f"{a}.pinned DESC, {a}.importance DESC, {a}.updated_at DESC, {a}.id"


# A row whose use is worth writing: never marked, or not within the last minute.
STALE_USE: LiteralString = (
    "coalesce(last_used_time, '-infinity') < clock_timestamp() - interval '60s'"
)


def mark_used(ids: LiteralString) -> LiteralString:
    """An UPDATE recording that the caller's memories ``ids`` (a subquery) reached a
    model now, for a statement that shows them to mark them as it reads them.

    A use is a hint, never worth a wait or a write a minute: rows another transaction
    holds are skipped (so no render waits on a write, and two never deadlock), and so
    are rows marked within the last minute. Neither the version nor ``updated_at``
    changes, and no event is written. A row that expires keeps at least its owner's
    expiry slide past the use (``expiry_after_use``, a function of the schema: the
    render's statement holds this one and stays short).

    The ids go in as arrays, each made once: every row is then reached by its key,
    whatever the planner guesses of the rows' numbers (with no statistics yet, it took
    ``IN (subquery)`` for one row and read the tenant's memories once per shown row)."""
    return f"""
    UPDATE memories AS used
    SET last_used_time = clock_timestamp(), expire_time = expiry_after_use(used)
    WHERE used.tenant_id = %(tenant_id)s AND used.id = ANY(ARRAY(
        SELECT x.id FROM memories AS x
        WHERE x.tenant_id = %(tenant_id)s AND x.id = ANY(ARRAY({ids}))
          AND {STALE_USE}
        FOR UPDATE SKIP LOCKED))"""
