#!/usr/bin/env python3
"""Recall and RenderPrompt with and without a hot standby for the reads that may lag.

The service runs as in production (``agent-memory serve``, API keys on, the local
model) on an embedded PostgreSQL in a scratch folder, filled as ``growth.py`` fills
it (``--rows`` rows for each measured owner, ``--tenants`` other tenants). Recall and
RenderPrompt are measured at ``--clients`` clients, three ways:

1. the service with every read on the primary;
2. the same service with ``MEMORY_DATABASE_READ_URL`` naming a streaming standby of
   the primary (made with ``pg_basebackup``, replaying over a local socket), where
   these reads go;
3. the operation's minimal SQL through psycopg on the primary: the database's limit.

Primary, standby, service and clients share this machine's cores: the standby adds
no hardware here, so the figure shows what routing costs and what it leaves to the
primary (its CPU per call), not the gain of a standby on its own machine.

Run (a few minutes on two cores):

    python bench/standby_reads.py
    python bench/standby_reads.py --rows 2000 --tenants 100 --duration 2
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from growth import Filler, Size, measure, setup_workloads
from loadkit.driver import RunResult
from loadkit.harness import Run, new_context, run_main
from loadkit.processes import Child, EmbeddedDatabase, start_service
from loadkit.workloads import RecallLoad, Render, Workload

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the test helpers: the streaming standby

from tests.support import StreamingStandby  # noqa: E402


def _row(title: str, way: str, r: RunResult) -> str:
    cpu = f"{r.cpu_seconds * 1000 / len(r.latencies):.1f}" if r.cpu_seconds and r.latencies else "-"
    errors = f"  {r.errors} errors" if r.errors else ""
    return (
        f"| {title:<12} | {way:<28} | {r.throughput:>8.1f} | {r.ms(0.5):>7.1f} | "
        f"{r.ms(0.99):>7.1f} | {cpu:>13} |{errors}"
    )


async def _bench(run: Run, args: argparse.Namespace) -> list[str]:
    ctx = new_context(args.seed)
    workloads: dict[str, Workload] = {"Recall": RecallLoad(), "RenderPrompt": Render()}
    chars = 2_000_000
    rows: list[str] = []
    service: Child | None = start_service(
        run.scratch, workers=1, pool_size=args.clients, archival_chars=chars
    )
    database: EmbeddedDatabase | None = None
    standby: StreamingStandby | None = None
    try:
        address = service.wait_ready(180)
        database = EmbeddedDatabase(run.scratch)
        await setup_workloads(ctx, database.url, address, workloads)
        await Filler(ctx, database.url).grow(Size(args.tenants, args.rows))
        results: dict[tuple[str, str], RunResult] = {}
        number = 0
        for title, w in workloads.items():
            number += 2
            on_primary, sql = await measure(
                w, ctx, address, database.url, number, args, service.pids()
            )
            results[title, "primary"] = on_primary
            results[title, "psycopg"] = sql
        service.stop()
        service = None
        standby = StreamingStandby(database.embedded)
        standby.start()
        service = start_service(
            run.scratch,
            workers=1,
            pool_size=args.clients,
            archival_chars=chars,
            read_url=standby.url,
        )
        address = service.wait_ready(180)
        for title, w in workloads.items():
            number += 2
            via_standby, _ = await measure(
                w, ctx, address, database.url, number, args, service.pids()
            )
            results[title, "standby"] = via_standby
        for title in workloads:
            rows.append(_row(title, "service, primary only", results[title, "primary"]))
            rows.append(_row(title, "service, reads on standby", results[title, "standby"]))
            rows.append(_row(title, "psycopg on the primary", results[title, "psycopg"]))
    finally:
        if service is not None:
            service.stop()
        if standby is not None:
            standby.__exit__()
        if database is not None:
            database.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--tenants", type=int, default=1_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    def body(run: Run) -> None:
        rows = asyncio.run(_bench(run, args))
        print(
            f"\nReads that may lag, with and without a standby ({args.clients} clients, "
            f"{args.duration:g} s windows, {args.rows:,} rows per measured owner, "
            f"{args.tenants:,} other tenants; one machine for all)\n"
        )
        print(
            f"| {'operation':<12} | {'way':<28} | {'calls/s':>8} | {'p50 ms':>7} | "
            f"{'p99 ms':>7} | {'service CPU ms':>13} |"
        )
        print(f"|{'-' * 14}|{'-' * 30}|{'-' * 10}|{'-' * 9}|{'-' * 9}|{'-' * 15}|")
        print("\n".join(rows))

    return run_main("standby_reads", body)


if __name__ == "__main__":
    sys.exit(main())
