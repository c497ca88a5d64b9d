"""What this process is serving: background work (the indexer) waits for a lull
between calls, so that it takes the cores when the calls do not need them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator


class Activity:
    def __init__(self) -> None:
        self._serving = 0
        self._started = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        """Count one call for as long as it is served."""
        self._serving += 1
        self._started += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._serving -= 1
            if not self._serving:
                self._idle.set()

    async def lull(self, *, quiet: float, at_most: float) -> None:
        """Return once no call has been served for ``quiet`` seconds, or after
        ``at_most`` seconds whatever the calls do: work that waits for lulls still
        gets done under a load that leaves none (a client that calls again at once
        leaves gaps too short to fill)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(at_most):
                while True:
                    await self._idle.wait()
                    started = self._started
                    await asyncio.sleep(quiet)
                    if self._started == started and not self._serving:
                        return
