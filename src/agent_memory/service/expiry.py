"""The expiry sweeper: deletes memories whose ``expire_time`` has passed.

Expired memories are invisible to every read from the instant they expire; the
sweeper only frees their rows. Every server runs one; sweeps on several replicas
share the work, since each skips the rows another holds. A round deletes batches
until one comes back short, at most ``MAX_BATCHES_PER_ROUND`` of them, so one round
never holds the database for long.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from opentelemetry.instrumentation.utils import suppress_instrumentation

from agent_memory.config import Settings
from agent_memory.domain.errors import Unavailable
from agent_memory.store.repositories import Store
from agent_memory.telemetry.tracing import log_failure

log = logging.getLogger(__name__)

MAX_BATCHES_PER_ROUND = 20
FAILURE_LOG_SECONDS = 60.0


class ExpirySweeper:
    def __init__(self, store: Store, settings: Settings) -> None:
        self._store = store
        self._settings = settings
        self._task: asyncio.Task[None] | None = None
        self._failure_logged_at = -FAILURE_LOG_SECONDS

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="expiry-sweeper")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def sweep_round(self) -> int:
        """Delete expired memories, batch after batch, until a batch comes back short
        or the round's limit; how many."""
        batch = self._settings.expiry_sweep_batch
        deleted = 0
        for _ in range(MAX_BATCHES_PER_ROUND):
            # Idle rounds are not traced; the log says what a round deleted.
            with suppress_instrumentation():
                async with self._store.admin() as admin:
                    n = await admin.expiry.sweep(batch)
            deleted += n
            if n < batch:
                break
        if deleted:
            log.info("expiry: deleted %d expired memories", deleted)
        return deleted

    async def _loop(self) -> None:
        while True:
            # A round after each interval, the first one interval after start.
            await asyncio.sleep(self._settings.expiry_sweep_seconds)
            try:
                await self.sweep_round()
            except asyncio.CancelledError:
                raise
            except Unavailable:
                pass  # the database's outage is logged where it is found, sparingly
            except Exception as exc:
                now = time.monotonic()
                if now - self._failure_logged_at >= FAILURE_LOG_SECONDS:
                    self._failure_logged_at = now
                    log_failure(log, exc, "expiry sweep failed; retrying at the next round")
