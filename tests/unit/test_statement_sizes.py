"""Every statement the store sends is short enough for psycopg to parse once per
connection: past 4,096 bytes (or 50 parameters) psycopg parses its text again at every
call, which costs a hot path more than its SQL. Statements are found by walking the
store's modules, so a new one is held to this the day it is written; the few that may
be longer are named here with why."""

from __future__ import annotations

import re
from collections.abc import Iterator

import psycopg._queries
import pytest

from agent_memory.store import catalogue

MAX_BYTES = getattr(psycopg._queries, "MAX_CACHED_STATEMENT_LENGTH", 4096)
MAX_PARAMS = getattr(psycopg._queries, "MAX_CACHED_STATEMENT_PARAMS", 50)

# Longer, with why: each is one call among many rows' work, where a parse is noise.
LONG: dict[tuple[str, str], str] = {
    ("blocks", "_WRITES"): "an archival block's write rewrites its lines; a core one is short",
    ("prompts", "_READ"): "the render's read with the archival ranking, which outweighs it",
    ("prompts", "_READ_AT"): "a render as of a past instant rebuilds its rows: not a hot path",
    ("prompts", "LEXICAL_PART"): "recall's ranking by words over an owner's candidates",
    ("prompts", "RANK"): "recall's ranking over an owner's candidates",
    ("recall", "FUSE"): "recall's ranking by words and meaning",
    ("recall", "FUSE_ORDERED"): "recall's ranking by words and meaning",
    ("recall", "LEXICAL_PART"): "recall's ranking by words",
    ("recall", "LEXICAL_PART_GIVEN"): "recall's ranking by words",
    ("recall", "RANK"): "recall's ranking",
    ("recall", "RANK_GIVEN"): "recall's ranking",
    ("recall", "RECALL_FUSE"): "recall's ranking by words and meaning",
    ("recall", "RECALL_RANK"): "recall's ranking",
    ("recall", "RECALL_RANK_GIVEN"): "recall's ranking",
    ("recall", "_GIVEN"): "recall's candidates",
    ("recall", "_SCANNED"): "recall's candidates",
}


def statements() -> Iterator[tuple[str, str, str]]:
    for module, name, _, text in catalogue.statements():
        yield module, name, text


def test_the_walk_finds_the_hot_statements() -> None:
    names = {(module, name) for module, name, _ in statements()}
    assert {("memories", "_WRITE"), ("memories", "_UPDATE"), ("blocks", "_WRITES")} <= names


@pytest.mark.parametrize(
    ("module", "name", "text"), list(statements()), ids=lambda v: v if len(v) < 40 else "sql"
)
def test_a_statement_is_parsed_once(module: str, name: str, text: str) -> None:
    if (module, name) in LONG:
        return
    size = len(text.encode())
    params = len(set(re.findall(r"%\((\w+)\)s", text)))
    assert size <= MAX_BYTES, f"{module}.{name} is {size:,} bytes: compact it (columns.compact)"
    assert params <= MAX_PARAMS, f"{module}.{name} takes {params} parameters"


def test_a_core_block_write_is_parsed_once() -> None:
    from agent_memory.domain.blocks import BlockLabel
    from agent_memory.store.blocks import _WRITES

    for (_, label), text in _WRITES.items():
        if label is BlockLabel.CORE:
            assert len(text.encode()) <= MAX_BYTES
