"""Driving a load: every client calls its operation in a loop; one window is measured."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import grpc

from loadkit.processes import ProcessSampler

Op = Callable[[], Awaitable[int]]  # one call; returns the retries it needed

# One connection per client, as separate orchestrator processes would have: without it
# gRPC shares one subchannel (one TCP connection) between channels to the same target,
# and the kernel could not spread clients over the service's worker processes.
CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1)]


@dataclass
class RunResult:
    latencies: list[float] = field(default_factory=list)
    elapsed: float = 0.0
    errors: int = 0
    retries: int = 0
    last_error: str = ""
    peak_rss: int | None = None  # the largest of the sampled processes
    cpu_seconds: float | None = None  # all sampled processes together

    @property
    def throughput(self) -> float:
        return len(self.latencies) / self.elapsed if self.elapsed > 0 else 0.0

    def ms(self, q: float) -> float:
        if not self.latencies:
            return math.nan
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))] * 1000


@dataclass
class Client:
    op: Op
    close: Callable[[], Awaitable[None]] | None = None


Connect = Callable[[int], Awaitable[Client]]  # opens client i of a run


@contextlib.asynccontextmanager
async def open_clients(count: int, connect: Connect) -> AsyncIterator[list[Client]]:
    """``count`` clients, each opened by ``connect``; all that opened are closed on the
    way out, also when one fails to open."""
    opened: list[Client] = []
    try:
        for i in range(count):
            opened.append(await connect(i))
        yield opened
    finally:
        for client in opened:
            if client.close is not None:
                await client.close()


async def channel_to(address: str) -> grpc.aio.Channel:
    channel = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
    await asyncio.wait_for(channel.channel_ready(), 15)
    return channel


async def drive(
    clients: Sequence[Client],
    warmup: float,
    duration: float,
    sampled: list[int],
    on_window: Callable[[], None] | None = None,
) -> RunResult:
    """Every client calls its op in a loop. After ``warmup`` seconds a window of
    ``duration`` seconds opens (``on_window`` is called then): the calls that end
    inside it, completed or failed, are the sample, and the ``sampled`` processes
    (RSS, CPU) are watched over exactly that window."""
    result = RunResult(elapsed=duration)
    window = {"start": math.inf, "end": math.inf}
    stopping = asyncio.Event()

    async def loop(op: Op) -> None:
        while not stopping.is_set():
            began = time.perf_counter()
            try:
                retries = await op()
            except Exception as exc:
                if window["start"] <= time.perf_counter() <= window["end"]:
                    result.errors += 1
                    result.last_error = f"{type(exc).__name__}: {exc}"[:300]
                await asyncio.sleep(0.01)
                continue
            ended = time.perf_counter()
            if window["start"] <= ended <= window["end"]:
                result.latencies.append(ended - began)
                result.retries += retries

    tasks = [asyncio.create_task(loop(c.op)) for c in clients]
    try:
        await asyncio.sleep(warmup)
        with contextlib.ExitStack() as stack:
            sampler = stack.enter_context(ProcessSampler(sampled)) if sampled else None
            if on_window is not None:
                on_window()
            window["start"] = time.perf_counter()
            window["end"] = window["start"] + duration
            await asyncio.sleep(duration)
        if sampler is not None:
            result.peak_rss = sampler.peak_per_process
            result.cpu_seconds = sampler.cpu_seconds
        stopping.set()
        await asyncio.gather(*tasks)  # in-flight calls end after the window: not counted
    finally:
        stopping.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return result
