"""The store's contract for memories and their audit trail, run against PostgreSQL and
against the in-memory store the service unit tests use: both must behave the same."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from agent_memory.domain.agents import AgentSettings
from agent_memory.domain.errors import AlreadyExists
from agent_memory.domain.events import MemoryEventType
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import (
    Evidence,
    Grounding,
    KeyHeld,
    Memory,
    MemoryPatch,
    MemorySource,
    MemoryWrite,
    Owner,
    Scope,
    Written,
    listing_position,
)
from agent_memory.store import migrate
from agent_memory.store.database import Database
from agent_memory.store.repositories import Store, Tx
from tests.fakes import FakeStore

AGENT = Owner(Scope.AGENT, "coder")
WORKSPACE = Owner(Scope.WORKSPACE, "ws")


@pytest.fixture(scope="module")
def contract_database(create_database: Callable[[], str]) -> str:
    url = create_database()
    migrate.upgrade(url)
    return url


@pytest.fixture(params=["postgres", "in-memory"])
def make_store(request: pytest.FixtureRequest, contract_database: str) -> Callable[[], Store]:
    if request.param == "in-memory":
        return FakeStore
    return lambda: Database(contract_database, pool_size=4)


@pytest.fixture
def caller() -> Principal:
    """A tenant of this test alone."""
    return Principal(f"tenant-{uuid.uuid4().hex[:10]}", "alice")


Body = Callable[[Store], Awaitable[None]]


@pytest.fixture
def scenario(make_store: Callable[[], Store]) -> Callable[[Body], None]:
    def run(body: Body) -> None:
        async def go() -> None:
            store = make_store()
            try:
                await body(store)
            finally:
                if isinstance(store, Database):
                    await store.close()

        asyncio.run(go())

    return run


def write(key: str = "k", value: str = "v", **fields: Any) -> MemoryWrite:
    return MemoryWrite(
        fields.pop("owner", AGENT), key, fields.pop("source", MemorySource.MANUAL), value, **fields
    )


async def written(tx: Tx, w: MemoryWrite) -> Memory:
    outcome = await tx.memories.write(w)
    assert isinstance(outcome, Written)
    return outcome.memory


def same_memory(a: Memory, b: Memory) -> bool:
    """Equal in every field but the groundings (which the audit does not repeat)."""
    return dataclasses.replace(a, groundings=()) == dataclasses.replace(b, groundings=())


def test_a_write_creates_then_updates_in_place_with_its_audit_events(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            first = await tx.memories.write(write(value="one", pinned=True, importance=40))
            assert isinstance(first, Written)
            assert first.created
            second = await tx.memories.write(write(value="two"))
            assert isinstance(second, Written)
            assert not second.created
            events = await tx.events.list_page(first.memory.id, after=None, limit=10)
        updated = second.memory
        assert updated.id == first.memory.id
        assert (updated.value, updated.pinned, updated.importance) == ("two", True, 40)
        assert updated.version == first.memory.version + 1
        assert updated.updated_at > first.memory.updated_at
        assert [e.type for e in events] == [MemoryEventType.CREATED, MemoryEventType.UPDATED]
        assert events[0].old is None
        assert events[0].new is not None
        assert same_memory(events[0].new, first.memory)
        assert events[1].old is not None
        assert same_memory(events[1].old, first.memory)
        assert events[1].new is not None
        assert same_memory(events[1].new, updated)
        assert {e.actor_user_id for e in events} == {"alice"}

    scenario(body)


def test_the_audit_snapshot_carries_every_field_of_the_memory(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    evidence = Evidence(
        tags=("release", "git"),
        confidence=0.75,
        metadata={"source": "chat", "nested": {"n": 1}},
        conversation_provider="claude-code",
        conversation_id="conv-1",
    )

    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            memory = await written(
                tx,
                write(source=MemorySource.MEMORIZE, pinned=True, importance=9, evidence=evidence),
            )
            (event,) = await tx.events.list_page(memory.id, after=None, limit=10)
        assert event.new is not None
        for f in dataclasses.fields(Memory):
            if f.name != "groundings":
                assert getattr(event.new, f.name) == getattr(memory, f.name), f.name

    scenario(body)


def test_a_key_of_another_source_is_held_and_nothing_changes(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            auto = await written(tx, write(value="from the run", source=MemorySource.AUTO))
            held = await tx.memories.write(write(value="by hand"))
            events = await tx.events.list_page(auto.id, after=None, limit=10)
            assert await tx.memories.get(auto.id) == auto
        assert held == KeyHeld(auto)
        assert len(events) == 1

    scenario(body)


def test_evidence_is_replaced_as_a_whole_or_left_as_it_is(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        rich = Evidence(tags=("a",), confidence=0.9, metadata={"m": 1}, conversation_id="c")
        async with store.connection(caller) as tx:
            await written(tx, write(source=MemorySource.MEMORIZE, evidence=rich))
            kept = await written(tx, write(value="v2", source=MemorySource.MEMORIZE))
            replaced = await written(
                tx, write(value="v3", source=MemorySource.MEMORIZE, evidence=Evidence())
            )
        assert (kept.tags, kept.confidence, dict(kept.metadata), kept.conversation_id) == (
            ("a",),
            0.9,
            {"m": 1},
            "c",
        )
        assert (replaced.tags, replaced.confidence, dict(replaced.metadata)) == ((), None, {})
        assert replaced.conversation_id is None

    scenario(body)


def test_create_refuses_a_taken_key(scenario: Callable[[Body], None], caller: Principal) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            first = await tx.memories.create(write(source=MemorySource.DIRECTOR))
            second = await tx.memories.create(write(value="other", source=MemorySource.DIRECTOR))
        assert first is not None
        assert second is None

    scenario(body)


def test_groundings_are_kept_in_order_and_replaced(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    groundings = [
        Grounding(message_position=i, start_character=0, end_character=4, quote=f"q{i}")
        for i in (3, 1, 2)
    ]
    groundings[0] = dataclasses.replace(groundings[0], raw_event_index=7, metadata={"k": "v"})

    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            memory = await written(tx, write(source=MemorySource.MEMORIZE))
            await tx.memories.replace_groundings(memory.id, groundings)
        async with store.connection(caller) as tx:
            got = await tx.memories.get(memory.id)
            assert got is not None
            assert list(got.groundings) == groundings
            await tx.memories.replace_groundings(memory.id, groundings[:1])
            again = await tx.memories.get(memory.id)
            assert again is not None
            assert list(again.groundings) == groundings[:1]
            listed = await tx.memories.list_page(AGENT, after=None, limit=10)
            assert list(listed[0].groundings) == groundings[:1]

    scenario(body)


def test_update_applies_the_patch_and_records_its_event(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            memory = await written(tx, write("old-key", "old"))
            other = await written(tx, write("taken", "x"))
            updated = await tx.memories.update(
                memory.id, MemoryPatch(key="new-key", value="new"), MemoryEventType.UPDATED
            )
            pinned = await tx.memories.update(
                memory.id, MemoryPatch(pinned=True), MemoryEventType.PINNED
            )
            events = await tx.events.list_page(memory.id, after=None, limit=10)
        assert (updated.key, updated.value, updated.version) == ("new-key", "new", 2)
        assert pinned.pinned
        assert [e.type for e in events] == [
            MemoryEventType.CREATED,
            MemoryEventType.UPDATED,
            MemoryEventType.PINNED,
        ]
        with pytest.raises(AlreadyExists):
            async with store.transaction(caller) as tx:
                await tx.memories.update(
                    memory.id, MemoryPatch(key="taken"), MemoryEventType.UPDATED
                )
        async with store.connection(caller) as tx:
            assert (await tx.memories.get(memory.id)) == pinned
            assert (await tx.memories.get(other.id)) == other

    scenario(body)


def test_pin_records_an_event_only_when_it_changes(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            memory = await written(tx, write(source=MemorySource.AUTO))
            pinned = await tx.memories.pin(memory.id, True)
            again = await tx.memories.pin(memory.id, True)
            unpinned = await tx.memories.pin(memory.id, False)
            missing = await tx.memories.pin(uuid.uuid4(), True)
            events = await tx.events.list_page(memory.id, after=None, limit=10)
        assert pinned is not None
        assert pinned.pinned
        assert pinned.version == 2
        assert again == pinned
        assert unpinned is not None
        assert not unpinned.pinned
        assert missing is None
        assert [e.type for e in events] == [
            MemoryEventType.CREATED,
            MemoryEventType.PINNED,
            MemoryEventType.UNPINNED,
        ]

    scenario(body)


def test_delete_honours_the_version_and_leaves_a_deleted_event(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            memory = await written(tx, write())
            stale = await tx.memories.delete(memory.id, version=memory.version + 1)
            assert stale == (memory, False)
            assert await tx.memories.get(memory.id) == memory
            gone = await tx.memories.delete(memory.id, version=memory.version)
            assert gone[1]
            assert await tx.memories.get(memory.id) is None
            assert await tx.memories.delete(memory.id) == (None, False)
            events = await tx.events.list_page(memory.id, after=None, limit=10)
        assert [e.type for e in events] == [MemoryEventType.CREATED, MemoryEventType.DELETED]
        assert events[1].old is not None
        assert same_memory(events[1].old, memory)
        assert events[1].new is None

    scenario(body)


def test_listings_follow_each_scopes_order_and_continue_after_a_position(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            for key, pinned, importance in (
                ("b", False, 10),
                ("a", False, 10),
                ("c", True, 0),
                ("d", False, 90),
            ):
                await written(tx, write(key, pinned=pinned, importance=importance))
                await written(tx, write(key, owner=WORKSPACE, pinned=pinned, importance=importance))
            agent = await tx.memories.list_page(AGENT, after=None, limit=10)
            first = await tx.memories.list_page(AGENT, after=None, limit=2)
            rest = await tx.memories.list_page(AGENT, after=listing_position(first[-1]), limit=10)
            workspace = await tx.memories.list_page(WORKSPACE, after=None, limit=10)
            ws_first = await tx.memories.list_page(WORKSPACE, after=None, limit=3)
            ws_rest = await tx.memories.list_page(
                WORKSPACE, after=listing_position(ws_first[-1]), limit=10
            )
            assert await tx.memories.count(AGENT) == 4
        assert [m.key for m in agent] == ["c", "d", "a", "b"]
        assert [m.key for m in first + rest] == ["c", "d", "a", "b"]
        # Same pin and importance: the most recently updated first ("a" was written last).
        assert [m.key for m in workspace] == ["c", "d", "a", "b"]
        assert [m.key for m in ws_first + ws_rest] == [m.key for m in workspace]

    scenario(body)


def test_recent_and_learnings(scenario: Callable[[Body], None], caller: Principal) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            for key in ("one", "two", "three"):
                await written(tx, write(key))
            await written(tx, write("elsewhere", owner=WORKSPACE))
            lead = Owner(Scope.AGENT, "lead")
            for n in range(3):
                learned = write(
                    f"director:learning:{n}", f"l{n}", owner=lead, source=MemorySource.DIRECTOR
                )
                assert await tx.memories.create(learned) is not None
            recent = await tx.memories.recent([AGENT], 2)
            both = await tx.memories.recent([AGENT, WORKSPACE], 10)
            learnings = await tx.memories.learnings(["lead", "nobody"], 2)
        assert [m.key for m in recent] == ["three", "two"]
        assert {m.key for m in both} == {"one", "two", "three", "elsewhere"}
        assert [m.value for m in learnings] == ["l2", "l1"]

    scenario(body)


def test_events_page_after_a_position(scenario: Callable[[Body], None], caller: Principal) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            memory = await written(tx, write(value="0"))
            for n in range(1, 5):
                await written(tx, write(value=str(n)))
            first = await tx.events.list_page(memory.id, after=None, limit=2)
            rest = await tx.events.list_page(
                memory.id, after=(first[-1].occurred_at, first[-1].id), limit=10
            )
        assert len(first) == 2
        assert [e.new.value for e in first + rest if e.new] == ["0", "1", "2", "3", "4"]

    scenario(body)


def test_a_tenant_never_sees_or_changes_another_tenants_rows(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    intruder = Principal(f"other-{uuid.uuid4().hex[:8]}", "mallory")

    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            mine = await written(tx, write(value="mine"))
        async with store.connection(intruder) as tx:
            assert await tx.memories.get(mine.id) is None
            assert await tx.memories.pin(mine.id, True) is None
            assert await tx.memories.delete(mine.id) == (None, False)
            assert await tx.memories.list_page(AGENT, after=None, limit=10) == []
            assert await tx.events.list_page(mine.id, after=None, limit=10) == []
            theirs = await tx.memories.write(write(value="theirs"))
            assert isinstance(theirs, Written)
            assert theirs.created
        async with store.connection(caller) as tx:
            assert await tx.memories.get(mine.id) == mine

    scenario(body)


def test_a_transaction_that_raises_leaves_nothing(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def half_a_use_case(store: Store) -> None:
        async with store.transaction(caller) as tx:
            await written(tx, write("half"))
            raise RuntimeError("the rest of the use case failed")

    async def body(store: Store) -> None:
        with pytest.raises(RuntimeError):
            await half_a_use_case(store)
        async with store.connection(caller) as tx:
            assert await tx.memories.list_page(AGENT, after=None, limit=10) == []

    scenario(body)


def test_agent_settings_default_until_written(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            assert await tx.agents.get("a") == AgentSettings("a")
            stored = await tx.agents.put(AgentSettings("a", memory_enabled=True))
            assert stored.updated_at is not None
            assert (await tx.agents.get("a", lock=True)).memory_enabled

    scenario(body)
