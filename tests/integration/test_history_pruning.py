"""The history behind as-of reads is kept for a while, then pruned: the sweeper deletes
memory events older than the history kept, but each memory keeps its state at that
horizon; a block write drops versions past the newest few only once they are older than
the history kept, keeping the block's state at the horizon. An as-of read inside the
history kept still reads what it did before pruning."""

from __future__ import annotations

import uuid
from datetime import timedelta

import psycopg

from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockScope
from agent_memory.domain.events import MemoryEventType
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import MemoryPatch, MemorySource, MemoryWrite, Owner, Scope
from agent_memory.store.database import Database
from tests.integration.conftest import on_database

KEPT = timedelta(days=30)


def _age(url: str, sql: str, params: dict[str, object]) -> None:
    """Move recorded history back in time, as if written long ago."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql, params)  # type: ignore[arg-type]


def test_old_events_are_pruned_but_each_memory_keeps_its_state_at_the_horizon(
    store_url: str,
) -> None:
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

    async def prune(db: Database) -> int:
        async with db.admin() as admin:
            return await admin.expiry.prune_history(KEPT, 100)

    assert on_database(store_url, prune) >= 1
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


def test_a_block_keeps_its_versions_while_the_history_lasts(store_url: str) -> None:
    caller = Principal(f"tenant-{uuid.uuid4().hex[:10]}", "alice")
    key = BlockKey(BlockLabel.CORE, BlockScope.AGENT, "planner")

    async def write(db: Database, n: int) -> None:
        for i in range(n):
            async with db.transaction(caller) as tx:
                current = await tx.blocks.get(key)
                await tx.blocks.write(
                    key, f"v{i}", expected=current.updated_at if current else None, keep=2
                )

    on_database(store_url, lambda db: write(db, 4))

    def versions() -> list[int]:
        with psycopg.connect(store_url) as conn:
            return [
                r[0]
                for r in conn.execute(
                    "SELECT version FROM block_versions WHERE tenant_id = %s ORDER BY version",
                    (caller.tenant_id,),
                )
            ]

    # Past the two kept by count, the younger versions stay: as-of reads need them.
    assert versions() == [1, 2, 3, 4]
    # Versions 1 to 3 grow old; the next write drops 1 and 2, and keeps 3, the state
    # at the horizon, and the newest two.
    _age(
        store_url,
        "UPDATE block_versions SET written_at = written_at - interval '100 days'"
        " WHERE tenant_id = %(t)s AND version <= 3",
        {"t": caller.tenant_id},
    )
    on_database(store_url, lambda db: write(db, 1))
    assert versions() == [3, 4, 5]
