"""What the server does with the model's candidates before anything is written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_memory.domain.extraction import Candidate, DroppedFact, DropReason
from agent_memory.domain.memory import VALUE_MAX_CHARS, Scope
from agent_memory.domain.secrets import find_secrets
from agent_memory.extract.dedup import auto_key, most_similar


@dataclass(frozen=True)
class KeptFact:
    key: str  # auto:<slug>
    value: str
    scope: Scope
    confidence: float


@dataclass(frozen=True)
class SiftRules:
    max_facts: int
    min_confidence: float
    jaccard_threshold: float
    has_workspace: bool
    memory_enabled: bool


def sift(
    candidates: Sequence[Candidate], existing_values: Sequence[str], rules: SiftRules
) -> tuple[list[KeptFact], list[DroppedFact]]:
    """Keep the candidates worth writing; every other one comes back with its reason.

    A candidate holding a secret is dropped first, whatever else is wrong with it, and
    comes back without its value, and without its key when the key holds the secret:
    dropped facts are reported to the caller and must never echo one. The key is
    scanned as proposed and as slugged; the value as proposed (before trimming and
    cutting) together with its key, so a credential named only by the key
    (``prod db password`` = ``Tr0ub4dor&3``) is caught too.

    Scope: WORKSPACE only when the run has a workspace, otherwise forced to AGENT;
    AGENT facts only when the agent has memory enabled. Values are cut to the memory
    limit. Near-duplicates (Jaccard over normalised word sets above the threshold) of
    an existing value or of a fact already kept are dropped.
    """
    kept: list[KeptFact] = []
    dropped: list[DroppedFact] = []
    for index, c in enumerate(candidates):
        scope = c.scope if rules.has_workspace else Scope.AGENT
        value = c.value.strip()[:VALUE_MAX_CHARS]
        key = auto_key(c.key)
        key_secret = bool(find_secrets(c.key) or find_secrets(key))
        reason: DropReason | None = None
        if key_secret or find_secrets(f"{c.key}: {c.value}"):
            key = "" if key_secret else key
            value = ""
            reason = DropReason.SECRET_IN_VALUE
        elif index >= rules.max_facts:
            reason = DropReason.OVER_LIMIT
        elif not value or not key or "\x00" in value:
            reason = DropReason.INVALID_FACT
        elif c.confidence < rules.min_confidence:
            reason = DropReason.LOW_CONFIDENCE
        elif scope is Scope.AGENT and not rules.memory_enabled:
            reason = DropReason.MEMORY_DISABLED
        elif (
            most_similar(value, [*existing_values, *(k.value for k in kept)])
            > rules.jaccard_threshold
        ):
            reason = DropReason.DUPLICATE
        if reason is None:
            kept.append(KeptFact(key, value, scope, c.confidence))
        else:
            # The proposed key is shown when it has no slug; it was scanned above.
            shown_key = key if key or reason is DropReason.SECRET_IN_VALUE else c.key[:255]
            dropped.append(DroppedFact(shown_key, value, scope, c.confidence, reason))
    return kept, dropped
