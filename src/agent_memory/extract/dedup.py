"""Near-duplicate detection and key slugs for automatically extracted facts."""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent_memory.domain.memorize import slugged
from agent_memory.domain.memory import AUTO_KEY_PREFIX

SLUG_MAX_CHARS = 60

# A word: letters, digits and their marks, in any script (no underscore).
_WORD = re.compile(r"[^\W_]+")


def word_set(text: str) -> frozenset[str]:
    """Lowercased words of any script: the normalised form compared for duplicates (two
    facts in Japanese or Russian share words as two in English do)."""
    return frozenset(_WORD.findall(text.casefold()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def most_similar(candidate: str, others: Iterable[str]) -> float:
    words = word_set(candidate)
    return max((jaccard(words, word_set(o)) for o in others), default=0.0)


def slug(proposed: str) -> str:
    """The proposal slugged as a tag is, letters of any script kept, in at most 60
    characters."""
    return slugged(proposed, SLUG_MAX_CHARS)


def auto_key(proposed: str) -> str:
    """``auto:<slug>``, or empty when the proposal has nothing to slug."""
    s = slug(proposed)
    return f"{AUTO_KEY_PREFIX}{s}" if s else ""
