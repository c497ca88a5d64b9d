"""Queued extraction: passes stored as jobs in PostgreSQL and run by the server's workers,
replaced while pending, retried with backoff, and run once across a restart.

These tests use a database of their own: every server's workers claim any due job in
their database, so a server from another test module must not pick these jobs up.
"""

from __future__ import annotations

import functools
import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import psycopg
import pytest
from psycopg.rows import dict_row

from agent_memory.config import Settings
from agent_memory.store import migrate
from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.fake_anthropic import FakeAnthropic, fact, model_on_loopback
from tests.support import Client, ServerThread

T = TypeVar("T")

TRANSCRIPT = (
    "user: how do we deploy this service?\n"
    "assistant: We deploy with `make release` from the repository root; it builds the "
    "image, runs the migrations and rolls the pods one by one. Staging is called blue.\n"
    "user: and where do the database credentials live?\n"
    "assistant: In the vault under secret/prod/db; the service reads them at start.\n"
)
WAIT_SECONDS = 20


@pytest.fixture(scope="module")
def queue_db(create_database: Callable[[str], str]) -> str:
    url = create_database("am_queue")
    migrate.upgrade(url)
    return url


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with model_on_loopback() as f:
        yield f


class Servers:
    """Servers started by one test, all stopped at its end."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self.running: list[ServerThread] = []

    def start(self, **settings: Any) -> ServerThread:
        settings.setdefault("extraction_sdk_retries", 0)
        settings.setdefault("extraction_poll_seconds", 0.1)
        server = ServerThread(self.database_url, settings=Settings(**settings))
        server.start()
        self.running.append(server)
        return server

    def stop(self, server: ServerThread) -> None:
        server.stop()
        self.running.remove(server)


@pytest.fixture
def servers(queue_db: str) -> Iterator[Servers]:
    started = Servers(queue_db)
    try:
        yield started
    finally:
        for server in list(started.running):
            server.stop()


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = WAIT_SECONDS) -> T:
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def enable(c: Client, agent_id: str = "a") -> None:
    c.call(
        c.memory.UpdateAgentSettings,
        pb.UpdateAgentSettingsRequest(
            settings=memory_pb2.AgentSettings(agent_id=agent_id, memory_enabled=True)
        ),
    )


def queue(c: Client, **fields: Any) -> pb.ExtractMemoriesResponse:
    fields.setdefault("agent_id", "a")
    if "chain_id" not in fields:
        fields.setdefault("session_id", "s1")
    fields.setdefault("transcript", TRANSCRIPT)
    return c.call(c.memory.ExtractMemories, pb.ExtractMemoriesRequest(queued=True, **fields))


def listed(c: Client, agent_id: str = "a") -> list[memory_pb2.Memory]:
    return list(
        c.call(
            c.memory.ListMemories,
            pb.ListMemoriesRequest(owner=memory_pb2.MemoryOwner(agent_id=agent_id), page_size=1000),
        ).memories
    )


def jobs(database_url: str, tenant_id: str) -> list[dict[str, Any]]:
    with psycopg.connect(database_url, row_factory=dict_row) as conn:
        return conn.execute(
            "SELECT id, synthetic_session_id, status, attempts, outcome, detail, transcript "
            "FROM extraction_jobs WHERE tenant_id = %s ORDER BY created_at",
            (tenant_id,),
        ).fetchall()


def done_job(database_url: str, tenant_id: str) -> dict[str, Any] | None:
    rows = jobs(database_url, tenant_id)
    return rows[0] if len(rows) == 1 and rows[0]["status"] == "done" else None


PROBE = (
    "user: which port does the staging database listen on?\n"
    "assistant: Staging PostgreSQL listens on 5433, production on the default 5432; the "
    "connection strings live in the deploy repository's env files.\n"
)


def a_pass_ran_after(server: ServerThread, queue_db: str, fake: FakeAnthropic) -> None:
    """Queue a probe pass that is due at once on ``server`` (which must not wait for
    conversations to settle) and wait for it to close, twice: when the second closes,
    the queue's workers have polled it at least twice since this was called."""
    with server.client() as c:
        enable(c, "probe")
        for n in range(2):
            fake.facts(fact(f"probe-{n}", f"a probe fact {n}"))
            queue(c, agent_id="probe", session_id=f"probe-{n}", transcript=PROBE)
            wait_for("the probe pass", functools.partial(closed, queue_db, c.tenant_id, n + 1))


def closed(queue_db: str, tenant_id: str, count: int) -> bool:
    """Whether the tenant has ``count`` jobs, all closed."""
    found = jobs(queue_db, tenant_id)
    return len(found) == count and all(j["status"] == "done" for j in found)


def passes_over(transcript: str, fake: FakeAnthropic) -> int:
    """How many model calls saw ``transcript`` (by a phrase only it holds)."""
    phrase = "rolls the pods one by one"
    assert phrase in transcript
    return sum(phrase in json.dumps(r) for r in fake.requests)


def usage(c: Client) -> pb.GetUsageResponse:
    return c.call(
        c.memory.GetUsage, pb.GetUsageRequest(synthetic_session_id_prefix="memory-extract:")
    )


def test_a_queued_pass_answers_at_once_and_runs_in_the_background(
    servers: Servers, fake: FakeAnthropic, queue_db: str
) -> None:
    srv = servers.start(extraction_settle_seconds=0)
    with srv.client() as c:
        enable(c)
        fake.facts(
            fact("Deploy Command", "Deploy with make release from the repository root"),
            input_tokens=900,
            output_tokens=80,
        )
        reply = queue(c)
        assert reply.outcome == memory_pb2.EXTRACTION_OUTCOME_QUEUED
        assert uuid.UUID(reply.job_id)
        assert reply.synthetic_session_id == "memory-extract:s1"
        assert list(reply.written) == []
        assert reply.usage.input_tokens == 0

        rows = wait_for("the queued fact", lambda: listed(c))
        assert [(m.key, m.source) for m in rows] == [
            ("auto:deploy-command", memory_pb2.MEMORY_SOURCE_AUTO)
        ]
        job = wait_for("the job to close", lambda: done_job(queue_db, c.tenant_id))
        assert str(job["id"]) == reply.job_id
        assert (job["status"], job["outcome"], job["attempts"]) == ("done", "completed", 1)
        recorded = wait_for("the usage record", lambda: usage(c).records)
        assert [(r.synthetic_session_id, r.input_tokens, r.outcome) for r in recorded] == [
            ("memory-extract:s1", 900, memory_pb2.EXTRACTION_OUTCOME_COMPLETED)
        ]
        assert len(fake.requests) == 1


def test_nothing_runs_before_the_conversation_settles(
    servers: Servers, fake: FakeAnthropic, queue_db: str
) -> None:
    srv = servers.start(extraction_settle_seconds=60)
    with srv.client() as c:
        enable(c)
        fake.facts(fact("k", "a fact for later"))
        reply = queue(c, chain_id="0123456789abcdef")
        assert reply.outcome == memory_pb2.EXTRACTION_OUTCOME_QUEUED
        assert reply.synthetic_session_id == "memory-extract:chain:01234567"
        # A server that does not wait runs passes queued after this one, while it waits.
        a_pass_ran_after(servers.start(extraction_settle_seconds=0), queue_db, fake)
        assert listed(c) == []
        assert passes_over(TRANSCRIPT, fake) == 0
        [job] = jobs(queue_db, c.tenant_id)
        assert (job["status"], job["attempts"], job["outcome"]) == ("queued", 0, None)
        assert job["synthetic_session_id"] == "memory-extract:chain:01234567"
        # Leave nothing due behind for the other tests' servers.
        with psycopg.connect(queue_db) as conn:
            conn.execute("DELETE FROM extraction_jobs WHERE tenant_id = %s", (c.tenant_id,))


def test_queueing_the_same_run_again_replaces_the_pending_pass(
    servers: Servers, fake: FakeAnthropic, queue_db: str
) -> None:
    # Queued on a server with no workers, then run by one that has them.
    intake = servers.start(extraction_settle_seconds=0, extraction_workers=0)
    with intake.client() as c:
        enable(c)
        first = queue(c, transcript=TRANSCRIPT + "first version of the run\n" * 10)
        second = queue(c, transcript=TRANSCRIPT + "second version of the run\n" * 10)
        assert first.job_id == second.job_id
        [pending] = jobs(queue_db, c.tenant_id)
        assert "second version" in pending["transcript"]
        servers.stop(intake)

        fake.facts(fact("deploy", "Deploy with make release"))
        runner = servers.start(extraction_settle_seconds=0)
        with runner.client(c.tenant_id) as again:
            job = wait_for("the job to close", lambda: done_job(queue_db, c.tenant_id))
            assert (job["outcome"], job["attempts"]) == ("completed", 1)
            assert len(fake.requests) == 1
            sent = fake.requests[0]["messages"][0]["content"]
            assert "second version of the run" in sent
            assert "first version" not in sent
            assert [m.key for m in listed(again)] == ["auto:deploy"]
            assert len(usage(again).records) == 1


def test_a_new_pass_of_a_run_queues_again_once_the_last_one_ran(
    servers: Servers, fake: FakeAnthropic, queue_db: str
) -> None:
    srv = servers.start(extraction_settle_seconds=0)
    with srv.client() as c:
        enable(c)
        fake.facts(fact("deploy", "Deploy with make release"))
        first = queue(c)
        wait_for("the first job to close", lambda: done_job(queue_db, c.tenant_id))
        fake.facts(fact("port", "The service listens on port 8080"))
        second = queue(c)
        assert second.job_id != first.job_id
        wait_for(
            "the second job to close",
            lambda: [j for j in jobs(queue_db, c.tenant_id) if j["status"] == "done"][1:],
        )
        assert sorted(m.key for m in listed(c)) == ["auto:deploy", "auto:port"]
        assert len(fake.requests) == 2


def test_model_errors_are_retried_with_backoff_and_the_facts_written_once(
    servers: Servers, fake: FakeAnthropic, queue_db: str
) -> None:
    srv = servers.start(
        extraction_settle_seconds=0,
        extraction_retry_base_seconds=0.2,
        extraction_max_attempts=3,
    )
    with srv.client() as c:
        enable(c)
        fake.error(500)
        fake.error(503, "overloaded_error")
        fake.facts(fact("deploy", "Deploy with make release"), input_tokens=700)
        queue(c)
        job = wait_for("the job to close", lambda: done_job(queue_db, c.tenant_id))
        assert (job["outcome"], job["attempts"]) == ("completed", 3)
        assert len(fake.requests) == 3
        assert [m.key for m in listed(c)] == ["auto:deploy"]
        recorded = usage(c).records
        assert [r.outcome for r in recorded] == [
            memory_pb2.EXTRACTION_OUTCOME_MODEL_ERROR,
            memory_pb2.EXTRACTION_OUTCOME_MODEL_ERROR,
            memory_pb2.EXTRACTION_OUTCOME_COMPLETED,
        ]
        assert usage(c).total_input_tokens == 700


def test_a_job_that_keeps_failing_stops_after_the_last_attempt(
    servers: Servers, fake: FakeAnthropic, queue_db: str
) -> None:
    srv = servers.start(
        extraction_settle_seconds=0,
        extraction_retry_base_seconds=0.1,
        extraction_max_attempts=3,
    )
    with srv.client() as c:
        enable(c)
        for _ in range(3):
            fake.error(500)
        fake.facts(fact("deploy", "a fact a fourth attempt would write"))
        queue(c)
        job = wait_for("the job to close", lambda: done_job(queue_db, c.tenant_id))
        assert (job["outcome"], job["attempts"]) == ("model_error", 3)
        assert "500" in job["detail"]
        assert len(fake.requests) == 3
        assert listed(c) == []


def test_a_malformed_reply_is_not_retried(
    servers: Servers, fake: FakeAnthropic, queue_db: str
) -> None:
    srv = servers.start(extraction_settle_seconds=0, extraction_retry_base_seconds=0.1)
    with srv.client() as c:
        enable(c)
        fake.text_only()
        fake.facts(fact("deploy", "a fact a second attempt would write"))
        queue(c)
        job = wait_for("the job to close", lambda: done_job(queue_db, c.tenant_id))
        assert (job["outcome"], job["attempts"]) == ("malformed_reply", 1)
        assert len(fake.requests) == 1
        assert listed(c) == []


def test_a_job_survives_a_restart_and_runs_once(
    servers: Servers, fake: FakeAnthropic, queue_db: str
) -> None:
    first = servers.start(extraction_settle_seconds=2)
    with first.client() as c:
        tenant = c.tenant_id
        enable(c)
        fake.facts(fact("deploy", "Deploy with make release from the repository root"))
        reply = queue(c)
        assert reply.outcome == memory_pb2.EXTRACTION_OUTCOME_QUEUED
        assert listed(c) == []
    servers.stop(first)
    assert fake.requests == []  # stopped before the conversation settled
    [pending] = jobs(queue_db, tenant)
    assert (pending["status"], pending["attempts"]) == ("queued", 0)

    # The stored run_after still holds: the next server runs it when it is due.
    second = servers.start(extraction_settle_seconds=0)
    job = wait_for("the job to close", lambda: done_job(queue_db, tenant))
    assert str(job["id"]) == reply.job_id
    assert (job["outcome"], job["attempts"]) == ("completed", 1)
    assert len(fake.requests) == 1
    with second.client(tenant) as c:
        assert [m.key for m in listed(c)] == ["auto:deploy"]
    servers.stop(second)

    third = servers.start(extraction_settle_seconds=0)
    a_pass_ran_after(third, queue_db, fake)
    assert passes_over(TRANSCRIPT, fake) == 1
    with third.client(tenant) as c:
        assert len(listed(c)) == 1
        assert len(usage(c).records) == 1
    [after] = jobs(queue_db, tenant)
    assert (after["status"], after["attempts"]) == ("done", 1)
