"""Memory queries. Every statement is confined to one tenant; none commits."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy import Table, and_, delete, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from agent_memory.domain.memory import (
    IMPORTANCE_MAX,
    IMPORTANCE_MIN,
    KEY_MAX_CHARS,
    Grounding,
    Memory,
    MemorySource,
    Owner,
    Scope,
    text_violations,
)
from agent_memory.store import keyset
from agent_memory.store.models import MemoryGroundingRow, MemoryRow

# Core statements on the table: plain rows, no identity map, less work per call.
MEMORIES: Table = MemoryRow.__table__  # type: ignore[assignment]
COLS = MEMORIES.c

LEARNING_KEY_PREFIX = "director:learning:"


def to_domain(row: Any, groundings: tuple[Grounding, ...] = ()) -> Memory:
    """A memory from a Core row of the memories table (read by column name)."""
    m = row._mapping
    return Memory(
        id=m["id"],
        owner=Owner(Scope(m["scope"]), m["owner_id"]),
        key=m["key"],
        value=m["value"],
        pinned=m["pinned"],
        importance=m["importance"],
        source=MemorySource(m["source"]),
        created_at=m["created_at"],
        updated_at=m["updated_at"],
        version=m["version"],
        tags=tuple(m["tags"] or ()),
        confidence=m["confidence"],
        metadata=dict(m["metadata"] or {}),
        groundings=groundings,
        conversation_provider=m["conversation_provider"],
        conversation_id=m["conversation_id"],
    )


async def insert_new(
    session: AsyncSession,
    *,
    tenant_id: str,
    owner: Owner,
    key: str,
    source: MemorySource,
    actor: str,
    fields: dict[str, Any],
) -> Memory | None:
    """Insert a row at (owner, key); ``None`` when a concurrent writer got there first."""
    stmt = (
        insert(MEMORIES)
        .values(
            tenant_id=tenant_id,
            id=uuid.uuid4(),
            scope=owner.scope.value,
            owner_id=owner.id,
            key=key,
            source=source.value,
            created_by=actor,
            updated_by=actor,
            **fields,
        )
        .on_conflict_do_nothing(
            index_elements=[COLS.tenant_id, COLS.scope, COLS.owner_id, COLS.key]
        )
        .returning(*MEMORIES.c)
    )
    row = (await session.execute(stmt)).first()
    return to_domain(row) if row else None


async def find_by_key(
    session: AsyncSession, *, tenant_id: str, owner: Owner, key: str, for_update: bool = False
) -> Memory | None:
    stmt = select(MEMORIES).where(
        COLS.tenant_id == tenant_id,
        COLS.scope == owner.scope.value,
        COLS.owner_id == owner.id,
        COLS.key == key,
    )
    if for_update:
        stmt = stmt.with_for_update()
    row = (await session.execute(stmt)).first()
    return to_domain(row) if row else None


async def get(
    session: AsyncSession, *, tenant_id: str, memory_id: uuid.UUID, for_update: bool = False
) -> Memory | None:
    stmt = select(MEMORIES).where(COLS.tenant_id == tenant_id, COLS.id == memory_id)
    if for_update:
        stmt = stmt.with_for_update()
    row = (await session.execute(stmt)).first()
    return to_domain(row) if row else None


async def apply(
    session: AsyncSession,
    *,
    tenant_id: str,
    memory_id: uuid.UUID,
    changes: dict[str, Any],
    actor: str,
) -> Memory:
    """Write ``changes`` to a row the caller has locked; bumps version and time."""
    stmt = (
        update(MEMORIES)
        .where(COLS.tenant_id == tenant_id, COLS.id == memory_id)
        .values(
            **changes,
            updated_by=actor,
            updated_at=func.clock_timestamp(),
            version=COLS.version + 1,
        )
        .returning(*MEMORIES.c)
    )
    row = (await session.execute(stmt)).one()
    return to_domain(row)


async def delete_row(session: AsyncSession, *, tenant_id: str, memory_id: uuid.UUID) -> None:
    await session.execute(delete(MEMORIES).where(COLS.tenant_id == tenant_id, COLS.id == memory_id))


async def replace_groundings(
    session: AsyncSession, *, tenant_id: str, memory_id: uuid.UUID, groundings: Sequence[Grounding]
) -> None:
    await session.execute(
        delete(MemoryGroundingRow).where(
            MemoryGroundingRow.tenant_id == tenant_id, MemoryGroundingRow.memory_id == memory_id
        )
    )
    if groundings:
        await session.execute(
            insert(MemoryGroundingRow),
            [
                {
                    "tenant_id": tenant_id,
                    "memory_id": memory_id,
                    "ordinal": i,
                    "message_position": g.message_position,
                    "provider_message_id": g.provider_message_id,
                    "start_character": g.start_character,
                    "end_character": g.end_character,
                    "quote": g.quote,
                    "raw_event_index": g.raw_event_index,
                    "raw_start_character": g.raw_start_character,
                    "raw_end_character": g.raw_end_character,
                    "metadata_": dict(g.metadata),
                }
                for i, g in enumerate(groundings)
            ],
        )


async def with_groundings(
    session: AsyncSession, *, tenant_id: str, memories: Sequence[Memory]
) -> list[Memory]:
    """The same memories with their groundings, loaded in one query."""
    if not memories:
        return []
    rows = (
        await session.scalars(
            select(MemoryGroundingRow)
            .where(
                MemoryGroundingRow.tenant_id == tenant_id,
                MemoryGroundingRow.memory_id.in_([m.id for m in memories]),
            )
            .order_by(MemoryGroundingRow.memory_id, MemoryGroundingRow.ordinal)
        )
    ).all()
    by_memory: dict[uuid.UUID, list[Grounding]] = {}
    for r in rows:
        by_memory.setdefault(r.memory_id, []).append(
            Grounding(
                message_position=r.message_position,
                provider_message_id=r.provider_message_id,
                start_character=r.start_character,
                end_character=r.end_character,
                quote=r.quote,
                raw_event_index=r.raw_event_index,
                raw_start_character=r.raw_start_character,
                raw_end_character=r.raw_end_character,
                metadata=dict(r.metadata_ or {}),
            )
        )
    return [replace(m, groundings=tuple(by_memory.get(m.id, ()))) for m in memories]


async def list_learnings(
    session: AsyncSession, *, tenant_id: str, agent_ids: Sequence[str], limit: int
) -> list[Memory]:
    """Director learnings of any of ``agent_ids``, newest first."""
    rows = (
        await session.execute(
            select(MEMORIES)
            .where(
                COLS.tenant_id == tenant_id,
                COLS.source == MemorySource.DIRECTOR.value,
                COLS.scope == Scope.AGENT.value,
                COLS.owner_id.in_(list(agent_ids)),
                COLS.key.startswith(LEARNING_KEY_PREFIX, autoescape=True),
            )
            .order_by(COLS.created_at.desc(), COLS.key.desc())
            .limit(limit)
        )
    ).all()
    return [to_domain(r) for r in rows]


# Listing orders, as (sort expression, descending) pairs ending in a unique column.
def _agent_order() -> list[tuple[Any, bool]]:
    return [
        (COLS.pinned, True),
        (COLS.importance, True),
        (COLS.key, False),
    ]


def _workspace_order() -> list[tuple[Any, bool]]:
    return [
        (COLS.pinned, True),
        (COLS.importance, True),
        (COLS.updated_at, True),
        (COLS.id, False),
    ]


async def list_page(
    session: AsyncSession,
    *,
    tenant_id: str,
    owner: Owner,
    after: Sequence[Any] | None,
    limit: int,
) -> list[Memory]:
    """One page of an owner's memories in the scope's order, after ``after``."""
    order = _agent_order() if owner.scope is Scope.AGENT else _workspace_order()
    stmt = select(MEMORIES).where(
        COLS.tenant_id == tenant_id,
        COLS.scope == owner.scope.value,
        COLS.owner_id == owner.id,
    )
    if after is not None:
        stmt = stmt.where(keyset.after(order, after))
    stmt = stmt.order_by(*(c.desc() if d else c.asc() for c, d in order)).limit(limit)
    rows = (await session.execute(stmt)).all()
    return [to_domain(r) for r in rows]


def sort_position(memory: Memory) -> list[Any]:
    """The keyset position of ``memory`` in its owner's listing order, JSON-safe."""
    if memory.owner.scope is Scope.AGENT:
        return [memory.pinned, memory.importance, memory.key]
    return [memory.pinned, memory.importance, memory.updated_at.isoformat(), str(memory.id)]


def parse_position(scope: Scope, raw: Sequence[Any]) -> list[Any]:
    """Undo :func:`sort_position`. Raises ValueError for a position we did not make."""
    expected = 3 if scope is Scope.AGENT else 4
    if (
        len(raw) != expected
        or not isinstance(raw[0], bool)
        or type(raw[1]) is not int
        or not IMPORTANCE_MIN <= raw[1] <= IMPORTANCE_MAX
        or not all(isinstance(v, str) for v in raw[2:])
    ):
        raise ValueError("not a listing position")
    if scope is Scope.AGENT:
        if text_violations("key", raw[2], max_chars=KEY_MAX_CHARS):
            raise ValueError("not a listing position")
        return list(raw)
    updated_at = datetime.fromisoformat(raw[2])
    if updated_at.tzinfo is None:
        raise ValueError("not a listing position")
    return [raw[0], raw[1], updated_at, uuid.UUID(raw[3])]


async def recent(
    session: AsyncSession, *, tenant_id: str, owners: Sequence[Owner], limit: int
) -> list[Memory]:
    """The most recently updated memories of any of ``owners``."""
    if not owners or limit <= 0:
        return []
    rows = (
        await session.execute(
            select(MEMORIES)
            .where(
                COLS.tenant_id == tenant_id,
                or_(*(and_(COLS.scope == o.scope.value, COLS.owner_id == o.id) for o in owners)),
            )
            .order_by(COLS.updated_at.desc(), COLS.id)
            .limit(limit)
        )
    ).all()
    return [to_domain(r) for r in rows]


async def count(session: AsyncSession, *, tenant_id: str, owner: Owner) -> int:
    total = await session.scalar(
        select(func.count())
        .select_from(MEMORIES)
        .where(
            COLS.tenant_id == tenant_id,
            COLS.scope == owner.scope.value,
            COLS.owner_id == owner.id,
        )
    )
    return int(total or 0)
