"""Validation rules of memory rows (domain/memory.py): no transport, no storage."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from agent_memory.domain.errors import InvalidArgument
from agent_memory.domain.memory import (
    KEY_MAX_CHARS,
    VALUE_MAX_CHARS,
    Memory,
    MemoryPatch,
    MemorySource,
    Owner,
    Scope,
    etag_for,
    importance_violations,
    parse_memory_id,
    period_violations,
    valid_at,
    validate_new_memory,
    validate_patch,
    version_from_etag,
)
from agent_memory.domain.text_rules import name_violations, text_violations
from agent_memory.service.keys import validate_identity

EMOJI = "\U0001f600"  # one code point, four UTF-8 bytes, two UTF-16 units


def violations_of(error: pytest.ExceptionInfo[InvalidArgument]) -> dict[str, str]:
    """field path -> violation reason."""
    return {v.field: v.reason for v in error.value.violations}


def test_limits_match_the_spec() -> None:
    assert KEY_MAX_CHARS == 255
    assert VALUE_MAX_CHARS == 2000


@pytest.mark.parametrize("key", ["k", "k" * 255, EMOJI * 255, "é" * 255])
def test_keys_of_1_to_255_code_points_pass(key: str) -> None:
    validate_new_memory(key=key, value="v", importance=None, source=MemorySource.MANUAL)


@pytest.mark.parametrize("key", ["k" * 256, EMOJI * 256])
def test_keys_over_255_code_points_are_too_long(key: str) -> None:
    with pytest.raises(InvalidArgument) as error:
        validate_new_memory(key=key, value="v", importance=None, source=MemorySource.MANUAL)
    assert violations_of(error) == {"key": "TOO_LONG"}


@pytest.mark.parametrize("value", ["v", "v" * 2000, EMOJI * 2000])
def test_values_of_1_to_2000_code_points_pass(value: str) -> None:
    validate_new_memory(key="k", value=value, importance=None, source=MemorySource.MANUAL)


@pytest.mark.parametrize("value", ["v" * 2001, EMOJI * 2001])
def test_values_over_2000_code_points_are_too_long(value: str) -> None:
    with pytest.raises(InvalidArgument) as error:
        validate_new_memory(key="k", value=value, importance=None, source=MemorySource.MANUAL)
    assert violations_of(error) == {"value": "TOO_LONG"}


def test_empty_key_and_value_are_required_and_both_reported() -> None:
    with pytest.raises(InvalidArgument) as error:
        validate_new_memory(key="", value="", importance=None, source=MemorySource.MANUAL)
    assert violations_of(error) == {"key": "REQUIRED", "value": "REQUIRED"}


@pytest.mark.parametrize("field", ["key", "value"])
def test_nul_is_refused(field: str) -> None:
    fields = {"key": "k", "value": "v", field: "a\x00b"}
    with pytest.raises(InvalidArgument) as error:
        validate_new_memory(
            key=fields["key"], value=fields["value"], importance=None, source=MemorySource.MANUAL
        )
    assert violations_of(error) == {field: "INVALID_CHARACTER"}


def test_text_violation_names_the_given_path_and_the_length() -> None:
    [violation] = text_violations("owner.agent_id", "x" * 11, max_chars=10)
    assert violation.field == "owner.agent_id"
    assert violation.reason == "TOO_LONG"
    assert "10" in violation.description
    assert "11" in violation.description


@pytest.mark.parametrize("importance", [0, 1, 50, 100])
def test_importance_in_range_passes(importance: int) -> None:
    assert importance_violations("importance", importance) == []
    validate_new_memory(key="k", value="v", importance=importance, source=MemorySource.MANUAL)


@pytest.mark.parametrize("importance", [-1, 101, -(2**31), 2**31 - 1])
def test_importance_out_of_range_is_refused(importance: int) -> None:
    with pytest.raises(InvalidArgument) as error:
        validate_new_memory(key="k", value="v", importance=importance, source=MemorySource.MANUAL)
    assert violations_of(error) == {"importance": "OUT_OF_RANGE"}


def test_unset_importance_is_not_checked() -> None:
    validate_new_memory(key="k", value="v", importance=None, source=MemorySource.MANUAL)


def test_all_bad_fields_are_reported_together_under_the_prefix() -> None:
    with pytest.raises(InvalidArgument) as error:
        validate_new_memory(
            key="", value="v" * 2001, importance=101, prefix="memory.", source=MemorySource.MANUAL
        )
    assert violations_of(error) == {
        "memory.key": "REQUIRED",
        "memory.value": "TOO_LONG",
        "memory.importance": "OUT_OF_RANGE",
    }
    assert "memory.key" in error.value.message


def test_patch_checks_only_the_fields_it_sets_and_names_memory_paths() -> None:
    validate_patch(MemoryPatch())
    validate_patch(MemoryPatch(pinned=True))
    validate_patch(MemoryPatch(value="v" * 2000, importance=100))
    with pytest.raises(InvalidArgument) as error:
        validate_patch(MemoryPatch(key="k" * 256, value="", importance=-1))
    assert violations_of(error) == {
        "memory.key": "TOO_LONG",
        "memory.value": "REQUIRED",
        "memory.importance": "OUT_OF_RANGE",
    }


def test_patch_touches_content_only_for_key_value_or_importance() -> None:
    assert not MemoryPatch().touches_content
    assert not MemoryPatch(pinned=True).touches_content
    assert MemoryPatch(key="k").touches_content
    assert MemoryPatch(value="v").touches_content
    assert MemoryPatch(importance=0).touches_content


def test_only_manual_sources_are_writable() -> None:
    assert not MemorySource.MANUAL.read_only
    assert MemorySource.AUTO.read_only
    assert MemorySource.DIRECTOR.read_only
    assert MemorySource.MEMORIZE.read_only


@pytest.mark.parametrize("version", [1, 2, 42, 10**17])
def test_etag_round_trips_to_its_version(version: int) -> None:
    etag = etag_for(version)
    assert version_from_etag(etag) == version


def test_etags_of_different_versions_differ() -> None:
    assert etag_for(1) != etag_for(2)


@pytest.mark.parametrize(
    "etag",
    [
        "",
        "1",
        '"1"',
        'W/"',
        'W/""',
        'W/"-1"',
        'W/"1.5"',
        'W/"abc"',
        'W/"1',
        'w/"1"',
        'W/"1" ',
        'W/"10000000000000000000"',
        'W/"1"x"',
    ],
)
def test_foreign_etags_name_no_version(etag: str) -> None:
    assert version_from_etag(etag) is None


def test_etags_with_non_ascii_digits_are_foreign() -> None:
    assert version_from_etag('W/"\u0663"') is None  # ARABIC-INDIC DIGIT THREE
    assert version_from_etag('W/"\u00b2"') is None  # SUPERSCRIPT TWO


def test_parse_memory_id_accepts_a_uuid() -> None:
    memory_id = uuid.uuid4()
    assert parse_memory_id("id", str(memory_id)) == memory_id


def test_parse_memory_id_requires_a_value() -> None:
    with pytest.raises(InvalidArgument) as error:
        parse_memory_id("memory.id", "")
    assert violations_of(error) == {"memory.id": "REQUIRED"}


@pytest.mark.parametrize(
    "raw", ["not-a-uuid", "123", "g" * 32, "2e9d66dd-7edb-48c5-b9b4-beec0117d267" + "0"]
)
def test_parse_memory_id_refuses_what_is_not_a_uuid(raw: str) -> None:
    with pytest.raises(InvalidArgument) as error:
        parse_memory_id("id", raw)
    assert violations_of(error) == {"id": "INVALID_ID"}


@pytest.mark.parametrize(
    ("key", "source"),
    [
        ("auto:deploy", MemorySource.MANUAL),
        ("auto:deploy", MemorySource.DIRECTOR),
        ("director:learning:1", MemorySource.AUTO),
        ("memorize:ab12", MemorySource.MANUAL),
    ],
)
def test_a_generated_key_s_prefix_belongs_to_its_source(key: str, source: MemorySource) -> None:
    with pytest.raises(InvalidArgument) as refused:
        validate_new_memory(key=key, value="v", importance=None, source=source)
    assert violations_of(refused)["key"] == "RESERVED_KEY"
    validate_new_memory(key="deploy:" + key, value="v", importance=None, source=source)


@pytest.mark.parametrize("name", ["..", ".", "a/b", "/", "a\tb", "a\nb"])
def test_a_name_that_is_no_path_segment_is_refused(name: str) -> None:
    assert name_violations("agent_id", name, max_chars=255)
    with pytest.raises(InvalidArgument):
        validate_identity(name, "user")
    with pytest.raises(InvalidArgument):
        validate_identity("tenant", name)


@pytest.mark.parametrize("name", ["...", "a.b", "team alpha:bot", "ünï"])
def test_names_with_dots_and_spaces_pass(name: str) -> None:
    assert name_violations("agent_id", name, max_chars=255) == []


# --- a fact's period ------------------------------------------------------------------

START = datetime(2026, 3, 12, tzinfo=UTC)
END = datetime(2026, 3, 31, tzinfo=UTC)


@pytest.mark.parametrize(("start", "end"), [(None, None), (START, None), (None, END), (START, END)])
def test_a_period_open_at_either_end_or_ending_after_it_starts_passes(
    start: datetime | None, end: datetime | None
) -> None:
    assert period_violations(start, end) == []


@pytest.mark.parametrize("end", [START, START - timedelta(microseconds=1)])
def test_a_period_ending_at_or_before_its_start_names_its_end(end: datetime) -> None:
    (violation,) = period_violations(START, end, prefix="memory.")
    assert (violation.field, violation.reason) == ("memory.valid_end_time", "INVALID_PERIOD")
    assert "stored" not in violation.description
    (stored,) = period_violations(START, end, stored=True)
    assert stored.field == "valid_end_time"
    assert "stored" in stored.description


def test_a_period_holds_from_its_start_and_up_to_but_not_at_its_end() -> None:
    assert valid_at(START, END, START)
    assert valid_at(START, END, END - timedelta(microseconds=1))
    assert not valid_at(START, END, END)
    assert not valid_at(START, END, START - timedelta(microseconds=1))
    assert valid_at(None, None, START)
    assert valid_at(None, END, datetime.min.replace(tzinfo=UTC))
    assert valid_at(START, None, datetime.max.replace(tzinfo=UTC))


def stored_memory(start: datetime | None, end: datetime | None) -> Memory:
    return Memory(
        id=uuid.uuid4(),
        owner=Owner(Scope.AGENT, "a"),
        key="k",
        value="v",
        pinned=False,
        importance=0,
        source=MemorySource.AUTO,
        created_at=START,
        updated_at=START,
        version=1,
        valid_start_time=start,
        valid_end_time=end,
    )


def test_a_patch_sets_or_clears_each_end_of_the_period_and_keeps_the_other() -> None:
    current = stored_memory(START, END)
    later = END + timedelta(days=1)
    assert MemoryPatch(valid_end_time=later).period_of(current) == (START, later)
    assert MemoryPatch(clear_valid_start=True).period_of(current) == (None, END)
    assert MemoryPatch(clear_valid_end=True).period_of(current) == (START, None)
    assert MemoryPatch().period_of(current) == (START, END)


def test_a_patch_of_the_period_changes_only_what_differs_and_is_not_a_pin() -> None:
    current = stored_memory(START, None)
    patch = MemoryPatch(valid_start_time=START, valid_end_time=END, clear_valid_start=False)
    assert patch.changes(current) == MemoryPatch(valid_end_time=END)
    assert MemoryPatch(clear_valid_end=True).changes(current).empty
    assert MemoryPatch(clear_valid_start=True).changes(current) == MemoryPatch(
        clear_valid_start=True
    )
    assert not MemoryPatch(pinned=True, valid_end_time=END).only_pin
