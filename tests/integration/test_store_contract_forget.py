"""Forgetting's contract, run against PostgreSQL and the in-memory store: what a forget
of an agent, a workspace or a user removes, counted by kind, what it leaves of the
audit trail, and that nothing of another subject or tenant goes with it. (That no text
is left in any column is ``tests/e2e/test_forget.py``'s to check, on PostgreSQL.)"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta

import pytest

from agent_memory.domain.active_sessions import RunSession
from agent_memory.domain.agents import AgentSettings
from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockScope, ScopeFilter
from agent_memory.domain.decisions import CardType, NewDecision, NewReexamination, ReExaminable
from agent_memory.domain.events import MemoryEventType
from agent_memory.domain.extraction import ExtractionRequest
from agent_memory.domain.forgetting import ForgetCounts
from agent_memory.domain.identity import Principal
from agent_memory.domain.memorize import Conversation, ConversationMessage
from agent_memory.domain.memory import (
    Evidence,
    Memory,
    MemorySource,
    MemoryWrite,
    Owner,
    Scope,
    Written,
)
from agent_memory.store.repositories import Store, Tx
from tests.integration.conftest import Body

CODER = Owner(Scope.AGENT, "coder")
OTHER = Owner(Scope.AGENT, "other")
WORKSPACE = Owner(Scope.WORKSPACE, "ws")
LATER = timedelta(hours=1)


def conversation(conversation_id: str) -> Conversation:
    said = (ConversationMessage("user", f"said in {conversation_id}", "m0", None),)
    return Conversation("p", conversation_id, said, ())


async def remembered(tx: Tx, owner: Owner, key: str, conversation_id: str | None = None) -> Memory:
    evidence = None
    if conversation_id is not None:
        await tx.conversations.put(conversation(conversation_id))
        evidence = Evidence(conversation_provider="p", conversation_id=conversation_id)
    outcome = await tx.memories.write(
        MemoryWrite(owner, key, MemorySource.MANUAL, f"{key} of {owner.id}", evidence=evidence)
    )
    assert isinstance(outcome, Written)
    return outcome.memory


async def an_agents_state(tx: Tx, agent_id: str) -> None:
    """Settings, a session and a run, a decision re-examined, a queued pass."""
    await tx.agents.put(AgentSettings(agent_id, active_memory_enabled=True))
    await tx.sessions.ensure(agent_id)
    await tx.sessions.insert_run(agent_id, RunSession("r1", None, "s1"), carried=True, after=None)
    await tx.decisions.put_card_type(CardType("trade", ReExaminable.ALWAYS))
    decision = await tx.decisions.insert(
        NewDecision(f"run-{agent_id}", agent_id, "trade", "WAIT", "s", {"n": 1})
    )
    assert decision is not None
    await tx.decisions.insert_reexamination(
        NewReexamination(decision.id, f"re-{agent_id}", 50, "n", "HOLD")
    )
    request = ExtractionRequest(agent_id, None, f"s-{agent_id}", None, "user: hi")
    await tx.jobs.enqueue(request, settle=LATER)


def test_forgetting_an_agent_removes_its_texts_and_counts_them(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    colleague = Principal(caller.tenant_id, "bob")
    archival = BlockKey(BlockLabel.ARCHIVAL, BlockScope.AGENT, "coder")
    core = BlockKey(BlockLabel.CORE, BlockScope.AGENT, "coder")

    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            kept = await remembered(tx, OTHER, "kept", "shared")
            first = await remembered(tx, CODER, "first", "shared")
            second = await remembered(tx, CODER, "second", "only-coder")
            await tx.memories.write(
                MemoryWrite(CODER, "first", MemorySource.MANUAL, "changed")
            )  # a second event of the memory
            await an_agents_state(tx, "coder")
            await an_agents_state(tx, "other")
            written = await tx.blocks.write(archival, "one\n\ntwo", expected=None, keep=10)
            assert written.written is not None
            await tx.blocks.write(
                archival, "one\nthree\nfour", expected=written.written.updated_at, keep=10
            )
            await tx.blocks.write(
                BlockKey(BlockLabel.CORE, BlockScope.USER), "mine", expected=None, keep=10
            )
        async with store.transaction(colleague) as tx:
            await tx.blocks.write(core, "bob's", expected=None, keep=10)
        async with store.transaction(caller) as tx:
            counts = await tx.forget.agent("coder")
        async with store.connection(caller) as tx:
            again = await tx.forget.agent("coder")
            assert await tx.memories.get(first.id) is None
            assert await tx.memories.get(second.id) is None
            assert await tx.memories.get(kept.id) == kept
            events = await tx.events.list_page(first.id, after=None, limit=10)
            assert await tx.conversations.get("p", "only-coder") is None
            assert await tx.conversations.get("p", "shared") is not None
            assert await tx.blocks.select(ScopeFilter.AGENT, "coder") == []
            assert len(await tx.blocks.select(ScopeFilter.USER, "")) == 1
            assert await tx.agents.get("coder") == AgentSettings("coder")
            assert await tx.sessions.get("coder") is None
            assert await tx.sessions.list_runs("coder", after=None, limit=10) == []
            assert await tx.decisions.find_by_run("run-coder") is None
            assert await tx.decisions.find_reexamination_by_run("re-coder") is None
            assert await tx.decisions.find_by_run("run-other") is not None
            assert await tx.sessions.get("other") is not None
        async with store.connection(colleague) as tx:
            assert await tx.blocks.get(core) is None
        assert counts == ForgetCounts(
            memories=2,
            audit_events=3,
            conversations=1,
            blocks=2,
            block_versions=3,
            archival_lines=3,
            decisions=1,
            reexaminations=1,
            extraction_jobs=1,
            agent_state=3,
        )
        assert again == ForgetCounts()
        # The audit trail keeps who and when, nothing of what, and ends with the deletion.
        assert [(e.type, e.actor_user_id) for e in events] == [
            (MemoryEventType.CREATED, caller.user_id),
            (MemoryEventType.UPDATED, caller.user_id),
            (MemoryEventType.DELETED, caller.user_id),
        ]
        assert all(e.old is None and e.new is None for e in events)

    scenario(body)


def test_forgetting_a_workspace_removes_its_memories_and_passes(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            gone = await remembered(tx, WORKSPACE, "stack", "ws-talk")
            kept = await remembered(tx, Owner(Scope.WORKSPACE, "other"), "stack")
            agents = await remembered(tx, CODER, "stack")
            await tx.jobs.enqueue(
                ExtractionRequest("coder", "ws", "s1", None, "user: hi"), settle=LATER
            )
            other_job = await tx.jobs.enqueue(
                ExtractionRequest("coder", None, "s2", None, "user: hi"), settle=LATER
            )
            shared = BlockKey(BlockLabel.CORE, BlockScope.WORKSPACE, workspace_id="ws")
            elsewhere = BlockKey(BlockLabel.CORE, BlockScope.WORKSPACE, workspace_id="other")
            for key in (shared, elsewhere):
                await tx.blocks.write(key, "- the release plan", expected=None, keep=10)
        async with store.transaction(caller) as tx:
            counts = await tx.forget.workspace("ws")
        async with store.connection(caller) as tx:
            assert await tx.blocks.get(shared) is None
            assert await tx.blocks.get(elsewhere) is not None
            assert await tx.memories.get(gone.id) is None
            assert await tx.memories.get(kept.id) == kept
            assert await tx.memories.get(agents.id) == agents
            assert await tx.conversations.get("p", "ws-talk") is None
            assert await tx.jobs.get(other_job) is not None
        assert counts == ForgetCounts(
            memories=1,
            audit_events=1,
            conversations=1,
            extraction_jobs=1,
            blocks=1,
            block_versions=1,
        )

    scenario(body)


def test_forgetting_a_user_removes_that_users_blocks_alone(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    colleague = Principal(caller.tenant_id, "bob")
    stranger = Principal(f"other-{uuid.uuid4().hex[:8]}", caller.user_id)
    core = BlockKey(BlockLabel.CORE, BlockScope.USER)
    archival = BlockKey(BlockLabel.ARCHIVAL, BlockScope.AGENT, "coder")

    async def body(store: Store) -> None:
        for principal in (caller, colleague, stranger):
            async with store.transaction(principal) as tx:
                await tx.blocks.write(core, "notes", expected=None, keep=10)
                await tx.blocks.write(archival, "a\nb", expected=None, keep=10)
        async with store.transaction(caller) as tx:
            memory = await remembered(tx, CODER, "kept")
            counts = await tx.forget.user()
        async with store.connection(caller) as tx:
            assert await tx.blocks.select(ScopeFilter.ALL, "") == []
            assert await tx.memories.get(memory.id) == memory
        for principal in (colleague, stranger):
            async with store.connection(principal) as tx:
                assert len(await tx.blocks.select(ScopeFilter.ALL, "")) == 2
        assert counts == ForgetCounts(blocks=2, block_versions=2, archival_lines=2)

    scenario(body)


def test_a_forget_in_a_transaction_rolled_back_removes_nothing(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    class DryRun(Exception):
        def __init__(self, counts: ForgetCounts) -> None:
            super().__init__("dry run")
            self.counts = counts

    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            memory = await remembered(tx, CODER, "k", "talk")
            await an_agents_state(tx, "coder")
        with pytest.raises(DryRun) as dry:
            async with store.transaction(caller) as tx:
                raise DryRun(await tx.forget.agent("coder"))
        counted = dry.value.counts
        async with store.transaction(caller) as tx:
            assert await tx.memories.get(memory.id) == memory
            events = await tx.events.list_page(memory.id, after=None, limit=10)
            assert await tx.conversations.get("p", "talk") is not None
            assert await tx.forget.agent("coder") == counted
        assert counted.memories == 1
        assert [e.new for e in events] == [memory]

    scenario(body)
