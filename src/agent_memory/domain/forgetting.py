"""Forgetting on request: what a forget removes, counted by kind."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class ForgetCounts:
    """What a forget removed (or, for a dry run, would remove)."""

    memories: int = 0
    audit_events: int = 0  # snapshots emptied; the events stay as tombstones
    conversations: int = 0
    blocks: int = 0
    block_versions: int = 0
    archival_lines: int = 0
    decisions: int = 0
    reexaminations: int = 0
    extraction_jobs: int = 0
    agent_state: int = 0  # settings, active sessions and recorded runs

    def __add__(self, other: ForgetCounts) -> ForgetCounts:
        return ForgetCounts(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )
