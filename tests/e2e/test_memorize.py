"""Memorize over real gRPC and PostgreSQL: what is stored and returned, how tags and
quotes are normalised, how the key makes the call idempotent, and the conversation
snapshot kept once per (provider, conversation id)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import psycopg
import pytest
from google.protobuf import json_format

from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import Client, ErrorDetails, error_details

AGENT = memory_pb2.MemoryOwner(agent_id="agent-m")


# --- helpers -------------------------------------------------------------------------


def conversation(
    conversation_id: str = "conv-1", *messages: str, provider: str = "anthropic"
) -> memory_pb2.Conversation:
    return memory_pb2.Conversation(
        provider=provider,
        conversation_id=conversation_id,
        messages=[
            memory_pb2.ConversationMessage(
                role="user" if i % 2 == 0 else "assistant",
                content=text,
                provider_message_id=f"msg-{i}",
            )
            for i, text in enumerate(messages)
        ],
    )


def chat(conversation_id: str = "conv-1", count: int = 10) -> memory_pb2.Conversation:
    """A conversation of ``count`` messages of 40 characters each: room for the spans
    of these tests' groundings, which must point into it."""
    return conversation(conversation_id, *(f"message {i} ".ljust(40, ".") for i in range(count)))


def grounding(position: int = 0, quote: str = "q", **kw: Any) -> memory_pb2.Grounding:
    kw.setdefault("end_character", len(quote))
    message = memory_pb2.Grounding(message_position=position, quote=quote, **kw)
    message.metadata.SetInParent()  # the server always returns the (maybe empty) metadata
    return message


def memorize(
    client: Client, content: str = "deploys go through the release branch", **kw: Any
) -> pb.MemorizeResponse:
    kw.setdefault("owner", AGENT)
    request = pb.MemorizeRequest(content=content, **kw)
    response: pb.MemorizeResponse = client.call(client.memory.Memorize, request)
    return response


def get(client: Client, memory_id: str) -> memory_pb2.Memory:
    memory: memory_pb2.Memory = client.call(
        client.memory.GetMemory, pb.GetMemoryRequest(id=memory_id)
    ).memory
    return memory


def listed(client: Client, owner: memory_pb2.MemoryOwner = AGENT) -> list[memory_pb2.Memory]:
    response = client.call(
        client.memory.ListMemories, pb.ListMemoriesRequest(owner=owner, page_size=1000)
    )
    assert response.next_page_token == ""
    return list(response.memories)


def failure(call: Callable[[], object]) -> ErrorDetails:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return error_details(info.value)


def conversation_rows(database_url: str, tenant_id: str) -> list[tuple[Any, ...]]:
    """(provider, conversation_id, messages, message_count) of the tenant's snapshots."""
    with psycopg.connect(database_url) as conn:
        return conn.execute(
            "SELECT provider, conversation_id, messages, message_count FROM conversations"
            " WHERE tenant_id = %s ORDER BY provider, conversation_id",
            (tenant_id,),
        ).fetchall()


def as_dict(message: Any) -> dict[str, Any]:
    data: dict[str, Any] = json_format.MessageToDict(message)
    return data


# --- what is stored ---------------------------------------------------------------------


def test_memorize_stores_and_returns_every_field(client: Client, database_url: str) -> None:
    groundings = [
        grounding(
            4,
            "we always deploy from release",
            provider_message_id="msg-4",
            start_character=10,
            raw_event_index=7,
            raw_start_character=0,
            raw_end_character=200,
            metadata={"kind": "decision"},
        ),
        grounding(1, "release branch"),
    ]
    response = memorize(
        client,
        tags=["deploy", "ops"],
        confidence=0.85,
        metadata={"origin": "retro", "sprint": 14, "nested": {"ok": True, "list": ["a", 1]}},
        groundings=groundings,
        conversation=memory_pb2.Conversation(
            provider="anthropic",
            conversation_id="conv-1",
            messages=chat(count=5).messages,
            raw_events=[f'{{"index": {i}, "text": "{"x" * 200}"}}' for i in range(8)],
        ),
    )
    assert response.created is True
    memory = response.memory
    assert memory.value == "deploys go through the release branch"
    assert memory.source == memory_pb2.MEMORY_SOURCE_MEMORIZE
    assert memory.read_only is True
    assert memory.scope == memory_pb2.SCOPE_AGENT
    assert memory.agent_id == "agent-m"
    assert memory.key.startswith("memorize:")
    assert list(memory.tags) == ["deploy", "ops"]
    assert memory.HasField("confidence")
    assert memory.confidence == pytest.approx(0.85)
    assert as_dict(memory.metadata) == {
        "origin": "retro",
        "sprint": 14,
        "nested": {"ok": True, "list": ["a", 1]},
    }
    assert list(memory.groundings) == groundings
    assert memory.conversation_id == "conv-1"
    assert memory.conversation_provider == "anthropic"
    assert memory.etag

    stored = get(client, memory.id)
    assert stored == memory
    assert listed(client) == [memory]
    assert len(conversation_rows(database_url, client.tenant_id)) == 1


def test_memorize_with_content_only(client: Client, database_url: str) -> None:
    memory = memorize(client, "just a fact").memory
    assert memory.value == "just a fact"
    assert list(memory.tags) == []
    assert not memory.HasField("confidence")
    assert list(memory.groundings) == []
    assert memory.conversation_id == ""
    assert conversation_rows(database_url, client.tenant_id) == []


def test_memorize_into_a_workspace(client: Client) -> None:
    owner = memory_pb2.MemoryOwner(workspace_id="ws-1")
    memory = memorize(client, owner=owner).memory
    assert memory.scope == memory_pb2.SCOPE_WORKSPACE
    assert memory.workspace_id == "ws-1"
    assert [m.id for m in listed(client, owner)] == [memory.id]
    assert listed(client) == []


def test_tags_are_normalised_to_lowercase_slugs(client: Client) -> None:
    memory = memorize(
        client, tags=["Deploy Flow", "ops!!", "deploy-flow", "OPS", "!!!", "  ", "CI/CD"]
    ).memory
    assert list(memory.tags) == ["deploy-flow", "ops", "ci-cd"]
    assert list(get(client, memory.id).tags) == ["deploy-flow", "ops", "ci-cd"]


@pytest.mark.parametrize("confidence", [0.0, 1.0])
def test_confidence_bounds_are_accepted(client: Client, confidence: float) -> None:
    assert memorize(client, confidence=confidence).memory.confidence == confidence


@pytest.mark.parametrize("confidence", [-0.1, 1.5, float("nan")])
def test_confidence_outside_0_to_1_is_refused(client: Client, confidence: float) -> None:
    details = failure(lambda: memorize(client, confidence=confidence))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"confidence"}
    assert listed(client) == []


def test_a_long_quote_is_cut_to_2000_chars_not_refused(client: Client) -> None:
    quote = "a" * 1500 + "b" * 1500
    memory = memorize(
        client, groundings=[grounding(0, quote)], conversation=conversation("c", "x" * 3000)
    ).memory
    assert memory.groundings[0].quote == "a" * 1500 + "b" * 500
    assert len(get(client, memory.id).groundings[0].quote) == 2000
    assert len(listed(client)[0].groundings[0].quote) == 2000


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (grounding(-1), "groundings[0].message_position"),
        (grounding(0, "q", start_character=-1), "groundings[0].start_character"),
        (grounding(0, "q", start_character=9, end_character=3), "groundings[0].end_character"),
        (grounding(0, "q", raw_event_index=-1), "groundings[0].raw_event_index"),
        (
            grounding(0, "q", raw_start_character=-5),
            "groundings[0].raw_start_character",
        ),
    ],
)
def test_bad_grounding_positions_are_refused_and_nothing_is_written(
    client: Client, database_url: str, bad: memory_pb2.Grounding, field: str
) -> None:
    details = failure(
        lambda: memorize(client, groundings=[bad], conversation=conversation("c", "hi"))
    )
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert field in details.violations
    assert listed(client) == []
    assert conversation_rows(database_url, client.tenant_id) == []


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (pb.MemorizeRequest(owner=AGENT, content=""), "content"),
        (pb.MemorizeRequest(owner=AGENT, content="c" * 2001), "content"),
        (pb.MemorizeRequest(content="c"), "owner"),
        (pb.MemorizeRequest(owner=AGENT, content="c", memory_key="k" * 256), "memory_key"),
        (
            pb.MemorizeRequest(
                owner=AGENT,
                content="c",
                conversation=memory_pb2.Conversation(
                    conversation_id="c",
                    messages=[memory_pb2.ConversationMessage(role="r" * 65, content="hi")],
                ),
            ),
            "conversation.messages[0].role",
        ),
        (
            pb.MemorizeRequest(
                owner=AGENT,
                content="c",
                conversation=memory_pb2.Conversation(
                    conversation_id="c",
                    messages=[
                        memory_pb2.ConversationMessage(
                            role="user", content="hi", provider_message_id="m" * 256
                        )
                    ],
                ),
            ),
            "conversation.messages[0].provider_message_id",
        ),
        (
            pb.MemorizeRequest(owner=AGENT, content="c", metadata={"note": "n" * 65_536}),
            "metadata",
        ),
        (
            pb.MemorizeRequest(
                owner=AGENT,
                content="c",
                groundings=[grounding(metadata={"note": "n" * 65_536})],
            ),
            "groundings[0].metadata",
        ),
    ],
    ids=[
        "empty-content",
        "long-content",
        "no-owner",
        "long-key",
        "long-role",
        "long-message-id",
        "large-metadata",
        "large-grounding-metadata",
    ],
)
def test_malformed_memorize_is_invalid(
    client: Client, request_: pb.MemorizeRequest, field: str
) -> None:
    details = failure(lambda: client.call(client.memory.Memorize, request_))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert field in details.violations
    assert listed(client) == []


# --- idempotency ------------------------------------------------------------------------


def full_request(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "content": "staging runs on the k3s cluster",
        "tags": ["infra", "staging"],
        "confidence": 0.9,
        "groundings": [grounding(2, "staging is k3s")],
        "conversation": chat("conv-7", 4),
    }
    base.update(changes)
    return base


def test_the_same_call_twice_is_one_row(client: Client) -> None:
    first = memorize(client, **full_request())
    second = memorize(client, **full_request())
    assert first.created is True
    assert second.created is False
    assert second.memory.id == first.memory.id
    assert second.memory.key == first.memory.key
    assert [m.id for m in listed(client)] == [first.memory.id]


def test_tag_order_and_case_do_not_change_the_key(client: Client) -> None:
    first = memorize(client, **full_request(tags=["infra", "staging"]))
    second = memorize(client, **full_request(tags=["STAGING", "Infra!"]))
    assert second.created is False
    assert second.memory.id == first.memory.id
    assert len(listed(client)) == 1


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"content": "staging runs on EKS"}, id="content"),
        pytest.param({"groundings": [grounding(3, "staging is k3s")]}, id="grounding-position"),
        pytest.param({"groundings": [grounding(2, "staging runs k3s")]}, id="grounding-quote"),
        pytest.param({"tags": ["infra"]}, id="tags"),
        pytest.param({"conversation": chat("conv-8", 4)}, id="conversation-id"),
    ],
)
def test_what_makes_the_memory_makes_another_row(client: Client, changes: dict[str, Any]) -> None:
    first = memorize(client, **full_request())
    other = memorize(client, **full_request(**changes))
    assert other.created is True
    assert other.memory.id != first.memory.id
    assert other.memory.key != first.memory.key
    assert len(listed(client)) == 2


def test_with_a_memory_key_new_content_updates_in_place(client: Client) -> None:
    first = memorize(
        client,
        "deploy from main",
        memory_key="deploy:branch",
        tags=["deploy"],
        groundings=[grounding(0, "main"), grounding(1, "deploy")],
        conversation=chat(),
    )
    second = memorize(
        client,
        "deploy from release",
        memory_key="deploy:branch",
        tags=["release"],
        confidence=0.7,
        groundings=[grounding(5, "release")],
        conversation=chat(),
    )
    assert first.created is True
    assert second.created is False
    memory = second.memory
    assert memory.id == first.memory.id
    assert memory.key == "deploy:branch"
    assert memory.value == "deploy from release"
    assert list(memory.tags) == ["release"]
    assert memory.confidence == pytest.approx(0.7)
    assert list(memory.groundings) == [grounding(5, "release")]
    assert get(client, memory.id) == memory
    assert listed(client) == [memory]


def test_the_same_call_in_another_tenant_is_another_row(
    client: Client, other_client: Client
) -> None:
    mine = memorize(client, **full_request())
    theirs = memorize(other_client, **full_request())
    assert theirs.created is True
    assert theirs.memory.id != mine.memory.id
    assert [m.id for m in listed(client)] == [mine.memory.id]
    assert [m.id for m in listed(other_client)] == [theirs.memory.id]


# --- groundings -------------------------------------------------------------------------


def test_groundings_come_back_in_the_order_given(client: Client) -> None:
    given = [grounding(9, "ninth"), grounding(1, "first"), grounding(5, "fifth"), grounding(1, "")]
    memory = memorize(client, groundings=given, conversation=chat()).memory
    assert list(memory.groundings) == given
    assert list(get(client, memory.id).groundings) == given
    assert list(listed(client)[0].groundings) == given


def test_listing_gives_each_memory_its_own_groundings(client: Client) -> None:
    a = memorize(
        client, "fact a", memory_key="a", groundings=[grounding(1, "a1")], conversation=chat()
    ).memory
    b = memorize(
        client,
        "fact b",
        memory_key="b",
        groundings=[grounding(2, "b1"), grounding(3, "b2")],
        conversation=chat(),
    ).memory
    c = memorize(client, "fact c", memory_key="c").memory
    by_id = {m.id: list(m.groundings) for m in listed(client)}
    assert by_id == {
        a.id: [grounding(1, "a1")],
        b.id: [grounding(2, "b1"), grounding(3, "b2")],
        c.id: [],
    }


# --- the conversation snapshot ----------------------------------------------------------


def test_the_conversation_is_stored_once_and_updated_in_place(
    client: Client, database_url: str
) -> None:
    memorize(client, "fact one", conversation=conversation("conv-9", "hello", "hi there"))
    memorize(
        client,
        "fact two",
        conversation=conversation("conv-9", "hello", "hi there", "what next?"),
    )
    rows = conversation_rows(database_url, client.tenant_id)
    assert len(rows) == 1
    provider, conversation_id, messages, count = rows[0]
    assert (provider, conversation_id, count) == ("anthropic", "conv-9", 3)
    assert [m["content"] for m in messages] == ["hello", "hi there", "what next?"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [m["provider_message_id"] for m in messages] == ["msg-0", "msg-1", "msg-2"]

    memorize(client, "fact three", conversation=conversation("conv-9", "replaced"))
    rows = conversation_rows(database_url, client.tenant_id)
    assert len(rows) == 1
    assert rows[0][3] == 1
    assert [m["content"] for m in rows[0][2]] == ["replaced"]
    assert len(listed(client)) == 3


def test_the_same_conversation_id_of_another_provider_is_another_snapshot(
    client: Client, database_url: str
) -> None:
    memorize(client, "a", conversation=conversation("conv-x", "one", provider="anthropic"))
    memorize(client, "b", conversation=conversation("conv-x", "two", "three", provider="openai"))
    rows = conversation_rows(database_url, client.tenant_id)
    assert [(r[0], r[1], r[3]) for r in rows] == [
        ("anthropic", "conv-x", 1),
        ("openai", "conv-x", 2),
    ]


def test_conversations_are_per_tenant(
    client: Client, other_client: Client, database_url: str
) -> None:
    memorize(client, conversation=conversation("conv-shared", "mine"))
    memorize(other_client, conversation=conversation("conv-shared", "theirs", "too"))
    assert conversation_rows(database_url, client.tenant_id)[0][3] == 1
    assert conversation_rows(database_url, other_client.tenant_id)[0][3] == 2


def test_a_conversation_without_a_provider_is_stored_under_unknown(
    client: Client, database_url: str
) -> None:
    memory = memorize(client, conversation=conversation("conv-np", "hi", provider="")).memory
    assert memory.conversation_id == "conv-np"
    assert memory.conversation_provider == "unknown"
    rows = conversation_rows(database_url, client.tenant_id)
    assert [(r[0], r[1], r[3]) for r in rows] == [("unknown", "conv-np", 1)]


# --- keys held by other sources ---------------------------------------------------------


def test_a_memory_key_held_by_a_manual_row_is_a_failed_precondition(client: Client) -> None:
    manual = client.call(
        client.memory.UpsertMemory,
        pb.UpsertMemoryRequest(owner=AGENT, key="shared-key", value="by hand"),
    ).memory
    details = failure(lambda: memorize(client, "by memorize", memory_key="shared-key"))
    assert details.code is grpc.StatusCode.FAILED_PRECONDITION
    assert details.metadata.get("memory_id") == manual.id
    assert get(client, manual.id) == manual
    assert listed(client) == [manual]


def test_a_memory_key_held_by_an_auto_row_is_read_only(client: Client) -> None:
    auto = client.call(
        client.memory.UpsertMemory,
        pb.UpsertMemoryRequest(
            owner=AGENT, key="k", value="extracted", source=memory_pb2.MEMORY_SOURCE_AUTO
        ),
    ).memory
    details = failure(lambda: memorize(client, "by memorize", memory_key="k"))
    assert details.code is grpc.StatusCode.FAILED_PRECONDITION
    assert details.reason == "READ_ONLY_MEMORY"
    assert get(client, auto.id) == auto


def test_a_memory_key_of_extraction_s_own_form_is_refused(client: Client) -> None:
    details = failure(lambda: memorize(client, "by memorize", memory_key="auto:k"))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"memory_key"}


def test_a_memory_key_under_another_owner_is_free(client: Client) -> None:
    client.call(
        client.memory.UpsertMemory,
        pb.UpsertMemoryRequest(owner=AGENT, key="shared-key", value="by hand"),
    )
    other = memory_pb2.MemoryOwner(agent_id="agent-other")
    response = memorize(client, "by memorize", memory_key="shared-key", owner=other)
    assert response.created is True
    assert response.memory.agent_id == "agent-other"
