"""Faults the service meets in production, on loopback and bounded in time.

- PostgreSQL restarting under load: UNAVAILABLE (never INTERNAL) while it is down,
  recovery without restarting the service, and no acknowledged write lost.
- Client deadlines and cancellations: no transaction or connection left behind.
- Messages over the size limit: RESOURCE_EXHAUSTED, and nothing written.
- SIGTERM under load: a clean exit that loses no acknowledged write.

Every wait is a bounded poll; nothing here asserts how long anything took.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import logging
import random
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from psycopg import sql

from agent_memory.config import Settings
from agent_memory.domain.identity import Principal
from agent_memory.store import migrate
from agent_memory.store.database import Database
from agent_memory.store.embedded import EmbeddedPostgres, ensure_database, postgres_bin_dir
from agentmemory.v1 import (
    block_pb2,
    decision_pb2,
    decision_service_pb2_grpc,
    memory_pb2,
    memory_service_pb2_grpc,
)
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import decision_service_pb2 as decision_pb
from agentmemory.v1 import memory_service_pb2 as memory_pb
from agentmemory.v1 import recall_service_pb2 as recall_pb
from tests.support import Client, ServeProcess, ServerThread, error_details, wait_until

OWNER = memory_pb2.MemoryOwner(agent_id="writer")


# --- a steady stream of writes ---------------------------------------------------------


@dataclass
class Writers:
    """Threads upserting new keys back to back; every acknowledged key is recorded, and
    every failure by its status code and ErrorInfo reason."""

    channel: grpc.Channel
    metadata: tuple[tuple[str, str], ...]
    threads: int = 4
    acked: list[str] = field(default_factory=list)
    failures: Counter[tuple[str, str]] = field(default_factory=Counter)
    _stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _workers: list[threading.Thread] = field(default_factory=list)

    def __enter__(self) -> Writers:
        stub = memory_service_pb2_grpc.MemoryServiceStub(self.channel)
        for n in range(self.threads):
            worker = threading.Thread(target=self._write, args=(stub, n), daemon=True)
            worker.start()
            self._workers.append(worker)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        for worker in self._workers:
            worker.join(30)
        assert not any(w.is_alive() for w in self._workers), "a writer never returned"

    def _write(self, stub: memory_service_pb2_grpc.MemoryServiceStub, n: int) -> None:
        for i in itertools.count():
            if self._stop.is_set():
                return
            key = f"w{n}-{i}"
            request = memory_pb.UpsertMemoryRequest(owner=OWNER, key=key, value=f"value {key}")
            try:
                stub.UpsertMemory(request, metadata=self.metadata, timeout=20)
            except grpc.RpcError as error:
                code = error.code()  # type: ignore[attr-defined]
                try:
                    reason = error_details(error).reason
                except AssertionError:
                    reason = "<no ErrorInfo>"
                with self.lock:
                    self.failures[(code.name, reason)] += 1
                time.sleep(0.02)  # a failing call returns at once; do not spin
            else:
                with self.lock:
                    self.acked.append(key)

    def acked_count(self) -> int:
        with self.lock:
            return len(self.acked)

    def failure_count(self) -> int:
        with self.lock:
            return sum(self.failures.values())


def stored_keys(url: str, tenant: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT key FROM memories WHERE tenant_id = %s AND owner_id = 'writer'", (tenant,)
        ).fetchall()
    return {row[0] for row in rows}


# --- PostgreSQL restarting under load ---------------------------------------------------


class RestartablePostgres:
    """An embedded PostgreSQL of this test alone, stopped and started with pg_ctl as an
    operator (or a crash and its supervisor) would; never the suite's shared server."""

    def __init__(self, root: Path) -> None:
        self._embedded = EmbeddedPostgres(root)
        self._embedded.start()
        self.pgdata = self._embedded.pgdata
        # As root the server runs as an account of its own; pg_ctl must too.
        assert self._embedded.account is not None
        assert self._embedded.socket_dir is not None
        self._account = self._embedded.account
        self._socket_dir = self._embedded.socket_dir
        ensure_database(self._embedded.url("postgres"), "faults")
        self.url: str = self._embedded.url("faults")
        self.running = True

    def _pg_ctl(self, *args: str) -> None:
        command = self._account.command(
            [str(postgres_bin_dir() / "pg_ctl"), "-D", str(self.pgdata), *args]
        )
        done = subprocess.run(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60
        )
        log = self.pgdata / "log"
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        assert done.returncode == 0, f"pg_ctl {' '.join(args)} failed:\n{tail}"

    def stop(self) -> None:
        """Fast shutdown: open transactions are rolled back, every session is cut."""
        self._pg_ctl("-w", "-m", "fast", "stop")
        self.running = False

    def start(self) -> None:
        """Start again on the same data directory and socket, as the supervisor would."""
        self._pg_ctl(
            "-w",
            "-o",
            "-c listen_addresses=''",
            "-o",
            f"-k {self._socket_dir}",
            "-o",
            "-c unix_socket_permissions=0700",
            "-l",
            str(self.pgdata / "log"),
            "start",
        )
        self.running = True

    def close(self) -> None:
        self._embedded.stop()


@pytest.fixture
def restartable_postgres(tmp_path: Path) -> Iterator[RestartablePostgres]:
    pg = RestartablePostgres(tmp_path)
    try:
        migrate.upgrade(pg.url)
        yield pg
    finally:
        pg.close()


def test_postgres_restarting_under_load_is_unavailable_then_recovers_without_losing_writes(
    restartable_postgres: RestartablePostgres,
) -> None:
    pg = restartable_postgres
    served = ServerThread(pg.url)
    with served:
        with served.client() as client, Writers(client.channel, client.metadata) as writers:
            assert wait_until(lambda: writers.acked_count() >= 40), writers.failures
            assert not writers.failures, writers.failures

            pg.stop()
            with writers.lock:
                acked_before_crash = list(writers.acked)
            # While it is down every call is refused as UNAVAILABLE with its ErrorInfo.
            with pytest.raises(grpc.RpcError) as down:
                client.call(
                    client.memory.ListMemories,
                    memory_pb.ListMemoriesRequest(owner=OWNER),
                    timeout=20,
                )
            details = error_details(down.value)
            assert details.code is grpc.StatusCode.UNAVAILABLE, details
            assert details.reason == "DATABASE_UNAVAILABLE"
            # The writers keep hammering it for a while.
            assert wait_until(lambda: writers.failure_count() >= 20), writers.failures

            pg.start()
            # The same service, never restarted, answers again by itself.
            probe = memory_pb.UpsertMemoryRequest(owner=OWNER, key="probe", value="back")
            refused: list[grpc.StatusCode] = []

            def answers() -> bool:
                try:
                    client.call(client.memory.UpsertMemory, probe, timeout=20)
                except grpc.RpcError as error:
                    refused.append(error.code())  # type: ignore[attr-defined]
                    return False
                return True

            assert wait_until(answers, timeout=60, step=0.2), "the service never recovered"
            assert set(refused) <= {grpc.StatusCode.UNAVAILABLE}, refused
            recovered_at = writers.acked_count()
            assert wait_until(lambda: writers.acked_count() >= recovered_at + 40), (
                "the writers never got going again",
                writers.failures,
            )
            writers.stop()

        # Failures were UNAVAILABLE with the database reason, and nothing else.
        assert set(writers.failures) == {("UNAVAILABLE", "DATABASE_UNAVAILABLE")}, writers.failures
        stored = stored_keys(pg.url, client.tenant_id)
        assert set(acked_before_crash) <= stored
        assert set(writers.acked) <= stored
        assert "probe" in stored


def test_health_follows_the_database_and_its_outage_is_logged_sparingly(
    restartable_postgres: RestartablePostgres, caplog: pytest.LogCaptureFixture
) -> None:
    pg = restartable_postgres
    served = ServerThread(
        pg.url, settings=Settings(health_check_seconds=0.2, extraction_poll_seconds=0.05)
    )
    with served, served.client() as client:
        health = health_pb2_grpc.HealthStub(client.channel)

        def status(service: str = "") -> int:
            reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
            return int(reply.status)

        def listed_at_once(calls: int) -> None:
            # Calls at once: the pool holds several connections when they are done.
            def lists(_: int) -> None:
                for _ in range(calls):
                    client.call(
                        client.memory.ListMemories, memory_pb.ListMemoriesRequest(owner=OWNER)
                    )

            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lists, range(8)))

        assert status() == health_pb2.HealthCheckResponse.SERVING
        listed_at_once(20)
        caplog.set_level(logging.INFO)
        caplog.clear()
        pg.stop()
        assert wait_until(lambda: status() == health_pb2.HealthCheckResponse.NOT_SERVING)
        assert status("agentmemory.v1.MemoryService") == health_pb2.HealthCheckResponse.NOT_SERVING
        for _ in range(30):
            with pytest.raises(grpc.RpcError) as down:
                client.call(client.memory.ListMemories, memory_pb.ListMemoriesRequest(owner=OWNER))
            assert down.value.code() is grpc.StatusCode.UNAVAILABLE  # type: ignore[attr-defined]
        pg.start()
        assert wait_until(lambda: status() == health_pb2.HealthCheckResponse.SERVING, timeout=60)
        # None of the connections from before the outage is handed to these calls.
        listed_at_once(5)
    told = [r for r in caplog.records if r.levelno >= logging.WARNING]
    # No traceback and no line per refused call, per reconnection attempt or per poll of
    # the idle extraction worker: the outage is said once, summarised every few
    # seconds, and its end said once.
    assert all(r.exc_info is None for r in told), [r.getMessage() for r in told]
    texts = [r.getMessage() for r in told]
    assert sum(t.startswith("database unavailable") for t in texts) == 1, texts
    assert sum(t.startswith("database answers again") for t in texts) == 1, texts
    assert all(t.startswith("database ") for t in texts), texts
    assert sum(t.startswith("database still unavailable") for t in texts) == len(texts) - 2


def test_a_database_down_before_the_first_call_is_used_once_it_answers(
    restartable_postgres: RestartablePostgres,
) -> None:
    """A server whose database is down before any call opened its pool (a worker of
    several starting while the database restarts) serves once the database answers."""
    pg = restartable_postgres

    async def down_then_up() -> None:
        db = Database(pg.url, pool_size=2)
        try:
            pg.stop()
            assert not await db.probe()
            pg.start()
            assert await db.probe()
            await unit_of_work(db)
        finally:
            await db.close()

    asyncio.run(down_then_up())


# --- client deadlines and cancellations ---------------------------------------------


POOL = 4


@pytest.fixture
def own_database(create_database: Callable[[], str]) -> str:
    url = create_database()
    migrate.upgrade(url)
    return url


def service_sessions(url: str) -> list[tuple[str, str]]:
    """(state, query) of every connection the service holds to ``url``'s database."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT coalesce(state, ''), query FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = 'agent-memory'"
        ).fetchall()
    return [(str(state), str(query)) for state, query in rows]


def quiet(url: str) -> bool:
    """No session in a transaction or running a query."""
    return all(state == "idle" for state, _ in service_sessions(url))


def settled(url: str) -> bool:
    """Quiet, and no more sessions than the pool keeps."""
    sessions = service_sessions(url)
    return len(sessions) <= POOL and all(state == "idle" for state, _ in sessions)


ARCHIVE = "\n".join(f"harbor line {n} by the pier" for n in range(200))


def test_tiny_deadlines_and_cancelled_calls_leave_no_transaction_or_connection_behind(
    own_database: str,
) -> None:
    served = ServerThread(own_database, settings=Settings(db_pool_size=POOL))
    with served, served.client() as client:
        client.call(
            client.blocks.WriteBlock,
            block_pb.WriteBlockRequest(
                label=block_pb2.BLOCK_LABEL_ARCHIVAL,
                scope=memory_pb2.SCOPE_USER,
                content=ARCHIVE,
            ),
        )
        recall = recall_pb.RecallRequest(query="harbor pier", agent_id="a", limit=100)
        seen: Counter[str] = Counter()
        lock = threading.Lock()

        def note(code: grpc.StatusCode) -> None:
            with lock:
                seen[code.name] += 1

        def tiny_call(kind: int, key: str, timeout: float) -> None:
            auth = {"metadata": client.metadata, "timeout": timeout}
            if kind == 0:
                request = memory_pb.UpsertMemoryRequest(owner=OWNER, key=key, value="v")
                client.memory.UpsertMemory(request, **auth)
            elif kind == 1:
                client.memory.ListMemories(memory_pb.ListMemoriesRequest(owner=OWNER), **auth)
            elif kind == 2:
                list(client.recall.Recall(recall, **auth))
            else:
                render = recall_pb.RenderPromptRequest(agent_id="a", user_message="harbor")
                client.recall.RenderPrompt(render, **auth)

        def tiny_deadlines(n: int) -> None:
            rnd = random.Random(n)
            for i in range(60):
                timeout = rnd.choice([0.001, 0.002, 0.005, 0.01, 0.02, 0.05])
                try:
                    tiny_call(rnd.randrange(4), f"d{n}-{i}", timeout)
                except grpc.RpcError as error:
                    note(error.code())  # type: ignore[attr-defined]
                else:
                    note(grpc.StatusCode.OK)

        def cancellations(n: int) -> None:
            for i in range(25):
                stream = client.recall.Recall(recall, metadata=client.metadata, timeout=30)
                if i % 2:
                    next(stream)  # one match read, the rest abandoned
                stream.cancel()
                try:
                    list(stream)
                except grpc.RpcError as error:
                    note(error.code())  # type: ignore[attr-defined]
                else:
                    note(grpc.StatusCode.OK)  # it had already finished
                future = client.memory.UpsertMemory.future(
                    memory_pb.UpsertMemoryRequest(owner=OWNER, key=f"c{n}-{i}", value="v"),
                    metadata=client.metadata,
                    timeout=30,
                )
                future.cancel()

        workers = [threading.Thread(target=tiny_deadlines, args=(n,)) for n in range(4)]
        workers += [threading.Thread(target=cancellations, args=(n,)) for n in range(3)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(120)
        assert not any(w.is_alive() for w in workers)
        assert set(seen) <= {"OK", "DEADLINE_EXCEEDED", "CANCELLED"}, seen
        assert seen["DEADLINE_EXCEEDED"] > 0
        assert seen["CANCELLED"] > 0

        # No session is left in a transaction, or busy with a query nobody waits for:
        # checked before anything is collected.
        assert wait_until(lambda: quiet(own_database), timeout=30), service_sessions(own_database)
        db = served.db
        assert db is not None
        assert wait_until(lambda: db.connections_in_use() == 0), db.connections_in_use()
        assert wait_until(lambda: settled(own_database), timeout=30), service_sessions(own_database)
        # The server still answers, on every path the faults went through.
        done = client.call(
            client.memory.UpsertMemory,
            memory_pb.UpsertMemoryRequest(owner=OWNER, key="after", value="fine"),
        )
        assert done.created
        assert len(list(client.call(client.recall.Recall, recall))) == 100
        assert settled(own_database) or wait_until(lambda: settled(own_database))


async def unit_of_work(db: Database) -> None:
    async with db.transaction(Principal("faults", "u")) as tx:
        await tx.agents.get("a")


def test_a_unit_of_work_cancelled_while_connecting_leaves_no_session_open(
    own_database: str,
) -> None:
    async def cancel_while_connecting() -> None:
        # Cancel at a sweep of moments across the first 10 ms of the unit of work, when
        # a fresh pool opens its connection; three sweeps.
        for step in range(120):
            db = Database(own_database, pool_size=1)
            task = asyncio.create_task(unit_of_work(db))
            await asyncio.sleep(step % 40 * 0.00025)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await db.close()

    # The garbage collector, left on, would close such sessions at some unknown later
    # moment; off, what the code itself leaves open stays visible.
    enabled = gc.isenabled()
    gc.disable()
    try:
        asyncio.run(cancel_while_connecting())
        left = service_sessions(own_database)
    finally:
        if enabled:
            gc.enable()
        gc.collect()
    assert left == [], f"{len(left)} sessions still open after every pool was closed"


# --- messages over the size limit ---------------------------------------------------


LIMIT = 64 * 1024
HUGE = "x" * (2 * LIMIT)


@pytest.fixture(scope="module")
def small_server(database_url: str) -> Iterator[ServerThread]:
    running = ServerThread(database_url, settings=Settings(max_message_bytes=LIMIT))
    with running:
        yield running


def tenant_rows(url: str, tenant: str) -> dict[str, int]:
    """Row counts of every tenant table, for one tenant."""
    with psycopg.connect(url) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT table_name FROM information_schema.columns "
                "WHERE table_schema = 'public' AND column_name = 'tenant_id'"
            )
        ]
        counts: dict[str, int] = {}
        for table in tables:
            query = sql.SQL("SELECT count(*) FROM {} WHERE tenant_id = %s")
            row = conn.execute(query.format(sql.Identifier(table)), (tenant,)).fetchone()
            assert row is not None
            counts[table] = int(row[0])
        return counts


def oversized_write_block(client: Client) -> Any:
    return client.call(
        client.blocks.WriteBlock,
        block_pb.WriteBlockRequest(
            label=block_pb2.BLOCK_LABEL_ARCHIVAL, scope=memory_pb2.SCOPE_USER, content=HUGE
        ),
    )


def oversized_memorize(client: Client) -> Any:
    # A short memory whose conversation snapshot carries the bulk.
    return client.call(
        client.memory.Memorize,
        memory_pb.MemorizeRequest(
            owner=OWNER,
            content="likes tea",
            conversation=memory_pb2.Conversation(
                conversation_id="c1",
                messages=[memory_pb2.ConversationMessage(role="user", content=HUGE)],
            ),
        ),
    )


def oversized_decision(client: Client) -> Any:
    decisions = decision_service_pb2_grpc.DecisionServiceStub(client.channel)
    client.call(
        decisions.RegisterCardType,
        decision_pb.RegisterCardTypeRequest(card_type=decision_pb2.CardType(name="trade")),
    )
    return client.call(
        decisions.RecordDecision,
        decision_pb.RecordDecisionRequest(
            decision=decision_pb2.Decision(
                run_id="r1",
                agent_id="a",
                card_type="trade",
                action="WAIT",
                summary="range unresolved",
                result={"notes": HUGE},
            )
        ),
    )


def oversized_upsert_with_a_key(client: Client) -> Any:
    # Authenticated: the size check comes before the key is even looked at.
    return client.call(
        client.memory.UpsertMemory,
        memory_pb.UpsertMemoryRequest(owner=OWNER, key=HUGE, value="v"),
    )


@pytest.mark.parametrize(
    "send",
    [oversized_write_block, oversized_memorize, oversized_decision, oversized_upsert_with_a_key],
    ids=["WriteBlock", "Memorize", "RecordDecision", "UpsertMemory-authenticated"],
)
def test_a_write_over_the_size_limit_is_resource_exhausted_and_writes_nothing(
    small_server: ServerThread, database_url: str, send: Callable[[Client], Any]
) -> None:
    with small_server.client() as client:
        before = tenant_rows(database_url, client.tenant_id)
        with pytest.raises(grpc.RpcError) as info:
            send(client)
        assert info.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED  # type: ignore[attr-defined]
        after = tenant_rows(database_url, client.tenant_id)
        # RecordDecision registers its card type first; that write is not the oversized one.
        del after["card_types"], before["card_types"]
        assert after == before
        # The channel is fine: the next call of a normal size goes through.
        reply = client.call(
            client.memory.UpsertMemory,
            memory_pb.UpsertMemoryRequest(owner=OWNER, key="small", value="fits"),
        )
        assert reply.created


def test_a_write_just_under_the_size_limit_is_served(
    small_server: ServerThread, database_url: str
) -> None:
    # The boundary is the transport limit, not some smaller one: 60 KB of conversation.
    # (Prose: one 60 000-letter word stalls the secret scan, see test_bad_input.py's
    # test_a_long_unbroken_word_is_checked_for_secrets_without_stalling_the_server.)
    with small_server.client() as client:
        reply = client.call(
            client.memory.Memorize,
            memory_pb.MemorizeRequest(
                owner=OWNER,
                content="likes tea",
                conversation=memory_pb2.Conversation(
                    conversation_id="c1",
                    messages=[
                        memory_pb2.ConversationMessage(
                            role="user", content="tea and biscuits " * 3750
                        )
                    ],
                ),
            ),
        )
        assert reply.created
        assert tenant_rows(database_url, client.tenant_id)["memories"] == 1


# --- graceful shutdown under load ---------------------------------------------------


def test_sigterm_under_load_exits_cleanly_and_keeps_every_acknowledged_write(
    own_database: str,
) -> None:
    tenant = "shutdown-under-load"
    served = ServeProcess("--database-url", own_database, "--insecure-local")
    try:
        channel = grpc.insecure_channel(served.address)
        with Writers(channel, (("x-tenant-id", tenant),), threads=6) as writers:
            assert wait_until(lambda: writers.acked_count() >= 60), writers.failures
            code = served.terminate(timeout=60)
            # Whatever was in flight at SIGTERM has been answered; the writers now only
            # meet a closed door.
            assert wait_until(lambda: writers.failure_count() >= 6)
            writers.stop()
        channel.close()
    finally:
        if served.proc.poll() is None:
            served.proc.kill()
    assert code == 0, served.log()
    assert "agent-memory stopped" in served.log()
    assert writers.acked, "nothing was written before the shutdown"
    missing = set(writers.acked) - stored_keys(own_database, tenant)
    assert not missing, f"{len(missing)} acknowledged writes lost: {sorted(missing)[:5]}"
    # Calls refused by the closing server are UNAVAILABLE, or CANCELLED when the
    # connection closed under a call just sent; never INTERNAL or UNKNOWN.
    assert {code for code, _ in writers.failures} <= {"UNAVAILABLE", "CANCELLED"}, writers.failures
