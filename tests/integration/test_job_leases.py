"""A queued extraction job is closed only by the runner that holds its lease."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

import psycopg

from agent_memory.domain.extraction import (
    ExtractionOutcome,
    ExtractionRequest,
    ExtractionResult,
)
from agent_memory.domain.identity import Principal
from agent_memory.store import migrate
from agent_memory.store.database import Database

REQUEST = ExtractionRequest(
    agent_id="a", workspace_id=None, session_id="s1", chain_id=None, transcript="t" * 300
)
RUNNER = Principal("t", "u")


def test_a_runner_whose_lease_was_taken_over_can_neither_finish_nor_requeue(
    create_database: Callable[[], str],
) -> None:
    url = create_database()
    migrate.upgrade(url)

    async def scenario() -> None:
        db = Database(url, pool_size=2)
        lease = timedelta(minutes=5)
        try:
            async with db.connection(RUNNER) as tx:
                await tx.jobs.enqueue(REQUEST, settle=timedelta(0))
            async with db.admin() as admin:
                first = await admin.job_queue.claim(lease=lease)
            assert first is not None
            assert first.attempts == 1
            assert (first.tenant_id, first.actor_user_id) == ("t", "u")
            # The first runner stalls past its lease; a second worker claims the job.
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("UPDATE extraction_jobs SET lease_until = now() - interval '1 s'")
            async with db.admin() as admin:
                second = await admin.job_queue.claim(lease=lease)
            assert second is not None
            assert second.id == first.id
            assert second.attempts == 2

            async with db.transaction(RUNNER) as tx:
                late_finish = await tx.jobs.finish(
                    first.id,
                    attempt=first.attempts,
                    result=ExtractionResult(ExtractionOutcome.COMPLETED, "s", detail="late"),
                )
                late_requeue = await tx.jobs.retry_later(
                    first.id,
                    attempt=first.attempts,
                    delay=timedelta(0),
                    outcome=ExtractionOutcome.TIMEOUT,
                    detail="late",
                )
            assert late_finish is False
            assert late_requeue is False
            with psycopg.connect(url) as conn:
                row = conn.execute("SELECT status, attempts FROM extraction_jobs").fetchone()
            assert row == ("running", 2)

            async with db.connection(RUNNER) as tx:
                assert await tx.jobs.finish(
                    second.id,
                    attempt=second.attempts,
                    result=ExtractionResult(ExtractionOutcome.COMPLETED, "s", detail="done"),
                )
            with psycopg.connect(url) as conn:
                row = conn.execute("SELECT status, detail FROM extraction_jobs").fetchone()
            assert row == ("done", "done")
        finally:
            await db.close()

    asyncio.run(scenario())
