"""Background work in rounds: at once or after an interval, again at once while work
may be waiting, and now when woken."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import pytest

from agent_memory.app.server import say_where_a_stop_waits
from agent_memory.service.background import Rounds
from agent_memory.tasks import cancel_and_wait

log = logging.getLogger(__name__)


def test_a_round_that_found_work_is_followed_at_once_and_a_wake_runs_one_now() -> None:
    async def scenario() -> list[str]:
        seen: list[str] = []
        waiting = ["a", "b", "c"]
        done = asyncio.Event()

        async def round_() -> bool:
            if waiting:
                seen.append(waiting.pop(0))
                return True  # more may be waiting
            seen.append("idle")
            done.set()
            return False

        rounds = Rounds("test", round_, every=3600, log=log, failed="failed")
        rounds.start()
        await asyncio.wait_for(done.wait(), 10)  # the first round ran at start
        done.clear()
        waiting.append("d")
        rounds.wake()  # not an hour from now
        await asyncio.wait_for(done.wait(), 10)
        await rounds.stop()
        return seen

    assert asyncio.run(scenario()) == ["a", "b", "c", "idle", "d", "idle"]


def test_a_round_not_at_start_waits_for_its_interval_or_a_wake() -> None:
    async def scenario() -> None:
        ran = asyncio.Event()

        async def round_() -> bool:
            ran.set()
            return False

        rounds = Rounds("test", round_, every=3600, log=log, failed="failed", at_start=False)
        rounds.start()
        await asyncio.sleep(0.05)
        assert not ran.is_set()
        rounds.wake()
        await asyncio.wait_for(ran.wait(), 10)
        await rounds.stop()

    asyncio.run(scenario())


def test_a_stop_whose_cancel_a_round_swallowed_still_stops_the_rounds() -> None:
    """A library's wait can return the result that came with the cancel instead of the
    cancel (``asyncio.wait_for`` on Python 3.11 does, and psycopg_pool waits for a free
    connection with it): the rounds stop all the same, or a server's stop waits on
    them forever."""

    async def scenario() -> None:
        entered = asyncio.Event()

        async def round_() -> bool:
            entered.set()
            # What such a wait does when the cancel and its result come together: the
            # CancelledError never leaves it, the request stays counted.
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(3600)
            return False  # and the rounds would wait an hour for the next

        rounds = Rounds("test", round_, every=3600, log=log, failed="failed")
        rounds.start()
        await asyncio.wait_for(entered.wait(), 10)
        stopping = asyncio.ensure_future(rounds.stop())
        stopped, _ = await asyncio.wait({stopping}, timeout=30)
        assert stopped, "the rounds were still running 30 s after the stop"

    asyncio.run(scenario())


def test_a_stop_that_is_itself_cancelled_ends_cancelled() -> None:
    """Waiting for a task to end does not swallow a cancel of the waiter: whoever stops
    the stop learns it was stopped."""

    async def scenario() -> bool:
        async def slow_to_end() -> None:
            try:
                await asyncio.sleep(3600)
            finally:
                await asyncio.sleep(0.05)  # its cleanup takes a moment

        task = asyncio.create_task(slow_to_end())
        await asyncio.sleep(0)
        stopping = asyncio.create_task(cancel_and_wait(task))
        await asyncio.sleep(0)
        stopping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await stopping
        return stopping.cancelled()

    assert asyncio.run(scenario())


def test_a_stop_that_outlasts_its_bound_says_where_each_task_waits(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The log names the wait a hung stop is stuck in, down to the line."""

    async def scenario() -> None:
        never = asyncio.Event()

        async def handing_back_a_connection() -> None:
            await never.wait()

        task = asyncio.create_task(handing_back_a_connection())
        await asyncio.sleep(0)
        with caplog.at_level(logging.WARNING, logger="agent_memory.app.server"):
            await say_where_a_stop_waits(0)
        await cancel_and_wait(task)

    asyncio.run(scenario())
    (record,) = [r for r in caplog.records if "still shutting down" in r.getMessage()]
    assert "handing_back_a_connection" in record.getMessage()
    assert "await never.wait()" in record.getMessage()
