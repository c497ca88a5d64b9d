"""Stopping asyncio tasks, as every part of the service that runs one in the background
does: the server's health watcher, the rounds of background work, the indexer's index
builds, the standby's checks.

On Python 3.11 a library's wait can swallow a cancel: ``asyncio.wait_for`` returns the
result that arrived in the same turn as the cancel, and psycopg_pool waits for a free
connection with it. The request still counts in ``Task.cancelling()``, so a loop that
runs until it is cancelled calls :func:`obey_cancel` at each turn; and a stop waits for
its tasks without swallowing a cancel of the stop itself (:func:`cancel_and_wait`).
"""

from __future__ import annotations

import asyncio


def obey_cancel() -> None:
    """Raise CancelledError if the current task was asked to stop and is still running:
    a loop that runs until it is cancelled calls this at each turn, or a swallowed
    cancel would keep it running, and whoever stops it waiting, forever."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def cancel_and_wait(*tasks: asyncio.Task[object]) -> None:
    """Cancel ``tasks`` and wait until each has ended, however it ended (a cancel is
    theirs to end with); a cancel of the caller is raised, not swallowed."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
