"""A learned second opinion on instruction-shaped text: a logistic regression over the
local model's "passage: " vector of a text (multilingual-e5-small, what the indexer
computes for every stored text), which reads an order to the model that will see a
memory (to ignore its rules, reveal its prompt, send data away, take on another role)
dressed as a fact, in phrasings and languages the rules of
:mod:`agent_memory.detectors.instructions` have no words for.

It is not on the write path: the rules decide what a write refuses. The index worker
applies the classifier to the vectors it computes anyway, and a memory a person did not
write that it flags is held for review (kept out of prompts until a person decides).
Vectors of another embedder are not read: :func:`is_instruction` is False for them.

The weights come from ``scripts/train_instruction_classifier.py``, trained on the parts
of ``tests/instruction_corpus.py`` the rules were fitted to (never on its unseen parts)
and on ordinary conversation turns of LoCoMo; ``bench/instruction_detector.py`` measures
it on the unseen parts, alone and together with the rules. Pure Python (see
:mod:`agent_memory.detectors.learned`), loaded once per process.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

from agent_memory.detectors.learned import Classifier, load

WEIGHTS = Path(__file__).with_name("instruction_classifier.json")


@cache
def classifier() -> Classifier:
    """The checked-in classifier, read once per process."""
    return load(WEIGHTS)


# An order is given in words: a text with fewer letters than this (a run of emoji, of
# digits, of punctuation) gives none, whatever its vector is near. The model's vectors
# of such runs sit where few texts do, and the classifier was never shown one.
MIN_LETTERS = 3


def has_words(text: str) -> bool:
    """Whether ``text`` holds letters enough to say anything (of any script)."""
    letters = 0
    for ch in text:
        if ch.isalpha():
            letters += 1
            if letters >= MIN_LETTERS:
                return True
    return False


def is_instruction(text: str, vector: Sequence[float], model: str) -> bool:
    """Whether the classifier flags ``text``, whose "passage: " vector by ``model`` is
    ``vector``: its probability at or above the threshold chosen at training (at most
    1% of the look-alikes flagged out of fold), for a text with words
    (:func:`has_words`). False when ``model`` is not the one the classifier reads.

    Raises:
        ValueError: the vector is not of the classifier's size though ``model`` is its.
    """
    return has_words(text) and classifier().reads(vector, model)
