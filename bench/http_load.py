#!/usr/bin/env python3
"""HTTP load: what serving HTTP/JSON (``--http-listen``) costs the gRPC path, and what
the HTTP path costs over the same calls on gRPC and over a do-nothing HTTP server,
every figure beside its baseline measured in the same run.

The service runs as in production (``agent-memory serve`` with API keys on, one
worker) as a subprocess on an embedded PostgreSQL in a scratch folder, on loopback,
with a database pool of one connection per client. The database is filled first as
``rpc_load.py`` fills it, smaller: ``--users`` users (default 1,000) with
``--lines-per-user`` archival lines each (default 20) and 50 memories for each one's
agent. Clients are simulated in this process on one event loop (``--concurrency``,
default 8): over gRPC one ``grpc.aio`` channel and connection each, as rpc_load's;
over HTTP one keep-alive ``httpx.AsyncClient`` holding one connection each.

1. gRPC with and without HTTP. The same gRPC workloads as rpc_load's (UpsertMemory,
   RenderPrompt) against ``agent-memory serve`` started without ``--http-listen`` and
   with ``--http-listen 127.0.0.1:0``, on the same database, in ``--rounds`` rounds
   (default 4). Each round starts each variant afresh and measures it, the order
   alternating (A B, B A, A B, ...) so that drift falls on both alike; the ratio
   with / without is taken per round and its spread shown beside how much each
   variant's own rounds differ. The baseline is the same service without HTTP, not
   a limit: the ratio is what serving HTTP costs the gRPC path.
2. HTTP over its limit. UpsertMemory and ListMemories (an agent with 20 memories,
   the default page) over HTTP/JSON to the service started with ``--http-listen``,
   against (a) the same calls over gRPC to that server and (b) a null HTTP server:
   a minimal Starlette app on uvicorn (the service's uvicorn settings) in its own
   process answering every request with the bytes the service answered the same
   route with, hit by the same client: the HTTP path's limit. The three take turns
   within each round.

Each run is a warm-up (``--warmup``) and a window of ``--duration`` seconds whose
completed calls are the sample. Server CPU (ms per call) and peak RSS are the
server's process over the window; PostgreSQL runs in separate processes and is not
counted. Client, servers and PostgreSQL share the machine's cores.

Run (about two and a half minutes on two cores, setup included):

    python bench/http_load.py
    python bench/http_load.py --rounds 5 --duration 5 --concurrency 32

The scratch folder, the servers and PostgreSQL are removed on exit, also on Ctrl-C or
SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import httpx
import psycopg
import starlette
import uvicorn
from loadkit.driver import Client, Connect, Op, RunResult, channel_to, drive, open_clients
from loadkit.fill import fill, measured_users
from loadkit.harness import Run, create_keys, grpc_connect, new_context, progress, run_main
from loadkit.processes import BENCH, Child, EmbeddedDatabase, ProcessSampler, start_service
from loadkit.workloads import RPC_TIMEOUT, Context, Render, Stubs, Upsert
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agent_memory.http.app import http_socket
from agentmemory.v1 import memory_pb2, memory_service_pb2

WITHOUT, WITH = "without", "with"
HTTP, GRPC, NULL_HTTP = "http", "grpc", "null"
SERVER_NAMES = {WITHOUT: "without --http-listen", WITH: "with --http-listen 127.0.0.1:0"}
PATH_NAMES = {
    HTTP: "HTTP/JSON, service",
    GRPC: "gRPC, service",
    NULL_HTTP: "HTTP/JSON, null Starlette",
}
JSON_TYPE = "application/json"


class HttpUpsert(Upsert):
    """rpc_load's UpsertMemory workload, also over HTTP/JSON: the same keys and values,
    ``POST /v1/agents/{agent}/memories``."""

    def http_op(self, ctx: Context, client: httpx.AsyncClient, index: int, run: int) -> Op:
        next_key = self._next(ctx, index, run)
        path = f"/v1/agents/{self.owner}/memories"

        async def op() -> int:
            key, value = next_key()
            response = await client.post(
                path, json={"key": key, "value": value, "source": "MEMORY_SOURCE_MANUAL"}
            )
            response.raise_for_status()
            return 0

        return op


class ListLoad:
    """ListMemories of an agent with 20 memories (one page at the default size)."""

    title = "ListMemories"
    user = "load-list"
    agent = "list-agent"
    memories = 20

    def users(self) -> list[str]:
        return [self.user]

    async def setup(self, ctx: Context, stubs: Stubs) -> None:
        owner = memory_pb2.MemoryOwner(agent_id=self.agent)
        for i in range(self.memories):
            await stubs.memory.UpsertMemory(
                memory_service_pb2.UpsertMemoryRequest(
                    owner=owner,
                    key=f"fact-{i:02d}",
                    value=ctx.values[(i * 11) % len(ctx.values)],
                    importance=(i * 37) % 101,
                    source=memory_pb2.MEMORY_SOURCE_MANUAL,
                ),
                metadata=ctx.auth(self.user),
                timeout=RPC_TIMEOUT,
            )

    def rpc_op(self, ctx: Context, stubs: Stubs, index: int, run: int) -> Op:
        request = memory_service_pb2.ListMemoriesRequest(
            owner=memory_pb2.MemoryOwner(agent_id=self.agent)
        )
        metadata = ctx.auth(self.user)

        async def op() -> int:
            await stubs.memory.ListMemories(request, metadata=metadata, timeout=RPC_TIMEOUT)
            return 0

        return op

    def http_op(self, ctx: Context, client: httpx.AsyncClient, index: int, run: int) -> Op:
        path = f"/v1/agents/{self.agent}/memories"

        async def op() -> int:
            response = await client.get(path)
            response.raise_for_status()
            return 0

        return op


GrpcLoad = HttpUpsert | Render | ListLoad
HttpLoad = HttpUpsert | ListLoad


# The null HTTP server ------------------------------------------------------------------


def serve_null_http(post_body: Path, get_body: Path) -> None:
    """Serve until SIGTERM: every ``/v1/...`` POST answered with the bytes of
    ``post_body``, every GET with those of ``get_body``, as JSON, after reading the
    request; prints ``null HTTP server serving on 127.0.0.1:PORT`` once it listens."""
    bodies = {"POST": post_body.read_bytes(), "GET": get_body.read_bytes()}

    async def answer(request: Request) -> Response:
        await request.body()
        return Response(bodies[request.method], media_type=JSON_TYPE)

    app = Starlette(routes=[Route("/v1/{rest:path}", answer, methods=["GET", "POST"])])
    # The service's own socket set-up: a TCP socket (asyncio turns Nagle off on its
    # connections only then), listening before the line that says so.
    sock = http_socket("127.0.0.1:0")
    sock.listen(2048)
    # As the service's HttpServer configures uvicorn, on the asyncio loop it serves on.
    config = uvicorn.Config(
        app, loop="asyncio", lifespan="off", log_config=None, access_log=False, server_header=False
    )
    server = uvicorn.Server(config)
    gc.collect()
    gc.freeze()
    print(f"null HTTP server serving on 127.0.0.1:{sock.getsockname()[1]}", flush=True)
    server.run(sockets=[sock])


def start_null_http(post_body: Path, get_body: Path) -> Child:
    argv = [sys.executable, str(BENCH / "http_load.py"), "--serve-null-http"]
    argv += [str(post_body), str(get_body)]
    return Child("null HTTP server", argv, dict(os.environ), "serving on")


# Driving -------------------------------------------------------------------------------


@dataclass
class Runs:
    """Every measured run, one per round, by (operation, server or path), and the CPU
    seconds this process (the clients) used in each run's window."""

    runs: dict[tuple[str, str], list[RunResult]] = field(default_factory=dict)
    client_cpu: dict[tuple[str, str], list[float]] = field(default_factory=dict)

    def add(self, op: str, variant: str, measured: tuple[RunResult, float]) -> RunResult:
        self.runs.setdefault((op, variant), []).append(measured[0])
        self.client_cpu.setdefault((op, variant), []).append(measured[1])
        return measured[0]

    def of(self, op: str, variant: str) -> list[RunResult]:
        return self.runs[(op, variant)]

    def client_ms(self, op: str, variant: str) -> float:
        """The clients' CPU ms per completed call, over every round."""
        calls = sum(len(r.latencies) for r in self.of(op, variant))
        cpu = sum(self.client_cpu[(op, variant)])
        return 1000 * cpu / calls if calls else float("nan")


def _http_connect(w: HttpLoad, ctx: Context, address: str, run: int) -> Connect:
    """Client ``i`` of a run: a keep-alive ``httpx.AsyncClient`` of one connection,
    sending the workload's user's API key, calling ``w``."""

    async def connect(i: int) -> Client:
        client = httpx.AsyncClient(
            base_url=f"http://{address}",
            headers={"authorization": f"Bearer {ctx.keys[w.user]}"},
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            timeout=RPC_TIMEOUT,
        )
        return Client(w.http_op(ctx, client, i, run), client.aclose)

    return connect


async def _run(
    connect: Connect, sampled: list[int], args: argparse.Namespace
) -> tuple[RunResult, float]:
    """One run of ``--concurrency`` clients opened by ``connect``, and the CPU this
    process used from the window's start until the clients stopped (the window and the
    calls in flight at its end)."""
    async with open_clients(args.concurrency, connect) as drivers:
        clients = ProcessSampler([os.getpid()])
        try:
            result = await drive(drivers, args.warmup, args.duration, sampled, clients.start)
        finally:
            clients.stop()
    return result, clients.cpu_seconds


def _progress(label: str, result: RunResult) -> None:
    progress(f"{label:<44}", result)


class Service:
    """``agent-memory serve`` with one worker, with or without ``--http-listen``."""

    def __init__(self, scratch: Path, variant: str, pool_size: int) -> None:
        http_listen = "127.0.0.1:0" if variant == WITH else None
        self.child = start_service(
            scratch,
            workers=1,
            pool_size=pool_size,
            archival_chars=2_000_000,
            http_listen=http_listen,
        )
        try:
            self.address = self.child.wait_ready(180)
            self.http_address = self.child.logged("http on", 30) if http_listen else ""
        except BaseException:
            self.child.stop()
            raise
        self.pids = self.child.pids()[:1]

    def stop(self) -> None:
        self.child.stop()


@dataclass
class Setup:
    """What setup learnt: the bodies the service answered over HTTP (the null server
    answers them), and notes for the report."""

    post_body: Path
    get_body: Path
    notes: list[str] = field(default_factory=list)


async def _setup(
    ctx: Context,
    service: Service,
    url: str,
    scratch: Path,
    upsert: HttpUpsert,
    listing: ListLoad,
    render: Render,
    args: argparse.Namespace,
) -> Setup:
    """API keys, the fill, the workloads' own rows, fresh statistics, and one answer of
    each measured route over HTTP and gRPC."""
    users = measured_users(args.users) + [u for w in (upsert, listing, render) for u in w.users()]
    ctx.keys = await create_keys(url, users)
    channel = await channel_to(service.address)
    try:
        stubs = Stubs.of(channel)
        lines, seconds = await fill(ctx, stubs, url, args.users, args.lines_per_user)
        for w in (upsert, listing, render):
            await w.setup(ctx, stubs)
        owner = memory_pb2.MemoryOwner(agent_id=upsert.owner)
        upserted = await stubs.memory.UpsertMemory(
            memory_service_pb2.UpsertMemoryRequest(
                owner=owner, key="setup-grpc", value=ctx.values[0]
            ),
            metadata=ctx.auth(upsert.user),
            timeout=RPC_TIMEOUT,
        )
        listed = await stubs.memory.ListMemories(
            memory_service_pb2.ListMemoriesRequest(
                owner=memory_pb2.MemoryOwner(agent_id=listing.agent)
            ),
            metadata=ctx.auth(listing.user),
            timeout=RPC_TIMEOUT,
        )
    finally:
        await channel.close()
    async with httpx.AsyncClient(base_url=f"http://{service.http_address}") as client:
        posted = await client.post(
            f"/v1/agents/{upsert.owner}/memories",
            json={"key": "setup-http", "value": ctx.values[0], "source": "MEMORY_SOURCE_MANUAL"},
            headers={"authorization": f"Bearer {ctx.keys[upsert.user]}"},
        )
        got = await client.get(
            f"/v1/agents/{listing.agent}/memories",
            headers={"authorization": f"Bearer {ctx.keys[listing.user]}"},
        )
    for response in (posted, got):
        response.raise_for_status()
    if len(json.loads(got.content).get("memories", [])) != listing.memories:
        raise RuntimeError(f"list setup is incomplete: {got.text[:300]}")
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(b"VACUUM (ANALYZE)")
        await conn.execute(b"CHECKPOINT")
    post_body, get_body = scratch / "upsert.json", scratch / "list.json"
    post_body.write_bytes(posted.content)
    get_body.write_bytes(got.content)
    return Setup(
        post_body=post_body,
        get_body=get_body,
        notes=[
            f"Database: {lines:,} archival lines ({args.users:,} users x "
            f"{args.lines_per_user:,}) and 50 memories for each user's agent, filled in "
            f"{seconds:.0f} s, then VACUUM ANALYZE and CHECKPOINT.",
            f"Answers: UpsertMemory {len(posted.content):,} bytes of JSON over HTTP, "
            f"{upserted.ByteSize():,} of protobuf over gRPC; ListMemories (20 memories) "
            f"{len(got.content):,} bytes of JSON, {listed.ByteSize():,} of protobuf. The null "
            "HTTP server answers those very JSON bytes.",
        ],
    )


async def bench(args: argparse.Namespace, scratch: Path) -> tuple[Runs, Runs, Setup]:
    """Part 2 (on the server with HTTP that the setup ran on), then part 1's rounds."""
    ctx = new_context(args.seed)
    upsert, listing, render = HttpUpsert(), ListLoad(), Render()
    ab, paths = Runs(), Runs()
    run = 0  # numbers every run: no run replays another's upsert keys
    database: EmbeddedDatabase | None = None
    service: Service | None = None
    null: Child | None = None
    try:
        service = Service(scratch, WITH, args.concurrency)
        database = EmbeddedDatabase(scratch)
        setup = await _setup(ctx, service, database.url, scratch, upsert, listing, render, args)
        null = start_null_http(setup.post_body, setup.get_body)
        null_address = null.wait_ready(60)
        print(
            f"service pid {service.pids} on {service.address} (HTTP {service.http_address}),"
            f" null HTTP server pid {null.pids()} on {null_address}",
            file=sys.stderr,
            flush=True,
        )
        modes = [HTTP, GRPC, NULL_HTTP]
        for r in range(args.rounds):
            for op, w in (("upsert", upsert), ("list", listing)):
                for mode in modes[r % 3 :] + modes[: r % 3]:
                    run += 1
                    if mode == GRPC:
                        connect = grpc_connect(w, ctx, service.address, run)
                        sampled = service.pids
                    elif mode == HTTP:
                        connect = _http_connect(w, ctx, service.http_address, run)
                        sampled = service.pids
                    else:
                        connect = _http_connect(w, ctx, null_address, run)
                        sampled = null.pids()
                    result = paths.add(op, mode, await _run(connect, sampled, args))
                    _progress(f"round {r + 1} {op:<7} {PATH_NAMES[mode]}", result)
        null.stop()
        null = None
        service.stop()
        service = None
        for r in range(args.rounds):
            for variant in (WITHOUT, WITH) if r % 2 == 0 else (WITH, WITHOUT):
                service = Service(scratch, variant, args.concurrency)
                for op, g in (("upsert", upsert), ("render", render)):
                    run += 1
                    connect = grpc_connect(g, ctx, service.address, run)
                    result = ab.add(op, variant, await _run(connect, service.pids, args))
                    _progress(f"round {r + 1} {op:<7} gRPC, {SERVER_NAMES[variant]}", result)
                service.stop()
                service = None
        return ab, paths, setup
    finally:
        if null is not None:
            null.stop()
        if service is not None:
            service.stop()
        if database is not None:
            database.close()


# The report ----------------------------------------------------------------------------


def _pooled(results: Sequence[RunResult]) -> RunResult:
    """All rounds as one sample: every latency, the windows' total time and errors, the
    highest peak RSS and the CPU of every window."""
    cpu = [r.cpu_seconds for r in results if r.cpu_seconds is not None]
    rss = [r.peak_rss for r in results if r.peak_rss is not None]
    errors = [r for r in results if r.errors]
    return RunResult(
        latencies=[x for r in results for x in r.latencies],
        elapsed=sum(r.elapsed for r in results),
        errors=sum(r.errors for r in results),
        last_error=errors[-1].last_error if errors else "",
        peak_rss=max(rss) if rss else None,
        cpu_seconds=sum(cpu) if len(cpu) == len(results) else None,
    )


def _cpu_ms(r: RunResult) -> float:
    if r.cpu_seconds is None or not r.latencies:
        return float("nan")
    return 1000 * r.cpu_seconds / len(r.latencies)


def _spread(values: Sequence[float]) -> float:
    """(highest - lowest) / median."""
    median = statistics.median(values)
    return (max(values) - min(values)) / median if median else float("nan")


def _ratios(top: Sequence[RunResult], bottom: Sequence[RunResult]) -> list[float]:
    return [
        a.throughput / b.throughput if b.throughput else float("nan")
        for a, b in zip(top, bottom, strict=True)
    ]


def _row_cells(results: Sequence[RunResult], client_ms: float | None = None) -> str:
    """Per-round and median throughput, pooled latencies, server CPU per call (and the
    clients' when given), peak RSS, errors."""
    pooled = _pooled(results)
    client = "" if client_ms is None else f" | {client_ms:.2f}"
    rounds = " · ".join(f"{r.throughput:,.0f}" for r in results)
    rss = f"{pooled.peak_rss / 2**20:.0f}" if pooled.peak_rss else "n/a"
    return (
        f"{rounds} | {statistics.median(r.throughput for r in results):,.0f} "
        f"| {pooled.ms(0.5):.1f} / {pooled.ms(0.95):.1f} / {pooled.ms(0.99):.1f} "
        f"| {_cpu_ms(pooled):.2f}{client} | {rss} | {pooled.errors}"
    )


def _ratio_cell(ratios: Sequence[float]) -> str:
    each = " · ".join(f"{x:.2f}" for x in ratios)
    return f"{statistics.median(ratios):.2f} ({each})"


def _verdict(ratios: Sequence[float], own_spread: float) -> str:
    """Inside the noise when the rounds fall on both sides of 1, or the median's distance
    from 1 is no more than a variant's own rounds differ."""
    diff = statistics.median(ratios) - 1
    if min(ratios) <= 1 <= max(ratios):
        return f"inside the noise ({diff:+.1%}; the rounds fall on both sides of 1)"
    if abs(diff) <= own_spread:
        return f"inside the noise ({diff:+.1%}; a variant's own rounds differ by {own_spread:.1%})"
    side = "lower" if diff < 0 else "higher"
    return f"**outside the noise**: {side} in every round ({diff:+.1%})"


def _rows(runs: Runs, titles: dict[str, str], names: dict[str, str], client_cpu: bool) -> list[str]:
    """A table row for each operation and each of ``names`` (server or path, in that
    order), with the clients' CPU when asked; the notes of the rows with errors."""
    notes: list[str] = []
    for op, title in titles.items():
        for variant, name in names.items():
            results = runs.of(op, variant)
            cells = _row_cells(results, runs.client_ms(op, variant) if client_cpu else None)
            print(f"| {title} | {name} | {cells} |")
            if (pooled := _pooled(results)).errors:
                notes.append(f"{title}, {variant}: last error {pooled.last_error}")
    return notes


def print_ab(ab: Runs, clients: int) -> None:
    print(f"\n### 1. gRPC with and without `--http-listen` ({clients} clients)\n")
    print(
        "| operation | server | ops/s per round | median ops/s | p50 / p95 / p99 ms "
        "| server CPU ms/op | peak RSS MB | errors |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    titles = {"upsert": HttpUpsert.title, "render": Render.title}
    notes = _rows(ab, titles, SERVER_NAMES, client_cpu=False)
    for note in notes:
        print(f"- {note}")
    print(
        "\n| operation | with / without ops/s: median (per round) | own rounds' spread, "
        "without / with | with / without server CPU ms/op | reading |"
    )
    print("|---|---:|---:|---:|---|")
    for op, title in titles.items():
        without, with_ = ab.of(op, WITHOUT), ab.of(op, WITH)
        ratios = _ratios(with_, without)
        spreads = [_spread([r.throughput for r in rs]) for rs in (without, with_)]
        cpu = _cpu_ms(_pooled(with_)) / _cpu_ms(_pooled(without))
        print(
            f"| {title} | {_ratio_cell(ratios)} | {spreads[0]:.1%} / {spreads[1]:.1%} "
            f"| {cpu:.2f} | {_verdict(ratios, max(spreads))} |"
        )


def print_paths(paths: Runs, clients: int) -> None:
    print(f"\n### 2. HTTP/JSON against gRPC and a null HTTP server ({clients} clients)\n")
    print(
        "| operation | path | ops/s per round | median ops/s | p50 / p95 / p99 ms "
        "| server CPU ms/op | client CPU ms/op | peak server RSS MB | errors |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    titles = {"upsert": HttpUpsert.title, "list": ListLoad.title}
    notes = _rows(paths, titles, PATH_NAMES, client_cpu=True)
    notes.append(
        "The null server's RSS is this script's process, with everything it imports "
        "(gRPC, psycopg, the service's modules): not a figure to compare."
    )
    for note in notes:
        print(f"- {note}")
    print(
        "\n| operation | HTTP / gRPC ops/s: median (per round) | HTTP / null HTTP ops/s: "
        "median (per round) | server CPU ms/op, HTTP - gRPC | server CPU ms/op, "
        "HTTP service - null |"
    )
    print("|---|---:|---:|---:|---:|")
    for op, title in titles.items():
        http, grpc_, null = (paths.of(op, m) for m in (HTTP, GRPC, NULL_HTTP))
        cpu = {
            m: _cpu_ms(_pooled(rs)) for m, rs in ((HTTP, http), (GRPC, grpc_), (NULL_HTTP, null))
        }
        print(
            f"| {title} | {_ratio_cell(_ratios(http, grpc_))} "
            f"| {_ratio_cell(_ratios(http, null))} | {cpu[HTTP] - cpu[GRPC]:+.2f} "
            f"| {cpu[HTTP] - cpu[NULL_HTTP]:+.2f} |"
        )


def _command(args: argparse.Namespace) -> str:
    return (
        f"python bench/http_load.py --rounds {args.rounds} --duration {args.duration:g} "
        f"--warmup {args.warmup:g} --concurrency {args.concurrency} --users {args.users} "
        f"--lines-per-user {args.lines_per_user} --seed {args.seed}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=4, help="rounds of each comparison")
    parser.add_argument("--duration", type=float, default=2.5, help="seconds measured per run")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds before measuring")
    parser.add_argument("--concurrency", type=int, default=8, help="simulated clients")
    parser.add_argument("--users", type=int, default=1000, help="users in the fill")
    parser.add_argument("--lines-per-user", type=int, default=20, help="archival lines each")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--serve-null-http", nargs=2, type=Path, metavar="BODY", help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.serve_null_http is not None:
        serve_null_http(*args.serve_null_http)
        return 0
    if args.rounds < 1 or args.concurrency < 1 or args.users < 1 or args.lines_per_user < 1:
        parser.error("--rounds, --concurrency, --users and --lines-per-user must be positive")
    if args.concurrency > 80:
        parser.error("--concurrency: at most 80 (one PostgreSQL connection each, and spares)")
    if args.duration <= 0 or args.warmup < 0:
        parser.error("--duration must be positive and --warmup not negative")

    return run_main("http_load", lambda run: _report(args, run))


def _report(args: argparse.Namespace, run: Run) -> None:
    ab, paths, setup = asyncio.run(bench(args, run.scratch))
    print(f"\n## agent-memory HTTP load ({time.strftime('%Y-%m-%d %H:%M')})\n")
    print(f"Reproduce: `{_command(args)}`\n")
    versions = (
        f"grpcio {grpc.__version__}, httpx {httpx.__version__}, uvicorn {uvicorn.__version__}, "
        f"starlette {starlette.__version__}"
    )
    print(run.machine(versions) + "\n")
    print(
        f"Each run: {args.warmup:g} s warm-up, then {args.duration:g} s measured, "
        f"{args.concurrency} clients in one process (gRPC: a grpc.aio channel each; HTTP: "
        "a keep-alive httpx.AsyncClient of one connection each). Service: `agent-memory "
        f"serve` with API keys on, one worker, embedded PostgreSQL, DB pool "
        f"{args.concurrency}. {args.rounds} rounds of each comparison; p50 / p95 / p99 "
        "over every round's calls; server CPU and peak RSS of the server process in the "
        "windows."
    )
    for note in setup.notes:
        print(note)
    print("\nHow to read:\n")
    print(
        "- Part 1 starts the service afresh for every run, alternating which goes "
        "first. Its baseline is, by design, the same service started without "
        "`--http-listen`, not a limit: with / without is what serving HTTP costs the "
        "gRPC path, not how near either comes to what the machine allows. "
        "Each round's with / without ratio comes from two runs back to back; "
        "a difference is inside the noise when the rounds fall on both sides of 1 or "
        "it is no larger than the spread of a variant's own rounds. Server CPU ms/op "
        "is steadier than throughput on a shared machine. Peak RSS includes what the "
        "HTTP stack (uvicorn, Starlette) adds to a process that loads it."
    )
    print(
        "- Part 2 runs on one server started with `--http-listen`; the three paths take "
        "turns in each round. Client, server and PostgreSQL share the cores, so "
        "throughput includes the clients' own cost (client CPU ms/op: httpx and h11 in "
        "Python against grpc's C core). The HTTP path's limit is the null HTTP server: "
        "the same uvicorn and Starlette, answering the service's own bytes without "
        "doing any work, hit by the same client; HTTP / null HTTP is the share of that "
        "limit that transcoding plus the service reach (the service also waits on "
        "PostgreSQL). HTTP / gRPC is not a limit but the same calls into the same "
        "service over its other front, whose client costs less. The server CPU "
        "differences are the milliseconds per call the server spends above gRPC (the "
        "transcoding) and above the null server (transcoding and the service's work)."
    )
    print_ab(ab, args.concurrency)
    print_paths(paths, args.concurrency)
    print(run.total())


if __name__ == "__main__":
    sys.exit(main())
