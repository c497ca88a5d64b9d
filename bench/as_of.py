#!/usr/bin/env python3
"""What the history behind as-of reads costs: the storage of a day of typical writes,
and a render as of a past run's render time beside a render of now, on the same data.

The service runs as in production (``agent-memory serve``, API keys on, the local
model) on an embedded PostgreSQL in a scratch folder. One user's agent goes through a
"day": ``--memories`` memories written, each changed ``--changes`` times (its value or
its pin), and its core block rewritten ``--block-writes`` times; the storage of that
day's history (the user's memory events and block versions, as PostgreSQL stores them)
is set beside the memories and blocks themselves. A run renders at mid-day, then
RenderPrompt is timed ``--renders`` times one after another, as of now and as of that
run's render time, with the bytes of the past render checked against the run's. Each is
set beside its limit: the lower of its minimal SQL through psycopg (the listing of now;
for the past, each memory's newest event by then) and a null gRPC server answering the
same client.

Run (about a minute on two cores):

    python bench/as_of.py
    python bench/as_of.py --memories 500 --changes 4 --renders 300
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC

import grpc
import psycopg
from google.protobuf import field_mask_pb2
from google.protobuf.timestamp_pb2 import Timestamp
from loadkit.harness import Run, create_keys, run_main
from loadkit.processes import (
    Child,
    EmbeddedDatabase,
    ProcessSampler,
    start_null_server,
    start_service,
)
from loadkit.workloads import TENANT, Stubs

from agentmemory.v1 import block_pb2, memory_pb2
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import memory_service_pb2 as memory_pb
from agentmemory.v1 import recall_service_pb2 as recall_pb

AGENT = "planner"
USER = "day-user"

_STORAGE = """
SELECT
  (SELECT coalesce(sum(pg_column_size(e.*)), 0) FROM memory_events AS e
   WHERE e.tenant_id = %(t)s) AS events,
  (SELECT count(*) FROM memory_events AS e WHERE e.tenant_id = %(t)s) AS event_rows,
  (SELECT coalesce(sum(pg_column_size(v.*)), 0) FROM block_versions AS v
   WHERE v.tenant_id = %(t)s) AS versions,
  (SELECT count(*) FROM block_versions AS v WHERE v.tenant_id = %(t)s) AS version_rows,
  (SELECT coalesce(sum(pg_column_size(m.*)), 0) FROM memories AS m
   WHERE m.tenant_id = %(t)s) AS memories,
  (SELECT coalesce(sum(pg_column_size(b.*)), 0) FROM blocks AS b
   WHERE b.tenant_id = %(t)s) AS blocks
"""
# The memory listing a render of now reads, as plainly as SQL says it.
_MINIMAL_NOW = """
SELECT key, value, source, pinned, importance, updated_at FROM memories
WHERE tenant_id = %(t)s AND scope = 'agent' AND owner_id = %(a)s
  AND superseded_by IS NULL AND (expire_time IS NULL OR expire_time > now())
ORDER BY pinned DESC, importance DESC, key LIMIT 50
"""
# What a render as of an instant must read at least: each of the agent's memories'
# newest event by then, through the events' index by owner.
_MINIMAL_AS_OF = """
SELECT DISTINCT ON (memory_id) new_memory FROM memory_events
WHERE tenant_id = %(t)s AND (coalesce(new_memory, old_memory) ->> 'owner_id') = %(a)s
  AND occurred_at <= %(at)s
ORDER BY memory_id, occurred_at DESC, id DESC
"""


def _ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def _rate(samples: list[float]) -> float:
    return len(samples) / sum(samples)


def _row(name: str, samples: list[float]) -> str:
    rate = _rate(samples)
    return (
        f"| {name:<34} | {rate:>8.0f} | {_ms(samples, 0.5):>6.2f} | {_ms(samples, 0.95):>6.2f}"
        f" | {_ms(samples, 0.99):>6.2f} |"
    )


async def _timed(n: int, call: Callable[[], Awaitable[object]]) -> list[float]:
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return samples


async def _day(
    stubs: Stubs,
    auth: tuple[tuple[str, str], ...],
    args: argparse.Namespace,
    expected: Timestamp | None = None,
) -> Timestamp | None:
    """The writes of half a day; the block's compare-and-set token after them."""
    owner = memory_pb2.MemoryOwner(agent_id=AGENT)
    await stubs.memory.UpdateAgentSettings(
        memory_pb.UpdateAgentSettingsRequest(
            settings=memory_pb2.AgentSettings(agent_id=AGENT, memory_enabled=True),
            update_mask=field_mask_pb2.FieldMask(paths=["memory_enabled"]),
        ),
        metadata=auth,
    )
    for n in range(args.memories):
        memory = (
            await stubs.memory.UpsertMemory(
                memory_pb.UpsertMemoryRequest(
                    owner=owner, key=f"fact-{n:04d}", value=f"The value of fact {n}, first said"
                ),
                metadata=auth,
            )
        ).memory
        for change in range(args.changes):
            if change % 2 == 0:
                memory.value = f"The value of fact {n}, said again ({change})"
                paths = ["value"]
            else:
                memory.pinned = not memory.pinned
                paths = ["pinned"]
            memory = (
                await stubs.memory.UpdateMemory(
                    memory_pb.UpdateMemoryRequest(
                        memory=memory, update_mask=field_mask_pb2.FieldMask(paths=paths)
                    ),
                    metadata=auth,
                )
            ).memory
    for n in range(args.block_writes):
        content = "\n".join(f"- plan item {i}, revision {n}" for i in range(12))
        block = (
            await stubs.blocks.WriteBlock(
                block_pb.WriteBlockRequest(
                    label=block_pb2.BLOCK_LABEL_CORE,
                    scope=memory_pb2.SCOPE_AGENT,
                    agent_id=AGENT,
                    content=content,
                    expected_updated_at=expected,
                ),
                metadata=auth,
            )
        ).block
        expected = block.updated_at
    return expected


async def _bench(run: Run, args: argparse.Namespace) -> None:
    service = start_service(run.scratch, workers=1, pool_size=4, archival_chars=8000)
    null: Child | None = None
    db: EmbeddedDatabase | None = None
    try:
        address = service.wait_ready(300)
        db = EmbeddedDatabase(run.scratch)
        keys = await create_keys(db.url, [USER])
        auth = (("authorization", f"Bearer {keys[USER]}"),)
        async with grpc.aio.insecure_channel(address) as channel:
            stubs = Stubs.of(channel)
            token = await _day(stubs, auth, args)
            run_prompt = await stubs.recall.RenderPrompt(
                recall_pb.RenderPromptRequest(agent_id=AGENT), metadata=auth
            )
            # The afternoon: as many changes again after the run.
            await _day(stubs, auth, args, token)
            now_request = recall_pb.RenderPromptRequest(agent_id=AGENT)
            past_request = recall_pb.RenderPromptRequest(
                agent_id=AGENT, as_of_time=run_prompt.render_time
            )
            replayed = await stubs.recall.RenderPrompt(past_request, metadata=auth)
            same = replayed.system_prompt == run_prompt.system_prompt
            with ProcessSampler(service.pids()) as sampler:
                now = await _timed(
                    args.renders, lambda: stubs.recall.RenderPrompt(now_request, metadata=auth)
                )
                past = await _timed(
                    args.renders, lambda: stubs.recall.RenderPrompt(past_request, metadata=auth)
                )
        at = run_prompt.render_time.ToDatetime(tzinfo=UTC)
        async with await psycopg.AsyncConnection.connect(db.url, autocommit=True) as conn:
            size = await (await conn.execute(_STORAGE, {"t": TENANT})).fetchone()
            assert size is not None

            async def minimal(sql: str, params: dict[str, object]) -> None:
                await (await conn.execute(sql, params)).fetchall()  # type: ignore[arg-type]

            sql_now = await _timed(
                args.renders, lambda: minimal(_MINIMAL_NOW, {"t": TENANT, "a": AGENT})
            )
            sql_as_of = await _timed(
                args.renders, lambda: minimal(_MINIMAL_AS_OF, {"t": TENANT, "a": AGENT, "at": at})
            )
        # The same client against a server that answers at once: gRPC's own limit.
        null = start_null_server(1)
        async with grpc.aio.insecure_channel(null.wait_ready(120)) as channel:
            stubs = Stubs.of(channel)
            nothing = await _timed(
                args.renders, lambda: stubs.recall.RenderPrompt(past_request, metadata=auth)
            )
    finally:
        if null is not None:
            null.stop()
        service.stop()
        if db is not None:
            db.close()
    events, event_rows, versions, version_rows, memories, blocks = size
    print("\n## The history of a day of writes\n")
    print(
        f"{args.memories} memories written and changed {args.changes} times each, and "
        f"{args.block_writes} writes of a core block, twice (morning and afternoon).\n"
    )
    print("| what | rows | bytes | per change |")
    print("|---|---:|---:|---:|")
    changes = 2 * args.memories * (args.changes + 1)
    print(f"| memory events | {event_rows:,} | {events:,} | {events / changes:,.0f} |")
    print(
        f"| block versions | {version_rows:,} | {versions:,} |"
        f" {versions / max(version_rows, 1):,.0f} |"
    )
    print(f"| memories now | {args.memories:,} | {memories:,} | |")
    print(f"| blocks now | 1 | {blocks:,} | |")
    print(
        f"\nHistory / current state: {(events + versions) / max(memories + blocks, 1):.1f}x."
        f" Kept 90 days (MEMORY_HISTORY_DAYS' default), such days hold about "
        f"{(events + versions) * 90 / 2**20:,.0f} MiB of history for this agent.\n"
    )
    print(f"## RenderPrompt, now and as of a past run ({args.renders} calls one after another)\n")
    print(
        "Limit: the lower of the read's minimal SQL through psycopg and a null gRPC server "
        "with the same client.\n"
    )
    print("| read | calls/s | p50 ms | p95 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for name, samples in (
        ("render now", now),
        ("render as of the run's render_time", past),
        ("minimal SQL of now (psycopg)", sql_now),
        ("minimal SQL as of then (psycopg)", sql_as_of),
        ("null gRPC server", nothing),
    ):
        print(_row(name, samples))
    print()
    for name, service_samples, sql_samples in (
        ("now", now, sql_now),
        ("as of then", past, sql_as_of),
    ):
        limit = min(_rate(sql_samples), _rate(nothing))
        print(f"- Render {name} / limit: {_rate(service_samples) / limit:.2f}")
    print(
        f"- Peak RSS of the service: {sampler.peak_per_process / 2**20:,.0f} MB. "
        f"The replay gave the run's bytes: {'yes' if same else 'NO'}."
    )
    print(run.machine(f"psycopg {psycopg.__version__}"))
    print(run.total())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--changes", type=int, default=4)
    parser.add_argument("--block-writes", type=int, default=40)
    parser.add_argument("--renders", type=int, default=200)
    args = parser.parse_args()
    return run_main("as_of", lambda run: asyncio.run(_bench(run, args)))


if __name__ == "__main__":
    raise SystemExit(main())
