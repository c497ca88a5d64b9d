"""Agent settings: one row per agent that was ever configured."""

from __future__ import annotations

import dataclasses
from dataclasses import fields
from typing import LiteralString

from agent_memory.domain.agents import AgentSettings
from agent_memory.domain.identity import Principal
from agent_memory.store.columns import WRITTEN, insert_columns, insert_values, named, output
from agent_memory.store.models import AgentSettingsRow
from agent_memory.store.repositories import AgentRepository
from agent_memory.store.sql import Connection, Row, fetch_one

_COLUMNS = output(AgentSettingsRow, "")
_GET: LiteralString = f"""
SELECT {_COLUMNS} FROM agent_settings
WHERE tenant_id = %(tenant_id)s AND agent_id = %(agent_id)s
"""
_GET_LOCKED: LiteralString = _GET + "FOR UPDATE"
# The switches: every written column but the key and the writer.
_SWITCHES = [
    c for c in named(AgentSettingsRow, WRITTEN) if c not in ("tenant_id", "agent_id", "updated_by")
]
_SET: LiteralString = ", ".join(f"{c} = excluded.{c}" for c in _SWITCHES)
_PUT: LiteralString = f"""
INSERT INTO agent_settings ({insert_columns(AgentSettingsRow)})
VALUES ({insert_values(AgentSettingsRow)})
ON CONFLICT (tenant_id, agent_id) DO UPDATE
SET {_SET}, updated_by = excluded.updated_by, updated_at = clock_timestamp()
RETURNING {_COLUMNS}
"""


def settings_from_row(row: Row) -> AgentSettings:
    """The settings as stored: each field of :class:`AgentSettings` from its column."""
    return AgentSettings(**{f.name: row[f.name] for f in fields(AgentSettings)})


class PgAgents(AgentRepository):
    def __init__(self, conn: Connection, principal: Principal) -> None:
        self._conn = conn
        self._principal = principal

    async def get(self, agent_id: str, *, lock: bool = False) -> AgentSettings:
        params = {"tenant_id": self._principal.tenant_id, "agent_id": agent_id}
        row = await fetch_one(self._conn, _GET_LOCKED if lock else _GET, params)
        return settings_from_row(row) if row else AgentSettings(agent_id=agent_id)

    async def put(self, settings: AgentSettings) -> AgentSettings:
        params = {
            **dataclasses.asdict(settings),
            "tenant_id": self._principal.tenant_id,
            "actor": self._principal.user_id,
        }
        row = await fetch_one(self._conn, _PUT, params)
        assert row is not None  # an upsert always returns its row
        return settings_from_row(row)
