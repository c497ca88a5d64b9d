"""What the background indexer embeds: archival lines and memories whose vector is
missing, made from an older text, or made by another model."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from agent_memory.domain.memorize import is_content_key
from agent_memory.domain.memory import AUTO_KEY_PREFIX, LEARNING_KEY_PREFIX

Vector = Sequence[float]

# A vector is made from at most this many characters of a text (a line, a memory, a
# query), cut at a word: about 250 tokens, half of what the local model reads at once.
# Its cost grows faster than the text (a 2,000-character text takes ten times a short
# line's), and a query waits for the passage being embedded.
EMBEDDED_MAX_CHARS = 1000


def embedded_text(text: str) -> str:
    """The part of ``text`` its vector is made from: all of it, or its first
    ``EMBEDDED_MAX_CHARS`` characters cut at a word."""
    if len(text) <= EMBEDDED_MAX_CHARS:
        return text
    cut = text[:EMBEDDED_MAX_CHARS]
    space = cut.rfind(" ")
    return cut[:space] if space > EMBEDDED_MAX_CHARS // 2 else cut


@dataclass(frozen=True)
class LineToIndex:
    tenant_id: str
    user_id: str
    scope: str
    agent_id: str
    line_number: int
    content: str
    text_hash: int  # of the content the claim read: a vector is kept only if it still holds

    @property
    def passage(self) -> str:
        return embedded_text(self.content)


@dataclass(frozen=True)
class MemoryToIndex:
    tenant_id: str
    memory_id: uuid.UUID
    key: str
    value: str
    text_hash: int
    # Whether the learned screens judge it: they have not read its text, whatever its
    # source (a person's own words, and a text a person approved, count as read).
    judged: bool = False

    @property
    def passage(self) -> str:
        return memory_passage(self.key, self.value)


def memory_passage(key: str, value: str) -> str:
    """What a memory's vector is made from: ``key: value`` when a person or an
    orchestrator chose the key, the value alone when the key was generated (a slug, a
    timestamp or a hash says nothing the value does not)."""
    generated = key.startswith((AUTO_KEY_PREFIX, LEARNING_KEY_PREFIX)) or is_content_key(key)
    return embedded_text(value if generated else f"{key}: {value}")


@dataclass(frozen=True)
class Claimed:
    """What one claim took: lines and memories, each under a lease."""

    lines: Sequence[LineToIndex] = ()
    memories: Sequence[MemoryToIndex] = ()

    def __len__(self) -> int:
        return len(self.lines) + len(self.memories)

    def last_tenant(self, after: str) -> str:
        """Where the next claim should start: the last tenant taken after ``after``, or
        (the claim went round) the last one taken before it."""
        tenants = {x.tenant_id for x in self.lines} | {x.tenant_id for x in self.memories}
        later = [t for t in tenants if t > after]
        return max(later or tenants or [after])


@dataclass(frozen=True)
class WorkerBeat:
    """What an index worker says of itself every few seconds: who it is (host, process
    and start), the model it embeds with, how many lines and memories it has given a
    vector since it started, and how many a second over its last minute."""

    worker: str
    model: str
    embedded: int
    per_second: float


@dataclass(frozen=True)
class CpuTimes:
    """CPU seconds used since boot: by the whole machine (all cores, every process), and
    by one process (all its threads)."""

    machine: float
    own: float


# The caller's rows waiting for a vector are counted up to this many of each kind.
WAITING_BOUND = 100_000
# A worker not heard from for this long is not counted as running.
WORKER_SILENCE_SECONDS = 30


@dataclass(frozen=True)
class IndexingStatus:
    """How indexing stands for a caller: its tenant's lines and memories waiting for a
    vector of their text as it is (``waiting_capped``: at least that many), and the
    index workers of the model heard from lately, with how many they embed a second."""

    waiting_lines: int
    waiting_memories: int
    waiting_capped: bool
    workers: int
    per_second: float

    @property
    def waiting(self) -> int:
        return self.waiting_lines + self.waiting_memories


def named_speakers(query: str, speakers: Sequence[str]) -> list[str]:
    """The speakers ``query`` names (a whole word, possessive too), first mention first.
    Names are matched as written (a speaker "Will" is not "will"), unless the query is
    all in lower case."""
    found: list[tuple[int, str]] = []
    for name in speakers:
        match = _name(name, query).search(query)
        if match:
            found.append((match.start(), name))
    return [name for _, name in sorted(found)]


def without_speakers(query: str, speakers: Sequence[str]) -> str:
    """``query`` with the block's speaker names taken out, for its vector: every line
    opens with a name, so a name in the query pulls toward all of that speaker's lines
    and away from what is asked. (The lexical side keeps the names.)"""
    stripped = query
    for name in sorted(speakers, key=len, reverse=True):
        stripped = _name(name, query).sub(" ", stripped)
    stripped = _SPACE_BEFORE_MARK.sub(r"\1", " ".join(stripped.split()))
    return stripped or query


_SPACE_BEFORE_MARK = re.compile(r" ([?.!,;:])")


def _name(name: str, query: str) -> re.Pattern[str]:
    flags = re.IGNORECASE if query == query.lower() else 0
    return re.compile(rf"(?<!\w){re.escape(name)}(?:['\u2019]s)?(?!\w)", flags)
