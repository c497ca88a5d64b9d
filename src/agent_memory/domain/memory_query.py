"""Which memories a listing shows and in what order: an AIP-160 ``filter`` and an
AIP-132 ``order_by``, parsed into plain values the store turns into SQL.

The filter is a conjunction of restrictions, joined by ``AND`` or by white space:

    text:"deploy"        key or value holds the text, case-insensitively (a bare
                         word or quoted string alone means the same)
    tag = "billing"      carries the tag (``tags:"billing"`` too)
    source = manual      written by hand (manual, auto, director, memorize; ``!=``)
    pinned = true        pinned or not
    importance >= 50     importance compared (=, <, <=, >, >=)
    expired = true       only those whose expiry passed (not deleted yet), or none
    superseded = true    only those another memory superseded, or none
    key = "timezone"     the memory of that key (exactly as stored)
    create_time > "2026-11-01T00:00:00Z"
                         created (``update_time``: last changed) before, after or at
                         an RFC 3339 instant (=, <, <=, >, >=)

``OR``, ``NOT`` and parentheses are refused with a message that says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Final

from agent_memory.domain.errors import FieldViolation, check
from agent_memory.domain.memory import (
    IMPORTANCE_MAX,
    IMPORTANCE_MIN,
    KEY_MAX_CHARS,
    Memory,
    MemorySource,
)
from agent_memory.domain.text_rules import text_violations

FILTER_MAX_CHARS: Final = 1000
# The fields a listing may be ordered by, the tie between equal values broken by key.
ORDER_FIELDS: Final = ("key", "importance", "created_at", "updated_at")

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<open>")
      | (?P<op><=|>=|!=|=|<|>|:)
      | (?P<paren>[()])
      | (?P<word>[^\s"()<>=!:]+)
    )""",
    re.VERBOSE,
)
_BOOLEAN = {"true": True, "false": False}
# A field's JSON name (``updatedAt``) as its name in the contract (``updated_at``).
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_FIELDS = (
    "text",
    "tag",
    "tags",
    "key",
    "source",
    "pinned",
    "importance",
    "create_time",
    "update_time",
    "expired",
    "superseded",
)
# Other names of a field: the JSON's, and the store's.
_FIELD_ALIASES = {
    "createTime": "create_time",
    "updateTime": "update_time",
    "created_at": "create_time",
    "updated_at": "update_time",
    "createdAt": "create_time",
    "updatedAt": "update_time",
}
_MICROSECOND = timedelta(microseconds=1)
_FIELD_NAMES = ", ".join(f for f in _FIELDS if f != "tags")


@dataclass(frozen=True)
class MemoryQuery:
    """A parsed filter. Empty tuples and None mean "any"; the store reads it so."""

    texts: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    sources: frozenset[MemorySource] | None = None
    excluded_sources: frozenset[MemorySource] = frozenset()
    pinned: bool | None = None
    importance_min: int = IMPORTANCE_MIN
    importance_max: int = IMPORTANCE_MAX
    expired: bool | None = None
    superseded: bool | None = None
    keys: tuple[str, ...] = ()
    # Inclusive bounds of the creation and last-change times; None: unbounded.
    created_min: datetime | None = None
    created_max: datetime | None = None
    updated_min: datetime | None = None
    updated_max: datetime | None = None

    def shown(self, *, expired: bool, superseded: bool) -> MemoryQuery:
        """This filter with what it leaves unsaid about expired and superseded memories
        settled: left out, unless the listing asks to show them too."""
        return replace(
            self,
            expired=self.expired if self.expired is not None or expired else False,
            superseded=self.superseded if self.superseded is not None or superseded else False,
        )


# What listings show unless told otherwise: memories not expired, not superseded.
CURRENT: Final = MemoryQuery(expired=False, superseded=False)


@dataclass(frozen=True)
class MemoryOrder:
    """A listing order: None is the owner's natural order (pinned first, then by
    importance); otherwise one of ORDER_FIELDS, ties broken by key."""

    field: str | None = None
    descending: bool = False


# The natural order of a listing.
NATURAL: Final = MemoryOrder()
# Where a listing in a named order stopped: the field's value and the key of its last row.
OrderPosition = tuple[str | int | datetime, str]


def order_position(memory: Memory, order: MemoryOrder) -> OrderPosition:
    """Where ``memory`` stands in the named ``order``."""
    value: str | int | datetime = memory.key
    if order.field == "importance":
        value = memory.importance
    elif order.field == "created_at":
        value = memory.created_at
    elif order.field == "updated_at":
        value = memory.updated_at
    return (value, memory.key)


def order_position_from_token(order: MemoryOrder, raw: Sequence[Any]) -> OrderPosition:
    """Undo a position written as JSON. Raises ValueError for one we did not make."""
    if len(raw) != 2 or not all(isinstance(v, (str, int)) for v in raw):
        raise ValueError("not a listing position")
    value, key = raw
    if not isinstance(key, str) or text_violations("key", key, max_chars=KEY_MAX_CHARS):
        raise ValueError("not a listing position")
    if order.field == "importance":
        if type(value) is not int or not IMPORTANCE_MIN <= value <= IMPORTANCE_MAX:
            raise ValueError("not a listing position")
        return (value, key)
    if not isinstance(value, str):
        raise ValueError("not a listing position")
    if order.field in ("created_at", "updated_at"):
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            raise ValueError("not a listing position")
        return (moment, key)
    return (value, key)


def _refuse(description: str) -> FieldViolation:
    return FieldViolation("filter", description, "INVALID_FILTER")


def _tokens(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            if text[position:].strip() == "":
                break
            check([_refuse(f"cannot read {text[position : position + 20]!r}")])
            raise AssertionError  # pragma: no cover - check raised
        position = match.end()
        kind = match.lastgroup
        if kind is None:
            break
        value = match.group(kind)
        if kind == "open":
            check([_refuse("a quoted string is not closed")])
        if kind == "string":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        found.append((kind, value))
    return found


def _value(kind: str, value: str, name: str) -> str:
    if kind not in ("word", "string"):
        check([_refuse(f"{name} needs a value after its operator")])
    return value


def _boolean(name: str, value: str) -> bool:
    if value.lower() not in _BOOLEAN:
        check([_refuse(f"{name} compares with true or false, not {value!r}")])
    return _BOOLEAN[value.lower()]


def _source(value: str) -> MemorySource:
    short = value.lower().removeprefix("memory_source_")
    try:
        return MemorySource(short)
    except ValueError:
        names = ", ".join(s.value for s in MemorySource)
        check([_refuse(f"source is one of {names}, not {value!r}")])
        raise AssertionError from None  # pragma: no cover - check raised


def _importance(query: MemoryQuery, op: str, value: str) -> MemoryQuery:
    try:
        n = int(value)
    except ValueError:
        check([_refuse(f"importance compares with a whole number, not {value!r}")])
        raise AssertionError from None  # pragma: no cover - check raised
    low, high = query.importance_min, query.importance_max
    bounds = {
        "=": (max(low, n), min(high, n)),
        ">": (max(low, n + 1), high),
        ">=": (max(low, n), high),
        "<": (low, min(high, n - 1)),
        "<=": (low, min(high, n)),
    }
    if op not in bounds:
        check([_refuse("importance takes =, <, <=, > or >=")])
    low, high = bounds[op]
    return replace(query, importance_min=low, importance_max=high)


def _moment(name: str, value: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        check(
            [
                _refuse(
                    f"{name} compares with an RFC 3339 time like "
                    f'"2026-11-01T09:00:00Z", not {value!r}'
                )
            ]
        )
        raise AssertionError  # pragma: no cover - check raised
    return moment


def _time(query: MemoryQuery, name: str, op: str, value: str) -> MemoryQuery:
    """A bound on the creation or last-change time, kept as inclusive bounds."""
    at = _moment(name, value)
    created = name == "create_time"
    low, high = (
        (query.created_min, query.created_max)
        if created
        else (query.updated_min, query.updated_max)
    )
    if op not in ("=", ">", ">=", "<", "<="):
        check([_refuse(f"{name} takes =, <, <=, > or >=")])
    try:
        new_low = at + _MICROSECOND if op == ">" else at if op in ("=", ">=") else None
        new_high = at - _MICROSECOND if op == "<" else at if op in ("=", "<=") else None
    except OverflowError:
        check([_refuse(f"{name} compares with a time between the years 1 and 9999")])
        raise AssertionError from None  # pragma: no cover - check raised
    if new_low is not None:
        low = new_low if low is None else max(low, new_low)
    if new_high is not None:
        high = new_high if high is None else min(high, new_high)
    if created:
        return replace(query, created_min=low, created_max=high)
    return replace(query, updated_min=low, updated_max=high)


def _restrict(query: MemoryQuery, name: str, op: str, value: str) -> MemoryQuery:
    if name == "key":
        if op != "=":
            check([_refuse('key takes "=" (key = "timezone")')])
        return replace(query, keys=(*query.keys, value))
    if name in ("create_time", "update_time"):
        return _time(query, name, op, value)
    if name == "text":
        if op != ":":
            check([_refuse('text takes ":" (text:"words")')])
        return replace(query, texts=(*query.texts, value))
    if name in ("tag", "tags"):
        if op not in (":", "="):
            check([_refuse(f'{name} takes "=" or ":"')])
        return replace(query, tags=(*query.tags, value))
    if name == "source":
        source = _source(value)
        if op == "=":
            kept = frozenset({source}) if query.sources is None else query.sources & {source}
            return replace(query, sources=kept)
        if op == "!=":
            return replace(query, excluded_sources=query.excluded_sources | {source})
        check([_refuse('source takes "=" or "!="')])
    if name == "importance":
        return _importance(query, op, value)
    if op != "=":
        check([_refuse(f'{name} takes "=" (true or false)')])
    said = _boolean(name, value)
    if name == "pinned":
        return replace(query, pinned=said)
    if name == "expired":
        return replace(query, expired=said)
    return replace(query, superseded=said)


def parse_filter(text: str) -> MemoryQuery:
    """The filter's restrictions, all of which a listed memory meets.

    Raises: InvalidArgument — the filter cannot be read (reason INVALID_FILTER), with
        what is wrong and where."""
    if len(text) > FILTER_MAX_CHARS:
        check([_refuse(f"must be at most {FILTER_MAX_CHARS} characters")])
    if "\x00" in text:
        check([_refuse("must not contain NUL characters")])
    tokens = _tokens(text)
    query = MemoryQuery()
    i = 0
    while i < len(tokens):
        kind, value = tokens[i]
        if kind == "word" and value in ("AND",):
            i += 1
            continue
        if kind == "paren" or (kind == "word" and value in ("OR", "NOT")) or value == "-":
            check([_refuse("joins restrictions by AND only: no OR, NOT or parentheses")])
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if following is not None and following[0] == "op":
            value = _FIELD_ALIASES.get(value, value)
            if kind != "word" or value not in _FIELDS:
                check([_refuse(f"{value!r} is not a field; the fields are {_FIELD_NAMES}")])
            if i + 2 >= len(tokens):
                check([_refuse(f"{value} needs a value after {following[1]!r}")])
            target = _value(*tokens[i + 2], name=value)
            query = _restrict(query, value, following[1], target)
            i += 3
            continue
        if kind == "op":
            check([_refuse(f"{value!r} needs a field before it")])
        if value:
            query = replace(query, texts=(*query.texts, value))
        i += 1
    return query


def parse_order(text: str) -> MemoryOrder:
    """``order_by``: empty for the natural order, or one field, optionally ``desc``;
    the field by its name in the contract or in JSON (``updated_at``, ``updatedAt``).

    Raises: InvalidArgument — an unknown field, a second field, or a bad direction."""
    parts = text.split()
    if parts:
        parts[0] = _CAMEL.sub(r"\1_\2", parts[0]).lower()
    if not parts:
        return MemoryOrder()

    def refuse(description: str) -> FieldViolation:
        return FieldViolation("order_by", description, "INVALID_ORDER")

    if "," in text:
        check([refuse("takes one field (ties are broken by key)")])
    name, *rest = parts
    if name not in ORDER_FIELDS:
        check([refuse(f"orders by one of {', '.join(ORDER_FIELDS)}, not {name!r}")])
    if len(rest) > 1 or (rest and rest[0].lower() not in ("asc", "desc")):
        check([refuse(f'is a field and an optional "asc" or "desc", like "{name} desc"')])
    return MemoryOrder(name, bool(rest) and rest[0].lower() == "desc")
