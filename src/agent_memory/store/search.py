"""What recall's index over memories is built on, shared by the schema and the
statements that must repeat it word for word for PostgreSQL to use it.

* An **owner key** names, in one value, whose memory a row is: the tenant, scope and
  owner, joined by a unit separator (a control character, which no identifier may
  hold). A GIN index led by it and holding the memory's lexemes finds one owner's
  memories that hold a term without reading the owner's other memories.
* A memory's **lexemes** are computed from its key and value, as recall scores them.

(Archival lines need no such index: each block keeps its terms with the ordinals of
the lines that hold them, see store/recall.py.)
"""

from __future__ import annotations

from typing import LiteralString

# Between the parts of an owner key: U+001F, which identifiers never hold. The
# expressions are written as PostgreSQL prints them back, so that the schema read
# from a database compares equal to the models'.
SEPARATOR = "\x1f"


def _key(a: LiteralString, first: LiteralString, second: LiteralString) -> LiteralString:
    p = f"{a}." if a else ""
    return f"(((({p}tenant_id || chr(31)) || {p}{first}) || chr(31)) || {p}{second})"


def memory_owner(a: LiteralString = "") -> LiteralString:
    """The owner key of memory ``a``."""
    return _key(a, "scope", "owner_id")


def memory_lexemes(a: LiteralString = "") -> LiteralString:
    """The lexemes of memory ``a``, as recall ranks them and its index holds them."""
    p = f"{a}." if a else ""
    return f"to_tsvector('english'::regconfig, ({p}key::text || ' ') || {p}value)"


def memory_owner_key(tenant_id: str, scope: str, owner_id: str) -> str:
    return SEPARATOR.join((tenant_id, scope, owner_id))
