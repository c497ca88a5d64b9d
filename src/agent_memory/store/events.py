"""The memory audit trail, read back. Events are written with each change (``memories``)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, LiteralString

from agent_memory.domain.events import MemoryEvent, MemoryEventType
from agent_memory.domain.identity import Principal
from agent_memory.store.columns import output
from agent_memory.store.memory_sql import memory_from_row
from agent_memory.store.models import MemoryEventRow
from agent_memory.store.repositories import EventRepository
from agent_memory.store.sql import Connection, Row, fetch_all

# A memory past its expiry that the sweeper has not deleted yet: its events are read
# as the tombstones the sweeper will leave.
_EXPIRED: LiteralString = """EXISTS (
    SELECT FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = %(memory_id)s AND m.expire_time <= now()
) AS expired"""
_EVENTS: LiteralString = f"""
SELECT {output(MemoryEventRow, "")}, {_EXPIRED}
FROM memory_events
WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s"""
_ORDER: LiteralString = " ORDER BY occurred_at, id LIMIT %(limit)s"
_AFTER: LiteralString = """
  AND (occurred_at, id) > (%(occurred_at)s, %(id)s)"""
_FIRST_PAGE: LiteralString = _EVENTS + _ORDER
_NEXT_PAGE: LiteralString = _EVENTS + _AFTER + _ORDER


def _event(row: Row) -> MemoryEvent:
    kept = not row["expired"]
    return MemoryEvent(
        id=row["id"],
        memory_id=row["memory_id"],
        type=MemoryEventType(row["event_type"]),
        actor_user_id=row["actor_user_id"],
        occurred_at=row["occurred_at"],
        old=memory_from_row(row["old_memory"]) if kept and row["old_memory"] else None,
        new=memory_from_row(row["new_memory"]) if kept and row["new_memory"] else None,
    )


class PgEvents(EventRepository):
    def __init__(self, conn: Connection, principal: Principal) -> None:
        self._conn = conn
        self._tenant = principal.tenant_id

    async def list_page(
        self, memory_id: uuid.UUID, *, after: tuple[datetime, uuid.UUID] | None, limit: int
    ) -> list[MemoryEvent]:
        params: dict[str, Any] = {"tenant_id": self._tenant, "memory_id": memory_id, "limit": limit}
        if after is not None:
            params["occurred_at"], params["id"] = after
        rows = await fetch_all(self._conn, _NEXT_PAGE if after else _FIRST_PAGE, params)
        return [_event(r) for r in rows]
