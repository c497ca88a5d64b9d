"""Reads from a streaming standby: a primary and a hot standby made from the embedded
PostgreSQL's own binaries (``pg_basebackup``, streaming replication over a local
socket), and the service with ``database_read_url`` set.

Every statement is seen as the driver sends it, with the server it went to: Recall,
RenderPrompt and the listings run on the standby and write nothing there (what they
show is marked as used on the primary); writes, the reads of a compare-and-set
cycle and a caller's reads right after its own write run on the primary; and a
standby that lags past the bound or stops sends reads back to the primary, with one
log line each time.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import grpc
import psycopg
import pytest

from agent_memory.config import Settings
from agent_memory.store import migrate
from agent_memory.store.embedded import (
    EmbeddedPostgres,
)
from agent_memory.store.standby import CHECK_SECONDS
from agentmemory.v1 import block_pb2, memory_pb2, recall_pb2
from agentmemory.v1 import block_service_pb2 as blocks_pb
from agentmemory.v1 import memory_service_pb2 as pb
from agentmemory.v1 import recall_service_pb2 as recall_pb
from tests.support import Client, ServerThread, StreamingStandby, wait_embedded

pytestmark = pytest.mark.e2e

AGENT = "reader-agent"
SLIDE = timedelta(days=7)  # how far a use moves the agent's expiries
LAG_BOUND = 1.0
READ_YOUR_WRITES = 1.0


@pytest.fixture(scope="module")
def replicated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StreamingStandby]:
    if os.environ.get("MEMORY_TEST_DATABASE_URL"):
        pytest.skip("the standby is made from the embedded PostgreSQL's binaries")
    primary = EmbeddedPostgres(tmp_path_factory.mktemp("primary"))
    migrate.upgrade(primary.start())
    try:
        with StreamingStandby(primary) as replicated:
            yield replicated
    finally:
        primary.stop()


@dataclass
class Statements:
    """What the driver sent, with the server it went to (the socket folder)."""

    sent: list[tuple[str, str]] = field(default_factory=list)

    def on(self, host: str) -> list[str]:
        return [q for h, q in self.sent if h == host]

    def clear(self) -> None:
        self.sent.clear()


@pytest.fixture(scope="module")
def statements() -> Iterator[Statements]:
    seen = Statements()
    original = psycopg.AsyncConnection.execute

    async def spy(self: Any, query: Any, params: Any = None, *args: Any, **kw: Any) -> Any:
        seen.sent.append((str(self.info.host), " ".join(str(query).split())))
        return await original(self, query, params, *args, **kw)

    psycopg.AsyncConnection.execute = spy  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        psycopg.AsyncConnection.execute = original  # type: ignore[method-assign]


@pytest.fixture(scope="module")
def server(replicated: StreamingStandby, statements: Statements) -> Iterator[ServerThread]:
    settings = Settings(
        embedder="none",
        database_read_url=replicated.url,
        standby_max_lag_seconds=LAG_BOUND,
        read_your_writes_seconds=READ_YOUR_WRITES,
        expiry_sweep_seconds=3600,
    )
    with ServerThread(replicated.primary_url, settings=settings, index=True) as running:
        yield running


def caught_up(replicated: StreamingStandby) -> None:
    """Until the standby has replayed everything the primary wrote so far."""
    with psycopg.connect(replicated.primary_url, autocommit=True) as primary:
        row = primary.execute("SELECT pg_current_wal_lsn()::text").fetchone()
    assert row is not None
    with psycopg.connect(replicated.url, autocommit=True) as standby:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            done = standby.execute(
                "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (row[0],)
            ).fetchone()
            if done and done[0]:
                return
            time.sleep(0.05)
    raise AssertionError("the standby never caught up")


def prepare(client: Client) -> memory_pb2.Memory:
    enable = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id=AGENT, memory_enabled=True)
    )
    enable.settings.expiry_slide.FromTimedelta(SLIDE)
    enable.update_mask.paths.extend(["memory_enabled", "expiry_slide"])
    client.call(client.memory.UpdateAgentSettings, enable)
    lines = blocks_pb.WriteBlockRequest(
        label=block_pb2.BLOCK_LABEL_ARCHIVAL,
        scope=memory_pb2.SCOPE_AGENT,
        agent_id=AGENT,
        content="The staging database listens on port 5433.\nDeploys happen on Tuesdays.",
    )
    client.call(client.blocks.WriteBlock, lines)
    upsert = pb.UpsertMemoryRequest(
        owner=memory_pb2.MemoryOwner(agent_id=AGENT), key="deploy-day", value="Tuesdays"
    )
    upsert.ttl.FromTimedelta(timedelta(hours=1))
    memory: memory_pb2.Memory = client.call(client.memory.UpsertMemory, upsert).memory
    # A streaming standby is of the embedded PostgreSQL, which has pgvector.
    wait_embedded(client, memory.id, vectors=True)
    return memory


def recall(client: Client) -> list[recall_pb.RecallResponse]:
    request = recall_pb.RecallRequest(
        agent_id=AGENT, query="which port does staging listen on", include_memories=True
    )
    return list(client.call(client.recall.Recall, request))


def render(client: Client) -> str:
    request = recall_pb.RenderPromptRequest(
        agent_id=AGENT,
        memory_policy=recall_pb2.MemoryPolicy(archival_mode=recall_pb2.ARCHIVAL_MODE_AUTO),
        user_message="when do we deploy",
    )
    prompt: str = client.call(client.recall.RenderPrompt, request).system_prompt
    return prompt


def listed(client: Client) -> list[str]:
    request = pb.ListMemoriesRequest(owner=memory_pb2.MemoryOwner(agent_id=AGENT))
    return [m.key for m in client.call(client.memory.ListMemories, request).memories]


WRITES = re.compile(r"\b(INSERT INTO|UPDATE \w+ (AS \w+ )?SET|DELETE FROM|FOR UPDATE)\b")


def writes(statements: list[str]) -> list[str]:
    """The statements that write or lock rows, which a standby refuses."""
    return [q for q in statements if WRITES.search(q)]


def test_reads_that_may_lag_run_on_the_standby_and_mark_use_on_the_primary(
    server: ServerThread, replicated: StreamingStandby, statements: Statements
) -> None:
    standby_host = str(replicated.socket_dir)
    with server.client() as client:
        memory = prepare(client)
        caught_up(replicated)
        time.sleep(READ_YOUR_WRITES + 0.2)  # past the caller's own writes
        # The recall's marking of use is a write the standby then replays. On a loaded
        # machine that replay may take past the bound, and a read the service then
        # sends to the primary is right: the reads are tried again, the standby caught
        # up, until all three ran while it was within the bound.
        # The use is marked once (a try again finds it marked): what every try sent to
        # the primary is kept.
        deadline = time.monotonic() + 120
        sent_to_primary: list[str] = []
        while True:
            caught_up(replicated)
            statements.clear()
            found = recall(client)
            assert "The staging database listens on port 5433." in [r.content for r in found]
            assert "Tuesdays" in render(client)
            assert listed(client) == ["deploy-day"]
            assert writes(statements.on(standby_host)) == []
            on_primary = [q for h, q in statements.sent if h != standby_host]
            sent_to_primary += on_primary
            if not any("FROM archival_lines" in q for q in on_primary):
                break
            assert time.monotonic() < deadline, "reads never all ran on the standby"
            time.sleep(CHECK_SECONDS)  # the service's next look at the standby's lag
        on_standby = statements.on(standby_host)
        assert any("FROM archival_lines" in q for q in on_standby), on_standby
        assert any("agent_rows" in q for q in on_standby)  # the render
        # On the primary: only the key check of the call (none, when cached) and the
        # marking of the memories shown as used.
        marked = [q for q in sent_to_primary if "last_used_time = clock_timestamp()" in q]
        assert marked, sent_to_primary
        # The use was recorded on the primary, and the agent's slide moved the expiry.
        got = client.call(client.memory.GetMemory, pb.GetMemoryRequest(id=memory.id)).memory
        assert got.HasField("last_used_time")
        moved = got.expire_time.ToDatetime() - got.last_used_time.ToDatetime()
        assert abs(moved - SLIDE) < timedelta(seconds=1)


def test_writes_cas_reads_and_reads_after_a_write_run_on_the_primary(
    server: ServerThread, replicated: StreamingStandby, statements: Statements
) -> None:
    standby_host = str(replicated.socket_dir)
    with server.client() as client:
        prepare(client)
        caught_up(replicated)
        time.sleep(READ_YOUR_WRITES + 0.2)
        statements.clear()
        # A compare-and-set cycle: its read and its write on the primary.
        key = {"label": block_pb2.BLOCK_LABEL_CORE, "scope": memory_pb2.SCOPE_AGENT}
        core = blocks_pb.WriteBlockRequest(**key, agent_id=AGENT, content="v1")  # type: ignore[arg-type]
        client.call(client.blocks.WriteBlock, core)
        got = client.call(
            client.blocks.GetBlock,
            blocks_pb.GetBlockRequest(**key, agent_id=AGENT),  # type: ignore[arg-type]
        ).block
        # Right after its write, the caller reads it back: on the primary.
        upsert = pb.UpsertMemoryRequest(
            owner=memory_pb2.MemoryOwner(agent_id=AGENT), key="fresh", value="just written"
        )
        client.call(client.memory.UpsertMemory, upsert)
        assert "fresh" in listed(client)
        assert got.content == "v1"
        assert statements.on(standby_host) == []


def test_a_lagging_standby_and_a_stopped_one_send_reads_back_to_the_primary(
    server: ServerThread,
    replicated: StreamingStandby,
    statements: Statements,
    caplog: pytest.LogCaptureFixture,
) -> None:
    standby_host = str(replicated.socket_dir)
    with server.client() as writer, server.client() as reader:
        prepare(reader)
        caught_up(replicated)
        time.sleep(READ_YOUR_WRITES + 0.2)
        listed(reader)  # the standby is checked, and found usable
        time.sleep(1.2)
        with psycopg.connect(replicated.url, autocommit=True) as standby:
            standby.execute("SELECT pg_wal_replay_pause()")
            try:
                with caplog.at_level(logging.INFO, logger="agent_memory.store.standby"):
                    # The primary goes on; the standby receives but does not replay.
                    for n in range(5):
                        upsert = pb.UpsertMemoryRequest(
                            owner=memory_pb2.MemoryOwner(agent_id="busy"), key=f"k{n}", value="v"
                        )
                        writer.call(writer.memory.UpsertMemory, upsert)
                        time.sleep(0.5)
                    deadline = time.monotonic() + 10
                    while time.monotonic() < deadline:
                        statements.clear()
                        listed(reader)
                        if not statements.on(standby_host):
                            break
                        time.sleep(0.3)
                    assert statements.on(standby_host) == []
                    lags = [r.getMessage() for r in caplog.records if "lags" in r.getMessage()]
                    assert len(lags) == 1, lags
                    assert lags[0].endswith("past the bound of 1 s: reads go to the primary")
            finally:
                standby.execute("SELECT pg_wal_replay_resume()")
        caught_up(replicated)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            statements.clear()
            listed(reader)
            if statements.on(standby_host):
                break
            time.sleep(0.3)
        assert statements.on(standby_host), "reads never went back to the standby"

        # A standby that stops: reads go on, on the primary, and one line says why.
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="agent_memory.store.standby"):
            replicated.stop()
            answered = 0
            refused: set[grpc.StatusCode] = set()
            for _ in range(10):
                try:
                    listed(reader)
                    recall(reader)
                    answered += 1
                except grpc.RpcError as error:
                    refused.add(error.code())  # type: ignore[attr-defined]
                time.sleep(0.2)
            # A read already on its way to the standby as it stopped fails as
            # UNAVAILABLE, which clients retry; the others are answered.
            assert refused <= {grpc.StatusCode.UNAVAILABLE}
            assert answered >= 8
            down = [r.getMessage() for r in caplog.records if "does not answer" in r.getMessage()]
            assert len(down) == 1, down
            assert down[0].endswith("reads go to the primary")
