"""Which memories a listing shows and in what order: an AIP-160 ``filter`` and an
AIP-132 ``order_by``, parsed into plain values the store turns into SQL (and the
in-memory store evaluates as they are, with :func:`holds`).

A filter is restrictions combined as AIP-160 combines them:

    text:"deploy"        key or value holds the text, case-insensitively (a bare
                         word or quoted string alone means the same)
    tag = "billing"      carries the tag (``tags:"billing"`` too)
    source = manual      written by hand (manual, auto, director, memorize; ``!=``)
    pinned = true        pinned or not
    importance >= 50     importance compared (=, <, <=, >, >=)
    expired = true       only those whose expiry passed (not deleted yet), or none
    superseded = true    only those another memory superseded, or none
    key = "timezone"     the memory of that key (exactly as stored; ``!=``)
    create_time > "2026-11-01T00:00:00Z"
                         created (``update_time``: last changed) before, after or at
                         an RFC 3339 instant (=, <, <=, >, >=)
    valid = true         the fact holds now: its period has started and not ended
    valid_end_time < "2026-12-01T00:00:00Z"
                         the fact's period ends (``valid_start_time``: starts) before,
                         after or at an instant; an open end compares as the end of
                         time, an open start as its beginning

    a AND b              both (white space between them means the same)
    a OR b               either; OR binds tighter than AND and white space, so
                         ``a AND b OR c`` is ``a AND (b OR c)``
    NOT a, -a            not ``a``
    (a AND b) OR c       parentheses group

The keywords are upper case: ``or`` is a word to search for.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Final, NoReturn

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
# How deep parentheses may nest: far beyond a filter a person writes.
FILTER_MAX_DEPTH: Final = 16
# The fields a listing may be ordered by; ties are broken by key, unique for an owner.
ORDER_FIELDS: Final = ("key", "importance", "created_at", "updated_at")
TIEBREAKER: Final = "key"

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
    "held_for_review",
    "importance",
    "create_time",
    "update_time",
    "expired",
    "superseded",
    "valid",
    "valid_start_time",
    "valid_end_time",
)
# Other names of a field: the JSON's, and the store's.
_FIELD_ALIASES = {
    "createTime": "create_time",
    "updateTime": "update_time",
    "created_at": "create_time",
    "updated_at": "update_time",
    "createdAt": "create_time",
    "updatedAt": "update_time",
    "validStartTime": "valid_start_time",
    "validEndTime": "valid_end_time",
}
# The times of TIMED fields, and what an open end of a fact's period compares as.
_TIMED: Final = ("create_time", "update_time", "valid_start_time", "valid_end_time")
_BEGINNING: Final = datetime.min.replace(tzinfo=UTC)
_END_OF_TIME: Final = datetime.max.replace(tzinfo=UTC)
# The order fields by their other names: the filter's and the JSON's.
_ORDER_ALIASES = {"create_time": "created_at", "update_time": "updated_at"}
_FIELD_NAMES = ", ".join(f for f in _FIELDS if f != "tags")
_COMPARISONS: Final = ("=", "<", "<=", ">", ">=")
_KEYWORDS: Final = ("AND", "OR", "NOT")


# --- the parsed filter ---------------------------------------------------------------


@dataclass(frozen=True)
class Restriction:
    """One comparison, read: ``field`` by its name in the contract (``tag``, never
    ``tags``; ``create_time``), ``op`` one of ``:`` (text only), ``=``, ``!=``, ``<``,
    ``<=``, ``>``, ``>=``, and ``value`` of the field's type."""

    field: str
    op: str
    value: str | bool | int | datetime | MemorySource


@dataclass(frozen=True)
class Not:
    operand: Condition


@dataclass(frozen=True)
class AllOf:
    """Every operand holds (AND, or white space)."""

    operands: tuple[Condition, ...]


@dataclass(frozen=True)
class AnyOf:
    """At least one operand holds (OR)."""

    operands: tuple[Condition, ...]


Condition = Restriction | Not | AllOf | AnyOf


def restrictions(condition: Condition | None) -> Iterator[Restriction]:
    """Every restriction of ``condition``, however it is nested."""
    if condition is None:
        return
    if isinstance(condition, Restriction):
        yield condition
    elif isinstance(condition, Not):
        yield from restrictions(condition.operand)
    else:
        for operand in condition.operands:
            yield from restrictions(operand)


def _compare(actual: Any, op: str, wanted: Any) -> bool:
    if op == "=":
        return bool(actual == wanted)
    if op == "!=":
        return bool(actual != wanted)
    if op == "<":
        return bool(actual < wanted)
    if op == "<=":
        return bool(actual <= wanted)
    if op == ">":
        return bool(actual > wanted)
    return bool(actual >= wanted)


def _holds_restriction(r: Restriction, memory: Memory, now: datetime) -> bool:
    if r.field == "text":
        needle = str(r.value).lower()
        return needle in memory.key.lower() or needle in memory.value.lower()
    if r.field == "tag":
        return r.value in memory.tags
    actual: Any = {
        "key": memory.key,
        "source": memory.source,
        "pinned": memory.pinned,
        "held_for_review": memory.held_for_review,
        "importance": memory.importance,
        "create_time": memory.created_at,
        "update_time": memory.updated_at,
        "expired": memory.expire_time is not None and memory.expire_time <= now,
        "superseded": memory.superseded_by is not None,
        "valid": memory.valid_at(now),
        "valid_start_time": memory.valid_start_time or _BEGINNING,
        "valid_end_time": memory.valid_end_time or _END_OF_TIME,
    }[r.field]
    return _compare(actual, r.op, r.value)


def holds(condition: Condition | None, memory: Memory, now: datetime) -> bool:
    """Whether ``memory`` meets ``condition`` (None: any) at ``now``, as the store's SQL
    reads it."""
    if condition is None:
        return True
    if isinstance(condition, Restriction):
        return _holds_restriction(condition, memory, now)
    if isinstance(condition, Not):
        return not holds(condition.operand, memory, now)
    if isinstance(condition, AllOf):
        return all(holds(c, memory, now) for c in condition.operands)
    return any(holds(c, memory, now) for c in condition.operands)


@dataclass(frozen=True)
class MemoryQuery:
    """A parsed filter (``condition``; None: any memory), and what the listing adds of
    expired and superseded memories where the filter says nothing of them (None:
    shown; False: left out)."""

    condition: Condition | None = None
    expired: bool | None = None
    superseded: bool | None = None

    def names(self, field: str) -> bool:
        """Whether the filter says anything of ``field``."""
        return any(r.field == field for r in restrictions(self.condition))

    def shown(self, *, expired: bool, superseded: bool) -> MemoryQuery:
        """This filter with what it leaves unsaid about expired and superseded memories
        settled: left out, unless the listing asks to show them too. A filter that
        names ``expired`` (or ``superseded``) decides on its own."""
        return replace(
            self,
            expired=None if expired or self.names("expired") else False,
            superseded=None if superseded or self.names("superseded") else False,
        )

    def admits(self, memory: Memory, now: datetime) -> bool:
        """Whether a listing of this query shows ``memory`` at ``now``."""
        if self.expired is not None:
            expired = memory.expire_time is not None and memory.expire_time <= now
            if expired != self.expired:
                return False
        if self.superseded is not None and (memory.superseded_by is not None) != self.superseded:
            return False
        return holds(self.condition, memory, now)


# What listings show unless told otherwise: memories not expired, not superseded.
CURRENT: Final = MemoryQuery(expired=False, superseded=False)
# What a prompt shows: current memories whose facts are valid now, not held for review.
SHOWN: Final = MemoryQuery(
    AllOf((Restriction("valid", "=", True), Restriction("held_for_review", "=", False))),
    expired=False,
    superseded=False,
)


# --- reading a filter ----------------------------------------------------------------


@dataclass(frozen=True)
class _Token:
    kind: str  # string, op, paren, word
    value: str
    at: int  # where it starts, counted from 1 as a person counts characters


# Where a refusal points when what is missing is at the filter's end.
_END: Final = 0


def _refuse(description: str, at: int | None = None) -> NoReturn:
    """Refuse the filter, saying what is wrong and where: at which character (counted
    from 1), or at its end (``_END``)."""
    where = "" if at is None else " (at its end)" if at == _END else f" (at character {at})"
    check([FieldViolation("filter", description + where, "INVALID_FILTER")])
    raise AssertionError  # pragma: no cover - check raised


def _tokens(text: str) -> list[_Token]:
    found: list[_Token] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            if text[position:].strip() == "":
                break
            _refuse(f"cannot read {text[position : position + 20]!r}", position + 1)
        position = match.end()
        kind = match.lastgroup
        if kind is None:
            break
        value = match.group(kind)
        at = match.start(kind) + 1
        if kind == "open":
            _refuse("a quoted string is not closed", at)
        if kind == "string":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        found.append(_Token(kind, value, at))
    return found


def _boolean(name: str, value: str, at: int) -> bool:
    if value.lower() not in _BOOLEAN:
        _refuse(f"{name} compares with true or false, not {value!r}", at)
    return _BOOLEAN[value.lower()]


def _source(value: str, at: int) -> MemorySource:
    short = value.lower().removeprefix("memory_source_")
    try:
        return MemorySource(short)
    except ValueError:
        names = ", ".join(s.value for s in MemorySource)
        _refuse(f"source is one of {names}, not {value!r}", at)


def _importance(value: str, at: int) -> int:
    try:
        n = int(value)
    except ValueError:
        _refuse(f"importance compares with a whole number, not {value!r}", at)
    # Beyond the range every memory compares alike: kept just outside it.
    return max(IMPORTANCE_MIN - 1, min(IMPORTANCE_MAX + 1, n))


def _moment(name: str, value: str, at: int) -> datetime:
    try:
        moment = datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        _refuse(
            f'{name} compares with an RFC 3339 time like "2026-11-01T09:00:00Z", not {value!r}',
            at,
        )
    try:
        return moment.astimezone(UTC)
    except (OverflowError, ValueError):
        _refuse(f"{name} compares with a time between the years 1 and 9999", at)


def _restriction(name: str, op: str, value: str, at: int) -> Restriction:
    """One comparison, its value read as its field's."""
    if name == "key":
        if op not in ("=", "!="):
            _refuse('key takes "=" or "!=" (key = "timezone")', at)
        return Restriction("key", op, value)
    if name in _TIMED:
        if op not in _COMPARISONS:
            _refuse(f"{name} takes =, <, <=, > or >=", at)
        return Restriction(name, op, _moment(name, value, at))
    if name == "text":
        if op != ":":
            _refuse('text takes ":" (text:"words")', at)
        return Restriction("text", ":", value)
    if name in ("tag", "tags"):
        if op not in (":", "="):
            _refuse(f'{name} takes "=" or ":"', at)
        return Restriction("tag", "=", value)
    if name == "source":
        if op not in ("=", "!="):
            _refuse('source takes "=" or "!="', at)
        return Restriction("source", op, _source(value, at))
    if name == "importance":
        if op not in _COMPARISONS:
            _refuse("importance takes =, <, <=, > or >=", at)
        return Restriction("importance", op, _importance(value, at))
    if op != "=":
        _refuse(f'{name} takes "=" (true or false)', at)
    return Restriction(name, "=", _boolean(name, value, at))


class _Parser:
    """AIP-160's grammar, by recursive descent:

    expression  = sequence { "AND" sequence }
    sequence    = factor { factor }              (white space: AND as well)
    factor      = term { "OR" term }
    term        = [ "NOT" | "-" ] simple
    simple      = "(" expression ")" | restriction
    restriction = comparable [ op value ]
    """

    def __init__(self, tokens: list[_Token]) -> None:
        self._tokens = tokens
        self._i = 0
        self._depth = 0

    def _peek(self) -> _Token | None:
        return self._tokens[self._i] if self._i < len(self._tokens) else None

    def _keyword(self, word: str) -> bool:
        token = self._peek()
        return token is not None and token.kind == "word" and token.value == word

    def _at(self) -> int:
        token = self._peek()
        return token.at if token is not None else _END

    def filter(self) -> Condition | None:
        if self._peek() is None:
            return None
        condition = self._expression()
        token = self._peek()
        if token is not None:  # only a ")" stops an expression early
            _refuse("')' closes no parenthesis", token.at)
        return condition

    def _expression(self) -> Condition:
        operands = [self._sequence()]
        while self._keyword("AND"):
            self._i += 1
            if self._starts_nothing():
                _refuse("AND needs a restriction after it", self._at())
            operands.append(self._sequence())
        return _all(operands)

    def _starts_nothing(self) -> bool:
        token = self._peek()
        return (
            token is None
            or (token.kind == "paren" and token.value == ")")
            or (token.kind == "word" and token.value in ("AND", "OR"))
            or token.kind == "op"
        )

    def _sequence(self) -> Condition:
        operands = [self._factor()]
        while not self._starts_nothing():
            operands.append(self._factor())
        return _all(operands)

    def _factor(self) -> Condition:
        operands = [self._term()]
        while self._keyword("OR"):
            self._i += 1
            if self._starts_nothing():
                _refuse("OR needs a restriction after it", self._at())
            operands.append(self._term())
        return operands[0] if len(operands) == 1 else AnyOf(tuple(operands))

    def _term(self) -> Condition:
        token = self._peek()
        if token is None:
            _refuse("a restriction is missing", _END)
        if token.kind == "word" and (token.value == "NOT" or token.value.startswith("-")):
            if token.value in ("NOT", "-"):
                self._i += 1
                following = self._peek()
                if self._starts_nothing() or (
                    following is not None
                    and following.kind == "word"
                    and (following.value == "NOT" or following.value.startswith("-"))
                ):
                    _refuse(f"{token.value} needs a restriction or parentheses after it", token.at)
                return Not(self._simple())
            # "-word": the rest of the word is what is negated.
            self._tokens[self._i] = _Token("word", token.value[1:], token.at + 1)
            return Not(self._simple())
        return self._simple()

    def _simple(self) -> Condition:
        token = self._peek()
        assert token is not None
        if token.kind == "paren" and token.value == "(":
            self._depth += 1
            if self._depth > FILTER_MAX_DEPTH:
                _refuse(f"parentheses nest at most {FILTER_MAX_DEPTH} deep", token.at)
            self._i += 1
            inside = self._peek()
            if inside is not None and inside.kind == "paren" and inside.value == ")":
                _refuse("parentheses hold no restriction", token.at)
            condition = self._expression()
            closing = self._peek()
            if closing is None or closing.kind != "paren" or closing.value != ")":
                _refuse("a parenthesis is not closed", token.at)
            self._i += 1
            self._depth -= 1
            return condition
        if token.kind == "op":
            _refuse(f"{token.value!r} needs a field before it", token.at)
        if token.kind == "paren":
            _refuse("')' closes no parenthesis", token.at)
        self._i += 1
        following = self._peek()
        if following is None or following.kind != "op":
            if token.kind == "word" and token.value in _KEYWORDS:
                _refuse(f"{token.value} needs a restriction before it", token.at)
            return Restriction("text", ":", token.value)
        name = _FIELD_ALIASES.get(token.value, token.value)
        if token.kind != "word" or name not in _FIELDS:
            _refuse(f"{token.value!r} is not a field; the fields are {_FIELD_NAMES}", token.at)
        self._i += 1
        target = self._peek()
        if target is None or target.kind not in ("word", "string"):
            _refuse(f"{name} needs a value after {following.value!r}", following.at)
        self._i += 1
        return _restriction(name, following.value, target.value, target.at)


def _all(operands: list[Condition]) -> Condition:
    return operands[0] if len(operands) == 1 else AllOf(tuple(operands))


def parse_filter(text: str) -> MemoryQuery:
    """The filter's condition, which every listed memory meets.

    Raises: InvalidArgument — the filter cannot be read (reason INVALID_FILTER), with
        what is wrong and at which character."""
    if len(text) > FILTER_MAX_CHARS:
        _refuse(f"must be at most {FILTER_MAX_CHARS} characters")
    if "\x00" in text:
        _refuse("must not contain NUL characters")
    return MemoryQuery(_Parser(_tokens(text)).filter())


# --- the order -----------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryOrder:
    """A listing order: no fields is the owner's natural order (pinned first, then by
    importance); otherwise fields of ORDER_FIELDS, each with whether it descends,
    always ending in ``key`` (unique for an owner: what breaks every tie)."""

    fields: tuple[tuple[str, bool], ...] = ()

    @property
    def natural(self) -> bool:
        return not self.fields


# The natural order of a listing.
NATURAL: Final = MemoryOrder()
# Where a listing in a named order stopped: the value of each of its fields in the
# last row listed, the key last.
OrderPosition = tuple[str | int | datetime, ...]

_ORDER_VALUES: dict[str, Callable[[Memory], str | int | datetime]] = {
    "key": lambda m: m.key,
    "importance": lambda m: m.importance,
    "created_at": lambda m: m.created_at,
    "updated_at": lambda m: m.updated_at,
}


def order_position(memory: Memory, order: MemoryOrder) -> OrderPosition:
    """Where ``memory`` stands in the named ``order``."""
    return tuple(_ORDER_VALUES[name](memory) for name, _ in order.fields)


def order_position_from_token(order: MemoryOrder, raw: Sequence[Any]) -> OrderPosition:
    """Undo a position written as JSON. Raises ValueError for one we did not make."""
    if len(raw) != len(order.fields):
        raise ValueError("not a listing position")
    position: list[str | int | datetime] = []
    for (name, _), value in zip(order.fields, raw, strict=True):
        if name == "importance":
            if type(value) is not int or not IMPORTANCE_MIN <= value <= IMPORTANCE_MAX:
                raise ValueError("not a listing position")
            position.append(value)
            continue
        if not isinstance(value, str):
            raise ValueError("not a listing position")
        if name == "key":
            if text_violations("key", value, max_chars=KEY_MAX_CHARS):
                raise ValueError("not a listing position")
            position.append(value)
            continue
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            raise ValueError("not a listing position")
        position.append(moment)
    return tuple(position)


def _refuse_order(description: str) -> NoReturn:
    check([FieldViolation("order_by", description, "INVALID_ORDER")])
    raise AssertionError  # pragma: no cover - check raised


def parse_order(text: str) -> MemoryOrder:
    """``order_by`` (AIP-132): empty for the natural order, or fields separated by
    commas, each optionally followed by ``asc`` or ``desc``; a field by its name in the
    contract or in JSON (``updated_at``, ``updatedAt``; ``update_time`` as the filter
    says it). Ties are broken by key, ascending, unless the order names it; fields
    after ``key`` would never be reached and are left out.

    Raises: InvalidArgument — an unknown field, one named twice, an empty field or a
        bad direction (reason INVALID_ORDER)."""
    if not text.strip():
        return NATURAL
    fields: list[tuple[str, bool]] = []
    for n, part in enumerate(text.split(","), start=1):
        words = part.split()
        if not words:
            _refuse_order(f"field {n} is empty: fields are separated by single commas")
        name = _CAMEL.sub(r"\1_\2", words[0]).lower()
        name = _ORDER_ALIASES.get(name, name)
        if name not in ORDER_FIELDS:
            _refuse_order(f"orders by {', '.join(ORDER_FIELDS)}, not {words[0]!r}")
        if len(words) > 2 or (len(words) == 2 and words[1].lower() not in ("asc", "desc")):
            _refuse_order(
                f'field {n} is a field and an optional "asc" or "desc", like "{name} desc",'
                f" not {part.strip()!r}"
            )
        if any(name == seen for seen, _ in fields):
            _refuse_order(f"names {name} twice")
        fields.append((name, len(words) == 2 and words[1].lower() == "desc"))
    named = [name for name, _ in fields]
    if TIEBREAKER in named:
        fields = fields[: named.index(TIEBREAKER) + 1]
    else:
        fields.append((TIEBREAKER, False))
    return MemoryOrder(tuple(fields))
