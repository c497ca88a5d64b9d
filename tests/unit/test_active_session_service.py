"""Active session use cases over the in-memory store: the switch, runs handing their
session on, what is counted toward the warning, resets, and the runs listing."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any, TypeVar

import pytest

from agent_memory.domain.active_sessions import ActiveSession, ActiveSessionStatus, RunKind
from agent_memory.domain.errors import AlreadyExists, InvalidArgument
from agent_memory.domain.identity import Principal
from agent_memory.service.active_sessions import ActiveSessions
from agent_memory.service.agents import Agents
from tests.fakes import FakeStore

T = TypeVar("T")
ALICE = Principal("acme", "alice")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.fixture
def store() -> FakeStore:
    return FakeStore()


@pytest.fixture
def sessions(store: FakeStore) -> ActiveSessions:
    return ActiveSessions(store, warning_runs=2)


@pytest.fixture
def agents(store: FakeStore) -> Agents:
    return Agents(store)


def switch(agents: Agents, on: bool, agent: str = "coder") -> None:
    run(agents.update_settings(ALICE, agent, {"active_memory_enabled": on}))


def finish(
    sessions: ActiveSessions,
    run_id: str,
    before: str = "",
    after: str = "",
    kind: RunKind = RunKind.SCHEDULED,
    agent: str = "coder",
) -> ActiveSession:
    return run(
        sessions.record_run(
            ALICE,
            agent_id=agent,
            run_id=run_id,
            session_id_before=before,
            session_id_after=after,
            kind=kind,
        )
    )


def offered(sessions: ActiveSessions, agent: str = "coder") -> ActiveSession:
    return run(sessions.get(ALICE, agent))


def runs(sessions: ActiveSessions, agent: str = "coder") -> list[tuple[str, bool]]:
    page = run(sessions.runs(ALICE, agent, size=100, token=""))
    return [(r.run.run_id, r.carried) for r in page.items]


def test_off_by_default_nothing_is_offered_and_runs_are_kept_not_carried(
    sessions: ActiveSessions,
) -> None:
    session = offered(sessions)
    assert (session.enabled, session.session_id, session.status) == (
        False,
        None,
        ActiveSessionStatus.FRESH,
    )
    after = finish(sessions, "r1", after="s1")
    assert (after.session_id, after.runs_since_reset) == (None, 0)
    assert runs(sessions) == [("r1", False)]
    assert offered(sessions).session_id is None


def test_enabling_starts_fresh_and_a_successful_run_hands_its_session_on(
    sessions: ActiveSessions, agents: Agents
) -> None:
    switch(agents, True)
    fresh = offered(sessions)
    assert (fresh.enabled, fresh.session_id, fresh.runs_since_reset) == (True, None, 0)
    assert fresh.last_reset_at is not None
    after = finish(sessions, "r1", after="s1")
    assert (after.session_id, after.status, after.runs_since_reset) == (
        "s1",
        ActiveSessionStatus.CARRYING_CONTEXT,
        1,
    )
    read = offered(sessions)
    assert (read.session_id, read.runs_since_reset, read.updated_at) == (
        "s1",
        1,
        after.updated_at,
    )
    finish(sessions, "r2", before="s1", after="s2")
    assert (offered(sessions).session_id, offered(sessions).runs_since_reset) == ("s2", 2)


def test_a_failed_run_is_kept_but_neither_counted_nor_resumed(
    sessions: ActiveSessions, agents: Agents
) -> None:
    switch(agents, True)
    finish(sessions, "r1", after="s1")
    failed = finish(sessions, "r2", before="s1")
    assert (failed.session_id, failed.runs_since_reset) == ("s1", 1)
    assert runs(sessions) == [("r2", False), ("r1", True)]


def test_the_same_run_recorded_twice_counts_once_and_other_ids_are_refused(
    sessions: ActiveSessions, agents: Agents
) -> None:
    switch(agents, True)
    first = finish(sessions, "r1", after="s1")
    again = finish(sessions, "r1", after="s1")
    assert again.runs_since_reset == first.runs_since_reset == 1
    for before, after, kind in (
        ("", "s2", RunKind.SCHEDULED),
        ("s0", "s1", RunKind.SCHEDULED),
        ("", "s1", RunKind.CHAT),
    ):
        with pytest.raises(AlreadyExists) as refused:
            finish(sessions, "r1", before, after, kind)
        assert refused.value.reason == "RUN_ALREADY_RECORDED"
        assert refused.value.metadata == {"agent_id": "coder", "run_id": "r1"}
    assert runs(sessions) == [("r1", True)]
    assert offered(sessions).session_id == "s1"


def test_a_chat_turn_shares_the_session_but_only_scheduled_runs_count(
    sessions: ActiveSessions, agents: Agents
) -> None:
    switch(agents, True)
    finish(sessions, "r1", after="s1")
    chat = finish(sessions, "c1", before="s1", after="s2", kind=RunKind.CHAT)
    assert (chat.session_id, chat.runs_since_reset) == ("s2", 1)


def test_the_warning_comes_past_the_threshold_and_a_reset_clears_it(
    sessions: ActiveSessions, agents: Agents
) -> None:
    switch(agents, True)
    for n in range(1, 4):
        session = finish(sessions, f"r{n}", after=f"s{n}")
        assert session.warning is (n > 2)
    reset = run(sessions.reset(ALICE, "coder"))
    assert (reset.session_id, reset.status, reset.runs_since_reset, reset.warning) == (
        None,
        ActiveSessionStatus.FRESH,
        0,
        False,
    )
    assert reset.warning_threshold == 2
    assert offered(sessions) == reset
    after = finish(sessions, "r4", after="s4")
    assert (after.session_id, after.runs_since_reset) == ("s4", 1)
    assert len(runs(sessions)) == 4, "a reset keeps the runs"


def test_the_session_age_is_measured_from_its_last_update_by_the_store_clock(
    store: FakeStore, sessions: ActiveSessions, agents: Agents
) -> None:
    switch(agents, True)
    finish(sessions, "r1", after="s1")
    store.clock.advance(timedelta(hours=5))
    session = offered(sessions)
    assert session.session_age is not None
    assert timedelta(hours=5) <= session.session_age < timedelta(hours=5, seconds=1)
    assert session.updated_at is not None


def test_disabling_keeps_the_session_but_offers_none_and_re_enabling_starts_fresh(
    sessions: ActiveSessions, agents: Agents
) -> None:
    switch(agents, True)
    finish(sessions, "r1", after="s1")
    switch(agents, False)
    off = offered(sessions)
    assert (off.enabled, off.session_id, off.runs_since_reset) == (False, None, 0)
    finish(sessions, "r2", before="s1", after="s2")
    assert runs(sessions)[0] == ("r2", False)
    # Turning it on again what was on is no reset; turning it on from off is one.
    switch(agents, True)
    on = offered(sessions)
    assert (on.session_id, on.runs_since_reset) == (None, 0)
    finish(sessions, "r3", after="s3")
    switch(agents, True)
    assert (offered(sessions).session_id, offered(sessions).runs_since_reset) == ("s3", 1)


def test_runs_page_newest_first_with_their_session_ids(sessions: ActiveSessions) -> None:
    for n in range(5):
        finish(sessions, f"r{n}", before=f"s{n}", after=f"s{n + 1}")
    seen: list[str] = []
    token = ""
    while True:
        page = run(sessions.runs(ALICE, "coder", size=2, token=token))
        seen += [
            f"{r.run.run_id}:{r.run.session_id_before}>{r.run.session_id_after}" for r in page.items
        ]
        token = page.next_page_token
        if not token:
            break
    assert seen == [f"r{n}:s{n}>s{n + 1}" for n in range(4, -1, -1)]
    coders = run(sessions.runs(ALICE, "coder", size=2, token="")).next_page_token
    with pytest.raises(InvalidArgument) as refused:
        run(sessions.runs(ALICE, "other", size=2, token=coders))
    assert [v.reason for v in refused.value.violations] == ["INVALID_PAGE_TOKEN"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"agent_id": ""}, "agent_id"),
        ({"run_id": ""}, "run_id"),
        ({"run_id": "r" * 256}, "run_id"),
        ({"session_id_after": "has space"}, "session_id_after"),
        ({"session_id_before": "s" * 256}, "session_id_before"),
    ],
)
def test_a_malformed_run_is_refused_and_nothing_is_kept(
    sessions: ActiveSessions, fields: dict[str, str], field: str
) -> None:
    values: dict[str, Any] = {
        "agent_id": "coder",
        "run_id": "r1",
        "session_id_before": "",
        "session_id_after": "",
    }
    with pytest.raises(InvalidArgument) as refused:
        run(sessions.record_run(ALICE, **{**values, **fields}))
    assert field in {v.field for v in refused.value.violations}
    assert runs(sessions) == []


def test_another_tenant_sees_none_of_it(store: FakeStore, agents: Agents) -> None:
    sessions = ActiveSessions(store)
    switch(agents, True)
    finish(sessions, "r1", after="s1")
    intruder = Principal("globex", "mallory")
    theirs = run(sessions.get(intruder, "coder"))
    assert (theirs.enabled, theirs.session_id, theirs.last_reset_at) == (False, None, None)
    assert run(sessions.runs(intruder, "coder", size=10, token="")).items == []
    run(sessions.reset(intruder, "coder"))
    assert offered(sessions).session_id == "s1"


def test_a_run_keeps_its_render_time_unless_it_is_in_the_future(
    store: FakeStore, sessions: ActiveSessions
) -> None:
    now = store.clock()
    record = sessions.record_run
    for render_time in (now + timedelta(minutes=1), now + timedelta(hours=1)):
        with pytest.raises(InvalidArgument) as refused:
            run(
                record(
                    ALICE,
                    agent_id="coder",
                    run_id="r1",
                    session_id_before="",
                    session_id_after="",
                    render_time=render_time,
                )
            )
        assert [v.field for v in refused.value.violations] == ["render_time"]
    assert runs(sessions) == []
    # Within another replica's clock skew, and in the past, it is kept.
    for run_id, render_time in (
        ("r1", now + timedelta(seconds=3)),
        ("r2", now - timedelta(days=2)),
    ):
        run(
            record(
                ALICE,
                agent_id="coder",
                run_id=run_id,
                session_id_before="",
                session_id_after="",
                render_time=render_time,
            )
        )
        page = run(sessions.runs(ALICE, "coder", size=100, token=""))
        assert page.items[0].run.render_time == render_time
    # The same run again is the same run; with another render time it is another.
    run(
        record(
            ALICE,
            agent_id="coder",
            run_id="r2",
            session_id_before="",
            session_id_after="",
            render_time=now - timedelta(days=2),
        )
    )
    with pytest.raises(AlreadyExists):
        run(
            record(
                ALICE,
                agent_id="coder",
                run_id="r2",
                session_id_before="",
                session_id_after="",
                render_time=now - timedelta(days=1),
            )
        )
