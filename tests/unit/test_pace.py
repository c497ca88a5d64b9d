"""An index worker's pace: whole batches on a quiet machine; bursts of one passage per
core, with rests that keep its share of the time, while other processes keep the
machine busy; its own CPU never counts as the others'."""

from __future__ import annotations

import asyncio
import math

from agent_memory.domain.indexing import CpuTimes
from agent_memory.service.pace import MAX_REST_SECONDS, QUIET_CORES, Pace
from agent_memory.store.priority import cpu_times


class Machine:
    """CPU seconds as a reader sees them, moved on by the test."""

    def __init__(self) -> None:
        self.now = 100.0
        self.machine = 0.0
        self.own = 0.0
        self.slept: list[float] = []

    def read(self) -> CpuTimes:
        return CpuTimes(self.machine, self.own)

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    def run(self, seconds: float, *, others: float, own: float = 0.0) -> None:
        """``seconds`` pass with the others on ``others`` cores and the worker on ``own``."""
        self.now += seconds
        self.machine += (others + own) * seconds
        self.own += own * seconds


def pace(m: Machine, share: float = 0.1, readable: bool = True) -> Pace:
    return Pace(
        batch=32,
        burst=2,
        busy_share=share,
        read=m.read if readable else (lambda: None),
        clock=m.clock,
        sleep=m.sleep,
    )


def test_a_quiet_machine_gets_whole_batches_and_no_rest() -> None:
    m = Machine()
    p = pace(m)
    assert p.size() == 32  # nothing measured yet: as fast as it can
    m.run(1.0, others=0.05, own=2.0)  # the worker on both cores, a daemon beside it
    assert p.size() == 32
    asyncio.run(p.rest(1.0))
    assert m.slept == []


def test_a_busy_machine_gets_bursts_and_rests_that_keep_the_share() -> None:
    m = Machine()
    p = pace(m, share=0.1)
    p.size()
    m.run(1.0, others=1.5, own=0.3)
    assert p.size() == 2
    asyncio.run(p.rest(0.05))
    assert math.isclose(m.slept[-1], 0.05 * 9)  # embedding 0.05 s of every 0.5 s
    asyncio.run(p.rest(10.0))  # a burst that took long: the rest is bounded
    assert m.slept[-1] == MAX_REST_SECONDS


def test_the_machine_quiet_again_brings_back_whole_batches() -> None:
    m = Machine()
    p = pace(m)
    p.size()
    m.run(1.0, others=1.8)
    assert p.size() == 2
    m.run(1.0, others=0.0, own=1.9)
    assert p.size() == 32


def test_the_threshold_is_the_others_use_not_the_workers() -> None:
    m = Machine()
    p = pace(m)
    p.size()
    m.run(2.0, others=QUIET_CORES * 0.9, own=1.9)
    assert p.size() == 32
    m.run(2.0, others=QUIET_CORES * 1.1, own=0.0)
    assert p.size() == 2


def test_without_readings_or_with_a_share_of_one_it_never_rests() -> None:
    for p, m in [(pace(m, readable=False), m) for m in [Machine()]] + [
        (pace(m, share=1.0), m) for m in [Machine()]
    ]:
        p.size()
        m.run(1.0, others=2.0)
        assert p.size() == 32
        asyncio.run(p.rest(1.0))
        assert m.slept == []


def test_the_machines_cpu_times_count_this_process_among_them() -> None:
    before = cpu_times()
    if before is None:  # not Linux
        return
    spent = 0
    while True:  # burn some CPU of our own
        spent += sum(range(20_000))
        after = cpu_times()
        assert after is not None
        if after.own - before.own >= 0.2:
            break
    # The machine's count holds ours (both are sampled at the clock's tick).
    assert after.machine - before.machine >= (after.own - before.own) - 0.05
    assert spent > 0
