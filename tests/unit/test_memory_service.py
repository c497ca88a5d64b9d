"""Memory use cases over the in-memory store: the write-by-key retry loop, the
read-only rules, etags, learnings, and what a failed call leaves behind."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

from agent_memory.domain.errors import (
    AlreadyExists,
    Conflict,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
)
from agent_memory.domain.events import MemoryEventType
from agent_memory.domain.identity import Principal
from agent_memory.domain.memorize import Conversation, ConversationMessage, MemorizeInput
from agent_memory.domain.memory import (
    LEARNING_KEY_PREFIX,
    Grounding,
    Memory,
    MemoryPatch,
    MemorySource,
    MemoryWrite,
    Owner,
    Scope,
)
from agent_memory.service.memories import WRITE_ATTEMPTS, Memories, write_by_key
from tests.fakes import FakeStore

T = TypeVar("T")
ALICE = Principal("acme", "alice")
AGENT = Owner(Scope.AGENT, "coder")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.fixture
def store() -> FakeStore:
    return FakeStore()


@pytest.fixture
def memories(store: FakeStore) -> Memories:
    return Memories(store)


def events(store: FakeStore, memory: Memory) -> list[MemoryEventType]:
    return [e.type for _, e in store.state.events if e.memory_id == memory.id]


def seed(store: FakeStore, source: MemorySource, key: str = "k", value: str = "v") -> Memory:
    return store.add(ALICE, MemoryWrite(AGENT, key, source, value))


# --- write by key -------------------------------------------------------------------------


def test_a_writer_that_lost_the_race_writes_again_and_updates(store: FakeStore) -> None:
    write = MemoryWrite(AGENT, "deploy", MemorySource.MANUAL, "make release")
    raced = []

    def concurrent_writer(w: MemoryWrite) -> None:
        if not raced:
            raced.append(True)
            seed(store, MemorySource.MANUAL, "deploy", "make deploy")

    store.before_write = concurrent_writer

    async def go() -> Any:
        async with store.connection(ALICE) as tx:
            return await write_by_key(tx.memories, write)

    written = run(go())
    assert not written.created
    assert written.memory.value == "make release"
    assert written.memory.version == 2
    assert events(store, written.memory) == [MemoryEventType.CREATED, MemoryEventType.UPDATED]


def test_a_key_that_keeps_changing_gives_up_with_a_conflict(store: FakeStore) -> None:
    attempts: list[MemoryWrite] = []

    def flip(w: MemoryWrite) -> None:
        """A concurrent writer creates or deletes the key before every attempt."""
        attempts.append(w)
        found = [k for k, m in store.state.memories.items() if m.key == w.key]
        if found:
            del store.state.memories[found[0]]
        else:
            seed(store, MemorySource.MANUAL, w.key)

    store.before_write = flip

    async def go() -> Any:
        async with store.connection(ALICE) as tx:
            write = MemoryWrite(AGENT, "k", MemorySource.MANUAL, "v")
            return await write_by_key(tx.memories, write)

    with pytest.raises(Conflict) as info:
        run(go())
    assert info.value.reason == "CONCURRENT_WRITE"
    assert len(attempts) == WRITE_ATTEMPTS


@pytest.mark.parametrize(
    "held_by", [MemorySource.AUTO, MemorySource.DIRECTOR, MemorySource.MEMORIZE]
)
def test_a_key_held_by_a_read_only_memory_is_refused_as_read_only(
    store: FakeStore, memories: Memories, held_by: MemorySource
) -> None:
    held = seed(store, held_by, "deploy", "from the run")
    with pytest.raises(FailedPrecondition) as info:
        run(memories.upsert(ALICE, MemoryWrite(AGENT, "deploy", MemorySource.MANUAL, "by hand")))
    assert info.value.reason == "READ_ONLY_MEMORY"
    assert info.value.metadata["memory_id"] == str(held.id)
    assert run(memories.get(ALICE, held.id)).value == "from the run"
    assert events(store, held) == [MemoryEventType.CREATED]


def test_a_manual_key_is_not_overwritten_by_an_automatic_write(
    store: FakeStore, memories: Memories
) -> None:
    seed(store, MemorySource.MANUAL, "deploy")
    with pytest.raises(FailedPrecondition) as info:
        run(memories.upsert(ALICE, MemoryWrite(AGENT, "deploy", MemorySource.AUTO, "x")))
    assert info.value.reason == "SOURCE_MISMATCH"


def test_upsert_creates_then_updates_in_place_keeping_pin_and_importance(
    store: FakeStore, memories: Memories
) -> None:
    first, created = run(
        memories.upsert(
            ALICE, MemoryWrite(AGENT, "k", MemorySource.MANUAL, "one", pinned=True, importance=70)
        )
    )
    assert created
    second, created = run(
        memories.upsert(ALICE, MemoryWrite(AGENT, "k", MemorySource.MANUAL, "two"))
    )
    assert not created
    assert (second.id, second.value, second.pinned, second.importance) == (
        first.id,
        "two",
        True,
        70,
    )
    assert events(store, first) == [MemoryEventType.CREATED, MemoryEventType.UPDATED]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"key": "", "value": "v"},
        {"key": "k", "value": "v" * 2001},
        {"key": "k", "value": "v", "importance": 101},
        {"key": "k", "value": "v", "source": MemorySource.MEMORIZE},
    ],
    ids=["empty-key", "long-value", "importance", "memorize-source"],
)
def test_a_refused_upsert_writes_nothing(
    store: FakeStore, memories: Memories, kwargs: dict[str, Any]
) -> None:
    with pytest.raises(InvalidArgument):
        run(memories.upsert(ALICE, MemoryWrite(AGENT, **{"source": MemorySource.MANUAL, **kwargs})))
    assert store.state.memories == {}
    assert store.state.events == []


# --- read-only rules, etags ---------------------------------------------------------------


@pytest.mark.parametrize(
    "patch",
    [MemoryPatch(value="new"), MemoryPatch(key="new"), MemoryPatch(importance=5)],
    ids=["value", "key", "importance"],
)
def test_content_of_a_read_only_memory_cannot_change(
    store: FakeStore, memories: Memories, patch: MemoryPatch
) -> None:
    auto = seed(store, MemorySource.AUTO)
    with pytest.raises(FailedPrecondition) as info:
        run(memories.update(ALICE, auto.id, patch))
    assert info.value.reason == "READ_ONLY_MEMORY"
    assert events(store, auto) == [MemoryEventType.CREATED]


def test_a_read_only_memory_can_be_pinned_and_deleted(store: FakeStore, memories: Memories) -> None:
    auto = seed(store, MemorySource.AUTO)
    pinned = run(memories.update(ALICE, auto.id, MemoryPatch(pinned=True)))
    assert pinned.pinned
    run(memories.delete(ALICE, auto.id))
    assert events(store, auto) == [
        MemoryEventType.CREATED,
        MemoryEventType.PINNED,
        MemoryEventType.DELETED,
    ]


def test_an_update_that_changes_nothing_records_nothing(
    store: FakeStore, memories: Memories
) -> None:
    manual = seed(store, MemorySource.MANUAL, value="same")
    unchanged = run(memories.update(ALICE, manual.id, MemoryPatch(value="same", pinned=False)))
    assert unchanged.version == manual.version
    assert events(store, manual) == [MemoryEventType.CREATED]


def test_a_stale_etag_is_a_conflict_and_changes_nothing(
    store: FakeStore, memories: Memories
) -> None:
    manual = seed(store, MemorySource.MANUAL)
    stale = manual.etag
    run(memories.update(ALICE, manual.id, MemoryPatch(value="newer"), etag=stale))
    with pytest.raises(Conflict) as info:
        run(memories.update(ALICE, manual.id, MemoryPatch(value="lost"), etag=stale))
    assert info.value.reason == "ETAG_MISMATCH"
    with pytest.raises(Conflict):
        run(memories.delete(ALICE, manual.id, etag=stale))
    assert run(memories.get(ALICE, manual.id)).value == "newer"


def test_renaming_onto_a_taken_key_is_refused(store: FakeStore, memories: Memories) -> None:
    one = seed(store, MemorySource.MANUAL, "one")
    two = seed(store, MemorySource.MANUAL, "two")
    with pytest.raises(AlreadyExists) as info:
        run(memories.update(ALICE, one.id, MemoryPatch(key="two")))
    assert info.value.metadata["memory_id"] == str(two.id)


def test_another_tenant_sees_nothing(store: FakeStore, memories: Memories) -> None:
    mine = seed(store, MemorySource.MANUAL)
    intruder = Principal("globex", "mallory")
    for call in (
        memories.get(intruder, mine.id),
        memories.update(intruder, mine.id, MemoryPatch(value="x")),
        memories.pin(intruder, mine.id, True),
        memories.delete(intruder, mine.id),
    ):
        with pytest.raises(NotFound):
            run(call)
    assert run(memories.get(ALICE, mine.id)) == mine


# --- learnings ----------------------------------------------------------------------------


def test_a_learning_lands_on_the_first_agent_of_the_chain(memories: Memories) -> None:
    learned = run(
        memories.record_learning(ALICE, chain_agent_ids=["lead", "coder"], content="ask first")
    )
    assert learned.owner == Owner(Scope.AGENT, "lead")
    assert learned.source is MemorySource.DIRECTOR
    assert learned.key.startswith(LEARNING_KEY_PREFIX)


def test_learnings_in_one_instant_get_distinct_keys(store: FakeStore, memories: Memories) -> None:
    taken: list[str] = []
    original = store.tx

    def tx_taking_the_first_two(principal: Principal) -> Any:
        tx = original(principal)
        create = tx.memories.create

        async def first_two_taken(write: MemoryWrite) -> Memory | None:
            taken.append(write.key)
            return None if len(taken) <= 2 else await create(write)

        tx.memories.create = first_two_taken  # type: ignore[method-assign]
        return tx

    store.tx = tx_taking_the_first_two  # type: ignore[method-assign]
    learned = run(memories.record_learning(ALICE, chain_agent_ids=["lead"], content="x"))
    assert taken[1] == taken[0] + "#2"
    assert learned.key == taken[0] + "#3"


def test_learnings_read_back_newest_first_across_the_chain(memories: Memories) -> None:
    for agent, content in (("lead", "first"), ("coder", "second"), ("lead", "third")):
        run(memories.record_learning(ALICE, chain_agent_ids=[agent], content=content))
    found = run(memories.learnings(ALICE, chain_agent_ids=["coder", "lead"], limit=0))
    assert [m.value for m in found] == ["third", "second", "first"]
    assert len(run(memories.learnings(ALICE, chain_agent_ids=["lead"], limit=1))) == 1


# --- memorize -----------------------------------------------------------------------------


def test_memorize_twice_is_one_memory_with_its_groundings_and_conversation(
    store: FakeStore, memories: Memories
) -> None:
    item = MemorizeInput(
        content="Releases come from release/*",
        tags=("Release Flow",),
        confidence=0.9,
        groundings=(Grounding(message_position=1, end_character=10, quote="release/*"),),
        conversation=Conversation(
            "claude-code",
            "conv-1",
            (
                ConversationMessage("user", "where from?"),
                ConversationMessage("assistant", "release/* branches"),
            ),
        ),
    )
    first, created, _ = run(memories.memorize(ALICE, owner=AGENT, item=item))
    again, created_again, _ = run(memories.memorize(ALICE, owner=AGENT, item=item))
    assert created
    assert not created_again
    assert again.id == first.id
    assert again.tags == ("release-flow",)
    assert run(memories.get(ALICE, first.id)).groundings == item.groundings
    assert ("acme", "claude-code", "conv-1") in store.state.conversations


def test_a_grounding_past_the_snapshot_is_refused_and_nothing_is_written(
    store: FakeStore, memories: Memories
) -> None:
    item = MemorizeInput(
        content="Releases come from release/*",
        groundings=(Grounding(), Grounding(message_position=1)),
        conversation=Conversation("claude-code", "conv-3", (ConversationMessage("user", "hi"),)),
    )
    with pytest.raises(InvalidArgument) as refused:
        run(memories.memorize(ALICE, owner=AGENT, item=item))
    assert [v.field for v in refused.value.violations] == ["groundings[1].message_position"]
    assert store.state.conversations == {}
    assert store.state.memories == {}


def test_a_refused_memorize_leaves_no_conversation_behind(
    store: FakeStore, memories: Memories
) -> None:
    seed(store, MemorySource.MANUAL, "taken")
    item = MemorizeInput(
        content="x", memory_key="taken", conversation=Conversation("p", "conv-2", ())
    )
    with pytest.raises(FailedPrecondition):
        run(memories.memorize(ALICE, owner=AGENT, item=item))
    assert store.state.conversations == {}
