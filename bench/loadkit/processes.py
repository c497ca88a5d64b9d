"""The processes a run starts and watches: the service, the null server, PostgreSQL."""

from __future__ import annotations

import collections
import contextlib
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

from agent_memory.store.embedded import EmbeddedPostgres
from agent_memory.store.priority import WORKER_NAME

SAMPLE_SECONDS = 0.05
# What an index worker calls itself (ps, top).
INDEXER = WORKER_NAME.decode()
BENCH = Path(__file__).resolve().parents[1]


class StartError(RuntimeError):
    """A server process did not come up; the message ends with its last output."""


class Child:
    """A subprocess in its own session; a thread drains its output (the tail is kept)."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], marker: str) -> None:
        self.name = name
        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
            start_new_session=True,  # Ctrl-C reaches us only; we stop it in order
        )
        self.tail: collections.deque[str] = collections.deque(maxlen=200)
        self.address = ""
        self._ready = threading.Event()
        self._marker = re.compile(re.escape(marker) + r" (\S+)")
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.tail.append(line.rstrip())
            if not self._ready.is_set() and (found := self._marker.search(line)):
                self.address = found.group(1)
                self._ready.set()
        self._ready.set()

    def wait_ready(self, timeout: float) -> str:
        self._ready.wait(timeout)
        if not self.address:
            self.stop()
            raise StartError(f"{self.name} did not start:\n" + "\n".join(self.tail))
        return self.address

    def logged(self, marker: str, timeout: float) -> str:
        """The word after ``marker`` in the first output line that has it, waiting up to
        ``timeout`` seconds for that line (for a second address a server logs)."""
        pattern = re.compile(re.escape(marker) + r" (\S+)")
        deadline = time.monotonic() + timeout
        while True:
            for line in list(self.tail):
                if found := pattern.search(line):
                    return found.group(1)
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise StartError(f"{self.name} never logged {marker!r}:\n" + "\n".join(self.tail))
            time.sleep(0.05)

    def pids(self) -> list[int]:
        """This process and the server workers it spawned; not PostgreSQL's processes,
        the multiprocessing resource tracker (which also runs Python but serves
        nothing), nor the index worker (background work, see :meth:`indexer_pids`)."""
        try:
            parent = psutil.Process(self.proc.pid)
            children = parent.children(recursive=True)
        except psutil.Error:
            return []
        found = [parent.pid]
        for child in children:
            with contextlib.suppress(psutil.Error):
                if child.name() == INDEXER and child.pid not in found:
                    continue
                if any("spawn_main" in part for part in child.cmdline()):
                    found.append(child.pid)
        return found

    def indexer_pids(self) -> list[int]:
        """The index worker this server started (it names itself once it runs)."""
        try:
            children = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.Error:
            return []
        found = []
        for child in children:
            with contextlib.suppress(psutil.Error):
                if child.name() == INDEXER:
                    found.append(child.pid)
        return found

    def stop(self, timeout: float = 30.0) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_service(
    data_dir: Path,
    *,
    workers: int,
    pool_size: int,
    archival_chars: int,
    http_listen: str | None = None,
    embedder: str | None = None,
    read_url: str | None = None,
    indexer: str | None = None,
) -> Child:
    """``agent-memory serve`` as in production (API keys on), on the embedded database;
    with ``http_listen``, also serving HTTP/JSON there (its address is logged after
    ``agent-memory http on``); with ``embedder``, that ``--embedder`` rather than the
    default (the local model); with ``read_url``, that standby for the reads that may
    lag; with ``indexer``, that ``--indexer`` (``none``: no index worker beside it)."""
    env = {
        **os.environ,
        "MEMORY_ARCHIVAL_MAX_CHARS": str(archival_chars),
        "MEMORY_DB_POOL_SIZE": str(pool_size),
        "MEMORY_SHUTDOWN_GRACE_SECONDS": "2",
        "MEMORY_WORKERS": str(workers),
    }
    for name in (
        "MEMORY_DATABASE_URL",
        "MEMORY_INSECURE_LOCAL",
        "OTEL_TRACES_EXPORTER",
        "MEMORY_EMBEDDER",
        "MEMORY_DATABASE_READ_URL",
    ):
        env.pop(name, None)
    if read_url is not None:
        env["MEMORY_DATABASE_READ_URL"] = read_url
    argv = [sys.executable, "-m", "agent_memory.cli", "serve", "--listen", "127.0.0.1:0"]
    argv += ["--data-dir", str(data_dir), "--log-level", "INFO"]
    name = f"agent-memory serve --workers {workers}"
    if http_listen is not None:
        argv += ["--http-listen", http_listen]
        name += f" --http-listen {http_listen}"
    if embedder is not None:
        argv += ["--embedder", embedder]
        name += f" --embedder {embedder}"
    if indexer is not None:
        argv += ["--indexer", indexer]
        name += f" --indexer {indexer}"
    return Child(name, argv, env, "serving on")


def start_index_worker(url: str, threads: int = 0) -> Child:
    """``agent-memory index`` on ``url``, as an operator starts one apart from the
    servers, its model on ``threads`` (0: every core); ready once it says what it
    embeds with."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env["MEMORY_EMBEDDER_THREADS"] = str(threads)
    argv = [sys.executable, "-m", "agent_memory.cli", "index", "--database-url", url]
    argv += ["--log-level", "INFO"]
    return Child("agent-memory index", argv, env, "index worker embedding with")


def start_null_server(workers: int) -> Child:
    argv = [sys.executable, str(BENCH / "rpc_load.py"), "--serve-null", str(workers)]
    return Child(f"null gRPC server ({workers} processes)", argv, dict(os.environ), "serving on")


class EmbeddedDatabase:
    """Joins the service's running embedded PostgreSQL (in the service's data folder) to
    learn its URL, and keeps it up while services come and go; the last to let go,
    at close, stops it."""

    def __init__(self, data_dir: Path) -> None:
        self.embedded = EmbeddedPostgres(data_dir)
        self.url: str = self.embedded.start()

    def close(self) -> None:
        self.embedded.stop()


class ProcessSampler:
    """The peak resident set size of each of some processes, polled on a thread, and the
    CPU time they used together (all threads, user + system) while sampled."""

    def __init__(self, pids: list[int]) -> None:
        self._procs = []
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                self._procs.append(psutil.Process(pid))
        self.peak_per_process = 0
        self.cpu_seconds = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        for proc in self._procs:
            with contextlib.suppress(psutil.Error):
                self.peak_per_process = max(self.peak_per_process, proc.memory_info().rss)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self._sample()

    def _cpu(self) -> float:
        total = 0.0
        for proc in self._procs:
            with contextlib.suppress(psutil.Error):
                times = proc.cpu_times()
                total += times.user + times.system
        return total

    def start(self) -> None:
        self._sample()
        self._cpu_start = self._cpu()
        self._thread.start()

    def stop(self) -> None:
        """Stop sampling (once; later calls change nothing)."""
        if self._stop.is_set() or not self._thread.is_alive():
            return
        self._stop.set()
        self._thread.join()
        self._sample()
        self.cpu_seconds = max(self._cpu() - self._cpu_start, 0.0)

    def __enter__(self) -> ProcessSampler:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
