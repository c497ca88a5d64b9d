"""``agent-memory export`` and ``import`` as an operator runs them: a tenant's records
written out, read into another tenant, exported again and compared; a second import
changes nothing; a bad file is one line, exit status 2, and nothing written."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import struct_pb2, timestamp_pb2

from agentmemory.v1 import block_pb2, decision_pb2, memory_pb2
from agentmemory.v1 import block_service_pb2 as blocks_pb
from agentmemory.v1 import decision_service_pb2 as decisions_pb
from agentmemory.v1 import memory_service_pb2 as pb
from agentmemory.v1 import recall_service_pb2 as recall_pb
from agentmemory.v1.decision_service_pb2_grpc import DecisionServiceStub
from tests.support import Client, ServerThread, cli

pytestmark = pytest.mark.e2e

AGENT = "exported-agent"


def seed(c: Client, bo: Client) -> None:
    owner = memory_pb2.MemoryOwner(agent_id=AGENT)
    later = timestamp_pb2.Timestamp()
    later.FromDatetime(datetime.now(UTC) + timedelta(days=3))
    tz = c.call(
        c.memory.UpsertMemory,
        pb.UpsertMemoryRequest(
            owner=owner,
            key="tz",
            value="Europe/Lisbon",
            pinned=True,
            importance=70,
            expire_time=later,
        ),
    )
    c.call(
        c.memory.UpsertMemory,
        pb.UpsertMemoryRequest(
            owner=memory_pb2.MemoryOwner(workspace_id="team"), key="stack", value="Fastify"
        ),
    )
    metadata = struct_pb2.Struct()
    metadata.update({"origin": "chat", "turn": 3})
    c.call(
        c.memory.Memorize,
        pb.MemorizeRequest(
            owner=owner,
            content="Ana moved to Porto in May.",
            tags=["home"],
            confidence=0.8,
            metadata=metadata,
            groundings=[
                memory_pb2.Grounding(message_position=0, quote="moved to Porto"),
                memory_pb2.Grounding(raw_event_index=0),
            ],
            conversation=memory_pb2.Conversation(
                conversation_id="conv-1",
                messages=[memory_pb2.ConversationMessage(role="user", content="I moved to Porto")],
                raw_events=['{"type":"text","text":"I moved to Porto"}'],
            ),
            supersedes=[tz.memory.id],
        ),
    )
    for client, label, scope, content in (
        (c, block_pb2.BLOCK_LABEL_CORE, memory_pb2.SCOPE_USER, "Ana, SRE."),
        (
            c,
            block_pb2.BLOCK_LABEL_ARCHIVAL,
            memory_pb2.SCOPE_AGENT,
            "staging is on 5433\nDeploys on Tuesdays",
        ),
        (bo, block_pb2.BLOCK_LABEL_CORE, memory_pb2.SCOPE_AGENT, "Bo reviews deploys."),
    ):
        client.call(
            client.blocks.WriteBlock,
            blocks_pb.WriteBlockRequest(
                label=label,
                scope=scope,
                agent_id=AGENT if scope == memory_pb2.SCOPE_AGENT else "",
                content=content,
            ),
        )
    decisions = DecisionServiceStub(c.channel)
    c.call(
        decisions.RegisterCardType,
        decisions_pb.RegisterCardTypeRequest(
            card_type=decision_pb2.CardType(
                name="trade",
                actions=["HOLD", "CLOSE"],
                re_examinable=decision_pb2.RE_EXAMINABLE_ALWAYS,
            )
        ),
    )
    result = struct_pb2.Struct()
    result.update({"symbol": "ACME", "confidence": 0.4})
    decided = c.call(
        decisions.RecordDecision,
        decisions_pb.RecordDecisionRequest(
            decision=decision_pb2.Decision(
                run_id="run-1",
                agent_id=AGENT,
                card_type="trade",
                action="WAIT",
                summary="range unresolved",
                result=result,
            )
        ),
    ).decision
    c.call(
        decisions.RecordReexamination,
        decisions_pb.RecordReexaminationRequest(
            parent_decision_id=decided.id,
            run_id="run-2",
            conviction_score=60,
            notes="Still in range.",
            suggested_action="HOLD",
        ),
    )


def export(database_url: str, tenant: str, path: Path) -> list[dict[str, Any]]:
    done = cli("export", "--tenant", tenant, "--database-url", database_url)
    assert done.returncode == 0, done.stderr
    path.write_text(done.stdout, encoding="utf-8")
    header, *records = (json.loads(line) for line in done.stdout.splitlines())
    assert (header["format"], header["version"], header["tenant"]) == (
        "agent-memory-export",
        1,
        tenant,
    )
    return records


def test_an_export_read_into_another_tenant_exports_the_same(
    server: ServerThread, database_url: str, tmp_path: Path
) -> None:
    source, target = (f"tenant-{uuid.uuid4().hex[:10]}" for _ in range(2))
    with server.client(source, "ana") as ana, server.client(source, "bo") as bo:
        seed(ana, bo)
    records = export(database_url, source, tmp_path / "source.jsonl")
    kinds = [r["kind"] for r in records]
    assert kinds == [
        "card_type",
        "conversation",
        "memory",
        "memory",
        "memory",
        "block",
        "block",
        "block",
        "decision",
    ]
    memorized = next(r for r in records if r["kind"] == "memory" and r["source"] == "memorize")
    assert memorized["groundings"][0]["quote"] == "moved to Porto"
    assert memorized["tags"] == ["home"]
    conversation = next(r for r in records if r["kind"] == "conversation")
    assert conversation["raw_events"] == ['{"type":"text","text":"I moved to Porto"}']
    superseded = next(r for r in records if r["kind"] == "memory" and r["key"] == "tz")
    assert superseded["superseded_by"] == memorized["id"]
    assert next(r for r in records if r["kind"] == "decision")["reexaminations"][0]["notes"] == (
        "Still in range."
    )

    imported = cli(
        "import", "--tenant", target, str(tmp_path / "source.jsonl"), "--database-url", database_url
    )
    assert imported.returncode == 0, imported.stderr
    assert "memory: 3 imported, 0 already there" in imported.stderr
    assert export(database_url, target, tmp_path / "target.jsonl") == records

    again = cli(
        "import", "--tenant", target, str(tmp_path / "source.jsonl"), "--database-url", database_url
    )
    assert again.returncode == 0, again.stderr
    assert "memory: 0 imported, 3 already there" in again.stderr
    assert "block: 0 imported, 3 already there" in again.stderr
    assert export(database_url, target, tmp_path / "again.jsonl") == records

    # The imported tenant works as the original: archival lines rebuilt, recall finds them.
    with server.client(target, "ana") as ana:
        matches = list(
            ana.call(
                ana.recall.Recall, recall_pb.RecallRequest(query="staging port", agent_id=AGENT)
            )
        )
        assert matches[0].content == "staging is on 5433"
        events = ana.call(
            ana.memory.ListMemoryEvents,
            pb.ListMemoryEventsRequest(memory_id=memorized["id"]),
        ).events
        assert [(e.type, e.actor_user_id) for e in events] == [
            (memory_pb2.MEMORY_EVENT_TYPE_CREATED, "agent-memory:import")
        ]


HEADER = '{"format": "agent-memory-export", "version": 1}\n'


def _memory(**fields: object) -> str:
    """A memory record line, with what ``fields`` change."""
    record = {
        "kind": "memory",
        "id": "9b2f2a70-5d0a-4a39-9f55-6f3f0f7f1a11",
        "scope": "agent",
        "owner_id": "a",
        "key": "k",
        "value": "v",
        "source": "manual",
        "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": "2026-01-01T00:00:00+00:00",
        **fields,
    }
    return json.dumps(record) + "\n"


def test_a_memory_without_pinned_or_importance_takes_their_defaults(
    database_url: str, tmp_path: Path
) -> None:
    tenant = f"tenant-{uuid.uuid4().hex[:10]}"
    path = tmp_path / "lean.jsonl"
    path.write_text(HEADER + _memory(), encoding="utf-8")
    done = cli("import", "--tenant", tenant, str(path), "--database-url", database_url)
    assert done.returncode == 0, done.stderr
    (record,) = export(database_url, tenant, tmp_path / "out.jsonl")
    assert (record["pinned"], record["importance"]) == (False, 0)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "the file is empty"),
        ('{"format": "something-else"}\n', "not an agent-memory-export header"),
        ('{"format": "agent-memory-export", "version": 9}\n', "format version 9"),
        ('{"format": "agent-memory-export", "version": 1}\n{"kind": "spell"}\n', "unknown kind"),
        ('{"format": "agent-memory-export", "version": 1}\n{"kind": "memory"}\n', "needs id"),
        ('{"format": "agent-memory-export", "version": 1}\nnot json\n', ":2:"),
        (
            '{"format": "agent-memory-export", "version": 1}\n{"kind": "block", "user_id": "u", '
            '"scope": "galaxy", "agent_id": "", "label": "core", "content": "x"}\n',
            "'galaxy' is not a valid BlockScope",
        ),
        (
            '{"format": "agent-memory-export", "version": 1}\n{"kind": "conversation", '
            '"provider": "p", "conversation_id": "c", "messages": [], "raw_events": [1]}\n',
            "raw_events must be a list of strings",
        ),
        (
            '{"format": "agent-memory-export", "version": 1}\n{"kind": "block", "user_id": "u", '
            '"scope": "user", "agent_id": "", "label": "core", '
            '"content": "deploy key AKIA' + '4HFT2QWRZ7ZXCVBN"}\n',
            "content",
        ),
        # A credential named only by its key, as the service's own scan catches it.
        (HEADER + _memory(key="db-password", value="Tr0ub4dor&3"), "value"),
        (HEADER + _memory(metadata={"password": "Tr0ub4dor&3"}), "metadata.password"),
        # What the service would not store, and a read could not answer for.
        (HEADER + _memory(metadata=[1, 2]), "metadata must be a JSON object"),
        (HEADER + _memory(confidence=7.5), "confidence: must be between 0 and 1"),
        (HEADER + _memory(key="bell\x07"), "key:"),
        (HEADER + _memory(tags=["t"] * 33), "tags: at most 32 tags"),
    ],
)
def test_a_bad_file_is_one_line_and_imports_nothing(
    database_url: str, tmp_path: Path, content: str, expected: str
) -> None:
    tenant = f"tenant-{uuid.uuid4().hex[:10]}"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content, encoding="utf-8")
    done = cli("import", "--tenant", tenant, str(bad), "--database-url", database_url)
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("agent-memory:")]
    assert len(errors) == 1, done.stderr
    assert expected in errors[0]
    assert "nothing was imported" in errors[0]
    assert "AKIA" not in done.stderr  # a refused secret is named by its field, never shown
    assert export(database_url, tenant, tmp_path / "empty.jsonl") == []


def test_a_record_the_database_refuses_rolls_the_whole_import_back(
    database_url: str, tmp_path: Path
) -> None:
    tenant = f"tenant-{uuid.uuid4().hex[:10]}"
    good = {
        "kind": "card_type",
        "name": "trade",
        "re_examinable": "always",
        "actions": ["HOLD"],
        "decision_actions": [],
    }
    broken = {
        "kind": "memory",
        "id": str(uuid.uuid4()),
        "scope": "agent",
        "owner_id": "a",
        "key": "k",
        "value": "v",
        "source": "not-a-source",
        "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": "2026-01-01T00:00:00+00:00",
    }
    path = tmp_path / "half.jsonl"
    lines = [{"format": "agent-memory-export", "version": 1}, good, broken]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    done = cli("import", "--tenant", tenant, str(path), "--database-url", database_url)
    assert done.returncode == 2
    assert f"{path}:3:" in done.stderr
    assert export(database_url, tenant, tmp_path / "after.jsonl") == []
