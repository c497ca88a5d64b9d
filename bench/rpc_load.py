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
frequencies in the LoCoMo conversations (``MEMORY_LOCOMO``,
``bench/data/locomo-dev.json`` or ``../shared/data/locomo-dev.json``; pseudo-words
when there is none).

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
2. psycopg: the minimal SQL for the operation, one statement written for it in
   ``loadkit/workloads`` (never the service's own), through an async psycopg pool of
   one connection per client, set up as the service sets up its connections and
   open for that run only: the database's limit.
3. null gRPC: ``grpc.aio`` servers (as many processes as the service's workers, on
   the service's event loop) answering every method at once, driven by the same
   client code: the framework's limit.

An operation's limit is the lower throughput of the two; service / limit is the
share of it the service reaches. Server CPU (ms per call, all the service's
processes), the null server's CPU likewise (what grpc.aio and the event loop cost a
call: the service's CPU above it is its own) and peak RSS (the largest service
process) cover the window, and so do
the errors counted; the whole-run peak RSS covers every run after setup (the fill is
left out for every ``--workers`` value alike). PostgreSQL runs in separate processes
and is not counted. Client, service, PostgreSQL and null server share the machine's
cores: read each figure against its limit from the same run. Latency targets are
judged at one client, where latency is not queueing.

Each service worker's database pool holds up to the highest concurrency, and the
psycopg run as many besides: combinations that could pass PostgreSQL's 100
connections are refused.

Run (a few minutes at full size on two cores, setup included):

    python bench/rpc_load.py
    python bench/rpc_load.py --users 50 --duration 2 --workers 1
    python bench/rpc_load.py --ops upsert --concurrency 8 --profile upsert

``--profile OP`` records the service with py-spy during OP's measured window (after
the usual warm-up) at the concurrency nearest 8, with the first ``--workers`` value,
and prints the functions it spends its time in; that run's figures are shown, not
judged. When py-spy cannot record, a note says so and the run goes on. The scratch
folder, the servers and PostgreSQL are removed on exit, also on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import psycopg
from loadkit.driver import Client, RunResult, channel_to, drive, open_clients
from loadkit.fill import fill, indexer_drained, measured_users, waiting_for_the_indexer
from loadkit.harness import Run, create_keys, grpc_connect, new_context, progress, run_main
from loadkit.null_server import serve_null
from loadkit.processes import (
    Child,
    EmbeddedDatabase,
    ProcessSampler,
    start_null_server,
    start_service,
)
from loadkit.profile import ProfileError, Profiler
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
    Context,
    RecallLoad,
    Render,
    Stubs,
    Upsert,
    Workload,
    WriteBlockCas,
    baseline_pool,
)

OPS = ("upsert", "writeblock", "recall", "render")
PROFILE_CLIENTS = 8
# PostgreSQL's default max_connections, which the embedded server keeps, less what the
# benchmark's own setup connections and a service's start-up may hold besides the pools.
MAX_CONNECTIONS = 100
SPARE_CONNECTIONS = 8
# After setup, the indexer is given this long to embed what setup wrote.
DRAIN_SECONDS = 300.0


def _workloads(ops: Sequence[str], clients: int) -> dict[str, Workload]:
    make: dict[str, Callable[[], Workload]] = {
        "upsert": Upsert,
        "writeblock": lambda: WriteBlockCas(clients),
        "recall": RecallLoad,
        "render": Render,
    }
    return {op: make[op]() for op in ops}


@dataclass
class Extras:
    """What the report shows besides the tables: notes, and the profile of the run
    recorded under py-spy (operation, workers, clients), whose figures are not judged."""

    notes: list[str] = field(default_factory=list)
    profile: tuple[str, list[tuple[str, float]], list[tuple[str, float]]] | None = None
    profiled: tuple[str, int, int] | None = None


class Servers:
    """The service and the null server for one ``--workers`` value, and the peak RSS
    of any service process from ``start_sampling`` on."""

    def __init__(self, scratch: Path, workers: int, pool_size: int, archival_chars: int) -> None:
        self.workers = workers
        self.service = start_service(
            scratch, workers=workers, pool_size=pool_size, archival_chars=archival_chars
        )
        null: Child | None = None
        try:
            self.service.wait_ready(180)
            null = start_null_server(workers)
            null.wait_ready(60)
        except BaseException:
            if null is not None:
                null.stop()
            self.service.stop()
            raise
        self.null = null
        self.sampler = ProcessSampler(self.service.pids())
        print(
            f"service ({workers} workers) pids {self.service.pids()} on {self.service.address},"
            f" null server on {self.null.address}",
            file=sys.stderr,
            flush=True,
        )

    def worker_pids(self) -> list[int]:
        pids = self.service.pids()
        return pids[1:2] if self.workers > 1 else pids[:1]

    def start_sampling(self) -> None:
        self.sampler.start()

    def stop(self) -> int:
        self.sampler.stop()
        for child in (self.null, self.service):
            child.stop()
        return self.sampler.peak_per_process


async def _run_sql(
    w: Workload, ctx: Context, clients: int, run: int, url: str, args: argparse.Namespace
) -> RunResult:
    """The operation's minimal SQL through a pool of one connection per client, open
    for this run only."""
    pool = baseline_pool(url, clients)
    await pool.open(wait=True, timeout=60)
    try:
        return await drive(
            [Client(w.sql_op(ctx, pool, i, run)) for i in range(clients)],
            args.warmup,
            args.duration,
            [],
        )
    finally:
        await pool.close()


async def _run_rpc(
    w: Workload,
    op: str,
    mode: str,
    clients: int,
    run: int,
    ctx: Context,
    servers: Servers,
    args: argparse.Namespace,
    extras: Extras | None,
) -> RunResult:
    """Over gRPC, to the service or the null server; with ``extras`` the service is
    recorded under py-spy over the measured window and the profile kept there."""
    address = servers.service.address if mode == SERVICE else servers.null.address
    profilers: list[Profiler] = []

    def start_profiler() -> None:
        assert extras is not None
        try:
            profilers.append(Profiler(servers.worker_pids()[0], args.duration))
        except ProfileError as exc:
            _note(extras, f"Profile of {w.title}: none ({exc}); the run was measured as usual.")
            return
        extras.profiled = (op, servers.workers, clients)

    async with open_clients(clients, grpc_connect(w, ctx, address, run)) as drivers:
        sampled = (servers.service if mode == SERVICE else servers.null).pids()
        result = await drive(
            drivers,
            args.warmup,
            args.duration,
            sampled,
            start_profiler if extras is not None else None,
        )
    for profiler in profilers:
        assert extras is not None
        plural = "s" if servers.workers > 1 else ""
        title = f"{w.title}, {servers.workers} worker{plural}, {clients} clients, under py-spy"
        try:
            own, total = profiler.finish()
        except ProfileError as exc:
            _note(extras, f"Profile of {w.title}: none ({exc}).")
            continue
        extras.profile = (title, own, total)
    return result


def _note(extras: Extras, note: str) -> None:
    print(f"  note: {note}", file=sys.stderr, flush=True)
    extras.notes.append(note)


async def _setup(
    ctx: Context,
    workloads: dict[str, Workload],
    servers: Servers,
    url: str,
    args: argparse.Namespace,
    extras: Extras,
) -> None:
    """API keys, the fill, each workload's own rows, then fresh statistics."""
    users = measured_users(args.users) + [u for w in workloads.values() for u in w.users()]
    ctx.keys = await create_keys(url, users)
    setup = await channel_to(servers.service.address)
    try:
        stubs = Stubs.of(setup)
        lines, seconds = await fill(ctx, stubs, url, args.users, args.lines_per_user)
        extras.notes.append(
            f"Database: {lines:,} archival lines ({args.users:,} users x "
            f"{args.lines_per_user:,}; {len(ctx.recall_users)} measured users written "
            "through WriteBlock, the rest by COPY) and 50 memories for each other "
            f"user's agent, then VACUUM ANALYZE, in {seconds:.0f} s."
        )
        for w in workloads.values():
            await w.setup(ctx, stubs)
    finally:
        await setup.close()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(b"ANALYZE")  # statistics, as a database in use has


async def bench(
    args: argparse.Namespace, workloads: dict[str, Workload], scratch: Path, extras: Extras
) -> tuple[Results, int]:
    concurrencies: list[int] = args.concurrency
    pool_size = max(concurrencies)
    archival_chars = max(2_000_000, args.lines_per_user * 200)
    profiled_clients = _profiled_clients(concurrencies)
    ctx = new_context(args.seed)
    runs: dict[tuple[str, int, int, str], RunResult] = {}
    peak_rss = 0
    run = 0  # numbers every run of the benchmark: no run replays another's upsert keys
    database: EmbeddedDatabase | None = None
    servers: Servers | None = None
    try:
        for index, workers in enumerate(args.workers):
            servers = Servers(scratch, workers, pool_size, archival_chars)
            if database is None:
                database = EmbeddedDatabase(scratch)
                await _setup(ctx, workloads, servers, database.url, args, extras)
            if index == 0:
                left = await indexer_drained(database.url, DRAIN_SECONDS)
                extras.notes.append(
                    "Every write leaves its text to the service's background indexer (the "
                    "local model: some 30 ms of CPU per line or memory on two cores), which "
                    "works while later operations are measured, as in production. After "
                    f"setup it was given up to {DRAIN_SECONDS:.0f} s ({left:,} left)."
                )
            servers.start_sampling()
            for op, w in workloads.items():
                waiting = await waiting_for_the_indexer(database.url)
                if waiting:
                    _note(
                        extras,
                        f"{w.title} ({workers} workers): measured while the indexer had "
                        f"{waiting:,} lines and memories to embed.",
                    )
                for c in concurrencies:
                    modes = (SERVICE, PSYCOPG, NULL) if index == 0 else (SERVICE, NULL)
                    for mode in modes:
                        run += 1
                        if mode == PSYCOPG:
                            result = await _run_sql(w, ctx, c, run, database.url, args)
                        else:
                            profile = (
                                args.profile == op
                                and mode == SERVICE
                                and index == 0
                                and c == profiled_clients
                            )
                            result = await _run_rpc(
                                w, op, mode, c, run, ctx, servers, args, extras if profile else None
                            )
                        runs[(op, 0 if mode == PSYCOPG else workers, c, mode)] = result
                        progress(f"{op:<10} {workers}w {c:>2} clients {mode:<8}", result)
            peak_rss = max(peak_rss, servers.stop())
            servers = None
        return Results(runs), peak_rss
    finally:
        if servers is not None:
            servers.stop()
        if database is not None:
            database.close()


def _profiled_clients(concurrencies: Sequence[int]) -> int:
    """The client count whose service run ``--profile`` records: the nearest to 8."""
    return min(concurrencies, key=lambda x: abs(x - PROFILE_CLIENTS))


def _connections_needed(concurrencies: Sequence[int], workers: Sequence[int]) -> int:
    """The most PostgreSQL connections the pools may hold at once: each service worker's
    pool up to the highest concurrency, and with the first ``--workers`` value (when the
    psycopg runs are measured) the baseline's as many besides."""
    most = max(concurrencies)
    return max(workers[0] * most + most, max(workers) * most)


def _parse_list(text: str, allowed: Sequence[str] | None = None) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError("give at least one, comma-separated")
    if allowed is not None:
        unknown = sorted(set(items) - set(allowed))
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {unknown}; choose from {list(allowed)}")
    return items


def _numbers(text: str) -> list[int]:
    try:
        return sorted({int(x) for x in _parse_list(text)})
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: whole numbers, comma-separated") from None


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
    if args.serve_null is not None:
        if args.serve_null < 1:
            parser.error("--serve-null must be at least 1")
        serve_null(args.serve_null)
        return 0
    if args.users < 1 or args.lines_per_user < 1 or min(args.concurrency) < 1:
        parser.error("--users, --lines-per-user and --concurrency must be positive")
    if min(args.workers) < 1:
        parser.error("--workers must be at least 1")
    if args.duration <= 0 or args.warmup < 0:
        parser.error("--duration must be positive and --warmup not negative")
    if args.profile is not None and args.profile not in args.ops:
        parser.error(f"--profile {args.profile}: not among --ops {','.join(args.ops)}")
    needed = _connections_needed(args.concurrency, args.workers)
    if needed > MAX_CONNECTIONS - SPARE_CONNECTIONS:
        parser.error(
            f"--concurrency {max(args.concurrency)} with --workers {max(args.workers)} may hold "
            f"{needed} PostgreSQL connections at once, over the "
            f"{MAX_CONNECTIONS - SPARE_CONNECTIONS} the benchmark can use: lower either"
        )

    return run_main("rpc_load", lambda run: _report(args, run))


def _report(args: argparse.Namespace, run: Run) -> None:
    workloads = _workloads(args.ops, max(args.concurrency))
    extras = Extras()
    results, peak_rss = asyncio.run(bench(args, workloads, run.scratch, extras))
    print(f"\n## agent-memory RPC load ({time.strftime('%Y-%m-%d %H:%M')})\n")
    print(run.machine(f"grpcio {grpc.__version__}, psycopg {psycopg.__version__}"))
    print(
        f"Each run: {args.warmup:g} s warm-up, then {args.duration:g} s measured. Service: "
        f"`agent-memory serve --workers N` with API keys on, embedded PostgreSQL, DB pool "
        f"{max(args.concurrency)} per worker. Limit = the lower of psycopg running the "
        "operation's minimal SQL (one statement, one connection per client) and a null "
        "grpc.aio server with as many processes. Latency p50 / p95 / p99 in ms."
    )
    for note in extras.notes:
        print(note)
    for op in args.ops:
        print_table(op, workloads[op].title, args.workers, args.concurrency, results)
    print_targets(args.ops, args.workers, args.concurrency, results, peak_rss, extras.profiled)
    if extras.profile is not None:
        print_profile(*extras.profile)
    print(run.total())


if __name__ == "__main__":
    sys.exit(main())
