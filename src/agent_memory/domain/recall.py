"""Recall: ranked archival lines (and optionally memories) for a query."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from agent_memory.domain.decisions import RECENT_MAX, Decision
from agent_memory.domain.errors import FieldViolation, check
from agent_memory.domain.indexing import IndexingStatus
from agent_memory.domain.memory import MemoryRows, Scope, owner_violations
from agent_memory.domain.text_rules import text_violations

DEFAULT_LIMIT = 10
# The least score an archival line must earn by itself (see RankQuery.min_own) for
# RenderPrompt to push it as a reminder when the policy names none: by words and meaning,
# and by words alone. Each is the lowest at which, on LoCoMo's dev conversations, the
# questions of another conversation push less than one line on average
# (bench/reminders_locomo.py).
DEFAULT_REMINDER_MIN_SCORE = 0.3
DEFAULT_REMINDER_MIN_WORDS = 0.25
MAX_LIMIT = 100
# The searched blocks' lines (and the searched memories) are read as they are up to
# this many; past it a ranking reads candidates through indexes, at most this many
# lines and memories that hold the query's rarest terms.
SCAN_ROWS = 2000
CANDIDATE_CAP = 200
QUERY_MAX_CHARS = 2000
PERSONA_MAX_CHARS = 20_000
USER_MESSAGE_MAX_CHARS = QUERY_MAX_CHARS * 4


@dataclass(frozen=True)
class RecallQuery:
    query: str
    agent_id: str
    limit: int = 0
    min_score: float | None = None
    include_memories: bool = False
    workspace_id: str | None = None
    # Search what could be searched then (by words).
    as_of: datetime | None = None

    def validated(self) -> RecallQuery:
        """The query with its limit resolved (0 → 10, at most 100).

        Raises:
            InvalidArgument: an empty or oversized query, a bad id, limit or min_score.
        """
        violations = text_violations("query", self.query, max_chars=QUERY_MAX_CHARS)
        if not self.query.strip() and not violations:
            violations.append(FieldViolation("query", "must not be blank", "REQUIRED"))
        violations += owner_violations("agent_id", self.agent_id)
        if self.workspace_id is not None:
            violations += owner_violations("workspace_id", self.workspace_id)
        if self.limit < 0:
            violations.append(FieldViolation("limit", "must not be negative", "OUT_OF_RANGE"))
        if self.min_score is not None and not 0.0 <= self.min_score <= 1.0:
            violations.append(
                FieldViolation("min_score", "must be between 0 and 1", "OUT_OF_RANGE")
            )
        check(violations)
        limit = min(self.limit or DEFAULT_LIMIT, MAX_LIMIT)
        return RecallQuery(
            self.query,
            self.agent_id,
            limit,
            self.min_score,
            self.include_memories,
            self.workspace_id,
            self.as_of,
        )


@dataclass(frozen=True)
class RecallMatch:
    """One ranked hit: an archival line, or a memory when memories were included.

    ``score`` is in [0, 1]: by words, the share of the query's best attainable
    evidence (every query term, weighted by rarity) found in the line and, in a block
    that reads as a conversation, its neighbouring lines; with meaning, the ranking's
    points brought down in one ratio until the best match's is what it earns by
    itself on its model's cosine scale. Either way a threshold means the same for
    every query.
    """

    content: str
    score: float
    scope: Scope
    agent_id: str
    line_number: int = 0
    memory_id: uuid.UUID | None = None
    workspace_id: str = ""


@dataclass(frozen=True)
class RankQuery:
    """What the store ranks: the caller's user archival block, ``agent_id``'s and
    ``workspace_id``'s (when given), and with ``include_memories`` the agent's and
    ``workspace_id``'s memories."""

    agent_id: str
    query: str
    limit: int
    min_score: float = 0.0
    include_memories: bool = False
    workspace_id: str = ""
    # The least score a match earns by itself, its neighbours' share left out: reminders
    # are pushed unasked, each line shown alone. By words and meaning (a match with a
    # vector, of a model whose cosines have a known scale) it is
    # ``(1 - w) * own words + w * own cosine on the model's CosineScale``, ``w`` the
    # share of meaning; otherwise its own words' score, held to ``min_own_words``.
    min_own: float = 0.0
    min_own_words: float = 0.0
    # Up to this many searched lines (and memories) are read as they are; past it, at
    # most ``cap`` candidates of each, through indexes (see store/recall.py).
    scan: int = SCAN_ROWS
    cap: int = CANDIDATE_CAP


# How many lines and memories each side of a ranking by meaning brings: the best this
# many by words and the best this many by meaning are scored together.
CANDIDATES = 100


@dataclass(frozen=True)
class Candidate:
    """A line (``ordinal`` in its block) or a memory the lexical ranking found, with its
    lexical score in [0, 1], and the part of it its own words earned (the rest came from
    its neighbours)."""

    scope: Scope
    agent_id: str
    ordinal: int = 0
    memory_id: uuid.UUID | None = None
    score: float = 0.0
    own: float = 0.0


@dataclass(frozen=True)
class LexicalPart:
    """The lexical half of a ranking by meaning: the best candidates by words, and the
    speakers of the searched blocks (names that open their lines as ``Name: text``)."""

    candidates: Sequence[Candidate] = ()
    speakers: Sequence[str] = ()
    # Whether the searched lines, and the searched memories, were few enough to be read
    # as they are (the side by meaning reads them so too, else through an index).
    lines_scanned: bool = True
    memories_scanned: bool = True
    # How many lines the searched blocks hold, and memories are searched (counted up to
    # a bound): whether to read their vectors as they are or walk an index of them.
    line_count: int = 0
    memory_count: int = 0


@dataclass(frozen=True)
class CosineScale:
    """Where a model's cosines between a query and a line fall: about ``unrelated`` for
    a line that has nothing to do with the query, about ``answering`` for one that says
    what is asked. A model's cosines have a range of their own (e5's sit between 0.7 and
    0.9, other models' spread wider), so a cosine is read on its model's scale: 0 at
    ``unrelated`` and below, 1 at ``answering`` and above, linear between. A floor then
    means the same whatever the model."""

    unrelated: float
    answering: float


# The scales of the models whose cosines were measured, by model name: on LoCoMo's dev
# conversations, the median cosine of a question with a line that is not its evidence
# (unrelated) and the 99th percentile with its evidence lines (answering). A model not
# listed has no scale: reminders are held to their own words' score.
COSINE_SCALES: Mapping[str, CosineScale] = {
    "multilingual-e5-small-q4": CosineScale(unrelated=0.75, answering=0.89),
}


@dataclass(frozen=True)
class Meaning:
    """The other half: the query's vector, the model that made it (only vectors of the
    same model are compared), the share of meaning in the score, the speaker the query
    names, whose lines are favoured ('' when it names none, or several), and the scale
    of the model's cosines (``None`` when it is not known)."""

    vector: Sequence[float]
    model: str
    weight: float
    speaker: str = ""
    scale: CosineScale | None = None


class RecallMode(StrEnum):
    LEXICAL = "lexical"
    HYBRID = "hybrid"


@dataclass(frozen=True)
class RecallStatus:
    """How recall ranks on a server: the mode, the embedder (``local``, ``http`` or
    ``none``), its model, one sentence saying why and how to change it, and (by
    meaning) how indexing stands for the caller."""

    mode: RecallMode
    embedder: str
    model: str
    detail: str
    indexing: IndexingStatus | None = None


class ArchivalMode(StrEnum):
    TOOL_ONLY = "tool_only"
    AUTO = "auto"
    OFF = "off"


@dataclass(frozen=True)
class MemoryPolicy:
    """Per-render control of what memory reaches the prompt."""

    archival_mode: ArchivalMode = ArchivalMode.TOOL_ONLY
    archival_limit: int = 0
    archival_min_score: float | None = None
    include_user_core: bool = True
    include_agent_core: bool = True
    # None: as the agent's review-decisions setting says.
    include_recent_decisions: bool | None = None
    recent_decisions_limit: int = 0
    # The workspace's core block, when the render names a workspace.
    include_workspace_core: bool = True


@dataclass(frozen=True)
class RenderRequest:
    agent_id: str
    workspace_id: str | None = None
    persona: str = ""
    user_message: str = ""
    policy: MemoryPolicy = MemoryPolicy()
    # Render the memory as it was then.
    as_of: datetime | None = None

    def validate(self) -> None:
        """Raises: InvalidArgument — a bad id, an oversized text, a bad policy."""
        violations = owner_violations("agent_id", self.agent_id)
        if self.workspace_id is not None:
            violations += owner_violations("workspace_id", self.workspace_id)
        violations += text_violations(
            "persona", self.persona, max_chars=PERSONA_MAX_CHARS, min_chars=0
        )
        violations += text_violations(
            "user_message", self.user_message, max_chars=USER_MESSAGE_MAX_CHARS, min_chars=0
        )
        if not 0 <= self.policy.archival_limit <= MAX_LIMIT:
            violations.append(
                FieldViolation(
                    "memory_policy.archival_limit",
                    f"must be between 0 and {MAX_LIMIT}",
                    "OUT_OF_RANGE",
                )
            )
        if not 0 <= self.policy.recent_decisions_limit <= RECENT_MAX:
            # As archival_limit is: a policy's limit past its most is refused, not read
            # as less (a listing's page size is).
            violations.append(
                FieldViolation(
                    "memory_policy.recent_decisions_limit",
                    f"must be between 0 and {RECENT_MAX}",
                    "OUT_OF_RANGE",
                )
            )
        score = self.policy.archival_min_score
        if score is not None and not 0.0 <= score <= 1.0:
            violations.append(
                FieldViolation(
                    "memory_policy.archival_min_score", "must be between 0 and 1", "OUT_OF_RANGE"
                )
            )
        check(violations)


@dataclass(frozen=True)
class PromptRead:
    """Everything a render reads, in one go. ``None`` leaves a part out."""

    agent_id: str
    workspace_id: str | None
    user_core: bool
    agent_core: bool
    agent_cap: int
    workspace_cap: int
    decisions_limit: int | None = None
    # The workspace's core block (when ``workspace_id`` is given).
    workspace_core: bool = False
    # Read the decisions only if the agent's settings ask to review them.
    decisions_if_reviewed: bool = False
    archival: RankQuery | None = None
    # Read only the lexical half of the archival ranking (the rest is ranked by meaning).
    archival_lexical: bool = False
    # Say whether the caller has archival lines (which only the recall tool reaches).
    archival_hint: bool = False


@dataclass(frozen=True)
class PromptState:
    """What a render found. ``agent_memory`` is ``None`` when the agent's memory is off;
    ``has_archival`` says whether the caller has archival lines (asked in tool-only mode).
    """

    user_core: str | None = None
    agent_core: str | None = None
    workspace_core: str | None = None
    agent_memory: MemoryRows | None = None
    workspace_memory: MemoryRows | None = None
    decisions: Sequence[Decision] | None = None
    archival: Sequence[RecallMatch] = field(default_factory=tuple)
    archival_lexical: LexicalPart | None = None
    has_archival: bool = False
    # Shown memories whose use a standby could not record (the caller marks them).
    unmarked: tuple[uuid.UUID, ...] = ()
    # The instant whose state this is (the database's clock when it read, or the
    # instant read as of); None when nothing could be read.
    read_at: datetime | None = None
