"""Three ``agent-memory serve`` replicas on one PostgreSQL, as a deployment runs them.

Across the replicas: compare-and-set has one winner per round, the same Memorize
creates once, each queued extraction pass reaches the model once, each text is
embedded once, each expired memory is swept once, a revoked key is refused by every
replica within the cache's time, and SIGTERM of a replica under load loses no
acknowledged write while its clients' retries land on the others.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta

import grpc
import psycopg
import pytest

from agent_memory.store import migrate
from agent_memory.store.memories import EXPIRY_ACTOR
from agentmemory.v1 import block_pb2, memory_pb2
from agentmemory.v1 import block_service_pb2 as blocks_pb
from agentmemory.v1 import memory_service_pb2 as pb
from agentmemory.v1.block_service_pb2_grpc import BlockServiceStub
from agentmemory.v1.memory_service_pb2_grpc import MemoryServiceStub
from tests.fake_anthropic import FakeAnthropic
from tests.fake_anthropic import running_fake as running_model
from tests.fake_embeddings import FakeEmbeddings
from tests.fake_embeddings import running_fake as running_embeddings
from tests.support import ServeProcess, cli, has_pgvector

pytestmark = pytest.mark.e2e

REPLICAS = 3
AUTH_CACHE_SECONDS = 2
AGENT = "fleet"


@dataclass
class Fleet:
    database_url: str
    replicas: list[ServeProcess]
    key: str
    model: FakeAnthropic
    embeddings: FakeEmbeddings

    @property
    def auth(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.key}"),)


def _stubs(address: str) -> tuple[MemoryServiceStub, BlockServiceStub]:
    # A channel of its own per caller: a shared subchannel would put every call on one.
    channel = grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
    return MemoryServiceStub(channel), BlockServiceStub(channel)


def new_key(url: str, tenant: str) -> str:
    done = cli("keys", "create", "--tenant", tenant, "--user", "ops", "--database-url", url)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def fleet(create_database: Callable[[], str]) -> Iterator[Fleet]:
    url = create_database()
    migrate.upgrade(url)
    with running_model() as model, running_embeddings() as embeddings:
        env = {
            "ANTHROPIC_BASE_URL": model.base_url,
            "ANTHROPIC_API_KEY": "test-key",
            "MEMORY_EMBEDDER": "http",
            "MEMORY_EMBEDDER_URL": f"{embeddings.base_url}/v1",
            "MEMORY_EMBEDDER_MODEL": "fake",
            "MEMORY_INDEX_POLL_SECONDS": "0.2",
            "MEMORY_EXTRACTION_SETTLE_SECONDS": "0",
            "MEMORY_EXTRACTION_POLL_SECONDS": "0.2",
            "MEMORY_EXPIRY_SWEEP_SECONDS": "0.5",
            "MEMORY_AUTH_CACHE_SECONDS": str(AUTH_CACHE_SECONDS),
            "MEMORY_DB_POOL_SIZE": "8",
        }
        replicas: list[ServeProcess] = []
        try:
            for _ in range(REPLICAS):
                replicas.append(ServeProcess("--database-url", url, env=env))
            yield Fleet(url, replicas, new_key(url, "acme"), model, embeddings)
        finally:
            for replica in replicas:
                if replica.proc.poll() is None:
                    replica.terminate()


def test_twenty_writers_over_three_replicas_have_one_winner_per_round(fleet: Fleet) -> None:
    stubs = [_stubs(r.address)[1] for r in fleet.replicas]
    key = {"label": block_pb2.BLOCK_LABEL_CORE, "scope": memory_pb2.SCOPE_AGENT, "agent_id": AGENT}
    first = blocks_pb.WriteBlockRequest(**key, content="round 0")  # type: ignore[arg-type]
    stubs[0].WriteBlock(first, metadata=fleet.auth, timeout=30)
    for round_ in range(1, 4):
        current = (
            stubs[0]
            .GetBlock(
                blocks_pb.GetBlockRequest(**key),
                metadata=fleet.auth,
                timeout=30,  # type: ignore[arg-type]
            )
            .block
        )
        start = threading.Barrier(20)

        def write(
            n: int,
            round_: int = round_,
            current: block_pb2.Block = current,
            start: threading.Barrier = start,
        ) -> str:
            request = blocks_pb.WriteBlockRequest(
                **key,  # type: ignore[arg-type]
                content=f"round {round_} by writer {n}",
                expected_updated_at=current.updated_at,
            )
            start.wait()
            try:
                stubs[n % REPLICAS].WriteBlock(request, metadata=fleet.auth, timeout=30)
            except grpc.RpcError as error:
                return error.code().name  # type: ignore[attr-defined,no-any-return]
            return "OK"

        with ThreadPoolExecutor(20) as pool:
            outcomes = Counter(pool.map(write, range(20)))
        assert outcomes["OK"] == 1, outcomes
        assert set(outcomes) == {"OK", "ABORTED"}, outcomes
        after = (
            stubs[1]
            .GetBlock(
                blocks_pb.GetBlockRequest(**key),
                metadata=fleet.auth,
                timeout=30,  # type: ignore[arg-type]
            )
            .block
        )
        assert after.version == current.version + 1
        assert after.content.startswith(f"round {round_} by writer ")


def test_the_same_memorize_sent_to_every_replica_creates_once(fleet: Fleet) -> None:
    stubs = [_stubs(r.address)[0] for r in fleet.replicas for _ in range(3)]
    request = pb.MemorizeRequest(
        owner=memory_pb2.MemoryOwner(agent_id=AGENT), content="The fleet deploys on Fridays."
    )
    start = threading.Barrier(len(stubs))

    def send(stub: MemoryServiceStub) -> str:
        start.wait()
        answer: pb.MemorizeResponse = stub.Memorize(request, metadata=fleet.auth, timeout=30)
        return answer.memory.id

    with ThreadPoolExecutor(len(stubs)) as pool:
        ids = set(pool.map(send, stubs))
    assert len(ids) == 1
    with psycopg.connect(fleet.database_url) as conn:
        created = conn.execute(
            "SELECT count(*) FROM memory_events WHERE memory_id = %s AND event_type = 'created'",
            (ids.pop(),),
        ).fetchone()
    assert created == (1,)


def test_queued_passes_reach_the_model_once_each(fleet: Fleet) -> None:
    stubs = [_stubs(r.address)[0] for r in fleet.replicas]
    enable = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id=AGENT, memory_enabled=True)
    )
    stubs[0].UpdateAgentSettings(enable, metadata=fleet.auth, timeout=30)
    sessions = [f"run-{n}" for n in range(9)]
    for n, session in enumerate(sessions):
        transcript = f"user: note {session}: the build cache lives on volume {n}\n" * 8
        request = pb.ExtractMemoriesRequest(
            agent_id=AGENT, session_id=session, transcript=transcript, queued=True
        )
        stubs[n % REPLICAS].ExtractMemories(request, metadata=fleet.auth, timeout=30)

    def sent() -> Counter[str]:
        found: Counter[str] = Counter()
        for body in list(fleet.model.requests):
            text = str(body.get("messages"))
            found.update(s for s in sessions if f"note {s}:" in text)
        return found

    deadline = time.monotonic() + 60
    while len(sent()) < len(sessions) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1)  # a second claim of any of them would have happened by now
    assert sent() == Counter(dict.fromkeys(sessions, 1))
    with psycopg.connect(fleet.database_url) as conn:
        done = conn.execute(
            "SELECT count(*), max(attempts) FROM extraction_jobs "
            "WHERE status = 'done' AND synthetic_session_id LIKE 'memory-extract:%%'"
        ).fetchone()
    assert done == (len(sessions), 1)


def test_each_line_is_embedded_once(fleet: Fleet) -> None:
    if not has_pgvector(fleet.database_url):
        pytest.skip("the indexer embeds only where PostgreSQL has pgvector")
    lines = [f"line {n}: the {word} runbook" for n, word in enumerate("abcdefghijklmnop")]
    request = blocks_pb.WriteBlockRequest(
        label=block_pb2.BLOCK_LABEL_ARCHIVAL,
        scope=memory_pb2.SCOPE_AGENT,
        agent_id="indexed",
        content="\n".join(lines),
    )
    _stubs(fleet.replicas[0].address)[1].WriteBlock(request, metadata=fleet.auth, timeout=30)

    def embedded() -> Counter[str]:
        found: Counter[str] = Counter()
        for body in list(fleet.embeddings.requests):
            inputs = body.get("input")
            for text in inputs if isinstance(inputs, list) else [inputs]:
                found.update(line for line in lines if line in str(text))
        return found

    with psycopg.connect(fleet.database_url, autocommit=True) as conn:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            indexed = conn.execute(
                "SELECT count(*) FROM archival_lines WHERE agent_id = 'indexed' "
                "AND embedded_hash IS NOT NULL"
            ).fetchone()
            if indexed == (len(lines),):
                break
            time.sleep(0.2)
    time.sleep(1)  # a second embedding of any of them would have happened by now
    assert embedded() == Counter(dict.fromkeys(lines, 1))


def test_each_expired_memory_is_swept_once(fleet: Fleet) -> None:
    stubs = [_stubs(r.address)[0] for r in fleet.replicas]
    brief_ids = []
    for n in range(12):
        request = pb.UpsertMemoryRequest(
            owner=memory_pb2.MemoryOwner(agent_id="brief"), key=f"brief-{n}", value="soon gone"
        )
        request.ttl.FromTimedelta(timedelta(seconds=1))
        answer = stubs[n % REPLICAS].UpsertMemory(request, metadata=fleet.auth, timeout=30)
        brief_ids.append(answer.memory.id)
    with psycopg.connect(fleet.database_url, autocommit=True) as conn:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            left = conn.execute(
                "SELECT count(*) FROM memories WHERE id = ANY(%s)", (brief_ids,)
            ).fetchone()
            if left == (0,):
                break
            time.sleep(0.2)
        time.sleep(1)  # a second sweep of any of them would have happened by now
        swept = conn.execute(
            "SELECT memory_id, count(*) FROM memory_events "
            "WHERE memory_id = ANY(%s) AND event_type = 'deleted' AND actor_user_id = %s "
            "GROUP BY memory_id",
            (brief_ids, EXPIRY_ACTOR),
        ).fetchall()
    assert sorted(n for _, n in swept) == [1] * len(brief_ids)


def test_a_revoked_key_is_refused_by_every_replica_within_the_cache_time(fleet: Fleet) -> None:
    key = new_key(fleet.database_url, "revoked-co")
    auth = (("authorization", f"Bearer {key}"),)
    stubs = [_stubs(r.address)[0] for r in fleet.replicas]
    asked = pb.GetCallerRequest()
    for stub in stubs:  # every replica has the key verified, and cached
        stub.GetCaller(asked, metadata=auth, timeout=30)
    key_id = key.split("_")[1]
    assert cli("keys", "revoke", key_id, "--database-url", fleet.database_url).returncode == 0
    revoked_at = time.monotonic()
    refused: dict[int, float] = {}
    codes: set[grpc.StatusCode] = set()
    while len(refused) < REPLICAS and time.monotonic() - revoked_at < AUTH_CACHE_SECONDS + 10:
        for n, stub in enumerate(stubs):
            if n in refused:
                continue
            try:
                stub.GetCaller(asked, metadata=auth, timeout=30)
            except grpc.RpcError as error:
                codes.add(error.code())  # type: ignore[attr-defined]
                refused[n] = time.monotonic() - revoked_at
        time.sleep(0.1)
    assert codes == {grpc.StatusCode.UNAUTHENTICATED}
    assert sorted(refused) == list(range(REPLICAS)), refused
    # The cache keeps a key verified for at most its time (the bound, not a speed).
    assert max(refused.values()) <= AUTH_CACHE_SECONDS + 5, refused


def test_sigterm_of_one_replica_under_load_loses_no_acknowledged_write(fleet: Fleet) -> None:
    acked: list[str] = []
    retried: list[str] = []
    failures: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()
    victim = fleet.replicas[0]
    order = [0, 1, 2]

    def write(n: int) -> None:
        stubs = [_stubs(fleet.replicas[i].address)[0] for i in order]
        for i in itertools.count():
            if stop.is_set():
                return
            key = f"load-{n}-{i}"
            request = pb.UpsertMemoryRequest(
                owner=memory_pb2.MemoryOwner(agent_id="load"), key=key, value="v"
            )
            # Each writer starts on its replica, and retries on the next when refused.
            for attempt, stub in enumerate(stubs[n % REPLICAS :] + stubs[: n % REPLICAS]):
                try:
                    stub.UpsertMemory(request, metadata=fleet.auth, timeout=20)
                except grpc.RpcError as error:
                    code = error.code()  # type: ignore[attr-defined]
                    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
                        continue
                    with lock:
                        failures.append(code.name)
                    return
                with lock:
                    acked.append(key)
                    if attempt:
                        retried.append(key)
                break
            else:
                with lock:
                    failures.append(f"{key}: no replica took it")
                return

    writers = [threading.Thread(target=write, args=(n,)) for n in range(9)]
    for writer in writers:
        writer.start()
    try:
        deadline = time.monotonic() + 60
        while len(acked) < 90 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert victim.terminate() == 0, victim.log()
        before = len(acked)
        while len(acked) < before + 90 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        for writer in writers:
            writer.join(30)
    assert not failures, failures
    assert retried, "no write met the stopped replica"
    with psycopg.connect(fleet.database_url) as conn:
        stored = {r[0] for r in conn.execute("SELECT key FROM memories WHERE owner_id = 'load'")}
    assert set(acked) <= stored
    assert "agent-memory stopped" in victim.log()
