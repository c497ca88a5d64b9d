"""Several server processes on one port (``--workers N``).

The supervisor starts the embedded PostgreSQL (when no URL is given) and migrates
once, then spawns N worker processes. Each binds the same address with
SO_REUSEPORT, so the kernel spreads incoming connections over them, and each has
its own connection pool and extraction workers. SIGTERM (or SIGINT) is passed on
to every worker, which drains its in-flight calls; when all have exited the
supervisor stops the embedded PostgreSQL. A worker that dies on its own stops the
rest: a supervisor of the supervisor (systemd, Kubernetes) restarts the service. A
supervisor that is killed outright takes the workers with it: each notices its
parent is gone and drains as on SIGTERM.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import queue
import signal
import socket
import threading
import time
from contextlib import nullcontext
from dataclasses import replace
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from types import FrameType

from agent_memory.app.index_process import IndexerChild
from agent_memory.app.parent import follow_parent
from agent_memory.app.server import mode, run_serving, serve_on
from agent_memory.config import Settings, SettingsError
from agent_memory.net import bind_address, refuse_busy_port, unbindable
from agent_memory.store.embedded import EmbeddedPostgres
from agent_memory.store.opening import open_database
from agent_memory.telemetry.logging import configure_logging

log = logging.getLogger(__name__)

# Beyond the grace period, how long a draining worker may take to exit before it is killed.
EXIT_MARGIN_SECONDS = 10.0


def _reserve(listen: str, flag: str = "--listen") -> tuple[socket.socket, str]:
    """Bind ``listen`` with SO_REUSEPORT (port 0: a free port), so the workers can share it
    and nothing else takes it meanwhile. Returns the socket and HOST:PORT.

    Raises:
        SettingsError: the address cannot be bound, or something already listens on it
            (another server sharing the port would silently take half the calls).
    """
    host = listen.rpartition(":")[0]
    refuse_busy_port(listen, flag=flag)
    try:
        family, kind, proto, address = bind_address(listen)
        sock = socket.socket(family, kind, proto)
        # SO_REUSEADDR as gRPC sets it: connections of a previous run in TIME_WAIT do not
        # keep the port.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
    except (OSError, ValueError) as exc:
        raise unbindable(listen, exc, flag=flag) from exc
    return sock, f"{host}:{sock.getsockname()[1]}"


def _worker(settings: Settings, url: str, ready: Queue[int], number: int) -> None:
    """A worker process: serve until SIGTERM or SIGINT; say on ``ready`` when serving."""
    configure_logging(settings.log_level)
    follow_parent(os.getppid(), "supervisor")

    def serving(address: str) -> None:
        log.info("worker %d accepting calls on %s", number, address)
        ready.put(number)

    run_serving(
        serve_on(settings, url, reuse_port=True, serving=serving, describe_recall=number == 1)
    )


def serve_workers(settings: Settings) -> int:
    """Run ``settings.workers`` server processes on one port until SIGTERM or SIGINT.

    Returns the exit status: 0 after a clean shutdown, 1 when a worker failed.
    """
    # Signals are caught from the start: one that arrives while the database starts or
    # the workers spawn stops the service cleanly, never halfway through a migration.
    stopping = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    processes: list[BaseProcess] = []
    embedded: EmbeddedPostgres | None = None
    indexer: IndexerChild | None = None
    log_stop = True
    try:
        # The port first: a busy one fails before the database is started or migrated.
        reserved, listen = _reserve(settings.listen)
        http_reserved, http_listen = (
            _reserve(settings.http_listen, "--http-listen")
            if settings.http_listen is not None
            else (None, None)
        )
        with reserved, contextlib.closing(http_reserved) if http_reserved else nullcontext():
            url, embedded, _ = open_database(settings)
            if embedded is not None:
                embedded.supervise()  # a postmaster it cannot start again: SIGTERM to us
            if stopping.is_set():
                return 0
            indexer = IndexerChild.for_server(settings, url)
            if indexer is not None:
                indexer.start()
            context = multiprocessing.get_context("spawn")
            ready: Queue[int] = context.Queue()
            worker_settings = replace(settings, listen=listen, http_listen=http_listen)
            # A Ctrl-C reaches the whole process group: workers still starting ignore it
            # (their supervisor passes the stop on as SIGTERM) instead of dying mid-import.
            interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                for n in range(settings.workers):
                    process: BaseProcess = context.Process(
                        target=_worker,
                        args=(worker_settings, url, ready, n + 1),
                        name=f"agent-memory-worker-{n + 1}",
                    )
                    process.start()
                    processes.append(process)
            finally:
                signal.signal(signal.SIGINT, interrupt)
            log.info("started %d workers; waiting until each serves", len(processes))
            if not _all_serving(processes, ready, stopping, settings.worker_start_seconds):
                return _stop(processes, settings, indexer, failed=not stopping.is_set())
        if http_listen is not None:
            log.info("agent-memory http on %s", http_listen)
        log.info(
            "agent-memory serving on %s (%s, %d workers)", listen, mode(settings), len(processes)
        )
        status = _supervise(processes, settings, stopping, indexer)
        return 1 if embedded is not None and embedded.gave_up else status
    except SettingsError:
        log_stop = False  # the operator's mistake is the one line they see
        raise
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
        if indexer is not None:
            indexer.stop()
        if embedded is not None:
            embedded.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if log_stop:
            log.info("agent-memory stopped")


def _all_serving(
    processes: list[BaseProcess], ready: Queue[int], stopping: threading.Event, within: float
) -> bool:
    """Wait until every worker serves; False when one died first, they took longer than
    ``within`` seconds or a stop was requested meanwhile."""
    deadline = time.monotonic() + within
    waiting = len(processes)
    while waiting:
        if stopping.is_set():
            log.info("stop requested while the workers were starting")
            return False
        if any(not p.is_alive() for p in processes):
            log.error("a worker exited while starting")
            return False
        if time.monotonic() > deadline:
            log.error(
                "the workers did not start within %.0f s (MEMORY_WORKER_START_SECONDS)", within
            )
            return False
        try:
            ready.get(timeout=0.2)
        except queue.Empty:
            continue
        waiting -= 1
    return True


def _supervise(
    processes: list[BaseProcess],
    settings: Settings,
    stopping: threading.Event,
    indexer: IndexerChild | None,
) -> int:
    while not stopping.is_set():
        wait([p.sentinel for p in processes], timeout=0.2)
        dead = [p for p in processes if not p.is_alive()]
        if dead and not stopping.is_set():
            for p in dead:
                log.error("%s exited with status %s; stopping the others", p.name, p.exitcode)
            return _stop(processes, settings, indexer, failed=True)
    return _stop(processes, settings, indexer, failed=False)


def _stop(
    processes: list[BaseProcess],
    settings: Settings,
    indexer: IndexerChild | None,
    *,
    failed: bool,
) -> int:
    """SIGTERM to every worker still running, and to the index worker (which winds down
    beside them); wait for the workers to drain and exit."""
    log.info("stopping %d workers", sum(p.is_alive() for p in processes))
    if indexer is not None:
        indexer.begin_stop()
    for p in processes:
        if p.is_alive() and p.pid is not None:
            p.terminate()
    deadline = time.monotonic() + settings.shutdown_grace_seconds + EXIT_MARGIN_SECONDS
    for p in processes:
        p.join(max(deadline - time.monotonic(), 0))
        if p.is_alive():
            log.error("%s did not exit in time; killing it", p.name)
            p.kill()
            p.join()
            failed = True
        elif p.exitcode not in (0, -signal.SIGTERM):
            failed = True
    return 1 if failed else 0
