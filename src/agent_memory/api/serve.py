"""``agent-memory serve``: the service in this process, or in worker processes that
share the port."""

from __future__ import annotations

import asyncio
import logging

from agent_memory.api.index_process import IndexerChild
from agent_memory.api.server import serve_on
from agent_memory.api.workers import serve_workers
from agent_memory.config import Settings
from agent_memory.embed import usable_embedder
from agent_memory.net import refuse_busy_port
from agent_memory.store.opening import open_database
from agent_memory.telemetry.logging import configure_logging

log = logging.getLogger("agent_memory.api.server")


def serve(settings: Settings) -> int:
    """Run the service: in this process, or (``workers`` > 1) in worker processes that
    share the port. Returns the exit status."""
    configure_logging(settings.log_level)
    usable_embedder(settings)  # an embedder that cannot be had is the operator's to fix
    if settings.workers > 1:
        return serve_workers(settings)
    refuse_busy_port(settings.listen)
    if settings.http_listen is not None:
        refuse_busy_port(settings.http_listen, flag="--http-listen")
    url, embedded, _ = open_database(settings)
    indexer = IndexerChild.for_server(settings, url)
    try:
        if indexer is not None:
            indexer.start()
        asyncio.run(serve_on(settings, url))
    finally:
        if indexer is not None:
            indexer.stop()
        if embedded is not None:
            embedded.stop()
    log.info("agent-memory stopped")
    return 0
