"""RenderPrompt's token counts are a help, never a need: when the model cannot be
loaded, the prompt is answered without them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from agent_memory.api.recall_servicer import RecallServicer
from agent_memory.embed import EmbeddingError


async def cannot_load(texts: Sequence[str]) -> list[int]:
    raise EmbeddingError("the local model cannot be loaded: gone")


async def by_words(texts: Sequence[str]) -> list[int]:
    return [len(t.split()) for t in texts]


def counts(servicer: RecallServicer, texts: list[str]) -> list[int] | None:
    return asyncio.run(servicer._counts(texts))


def test_counts_are_the_counters_and_none_without_one() -> None:
    assert counts(RecallServicer(None, count_tokens=by_words), ["a b", "c"]) == [2, 1]  # type: ignore[arg-type]
    assert counts(RecallServicer(None), ["a b"]) is None  # type: ignore[arg-type]


def test_a_model_that_cannot_load_leaves_the_counts_unset() -> None:
    assert counts(RecallServicer(None, count_tokens=cannot_load), ["a"]) is None  # type: ignore[arg-type]
