"""A learned second opinion on credentials: a logistic regression over the local model's
vector of a text (multilingual-e5-small, the "passage: " vector the indexer computes for
every stored text), which reads a password, a PIN, an access code or a national id
stated in a language or a phrasing the rules have no words for.

It is not on the write path: the rules of :mod:`agent_memory.detectors.secrets` decide what
a write refuses. The index worker applies the classifier to the vectors it computes
anyway, and a memory a person did not write that it flags is held for review (kept out of
prompts until a person decides), as the instruction screen's are. Vectors of another
embedder are not read: :func:`is_credential` is False for them.

The weights come from ``scripts/train_secret_classifier.py``, trained on the tuning part
of the corpus by class (``tests/secret_corpus_classes.tsv``) and on ordinary LoCoMo chat;
``bench/secret_detector.py`` measures the layer on the parts it never saw, alone and
combined with the rules, and on LoCoMo samples it was not trained on.

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


def is_credential(vector: Sequence[float], model: str) -> bool:
    """Whether the classifier flags the text whose "passage: " vector by ``model`` is
    ``vector``: its probability at or above the threshold chosen on the tuning part (at
    most 1% of the look-alikes, and of the LoCoMo texts, flagged out of fold). False
    when ``model`` is not the one the classifier reads.

    Raises:
        ValueError: the vector is not of the classifier's size though ``model`` is its.
    """
    return classifier().reads(vector, model)
