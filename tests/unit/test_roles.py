"""Roles: the one table of what each RPC needs, and the rule beside it for UpsertMemory."""

from __future__ import annotations

import asyncio

import pytest

from agent_memory.api.roles import METHOD_ROLES, authorize, required_role
from agent_memory.domain.errors import FailedPrecondition, InvalidArgument, PermissionDenied
from agent_memory.domain.identity import ROLE_FORBIDS, Principal, Role, require_role
from agent_memory.domain.memory import MemoryPatch, MemorySource, MemoryWrite, Owner, Scope
from agent_memory.service.keys import VerifiedKeys
from agent_memory.service.memories import Memories
from agent_memory.status import status_code, to_status
from tests.fakes import FakeStore
from tests.support import agentmemory_rpcs

AGENT = Owner(Scope.AGENT, "coder")


def caller(role: Role) -> Principal:
    return Principal("acme", "alice", role)


def test_the_table_names_exactly_the_rpcs_of_the_services() -> None:
    rpcs = {f"/{m.containing_service.full_name}/{m.name}" for m in agentmemory_rpcs()}
    assert "/agentmemory.v1.RecallService/Recall" in rpcs
    assert "/agentmemory.v1.DecisionService/ListReexaminations" in rpcs
    assert set(METHOD_ROLES) == rpcs


def test_a_method_missing_from_the_table_needs_an_orchestrator() -> None:
    method = "/agentmemory.v1.MemoryService/NotInTheTable"
    assert required_role(method) is Role.ORCHESTRATOR
    authorize(caller(Role.ORCHESTRATOR), method)
    for role in (Role.READER, Role.EDITOR):
        with pytest.raises(PermissionDenied) as info:
            authorize(caller(role), method)
        assert info.value.reason == ROLE_FORBIDS


def test_each_role_allows_what_the_roles_below_it_do() -> None:
    assert [r for r in Role if Role.READER.allows(r)] == [Role.READER]
    assert [r for r in Role if Role.EDITOR.allows(r)] == [Role.READER, Role.EDITOR]
    assert [r for r in Role if Role.ORCHESTRATOR.allows(r)] == list(Role)


def test_a_refusal_names_the_role_held_and_the_role_needed() -> None:
    with pytest.raises(PermissionDenied) as info:
        require_role(caller(Role.READER), Role.EDITOR, "WriteBlock")
    error = info.value
    assert error.reason == "ROLE_FORBIDS"
    assert error.metadata == {"role": "reader", "required_role": "editor"}
    assert "WriteBlock" in error.message
    assert status_code(error).name == "PERMISSION_DENIED"
    assert to_status(error).code.name == "PERMISSION_DENIED"


def test_a_caller_without_a_role_given_is_an_orchestrator() -> None:
    assert Principal("acme", "alice").role is Role.ORCHESTRATOR


def test_a_remembered_key_keeps_its_role() -> None:
    keys = VerifiedKeys(5, clock=lambda: 0.0)
    keys.put("k1", b"hash", caller(Role.READER), verified_at=0.0)
    found = keys.get("k1", b"hash")
    assert found is not None
    assert found.role is Role.READER


def upsert(memories: Memories, role: Role, source: MemorySource, key: str = "k") -> object:
    return asyncio.run(memories.upsert(caller(role), MemoryWrite(AGENT, key, source, "v")))


@pytest.mark.parametrize(
    "source", [MemorySource.AUTO, MemorySource.DIRECTOR, MemorySource.MEMORIZE]
)
@pytest.mark.parametrize("role", [Role.READER, Role.EDITOR])
def test_only_an_orchestrator_upserts_a_memory_of_another_source_than_manual(
    source: MemorySource, role: Role
) -> None:
    store = FakeStore()
    with pytest.raises(PermissionDenied) as info:
        upsert(Memories(store), role, source)
    assert info.value.reason == ROLE_FORBIDS
    assert info.value.metadata == {"role": role.value, "required_role": "orchestrator"}
    assert not store.state.memories


def test_an_orchestrator_upserts_auto_and_director_and_an_editor_manual() -> None:
    memories = Memories(FakeStore())
    upsert(memories, Role.ORCHESTRATOR, MemorySource.AUTO, "a")
    upsert(memories, Role.ORCHESTRATOR, MemorySource.DIRECTOR, "d")
    upsert(memories, Role.EDITOR, MemorySource.MANUAL, "m")
    with pytest.raises(InvalidArgument):  # Memorize writes those, whatever the role
        upsert(memories, Role.ORCHESTRATOR, MemorySource.MEMORIZE, "z")


def test_an_editor_pins_and_deletes_an_auto_memory_but_never_edits_its_value() -> None:
    store = FakeStore()
    memories = Memories(store)
    editor = caller(Role.EDITOR)
    auto = store.add(editor, MemoryWrite(AGENT, "k", MemorySource.AUTO, "v"))
    assert asyncio.run(memories.pin(editor, auto.id, True)).pinned
    unpinned = asyncio.run(memories.update(editor, auto.id, MemoryPatch(pinned=False)))
    assert not unpinned.pinned
    with pytest.raises(FailedPrecondition) as info:
        asyncio.run(memories.update(editor, auto.id, MemoryPatch(value="edited")))
    assert info.value.reason == "READ_ONLY_MEMORY"
    asyncio.run(memories.delete(editor, auto.id))
    assert not store.state.memories
