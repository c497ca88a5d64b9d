#!/usr/bin/env python3
"""RPC load: agent-memory's throughput and latency under concurrent gRPC clients, each
figure printed beside the limit measured in the same run.

The service runs as in production (``agent-memory serve`` with API keys on) as a
subprocess on an embedded PostgreSQL in a scratch folder, on loopback, with a
database pool as large as the highest concurrency, once per ``--workers`` value
(default 1 and 2 processes). The database is filled first: ``--users`` users
(default 1,000) with ``--lines-per-user`` archival lines each (default 1,000: one
million lines). Up to 8 measured users get their archival block through
WriteBlock; the other users' lines are bulk-loaded straight into
``archival_lines``. Lines are 60-100 characters of English words drawn with their
frequencies in the LoCoMo conversations (``../shared/data/locomo-dev.json``;
pseudo-words when it is missing).

Operations (``--ops``), each at every concurrency (``--concurrency``, default 1,8,32):

* ``upsert``: UpsertMemory of an agent memory; distinct keys per client, every 4th
  call re-upserts one of the client's recent keys (an update in place).
* ``writeblock``: a compare-and-set cycle, each client on its own core block:
  GetBlock, then WriteBlock with ``expected_updated_at``.
* ``recall``: Recall (streamed, limit 10) of a short question over one measured
  user's block while the table holds every user's lines; one question in five
  has a typo (the trigram path).
* ``render``: RenderPrompt for an agent with memory enabled (20 memories), a
  workspace with 30 memories, a user and an agent core block.

Each (operation, concurrency) runs three ways, each a warm-up (``--warmup``) and a
window of ``--duration`` seconds whose completed calls are the sample:

1. service: over real gRPC with ``grpc.aio``, one channel and one connection per
   simulated client, as separate orchestrator processes would have; every client
   runs in this process on one event loop.
2. psycopg: the minimal SQL for the operation, one statement (``loadkit/workloads``),
   through an async psycopg pool as large as the clients: the database's limit.
3. null gRPC: ``grpc.aio`` servers (as many processes as the service's workers)
   answering every method at once, driven by the same client code: the framework's
   limit.

An operation's limit is the lower throughput of the two; service / limit is the
share of it the service reaches. Server CPU (ms per call, all the service's
processes) and peak RSS (the largest service process) cover the window; PostgreSQL
runs in separate processes and is not counted. Client, service, PostgreSQL and null
server share the machine's cores: read each figure against its limit from the same
run. Latency targets are judged at one client, where latency is not queueing.

Run (a few minutes at full size on two cores, setup included):

    python bench/rpc_load.py
    python bench/rpc_load.py --users 50 --duration 2 --workers 1
    python bench/rpc_load.py --ops upsert --concurrency 8 --profile upsert

``--profile OP`` records the service with py-spy during OP's run at 8 clients (one
worker) and prints the functions it spends its time in. The scratch folder, the
servers and PostgreSQL are removed on exit, also on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType

import grpc
import psycopg
from loadkit.corpus import LOCOMO, Corpus
from loadkit.driver import Client, RunResult, channel_to, drive
from loadkit.fill import fill, measured_users
from loadkit.null_server import serve_null
from loadkit.processes import (
    EmbeddedDatabase,
    ProcessSampler,
    start_null_server,
    start_service,
)
from loadkit.profile import Profiler
from loadkit.report import (
    NULL,
    PSYCOPG,
    SERVICE,
    Results,
    print_profile,
    print_table,
    print_targets,
)
from loadkit.workloads import (
    RECALL_AGENT,
    RECALL_LIMIT,
    RPC_TIMEOUT,
    SETTINGS,
    TENANT,
    Context,
    Pool,
    RecallLoad,
    Render,
    Stubs,
    Upsert,
    Workload,
    WriteBlockCas,
)
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from agent_memory.service.keys import ApiKeys
from agent_memory.store.database import Database
from agentmemory.v1 import recall_service_pb2

OPS = ("upsert", "writeblock", "recall", "render")
PROFILE_CLIENTS = 8


def _workloads(ops: Sequence[str], clients: int) -> dict[str, Workload]:
    make: dict[str, Callable[[], Workload]] = {
        "upsert": Upsert,
        "writeblock": lambda: WriteBlockCas(clients),
        "recall": RecallLoad,
        "render": Render,
    }
    return {op: make[op]() for op in ops}


async def _create_keys(url: str, users: Sequence[str]) -> dict[str, str]:
    db = Database(url, pool_size=1)
    try:
        keys = ApiKeys(db)
        return {u: (await keys.create(tenant_id=TENANT, user_id=u)).key for u in users}
    finally:
        await db.close()


class Servers:
    """The service and the null server for one ``--workers`` value, and the peak RSS
    of any service process while they ran."""

    def __init__(self, scratch: Path, workers: int, pool_size: int, archival_chars: int) -> None:
        self.workers = workers
        self.service = start_service(
            scratch, workers=workers, pool_size=pool_size, archival_chars=archival_chars
        )
        self.service.wait_ready(180)
        self.null = start_null_server(workers)
        self.null.wait_ready(60)
        self.sampler = ProcessSampler(self.service.pids()).__enter__()
        print(
            f"service ({workers} workers) pids {self.service.pids()} on {self.service.address},"
            f" null server on {self.null.address}",
            file=sys.stderr,
            flush=True,
        )

    def worker_pids(self) -> list[int]:
        pids = self.service.pids()
        return pids[1:2] if self.workers > 1 else pids[:1]

    def stop(self) -> int:
        self.sampler.__exit__(None, None, None)
        for child in (self.null, self.service):
            child.stop()
        return self.sampler.peak_per_process


async def _run(
    w: Workload,
    op: str,
    mode: str,
    clients: int,
    run: int,
    ctx: Context,
    pool: Pool,
    servers: Servers,
    args: argparse.Namespace,
    profile: bool,
) -> RunResult:
    if mode == PSYCOPG:
        return await drive(
            [Client(w.sql_op(ctx, pool, i, run)) for i in range(clients)],
            args.warmup,
            args.duration,
            [],
        )
    address = servers.service.address if mode == SERVICE else servers.null.address
    drivers: list[Client] = []
    for i in range(clients):
        channel = await channel_to(address)
        drivers.append(Client(w.rpc_op(ctx, Stubs.of(channel), i, run), channel.close))
    profiler = None
    if profile:
        await asyncio.sleep(args.warmup)
        profiler = Profiler(servers.worker_pids()[0], args.duration)
    try:
        sampled = servers.service.pids() if mode == SERVICE else []
        result = await drive(drivers, 0 if profile else args.warmup, args.duration, sampled)
    finally:
        for d in drivers:
            if d.close is not None:
                await d.close()
    if profiler is not None:
        own, total = profiler.finish()
        print_profile(f"{w.title}, {clients} clients, service under py-spy", own, total)
    return result


async def _check_recall(ctx: Context, stubs: Stubs, pool: Pool) -> int:
    """The database's limit does the service's work: the same question gives the same
    lines in the same order."""
    load = RecallLoad()
    user = ctx.recall_users[0]
    questions = ctx.questions[user][:5]
    for question in questions:
        got = [
            m.line_number
            async for m in stubs.recall.Recall(
                recall_service_pb2.RecallRequest(
                    query=question, agent_id=RECALL_AGENT, limit=RECALL_LIMIT
                ),
                metadata=ctx.auth(user),
                timeout=RPC_TIMEOUT,
            )
        ]
        async with pool.connection() as conn:
            rows = await (await conn.execute(load.SQL, load.params(user, question))).fetchall()
        if got != [r["line_number"] for r in rows] or not got:
            raise RuntimeError(f"Recall and its SQL disagree on {question!r}: {got} vs {rows}")
    return len(questions)


async def bench(args: argparse.Namespace, scratch: Path, notes: list[str]) -> tuple[Results, int]:
    concurrencies: list[int] = args.concurrency
    pool_size = max(concurrencies)
    archival_chars = max(2_000_000, args.lines_per_user * 200)
    ctx = Context(corpus=Corpus.load(LOCOMO), seed=args.seed, values=[])
    rng = random.Random(args.seed)
    ctx.values = [" ".join(ctx.corpus.lines(rng, rng.randint(1, 2))) for _ in range(256)]
    workloads = _workloads(args.ops, pool_size)
    runs: dict[tuple[str, int, int, str], RunResult] = {}
    peak_rss = 0
    database: EmbeddedDatabase | None = None
    pool: Pool | None = None
    servers: Servers | None = None
    try:
        for index, workers in enumerate(args.workers):
            servers = Servers(scratch, workers, pool_size, archival_chars)
            if database is None:
                database = EmbeddedDatabase(scratch / "pgdata")
                users = measured_users(args.users) + [
                    u for w in workloads.values() for u in w.users()
                ]
                ctx.keys = await _create_keys(database.url, users)
                pool = AsyncConnectionPool(
                    database.url,
                    min_size=pool_size,
                    max_size=pool_size,
                    open=False,
                    kwargs={  # the service's connection settings: prepared, planned once
                        "autocommit": True,
                        "row_factory": dict_row,
                        "prepare_threshold": 0,
                        "options": f"-c statement_timeout={SETTINGS.db_statement_timeout_ms}"
                        " -c plan_cache_mode=force_generic_plan",
                        "application_name": "rpc-load-baseline",
                    },
                )
                await pool.open(wait=True, timeout=60)
                setup = await channel_to(servers.service.address)
                stubs = Stubs.of(setup)
                lines, seconds = await fill(
                    ctx, stubs, database.url, args.users, args.lines_per_user
                )
                notes.append(
                    f"Database: {lines:,} archival lines ({args.users:,} users x "
                    f"{args.lines_per_user:,}; {len(ctx.recall_users)} measured users written "
                    "through WriteBlock, the rest by COPY) and 50 memories for each other "
                    f"user's agent, then VACUUM ANALYZE, in {seconds:.0f} s."
                )
                for w in workloads.values():
                    await w.setup(ctx, stubs)
                async with pool.connection() as conn:  # statistics, as a database in use has
                    await conn.execute("ANALYZE")
                if "recall" in workloads:
                    checked = await _check_recall(ctx, stubs, pool)
                    notes.append(
                        f"Recall check: the service and the ranking statement return the same "
                        f"lines, in the same order, for {checked} questions."
                    )
                await setup.close()
            assert pool is not None
            run = 0
            for op, w in workloads.items():
                for c in concurrencies:
                    modes = (SERVICE, PSYCOPG, NULL) if index == 0 else (SERVICE, NULL)
                    for mode in modes:
                        run += 1
                        profile = (
                            args.profile == op
                            and mode == SERVICE
                            and index == 0
                            and c == _profiled_clients(concurrencies)
                        )
                        result = await _run(w, op, mode, c, run, ctx, pool, servers, args, profile)
                        runs[(op, 0 if mode == PSYCOPG else workers, c, mode)] = result
                        print(
                            f"  {op:<10} {workers}w {c:>2} clients {mode:<8} "
                            f"{result.throughput:8,.0f} ops/s  p99 {result.ms(0.99):7.1f} ms"
                            f"  errors {result.errors}",
                            file=sys.stderr,
                            flush=True,
                        )
            peak_rss = max(peak_rss, servers.stop())
            servers = None
        return Results(runs), peak_rss
    finally:
        if servers is not None:
            servers.stop()
        if pool is not None:
            await pool.close()
        if database is not None:
            database.close()


def _profiled_clients(concurrencies: Sequence[int]) -> int:
    """The client count whose service run ``--profile`` records: the nearest to 8."""
    return min(concurrencies, key=lambda x: abs(x - PROFILE_CLIENTS))


def _parse_list(text: str, allowed: Sequence[str] | None = None) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if allowed is not None:
        unknown = sorted(set(items) - set(allowed))
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {unknown}; choose from {list(allowed)}")
    return items


def _numbers(text: str) -> list[int]:
    return sorted({int(x) for x in _parse_list(text)})


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=5.0, help="seconds measured per run")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds before measuring")
    parser.add_argument(
        "--concurrency",
        type=_numbers,
        default=[1, 8, 32],
        help="simulated clients, comma-separated (default 1,8,32)",
    )
    parser.add_argument(
        "--workers", type=_numbers, default=[1, 2], help="service processes (default 1,2)"
    )
    parser.add_argument("--users", type=int, default=1000, help="users with archival lines")
    parser.add_argument("--lines-per-user", type=int, default=1000, help="archival lines each")
    parser.add_argument(
        "--ops",
        type=lambda t: _parse_list(t, OPS),
        default=list(OPS),
        help="comma-separated: upsert,writeblock,recall,render (default all)",
    )
    parser.add_argument("--profile", choices=OPS, help="py-spy the service during this op")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--serve-null", type=int, metavar="PROCESSES", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_null:
        serve_null(args.serve_null)
        return 0
    if args.users < 1 or args.lines_per_user < 1 or min(args.concurrency) < 1:
        parser.error("--users, --lines-per-user and --concurrency must be positive")
    if min(args.workers) < 1:
        parser.error("--workers must be at least 1")

    signal.signal(signal.SIGTERM, _interrupt)
    started = time.perf_counter()
    load_before = os.getloadavg()
    scratch = Path(tempfile.mkdtemp(prefix="rpc-load-"))
    try:
        notes: list[str] = []
        results, peak_rss = asyncio.run(bench(args, scratch, notes))
        print(f"\n## agent-memory RPC load ({time.strftime('%Y-%m-%d %H:%M')})\n")
        print(
            f"Machine: {os.cpu_count()} cores, load average {load_before[0]:.1f} at start, "
            f"{os.getloadavg()[0]:.1f} at end (other work shares it). Python "
            f"{sys.version.split()[0]}, grpcio {grpc.__version__}, psycopg {psycopg.__version__}."
        )
        print(
            f"Each run: {args.warmup:g} s warm-up, then {args.duration:g} s measured. Service: "
            f"`agent-memory serve --workers N` with API keys on, embedded PostgreSQL, DB pool "
            f"{max(args.concurrency)} per worker. Limit = the lower of psycopg running the "
            "operation's minimal SQL (one statement) and a null grpc.aio server with as many "
            "processes. Latency p50 / p95 / p99 in ms."
        )
        for note in notes:
            print(note)
        workloads = _workloads(args.ops, max(args.concurrency))
        for op in args.ops:
            print_table(op, workloads[op].title, args.workers, args.concurrency, results)
        profiled = (args.profile, _profiled_clients(args.concurrency)) if args.profile else None
        print_targets(args.ops, args.workers, args.concurrency, results, peak_rss, profiled)
        print(f"\nTotal time: {time.perf_counter() - started:.0f} s")
        return 0
    except KeyboardInterrupt:
        print(
            "\ninterrupted: stopping the servers and removing the scratch folder", file=sys.stderr
        )
        return 130
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
