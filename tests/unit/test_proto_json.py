"""A document the parser refuses is explained in the contract's words, never Python's."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import json_format

from agent_memory.domain.text_rules import DuplicateKey, parse_json
from agent_memory.proto_json import as_proto_json, lone_surrogates, loose_values, parse_problem
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
            "owner: give agentId or workspaceId, not both",
        ),
        (
            {"ttl": "60s", "expireTime": "2027-01-01T00:00:00Z"},
            "give expireTime or ttl, not both",
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


def test_a_lone_surrogate_is_found_in_any_string_or_key_and_named_by_its_path() -> None:
    document = parse_json(
        r'{"a": "\ud800", "b": ["ok", "x\udc00", {"\ud83d": 1, "c": "\ud83d\ude00"}],'
        r' "d": {"e": "\udbff"}, "\udfff": 2}'
    )
    assert lone_surrogates(document) == [
        ("a", "is not valid Unicode: it holds the lone surrogate U+D800"),
        ("b[1]", "is not valid Unicode: it holds the lone surrogate U+DC00"),
        (
            "b[2]",
            'has a key, "\\ud83d", that is not valid Unicode: it holds the lone surrogate U+D83D',
        ),
        ("d.e", "is not valid Unicode: it holds the lone surrogate U+DBFF"),
        ("", 'has a key, "\\udfff", that is not valid Unicode: it holds the lone surrogate U+DFFF'),
    ]
    # A pair of escapes is one character past U+FFFF, and text as any other.
    assert lone_surrogates(parse_json(r'{"\ud83d\ude00": ["\ud83d\ude00", 1, null]}')) == []
    assert lone_surrogates(parse_json(r'"\ud800"')) == [
        ("", "is not valid Unicode: it holds the lone surrogate U+D800")
    ]
    # A long key is shown in part.
    long_key = parse_json('{"' + "k" * 100 + r'\ud800": 1}')
    [(_, said)] = lone_surrogates(long_key)
    assert '"' + "k" * 40 + '"...' in said


def test_a_document_nested_deep_is_walked_without_recursion() -> None:
    document: Any = "\ud800"
    for _ in range(5000):
        document = [document]
    [(path, _)] = lone_surrogates(document)
    assert path == "[0]" * 5000


@pytest.mark.parametrize(
    ("document", "found"),
    [
        # A message is an object; a string or a list is not read as one.
        ({"owner": "coder"}, [("owner", "must be a JSON object")]),
        ({"owner": []}, [("owner", "must be a JSON object")]),
        ({"owner": ""}, [("owner", "must be a JSON object")]),
        # ... but for the well-known ones whose JSON is a string: the parser's to judge.
        ({"expireTime": "2026-04-01T09:00:00Z", "ttl": "60s"}, []),
        ({"expireTime": 5}, []),
        # A number where the document says one, not in quotes.
        (
            {"importance": "50"},
            [
                (
                    "importance",
                    "must be a whole number from -2147483648 to 2147483647, written as a JSON"
                    " number, not a string",
                )
            ],
        ),
        (
            {"importance": True},
            [("importance", "must be a whole number from -2147483648 to 2147483647")],
        ),
        ({"importance": 50, "pinned": True, "key": "k"}, []),
    ],
)
def test_a_value_of_another_json_type_than_its_field_s_is_found(
    document: dict[str, Any], found: list[tuple[str, str]]
) -> None:
    assert loose_values(document, pb.UpsertMemoryRequest.DESCRIPTOR) == found


def test_a_list_is_judged_item_by_item_and_must_be_a_list() -> None:
    memorize = pb.MemorizeRequest.DESCRIPTOR
    assert loose_values({"groundings": {}}, memorize) == [
        ("groundings", "must be a list; each item must be a JSON object")
    ]
    assert loose_values({"groundings": [{}, "x"]}, memorize) == [
        ("groundings[1]", "must be a JSON object")
    ]
    assert loose_values({"tags": "ops"}, memorize) == [
        ("tags", "must be a list; each item must be a string")
    ]
    assert loose_values({"confidence": "0.5"}, memorize) == [
        ("confidence", "must be a JSON number, not a string")
    ]
    assert loose_values({"conversation": {"messages": [1]}}, memorize) == [
        ("conversation.messages[0]", "must be a JSON object")
    ]
    # A Struct is an object too.
    assert loose_values({"metadata": ["x"]}, memorize) == [("metadata", "must be a JSON object")]
    # Text of a query is text: its types are the parser's to read.
    assert loose_values({"tags": "ops", "confidence": "0.5"}, memorize, typed=False) == []
