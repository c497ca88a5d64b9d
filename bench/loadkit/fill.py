"""Filling the database: measured users' archival blocks through WriteBlock, everyone
else's lines straight into ``archival_lines`` with COPY (they only make the table big),
and memories of as many other agents, so the tables look like a service in use."""

from __future__ import annotations

import asyncio
import random
import sys
import time
import uuid

import psycopg

from agentmemory.v1 import block_pb2, block_service_pb2, memory_pb2
from loadkit.workloads import TENANT, Context, Stubs

MEASURED_USERS = 8
QUESTIONS_PER_USER = 200
MEMORIES_PER_AGENT = 50


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
        await stubs.blocks.WriteBlock(
            block_service_pb2.WriteBlockRequest(
                label=block_pb2.BLOCK_LABEL_ARCHIVAL,
                scope=memory_pb2.SCOPE_USER,
                content="\n".join(lines),
            ),
            metadata=ctx.auth(user),
            timeout=300,
        )
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
        await conn.execute(b"VACUUM (ANALYZE)")
        row = await (await conn.execute(b"SELECT count(*) FROM archival_lines")).fetchone()
    assert row is not None
    return int(row[0]), time.perf_counter() - started
