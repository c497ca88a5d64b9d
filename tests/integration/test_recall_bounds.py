"""Recall reads a bounded number of rows however much an owner holds: past ``scan`` lines
(or memories) it reads candidates through indexes, the rarest terms' lines first. The
ranking is the same either way below the cap, and the rare line is found above it."""

from __future__ import annotations

import math

import psycopg
import pytest

from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockScope
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import MemorySource, MemoryWrite, Owner, Scope
from agent_memory.domain.recall import LexicalPart, Meaning, RankQuery, RecallMatch
from agent_memory.store.database import Database
from agent_memory.store.repositories import Tx
from tests.integration.conftest import on_database
from tests.support import has_pgvector

USER_BLOCK = BlockKey(BlockLabel.ARCHIVAL, BlockScope.USER)
AGENT_BLOCK = BlockKey(BlockLabel.ARCHIVAL, BlockScope.AGENT, "coder")
MODEL = "two-words"

NOTES = [
    "Ana leads the platform team until March",
    "The staging database moved to port 5434 on the twelfth",
    "Refund requests over 500 dollars need a manager's sign-off",
    "Harbor ferries leave from pier four every hour",
    "",
    "The harbor master is called Bruno",
    "Ana prefers short status reports on Fridays",
    "Deploys go out on Tuesdays after the platform review",
]
AGENT_NOTES = [
    "The coder agent keeps the release checklist",
    "Rollbacks use the previous image tag",
    "Ana approves releases of the platform",
]
QUERIES = [
    "Ana platform",
    "harbor ferries",
    "refund manager",
    "staging database port",
    "release rollback",
    "Bruno",
    "platfrom",  # a typo
    "the of and",  # stop words only
]


def _same(a: list[RecallMatch], b: list[RecallMatch]) -> None:
    assert [(m.content, m.line_number, m.memory_id) for m in a] == [
        (m.content, m.line_number, m.memory_id) for m in b
    ]
    for x, y in zip(a, b, strict=True):
        assert x.score == pytest.approx(y.score, abs=1e-9)


async def _write(tx: Tx) -> None:
    await tx.blocks.write(USER_BLOCK, "\n".join(NOTES), expected=None, keep=5)
    await tx.blocks.write(AGENT_BLOCK, "\n".join(AGENT_NOTES), expected=None, keep=5)
    for key, value in (
        ("deploy-day", "Deploys go out on Tuesdays"),
        ("ana-role", "Ana leads the platform team"),
        ("harbor-hours", "The harbor opens at nine"),
    ):
        await tx.memories.write(
            MemoryWrite(Owner(Scope.AGENT, "coder"), key, MemorySource.MANUAL, value)
        )


def test_rows_read_through_indexes_rank_as_rows_read_as_they_are(
    store_url: str, caller: Principal
) -> None:
    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            await _write(tx)
            for query in QUERIES:
                for memories in (False, True):
                    read = RankQuery("coder", query, limit=20, include_memories=memories)
                    found = RankQuery("coder", query, limit=20, include_memories=memories, scan=0)
                    _same(await tx.recall.rank(read), await tx.recall.rank(found))
                    as_is = await tx.recall.lexical(read)
                    indexed = await tx.recall.lexical(found)
                    assert (as_is.lines_scanned, as_is.memories_scanned) == (True, True)
                    # No memory is searched without include_memories: none to read.
                    assert (indexed.lines_scanned, indexed.memories_scanned) == (
                        False,
                        not memories,
                    )
                    assert indexed.candidates == as_is.candidates
                    assert indexed.speakers == as_is.speakers

    on_database(store_url, body)


def test_the_rare_line_is_found_when_a_common_term_fills_the_cap(
    store_url: str, caller: Principal
) -> None:
    common = [f"harbor note number {n} about the weather" for n in range(60)]
    rare = "harbor zebra crossing near the pier"
    lines = [*common[:30], rare, *common[30:]]

    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            await tx.blocks.write(USER_BLOCK, "\n".join(lines), expected=None, keep=5)
            capped = RankQuery("coder", "harbor zebra", limit=5, scan=0, cap=5)
            matches = await tx.recall.rank(capped)
            assert matches[0].content == rare
            # Only the capped candidates (and their neighbours) are scored; read as they
            # are, every line holding the term is.
            found = await tx.recall.rank(RankQuery("coder", "harbor", limit=100, scan=0, cap=5))
            assert 0 < len(found) <= 5 * 5  # each candidate and its four neighbours
            assert len(await tx.recall.rank(RankQuery("coder", "harbor", limit=100))) == 61

    on_database(store_url, body)


def _vector(text: str) -> list[float]:
    """A two-dimension vector: how much a text is about the harbor, and about people."""
    harbor = sum(word in text.lower() for word in ("harbor", "ferries", "pier"))
    people = sum(word in text.lower() for word in ("ana", "bruno", "manager"))
    norm = math.hypot(harbor, people) or 1.0
    return [harbor / norm + 0.01, people / norm + 0.01]


def test_nearest_rows_through_the_index_fuse_as_rows_read_as_they_are(
    store_url: str, caller: Principal
) -> None:
    if not has_pgvector(store_url):
        pytest.skip("this PostgreSQL server has no pgvector")

    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            await _write(tx)
        with psycopg.connect(store_url, autocommit=True) as conn:
            for table, text in (("archival_lines", "content"), ("memories", "key || ' ' || value")):
                for row_id, value in conn.execute(
                    f"SELECT ctid::text, {text} FROM {table} WHERE tenant_id = %s",
                    (caller.tenant_id,),
                ).fetchall():
                    hashed = (
                        "hashtextextended(content, 0)"
                        if table == "archival_lines"
                        else "hashtextextended(key || E'\\n' || value, 0)"
                    )
                    conn.execute(
                        f"UPDATE {table} SET embedding = %s::real[], embedding_model = %s, "
                        f"embedded_hash = {hashed} WHERE tenant_id = %s AND ctid = %s::tid",
                        (_vector(value), MODEL, caller.tenant_id, row_id),
                    )
        async with db.connection(caller) as tx:
            for query in ("who runs the ferries", "Ana platform", "manager"):
                read = RankQuery("coder", query, limit=20, include_memories=True)
                found = RankQuery("coder", query, limit=20, include_memories=True, scan=0)
                meaning = Meaning(vector=_vector(query), model=MODEL, weight=0.5)
                as_is: LexicalPart = await tx.recall.lexical(read)
                indexed = await tx.recall.lexical(found)
                _same(
                    await tx.recall.fuse(read, as_is, meaning),
                    await tx.recall.fuse(found, indexed, meaning),
                )

    on_database(store_url, body)
