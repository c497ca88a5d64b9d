"""SQL fragments of recall by meaning that several statements and the schema share: what
a stored vector is made from, when it is current, and who speaks in a line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import LiteralString

PGVECTOR_INSTALLED: LiteralString = (
    "SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'vector') AS installed"
)

# A line shaped "Name: text" carries its speaker: up to three capitalised words before
# the colon. Sent as a parameter (``%(speaker_pattern)s``) wherever it is used.
SPEAKER = r"^\s*([[:upper:]][[:alnum:]'.-]*(?: [[:upper:]][[:alnum:]'.-]*){0,2}):\s"


def _alias(a: LiteralString) -> LiteralString:
    return f"{a}." if a else ""


def line_hash(a: LiteralString = "") -> LiteralString:
    """The hash of what a line's vector is made from: its text."""
    return f"hashtextextended({_alias(a)}content, 0)"


def memory_hash(a: LiteralString = "") -> LiteralString:
    """The hash of what a memory's vector is made from: its key and value."""
    return text_hash(f"{_alias(a)}key", f"{_alias(a)}value")


def unread(a: LiteralString, hashed: LiteralString) -> LiteralString:
    """Whether the learned screens are still to judge memory ``a`` for its text hashed
    ``hashed``: a person did not write it (their own words count as read) and it is not
    the text they last read or a person let go from a hold."""
    return f"{_alias(a)}text_by IS NULL AND {_alias(a)}screened_hash IS DISTINCT FROM {hashed}"


def unscreened(a: LiteralString = "") -> LiteralString:
    """The memories of ``a`` the learned screens have yet to read from the vector they
    have: current ones with a vector of their text as it is, whose text they are still to
    judge. The predicate of their index (ix_memories_unscreened), expiry apart (the
    sweeper's)."""
    return (
        f"{_alias(a)}superseded_by IS NULL AND {_alias(a)}embedded_hash = {memory_hash(a)}"
        f" AND {unread(a, memory_hash(a))}"
    )


def text_hash(key: LiteralString, value: LiteralString) -> LiteralString:
    """:func:`memory_hash` of a key and a value given as expressions."""
    return f"hashtextextended({key} || E'\\n' || {value}, 0)"


def current_vector(a: LiteralString, hashed: LiteralString, model: LiteralString) -> LiteralString:
    """Row ``a`` has a vector of ``model`` made from its text as it is."""
    return (
        f"{a}.embedding_model = {model} AND {a}.embedded_hash = {hashed}"
        f" AND {a}.embedding IS NOT NULL"
    )


def indexed(a: LiteralString, model: LiteralString) -> LiteralString:
    """Line ``a`` has a vector of ``model`` made from its text as it is."""
    return current_vector(a, line_hash(a), model)


def real_array(vector: Sequence[float]) -> str:
    """PostgreSQL's text form of a ``real[]``, as vectors are stored."""
    return "{" + ",".join(repr(float(x)) for x in vector) + "}"


def vector_literal(vector: Sequence[float]) -> str:
    """pgvector's text form of a vector, as a query's is compared."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"
