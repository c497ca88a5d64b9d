"""A learned second opinion on credentials: a logistic regression over the local model's
vector of a text (multilingual-e5-small, the "passage: " vector the indexer computes for
every stored text), which reads a password, a PIN, an access code or a national id
stated in a language or a phrasing the rules have no words for.

It is not on the write path: the rules of :mod:`agent_memory.detectors.secrets` decide what
a write refuses. Its flag counts only for a text in which the rules' gate sees something
that could be a secret (:func:`~agent_memory.detectors.secrets.may_hold_secret`): a text
shaped like a credential with nothing secret in it (``staging-db-port: 5433``) is not
held. The index worker applies the classifier to the vectors it computes
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
from agent_memory.detectors.secrets import may_hold_secret

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


def is_credential(text: str, vector: Sequence[float], model: str) -> bool:
    """Whether the layer holds ``text``, whose "passage: " vector by ``model`` is
    ``vector``: the rules' gate sees something in it that could be a secret, and the
    classifier's probability is at or above the threshold chosen on the tuning part (at
    most 1% of the look-alikes, and of the LoCoMo texts, flagged out of fold). False
    when ``model`` is not the one the classifier reads.

    Raises:
        ValueError: the vector is not of the classifier's size though ``model`` is its.
    """
    return may_hold_secret(text) and classifier().reads(vector, model)
