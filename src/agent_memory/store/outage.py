"""What the log says while the database does not answer: once, a summary, once more.

Every call that finds the database unavailable reports it here. The first report
is logged with its cause; while the outage lasts, a summary of the calls refused
follows every few seconds; the first answer afterwards is logged with the
outage's length. A thousand failing calls a second make a handful of lines.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

SUMMARY_SECONDS = 5.0


class DatabaseOutage:
    """The state of one database's reachability, as calls and health probes find it."""

    def __init__(
        self,
        *,
        summary_seconds: float = SUMMARY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._summary_seconds = summary_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._since: float | None = None
        self._refused = 0
        self._refused_since_summary = 0
        self._summarised_at = 0.0

    @property
    def down(self) -> bool:
        return self._since is not None

    def failed(self, cause: BaseException | str) -> None:
        """A call or a probe found the database unavailable."""
        now = self._clock()
        with self._lock:
            if self._since is None:
                self._since = self._summarised_at = now
                self._refused = self._refused_since_summary = 1
                first = True
            else:
                self._refused += 1
                self._refused_since_summary += 1
                first = False
                if now - self._summarised_at < self._summary_seconds:
                    return
                count, self._refused_since_summary = self._refused_since_summary, 0
                window, self._summarised_at = now - self._summarised_at, now
                lasted = now - self._since
        if first:
            log.warning(
                "database unavailable: %s; calls answer UNAVAILABLE and health says "
                "NOT_SERVING until it answers again",
                _one_line(cause),
            )
        else:
            log.warning(
                "database still unavailable after %.0fs: %d calls refused in the last %.0fs (%s)",
                lasted,
                count,
                window,
                _one_line(cause),
            )

    def answered(self) -> None:
        """The database answered: an outage, if there was one, is over."""
        if self._since is None:
            return
        now = self._clock()
        with self._lock:
            if self._since is None:
                return
            lasted, refused = now - self._since, self._refused
            self._since = None
            self._refused = self._refused_since_summary = 0
        log.warning(
            "database answers again after %.1fs of outage (%d calls refused meanwhile)",
            lasted,
            refused,
        )


def _one_line(cause: BaseException | str) -> str:
    text = str(cause).strip() or type(cause).__name__
    return text.splitlines()[0]
