"""The database clock: one clock for every replica, so ages and anchors agree."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession


async def now(session: AsyncSession) -> datetime:
    """The database's current time, read now (not at the start of the transaction)."""
    value: datetime = (await session.execute(select(func.clock_timestamp()))).scalar_one()
    return value
