"""Active memory over real gRPC: the shared session, runs since reset, reset and the warning."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import grpc
import psycopg
import pytest

from agent_memory.config import Settings
from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from agentmemory.v1 import recall_service_pb2 as rpb
from tests.support import Client, ServerThread, error_details

FRESH = memory_pb2.ACTIVE_SESSION_STATUS_FRESH
CARRYING = memory_pb2.ACTIVE_SESSION_STATUS_CARRYING_CONTEXT


# --- helpers -------------------------------------------------------------------------


def set_active(client: Client, agent: str, enabled: bool) -> memory_pb2.AgentSettings:
    request = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id=agent, active_memory_enabled=enabled)
    )
    request.update_mask.paths.append("active_memory_enabled")
    response = client.call(client.memory.UpdateAgentSettings, request)
    settings: memory_pb2.AgentSettings = response.settings
    return settings


def session_of(client: Client, agent: str) -> memory_pb2.ActiveSession:
    response = client.call(
        client.memory.GetActiveSession, pb.GetActiveSessionRequest(agent_id=agent)
    )
    session: memory_pb2.ActiveSession = response.session
    return session


def record(
    client: Client, agent: str, run: str, before: str = "", after: str = ""
) -> memory_pb2.ActiveSession:
    request = pb.RecordRunSessionRequest(
        agent_id=agent, run_id=run, session_id_before=before, session_id_after=after
    )
    session: memory_pb2.ActiveSession = client.call(client.memory.RecordRunSession, request).session
    return session


def reset(client: Client, agent: str) -> memory_pb2.ActiveSession:
    response = client.call(
        client.memory.ResetActiveSession, pb.ResetActiveSessionRequest(agent_id=agent)
    )
    session: memory_pb2.ActiveSession = response.session
    return session


def stored(database_url: str, client: Client, agent: str) -> tuple[str | None, int]:
    """The session id kept for the agent, and how many runs are kept, read directly."""
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT session_id FROM active_sessions WHERE tenant_id = %s AND agent_id = %s",
            (client.tenant_id, agent),
        ).fetchone()
        runs = conn.execute(
            "SELECT count(*) FROM agent_runs WHERE tenant_id = %s AND agent_id = %s",
            (client.tenant_id, agent),
        ).fetchone()
    assert runs is not None
    return (row[0] if row else None), int(runs[0])


# --- off by default, enabling -------------------------------------------------------------


def test_active_memory_is_off_by_default_and_offers_nothing(client: Client) -> None:
    settings = client.call(
        client.memory.GetAgentSettings, pb.GetAgentSettingsRequest(agent_id="bot")
    ).settings
    assert settings.active_memory_enabled is False
    session = session_of(client, "bot")
    assert session.agent_id == "bot"
    assert session.enabled is False
    assert session.status == FRESH
    assert session.session_id == ""
    assert session.runs_since_reset == 0
    assert not session.HasField("session_age")
    assert not session.HasField("last_reset_at")
    assert session.warning is False
    assert session.warning_threshold == 20


def test_enabling_starts_fresh_with_the_counter_anchored_now(client: Client) -> None:
    settings = set_active(client, "bot", True)
    assert settings.active_memory_enabled is True
    assert settings.memory_enabled is False, "the two switches are independent"
    session = session_of(client, "bot")
    assert session.enabled is True
    assert session.status == FRESH
    assert session.session_id == ""
    assert session.runs_since_reset == 0
    assert session.HasField("last_reset_at")
    assert not session.HasField("session_age")


def test_memory_enabled_alone_leaves_active_memory_alone(client: Client) -> None:
    set_active(client, "bot", True)
    record(client, "bot", "r1", after="s1")
    request = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id="bot", memory_enabled=True)
    )
    request.update_mask.paths.append("memory_enabled")
    settings = client.call(client.memory.UpdateAgentSettings, request).settings
    assert settings.memory_enabled is True
    assert settings.active_memory_enabled is True
    assert session_of(client, "bot").session_id == "s1"


def test_update_without_a_mask_writes_both_switches(client: Client) -> None:
    request = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id="bot", active_memory_enabled=True)
    )
    settings = client.call(client.memory.UpdateAgentSettings, request).settings
    assert settings.active_memory_enabled is True
    assert settings.memory_enabled is False


def test_an_unknown_mask_path_is_refused(client: Client) -> None:
    request = pb.UpdateAgentSettingsRequest(settings=memory_pb2.AgentSettings(agent_id="bot"))
    request.update_mask.paths.extend(["active_memory_enabled", "session_id"])
    with pytest.raises(grpc.RpcError) as caught:
        client.call(client.memory.UpdateAgentSettings, request)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert session_of(client, "bot").enabled is False


# --- runs carry the session ---------------------------------------------------------------


def test_a_successful_run_hands_its_session_to_the_next(client: Client) -> None:
    set_active(client, "bot", True)
    first = record(client, "bot", "run-1", before="", after="sess-1")
    assert first.status == CARRYING
    assert first.session_id == "sess-1"
    assert first.runs_since_reset == 1
    assert first.HasField("session_age")
    assert first.HasField("updated_at")
    second = record(client, "bot", "run-2", before="sess-1", after="sess-2")
    assert second.session_id == "sess-2"
    assert second.runs_since_reset == 2
    assert second.updated_at.ToDatetime() >= first.updated_at.ToDatetime()
    read = session_of(client, "bot")
    assert (read.session_id, read.status, read.runs_since_reset) == ("sess-2", CARRYING, 2)


def test_a_failed_run_is_kept_but_neither_counted_nor_resumed(
    client: Client, database_url: str
) -> None:
    set_active(client, "bot", True)
    record(client, "bot", "ok", after="sess-1")
    failed = record(client, "bot", "crashed", before="sess-1", after="")
    assert failed.session_id == "sess-1"
    assert failed.runs_since_reset == 1
    assert stored(database_url, client, "bot") == ("sess-1", 2)


def test_recording_the_same_run_twice_counts_it_once(client: Client) -> None:
    set_active(client, "bot", True)
    record(client, "bot", "run-1", after="sess-1")
    again = record(client, "bot", "run-1", after="sess-1")
    assert again.runs_since_reset == 1
    assert again.session_id == "sess-1"
    with pytest.raises(grpc.RpcError) as caught:
        record(client, "bot", "run-1", after="sess-other")
    details = error_details(caught.value)
    assert details.code == grpc.StatusCode.ALREADY_EXISTS
    assert details.reason == "RUN_ALREADY_RECORDED"
    assert session_of(client, "bot").session_id == "sess-1"


def test_session_age_is_measured_from_the_last_session_update(
    client: Client, database_url: str
) -> None:
    set_active(client, "bot", True)
    record(client, "bot", "run-1", after="sess-1")
    first = session_of(client, "bot").session_age.ToTimedelta()
    second = session_of(client, "bot").session_age.ToTimedelta()
    assert timedelta(0) <= first <= second
    with psycopg.connect(database_url) as conn:
        conn.execute(
            "UPDATE active_sessions SET session_updated_at = now() - interval '2 hours 15 minutes'"
            " WHERE tenant_id = %s AND agent_id = %s",
            (client.tenant_id, "bot"),
        )
    aged = session_of(client, "bot").session_age.ToTimedelta()
    assert timedelta(hours=2, minutes=15) <= aged < timedelta(hours=2, minutes=16)


def test_runs_finishing_at_once_lose_no_update(client: Client) -> None:
    set_active(client, "bot", True)
    count = 10
    barrier = threading.Barrier(count)
    results: list[memory_pb2.ActiveSession] = []
    errors: list[BaseException] = []

    def finish(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            results.append(record(client, "bot", f"run-{i}", before="sess-0", after=f"sess-{i}"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=finish, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    final = session_of(client, "bot")
    assert final.runs_since_reset == count
    assert final.session_id in {f"sess-{i}" for i in range(count)}
    # Serialised: each run saw every earlier one, so each reported a different count.
    assert sorted(r.runs_since_reset for r in results) == list(range(1, count + 1))
    latest = max(results, key=lambda r: r.runs_since_reset)
    assert latest.session_id == final.session_id


# --- disable, re-enable, reset ------------------------------------------------------------


def test_disabling_keeps_the_session_but_offers_none(client: Client, database_url: str) -> None:
    set_active(client, "bot", True)
    record(client, "bot", "run-1", after="sess-1")
    assert set_active(client, "bot", False).active_memory_enabled is False
    session = session_of(client, "bot")
    assert session.enabled is False
    assert session.session_id == ""
    assert session.status == FRESH
    assert session.runs_since_reset == 0
    assert not session.HasField("session_age")
    assert stored(database_url, client, "bot") == ("sess-1", 1)


def test_runs_while_disabled_are_kept_but_not_carried(client: Client, database_url: str) -> None:
    set_active(client, "bot", True)
    record(client, "bot", "run-1", after="sess-1")
    set_active(client, "bot", False)
    during = record(client, "bot", "run-2", before="", after="sess-2")
    assert during.session_id == ""
    assert stored(database_url, client, "bot") == ("sess-1", 2)


def test_re_enabling_starts_fresh(client: Client, database_url: str) -> None:
    set_active(client, "bot", True)
    record(client, "bot", "run-1", after="sess-1")
    before = session_of(client, "bot").last_reset_at.ToDatetime()
    set_active(client, "bot", False)
    set_active(client, "bot", True)
    session = session_of(client, "bot")
    assert session.status == FRESH
    assert session.session_id == ""
    assert session.runs_since_reset == 0
    assert session.last_reset_at.ToDatetime() > before
    assert stored(database_url, client, "bot") == (None, 1), "the runs stay recorded"
    assert record(client, "bot", "run-2", after="sess-2").runs_since_reset == 1


def test_enabling_what_is_already_on_is_not_a_reset(client: Client) -> None:
    set_active(client, "bot", True)
    record(client, "bot", "run-1", after="sess-1")
    set_active(client, "bot", True)
    session = session_of(client, "bot")
    assert (session.session_id, session.runs_since_reset) == ("sess-1", 1)


def test_reset_starts_fresh_and_restarts_the_count(client: Client) -> None:
    set_active(client, "bot", True)
    record(client, "bot", "run-1", after="sess-1")
    record(client, "bot", "run-2", before="sess-1", after="sess-2")
    anchor = session_of(client, "bot").last_reset_at.ToDatetime()
    session = reset(client, "bot")
    assert session.status == FRESH
    assert session.session_id == ""
    assert session.runs_since_reset == 0
    assert session.last_reset_at.ToDatetime() > anchor
    assert session_of(client, "bot").session_id == ""
    after = record(client, "bot", "run-3", before="", after="sess-3")
    assert (after.session_id, after.runs_since_reset) == ("sess-3", 1)


# --- the warning --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def warning_server(database_url: str) -> Iterator[ServerThread]:
    running = ServerThread(database_url, settings=Settings(active_memory_warning_runs=3))
    with running:
        yield running


def test_a_warning_appears_past_the_threshold_and_a_reset_clears_it(
    warning_server: ServerThread,
) -> None:
    with warning_server.client() as client:
        set_active(client, "bot", True)
        seen = [record(client, "bot", f"run-{i}", after=f"sess-{i}") for i in range(1, 5)]
        assert [s.warning for s in seen] == [False, False, False, True]
        assert all(s.warning_threshold == 3 for s in seen)
        assert session_of(client, "bot").warning is True
        assert reset(client, "bot").warning is False


# --- validation and tenancy ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"agent_id": "", "run_id": "r"}, "agent_id"),
        ({"agent_id": "bot", "run_id": ""}, "run_id"),
        ({"agent_id": "bot", "run_id": "r" * 256}, "run_id"),
        ({"agent_id": "bot", "run_id": "r", "session_id_after": "a b"}, "session_id_after"),
        ({"agent_id": "bot", "run_id": "r", "session_id_before": "s" * 256}, "session_id_before"),
    ],
)
def test_malformed_runs_are_refused(client: Client, fields: dict[str, str], field: str) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        client.call(client.memory.RecordRunSession, pb.RecordRunSessionRequest(**fields))
    details = error_details(caught.value)
    assert details.code == grpc.StatusCode.INVALID_ARGUMENT
    assert field in details.violations


def test_a_run_id_of_255_characters_is_accepted(client: Client) -> None:
    set_active(client, "bot", True)
    assert record(client, "bot", "r" * 255, after="s").runs_since_reset == 1


def test_tenants_never_see_each_others_sessions(client: Client, other_client: Client) -> None:
    set_active(client, "bot", True)
    record(client, "bot", "run-1", after="sess-secret")
    theirs = session_of(other_client, "bot")
    assert theirs.enabled is False
    assert theirs.session_id == ""
    set_active(other_client, "bot", True)
    record(other_client, "bot", "run-1", after="sess-theirs")
    reset(other_client, "bot")
    mine = session_of(client, "bot")
    assert (mine.session_id, mine.runs_since_reset) == ("sess-secret", 1)


# --- chat turns and scheduled runs ----------------------------------------------------------


def runs_of(client: Client, agent: str, **paging: object) -> pb.ListAgentRunsResponse:
    request = pb.ListAgentRunsRequest(agent_id=agent, **paging)  # type: ignore[arg-type]
    response: pb.ListAgentRunsResponse = client.call(client.memory.ListAgentRuns, request)
    return response


def test_a_chat_turn_shares_the_session_but_only_scheduled_runs_count(client: Client) -> None:
    set_active(client, "bot", True)
    chat = pb.RecordRunSessionRequest(
        agent_id="bot", run_id="chat-1", session_id_after="s1", kind=memory_pb2.RUN_KIND_CHAT
    )
    after_chat = client.call(client.memory.RecordRunSession, chat).session
    assert (after_chat.session_id, after_chat.status) == ("s1", CARRYING)
    assert after_chat.runs_since_reset == 0
    scheduled = record(client, "bot", "beat-1", before="s1", after="s2")  # kind unset: scheduled
    assert (scheduled.session_id, scheduled.runs_since_reset) == ("s2", 1)
    chat2 = pb.RecordRunSessionRequest(
        agent_id="bot",
        run_id="chat-2",
        session_id_before="s2",
        session_id_after="s3",
        kind=memory_pb2.RUN_KIND_CHAT,
    )
    latest = client.call(client.memory.RecordRunSession, chat2).session
    assert (latest.session_id, latest.runs_since_reset) == ("s3", 1)

    # The same run id as another kind of run is refused, and nothing changes.
    again = pb.RecordRunSessionRequest(
        agent_id="bot", run_id="chat-1", session_id_after="s1", kind=memory_pb2.RUN_KIND_SCHEDULED
    )
    with pytest.raises(grpc.RpcError) as refused:
        client.call(client.memory.RecordRunSession, again)
    assert error_details(refused.value).reason == "RUN_ALREADY_RECORDED"
    assert session_of(client, "bot").runs_since_reset == 1


def test_each_run_s_session_ids_before_and_after_read_back_newest_first(client: Client) -> None:
    set_active(client, "bot", True)
    record(client, "bot", "r1", after="s1")
    record(client, "bot", "r2", before="s1")  # failed: no session after
    chat = pb.RecordRunSessionRequest(
        agent_id="bot",
        run_id="r3",
        session_id_before="s1",
        session_id_after="s3",
        kind=memory_pb2.RUN_KIND_CHAT,
    )
    client.call(client.memory.RecordRunSession, chat)
    runs = list(runs_of(client, "bot").runs)
    assert [(r.run_id, r.session_id_before, r.session_id_after, r.carried) for r in runs] == [
        ("r3", "s1", "s3", True),
        ("r2", "s1", "", False),
        ("r1", "", "s1", True),
    ]
    assert [r.kind for r in runs] == [
        memory_pb2.RUN_KIND_CHAT,
        memory_pb2.RUN_KIND_SCHEDULED,
        memory_pb2.RUN_KIND_SCHEDULED,
    ]
    assert runs[0].recorded_at.ToDatetime() >= runs[1].recorded_at.ToDatetime()

    walked: list[str] = []
    token = ""
    while True:
        page = runs_of(client, "bot", page_size=1, page_token=token)
        walked += [r.run_id for r in page.runs]
        token = page.next_page_token
        if not token:
            break
    assert walked == ["r3", "r2", "r1"]
    assert list(runs_of(client, "another").runs) == []
    with pytest.raises(grpc.RpcError) as refused:
        runs_of(client, "bot", page_token="garbage")
    assert error_details(refused.value).code is grpc.StatusCode.INVALID_ARGUMENT


# --- when a run's prompt was rendered -----------------------------------------------------


def test_a_run_keeps_when_its_prompt_was_rendered(client: Client) -> None:
    rendered = client.call(client.recall.RenderPrompt, rpb.RenderPromptRequest(agent_id="bot"))
    assert rendered.HasField("render_time")
    request = pb.RecordRunSessionRequest(
        agent_id="bot", run_id="r1", session_id_after="s1", render_time=rendered.render_time
    )
    client.call(client.memory.RecordRunSession, request)
    record(client, "bot", "r2")  # told nothing: none is kept
    r2, r1 = runs_of(client, "bot").runs
    assert r1.render_time == rendered.render_time
    assert not r2.HasField("render_time")

    # The same run again changes nothing; with another render time it is refused.
    client.call(client.memory.RecordRunSession, request)
    other = pb.RecordRunSessionRequest()
    other.CopyFrom(request)
    other.render_time.FromDatetime(rendered.render_time.ToDatetime() - timedelta(seconds=1))
    with pytest.raises(grpc.RpcError) as refused:
        client.call(client.memory.RecordRunSession, other)
    assert error_details(refused.value).reason == "RUN_ALREADY_RECORDED"
    assert runs_of(client, "bot").runs[1].render_time == rendered.render_time


def test_a_render_time_in_the_future_is_refused_and_nothing_is_kept(client: Client) -> None:
    request = pb.RecordRunSessionRequest(agent_id="bot", run_id="r1")
    request.render_time.FromDatetime(datetime.now(UTC) + timedelta(hours=1))
    with pytest.raises(grpc.RpcError) as refused:
        client.call(client.memory.RecordRunSession, request)
    details = error_details(refused.value)
    assert details.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "render_time" in details.violations
    assert list(runs_of(client, "bot").runs) == []
    # A few seconds ahead is another clock's skew, not the future.
    request.render_time.FromDatetime(datetime.now(UTC) + timedelta(seconds=2))
    client.call(client.memory.RecordRunSession, request)
    assert [r.run_id for r in runs_of(client, "bot").runs] == ["r1"]
