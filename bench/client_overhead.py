#!/usr/bin/env python3
"""Client overhead: what ``AsyncMemoryClient`` costs over the bare generated stubs,
each figure beside that baseline measured in the same run.

Both drive the null gRPC server of ``rpc_load.py`` (``grpc.aio`` answering every
method at once; Recall streams 10 empty messages) in its own process on loopback, so
the server and the network are as cheap as they get and what differs is the client
alone: the bare stubs send the request with an ``authorization`` header and a
deadline, nothing more; the client adds its typed API, the retry policy of its
channel, its error mapping and, for Recall, its cancellable stream. Clients are
simulated in this process on one event loop (``--concurrency``, default 1 and 8),
each with one channel; the two ways take turns in every round (``--rounds``, default
3, the order alternating), and the figures are the round medians.

Operations: GetMemory and UpsertMemory (unary), RenderPrompt (unary, a larger
answer) and Recall (a stream of 10). Each run is a warm-up (``--warmup``) and a
window of ``--duration`` seconds whose completed calls are the sample. Peak RSS is
this (client) process's over the whole run.

Run (about a minute on two cores):

    python bench/client_overhead.py
    python bench/client_overhead.py --concurrency 1,32 --duration 5
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadkit.driver import CHANNEL_OPTIONS, Client, RunResult, channel_to, drive, open_clients
from loadkit.harness import Run, progress, run_main
from loadkit.processes import start_null_server

from agent_memory_client import AsyncMemoryClient
from agentmemory.v1 import (
    memory_pb2,
    memory_service_pb2,
    memory_service_pb2_grpc,
    recall_service_pb2,
    recall_service_pb2_grpc,
)

KEY = "amk_bench_0000000000000000_not-a-real-key-not-a-real-key-0000000"
METADATA = (("authorization", f"Bearer {KEY}"),)
TIMEOUT = 30.0
OPS = ("get", "upsert", "render", "recall")
TITLES = {
    "get": "GetMemory",
    "upsert": "UpsertMemory",
    "render": "RenderPrompt",
    "recall": "Recall (10 streamed)",
}


def stubs_op(op: str, channel: object) -> Callable[[], Awaitable[int]]:
    memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
    recall = recall_service_pb2_grpc.RecallServiceStub(channel)
    owner = memory_pb2.MemoryOwner(agent_id="bench")

    async def get() -> int:
        await memory.GetMemory(
            memory_service_pb2.GetMemoryRequest(id="m-1"), metadata=METADATA, timeout=TIMEOUT
        )
        return 0

    async def upsert() -> int:
        request = memory_service_pb2.UpsertMemoryRequest(
            owner=owner, key="k", value="v", source=memory_pb2.MEMORY_SOURCE_MANUAL
        )
        await memory.UpsertMemory(request, metadata=METADATA, timeout=TIMEOUT)
        return 0

    async def render() -> int:
        request = recall_service_pb2.RenderPromptRequest(agent_id="bench", user_message="hi")
        await recall.RenderPrompt(request, metadata=METADATA, timeout=TIMEOUT)
        return 0

    async def stream() -> int:
        request = recall_service_pb2.RecallRequest(query="staging port", agent_id="bench")
        async for _ in recall.Recall(request, metadata=METADATA, timeout=TIMEOUT):
            pass
        return 0

    return {"get": get, "upsert": upsert, "render": render, "recall": stream}[op]


def client_op(op: str, client: AsyncMemoryClient) -> Callable[[], Awaitable[int]]:
    async def get() -> int:
        await client.get_memory("m-1")
        return 0

    async def upsert() -> int:
        await client.upsert_memory("k", "v", agent_id="bench")
        return 0

    async def render() -> int:
        await client.render_prompt("bench", user_message="hi")
        return 0

    async def stream() -> int:
        async with client.recall("staging port", agent_id="bench") as matches:
            async for _ in matches:
                pass
        return 0

    return {"get": get, "upsert": upsert, "render": render, "recall": stream}[op]


async def measure(
    address: str, op: str, way: str, clients: int, warmup: float, duration: float
) -> RunResult:
    async def connect(_: int) -> Client:
        if way == "stubs":
            channel = await channel_to(address)
            return Client(stubs_op(op, channel), channel.close)
        # One connection per client either way (the stubs' channel_to does the same).
        client = AsyncMemoryClient(address, api_key=KEY, timeout=TIMEOUT, options=CHANNEL_OPTIONS)
        return Client(client_op(op, client), client.close)

    async with open_clients(clients, connect) as opened:
        return await drive(opened, warmup, duration, [])


def median(results: list[RunResult], figure: Callable[[RunResult], float]) -> float:
    return statistics.median(figure(r) for r in results)


def latencies(results: list[RunResult]) -> str:
    """The round medians of p50 / p95 / p99, in ms."""
    return " / ".join(
        f"{statistics.median(r.ms(q) for r in results):.2f}" for q in (0.5, 0.95, 0.99)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--ops", default=",".join(OPS), help=f"of {', '.join(OPS)}")
    parser.add_argument("--concurrency", default="1,8", help="clients, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--duration", type=float, default=2.0)
    args = parser.parse_args(argv)
    ops = [o for o in args.ops.split(",") if o]
    if not set(ops) <= set(OPS):
        parser.error(f"--ops: choose among {', '.join(OPS)}")
    concurrency = [int(c) for c in args.concurrency.split(",")]
    if min(concurrency) < 1 or args.rounds < 1 or args.duration <= 0:
        parser.error("--concurrency, --rounds and --duration must be positive")

    def body(run: Run) -> None:
        null = start_null_server(1)
        try:
            address = null.wait_ready(60)
            results: dict[tuple[str, int, str], list[RunResult]] = {}
            for op in ops:
                for clients in concurrency:
                    for n in range(args.rounds):
                        order = ("stubs", "client") if n % 2 == 0 else ("client", "stubs")
                        for way in order:
                            result = asyncio.run(
                                measure(address, op, way, clients, args.warmup, args.duration)
                            )
                            progress(f"{op} c={clients} {way:6}", result)
                            results.setdefault((op, clients, way), []).append(result)
        finally:
            null.stop()
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print("\n## AsyncMemoryClient over the bare stubs, against a null gRPC server\n")
        print(
            "| operation | clients | stubs ops/s | stubs p50 / p95 / p99 ms | client ops/s "
            "| client p50 / p95 / p99 ms | client / stubs | errors |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for op in ops:
            for clients in concurrency:
                base, ours = results[(op, clients, "stubs")], results[(op, clients, "client")]
                lat = [
                    " / ".join(
                        f"{median(rs, lambda r, q=q: r.ms(q)):.2f}" for q in (0.5, 0.95, 0.99)
                    )
                    for rs in (base, ours)
                ]
                base_tp = median(base, lambda r: r.throughput)
                ours_tp = median(ours, lambda r: r.throughput)
                errors = sum(r.errors for r in base + ours)
                print(
                    f"| {TITLES[op]} | {clients} | {base_tp:,.0f} | {lat[0]} | {ours_tp:,.0f} "
                    f"| {lat[1]} | {ours_tp / base_tp:.2f} | {errors} |"
                )
        print(f"\nPeak RSS of the client process (both ways, all runs): {peak_mb:.0f} MB")
        print(run.machine(f"grpcio {__import__('grpc').__version__}"))
        print(run.total())

    return run_main("client_overhead", body)


if __name__ == "__main__":
    raise SystemExit(main())
