"""Text for the load: English words with their LoCoMo frequencies, and lines and
questions made of them (pronounceable pseudo-words when LoCoMo is absent)."""

from __future__ import annotations

import collections
import json
import os
import random
import re
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# LoCoMo (snap-research/locomo on GitHub, CC BY-NC 4.0) is not shipped with the
# project: MEMORY_LOCOMO names the file, else these places are tried in turn.
LOCOMO_PLACES = (
    ROOT / "bench" / "data" / "locomo-dev.json",
    ROOT.parent / "shared" / "data" / "locomo-dev.json",
)
LOCOMO_HOWTO = (
    "LoCoMo data not found: set MEMORY_LOCOMO to a LoCoMo JSON file (data/locomo10.json "
    "of github.com/snap-research/locomo) or put it at bench/data/locomo-dev.json"
)


def find_locomo() -> Path | None:
    """The LoCoMo file to use, or None when there is none."""
    named = os.environ.get("MEMORY_LOCOMO")
    if named:
        return Path(named)
    return next((p for p in LOCOMO_PLACES if p.exists()), None)


LOCOMO = find_locomo()
QUESTION_WORDS = ("what", "when", "where", "how", "why", "who", "which")


class Corpus:
    """English words with their LoCoMo frequencies, and lines and questions made of them."""

    def __init__(self, words: list[str], counts: list[int]) -> None:
        self.words = words
        total = 0
        self.cum: list[int] = []
        for c in counts:
            total += c
            self.cum.append(total)

    @classmethod
    def load(cls, path: Path | None) -> Corpus:
        if path is not None and path.exists():
            counter: collections.Counter[str] = collections.Counter()
            for sample in json.loads(path.read_text()):
                conversation = sample["conversation"]
                n = 1
                while f"session_{n}" in conversation:
                    for turn in conversation[f"session_{n}"]:
                        counter.update(re.findall(r"[a-z][a-z']*[a-z]|[a-z]", turn["text"].lower()))
                    n += 1
            ranked = counter.most_common()
            return cls([w for w, _ in ranked], [c for _, c in ranked])
        # No LoCoMo here: pronounceable pseudo-words with Zipf frequencies.
        rng = random.Random(7)
        syllables = [c + v for c in "bcdfghklmnprstvwz" for v in "aeiou"]
        words = sorted({"".join(rng.choices(syllables, k=rng.randint(1, 4))) for _ in range(6000)})
        rng.shuffle(words)
        return cls(words, [max(1, 100_000 // (rank + 1)) for rank in range(len(words))])

    def sample(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum, k=k)

    def lines(self, rng: random.Random, count: int) -> list[str]:
        """``count`` lines of 60-100 characters (a long last word may run a little past)."""
        out: list[str] = []
        for _ in range(count):
            target = rng.randint(60, 100)
            words = self.sample(rng, 32)
            length, taken = -1, 0
            while length < target and taken < len(words):
                length += len(words[taken]) + 1
                taken += 1
            line = " ".join(words[:taken])
            out.append(line[0].upper() + line[1:] + ".")
        return out

    def questions(self, rng: random.Random, lines: Sequence[str], count: int) -> list[str]:
        """Short questions about ``lines``: two of a line's words and one of the vocabulary's;
        every fifth with a typo in its longest word."""
        out: list[str] = []
        for i in range(count):
            words = re.findall(r"[a-z']+", rng.choice(lines).lower())
            content = [w for w in words if len(w) >= 4] or words
            picked = rng.sample(content, min(2, len(content))) + self.sample(rng, 1)
            if i % 5 == 4:
                longest = max(range(len(picked)), key=lambda j: len(picked[j]))
                w = picked[longest]
                if len(w) >= 5:
                    j = rng.randrange(1, len(w) - 2)
                    picked[longest] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
            out.append(f"{rng.choice(QUESTION_WORDS)} {' '.join(picked)}?")
        return out


def long_document(pieces: Sequence[str], target_chars: int) -> str:
    """``pieces`` in turn, a blank line apart, until the text is ``target_chars`` long:
    a long document of ordinary text for a detector's throughput."""
    out: list[str] = []
    size = 0
    while size < target_chars:
        piece = pieces[len(out) % len(pieces)]
        out.append(piece)
        size += len(piece) + 2
    return "\n\n".join(out)
