"""Memories that expire (AIP-214), over real gRPC: invisible to every read from the
instant they expire, listed only when asked, revived by an upsert of their key, and
deleted by the sweeper with an audit event."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from google.protobuf import duration_pb2, field_mask_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from agent_memory.config import Settings
from agent_memory_client import InvalidArgument, MemoryClient, NotFound
from agent_memory_client.types import MemoryEventType, MemorySource
from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import ServerThread, wait_until

pytestmark = pytest.mark.e2e

AGENT = "planner"
SOON = timedelta(seconds=3)  # long enough to see a memory before it expires


@pytest.fixture
def memory(server: ServerThread) -> Iterator[MemoryClient]:
    key = server.new_key(f"tenant-{uuid.uuid4().hex[:10]}", "user-1")
    with MemoryClient(server.address, api_key=key) as client:
        client.call(
            "UpdateAgentSettings",
            pb.UpdateAgentSettingsRequest(
                settings=memory_pb2.AgentSettings(agent_id=AGENT, memory_enabled=True),
                update_mask=field_mask_pb2.FieldMask(paths=["memory_enabled"]),
            ),
        )
        yield client


def gone(client: MemoryClient, memory_id: str) -> bool:
    try:
        client.get_memory(memory_id)
    except NotFound:
        return True
    return False


def test_an_expired_memory_is_invisible_to_every_read(memory: MemoryClient) -> None:
    lasting = memory.upsert_memory("timezone", "Europe/Lisbon", agent_id=AGENT)
    brief = memory.upsert_memory("standup-room", "Room 4 until noon", agent_id=AGENT, ttl=SOON)
    expires = brief.expire_time
    assert expires is not None
    assert timedelta(0) < expires - datetime.now(UTC) <= SOON
    assert lasting.expire_time is None
    prompt = memory.render_prompt(AGENT).system_prompt
    assert "Room 4 until noon" in prompt

    def recalled() -> list[str]:
        found = memory.recall("standup room", agent_id=AGENT, include_memories=True)
        return [m.content for m in found]

    assert any("Room 4" in c for c in recalled())

    assert wait_until(lambda: gone(memory, brief.id), timeout=15)
    assert [m.key for m in memory.list_memories(agent_id=AGENT)] == ["timezone"]
    assert "Room 4" not in memory.render_prompt(AGENT).system_prompt
    assert not any("Room 4" in c for c in recalled())
    for rpc, request in (
        ("PinMemory", pb.PinMemoryRequest(id=brief.id, pinned=True)),
        ("DeleteMemory", pb.DeleteMemoryRequest(id=brief.id)),
        (
            "UpdateMemory",
            pb.UpdateMemoryRequest(
                memory=memory_pb2.Memory(id=brief.id, value="Room 5"),
                update_mask=field_mask_pb2.FieldMask(paths=["value"]),
            ),
        ),
    ):
        with pytest.raises(NotFound):
            memory.call(rpc, request)
    # Until the sweeper deletes it, it can be listed when asked for.
    shown = {m.key: m for m in memory.list_memories(agent_id=AGENT, show_expired=True)}
    assert set(shown) == {"timezone", "standup-room"}
    assert shown["standup-room"].expire_time == brief.expire_time


def test_an_expired_key_takes_a_new_memory_and_an_upsert_keeps_an_expiry_it_does_not_name(
    memory: MemoryClient,
) -> None:
    first = memory.upsert_memory("desk", "B12", agent_id=AGENT, ttl=SOON, source="auto")
    assert wait_until(lambda: gone(memory, first.id), timeout=15)
    # The expired row was of another source, read-only: it holds the key no more.
    revived = memory.upsert_memory("desk", "C3", agent_id=AGENT)
    assert (revived.value, revived.source) == ("C3", MemorySource.MANUAL)
    assert revived.id != first.id
    assert revived.expire_time is None
    with pytest.raises(NotFound):
        memory.get_memory(first.id)
    events = memory.call("ListMemoryEvents", pb.ListMemoryEventsRequest(memory_id=first.id))
    assert [e.actor_user_id for e in events.events] == ["user-1", "agent-memory:expiry"]

    # A rename onto the key of an expired memory takes the key too.
    parked = memory.upsert_memory("parking", "P2", agent_id=AGENT, ttl=SOON)
    other = memory.upsert_memory("parking-old", "P1", agent_id=AGENT)
    assert wait_until(lambda: gone(memory, parked.id), timeout=15)
    renamed = memory.call(
        "UpdateMemory",
        pb.UpdateMemoryRequest(
            memory=memory_pb2.Memory(id=other.id, key="parking"),
            update_mask=field_mask_pb2.FieldMask(paths=["key"]),
        ),
    )
    assert renamed.memory.key == "parking"

    later = datetime.now(UTC) + timedelta(days=2)
    dated = memory.upsert_memory("desk", "C4", agent_id=AGENT, expire_time=later)
    assert dated.expire_time == later  # a datetime in, the same datetime out
    kept = memory.upsert_memory("desk", "C5", agent_id=AGENT)
    assert kept.expire_time == dated.expire_time
    memorized = memory.memorize("Ana sits at C5 this week.", agent_id=AGENT, ttl=timedelta(days=7))
    assert memorized.expire_time is not None


@pytest.mark.parametrize(
    ("expiration", "field"),
    [
        ({"expire_time": datetime.now(UTC) - timedelta(minutes=1)}, "expire_time"),
        ({"expire_time": datetime.now(UTC) + timedelta(days=4000)}, "expire_time"),
        ({"ttl": timedelta(0)}, "ttl"),
        ({"ttl": timedelta(seconds=-5)}, "ttl"),
        ({"ttl": timedelta(days=3651)}, "ttl"),
    ],
)
def test_an_expiry_out_of_range_is_refused_with_its_field(
    memory: MemoryClient, expiration: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        memory.upsert_memory("k", "v", agent_id=AGENT, **expiration)  # type: ignore[arg-type]
    assert field in {v.field for v in refused.value.field_violations}
    with pytest.raises(InvalidArgument):
        memory.memorize("a fact", agent_id=AGENT, **expiration)  # type: ignore[arg-type]
    assert list(memory.list_memories(agent_id=AGENT, show_expired=True)) == []


def test_update_memory_sets_and_clears_the_expiry_by_its_mask(memory: MemoryClient) -> None:
    seen = memory.upsert_memory("seen", "likes tea", agent_id=AGENT, source="auto")
    when = datetime.now(UTC) + timedelta(days=1)
    stamp = Timestamp()
    stamp.FromDatetime(when)
    mask = field_mask_pb2.FieldMask(paths=["expire_time"])
    dated = memory.call(
        "UpdateMemory",
        pb.UpdateMemoryRequest(
            memory=memory_pb2.Memory(id=seen.id, expire_time=stamp), update_mask=mask
        ),
    ).memory
    assert dated.expire_time == when  # a read-only row's expiry may change
    cleared = memory.call(
        "UpdateMemory",
        pb.UpdateMemoryRequest(memory=memory_pb2.Memory(id=seen.id), update_mask=mask),
    ).memory
    assert cleared.expire_time is None
    # Each change of the expiry is in the memory's history, with before and after.
    events = memory.call("ListMemoryEvents", pb.ListMemoryEventsRequest(memory_id=seen.id))
    changes = [(e.type, e.old_memory, e.new_memory) for e in events.events]
    assert [t for t, _, _ in changes] == [
        MemoryEventType.CREATED,
        MemoryEventType.UPDATED,
        MemoryEventType.UPDATED,
    ]
    expiries = [(old.expire_time, new.expire_time) for _, old, new in changes[1:] if old and new]
    assert expiries == [(None, when), (when, None)]
    stamp.FromDatetime(datetime.now(UTC) - timedelta(hours=1))
    with pytest.raises(InvalidArgument) as refused:
        memory.call(
            "UpdateMemory",
            pb.UpdateMemoryRequest(
                memory=memory_pb2.Memory(id=seen.id, expire_time=stamp), update_mask=mask
            ),
        )
    assert refused.value.field_violations[0].field == "memory.expire_time"


def test_a_malformed_duration_is_refused(memory: MemoryClient) -> None:
    request = pb.UpsertMemoryRequest(
        owner=memory_pb2.MemoryOwner(agent_id=AGENT),
        key="k",
        value="v",
        ttl=duration_pb2.Duration(seconds=10, nanos=-5),
    )
    with pytest.raises(InvalidArgument) as refused:
        memory.call("UpsertMemory", request)
    assert refused.value.field_violations[0].field == "ttl"


def test_the_sweeper_deletes_expired_memories_and_says_so_in_the_audit(
    database_url: str,
) -> None:
    settings = Settings(expiry_sweep_seconds=0.2, expiry_sweep_batch=2)
    with ServerThread(database_url, settings=settings) as sweeping:
        key = sweeping.new_key(f"tenant-{uuid.uuid4().hex[:10]}", "user-1")
        with MemoryClient(sweeping.address, api_key=key) as memory:
            brief = [
                memory.upsert_memory(f"brief-{n}", "soon gone", agent_id=AGENT, ttl=SOON)
                for n in range(5)
            ]
            memory.upsert_memory("lasting", "stays", agent_id=AGENT)

            def swept() -> bool:
                left = memory.list_memories(agent_id=AGENT, show_expired=True)
                return [m.key for m in left] == ["lasting"]

            assert wait_until(swept, timeout=30)
            events = memory.call(
                "ListMemoryEvents", pb.ListMemoryEventsRequest(memory_id=brief[0].id)
            )
            kinds = [(e.type, e.actor_user_id) for e in events.events]
            assert kinds == [
                (MemoryEventType.CREATED, "user-1"),
                (MemoryEventType.DELETED, "agent-memory:expiry"),
            ]
            # Expired means gone: the trail keeps who and when, never what.
            for event in events.events:
                assert (event.old_memory, event.new_memory) == (None, None)


def test_expiry_travels_over_http_json(server: ServerThread) -> None:
    import httpx

    key = server.new_key(f"tenant-{uuid.uuid4().hex[:10]}", "user-1")
    base = f"http://{server.http_address}/v1"
    headers = {"authorization": f"Bearer {key}"}
    made = httpx.post(
        f"{base}/agents/{AGENT}/memories",
        json={"key": "parking", "value": "Level -2", "ttl": "3600s"},
        headers=headers,
        timeout=10,
    )
    assert made.status_code == 200, made.text
    expires = datetime.fromisoformat(made.json()["memory"]["expireTime"])
    assert timedelta(minutes=59) < expires - datetime.now(UTC) <= timedelta(hours=1)
    listed = httpx.get(
        f"{base}/agents/{AGENT}/memories",
        params={"showExpired": "true"},
        headers=headers,
        timeout=10,
    )
    assert [m["key"] for m in listed.json()["memories"]] == ["parking"]


def test_an_expired_memory_shows_no_content_in_its_events_before_it_is_swept(
    server: ServerThread,
) -> None:
    import httpx

    key = server.new_key(f"tenant-{uuid.uuid4().hex[:10]}", "user-1")
    with MemoryClient(server.address, api_key=key) as memory:
        brief = memory.upsert_memory("door code", "the blue door", agent_id=AGENT, ttl=SOON)
        events = memory.call("ListMemoryEvents", pb.ListMemoryEventsRequest(memory_id=brief.id))
        assert events.events[0].new_memory.value == "the blue door"
        assert wait_until(lambda: gone(memory, brief.id), timeout=15)

        events = memory.call("ListMemoryEvents", pb.ListMemoryEventsRequest(memory_id=brief.id))
    assert [e.type for e in events.events] == [MemoryEventType.CREATED]
    assert events.events[0].new_memory is None
    over_http = httpx.get(
        f"http://{server.http_address}/v1/memories/{brief.id}/events",
        headers={"authorization": f"Bearer {key}"},
        timeout=10,
    )
    assert over_http.status_code == 200, over_http.text
    assert "blue door" not in over_http.text
    assert over_http.json()["events"][0]["type"] == "MEMORY_EVENT_TYPE_CREATED"


def test_a_ttl_is_measured_from_the_write(memory: MemoryClient) -> None:
    before = datetime.now(UTC)
    made = memory.upsert_memory("visitor", "Rui, 3pm", agent_id=AGENT, ttl=timedelta(hours=4))
    after = datetime.now(UTC)
    expires = made.expire_time
    assert expires is not None
    assert before + timedelta(hours=4) - timedelta(seconds=1) <= expires
    assert expires <= after + timedelta(hours=4) + timedelta(seconds=1)


def test_an_upsert_that_changes_only_the_expiry_is_in_the_history(memory: MemoryClient) -> None:
    kept = memory.upsert_memory("locker", "No. 14", agent_id=AGENT)
    dated = memory.upsert_memory("locker", "No. 14", agent_id=AGENT, ttl=timedelta(days=2))
    assert dated.expire_time is not None
    events = memory.call("ListMemoryEvents", pb.ListMemoryEventsRequest(memory_id=kept.id))
    last = events.events[-1]
    assert last.type == MemoryEventType.UPDATED
    before, after = last.old_memory, last.new_memory
    assert (before and before.expire_time, after and after.expire_time) == (None, dated.expire_time)
