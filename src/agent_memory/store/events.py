"""Audit events of memories, written in the transaction that makes the change."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from agent_memory.domain.events import MemoryEvent, MemoryEventType
from agent_memory.domain.memory import Memory, MemorySource, Owner, Scope
from agent_memory.store import keyset
from agent_memory.store.models import MemoryEventRow


def snapshot(memory: Memory) -> dict[str, Any]:
    """A memory as JSON, for the audit trail (groundings are not repeated there)."""
    return {
        "id": str(memory.id),
        "scope": memory.owner.scope.value,
        "owner_id": memory.owner.id,
        "key": memory.key,
        "value": memory.value,
        "pinned": memory.pinned,
        "importance": memory.importance,
        "source": memory.source.value,
        "tags": list(memory.tags),
        "confidence": memory.confidence,
        "metadata": dict(memory.metadata),
        "version": memory.version,
        "created_at": memory.created_at.isoformat(),
        "updated_at": memory.updated_at.isoformat(),
        "conversation_provider": memory.conversation_provider,
        "conversation_id": memory.conversation_id,
    }


def from_snapshot(data: dict[str, Any] | None) -> Memory | None:
    if data is None:
        return None
    return Memory(
        id=uuid.UUID(data["id"]),
        owner=Owner(Scope(data["scope"]), data["owner_id"]),
        key=data["key"],
        value=data["value"],
        pinned=data["pinned"],
        importance=data["importance"],
        source=MemorySource(data["source"]),
        created_at=datetime.fromisoformat(data["created_at"]),
        updated_at=datetime.fromisoformat(data["updated_at"]),
        version=data["version"],
        tags=tuple(data.get("tags") or ()),
        confidence=data.get("confidence"),
        metadata=data.get("metadata") or {},
        conversation_provider=data.get("conversation_provider"),
        conversation_id=data.get("conversation_id"),
    )


async def record(
    session: AsyncSession,
    *,
    tenant_id: str,
    memory_id: uuid.UUID,
    event_type: MemoryEventType,
    actor: str,
    old: Memory | None,
    new: Memory | None,
) -> None:
    await session.execute(
        insert(MemoryEventRow).values(
            tenant_id=tenant_id,
            id=uuid.uuid4(),
            memory_id=memory_id,
            event_type=event_type.value,
            actor_user_id=actor,
            occurred_at=func.clock_timestamp(),
            old_memory=snapshot(old) if old else None,
            new_memory=snapshot(new) if new else None,
        )
    )


async def list_page(
    session: AsyncSession,
    *,
    tenant_id: str,
    memory_id: uuid.UUID,
    after: tuple[datetime, uuid.UUID] | None,
    limit: int,
) -> list[MemoryEvent]:
    """A memory's events, oldest first, after the ``(occurred_at, id)`` position."""
    stmt = select(MemoryEventRow).where(
        MemoryEventRow.tenant_id == tenant_id, MemoryEventRow.memory_id == memory_id
    )
    if after is not None:
        order = [(MemoryEventRow.occurred_at, False), (MemoryEventRow.id, False)]
        stmt = stmt.where(keyset.after(order, after))
    rows = (
        await session.scalars(
            stmt.order_by(MemoryEventRow.occurred_at, MemoryEventRow.id).limit(limit)
        )
    ).all()
    return [
        MemoryEvent(
            id=r.id,
            memory_id=r.memory_id,
            type=MemoryEventType(r.event_type),
            actor_user_id=r.actor_user_id,
            occurred_at=r.occurred_at,
            old=from_snapshot(r.old_memory),
            new=from_snapshot(r.new_memory),
        )
        for r in rows
    ]
