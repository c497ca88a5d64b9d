"""Sources and read-only rows, and concurrent writers of one key, over real gRPC and
PostgreSQL.

Concurrency is made real, not hoped for: the test holds an EXCLUSIVE lock on the table
the writers need, starts them together behind a barrier, waits until PostgreSQL shows
every one of them blocked on that lock (so all are in flight at once), then releases
them to race."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from typing import Any, TypeVar

import grpc
import psycopg
import pytest
from google.protobuf import field_mask_pb2
from psycopg import sql

from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import Client, ErrorDetails, ServerThread, error_details

T = TypeVar("T")
AGENT = "agent-ro"
OWNER = memory_pb2.MemoryOwner(agent_id=AGENT)
MANUAL = memory_pb2.MEMORY_SOURCE_MANUAL
AUTO = memory_pb2.MEMORY_SOURCE_AUTO
DIRECTOR = memory_pb2.MEMORY_SOURCE_DIRECTOR
MEMORIZE = memory_pb2.MEMORY_SOURCE_MEMORIZE


# --- helpers -------------------------------------------------------------------------


def upsert(client: Client, key: str, value: str = "v", **kw: Any) -> pb.UpsertMemoryResponse:
    kw.setdefault("owner", OWNER)
    response: pb.UpsertMemoryResponse = client.call(
        client.memory.UpsertMemory, pb.UpsertMemoryRequest(key=key, value=value, **kw)
    )
    return response


def get(client: Client, memory_id: str) -> memory_pb2.Memory:
    memory: memory_pb2.Memory = client.call(
        client.memory.GetMemory, pb.GetMemoryRequest(id=memory_id)
    ).memory
    return memory


def listed(client: Client, owner: memory_pb2.MemoryOwner = OWNER) -> list[memory_pb2.Memory]:
    response = client.call(
        client.memory.ListMemories, pb.ListMemoriesRequest(owner=owner, page_size=1000)
    )
    return list(response.memories)


def update(client: Client, memory: memory_pb2.Memory, paths: list[str]) -> memory_pb2.Memory:
    request = pb.UpdateMemoryRequest(
        memory=memory, update_mask=field_mask_pb2.FieldMask(paths=paths)
    )
    updated: memory_pb2.Memory = client.call(client.memory.UpdateMemory, request).memory
    return updated


def pin(client: Client, memory_id: str, pinned: bool) -> memory_pb2.Memory:
    memory: memory_pb2.Memory = client.call(
        client.memory.PinMemory, pb.PinMemoryRequest(id=memory_id, pinned=pinned)
    ).memory
    return memory


def events(client: Client, memory_id: str) -> list[memory_pb2.MemoryEvent]:
    response = client.call(
        client.memory.ListMemoryEvents,
        pb.ListMemoryEventsRequest(memory_id=memory_id, page_size=1000),
    )
    return list(response.events)


def failure(call: Callable[[], object]) -> ErrorDetails:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return error_details(info.value)


def make_auto(client: Client) -> memory_pb2.Memory:
    memory: memory_pb2.Memory = upsert(client, "auto:stack", "Next.js", source=AUTO).memory
    return memory


def make_director(client: Client) -> memory_pb2.Memory:
    request = pb.RecordLearningRequest(chain_agent_ids=[AGENT, "agent-2"], content="be brief")
    memory: memory_pb2.Memory = client.call(client.memory.RecordLearning, request).memory
    return memory


def make_memorize(client: Client) -> memory_pb2.Memory:
    request = pb.MemorizeRequest(owner=OWNER, content="tests run with make test", tags=["ci"])
    memory: memory_pb2.Memory = client.call(client.memory.Memorize, request).memory
    return memory


READ_ONLY_SOURCES = [
    pytest.param(make_auto, AUTO, id="auto"),
    pytest.param(make_director, DIRECTOR, id="director"),
    pytest.param(make_memorize, MEMORIZE, id="memorize"),
]
Maker = Callable[[Client], memory_pb2.Memory]


# --- sources and read-only --------------------------------------------------------------


def test_every_row_carries_its_source_and_only_manual_is_writable(client: Client) -> None:
    manual = upsert(client, "manual-k", "by hand").memory
    explicit = upsert(client, "manual-explicit", "by hand", source=MANUAL).memory
    auto, director, memorized = make_auto(client), make_director(client), make_memorize(client)
    expected = {
        manual.id: (MANUAL, False),
        explicit.id: (MANUAL, False),
        auto.id: (AUTO, True),
        director.id: (DIRECTOR, True),
        memorized.id: (MEMORIZE, True),
    }
    assert {m.id: (m.source, m.read_only) for m in listed(client)} == expected
    for memory_id, flags in expected.items():
        stored = get(client, memory_id)
        assert (stored.source, stored.read_only) == flags


@pytest.mark.parametrize(("make", "source"), READ_ONLY_SOURCES)
@pytest.mark.parametrize(
    ("paths", "change"),
    [
        (["key"], {"key": "renamed"}),
        (["value"], {"value": "changed"}),
        (["importance"], {"importance": 90}),
        (["value", "pinned"], {"value": "changed", "pinned": True}),
        (None, {"value": "changed"}),
    ],
    ids=["key", "value", "importance", "value-and-pinned", "no-mask"],
)
def test_read_only_rows_refuse_content_edits_and_stay_unchanged(
    client: Client,
    make: Maker,
    source: int,
    paths: list[str] | None,
    change: dict[str, Any],
) -> None:
    memory = make(client)
    assert memory.source == source
    assert memory.read_only is True
    patch = memory_pb2.Memory(id=memory.id, **change)
    request = pb.UpdateMemoryRequest(memory=patch)
    if paths is not None:
        request.update_mask.paths.extend(paths)

    details = failure(lambda: client.call(client.memory.UpdateMemory, request))
    assert details.code is grpc.StatusCode.FAILED_PRECONDITION
    assert details.reason == "READ_ONLY_MEMORY"
    assert details.metadata["memory_id"] == memory.id
    assert details.message.endswith(
        "its key, value and importance cannot change; its other fields can, and it can be deleted"
    )
    after = get(client, memory.id)
    after.ClearField("groundings")
    memory.ClearField("groundings")
    assert after == memory
    assert [e.type for e in events(client, memory.id)] == [memory_pb2.MEMORY_EVENT_TYPE_CREATED]


@pytest.mark.parametrize(("make", "source"), READ_ONLY_SOURCES)
def test_read_only_rows_can_be_pinned_unpinned_and_deleted(
    client: Client, make: Maker, source: int
) -> None:
    memory = make(client)

    pinned = pin(client, memory.id, True)
    assert pinned.pinned is True
    assert (pinned.value, pinned.key, pinned.source) == (memory.value, memory.key, source)
    assert pin(client, memory.id, False).pinned is False

    via_mask = update(client, memory_pb2.Memory(id=memory.id, pinned=True), ["pinned"])
    assert via_mask.pinned is True
    assert get(client, memory.id).pinned is True
    assert update(client, memory_pb2.Memory(id=memory.id), ["pinned"]).pinned is False
    assert get(client, memory.id).read_only is True

    client.call(client.memory.DeleteMemory, pb.DeleteMemoryRequest(id=memory.id))
    details = failure(lambda: get(client, memory.id))
    assert details.code is grpc.StatusCode.NOT_FOUND
    assert memory.id not in [m.id for m in listed(client)]


def test_manual_rows_are_editable(client: Client) -> None:
    memory = upsert(client, "k", "old").memory
    assert memory.read_only is False
    changed = update(
        client,
        memory_pb2.Memory(id=memory.id, key="k2", value="new", importance=5),
        ["key", "value", "importance"],
    )
    assert (changed.key, changed.value, changed.importance) == ("k2", "new", 5)


@pytest.mark.parametrize(("make", "source"), READ_ONLY_SOURCES)
def test_a_manual_upsert_on_a_read_only_key_changes_nothing(
    client: Client, make: Maker, source: int
) -> None:
    memory = make(client)
    before = listed(client)
    # The service's own keys (auto:, director:learning:, memorize:) are reserved for
    # their source: a manual write there is refused before it meets the row.
    details = failure(lambda: upsert(client, memory.key, "overwritten by hand", importance=99))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"key"}
    assert listed(client) == before
    assert get(client, memory.id).value == memory.value
    assert len(events(client, memory.id)) == 1


def test_a_manual_upsert_on_a_key_an_orchestrator_wrote_as_auto_changes_nothing(
    client: Client,
) -> None:
    memory = upsert(client, "stack", "Next.js", source=AUTO).memory
    before = listed(client)
    details = failure(lambda: upsert(client, "stack", "overwritten by hand", importance=99))
    assert details.code is grpc.StatusCode.FAILED_PRECONDITION
    assert details.reason == "READ_ONLY_MEMORY"
    assert details.metadata["memory_id"] == memory.id
    assert listed(client) == before
    assert get(client, memory.id).value == memory.value
    assert len(events(client, memory.id)) == 1


def test_an_auto_upsert_of_its_own_key_updates_in_place(client: Client) -> None:
    first = make_auto(client)
    again = upsert(client, first.key, "Next.js 14", source=AUTO)
    assert again.created is False
    assert again.memory.id == first.id
    assert again.memory.value == "Next.js 14"
    assert again.memory.read_only is True


def test_an_upsert_with_memorize_source_is_invalid(client: Client) -> None:
    details = failure(lambda: upsert(client, "k", source=MEMORIZE))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"source"}
    assert listed(client) == []


def test_an_upsert_with_memorize_source_cannot_touch_a_memorized_row(client: Client) -> None:
    memory = make_memorize(client)
    details = failure(lambda: upsert(client, memory.key, "replaced", source=MEMORIZE))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert get(client, memory.id).value == memory.value


# --- concurrency ------------------------------------------------------------------------


class TableGate:
    """Holds an EXCLUSIVE lock on a table until ``waiters`` backends queue behind it."""

    def __init__(self, database_url: str, table: str) -> None:
        self.database_url = database_url
        self.table = table

    @contextmanager
    def closed(self) -> Iterator[TableGate]:
        with psycopg.connect(self.database_url) as holder:
            holder.execute(
                sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(sql.Identifier(self.table))
            )
            try:
                yield self
            finally:
                holder.rollback()  # opens the gate

    def wait_for(self, waiters: int, timeout: float = 30) -> None:
        """Until ``waiters`` distinct server backends wait for the table lock."""
        query = (
            "SELECT count(DISTINCT pid) FROM pg_locks WHERE relation = %s::regclass AND NOT granted"
        )
        deadline = time.monotonic() + timeout
        with psycopg.connect(self.database_url, autocommit=True) as watcher:
            while True:
                row = watcher.execute(query, (self.table,)).fetchone()
                waiting = int(row[0]) if row else 0
                if waiting >= waiters:
                    return
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"only {waiting} of {waiters} writers reached {self.table}"
                    )
                time.sleep(0.01)


def race(
    database_url: str, table: str, callers: list[Client], call: Callable[[Client], T]
) -> list[T]:
    """Start every caller's call together and release them to race on ``table``."""
    barrier = threading.Barrier(len(callers))

    def run(caller: Client) -> T:
        barrier.wait(timeout=30)
        return call(caller)

    gate = TableGate(database_url, table)
    with ThreadPoolExecutor(max_workers=len(callers)) as pool:
        with gate.closed():
            futures = [pool.submit(run, c) for c in callers]
            gate.wait_for(len(callers))
        return [f.result(timeout=60) for f in futures]


@contextmanager
def callers_of(server: ServerThread, client: Client, count: int) -> Iterator[list[Client]]:
    """``count`` callers of the client's tenant, each on its own channel."""
    with ExitStack() as stack:
        yield [
            stack.enter_context(server.client(tenant_id=client.tenant_id, user_id=f"writer-{i}"))
            for i in range(count)
        ]


@pytest.mark.parametrize("writers", [2, 8])
def test_concurrent_upserts_of_a_new_key_create_exactly_one_row(
    server: ServerThread, client: Client, database_url: str, writers: int
) -> None:
    with callers_of(server, client, writers) as callers:
        responses = race(
            database_url,
            "memories",
            callers,
            lambda c: upsert(c, "race-key", f"from {c.user_id}"),
        )
    assert sum(r.created for r in responses) == 1
    assert len({r.memory.id for r in responses}) == 1
    rows = listed(client)
    assert [m.key for m in rows] == ["race-key"]
    assert rows[0].value in {f"from writer-{i}" for i in range(writers)}
    kinds = [e.type for e in events(client, rows[0].id)]
    assert kinds == [memory_pb2.MEMORY_EVENT_TYPE_CREATED] + [
        memory_pb2.MEMORY_EVENT_TYPE_UPDATED
    ] * (writers - 1)


def conversation_count(database_url: str, tenant_id: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM conversations WHERE tenant_id = %s", (tenant_id,)
        ).fetchone()
        return int(row[0]) if row else 0


@pytest.mark.parametrize(
    "with_conversation", [True, False], ids=["with-conversation", "without-conversation"]
)
def test_concurrent_identical_memorize_calls_make_one_row(
    server: ServerThread,
    client: Client,
    database_url: str,
    with_conversation: bool,
) -> None:
    request = pb.MemorizeRequest(owner=OWNER, content="the API gateway is Kong", tags=["infra"])
    if with_conversation:
        request.groundings.add(message_position=1, end_character=4, quote="Kong")
        request.conversation.CopyFrom(
            memory_pb2.Conversation(
                provider="anthropic",
                conversation_id="conv-race",
                messages=[
                    memory_pb2.ConversationMessage(role="user", content="gateway?"),
                    memory_pb2.ConversationMessage(role="assistant", content="Kong"),
                ],
            )
        )
    writers = 8
    with callers_of(server, client, writers) as callers:
        # The memory is written first (its conversation after it), so that is where
        # identical calls meet.
        responses = race(
            database_url, "memories", callers, lambda c: c.call(c.memory.Memorize, request)
        )
    assert sum(r.created for r in responses) == 1
    assert len({r.memory.id for r in responses}) == 1
    assert [m.id for m in listed(client)] == [responses[0].memory.id]
    assert conversation_count(database_url, client.tenant_id) == (1 if with_conversation else 0)


def test_concurrent_memorize_calls_of_one_new_conversation_store_one_snapshot(
    server: ServerThread, client: Client, database_url: str
) -> None:
    conversation = memory_pb2.Conversation(
        provider="anthropic",
        conversation_id="conv-shared",
        messages=[
            memory_pb2.ConversationMessage(role="user", content="gateway and queue?"),
            memory_pb2.ConversationMessage(role="assistant", content="Kong and SQS"),
        ],
    )

    def memorize(c: Client) -> pb.MemorizeResponse:
        response: pb.MemorizeResponse = c.call(
            c.memory.Memorize,
            pb.MemorizeRequest(
                owner=OWNER,
                content=f"a fact noted by {c.user_id}",
                groundings=[memory_pb2.Grounding(message_position=1, end_character=4)],
                conversation=conversation,
            ),
        )
        return response

    writers = 8
    with callers_of(server, client, writers) as callers:
        # Different memories, one conversation none of them has stored yet.
        responses = race(database_url, "conversations", callers, memorize)
    assert all(r.created for r in responses)
    assert len({r.memory.id for r in responses}) == writers
    assert conversation_count(database_url, client.tenant_id) == 1
