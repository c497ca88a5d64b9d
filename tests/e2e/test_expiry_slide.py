"""Expiry that slides with use, over real gRPC and PostgreSQL: with an agent's or a
workspace's ``expiry_slide`` set, a render or a recall that shows a memory which
expires moves its expiry to the slide past the use, in the statement that marks the
use; a memory that never expires keeps no expiry, and an owner without a slide keeps
its expiries where they are. (As in ``test_last_used``, no index worker holds a row at
the use: the server here embeds only queries.)"""

from __future__ import annotations

from datetime import timedelta

import grpc
import pytest
from google.protobuf import duration_pb2

from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from agentmemory.v1 import recall_service_pb2 as recall_pb
from tests.support import Client, error_details

pytestmark = pytest.mark.e2e

WEEK = timedelta(days=7)
HOUR = timedelta(hours=1)
# The use's time and the new expiry are each read from the database's clock.
SAME = timedelta(seconds=1)


def duration(span: timedelta) -> duration_pb2.Duration:
    found = duration_pb2.Duration()
    found.FromTimedelta(span)
    return found


def agent_settings(client: Client, agent_id: str, slide: timedelta) -> memory_pb2.AgentSettings:
    request = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(
            agent_id=agent_id, memory_enabled=True, expiry_slide=duration(slide)
        )
    )
    request.update_mask.paths.extend(["memory_enabled", "expiry_slide"])
    settings: memory_pb2.AgentSettings = client.call(
        client.memory.UpdateAgentSettings, request
    ).settings
    return settings


def workspace_settings(
    client: Client, workspace_id: str, slide: timedelta
) -> memory_pb2.WorkspaceSettings:
    request = pb.UpdateWorkspaceSettingsRequest(
        settings=memory_pb2.WorkspaceSettings(
            workspace_id=workspace_id, expiry_slide=duration(slide)
        )
    )
    request.update_mask.paths.append("expiry_slide")
    settings: memory_pb2.WorkspaceSettings = client.call(
        client.memory.UpdateWorkspaceSettings, request
    ).settings
    return settings


def upsert(
    client: Client, owner: memory_pb2.MemoryOwner, key: str, value: str, ttl: timedelta | None
) -> memory_pb2.Memory:
    request = pb.UpsertMemoryRequest(owner=owner, key=key, value=value)
    if ttl is not None:
        request.ttl.CopyFrom(duration(ttl))
    memory: memory_pb2.Memory = client.call(client.memory.UpsertMemory, request).memory
    return memory


def get(client: Client, memory_id: str) -> memory_pb2.Memory:
    found: memory_pb2.Memory = client.call(
        client.memory.GetMemory, pb.GetMemoryRequest(id=memory_id)
    ).memory
    return found


def render(client: Client, agent_id: str, workspace_id: str | None = None) -> str:
    request = recall_pb.RenderPromptRequest(agent_id=agent_id, workspace_id=workspace_id)
    prompt: str = client.call(client.recall.RenderPrompt, request).system_prompt
    return prompt


def slid_by(memory: memory_pb2.Memory) -> timedelta:
    """How far past its last use the memory now expires."""
    assert memory.HasField("last_used_time")
    assert memory.HasField("expire_time")
    return memory.expire_time.ToDatetime() - memory.last_used_time.ToDatetime()


def test_a_render_moves_the_expiry_to_the_agents_slide_past_the_use(
    client: Client,
) -> None:
    agent_settings(client, "slider", WEEK)
    owner = memory_pb2.MemoryOwner(agent_id="slider")
    soon = upsert(client, owner, "standup", "Room 4 until noon", HOUR)
    forever = upsert(client, owner, "timezone", "Europe/Lisbon", None)
    # An expiry already later than the slide stays where it is.
    later = upsert(client, owner, "lease", "The lease runs to spring", timedelta(days=30))

    prompt = render(client, "slider")
    assert "Room 4 until noon" in prompt
    assert "Europe/Lisbon" in prompt

    used = get(client, soon.id)
    assert abs(slid_by(used) - WEEK) < SAME
    # A use is no edit: the version, and with it the etag, and updated_at stay.
    assert (used.etag, used.updated_at) == (soon.etag, soon.updated_at)
    kept = get(client, forever.id)
    assert kept.HasField("last_used_time")
    assert not kept.HasField("expire_time")
    assert get(client, later.id).expire_time == later.expire_time
    # No audit event for the move: the history is the write alone.
    events = client.call(
        client.memory.ListMemoryEvents, pb.ListMemoryEventsRequest(memory_id=soon.id)
    ).events
    assert len(events) == 1


def test_without_a_slide_a_render_leaves_the_expiry(client: Client) -> None:
    agent_settings(client, "still", timedelta(0))
    soon = upsert(client, memory_pb2.MemoryOwner(agent_id="still"), "standup", "Room 4", HOUR)
    assert "Room 4" in render(client, "still")
    used = get(client, soon.id)
    assert used.HasField("last_used_time")
    assert used.expire_time == soon.expire_time


def test_a_workspace_memory_slides_by_the_workspaces_slide(client: Client) -> None:
    # The agent's slide is the agent's memories': the workspace's own applies to its.
    agent_settings(client, "visitor", WEEK)
    stored = workspace_settings(client, "repo", timedelta(days=2))
    assert stored.expiry_slide.ToTimedelta() == timedelta(days=2)
    shared = upsert(
        client, memory_pb2.MemoryOwner(workspace_id="repo"), "ci", "CI runs on merge", HOUR
    )
    elsewhere = upsert(
        client, memory_pb2.MemoryOwner(workspace_id="other"), "ci", "CI runs nightly", HOUR
    )

    assert "CI runs on merge" in render(client, "visitor", workspace_id="repo")
    assert abs(slid_by(get(client, shared.id)) - timedelta(days=2)) < SAME
    assert "CI runs nightly" in render(client, "visitor", workspace_id="other")
    unmoved = get(client, elsewhere.id)
    assert unmoved.HasField("last_used_time")
    assert unmoved.expire_time == elsewhere.expire_time


def test_a_recall_moves_the_expiry_of_what_it_returns(client: Client) -> None:
    agent_settings(client, "finder", WEEK)
    owner = memory_pb2.MemoryOwner(agent_id="finder")
    harbor = upsert(client, owner, "harbor", "The harbor opens at nine", HOUR)
    request = recall_pb.RecallRequest(
        query="when does the harbor open", agent_id="finder", include_memories=True
    )
    returned = {m.memory_id for m in client.call(client.recall.Recall, request)}
    assert harbor.id in returned
    assert abs(slid_by(get(client, harbor.id)) - WEEK) < SAME


def test_settings_read_back_and_a_workspace_never_written_reads_as_the_defaults(
    client: Client,
) -> None:
    fresh = client.call(
        client.memory.GetWorkspaceSettings, pb.GetWorkspaceSettingsRequest(workspace_id="new")
    ).settings
    assert fresh == memory_pb2.WorkspaceSettings(workspace_id="new")
    agent_settings(client, "reader", WEEK)
    read = client.call(
        client.memory.GetAgentSettings, pb.GetAgentSettingsRequest(agent_id="reader")
    ).settings
    assert read.expiry_slide.ToTimedelta() == WEEK
    # Without a mask, a slide that is set is stored and the switches stay.
    unmasked = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id="reader", expiry_slide=duration(HOUR))
    )
    changed = client.call(client.memory.UpdateAgentSettings, unmasked).settings
    assert (changed.expiry_slide.ToTimedelta(), changed.memory_enabled) == (HOUR, True)
    # Named in the mask and unset, it is turned off, and reads as unset.
    off = pb.UpdateAgentSettingsRequest(settings=memory_pb2.AgentSettings(agent_id="reader"))
    off.update_mask.paths.append("expiry_slide")
    assert not client.call(client.memory.UpdateAgentSettings, off).settings.HasField("expiry_slide")


def test_an_update_that_changes_no_setting_leaves_when_they_last_changed(
    client: Client,
) -> None:
    stored = agent_settings(client, "steady", WEEK)
    same = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id="steady", expiry_slide=duration(WEEK))
    )
    assert client.call(client.memory.UpdateAgentSettings, same).settings == stored
    nothing = pb.UpdateAgentSettingsRequest(settings=memory_pb2.AgentSettings(agent_id="steady"))
    assert client.call(client.memory.UpdateAgentSettings, nothing).settings == stored
    workspace = pb.UpdateWorkspaceSettingsRequest(
        settings=memory_pb2.WorkspaceSettings(workspace_id="steady", expiry_slide=duration(WEEK))
    )
    first = client.call(client.memory.UpdateWorkspaceSettings, workspace).settings
    assert first.HasField("updated_at")
    assert client.call(client.memory.UpdateWorkspaceSettings, workspace).settings == first
    # A change is written, and says when.
    moved = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id="steady", expiry_slide=duration(HOUR))
    )
    changed = client.call(client.memory.UpdateAgentSettings, moved).settings
    assert changed.expiry_slide.ToTimedelta() == HOUR
    assert changed.updated_at != stored.updated_at


@pytest.mark.parametrize(
    ("slide", "said"),
    [
        (duration_pb2.Duration(seconds=-1), "from 0 to 3650 days"),
        (duration_pb2.Duration(seconds=3651 * 86_400), "from 0 to 3650 days"),
        (duration_pb2.Duration(seconds=1, nanos=-5), "a valid duration"),
    ],
)
def test_a_slide_out_of_range_is_refused_naming_the_field(
    client: Client, slide: duration_pb2.Duration, said: str
) -> None:
    agent = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id="bad", expiry_slide=slide)
    )
    workspace = pb.UpdateWorkspaceSettingsRequest(
        settings=memory_pb2.WorkspaceSettings(workspace_id="bad", expiry_slide=slide)
    )
    for method, request in (
        (client.memory.UpdateAgentSettings, agent),
        (client.memory.UpdateWorkspaceSettings, workspace),
    ):
        with pytest.raises(grpc.RpcError) as refused:
            client.call(method, request)
        details = error_details(refused.value)
        assert details.code is grpc.StatusCode.INVALID_ARGUMENT
        assert list(details.violations) == ["settings.expiry_slide"]
        assert said in details.violations["settings.expiry_slide"]


def test_a_mask_naming_what_a_workspace_does_not_set_is_refused(client: Client) -> None:
    request = pb.UpdateWorkspaceSettingsRequest(
        settings=memory_pb2.WorkspaceSettings(workspace_id="repo")
    )
    request.update_mask.paths.append("memory_enabled")
    with pytest.raises(grpc.RpcError) as refused:
        client.call(client.memory.UpdateWorkspaceSettings, request)
    details = error_details(refused.value)
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert list(details.violations) == ["update_mask"]
