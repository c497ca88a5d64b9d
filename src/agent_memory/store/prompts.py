"""Everything a render reads, in one statement: core blocks, the agent's switch, both
memory listings with their totals, recent decisions and (in AUTO mode) the archival
ranking."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any, LiteralString

from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import MemoryLine, MemoryRows, MemorySource, utc_day
from agent_memory.domain.recall import PromptRead, PromptState
from agent_memory.store.columns import compact
from agent_memory.store.decisions import DECISION_COLUMNS, decision_from_row
from agent_memory.store.history import (
    BY_AGENT_OR_WORKSPACE,
    CORES_AT,
    HAS_ARCHIVAL_AT,
    at_instant,
)
from agent_memory.store.memory_sql import (
    STALE_USE,
    agent_order,
    mark_used,
    owned_by,
    shown_now,
    workspace_order,
)
from agent_memory.store.recall import (
    HAS_ARCHIVAL,
    LEXICAL_PART,
    RANK,
    Ranking,
    rank_at,
    rank_params,
)
from agent_memory.store.repositories import PromptRepository
from agent_memory.store.sql import Connection, Row, fetch_one
from agent_memory.store.vector_indexes import IndexedRows

# The core blocks a render shows, by scope, each by its key: the user's and the agent's
# are the caller's, the workspace's the tenant's (no user). A block left out has a NULL
# user in the list, which matches none.
_CORES: LiteralString = """(
    SELECT json_object_agg(scope, content) FROM blocks
    WHERE tenant_id = %(tenant_id)s AND label = 'core'
      AND (user_id, scope, agent_id) IN ((%(user_core)s, 'user', ''),
                                         (%(agent_core)s, 'agent', %(agent_id)s),
                                         (%(workspace_core)s, 'workspace', %(block_workspace_id)s))
) AS cores"""

# What a prompt shows of a memory, and what its listing is ordered by; each row goes
# back whole as JSON (its times as instants, made UTC days here).
_LISTED: LiteralString = (
    "m.key, m.value, m.source, m.pinned, m.importance, m.updated_at, m.id, m.last_used_time, "
    "m.updated_by, m.valid_start_time, m.valid_end_time, m.text_by"
)
# Only current facts valid now are shown, and counted.
_AGENTS: LiteralString = owned_by("m", "'agent'", "%(agent_id)s") + " AND " + shown_now("m")
# A render says how many memories it leaves out, counting at most this many: a count
# costs a row each, and past it the prompt says "at least".
COUNT_BOUND = 10_000

# A render without a workspace (NULL) matches none: ``owner_id = NULL`` is never true,
# and an index scan given a NULL key reads nothing.
_WORKSPACES: LiteralString = (
    owned_by("m", "'workspace'", "%(workspace_id)s::text") + " AND " + shown_now("m")
)

# The memories a render shows (marking them leaves out those marked within the minute),
# and those whose use is not recorded yet.
_SHOWN: LiteralString = "SELECT id FROM agent_rows UNION ALL SELECT id FROM workspace_rows"
_SHOWN_STALE: LiteralString = (
    f"SELECT id FROM agent_rows WHERE {STALE_USE} UNION ALL "
    f"SELECT id FROM workspace_rows WHERE {STALE_USE}"
)
_DECIDED: LiteralString = "d.tenant_id = %(tenant_id)s AND d.agent_id = %(agent_id)s"
_HEAD: LiteralString = f"""
WITH settings AS (
    SELECT s.memory_enabled IS TRUE AS memory_enabled,
           s.review_decisions IS TRUE AS review_decisions
    FROM (SELECT) AS one
    LEFT JOIN agent_settings AS s
      ON s.tenant_id = %(tenant_id)s AND s.agent_id = %(agent_id)s
),
agent_rows AS (
    SELECT {_LISTED} FROM memories AS m, settings
    WHERE settings.memory_enabled AND {_AGENTS}
    ORDER BY {agent_order("m")}
    LIMIT %(agent_cap)s
),
workspace_rows AS (
    SELECT {_LISTED} FROM memories AS m
    WHERE {_WORKSPACES}
    ORDER BY {workspace_order("m")}
    LIMIT %(workspace_cap)s
)"""


def _body(
    cores: LiteralString, decided: LiteralString, has_archival: LiteralString
) -> LiteralString:
    """What a render returns, its core blocks, decisions and archival hint read as
    ``cores``, ``decided`` (which of the agent's decisions) and ``has_archival`` say."""
    return f"""
SELECT
    settings.memory_enabled,
    {cores},
    (SELECT json_agg(r ORDER BY {agent_order("r")}) FROM agent_rows AS r) AS agent_rows,
    CASE WHEN (SELECT count(*) FROM agent_rows) = %(agent_cap)s THEN (
        SELECT count(*) FROM (
            SELECT FROM memories AS m WHERE {_AGENTS} LIMIT {COUNT_BOUND}) AS c)
    END AS agent_total,
    (SELECT json_agg(r ORDER BY {workspace_order("r")}) FROM workspace_rows AS r)
    AS workspace_rows,
    CASE WHEN (SELECT count(*) FROM workspace_rows) = %(workspace_cap)s THEN (
        SELECT count(*) FROM (
            SELECT FROM memories AS m WHERE {_WORKSPACES} LIMIT {COUNT_BOUND}) AS c)
    END AS workspace_total,
    CASE WHEN %(decisions)s AND (NOT %(if_reviewed)s OR settings.review_decisions) THEN (
        SELECT coalesce(json_agg(x ORDER BY x.created_at DESC, x.id DESC), '[]')
        FROM (SELECT {DECISION_COLUMNS}
              FROM decisions AS d
              WHERE {decided}
              ORDER BY d.created_at DESC, d.id DESC
              LIMIT %(decisions_limit)s) AS x)
    END AS decisions,
    %(archival_hint)s AND {has_archival} AS has_archival,
    now() AS read_at"""


_BODY = _body(_CORES, _DECIDED, HAS_ARCHIVAL)
# On the primary the render marks what it shows as used, in the same statement; on a
# read-only standby it returns their ids for the caller to mark on the primary.
_READ: dict[bool, LiteralString] = {
    True: _HEAD + f",\nused AS ({mark_used(_SHOWN)})" + _BODY + ",\n'{}'::uuid[] AS unmarked",
    False: _HEAD + _BODY + f",\nARRAY({_SHOWN_STALE}) AS unmarked",
}

# The archival ranking, or (when the rest is ranked by meaning) its lexical half: their
# first statement's row (the ranking finishes it where the searched rows were too many).
_ARCHIVAL: dict[bool, LiteralString] = {
    False: f""",
    (SELECT row_to_json(r) FROM ({RANK}) AS r) AS archival""",
    True: f""",
    (SELECT row_to_json(p) FROM ({LEXICAL_PART}) AS p) AS archival_lexical""",
}
_FROM: LiteralString = "\nFROM settings"
# The read without the archival ranking, short enough for psycopg to parse once.
_PLAIN: dict[bool, LiteralString] = {marks: compact(_READ[marks] + _FROM) for marks in _READ}

# The same read as of ``%(as_of)s``: the memories rebuilt from their events, the core
# blocks' versions of then, the decisions recorded by then and whether the caller had
# archival lines then; nothing is marked as used.
_READ_AT: LiteralString = compact(
    at_instant(
        _HEAD
        + _body(CORES_AT, _DECIDED + " AND d.created_at <= %(as_of)s", HAS_ARCHIVAL_AT)
        + ",\n'{}'::uuid[] AS unmarked"
        + _FROM,
        BY_AGENT_OR_WORKSPACE,
    )
)

_SOURCES = {source.value: source for source in MemorySource}


def _day(instant: str | None) -> str:
    """The UTC day of an instant as JSON gives it, ``""`` for none."""
    return utc_day(datetime.fromisoformat(instant)) if instant else ""


def _rows(found: Any, total: Any) -> MemoryRows:
    """The rows, and how many more the owner has (``total`` is only counted when the
    rows reached their cap, and only up to ``COUNT_BOUND``)."""
    rows = [
        MemoryLine(
            r["key"],
            r["value"],
            _SOURCES[r["source"]],
            _day(r["updated_at"]),
            r["text_by"] or r["updated_by"],
            since=_day(r["valid_start_time"]),
            until=_day(r["valid_end_time"]),
            by_person=r["text_by"] is not None,
        )
        for r in found or ()
    ]
    if total is None:
        return MemoryRows(rows=rows)
    return MemoryRows(
        rows=rows,
        left_out=max(int(total) - len(rows), 0),
        at_least=int(total) >= COUNT_BOUND,
    )


class PgPrompts(PromptRepository):
    def __init__(
        self,
        conn: Connection,
        principal: Principal,
        *,
        marks: bool = True,
        indexed: IndexedRows | None = None,
        as_of: datetime | None = None,
    ) -> None:
        """``marks``: mark what a render shows as used (not on a standby). ``indexed``:
        the database's count of each model's indexed rows, kept between calls.
        ``as_of``: read the state as it was then (archival reminders by words)."""
        self._conn = conn
        self._marks = marks
        self._as_of = as_of
        self._caller = {"tenant_id": principal.tenant_id, "user_id": principal.user_id}
        self._ranking = Ranking(conn, principal, marks=False, indexed=indexed)

    async def read(self, request: PromptRead) -> PromptState:
        params: dict[str, Any] = {
            **self._caller,
            "agent_id": request.agent_id,
            "workspace_id": request.workspace_id,
            # The user of each core block read; None leaves it out.
            "user_core": self._caller["user_id"] if request.user_core else None,
            "agent_core": self._caller["user_id"] if request.agent_core else None,
            "workspace_core": ""
            if request.workspace_core and request.workspace_id is not None
            else None,
            "block_workspace_id": request.workspace_id or "",
            "agent_cap": request.agent_cap,
            "workspace_cap": request.workspace_cap,
            "decisions": request.decisions_limit is not None,
            "decisions_limit": request.decisions_limit or 0,
            "if_reviewed": request.decisions_if_reviewed,
            "archival_hint": request.archival_hint,
        }
        if self._as_of is not None:
            return await self._read_at(self._as_of, request, params)
        if request.archival is None:
            statement = _PLAIN[self._marks]
        else:
            statement = _READ[self._marks] + _ARCHIVAL[request.archival_lexical] + _FROM
            params.update(rank_params(request.archival))
        row = await fetch_one(self._conn, statement, params)
        assert row is not None  # one row, always
        state = _state(row, request)
        if request.archival is None:
            return state
        if request.archival_lexical:
            lexical = await self._ranking.finish_lexical(request.archival, row["archival_lexical"])
            return replace(state, archival_lexical=lexical)
        archival = await self._ranking.finish(request.archival, row["archival"])
        return replace(state, archival=archival)

    async def _read_at(
        self, as_of: datetime, request: PromptRead, params: dict[str, Any]
    ) -> PromptState:
        row = await fetch_one(self._conn, _READ_AT, {**params, "as_of": as_of})
        assert row is not None  # one row, always
        state = replace(_state(row, request), unmarked=())
        if request.archival is None:
            return state
        found = await rank_at(self._conn, self._caller, request.archival, as_of)
        return replace(state, archival=found)


def _state(row: Row | Mapping[str, Any], request: PromptRead) -> PromptState:
    cores = row["cores"] or {}
    return PromptState(
        has_archival=bool(row["has_archival"]),
        unmarked=tuple(row.get("unmarked") or ()),
        user_core=cores.get("user"),
        agent_core=cores.get("agent"),
        workspace_core=cores.get("workspace"),
        agent_memory=_rows(row["agent_rows"], row["agent_total"])
        if row["memory_enabled"]
        else None,
        workspace_memory=_rows(row["workspace_rows"], row["workspace_total"])
        if request.workspace_id is not None
        else None,
        decisions=[decision_from_row(d) for d in row["decisions"]]
        if row["decisions"] is not None
        else None,
        read_at=row["read_at"],
    )
