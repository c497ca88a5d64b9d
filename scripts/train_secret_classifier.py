"""Train the learned credential layer: a logistic regression over the local model's
vector of a text, the one the indexer computes for every stored text ("passage: ").

It learns from the tuning part of the corpus by class (``tests/secret_corpus_classes.tsv``,
split by ``tests/secret_corpus.py``) and from nothing else: the held-out parts (unseen
language, unseen author, both) stay unseen, for ``bench/secret_detector.py`` to measure
the layer on. The regularisation and the threshold are chosen on the tuning part too,
by cross-validation with one language's texts held out per fold (the held-out parts are
new languages and new authors, so a fold that holds out a language is the nearer
rehearsal): the threshold is the lowest score that flags at most ``TARGET_FP`` of the
look-alikes their folds never trained on.

Writes ``src/agent_memory/detectors/secret_classifier.json``: the weights (float32
precision), the bias and the threshold. Deterministic: the corpus is read in its order,
the folds are by language, and the optimiser is full-batch Newton's method from zero
(``scripts/classifier_training.py``, shared with the instruction layer's trainer).

The corpus's vectors are cached in ``bench/data/secret_corpus_vectors.npz`` (not checked
in): a re-run embeds only the texts the cache lacks.

    python scripts/train_secret_classifier.py           # train, write the weights
    python scripts/train_secret_classifier.py --check   # exit 1 when the file is stale
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# The repository (for tests/) and this directory (for classifier_training, also when
# this module is imported as scripts.train_secret_classifier).
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

import classifier_training  # noqa: E402
from classifier_training import (  # noqa: E402
    TARGET_FP,
    Matrix,
    choose,
    run,
    threshold_for,
)

from agent_memory.detectors.secret_classifier import WEIGHTS  # noqa: E402
from tests.secret_corpus import BY_CLASS, TUNING, Labelled  # noqa: E402

CACHE = ROOT / "bench" / "data" / "secret_corpus_vectors.npz"
# Inverse regularisation strengths tried.
STRENGTHS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)


def corpus_vectors(texts: Sequence[str], *, query: bool = False) -> Matrix:
    """The local model's vectors of ``texts``, through this corpus's cache."""
    return classifier_training.corpus_vectors(texts, CACHE, query=query)


def features(items: Sequence[Labelled]) -> Matrix:
    return corpus_vectors([i.text for i in items])


def train() -> dict[str, Any]:
    tuning = [i for i in BY_CLASS if i.part == TUNING]
    x = features(tuning)
    y = np.array([1.0 if i.secret else 0.0 for i in tuning])
    languages = [i.language for i in tuning]
    chosen = choose(
        x, y, languages, STRENGTHS, lambda scores: threshold_for(scores[y == 0], TARGET_FP)
    )
    return chosen.record(
        f"tests/secret_corpus_classes.tsv, tuning part: {int(y.sum())} credentials, "
        f"{int(len(y) - y.sum())} look-alikes"
    )


if __name__ == "__main__":
    sys.exit(run(__doc__, train, WEIGHTS))
