"""Train the learned credential layer: a logistic regression over the local model's
vector of a text, the one the indexer computes for every stored text ("passage: ").

It learns from the tuning part of the corpus by class (``tests/secret_corpus_classes.tsv``,
split by ``tests/secret_corpus.py``): the held-out parts (unseen language, unseen
author, both) stay unseen, for ``bench/secret_detector.py`` to measure the layer on.
Ordinary chat is the other source of false alarms, so ``LOCOMO_NEGATIVES`` conversation
turns and as many observations of the first ``LOCOMO_SAMPLES`` LoCoMo samples join the
look-alikes; the bench counts false positives on the other samples only (the weights'
JSON names the samples trained on). The regularisation and the threshold are chosen by
cross-validation with one language's texts (or one LoCoMo sample) held out per fold
(the held-out parts are new languages and new authors, so a fold that holds out a
language is the nearer rehearsal): the threshold is the lowest score that flags at most
``TARGET_FP`` of the look-alikes their folds never trained on, and of the LoCoMo texts.

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
    locomo,
    locomo_drawn,
    locomo_observations,
    locomo_turns,
    run,
    threshold_for,
)

from agent_memory.detectors.secret_classifier import WEIGHTS  # noqa: E402
from tests.secret_corpus import BY_CLASS, TUNING, Labelled  # noqa: E402

CACHE = ROOT / "bench" / "data" / "secret_corpus_vectors.npz"
# Inverse regularisation strengths tried.
STRENGTHS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
# LoCoMo texts drawn (seeded) from the first samples, as look-alikes: turns and
# observations (short facts, like extracted memories), as many of each.
LOCOMO_SAMPLES = 2
LOCOMO_NEGATIVES = 150
SEED = 0


def corpus_vectors(texts: Sequence[str], *, query: bool = False) -> Matrix:
    """The local model's vectors of ``texts``, through this corpus's cache."""
    return classifier_training.corpus_vectors(texts, CACHE, query=query)


def features(items: Sequence[Labelled]) -> Matrix:
    return corpus_vectors([i.text for i in items])


def train() -> dict[str, Any]:
    tuning = [i for i in BY_CLASS if i.part == TUNING]
    samples = locomo()[:LOCOMO_SAMPLES]
    seen = {i.text for i in tuning}
    drawn = [
        *locomo_drawn(samples, locomo_turns, LOCOMO_NEGATIVES, SEED, seen),
        *locomo_drawn(samples, locomo_observations, LOCOMO_NEGATIVES, SEED, seen),
    ]
    x = np.vstack([features(tuning), corpus_vectors([text for text, _ in drawn])])
    y = np.array([1.0 if i.secret else 0.0 for i in tuning] + [0.0] * len(drawn))
    groups = [i.language for i in tuning] + [g for _, g in drawn]
    chat = np.arange(len(y)) >= len(tuning)

    def threshold(scores: Matrix) -> float:
        """At most TARGET_FP of the look-alikes flagged, and of the LoCoMo texts."""
        return max(
            threshold_for(scores[(y == 0) & ~chat], TARGET_FP),
            threshold_for(scores[chat], TARGET_FP),
        )

    chosen = choose(x, y, groups, STRENGTHS, threshold, judged=~chat)
    credentials = int(y.sum())
    return chosen.record(
        f"tests/secret_corpus_classes.tsv, tuning part: {credentials} credentials, "
        f"{len(tuning) - credentials} look-alikes; {len(drawn)} LoCoMo turns and observations",
        locomo_samples=[str(s["sample_id"]) for s in samples],
    )


if __name__ == "__main__":
    sys.exit(run(__doc__, train, WEIGHTS))
