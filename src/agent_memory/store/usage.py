"""The usage ledger: what each model call cost, by synthetic session id."""

from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from agent_memory.domain.extraction import ExtractionOutcome, UsageRecord, UsageReport
from agent_memory.store.models import UsageRecordRow

MAX_RECORDS = 1000


async def record(
    session: AsyncSession,
    *,
    tenant_id: str,
    synthetic_session_id: str,
    agent_id: str,
    model: str,
    input_tokens: int,
    output_tokens: int,
    cost_usd: float,
    outcome: ExtractionOutcome,
) -> None:
    await session.execute(
        insert(UsageRecordRow).values(
            tenant_id=tenant_id,
            id=uuid.uuid4(),
            synthetic_session_id=synthetic_session_id,
            agent_id=agent_id,
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=Decimal(str(round(cost_usd, 8))),
            outcome=outcome.value,
        )
    )


async def report(
    session: AsyncSession,
    *,
    tenant_id: str,
    prefix: str,
    start: datetime | None,
    end: datetime | None,
) -> UsageReport:
    """Records whose id starts with ``prefix`` in [start, end), oldest first, with totals
    over every match (the record list itself is capped)."""
    conditions: list[ColumnElement[bool]] = [UsageRecordRow.tenant_id == tenant_id]
    if prefix:
        conditions.append(UsageRecordRow.synthetic_session_id.startswith(prefix, autoescape=True))
    if start is not None:
        conditions.append(UsageRecordRow.recorded_at >= start)
    if end is not None:
        conditions.append(UsageRecordRow.recorded_at < end)
    totals = (
        await session.execute(
            select(
                func.coalesce(func.sum(UsageRecordRow.input_tokens), 0),
                func.coalesce(func.sum(UsageRecordRow.output_tokens), 0),
                func.coalesce(func.sum(UsageRecordRow.cost_usd), 0),
            ).where(*conditions)
        )
    ).one()
    rows = (
        await session.scalars(
            select(UsageRecordRow)
            .where(*conditions)
            .order_by(UsageRecordRow.recorded_at, UsageRecordRow.id)
            .limit(MAX_RECORDS)
        )
    ).all()
    return UsageReport(
        records=[
            UsageRecord(
                id=r.id,
                synthetic_session_id=r.synthetic_session_id,
                agent_id=r.agent_id,
                model=r.model,
                input_tokens=r.input_tokens,
                output_tokens=r.output_tokens,
                cost_usd=float(r.cost_usd),
                outcome=ExtractionOutcome(r.outcome),
                recorded_at=r.recorded_at,
            )
            for r in rows
        ],
        total_input_tokens=int(totals[0]),
        total_output_tokens=int(totals[1]),
        total_cost_usd=float(totals[2]),
    )
