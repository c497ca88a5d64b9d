"""A learned second opinion on credentials: a logistic regression over the local model's
vector of a text (multilingual-e5-small, the "passage: " vector the indexer computes for
every stored text), which reads a password, a PIN, an access code or a national id
stated in a language the rules have no words for.

It is not on the write path: the rules of :mod:`agent_memory.detectors.secrets` decide what
is refused. The weights come from ``scripts/train_secret_classifier.py``, trained on the
tuning part of the corpus by class (``tests/secret_corpus_classes.tsv``);
``bench/secret_detector.py`` measures the layer on the parts it never saw, alone and
combined with the rules.

Pure Python: a dot product over the vector, so the weights load without numpy, once per
process.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

from agent_memory.detectors.learned import Classifier, load

WEIGHTS = Path(__file__).with_name("secret_classifier.json")

__all__ = ["WEIGHTS", "Classifier", "classifier", "classify", "is_credential"]


@cache
def classifier() -> Classifier:
    """The checked-in classifier, read once per process."""
    return load(WEIGHTS)


def classify(vector: Sequence[float]) -> float:
    """The probability that the text whose "passage: " vector (of the local model) is
    ``vector`` states a credential; :func:`is_credential` compares it with the
    threshold chosen at training.

    Raises:
        ValueError: the vector is not of the classifier's size (another model's).
    """
    return classifier().probability(vector)


def is_credential(vector: Sequence[float]) -> bool:
    """Whether the classifier flags the text of ``vector`` (its probability at or above
    the threshold chosen on the tuning part for at most 1% false positives)."""
    return classify(vector) >= classifier().threshold
