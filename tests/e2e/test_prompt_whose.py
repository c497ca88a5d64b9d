"""Whose and when, over real gRPC and a real PostgreSQL: the prompt names the user, the
agent and the workspace, the person who wrote a row, today's UTC day, a decision's card
type; a fact held in two scopes shows once; Recall's memories show no storage key."""

from __future__ import annotations

from datetime import UTC, datetime

from agent_memory.render import prompt
from agentmemory.v1 import memory_pb2, recall_pb2
from agentmemory.v1 import memory_service_pb2 as memory_pb
from agentmemory.v1 import recall_service_pb2 as pb
from tests.support import Client, ServerThread


def upsert(client: Client, key: str, value: str, owner: memory_pb2.MemoryOwner) -> None:
    request = memory_pb.UpsertMemoryRequest(owner=owner, key=key, value=value)
    client.call(client.memory.UpsertMemory, request)


def enable_memory(client: Client, agent: str) -> None:
    settings = memory_pb2.AgentSettings(agent_id=agent, memory_enabled=True)
    request = memory_pb.UpdateAgentSettingsRequest(settings=settings)
    request.update_mask.paths.append("memory_enabled")
    client.call(client.memory.UpdateAgentSettings, request)


def render(client: Client, agent: str, workspace: str) -> pb.RenderPromptResponse:
    request = pb.RenderPromptRequest(
        agent_id=agent,
        workspace_id=workspace,
        memory_policy=recall_pb2.MemoryPolicy(archival_mode=recall_pb2.ARCHIVAL_MODE_OFF),
    )
    response: pb.RenderPromptResponse = client.call(client.recall.RenderPrompt, request)
    return response


def section(response: pb.RenderPromptResponse, name: str) -> list[str]:
    (content,) = [s.content for s in response.sections if s.name == name]
    return content.splitlines()


def test_the_prompt_names_whose_each_fact_is_and_what_day_it_is(server: ServerThread) -> None:
    with server.client(user_id="ana") as ana, server.client(ana.tenant_id, "ben") as ben:
        agent = memory_pb2.MemoryOwner(agent_id="harbor")
        workspace = memory_pb2.MemoryOwner(workspace_id="globex")
        enable_memory(ana, "harbor")
        upsert(ana, "tone", "warm and brief", agent)
        upsert(ben, "plan", "Business, annual", workspace)
        # The same fact in both scopes is shown once, under the agent.
        upsert(ben, "tone", "warm and brief", workspace)

        before = datetime.now(UTC).date().isoformat()
        response = render(ben, "harbor", "globex")
        after = datetime.now(UTC).date().isoformat()

    today = {prompt.today_line(before), prompt.today_line(after)}
    assert today & set(response.system_prompt.splitlines())
    assert section(response, prompt.AGENT_MEMORY)[0] == "## Agent Memory (agent harbor)"
    # Another user's prompt says who wrote the row: ana, not the reader.
    assert section(response, prompt.AGENT_MEMORY)[1].startswith(
        "- **tone**: warm and brief [person ana, "
    )
    heading, *rows = section(response, prompt.WORKSPACE_MEMORY)
    assert heading == "## Workspace Memory (workspace globex)"
    assert rows in (
        [f"- **plan**: Business, annual [person ben, {day}]"] for day in {before, after}
    )


def test_recall_shows_a_memorized_fact_without_its_storage_key(client: Client) -> None:
    owner = memory_pb2.MemoryOwner(agent_id="harbor")
    request = memory_pb.MemorizeRequest(
        owner=owner, content="Rollbacks use acme deploy rollback with the release tag."
    )
    client.call(client.memory.Memorize, request)
    upsert(client, "deploy-window", "Deploys happen on Tuesdays after the rollback drill.", owner)
    query = pb.RecallRequest(
        agent_id="harbor", query="how do rollbacks work", include_memories=True, limit=5
    )
    found = [m.content for m in client.call(client.recall.Recall, query)]
    assert "Rollbacks use acme deploy rollback with the release tag." in found
    assert "deploy-window: Deploys happen on Tuesdays after the rollback drill." in found
    assert not [c for c in found if c.startswith("memorize:")]
