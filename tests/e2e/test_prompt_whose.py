"""Whose and when, over real gRPC and a real PostgreSQL: the prompt names the user, the
agent and the workspace, the person who wrote a row (and only a person's key makes a
row a person's, now and as of a past instant), today's UTC day, a decision's card type;
a fact held in two scopes shows once; Recall's memories show no storage key."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
from google.protobuf import field_mask_pb2

from agent_memory.domain.identity import Role
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


def render(client: Client, agent: str, workspace: str, **kw: object) -> pb.RenderPromptResponse:
    request = pb.RenderPromptRequest(
        agent_id=agent,
        workspace_id=workspace or None,
        memory_policy=recall_pb2.MemoryPolicy(archival_mode=recall_pb2.ARCHIVAL_MODE_OFF),
        **kw,
    )
    response: pb.RenderPromptResponse = client.call(client.recall.RenderPrompt, request)
    return response


def section(response: pb.RenderPromptResponse, name: str) -> list[str]:
    (content,) = [s.content for s in response.sections if s.name == name]
    return content.splitlines()


def test_the_prompt_names_whose_each_fact_is_and_what_day_it_is(server: ServerThread) -> None:
    # ana writes through the panel's key (a person's); ben's orchestrator stores for him.
    with (
        server.client(user_id="ana", role=Role.EDITOR) as ana,
        server.client(ana.tenant_id, "ben") as ben,
    ):
        agent = memory_pb2.MemoryOwner(agent_id="harbor")
        workspace = memory_pb2.MemoryOwner(workspace_id="globex")
        enable_memory(ben, "harbor")
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
    # An orchestrator's words are stored for ben, not stated by him.
    assert rows in (
        [f"- **plan**: Business, annual [stored for ben, {day}]"] for day in {before, after}
    )


def marks(response: pb.RenderPromptResponse) -> list[str]:
    """Each agent memory row's mark without its day: ``tone: person ana``."""
    found = []
    for line in section(response, prompt.AGENT_MEMORY)[1:]:
        key = line.split("**")[1]
        found.append(f"{key}: {line.rsplit('[', 1)[1].split(',')[0]}")
    return found


def test_a_rewrite_by_an_orchestrator_is_no_longer_the_persons_and_the_past_keeps_its_marks(
    server: ServerThread, database_url: str
) -> None:
    with (
        server.client(user_id="ana", role=Role.EDITOR) as ana,
        server.client(ana.tenant_id, "ana") as agent,
        server.client(ana.tenant_id, "ben") as ben,
    ):
        owner = memory_pb2.MemoryOwner(agent_id="harbor")
        enable_memory(agent, "harbor")
        upsert(ana, "tone", "warm and brief", owner)
        upsert(ana, "editor", "vim", owner)
        upsert(agent, "shell", "zsh", owner)
        run = render(ana, "harbor", "")
        assert marks(run) == ["editor: person ana", "shell: stored for ana", "tone: person ana"]

        # The agent's key rewrites a person's value; the person rewrites the agent's
        # key and value whole; ben's key only adds a note to ana's words.
        def change(client: Client, key: str, path: str, value: str) -> None:
            listed = client.call(
                client.memory.ListMemories, memory_pb.ListMemoriesRequest(owner=owner)
            )
            (memory,) = [m for m in listed.memories if m.key == key]
            setattr(memory, path, value)
            request = memory_pb.UpdateMemoryRequest(
                memory=memory, update_mask=field_mask_pb2.FieldMask(paths=[path])
            )
            client.call(client.memory.UpdateMemory, request)

        change(agent, "tone", "value", "warm, brief, and in Portuguese")
        upsert(ana, "shell", "fish", owner)
        change(ben, "editor", "note", "asked on the onboarding call")
        now = render(ana, "harbor", "")
        assert marks(now) == ["editor: person ana", "shell: person ana", "tone: stored for ana"]

        # A render as of either instant gives the bytes it gave then.
        for then in (run, now):
            replayed = render(ana, "harbor", "", as_of_time=then.render_time)
            assert replayed.system_prompt == then.system_prompt

        # An event written before the writer was kept says nothing of it: the memory
        # reads as the rule of its day had it, a MANUAL memory as a person's.
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(
                "UPDATE memory_events SET new_memory = new_memory - 'text_by'"
                " WHERE tenant_id = %s AND new_memory ->> 'key' = 'shell'",
                (ana.tenant_id,),
            )
        old = render(ana, "harbor", "", as_of_time=run.render_time)
        assert marks(old) == ["editor: person ana", "shell: person ana", "tone: person ana"]


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
