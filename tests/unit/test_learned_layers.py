"""What every learned layer's checked-in weights promise (``agent_memory.detectors``):
they read the local model's vectors, of its size, and give a probability for any
score, however far from zero."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agent_memory.detectors import instruction_classifier, secret_classifier
from agent_memory.detectors.learned import Classifier
from agent_memory.embed.local import MODEL

LAYERS = pytest.mark.parametrize(
    "loaded",
    [secret_classifier.classifier, instruction_classifier.classifier],
    ids=["credentials", "instructions"],
)


@LAYERS
def test_the_weights_are_for_the_local_model(loaded: Callable[[], Classifier]) -> None:
    layer = loaded()
    assert layer.model == MODEL
    assert len(layer.weights) == 384
    assert 0.0 < layer.threshold < 1.0


@LAYERS
def test_a_score_is_a_probability(loaded: Callable[[], Classifier]) -> None:
    assert 0.0 < loaded().probability([0.0] * 384) < 1.0
    for far in (1e6, -1e6):  # a score far from zero either way, without overflow
        assert 0.0 <= loaded().probability([far] * 384) <= 1.0


@LAYERS
def test_a_vector_of_another_size_is_refused(loaded: Callable[[], Classifier]) -> None:
    with pytest.raises(ValueError, match="1536 dimensions"):
        loaded().probability([0.0] * 1536)
