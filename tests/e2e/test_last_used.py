"""``Memory.last_used_time`` over real gRPC and PostgreSQL: set when a render shows a
memory or a recall returns it, in the same statement, without touching its version.

A use is a hint, skipped while a write holds the row: the server here embeds no memory
(as a serving process does not), so no index worker's write holds one at a use."""

from __future__ import annotations

import pytest

from agentmemory.v1 import memory_pb2, recall_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from agentmemory.v1 import recall_service_pb2 as recall_pb
from tests.support import Client

pytestmark = pytest.mark.e2e

AGENT = memory_pb2.MemoryOwner(agent_id="used")


def upsert(client: Client, key: str, value: str, owner: memory_pb2.MemoryOwner = AGENT) -> str:
    request = pb.UpsertMemoryRequest(owner=owner, key=key, value=value)
    memory: memory_pb2.Memory = client.call(client.memory.UpsertMemory, request).memory
    return memory.id


def get(client: Client, memory_id: str) -> memory_pb2.Memory:
    found: memory_pb2.Memory = client.call(
        client.memory.GetMemory, pb.GetMemoryRequest(id=memory_id)
    ).memory
    return found


def enable(client: Client, agent_id: str) -> None:
    request = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id=agent_id, memory_enabled=True)
    )
    request.update_mask.paths.append("memory_enabled")
    client.call(client.memory.UpdateAgentSettings, request)


def test_a_rendered_memory_is_marked_used_without_a_new_version(
    client: Client,
) -> None:
    enable(client, "used")
    shown = upsert(client, "tone", "warm and brief")
    other = upsert(client, "tone", "formal", memory_pb2.MemoryOwner(agent_id="elsewhere"))
    before = get(client, shown)
    assert not before.HasField("last_used_time")

    client.call(client.recall.RenderPrompt, recall_pb.RenderPromptRequest(agent_id="used"))
    after = get(client, shown)
    assert after.HasField("last_used_time")
    assert after.last_used_time.ToDatetime() >= before.updated_at.ToDatetime()
    assert (after.etag, after.updated_at) == (before.etag, before.updated_at)
    assert not get(client, other).HasField("last_used_time")
    listed = client.call(client.memory.ListMemories, pb.ListMemoriesRequest(owner=AGENT))
    assert [m.last_used_time for m in listed.memories] == [after.last_used_time]

    # Within the minute, another use writes nothing.
    client.call(client.recall.RenderPrompt, recall_pb.RenderPromptRequest(agent_id="used"))
    assert get(client, shown).last_used_time == after.last_used_time


def test_a_memory_a_recall_returns_is_marked_and_one_it_does_not_is_left(
    client: Client,
) -> None:
    found = upsert(client, "harbor", "The harbor opens at nine")
    missed = upsert(client, "weather", "Sunny all week")
    request = recall_pb.RecallRequest(
        query="when does the harbor open", agent_id="used", include_memories=True
    )
    returned = {m.memory_id for m in client.call(client.recall.Recall, request)}
    assert found in returned
    # Marked exactly when returned (by meaning, the other may come back too, once its
    # vector is stored).
    for memory_id in (found, missed):
        assert get(client, memory_id).HasField("last_used_time") is (memory_id in returned)


def test_a_memory_of_an_agent_whose_memory_is_off_is_not_marked(client: Client) -> None:
    quiet = upsert(client, "tone", "calm", memory_pb2.MemoryOwner(agent_id="quiet"))
    policy = recall_pb2.MemoryPolicy(archival_mode=recall_pb2.ARCHIVAL_MODE_OFF)
    client.call(
        client.recall.RenderPrompt,
        recall_pb.RenderPromptRequest(agent_id="quiet", memory_policy=policy),
    )
    assert not get(client, quiet).HasField("last_used_time")
