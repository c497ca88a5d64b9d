"""Near-duplicate detection and key slugs for automatically extracted facts."""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent_memory.domain.memory import AUTO_KEY_PREFIX

SLUG_MAX_CHARS = 60

_WORD = re.compile(r"[a-z0-9]+")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def word_set(text: str) -> frozenset[str]:
    """Lowercased alphanumeric words: the normalised form compared for duplicates."""
    return frozenset(_WORD.findall(text.lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def most_similar(candidate: str, others: Iterable[str]) -> float:
    words = word_set(candidate)
    return max((jaccard(words, word_set(o)) for o in others), default=0.0)


def slug(proposed: str) -> str:
    """Lowercase; each run of non-alphanumerics becomes one dash; trimmed; at most 60 chars."""
    text = _NON_ALNUM.sub("-", proposed.lower()).strip("-")
    return text[:SLUG_MAX_CHARS].strip("-")


def auto_key(proposed: str) -> str:
    """``auto:<slug>``, or empty when the proposal has nothing to slug."""
    s = slug(proposed)
    return f"{AUTO_KEY_PREFIX}{s}" if s else ""
