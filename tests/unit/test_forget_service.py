"""Forget use cases over the in-memory store: a dry run counts what the forget would
remove and removes nothing; a bad subject is refused before anything is read."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockLimits, BlockScope
from agent_memory.domain.errors import InvalidArgument
from agent_memory.domain.forgetting import ForgetCounts
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import MemorySource, MemoryWrite, Owner, Scope
from agent_memory.service.blocks import Blocks
from agent_memory.service.forgetting import Forgetting
from agent_memory.service.memories import Memories
from tests.fakes import FakeStore

T = TypeVar("T")
ALICE = Principal("acme", "alice")
CODER = Owner(Scope.AGENT, "coder")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def test_a_dry_run_counts_what_the_forget_removes_and_removes_nothing() -> None:
    store = FakeStore()
    memories, blocks, forgetting = Memories(store), Blocks(store, BlockLimits()), Forgetting(store)
    memory = store.add(ALICE, MemoryWrite(CODER, "k", MemorySource.MANUAL, "v"))
    key = BlockKey(BlockLabel.ARCHIVAL, BlockScope.AGENT, "coder")
    run(blocks.write(ALICE, key, "a\nb", expected=None))
    dry = run(forgetting.agent(ALICE, "coder", validate_only=True))
    assert dry == ForgetCounts(
        memories=1, audit_events=1, blocks=1, block_versions=1, archival_lines=2
    )
    assert run(memories.get(ALICE, memory.id)) == memory
    assert run(blocks.get(ALICE, key)).content == "a\nb"
    assert run(forgetting.agent(ALICE, "coder")) == dry
    assert run(forgetting.agent(ALICE, "coder")) == ForgetCounts()


def test_a_user_forgets_their_own_blocks_only() -> None:
    store = FakeStore()
    blocks, forgetting = Blocks(store, BlockLimits()), Forgetting(store)
    key = BlockKey(BlockLabel.CORE, BlockScope.USER)
    bob = Principal("acme", "bob")
    run(blocks.write(ALICE, key, "mine", expected=None))
    theirs = run(blocks.write(bob, key, "bob's", expected=None))
    assert run(forgetting.user(ALICE)).blocks == 1
    assert run(blocks.get(bob, key)) == theirs


@pytest.mark.parametrize(
    ("subject", "field"),
    [("agent", "agent_id"), ("workspace", "workspace_id")],
)
def test_a_bad_subject_is_refused(subject: str, field: str) -> None:
    forgetting = Forgetting(FakeStore())
    forget = forgetting.agent if subject == "agent" else forgetting.workspace
    for bad in ("", "a\nb"):
        with pytest.raises(InvalidArgument) as refused:
            run(forget(ALICE, bad))
        assert [v.field for v in refused.value.violations] == [field]
