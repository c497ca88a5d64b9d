"""Builders for tests of the extraction sift: its rules and the model's candidates."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from agent_memory.domain.extraction import Action, Candidate
from agent_memory.domain.memory import Memory, MemorySource, Owner, Scope
from agent_memory.extract.sift import SiftRules

# Built from pieces so no complete credential sits in the source as one literal.
ANTHROPIC_KEY = "sk-ant-api03-" + "Q7vX2mK9pL4rT8wZ1nB6" + "cY3hJ5sD0fG2aE7uI9oR"


def rules(**overrides: object) -> SiftRules:
    values: dict[str, object] = {
        "max_facts": 5,
        "min_confidence": 0.6,
        "jaccard_threshold": 0.8,
        "has_workspace": True,
        "memory_enabled": True,
    }
    values.update(overrides)
    return SiftRules(**values)  # type: ignore[arg-type]


def cand(
    key: str,
    value: str,
    confidence: float = 0.9,
    scope: Scope = Scope.AGENT,
    *,
    action: Action = Action.ADD,
    target: str = "",
) -> Candidate:
    return Candidate(
        key=key, value=value, confidence=confidence, scope=scope, action=action, target=target
    )


def memory(
    key: str,
    value: str,
    *,
    scope: Scope = Scope.AGENT,
    source: MemorySource = MemorySource.AUTO,
) -> Memory:
    """An existing memory as extraction reads it: of agent ``a1`` or workspace ``w1``."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    owner = Owner(scope, "a1" if scope is Scope.AGENT else "w1")
    return Memory(uuid.uuid4(), owner, key, value, False, 0, source, now, now, 1)
