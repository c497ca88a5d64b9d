"""The checks every request passes before a servicer sees it, from the descriptors alone."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from google.protobuf import struct_pb2

from agent_memory.api.request_checks import (
    Undecodable,
    broken_field,
    checked,
    decoding,
    enum_violations,
    format_violations,
    request_descriptor,
)
from agent_memory.domain.errors import InvalidArgument
from agentmemory.v1 import block_pb2, decision_pb2, memory_pb2, recall_pb2
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import decision_service_pb2 as decision_pb
from agentmemory.v1 import memory_service_pb2 as memory_pb
from agentmemory.v1 import recall_service_pb2 as recall_pb

MEMORIZE = memory_pb.MemorizeRequest.DESCRIPTOR


# --- enums -----------------------------------------------------------------------------


def test_defined_enum_values_and_zero_pass() -> None:
    request = recall_pb.RenderPromptRequest(
        memory_policy=recall_pb2.MemoryPolicy(archival_mode=recall_pb2.ARCHIVAL_MODE_AUTO)
    )
    assert enum_violations(request) == []
    assert enum_violations(recall_pb.RenderPromptRequest()) == []


def test_an_undefined_number_in_a_nested_enum_is_named_by_its_path() -> None:
    request = recall_pb.RenderPromptRequest(memory_policy=recall_pb2.MemoryPolicy(archival_mode=99))
    (violation,) = enum_violations(request)
    assert violation.field == "memory_policy.archival_mode"
    assert violation.reason == "INVALID_ENUM"
    assert violation.description.startswith("99 is not a value of ArchivalMode")


def test_negative_numbers_are_undefined_too() -> None:
    request = block_pb.WriteBlockRequest(label=-1, scope=memory_pb2.SCOPE_USER)
    assert [v.field for v in enum_violations(request)] == ["label"]


def test_every_bad_enum_of_a_request_is_reported() -> None:
    request = block_pb.ListBlockVersionsRequest(label=5, scope=9)
    assert [v.field for v in enum_violations(request)] == ["label", "scope"]


def test_enums_inside_nested_messages_are_checked() -> None:
    request = memory_pb.UpdateMemoryRequest(memory=memory_pb2.Memory(scope=1, source=12))
    assert [v.field for v in enum_violations(request)] == ["memory.source"]
    card = decision_pb.RegisterCardTypeRequest(card_type=decision_pb2.CardType(re_examinable=4))
    assert [v.field for v in enum_violations(card)] == ["card_type.re_examinable"]


def test_enums_inside_repeated_messages_carry_their_index() -> None:
    message = memory_pb.ExtractMemoriesResponse(
        dropped=[memory_pb2.DroppedFact(scope=1), memory_pb2.DroppedFact(scope=42)]
    )
    assert [v.field for v in enum_violations(message)] == ["dropped[1].scope"]


def test_a_struct_null_value_with_an_undefined_number_is_refused() -> None:
    request = memory_pb.MemorizeRequest()
    request.metadata.fields["k"].null_value = 3  # type: ignore[assignment]
    (violation,) = enum_violations(request)
    assert violation.field == "metadata.fields['k'].null_value"


def test_messages_without_enums_are_not_walked() -> None:
    request = memory_pb.MemorizeRequest(
        conversation=memory_pb2.Conversation(
            messages=[memory_pb2.ConversationMessage(content="x")] * 1000
        )
    )
    assert enum_violations(request) == []


# --- where decoding broke --------------------------------------------------------------


def encoded_memorize(**fields: Any) -> bytes:
    return memory_pb.MemorizeRequest(**fields).SerializeToString()


def test_a_valid_message_has_no_broken_field() -> None:
    raw = encoded_memorize(content="x", tags=["a", "b"])
    assert broken_field(MEMORIZE, raw)[0] == ""


def test_invalid_utf8_names_the_string_field() -> None:
    raw = encoded_memorize(content="OK").replace(b"OK", b"\xff\xff")
    assert broken_field(MEMORIZE, raw) == ("content", "must be valid UTF-8")


def test_repeated_fields_carry_the_index_of_the_bad_element() -> None:
    raw = encoded_memorize(tags=["a", "b", "XX"]).replace(b"XX", b"\xed\xa0")  # a surrogate
    assert broken_field(MEMORIZE, raw) == ("tags[2]", "must be valid UTF-8")


def test_a_bad_string_in_a_nested_message_has_the_full_path() -> None:
    raw = encoded_memorize(
        groundings=[memory_pb2.Grounding(quote="fine"), memory_pb2.Grounding(quote="XX")]
    ).replace(b"XX", b"\x80\x80")
    assert broken_field(MEMORIZE, raw) == ("groundings[1].quote", "must be valid UTF-8")


def test_well_known_types_are_one_field() -> None:
    message = memory_pb.MemorizeRequest()
    message.groundings.add().metadata.update({"k": ["XX"]})
    raw = message.SerializeToString().replace(b"XX", b"\xc3\x28")
    assert broken_field(MEMORIZE, raw) == ("groundings[0].metadata", "must be valid UTF-8")


def test_truncation_names_the_field_being_read() -> None:
    raw = encoded_memorize(memory_key="abcdef")[:-2]
    field, problem = broken_field(MEMORIZE, raw)
    assert field == "memory_key"
    assert "truncated" in problem


def test_a_broken_tag_at_the_top_names_no_field() -> None:
    assert broken_field(MEMORIZE, b"\xff\xff")[0] == ""
    assert broken_field(MEMORIZE, b"\x00")[0] == ""


def test_unknown_fields_and_groups_are_skipped_as_the_runtime_skips_them() -> None:
    # Field 99 as a varint, then a group (field 98) holding a varint, then content.
    unknown = b"\x98\x06\x01" + b"\x93\x06\x08\x01\x94\x06"
    raw = unknown + encoded_memorize(content="OK")
    memory_pb.MemorizeRequest.FromString(raw)  # the runtime accepts it
    assert broken_field(MEMORIZE, raw)[0] == ""
    assert broken_field(MEMORIZE, unknown + b"\x12\x02\xff\xff") == (
        "content",
        "must be valid UTF-8",
    )


def test_a_known_field_with_another_wire_type_counts_as_unknown() -> None:
    raw = b"\x10\x05" + encoded_memorize(content="OK")  # content (2) as a varint
    memory_pb.MemorizeRequest.FromString(raw)
    assert broken_field(MEMORIZE, raw)[0] == ""


# --- the deserializer and the check -----------------------------------------------------


def test_the_request_type_is_found_from_the_method_path() -> None:
    descriptor = request_descriptor("/agentmemory.v1.MemoryService/Memorize")
    assert descriptor is MEMORIZE
    assert request_descriptor("/agentmemory.v1.MemoryService/Nope") is None
    assert request_descriptor("/no.such.Service/Memorize") is None


def test_the_wrapped_deserializer_decodes_good_bytes_as_before() -> None:
    decode = decoding(
        memory_pb.MemorizeRequest.FromString, "/agentmemory.v1.MemoryService/Memorize"
    )
    assert decode is not None
    assert decode(encoded_memorize(content="x")) == memory_pb.MemorizeRequest(content="x")
    assert decoding(None, "/agentmemory.v1.MemoryService/Memorize") is None


def test_the_wrapped_deserializer_hands_on_a_marker_instead_of_raising() -> None:
    decode = decoding(
        memory_pb.MemorizeRequest.FromString, "/agentmemory.v1.MemoryService/Memorize"
    )
    assert decode is not None
    marker = decode(encoded_memorize(content="OK").replace(b"OK", b"\xff\xff"))
    assert marker == Undecodable("agentmemory.v1.MemorizeRequest", "content", "must be valid UTF-8")
    with pytest.raises(InvalidArgument) as info:
        checked(marker)
    assert info.value.reason == "UNDECODABLE_REQUEST"
    assert [(v.field, v.reason) for v in info.value.violations] == [
        ("content", "UNDECODABLE_REQUEST")
    ]


def test_checked_passes_good_requests_through_and_refuses_bad_enums() -> None:
    good = block_pb.GetBlockRequest(label=block_pb2.BLOCK_LABEL_CORE)
    assert checked(good) is good
    with pytest.raises(InvalidArgument) as info:
        checked(block_pb.GetBlockRequest(label=3))
    assert info.value.reason == "INVALID_ENUM"


def test_a_stream_of_requests_is_checked_as_it_is_read() -> None:
    async def requests() -> AsyncIterator[Any]:
        yield block_pb.GetBlockRequest(label=block_pb2.BLOCK_LABEL_CORE)
        yield block_pb.GetBlockRequest(label=77)

    async def read() -> list[Any]:
        return [r async for r in checked(requests())]

    with pytest.raises(InvalidArgument):
        asyncio.run(read())


def test_a_struct_is_not_a_request_of_its_own() -> None:
    assert enum_violations(struct_pb2.Struct()) == []


# --- formats ---------------------------------------------------------------------------


def test_a_uuid_field_takes_a_uuid_in_its_hyphenated_form_only() -> None:
    good = "6f1c1e4a-2b1d-4c8e-9a57-0d3c1f2e4b5a"
    assert format_violations(memory_pb.GetMemoryRequest(id=good)) == []
    assert format_violations(memory_pb.GetMemoryRequest(id=good.upper())) == []
    for bad in ("memory-1", good.replace("-", ""), f"{{{good}}}", f"urn:uuid:{good}", good + "\n"):
        (violation,) = format_violations(memory_pb.GetMemoryRequest(id=bad))
        assert (violation.field, violation.reason) == ("id", "INVALID_ID")


def test_uuid_fields_are_checked_in_lists_and_nested_messages() -> None:
    good = "6f1c1e4a-2b1d-4c8e-9a57-0d3c1f2e4b5a"
    memorize = memory_pb.MemorizeRequest(content="c", supersedes=[good, "nope"])
    assert [v.field for v in format_violations(memorize)] == ["supersedes[1]"]
    update = memory_pb.UpdateMemoryRequest(memory=memory_pb2.Memory(id="nope"))
    assert [v.field for v in format_violations(update)] == ["memory.id"]
    with pytest.raises(InvalidArgument) as refused:
        checked(update)
    assert refused.value.reason == "INVALID_ID"


def test_an_unset_uuid_field_is_left_to_the_service() -> None:
    assert format_violations(memory_pb.GetMemoryRequest()) == []
