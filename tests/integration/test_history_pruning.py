"""The history behind as-of reads is kept for a while, then pruned: the sweeper deletes
memory events older than the history kept, but each memory keeps its state at that
horizon; a block write drops versions past the newest few only once they are older than
the history kept, keeping the block's state at the horizon. An as-of read inside the
history kept still reads what it did before pruning."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta

import psycopg
import pytest

from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockScope
from agent_memory.domain.events import MemoryEventType
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import MemoryPatch, MemorySource, MemoryWrite, Owner, Scope
from agent_memory.store import migrate
from agent_memory.store.blocks import PRUNED_PER_WRITE
from agent_memory.store.database import Database
from tests.integration.conftest import on_database

KEPT = timedelta(days=30)


def _age(url: str, sql: str, params: dict[str, object]) -> None:
    """Move recorded history back in time, as if written long ago."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql, params)  # type: ignore[arg-type]


@pytest.fixture
def history_url(create_database: Callable[[], str]) -> str:
    """A database of the test's own: the sweep's progress is the database's, and these
    tests move history back in time, which real writes never do."""
    url = create_database()
    migrate.upgrade(url)
    return url


async def prune(db: Database, limit: int = 100) -> int:
    async with db.admin() as admin:
        return await admin.expiry.prune_history(KEPT, limit)


def test_old_events_are_pruned_but_each_memory_keeps_its_state_at_the_horizon(
    history_url: str,
) -> None:
    store_url = history_url
    caller = Principal(f"tenant-{uuid.uuid4().hex[:10]}", "alice")
    owner = Owner(Scope.AGENT, "planner")

    async def write(db: Database) -> uuid.UUID:
        async with db.transaction(caller) as tx:
            written = await tx.memories.write(
                MemoryWrite(owner, "editor", MemorySource.MANUAL, "vim")
            )
            assert written is not None
            memory = written.memory
            for value in ("emacs", "helix"):
                await tx.memories.update(
                    memory.id, MemoryPatch(value=value), MemoryEventType.UPDATED
                )
        return memory.id

    memory_id = on_database(store_url, write)
    # The first two changes happened 40 and 35 days ago; the last one now.
    _age(
        store_url,
        """UPDATE memory_events SET occurred_at = occurred_at - CASE
               WHEN new_memory ->> 'value' = 'vim' THEN interval '40 days'
               ELSE interval '35 days' END
           WHERE tenant_id = %(t)s AND new_memory ->> 'value' IN ('vim', 'emacs')""",
        {"t": caller.tenant_id},
    )

    assert on_database(store_url, prune) == 2  # vim and emacs crossed the horizon
    with psycopg.connect(store_url) as conn:
        values = [
            r[0]
            for r in conn.execute(
                "SELECT new_memory ->> 'value' FROM memory_events"
                " WHERE tenant_id = %s AND memory_id = %s ORDER BY occurred_at",
                (caller.tenant_id, memory_id),
            )
        ]
    # "vim" is gone; "emacs" stays as the state at the horizon, "helix" as today's.
    assert values == ["emacs", "helix"]

    async def read_back(db: Database) -> str | None:
        async with db.connection(caller) as tx:
            at = await tx.clock.now() - timedelta(days=20)
        async with db.reading(caller, as_of=at) as tx:
            memory = await tx.memories.get(memory_id)
        return memory.value if memory else None

    assert on_database(store_url, read_back) == "emacs"


_PLANNER = BlockKey(BlockLabel.CORE, BlockScope.AGENT, "planner")


def _write_block(url: str, caller: Principal, times: int) -> None:
    """Write the caller's planner block ``times`` times, keeping the newest two."""

    async def write(db: Database) -> None:
        for i in range(times):
            async with db.transaction(caller) as tx:
                current = await tx.blocks.get(_PLANNER)
                expected = current.updated_at if current else None
                await tx.blocks.write(_PLANNER, f"v{i}", expected=expected, keep=2)

    on_database(url, write)


def _versions(url: str, caller: Principal) -> list[int]:
    with psycopg.connect(url) as conn:
        return [
            r[0]
            for r in conn.execute(
                "SELECT version FROM block_versions WHERE tenant_id = %s ORDER BY version",
                (caller.tenant_id,),
            )
        ]


def _age_versions(url: str, caller: Principal, through: int) -> None:
    _age(
        url,
        "UPDATE block_versions SET written_at = written_at - interval '100 days'"
        " WHERE tenant_id = %(t)s AND version <= %(v)s",
        {"t": caller.tenant_id, "v": through},
    )


def test_a_block_keeps_its_versions_while_the_history_lasts(store_url: str) -> None:
    caller = Principal(f"tenant-{uuid.uuid4().hex[:10]}", "alice")
    _write_block(store_url, caller, 4)
    # Past the two kept by count, the younger versions stay: as-of reads need them.
    assert _versions(store_url, caller) == [1, 2, 3, 4]
    # Versions 1 to 3 grow old; the next write drops 1 and 2, and keeps 3, the state
    # at the horizon, and the newest two.
    _age_versions(store_url, caller, 3)
    _write_block(store_url, caller, 1)
    assert _versions(store_url, caller) == [3, 4, 5]


def test_a_write_prunes_a_bounded_number_of_old_versions_and_the_rest_drain_later(
    store_url: str,
) -> None:
    """A write reads no more than a few of its block's oldest versions, however long
    the history it keeps: a backlog of aged versions goes a few at each write."""
    caller = Principal(f"tenant-{uuid.uuid4().hex[:10]}", "alice")
    _write_block(store_url, caller, 30)
    assert _versions(store_url, caller) == list(range(1, 31))
    _age_versions(store_url, caller, 28)
    _write_block(store_url, caller, 1)
    # The oldest PRUNED_PER_WRITE went; the rest of the backlog waits for later writes.
    assert _versions(store_url, caller) == list(range(PRUNED_PER_WRITE + 1, 32))
    _write_block(store_url, caller, 4)
    # Drained down to version 28, the state at the horizon; the younger ones stay.
    assert _versions(store_url, caller) == list(range(28, 36))


def test_each_event_is_taken_once_in_the_order_it_aged_whatever_the_tenant(
    history_url: str,
) -> None:
    """Events that stay as their memory's state at the horizon are not read again, so
    another tenant's history behind them is pruned in its turn; a deleted memory's
    events all go."""
    first = Principal(f"tenant-{uuid.uuid4().hex[:10]}", "alice")
    second = Principal(f"tenant-{uuid.uuid4().hex[:10]}", "bo")
    owner = Owner(Scope.AGENT, "planner")

    async def write(db: Database) -> tuple[uuid.UUID, uuid.UUID]:
        async with db.transaction(first) as tx:
            for n in range(3):
                await tx.memories.write(MemoryWrite(owner, f"k{n}", MemorySource.MANUAL, "v"))
        async with db.transaction(second) as tx:
            written = await tx.memories.write(
                MemoryWrite(owner, "editor", MemorySource.MANUAL, "vim")
            )
            gone = await tx.memories.write(MemoryWrite(owner, "desk", MemorySource.MANUAL, "C4"))
            assert written is not None
            assert gone is not None
            await tx.memories.update(
                written.memory.id, MemoryPatch(value="helix"), MemoryEventType.UPDATED
            )
            await tx.memories.delete(gone.memory.id)
        return written.memory.id, gone.memory.id

    kept_id, gone_id = on_database(history_url, write)
    # The first tenant's three creations aged first; then the second tenant's history.
    _age(
        history_url,
        """UPDATE memory_events SET occurred_at = occurred_at - CASE
               WHEN tenant_id = %(first)s THEN interval '50 days' ELSE interval '45 days' END""",
        {"first": first.tenant_id},
    )

    taken = []
    for _ in range(10):
        n = on_database(history_url, lambda db: prune(db, 2))
        taken.append(n)
        if n < 2:
            break
    assert sum(taken) == 3 + 4  # every aged event, each once
    assert on_database(history_url, prune) == 0  # nothing is taken twice

    def values(tenant: str) -> list[tuple[object, ...]]:
        with psycopg.connect(history_url) as conn:
            return conn.execute(
                "SELECT memory_id, new_memory ->> 'value' FROM memory_events"
                " WHERE tenant_id = %s ORDER BY occurred_at",
                (tenant,),
            ).fetchall()

    assert len(values(first.tenant_id)) == 3  # each the state at the horizon
    assert values(second.tenant_id) == [(kept_id, "helix")]
    assert gone_id not in {m for m, _ in values(second.tenant_id)}
