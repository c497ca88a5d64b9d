"""The PostgreSQL store's own promises: compare-and-set blocks in one statement, the
one-statement render read and ranking, concurrent writers, and what runs without a
transaction."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import psycopg.sql
import pytest

from agent_memory.domain.active_sessions import RunSession
from agent_memory.domain.agents import AgentSettings
from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockScope, BlockWrite, ScopeFilter
from agent_memory.domain.decisions import (
    CardType,
    NewDecision,
    NewReexamination,
    ReExaminable,
    ResolutionStatus,
)
from agent_memory.domain.events import MemoryEventType
from agent_memory.domain.extraction import (
    ExtractionOutcome,
    ExtractionRequest,
    ExtractionResult,
    JobState,
    Usage,
)
from agent_memory.domain.identity import Principal
from agent_memory.domain.memorize import Conversation, ConversationMessage
from agent_memory.domain.memory import (
    LEARNING_KEY_PREFIX,
    Grounding,
    KeyHeld,
    MemoryPatch,
    MemorySource,
    MemoryWrite,
    Owner,
    Scope,
    Written,
    listing_position,
)
from agent_memory.domain.recall import Meaning, PromptRead, RankQuery
from agent_memory.domain.transfer import UserBlock
from agent_memory.service.memories import write_by_key
from agent_memory.store import blocks as blocks_store
from agent_memory.store import memories as memories_store
from agent_memory.store import memory_sql, migrate
from agent_memory.store.database import Database
from agent_memory.store.repositories import Lock, Tx
from tests.integration.conftest import on_database

CORE = BlockKey(BlockLabel.CORE, BlockScope.USER)
AGENT_CORE = BlockKey(BlockLabel.CORE, BlockScope.AGENT, "coder")
ARCHIVAL = BlockKey(BlockLabel.ARCHIVAL, BlockScope.AGENT, "coder")


async def put_block(
    tx: Tx,
    key: BlockKey,
    content: str,
    *,
    expected: datetime | None = None,
    keep: int = 50,
) -> BlockWrite:
    """Write a block: create it (``expected`` absent) or replace the one last written
    at ``expected``."""
    return await tx.blocks.write(key, content, expected=expected, keep=keep)


def rows(url: str, sql: str, *params: object) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return list(conn.execute(sql, params).fetchall())


# --- blocks -------------------------------------------------------------------------------


def test_a_block_is_created_once_then_replaced_only_at_the_time_it_was_read(
    store_url: str, caller: Principal
) -> None:
    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            created = await put_block(tx, CORE, "- one")
            assert created.written is not None
            assert created.written.version == 1
            again = await put_block(tx, CORE, "- two")
            assert again.written is None
            assert again.current == created.written
            replaced = await put_block(tx, CORE, "- three", expected=created.written.updated_at)
            assert replaced.written is not None
            assert replaced.written.version == 2
            assert replaced.written.updated_at > created.written.updated_at
            stale = await put_block(tx, CORE, "- four", expected=created.written.updated_at)
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
            first = await put_block(tx, CORE, "- start")
        assert first.written is not None
        expected = first.written.updated_at

        async def writer(n: int) -> bool:
            async with db.connection(caller) as tx:
                found = await put_block(tx, CORE, f"- writer {n}", expected=expected)
            if found.written is None:
                assert found.current is not None
                assert found.current.updated_at != expected
            return found.written is not None

        won = await asyncio.gather(*(writer(n) for n in range(12)))
        assert sum(won) == 1

    on_database(store_url, body, pool_size=12)


def test_versions_younger_than_the_history_are_kept(store_url: str, caller: Principal) -> None:
    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            found = await put_block(tx, CORE, "- v1", keep=3)
            for n in range(2, 7):
                assert found.written is not None
                found = await put_block(
                    tx, CORE, f"- v{n}", expected=found.written.updated_at, keep=3
                )
            versions = await tx.blocks.versions(CORE, before=None, limit=10)
            older = await tx.blocks.versions(CORE, before=5, limit=10)
        assert [v.version for v in versions or []] == [6, 5, 4, 3, 2, 1]
        assert [v.version for v in older or []] == [4, 3, 2, 1]

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

    def terms() -> dict[str, int]:
        found = rows(
            store_url,
            "SELECT lexeme, lines FROM archival_terms WHERE tenant_id = %s",
            caller.tenant_id,
        )
        return {str(lexeme): int(lines) for lexeme, lines in found}  # type: ignore[call-overload]

    def vocabulary() -> set[str]:
        return set(terms())

    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            first = await put_block(tx, ARCHIVAL, "Harbor opens at nine\n\nThe pier is closed")
            assert first.written is not None
            assert stored_lines() == [(1, "Harbor opens at nine"), (3, "The pier is closed")]
            assert {"harbor", "pier", "close"} <= vocabulary()
            second = await put_block(
                tx,
                ARCHIVAL,
                "Harbor opens at nine\nFerries run hourly",
                expected=first.written.updated_at,
            )
            assert second.written is not None
            assert stored_lines() == [(1, "Harbor opens at nine"), (2, "Ferries run hourly")]
            assert "ferri" in vocabulary()
            assert "pier" not in vocabulary()
            assert terms()["harbor"] == 1
            third = await put_block(
                tx,
                ARCHIVAL,
                "Harbor opens at nine\nFerries run hourly\nThe harbor master is Ana",
                expected=second.written.updated_at,
            )
            assert third.written is not None
            assert terms()["harbor"] == 2  # how many lines hold it
            assert terms()["ferri"] == 1
            second = third
            deleted, _ = await tx.blocks.delete(ARCHIVAL, expected=second.written.updated_at)
            assert deleted
        assert stored_lines() == []
        assert vocabulary() == set()

    on_database(store_url, body)


def test_an_imported_block_is_written_as_its_users_block_with_its_version_and_lines(
    store_url: str, caller: Principal
) -> None:
    importer = Principal(caller.tenant_id, "agent-memory:import")
    block = UserBlock(caller.user_id, ARCHIVAL, "Harbor opens at nine\n\nThe pier is closed")

    async def body(db: Database) -> None:
        async with db.transaction(importer) as tx:
            assert await tx.transfer.put_block(block, keep=5)
            assert not await tx.transfer.put_block(block, keep=5)
        async with db.connection(caller) as tx:
            stored = await tx.blocks.get(ARCHIVAL)
            versions = await tx.blocks.versions(ARCHIVAL, before=None, limit=10)
        assert stored is not None
        assert (stored.content, stored.version) == (block.content, 1)
        assert versions is not None
        assert [(v.version, v.writer_user_id) for v in versions] == [(1, caller.user_id)]
        lines = rows(
            store_url,
            "SELECT line_number, content, embedding IS NULL FROM archival_lines"
            " WHERE tenant_id = %s ORDER BY line_number",
            caller.tenant_id,
        )
        # The indexer embeds them in the background.
        assert lines == [(1, "Harbor opens at nine", True), (3, "The pier is closed", True)]

    on_database(store_url, body)


def test_a_stale_delete_leaves_the_block(store_url: str, caller: Principal) -> None:
    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            first = await put_block(tx, CORE, "- a")
            assert first.written is not None
            second = await put_block(tx, CORE, "- b", expected=first.written.updated_at)
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
            await put_block(tx, CORE, "- user core")
            await put_block(tx, AGENT_CORE, "- agent core")
            await put_block(tx, ARCHIVAL, "The harbor opens at nine")
            for n in range(3):
                await tx.memories.write(MemoryWrite(agent, f"a{n}", MemorySource.MANUAL, "x"))
            # Neither the order written nor the keys' order is the workspace's order:
            # importance first, then the most recently updated.
            for key, importance in (("w0", 1), ("w1", 9), ("w2", 1), ("w3", 1)):
                await tx.memories.write(
                    MemoryWrite(workspace, key, MemorySource.MANUAL, "y", importance=importance)
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
                    archival_hint=True,
                )
            )
            today = (await tx.clock.now()).astimezone(UTC).date().isoformat()
        assert state.user_core == "- user core"
        assert state.agent_core == "- agent core"
        assert state.agent_memory is not None
        assert [m.key for m in state.agent_memory.rows] == ["a0", "a1"]
        assert state.agent_memory.left_out == 1
        assert state.workspace_memory is not None
        assert [m.key for m in state.workspace_memory.rows] == ["w1", "w3", "w2", "w0"]
        assert state.workspace_memory.left_out == 0
        assert [d.summary for d in state.decisions or []] == ["range unresolved"]
        assert {(m.source, m.day) for m in state.agent_memory.rows} == {
            (MemorySource.MANUAL, today)
        }
        assert state.has_archival
        assert [m.content for m in state.archival] == ["The harbor opens at nine"]

    on_database(store_url, body)


def test_the_render_read_leaves_out_what_was_not_asked_and_a_disabled_agents_memory(
    store_url: str, caller: Principal
) -> None:
    everything = PromptRead(
        agent_id="coder",
        workspace_id="ws",
        user_core=True,
        agent_core=True,
        agent_cap=5,
        workspace_cap=5,
        decisions_limit=5,
        archival=RankQuery(agent_id="coder", query="harbor", limit=3),
    )

    async def body(db: Database) -> None:
        async with db.connection(caller) as tx:
            await put_block(tx, CORE, "- user core")
            await put_block(tx, AGENT_CORE, "- agent core")
            await put_block(tx, ARCHIVAL, "The harbor opens at nine")
            await tx.memories.write(
                MemoryWrite(Owner(Scope.AGENT, "coder"), "a", MemorySource.MANUAL, "x")
            )
            await tx.memories.write(
                MemoryWrite(Owner(Scope.WORKSPACE, "ws"), "w", MemorySource.MANUAL, "y")
            )
            await tx.decisions.put_card_type(CardType("trade", ReExaminable.ALWAYS))
            await tx.decisions.insert(NewDecision("run-1", "coder", "trade", "WAIT", "s", {}))
            state = await tx.prompts.read(
                PromptRead(
                    agent_id="coder",
                    workspace_id=None,
                    user_core=False,
                    agent_core=False,
                    agent_cap=5,
                    workspace_cap=5,
                )
            )
            asked = await tx.prompts.read(everything)
        assert state.user_core is None
        assert state.agent_core is None
        assert state.agent_memory is None  # memory is off for the agent
        assert state.workspace_memory is None
        assert state.decisions is None
        assert not state.has_archival  # not asked
        assert list(state.archival) == []
        # All of it was there to be read: asked for, it comes back (but the agent's
        # memory, which stays off).
        assert asked.user_core == "- user core"
        assert asked.agent_core == "- agent core"
        assert asked.agent_memory is None
        assert asked.workspace_memory is not None
        assert [m.key for m in asked.workspace_memory.rows] == ["w"]
        assert [d.summary for d in asked.decisions or []] == ["s"]
        assert [m.content for m in asked.archival] == ["The harbor opens at nine"]

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
            # A conversation (two speakers): there a line's neighbours lend it context.
            first = await put_block(
                tx,
                ARCHIVAL,
                "Ana: The harbor opens at nine\n\nBen: Ferries leave from pier four"
                "\nAna: Unrelated note\nBen: Another note",
            )
            ranked = {m.line_number: m.score for m in await tx.recall.rank(query)}
            # The ferries line is one non-empty line from the harbor, a blank line between.
            assert set(ranked) == {1, 3, 4}
            assert ranked[1] > ranked[3] > ranked[4] > 0
            assert first.written is not None
            await put_block(
                tx,
                ARCHIVAL,
                "Ben: A new first line\nAna: The harbor opens at nine\n\n"
                "Ben: Ferries leave from pier four\nAna: Unrelated note\nBen: Another note",
                expected=first.written.updated_at,
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
        ) == [(1, 1), (2, 2), (4, 3), (5, 4), (6, 5)]

    on_database(store_url, body)


def test_statements_already_prepared_survive_a_migration_that_adds_columns(
    create_database: Callable[[], str],
) -> None:
    """Servers migrate on start-up while others still run: a column added to any table must
    not break the statements a running server has prepared on its connections. Every
    repository's statements run on one connection before the migration (so they are
    prepared there) and again after it."""
    url = create_database()
    migrate.upgrade(url)
    caller = Principal("tenant-a", "alice")
    agent = Owner(Scope.AGENT, "coder")
    workspace = Owner(Scope.WORKSPACE, "ws")
    manual = MemorySource.MANUAL
    lease = timedelta(minutes=5)

    async def memories(tx: Tx, round_: int) -> None:
        outcome = await tx.memories.write(
            MemoryWrite(agent, f"k{round_}", manual, "v", pinned=True)
        )
        assert isinstance(outcome, Written)
        assert outcome.created
        memory = outcome.memory
        again = await tx.memories.write(MemoryWrite(agent, memory.key, manual, "v2"))
        assert isinstance(again, Written)
        assert not again.created
        held = await tx.memories.write(MemoryWrite(agent, memory.key, MemorySource.AUTO, "v3"))
        assert isinstance(held, KeyHeld)
        created = await tx.memories.create(
            MemoryWrite(workspace, f"w{round_}", MemorySource.MEMORIZE, "w")
        )
        assert created is not None
        assert await tx.memories.create(MemoryWrite(workspace, created.key, manual, "x")) is None
        await tx.memories.replace_groundings(created.id, [Grounding(quote="q")])
        grounded = await tx.memories.get(created.id)
        assert grounded is not None
        assert grounded.groundings == (Grounding(quote="q"),)
        assert await tx.memories.get(memory.id) is not None
        assert await tx.memories.get(memory.id, lock=True) is not None
        assert await tx.memories.find_by_key(agent, memory.key) is not None
        updated = await tx.memories.update(
            memory.id, MemoryPatch(value="v4", importance=3), MemoryEventType.UPDATED
        )
        assert (updated.value, updated.importance) == ("v4", 3)
        learning = await tx.memories.create(
            MemoryWrite(agent, f"{LEARNING_KEY_PREFIX}{round_}", MemorySource.DIRECTOR, "l")
        )
        assert learning is not None
        assert await tx.memories.learnings(["coder"], 5) == [learning]
        assert await tx.memories.count(agent) == 2
        for owner in (agent, workspace):
            listed = await tx.memories.list_page(owner, after=None, limit=10)
            assert listed
            after_first = listing_position(listed[0])
            assert await tx.memories.list_page(owner, after=after_first, limit=10) == listed[1:]
        unpinned = await tx.memories.pin(memory.id, False)
        assert unpinned is not None
        assert await tx.memories.recent([agent], 5)
        assert await tx.memories.recent([agent, workspace], 5)
        events = await tx.events.list_page(memory.id, after=None, limit=5)
        assert events
        later = await tx.events.list_page(
            memory.id, after=(events[0].occurred_at, events[0].id), limit=5
        )
        assert later == events[1:]
        assert await tx.memories.delete(memory.id, version=1) == (unpinned, False)
        for gone in (memory, created, learning):
            assert (await tx.memories.delete(gone.id))[1]

    async def blocks_and_reads(tx: Tx, round_: int) -> None:
        for key in (CORE, AGENT_CORE, ARCHIVAL):
            first = await put_block(tx, key, f"harbor line {round_}", keep=5)
            current = first.written or first.current
            assert current is not None
            assert first.written is not None
            assert (await put_block(tx, key, "lost", keep=5)).written is None
            replaced = await put_block(
                tx,
                key,
                f"harbor line {round_}\nferries leave hourly",
                expected=first.written.updated_at,
                keep=5,
            )
            assert replaced.written is not None
            assert await tx.blocks.get(key) == replaced.written
            assert [v.version for v in await tx.blocks.versions(key, before=None, limit=5) or []]
            assert await tx.blocks.versions(key, before=2, limit=5)
        assert await tx.blocks.select(ScopeFilter.ALL, "")
        assert await tx.blocks.select(ScopeFilter.AGENT, "coder")
        assert await tx.recall.rank(RankQuery(agent_id="coder", query="harbor", limit=5))
        assert await tx.recall.rank(
            RankQuery(
                agent_id="coder",
                query="harbor",
                limit=5,
                include_memories=True,
                workspace_id="ws",
            )
        )
        vectors = await tx.recall.vectors_available()
        harbor = RankQuery(agent_id="coder", query="harbor", limit=5, include_memories=True)
        lexical = await tx.recall.lexical(harbor)
        assert lexical.candidates
        if vectors:
            meaning = Meaning(vector=[1.0, 0.0], model="two-dimensions", weight=0.5)
            assert await tx.recall.fuse(harbor, lexical, meaning)
            by_meaning = await tx.prompts.read(
                PromptRead(
                    "coder",
                    None,
                    user_core=False,
                    agent_core=False,
                    agent_cap=5,
                    workspace_cap=5,
                    archival=harbor,
                    archival_lexical=True,
                )
            )
            assert by_meaning.archival_lexical == lexical
        state = await tx.prompts.read(
            PromptRead(
                "coder",
                "ws",
                user_core=True,
                agent_core=True,
                agent_cap=5,
                workspace_cap=5,
                decisions_limit=5,
                archival=RankQuery(agent_id="coder", query="harbor", limit=5),
            )
        )
        assert state.agent_memory is not None
        assert state.workspace_memory is not None
        assert state.agent_core is not None
        assert state.user_core is not None
        assert state.decisions
        assert state.archival
        for key in (CORE, AGENT_CORE, ARCHIVAL):
            block = await tx.blocks.get(key)
            assert block is not None
            assert await tx.blocks.delete(key, expected=block.created_at) == (False, block)
            assert (await tx.blocks.delete(key, expected=block.updated_at))[0]

    async def the_rest(tx: Tx, round_: int) -> None:
        await tx.agents.put(AgentSettings("coder", memory_enabled=True))
        assert (await tx.agents.get("coder")).memory_enabled
        assert (await tx.agents.get("coder", lock=True)).memory_enabled
        assert await tx.clock.now()
        messages = (ConversationMessage("user", "where from?"),)
        await tx.conversations.put(Conversation("claude-code", "conv", ()))
        await tx.conversations.put(Conversation("claude-code", "conv", messages))

        await tx.sessions.ensure("coder")
        reset = await tx.sessions.reset("coder")
        assert await tx.sessions.get("coder") is not None
        assert await tx.sessions.get("coder", lock=True) == reset
        run = RunSession(f"run-{round_}", None, f"session-{round_}")
        assert await tx.sessions.find_run("coder", run.run_id) is None
        at = await tx.sessions.insert_run("coder", run, carried=True, after=reset.last_reset_at)
        assert at is not None
        assert await tx.sessions.insert_run("coder", run, carried=True, after=None) is None
        assert await tx.sessions.find_run("coder", run.run_id) == run
        carried = await tx.sessions.carry("coder", f"session-{round_}", at)
        assert carried.session_id == f"session-{round_}"
        assert await tx.sessions.runs_since("coder", reset.last_reset_at) == 1

        await tx.decisions.put_card_type(CardType("t", ReExaminable.ALWAYS))
        assert await tx.decisions.get_card_type("t") is not None
        new = NewDecision(f"run-{round_}", "coder", "t", "", "s", {"n": round_})
        decision = await tx.decisions.insert(new)
        assert decision is not None
        assert await tx.decisions.insert(new) is None
        locks: tuple[Lock | None, ...] = (None, "share", "update")
        for lock in locks:
            assert await tx.decisions.get(decision.id, lock=lock) == decision
        assert await tx.decisions.find_by_run(new.run_id) == decision
        assert await tx.decisions.recent("coder", limit=5, with_result=True)
        assert await tx.decisions.recent("coder", limit=5, with_result=False, card_type="t")
        await tx.decisions.set_resolution(decision.id, ResolutionStatus.RESOLVED)
        reexamined = await tx.decisions.insert_reexamination(
            NewReexamination(decision.id, f"again-{round_}", 70, "notes", "WAIT")
        )
        assert reexamined is not None
        assert await tx.decisions.find_reexamination_by_run(reexamined.run_id) == reexamined
        assert await tx.decisions.reexaminations(decision.id) == [reexamined]
        resolved = await tx.decisions.get(decision.id)
        assert resolved is not None
        assert resolved.resolution_status is ResolutionStatus.RESOLVED
        assert (resolved.latest_conviction_score, resolved.reexamination_count) == (70, 1)

        session = f"memory-extract:s{round_}"
        await tx.usage.record(
            session,
            agent_id="coder",
            model="m",
            usage=Usage(10, 5, 0.01),
            outcome=ExtractionOutcome.COMPLETED,
        )
        report = await tx.usage.report(session, start=None, end=None)
        assert [r.input_tokens for r in report.records] == [10]
        assert report.total_output_tokens == 5

    async def every_repository(db: Database, round_: int) -> None:
        async with db.connection(caller) as tx:
            await memories(tx, round_)
            await the_rest(tx, round_)
            await blocks_and_reads(tx, round_)
            request = ExtractionRequest("coder", None, f"s{round_}", None, "t" * 300)
            job_id = await tx.jobs.enqueue(request, settle=timedelta(0))
            assert await tx.jobs.enqueue(request, settle=timedelta(0)) == job_id
        async with db.admin() as admin:
            claimed = await admin.job_queue.claim(lease=lease)
        assert claimed is not None
        assert claimed.id == job_id
        async with db.connection(caller) as tx:
            assert await tx.jobs.retry_later(
                job_id,
                attempt=claimed.attempts,
                delay=timedelta(0),
                outcome=ExtractionOutcome.TIMEOUT,
                detail="again",
            )
        async with db.admin() as admin:
            again = await admin.job_queue.claim(lease=lease)
        assert again is not None
        assert (again.id, again.attempts) == (job_id, claimed.attempts + 1)
        async with db.connection(caller) as tx:
            assert await tx.jobs.finish(
                job_id,
                attempt=again.attempts,
                result=ExtractionResult(ExtractionOutcome.COMPLETED, "s", detail="done"),
            )
            job = await tx.jobs.get(job_id)
            assert job is not None
            assert (job.state, job.attempts, job.outcome, job.detail) == (
                JobState.DONE,
                again.attempts,
                ExtractionOutcome.COMPLETED,
                "done",
            )
            assert await tx.jobs.get(uuid.uuid4()) is None
        async with db.admin() as admin:
            assert await admin.job_queue.claim(lease=lease) is None
            info = await admin.keys.add(
                tenant_id="tenant-a",
                key_id=f"key{round_}",
                user_id="alice",
                name="",
                secret_hash=b"x" * 32,
            )
            assert await admin.keys.find(info.key_id) is not None
            assert await admin.keys.select("tenant-a")
            assert await admin.keys.select()
            revoked = await admin.keys.revoke(info.key_id)
            assert revoked is not None
            assert revoked.revoked_at is not None
            assert await admin.keys.revoke(info.key_id) == revoked
            assert await admin.keys.revoke("no-such-key") is None

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


def test_marking_what_was_shown_reads_each_row_by_its_key_without_statistics(
    create_database: Callable[[], str], caller: Principal
) -> None:
    """In a database never analyzed, marking 40 of an agent's 200 memories as used
    reads the memories once, not once per marked memory: the plan does not hang on
    the planner's guess that there is one row of each."""
    url = create_database()
    migrate.upgrade(url)
    owner = Owner(Scope.AGENT, "planner")

    async def body(db: Database) -> list[uuid.UUID]:
        async with db.transaction(caller) as tx:
            ids = []
            for n in range(200):
                written = await tx.memories.write(
                    MemoryWrite(owner, f"k{n:03d}", MemorySource.MANUAL, "v")
                )
                assert written is not None
                ids.append(written.memory.id)
        return ids[::5]

    shown = on_database(url, body)
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = psycopg.ClientCursor(conn)
        statement = cursor.mogrify(
            memory_sql.mark_used("SELECT unnest(%(ids)s::uuid[])"),
            {"tenant_id": caller.tenant_id, "ids": shown},
        )
        row = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement).fetchone()
    assert row is not None

    def nodes(plan: dict[str, object]) -> list[dict[str, object]]:
        children = plan.get("Plans", [])
        assert isinstance(children, list)
        return [plan, *(n for child in children for n in nodes(child))]

    scans = [n for n in nodes(row[0][0]["Plan"]) if n.get("Relation Name") == "memories"]
    # Each read of the memories runs once: none again for every shown row.
    assert scans
    assert all(n["Actual Loops"] == 1 for n in scans), scans
    assert rows(url, "SELECT count(*) FROM memories WHERE last_used_time IS NOT NULL") == [(40,)]


# Tables whose rows belong to one owner (a memory's, a block's).
_OWNED_TABLES = [
    "memories",
    "memory_events",
    "blocks",
    "block_versions",
    "archival_lines",
    "archival_terms",
    "archival_vocabulary",
]

# Rows of each owned table read so far in the transaction: by sequential scans, and
# fetched through indexes (filtered out or not).
_READ_SO_FAR = """
SELECT relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS n
FROM pg_stat_xact_user_tables WHERE relname = ANY (%(tables)s)
"""


def test_changing_one_memory_or_block_reads_its_own_rows_in_a_tenant_of_many(
    create_database: Callable[[], str],
    caller: Principal,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the statistics say a tenant holds a few rows (forty tenants of twenty
    memories each, then ANALYZE) and the tenant has since written a thousand memories
    of other owners and their blocks, each change of one memory (an upsert of its key,
    an update, a pin, a supersession, a deletion, the deletion of an expired one with
    its history) and each compare-and-set of a block
    reads the rows it changes by their keys: no statement reads a table's rows of the
    whole tenant, nor a block's whole history.

    The rows each statement reads are counted by PostgreSQL itself (the transaction's
    table statistics), for the statements as the store sends them, planned as the
    store's connections plan them (generic plans), sequential scans aside."""
    url = create_database()
    migrate.upgrade(url)
    owner = Owner(Scope.AGENT, "planner")
    reads: list[tuple[str, dict[str, int]]] = []

    def counting(fetch: Any) -> Any:
        async def fetch_counted(conn: Any, statement: str, params: Any) -> Any:
            async def so_far() -> dict[str, int]:
                cursor = await conn.execute(_READ_SO_FAR, {"tables": _OWNED_TABLES})
                return {r["relname"]: r["n"] for r in await cursor.fetchall()}

            before = await so_far()
            row = await fetch(conn, statement, params)
            after = await so_far()
            reads.append((statement, {t: n - before.get(t, 0) for t, n in after.items()}))
            return row

        return fetch_counted

    async def fill(db: Database, principal: Principal, memories: int, blocks: int) -> None:
        async with db.transaction(principal) as tx:
            for n in range(memories):
                other = Owner(Scope.AGENT, f"other-{n % 20}")
                await tx.memories.write(MemoryWrite(other, f"k{n}", MemorySource.MANUAL, "v"))
            for n in range(blocks):
                for label in BlockLabel:
                    agent = BlockKey(label, BlockScope.AGENT, f"agent-{n}")
                    await put_block(tx, agent, f"line {n}\nanother line {n}")

    async def tenants_before(db: Database) -> None:
        for n in range(40):
            await fill(db, Principal(f"{caller.tenant_id}-{n}", "bo"), 20, 1)

    on_database(url, tenants_before)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")
        # As on tables too large to read whole (these are small), for every connection
        # from the start (the foreign keys' checks keep the plans they first made):
        # what bounds a read is then an index.
        name = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
        conn.execute(
            psycopg.sql.SQL("ALTER DATABASE {} SET enable_seqscan = off").format(
                psycopg.sql.Identifier(str(name))
            )
        )

    async def change(db: Database) -> None:
        await fill(db, caller, 1000, 40)
        async with db.transaction(caller) as tx:
            first = await tx.memories.write(MemoryWrite(owner, "first", MemorySource.MANUAL, "v"))
            second = await tx.memories.write(MemoryWrite(owner, "second", MemorySource.MANUAL, "v"))
            # A memory that has expired, for the expiry to delete (with its history).
            gone = datetime.now(UTC) - timedelta(minutes=1)
            await tx.memories.write(
                MemoryWrite(owner, "brief", MemorySource.MANUAL, "v", expiration=gone)
            )
            # A block with a long history, all of it younger than the horizon.
            written = await put_block(tx, AGENT_CORE, "line")
            for n in range(30):
                assert written.written is not None
                expected = written.written.updated_at
                written = await put_block(tx, AGENT_CORE, f"line {n}", expected=expected, keep=2)
            await put_block(tx, ARCHIVAL, "a line\nanother line")
        assert isinstance(first, Written)
        assert isinstance(second, Written)
        for module in (memories_store, blocks_store):
            monkeypatch.setattr(module, "fetch_one", counting(module.fetch_one))
        async with db.transaction(caller) as tx:
            assert await tx.memories.write(MemoryWrite(owner, "first", MemorySource.MANUAL, "v2"))
            memory = first.memory
            await tx.memories.update(memory.id, MemoryPatch(value="v3"), MemoryEventType.UPDATED)
            assert await tx.memories.pin(memory.id, True)
            assert await tx.memories.supersede(memory.id, second.memory)
            block = await tx.blocks.get(AGENT_CORE)
            assert block is not None
            await put_block(tx, AGENT_CORE, "line 2", expected=block.updated_at, keep=2)
            archival = await tx.blocks.get(ARCHIVAL)
            assert archival is not None
            await put_block(tx, ARCHIVAL, "a new line\nanother line", expected=archival.updated_at)
            await tx.memories.delete(memory.id)
            assert await tx.memories.delete_expired(owner, "brief")
            assert await tx.blocks.delete(ARCHIVAL, expected=None)

    on_database(url, change)
    assert len(reads) >= 10
    for statement, read in reads:
        # The owner holds a few rows of each table (and its block a few versions past
        # the newest two); the tenant a thousand memories and 80 blocks with their
        # lines and terms; the block 32 versions.
        assert all(n <= 16 for n in read.values()), (read, statement)
