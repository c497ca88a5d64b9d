#!/usr/bin/env python3
"""Where an approximate index would start to pay for recall by meaning.

Recall compares the query's vector with every vector of the searched blocks (an
exact scan of one user's lines, found by the lines' own index). This bench fills
one user's archival block with N lines of random 384-dimension vectors (the local
model's size) for N in ``--sizes``, and times, in the same run:

* the service's ranking by meaning: the lexical half and the fusion statement
  (``PgRecall.lexical`` and ``PgRecall.fuse``), as Recall runs them;
* the exact scan alone, the minimal SQL: the user's 100 nearest lines by cosine;
* the same 100 through an HNSW index on the lines' vectors (pgvector, iterative
  scan), which a per-user filter makes walk the graph until it has found enough of
  that user's lines;

First with only that user's lines in the table (HNSW's best case), then with three
times as many lines of other users, which the index must walk past. p50 / p95 / p99
in ms.

    python bench/vector_scan.py [--sizes 1000,4000,16000] [--queries 100]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

import psycopg
from loadkit.harness import Run, run_main

from agent_memory.domain.identity import Principal
from agent_memory.domain.recall import Meaning, RankQuery
from agent_memory.store import migrate
from agent_memory.store.database import Database
from agent_memory.store.embedded import EmbeddedPostgres
from agent_memory.store.vectors import real_array, vector_literal

DIMENSIONS = 384
MODEL = "bench-random-384"
CALLER = Principal("bench", "scan")
WORDS = "harbor ferry ticket renewal invoice pricing deploy staging garden puppy".split()  # noqa: SIM905


def unit(rng: random.Random) -> list[float]:
    v = [rng.gauss(0, 1) for _ in range(DIMENSIONS)]
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v]


def copy_lines(
    conn: psycopg.Connection[object], rows: Iterable[tuple[str, int, str]], rng: random.Random
) -> None:
    """Archival lines (user, number, text), each with a random vector of MODEL made
    from its text as it is."""
    with (
        conn.cursor() as cur,
        cur.copy(
            "COPY archival_lines (tenant_id, user_id, scope, agent_id, line_number, ordinal,"
            " content, embedding, embedding_model) FROM STDIN"
        ) as copy,
    ):
        for user, n, text in rows:
            vector = real_array(unit(rng))
            copy.write_row(("bench", user, "user", "", n, n, text, vector, MODEL))
    conn.execute(
        "UPDATE archival_lines SET embedded_hash = hashtextextended(content, 0)"
        " WHERE embedded_hash IS NULL"
    )
    conn.execute("VACUUM ANALYZE archival_lines")


def fill(url: str, lines: int, rng: random.Random) -> None:
    """One user's archival block of ``lines`` lines."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM archival_lines")
        conn.execute("DELETE FROM archival_vocabulary")
        texts = (" ".join(rng.choice(WORDS) for _ in range(8)) for _ in range(lines))
        copy_lines(conn, (("scan", n, f"{t} line {n}") for n, t in enumerate(texts, 1)), rng)
        conn.execute(
            "INSERT INTO archival_vocabulary (tenant_id, user_id, scope, agent_id, lexemes,"
            " line_count, lexeme_total) SELECT 'bench', 'scan', 'user', '',"
            " (SELECT array_agg(DISTINCT u.lexeme) FROM archival_lines, unnest(lexemes) AS u),"
            " count(*), sum(length(lexemes)) FROM archival_lines"
        )


def crowd(url: str, lines: int, rng: random.Random) -> None:
    """Lines of other users, with vectors of the same model."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = ((f"other-{n % 50}", n, f"line {n}") for n in range(1, lines + 1))
        copy_lines(conn, rows, rng)


EXACT = """
SELECT ordinal FROM archival_lines
WHERE tenant_id = 'bench' AND user_id = 'scan' AND scope = 'user' AND agent_id = ''
  AND embedding_model = %(model)s
ORDER BY embedding::vector <=> %(q)s::vector
LIMIT 100
"""
HNSW_INDEX = (
    "CREATE INDEX IF NOT EXISTS bench_hnsw ON archival_lines USING hnsw "
    "((embedding::vector(384)) vector_cosine_ops) WHERE embedding_model = 'bench-random-384'"
)
HNSW = """
SELECT ordinal FROM archival_lines
WHERE tenant_id = 'bench' AND user_id = 'scan' AND scope = 'user' AND agent_id = ''
  AND embedding_model = 'bench-random-384'
ORDER BY embedding::vector(384) <=> %(q)s::vector(384)
LIMIT 100
"""


async def _used(conn: psycopg.AsyncConnection[object], vector: list[float]) -> str:
    explain = await conn.execute("EXPLAIN " + HNSW, {"q": vector_literal(vector)})
    plan = await explain.fetchall()
    return "" if any("bench_hnsw" in str(r[0]) for r in plan) else " (index not used)"


def timed(samples: list[float]) -> str:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)] * 1000

    return f"{at(0.5):.1f} / {at(0.95):.1f} / {at(0.99):.1f}"


async def measure(call: Callable[[], Awaitable[object]], queries: int) -> list[float]:
    await call()  # prepared and planned before the timing
    samples = []
    for _ in range(queries):
        began = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - began)
    return samples


async def run_size(url: str, lines: int, queries: int, rng: random.Random) -> dict[str, str]:
    fill(url, lines, rng)
    vectors = [unit(rng) for _ in range(queries + 1)]
    db = Database(url, pool_size=1, index_model=MODEL)
    found: dict[str, str] = {}
    try:
        count = iter(range(10**9))

        query = RankQuery(agent_id="a", query="which ferry ticket for the harbor?", limit=10)
        async with db.connection(CALLER) as tx:
            lexical = await tx.recall.lexical(query)

        async def words() -> object:
            async with db.connection(CALLER) as tx:
                return await tx.recall.lexical(query)

        async def fusion() -> object:
            meaning = Meaning(vectors[next(count) % len(vectors)], MODEL, 0.5)
            async with db.connection(CALLER) as tx:
                return await tx.recall.fuse(query, lexical, meaning)

        found["words"] = timed(await measure(words, queries))
        found["fusion"] = timed(await measure(fusion, queries))
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:

            async def exact() -> object:
                q = vector_literal(vectors[next(count) % len(vectors)])
                return await (await conn.execute(EXACT, {"model": MODEL, "q": q})).fetchall()

            found["exact"] = timed(await measure(exact, queries))
            await conn.execute(HNSW_INDEX)
            await conn.execute("SET hnsw.iterative_scan = relaxed_order")
            await conn.execute("SET hnsw.ef_search = 200")

            async def hnsw() -> object:
                q = vector_literal(vectors[next(count) % len(vectors)])
                return await (await conn.execute(HNSW, {"q": q})).fetchall()

            found["hnsw"] = timed(await measure(hnsw, queries)) + await _used(conn, vectors[0])
            # Other users' lines, three times as many: the index must walk past them.
            crowd(url, 3 * lines, rng)
            found["hnsw crowd"] = timed(await measure(hnsw, queries)) + await _used(
                conn, vectors[0]
            )
            found["exact crowd"] = timed(await measure(exact, queries))
            await conn.execute("DROP INDEX bench_hnsw")
    finally:
        await db.close()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=lambda t: [int(x) for x in t.split(",")],
        default=[1000, 4000, 16000],
        help="lines in the user's block, comma-separated",
    )
    parser.add_argument("--queries", type=int, default=100, help="queries timed per size")
    args = parser.parse_args()

    def body(run: Run) -> None:
        embedded = EmbeddedPostgres(Path(run.scratch))
        url = embedded.start()
        try:
            migrate.upgrade(url)
            rng = random.Random(1)
            rows = {n: asyncio.run(run_size(url, n, args.queries, rng)) for n in args.sizes}
        finally:
            embedded.stop()
        print(f"\n## Recall by meaning: exact scan or HNSW ({time.strftime('%Y-%m-%d %H:%M')})\n")
        print(run.machine(f"psycopg {psycopg.__version__}"))
        print(
            f"One user's lines with random {DIMENSIONS}-dimension vectors; {args.queries} "
            "queries per size; p50 / p95 / p99 ms.\n"
        )
        print(
            "| lines of the user | Recall's lexical half | Recall's fusion | exact scan, "
            "100 nearest | HNSW, 100 nearest | with 3x other users' lines: exact | HNSW |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for n, f in rows.items():
            print(
                f"| {n:,} | {f['words']} | {f['fusion']} | {f['exact']} | {f['hnsw']} "
                f"| {f['exact crowd']} | {f['hnsw crowd']} |"
            )
        print(run.total())

    return run_main("vector_scan", body)


if __name__ == "__main__":
    sys.exit(main())
