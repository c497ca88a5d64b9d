"""Queued extraction passes: enqueue, claim with SKIP LOCKED, finish or retry."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import exists, func, or_, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from agent_memory.domain.extraction import ExtractionOutcome, ExtractionRequest
from agent_memory.store.models import ExtractionJobRow


@dataclass(frozen=True)
class ClaimedJob:
    tenant_id: str
    id: uuid.UUID
    actor_user_id: str
    attempts: int
    request: ExtractionRequest


async def enqueue(
    session: AsyncSession,
    *,
    tenant_id: str,
    actor: str,
    request: ExtractionRequest,
    settle: timedelta,
) -> uuid.UUID:
    """Queue a pass to run after ``settle``. A pass of the same run still waiting is
    replaced and its clock restarted: the run had not settled."""
    stmt = insert(ExtractionJobRow).values(
        tenant_id=tenant_id,
        id=uuid.uuid4(),
        synthetic_session_id=request.synthetic_session_id,
        agent_id=request.agent_id,
        workspace_id=request.workspace_id,
        session_id=request.session_id,
        chain_id=request.chain_id,
        actor_user_id=actor,
        transcript=request.transcript,
        run_after=func.now() + settle,
    )
    stmt = stmt.on_conflict_do_update(
        index_elements=[ExtractionJobRow.tenant_id, ExtractionJobRow.synthetic_session_id],
        index_where=text("status = 'queued'"),
        set_={
            "agent_id": stmt.excluded.agent_id,
            "workspace_id": stmt.excluded.workspace_id,
            "transcript": stmt.excluded.transcript,
            "actor_user_id": stmt.excluded.actor_user_id,
            "run_after": stmt.excluded.run_after,
            "updated_at": func.now(),
        },
    )
    job_id: uuid.UUID = (await session.execute(stmt.returning(ExtractionJobRow.id))).scalar_one()
    return job_id


async def claim(session: AsyncSession, *, lease: timedelta) -> ClaimedJob | None:
    """Take one due job, or one whose runner's lease ran out (its server died)."""
    due = (
        select(ExtractionJobRow.tenant_id, ExtractionJobRow.id)
        .where(
            or_(
                (ExtractionJobRow.status == "queued") & (ExtractionJobRow.run_after <= func.now()),
                (ExtractionJobRow.status == "running")
                & (ExtractionJobRow.lease_until < func.now()),
            )
        )
        .order_by(ExtractionJobRow.run_after)
        .limit(1)
        .with_for_update(skip_locked=True)
        .cte("due")
    )
    stmt = (
        update(ExtractionJobRow)
        .where(
            ExtractionJobRow.tenant_id == due.c.tenant_id,
            ExtractionJobRow.id == due.c.id,
        )
        .values(
            status="running",
            attempts=ExtractionJobRow.attempts + 1,
            lease_until=func.now() + lease,
            updated_at=func.now(),
        )
        .returning(ExtractionJobRow)
    )
    row = (await session.scalars(stmt, execution_options={"populate_existing": True})).first()
    if row is None:
        return None
    return ClaimedJob(
        tenant_id=row.tenant_id,
        id=row.id,
        actor_user_id=row.actor_user_id,
        attempts=row.attempts,
        request=ExtractionRequest(
            agent_id=row.agent_id,
            workspace_id=row.workspace_id,
            session_id=row.session_id,
            chain_id=row.chain_id,
            transcript=row.transcript,
        ),
    )


async def finish(
    session: AsyncSession,
    *,
    tenant_id: str,
    job_id: uuid.UUID,
    attempt: int,
    outcome: ExtractionOutcome,
    detail: str,
) -> bool:
    """Mark a running job done; ``False`` when it is no longer ours.

    ``attempt`` fences the lease: once a lease ran out and another worker claimed
    the job, the attempt count moved on and the late runner matches nothing.
    """
    done = await session.execute(
        update(ExtractionJobRow)
        .where(
            ExtractionJobRow.tenant_id == tenant_id,
            ExtractionJobRow.id == job_id,
            ExtractionJobRow.status == "running",
            ExtractionJobRow.attempts == attempt,
        )
        .values(
            status="done",
            outcome=outcome.value,
            detail=detail,
            lease_until=None,
            updated_at=func.now(),
        )
        .returning(ExtractionJobRow.id)
    )
    return done.first() is not None


async def retry_later(
    session: AsyncSession,
    *,
    tenant_id: str,
    job_id: uuid.UUID,
    attempt: int,
    delay: timedelta,
    outcome: ExtractionOutcome,
    detail: str,
) -> bool:
    """Queue the job again after ``delay``; ``False`` (and the job is closed) when a newer
    pass of the same run is already waiting, which supersedes it. A runner whose lease
    was taken over (``attempt`` moved on) changes nothing."""
    newer = aliased(ExtractionJobRow)
    requeued = await session.execute(
        update(ExtractionJobRow)
        .where(
            ExtractionJobRow.tenant_id == tenant_id,
            ExtractionJobRow.id == job_id,
            ExtractionJobRow.status == "running",
            ExtractionJobRow.attempts == attempt,
            ~exists().where(
                newer.tenant_id == ExtractionJobRow.tenant_id,
                newer.synthetic_session_id == ExtractionJobRow.synthetic_session_id,
                newer.status == "queued",
            ),
        )
        .values(
            status="queued",
            run_after=func.now() + delay,
            lease_until=None,
            outcome=outcome.value,
            detail=detail,
            updated_at=func.now(),
        )
        .returning(ExtractionJobRow.id)
    )
    if requeued.first() is not None:
        return True
    await finish(
        session,
        tenant_id=tenant_id,
        job_id=job_id,
        attempt=attempt,
        outcome=outcome,
        detail=f"{detail}; superseded by a newer pass of the same run",
    )
    return False
