"""Memory queries. Every statement is confined to one tenant; none commits."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from agent_memory.domain.memory import (
    IMPORTANCE_MAX,
    IMPORTANCE_MIN,
    KEY_MAX_CHARS,
    Memory,
    MemorySource,
    Owner,
    Scope,
    text_violations,
)
from agent_memory.store.models import MemoryRow


def to_domain(row: MemoryRow) -> Memory:
    return Memory(
        id=row.id,
        owner=Owner(Scope(row.scope), row.owner_id),
        key=row.key,
        value=row.value,
        pinned=row.pinned,
        importance=row.importance,
        source=MemorySource(row.source),
        created_at=row.created_at,
        updated_at=row.updated_at,
        version=row.version,
        tags=tuple(row.tags or ()),
        confidence=row.confidence,
        metadata=dict(row.metadata_ or {}),
    )


async def upsert(
    session: AsyncSession,
    *,
    tenant_id: str,
    owner: Owner,
    key: str,
    value: str,
    pinned: bool | None,
    importance: int | None,
    source: MemorySource,
    actor: str,
) -> tuple[Memory, bool] | None:
    """Insert, or update the row holding (owner, key) when its source is the same.

    Atomic under concurrency: two writers of the same new key leave one row.
    Returns ``(memory, created)``, or ``None`` when the key is held by a row of
    another source (the caller decides what that means).
    """
    values: dict[str, Any] = {
        "tenant_id": tenant_id,
        "id": uuid.uuid4(),
        "scope": owner.scope.value,
        "owner_id": owner.id,
        "key": key,
        "value": value,
        "source": source.value,
        "created_by": actor,
        "updated_by": actor,
    }
    if pinned is not None:
        values["pinned"] = pinned
    if importance is not None:
        values["importance"] = importance
    stmt = insert(MemoryRow).values(values)
    changes: dict[str, Any] = {
        "value": stmt.excluded.value,
        "updated_by": stmt.excluded.updated_by,
        "updated_at": func.clock_timestamp(),
        "version": MemoryRow.version + 1,
    }
    if pinned is not None:
        changes["pinned"] = stmt.excluded.pinned
    if importance is not None:
        changes["importance"] = stmt.excluded.importance
    returning = stmt.on_conflict_do_update(
        index_elements=[MemoryRow.tenant_id, MemoryRow.scope, MemoryRow.owner_id, MemoryRow.key],
        set_=changes,
        where=MemoryRow.source == stmt.excluded.source,
    ).returning(MemoryRow)
    row = (await session.scalars(returning, execution_options={"populate_existing": True})).first()
    if row is None:
        return None
    return to_domain(row), row.version == 1


async def find_by_key(
    session: AsyncSession, *, tenant_id: str, owner: Owner, key: str
) -> Memory | None:
    row = await session.scalar(
        select(MemoryRow).where(
            MemoryRow.tenant_id == tenant_id,
            MemoryRow.scope == owner.scope.value,
            MemoryRow.owner_id == owner.id,
            MemoryRow.key == key,
        )
    )
    return to_domain(row) if row else None


async def get(
    session: AsyncSession, *, tenant_id: str, memory_id: uuid.UUID, for_update: bool = False
) -> Memory | None:
    stmt = select(MemoryRow).where(MemoryRow.tenant_id == tenant_id, MemoryRow.id == memory_id)
    if for_update:
        stmt = stmt.with_for_update()
    row = await session.scalar(stmt, execution_options={"populate_existing": True})
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
        update(MemoryRow)
        .where(MemoryRow.tenant_id == tenant_id, MemoryRow.id == memory_id)
        .values(
            **changes,
            updated_by=actor,
            updated_at=func.clock_timestamp(),
            version=MemoryRow.version + 1,
        )
        .returning(MemoryRow)
    )
    row = (await session.scalars(stmt, execution_options={"populate_existing": True})).one()
    return to_domain(row)


async def delete(session: AsyncSession, *, tenant_id: str, memory_id: uuid.UUID) -> None:
    row = await session.get(MemoryRow, (tenant_id, memory_id))
    if row is not None:
        await session.delete(row)
        await session.flush()


# Listing orders, as (sort expression, descending) pairs ending in a unique column.
def _agent_order() -> list[tuple[Any, bool]]:
    return [
        (MemoryRow.pinned, True),
        (MemoryRow.importance, True),
        (MemoryRow.key, False),
    ]


def _workspace_order() -> list[tuple[Any, bool]]:
    return [
        (MemoryRow.pinned, True),
        (MemoryRow.importance, True),
        (MemoryRow.updated_at, True),
        (MemoryRow.id, False),
    ]


def _after(order: Sequence[tuple[Any, bool]], position: Sequence[Any]) -> Any:
    """Keyset predicate: rows strictly after ``position`` in ``order`` (mixed directions)."""
    clauses = []
    for i, (column, descending) in enumerate(order):
        equal = [c == v for (c, _), v in zip(order[:i], position[:i], strict=True)]
        # .op() because SQLAlchemy refuses < and > on booleans; PostgreSQL orders them.
        beyond = column.op("<" if descending else ">")(position[i])
        clauses.append(and_(*equal, beyond))
    return or_(*clauses)


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
    stmt = select(MemoryRow).where(
        MemoryRow.tenant_id == tenant_id,
        MemoryRow.scope == owner.scope.value,
        MemoryRow.owner_id == owner.id,
    )
    if after is not None:
        stmt = stmt.where(_after(order, after))
    stmt = stmt.order_by(*(c.desc() if d else c.asc() for c, d in order)).limit(limit)
    rows = (await session.scalars(stmt)).all()
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
