"""The background indexer: embeds archival lines and memories whose vector is missing,
was made from an older text, or by another model.

It runs in index workers (``agent-memory index``; ``serve`` starts one beside itself),
as many as an operator likes, anywhere the database is reachable. Each claims a batch
under a lease (the others skip what it holds, the tenants in turn), embeds the texts
off the event loop, and stores each vector only where the text is still the one it
read. Work left by a stopped or crashed worker is claimed again when its leases run
out. Writes never wait for it: a line is searchable by its words at once, and by
meaning once its vector is stored (``Block.indexed_line_count`` counts those). Every
few seconds a worker says how it goes (see :class:`IndexWorker`).

After a change of model every vector of the old one is due again; recall keeps
serving meanwhile, by words for what is not embedded yet.

The vector of a memory a person did not write (Principal.person), whatever its
source, is also read by the learned screens
(:mod:`agent_memory.detectors.instruction_classifier`,
:mod:`agent_memory.detectors.secret_classifier`) whenever its text is new: a memory
either reads as an instruction to the assistant or as a credential is held for review,
out of prompts and recall until a person approves it, with the reason. The rules that
refuse such text at the write stay first; the screens are a second opinion at no cost
to the write. Memories embedded before the screens existed are read from the vectors
they have, once nothing waits for a vector.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TypeVar

from opentelemetry.instrumentation.utils import suppress_instrumentation

from agent_memory.config import Settings
from agent_memory.detectors import instruction_classifier, secret_classifier
from agent_memory.detectors.learned import Classifier
from agent_memory.domain.indexing import Claimed, CpuTimes, MemoryToIndex, Vector, WorkerBeat
from agent_memory.domain.memory import HoldReason
from agent_memory.domain.screening import memory_orders
from agent_memory.embed import Embedder, EmbeddingError, index_threads, usable
from agent_memory.service.background import Rounds
from agent_memory.service.pace import Pace
from agent_memory.store.repositories import Store
from agent_memory.tasks import cancel_and_wait, obey_cancel

log = logging.getLogger(__name__)

# How often a worker says how it goes, and over how long its rate is counted.
HEARTBEAT_SECONDS = 5.0
RATE_SECONDS = 60.0


class Indexer:
    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        settings: Settings,
        cpu: Callable[[], CpuTimes | None] | None = None,
    ) -> None:
        """``cpu``: reads the CPU the machine and this process have used, for the worker to
        give way while other processes keep the machine busy (see :mod:`.pace`); without
        it, the worker embeds as fast as it can."""
        self._store = store
        self._embedder = embedder
        self.pace = Pace(
            batch=settings.index_batch,
            burst=index_threads(settings),
            busy_share=settings.index_busy_share,
            read=cpu or (lambda: None),
        )
        self._lease = timedelta(seconds=settings.index_lease_seconds)
        self._rounds = Rounds(
            "indexer",
            self._round,
            every=settings.index_poll_seconds,
            log=log,
            failed="indexing failed; retrying when the lease runs out",
        )
        self._pgvector: bool | None = None  # None: not asked yet
        self._after_tenant = ""  # where the last claim ended: the next goes on from there
        self._after_unread = ""  # the tenant whose unread memories were judged last
        # The approximate indexes of the model's vectors, made once their size is known.
        self._indexes: asyncio.Task[None] | None = None
        self.embedded = 0  # lines and memories given a vector since it started

    def start(self) -> None:
        self._rounds.start()

    def wake(self) -> None:
        """Look for work now rather than at the next poll."""
        self._rounds.wake()

    async def stop(self) -> None:
        await self._rounds.stop()
        if self._indexes is not None and not self._indexes.done():
            await cancel_and_wait(self._indexes)

    async def _round(self) -> bool:
        await self.index_round()
        return False  # the round embeds until a claim comes back short

    async def index_round(self) -> int:
        """Claim, embed and store batches until a claim comes back short; how many
        lines and memories got a vector. Nothing where the database has no pgvector:
        no vector could be compared there."""
        if not await self._vectors_available():
            return 0
        stored = 0
        started = time.monotonic()
        while True:
            size = self.pace.size()
            # Idle polls are not traced; the log says what a backlog took.
            with suppress_instrumentation():
                async with self._store.admin() as admin:
                    claimed = await admin.index.claim(
                        model=self._embedder.model,
                        limit=size,
                        lease=self._lease,
                        after_tenant=self._after_tenant,
                    )
            if not claimed:
                break
            self._after_tenant = claimed.last_tenant(self._after_tenant)
            began = time.monotonic()
            stored += await self._embed(claimed)
            if len(claimed) < size:
                break
            obey_cancel()
            await self.pace.rest(time.monotonic() - began)
        if stored:
            elapsed = time.monotonic() - started
            log.info(
                "indexed %d lines and memories with %s in %.1fs",
                stored,
                self._embedder.model,
                elapsed,
            )
        await self._screen_unread()
        return stored

    async def _screen_unread(self) -> None:
        """Once nothing waits for a vector: a batch of the memories whose
        vector the screens have not read (embedded before they existed), judged from
        the vectors they have (none is made again), the tenants in turn; a batch a
        round, so that new writes never wait behind them."""
        model = self._embedder.model
        if not screens_read(model):
            return
        with suppress_instrumentation():
            async with self._store.admin() as admin:
                unread, self._after_unread = await admin.index.claim_unscreened(
                    model=model,
                    limit=self.pace.size(),
                    lease=self._lease,
                    after_tenant=self._after_unread,
                )
                if unread:
                    await admin.index.store(
                        model=model,
                        lines=(),
                        memories=unread,
                        holds=holds(unread, model),
                        screened=True,
                        fresh_vectors=False,
                    )
        if unread:
            log.info("the learned screens read %d memories embedded before them", len(unread))

    async def _vectors_available(self) -> bool:
        """Asked once, when the database answers."""
        if self._pgvector is None:
            with suppress_instrumentation():
                async with self._store.admin() as admin:
                    self._pgvector = await admin.index.vectors_available()
            if not self._pgvector:
                log.info("not indexing: this database has no pgvector to compare vectors")
        return self._pgvector

    async def _embed(self, claimed: Claimed) -> int:
        """Vectors for what was claimed, stored. What could not be embedded now keeps
        its lease, and is claimed again when it runs out.

        Raises:
            EmbeddingError: the embedder embeds nothing now.
        """
        texts = [x.passage for x in claimed.lines] + [x.passage for x in claimed.memories]
        try:
            vectors = await self._vectors(texts)
        except asyncio.CancelledError:
            async with self._store.admin() as admin:
                await asyncio.shield(
                    admin.index.release(lines=claimed.lines, memories=claimed.memories)
                )
            raise
        n = len(claimed.lines)
        self._make_indexes(vectors)
        memories = _embedded(claimed.memories, vectors[n:])
        async with self._store.admin() as admin:
            kept = await admin.index.store(
                model=self._embedder.model,
                lines=_embedded(claimed.lines, vectors[:n]),
                memories=memories,
                holds=holds(memories, self._embedder.model),
                screened=screens_read(self._embedder.model),
            )
        self.embedded += kept
        return kept

    def _make_indexes(self, vectors: Sequence[Vector | None]) -> None:
        """Once, on the side: the approximate indexes over the model's vectors, now that
        their size is known (building one over many rows takes a while)."""
        size = next((len(v) for v in vectors if v is not None), None)
        if self._indexes is not None or size is None:
            return

        async def make() -> None:
            try:
                names = await self._store.vector_indexes(self._embedder.model, size)
            except Exception as exc:  # recall reads without them; said once
                log.warning("recall's approximate indexes could not be made: %s", exc)
                return
            log.info("approximate indexes of %s: %s", self._embedder.model, ", ".join(names))

        self._indexes = asyncio.create_task(make(), name="vector-indexes")

    async def _vectors(self, texts: Sequence[str]) -> list[Vector | None]:
        """One vector per text, each text embedded once; ``None`` for a text the
        embedder refuses while it embeds others (one text of a batch can fail it:
        each is tried alone then).

        Raises:
            EmbeddingError: the embedder embeds nothing now.
        """
        distinct = list(dict.fromkeys(texts))
        try:
            found = await self._passages(distinct)
            if not usable(found, len(distinct)):
                raise EmbeddingError("the embedder's vectors are unusable")
            by_text: dict[str, Vector | None] = dict(zip(distinct, found, strict=True))
        except EmbeddingError:
            if len(distinct) == 1:
                raise
            by_text = {text: await self._one(text) for text in distinct}
            if all(v is None for v in by_text.values()):
                raise
        return [by_text[text] for text in texts]

    async def _passages(self, texts: list[str]) -> list[list[float]]:
        return await self._embedder.passages(texts)

    async def _one(self, text: str) -> Vector | None:
        try:
            found = await self._embedder.passages([text])
        except EmbeddingError:
            return None
        return found[0] if usable(found, 1) else None


class IndexWorker:
    """An index worker: the indexer, and a heartbeat that says how it goes (its rows a
    second over the last minute), which every server reads for GetRecallStatus."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        settings: Settings,
        *,
        name: str,
        cpu: Callable[[], CpuTimes | None] | None = None,
    ) -> None:
        """``name``: the worker's, unique among those running (host, process, start);
        ``cpu``: as for :class:`Indexer`."""
        self._store = store
        self._model = embedder.model
        self._name = name
        self.indexer = Indexer(store, embedder, settings, cpu)
        self._samples: deque[tuple[float, int]] = deque()
        self._heart = Rounds(
            "index-heartbeat",
            self._beat,
            every=HEARTBEAT_SECONDS,
            log=log,
            failed="an index worker's heartbeat failed; trying again",
        )

    def start(self) -> None:
        self.indexer.start()
        self._heart.start()

    def wake(self) -> None:
        self.indexer.wake()

    async def stop(self) -> None:
        await self._heart.stop()
        await self.indexer.stop()
        with contextlib.suppress(Exception):  # its row goes within the hour anyway
            async with self._store.admin() as admin:
                await admin.index.leave(self._name)

    def rate(self, now: float | None = None) -> float:
        """Rows given a vector a second, over the last minute (or since it started)."""
        now = time.monotonic() if now is None else now
        total = self.indexer.embedded
        self._samples.append((now, total))
        while len(self._samples) > 1 and now - self._samples[1][0] >= RATE_SECONDS:
            self._samples.popleft()
        then, before = self._samples[0]
        return (total - before) / (now - then) if now > then else 0.0

    async def _beat(self) -> bool:
        beat = WorkerBeat(self._name, self._model, self.indexer.embedded, self.rate())
        with suppress_instrumentation():
            async with self._store.admin() as admin:
                await admin.index.beat(beat)
        return False


T = TypeVar("T")


@dataclass(frozen=True)
class Screen:
    """A learned screen: the reason of the holds it makes, its classifier (read once per
    process), and whether it flags a text, given the text, its vector and the model
    that made the vector."""

    reason: HoldReason
    classifier: Callable[[], Classifier]
    flags: Callable[[str, Vector, str], bool]


SCREENS: tuple[Screen, ...] = (
    Screen(
        HoldReason.INSTRUCTION,
        instruction_classifier.classifier,
        instruction_classifier.is_instruction,
    ),
    Screen(HoldReason.CREDENTIAL, secret_classifier.classifier, secret_classifier.is_credential),
)


def screens_read(model: str) -> bool:
    """Whether the learned screens read the vectors of the embedding ``model``."""
    return any(screen.classifier().model == model for screen in SCREENS)


def holds(
    memories: Sequence[tuple[MemoryToIndex, Vector]], model: str
) -> dict[uuid.UUID, HoldReason]:
    """The memories the screens hold for review, each with why: of those they judge
    (see :class:`MemoryToIndex`), the ones whose key or value the instruction rules
    read as an order, or whose text a learned screen reads as an instruction to the
    assistant or as a credential (the first screen that does names the reason). A
    memory held already is judged too: its text is new, so the reason for the text
    before may no longer be it. They only ever hold: a person lets a memory go.
    Nothing for vectors of a model the screens were not trained on."""
    held: dict[uuid.UUID, HoldReason] = {}
    for memory, vector in memories:
        if not memory.judged:
            continue
        text = memory.passage
        # The rules first: what they read as an order is held whatever the classifier
        # says (an upsert is not refused for it: the rules cost a write too much).
        reason = (
            HoldReason.INSTRUCTION
            if memory_orders(memory.key, memory.value)
            else next((s.reason for s in SCREENS if s.flags(text, vector, model)), None)
        )
        if reason is not None:
            held[memory.memory_id] = reason
    for reason, count in Counter(held.values()).items():
        log.info(
            "the learned screens hold %d %s for review, read as %s",
            count,
            "memory" if count == 1 else "memories",
            f"an {reason}" if reason is HoldReason.INSTRUCTION else f"a {reason}",
        )
    return held


def _embedded(items: Sequence[T], vectors: Sequence[Vector | None]) -> list[tuple[T, Vector]]:
    """The items that got a vector, with it."""
    return [(x, v) for x, v in zip(items, vectors, strict=True) if v is not None]
