"""The export format: a header line, then one JSON record a line (see
``docs/export-format.md``). What a record must carry, checked before anything is
written."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
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
    raw_events = record.get("raw_events")
    if kind == "conversation" and not _strings_or_none(raw_events):
        raise FormatError("a conversation's raw_events must be a list of strings")
    return record


def _strings_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, list) and all(isinstance(e, str) for e in value))


def record_texts(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string of a record, object keys included, as (path, text): what an import
    scans for secrets before it stores anything, as the service scans every write."""
    if isinstance(value, str):
        if value:
            yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            at = f"{path}.{key}" if path else str(key)
            yield at, str(key)
            yield from record_texts(item, at)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from record_texts(item, f"{path}[{i}]")
