"""The export format: a header line, then one JSON record a line (see
``docs/export-format.md``). What a record must carry, checked before anything is
written."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from agent_memory.domain.errors import FieldViolation
from agent_memory.domain.memorize import metadata_violations, tag_violations
from agent_memory.domain.memory import (
    KEY_MAX_CHARS,
    VALUE_MAX_CHARS,
    identifier_violations,
    importance_violations,
    owner_violations,
    text_violations,
)

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
    if kind == "memory":
        _check_memory(record)
    return record


def _check_memory(record: Mapping[str, Any]) -> None:
    """A memory record holds what the service would store: the write rules of the API,
    so that every read of an imported memory answers as for any other."""
    texts = {name: record[name] for name in ("owner_id", "key", "value")}
    wrong = [name for name, text in texts.items() if not isinstance(text, str)]
    if wrong:
        raise FormatError(f"a memory's {', '.join(wrong)} must be text")
    tags, metadata = record.get("tags") or [], record.get("metadata") or {}
    if not _strings_or_none(tags):
        raise FormatError("a memory's tags must be a list of strings")
    if not isinstance(metadata, dict):
        raise FormatError("a memory's metadata must be a JSON object")
    violations = owner_violations("owner_id", texts["owner_id"])
    violations += identifier_violations("key", texts["key"], max_chars=KEY_MAX_CHARS)
    violations += text_violations("value", texts["value"], max_chars=VALUE_MAX_CHARS)
    importance, confidence = record.get("importance"), record.get("confidence")
    if importance is not None:
        violations += importance_violations("importance", importance)
    if confidence is not None and not (
        isinstance(confidence, int | float) and 0 <= confidence <= 1
    ):
        violations.append(FieldViolation("confidence", "must be between 0 and 1", "OUT_OF_RANGE"))
    violations += tag_violations("tags", tags) + metadata_violations("metadata", metadata)
    if violations:
        raise FormatError("; ".join(f"{v.field}: {v.description}" for v in violations[:3]))


def _strings_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, list) and all(isinstance(e, str) for e in value))


def record_texts(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string of a record, object keys included, as (path, text): what an import
    scans for secrets before it stores anything, as the service scans every write."""
    if isinstance(value, str):
        if value:
            yield path, value
    elif isinstance(value, dict):
        # As the service scans a write: a key beside its value, and each member's name
        # beside its text, so a credential named only by its key is caught too.
        key, text = value.get("key"), value.get("value")
        if isinstance(key, str) and isinstance(text, str) and key and text:
            yield (f"{path}.value" if path else "value"), f"{key}: {text}"
        for name, item in value.items():
            at = f"{path}.{name}" if path else str(name)
            yield at, str(name)
            if isinstance(item, str) and item:
                yield at, f"{name}: {json.dumps(item, ensure_ascii=False)}"
            yield from record_texts(item, at)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from record_texts(item, f"{path}[{i}]")
