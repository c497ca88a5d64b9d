"""Queued extraction passes: enqueue, claim with SKIP LOCKED, finish or retry.

A claim counts an attempt, and ``attempt`` fences every later change: once a lease
ran out and another worker claimed the job, the late runner matches nothing.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import LiteralString

from agent_memory.domain.extraction import (
    ClaimedJob,
    ExtractionOutcome,
    ExtractionRequest,
)
from agent_memory.domain.identity import Principal
from agent_memory.store.repositories import JobQueue, JobRepository
from agent_memory.store.sql import Connection, fetch_one

_ENQUEUE: LiteralString = """
INSERT INTO extraction_jobs (tenant_id, id, synthetic_session_id, agent_id, workspace_id,
                             session_id, chain_id, actor_user_id, transcript, run_after)
VALUES (%(tenant_id)s, %(id)s, %(synthetic_session_id)s, %(agent_id)s, %(workspace_id)s,
        %(session_id)s, %(chain_id)s, %(actor)s, %(transcript)s, now() + %(settle)s)
ON CONFLICT (tenant_id, synthetic_session_id) WHERE status = 'queued' DO UPDATE
SET agent_id = excluded.agent_id, workspace_id = excluded.workspace_id,
    transcript = excluded.transcript, actor_user_id = excluded.actor_user_id,
    run_after = excluded.run_after, updated_at = now()
RETURNING id
"""

_CLAIM: LiteralString = """
WITH due AS (
    SELECT tenant_id, id FROM extraction_jobs
    WHERE (status = 'queued' AND run_after <= now())
       OR (status = 'running' AND lease_until < now())
    ORDER BY run_after
    LIMIT 1
    FOR UPDATE SKIP LOCKED
)
UPDATE extraction_jobs AS j
SET status = 'running', attempts = j.attempts + 1, lease_until = now() + %(lease)s,
    updated_at = now()
FROM due
WHERE j.tenant_id = due.tenant_id AND j.id = due.id
RETURNING j.tenant_id, j.id, j.actor_user_id, j.attempts, j.agent_id, j.workspace_id,
          j.session_id, j.chain_id, j.transcript
"""

_OURS: LiteralString = """
WHERE tenant_id = %(tenant_id)s AND id = %(id)s AND status = 'running'
  AND attempts = %(attempt)s"""

# A job that ends keeps no transcript: it was only ever needed to run the pass.
_FINISH: LiteralString = f"""
UPDATE extraction_jobs
SET status = 'done', outcome = %(outcome)s, detail = %(detail)s, lease_until = NULL,
    transcript = '', updated_at = now()
{_OURS}
RETURNING id
"""

# Back in the queue unless a newer pass of the same run waits there already: then the
# job is closed instead, superseded, and its transcript emptied.
_RETRY: LiteralString = f"""
WITH newer AS (
    SELECT FROM extraction_jobs AS queued
    JOIN extraction_jobs AS this
      ON queued.tenant_id = this.tenant_id
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

    async def finish(
        self, job_id: uuid.UUID, *, attempt: int, outcome: ExtractionOutcome, detail: str
    ) -> bool:
        params = {**self._ours(job_id, attempt), "outcome": outcome.value, "detail": detail}
        return await fetch_one(self._conn, _FINISH, params) is not None

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


class PgJobQueue(JobQueue):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    async def claim(self, *, lease: timedelta) -> ClaimedJob | None:
        row = await fetch_one(self._conn, _CLAIM, {"lease": lease})
        if row is None:
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
