"""The expiry sweeper: deletes memories whose ``expire_time`` has passed.

Expired memories are invisible to every read from the instant they expire; the
sweeper only frees their rows. Every server runs one; sweeps on several replicas
share the work, since each skips the rows another holds. A round deletes batches
until one comes back short, at most ``MAX_BATCHES_PER_ROUND`` of them, so one round
never holds the database for long.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from opentelemetry.instrumentation.utils import suppress_instrumentation

from agent_memory.config import Settings
from agent_memory.service.background import Rounds
from agent_memory.store.repositories import Store

log = logging.getLogger(__name__)

MAX_BATCHES_PER_ROUND = 20


class ExpirySweeper:
    def __init__(self, store: Store, settings: Settings) -> None:
        self._store = store
        self._settings = settings
        # A round after each interval, the first one interval after start.
        self._rounds = Rounds(
            "expiry-sweeper",
            self._round,
            every=settings.expiry_sweep_seconds,
            log=log,
            failed="expiry sweep failed; retrying at the next round",
            at_start=False,
        )

    def start(self) -> None:
        self._rounds.start()

    async def stop(self) -> None:
        await self._rounds.stop()

    async def _round(self) -> bool:
        await self.sweep_round()
        return False  # the round sweeps until a batch comes back short

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
        await self.prune_round()
        return deleted

    async def prune_round(self) -> int:
        """Prune the memory events that grew older than the history kept (each memory
        keeps its state at that horizon), batch after batch, as :meth:`sweep_round`
        does; how many events crossed the horizon."""
        batch = self._settings.expiry_sweep_batch
        kept = timedelta(days=self._settings.history_days)
        crossed = 0
        for _ in range(MAX_BATCHES_PER_ROUND):
            with suppress_instrumentation():
                async with self._store.admin() as admin:
                    n = await admin.expiry.prune_history(kept, batch)
            crossed += n
            if n < batch:
                break
        if crossed:
            log.info("history: %d memory events grew older than %s", crossed, kept)
        return crossed
