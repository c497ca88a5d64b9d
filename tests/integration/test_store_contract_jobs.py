"""The extraction queue's contract, run against PostgreSQL and the in-memory store: one
waiting pass per run, claims under a lease in the order jobs fell due, the attempt that
fences a runner whose lease ran out, what a finished pass keeps, retries, and tenants
apart.

The queue is shared by every tenant of the database: each case leaves none of its jobs
due, so that the next case's claims take its own."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from agent_memory.domain.extraction import (
    ClaimedJob,
    DroppedFact,
    DropReason,
    ExtractionOutcome,
    ExtractionRequest,
    ExtractionResult,
    JobState,
    Usage,
)
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import Memory, MemorySource, Owner, Scope
from agent_memory.store.repositories import Store
from tests.integration.conftest import Body

LATER = timedelta(hours=1)
NOW = timedelta(0)


def request(
    session_id: str, transcript: str = "user: hi", agent_id: str = "coder"
) -> ExtractionRequest:
    return ExtractionRequest(agent_id, "ws", session_id, None, transcript)


def done(job: ClaimedJob, detail: str = "") -> ExtractionResult:
    return ExtractionResult(
        ExtractionOutcome.COMPLETED, job.request.synthetic_session_id, detail=detail
    )


def stand_in(memory_id: uuid.UUID) -> Memory:
    """A memory a pass wrote: a finished job keeps only its id."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    owner = Owner(Scope.AGENT, "coder")
    return Memory(memory_id, owner, "k", "v", False, 0, MemorySource.AUTO, at, at, 1)


async def claim(store: Store, lease: timedelta = LATER) -> ClaimedJob | None:
    async with store.admin() as admin:
        return await admin.job_queue.claim(lease=lease)


async def finish(store: Store, principal: Principal, job: ClaimedJob) -> None:
    """Close a claimed job, so that no later claim takes it."""
    async with store.connection(principal) as tx:
        assert await tx.jobs.finish(job.id, attempt=job.attempts, result=done(job))


def test_a_queued_job_waits_for_its_settle_time(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            job_id = await tx.jobs.enqueue(request("s1"), settle=LATER)
            job = await tx.jobs.get(job_id)
            assert await tx.jobs.get(uuid.uuid4()) is None
        assert await claim(store) is None
        assert job is not None
        assert (job.id, job.state, job.attempts, job.outcome, job.detail) == (
            job_id,
            JobState.QUEUED,
            0,
            None,
            "",
        )
        assert (job.synthetic_session_id, job.agent_id, job.workspace_id) == (
            "memory-extract:s1",
            "coder",
            "ws",
        )
        assert job.run_after == job.created_at + LATER
        assert job.updated_at == job.created_at
        assert (job.written_memory_ids, job.dropped, job.usage) == ((), (), None)

    scenario(body)


def test_a_run_queued_again_while_it_waits_replaces_its_pass_and_restarts_the_clock(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            first = await tx.jobs.enqueue(request("s1", "user: one"), settle=LATER)
            waiting = await tx.jobs.get(first)
            again = await tx.jobs.enqueue(
                request("s1", "user: one\nuser: two", agent_id="helper"), settle=NOW
            )
            other = await tx.jobs.enqueue(request("s2"), settle=LATER)
            replaced = await tx.jobs.get(first)
        job = await claim(store)
        assert job is not None
        await finish(store, caller, job)
        assert again == first
        assert other != first
        assert waiting is not None
        assert replaced is not None
        assert replaced.agent_id == "helper"
        assert replaced.run_after < waiting.run_after
        assert replaced.created_at == waiting.created_at
        assert (job.id, job.request.transcript, job.request.agent_id) == (
            first,
            "user: one\nuser: two",
            "helper",
        )
        assert (job.tenant_id, job.actor_user_id, job.attempts) == (
            caller.tenant_id,
            caller.user_id,
            1,
        )

    scenario(body)


def test_a_finished_pass_keeps_what_it_did_but_never_a_hidden_value(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    written = uuid.uuid4()

    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            job_id = await tx.jobs.enqueue(request("s1"), settle=NOW)
        job = await claim(store)
        assert job is not None
        assert job.id == job_id
        async with store.connection(caller) as tx:
            running = await tx.jobs.get(job_id)
            result = ExtractionResult(
                ExtractionOutcome.COMPLETED,
                job.request.synthetic_session_id,
                written=[stand_in(written)],
                dropped=[
                    DroppedFact("k1", "too unsure", Scope.AGENT, 0.2, DropReason.LOW_CONFIDENCE),
                    DroppedFact(
                        "k2", "sk-secret", Scope.WORKSPACE, 0.9, DropReason.SECRET_IN_VALUE
                    ),
                ],
                usage=Usage(120, 30, 0.0015),
                detail="2 facts",
            )
            assert await tx.jobs.finish(job_id, attempt=1, result=result)
            assert not await tx.jobs.finish(job_id, attempt=1, result=result)
            finished = await tx.jobs.get(job_id)
        assert running is not None
        assert (running.state, running.attempts, running.outcome) == (JobState.RUNNING, 1, None)
        assert finished is not None
        assert (finished.state, finished.outcome, finished.detail) == (
            JobState.DONE,
            ExtractionOutcome.COMPLETED,
            "2 facts",
        )
        assert finished.written_memory_ids == (written,)
        assert finished.dropped == (
            DroppedFact("k1", "too unsure", Scope.AGENT, 0.2, DropReason.LOW_CONFIDENCE),
            DroppedFact("k2", "", Scope.WORKSPACE, 0.9, DropReason.SECRET_IN_VALUE),
        )
        assert finished.usage == Usage(120, 30, 0.0015)
        assert await claim(store) is None

    scenario(body)


def test_a_runner_whose_lease_ran_out_changes_nothing(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            job_id = await tx.jobs.enqueue(request("s1"), settle=NOW)
        stalled = await claim(store, lease=NOW)
        taken_over = await claim(store)
        assert stalled is not None
        assert taken_over is not None
        async with store.connection(caller) as tx:
            late_finish = await tx.jobs.finish(job_id, attempt=1, result=done(stalled, "late"))
            late_retry = await tx.jobs.retry_later(
                job_id,
                attempt=1,
                delay=NOW,
                outcome=ExtractionOutcome.MODEL_ERROR,
                detail="late",
            )
            running = await tx.jobs.get(job_id)
        await finish(store, caller, taken_over)
        assert (stalled.id, stalled.attempts) == (job_id, 1)
        assert (taken_over.id, taken_over.attempts) == (job_id, 2)
        assert (late_finish, late_retry) == (False, False)
        assert running is not None
        assert (running.state, running.attempts, running.detail) == (JobState.RUNNING, 2, "")

    scenario(body)


def test_a_retry_queues_the_job_again_unless_a_newer_pass_waits(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            await tx.jobs.enqueue(request("s1"), settle=NOW)
        first = await claim(store)
        assert first is not None
        async with store.connection(caller) as tx:
            queued = await tx.jobs.retry_later(
                first.id,
                attempt=1,
                delay=LATER,
                outcome=ExtractionOutcome.MODEL_ERROR,
                detail="model unavailable",
            )
            again = await tx.jobs.get(first.id)
        assert queued
        assert again is not None
        assert (again.state, again.attempts, again.outcome, again.detail) == (
            JobState.QUEUED,
            1,
            None,
            "model unavailable",
        )
        assert again.run_after == again.updated_at + LATER
        assert await claim(store) is None, "it waits for its delay"

        async with store.connection(caller) as tx:
            await tx.jobs.enqueue(request("s2"), settle=NOW)
        running = await claim(store)
        assert running is not None
        async with store.connection(caller) as tx:
            newer = await tx.jobs.enqueue(request("s2", "user: more"), settle=LATER)
            requeued = await tx.jobs.retry_later(
                running.id,
                attempt=1,
                delay=NOW,
                outcome=ExtractionOutcome.TIMEOUT,
                detail="timed out",
            )
            closed = await tx.jobs.get(running.id)
            waiting = await tx.jobs.get(newer)
        assert newer != running.id
        assert not requeued
        assert closed is not None
        assert (closed.state, closed.outcome, closed.detail) == (
            JobState.DONE,
            ExtractionOutcome.TIMEOUT,
            "timed out; superseded by a newer pass of the same run",
        )
        assert waiting is not None
        assert waiting.state is JobState.QUEUED
        assert await claim(store) is None

    scenario(body)


def test_claims_take_the_job_that_fell_due_first_across_tenants(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    other = Principal(f"other-{uuid.uuid4().hex[:8]}", "bo")

    async def body(store: Store) -> None:
        order = []
        for principal, session_id in ((caller, "a1"), (other, "b1"), (caller, "a2")):
            async with store.connection(principal) as tx:
                await tx.jobs.enqueue(request(session_id), settle=NOW)
        for _ in range(3):
            job = await claim(store)
            assert job is not None
            order.append((job.tenant_id, job.request.session_id))
            await finish(store, caller if job.tenant_id == caller.tenant_id else other, job)
        assert order == [
            (caller.tenant_id, "a1"),
            (other.tenant_id, "b1"),
            (caller.tenant_id, "a2"),
        ]
        assert await claim(store) is None

    scenario(body)


def test_a_tenant_never_sees_or_closes_another_tenants_jobs(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    intruder = Principal(f"other-{uuid.uuid4().hex[:8]}", "mallory")

    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            job_id = await tx.jobs.enqueue(request("s1"), settle=NOW)
        job = await claim(store)
        assert job is not None
        async with store.connection(intruder) as tx:
            assert await tx.jobs.get(job_id) is None
            assert not await tx.jobs.finish(job_id, attempt=1, result=done(job))
            assert not await tx.jobs.retry_later(
                job_id, attempt=1, delay=NOW, outcome=ExtractionOutcome.TIMEOUT, detail="x"
            )
            theirs = await tx.jobs.enqueue(request("s1"), settle=LATER)
        async with store.connection(caller) as tx:
            mine = await tx.jobs.get(job_id)
            assert await tx.jobs.get(theirs) is None
        await finish(store, caller, job)
        assert theirs != job_id
        assert mine is not None
        assert (mine.state, mine.attempts) == (JobState.RUNNING, 1)

    scenario(body)
