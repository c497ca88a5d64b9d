"""Stopping asyncio tasks, as every part of the service that runs one in the background
does: the server's health watcher, the rounds of background work, the indexer's index
builds, the standby's checks.

On Python 3.11 a library's wait can swallow a cancel: ``asyncio.wait_for`` returns the
result that arrived in the same turn as the cancel, and psycopg_pool waits for a free
connection with it. The request still counts in ``Task.cancelling()``, so a loop that
runs until it is cancelled calls :func:`obey_cancel` at each turn; and a stop waits for
its tasks without swallowing a cancel of the stop itself (:func:`cancel_and_wait`).
A stop that does not end says where its tasks wait (:func:`where_tasks_wait`).
"""

from __future__ import annotations

import asyncio
import io


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


def where_tasks_wait(limit: int = 8) -> str:
    """Where each task of the running loop but the caller waits, its stack each (up to
    ``limit`` frames): what a stop, or a call, that does not end is waiting on."""
    out = io.StringIO()
    for task in asyncio.all_tasks():
        if task is asyncio.current_task():
            continue
        try:
            task.print_stack(limit=limit, file=out)
        except TypeError:  # a frame without a line number (compiled code)
            print(task, file=out)
    return out.getvalue()
