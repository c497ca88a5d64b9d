"""Background work waits for a lull in the calls, but not for ever."""

from __future__ import annotations

import asyncio
import time

from agent_memory.service.activity import Activity


def test_a_lull_comes_once_the_calls_have_left_it_alone_for_a_while() -> None:
    activity = Activity()

    async def scenario() -> None:
        # Nothing served: a lull at once, long before the limit.
        await asyncio.wait_for(activity.lull(quiet=0.01, at_most=60), timeout=10)

        async def calls_back_to_back(count: int) -> None:
            for _ in range(count):
                with activity.serving():
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0)  # the client calls again at once

        caller = asyncio.create_task(calls_back_to_back(30))
        await asyncio.sleep(0)
        await asyncio.wait_for(activity.lull(quiet=0.05, at_most=60), timeout=10)
        assert caller.done()  # the gaps between its calls were too short to count

    asyncio.run(scenario())


def test_under_a_load_that_never_pauses_a_lull_comes_at_the_limit() -> None:
    activity = Activity()

    async def scenario() -> None:
        with activity.serving():
            began = time.monotonic()
            await asyncio.wait_for(activity.lull(quiet=0.01, at_most=0.2), timeout=10)
            assert time.monotonic() - began >= 0.2  # it did wait for the calls

    asyncio.run(scenario())
