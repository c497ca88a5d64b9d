"""``agent-memory serve``: the service in this process, or in worker processes that
share the port."""

from __future__ import annotations

import faulthandler
import functools
import logging
import signal
from typing import TYPE_CHECKING

from agent_memory.config import Settings
from agent_memory.embed import usable_embedder
from agent_memory.net import refuse_busy_port
from agent_memory.telemetry.logging import configure_logging

if TYPE_CHECKING:
    from agent_memory.app.index_process import IndexerChild

log = logging.getLogger("agent_memory.app.server")


def serve(settings: Settings) -> int:
    """Run the service: in this process, or (``workers`` > 1) in worker processes that
    share the port. Returns the exit status."""
    configure_logging(settings.log_level)
    # A port in use is the operator's to fix, said before the server's code loads
    # (seconds of imports) and before a database is made.
    refuse_busy_port(settings.listen)
    if settings.http_listen is not None:
        refuse_busy_port(settings.http_listen, flag="--http-listen")
    usable_embedder(settings)  # an embedder that cannot be had is the operator's to fix
    if settings.workers > 1:
        from agent_memory.app.workers import serve_workers

        status = serve_workers(settings)
        _stopping_for_good()
        return status
    from agent_memory.app.index_process import IndexerChild
    from agent_memory.app.server import run_serving, serve_on
    from agent_memory.store.opening import open_database

    url, embedded, _ = open_database(settings)
    if embedded is not None:
        # Its postmaster dying is an outage this process ends by starting it again; one
        # it cannot end stops the service (SIGTERM), with a failure exit status.
        embedded.supervise()
    indexer = IndexerChild.for_server(settings, url)
    try:
        if indexer is not None:
            indexer.start()
        run_serving(
            serve_on(settings, url, stopping=functools.partial(_stop_begun, settings, indexer))
        )
    finally:
        _stopping_for_good()
        if indexer is not None:
            indexer.stop()
        if embedded is not None:
            embedded.stop()
        faulthandler.cancel_dump_traceback_later()
    log.info("agent-memory stopped")
    return 1 if embedded is not None and embedded.gave_up else 0


def _stop_begun(settings: Settings, indexer: IndexerChild | None) -> None:
    """A stop was asked for: the index worker stops beside the server, and a stop that
    outlasts every bound it has writes each thread's stack to the log (standard error),
    wherever it waits, the event loop's teardown included."""
    from agent_memory.app.server import STOP_SLACK_SECONDS

    bounds = settings.shutdown_grace_seconds + settings.index_stop_seconds
    faulthandler.dump_traceback_later(bounds + 2 * STOP_SLACK_SECONDS, exit=False)
    if indexer is not None:
        indexer.begin_stop()


def _stopping_for_good() -> None:
    """Once the event loop is gone (and its signal handlers with it), a repeated SIGTERM
    or Ctrl-C while the index worker and the embedded database are stopped, or the
    process exits, must not turn a clean shutdown into a kill or a traceback."""
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)
