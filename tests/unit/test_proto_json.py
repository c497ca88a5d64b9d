"""A document the parser refuses is explained in the contract's words, never Python's."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import json_format

from agent_memory.domain.text_rules import DuplicateKey, parse_json
from agent_memory.proto_json import as_proto_json, parse_problem
from agentmemory.v1 import memory_service_pb2 as pb

PYTHON_WORDS = (
    "int()",
    "time data",
    "iterable",
    "literal",
    "float",
    "NoneType",
    "bytes-like",
    "Message type",  # the parser's name of a message, not the document's
    "agentmemory.v1",
)


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ({"importance": "high"}, "importance: must be a whole number"),
        ({"importance": 1.5}, "importance: must be a whole number"),
        ({"importance": 99999999999}, "importance: must be a whole number from"),
        ({"expireTime": "2026-04"}, "expireTime: must be an RFC 3339 time with its zone"),
        ({"expireTime": "2026-04-01T09:00:00"}, "expireTime: must be an RFC 3339 time"),
        ({"ttl": "10"}, "ttl: must be a duration in seconds ending in s"),
        ({"pinned": "yes"}, "pinned: must be true or false"),
        ({"owner": 5}, "owner: must be a JSON object"),
        ({"owner": {"agentId": 5}}, "owner.agentId: must be a string"),
        ({"source": "X"}, "source: must be one of MEMORY_SOURCE_UNSPECIFIED, MEMORY_SOURCE_MANUAL"),
        ({"nope": 1}, 'has no field named "nope"'),
        ({"owner": {"nope": 1}}, 'owner: has no field named "nope"'),
        (
            {"owner": {"agentId": "a", "workspaceId": "b"}},
            'should not have multiple "kind" oneof fields',
        ),
    ],
)
def test_a_refused_value_names_its_field_and_what_it_takes(
    document: dict[str, Any], said: str
) -> None:
    with pytest.raises(json_format.ParseError) as refused:
        json_format.ParseDict(document, pb.UpsertMemoryRequest())
    problem = parse_problem(refused.value, pb.UpsertMemoryRequest())
    assert said in problem
    for word in PYTHON_WORDS:
        assert word not in problem


def test_a_field_no_message_has_is_named_with_the_item_it_is_in() -> None:
    document = {"memory": {"groundings": [{}, {"bogus": 1}]}}
    with pytest.raises(json_format.ParseError) as refused:
        json_format.ParseDict(document, pb.UpdateMemoryRequest())
    problem = parse_problem(refused.value, pb.UpdateMemoryRequest())
    assert problem == 'memory.groundings[1]: has no field named "bogus"'


def test_an_object_that_names_a_key_twice_is_refused_at_any_depth() -> None:
    assert parse_json('{"a": {"b": 1, "c": 2}}') == {"a": {"b": 1, "c": 2}}
    with pytest.raises(DuplicateKey, match="'b' is given twice"):
        parse_json('{"a": {"b": 1, "b": 2}}')
    with pytest.raises(DuplicateKey):
        parse_json(b'[{"k": 1, "k": 1}]')


def test_what_people_write_is_written_out_as_proto_json_takes_it() -> None:
    from agentmemory.v1 import block_service_pb2

    written = as_proto_json(
        {"memory": {"source": "auto", "key": "k"}, "updateMask": "expire_time,value"},
        pb.UpdateMemoryRequest.DESCRIPTOR,
    )
    assert written == {
        "memory": {"source": "MEMORY_SOURCE_AUTO", "key": "k"},
        "updateMask": "expireTime,value",
    }
    block = as_proto_json(
        {"label": "core", "scope": "user"}, block_service_pb2.GetBlockRequest.DESCRIPTOR
    )
    assert block == {"label": "BLOCK_LABEL_CORE", "scope": "SCOPE_USER"}
    # What has no short form, or more than one, is left for the parser to refuse.
    assert as_proto_json({"source": "x"}, pb.UpsertMemoryRequest.DESCRIPTOR) == {"source": "x"}
