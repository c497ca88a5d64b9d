"""Expiry over the in-memory store: the range checks, and what an expired memory is to
every use case (gone for reads, listed only when asked, its key free for a new
memory or a rename), with the clock moved on instead of waited for."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest

from agent_memory.domain.errors import InvalidArgument, NotFound
from agent_memory.domain.events import MemoryEventType
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import (
    TTL_MAX,
    MemoryPatch,
    MemorySource,
    MemoryWrite,
    Owner,
    Scope,
    checked_expiration,
)
from agent_memory.service.memories import Memories
from agent_memory.store.memories import EXPIRY_ACTOR
from tests.fakes import FakeStore

T = TypeVar("T")
ALICE = Principal("acme", "alice")
AGENT = Owner(Scope.AGENT, "coder")
NOW = datetime(2026, 6, 1, tzinfo=UTC)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.mark.parametrize(
    ("expiration", "field"),
    [
        (timedelta(0), "ttl"),
        (timedelta(microseconds=-1), "ttl"),
        (TTL_MAX + timedelta(microseconds=1), "ttl"),
        (NOW, "expire_time"),
        (NOW - timedelta(days=1), "expire_time"),
        (NOW + TTL_MAX + timedelta(seconds=1), "expire_time"),
    ],
)
def test_an_expiry_out_of_range_names_its_field(expiration: Any, field: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        checked_expiration(expiration, NOW)
    assert [v.field for v in refused.value.violations] == [field]


@pytest.mark.parametrize(
    "expiration", [None, timedelta(microseconds=1), TTL_MAX, NOW + timedelta(seconds=1)]
)
def test_an_expiry_in_range_is_kept_as_given(expiration: Any) -> None:
    assert checked_expiration(expiration, NOW) == expiration


def test_an_expired_memory_is_gone_for_reads_and_its_key_is_free() -> None:
    store = FakeStore()
    memories = Memories(store)
    brief, _ = run(
        memories.upsert(
            ALICE, MemoryWrite(AGENT, "room", MemorySource.AUTO, "4", expiration=timedelta(hours=1))
        )
    )
    lasting, _ = run(memories.upsert(ALICE, MemoryWrite(AGENT, "desk", MemorySource.MANUAL, "B12")))
    assert brief.expire_time is not None
    assert run(memories.get(ALICE, brief.id)) == brief

    store.clock.advance(timedelta(hours=2))
    with pytest.raises(NotFound):
        run(memories.get(ALICE, brief.id))
    with pytest.raises(NotFound):
        run(memories.pin(ALICE, brief.id, True))
    listed = run(memories.list(ALICE, owner=AGENT, size=10, token=""))
    assert [m.key for m in listed.items] == ["desk"]
    shown = run(memories.list(ALICE, owner=AGENT, size=10, token="", show_expired=True))
    assert sorted(m.key for m in shown.items) == ["desk", "room"]

    # A rename onto the expired key takes it; the expired memory goes, audited as such.
    renamed = run(memories.update(ALICE, lasting.id, MemoryPatch(key="room")))
    assert renamed.key == "room"
    gone = [e for t, e in store.state.events if e.memory_id == brief.id]
    assert [(e.type, e.actor_user_id) for e in gone] == [
        (MemoryEventType.CREATED, "alice"),
        (MemoryEventType.DELETED, EXPIRY_ACTOR),
    ]


def test_an_upsert_of_an_expired_key_creates_a_new_memory() -> None:
    store = FakeStore()
    memories = Memories(store)
    old, _ = run(
        memories.upsert(
            ALICE,
            MemoryWrite(AGENT, "room", MemorySource.MANUAL, "4", expiration=timedelta(hours=1)),
        )
    )
    kept, created = run(
        memories.upsert(ALICE, MemoryWrite(AGENT, "room", MemorySource.MANUAL, "5"))
    )
    assert (kept.id, created, kept.expire_time) == (old.id, False, old.expire_time)

    store.clock.advance(timedelta(hours=2))
    new, created = run(memories.upsert(ALICE, MemoryWrite(AGENT, "room", MemorySource.MANUAL, "6")))
    assert created
    assert new.id != old.id
    assert new.expire_time is None


def test_an_update_sets_or_clears_the_expiry_even_of_a_read_only_memory() -> None:
    store = FakeStore()
    memories = Memories(store)
    auto, _ = run(memories.upsert(ALICE, MemoryWrite(AGENT, "seen", MemorySource.AUTO, "tea")))
    when = datetime.now(UTC) + timedelta(days=1)
    dated = run(memories.update(ALICE, auto.id, MemoryPatch(expire_time=when)))
    assert dated.expire_time == when
    event = [e for _, e in store.state.events if e.memory_id == auto.id][-1]
    assert event.type is MemoryEventType.UPDATED
    cleared = run(memories.update(ALICE, auto.id, MemoryPatch(clear_expiry=True)))
    assert cleared.expire_time is None
    # Clearing what is not set changes nothing: no new version.
    assert run(memories.update(ALICE, auto.id, MemoryPatch(clear_expiry=True))) == cleared
    with pytest.raises(InvalidArgument) as refused:
        run(memories.update(ALICE, auto.id, MemoryPatch(expire_time=NOW - timedelta(days=1))))
    assert [v.field for v in refused.value.violations] == ["memory.expire_time"]


def test_an_instant_the_database_clock_has_passed_is_refused_though_the_replicas_has_not() -> None:
    store = FakeStore()
    memories = Memories(store)
    # The database's clock runs an hour ahead of this replica's.
    store.clock.advance(datetime.now(UTC) - store.clock() + timedelta(hours=1))
    soon = datetime.now(UTC) + timedelta(minutes=30)
    with pytest.raises(InvalidArgument) as refused:
        run(
            memories.upsert(
                ALICE, MemoryWrite(AGENT, "room", MemorySource.MANUAL, "4", expiration=soon)
            )
        )
    assert [v.field for v in refused.value.violations] == ["expire_time"]
    assert run(memories.list(ALICE, owner=AGENT, size=10, token="", show_expired=True)).items == []
    later = datetime.now(UTC) + timedelta(hours=2)
    kept, _ = run(
        memories.upsert(
            ALICE, MemoryWrite(AGENT, "room", MemorySource.MANUAL, "4", expiration=later)
        )
    )
    assert kept.expire_time == later
