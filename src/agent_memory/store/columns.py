"""What each column of a record does, said once beside the column, and the SQL composed
from it.

Every column of the schema mirror (``models.py``) declares its :class:`Policy` in its
``info``: whether statements return it, whether an insert takes it from the write, how
an upsert merges it, whether an update mask may set it, and what every change sets it
to. The fixed statements of the repositories take their select lists, insert lists and
``SET`` lists from here when the module loads, so a column is named in the mirror, in
its migration and nowhere else; the statements stay closed text, built only from the
declarations in code, never from a request.
"""

from __future__ import annotations

import enum
import re
from typing import Any, LiteralString, cast

from sqlalchemy import Column, Numeric, String, Table, TextClause
from sqlalchemy.dialects.postgresql.base import PGDialect
from sqlalchemy.orm import DeclarativeBase

_DIALECT = PGDialect()  # type: ignore[no-untyped-call]


class Policy(enum.Flag):
    """What statements do with a column. ``INTERNAL`` (none of these) is a column the
    service keeps to itself: keys the caller already holds, vectors, leases."""

    INTERNAL = 0
    #: Returned by the statements that read the record.
    OUTPUT = enum.auto()
    #: Taken from the write when a row is inserted (its server default when absent).
    WRITTEN = enum.auto()
    #: An upsert of an existing row replaces it when the write gives it, else keeps it.
    MERGED = enum.auto()
    #: An upsert that carries evidence replaces it, with nothing when the evidence has
    #: none; one without evidence keeps it.
    EVIDENCE = enum.auto()
    #: An update mask may set it, or clear it when the column may be empty.
    PATCHED = enum.auto()
    #: Returned only when the caller asks for the full record (a large value: a
    #: conversation's messages, a decision's result).
    FULL = enum.auto()
    #: Returned by no statement of the record, but kept in its past (the audit events'
    #: snapshots) for what a read as of an instant shows: whether a person wrote a text.
    KEPT = enum.auto()


INTERNAL = Policy.INTERNAL
OUTPUT = Policy.OUTPUT
WRITTEN = Policy.WRITTEN
MERGED = Policy.MERGED
EVIDENCE = Policy.EVIDENCE
PATCHED = Policy.PATCHED
FULL = Policy.FULL
KEPT = Policy.KEPT


def policy(
    flags: Policy,
    *,
    value: LiteralString | None = None,
    on_change: LiteralString | None = None,
    on_merge: LiteralString | None = None,
) -> dict[str, Any]:
    """A column's ``info``: its policy, and the SQL where the plain rule does not do.

    Args:
        value: the write's value when it is not the parameter named as the column.
        on_change: what every change of the row sets it to (``{t}`` is the row's alias).
        on_merge: what an upsert of an existing row sets it to, when not merged.
    """
    return {"policy": flags, "value": value, "on_change": on_change, "on_merge": on_merge}


def declared(column: Column[Any]) -> Policy | None:
    """A column's policy, or None when it declares none."""
    found = column.info.get("policy")
    return found if isinstance(found, Policy) else None


def _table(row: type[DeclarativeBase]) -> Table:
    return cast(Table, row.__table__)


def _closed(text: str) -> LiteralString:
    # Composed only of column names, types and SQL declared in models.py: code, never
    # a request's text. (mypy reads LiteralString as str; the name says what it holds.)
    return text


def _columns(row: type[DeclarativeBase], wanted: Policy) -> list[Column[Any]]:
    return [c for c in _table(row).columns if wanted & (declared(c) or INTERNAL)]


def _sql_type(column: Column[Any]) -> str:
    """The type a parameter is cast to: the column's, without a length or a precision
    (a cast to ``varchar(n)`` would cut a value short instead of refusing it)."""
    kind = column.type
    if isinstance(kind, String):
        return "text"
    if isinstance(kind, Numeric) and kind.asdecimal:  # not Float, Double or REAL
        return "numeric"
    compiled = str(kind.compile(dialect=_DIALECT))
    # The same types by their short names: a statement near psycopg's size limit stays
    # under it (see compact).
    return _SHORT_TYPES.get(compiled, compiled)


_SHORT_TYPES = {
    "TIMESTAMP WITH TIME ZONE": "timestamptz",
    "DOUBLE PRECISION": "float8",
    "SMALLINT": "int2",
    "BOOLEAN": "bool",
}


def _value(column: Column[Any]) -> str:
    """The write's value of a column, as the statement takes it."""
    given = column.info.get("value")
    return given if given else f"%({column.name})s::{_sql_type(column)}"


def _server_default(column: Column[Any]) -> str | None:
    default = column.server_default
    arg = getattr(default, "arg", None)
    if arg is None:
        return None
    if isinstance(arg, TextClause):
        return arg.text
    if isinstance(arg, str):
        return "'" + arg.replace("'", "''") + "'"
    return str(arg.compile(dialect=_DIALECT))


def output(
    row: type[DeclarativeBase], alias: LiteralString, *, full: bool = False
) -> LiteralString:
    """The record's returned columns of the row ``alias`` (none: bare names), for a
    select list; named, so that a column a migration adds does not change what a
    prepared statement returns. Without ``full``, a column returned only in full is
    NULL, so both views have the same shape."""
    prefix = f"{alias}." if alias else ""
    names = []
    for c in _columns(row, OUTPUT | FULL):
        if full or (declared(c) or INTERNAL) & OUTPUT:
            names.append(f"{prefix}{c.name}")
        else:
            names.append(f"NULL::{_sql_type(c)} AS {c.name}")
    return _closed(", ".join(names))


def insert_columns(row: type[DeclarativeBase]) -> LiteralString:
    """The columns an insert takes from the write, for ``INSERT INTO t (...)``."""
    return _closed(", ".join(c.name for c in _columns(row, WRITTEN)))


def insert_values(row: type[DeclarativeBase]) -> LiteralString:
    """The write's values for :func:`insert_columns`, in the same order; an absent one
    takes the column's server default (a column with SQL of its own for the value
    takes that as it is)."""
    values = []
    for c in _columns(row, WRITTEN):
        default = None if c.info.get("value") else _server_default(c)
        values.append(f"coalesce({_value(c)}, {default})" if default else _value(c))
    return _closed(", ".join(values))


def stamps(row: type[DeclarativeBase], alias: LiteralString) -> LiteralString:
    """What every change of a row sets, for a ``SET`` list: who changed it, when, and
    its version."""
    return _closed(
        ", ".join(
            f"{c.name} = {c.info['on_change'].format(t=alias)}"
            for c in _table(row).columns
            if c.info.get("on_change")
        )
    )


def merged(row: type[DeclarativeBase], alias: LiteralString) -> LiteralString:
    """The ``SET`` list of an upsert that finds the row ``alias``: merged columns, the
    evidence (under ``%(evidence)s``), what an upsert resets, and the stamps."""
    sets = []
    for c in _table(row).columns:
        kind = declared(c) or INTERNAL
        if c.info.get("on_merge"):
            sets.append(f"{c.name} = {c.info['on_merge']}")
        elif kind & EVIDENCE:
            sets.append(
                f"{c.name} = CASE WHEN %(evidence)s THEN {_value(c)} ELSE {alias}.{c.name} END"
            )
        elif kind & MERGED:
            sets.append(f"{c.name} = coalesce({_value(c)}, {alias}.{c.name})")
    return _closed(", ".join([*sets, stamps(row, alias)]))


def patched(row: type[DeclarativeBase], alias: LiteralString) -> LiteralString:
    """The ``SET`` list of an update by mask of the row ``alias``: each patchable column
    keeps its value unless the patch gives one (``%(clear_<column>)s`` empties one that
    may be empty), and the stamps."""
    sets = []
    for c in _columns(row, PATCHED):
        kept = f"coalesce({_value(c)}, {alias}.{c.name})"
        if c.nullable:
            kept = f"CASE WHEN %(clear_{c.name})s THEN NULL ELSE {kept} END"
        sets.append(f"{c.name} = {kept}")
    return _closed(", ".join([*sets, stamps(row, alias)]))


# Runs of whitespace, and whitespace beside a parenthesis or a comma: what a statement
# can do without. Applied between string literals only.
_SPACE = re.compile(r"\s+")
_AROUND_PUNCTUATION = re.compile(r" ?([(),]) ?")
# An operator of =, @> or * standing alone between operands (an = that is part of <=,
# >=, <>, != or => stays as it is): a literal's quote may stand right beside it.
_AROUND_OPERATOR = re.compile(r"(?:(?<=[\w)\]])|^) ?(=|@>|<|>|\*) ?(?=[\w(%]|$)")
# What the split on quotes cannot see: a comment (a line's would take in the rest of
# the statement once its lines are joined) or a dollar-quoted string.
_NOT_COMPACTED = re.compile(r"--|/\*|\$\w*\$")


def compact(statement: LiteralString) -> LiteralString:
    """``statement`` without the whitespace it can do without, string literals as they
    are. psycopg parses the text of a statement longer than 4,096 bytes again at every
    execution (shorter ones are parsed once): a statement written to be read can stay
    under that limit as it is sent.

    Raises:
        ValueError: the statement holds a comment, a dollar-quoted string or an
            unclosed literal.
    """
    parts = statement.split("'")
    outside = range(0, len(parts), 2)  # outside the literals ('' inside one splits it too)
    if len(parts) % 2 == 0 or any(_NOT_COMPACTED.search(parts[i]) for i in outside):
        raise ValueError("a statement with a comment, a dollar quote or an unclosed literal")
    for i in outside:
        spaced = _SPACE.sub(" ", parts[i])
        parts[i] = _AROUND_OPERATOR.sub(r"\1", _AROUND_PUNCTUATION.sub(r"\1", spaced))
    return _closed("'".join(parts).strip())


def named(row: type[DeclarativeBase], wanted: Policy) -> tuple[str, ...]:
    """The names of the record's columns with any of the ``wanted`` policies."""
    return tuple(c.name for c in _columns(row, wanted))


def internal(row: type[DeclarativeBase]) -> tuple[str, ...]:
    """The names of the record's columns no statement returns or takes from a write, nor
    its past keeps: the service's own bookkeeping (vectors, leases)."""
    return tuple(c.name for c in _table(row).columns if not (declared(c) or INTERNAL))


def clearable(row: type[DeclarativeBase]) -> tuple[str, ...]:
    """The names of the columns an update mask may empty: patched, and nullable (each
    cleared by its ``%(clear_<column>)s`` flag)."""
    return tuple(c.name for c in _columns(row, PATCHED) if c.nullable)
