"""The store's contract for memories, their audit trail, conversations and a tenant's
export records, run against PostgreSQL and against the in-memory store the service unit
tests use: both must behave the same, and where they differ PostgreSQL is right."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from itertools import chain
from typing import Any

import psycopg
import pytest

from agent_memory.domain.agents import AgentSettings, WorkspaceSettings
from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockScope
from agent_memory.domain.decisions import (
    CardType,
    Decision,
    ReExaminable,
    Reexamination,
    ResolutionStatus,
)
from agent_memory.domain.errors import AlreadyExists, FailedPrecondition
from agent_memory.domain.events import MemoryEventType
from agent_memory.domain.identity import Principal
from agent_memory.domain.memorize import Conversation, ConversationMessage, StoredConversation
from agent_memory.domain.memory import (
    LEARNING_KEY_PREFIX,
    Evidence,
    Grounding,
    KeyHeld,
    Memory,
    MemoryPatch,
    MemorySource,
    MemoryWrite,
    Owner,
    PeriodInverted,
    Scope,
    Written,
    listing_position,
)
from agent_memory.domain.memory_query import (
    OrderPosition,
    order_position,
    parse_filter,
    parse_order,
)
from agent_memory.domain.transfer import DecisionRecord, MemoryRecord, UserBlock
from agent_memory.store.memories import EXPIRY_ACTOR
from agent_memory.store.repositories import Store, Tx
from tests.fakes import FakeStore
from tests.integration.conftest import Body

AGENT = Owner(Scope.AGENT, "coder")
WORKSPACE = Owner(Scope.WORKSPACE, "ws")
LEAD = Owner(Scope.AGENT, "lead")


StoredConversations = Callable[[Store, str], dict[tuple[str, str], Conversation]]


@pytest.fixture
def stored_conversations(store_url: str) -> StoredConversations:
    """The conversations a tenant has stored, by (provider, id), read from each store
    itself: the repository only writes them."""

    def read(store: Store, tenant_id: str) -> dict[tuple[str, str], Conversation]:
        if isinstance(store, FakeStore):
            return {
                (provider, conversation_id): conversation
                for (tenant, provider, conversation_id), conversation in (
                    store.state.conversations.items()
                )
                if tenant == tenant_id
            }
        with psycopg.connect(store_url) as conn:
            rows = conn.execute(
                "SELECT provider, conversation_id, messages, message_count, raw_events,"
                " raw_event_count FROM conversations WHERE tenant_id = %s",
                (tenant_id,),
            ).fetchall()
        found = {}
        for provider, conversation_id, messages, message_count, raw, raw_count in rows:
            assert (message_count, raw_count) == (len(messages), len(raw))
            found[provider, conversation_id] = Conversation(
                provider,
                conversation_id,
                tuple(
                    ConversationMessage(
                        m["role"],
                        m["content"],
                        m["provider_message_id"],
                        datetime.fromisoformat(m["created_at"]) if m["created_at"] else None,
                    )
                    for m in messages
                ),
                tuple(raw),
            )
        return found

    return read


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
    return bare(a) == bare(b)


def bare(memory: Memory) -> Memory:
    """The memory without its groundings, as statements that do not read them return it."""
    return dataclasses.replace(memory, groundings=())


async def every_page(tx: Tx, owner: Owner, size: int) -> list[list[str]]:
    """The keys of the owner's listing, page by page, each page continuing after the last
    row of the one before."""
    pages: list[list[str]] = []
    page = await tx.memories.list_page(owner, after=None, limit=size)
    while page:
        assert len(page) <= size
        pages.append([m.key for m in page])
        page = await tx.memories.list_page(owner, after=listing_position(page[-1]), limit=size)
    return pages


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
                write(
                    source=MemorySource.MEMORIZE,
                    pinned=True,
                    importance=9,
                    evidence=evidence,
                    valid_start_time=PAST,
                    valid_end_time=FUTURE,
                    note="per the release review",
                ),
            )
            (event,) = await tx.events.list_page(memory.id, after=None, limit=10)
        assert event.new is not None
        for f in dataclasses.fields(Memory):
            if f.name != "groundings":
                assert getattr(event.new, f.name) == getattr(memory, f.name), f.name

    scenario(body)


PAST = datetime(2020, 3, 12, tzinfo=UTC)
DAY = timedelta(days=1)
FUTURE = datetime(2100, 3, 31, tzinfo=UTC)


def test_a_period_is_written_kept_by_writes_without_it_changed_and_cleared(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            first = await written(tx, write(valid_start_time=PAST, valid_end_time=FUTURE))
            assert (first.valid_start_time, first.valid_end_time) == (PAST, FUTURE)
            kept = await written(tx, write(value="two"))
            assert (kept.valid_start_time, kept.valid_end_time) == (PAST, FUTURE)
            later = FUTURE + timedelta(days=1)
            moved = await written(tx, write(value="three", valid_end_time=later))
            assert (moved.valid_start_time, moved.valid_end_time) == (PAST, later)
            patch = MemoryPatch(valid_end_time=FUTURE, clear_valid_start=True)
            changed = await tx.memories.update(first.id, patch, MemoryEventType.UPDATED)
            assert (changed.valid_start_time, changed.valid_end_time) == (None, FUTURE)
            cleared = await tx.memories.update(
                first.id, MemoryPatch(clear_valid_end=True), MemoryEventType.UPDATED
            )
            assert (cleared.valid_start_time, cleared.valid_end_time) == (None, None)
            events = await tx.events.list_page(first.id, after=None, limit=10)
        assert events[-1].old is not None
        assert events[-1].old.valid_end_time == FUTURE
        assert events[-1].new is not None
        assert events[-1].new.valid_end_time is None

    scenario(body)


def test_a_write_ending_the_period_before_its_stored_start_changes_nothing(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            first = await written(tx, write(valid_start_time=FUTURE))
            with pytest.raises(PeriodInverted):
                await tx.memories.write(write(value="two", valid_end_time=PAST))
            with pytest.raises(PeriodInverted):
                await tx.memories.update(
                    first.id, MemoryPatch(valid_end_time=PAST), MemoryEventType.UPDATED
                )
            after = await tx.memories.get(first.id)
            events = await tx.events.list_page(first.id, after=None, limit=10)
        assert after is not None
        assert (after.value, after.version, after.valid_end_time) == ("v", 1, None)
        assert [e.type for e in events] == [MemoryEventType.CREATED]

    scenario(body)


def test_superseding_a_fact_ends_its_period_when_the_replacement_was_written(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            open_ended = await written(tx, write("open", valid_start_time=PAST))
            ending_later = await written(tx, write("later", valid_end_time=FUTURE))
            ended = await written(tx, write("ended", valid_end_time=PAST))
            not_begun = await written(tx, write("future", valid_start_time=FUTURE))
            by = await written(tx, write("new", "the new fact"))
            found = {
                m.key: await tx.memories.supersede(m.id, by)
                for m in (open_ended, ending_later, ended, not_begun)
            }
        assert {k: m.superseded_by if m else None for k, m in found.items()} == dict.fromkeys(
            found, by.id
        )
        ends = {k: m.valid_end_time if m else None for k, m in found.items()}
        at = by.updated_at
        assert ends == {"open": at, "later": at, "ended": PAST, "future": None}
        assert found["open"] is not None
        assert found["open"].valid_start_time == PAST

    scenario(body)


def test_a_filter_reads_the_period_with_open_ends_as_the_ends_of_time(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            await written(tx, write("always"))
            await written(tx, write("over", valid_start_time=PAST, valid_end_time=PAST + DAY))
            await written(tx, write("now", valid_start_time=PAST, valid_end_time=FUTURE))
            await written(tx, write("soon", valid_start_time=FUTURE))

            async def keys(text: str) -> set[str]:
                query = parse_filter(text).shown(expired=False, superseded=False)
                found = await tx.memories.list_page(AGENT, after=None, limit=10, query=query)
                assert await tx.memories.count_matching(AGENT, query) == len(found)
                return {m.key for m in found}

            assert await keys("") == {"always", "over", "now", "soon"}
            assert await keys("valid = true") == {"always", "now"}
            assert await keys("valid = false") == {"over", "soon"}
            assert await keys("NOT valid = true") == {"over", "soon"}
            assert await keys('valid_end_time < "2030-01-01T00:00:00Z"') == {"over"}
            assert await keys('NOT validEndTime < "2030-01-01T00:00:00Z"') == {
                "always",
                "now",
                "soon",
            }
            assert await keys('valid_start_time > "2030-01-01T00:00:00Z"') == {"soon"}
            assert await keys('validStartTime <= "2030-01-01T00:00:00Z"') == {
                "always",
                "over",
                "now",
            }
            assert await keys(f'valid_start_time = "{PAST.isoformat()}"') == {"over", "now"}

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


def test_an_expired_memory_leaves_only_tombstones_in_its_audit_trail(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    past = datetime(2025, 12, 1, tzinfo=UTC)

    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            kept = await written(tx, write("kept", "stays"))
            memory = await written(tx, write("desk", "B12"))
            await tx.memories.update(
                memory.id, MemoryPatch(value="C3", expire_time=past), MemoryEventType.UPDATED
            )
            # Expired, not yet swept: the events are read as the tombstones they become.
            before = await tx.events.list_page(memory.id, after=None, limit=10)
            assert [(e.type, e.old, e.new) for e in before] == [
                (MemoryEventType.CREATED, None, None),
                (MemoryEventType.UPDATED, None, None),
            ]
            assert await tx.memories.delete_expired(AGENT, "desk")
            after = await tx.events.list_page(memory.id, after=None, limit=10)
            others = await tx.events.list_page(kept.id, after=None, limit=10)
        assert [(e.type, e.actor_user_id, e.old, e.new) for e in after] == [
            (MemoryEventType.CREATED, caller.user_id, None, None),
            (MemoryEventType.UPDATED, caller.user_id, None, None),
            (MemoryEventType.DELETED, EXPIRY_ACTOR, None, None),
        ]
        # Another memory's trail keeps its content.
        assert others[0].new is not None
        assert same_memory(others[0].new, kept)

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

            # From here on recency and key order disagree: "e" is new, then "b" is rewritten.
            for owner in (AGENT, WORKSPACE):
                await written(tx, write("e", owner=owner, importance=10))
                await written(tx, write("b", "again", owner=owner))
            agent_pages = {size: await every_page(tx, AGENT, size) for size in range(1, 6)}
            workspace_pages = {size: await every_page(tx, WORKSPACE, size) for size in range(1, 6)}
            assert await tx.memories.count(WORKSPACE) == 5
        assert agent_pages[5] == [["c", "d", "a", "b", "e"]]
        assert workspace_pages[5] == [["c", "d", "b", "e", "a"]]
        assert workspace_pages[2] == [["c", "d"], ["b", "e"], ["a"]]
        for size in range(1, 6):
            assert list(chain(*agent_pages[size])) == ["c", "d", "a", "b", "e"], size
            assert list(chain(*workspace_pages[size])) == ["c", "d", "b", "e", "a"], size

    scenario(body)


def test_a_page_goes_on_from_its_position_when_its_last_row_is_gone(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            for key in ("a", "b", "c", "d"):
                await written(tx, write(key))
                await written(tx, write(key, owner=WORKSPACE))
            for owner, order in ((AGENT, "abcd"), (WORKSPACE, "dcba")):
                everything = await tx.memories.list_page(owner, after=None, limit=10)
                assert [m.key for m in everything] == list(order)
                first = await tx.memories.list_page(owner, after=None, limit=2)
                assert first == everything[:2]
                assert (await tx.memories.delete(first[-1].id))[1]
                rest = await tx.memories.list_page(
                    owner, after=listing_position(first[-1]), limit=10
                )
                assert rest == everything[2:], owner

    scenario(body)


def test_a_filter_keeps_what_it_names_and_a_named_order_pages_once(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            for key, value, importance, tags in (
                ("deploy", "Ships on Tuesday", 50, ("ops",)),
                ("tone", "Warm, brief", 50, ("style", "ops")),
                ("editor", "Helix", 20, ()),
            ):
                evidence = Evidence(tags=tags)
                await written(tx, write(key, value, importance=importance, evidence=evidence))
            auto = await written(tx, write("auto-fact", "Likes tea", source=MemorySource.AUTO))
            later = await written(tx, write("later", "Likes coffee", source=MemorySource.AUTO))
            assert await tx.memories.supersede(auto.id, by=later) is not None

            async def keys(text: str, order: str = "") -> list[str]:
                query = parse_filter(text).shown(expired=False, superseded=False)
                found = await tx.memories.list_page(
                    AGENT, after=None, limit=10, query=query, order=parse_order(order)
                )
                assert await tx.memories.count_matching(AGENT, query) == len(found)
                return [m.key for m in found]

            assert await keys("TUESDAY") == ["deploy"]
            assert await keys("tag = ops") == ["deploy", "tone"]
            assert await keys("tag = ops tag = style") == ["tone"]
            assert await keys("source = auto") == ["later"]
            assert await keys("source != manual superseded = true") == ["auto-fact"]
            assert await keys("importance > 20 text:e") == ["deploy", "tone"]
            assert await keys("", "key desc") == ["tone", "later", "editor", "deploy"]
            assert await keys("", "importance") == ["later", "editor", "deploy", "tone"]

            order = parse_order("importance desc")
            walked: list[str] = []
            after: OrderPosition | None = None
            while True:
                page = await tx.memories.list_page(AGENT, after=after, limit=1, order=order)
                if not page:
                    break
                walked.append(page[0].key)
                after = order_position(page[0], order)
        assert walked == ["deploy", "tone", "editor", "later"]

    scenario(body)


def test_or_not_and_parentheses_combine_as_aip_160_says(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            for key, value, importance, pinned, tags in (
                ("deploy", "Ships on Tuesday", 80, True, ("ops",)),
                ("tone", "Warm, brief", 60, False, ("style", "ops")),
                ("editor", "Helix", 20, False, ()),
                ("lunch", "Noon", 5, False, ("people",)),
            ):
                evidence = Evidence(tags=tags)
                await written(
                    tx, write(key, value, importance=importance, pinned=pinned, evidence=evidence)
                )
            auto = await written(tx, write("auto-fact", "Likes tea", source=MemorySource.AUTO))
            later = await written(tx, write("later", "Likes coffee", source=MemorySource.AUTO))
            assert await tx.memories.supersede(auto.id, by=later) is not None

            async def keys(text: str) -> set[str]:
                query = parse_filter(text).shown(expired=False, superseded=False)
                found = await tx.memories.list_page(AGENT, after=None, limit=10, query=query)
                assert await tx.memories.count_matching(AGENT, query) == len(found)
                return {m.key for m in found}

            assert await keys("pinned = true OR importance < 10") == {"deploy", "lunch", "later"}
            # OR binds tighter than AND: tag = ops AND (helix OR importance > 70).
            assert await keys("tag = ops AND text:helix OR importance > 70") == {"deploy"}
            assert await keys("(tag = ops AND text:helix) OR importance > 70") == {"deploy"}
            assert await keys("(tag = ops text:warm) OR text:helix") == {"tone", "editor"}
            assert await keys("NOT tag = ops -source = auto") == {"editor", "lunch"}
            assert await keys("-(importance > 10 OR tag = people)") == {"later"}
            assert await keys('NOT key = "deploy" NOT key != "tone"') == {"tone"}
            # A filter naming superseded decides on its own, also under NOT and OR.
            assert await keys("superseded = true OR key = lunch") == {"auto-fact", "lunch"}
            assert await keys("NOT superseded = false source = auto") == {"auto-fact"}

    scenario(body)


def test_an_order_of_several_fields_pages_every_row_once(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            for n, importance in enumerate((50, 20, 50, 20, 50, 80)):
                await written(tx, write(f"k{n}", importance=importance, pinned=n % 2 == 0))
            for text in (
                "importance desc, key",
                "importance, key desc",
                "importance desc, updated_at desc",
                "updated_at, importance desc",
                "created_at desc, importance desc, key desc",
            ):
                order = parse_order(text)
                whole = await tx.memories.list_page(AGENT, after=None, limit=10, order=order)
                expected = sorted(whole, key=lambda m: m.key)
                for name, descending in reversed(order.fields):
                    alone = parse_order(name)
                    expected.sort(key=lambda m: order_position(m, alone)[0], reverse=descending)
                assert [m.key for m in whole] == [m.key for m in expected], text
                for size in (1, 2, 4):
                    walked: list[str] = []
                    after: OrderPosition | None = None
                    while True:
                        page = await tx.memories.list_page(
                            AGENT, after=after, limit=size, order=order
                        )
                        walked += [m.key for m in page]
                        if len(page) < size:
                            break
                        after = order_position(page[-1], order)
                    assert walked == [m.key for m in whole], (text, size)

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
            learning = await tx.memories.create(
                write(f"{LEARNING_KEY_PREFIX}1", owner=LEAD, source=MemorySource.DIRECTOR)
            )
            assert learning is not None
        async with store.connection(intruder) as tx:
            assert await tx.memories.get(mine.id) is None
            assert await tx.memories.pin(mine.id, True) is None
            assert await tx.memories.delete(mine.id) == (None, False)
            with pytest.raises(LookupError):
                await tx.memories.update(mine.id, MemoryPatch(value="x"), MemoryEventType.UPDATED)
            assert await tx.memories.list_page(AGENT, after=None, limit=10) == []
            assert await tx.memories.count(AGENT) == 0
            assert await tx.memories.recent([AGENT, LEAD], 10) == []
            assert await tx.memories.learnings(["lead"], 10) == []
            assert await tx.memories.find_by_key(AGENT, "k") is None
            assert await tx.events.list_page(mine.id, after=None, limit=10) == []
            theirs = await tx.memories.write(write(value="theirs"))
            assert isinstance(theirs, Written)
            assert theirs.created
            assert theirs.memory.id != mine.id
            assert await tx.memories.count(AGENT) == 1
        async with store.connection(caller) as tx:
            assert await tx.memories.get(mine.id) == mine
            assert await tx.memories.find_by_key(AGENT, "k") == mine
            assert await tx.memories.count(AGENT) == 1
            assert await tx.memories.recent([AGENT], 10) == [mine]
            assert await tx.memories.learnings(["lead"], 10) == [learning]
            assert len(await tx.events.list_page(mine.id, after=None, limit=10)) == 1

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


def test_workspace_settings_default_until_written(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            assert await tx.workspaces.get("w") == WorkspaceSettings("w")
            stored = await tx.workspaces.put(WorkspaceSettings("w", timedelta(days=7)))
            assert stored.updated_at is not None
            assert (await tx.workspaces.get("w", lock=True)).expiry_slide == timedelta(days=7)

    scenario(body)


def near(a: datetime | None, b: datetime) -> bool:
    """Within a second: the use's time and the slide's are each read from the clock."""
    return a is not None and abs(a - b) <= timedelta(seconds=1)


def test_a_use_moves_an_expiry_to_its_owners_slide_past_the_use(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    """Only an expiry the slide puts later, of an owner whose settings slide: a memory
    that never expires keeps no expiry, and a use within the minute moves nothing."""
    week, hour = timedelta(days=7), timedelta(hours=1)
    workspace = Owner(Scope.WORKSPACE, "w")

    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            await tx.agents.put(AgentSettings(AGENT.id, expiry_slide=week))
            await tx.workspaces.put(WorkspaceSettings("w", expiry_slide=hour))
            await tx.agents.put(AgentSettings("off"))
            agents = await written(tx, write("a", expiration=hour))
            far = await written(tx, write("far", expiration=timedelta(days=30)))
            forever = await written(tx, write("forever"))
            off = await written(tx, write("off", owner=Owner(Scope.AGENT, "off"), expiration=hour))
            shared = await written(tx, write("w", owner=workspace, expiration=timedelta(minutes=5)))
            unset = await written(
                tx, write("u", owner=Owner(Scope.AGENT, "unset"), expiration=hour)
            )
        ids = [m.id for m in (agents, far, forever, off, shared, unset)]
        async with store.transaction(caller) as tx:
            await tx.memories.mark_used(ids)
        async with store.transaction(caller) as tx:
            after = {i: await tx.memories.get(i) for i in ids}
        used = after[agents.id]
        assert used is not None
        assert used.last_used_time is not None
        assert near(used.expire_time, used.last_used_time + week)
        assert used.version == agents.version
        assert used.updated_at == agents.updated_at
        moved = after[shared.id]
        assert moved is not None
        assert moved.last_used_time is not None
        assert near(moved.expire_time, moved.last_used_time + hour)
        for kept in (far, forever, off, unset):
            now = after[kept.id]
            assert now is not None
            assert now.last_used_time is not None
            assert now.expire_time == kept.expire_time
        # Within the minute, a use is not written again, nor is the expiry moved.
        async with store.transaction(caller) as tx:
            await tx.agents.put(AgentSettings(AGENT.id, expiry_slide=timedelta(days=30)))
            await tx.memories.mark_used([agents.id])
            again = await tx.memories.get(agents.id)
        assert again is not None
        assert again.expire_time == used.expire_time

    scenario(body)


def test_find_by_key_reads_the_owners_memory_at_the_key_with_its_groundings_if_asked(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            memory = await written(
                tx, write("deploy", "make release", source=MemorySource.MEMORIZE)
            )
            await tx.memories.replace_groundings(memory.id, [Grounding(quote="release")])
            elsewhere = await written(tx, write("deploy", "other", owner=WORKSPACE))
            found = await tx.memories.find_by_key(AGENT, "deploy")
            in_workspace = await tx.memories.find_by_key(WORKSPACE, "deploy")
            other_agent = await tx.memories.find_by_key(Owner(Scope.AGENT, "reviewer"), "deploy")
            other_case = await tx.memories.find_by_key(AGENT, "Deploy")
            whole = await tx.memories.find_by_key(AGENT, "deploy", groundings=True)
            got = await tx.memories.get(memory.id)
        assert got is not None
        assert got.groundings == (Grounding(quote="release"),)
        assert found == bare(got) == memory
        assert whole == got  # asked for, the groundings come too, as from get
        assert in_workspace == elsewhere
        assert other_agent is None
        assert other_case is None

    scenario(body)


def test_groundings_come_back_only_from_the_reads_that_ask_for_them(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    groundings = (
        Grounding(message_position=1, end_character=4, quote="q1"),
        Grounding(message_position=2, quote="q2", raw_event_index=3, metadata={"k": "v"}),
    )
    evidence = Evidence(tags=("t",), conversation_provider="p", conversation_id="c")

    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            memory = await written(tx, write(source=MemorySource.MEMORIZE, evidence=evidence))
            await tx.memories.replace_groundings(memory.id, groundings)
        async with store.connection(caller) as tx:
            rewritten = await written(tx, write(value="v2", source=MemorySource.MEMORIZE))
            held = await tx.memories.write(write(value="by hand"))
            pinned = await tx.memories.pin(memory.id, True)
            unchanged = await tx.memories.pin(memory.id, True)
            updated = await tx.memories.update(
                memory.id, MemoryPatch(importance=5), MemoryEventType.UPDATED
            )
            got = await tx.memories.get(memory.id)
            locked = await tx.memories.get(memory.id, lock=True)
            listed = await tx.memories.list_page(AGENT, after=None, limit=10)
            found = await tx.memories.find_by_key(AGENT, "k")
            recent = await tx.memories.recent([AGENT], 10)
            stale = await tx.memories.delete(memory.id, version=1)
            gone = await tx.memories.delete(memory.id)
        assert memory.groundings == ()
        # A write returns the row it wrote or found, without reading its groundings ...
        assert rewritten.groundings == ()
        assert isinstance(held, KeyHeld)
        assert held.current == rewritten
        # ... and leaves them as they are.
        for changed in (pinned, unchanged, updated, got, locked):
            assert changed is not None
            assert changed.groundings == groundings
        assert pinned == unchanged
        assert got == locked == updated
        assert listed == [updated]
        assert found == bare(updated)
        assert recent == [bare(updated)]
        assert stale == (bare(updated), False)
        assert gone == (bare(updated), True)

    scenario(body)


def test_owners_are_listed_by_id_with_their_current_memories(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            await written(tx, write("a"))
            await written(tx, write("b"))
            replaced = await written(tx, write("c", owner=LEAD))
            newer = await written(tx, write("d", owner=LEAD))
            await tx.memories.supersede(replaced.id, newer)
            await written(tx, write("w", owner=WORKSPACE))
            await tx.agents.put(AgentSettings("reviewer", memory_enabled=True))
            agents = await tx.memories.owners(Scope.AGENT, after="", limit=10)
            rest = await tx.memories.owners(Scope.AGENT, after="lead", limit=10)
            first = await tx.memories.owners(Scope.AGENT, after="", limit=1)
            workspaces = await tx.memories.owners(Scope.WORKSPACE, after="", limit=10)
        assert [(o.owner, o.memory_count, o.memory_enabled) for o in agents] == [
            (AGENT, 2, False),
            (LEAD, 1, False),
            (Owner(Scope.AGENT, "reviewer"), 0, True),
        ]
        assert all(o.last_activity_time is not None for o in agents)
        assert [o.owner.id for o in rest] == ["reviewer"]
        assert [o.owner.id for o in first] == ["coder"]
        assert [(o.owner, o.memory_count) for o in workspaces] == [(WORKSPACE, 1)]

    scenario(body)


def test_learnings_are_director_memories_of_the_agents_under_the_learning_prefix(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    coder = Owner(Scope.AGENT, "coder")
    director = MemorySource.DIRECTOR

    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            first = await tx.memories.create(
                write(f"{LEARNING_KEY_PREFIX}1", "first", owner=LEAD, source=director)
            )
            second = await tx.memories.create(
                write(f"{LEARNING_KEY_PREFIX}2", "second", owner=coder, source=director)
            )
            for left_out in (
                write("director:note", owner=LEAD, source=director),
                write(LEARNING_KEY_PREFIX.rstrip(":"), owner=LEAD, source=director),
                write(f"x{LEARNING_KEY_PREFIX}3", owner=LEAD, source=director),
                write(LEARNING_KEY_PREFIX.upper() + "4", owner=LEAD, source=director),
                write(f"{LEARNING_KEY_PREFIX}5", owner=LEAD, source=MemorySource.MANUAL),
                write(f"{LEARNING_KEY_PREFIX}6", owner=LEAD, source=MemorySource.AUTO),
                write(
                    f"{LEARNING_KEY_PREFIX}7", owner=Owner(Scope.WORKSPACE, "lead"), source=director
                ),
                write(
                    f"{LEARNING_KEY_PREFIX}8", owner=Owner(Scope.AGENT, "other"), source=director
                ),
            ):
                assert await tx.memories.create(left_out) is not None
            assert first is not None
            await tx.memories.replace_groundings(first.id, [Grounding(quote="ask first")])
            both = await tx.memories.learnings(["lead", "coder"], 10)
            newest = await tx.memories.learnings(["coder", "lead"], 1)
            lead_only = await tx.memories.learnings(["lead"], 10)
            nobody = await tx.memories.learnings([], 10)
        assert second is not None
        assert both == [second, first]
        assert newest == [second]
        assert lead_only == [first]
        assert nobody == []

    scenario(body)


def test_rows_created_in_one_transaction_share_its_start_and_changes_take_the_clock(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    """Rows created take ``now()``, when their transaction began; a change takes the
    clock at that moment, and its audit event the instant the row says it was made.
    Rows created together tie on time, and only the tie-break of the order (the id of a
    workspace listing, the key of learnings) says which comes first."""

    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            created = [await written(tx, write(key, owner=WORKSPACE)) for key in ("x", "y", "z")]
            learned = [
                await tx.memories.create(
                    write(f"{LEARNING_KEY_PREFIX}{n}", owner=LEAD, source=MemorySource.DIRECTOR)
                )
                for n in ("a", "c", "b")
            ]
            listed = await tx.memories.list_page(WORKSPACE, after=None, limit=10)
            tied = await tx.memories.recent([WORKSPACE], 10)
            changed = await written(tx, write("y", "changed", owner=WORKSPACE))
            recent = await tx.memories.recent([WORKSPACE], 10)
            learnings = await tx.memories.learnings(["lead"], 10)
            events = await tx.events.list_page(changed.id, after=None, limit=10)
        async with store.connection(caller) as tx:
            later = await written(tx, write("w", owner=WORKSPACE))
        began = created[0].created_at
        assert {m.created_at for m in created} == {began}
        assert {m.updated_at for m in created} == {began}
        assert {m.created_at for m in learned if m is not None} == {began}
        assert listed == sorted(created, key=lambda m: m.id)
        assert sorted(tied, key=lambda m: m.id) == sorted(created, key=lambda m: m.id)
        assert changed.created_at == began
        assert changed.updated_at > began
        assert recent[0] == changed
        assert {m.id for m in recent[1:]} == {created[0].id, created[2].id}
        assert [m.key[len(LEARNING_KEY_PREFIX) :] for m in learnings] == ["c", "b", "a"]
        assert [e.occurred_at for e in events] == [began, changed.updated_at]
        assert later.created_at > changed.updated_at

    scenario(body)


def test_a_conversation_is_kept_once_per_provider_and_id_and_replaced_in_place(
    scenario: Callable[[Body], None],
    caller: Principal,
    stored_conversations: StoredConversations,
) -> None:
    intruder = Principal(f"other-{uuid.uuid4().hex[:8]}", "mallory")
    asked = ConversationMessage(
        "user", "where from?", "m1", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    )
    first = Conversation("claude-code", "conv-1", (asked,))
    second = Conversation("claude-code", "conv-1", (asked, ConversationMessage("assistant", "x")))
    other = Conversation("codex", "conv-1", ())

    async def refused_memorize(store: Store) -> None:
        async with store.transaction(caller) as tx:
            await tx.conversations.put(Conversation("claude-code", "conv-2", (asked,)))
            await tx.conversations.put(first)
            raise RuntimeError("the memory that goes with it was refused")

    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            await tx.conversations.put(first)
            await tx.conversations.put(other)
        assert stored_conversations(store, caller.tenant_id) == {
            ("claude-code", "conv-1"): first,
            ("codex", "conv-1"): other,
        }
        async with store.connection(caller) as tx:
            await tx.conversations.put(second)
        kept = {("claude-code", "conv-1"): second, ("codex", "conv-1"): other}
        assert stored_conversations(store, caller.tenant_id) == kept
        with pytest.raises(RuntimeError):
            await refused_memorize(store)
        assert stored_conversations(store, caller.tenant_id) == kept
        theirs = Conversation("claude-code", "conv-1", ())
        async with store.connection(intruder) as tx:
            await tx.conversations.put(theirs)
        assert stored_conversations(store, intruder.tenant_id) == {
            ("claude-code", "conv-1"): theirs
        }
        assert stored_conversations(store, caller.tenant_id) == kept

    scenario(body)


def test_a_snapshot_never_loses_a_message_another_memory_is_grounded_on(
    scenario: Callable[[Body], None],
    caller: Principal,
    stored_conversations: StoredConversations,
) -> None:
    said = tuple(ConversationMessage("user", f"message {i}") for i in range(5))
    evidence = Evidence(conversation_provider="p", conversation_id="c")

    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            first = await written(tx, write("first", evidence=evidence))
            await tx.memories.replace_groundings(first.id, [Grounding(message_position=3)])
            await tx.conversations.put(Conversation("p", "c", said), writer=first.id)
        async with store.transaction(caller) as tx:
            second = await written(tx, write("second", evidence=evidence))
            await tx.conversations.put(Conversation("p", "c", said[:2]), writer=second.id)
        # The messages up to the grounded one stay; the one after it goes.
        assert stored_conversations(store, caller.tenant_id) == {
            ("p", "c"): Conversation("p", "c", said[:4])
        }
        rewritten = (*said[:3], ConversationMessage("user", "something else"))
        with pytest.raises(FailedPrecondition) as refused:
            async with store.transaction(caller) as tx:
                await tx.conversations.put(Conversation("p", "c", rewritten), writer=second.id)
        assert refused.value.reason == "GROUNDED_MESSAGE_CHANGED"
        assert refused.value.metadata["message_position"] == "3"
        # The memory grounded there may change its own snapshot as it likes.
        async with store.transaction(caller) as tx:
            await tx.conversations.put(Conversation("p", "c", rewritten), writer=first.id)
        assert stored_conversations(store, caller.tenant_id) == {
            ("p", "c"): Conversation("p", "c", rewritten)
        }

    scenario(body)


def test_a_snapshot_never_loses_a_raw_event_another_memory_is_grounded_on(
    scenario: Callable[[Body], None],
    caller: Principal,
    stored_conversations: StoredConversations,
) -> None:
    said = (ConversationMessage("user", "hello"),)
    events = tuple(f'{{"n": {i}}}' for i in range(5))
    evidence = Evidence(conversation_provider="p", conversation_id="raw")

    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            first = await written(tx, write("first", evidence=evidence))
            # A raw event only: message 0 is not held by it.
            await tx.memories.replace_groundings(first.id, [Grounding(raw_event_index=2)])
            await tx.conversations.put(Conversation("p", "raw", said, events), writer=first.id)
        async with store.transaction(caller) as tx:
            second = await written(tx, write("second", evidence=evidence))
            stored = await tx.conversations.put(
                Conversation("p", "raw", (), events[:1]), writer=second.id
            )
        # The raw events up to the grounded one stay; the messages, ungrounded, go.
        assert stored == Conversation("p", "raw", (), events[:3])
        assert stored_conversations(store, caller.tenant_id) == {("p", "raw"): stored}
        changed = (*events[:2], '{"n": "changed"}')
        with pytest.raises(FailedPrecondition) as refused:
            async with store.transaction(caller) as tx:
                await tx.conversations.put(Conversation("p", "raw", (), changed), writer=second.id)
        assert refused.value.reason == "GROUNDED_RAW_EVENT_CHANGED"
        assert refused.value.metadata["raw_event_index"] == "2"
        assert stored_conversations(store, caller.tenant_id) == {("p", "raw"): stored}

    scenario(body)


# --- a tenant's export records ---------------------------------------------------------

THEN = datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=UTC)


def exported_memory(**fields: Any) -> Memory:
    """A memory as an export holds it: every field set, at version 1."""
    return dataclasses.replace(
        Memory(
            id=uuid.uuid4(),
            owner=AGENT,
            key="moved",
            value="Ana moved to Porto.",
            pinned=True,
            importance=30,
            source=MemorySource.MEMORIZE,
            created_at=THEN,
            updated_at=THEN + timedelta(hours=1),
            version=1,
            tags=("home",),
            confidence=0.8,
            metadata={"origin": "chat", "turn": 3.0},
            groundings=(
                Grounding(1, "m2", 0, 5, "Porto", 0, 1, 4, {"by": "hand"}),
                Grounding(raw_event_index=0),
            ),
            conversation_provider="anthropic",
            conversation_id="conv-1",
            expire_time=datetime.now(UTC) + timedelta(days=30),
            superseded_by=uuid.uuid4(),
        ),
        **fields,
    )


def export_records() -> tuple[
    CardType, StoredConversation, MemoryRecord, UserBlock, DecisionRecord
]:
    card_type = CardType("trade", ReExaminable.ALWAYS, ("HOLD",), ("WAIT",), THEN, THEN)
    said = (
        ConversationMessage("user", "I moved", "m1", THEN),
        ConversationMessage("user", "to Porto", "m2", None),
    )
    conversation = StoredConversation(
        Conversation("anthropic", "conv-1", said, ('{"type": "text"}',)), 2, 1, THEN, THEN
    )
    block = UserBlock("ana", BlockKey(BlockLabel.ARCHIVAL, BlockScope.AGENT, "coder"), "a\nb")
    decision_id = uuid.uuid4()
    decision = Decision(
        decision_id,
        "run-1",
        "coder",
        "trade",
        "WAIT",
        "range unresolved",
        {"symbol": "ACME"},
        ResolutionStatus.RESOLVED,
        THEN,
        THEN + timedelta(days=1),
        latest_conviction_score=60,
        reexamination_count=1,
    )
    again = Reexamination(uuid.uuid4(), decision_id, "run-2", 60, "Still.", "HOLD", THEN)
    memory = MemoryRecord(exported_memory(), screened=True)
    return card_type, conversation, memory, block, DecisionRecord(decision, (again,))


def test_transfer_writes_each_record_once_with_its_ids_and_times_and_reads_it_back(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    card_type, conversation, memory, block, decision = export_records()

    async def put_all(tx: Tx) -> list[bool]:
        return [
            await tx.transfer.put_card_type(card_type),
            await tx.transfer.put_conversation(conversation),
            await tx.transfer.put_memory(memory),
            await tx.transfer.put_block(block, keep=5),
            await tx.transfer.put_decision(decision),
        ]

    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            assert await put_all(tx) == [True] * 5
        async with store.transaction(caller) as tx:
            assert await put_all(tx) == [False] * 5
            assert await tx.transfer.card_types() == [card_type]
            assert await tx.transfer.conversations() == [conversation]
            assert await tx.transfer.memories() == [memory]
            assert await tx.transfer.blocks() == [block]
            assert await tx.transfer.decisions() == [decision]
            (event,) = await tx.events.list_page(memory.memory.id, after=None, limit=10)
        assert (event.type, event.actor_user_id) == (MemoryEventType.CREATED, caller.user_id)
        assert event.new is not None
        assert same_memory(event.new, memory.memory)

    scenario(body)


def test_a_memory_or_decision_whose_other_key_is_taken_is_left_out(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    card_type, _, memory, _, decision = export_records()
    same_key = MemoryRecord(
        exported_memory(conversation_provider=None, conversation_id=None, groundings=())
    )
    same_run = dataclasses.replace(
        decision, decision=dataclasses.replace(decision.decision, id=uuid.uuid4())
    )

    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            await tx.transfer.put_card_type(card_type)
            assert await tx.transfer.put_memory(memory)
            assert await tx.transfer.put_decision(decision)
            assert not await tx.transfer.put_memory(same_key)
            assert not await tx.transfer.put_decision(same_run)
            assert await tx.transfer.memories() == [memory]
            assert await tx.transfer.decisions() == [decision]

    scenario(body)


def test_a_text_an_import_says_the_screens_read_stays_read_until_it_changes(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    read = MemoryRecord(exported_memory(superseded_by=None), screened=True)
    unread = MemoryRecord(exported_memory(id=uuid.uuid4(), key="unread", superseded_by=None))

    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            assert await tx.transfer.put_memory(read)
            assert await tx.transfer.put_memory(unread)
            assert [r.screened for r in await tx.transfer.memories()] == [True, False]
            # Held, it needs judging whatever was read; let go, the text is read again.
            await tx.memories.update(
                read.memory.id, MemoryPatch(held_for_review=True), MemoryEventType.UPDATED
            )
            assert [r.screened for r in await tx.transfer.memories()] == [False, False]
            await tx.memories.update(
                read.memory.id, MemoryPatch(held_for_review=False), MemoryEventType.UPDATED
            )
            assert [r.screened for r in await tx.transfer.memories()] == [True, False]
            await tx.memories.update(
                read.memory.id, MemoryPatch(value="Ana moved to Braga."), MemoryEventType.UPDATED
            )
            assert [r.screened for r in await tx.transfer.memories()] == [False, False]

    scenario(body)


def test_a_decision_of_a_card_type_not_registered_is_refused(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    *_, decision = export_records()

    async def body(store: Store) -> None:
        with pytest.raises(FailedPrecondition) as refused:
            async with store.transaction(caller) as tx:
                await tx.transfer.put_decision(decision)
        assert refused.value.reason == "CARD_TYPE_NOT_REGISTERED"
        async with store.transaction(caller) as tx:
            assert await tx.transfer.decisions() == []

    scenario(body)


def test_an_export_reads_the_callers_tenant_only_and_no_expired_memory(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    other = Principal(f"tenant-{uuid.uuid4().hex[:10]}", "bo")
    card_type, conversation, memory, block, decision = export_records()
    # Past for the database's clock and the in-memory store's.
    expired = MemoryRecord(
        exported_memory(key="gone", expire_time=datetime(2025, 12, 1, tzinfo=UTC))
    )

    async def body(store: Store) -> None:
        async with store.transaction(other) as tx:
            await tx.transfer.put_card_type(card_type)
            await tx.transfer.put_conversation(conversation)
            await tx.transfer.put_memory(memory)
            await tx.transfer.put_block(block, keep=5)
            await tx.transfer.put_decision(decision)
        async with store.transaction(caller) as tx:
            assert await tx.transfer.put_memory(expired)
            assert await tx.transfer.card_types() == []
            assert await tx.transfer.conversations() == []
            assert await tx.transfer.memories() == []
            assert await tx.transfer.blocks() == []
            assert await tx.transfer.decisions() == []

    scenario(body)
