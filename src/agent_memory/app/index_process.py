"""Index workers: the processes that embed archival lines and memories.

``agent-memory index`` runs one against a database; run as many as you like, anywhere
the database is reachable (their leases keep them off each other's rows).
``agent-memory serve`` starts one beside itself by default (``--indexer child``),
restarts it when it dies, and stops it when it stops; the child also stops on its
own once its server is gone.

A worker takes the lowest CPU priority the system grants (``SCHED_IDLE`` on Linux,
else nice 19) before it starts a thread: it embeds on the cores nothing else wants,
whatever process wants them, and its model's idle threads sleep. The database session
that stores its vectors keeps its priority (it holds locks requests wait for); only
the sessions building an approximate index are lowered (store/priority.py). The
serving processes embed queries only.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import socket
import threading
import time
from multiprocessing.connection import wait as wait_for_ready
from multiprocessing.process import BaseProcess

import psycopg

from agent_memory.app.parent import follow_parent
from agent_memory.config import Settings, SettingsError
from agent_memory.embed import NONE, chosen, embedder_from_settings, usable_embedder
from agent_memory.service.indexing import IndexWorker
from agent_memory.store.database import Database
from agent_memory.store.opening import open_database
from agent_memory.store.priority import cpu_times, lower, name_this_process
from agent_memory.store.vectors import PGVECTOR_INSTALLED
from agent_memory.telemetry.logging import configure_logging

log = logging.getLogger(__name__)

# A child that dies is started again after this long, doubling up to the most while it
# keeps dying within a minute of its start.
RESTART_FIRST_SECONDS = 1.0
RESTART_MOST_SECONDS = 30.0
RESTART_STEADY_SECONDS = 60.0


def worker_name() -> str:
    """This worker's name among those running: its host, process and start."""
    return f"{socket.gethostname()}:{os.getpid()}:{int(time.time())}"


def run_index(settings: Settings) -> int:
    """``agent-memory index``: index until SIGTERM or SIGINT. Returns the exit status.

    Raises:
        SettingsError: no model to embed with, or a database without pgvector.
    """
    configure_logging(settings.log_level)
    priority = lower()  # before any thread starts: they all inherit it
    name_this_process()
    _check_embedder(settings)
    url, embedded, _ = open_database(settings)
    try:
        if not has_pgvector(url):
            raise SettingsError(
                "the database has no pgvector, so no vector could be compared: install the "
                "extension in it (or use the embedded database) before starting index workers"
            )
        asyncio.run(_index(settings, url, priority))
    finally:
        if embedded is not None:
            embedded.stop()
    return 0


def _check_embedder(settings: Settings) -> None:
    kind, why = chosen(settings)
    if kind == NONE:
        raise SettingsError(
            f"an index worker needs a model to embed with, and there is none ({why}): "
            "give --embedder local or --embedder http with --embedder-url"
        )
    usable_embedder(settings, indexing=True)


def has_pgvector(url: str) -> bool:
    """Whether the database at ``url`` has pgvector (asked on a connection of its own)."""
    with psycopg.connect(url, connect_timeout=10) as conn:
        row = conn.execute(PGVECTOR_INSTALLED).fetchone()
    return bool(row and row[0])


async def _index(settings: Settings, url: str, priority: str | None) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    embedder = embedder_from_settings(settings, indexing=True)
    assert embedder is not None  # checked before
    db = Database(
        url,
        pool_size=2,
        statement_timeout_ms=settings.db_statement_timeout_ms,
        index_model=embedder.model,
    )
    worker = IndexWorker(db, embedder, settings, name=worker_name(), cpu=cpu_times)
    try:
        worker.start()
        log.info(
            "index worker embedding with %s, at %s",
            embedder.describe(),
            priority or "the priority it was given (it may not be lowered here)",
        )
        await stop.wait()
        log.info("index worker stopping")
        await worker.stop()
        await embedder.close()
    finally:
        await db.close()


def _child(settings: Settings, url: str, parent: int) -> None:
    """An index worker started by ``serve`` (a process of its own)."""
    configure_logging(settings.log_level)
    priority = lower()
    name_this_process()
    # A Ctrl-C reaches the whole process group: the server passes the stop on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    follow_parent(parent, "server")
    asyncio.run(_index(settings, url, priority))


class IndexerChild:
    """One index worker process beside a server: started with it, started again when
    it dies, stopped with it."""

    def __init__(self, settings: Settings, url: str) -> None:
        self._settings = settings
        self._url = url
        self._context = multiprocessing.get_context("spawn")
        self._process: BaseProcess | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()  # a start and a stop never cross
        self._monitor = threading.Thread(target=self._watch, name="indexer-watch", daemon=True)
        self.starts = 0

    @classmethod
    def for_server(cls, settings: Settings, url: str) -> IndexerChild | None:
        """The child ``serve`` starts: none with ``--indexer none``, without a model, or
        where the database cannot compare vectors (the log says which)."""
        if settings.indexer == "none":
            log.info("no index worker here (--indexer none): workers started apart embed")
            return None
        kind, _ = chosen(settings)
        if kind == NONE:
            return None
        try:
            vectors = has_pgvector(url)
        except psycopg.Error as exc:
            log.warning("not starting an index worker: the database did not answer (%s)", exc)
            return None
        if not vectors:
            return None  # recall is lexical there, and says so
        return cls(settings, url)

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None and not _ended(process, 0) else None

    def start(self) -> None:
        self._spawn()
        self._monitor.start()

    def _spawn(self) -> None:
        with self._lock:
            if self._stopping.is_set():
                return
            process = self._context.Process(
                target=_child,
                args=(self._settings, self._url, os.getpid()),
                name="agent-memory-indexer",
                daemon=False,
            )
            # A Ctrl-C reaches the whole process group, and the server passes the stop on
            # as SIGTERM: the child starts with SIGINT ignored (an ignored signal stays
            # ignored across the exec), so one that arrives while it is still importing
            # is not its death. Only the main thread may say so; a restart, from the
            # watching thread, starts it as it is.
            main = threading.current_thread() is threading.main_thread()
            interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
            try:
                process.start()
            finally:
                if main:
                    signal.signal(signal.SIGINT, interrupt)
            self._process = process
            self.starts += 1

    def _watch(self) -> None:
        wait = RESTART_FIRST_SECONDS
        while not self._stopping.is_set():
            process = self._process
            assert process is not None
            started = time.monotonic()
            process.join()
            if self._stopping.is_set():
                return
            if time.monotonic() - started >= RESTART_STEADY_SECONDS:
                wait = RESTART_FIRST_SECONDS
            log.error(
                "the index worker exited with status %s; starting it again in %.0f s",
                process.exitcode,
                wait,
            )
            if self._stopping.wait(wait):
                return
            wait = min(wait * 2, RESTART_MOST_SECONDS)
            self._spawn()

    def begin_stop(self) -> None:
        """SIGTERM to the child now, not waiting for it: it winds down while its server
        lets the calls in flight finish (:meth:`stop` then waits for it)."""
        with self._lock:
            # Once: a second SIGTERM could end its clean stop (its handlers are gone then).
            told = self._stopping.is_set()
            self._stopping.set()
            process = self._process
        if process is not None and not told and not _ended(process, 0):
            process.terminate()

    def stop(self) -> None:
        """SIGTERM to the child (unless :meth:`begin_stop` sent it); killed when it takes
        too long."""
        self.begin_stop()
        process = self._process
        if process is None:
            return
        if not _ended(process, 0):
            log.info(
                "waiting up to %.0f s for the index worker to stop",
                self._settings.index_stop_seconds,
            )
            if not _ended(process, self._settings.index_stop_seconds):
                log.error("the index worker did not stop in time; killing it")
                process.kill()
        if self._monitor.is_alive():
            self._monitor.join()  # it reaps the child, which has ended or been killed
        process.join()  # at once when reaped; reaps it where nothing watched it


def _ended(process: BaseProcess, timeout: float) -> bool:
    """Whether the child has exited (within ``timeout`` seconds), by its sentinel, which
    reaps nothing: the watching thread waits on the same child, and one of two waits
    that reaps it leaves the other believing it is still running."""
    return bool(wait_for_ready([process.sentinel], timeout))
