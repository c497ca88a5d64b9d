"""The learned layers' shared parts: a logistic regression over the local model's vector
of a text, and the loader of its checked-in weights.

A layer is a JSON file beside its module, written by its training script under
``scripts/``: the embedding model whose vectors it reads, the weights (one per
dimension), the bias and the threshold (a probability). Pure Python: the probability
is a dot product and a logistic function, so a layer loads without numpy.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Classifier:
    model: str  # the embedding model whose vectors it reads
    weights: tuple[float, ...]
    bias: float
    threshold: float  # a probability: at or above it, the text is flagged

    def probability(self, vector: Sequence[float]) -> float:
        """How likely the text of ``vector`` is of the class learned, from 0 to 1.

        Raises:
            ValueError: the vector is not of the classifier's size (another model's).
        """
        if len(vector) != len(self.weights):
            raise ValueError(
                f"a vector of {len(vector)} dimensions, the classifier reads "
                f"{len(self.weights)} ({self.model})"
            )
        score = sum(map(operator.mul, self.weights, vector)) + self.bias
        if score < -500:
            return 0.0
        return 1.0 / (1.0 + math.exp(-score))

    def flags(self, vector: Sequence[float]) -> bool:
        """Whether the probability of ``vector`` is at or above the threshold.

        Raises:
            ValueError: the vector is not of the classifier's size (another model's).
        """
        return self.probability(vector) >= self.threshold

    def reads(self, vector: Sequence[float], model: str) -> bool:
        """Whether it flags ``vector``, made by the embedding ``model``: False for another
        model's vectors, which it was not trained on.

        Raises:
            ValueError: the vector is not of the classifier's size though ``model`` is its.
        """
        return model == self.model and self.flags(vector)


def load(path: Path) -> Classifier:
    """The classifier whose weights ``path`` holds (a training script's JSON)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return Classifier(
        model=str(data["model"]),
        weights=tuple(float(w) for w in data["weights"]),
        bias=float(data["bias"]),
        threshold=float(data["threshold"]),
    )
