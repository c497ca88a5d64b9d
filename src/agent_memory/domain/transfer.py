"""The export format: a header line, then one JSON record a line (see
``docs/export-format.md``). What a record must carry, checked before anything is
written."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

FORMAT = "agent-memory-export"
VERSION = 1

# The fields each kind of record must have; the format may add optional ones.
REQUIRED: Mapping[str, tuple[str, ...]] = {
    "card_type": ("name", "re_examinable", "actions", "decision_actions"),
    "conversation": ("provider", "conversation_id", "messages"),
    "memory": ("id", "scope", "owner_id", "key", "value", "source", "created_at", "updated_at"),
    "block": ("user_id", "scope", "agent_id", "label", "content"),
    "decision": (
        "id",
        "run_id",
        "agent_id",
        "card_type",
        "action",
        "summary",
        "result",
        "resolution_status",
        "created_at",
    ),
}


class FormatError(ValueError):
    """A line that is not what the format says."""


def header(tenant_id: str, exported_at: datetime) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "tenant": tenant_id,
        "exported_at": exported_at.isoformat(),
    }


def check_header(line: Any) -> None:
    """Raises: FormatError — not the header of a file this version reads."""
    if not isinstance(line, dict) or line.get("format") != FORMAT:
        raise FormatError(f"the first line is not an {FORMAT} header")
    if line.get("version") != VERSION:
        raise FormatError(
            f"format version {line.get('version')!r}; this agent-memory reads version {VERSION}"
        )


def check_record(record: Any) -> dict[str, Any]:
    """The record, once it is an object of a known kind with its required fields.

    Raises: FormatError — what is wrong with it."""
    if not isinstance(record, dict):
        raise FormatError("a record must be a JSON object")
    kind = record.get("kind")
    if not isinstance(kind, str) or kind not in REQUIRED:
        raise FormatError(f"unknown kind {kind!r}; known: {', '.join(REQUIRED)}")
    missing = [name for name in REQUIRED[kind] if record.get(name) is None]
    if missing:
        raise FormatError(f"a {kind} record needs {', '.join(missing)}")
    return record
