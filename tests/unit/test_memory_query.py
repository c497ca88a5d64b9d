"""The listing filter (AIP-160) and order (AIP-132) as the service reads them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from agent_memory.domain.errors import InvalidArgument
from agent_memory.domain.memory import Memory, MemorySource, Owner, Scope
from agent_memory.domain.memory_query import (
    CURRENT,
    FILTER_MAX_DEPTH,
    AllOf,
    AnyOf,
    MemoryOrder,
    MemoryQuery,
    Not,
    Restriction,
    order_position,
    order_position_from_token,
    parse_filter,
    parse_order,
)

NOW = datetime(2026, 11, 5, 12, tzinfo=UTC)


def text(words: str) -> Restriction:
    return Restriction("text", ":", words)


def test_an_empty_filter_restricts_nothing() -> None:
    assert parse_filter("") == MemoryQuery()
    assert parse_filter("   ") == MemoryQuery()


def test_restrictions_join_by_and_or_by_white_space_alike() -> None:
    joined = parse_filter('tag = "billing" AND source = manual AND pinned = true')
    spaced = parse_filter('tag="billing" source=manual pinned=true')
    assert joined == spaced
    assert joined.condition == AllOf(
        (
            Restriction("tag", "=", "billing"),
            Restriction("source", "=", MemorySource.MANUAL),
            Restriction("pinned", "=", True),
        )
    )


def test_a_bare_word_or_string_searches_text_like_text_has() -> None:
    assert parse_filter("deploy").condition == text("deploy")
    assert parse_filter('"blue green" text:canary').condition == AllOf(
        (text("blue green"), text("canary"))
    )
    assert parse_filter(r'"say \"hi\""').condition == text('say "hi"')
    # Keywords are upper case: in lower case they are words to search for.
    assert parse_filter("this or that").condition == AllOf((text("this"), text("or"), text("that")))


def test_or_binds_tighter_than_and_as_aip_160_says() -> None:
    a, b, c = text("a"), text("b"), text("c")
    either = AllOf((a, AnyOf((b, c))))
    assert parse_filter("a AND b OR c").condition == either
    assert parse_filter("a b OR c").condition == either
    assert parse_filter("a OR b AND c").condition == AllOf((AnyOf((a, b)), c))
    assert parse_filter("a OR b OR c").condition == AnyOf((a, b, c))


def test_parentheses_group_what_precedence_would_not() -> None:
    a, b, c = text("a"), text("b"), text("c")
    assert parse_filter("(a AND b) OR c").condition == AnyOf((AllOf((a, b)), c))
    assert parse_filter("((a))").condition == a
    assert parse_filter("(a OR b) (c)").condition == AllOf((AnyOf((a, b)), c))


def test_not_and_minus_negate_the_restriction_or_group_after_them() -> None:
    pinned = Restriction("pinned", "=", True)
    assert parse_filter("NOT pinned = true").condition == Not(pinned)
    assert parse_filter("-pinned = true").condition == Not(pinned)
    assert parse_filter('-"blue green"').condition == Not(text("blue green"))
    assert parse_filter("-draft deploy").condition == AllOf((Not(text("draft")), text("deploy")))
    assert parse_filter("NOT (a OR b)").condition == Not(AnyOf((text("a"), text("b"))))
    assert parse_filter("- (a)").condition == Not(text("a"))
    # A value may start with a minus: it negates nothing there.
    assert parse_filter("importance > -1").condition == Restriction("importance", ">", -1)
    # A hyphen inside a word is the word's.
    assert parse_filter("blue-green").condition == text("blue-green")


def test_values_are_read_as_their_fields() -> None:
    assert parse_filter("source = MEMORY_SOURCE_AUTO").condition == Restriction(
        "source", "=", MemorySource.AUTO
    )
    assert parse_filter("tags:ops").condition == Restriction("tag", "=", "ops")
    assert parse_filter('key != "x"').condition == Restriction("key", "!=", "x")
    assert parse_filter("importance >= 5000").condition == Restriction("importance", ">=", 101)
    at = datetime(2026, 11, 1, 9, tzinfo=UTC)
    assert parse_filter('updatedAt > "2026-11-01T10:00:00+01:00"').condition == Restriction(
        "update_time", ">", at
    )


def test_expired_and_superseded_override_what_the_flags_show() -> None:
    unsaid = parse_filter("")
    assert unsaid.shown(expired=False, superseded=False) == CURRENT
    shown = unsaid.shown(expired=True, superseded=True)
    assert (shown.expired, shown.superseded) == (None, None)
    said = parse_filter("expired = true OR superseded = false").shown(
        expired=False, superseded=False
    )
    assert (said.expired, said.superseded) == (None, None)
    partly = parse_filter("NOT superseded = true").shown(expired=False, superseded=False)
    assert (partly.expired, partly.superseded) == (False, None)


def memory(
    key: str,
    value: str = "v",
    *,
    pinned: bool = False,
    importance: int = 0,
    source: MemorySource = MemorySource.MANUAL,
    tags: tuple[str, ...] = (),
    expire_time: datetime | None = None,
    valid_start_time: datetime | None = None,
    valid_end_time: datetime | None = None,
) -> Memory:
    return Memory(
        id=uuid.uuid4(),
        owner=Owner(Scope.AGENT, "coder"),
        key=key,
        value=value,
        pinned=pinned,
        importance=importance,
        source=source,
        created_at=NOW - timedelta(days=1),
        updated_at=NOW - timedelta(hours=1),
        version=1,
        tags=tags,
        expire_time=expire_time,
        valid_start_time=valid_start_time,
        valid_end_time=valid_end_time,
    )


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("pinned = true OR importance > 50", {"deploy", "tone"}),
        ("NOT pinned = true", {"tone", "editor", "gone"}),
        ("-tag = ops", {"editor", "gone"}),
        ("text:helix OR tag = style importance > 10", {"tone"}),
        ("(text:helix OR tag = style) OR importance > 70", {"deploy", "tone", "editor"}),
        ("expired = true OR key = deploy", {"deploy", "gone"}),
        ('update_time >= "2026-11-05T11:00:00Z" -source = auto', {"deploy", "tone", "gone"}),
    ],
)
def test_a_parsed_filter_keeps_what_it_says(text: str, kept: set[str]) -> None:
    rows = [
        memory("deploy", "Tuesdays", pinned=True, importance=80, tags=("ops",)),
        memory("tone", "Warm", importance=60, tags=("style", "ops")),
        memory("editor", "Helix", importance=10, source=MemorySource.AUTO),
        memory("gone", "Once", expire_time=NOW - timedelta(minutes=1)),
    ]
    query = parse_filter(text)
    assert {m.key for m in rows if query.admits(m, NOW)} == kept


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("valid = true", {"always", "now"}),
        ("valid = false", {"over", "soon"}),
        ('valid_end_time < "2026-11-06T00:00:00Z"', {"over", "now"}),
        ('NOT validEndTime < "2026-11-06T00:00:00Z"', {"always", "soon"}),
        ('valid_start_time > "2026-11-05T12:00:00Z"', {"soon"}),
        ('validStartTime <= "2026-11-05T12:00:00Z" valid = false', {"over"}),
    ],
)
def test_a_filter_reads_a_facts_period_its_open_ends_at_the_ends_of_time(
    text: str, kept: set[str]
) -> None:
    hour = timedelta(hours=1)
    rows = [
        memory("always"),
        memory("over", valid_start_time=NOW - 3 * hour, valid_end_time=NOW - hour),
        memory("now", valid_start_time=NOW - hour, valid_end_time=NOW + hour),
        memory("soon", valid_start_time=NOW + hour),
    ]
    query = parse_filter(text)
    assert {m.key for m in rows if query.admits(m, NOW)} == kept


def test_a_period_field_is_read_as_a_time_and_valid_as_true_or_false() -> None:
    at = datetime(2026, 3, 31, tzinfo=UTC)
    assert parse_filter('validEndTime >= "2026-03-31T00:00:00Z"').condition == Restriction(
        "valid_end_time", ">=", at
    )
    assert parse_filter("valid = FALSE").condition == Restriction("valid", "=", False)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("valid = maybe", "valid compares with true or false"),
        ("valid > true", 'valid takes "=" (true or false)'),
        ('valid_end_time < "March"', "valid_end_time compares with an RFC 3339 time"),
        ('valid_start_time : "2026-03-01T00:00:00Z"', "valid_start_time takes =, <"),
        ("colour = red", "'colour' is not a field; the fields are text, tag, key"),
        ("deploy AND colour = red", "'colour' is not a field; the fields are text"),
        ("deploy AND colour = red", "(at character 12)"),
        ("text = x", 'text takes ":"'),
        ("source = bogus", "source is one of manual, auto, director, memorize"),
        ("source = bogus", "(at character 10)"),
        ("pinned = maybe", "true or false"),
        ("importance != 3", "importance takes"),
        ("importance > high", "whole number"),
        ('"unclosed', "a quoted string is not closed (at character 1)"),
        ("source =", "source needs a value after '=' (at character 8)"),
        ("= manual", "'=' needs a field before it (at character 1)"),
        ("a OR", "OR needs a restriction after it (at its end)"),
        ("OR a", "OR needs a restriction before it (at character 1)"),
        ("a AND", "AND needs a restriction after it (at its end)"),
        ("a AND OR b", "AND needs a restriction after it (at character 7)"),
        ("(a OR b", "a parenthesis is not closed (at character 1)"),
        ("a) OR b", "')' closes no parenthesis (at character 2)"),
        ("a ()", "parentheses hold no restriction (at character 3)"),
        ("NOT", "NOT needs a restriction or parentheses after it (at character 1)"),
        ("NOT NOT a", "NOT needs a restriction or parentheses after it (at character 1)"),
        ("(" * (FILTER_MAX_DEPTH + 1) + "a" + ")" * (FILTER_MAX_DEPTH + 1), "nest at most"),
        ("x" * 1001, "at most 1000"),
    ],
)
def test_a_filter_it_cannot_read_is_refused_with_what_is_wrong_and_where(
    text: str, says: str
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse_filter(text)
    (violation,) = refused.value.violations
    assert (violation.field, violation.reason) == ("filter", "INVALID_FILTER")
    assert says in violation.description


def test_orders_name_fields_each_with_a_direction_ending_in_the_key() -> None:
    assert parse_order("") == MemoryOrder()
    assert parse_order("").natural
    assert parse_order("updated_at desc") == MemoryOrder((("updated_at", True), ("key", False)))
    assert parse_order("importance DESC") == MemoryOrder((("importance", True), ("key", False)))
    assert parse_order("key asc") == MemoryOrder((("key", False),))
    assert parse_order("key desc") == MemoryOrder((("key", True),))
    several = MemoryOrder((("updated_at", True), ("importance", False), ("key", True)))
    assert parse_order("update_time desc, importance, key desc") == several
    assert parse_order("updateTime DESC,importance asc,key desc") == several


def test_fields_after_the_key_are_never_reached_and_left_out() -> None:
    assert parse_order("key, importance desc") == MemoryOrder((("key", False),))


def test_an_order_names_its_field_as_the_json_and_the_filter_do_too() -> None:
    assert parse_order("updatedAt desc") == parse_order("updated_at desc")
    assert parse_order("createdAt") == parse_order("create_time") == parse_order("created_at")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("colour", "not 'colour'"),
        ("key sideways", "not 'key sideways'"),
        ("key desc asc", "field 1 is a field"),
        ("importance, importance desc", "names importance twice"),
        ("updated_at, updateTime desc", "names updated_at twice"),
        ("importance,, key", "field 2 is empty"),
        ("importance,", "field 2 is empty"),
    ],
)
def test_an_order_it_cannot_read_is_refused(text: str, says: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse_order(text)
    (violation,) = refused.value.violations
    assert (violation.field, violation.reason) == ("order_by", "INVALID_ORDER")
    assert says in violation.description


def test_a_position_holds_every_field_of_the_order_and_reads_back() -> None:
    order = parse_order("updated_at desc, importance")
    row = memory("deploy", importance=80)
    position = order_position(row, order)
    assert position == (row.updated_at, 80, "deploy")
    written = [row.updated_at.isoformat(), 80, "deploy"]
    assert order_position_from_token(order, written) == position
    for bad in ([written[0], 80], [written[0], "80", "deploy"], [80, 80, "deploy"]):
        with pytest.raises(ValueError, match="not a listing position"):
            order_position_from_token(order, bad)


@pytest.mark.parametrize(
    "text",
    [
        'key : "x"',
        'create_time > "yesterday"',
        'update_time > "2026-11-01T09:00:00"',
        'create_time > "9999-12-31T23:00:00-05:00"',
        'update_time < "0001-01-01T00:00:00+05:00"',
    ],
)
def test_a_key_or_time_it_cannot_read_is_refused(text: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse_filter(text)
    (violation,) = refused.value.violations
    assert (violation.field, violation.reason) == ("filter", "INVALID_FILTER")
