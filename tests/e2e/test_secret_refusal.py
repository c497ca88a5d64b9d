"""No secrets at rest, over real gRPC and PostgreSQL: every write path refuses a value
carrying a credential (INVALID_ARGUMENT, SECRET_IN_VALUE, the kind named, the secret never
echoed) and writes nothing; ordinary values that merely look technical are accepted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import grpc
import psycopg
import pytest
from google.protobuf import field_mask_pb2, json_format
from psycopg import sql

from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import Client, error_details
from tests.unit.test_secrets import BENIGN, SECRETS

AGENT = "agent-sec"
OWNER = memory_pb2.MemoryOwner(agent_id=AGENT)


@dataclass(frozen=True)
class WritePath:
    """One way of writing text into memory, and where the text lands when accepted."""

    field: str
    write: Callable[[Client, str], None]
    stored: Callable[[Client], str]  # reads back what the accepted write stored
    existing_rows: int = 0  # rows the path needs before the write


def listed(client: Client) -> list[memory_pb2.Memory]:
    response = client.call(
        client.memory.ListMemories, pb.ListMemoriesRequest(owner=OWNER, page_size=1000)
    )
    return list(response.memories)


def only(client: Client) -> memory_pb2.Memory:
    rows = listed(client)
    assert len(rows) == 1
    return rows[0]


def upsert_value(client: Client, text: str) -> None:
    client.call(
        client.memory.UpsertMemory, pb.UpsertMemoryRequest(owner=OWNER, key="note", value=text)
    )


def upsert_key(client: Client, text: str) -> None:
    client.call(
        client.memory.UpsertMemory, pb.UpsertMemoryRequest(owner=OWNER, key=text, value="v")
    )


def update_value(client: Client, text: str) -> None:
    if not listed(client):
        client.call(
            client.memory.UpsertMemory,
            pb.UpsertMemoryRequest(owner=OWNER, key="note", value="before"),
        )
    memory = only(client)
    client.call(
        client.memory.UpdateMemory,
        pb.UpdateMemoryRequest(
            memory=memory_pb2.Memory(id=memory.id, value=text),
            update_mask=field_mask_pb2.FieldMask(paths=["value"]),
        ),
    )


def memorize(client: Client, **kw: object) -> None:
    kw.setdefault("content", "a memorized fact")
    client.call(client.memory.Memorize, pb.MemorizeRequest(owner=OWNER, **kw))


def memorize_content(client: Client, text: str) -> None:
    memorize(client, content=text)


def memorize_key(client: Client, text: str) -> None:
    memorize(client, memory_key=text)


def memorize_quote(client: Client, text: str) -> None:
    memorize(
        client,
        groundings=[memory_pb2.Grounding(message_position=0, quote=text)],
        conversation=memory_pb2.Conversation(
            conversation_id="conv-quote",
            messages=[memory_pb2.ConversationMessage(role="user", content="hello")],
        ),
    )


def memorize_metadata(client: Client, text: str) -> None:
    memorize(client, metadata={"note": text})


def memorize_message(client: Client, text: str) -> None:
    memorize(
        client,
        conversation=memory_pb2.Conversation(
            provider="anthropic",
            conversation_id="conv-sec",
            messages=[
                memory_pb2.ConversationMessage(role="user", content="hello"),
                memory_pb2.ConversationMessage(role="assistant", content=text),
            ],
        ),
    )


def record_learning(client: Client, text: str) -> None:
    client.call(
        client.memory.RecordLearning,
        pb.RecordLearningRequest(chain_agent_ids=[AGENT], content=text),
    )


def message_of(client: Client, database_url: str) -> str:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT messages FROM conversations WHERE tenant_id = %s", (client.tenant_id,)
        ).fetchone()
    assert row is not None
    content: str = row[0][1]["content"]
    return content


PATHS = {
    "upsert-value": WritePath("value", upsert_value, lambda c: only(c).value),
    "upsert-key": WritePath("key", upsert_key, lambda c: only(c).key),
    "update-value": WritePath(
        "memory.value", update_value, lambda c: only(c).value, existing_rows=1
    ),
    "memorize-content": WritePath("content", memorize_content, lambda c: only(c).value),
    "memorize-key": WritePath("memory_key", memorize_key, lambda c: only(c).key),
    "memorize-quote": WritePath(
        "groundings[0].quote", memorize_quote, lambda c: only(c).groundings[0].quote
    ),
    "memorize-metadata": WritePath(
        'metadata.fields["note"]',
        memorize_metadata,
        lambda c: json_format.MessageToDict(only(c).metadata)["note"],
    ),
    "memorize-conversation": WritePath(
        "conversation.messages[1].content", memorize_message, lambda c: ""
    ),
    "record-learning": WritePath("content", record_learning, lambda c: only(c).value),
}


def counts(database_url: str, tenant_id: str) -> dict[str, int]:
    """Rows the tenant holds in every table a memory write can touch."""
    found: dict[str, int] = {}
    with psycopg.connect(database_url) as conn:
        for table in ("memories", "memory_events", "conversations", "memory_groundings"):
            query = sql.SQL("SELECT count(*) FROM {} WHERE tenant_id = %s").format(
                sql.Identifier(table)
            )
            row = conn.execute(query, (tenant_id,)).fetchone()
            found[table] = int(row[0]) if row else 0
    return found


@pytest.fixture(params=sorted(PATHS))
def path(request: pytest.FixtureRequest) -> WritePath:
    return PATHS[request.param]


@pytest.mark.parametrize(("text", "kind", "secret"), SECRETS)
def test_every_write_path_refuses_a_secret_and_writes_nothing(
    client: Client, database_url: str, path: WritePath, text: str, kind: str, secret: str
) -> None:
    if path.existing_rows:
        update_value(client, "before")  # the row the update targets
    before = counts(database_url, client.tenant_id)
    rows_before = listed(client)

    with pytest.raises(grpc.RpcError) as info:
        path.write(client, text)
    details = error_details(info.value)

    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.reason == "SECRET_IN_VALUE"
    assert kind in details.metadata["kinds"].split(", ")
    assert details.metadata["field"] == path.field
    assert list(details.violations) == [path.field]
    said = " ".join(
        [
            details.message,
            info.value.details() or "",
            *details.metadata.values(),
            *details.violations.values(),
        ]
    )
    assert secret not in said
    assert text not in said

    assert counts(database_url, client.tenant_id) == before
    assert listed(client) == rows_before


def test_a_refused_update_leaves_the_row_and_its_trail_unchanged(client: Client) -> None:
    update_value(client, "before")
    memory = only(client)
    with pytest.raises(grpc.RpcError):
        update_value(client, "deploy key " + "AKIA" + "4HFT2QWRZ7ZXCVBN")
    assert only(client) == memory
    trail = client.call(
        client.memory.ListMemoryEvents, pb.ListMemoryEventsRequest(memory_id=memory.id)
    ).events
    assert [e.type for e in trail] == [memory_pb2.MEMORY_EVENT_TYPE_CREATED]


@pytest.mark.parametrize("text", BENIGN)
def test_every_write_path_accepts_ordinary_values(
    client: Client, database_url: str, path: WritePath, text: str
) -> None:
    path.write(client, text)
    if path.write is memorize_message:
        assert message_of(client, database_url) == text
    else:
        assert path.stored(client) == text


def test_a_secret_in_a_grounding_metadata_is_refused(client: Client, database_url: str) -> None:
    secret = "AKIA" + "4HFT2QWRZ7ZXCVBN"
    grounding = memory_pb2.Grounding(message_position=0, quote="q", end_character=1)
    grounding.metadata.update({"note": f"deploy key {secret}"})
    with pytest.raises(grpc.RpcError) as info:
        memorize(client, groundings=[grounding])
    assert error_details(info.value).reason == "SECRET_IN_VALUE"
    assert counts(database_url, client.tenant_id)["memories"] == 0
