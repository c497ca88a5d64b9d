"""A process started by another stops when that one is gone, even if it was killed
without passing a signal on: nothing is left holding a port or a database."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time

log = logging.getLogger(__name__)

# How often a process started by another checks that its parent is still there.
PARENT_POLL_SECONDS = 1.0


def follow_parent(parent: int, who: str) -> None:
    """SIGTERM to this process (which stops as on any SIGTERM) once ``parent`` is no
    longer its parent; ``who`` names the parent in the log."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        log.warning("the %s exited; stopping", who)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
