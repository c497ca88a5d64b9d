"""What every load script does around its runs: the API keys and the values it writes,
its clients' gRPC connections, the progress lines, the machine line, and a main that
removes the scratch folder and stops the servers however the run ends."""

from __future__ import annotations

import os
import random
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Protocol

from agent_memory.service.keys import ApiKeys
from agent_memory.store.database import Database
from loadkit.corpus import LOCOMO, Corpus
from loadkit.driver import Client, Connect, Op, RunResult, channel_to, drive, open_clients
from loadkit.processes import StartError
from loadkit.workloads import TENANT, Context, Pool, Stubs, baseline_pool

VALUES = 256  # the memory values the workloads draw from


class RpcWorkload(Protocol):
    def rpc_op(self, ctx: Context, stubs: Stubs, index: int, run: int) -> Op: ...

    def sql_op(self, ctx: Context, pool: Pool, index: int, run: int) -> Op: ...


def new_context(seed: int) -> Context:
    """The LoCoMo corpus and the values written as memories, one or two lines each."""
    ctx = Context(corpus=Corpus.load(LOCOMO), seed=seed, values=[])
    rng = random.Random(seed)
    ctx.values = [" ".join(ctx.corpus.lines(rng, rng.randint(1, 2))) for _ in range(VALUES)]
    return ctx


async def create_keys(url: str, users: Sequence[str]) -> dict[str, str]:
    """An API key for each user, in the bench tenant."""
    db = Database(url, pool_size=1)
    try:
        keys = ApiKeys(db)
        return {u: (await keys.create(tenant_id=TENANT, user_id=u)).key for u in users}
    finally:
        await db.close()


def grpc_connect(w: RpcWorkload, ctx: Context, address: str, run: int) -> Connect:
    """Client ``i`` of a run: a channel (one connection) of its own calling ``w``."""

    async def connect(i: int) -> Client:
        channel = await channel_to(address)
        return Client(w.rpc_op(ctx, Stubs.of(channel), i, run), channel.close)

    return connect


async def measure_both(
    w: RpcWorkload,
    ctx: Context,
    address: str,
    url: str,
    run: int,
    *,
    clients: int,
    warmup: float,
    duration: float,
    sampled: Sequence[int] = (),
) -> tuple[RunResult, RunResult]:
    """``w`` over gRPC at ``address`` (the ``sampled`` processes watched), then as its
    minimal SQL through psycopg on ``url``, each at ``clients`` clients."""
    async with open_clients(clients, grpc_connect(w, ctx, address, run)) as drivers:
        service = await drive(drivers, warmup, duration, list(sampled))
    pool = baseline_pool(url, clients)
    await pool.open(wait=True, timeout=60)
    try:
        opened = [Client(w.sql_op(ctx, pool, i, run + 1)) for i in range(clients)]
        sql = await drive(opened, warmup, duration, [])
    finally:
        await pool.close()
    return service, sql


def progress(label: str, result: RunResult) -> None:
    """One run's figures on stderr, as it ends."""
    print(
        f"  {label} {result.throughput:8,.0f} ops/s  p99 {result.ms(0.99):7.1f} ms"
        f"  errors {result.errors}",
        file=sys.stderr,
        flush=True,
    )


@dataclass
class Run:
    """A script's run: its scratch folder, when it started and the load then."""

    scratch: Path
    started: float = field(default_factory=time.perf_counter)
    load_before: float = field(default_factory=lambda: os.getloadavg()[0])

    def machine(self, versions: str) -> str:
        """The machine line, ``versions`` (``name version, ...``) after Python's."""
        return (
            f"Machine: {os.cpu_count()} cores, load average {self.load_before:.1f} at start, "
            f"{os.getloadavg()[0]:.1f} at end (other work shares it). Python "
            f"{sys.version.split()[0]}, {versions}."
        )

    def total(self) -> str:
        return f"\nTotal time: {time.perf_counter() - self.started:.0f} s"


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run_main(name: str, body: Callable[[Run], None]) -> int:
    """``body`` with a fresh scratch folder, SIGTERM taken as Ctrl-C: 0 once it returns,
    1 when a server did not start, 130 when interrupted; the folder is removed in every
    case (``body`` stops its servers on the way out)."""
    signal.signal(signal.SIGTERM, _interrupt)
    run = Run(scratch=Path(tempfile.mkdtemp(prefix=f"{name.replace('_', '-')}-")))
    try:
        body(run)
        return 0
    except StartError as exc:
        print(f"\n{name}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "\ninterrupted: stopping the servers and removing the scratch folder", file=sys.stderr
        )
        return 130
    finally:
        shutil.rmtree(run.scratch, ignore_errors=True)
