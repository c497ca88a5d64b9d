"""The listing filter (AIP-160) and order (AIP-132) as the service reads them."""

from __future__ import annotations

import pytest

from agent_memory.domain.errors import InvalidArgument
from agent_memory.domain.memory import MemorySource
from agent_memory.domain.memory_query import (
    CURRENT,
    MemoryOrder,
    MemoryQuery,
    parse_filter,
    parse_order,
)


def test_an_empty_filter_restricts_nothing() -> None:
    assert parse_filter("") == MemoryQuery()
    assert parse_filter("   ") == MemoryQuery()


def test_restrictions_join_by_and_or_by_white_space_alike() -> None:
    joined = parse_filter('tag = "billing" AND source = manual AND pinned = true')
    spaced = parse_filter('tag="billing" source=manual pinned=true')
    assert joined == spaced
    assert joined.tags == ("billing",)
    assert joined.sources == {MemorySource.MANUAL}
    assert joined.pinned is True


def test_a_bare_word_or_string_searches_text_like_text_has() -> None:
    assert parse_filter("deploy").texts == ("deploy",)
    assert parse_filter('"blue green" text:canary').texts == ("blue green", "canary")
    assert parse_filter(r'"say \"hi\""').texts == ('say "hi"',)


def test_sources_take_short_and_enum_names_and_exclusions() -> None:
    assert parse_filter("source = MEMORY_SOURCE_AUTO").sources == {MemorySource.AUTO}
    both = parse_filter("source != auto source != director")
    assert both.excluded_sources == {MemorySource.AUTO, MemorySource.DIRECTOR}
    # Two different equalities match nothing rather than either.
    assert parse_filter("source = auto source = manual").sources == frozenset()


def test_importance_comparisons_narrow_a_range() -> None:
    query = parse_filter("importance >= 50 importance < 80")
    assert (query.importance_min, query.importance_max) == (50, 79)
    assert (
        parse_filter("importance = 7").importance_min,
        parse_filter("importance = 7").importance_max,
    ) == (7, 7)


def test_expired_and_superseded_override_what_the_flags_show() -> None:
    unsaid = parse_filter("")
    assert unsaid.shown(expired=False, superseded=False) == CURRENT
    shown = unsaid.shown(expired=True, superseded=True)
    assert (shown.expired, shown.superseded) == (None, None)
    said = parse_filter("expired = true superseded = false").shown(expired=False, superseded=True)
    assert (said.expired, said.superseded) == (True, False)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("a OR b", "AND only"),
        ("(pinned = true)", "AND only"),
        ("NOT pinned = true", "AND only"),
        ("colour = red", "'colour' is not a field"),
        ("text = x", 'text takes ":"'),
        ("source = bogus", "source is one of manual, auto, director, memorize"),
        ("pinned = maybe", "true or false"),
        ("importance != 3", "importance takes"),
        ("importance > high", "whole number"),
        ('"unclosed', "not closed"),
        ("source =", "needs a value"),
        ("= manual", "needs a field"),
        ("x" * 1001, "at most 1000"),
    ],
)
def test_a_filter_it_cannot_read_is_refused_with_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse_filter(text)
    (violation,) = refused.value.violations
    assert (violation.field, violation.reason) == ("filter", "INVALID_FILTER")
    assert says in violation.description


def test_orders_name_one_field_and_a_direction() -> None:
    assert parse_order("") == MemoryOrder()
    assert parse_order("updated_at desc") == MemoryOrder("updated_at", True)
    assert parse_order("importance DESC") == MemoryOrder("importance", True)
    assert parse_order("key asc") == MemoryOrder("key", False)


def test_an_order_names_its_field_as_the_json_does_too() -> None:
    assert parse_order("updatedAt desc") == MemoryOrder("updated_at", True)
    assert parse_order("createdAt") == MemoryOrder("created_at", False)


@pytest.mark.parametrize("text", ["colour", "key, importance", "key sideways", "key desc asc"])
def test_an_order_it_cannot_read_is_refused(text: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse_order(text)
    (violation,) = refused.value.violations
    assert (violation.field, violation.reason) == ("order_by", "INVALID_ORDER")


def test_a_key_and_the_creation_and_change_times_restrict_a_listing() -> None:
    from datetime import UTC, datetime, timedelta

    at = datetime(2026, 11, 1, 9, tzinfo=UTC)
    query = parse_filter('key = "timezone" create_time >= "2026-11-01T09:00:00Z"')
    assert query.keys == ("timezone",)
    assert (query.created_min, query.created_max) == (at, None)
    later = parse_filter(
        'updatedAt > "2026-11-01T09:00:00Z" AND update_time <= "2026-11-02T00:00:00Z"'
    )
    assert later.updated_min == at + timedelta(microseconds=1)
    assert later.updated_max == datetime(2026, 11, 2, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        'key : "x"',
        'create_time > "yesterday"',
        'update_time > "2026-11-01T09:00:00"',
        'create_time > "9999-12-31T23:59:59.999999Z"',
        'update_time < "0001-01-01T00:00:00Z"',
    ],
)
def test_a_key_or_time_it_cannot_read_is_refused(text: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse_filter(text)
    (violation,) = refused.value.violations
    assert (violation.field, violation.reason) == ("filter", "INVALID_FILTER")
