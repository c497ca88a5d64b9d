"""Director learnings over real gRPC and PostgreSQL: RecordLearning stores a read-only
DIRECTOR row on the chain's first agent under a fresh timestamped key; ListLearnings reads
the newest back across the whole chain."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime

import grpc
import pytest

from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.e2e.test_read_only_and_concurrency import callers_of, race
from tests.support import Client, ErrorDetails, ServerThread, error_details

KEY = re.compile(r"director:learning:(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)(#\d+)?")


def record(client: Client, chain: list[str], content: str) -> memory_pb2.Memory:
    request = pb.RecordLearningRequest(chain_agent_ids=chain, content=content)
    memory: memory_pb2.Memory = client.call(client.memory.RecordLearning, request).memory
    return memory


def learnings(client: Client, chain: list[str], limit: int = 0) -> list[memory_pb2.Memory]:
    request = pb.ListLearningsRequest(chain_agent_ids=chain, limit=limit)
    return list(client.call(client.memory.ListLearnings, request).memories)


def listed(client: Client, agent: str) -> list[memory_pb2.Memory]:
    request = pb.ListMemoriesRequest(owner=memory_pb2.MemoryOwner(agent_id=agent), page_size=1000)
    return list(client.call(client.memory.ListMemories, request).memories)


def failure(call: Callable[[], object]) -> ErrorDetails:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return error_details(info.value)


# --- RecordLearning ---------------------------------------------------------------------


def test_a_learning_is_a_read_only_director_row_on_the_first_agent(client: Client) -> None:
    memory = record(client, ["lead", "helper", "reviewer"], "the repo uses pnpm, not npm")
    assert memory.source == memory_pb2.MEMORY_SOURCE_DIRECTOR
    assert memory.read_only is True
    assert memory.scope == memory_pb2.SCOPE_AGENT
    assert memory.agent_id == "lead"
    assert memory.workspace_id == ""
    assert memory.value == "the repo uses pnpm, not npm"
    assert memory.pinned is False
    assert memory.importance == 0

    match = KEY.fullmatch(memory.key)
    assert match, memory.key
    stamp = datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert stamp.tzinfo is UTC

    assert [m.id for m in listed(client, "lead")] == [memory.id]
    assert listed(client, "helper") == []
    assert listed(client, "reviewer") == []
    stored = client.call(client.memory.GetMemory, pb.GetMemoryRequest(id=memory.id)).memory
    assert stored == memory


def test_learnings_recorded_back_to_back_get_distinct_keys(client: Client) -> None:
    recorded = [record(client, ["lead"], f"learning {i}") for i in range(30)]
    keys = [m.key for m in recorded]
    assert len(set(keys)) == 30
    assert all(KEY.fullmatch(k) for k in keys)
    assert len(listed(client, "lead")) == 30


def test_concurrent_learnings_all_get_distinct_keys(
    server: ServerThread, client: Client, database_url: str
) -> None:
    with callers_of(server, client, 10) as callers:
        recorded = race(
            database_url,
            "memories",
            callers,
            lambda c: record(c, ["lead", "helper"], f"learned by {c.user_id}"),
        )
    assert len({m.key for m in recorded}) == 10
    assert len({m.id for m in recorded}) == 10
    assert all(KEY.fullmatch(m.key) for m in recorded)
    assert {m.value for m in recorded} == {f"learned by writer-{i}" for i in range(10)}
    assert {m.id for m in listed(client, "lead")} == {m.id for m in recorded}
    assert {m.id for m in learnings(client, ["lead"])} == {m.id for m in recorded}


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (pb.RecordLearningRequest(chain_agent_ids=[], content="c"), "chain_agent_ids"),
        (pb.RecordLearningRequest(chain_agent_ids=[""], content="c"), "chain_agent_ids[0]"),
        (pb.RecordLearningRequest(chain_agent_ids=["a", ""], content="c"), "chain_agent_ids[1]"),
        (pb.RecordLearningRequest(chain_agent_ids=["a"], content=""), "content"),
        (pb.RecordLearningRequest(chain_agent_ids=["a"], content="c" * 2001), "content"),
    ],
    ids=["empty-chain", "empty-first-agent", "empty-later-agent", "empty-content", "too-long"],
)
def test_malformed_learnings_are_refused_and_nothing_is_written(
    client: Client, request_: pb.RecordLearningRequest, field: str
) -> None:
    details = failure(lambda: client.call(client.memory.RecordLearning, request_))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert field in details.violations
    assert listed(client, "a") == []
    assert learnings(client, ["a"]) == []


# --- ListLearnings ----------------------------------------------------------------------


def test_learnings_are_read_across_the_chain_newest_first(client: Client) -> None:
    first_agents = ["a", "b", "a", "c", "b", "a"]
    recorded = [
        record(client, [lead, "x"], f"learning {i} on {lead}")
        for i, lead in enumerate(first_agents)
    ]
    newest_first = [m.id for m in reversed(recorded)]
    assert [m.id for m in learnings(client, ["a", "b", "c"])] == newest_first
    assert [m.id for m in learnings(client, ["c", "a", "b"])] == newest_first
    assert [m.id for m in learnings(client, ["b"])] == [
        m.id for m in reversed(recorded) if m.agent_id == "b"
    ]
    assert [m.id for m in learnings(client, ["a", "b", "c"], limit=2)] == newest_first[:2]
    assert learnings(client, ["x"]) == [], "learnings land on the first agent only"
    assert learnings(client, ["z"]) == []


def test_listing_holds_director_learnings_only(client: Client) -> None:
    learning = record(client, ["a"], "a real learning")
    # A lookalike of another source cannot be written: the prefix is the director's.
    for source in (memory_pb2.MEMORY_SOURCE_MANUAL, memory_pb2.MEMORY_SOURCE_AUTO):
        with pytest.raises(grpc.RpcError) as refused:
            client.call(
                client.memory.UpsertMemory,
                pb.UpsertMemoryRequest(
                    owner=memory_pb2.MemoryOwner(agent_id="a"),
                    key=f"director:learning:2000-01-01T00:00:00.00000{source}Z",
                    value="lookalike",
                    source=source,
                ),
            )
        assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    client.call(
        client.memory.UpsertMemory,
        pb.UpsertMemoryRequest(
            owner=memory_pb2.MemoryOwner(workspace_id="a"),
            key="director:learning:2000-01-01T00:00:00.000000Z",
            value="workspace lookalike",
            source=memory_pb2.MEMORY_SOURCE_DIRECTOR,
        ),
    )
    assert [m.id for m in learnings(client, ["a"])] == [learning.id]


def test_the_default_limit_is_20(client: Client) -> None:
    recorded = [record(client, ["lead"], f"learning {i}") for i in range(25)]
    assert [m.id for m in learnings(client, ["lead"])] == [m.id for m in reversed(recorded)][:20]


def test_the_limit_is_capped_at_100(client: Client) -> None:
    recorded = [record(client, ["lead"], f"learning {i}") for i in range(105)]
    newest = [m.id for m in reversed(recorded)]
    assert [m.id for m in learnings(client, ["lead"], limit=150)] == newest[:100]
    assert [m.id for m in learnings(client, ["lead"], limit=100)] == newest[:100]
    assert [m.id for m in learnings(client, ["lead"], limit=30)] == newest[:30]


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (pb.ListLearningsRequest(chain_agent_ids=["a"], limit=-1), "limit"),
        (pb.ListLearningsRequest(chain_agent_ids=[]), "chain_agent_ids"),
        (pb.ListLearningsRequest(chain_agent_ids=[""]), "chain_agent_ids[0]"),
        (pb.ListLearningsRequest(chain_agent_ids=["a", "b", ""]), "chain_agent_ids[2]"),
    ],
    ids=["negative-limit", "empty-chain", "empty-agent", "empty-later-agent"],
)
def test_malformed_listing_is_invalid(
    client: Client, request_: pb.ListLearningsRequest, field: str
) -> None:
    details = failure(lambda: client.call(client.memory.ListLearnings, request_))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert field in details.violations


def test_another_tenant_sees_no_learnings(client: Client, other_client: Client) -> None:
    record(client, ["lead", "helper"], "mine")
    assert learnings(other_client, ["lead", "helper"]) == []
    assert listed(other_client, "lead") == []
    theirs = record(other_client, ["lead"], "theirs")
    assert [m.value for m in learnings(client, ["lead"])] == ["mine"]
    assert [m.id for m in learnings(other_client, ["lead"])] == [theirs.id]


# --- agent settings ---------------------------------------------------------------------


def test_memory_enabled_defaults_off_and_reads_back(client: Client) -> None:
    def enabled(agent: str) -> bool:
        request = pb.GetAgentSettingsRequest(agent_id=agent)
        value: bool = client.call(client.memory.GetAgentSettings, request).settings.memory_enabled
        return value

    record(client, ["lead"], "learnings do not turn memory on")
    assert enabled("lead") is False
    client.call(
        client.memory.UpdateAgentSettings,
        pb.UpdateAgentSettingsRequest(
            settings=memory_pb2.AgentSettings(agent_id="lead", memory_enabled=True)
        ),
    )
    assert enabled("lead") is True
    assert enabled("helper") is False
