"""The query side of recall by meaning: the query's vector, and whom it names.

A query is embedded without the speaker names of the blocks it searches (every line
of a conversation opens with one, so a name pulls toward all of its speaker's lines;
the lexical side keeps the names), and without third-person pronouns (they say whom a
question is about, not what it asks, and pull toward lines that use the same pronoun:
"How does he commute?" toward "He keeps a sourdough starter"). A query that names
exactly one speaker favours that speaker's lines.

The speakers come with the lexical half of the ranking, which runs while the query
is being embedded: the embedding starts from the speakers the last ranking of the
same blocks found, and only when they have changed in a way that changes this query
is it embedded again. Vectors are kept by (model, text), so a repeated query (the
same user message recalled and rendered) is embedded once.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Generic, TypeVar

from agent_memory.domain.indexing import embedded_text, named_speakers, without_speakers
from agent_memory.domain.recall import COSINE_SCALES, Meaning
from agent_memory.embed import Embedder, EmbeddingError, usable

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

VECTORS_KEPT = 1024
OWNERS_KEPT = 4096
# Left out of a query's vector (English; on LoCoMo's dev questions recall by meaning
# alone is the same with them or without).
PRONOUNS = re.compile(
    r"\b(?:he|she|they|him|her|them|his|hers|their|theirs|himself|herself|themselves)\b",
    re.IGNORECASE,
)
_SPACE_BEFORE_MARK = re.compile(r" ([?.!,;:])")


class _Recent(Generic[K, V]):
    """The ``size`` most recently used entries."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)


# tenant, user, agent, workspace (or ""): the blocks a ranking searches
Searched = tuple[str, str, str, str]


class QuerySide:
    def __init__(self, embedder: Embedder, *, weight: float) -> None:
        self._embedder = embedder
        self._weight = weight
        self._vectors: _Recent[tuple[str, str], list[float]] = _Recent(VECTORS_KEPT)
        self._speakers: _Recent[Searched, tuple[str, ...]] = _Recent(OWNERS_KEPT)
        self._failure_logged = False

    def start(self, searched: Searched, query: str) -> asyncio.Task[list[float] | None] | None:
        """Start embedding ``query`` as the last ranking of the ``searched`` blocks would
        have it; ``None`` when no ranking of them was seen yet."""
        speakers = self._speakers.get(searched)
        if speakers is None:
            return None
        return asyncio.create_task(self._vector(self._text(query, speakers)))

    async def finish(
        self,
        searched: Searched,
        query: str,
        speakers: Sequence[str],
        started: asyncio.Task[list[float] | None] | None,
    ) -> Meaning | None:
        """The query's side of the ranking, now that the blocks' ``speakers`` are
        known; ``None`` when the embedder failed (the ranking is lexical then)."""
        text = self._text(query, speakers)
        guessed = self._speakers.get(searched)
        self._speakers.put(searched, tuple(speakers))
        if started is not None and guessed is not None and self._text(query, guessed) == text:
            vector = await started
        else:
            if started is not None:
                started.cancel()
            vector = await self._vector(text)
        if vector is None:
            return None
        named = named_speakers(query, speakers)
        return Meaning(
            vector=vector,
            model=self._embedder.model,
            weight=self._weight,
            speaker=named[0] if len(named) == 1 else "",
            scale=COSINE_SCALES.get(self._embedder.model),
        )

    @staticmethod
    def _text(query: str, speakers: Sequence[str]) -> str:
        """What the query's vector is made from."""
        return embedded_text(without_pronouns(without_speakers(query, speakers)))

    async def _vector(self, text: str) -> list[float] | None:
        key = (self._embedder.model, text)
        vector = self._vectors.get(key)
        if vector is not None:
            return vector
        try:
            vectors = await self._embedder.queries([text])
        except Exception as exc:  # any failure of the embedder: this recall is lexical
            self._log_failure(str(exc) if isinstance(exc, EmbeddingError) else repr(exc))
            return None
        if not usable(vectors, 1):
            self._log_failure("its vector is unusable")
            return None
        self._failure_logged = False
        self._vectors.put(key, vectors[0])
        return vectors[0]

    def _log_failure(self, why: str) -> None:
        # Once per run of failures: every recall meanwhile would say the same.
        if not self._failure_logged:
            self._failure_logged = True
            log.warning("recall is lexical until the embedder answers again: %s", why)


def without_pronouns(query: str) -> str:
    """``query`` without third-person pronouns (all of it when that is all it holds)."""
    stripped = _SPACE_BEFORE_MARK.sub(r"\1", " ".join(PRONOUNS.sub(" ", query).split()))
    return stripped or query
