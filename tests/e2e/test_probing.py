"""Bad input found by probing the running service, one small case each, over real gRPC.

Every case is a caller's mistake (or malice): the answer is a clear status with a
reason and, for INVALID_ARGUMENT, the field at fault — never INTERNAL or UNKNOWN,
never a traceback in the log, never a half-applied write.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import grpc
import pytest

from agentmemory.v1 import block_pb2, decision_service_pb2_grpc, memory_pb2, recall_pb2
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import decision_service_pb2 as decision_pb
from agentmemory.v1 import memory_service_pb2 as memory_pb
from agentmemory.v1 import recall_service_pb2 as recall_pb
from tests.support import Client, ErrorDetails, error_details

TIMEOUT = 10.0
AGENT = memory_pb2.MemoryOwner(agent_id="probed")


def refused(call: Callable[[], object]) -> ErrorDetails:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return error_details(info.value)


def invalid(call: Callable[[], object]) -> ErrorDetails:
    details = refused(call)
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT, (details.code, details.message)
    return details


def raw_call(client: Client, method: str, payload: bytes) -> Callable[[], object]:
    """A call of ``method`` with ``payload`` as the request's bytes, whatever they are."""
    call = client.channel.unary_unary(method, request_serializer=None, response_deserializer=None)
    return lambda: call(payload, metadata=client.metadata, timeout=TIMEOUT)


def decision_stub(client: Client) -> decision_service_pb2_grpc.DecisionServiceStub:
    return decision_service_pb2_grpc.DecisionServiceStub(client.channel)  # type: ignore[no-untyped-call]


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


# --- requests that do not decode -------------------------------------------------------

GET_MEMORY = "/agentmemory.v1.MemoryService/GetMemory"
MEMORIZE = "/agentmemory.v1.MemoryService/Memorize"
RECALL = "/agentmemory.v1.RecallService/Recall"


def test_invalid_utf8_in_a_string_field_is_invalid_argument_naming_the_field(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    payload = b"\x0a\x02\xc3\x28"  # field 1 (id): two bytes that are not UTF-8
    details = invalid(raw_call(client, GET_MEMORY, payload))
    assert details.reason == "UNDECODABLE_REQUEST"
    assert details.violations == {"id": "must be valid UTF-8"}
    assert not tracebacks(caplog)


def test_invalid_utf8_deep_in_a_request_names_the_nested_field(client: Client) -> None:
    good = memory_pb.MemorizeRequest(
        owner=AGENT,
        content="likes tea",
        conversation=memory_pb2.Conversation(
            conversation_id="c1",
            messages=[
                memory_pb2.ConversationMessage(role="user", content="first"),
                memory_pb2.ConversationMessage(role="user", content="BAD"),
            ],
        ),
    )
    payload = good.SerializeToString().replace(b"BAD", b"\xff\xfe\xfd")
    details = invalid(raw_call(client, MEMORIZE, payload))
    assert details.reason == "UNDECODABLE_REQUEST"
    assert list(details.violations) == ["conversation.messages[1].content"]


def test_invalid_utf8_inside_metadata_names_the_metadata(client: Client) -> None:
    good = memory_pb.MemorizeRequest(owner=AGENT, content="likes tea")
    good.metadata.update({"note": "BAD"})
    payload = good.SerializeToString().replace(b"BAD", b"\xc0\xaf\x41")  # overlong '/'
    details = invalid(raw_call(client, MEMORIZE, payload))
    assert list(details.violations) == ["metadata"]


@pytest.mark.parametrize(
    ("method", "payload"),
    [
        (GET_MEMORY, b"\xff\xff\xff"),  # a tag that never ends
        (GET_MEMORY, b"\x0a\x05ab"),  # a string shorter than its length
        (GET_MEMORY, b"\x00"),  # field number 0
        (GET_MEMORY, b"\x0c"),  # an end-group tag with no group
        (MEMORIZE, b"\x0a\x03\x0a"),  # a nested message cut short
        (RECALL, b"\x07\x01"),  # wire type 7
    ],
    ids=["endless-varint", "short-string", "field-zero", "stray-end-group", "cut-owner", "wt7"],
)
def test_bytes_that_are_no_message_are_invalid_argument_without_a_traceback(
    client: Client, caplog: pytest.LogCaptureFixture, method: str, payload: bytes
) -> None:
    details = invalid(raw_call(client, method, payload))
    assert details.reason == "UNDECODABLE_REQUEST"
    assert "not a valid agentmemory.v1." in details.message
    assert not tracebacks(caplog)


def test_an_undecodable_request_writes_nothing(client: Client) -> None:
    good = memory_pb.UpsertMemoryRequest(owner=AGENT, key="k", value="GOOD")
    method = "/agentmemory.v1.MemoryService/UpsertMemory"
    invalid(raw_call(client, method, good.SerializeToString().replace(b"GOOD", b"G\x80OD")))
    listed = client.call(
        client.memory.ListMemories, memory_pb.ListMemoriesRequest(owner=AGENT), timeout=TIMEOUT
    )
    assert list(listed.memories) == []


def test_a_caller_without_credentials_is_told_so_before_anything_about_the_bytes(
    client: Client,
) -> None:
    call = client.channel.unary_unary(
        GET_MEMORY, request_serializer=None, response_deserializer=None
    )
    details = refused(lambda: call(b"\xff\xff\xff", timeout=TIMEOUT))
    assert details.code is grpc.StatusCode.UNAUTHENTICATED


# --- enum values no enum defines -------------------------------------------------------


def test_an_unknown_archival_mode_is_invalid_argument(client: Client) -> None:
    request = recall_pb.RenderPromptRequest(
        agent_id="a", memory_policy=recall_pb2.MemoryPolicy(archival_mode=99)
    )
    details = invalid(lambda: client.call(client.recall.RenderPrompt, request, timeout=TIMEOUT))
    assert details.reason == "INVALID_ENUM"
    assert list(details.violations) == ["memory_policy.archival_mode"]
    assert "ARCHIVAL_MODE_AUTO" in details.violations["memory_policy.archival_mode"]


def test_an_unknown_enum_in_an_ignored_output_field_is_refused_too(client: Client) -> None:
    created = client.call(
        client.memory.UpsertMemory,
        memory_pb.UpsertMemoryRequest(owner=AGENT, key="k", value="v"),
        timeout=TIMEOUT,
    ).memory
    request = memory_pb.UpdateMemoryRequest(
        memory=memory_pb2.Memory(id=created.id, value="w", source=-5),
        update_mask={"paths": ["value"]},
    )
    details = invalid(lambda: client.call(client.memory.UpdateMemory, request, timeout=TIMEOUT))
    assert list(details.violations) == ["memory.source"]
    again = client.call(
        client.memory.GetMemory, memory_pb.GetMemoryRequest(id=created.id), timeout=TIMEOUT
    )
    assert again.memory.value == "v"


def test_an_unknown_upsert_source_is_invalid_argument(client: Client) -> None:
    request = memory_pb.UpsertMemoryRequest(owner=AGENT, key="k", value="v", source=7)
    details = invalid(lambda: client.call(client.memory.UpsertMemory, request, timeout=TIMEOUT))
    assert list(details.violations) == ["source"]


def test_unspecified_where_a_value_is_required_is_invalid_argument(client: Client) -> None:
    no_label = block_pb.WriteBlockRequest(scope=memory_pb2.SCOPE_USER, content="x")
    details = invalid(lambda: client.call(client.blocks.WriteBlock, no_label, timeout=TIMEOUT))
    assert set(details.violations) == {"label"}
    no_scope = block_pb.GetBlockRequest(label=block_pb2.BLOCK_LABEL_CORE)
    details = invalid(lambda: client.call(client.blocks.GetBlock, no_scope, timeout=TIMEOUT))
    assert set(details.violations) == {"scope"}
    decisions = decision_stub(client)
    no_status = decision_pb.ResolveDecisionRequest(
        decision_id="00000000-0000-4000-8000-000000000000"
    )
    details = invalid(lambda: client.call(decisions.ResolveDecision, no_status, timeout=TIMEOUT))
    assert set(details.violations) == {"resolution_status"}
