"""The rules the OpenAPI document states for a request's fields are the domain's: each
pattern takes exactly the texts the domain's own check takes."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from google.protobuf import descriptor_pool

from agent_memory.api.field_rules import BY_FIELD, BY_NAME, FORBIDDEN, Mask, Text, without
from agent_memory.api.stored_text import LINE_BREAK_CHARACTERS, line_break_violations
from agent_memory.domain import active_sessions, blocks, decisions, memory
from agent_memory.domain.errors import FieldViolation, InvalidArgument
from agent_memory.domain.text_rules import (
    identifier_violations,
    name_violations,
    text_violations,
)
from agent_memory.http.routes import routes
from agentmemory.v1 import decision_pb2

# Every character of the first planes a check might single out, and some beyond.
SAMPLES = [chr(c) for c in range(0x3100)] + ["\ufeff", "\U0001f600", "\U000e0001"]


def takes(pattern: str, text: str) -> bool:
    return re.fullmatch(pattern, text) is not None


def agrees(pattern: str, check: Callable[[str], list[FieldViolation]], texts: list[str]) -> None:
    wrong = [text for text in texts if takes(pattern, text) == bool(check(text))]
    assert not wrong, [f"U+{ord(t[-1]):04X}" for t in wrong[:10]]


def test_an_identifier_holds_what_identifier_violations_takes() -> None:
    pattern = without(FORBIDDEN["identifier"], spaced_as_words=True)
    texts = ["a" + c for c in SAMPLES] + [" a", "a  b", "a \u3000b", "a b", "\u3000a"]
    agrees(pattern, lambda t: identifier_violations("f", t, max_chars=9), texts)


def test_a_name_holds_what_name_violations_takes() -> None:
    rule = Text(9, "name").schema(given=True)
    excluded = rule["not"]["enum"]

    def schema_refuses(text: str) -> bool:
        return not takes(rule["pattern"], text) or text in excluded

    texts = ["a" + c for c in SAMPLES] + [".", "..", "...", "a/b", ".a", " a", "a  b", "a b"]
    wrong = [t for t in texts if schema_refuses(t) != bool(name_violations("f", t, max_chars=9))]
    assert not wrong


def test_a_text_holds_what_text_violations_takes() -> None:
    pattern = without(FORBIDDEN["any"], blank=False)
    blanks = [" ", "   ", "\t \n", "\u3000", " a "]
    agrees(
        pattern, lambda t: text_violations("f", t, max_chars=9), ["a" + c for c in SAMPLES] + blanks
    )


def test_a_session_id_holds_what_the_domain_takes() -> None:
    pattern = without(FORBIDDEN["token"])

    def refused(text: str) -> list[FieldViolation]:
        try:
            active_sessions.run_session("a", "r", text, "")
        except InvalidArgument as exc:
            return list(exc.violations)
        return []

    agrees(pattern, refused, ["a" + c for c in SAMPLES])


def test_a_one_line_text_of_a_write_holds_no_line_break_the_write_refuses() -> None:
    pattern = without(FORBIDDEN["any"] + LINE_BREAK_CHARACTERS)

    def refused(text: str) -> list[FieldViolation]:
        found = line_break_violations(decision_pb2.Decision(summary=text))
        return found + text_violations("f", text, max_chars=9)

    agrees(pattern, refused, ["a" + c for c in SAMPLES])


@pytest.mark.parametrize(
    ("rule", "check", "texts"),
    [
        (
            BY_FIELD["agentmemory.v1.CardType.name"],
            lambda t: decisions.card_type_name_violations("f", t),
            ["a", "a-b_c9", "A", "9a", "-a", "a b", "a" * 64, "a" * 65, "é"],
        ),
        (
            BY_FIELD["agentmemory.v1.Decision.action"],
            lambda t: decisions.action_violations("f", t),
            ["A", "APPROVE_2", "a", "2A", "A-B", "A" * 32, "A" * 33],
        ),
    ],
)
def test_a_patterned_text_holds_what_the_domain_takes(
    rule: Text, check: Callable[[str], list[FieldViolation]], texts: list[str]
) -> None:
    schema = rule.schema(given=True)

    def schema_refuses(text: str) -> bool:
        return not takes(schema["pattern"], text) or len(text) > schema["maxLength"]

    assert [t for t in texts if schema_refuses(t) != bool(check(t))] == []


def test_etags_are_those_the_domain_reads() -> None:
    memory_etag = BY_FIELD["agentmemory.v1.UpdateMemoryRequest.etag"].schema(given=True)
    for etag in ['W/"1"', 'W/"123456789012345678"', "*", " * "]:
        assert takes(memory_etag["pattern"], etag), etag
    for etag in ['W/"1234567890123456789"', '"1"', 'W/"a"', "", "**", 'W/"1.2"']:
        assert not takes(memory_etag["pattern"], etag), etag
        assert memory.version_from_etag(etag) is None
    block_etag = BY_FIELD["agentmemory.v1.WriteBlockRequest.etag"].schema(given=True)
    written = blocks.block_etag(3, datetime(2026, 4, 1, 9, tzinfo=UTC))
    assert takes(block_etag["pattern"], written)
    assert takes(block_etag["pattern"], "*")
    assert not takes(block_etag["pattern"], 'W/"1"')


def test_a_field_mask_names_only_what_may_change() -> None:
    mask = BY_FIELD["agentmemory.v1.UpdateMemoryRequest.update_mask"]
    assert isinstance(mask, Mask)
    pattern = mask.schema(given=True)["pattern"]
    for text in ["pinned", "expire_time", "expireTime,pinned", "key, value"]:
        assert takes(pattern, text), text
    for text in ["", "id", "pinned,", "memory.pinned", "pinned;key"]:
        assert not takes(pattern, text), text


def test_every_field_the_table_names_is_a_field_of_a_request() -> None:
    pool = descriptor_pool.Default()  # type: ignore[no-untyped-call]
    for name in BY_FIELD:
        message, _, field = name.rpartition(".")
        assert field in pool.FindMessageTypeByName(message).fields_by_name, name
    named = {field.name for route in routes() for field in route.request.fields}
    named |= {
        field.name
        for route in routes()
        for holder in route.request.fields
        if holder.message_type is not None
        for field in holder.message_type.fields
    }
    assert set(BY_NAME) <= named
