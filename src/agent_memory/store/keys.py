"""API key queries."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from agent_memory.store.models import ApiKeyRow


async def add(
    session: AsyncSession,
    *,
    tenant_id: str,
    key_id: str,
    user_id: str,
    secret_hash: bytes,
    name: str,
) -> ApiKeyRow:
    row = ApiKeyRow(
        tenant_id=tenant_id, id=key_id, user_id=user_id, secret_hash=secret_hash, name=name
    )
    session.add(row)
    await session.flush()
    await session.refresh(row)
    return row


async def find(session: AsyncSession, key_id: str) -> ApiKeyRow | None:
    row: ApiKeyRow | None = await session.scalar(select(ApiKeyRow).where(ApiKeyRow.id == key_id))
    return row


async def list_all(session: AsyncSession, *, tenant_id: str | None = None) -> list[ApiKeyRow]:
    stmt = select(ApiKeyRow).order_by(ApiKeyRow.tenant_id, ApiKeyRow.created_at, ApiKeyRow.id)
    if tenant_id is not None:
        stmt = stmt.where(ApiKeyRow.tenant_id == tenant_id)
    return list((await session.scalars(stmt)).all())


async def revoke(session: AsyncSession, key_id: str) -> datetime | None:
    """Mark the key revoked; returns when, or ``None`` when no such key exists."""
    revoked: datetime | None = await session.scalar(
        update(ApiKeyRow)
        .where(ApiKeyRow.id == key_id)
        .values(revoked_at=func.coalesce(ApiKeyRow.revoked_at, func.now()))
        .returning(ApiKeyRow.revoked_at)
    )
    return revoked
