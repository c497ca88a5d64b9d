"""The block repository's contract, run against PostgreSQL and the in-memory store:
compare-and-set writes, versions, deletes, listings, and whose blocks a caller sees.
What archival lines a write keeps is PostgreSQL's alone (``tests/e2e/test_blocks.py``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta
from itertools import pairwise

import pytest

from agent_memory.domain.blocks import Block, BlockKey, BlockLabel, BlockScope, ScopeFilter
from agent_memory.domain.identity import Principal
from agent_memory.store.repositories import Store, Tx
from tests.integration.conftest import Body

USER_CORE = BlockKey(BlockLabel.CORE, BlockScope.USER)
USER_ARCHIVAL = BlockKey(BlockLabel.ARCHIVAL, BlockScope.USER)


def agent(label: BlockLabel, agent_id: str) -> BlockKey:
    return BlockKey(label, BlockScope.AGENT, agent_id)


async def created(tx: Tx, key: BlockKey, content: str) -> Block:
    outcome = await tx.blocks.write(key, content, expected=None, keep=10)
    assert outcome.written is not None
    return outcome.written


def test_a_write_without_expected_creates_at_version_1_and_only_once(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            assert await tx.blocks.get(USER_CORE) is None
            first = await tx.blocks.write(USER_CORE, "likes tea", expected=None, keep=10)
            again = await tx.blocks.write(USER_CORE, "likes coffee", expected=None, keep=10)
            read = await tx.blocks.get(USER_CORE)
        block = first.written
        assert block is not None
        assert first.current == block
        assert (block.key, block.content, block.version) == (USER_CORE, "likes tea", 1)
        assert block.created_at == block.updated_at
        assert block.indexed_line_count == 0
        assert again.written is None
        assert again.current == block
        assert read == block

    scenario(body)


def test_a_write_replaces_the_block_only_at_the_updated_at_expected(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            first = await created(tx, USER_CORE, "one")
            second = await tx.blocks.write(USER_CORE, "two", expected=first.updated_at, keep=10)
            assert second.written is not None
            stale = await tx.blocks.write(USER_CORE, "three", expected=first.updated_at, keep=10)
            near = await tx.blocks.write(
                USER_CORE,
                "three",
                expected=second.written.updated_at + timedelta(microseconds=1),
                keep=10,
            )
            absent = await tx.blocks.write(USER_ARCHIVAL, "x", expected=first.updated_at, keep=10)
            read = await tx.blocks.get(USER_CORE)
            assert await tx.blocks.get(USER_ARCHIVAL) is None
        written = second.written
        assert (written.content, written.version) == ("two", 2)
        assert written.created_at == first.created_at
        assert written.updated_at > first.updated_at
        assert second.current == written
        # A stale or near-miss precondition writes nothing and answers the block as it is.
        assert (stale.written, stale.current) == (None, written)
        assert (near.written, near.current) == (None, written)
        assert (absent.written, absent.current) == (None, None)
        assert read == written

    scenario(body)


def test_every_accepted_write_is_strictly_later_and_one_version_up(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            # One transaction: PostgreSQL's now() stands still, the writes must not.
            block = await created(tx, USER_CORE, "0")
            seen = [block]
            for n in range(1, 6):
                outcome = await tx.blocks.write(
                    USER_CORE, str(n), expected=block.updated_at, keep=10
                )
                assert outcome.written is not None
                block = outcome.written
                seen.append(block)
        assert [b.version for b in seen] == [1, 2, 3, 4, 5, 6]
        assert all(a.updated_at < b.updated_at for a, b in pairwise(seen))

    scenario(body)


def test_versions_are_kept_newest_first_while_the_history_lasts(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            assert await tx.blocks.versions(USER_CORE, before=None, limit=10) is None
            block = await created(tx, USER_CORE, "v1 é")
            written = [block]
            for n in range(2, 7):
                outcome = await tx.blocks.write(
                    USER_CORE, f"v{n} 🙂", expected=block.updated_at, keep=3
                )
                assert outcome.written is not None
                block = outcome.written
                written.append(block)
            every = await tx.blocks.versions(USER_CORE, before=None, limit=10)
            first_page = await tx.blocks.versions(USER_CORE, before=None, limit=2)
            second_page = await tx.blocks.versions(USER_CORE, before=5, limit=2)
            none_older = await tx.blocks.versions(USER_CORE, before=4, limit=2)
        assert every is not None
        # Past the newest three, younger than the history kept: every version stays.
        assert [v.version for v in every] == [6, 5, 4, 3, 2, 1]
        newest = every[0]
        assert (newest.content, newest.char_count) == ("v6 🙂", 4)
        assert newest.writer_user_id == caller.user_id
        assert newest.written_at == written[-1].updated_at
        assert [v.written_at for v in every] == [b.updated_at for b in reversed(written)]
        assert first_page is not None
        assert [v.version for v in first_page] == [6, 5]
        assert second_page is not None
        assert [v.version for v in second_page] == [4, 3]
        assert [v.version for v in none_older or []] == [3, 2]

    scenario(body)


def test_a_delete_is_compare_and_set_and_takes_the_versions_with_it(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            assert await tx.blocks.delete(USER_CORE, expected=None) == (False, None)
            first = await created(tx, USER_CORE, "one")
            outcome = await tx.blocks.write(USER_CORE, "two", expected=first.updated_at, keep=10)
            current = outcome.written
            assert current is not None
            deleted, found = await tx.blocks.delete(USER_CORE, expected=first.updated_at)
            assert (deleted, found) == (False, current)
            assert await tx.blocks.get(USER_CORE) == current
            deleted, found = await tx.blocks.delete(USER_CORE, expected=current.updated_at)
            assert deleted
            assert found is not None
            assert (found.content, found.version) == ("two", 2)
            assert await tx.blocks.get(USER_CORE) is None
            assert await tx.blocks.versions(USER_CORE, before=None, limit=10) is None
            assert await tx.blocks.delete(USER_CORE, expected=current.updated_at) == (False, None)
            # A block made again starts over: version 1, and no history of the old one.
            again = await created(tx, USER_CORE, "three")
            history = await tx.blocks.versions(USER_CORE, before=None, limit=10)
            other = await created(tx, USER_ARCHIVAL, "a")
            unconditional = await tx.blocks.delete(USER_ARCHIVAL, expected=None)
        assert again.version == 1
        assert history is not None
        assert [(v.version, v.content) for v in history] == [(1, "three")]
        assert unconditional == (True, other)

    scenario(body)


def test_a_listing_has_user_blocks_then_agent_blocks_by_agent_core_first(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    keys = [
        agent(BlockLabel.ARCHIVAL, "beta"),
        USER_ARCHIVAL,
        agent(BlockLabel.CORE, "beta"),
        agent(BlockLabel.ARCHIVAL, "alpha"),
        USER_CORE,
        agent(BlockLabel.CORE, "alpha"),
    ]

    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            for key in keys:
                await created(tx, key, f"{key.label.value} {key.agent_id}")
            every = await tx.blocks.select(ScopeFilter.ALL, "")
            users = await tx.blocks.select(ScopeFilter.USER, "")
            agents = await tx.blocks.select(ScopeFilter.AGENT, "")
            beta = await tx.blocks.select(ScopeFilter.AGENT, "beta")
            user_and_alpha = await tx.blocks.select(ScopeFilter.ALL, "alpha")
            nobody = await tx.blocks.select(ScopeFilter.AGENT, "gamma")
            one = await tx.blocks.get(agent(BlockLabel.CORE, "beta"))
        ordered = [
            USER_CORE,
            USER_ARCHIVAL,
            agent(BlockLabel.CORE, "alpha"),
            agent(BlockLabel.ARCHIVAL, "alpha"),
            agent(BlockLabel.CORE, "beta"),
            agent(BlockLabel.ARCHIVAL, "beta"),
        ]
        assert [b.key for b in every] == ordered
        assert [b.key for b in users] == ordered[:2]
        assert [b.key for b in agents] == ordered[2:]
        assert [b.key for b in beta] == ordered[4:]
        assert [b.key for b in user_and_alpha] == ordered[:4]
        assert nobody == []
        assert one in every
        assert all(b.indexed_line_count == 0 for b in every)

    scenario(body)


def test_another_user_or_tenant_never_sees_or_changes_the_blocks(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    colleague = Principal(caller.tenant_id, "bob")
    stranger = Principal(f"other-{uuid.uuid4().hex[:8]}", caller.user_id)

    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            mine = await created(tx, USER_CORE, "mine")
            await created(tx, agent(BlockLabel.CORE, "coder"), "mine too")
        for other in (colleague, stranger):
            async with store.connection(other) as tx:
                assert await tx.blocks.get(USER_CORE) is None
                assert await tx.blocks.select(ScopeFilter.ALL, "") == []
                assert await tx.blocks.versions(USER_CORE, before=None, limit=10) is None
                assert await tx.blocks.delete(USER_CORE, expected=None) == (False, None)
                stale = await tx.blocks.write(USER_CORE, "x", expected=mine.updated_at, keep=10)
                assert (stale.written, stale.current) == (None, None)
                theirs = await created(tx, USER_CORE, f"of {other.user_id}")
                assert theirs.version == 1
        async with store.connection(caller) as tx:
            assert await tx.blocks.get(USER_CORE) == mine
            assert len(await tx.blocks.select(ScopeFilter.ALL, "")) == 2
            history = await tx.blocks.versions(USER_CORE, before=None, limit=10)
        assert history is not None
        assert [v.content for v in history] == ["mine"]

    scenario(body)


def test_a_workspace_block_is_the_tenants_and_listed_only_when_its_workspace_is_named(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    colleague = Principal(caller.tenant_id, "bob")
    stranger = Principal(f"other-{uuid.uuid4().hex[:8]}", caller.user_id)
    plan = BlockKey(BlockLabel.CORE, BlockScope.WORKSPACE, workspace_id="release")
    other = BlockKey(BlockLabel.CORE, BlockScope.WORKSPACE, workspace_id="oncall")

    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            first = await created(tx, plan, "ship on Tuesday")
            await created(tx, other, "ana this week")
            await created(tx, USER_CORE, "mine")
        async with store.connection(colleague) as tx:
            # Another user of the tenant writes the same block, by compare-and-set.
            seen = await tx.blocks.get(plan)
            assert seen == first
            moved = await tx.blocks.write(
                plan, "ship on Wednesday", expected=first.updated_at, keep=10
            )
            assert moved.written is not None
            assert moved.written.version == 2
            assert await tx.blocks.select(ScopeFilter.ALL, "") == []
            listed = await tx.blocks.select(ScopeFilter.ALL, "", "release")
            assert [b.key for b in listed] == [plan]
        async with store.connection(caller) as tx:
            stale = await tx.blocks.write(plan, "x", expected=first.updated_at, keep=10)
            assert stale.written is None
            assert stale.current is not None
            assert stale.current.content == "ship on Wednesday"
            both = await tx.blocks.select(ScopeFilter.ALL, "", "release")
            assert [b.key for b in both] == [USER_CORE, plan]
            only = await tx.blocks.select(ScopeFilter.WORKSPACE, "", "oncall")
            assert [b.key for b in only] == [other]
        async with store.connection(stranger) as tx:
            assert await tx.blocks.get(plan) is None
            assert await tx.blocks.select(ScopeFilter.WORKSPACE, "", "release") == []

    scenario(body)


def test_a_block_write_in_a_transaction_that_raises_leaves_nothing(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def half_a_use_case(store: Store, expected: Block) -> None:
        async with store.transaction(caller) as tx:
            await tx.blocks.write(USER_CORE, "changed", expected=expected.updated_at, keep=10)
            await created(tx, USER_ARCHIVAL, "new")
            raise RuntimeError("the rest of the use case failed")

    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            block = await created(tx, USER_CORE, "kept")
        with pytest.raises(RuntimeError):
            await half_a_use_case(store, block)
        async with store.connection(caller) as tx:
            assert await tx.blocks.get(USER_CORE) == block
            assert await tx.blocks.get(USER_ARCHIVAL) is None
            history = await tx.blocks.versions(USER_CORE, before=None, limit=10)
        assert history is not None
        assert [v.version for v in history] == [1]

    scenario(body)
