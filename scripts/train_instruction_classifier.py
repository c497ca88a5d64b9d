"""Train the learned instruction layer: a logistic regression over the local model's
"passage: " vector of a text (what the indexer computes for every stored text) that
tells an order to the model reading a memory from an ordinary note.

Positives and look-alikes come from ``tests/instruction_corpus.py``, every part except
its unseen ones (``UNSEEN_PARTS``: new languages, a new author, both), which
``bench/instruction_detector.py`` keeps for measuring. Ordinary chat is the other
source of false alarms, so ``LOCOMO_NEGATIVES`` conversation turns of the first
``LOCOMO_SAMPLES`` LoCoMo samples join the look-alikes; the bench counts false positives
on the other samples only (the weights' JSON names the samples trained on).

The regularisation and the threshold come from out-of-fold scores, one group held out
per fold: a language of the tuning part, the first corpus, its held-back half, a LoCoMo
sample. The threshold is the lowest score that flags at most ``TARGET_FP`` of the
corpus look-alikes and at most ``TARGET_FP`` of the LoCoMo turns out of fold; the
strength kept is the one with the best out-of-fold recall at its threshold.

Writes ``src/agent_memory/detectors/instruction_classifier.json`` (weights in float32
precision, bias, threshold as a probability). Deterministic: texts in corpus order, the
LoCoMo turns drawn with a fixed seed, folds in sorted order, Newton's method from zero
(``scripts/classifier_training.py``). Vectors are cached in
``bench/data/instruction_corpus_vectors.npz`` (not checked in). LoCoMo is found as the
benches find it: ``MEMORY_LOCOMO``, else ``bench/data/locomo-dev.json``, else
``../shared/data/locomo-dev.json``.

    python scripts/train_instruction_classifier.py           # train, write the weights
    python scripts/train_instruction_classifier.py --check   # exit 1 when the file is stale
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# The repository (for tests/) and this directory (for classifier_training, also when
# this module is imported as scripts.train_instruction_classifier).
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

import classifier_training  # noqa: E402
from classifier_training import (  # noqa: E402
    TARGET_FP,
    Matrix,
    choose,
    locomo,
    locomo_drawn,
    locomo_turns,
    run,
    threshold_for,
)

from agent_memory.detectors.instruction_classifier import WEIGHTS  # noqa: E402
from tests.instruction_corpus import CORPUS, UNSEEN_PARTS, Text  # noqa: E402

CACHE = ROOT / "bench" / "data" / "instruction_corpus_vectors.npz"
# Conversation turns drawn (seeded) from the first samples of LoCoMo, as look-alikes.
LOCOMO_SAMPLES = 2
LOCOMO_NEGATIVES = 150
SEED = 0
# Inverse regularisation strengths tried.
STRENGTHS = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0)


def corpus_vectors(texts: Sequence[str]) -> Matrix:
    """The local model's "passage: " vectors of ``texts``, through this layer's cache."""
    return classifier_training.corpus_vectors(texts, CACHE)


def group(text: Text) -> str:
    """The fold of a corpus text: its language in the tuning part, its part otherwise."""
    return f"tune:{text.language}" if text.part == "tune" else text.part


def train() -> dict[str, Any]:
    corpus = [t for t in CORPUS if t.part not in UNSEEN_PARTS]
    samples = locomo()[:LOCOMO_SAMPLES]
    drawn = locomo_drawn(samples, locomo_turns, LOCOMO_NEGATIVES, SEED, {t.text for t in corpus})
    texts = [t.text for t in corpus] + [text for text, _ in drawn]
    groups = [group(t) for t in corpus] + [g for _, g in drawn]
    x = corpus_vectors(texts)
    y = np.array([1.0 if t.instruction else 0.0 for t in corpus] + [0.0] * len(drawn))
    chat = np.arange(len(texts)) >= len(corpus)

    def threshold(scores: Matrix) -> float:
        """At most TARGET_FP of the look-alikes flagged, and of the LoCoMo turns."""
        return max(
            threshold_for(scores[(y == 0) & ~chat], TARGET_FP),
            threshold_for(scores[chat], TARGET_FP),
        )

    chosen = choose(x, y, groups, STRENGTHS, threshold, judged=~chat)
    instructions = int(y.sum())
    return chosen.record(
        f"tests/instruction_corpus.py, parts {', '.join(sorted({t.part for t in corpus}))}: "
        f"{instructions} instructions, {len(corpus) - instructions} look-alikes; "
        f"{len(drawn)} LoCoMo conversation turns",
        locomo_samples=[str(s["sample_id"]) for s in samples],
    )


if __name__ == "__main__":
    sys.exit(run(__doc__, train, WEIGHTS))
