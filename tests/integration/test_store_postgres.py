"""The PostgreSQL store's own promises: compare-and-set blocks in one statement, the
one-statement render read and ranking, concurrent writers, and what runs without a
transaction."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TypeVar

import psycopg
import psycopg.sql
import pytest

from agent_memory.domain.agents import AgentSettings
from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockScope, ScopeFilter
from agent_memory.domain.decisions import CardType, NewDecision, ReExaminable
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import MemorySource, MemoryWrite, Owner, Scope, Written
from agent_memory.domain.recall import PromptRead, RankQuery
from agent_memory.service.memories import write_by_key
from agent_memory.store import migrate
from agent_memory.store.database import Database

T = TypeVar("T")
CORE = BlockKey(BlockLabel.CORE, BlockScope.USER)
ARCHIVAL = BlockKey(BlockLabel.ARCHIVAL, BlockScope.AGENT, "coder")


@pytest.fixture(scope="module")
def store_url(create_database: Callable[[], str]) -> str:
    url = create_database()
    migrate.upgrade(url)
    return url


@pytest.fixture
def caller() -> Principal:
    return Principal(f"tenant-{uuid.uuid4().hex[:10]}", "alice")


def on_database(url: str, body: Callable[[Database], Awaitable[T]], pool_size: int = 4) -> T:
    async def go() -> T:
        db = Database(url, pool_size=pool_size)
        try:
            return await body(db)
        finally:
            await db.close()

    return asyncio.run(go())


def rows(url: str, sql: str, *params: object) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return list(conn.execute(sql, params).fetchall())


# --- blocks -------------------------------------------------------------------------------


def test_a_block_is_created_once_then_replaced_only_at_the_time_it_was_read(
    store_url: str, caller: Principal
) -> None:
    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            created = await tx.blocks.write(CORE, "- one", expected=None, keep=50)
            assert created.written is not None
            assert created.written.version == 1
            again = await tx.blocks.write(CORE, "- two", expected=None, keep=50)
            assert again.written is None
            assert again.current == created.written
            replaced = await tx.blocks.write(
                CORE, "- three", expected=created.written.updated_at, keep=50
            )
            assert replaced.written is not None
            assert replaced.written.version == 2
            assert replaced.written.updated_at > created.written.updated_at
            stale = await tx.blocks.write(
                CORE, "- four", expected=created.written.updated_at, keep=50
            )
            assert stale.written is None
            assert stale.current == replaced.written
            versions = await tx.blocks.versions(CORE, before=None, limit=10)
        assert [v.content for v in versions or []] == ["- three", "- one"]

    on_database(store_url, body)


def test_of_concurrent_writers_holding_the_same_time_exactly_one_wins(
    store_url: str, caller: Principal
) -> None:
    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            first = await tx.blocks.write(CORE, "- start", expected=None, keep=50)
        assert first.written is not None
        expected = first.written.updated_at

        async def writer(n: int) -> bool:
            async with db.connection(caller) as tx:
                found = await tx.blocks.write(CORE, f"- writer {n}", expected=expected, keep=50)
            if found.written is None:
                assert found.current is not None
                assert found.current.updated_at != expected
            return found.written is not None

        won = await asyncio.gather(*(writer(n) for n in range(12)))
        assert sum(won) == 1

    on_database(store_url, body, pool_size=12)


def test_only_the_newest_versions_are_kept(store_url: str, caller: Principal) -> None:
    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            found = await tx.blocks.write(CORE, "- v1", expected=None, keep=3)
            for n in range(2, 7):
                assert found.written is not None
                found = await tx.blocks.write(
                    CORE, f"- v{n}", expected=found.written.updated_at, keep=3
                )
            versions = await tx.blocks.versions(CORE, before=None, limit=10)
            older = await tx.blocks.versions(CORE, before=5, limit=10)
        assert [v.version for v in versions or []] == [6, 5, 4]
        assert [v.version for v in older or []] == [4]

    on_database(store_url, body)


def test_an_archival_write_keeps_its_lines_and_vocabulary_in_step(
    store_url: str, caller: Principal
) -> None:
    def stored_lines() -> list[tuple[object, ...]]:
        return rows(
            store_url,
            "SELECT line_number, content FROM archival_lines WHERE tenant_id = %s"
            " ORDER BY line_number",
            caller.tenant_id,
        )

    def vocabulary() -> set[str]:
        found = rows(
            store_url,
            "SELECT lexemes FROM archival_vocabulary WHERE tenant_id = %s",
            caller.tenant_id,
        )
        return set(found[0][0]) if found else set()  # type: ignore[call-overload]

    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            first = await tx.blocks.write(
                ARCHIVAL, "Harbor opens at nine\n\nThe pier is closed", expected=None, keep=50
            )
            assert first.written is not None
            assert stored_lines() == [(1, "Harbor opens at nine"), (3, "The pier is closed")]
            assert {"harbor", "pier", "close"} <= vocabulary()
            second = await tx.blocks.write(
                ARCHIVAL,
                "Harbor opens at nine\nFerries run hourly",
                expected=first.written.updated_at,
                keep=50,
            )
            assert second.written is not None
            assert stored_lines() == [(1, "Harbor opens at nine"), (2, "Ferries run hourly")]
            assert "ferri" in vocabulary()
            assert "pier" not in vocabulary()
            deleted, _ = await tx.blocks.delete(ARCHIVAL, expected=second.written.updated_at)
            assert deleted
        assert stored_lines() == []
        assert vocabulary() == set()

    on_database(store_url, body)


def test_a_stale_delete_leaves_the_block(store_url: str, caller: Principal) -> None:
    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            first = await tx.blocks.write(CORE, "- a", expected=None, keep=50)
            assert first.written is not None
            second = await tx.blocks.write(CORE, "- b", expected=first.written.updated_at, keep=50)
            deleted, current = await tx.blocks.delete(CORE, expected=first.written.updated_at)
            assert not deleted
            assert current == second.written
            assert await tx.blocks.delete(
                BlockKey(BlockLabel.CORE, BlockScope.AGENT, "x"), expected=None
            ) == (False, None)
            assert (
                await tx.blocks.versions(
                    BlockKey(BlockLabel.CORE, BlockScope.AGENT, "x"), before=None, limit=5
                )
                is None
            )
            listed = await tx.blocks.select(ScopeFilter.ALL, "")
        assert [b.key for b in listed] == [CORE]

    on_database(store_url, body)


# --- memories under concurrency -----------------------------------------------------------


def test_concurrent_writers_of_a_new_key_make_one_memory(store_url: str, caller: Principal) -> None:
    owner = Owner(Scope.AGENT, "racer")

    async def body(db: Database) -> list[Written]:
        async def writer(n: int) -> Written:
            async with db.connection(caller) as tx:
                return await write_by_key(
                    tx.memories, MemoryWrite(owner, "shared", MemorySource.MANUAL, f"value {n}")
                )

        return await asyncio.gather(*(writer(n) for n in range(10)))

    outcomes = on_database(store_url, body, pool_size=10)
    assert sum(w.created for w in outcomes) == 1
    assert len({w.memory.id for w in outcomes}) == 1
    ((count, versions),) = rows(
        store_url,
        "SELECT count(*), max(version) FROM memories WHERE tenant_id = %s",
        caller.tenant_id,
    )
    assert count == 1
    assert versions == 10
    events = rows(
        store_url, "SELECT count(*) FROM memory_events WHERE tenant_id = %s", caller.tenant_id
    )
    assert events == [(10,)]


# --- the render read and ranking ----------------------------------------------------------


def test_the_render_read_returns_every_part_at_once(store_url: str, caller: Principal) -> None:
    agent, workspace = Owner(Scope.AGENT, "coder"), Owner(Scope.WORKSPACE, "ws")

    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            await tx.agents.put(AgentSettings("coder", memory_enabled=True))
            await tx.blocks.write(CORE, "- user core", expected=None, keep=50)
            await tx.blocks.write(
                BlockKey(BlockLabel.CORE, BlockScope.AGENT, "coder"),
                "- agent core",
                expected=None,
                keep=50,
            )
            await tx.blocks.write(ARCHIVAL, "The harbor opens at nine", expected=None, keep=50)
            for n in range(3):
                await tx.memories.write(MemoryWrite(agent, f"a{n}", MemorySource.MANUAL, "x"))
                await tx.memories.write(
                    MemoryWrite(workspace, f"w{n}", MemorySource.MANUAL, "y", importance=n)
                )
            await tx.decisions.put_card_type(
                CardType("trade", ReExaminable.ALWAYS, decision_actions=("WAIT",))
            )
            await tx.decisions.insert(
                NewDecision("run-1", "coder", "trade", "WAIT", "range unresolved", {"a": 1})
            )
            state = await tx.prompts.read(
                PromptRead(
                    agent_id="coder",
                    workspace_id="ws",
                    user_core=True,
                    agent_core=True,
                    agent_cap=2,
                    workspace_cap=5,
                    decisions_limit=5,
                    archival=RankQuery(
                        agent_id="coder", query="when does the harbor open", limit=3
                    ),
                )
            )
        assert state.user_core == "- user core"
        assert state.agent_core == "- agent core"
        assert state.agent_memory is not None
        assert [m.key for m in state.agent_memory.rows] == ["a0", "a1"]
        assert state.agent_memory.left_out == 1
        assert state.workspace_memory is not None
        assert [m.key for m in state.workspace_memory.rows] == ["w2", "w1", "w0"]
        assert state.workspace_memory.left_out == 0
        assert [d.summary for d in state.decisions or []] == ["range unresolved"]
        assert state.now is not None
        assert [m.content for m in state.archival] == ["The harbor opens at nine"]

    on_database(store_url, body)


def test_the_render_read_leaves_out_what_was_not_asked_and_a_disabled_agents_memory(
    store_url: str, caller: Principal
) -> None:
    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            await tx.blocks.write(CORE, "- user core", expected=None, keep=50)
            await tx.memories.write(
                MemoryWrite(Owner(Scope.AGENT, "coder"), "a", MemorySource.MANUAL, "x")
            )
            state = await tx.prompts.read(
                PromptRead(
                    agent_id="coder",
                    workspace_id=None,
                    user_core=False,
                    agent_core=True,
                    agent_cap=5,
                    workspace_cap=5,
                )
            )
        assert state.user_core is None
        assert state.agent_core is None
        assert state.agent_memory is None  # memory is off for the agent
        assert state.workspace_memory is None
        assert state.decisions is None
        assert list(state.archival) == []

    on_database(store_url, body)


def test_single_statement_use_cases_run_without_begin_or_commit(
    store_url: str, caller: Principal
) -> None:
    """Every statement of a connection() unit of work is its own transaction: none is left
    open between them, so nothing is rolled back and prepared statements stay."""

    async def body(db: Database) -> list[str]:
        states = []
        async with db.connection(caller) as tx:
            await tx.memories.write(
                MemoryWrite(Owner(Scope.AGENT, "a"), "k", MemorySource.MANUAL, "v")
            )
            with psycopg.connect(store_url, autocommit=True) as watcher:
                states = [
                    r[0]
                    for r in watcher.execute(
                        "SELECT state FROM pg_stat_activity WHERE application_name = "
                        "'agent-memory' AND datname = current_database()"
                    ).fetchall()
                ]
        return states

    states = on_database(store_url, body)
    assert states
    assert "idle in transaction" not in states


def test_a_job_enqueued_twice_before_it_runs_is_one_job(store_url: str, caller: Principal) -> None:
    from agent_memory.domain.extraction import ExtractionRequest

    request = ExtractionRequest("a", None, "s1", None, "t" * 300)

    async def body(db: Database) -> tuple[uuid.UUID, uuid.UUID]:
        async with db.connection(caller) as tx:
            first = await tx.jobs.enqueue(request, settle=timedelta(hours=1))
            second = await tx.jobs.enqueue(request, settle=timedelta(hours=1))
        return first, second

    first, second = on_database(store_url, body)
    assert first == second


def test_neighbours_are_the_blocks_non_empty_lines_in_order_across_rewrites(
    store_url: str, caller: Principal
) -> None:
    query = RankQuery(agent_id="coder", query="harbor", limit=10)

    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            first = await tx.blocks.write(
                ARCHIVAL,
                "The harbor opens at nine\n\nFerries leave from pier four\nUnrelated note",
                expected=None,
                keep=50,
            )
            ranked = {m.line_number: m.score for m in await tx.recall.rank(query)}
            # The ferries line is one non-empty line from the harbor, a blank line between.
            assert set(ranked) == {1, 3, 4}
            assert ranked[1] > ranked[3] > ranked[4] > 0
            assert first.written is not None
            await tx.blocks.write(
                ARCHIVAL,
                "A new first line\nThe harbor opens at nine\n\nFerries leave from pier four"
                "\nUnrelated note",
                expected=first.written.updated_at,
                keep=50,
            )
            shifted = {m.line_number: m.score for m in await tx.recall.rank(query)}
        assert set(shifted) == {1, 2, 4, 5}
        assert shifted[2] == max(shifted.values())
        assert shifted[1] == shifted[4]  # each one non-empty line away from the harbor
        assert rows(
            store_url,
            "SELECT line_number, ordinal FROM archival_lines WHERE tenant_id = %s"
            " ORDER BY line_number",
            caller.tenant_id,
        ) == [(1, 1), (2, 2), (4, 3), (5, 4)]

    on_database(store_url, body)


def test_statements_already_prepared_survive_a_migration_that_adds_columns(
    create_database: Callable[[], str],
) -> None:
    """Servers migrate on start-up while others still run: a column added to any table must
    not break the statements a running server has prepared on its connections."""
    url = create_database()
    migrate.upgrade(url)
    caller = Principal("tenant-a", "alice")
    agent = Owner(Scope.AGENT, "coder")

    async def every_repository(db: Database, round_: int) -> None:
        async with db.connection(caller) as tx:
            outcome = await tx.memories.write(
                MemoryWrite(agent, f"k{round_}", MemorySource.MANUAL, "v", pinned=True)
            )
            assert isinstance(outcome, Written)
            memory = outcome.memory
            assert await tx.memories.get(memory.id) is not None
            assert await tx.memories.find_by_key(agent, memory.key) is not None
            assert await tx.memories.list_page(agent, after=None, limit=10)
            assert await tx.memories.pin(memory.id, False) is not None
            assert await tx.memories.recent([agent], 5)
            assert await tx.events.list_page(memory.id, after=None, limit=5)
            assert (await tx.memories.delete(memory.id))[1]
            block = await tx.blocks.write(ARCHIVAL, f"harbor line {round_}", expected=None, keep=5)
            current = block.written or block.current
            assert current is not None
            assert await tx.blocks.get(ARCHIVAL) is not None
            assert await tx.blocks.select(ScopeFilter.ALL, "")
            assert await tx.blocks.versions(ARCHIVAL, before=None, limit=5)
            await tx.agents.put(AgentSettings("coder", memory_enabled=True))
            assert (await tx.agents.get("coder")).memory_enabled
            await tx.sessions.reset("coder")
            assert await tx.sessions.get("coder") is not None
            await tx.decisions.put_card_type(CardType("t", ReExaminable.ALWAYS))
            await tx.decisions.insert(NewDecision(f"run-{round_}", "coder", "t", "", "s", {}))
            assert await tx.decisions.recent("coder", limit=5, with_result=True)
            assert await tx.recall.rank(RankQuery(agent_id="coder", query="harbor", limit=5))
            state = await tx.prompts.read(
                PromptRead(
                    "coder",
                    None,
                    user_core=True,
                    agent_core=True,
                    agent_cap=5,
                    workspace_cap=5,
                    decisions_limit=5,
                )
            )
            assert state.agent_memory is not None
        async with db.admin() as admin:
            info = await admin.keys.add(
                tenant_id="tenant-a",
                key_id=f"key{round_}",
                user_id="alice",
                name="",
                secret_hash=b"x" * 32,
            )
            assert await admin.keys.find(info.key_id) is not None
            assert await admin.keys.select("tenant-a")

    async def body(db: Database) -> None:
        await every_repository(db, 1)
        with psycopg.connect(url, autocommit=True) as conn:
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT table_name FROM information_schema.tables"
                    " WHERE table_schema = 'public' AND table_name <> 'alembic_version'"
                ).fetchall()
            ]
            for table in tables:
                conn.execute(
                    psycopg.sql.SQL("ALTER TABLE {} ADD COLUMN added_later text").format(
                        psycopg.sql.Identifier(table)
                    )
                )
        await every_repository(db, 2)

    on_database(url, body, pool_size=1)
