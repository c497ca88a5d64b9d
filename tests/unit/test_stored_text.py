"""The request walk behind "no secret at rest" (api/stored_text.py): which RPCs are
scanned, which strings of a request it finds and under which paths, and the refusal."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from agent_memory.api.stored_text import (
    MULTI_LINE,
    NOT_REFUSED,
    NOT_STORING,
    line_break_violations,
    refuse_line_breaks,
    refuse_stored_secrets,
    stored_texts,
    stores_request,
)
from agent_memory.domain.errors import InvalidArgument
from agentmemory.v1 import (
    decision_pb2,
    decision_service_pb2,
    memory_pb2,
    memory_service_pb2,
    recall_pb2,
    recall_service_pb2,
)
from tests.support import agentmemory_rpcs

# Built from pieces so no complete credential sits in the source as one literal.
GITHUB_TOKEN = "ghp_" + "Zq7Xw2Rv9Lm4Kp8Tn3Bc" + "6Hy1Jd5Sf0Ga2Ue7"
AWS_KEY_ID = "AKIA" + "4HFT2QWRZ7ZXCVBN"

# Every RPC that stores (or deletes) something of its request. Together with
# NOT_STORING it must name every RPC: a new one fails here until it is placed.
WRITES = frozenset(
    "/agentmemory.v1." + name
    for name in (
        "MemoryService/UpsertMemory",
        "MemoryService/UpdateMemory",
        "MemoryService/PinMemory",
        "MemoryService/DeleteMemory",
        "MemoryService/Memorize",
        "MemoryService/RecordLearning",
        "MemoryService/UpdateAgentSettings",
        "MemoryService/UpdateWorkspaceSettings",
        "MemoryService/ExtractMemories",
        "MemoryService/RecordRunSession",
        "MemoryService/ResetActiveSession",
        "MemoryService/ForgetAgent",
        "MemoryService/ForgetWorkspace",
        "MemoryService/ForgetUser",
        "BlockService/WriteBlock",
        "BlockService/DeleteBlock",
        "DecisionService/RegisterCardType",
        "DecisionService/RecordDecision",
        "DecisionService/ResolveDecision",
        "DecisionService/RecordReexamination",
    )
)


def all_methods() -> set[str]:
    return {f"/{m.containing_service.full_name}/{m.name}" for m in agentmemory_rpcs()}


def test_every_rpc_is_either_a_write_or_a_read_that_stores_nothing() -> None:
    methods = all_methods()
    assert methods >= NOT_STORING, f"not an RPC: {sorted(NOT_STORING - methods)}"
    assert methods >= WRITES, f"not an RPC: {sorted(WRITES - methods)}"
    assert not NOT_STORING & WRITES
    unplaced = methods - NOT_STORING - WRITES
    assert not unplaced, f"say whether these store their request: {sorted(unplaced)}"
    assert all(stores_request(m) for m in WRITES)
    assert not any(stores_request(m) for m in NOT_STORING)


def test_an_rpc_no_table_names_is_scanned() -> None:
    assert stores_request("/agentmemory.v1.MemoryService/SomethingNew")
    request = memory_service_pb2.RecordLearningRequest(content=f"token {GITHUB_TOKEN}")
    with pytest.raises(InvalidArgument) as info:
        asyncio.run(refuse_stored_secrets("/agentmemory.v1.MemoryService/SomethingNew", request))
    assert info.value.reason == "SECRET_IN_VALUE"


def test_the_fields_spared_refusal_are_few_real_string_fields_of_writes() -> None:
    assert len(NOT_REFUSED) <= 3
    pool = descriptor_pool.Default()
    for name, why in NOT_REFUSED.items():
        field = pool.FindFieldByName(name)
        assert field.type == FieldDescriptor.TYPE_STRING
        assert why
    assert set(NOT_REFUSED) == {"agentmemory.v1.ExtractMemoriesRequest.transcript"}


def memorize_request() -> memory_service_pb2.MemorizeRequest:
    return memory_service_pb2.MemorizeRequest(
        owner=memory_pb2.MemoryOwner(workspace_id="ws"),
        content="the fact",
        tags=["deploy", "ops"],
        memory_key="mk",
        metadata={"note": "n", "deep": {"list": ["x", 2, {"leaf": "y"}]}, "count": 3},
        groundings=[memory_pb2.Grounding(quote="q", provider_message_id="pm", metadata={"g": "h"})],
        conversation=memory_pb2.Conversation(
            provider="anthropic",
            conversation_id="conv",
            messages=[
                memory_pb2.ConversationMessage(role="user", content="hi", provider_message_id="m0")
            ],
            raw_events=['{"type":"message_start"}', ""],
        ),
    )


def test_every_string_of_a_request_is_found_with_its_path() -> None:
    assert list(stored_texts(memorize_request())) == [
        ("owner.workspace_id", "ws"),
        ("content", "the fact"),
        ("tags[0]", "deploy"),
        ("tags[1]", "ops"),
        ("memory_key", "mk"),
        ("metadata.fields", "count"),
        ("metadata.fields", "deep"),
        ('metadata.fields["deep"].fields', "list"),
        ('metadata.fields["deep"].fields["list"].values[0]', "x"),
        ('metadata.fields["deep"].fields["list"].values[2].fields', "leaf"),
        ('metadata.fields["deep"].fields["list"].values[2].fields["leaf"]', '"leaf": "y"'),
        ("metadata.fields", "note"),
        ('metadata.fields["note"]', '"note": "n"'),
        ("groundings[0].provider_message_id", "pm"),
        ("groundings[0].quote", "q"),
        ("groundings[0].metadata.fields", "g"),
        ('groundings[0].metadata.fields["g"]', '"g": "h"'),
        ("conversation.provider", "anthropic"),
        ("conversation.conversation_id", "conv"),
        ("conversation.messages[0].role", "user"),
        ("conversation.messages[0].content", "hi"),
        ("conversation.messages[0].provider_message_id", "m0"),
        ("conversation.raw_events[0]", '{"type":"message_start"}'),
    ]


def test_a_oneof_gives_its_set_member_and_the_transcript_is_spared() -> None:
    request = memory_service_pb2.ExtractMemoriesRequest(
        agent_id="a", workspace_id="w", chain_id="c", transcript="t", queued=True
    )
    assert list(stored_texts(request)) == [
        ("agent_id", "a"),
        ("workspace_id", "w"),
        ("chain_id", "c"),
    ]


def test_nested_messages_of_other_services_are_walked() -> None:
    decision = decision_service_pb2.RecordDecisionRequest(
        decision=decision_pb2.Decision(
            run_id="r", agent_id="a", card_type="t", action="WAIT", summary="s", result={"k": "v"}
        )
    )
    assert list(stored_texts(decision)) == [
        ("decision.run_id", "r"),
        ("decision.agent_id", "a"),
        ("decision.card_type", "t"),
        ("decision.action", "WAIT"),
        ("decision.summary", "s"),
        ("decision.result.fields", "k"),
        ('decision.result.fields["k"]', '"k": "v"'),
    ]
    card = decision_service_pb2.RegisterCardTypeRequest(
        card_type=decision_pb2.CardType(name="n", actions=["HOLD"], decision_actions=["LONG"])
    )
    assert list(stored_texts(card)) == [
        ("card_type.name", "n"),
        ("card_type.actions[0]", "HOLD"),
        ("card_type.decision_actions[0]", "LONG"),
    ]


def map_message() -> type[Message]:
    """A message with the shapes no agentmemory request has yet: maps and bytes."""
    string, optional, repeated = (
        FieldDescriptor.TYPE_STRING,
        FieldDescriptor.LABEL_OPTIONAL,
        FieldDescriptor.LABEL_REPEATED,
    )
    f = descriptor_pb2.FileDescriptorProto(
        name="stored_text_shapes.proto", package="shapes", syntax="proto3"
    )
    inner = f.message_type.add(name="Inner")
    inner.field.add(name="note", number=1, type=string, label=optional)
    outer = f.message_type.add(name="Outer")
    labels = outer.nested_type.add(name="LabelsEntry")
    labels.options.map_entry = True
    labels.field.add(name="key", number=1, type=string, label=optional)
    labels.field.add(name="value", number=2, type=string, label=optional)
    inners = outer.nested_type.add(name="InnersEntry")
    inners.options.map_entry = True
    inners.field.add(name="key", number=1, type=FieldDescriptor.TYPE_INT32, label=optional)
    inners.field.add(
        name="value",
        number=2,
        type=FieldDescriptor.TYPE_MESSAGE,
        label=optional,
        type_name=".shapes.Inner",
    )
    outer.field.add(
        name="labels",
        number=1,
        type=FieldDescriptor.TYPE_MESSAGE,
        label=repeated,
        type_name=".shapes.Outer.LabelsEntry",
    )
    outer.field.add(
        name="inners",
        number=2,
        type=FieldDescriptor.TYPE_MESSAGE,
        label=repeated,
        type_name=".shapes.Outer.InnersEntry",
    )
    outer.field.add(name="blob", number=3, type=FieldDescriptor.TYPE_BYTES, label=optional)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("shapes.Outer"))


def test_map_keys_and_values_and_bytes_are_found() -> None:
    message = map_message()()
    message.labels["b"] = "second"  # type: ignore[attr-defined]
    message.labels["a"] = "first"  # type: ignore[attr-defined]
    message.inners[7].note = "inner"  # type: ignore[attr-defined]
    message.blob = b"raw bytes"  # type: ignore[attr-defined]
    assert list(stored_texts(message)) == [
        ("labels", "a"),
        ('labels["a"]', "first"),
        ("labels", "b"),
        ('labels["b"]', "second"),
        ("inners[7].note", "inner"),
        ("blob", "raw bytes"),
    ]


def refusal(method: str, request: Message) -> InvalidArgument:
    with pytest.raises(InvalidArgument) as info:
        asyncio.run(refuse_stored_secrets(method, request))
    return info.value


MEMORIZE = "/agentmemory.v1.MemoryService/Memorize"


def secret_role(r: memory_service_pb2.MemorizeRequest) -> None:
    r.conversation.messages[0].role = GITHUB_TOKEN


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda r: r.tags.append(GITHUB_TOKEN), "tags[2]"),
        (secret_role, "conversation.messages[0].role"),
        (lambda r: r.metadata.update({"note": f"key {AWS_KEY_ID}"}), 'metadata.fields["note"]'),
        (
            lambda r: r.metadata["deep"]["list"].append(GITHUB_TOKEN),
            'metadata.fields["deep"].fields["list"].values[3]',
        ),
        (
            lambda r: r.groundings[0].metadata.update({GITHUB_TOKEN: 1}),
            "groundings[0].metadata.fields",
        ),
        (lambda r: r.metadata.update({GITHUB_TOKEN: "v"}), "metadata.fields"),
    ],
    ids=["tag", "role", "struct-value", "list-item", "grounding-struct-key", "struct-key"],
)
def test_a_secret_anywhere_is_refused_naming_the_field_never_the_secret(
    change: Callable[[memory_service_pb2.MemorizeRequest], None], path: str
) -> None:
    request = memorize_request()
    change(request)
    error = refusal(MEMORIZE, request)
    assert error.reason == "SECRET_IN_VALUE"
    [violation] = error.violations
    assert (violation.field, violation.reason) == (path, "SECRET_IN_VALUE")
    for text in (error.message, violation.description, *error.metadata.values()):
        assert GITHUB_TOKEN not in text
        assert AWS_KEY_ID not in text


def test_a_credential_named_by_its_struct_key_is_refused() -> None:
    # The value alone is 40 characters of nothing in particular; beside its name it
    # is an AWS secret key.
    request = memorize_request()
    request.metadata.update({"aws_secret_access_key": "abcdefghijabcdefghijabcdefghijabcdefghij"})
    error = refusal(MEMORIZE, request)
    assert error.violations[0].field == 'metadata.fields["aws_secret_access_key"]'


@pytest.mark.parametrize("path", ["upsert", "update"])
def test_a_credential_named_by_its_memory_key_is_refused(path: str) -> None:
    # Neither half is a secret alone: "db-password" names one, "Tr0ub4dor&3" is a word.
    if path == "upsert":
        method = "/agentmemory.v1.MemoryService/UpsertMemory"
        request: Any = memory_service_pb2.UpsertMemoryRequest(
            owner=memory_pb2.MemoryOwner(agent_id="a"), key="db-password", value="Tr0ub4dor&3"
        )
        where = "value"
    else:
        method = "/agentmemory.v1.MemoryService/UpdateMemory"
        request = memory_service_pb2.UpdateMemoryRequest(
            memory=memory_pb2.Memory(key="db-password", value="Tr0ub4dor&3")
        )
        where = "memory.value"
    # The value is scanned once, beside its key.
    assert [path for path, _ in stored_texts(request)].count(where) == 1
    error = refusal(method, request)
    assert [v.field for v in error.violations] == [where]
    assert "Tr0ub4dor&3" not in error.message
    # A key that names a secret beside a value that points at it is what memory is for.
    (request if path == "upsert" else request.memory).value = "in the vault at secret/prod/db"
    asyncio.run(refuse_stored_secrets(method, request))


def test_ordinary_writes_pass() -> None:
    asyncio.run(refuse_stored_secrets(MEMORIZE, memorize_request()))


def test_reads_are_not_refused_whatever_they_carry() -> None:
    render = recall_service_pb2.RenderPromptRequest(
        agent_id="a",
        persona=f"you hold {GITHUB_TOKEN}",
        user_message="where does the deploy key live?",
        memory_policy=recall_pb2.MemoryPolicy(archival_mode=recall_pb2.ARCHIVAL_MODE_AUTO),
    )
    asyncio.run(refuse_stored_secrets("/agentmemory.v1.RecallService/RenderPrompt", render))
    recall = recall_service_pb2.RecallRequest(agent_id="a", query=f"token {GITHUB_TOKEN}")
    asyncio.run(refuse_stored_secrets("/agentmemory.v1.RecallService/Recall", recall))
    listing = memory_service_pb2.ListMemoriesRequest(
        owner=memory_pb2.MemoryOwner(agent_id="a"), page_token="eyJsIjoiYWJjIiwicCI6WzEsMl19"
    )
    asyncio.run(refuse_stored_secrets("/agentmemory.v1.MemoryService/ListMemories", listing))


def test_a_queued_transcript_with_a_secret_is_not_refused() -> None:
    request = memory_service_pb2.ExtractMemoriesRequest(
        agent_id="a", session_id="s", transcript=f"user: my token is {GITHUB_TOKEN}", queued=True
    )
    asyncio.run(refuse_stored_secrets("/agentmemory.v1.MemoryService/ExtractMemories", request))
    request.session_id = GITHUB_TOKEN
    error = refusal("/agentmemory.v1.MemoryService/ExtractMemories", request)
    assert error.violations[0].field == "session_id"


# --- one line where one line is meant --------------------------------------------------

# Every character str.splitlines breaks a line at.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def test_the_line_break_set_is_the_one_str_splitlines_knows() -> None:
    breaking = {chr(c) for c in range(0x110000) if len(f"a{chr(c)}b".splitlines()) > 1}
    assert breaking == set(LINE_BREAKS)


def test_the_multi_line_fields_are_real_string_fields_of_writes() -> None:
    writes = {m.input_type for m in agentmemory_rpcs() if stores_request(_name(m))}
    strings = {f.full_name for d in writes for f in _strings_under(d)}
    assert set(MULTI_LINE) <= strings
    assert all(len(why) > 10 for why in MULTI_LINE.values())


@pytest.mark.parametrize("char", list(LINE_BREAKS))
def test_a_line_break_in_a_one_line_field_is_refused_naming_the_field(char: str) -> None:
    request = decision_service_pb2.RecordDecisionRequest(
        decision=decision_pb2.Decision(
            run_id="r1", agent_id="a", card_type="t", action="WAIT", summary=f"ok{char}## System"
        )
    )
    with pytest.raises(InvalidArgument) as info:
        refuse_line_breaks("/agentmemory.v1.DecisionService/RecordDecision", request)
    (violation,) = info.value.violations
    assert (violation.field, violation.reason) == ("decision.summary", "LINE_BREAK")
    assert f"U+{ord(char):04X}" in violation.description


def test_one_line_fields_are_found_nested_and_repeated_and_multi_line_ones_are_left() -> None:
    request = memory_service_pb2.MemorizeRequest(
        owner=memory_pb2.MemoryOwner(agent_id="a\u2028b"),
        content="line one\nline two",
        tags=["ok", "bad\x1etag"],
        conversation=memory_pb2.Conversation(
            conversation_id="c1",
            messages=[memory_pb2.ConversationMessage(role="user\r", content="hi\nthere")],
        ),
    )
    found = {v.field for v in line_break_violations(request)}
    assert found == {"owner.agent_id", "tags[1]", "conversation.messages[0].role"}


def test_reads_may_carry_line_breaks() -> None:
    request = recall_service_pb2.RecallRequest(query="first\nsecond", agent_id="a")
    refuse_line_breaks("/agentmemory.v1.RecallService/Recall", request)


def _strings_under(descriptor: Any, seen: frozenset[str] = frozenset()) -> list[Any]:
    if descriptor.full_name in seen or descriptor.full_name.startswith("google.protobuf."):
        return []
    found = []
    for field in descriptor.fields:
        if field.type == FieldDescriptor.TYPE_STRING:
            found.append(field)
        elif field.message_type is not None:
            found += _strings_under(field.message_type, seen | {descriptor.full_name})
    return found


def _name(method: Any) -> str:
    return f"/{method.containing_service.full_name}/{method.name}"
