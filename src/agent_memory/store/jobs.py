"""Queued extraction passes: enqueue, claim with SKIP LOCKED, finish or retry.

A claim counts an attempt, and ``attempt`` fences every later change: once a lease
ran out and another worker claimed the job, the late runner matches nothing.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any, LiteralString

from psycopg.types.json import Jsonb

from agent_memory.domain.extraction import (
    ClaimedJob,
    DroppedFact,
    DropReason,
    ExtractionJob,
    ExtractionOutcome,
    ExtractionRequest,
    ExtractionResult,
    JobState,
    Usage,
)
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import Scope
from agent_memory.store.columns import insert_columns, insert_values, output
from agent_memory.store.models import ExtractionJobRow
from agent_memory.store.repositories import JobQueue, JobRepository
from agent_memory.store.sql import Connection, fetch_all, fetch_one

_ENQUEUE: LiteralString = f"""
INSERT INTO extraction_jobs ({insert_columns(ExtractionJobRow)})
VALUES ({insert_values(ExtractionJobRow)})
ON CONFLICT (tenant_id, synthetic_session_id) WHERE status = 'queued' DO UPDATE
SET agent_id = excluded.agent_id, workspace_id = excluded.workspace_id,
    transcript = excluded.transcript, actor_user_id = excluded.actor_user_id,
    run_after = excluded.run_after, updated_at = now()
RETURNING id
"""

_DUE: LiteralString = """
    ((status = 'queued' AND run_after <= now())
     OR (status = 'running' AND lease_until < now()))"""
# Which tenants have a job due, the longest waiting first: a read across tenants that
# locks nothing, so that the claim itself names one tenant (a sharded database routes
# it to that tenant's shard).
DUE_TENANTS: LiteralString = f"""
SELECT tenant_id FROM extraction_jobs
WHERE {_DUE}
GROUP BY tenant_id
ORDER BY min(run_after)
LIMIT %(tenants)s
"""
_CLAIM: LiteralString = f"""
WITH due AS (
    SELECT id FROM extraction_jobs
    WHERE tenant_id = %(tenant_id)s AND {_DUE}
    ORDER BY run_after
    LIMIT 1
    FOR UPDATE SKIP LOCKED
)
UPDATE extraction_jobs AS j
SET status = 'running', attempts = j.attempts + 1, lease_until = now() + %(lease)s,
    updated_at = now()
FROM due
WHERE j.tenant_id = %(tenant_id)s AND j.id = due.id
RETURNING j.tenant_id, j.id, j.actor_user_id, j.attempts, j.agent_id, j.workspace_id,
          j.session_id, j.chain_id, j.transcript
"""
# How many tenants with due jobs a claim tries before it says there is none.
_TENANTS_TRIED = 8

_OURS: LiteralString = """
WHERE tenant_id = %(tenant_id)s AND id = %(id)s AND status = 'running'
  AND attempts = %(attempt)s"""

# A job that ends keeps no transcript: it was only ever needed to run the pass. It
# keeps what the pass did instead, for GetExtractionJob.
_FINISH: LiteralString = f"""
UPDATE extraction_jobs
SET status = 'done', outcome = %(outcome)s, detail = %(detail)s, lease_until = NULL,
    transcript = '', result = %(result)s, updated_at = now()
{_OURS}
RETURNING id
"""

_GET: LiteralString = f"""
SELECT {output(ExtractionJobRow, "")}
FROM extraction_jobs
WHERE tenant_id = %(tenant_id)s AND id = %(id)s
"""

# Back in the queue unless a newer pass of the same run waits there already: then the
# job is closed instead, superseded, and its transcript emptied.
_RETRY: LiteralString = f"""
WITH newer AS (
    SELECT FROM extraction_jobs AS queued
    JOIN extraction_jobs AS this
      ON queued.tenant_id = %(tenant_id)s
     AND queued.synthetic_session_id = this.synthetic_session_id
    WHERE this.tenant_id = %(tenant_id)s AND this.id = %(id)s AND queued.status = 'queued'
)
UPDATE extraction_jobs
SET status = CASE WHEN EXISTS (SELECT FROM newer) THEN 'done' ELSE 'queued' END,
    run_after = CASE WHEN EXISTS (SELECT FROM newer) THEN run_after
                     ELSE now() + %(delay)s END,
    detail = CASE WHEN EXISTS (SELECT FROM newer)
                  THEN %(detail)s || '; superseded by a newer pass of the same run'
                  ELSE %(detail)s END,
    transcript = CASE WHEN EXISTS (SELECT FROM newer) THEN '' ELSE transcript END,
    lease_until = NULL, outcome = %(outcome)s, updated_at = now()
{_OURS}
RETURNING status
"""


class PgJobs(JobRepository):
    def __init__(self, conn: Connection, principal: Principal) -> None:
        self._conn = conn
        self._principal = principal

    async def enqueue(self, request: ExtractionRequest, *, settle: timedelta) -> uuid.UUID:
        row = await fetch_one(
            self._conn,
            _ENQUEUE,
            {
                "tenant_id": self._principal.tenant_id,
                "id": uuid.uuid4(),
                "synthetic_session_id": request.synthetic_session_id,
                "agent_id": request.agent_id,
                "workspace_id": request.workspace_id,
                "session_id": request.session_id,
                "chain_id": request.chain_id,
                "actor": self._principal.user_id,
                "transcript": request.transcript,
                "settle": settle,
            },
        )
        assert row is not None  # an upsert returns its row
        job_id: uuid.UUID = row["id"]
        return job_id

    def _ours(self, job_id: uuid.UUID, attempt: int) -> dict[str, object]:
        return {"tenant_id": self._principal.tenant_id, "id": job_id, "attempt": attempt}

    async def finish(self, job_id: uuid.UUID, *, attempt: int, result: ExtractionResult) -> bool:
        params = {
            **self._ours(job_id, attempt),
            "outcome": result.outcome.value,
            "detail": result.detail,
            "result": Jsonb(_result_json(result)),
        }
        return await fetch_one(self._conn, _FINISH, params) is not None

    async def get(self, job_id: uuid.UUID) -> ExtractionJob | None:
        params = {"tenant_id": self._principal.tenant_id, "id": job_id}
        row = await fetch_one(self._conn, _GET, params)
        if row is None:
            return None
        state = JobState(row["status"])
        done = state is JobState.DONE
        result: dict[str, Any] = row["result"] or {}
        usage = result.get("usage")
        return ExtractionJob(
            id=row["id"],
            state=state,
            attempts=row["attempts"],
            outcome=ExtractionOutcome(row["outcome"]) if done and row["outcome"] else None,
            detail=row["detail"],
            synthetic_session_id=row["synthetic_session_id"],
            agent_id=row["agent_id"],
            workspace_id=row["workspace_id"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            run_after=row["run_after"],
            written_memory_ids=tuple(uuid.UUID(i) for i in result.get("written_memory_ids", ())),
            dropped=tuple(_dropped(d) for d in result.get("dropped", ())),
            superseded_memory_ids=tuple(
                uuid.UUID(i) for i in result.get("superseded_memory_ids", ())
            ),
            usage=Usage(usage["input_tokens"], usage["output_tokens"], usage["cost_usd"])
            if done and usage
            else None,
        )

    async def retry_later(
        self,
        job_id: uuid.UUID,
        *,
        attempt: int,
        delay: timedelta,
        outcome: ExtractionOutcome,
        detail: str,
    ) -> bool:
        params = {
            **self._ours(job_id, attempt),
            "delay": delay,
            "outcome": outcome.value,
            "detail": detail,
        }
        row = await fetch_one(self._conn, _RETRY, params)
        return row is not None and row["status"] == "queued"


def _result_json(result: ExtractionResult) -> dict[str, Any]:
    """What a finished pass did, as stored: ids, dropped facts and usage; never the
    transcript, and never the value of a fact dropped for carrying a secret or an
    instruction to the assistant."""
    return {
        "written_memory_ids": [str(m.id) for m in result.written],
        "superseded_memory_ids": [str(m.id) for m in result.superseded],
        "dropped": [
            {
                "key": d.key,
                "value": "" if d.reason.hides_value else d.value,
                "scope": d.scope.value,
                "confidence": d.confidence,
                "reason": d.reason.value,
            }
            for d in result.dropped
        ],
        "usage": {
            "input_tokens": result.usage.input_tokens,
            "output_tokens": result.usage.output_tokens,
            "cost_usd": result.usage.cost_usd,
        },
    }


def _dropped(raw: dict[str, Any]) -> DroppedFact:
    return DroppedFact(
        key=raw["key"],
        value=raw["value"],
        scope=Scope(raw["scope"]),
        confidence=raw["confidence"],
        reason=DropReason(raw["reason"]),
    )


class PgJobQueue(JobQueue):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    async def claim(self, *, lease: timedelta) -> ClaimedJob | None:
        due = await fetch_all(self._conn, DUE_TENANTS, {"tenants": _TENANTS_TRIED})
        for tenant in due:
            params = {"tenant_id": tenant["tenant_id"], "lease": lease}
            row = await fetch_one(self._conn, _CLAIM, params)
            if row is not None:
                break
        else:
            return None
        return ClaimedJob(
            tenant_id=row["tenant_id"],
            id=row["id"],
            actor_user_id=row["actor_user_id"],
            attempts=row["attempts"],
            request=ExtractionRequest(
                agent_id=row["agent_id"],
                workspace_id=row["workspace_id"],
                session_id=row["session_id"],
                chain_id=row["chain_id"],
                transcript=row["transcript"],
            ),
        )
