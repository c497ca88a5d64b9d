#!/usr/bin/env python3
"""How cost grows: UpsertMemory, the compare-and-set cycle, Recall and RenderPrompt as the
measured tenant's owners grow (rows per owner) and as the tenants multiply.

The service runs as in production (``agent-memory serve``, API keys on, the local
model) on an embedded PostgreSQL in a scratch folder. The database grows in steps,
and every operation is measured at each step, over gRPC and as its minimal SQL
through psycopg (the database's limit, written for the operation in
``loadkit/workloads``), at ``--clients`` concurrent clients:

* tenants: 1k, 10k and 100k other tenants (``--tenants``), each with 10 memories
  and 10 archival lines, while the measured tenant's owners hold 10k rows each;
* rows: then 100k and 1M rows (``--rows``) for each measured owner: the recall
  user's archival block, the upserting agent's memories and the rendered agent's
  memories (the render shows its 20 best and counts the rest).

Rows beyond what the setup writes through the API are bulk-loaded with COPY and
marked as seen by the model without a vector, as ``rpc_load`` does: embedding them
would take the machine for days, and they make the tables and indexes as large as a
service in use has them. One table: throughput (calls/s), p50 and p99 (ms) of the
service, and the service's share of the psycopg limit, per size and operation;
then the peak RSS of the service.

Run (some 20 minutes at full size on two cores, most of it the fill):

    python bench/growth.py
    python bench/growth.py --tenants 100,1000 --rows 20000 --duration 2
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import psycopg
from loadkit.driver import Client, RunResult, channel_to, drive, open_clients
from loadkit.harness import Run, create_keys, grpc_connect, new_context, run_main
from loadkit.processes import EmbeddedDatabase, ProcessSampler, start_service
from loadkit.workloads import (
    TENANT,
    Context,
    RecallLoad,
    Render,
    Stubs,
    Upsert,
    Workload,
    WriteBlockCas,
    baseline_pool,
)

from agent_memory.embed.local import MODEL
from agentmemory.v1 import block_pb2, block_service_pb2, memory_pb2

RECALL_USER = "recall-00"
WRITTEN_LINES = 1000  # the recall user's lines written through WriteBlock (questions)
QUESTIONS = 200
PER_TENANT = 10  # memories, and archival lines, of each other tenant
BATCH = 20_000


@dataclass
class Size:
    tenants: int
    rows: int

    @property
    def label(self) -> str:
        return f"{self.rows:,} rows/owner, {self.tenants:,} tenants"


def _ints(text: str) -> list[int]:
    return [int(part.replace("k", "000").replace("M", "000000")) for part in text.split(",")]


def _sizes(args: argparse.Namespace) -> list[Size]:
    first_rows = args.rows[0]
    steps = [Size(t, first_rows) for t in args.tenants]
    steps += [Size(args.tenants[-1], r) for r in args.rows[1:]]
    return steps


async def _copy(url: str, statement: bytes, rows: Sequence[str]) -> None:
    async with await psycopg.AsyncConnection.connect(url) as conn:
        await conn.execute(b"SET synchronous_commit = off")
        for start in range(0, len(rows), BATCH):
            async with conn.transaction(), conn.cursor() as cur, cur.copy(statement) as copy:
                await copy.write("".join(rows[start : start + BATCH]).encode())


_LINES = (
    b"COPY archival_lines (tenant_id, user_id, scope, agent_id, line_number, ordinal,"
    b" content, embedding_model) FROM STDIN"
)
_MEMORIES = (
    b"COPY memories (tenant_id, id, scope, owner_id, key, source, value, created_by,"
    b" updated_by, embedding_model) FROM STDIN"
)
_SEEN = (
    b"UPDATE {table} SET embedded_hash = {hashed} WHERE embedding_model = %(model)s"
    b" AND embedded_hash IS NULL"
)


class Filler:
    """Grows the database step by step: other tenants, then the measured owners."""

    def __init__(self, ctx: Context, url: str) -> None:
        self.ctx = ctx
        self.url = url
        self.tenants = 0
        self.rows = {"lines": WRITTEN_LINES, Upsert.owner: 0, Render.agent: Render.agent_memories}

    async def grow(self, size: Size) -> float:
        started = time.perf_counter()
        rng = random.Random(f"{self.ctx.seed}:{size.tenants}:{size.rows}")
        lines: list[str] = []
        memories: list[str] = []
        for t in range(self.tenants, size.tenants):
            tenant = f"tenant-{t:06d}"
            for n, text in enumerate(self.ctx.corpus.lines(rng, PER_TENANT), start=1):
                lines.append(f"{tenant}\tuser-1\tuser\t\t{n}\t{n}\t{text}\t{MODEL}\n")
                memories.append(
                    f"{tenant}\t{uuid.uuid4()}\tagent\tagent-1\tfact-{n}\tmanual\t{text}"
                    f"\tuser-1\tuser-1\t{MODEL}\n"
                )
        self.tenants = max(self.tenants, size.tenants)
        have = self.rows["lines"]
        for n, text in enumerate(self.ctx.corpus.lines(rng, size.rows - have), start=have + 1):
            lines.append(f"{TENANT}\t{RECALL_USER}\tuser\t\t{n}\t{n}\t{text}\t{MODEL}\n")
        self.rows["lines"] = max(have, size.rows)
        for owner in (Upsert.owner, Render.agent):
            have = self.rows[owner]
            values = self.ctx.corpus.lines(rng, max(size.rows - have, 0))
            for n, text in enumerate(values, start=have):
                memories.append(
                    f"{TENANT}\t{uuid.uuid4()}\tagent\t{owner}\tbulk-{n:07d}\tmanual\t{text}"
                    f"\tbulk\tbulk\t{MODEL}\n"
                )
            self.rows[owner] = max(have, size.rows)
        await asyncio.gather(_copy(self.url, _LINES, lines), _copy(self.url, _MEMORIES, memories))
        async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as conn:
            # Seen by the model without a vector: the indexer passes them by.
            for table, hashed in (
                (b"archival_lines", b"hashtextextended(content, 0)"),
                (b"memories", b"hashtextextended(key || E'\\n' || value, 0)"),
            ):
                await conn.execute(
                    _SEEN.replace(b"{table}", table).replace(b"{hashed}", hashed),
                    {"model": MODEL},
                )
            await conn.execute(b"VACUUM (ANALYZE)")
        return time.perf_counter() - started


async def setup_workloads(
    ctx: Context, url: str, address: str, workloads: dict[str, Workload]
) -> None:
    users = [RECALL_USER] + [u for w in workloads.values() for u in w.users()]
    ctx.keys = await create_keys(url, users)
    channel = await channel_to(address)
    try:
        stubs = Stubs.of(channel)
        rng = random.Random(ctx.seed)
        lines = ctx.corpus.lines(rng, WRITTEN_LINES)
        await stubs.blocks.WriteBlock(
            block_service_pb2.WriteBlockRequest(
                label=block_pb2.BLOCK_LABEL_ARCHIVAL,
                scope=memory_pb2.SCOPE_USER,
                content="\n".join(lines),
            ),
            metadata=ctx.auth(RECALL_USER),
            timeout=300,
        )
        ctx.questions[RECALL_USER] = ctx.corpus.questions(rng, lines, QUESTIONS)
        ctx.recall_users = [RECALL_USER]
        for w in workloads.values():
            await w.setup(ctx, stubs)
    finally:
        await channel.close()


async def measure(
    w: Workload,
    ctx: Context,
    address: str,
    url: str,
    run: int,
    args: argparse.Namespace,
    sampled: list[int],
) -> tuple[RunResult, RunResult]:
    async with open_clients(args.clients, grpc_connect(w, ctx, address, run)) as drivers:
        service = await drive(drivers, args.warmup, args.duration, sampled)
    pool = baseline_pool(url, args.clients)
    await pool.open(wait=True, timeout=60)
    try:
        clients = [Client(w.sql_op(ctx, pool, i, run + 1)) for i in range(args.clients)]
        sql = await drive(clients, args.warmup, args.duration, [])
    finally:
        await pool.close()
    return service, sql


def _row(size: Size, title: str, service: RunResult, sql: RunResult) -> str:
    share = service.throughput / sql.throughput if sql.throughput else float("nan")
    errors = f"  {service.errors} errors" if service.errors else ""
    return (
        f"| {size.label:<34} | {title:<44} | {service.throughput:>8.1f} | "
        f"{service.ms(0.5):>7.1f} | {service.ms(0.99):>7.1f} | {sql.throughput:>8.1f} | "
        f"{share:>6.2f} |{errors}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tenants", type=_ints, default=_ints("1k,10k,100k"))
    parser.add_argument("--rows", type=_ints, default=_ints("10k,100k,1M"))
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    def body(run: Run) -> None:
        asyncio.run(_bench(run, args))

    return run_main("growth", body)


async def _bench(run: Run, args: argparse.Namespace) -> None:
    ctx = new_context(args.seed)
    workloads: dict[str, Workload] = {
        "upsert": Upsert(),
        "writeblock": WriteBlockCas(args.clients),
        "recall": RecallLoad(),
        "render": Render(),
    }
    archival_chars = max(2_000_000, WRITTEN_LINES * 200)
    service = start_service(
        run.scratch, workers=1, pool_size=args.clients, archival_chars=archival_chars
    )
    database: EmbeddedDatabase | None = None
    rows: list[str] = []
    try:
        address = service.wait_ready(180)
        database = EmbeddedDatabase(run.scratch)
        await setup_workloads(ctx, database.url, address, workloads)
        filler = Filler(ctx, database.url)
        sampler = ProcessSampler(service.pids())
        sampler.start()
        number = 0
        for size in _sizes(args):
            seconds = await filler.grow(size)
            print(f"{size.label}: filled in {seconds:.0f} s", file=sys.stderr, flush=True)
            for w in workloads.values():
                number += 2
                measured = await measure(
                    w, ctx, address, database.url, number, args, service.pids()
                )
                rows.append(_row(size, w.title, *measured))
                print(rows[-1], file=sys.stderr, flush=True)
        sampler.stop()
        peak = sampler.peak_per_process
    finally:
        service.stop()
        if database is not None:
            database.close()
    print(
        f"\nHow cost grows ({args.clients} clients, {args.duration:g} s windows; psycopg: "
        "the operation's minimal SQL, the database's limit; share: service / psycopg)\n"
    )
    print(
        f"| {'size':<34} | {'operation':<44} | {'calls/s':>8} | {'p50 ms':>7} | {'p99 ms':>7} |"
        f" {'psycopg':>8} | {'share':>6} |"
    )
    print(f"|{'-' * 36}|{'-' * 46}|{'-' * 10}|{'-' * 9}|{'-' * 9}|{'-' * 10}|{'-' * 8}|")
    print("\n".join(rows))
    print(f"\nPeak RSS of the service process: {peak / 2**20:.0f} MiB")


if __name__ == "__main__":
    sys.exit(main())
