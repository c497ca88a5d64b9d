"""The audit trail over real gRPC and PostgreSQL: every create, update, pin, unpin and
delete of a memory is an event saying who, when, and the memory before and after;
it outlives the memory, pages oldest first, and rejected writes leave no trace."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import field_mask_pb2

from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.page_tokens import reposition
from tests.support import Client, ErrorDetails, ServerThread, error_details

OWNER = memory_pb2.MemoryOwner(agent_id="agent-audit")
CREATED = memory_pb2.MEMORY_EVENT_TYPE_CREATED
UPDATED = memory_pb2.MEMORY_EVENT_TYPE_UPDATED
PINNED = memory_pb2.MEMORY_EVENT_TYPE_PINNED
UNPINNED = memory_pb2.MEMORY_EVENT_TYPE_UNPINNED
DELETED = memory_pb2.MEMORY_EVENT_TYPE_DELETED


@pytest.fixture
def alice(server: ServerThread) -> Iterator[Client]:
    with server.client(user_id="alice") as c:
        yield c


@pytest.fixture
def bob(server: ServerThread, alice: Client) -> Iterator[Client]:
    """A second user of alice's tenant."""
    with server.client(tenant_id=alice.tenant_id, user_id="bob") as c:
        yield c


# --- helpers -------------------------------------------------------------------------


def upsert(client: Client, key: str, value: str, **kw: Any) -> memory_pb2.Memory:
    request = pb.UpsertMemoryRequest(owner=OWNER, key=key, value=value, **kw)
    memory: memory_pb2.Memory = client.call(client.memory.UpsertMemory, request).memory
    return memory


def update(
    client: Client, memory: memory_pb2.Memory, paths: list[str], etag: str | None = None
) -> memory_pb2.Memory:
    request = pb.UpdateMemoryRequest(
        memory=memory, update_mask=field_mask_pb2.FieldMask(paths=paths)
    )
    if etag is not None:
        request.etag = etag
    updated: memory_pb2.Memory = client.call(client.memory.UpdateMemory, request).memory
    return updated


def pin(client: Client, memory_id: str, pinned: bool) -> memory_pb2.Memory:
    memory: memory_pb2.Memory = client.call(
        client.memory.PinMemory, pb.PinMemoryRequest(id=memory_id, pinned=pinned)
    ).memory
    return memory


def delete(client: Client, memory_id: str, etag: str | None = None) -> None:
    request = pb.DeleteMemoryRequest(id=memory_id)
    if etag is not None:
        request.etag = etag
    client.call(client.memory.DeleteMemory, request)


def page(
    client: Client, memory_id: str, page_size: int = 0, page_token: str = ""
) -> pb.ListMemoryEventsResponse:
    request = pb.ListMemoryEventsRequest(
        memory_id=memory_id, page_size=page_size, page_token=page_token
    )
    response: pb.ListMemoryEventsResponse = client.call(client.memory.ListMemoryEvents, request)
    return response


def events(client: Client, memory_id: str) -> list[memory_pb2.MemoryEvent]:
    response = page(client, memory_id, page_size=1000)
    assert response.next_page_token == ""
    return list(response.events)


def failure(call: Callable[[], object]) -> ErrorDetails:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return error_details(info.value)


def nanos(event: memory_pb2.MemoryEvent) -> int:
    value: int = event.occurred_at.ToNanoseconds()
    return value


# --- the trail --------------------------------------------------------------------------


def test_each_change_is_an_event_saying_who_when_and_what(alice: Client, bob: Client) -> None:
    created = upsert(alice, "deploy", "npm run deploy", importance=10)
    updated = update(bob, memory_pb2.Memory(id=created.id, value="make deploy"), ["value"])
    pinned = pin(alice, created.id, True)
    unpinned = update(bob, memory_pb2.Memory(id=created.id, pinned=False), ["pinned"])
    delete(alice, created.id)

    trail = events(bob, created.id)
    assert [e.type for e in trail] == [CREATED, UPDATED, PINNED, UNPINNED, DELETED]
    assert [e.actor_user_id for e in trail] == ["alice", "bob", "alice", "bob", "alice"]
    assert all(e.memory_id == created.id for e in trail)
    assert len({e.id for e in trail}) == 5
    assert all(e.HasField("occurred_at") for e in trail)
    times = [nanos(e) for e in trail]
    assert times == sorted(times), "oldest first"

    create, change, pinning, unpinning, deletion = trail
    assert not create.HasField("old_memory")
    assert create.new_memory.value == "npm run deploy"
    assert create.new_memory.key == "deploy"
    assert create.new_memory.importance == 10
    assert create.new_memory.source == memory_pb2.MEMORY_SOURCE_MANUAL

    assert change.old_memory.value == "npm run deploy"
    assert change.new_memory.value == "make deploy"
    assert change.new_memory.etag == updated.etag

    assert (pinning.old_memory.pinned, pinning.new_memory.pinned) == (False, True)
    assert pinning.new_memory.etag == pinned.etag
    assert (unpinning.old_memory.pinned, unpinning.new_memory.pinned) == (True, False)
    assert unpinning.new_memory.etag == unpinned.etag

    assert deletion.old_memory.value == "make deploy"
    assert deletion.old_memory.id == created.id
    assert not deletion.HasField("new_memory")


def test_an_upsert_onto_an_existing_key_is_an_update_event(alice: Client, bob: Client) -> None:
    first = upsert(alice, "stack", "Next.js 13")
    upsert(bob, "stack", "Next.js 14", importance=50)
    trail = events(alice, first.id)
    assert [(e.type, e.actor_user_id) for e in trail] == [(CREATED, "alice"), (UPDATED, "bob")]
    assert (trail[1].old_memory.value, trail[1].new_memory.value) == ("Next.js 13", "Next.js 14")
    assert (trail[1].old_memory.importance, trail[1].new_memory.importance) == (0, 50)


def test_importance_and_renames_are_update_events(alice: Client) -> None:
    memory = upsert(alice, "old-key", "v")
    update(alice, memory_pb2.Memory(id=memory.id, importance=70), ["importance"])
    update(alice, memory_pb2.Memory(id=memory.id, key="new-key"), ["key"])
    trail = events(alice, memory.id)
    assert [e.type for e in trail] == [CREATED, UPDATED, UPDATED]
    assert (trail[1].old_memory.importance, trail[1].new_memory.importance) == (0, 70)
    assert (trail[2].old_memory.key, trail[2].new_memory.key) == ("old-key", "new-key")


def test_every_source_is_audited(alice: Client) -> None:
    auto = upsert(alice, "auto:x", "extracted", source=memory_pb2.MEMORY_SOURCE_AUTO)
    learning = alice.call(
        alice.memory.RecordLearning,
        pb.RecordLearningRequest(chain_agent_ids=["agent-audit"], content="a learning"),
    ).memory
    memorized = alice.call(
        alice.memory.Memorize, pb.MemorizeRequest(owner=OWNER, content="a memorized fact")
    ).memory
    for memory in (auto, learning, memorized):
        pin(alice, memory.id, True)
        delete(alice, memory.id)
        trail = events(alice, memory.id)
        assert [(e.type, e.actor_user_id) for e in trail] == [
            (CREATED, "alice"),
            (PINNED, "alice"),
            (DELETED, "alice"),
        ]
        assert trail[0].new_memory.source == memory.source
        assert trail[0].new_memory.read_only is True


def test_events_are_readable_after_the_memory_is_deleted(alice: Client) -> None:
    memory = upsert(alice, "k", "v")
    delete(alice, memory.id)
    assert failure(lambda: pin(alice, memory.id, True)).code is grpc.StatusCode.NOT_FOUND
    assert [e.type for e in events(alice, memory.id)] == [CREATED, DELETED]


def test_a_recreated_key_is_a_new_memory_with_its_own_trail(alice: Client) -> None:
    first = upsert(alice, "k", "one")
    delete(alice, first.id)
    second = upsert(alice, "k", "two")
    assert second.id != first.id
    assert [e.type for e in events(alice, first.id)] == [CREATED, DELETED]
    assert [e.type for e in events(alice, second.id)] == [CREATED]


def test_a_pin_that_changes_nothing_records_nothing(alice: Client) -> None:
    memory = upsert(alice, "k", "v")
    pin(alice, memory.id, False)
    pin(alice, memory.id, True)
    pin(alice, memory.id, True)
    assert [e.type for e in events(alice, memory.id)] == [CREATED, PINNED]


# --- paging -----------------------------------------------------------------------------


def test_pages_of_two_walk_every_event_once_in_order(alice: Client) -> None:
    memory = upsert(alice, "k", "v0")
    for i in range(1, 5):
        upsert(alice, "k", f"v{i}")
    pin(alice, memory.id, True)
    everything = events(alice, memory.id)
    assert len(everything) == 6

    seen: list[memory_pb2.MemoryEvent] = []
    token = ""
    sizes = []
    while True:
        response = page(alice, memory.id, page_size=2, page_token=token)
        sizes.append(len(response.events))
        seen.extend(response.events)
        token = response.next_page_token
        if not token:
            break
    assert sizes == [2, 2, 2]
    assert [e.id for e in seen] == [e.id for e in everything]
    assert [e.new_memory.value for e in seen[:5]] == [f"v{i}" for i in range(5)]


def test_an_odd_count_ends_on_a_short_page(alice: Client) -> None:
    memory = upsert(alice, "k", "v0")
    upsert(alice, "k", "v1")
    delete(alice, memory.id)
    first = page(alice, memory.id, page_size=2)
    assert len(first.events) == 2
    assert first.next_page_token
    last = page(alice, memory.id, page_size=2, page_token=first.next_page_token)
    assert [e.type for e in last.events] == [DELETED]
    assert last.next_page_token == ""


def test_a_token_of_another_memory_is_invalid(alice: Client) -> None:
    a, b = upsert(alice, "a", "v"), upsert(alice, "b", "v")
    for i in range(3):
        upsert(alice, "a", f"v{i}")
    token = page(alice, a.id, page_size=1).next_page_token
    assert token
    details = failure(lambda: page(alice, b.id, page_size=1, page_token=token))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"page_token"}


@pytest.mark.parametrize(
    "token",
    ["garbage", "!!!", "eyJsIjoxfQ", "x" * 3000],
    ids=["word", "not-base64", "wrong-shape", "huge"],
)
def test_a_bad_page_token_is_invalid(alice: Client, token: str) -> None:
    memory = upsert(alice, "k", "v")
    details = failure(lambda: page(alice, memory.id, page_token=token))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"page_token"}


@pytest.mark.parametrize(
    "position",
    [["not a time", "not a uuid"], ["2024-01-01T00:00:00", None], [1, 2]],
    ids=["garbage", "naive-time", "numbers"],
)
def test_a_forged_token_with_a_bad_position_is_invalid(
    server: ServerThread, alice: Client, position: list[Any]
) -> None:
    memory = upsert(alice, "k", "v")
    upsert(alice, "k", "w")
    if position[1] is None:
        position[1] = memory.id
    real = page(alice, memory.id, page_size=1).next_page_token
    token = reposition(server, real, position)
    details = failure(lambda: page(alice, memory.id, page_token=token))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"page_token"}


def test_a_negative_page_size_is_invalid(alice: Client) -> None:
    memory = upsert(alice, "k", "v")
    details = failure(lambda: page(alice, memory.id, page_size=-1))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"page_size"}


# --- who may read which trail -----------------------------------------------------------


def test_an_unknown_memory_is_not_found(alice: Client) -> None:
    details = failure(lambda: page(alice, "00000000-0000-4000-8000-000000000000"))
    assert details.code is grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("raw", ["", "nope", "1234", "00000000-0000-4000-8000-00000000000g"])
def test_a_malformed_memory_id_is_invalid(alice: Client, raw: str) -> None:
    details = failure(lambda: page(alice, raw))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"memory_id"}


def test_another_tenant_cannot_read_the_trail(alice: Client, other_client: Client) -> None:
    memory = upsert(alice, "k", "v")
    assert failure(lambda: page(other_client, memory.id)).code is grpc.StatusCode.NOT_FOUND
    delete(alice, memory.id)
    assert failure(lambda: page(other_client, memory.id)).code is grpc.StatusCode.NOT_FOUND
    assert len(events(alice, memory.id)) == 2


def test_another_tenant_cannot_add_to_the_trail(alice: Client, other_client: Client) -> None:
    memory = upsert(alice, "k", "v")
    assert failure(lambda: pin(other_client, memory.id, True)).code is grpc.StatusCode.NOT_FOUND
    assert failure(lambda: delete(other_client, memory.id)).code is grpc.StatusCode.NOT_FOUND
    assert [e.type for e in events(alice, memory.id)] == [CREATED]


# --- rejected writes leave no trace -----------------------------------------------------


def test_a_read_only_refusal_records_no_event(alice: Client) -> None:
    auto = upsert(alice, "k", "v", source=memory_pb2.MEMORY_SOURCE_AUTO)
    details = failure(
        lambda: update(alice, memory_pb2.Memory(id=auto.id, value="changed"), ["value"])
    )
    assert details.reason == "READ_ONLY_MEMORY"
    details = failure(lambda: upsert(alice, "k", "by hand"))
    assert details.reason == "READ_ONLY_MEMORY"
    assert [e.type for e in events(alice, auto.id)] == [CREATED]


def test_a_stale_etag_records_no_event(alice: Client) -> None:
    memory = upsert(alice, "k", "v1")
    current = update(alice, memory_pb2.Memory(id=memory.id, value="v2"), ["value"])
    details = failure(
        lambda: update(
            alice, memory_pb2.Memory(id=memory.id, value="v3"), ["value"], etag=memory.etag
        )
    )
    assert details.code is grpc.StatusCode.ABORTED
    details = failure(lambda: delete(alice, memory.id, etag=memory.etag))
    assert details.code is grpc.StatusCode.ABORTED
    trail = events(alice, memory.id)
    assert [e.type for e in trail] == [CREATED, UPDATED]
    assert trail[-1].new_memory.etag == current.etag


def test_invalid_and_no_op_writes_record_no_event(alice: Client) -> None:
    memory = upsert(alice, "k", "v")
    other = upsert(alice, "taken", "v")
    assert (
        failure(
            lambda: update(alice, memory_pb2.Memory(id=memory.id, value="x" * 2001), ["value"])
        ).code
        is grpc.StatusCode.INVALID_ARGUMENT
    )
    assert (
        failure(lambda: update(alice, memory_pb2.Memory(id=memory.id, key="taken"), ["key"])).code
        is grpc.StatusCode.ALREADY_EXISTS
    )
    update(alice, memory_pb2.Memory(id=memory.id, value="v"), ["value"])
    assert [e.type for e in events(alice, memory.id)] == [CREATED]
    assert [e.type for e in events(alice, other.id)] == [CREATED]
