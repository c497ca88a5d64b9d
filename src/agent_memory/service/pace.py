"""How fast an index worker embeds: at full speed while the machine is otherwise quiet,
and in short bursts with rests between them while other processes keep it busy.

A low CPU priority alone does not spare them. A task of the lowest priority still runs
on every core nothing else wants, and a task that wakes up (a server thread a reply
has reached, a database backend a statement has reached) may have to wait for the
scheduler's next tick to take the core back; request-and-reply work, which wakes up
thousands of times a second, then runs at a fraction of its rate (measured on two
cores: another program's upserts at 0.3 of their rate beside two idle-priority busy
loops). So a worker measures, between two claims, how much CPU every other process of
the machine used. While that is more than ``QUIET_CORES``, it claims one passage per
core at a time and, after each, rests so that it embeds for no more than
``busy_share`` of the time: the others keep nearly all of the machine, and every
tenant's rows still get their vectors, a few a second (the claims go round the
tenants). While the machine is quiet it claims whole batches and does not rest.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from agent_memory.domain.indexing import CpuTimes

# Other processes using less than this many cores leave the machine quiet: a server
# with nothing to do, the database storing the worker's own vectors (some 1.6 ms of
# CPU a line against the model's 36), the odd daemon.
QUIET_CORES = 0.25
# The longest rest between two bursts: the rows of a tenant that just wrote wait at most
# a few of them.
MAX_REST_SECONDS = 2.0


class Pace:
    """When an index worker claims, and how much.

    ``read`` gives the CPU times now, or ``None`` where they cannot be read (the worker
    then never rests). ``busy_share`` 1 turns the pacing off."""

    def __init__(
        self,
        *,
        batch: int,
        burst: int,
        busy_share: float,
        read: Callable[[], CpuTimes | None],
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        quiet_cores: float = QUIET_CORES,
        max_rest: float = MAX_REST_SECONDS,
    ) -> None:
        self._batch = batch
        self._burst = max(1, min(burst, batch))
        self._share = busy_share
        self._read = read
        self._clock = clock
        self._sleep = sleep
        self._quiet = quiet_cores
        self._max_rest = max_rest
        self._last: tuple[float, CpuTimes] | None = None
        self.busy = False  # whether the others kept the machine busy when last measured
        self.rested = 0.0  # seconds rested so far

    def others(self) -> float | None:
        """Cores the other processes used on average since the last call (``None`` the
        first time, or where the times cannot be read)."""
        now, times = self._clock(), self._read()
        if times is None:
            return None
        last, self._last = self._last, (now, times)
        if last is None or now <= last[0]:
            return None
        then, before = last
        used = (times.machine - before.machine) - (times.own - before.own)
        return max(0.0, used) / (now - then)

    def size(self) -> int:
        """How many rows to claim now: a batch on a quiet machine, a burst on a busy one."""
        if self._share >= 1:
            return self._batch
        others = self.others()
        self.busy = others is not None and others > self._quiet
        return self._burst if self.busy else self._batch

    async def rest(self, worked: float) -> None:
        """After ``worked`` seconds embedding what :meth:`size` allowed: on a busy machine,
        rest long enough that the worker embedded for ``busy_share`` of the time."""
        if not self.busy or self._share >= 1 or worked <= 0:
            return
        rest = min(worked * (1 / self._share - 1), self._max_rest)
        self.rested += rest
        await self._sleep(rest)
