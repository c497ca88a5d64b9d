"""Active sessions and finished runs.

The agent's ``active_sessions`` row is the lock that serialises runs finishing at
once, resets and enables. Times come from the database clock, read after that lock
is held, so a run recorded after a reset is always later than its anchor.
"""

from __future__ import annotations

from datetime import datetime
from typing import LiteralString

from agent_memory.domain.active_sessions import RecordedRun, RunKind, RunSession, StoredSession
from agent_memory.domain.identity import Principal
from agent_memory.store.columns import output
from agent_memory.store.models import ActiveSessionRow, AgentRunRow
from agent_memory.store.repositories import SessionRepository
from agent_memory.store.sql import Connection, Row, execute, fetch_all, fetch_one

_COLUMNS = output(ActiveSessionRow, "")
_GET: LiteralString = f"""
SELECT {_COLUMNS} FROM active_sessions
WHERE tenant_id = %(tenant_id)s AND agent_id = %(agent_id)s
"""
_GET_LOCKED: LiteralString = _GET + "FOR UPDATE"
_ENSURE: LiteralString = """
INSERT INTO active_sessions (tenant_id, agent_id, last_reset_at, updated_at)
VALUES (%(tenant_id)s, %(agent_id)s, clock_timestamp(), clock_timestamp())
ON CONFLICT (tenant_id, agent_id) DO NOTHING
"""
# GREATEST skips NULL: the anchor is strictly after the last carried run even when the
# clock lags.
_RESET: LiteralString = f"""
INSERT INTO active_sessions (tenant_id, agent_id, session_id, session_updated_at,
                             last_reset_at, updated_at)
VALUES (%(tenant_id)s, %(agent_id)s, NULL, NULL, clock_timestamp(), clock_timestamp())
ON CONFLICT (tenant_id, agent_id) DO UPDATE
SET session_id = NULL, session_updated_at = NULL,
    last_reset_at = greatest(clock_timestamp(),
                             active_sessions.session_updated_at + interval '1 microsecond'),
    updated_at = clock_timestamp()
RETURNING {_COLUMNS}
"""
_RUN_COLUMNS = output(AgentRunRow, "")
_FIND_RUN: LiteralString = f"""
SELECT {_RUN_COLUMNS} FROM agent_runs
WHERE tenant_id = %(tenant_id)s AND agent_id = %(agent_id)s AND run_id = %(run_id)s
"""
_INSERT_RUN: LiteralString = """
INSERT INTO agent_runs (tenant_id, agent_id, run_id, session_id_before, session_id_after,
                        carried, kind, render_time, recorded_at)
VALUES (%(tenant_id)s, %(agent_id)s, %(run_id)s, %(before)s, %(after)s, %(carried)s,
        %(kind)s, %(render_time)s,
        greatest(clock_timestamp(), %(floor)s::timestamptz + interval '1 microsecond'))
ON CONFLICT (tenant_id, agent_id, run_id) DO NOTHING
RETURNING recorded_at
"""
# Newest first; of runs recorded in the same instant, the highest run id first.
_LIST_RUNS: LiteralString = f"""
SELECT {_RUN_COLUMNS} FROM agent_runs
WHERE tenant_id = %(tenant_id)s AND agent_id = %(agent_id)s
  AND (%(at)s::timestamptz IS NULL OR (recorded_at, run_id) < (%(at)s, %(run_id)s::text))
ORDER BY recorded_at DESC, run_id DESC
LIMIT %(limit)s
"""
_CARRY: LiteralString = f"""
UPDATE active_sessions
SET session_id = %(session_id)s, session_updated_at = %(at)s, updated_at = clock_timestamp()
WHERE tenant_id = %(tenant_id)s AND agent_id = %(agent_id)s
RETURNING {_COLUMNS}
"""
_RUNS_SINCE: LiteralString = """
SELECT count(*) AS n FROM agent_runs
WHERE tenant_id = %(tenant_id)s AND agent_id = %(agent_id)s AND carried
  AND kind = 'scheduled' AND recorded_at > %(anchor)s
"""


def _recorded(row: Row) -> RecordedRun:
    run = RunSession(
        run_id=row["run_id"],
        session_id_before=row["session_id_before"],
        session_id_after=row["session_id_after"],
        kind=RunKind(row["kind"]),
        render_time=row["render_time"],
    )
    return RecordedRun(run, carried=row["carried"], recorded_at=row["recorded_at"])


def _stored(row: Row) -> StoredSession:
    return StoredSession(
        session_id=row["session_id"],
        session_updated_at=row["session_updated_at"],
        last_reset_at=row["last_reset_at"],
    )


class PgSessions(SessionRepository):
    def __init__(self, conn: Connection, principal: Principal) -> None:
        self._conn = conn
        self._tenant = principal.tenant_id

    def _agent(self, agent_id: str) -> dict[str, object]:
        return {"tenant_id": self._tenant, "agent_id": agent_id}

    async def get(self, agent_id: str, *, lock: bool = False) -> StoredSession | None:
        row = await fetch_one(self._conn, _GET_LOCKED if lock else _GET, self._agent(agent_id))
        return _stored(row) if row else None

    async def ensure(self, agent_id: str) -> None:
        await execute(self._conn, _ENSURE, self._agent(agent_id))

    async def reset(self, agent_id: str) -> StoredSession:
        row = await fetch_one(self._conn, _RESET, self._agent(agent_id))
        assert row is not None  # an upsert returns its row
        return _stored(row)

    async def find_run(self, agent_id: str, run_id: str) -> RunSession | None:
        row = await fetch_one(self._conn, _FIND_RUN, {**self._agent(agent_id), "run_id": run_id})
        return _recorded(row).run if row else None

    async def list_runs(
        self, agent_id: str, *, after: tuple[datetime, str] | None, limit: int
    ) -> list[RecordedRun]:
        at, run_id = after if after is not None else (None, "")
        params = {**self._agent(agent_id), "at": at, "run_id": run_id, "limit": limit}
        return [_recorded(r) for r in await fetch_all(self._conn, _LIST_RUNS, params)]

    async def insert_run(
        self, agent_id: str, run: RunSession, *, carried: bool, after: datetime | None
    ) -> datetime | None:
        row = await fetch_one(
            self._conn,
            _INSERT_RUN,
            {
                **self._agent(agent_id),
                "run_id": run.run_id,
                "before": run.session_id_before,
                "after": run.session_id_after,
                "carried": carried,
                "kind": run.kind.value,
                "render_time": run.render_time,
                "floor": after,
            },
        )
        return row["recorded_at"] if row else None

    async def carry(self, agent_id: str, session_id: str, at: datetime) -> StoredSession:
        params = {**self._agent(agent_id), "session_id": session_id, "at": at}
        row = await fetch_one(self._conn, _CARRY, params)
        assert row is not None  # the caller holds the row's lock
        return _stored(row)

    async def runs_since(self, agent_id: str, anchor: datetime) -> int:
        row = await fetch_one(self._conn, _RUNS_SINCE, {**self._agent(agent_id), "anchor": anchor})
        return int(row["n"]) if row else 0
