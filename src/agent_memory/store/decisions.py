"""Card type, decision and re-examination queries. Every statement is confined to one
tenant; none commits. No statement here writes a decision's result after it is recorded.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Literal

from sqlalchemy import Select, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import defer

from agent_memory.domain.decisions import (
    CardType,
    Decision,
    NewDecision,
    NewReexamination,
    ReExaminable,
    Reexamination,
    ResolutionStatus,
)
from agent_memory.store.models import CardTypeRow, DecisionRow, ReexaminationRow

Lock = Literal["share", "update"]


def _card_type(row: CardTypeRow) -> CardType:
    return CardType(
        name=row.name,
        re_examinable=ReExaminable(row.re_examinable),
        actions=tuple(row.actions or ()),
        decision_actions=tuple(row.decision_actions or ()),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _decision(
    row: DecisionRow, *, with_result: bool, latest: int | None = None, count: int = 0
) -> Decision:
    return Decision(
        id=row.id,
        run_id=row.run_id,
        agent_id=row.agent_id,
        card_type=row.card_type,
        action=row.action,
        summary=row.summary,
        result=dict(row.result) if with_result else None,
        resolution_status=ResolutionStatus(row.resolution_status),
        created_at=row.created_at,
        resolved_at=row.resolved_at,
        latest_conviction_score=latest,
        reexamination_count=count,
    )


def _reexamination(row: ReexaminationRow) -> Reexamination:
    return Reexamination(
        id=row.id,
        parent_decision_id=row.parent_decision_id,
        run_id=row.run_id,
        conviction_score=row.conviction_score,
        notes=row.notes,
        suggested_action=row.suggested_action,
        created_at=row.created_at,
    )


# --- card types -------------------------------------------------------------------------


async def put_card_type(
    session: AsyncSession, *, tenant_id: str, card_type: CardType
) -> tuple[CardType, bool]:
    """Insert or replace the card type of that name; says whether it was new."""
    stmt = insert(CardTypeRow).values(
        tenant_id=tenant_id,
        name=card_type.name,
        re_examinable=card_type.re_examinable.value,
        actions=list(card_type.actions),
        decision_actions=list(card_type.decision_actions),
        # One instant for both on insert; an update is always later, so "created" is
        # exactly created_at == updated_at.
        created_at=func.statement_timestamp(),
        updated_at=func.statement_timestamp(),
    )
    upsert = stmt.on_conflict_do_update(
        index_elements=[CardTypeRow.tenant_id, CardTypeRow.name],
        set_={
            "re_examinable": stmt.excluded.re_examinable,
            "actions": stmt.excluded.actions,
            "decision_actions": stmt.excluded.decision_actions,
            "updated_at": func.clock_timestamp(),
        },
    ).returning(CardTypeRow, CardTypeRow.created_at == CardTypeRow.updated_at)
    row, created = (
        await session.execute(upsert, execution_options={"populate_existing": True})
    ).one()
    return _card_type(row), bool(created)


async def get_card_type(session: AsyncSession, *, tenant_id: str, name: str) -> CardType | None:
    row = await session.scalar(
        select(CardTypeRow).where(CardTypeRow.tenant_id == tenant_id, CardTypeRow.name == name)
    )
    return _card_type(row) if row is not None else None


# --- decisions --------------------------------------------------------------------------


def _with_conviction(tenant_id: str) -> Select[Any]:
    """Decisions with their newest conviction score and how many re-examinations they have."""
    history = ReexaminationRow.tenant_id == tenant_id
    parent = ReexaminationRow.parent_decision_id == DecisionRow.id
    latest = (
        select(ReexaminationRow.conviction_score)
        .where(history, parent)
        .order_by(ReexaminationRow.created_at.desc(), ReexaminationRow.id.desc())
        .limit(1)
        .correlate(DecisionRow)
        .scalar_subquery()
    )
    count = (
        select(func.count())
        .select_from(ReexaminationRow)
        .where(history, parent)
        .correlate(DecisionRow)
        .scalar_subquery()
    )
    return select(DecisionRow, latest, count).where(DecisionRow.tenant_id == tenant_id)


async def insert_decision(
    session: AsyncSession, *, tenant_id: str, decision: NewDecision, result: Mapping[str, Any]
) -> Decision | None:
    """Record an OPEN decision; ``None`` when its run id already has one."""
    stmt = (
        insert(DecisionRow)
        .values(
            tenant_id=tenant_id,
            id=uuid.uuid4(),
            run_id=decision.run_id,
            agent_id=decision.agent_id,
            card_type=decision.card_type,
            action=decision.action,
            summary=decision.summary,
            result=dict(result),
            resolution_status=ResolutionStatus.OPEN.value,
            created_at=func.clock_timestamp(),
        )
        .on_conflict_do_nothing(index_elements=[DecisionRow.tenant_id, DecisionRow.run_id])
        .returning(DecisionRow)
    )
    row = await session.scalar(stmt, execution_options={"populate_existing": True})
    return _decision(row, with_result=True) if row is not None else None


async def get_decision(
    session: AsyncSession,
    *,
    tenant_id: str,
    decision_id: uuid.UUID,
    lock: Lock | None = None,
) -> Decision | None:
    """One decision with its result, optionally locked until the transaction ends.

    ``share`` holds its status still while letting other re-examinations in;
    ``update`` is for changing the status.
    """
    stmt = _with_conviction(tenant_id).where(DecisionRow.id == decision_id)
    if lock is not None:
        stmt = stmt.with_for_update(read=lock == "share", of=DecisionRow)
    found = (await session.execute(stmt, execution_options={"populate_existing": True})).first()
    if found is None:
        return None
    row, latest, count = found
    return _decision(row, with_result=True, latest=latest, count=count)


async def find_decision_by_run(
    session: AsyncSession, *, tenant_id: str, run_id: str
) -> Decision | None:
    stmt = _with_conviction(tenant_id).where(DecisionRow.run_id == run_id)
    found = (await session.execute(stmt)).first()
    if found is None:
        return None
    row, latest, count = found
    return _decision(row, with_result=True, latest=latest, count=count)


async def recent_decisions(
    session: AsyncSession,
    *,
    tenant_id: str,
    agent_id: str,
    limit: int,
    with_result: bool,
    card_type: str | None = None,
) -> list[Decision]:
    """An agent's newest decisions first; results are not even read unless wanted."""
    stmt = _with_conviction(tenant_id).where(DecisionRow.agent_id == agent_id)
    if card_type is not None:
        stmt = stmt.where(DecisionRow.card_type == card_type)
    if not with_result:
        stmt = stmt.options(defer(DecisionRow.result, raiseload=True))
    stmt = stmt.order_by(DecisionRow.created_at.desc(), DecisionRow.id.desc()).limit(limit)
    rows = (await session.execute(stmt)).all()
    return [
        _decision(row, with_result=with_result, latest=latest, count=count)
        for row, latest, count in rows
    ]


async def set_resolution(
    session: AsyncSession, *, tenant_id: str, decision_id: uuid.UUID, status: ResolutionStatus
) -> None:
    """Set the status, and when the decision closed; every other column is left alone."""
    closed = status is not ResolutionStatus.OPEN
    await session.execute(
        update(DecisionRow)
        .where(DecisionRow.tenant_id == tenant_id, DecisionRow.id == decision_id)
        .values(
            resolution_status=status.value,
            resolved_at=func.clock_timestamp() if closed else None,
        )
    )


# --- re-examinations --------------------------------------------------------------------


async def insert_reexamination(
    session: AsyncSession, *, tenant_id: str, item: NewReexamination
) -> Reexamination | None:
    """Record a re-examination; ``None`` when its run id already has one."""
    stmt = (
        insert(ReexaminationRow)
        .values(
            tenant_id=tenant_id,
            id=uuid.uuid4(),
            parent_decision_id=item.parent_decision_id,
            run_id=item.run_id,
            conviction_score=item.conviction_score,
            notes=item.notes,
            suggested_action=item.suggested_action,
            created_at=func.clock_timestamp(),
        )
        .on_conflict_do_nothing(
            index_elements=[ReexaminationRow.tenant_id, ReexaminationRow.run_id]
        )
        .returning(ReexaminationRow)
    )
    row = await session.scalar(stmt, execution_options={"populate_existing": True})
    return _reexamination(row) if row is not None else None


async def find_reexamination_by_run(
    session: AsyncSession, *, tenant_id: str, run_id: str
) -> Reexamination | None:
    row = await session.scalar(
        select(ReexaminationRow).where(
            ReexaminationRow.tenant_id == tenant_id, ReexaminationRow.run_id == run_id
        )
    )
    return _reexamination(row) if row is not None else None


async def reexaminations(
    session: AsyncSession, *, tenant_id: str, parent_decision_id: uuid.UUID
) -> list[Reexamination]:
    """A decision's conviction history, oldest first."""
    rows = await session.scalars(
        select(ReexaminationRow)
        .where(
            ReexaminationRow.tenant_id == tenant_id,
            ReexaminationRow.parent_decision_id == parent_decision_id,
        )
        .order_by(ReexaminationRow.created_at, ReexaminationRow.id)
    )
    return [_reexamination(row) for row in rows]
