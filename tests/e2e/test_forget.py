"""Forgetting on request, over real gRPC: an agent, a workspace and a user are
forgotten in one call each, and then every text column of every table is searched
for what they held. Only content-free tombstones (the audit events, emptied) and
other subjects' data remain; a dry run counts the same and changes nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from google.protobuf import struct_pb2
from psycopg import sql

from agentmemory.v1 import block_pb2, decision_pb2, memory_pb2
from agentmemory.v1 import block_service_pb2 as blocks_pb
from agentmemory.v1 import decision_service_pb2 as decisions_pb
from agentmemory.v1 import memory_service_pb2 as pb
from agentmemory.v1.decision_service_pb2_grpc import DecisionServiceStub
from tests.support import Client, ServerThread

pytestmark = pytest.mark.e2e

AGENT, OTHER_AGENT = "forgotten-agent", "kept-agent"
WORKSPACE, OTHER_WORKSPACE = "forgotten-ws", "kept-ws"
TEXT_TYPES = ("text", "character varying", "jsonb", "json", "ARRAY", "tsvector")


def holding(database_url: str, needle: str) -> dict[str, int]:
    """Rows whose text holds ``needle``, by table.column, across the whole schema."""
    found: dict[str, int] = {}
    with psycopg.connect(database_url) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND data_type = ANY (%s)",
            [list(TEXT_TYPES)],
        ).fetchall()
        assert len(columns) > 40, columns  # the schema's text columns, not a handful
        for table, column in columns:
            query = sql.SQL("SELECT count(*) FROM {} WHERE {}::text LIKE %s").format(
                sql.Identifier(table), sql.Identifier(column)
            )
            row = conn.execute(query, [f"%{needle}%"]).fetchone()
            if row and row[0]:
                found[f"{table}.{column}"] = row[0]
    return found


@pytest.fixture
def tenant(server: ServerThread) -> Iterator[tuple[Client, Client]]:
    """An orchestrator of a fresh tenant, and a second user of it."""
    tenant_id = f"tenant-{uuid.uuid4().hex[:10]}"
    with server.client(tenant_id, "ana") as ana, server.client(tenant_id, "bo") as bo:
        yield ana, bo


def upsert(c: Client, key: str, value: str, **owner: str) -> memory_pb2.Memory:
    request = pb.UpsertMemoryRequest(owner=memory_pb2.MemoryOwner(**owner), key=key, value=value)
    memory: memory_pb2.Memory = c.call(c.memory.UpsertMemory, request).memory
    return memory


def write_block(c: Client, label: int, content: str, agent: str | None) -> None:
    scope = memory_pb2.SCOPE_AGENT if agent else memory_pb2.SCOPE_USER
    key = {"label": label, "scope": scope, "agent_id": agent or ""}
    current = None
    try:
        current = c.call(c.blocks.GetBlock, blocks_pb.GetBlockRequest(**key)).block  # type: ignore[arg-type]
    except Exception:
        current = None
    request = blocks_pb.WriteBlockRequest(**key, content=content)  # type: ignore[arg-type]
    if current is not None:
        request.expected_updated_at.CopyFrom(current.updated_at)
    c.call(c.blocks.WriteBlock, request)


def seed_agent(c: Client, agent: str, mark: str) -> str:
    """Everything an agent can hold, each text carrying ``mark``; the id of a memory."""
    kept = upsert(c, "fact", f"{mark} likes tea", agent_id=agent)
    c.call(
        c.memory.UpdateMemory,
        pb.UpdateMemoryRequest(
            memory=memory_pb2.Memory(id=kept.id, value=f"{mark} likes coffee"),
            update_mask={"paths": ["value"]},
        ),
    )
    gone = upsert(c, "old", f"{mark} old fact", agent_id=agent)
    c.call(c.memory.DeleteMemory, pb.DeleteMemoryRequest(id=gone.id))
    # A memory drawn from a conversation, deleted since: its snapshot stays behind.
    drawn = c.call(
        c.memory.Memorize,
        pb.MemorizeRequest(
            owner=memory_pb2.MemoryOwner(agent_id=agent),
            content=f"{mark} once said",
            conversation=memory_pb2.Conversation(
                conversation_id=f"old-conv-{agent}",
                messages=[memory_pb2.ConversationMessage(role="user", content=f"{mark} once")],
            ),
        ),
    ).memory
    c.call(c.memory.DeleteMemory, pb.DeleteMemoryRequest(id=drawn.id))
    c.call(
        c.memory.Memorize,
        pb.MemorizeRequest(
            owner=memory_pb2.MemoryOwner(agent_id=agent),
            content=f"{mark} moved to Porto",
            tags=["home"],
            groundings=[memory_pb2.Grounding(message_position=0, quote=f"{mark} moved")],
            conversation=memory_pb2.Conversation(
                conversation_id=f"conv-{agent}",
                messages=[
                    memory_pb2.ConversationMessage(role="user", content=f"{mark} moved to Porto")
                ],
                raw_events=[f'{{"type":"text","text":"{mark} moved"}}'],
            ),
        ),
    )
    c.call(
        c.memory.RecordLearning,
        pb.RecordLearningRequest(chain_agent_ids=[agent], content=f"{mark} learning"),
    )
    for n in range(2):
        write_block(c, block_pb2.BLOCK_LABEL_CORE, f"{mark} core v{n}", agent)
    write_block(c, block_pb2.BLOCK_LABEL_ARCHIVAL, f"{mark} line one\n{mark} line two", agent)
    c.call(
        c.memory.UpdateAgentSettings,
        pb.UpdateAgentSettingsRequest(
            settings=memory_pb2.AgentSettings(
                agent_id=agent, memory_enabled=True, active_memory_enabled=True
            ),
            update_mask={"paths": ["memory_enabled", "active_memory_enabled"]},
        ),
    )
    c.call(
        c.memory.RecordRunSession,
        pb.RecordRunSessionRequest(
            agent_id=agent, run_id=f"run-{mark}", session_id_after=f"sess-{mark}"
        ),
    )
    decisions = DecisionServiceStub(c.channel)
    c.call(
        decisions.RegisterCardType,
        decisions_pb.RegisterCardTypeRequest(
            card_type=decision_pb2.CardType(
                name="trade",
                actions=["HOLD"],
                re_examinable=decision_pb2.RE_EXAMINABLE_UNTIL_RESOLVED,
            )
        ),
    )
    result = struct_pb2.Struct()
    result.update({"note": f"{mark} result"})
    decided = c.call(
        decisions.RecordDecision,
        decisions_pb.RecordDecisionRequest(
            decision=decision_pb2.Decision(
                run_id=f"decision-{agent}",
                agent_id=agent,
                card_type="trade",
                action="WAIT",
                summary=f"{mark} range",
                result=result,
            )
        ),
    ).decision
    c.call(
        decisions.RecordReexamination,
        decisions_pb.RecordReexaminationRequest(
            parent_decision_id=decided.id,
            run_id=f"reexam-{agent}",
            conviction_score=50,
            notes=f"{mark} unchanged",
            suggested_action="HOLD",
        ),
    )
    c.call(
        c.memory.ExtractMemories,
        pb.ExtractMemoriesRequest(
            agent_id=agent,
            session_id=f"s-{agent}",
            queued=True,
            transcript=f"user: {mark} I moved to Porto last month and I love it there.\n" * 8,
        ),
    )
    return kept.id


def test_forgetting_an_agent_leaves_none_of_its_text_anywhere(
    database_url: str, tenant: tuple[Client, Client]
) -> None:
    ana, bo = tenant
    mark, control = f"zqa{uuid.uuid4().hex[:12]}", f"zqk{uuid.uuid4().hex[:12]}"
    memory_id = seed_agent(ana, AGENT, mark)
    write_block(bo, block_pb2.BLOCK_LABEL_CORE, f"{mark} seen by bo", AGENT)
    seed_agent(ana, OTHER_AGENT, control)
    before, control_before = holding(database_url, mark), holding(database_url, control)
    assert {
        "memories.value",
        "memory_events.new_memory",
        "conversations.messages",
        "conversations.raw_events",
        "blocks.content",
        "block_versions.content",
        "archival_lines.content",
        "decisions.summary",
        "reexaminations.notes",
        "extraction_jobs.transcript",
        "agent_runs.session_id_after",
        "memory_groundings.quote",
    } <= set(before)

    dry = ana.call(
        ana.memory.ForgetAgent, pb.ForgetAgentRequest(agent_id=AGENT, validate_only=True)
    )
    assert holding(database_url, mark) == before
    done = ana.call(ana.memory.ForgetAgent, pb.ForgetAgentRequest(agent_id=AGENT))
    assert done.removed == dry.removed
    removed = done.removed
    assert (removed.memories, removed.conversations, removed.decisions) == (3, 2, 1)
    assert (removed.blocks, removed.archival_lines, removed.reexaminations) == (3, 2, 1)
    assert removed.block_versions >= 4
    assert removed.extraction_jobs == 1
    assert removed.audit_events == 8  # every event with a snapshot, deleted memories' too
    assert removed.agent_state == 3

    assert holding(database_url, mark) == {}
    assert holding(database_url, control) == control_before
    # The audit trail keeps when and by whom, nothing of what.
    events = ana.call(ana.memory.ListMemoryEvents, pb.ListMemoryEventsRequest(memory_id=memory_id))
    assert [(e.type, e.actor_user_id) for e in events.events] == [
        (memory_pb2.MEMORY_EVENT_TYPE_CREATED, "ana"),
        (memory_pb2.MEMORY_EVENT_TYPE_UPDATED, "ana"),
        (memory_pb2.MEMORY_EVENT_TYPE_DELETED, "ana"),
    ]
    assert all(not e.HasField("old_memory") and not e.HasField("new_memory") for e in events.events)
    # Forgetting again finds nothing.
    again = ana.call(ana.memory.ForgetAgent, pb.ForgetAgentRequest(agent_id=AGENT))
    assert again.removed == pb.ForgetCounts()


def test_forgetting_a_workspace_and_a_user(
    database_url: str, tenant: tuple[Client, Client]
) -> None:
    ana, bo = tenant
    mark, control = f"zqw{uuid.uuid4().hex[:12]}", f"zqk{uuid.uuid4().hex[:12]}"
    upsert(ana, "stack", f"{mark} uses Fastify", workspace_id=WORKSPACE)
    upsert(ana, "stack", f"{control} uses Django", workspace_id=OTHER_WORKSPACE)
    ana.call(
        ana.memory.ExtractMemories,
        pb.ExtractMemoriesRequest(
            agent_id=OTHER_AGENT,
            workspace_id=WORKSPACE,
            session_id="s-ws",
            queued=True,
            transcript=f"user: {mark} the team moved the API to Fastify last sprint.\n" * 8,
        ),
    )
    control_before = holding(database_url, control)
    done = ana.call(ana.memory.ForgetWorkspace, pb.ForgetWorkspaceRequest(workspace_id=WORKSPACE))
    removed = done.removed
    assert (removed.memories, removed.audit_events, removed.extraction_jobs) == (1, 1, 1)
    assert holding(database_url, mark) == {}
    assert holding(database_url, control) == control_before

    user_mark = f"zqu{uuid.uuid4().hex[:12]}"
    write_block(bo, block_pb2.BLOCK_LABEL_CORE, f"{user_mark} my notes", None)
    write_block(bo, block_pb2.BLOCK_LABEL_ARCHIVAL, f"{user_mark} agent notes", OTHER_AGENT)
    write_block(ana, block_pb2.BLOCK_LABEL_CORE, f"{control} ana's notes", None)
    control_before = holding(database_url, control)
    dry = bo.call(bo.memory.ForgetUser, pb.ForgetUserRequest(validate_only=True))
    assert (dry.removed.blocks, dry.removed.archival_lines) == (2, 1)
    assert "blocks.content" in holding(database_url, user_mark)
    done_user = bo.call(bo.memory.ForgetUser, pb.ForgetUserRequest())
    assert done_user.removed == dry.removed
    assert holding(database_url, user_mark) == {}
    assert holding(database_url, control) == control_before


def test_a_forget_names_its_bad_subject(tenant: tuple[Client, Client]) -> None:
    import grpc

    ana, _ = tenant
    for request, method in (
        (pb.ForgetAgentRequest(agent_id=""), ana.memory.ForgetAgent),
        (pb.ForgetWorkspaceRequest(workspace_id="a\nb"), ana.memory.ForgetWorkspace),
    ):
        with pytest.raises(grpc.RpcError) as refused:
            ana.call(method, request)
        assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
