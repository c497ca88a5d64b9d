"""Agent settings: one row per agent that was ever configured."""

from __future__ import annotations

from typing import LiteralString

from agent_memory.domain.agents import AgentSettings
from agent_memory.domain.identity import Principal
from agent_memory.store.columns import insert_columns, insert_values, output
from agent_memory.store.models import AgentSettingsRow
from agent_memory.store.repositories import AgentRepository
from agent_memory.store.sql import Connection, Row, fetch_one

_COLUMNS = output(AgentSettingsRow, "")
_GET: LiteralString = f"""
SELECT {_COLUMNS} FROM agent_settings
WHERE tenant_id = %(tenant_id)s AND agent_id = %(agent_id)s
"""
_GET_LOCKED: LiteralString = _GET + "FOR UPDATE"
_PUT: LiteralString = f"""
INSERT INTO agent_settings ({insert_columns(AgentSettingsRow)})
VALUES ({insert_values(AgentSettingsRow)})
ON CONFLICT (tenant_id, agent_id) DO UPDATE
SET memory_enabled = excluded.memory_enabled,
    active_memory_enabled = excluded.active_memory_enabled,
    review_decisions = excluded.review_decisions,
    updated_by = excluded.updated_by, updated_at = clock_timestamp()
RETURNING {_COLUMNS}
"""


def settings_from_row(row: Row) -> AgentSettings:
    return AgentSettings(
        agent_id=row["agent_id"],
        memory_enabled=row["memory_enabled"],
        updated_at=row["updated_at"],
        active_memory_enabled=row["active_memory_enabled"],
        review_decisions=row["review_decisions"],
    )


class PgAgents(AgentRepository):
    def __init__(self, conn: Connection, principal: Principal) -> None:
        self._conn = conn
        self._principal = principal

    async def get(self, agent_id: str, *, lock: bool = False) -> AgentSettings:
        params = {"tenant_id": self._principal.tenant_id, "agent_id": agent_id}
        row = await fetch_one(self._conn, _GET_LOCKED if lock else _GET, params)
        return settings_from_row(row) if row else AgentSettings(agent_id=agent_id)

    async def put(self, settings: AgentSettings) -> AgentSettings:
        row = await fetch_one(
            self._conn,
            _PUT,
            {
                "tenant_id": self._principal.tenant_id,
                "agent_id": settings.agent_id,
                "memory_enabled": settings.memory_enabled,
                "active_memory_enabled": settings.active_memory_enabled,
                "review_decisions": settings.review_decisions,
                "actor": self._principal.user_id,
            },
        )
        assert row is not None  # an upsert always returns its row
        return settings_from_row(row)
