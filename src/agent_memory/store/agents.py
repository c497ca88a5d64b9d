"""Agent and workspace settings: one row per agent or workspace that was ever
configured."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import Any, LiteralString, TypeVar

from agent_memory.domain.agents import AgentSettings, WorkspaceSettings
from agent_memory.domain.identity import Principal
from agent_memory.store.columns import WRITTEN, insert_columns, insert_values, named, output
from agent_memory.store.models import AgentSettingsRow, Base, WorkspaceSettingsRow
from agent_memory.store.repositories import AgentRepository, WorkspaceRepository
from agent_memory.store.sql import Connection, Row, fetch_one


@dataclass(frozen=True)
class _Statements:
    get: LiteralString
    get_locked: LiteralString
    put: LiteralString


def _statements(row: type[Base], table: LiteralString, key: LiteralString) -> _Statements:
    """Reading and writing one owner's settings row, keyed by the tenant and ``key``."""
    columns = output(row, "")
    get: LiteralString = f"""
SELECT {columns} FROM {table}
WHERE tenant_id = %(tenant_id)s AND {key} = %({key})s
"""
    # The settings: every written column but the key and the writer.
    kept = ("tenant_id", key, "updated_by")
    settings = [c for c in named(row, WRITTEN) if c not in kept]
    assignments: LiteralString = ", ".join(f"{c} = excluded.{c}" for c in settings)
    put: LiteralString = f"""
INSERT INTO {table} ({insert_columns(row)})
VALUES ({insert_values(row)})
ON CONFLICT (tenant_id, {key}) DO UPDATE
SET {assignments}, updated_by = excluded.updated_by, updated_at = clock_timestamp()
RETURNING {columns}
"""
    return _Statements(get, get + "FOR UPDATE", put)


_AGENT = _statements(AgentSettingsRow, "agent_settings", "agent_id")
_GET, _GET_LOCKED, _PUT = _AGENT.get, _AGENT.get_locked, _AGENT.put
_WORKSPACE = _statements(WorkspaceSettingsRow, "workspace_settings", "workspace_id")
_GET_WORKSPACE, _GET_WORKSPACE_LOCKED, _PUT_WORKSPACE = (
    _WORKSPACE.get,
    _WORKSPACE.get_locked,
    _WORKSPACE.put,
)


Settings = TypeVar("Settings", AgentSettings, WorkspaceSettings)


def settings_from_row(kind: type[Settings], row: Row) -> Settings:
    """The settings as stored: each field of ``kind`` from its column."""
    return kind(**{f.name: row[f.name] for f in fields(kind)})


class PgAgents(AgentRepository):
    def __init__(self, conn: Connection, principal: Principal) -> None:
        self._conn = conn
        self._principal = principal

    async def get(self, agent_id: str, *, lock: bool = False) -> AgentSettings:
        params = {"tenant_id": self._principal.tenant_id, "agent_id": agent_id}
        row = await fetch_one(self._conn, _GET_LOCKED if lock else _GET, params)
        return settings_from_row(AgentSettings, row) if row else AgentSettings(agent_id)

    async def put(self, settings: AgentSettings) -> AgentSettings:
        row = await fetch_one(self._conn, _PUT, _params(settings, self._principal))
        assert row is not None  # an upsert always returns its row
        return settings_from_row(AgentSettings, row)


class PgWorkspaces(WorkspaceRepository):
    def __init__(self, conn: Connection, principal: Principal) -> None:
        self._conn = conn
        self._principal = principal

    async def get(self, workspace_id: str, *, lock: bool = False) -> WorkspaceSettings:
        params = {"tenant_id": self._principal.tenant_id, "workspace_id": workspace_id}
        sql = _GET_WORKSPACE_LOCKED if lock else _GET_WORKSPACE
        row = await fetch_one(self._conn, sql, params)
        return settings_from_row(WorkspaceSettings, row) if row else WorkspaceSettings(workspace_id)

    async def put(self, settings: WorkspaceSettings) -> WorkspaceSettings:
        row = await fetch_one(self._conn, _PUT_WORKSPACE, _params(settings, self._principal))
        assert row is not None  # an upsert always returns its row
        return settings_from_row(WorkspaceSettings, row)


def _params(settings: AgentSettings | WorkspaceSettings, principal: Principal) -> dict[str, Any]:
    return {
        **dataclasses.asdict(settings),
        "tenant_id": principal.tenant_id,
        "actor": principal.user_id,
    }
