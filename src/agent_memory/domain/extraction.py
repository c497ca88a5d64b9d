"""Automatic extraction: outcomes, dropped facts, usage and synthetic session ids."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from agent_memory.domain.errors import FieldViolation, check
from agent_memory.domain.memory import Memory, Scope, owner_violations
from agent_memory.domain.text_rules import text_violations

SYNTHETIC_PREFIX = "memory-extract:"
CHAIN_ID_CHARS = 8
TRANSCRIPT_MAX_CHARS = 1_000_000
# A run's session id or chain id, as ExtractMemories names the run.
RUN_NAME_MAX_CHARS = 255


class ExtractionOutcome(StrEnum):
    COMPLETED = "completed"
    NO_FACTS = "no_facts"
    SKIPPED_TOO_SHORT = "skipped_too_short"
    SKIPPED_BUDGET = "skipped_budget"
    SKIPPED_MEMORY_DISABLED = "skipped_memory_disabled"
    MODEL_ERROR = "model_error"
    TIMEOUT = "timeout"
    REFUSED = "refused"
    MALFORMED_REPLY = "malformed_reply"
    QUEUED = "queued"

    @property
    def retryable(self) -> bool:
        """Worth another attempt later: the model or the network failed, not the input."""
        return self in {ExtractionOutcome.MODEL_ERROR, ExtractionOutcome.TIMEOUT}

    @property
    def calls_model(self) -> bool:
        """Whether a pass that ends so went as far as the model call (it has a usage)."""
        return self not in {
            ExtractionOutcome.SKIPPED_TOO_SHORT,
            ExtractionOutcome.SKIPPED_BUDGET,
            ExtractionOutcome.SKIPPED_MEMORY_DISABLED,
            ExtractionOutcome.QUEUED,
        }


class DropReason(StrEnum):
    LOW_CONFIDENCE = "LOW_CONFIDENCE"
    DUPLICATE = "DUPLICATE"
    MEMORY_DISABLED = "MEMORY_DISABLED"
    SECRET_IN_VALUE = "SECRET_IN_VALUE"
    INSTRUCTION_NOT_FACT = "INSTRUCTION_NOT_FACT"  # tells the assistant what to do
    OVER_LIMIT = "OVER_LIMIT"
    INVALID_FACT = "INVALID_FACT"
    KEY_HELD = "KEY_HELD"
    ALREADY_KNOWN = "ALREADY_KNOWN"
    UNKNOWN_TARGET = "UNKNOWN_TARGET"
    TARGET_PROTECTED = "TARGET_PROTECTED"

    @property
    def hides_value(self) -> bool:
        """Dropped for what its text says (a secret, an instruction to the assistant):
        the value is never echoed back, nor stored with the job."""
        return self in {DropReason.SECRET_IN_VALUE, DropReason.INSTRUCTION_NOT_FACT}


class Action(StrEnum):
    """What the model says a fact does to what is already known."""

    ADD = "add"  # a new fact, under its own auto: key
    UPDATE = "update"  # the same fact, changed: rewrite the target in place
    SUPERSEDE = "supersede"  # a fact that replaces the target, which then leaves the prompt
    NOOP = "noop"  # already known: write nothing


@dataclass(frozen=True)
class Candidate:
    """A fact as the model proposed it."""

    key: str
    value: str
    confidence: float
    scope: Scope
    action: Action = Action.ADD
    target: str = ""  # the reference of an existing memory the model was shown
    # When the fact holds in the world, when the transcript says so.
    valid_start_time: datetime | None = None
    valid_end_time: datetime | None = None


@dataclass(frozen=True)
class DroppedFact:
    key: str
    value: str
    scope: Scope
    confidence: float
    reason: DropReason


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class ExtractionRequest:
    """One finished run to distil: the agent, its workspace, and which run or chain."""

    agent_id: str
    workspace_id: str | None
    session_id: str | None
    chain_id: str | None
    transcript: str

    @property
    def synthetic_session_id(self) -> str:
        if self.chain_id is not None:
            return f"{SYNTHETIC_PREFIX}chain:{self.chain_id[:CHAIN_ID_CHARS]}"
        return f"{SYNTHETIC_PREFIX}{self.session_id}"

    def validate(self) -> None:
        violations = owner_violations("agent_id", self.agent_id)
        if self.workspace_id is not None:
            violations += owner_violations("workspace_id", self.workspace_id)
        if self.session_id is None and self.chain_id is None:
            violations.append(
                FieldViolation(
                    "session_id", "one of session_id or chain_id is required", "REQUIRED"
                )
            )
        if self.session_id is not None:
            violations += text_violations(
                "session_id", self.session_id, max_chars=RUN_NAME_MAX_CHARS
            )
        if self.chain_id is not None:
            violations += text_violations("chain_id", self.chain_id, max_chars=RUN_NAME_MAX_CHARS)
        violations += text_violations(
            "transcript", self.transcript, max_chars=TRANSCRIPT_MAX_CHARS, min_chars=0
        )
        check(violations)


@dataclass(frozen=True)
class ClaimedJob:
    """A queued pass a worker claimed under a lease; ``attempts`` counts this claim."""

    tenant_id: str
    id: uuid.UUID
    actor_user_id: str
    attempts: int
    request: ExtractionRequest


@dataclass(frozen=True)
class ExtractionResult:
    outcome: ExtractionOutcome
    synthetic_session_id: str
    written: list[Memory] = field(default_factory=list)
    dropped: list[DroppedFact] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    job_id: uuid.UUID | None = None
    detail: str = ""
    superseded: list[Memory] = field(default_factory=list)


@dataclass(frozen=True)
class UsageRecord:
    id: uuid.UUID
    synthetic_session_id: str
    agent_id: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    outcome: ExtractionOutcome
    recorded_at: datetime


@dataclass(frozen=True)
class UsageReport:
    records: list[UsageRecord]
    total_input_tokens: int
    total_output_tokens: int
    total_cost_usd: float


class JobState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"


@dataclass(frozen=True)
class ExtractionJob:
    """A queued pass as it stands; once done, what it did (never its transcript).

    ``outcome`` is None until the job is done; ``usage`` is None until then too."""

    id: uuid.UUID
    state: JobState
    attempts: int
    outcome: ExtractionOutcome | None
    detail: str
    synthetic_session_id: str
    agent_id: str
    workspace_id: str | None
    created_at: datetime
    updated_at: datetime
    run_after: datetime
    written_memory_ids: tuple[uuid.UUID, ...] = ()
    dropped: tuple[DroppedFact, ...] = ()
    usage: Usage | None = None
    superseded_memory_ids: tuple[uuid.UUID, ...] = ()
