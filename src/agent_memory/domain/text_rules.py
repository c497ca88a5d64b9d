"""The rules every stored text and identifier follows, whatever record holds it: a
length in code points, no NUL (PostgreSQL text cannot hold it), identifiers on one
line without control characters, and JSON that jsonb can store."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from agent_memory.domain.errors import FieldViolation

# What an identifier (a key, an agent, workspace or block owner id, a run id) must not
# hold: C0 and C1 control characters (tab, line feed, carriage return, escape ...),
# DEL, and the Unicode line and paragraph separators. Identifiers are rendered into
# prompts, where a line break in a key would open a heading of its own.
CONTROL_CHARACTERS = r"\x00-\x1f\x7f-\x9f\u2028\u2029"
_CONTROL_CHARACTERS = re.compile(f"[{CONTROL_CHARACTERS}]")

# Characters that show nothing, beyond the format characters (Unicode category Cf):
# the default-ignorable code points that are letters or marks (fillers, the combining
# grapheme joiner, variation selectors, Mongolian free variation selectors).
_INVISIBLE_RANGES = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xE0100, 0xE01EF),
)
# What a script or an emoji needs between two of its characters (the joiners: Persian,
# the Indic scripts, a family emoji) and after one (the selectors of text or emoji
# presentation: a red heart): an identifier holds them there, and nowhere else.
_JOINERS = "\u200c\u200d"
_SELECTORS = "\ufe0e\ufe0f"
# Where a character that shows nothing may stand: the planes that hold any.
_PLANES_WITH_INVISIBLES = (range(0x20000), range(0xE0000, 0xE1000))


def invisible(char: str) -> bool:
    """Whether ``char`` shows nothing: a format character (zero-width spaces and joiners,
    bidi controls, tag characters ...) or a default-ignorable letter or mark."""
    if unicodedata.category(char) == "Cf":
        return True
    point = ord(char)
    return any(low <= point <= high for low, high in _INVISIBLE_RANGES)


def _escape(point: int) -> str:
    # ``\uXXXX`` reads the same in Python and in ECMAScript (OpenAPI's patterns); a
    # character beyond it stands as itself, which both read.
    return f"\\u{point:04x}" if point <= 0xFFFF else chr(point)


def _ranges(points: list[int]) -> str:
    """A regular expression character class's body for ``points`` (ascending)."""
    parts: list[str] = []
    start = previous = points[0]
    for point in [*points[1:], -1]:
        if point == previous + 1:
            previous = point
            continue
        parts.append(_escape(start) + (f"-{_escape(previous)}" if previous != start else ""))
        start = previous = point
    return "".join(parts)


# Every character that shows nothing, as a regular expression class's body: what an
# identifier must not hold (but the joiners and selectors where a script or an emoji
# needs them), so that no two identifiers that look the same are two (``time\u200bzone``
# beside ``timezone`` in a prompt). An OpenAPI pattern, which cannot say where, refuses
# them everywhere.
INVISIBLE_CHARACTERS = _ranges(
    [c for plane in _PLANES_WITH_INVISIBLES for c in plane if invisible(chr(c))]
)
# One that shows nothing where no script or emoji needs it.
# A character a joiner or a selector may stand beside: one that shows, of a script.
_SHOWN_NON_ASCII = f"[^\\x00-\\x7f{INVISIBLE_CHARACTERS}]"
# (A joiner may follow an emoji's selector: a rainbow flag is a flag, its selector, a
# joiner and a rainbow.)
_HIDDEN = re.compile(
    f"(?![{_JOINERS}{_SELECTORS}])[{INVISIBLE_CHARACTERS}]"
    f"|(?<!{_SHOWN_NON_ASCII})[{_SELECTORS}]"
    f"|(?<!{_SHOWN_NON_ASCII})(?<!{_SHOWN_NON_ASCII}[{_SELECTORS}])[{_JOINERS}]"
    f"|[{_JOINERS}](?!{_SHOWN_NON_ASCII})"
)


def text_violations(
    path: str, text: str, *, max_chars: int, min_chars: int = 1
) -> list[FieldViolation]:
    """Length in Unicode code points, and no NUL (PostgreSQL text cannot hold it); a
    text that must hold something holds more than spaces."""
    if len(text) < min_chars:
        if min_chars == 1:
            return [FieldViolation(path, "must not be empty", "REQUIRED")]
        return [FieldViolation(path, f"must be at least {min_chars} characters", "TOO_SHORT")]
    if min_chars and not text.strip():
        return [FieldViolation(path, "must not be blank: it holds only spaces", "REQUIRED")]
    if len(text) > max_chars:
        return [
            FieldViolation(
                path,
                f"must be at most {max_chars} characters (got {len(text)})",
                "TOO_LONG",
            )
        ]
    if "\x00" in text:
        return [FieldViolation(path, "must not contain NUL characters", "INVALID_CHARACTER")]
    return []


_SPACE_RUN = re.compile(r"\s\s")


def identifier_violations(
    path: str, text: str, *, max_chars: int, min_chars: int = 1
) -> list[FieldViolation]:
    """:func:`text_violations`, and on one line without control characters, nor any
    character that shows nothing, nor spaces at either end or two in a row: two
    identifiers that look the same are one to a reader (``time\u200bzone`` or
    `` timezone`` would stand beside ``timezone`` in a prompt)."""
    found = text_violations(path, text, max_chars=max_chars, min_chars=min_chars)
    if not found and _CONTROL_CHARACTERS.search(text):
        found.append(
            FieldViolation(
                path,
                "must not contain control characters (tab, line breaks, U+2028, U+2029 ...)",
                "INVALID_CHARACTER",
            )
        )
    if not found and _HIDDEN.search(text):
        found.append(
            FieldViolation(
                path,
                "must not contain characters that show nothing (zero-width spaces, bidi "
                "controls, soft hyphens, variation selectors ...): it would look like "
                "another",
                "INVALID_CHARACTER",
            )
        )
    if not found and (text != text.strip() or _SPACE_RUN.search(text)):
        # A prompt shows "  tone " as "tone": it would stand beside the real one.
        found.append(
            FieldViolation(
                path,
                "must not start or end with a space, nor hold two in a row: it would "
                "look like another",
                "INVALID_CHARACTER",
            )
        )
    return found


def name_violations(path: str, text: str, *, max_chars: int) -> list[FieldViolation]:
    """:func:`identifier_violations`, for the name of an agent, a workspace or a user:
    it stands as one segment of a URL path (``/v1/agents/{agent_id}/...``) and of a
    file name in an export, so it holds no ``/`` and is neither ``.`` nor ``..``,
    however a client encoded it."""
    found = identifier_violations(path, text, max_chars=max_chars)
    if not found and ("/" in text or text in (".", "..")):
        found.append(
            FieldViolation(path, "must not contain '/' nor be '.' or '..'", "INVALID_CHARACTER")
        )
    return found


def json_violations(path: str, value: Any) -> list[FieldViolation]:
    """What in a JSON value (metadata, a result) PostgreSQL's jsonb cannot hold: NUL
    characters in keys or strings, NaN, infinities."""
    problem = _unstorable(value)
    return [FieldViolation(path, problem, "INVALID_VALUE")] if problem else []


def _unstorable(value: Any) -> str | None:
    if isinstance(value, str):
        return "must not contain NUL characters" if "\x00" in value else None
    if isinstance(value, float):
        return None if math.isfinite(value) else "must not contain NaN or infinite numbers"
    if isinstance(value, Mapping):
        if any("\x00" in k for k in value):
            return "must not contain NUL characters"
        return next((e for e in map(_unstorable, value.values()) if e), None)
    if isinstance(value, list | tuple):
        return next((e for e in map(_unstorable, value) if e), None)
    return None


class DuplicateKey(ValueError):
    """A JSON object names one key twice."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise DuplicateKey(f"the key {key!r} is given twice in one object")
        found[key] = value
    return found


def parse_json(text: str | bytes) -> Any:
    """JSON as every way in reads it: an object that names a key twice is refused
    (which of the two would win is a parser's accident, and a check and a write could
    read different ones).

    Raises:
        DuplicateKey: an object names a key twice.
        json.JSONDecodeError: not JSON.
        RecursionError: nested too deeply.
    """
    return json.loads(text, object_pairs_hook=_unique_pairs)
