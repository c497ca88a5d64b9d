"""Credentials known by their class (a door code, a PIN, a card number, an IBAN, a
national id, a recovery phrase, a password in another language) are refused on
Memorize wherever they stand, over real gRPC and PostgreSQL: in the content, and in the
conversation snapshot Memorize keeps (a message, a raw event). A refused call keeps no
snapshot, and leaves one kept before unchanged; look-alikes are kept as sent."""

from __future__ import annotations

from typing import Any

import grpc
import psycopg
import pytest

from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import Client, error_details

AGENT = memory_pb2.MemoryOwner(agent_id="agent-class")

# One credential of each class, as a person would write it in a chat.
CREDENTIALS = [
    pytest.param("the alarm code is 9021", "ACCESS_CODE", "9021", id="alarm-code"),
    pytest.param("PIN do cartão de crédito é 2580", "ACCESS_CODE", "2580", id="pin"),
    pytest.param(
        "card 4663 9233 2146 8814, exp 09/27", "PAYMENT_CARD", "4663 9233 2146 8814", id="card"
    ),
    pytest.param("my SSN is 787-78-9328", "NATIONAL_ID", "787-78-9328", id="ssn"),
    pytest.param(
        "rent goes to GB29 NWBK 6016 1331 9268 19",
        "BANK_ACCOUNT",
        "GB29 NWBK 6016 1331 9268 19",
        id="iban",
    ),
    pytest.param(
        "seed: fancy muffin offer equal scorpion harsh caught arm never jar cake hire",
        "RECOVERY_PHRASE",
        "fancy muffin offer equal scorpion harsh caught arm never jar cake hire",
        id="recovery-phrase",
    ),
    pytest.param("我家wifi密码是 qwer1234zz", "PASSWORD", "qwer1234zz", id="password-zh"),
    pytest.param("basic auth ana:Pa55w0rd!", "PASSWORD", "Pa55w0rd!", id="basic-auth"),
]
LOOK_ALIKES = [
    "my PIN changed last week",
    "the door code is on the fridge",
    "order #112-7735091-4468213 arrives Tuesday, call +1 415 555 0172",
    "reverted e0a77b3c9d1f4a6b8e2c5d7f9a1b3c5d7e9f0a12, "
    "device 8d3f2a1c-7b4e-4f90-a6d2-1e5c9b7a3f08",
    "a senha do wifi está atrás do roteador; o conserto ficou em R$ 1.250,00",
]


def snapshot(
    conversation_id: str, *messages: str, raw_events: tuple[str, ...] = ()
) -> memory_pb2.Conversation:
    return memory_pb2.Conversation(
        provider="anthropic",
        conversation_id=conversation_id,
        messages=[
            memory_pb2.ConversationMessage(role="user" if i % 2 == 0 else "assistant", content=m)
            for i, m in enumerate(messages)
        ],
        raw_events=list(raw_events),
    )


def memorize(client: Client, **kw: Any) -> pb.MemorizeResponse:
    kw.setdefault("owner", AGENT)
    kw.setdefault("content", "the family keeps its codes in the password manager")
    response: pb.MemorizeResponse = client.call(client.memory.Memorize, pb.MemorizeRequest(**kw))
    return response


def stored(database_url: str, tenant_id: str) -> dict[str, int]:
    """The tenant's rows in the tables Memorize writes, and the snapshots' text."""
    with psycopg.connect(database_url) as conn:
        counts = {
            table: int(
                (
                    conn.execute(
                        f"SELECT count(*) FROM {table} WHERE tenant_id = %s", (tenant_id,)
                    ).fetchone()
                    or (0,)
                )[0]
            )
            for table in ("memories", "memory_events", "conversations")
        }
    return counts


def snapshot_text(database_url: str, tenant_id: str) -> str:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT messages::text, raw_events::text FROM conversations WHERE tenant_id = %s",
            (tenant_id,),
        ).fetchall()
    return " ".join(f"{m} {r}" for m, r in rows)


WHERE = {
    "content": ("content", lambda text: {"content": text}),
    "message": (
        "conversation.messages[1].content",
        lambda text: {"conversation": snapshot("conv-class", "hello", text)},
    ),
    "raw-event": (
        "conversation.raw_events[0]",
        lambda text: {
            "conversation": snapshot("conv-class", "hello", raw_events=(f'{{"text": "{text}"}}',))
        },
    ),
}


@pytest.mark.parametrize("where", sorted(WHERE))
@pytest.mark.parametrize(("text", "kind", "secret"), CREDENTIALS)
def test_a_credential_by_class_is_refused_and_no_snapshot_is_kept(
    client: Client, database_url: str, where: str, text: str, kind: str, secret: str
) -> None:
    field, request = WHERE[where]
    with pytest.raises(grpc.RpcError) as info:
        memorize(client, **request(text))
    details = error_details(info.value)
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.reason == "SECRET_IN_VALUE"
    assert kind in details.metadata["kinds"].split(", ")
    assert details.metadata["field"] == field
    said = " ".join([details.message, *details.metadata.values(), *details.violations.values()])
    assert secret not in said
    assert stored(database_url, client.tenant_id) == {
        "memories": 0,
        "memory_events": 0,
        "conversations": 0,
    }


@pytest.mark.parametrize(("text", "kind", "secret"), CREDENTIALS)
def test_a_kept_snapshot_never_takes_a_credential_in_later(
    client: Client, database_url: str, text: str, kind: str, secret: str
) -> None:
    memorize(client, conversation=snapshot("conv-later", "hello", "hi, what can I do?"))
    before = stored(database_url, client.tenant_id), snapshot_text(database_url, client.tenant_id)

    with pytest.raises(grpc.RpcError) as info:
        memorize(
            client,
            content="a second fact from the same conversation",
            conversation=snapshot("conv-later", "hello", "hi, what can I do?", text),
        )
    assert error_details(info.value).reason == "SECRET_IN_VALUE"

    after = stored(database_url, client.tenant_id), snapshot_text(database_url, client.tenant_id)
    assert after == before
    assert secret not in after[1]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_a_look_alike_is_kept_in_the_snapshot_as_sent(
    client: Client, database_url: str, text: str
) -> None:
    memorize(client, content=text, conversation=snapshot("conv-ok", "hello", text))
    assert text in {m.content for m in get_snapshot(client, "conv-ok").messages}
    assert stored(database_url, client.tenant_id)["conversations"] == 1


def get_snapshot(client: Client, conversation_id: str) -> memory_pb2.Conversation:
    response = client.call(
        client.memory.GetConversation,
        pb.GetConversationRequest(provider="anthropic", conversation_id=conversation_id),
    )
    conversation: memory_pb2.Conversation = response.conversation
    return conversation
