"""Work a server does besides its calls, in rounds: the extraction workers, the expiry
sweeper and the indexer.

A round runs after each wake or poll interval; a round that says more work may be
waiting is followed by another at once. The database's outages are left to the
outage log (they are found and told there, sparingly); any other failure is logged
with its traceback at most once a minute, as every poll would repeat it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from agent_memory.domain.errors import Unavailable
from agent_memory.tasks import cancel_and_wait, obey_cancel
from agent_memory.telemetry.tracing import log_failure

FAILURE_LOG_SECONDS = 60.0


class Rounds:
    def __init__(
        self,
        name: str,
        round_: Callable[[], Awaitable[bool]],
        *,
        every: float,
        log: logging.Logger,
        failed: str,
        tasks: int = 1,
        at_start: bool = True,
    ) -> None:
        """``round_`` does one round of work and says whether more may be waiting;
        ``failed`` is what the log says when it fails, in ``log``; ``tasks`` run rounds
        side by side, the first at once or (``at_start`` false) after one interval."""
        self._name = name
        self._round = round_
        self._every = every
        self._log = log
        self._failed = failed
        self._count = tasks
        self._at_start = at_start
        self._tasks: list[asyncio.Task[None]] = []
        self._wake = asyncio.Event()
        self._failure_logged_at = -FAILURE_LOG_SECONDS

    def start(self) -> None:
        for n in range(self._count):
            name = self._name if self._count == 1 else f"{self._name}-{n}"
            self._tasks.append(asyncio.create_task(self._loop(), name=name))

    def wake(self) -> None:
        """Run a round now rather than at the next poll."""
        self._wake.set()

    async def stop(self) -> None:
        await cancel_and_wait(*self._tasks)
        self._tasks.clear()

    async def _loop(self) -> None:
        waits = self._at_start is False
        while True:
            if waits:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self._every):
                        await self._wake.wait()
            waits = True
            self._wake.clear()
            with contextlib.suppress(Unavailable):  # told by the outage log
                while await self._guarded():
                    obey_cancel()
            obey_cancel()

    async def _guarded(self) -> bool:
        try:
            return await self._round()
        except (asyncio.CancelledError, Unavailable):
            raise
        except Exception as exc:
            now = time.monotonic()
            if now - self._failure_logged_at >= FAILURE_LOG_SECONDS:
                self._failure_logged_at = now
                # Without the values of a failed statement, as every log of ours.
                log_failure(self._log, exc, self._failed)
            return False
