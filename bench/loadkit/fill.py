"""Filling the database: measured users' archival blocks through WriteBlock, everyone
else's lines straight into ``archival_lines`` with COPY (they only make the table big),
and memories of as many other agents, so the tables look like a service in use.

The service ranks by meaning too (its default): the measured users' lines are waited
for until the background indexer has embedded them all. The bulk lines and memories
are marked as seen by the model without a vector, as the indexer marks a text it
cannot embed: embedding a million lines would take the machine for hours, and recall
of one user compares only that user's vectors.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
import uuid

import psycopg

from agent_memory.embed.local import MODEL
from loadkit.workloads import TENANT, Context, Stubs, write_archival

MEASURED_USERS = 8
QUESTIONS_PER_USER = 5_000  # none asked twice in a run
MEMORIES_PER_AGENT = 50


# Lines seen by the model without a vector: the indexer passes them by.
_SEEN = (
    b"UPDATE archival_lines SET embedding_model = %(model)s,"
    b" embedded_hash = hashtextextended(content, 0)"
    b" WHERE tenant_id = %(tenant)s AND user_id = ANY(%(users)s)"
)


_DUE = (
    b"SELECT (SELECT count(*) FROM archival_lines"
    b"        WHERE embedded_hash IS DISTINCT FROM hashtextextended(content, 0))"
    b"     + (SELECT count(*) FROM memories"
    b"        WHERE embedded_hash IS DISTINCT FROM hashtextextended(key || E'\\n' || value, 0)"
    b"          AND superseded_by IS NULL)"
)


async def waiting_for_the_indexer(url: str) -> int:
    """Lines and memories the service's indexer has yet to embed."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        row = await (await conn.execute(_DUE)).fetchone()
    assert row is not None
    return int(row[0])  # type: ignore[call-overload]


async def indexer_drained(url: str, within: float) -> int:
    """Wait up to ``within`` seconds for the indexer to embed what is due; what is left."""
    deadline = time.monotonic() + within
    while True:
        left = await waiting_for_the_indexer(url)
        if not left or time.monotonic() > deadline:
            return left
        await asyncio.sleep(2)  # the database is polled: nothing to wait on


async def _indexed(conn: psycopg.AsyncConnection[object], users: list[str], since: float) -> None:
    """Wait until the measured users' lines all have a vector of the model."""
    while True:
        cursor = await conn.execute(
            b"SELECT count(*) FILTER (WHERE embedding IS NULL OR embedding_model <> %(model)s),"
            b" count(*) FROM archival_lines WHERE tenant_id = %(tenant)s"
            b" AND user_id = ANY(%(users)s)",
            {"model": MODEL, "tenant": TENANT, "users": users},
        )
        row = await cursor.fetchone()
        assert row is not None
        waiting, total = int(row[0]), int(row[1])  # type: ignore[call-overload]
        if not waiting:
            return
        print(
            f"  indexing the measured users' lines: {total - waiting}/{total} "
            f"({time.perf_counter() - since:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
        await asyncio.sleep(5)


def measured_users(users: int) -> list[str]:
    return [f"recall-{i:02d}" for i in range(min(MEASURED_USERS, users))]


async def fill(
    ctx: Context, stubs: Stubs, url: str, users: int, lines_per_user: int
) -> tuple[int, float]:
    """Returns (lines in the table, seconds taken)."""
    started = time.perf_counter()
    measured = measured_users(users)
    for i, user in enumerate(measured):
        rng = random.Random(ctx.seed * 1_000_003 + i)
        lines = ctx.corpus.lines(rng, lines_per_user)
        await write_archival(stubs, ctx.auth(user), lines)
        ctx.questions[user] = ctx.corpus.questions(rng, lines, QUESTIONS_PER_USER)
    ctx.recall_users = measured
    bulk = [f"bulk-{i:04d}" for i in range(users - len(measured))]
    progress = {"done": 0}

    async def load(part: list[str], worker: int) -> None:
        async with await psycopg.AsyncConnection.connect(url) as conn:
            await conn.execute(b"SET synchronous_commit = off")
            for start in range(0, len(part), 20):
                async with (
                    conn.transaction(),
                    conn.cursor() as cur,
                    cur.copy(
                        b"COPY archival_lines (tenant_id, user_id, scope, agent_id, line_number,"
                        b" ordinal, content) FROM STDIN"
                    ) as copy,
                ):
                    for user in part[start : start + 20]:
                        rng = random.Random(f"{ctx.seed}:{user}")
                        lines = ctx.corpus.lines(rng, lines_per_user)
                        await copy.write(
                            "".join(
                                f"{TENANT}\t{user}\tuser\t\t{n}\t{n}\t{line}\n"
                                for n, line in enumerate(lines, start=1)
                            ).encode()
                        )
                        await asyncio.sleep(0)
                async with conn.transaction():
                    await conn.execute(
                        _SEEN,
                        {"model": MODEL, "tenant": TENANT, "users": part[start : start + 20]},
                    )
                progress["done"] += len(part[start : start + 20])
                if worker == 0:
                    print(
                        f"  bulk load: {progress['done']}/{len(bulk)} users "
                        f"({time.perf_counter() - started:.0f} s)",
                        file=sys.stderr,
                        flush=True,
                    )

    await asyncio.gather(*(load(bulk[w::2], w) for w in range(2)))
    async with await psycopg.AsyncConnection.connect(url) as conn:
        async with (
            conn.cursor() as cur,
            cur.copy(
                b"COPY memories (tenant_id, id, scope, owner_id, key, source, value, created_by,"
                b" updated_by) FROM STDIN"
            ) as copy,
        ):
            for user in bulk:
                rng = random.Random(f"{ctx.seed}:{user}:memories")
                values = ctx.corpus.lines(rng, MEMORIES_PER_AGENT)
                await copy.write(
                    "".join(
                        f"{TENANT}\t{uuid.uuid4()}\tagent\tagent-of-{user}\tfact-{n}\tmanual"
                        f"\t{value}\t{user}\t{user}\n"
                        for n, value in enumerate(values)
                    ).encode()
                )
        await conn.commit()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(
            b"UPDATE memories SET embedding_model = %(model)s,"
            b" embedded_hash = hashtextextended(key || E'\\n' || value, 0)"
            b" WHERE tenant_id = %(tenant)s AND owner_id LIKE 'agent-of-bulk-%%'",
            {"model": MODEL, "tenant": TENANT},
        )
        await _indexed(conn, measured, started)
        await conn.execute(b"VACUUM (ANALYZE)")
        row = await (await conn.execute(b"SELECT count(*) FROM archival_lines")).fetchone()
    assert row is not None
    return int(row[0]), time.perf_counter() - started
