"""Workers inside the server that run queued extraction passes.

Jobs live in PostgreSQL, so they survive restarts. A worker claims one with
``FOR UPDATE SKIP LOCKED`` under a lease, runs the pass with no transaction
open, and closes the job in the same transaction that writes the facts, so a
pass's facts land once. A model error or timeout is retried with exponential
backoff up to the attempt limit; a worker that dies mid-pass loses its lease
and another picks the job up.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from opentelemetry.instrumentation.utils import suppress_instrumentation

from agent_memory.config import Settings
from agent_memory.domain.identity import Principal
from agent_memory.service.background import Rounds
from agent_memory.service.extraction import Extraction, JobRef, LeaseLost
from agent_memory.store.repositories import Store

log = logging.getLogger(__name__)


class ExtractionWorkers:
    def __init__(self, store: Store, extraction: Extraction, settings: Settings) -> None:
        self._store = store
        self._extraction = extraction
        self._settings = settings
        self._rounds = Rounds(
            "extraction-worker",
            self._run_one,
            every=settings.extraction_poll_seconds,
            log=log,
            failed="extraction worker failed; retrying after the poll",
            tasks=settings.extraction_workers,
        )

    def start(self) -> None:
        self._rounds.start()

    def wake(self) -> None:
        """A job was queued: look now instead of at the next poll."""
        self._rounds.wake()

    async def stop(self) -> None:
        await self._rounds.stop()

    async def _run_one(self) -> bool:
        s = self._settings
        # An idle worker asks every poll interval: those asks are not traced, only
        # the passes they find.
        with suppress_instrumentation():
            async with self._store.admin() as admin:
                job = await admin.job_queue.claim(
                    lease=timedelta(seconds=s.extraction_lease_seconds)
                )
        if job is None:
            return False
        final = job.attempts >= s.extraction_max_attempts
        runner = Principal(job.tenant_id, job.actor_user_id)
        try:
            result = await self._extraction.to_its_end(
                self._extraction.run_pass(
                    runner, job.request, JobRef(job.id, attempt=job.attempts, final_attempt=final)
                )
            )
        except LeaseLost as lost:
            log.warning("extraction job %s: %s", job.id, lost.message)
            return True
        if result.outcome.retryable and not final:
            delay = s.extraction_retry_base_seconds * 2 ** (job.attempts - 1)
            async with self._store.connection(runner) as tx:
                await tx.jobs.retry_later(
                    job.id,
                    attempt=job.attempts,
                    delay=timedelta(seconds=delay),
                    outcome=result.outcome,
                    detail=result.detail,
                )
            log.info("extraction job %s: %s, retry in %.0fs", job.id, result.outcome, delay)
        else:
            log.info("extraction job %s: %s", job.id, result.outcome)
        return True
