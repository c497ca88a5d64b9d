"""The session repository's contract, run against PostgreSQL and the in-memory store:
the agent's session row, runs recorded once and strictly after their floor, the
session carried, reset strictly after every run counted, the runs count and listing,
and tenants apart."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from agent_memory.domain.active_sessions import RunKind, RunSession
from agent_memory.domain.identity import Principal
from agent_memory.store.repositories import Store, Tx
from tests.integration.conftest import Body

MICROSECOND = timedelta(microseconds=1)


def run(run_id: str, after: str | None = "s1", kind: RunKind = RunKind.SCHEDULED) -> RunSession:
    return RunSession(run_id, None, after, kind)


async def ahead(tx: Tx) -> datetime:
    """A time well past the store's clock: a floor the clock cannot reach in a test."""
    return await tx.clock.now() + timedelta(hours=1)


def test_ensure_makes_a_fresh_row_once(scenario: Callable[[Body], None], caller: Principal) -> None:
    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            assert await tx.sessions.get("coder") is None
            before = await tx.clock.now()
            await tx.sessions.ensure("coder")
            fresh = await tx.sessions.get("coder", lock=True)
            assert fresh is not None
            at = await tx.sessions.insert_run(
                "coder", run("r1"), carried=True, after=fresh.last_reset_at
            )
            assert at is not None
            await tx.sessions.carry("coder", "s1", at)
            await tx.sessions.ensure("coder")
            kept = await tx.sessions.get("coder")
        assert (fresh.session_id, fresh.session_updated_at) == (None, None)
        assert fresh.last_reset_at > before
        assert kept is not None
        assert (kept.session_id, kept.session_updated_at) == ("s1", at)
        assert kept.last_reset_at == fresh.last_reset_at

    scenario(body)


def test_a_run_is_recorded_once_strictly_after_its_floor(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            before = await tx.clock.now()
            first = await tx.sessions.insert_run("coder", run("r1"), carried=False, after=None)
            floor = await ahead(tx)
            second = await tx.sessions.insert_run(
                "coder", RunSession("r2", "s1", "s2", RunKind.CHAT), carried=True, after=floor
            )
            taken = await tx.sessions.insert_run(
                "coder", run("r1", after="other"), carried=True, after=None
            )
            found = await tx.sessions.find_run("coder", "r1")
            chat = await tx.sessions.find_run("coder", "r2")
            assert await tx.sessions.find_run("coder", "r3") is None
            assert await tx.sessions.find_run("other", "r1") is None
            elsewhere = await tx.sessions.insert_run("other", run("r1"), carried=False, after=None)
        assert first is not None
        assert first > before
        # Strictly after the floor, even though the clock is far behind it.
        assert second == floor + MICROSECOND
        assert taken is None
        assert found == run("r1")
        assert chat == RunSession("r2", "s1", "s2", RunKind.CHAT)
        assert elsewhere is not None

    scenario(body)


def test_a_carried_session_is_the_one_read_back(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            await tx.sessions.ensure("coder")
            at = await ahead(tx)
            carried = await tx.sessions.carry("coder", "s9", at)
            read = await tx.sessions.get("coder")
        assert (carried.session_id, carried.session_updated_at) == ("s9", at)
        assert read == carried

    scenario(body)


def test_a_reset_forgets_the_session_and_anchors_after_every_run_counted(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            created = await tx.sessions.reset("new")
            assert await tx.sessions.get("new") == created
            before = await tx.clock.now()
            await tx.sessions.ensure("coder")
            floor = await ahead(tx)
            at = await tx.sessions.insert_run("coder", run("r1"), carried=True, after=floor)
            assert at is not None
            await tx.sessions.carry("coder", "s1", at)
            assert await tx.sessions.runs_since("coder", before) == 1
            reset = await tx.sessions.reset("coder")
            read = await tx.sessions.get("coder")
            counted = await tx.sessions.runs_since("coder", reset.last_reset_at)
            listed = await tx.sessions.list_runs("coder", after=None, limit=10)
        assert (created.session_id, created.session_updated_at) == (None, None)
        assert (reset.session_id, reset.session_updated_at) == (None, None)
        # The clock is behind the run: the anchor steps just past it.
        assert reset.last_reset_at == at + MICROSECOND
        assert read == reset
        assert counted == 0
        assert [r.run.run_id for r in listed] == ["r1"], "a reset keeps the runs"

    scenario(body)


def test_only_carried_scheduled_runs_after_the_anchor_are_counted(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            anchor = await tx.clock.now()
            await tx.sessions.insert_run("coder", run("r1"), carried=True, after=None)
            await tx.sessions.insert_run("coder", run("r2"), carried=True, after=None)
            await tx.sessions.insert_run("coder", run("r3", None), carried=False, after=None)
            await tx.sessions.insert_run("coder", run("r4"), carried=False, after=None)
            chat = run("r5", kind=RunKind.CHAT)
            await tx.sessions.insert_run("coder", chat, carried=True, after=None)
            await tx.sessions.insert_run("other", run("r6"), carried=True, after=None)
            counted = await tx.sessions.runs_since("coder", anchor)
            later = await ahead(tx)
            none_after = await tx.sessions.runs_since("coder", later)
        assert counted == 2
        assert none_after == 0

    scenario(body)


def test_runs_are_listed_newest_first_then_by_run_id_and_page_after_a_position(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            await tx.sessions.insert_run("coder", run("a1"), carried=True, after=None)
            floor = await ahead(tx)
            # Three runs in one instant: the floor's next microsecond.
            for run_id in ("b2", "b1", "b3"):
                await tx.sessions.insert_run("coder", run(run_id), carried=False, after=floor)
            await tx.sessions.insert_run("coder", run("c1", None), carried=False, after=None)
            every = await tx.sessions.list_runs("coder", after=None, limit=10)
            pages = []
            page = await tx.sessions.list_runs("coder", after=None, limit=2)
            while page:
                pages.append([r.run.run_id for r in page])
                last = page[-1]
                page = await tx.sessions.list_runs(
                    "coder", after=(last.recorded_at, last.run.run_id), limit=2
                )
        assert [r.run.run_id for r in every] == ["b3", "b2", "b1", "c1", "a1"]
        assert [r.carried for r in every] == [False, False, False, False, True]
        assert every[0].recorded_at == floor + MICROSECOND
        assert every[-1].run == run("a1")
        assert pages == [["b3", "b2"], ["b1", "c1"], ["a1"]]

    scenario(body)


def test_a_tenant_never_sees_or_changes_another_tenants_sessions(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    intruder = Principal(f"other-{uuid.uuid4().hex[:8]}", "mallory")

    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            anchor = await tx.clock.now()
            await tx.sessions.ensure("coder")
            at = await tx.sessions.insert_run("coder", run("r1"), carried=True, after=None)
            assert at is not None
            mine = await tx.sessions.carry("coder", "s1", at)
        async with store.connection(intruder) as tx:
            assert await tx.sessions.get("coder") is None
            assert await tx.sessions.find_run("coder", "r1") is None
            assert await tx.sessions.list_runs("coder", after=None, limit=10) == []
            assert await tx.sessions.runs_since("coder", anchor) == 0
            await tx.sessions.reset("coder")
            theirs = await tx.sessions.insert_run("coder", run("r1"), carried=False, after=None)
            assert theirs is not None
        async with store.connection(caller) as tx:
            assert await tx.sessions.get("coder") == mine
            assert await tx.sessions.runs_since("coder", anchor) == 1
            listed = await tx.sessions.list_runs("coder", after=None, limit=10)
        assert [(r.run.run_id, r.carried) for r in listed] == [("r1", True)]

    scenario(body)


def test_a_run_recorded_in_a_transaction_that_raises_is_not_kept(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def half_a_use_case(store: Store) -> None:
        async with store.transaction(caller) as tx:
            await tx.sessions.ensure("coder")
            await tx.sessions.insert_run("coder", run("r1"), carried=True, after=None)
            raise RuntimeError("the rest of the use case failed")

    async def body(store: Store) -> None:
        with pytest.raises(RuntimeError):
            await half_a_use_case(store)
        async with store.connection(caller) as tx:
            assert await tx.sessions.get("coder") is None
            assert await tx.sessions.find_run("coder", "r1") is None

    scenario(body)


def test_a_run_s_render_time_is_kept_to_the_microsecond(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            rendered = await tx.clock.now() - timedelta(minutes=3, microseconds=7)
            told = RunSession("r1", None, "s1", RunKind.CHAT, rendered)
            await tx.sessions.insert_run("coder", told, carried=False, after=None)
            await tx.sessions.insert_run("coder", run("r2"), carried=False, after=None)
            found = await tx.sessions.find_run("coder", "r1")
            listed = await tx.sessions.list_runs("coder", after=None, limit=10)
        assert found == told
        assert {r.run.run_id: r.run.render_time for r in listed} == {"r1": rendered, "r2": None}

    scenario(body)
