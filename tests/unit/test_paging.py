"""Page sizes and opaque page tokens (domain/paging.py)."""

from __future__ import annotations

import base64
import json

import pytest
from google.protobuf import wrappers_pb2

from agent_memory.api.convert import fitted_all, fitted_page
from agent_memory.domain.errors import InvalidArgument, ResourceExhausted
from agent_memory.domain.paging import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    MAX_TOKEN_CHARS,
    decode_page_token,
    encode_page_token,
    listing_fingerprint,
    page_size,
    paged,
)

LISTING = listing_fingerprint("memories", "agent", "a")


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def token_of(payload: object) -> str:
    return b64(json.dumps(payload).encode())


def assert_bad_token(token: str, *, listing: str = LISTING, arity: int = 3) -> None:
    with pytest.raises(InvalidArgument) as error:
        decode_page_token(token, listing, arity=arity)
    assert [(v.field, v.reason) for v in error.value.violations] == [
        ("page_token", "INVALID_PAGE_TOKEN")
    ]


def test_zero_page_size_means_the_default() -> None:
    assert page_size(0) == DEFAULT_PAGE_SIZE
    assert page_size(0, default=7) == 7


@pytest.mark.parametrize("requested", [1, 2, 50, MAX_PAGE_SIZE])
def test_page_size_within_the_maximum_is_kept(requested: int) -> None:
    assert page_size(requested) == requested


@pytest.mark.parametrize("requested", [MAX_PAGE_SIZE + 1, 2**31 - 1])
def test_page_size_above_the_maximum_is_lowered(requested: int) -> None:
    assert page_size(requested) == MAX_PAGE_SIZE
    assert page_size(requested, maximum=10) == 10


@pytest.mark.parametrize("requested", [-1, -(2**31)])
def test_negative_page_size_is_refused(requested: int) -> None:
    with pytest.raises(InvalidArgument) as error:
        page_size(requested)
    assert [(v.field, v.reason) for v in error.value.violations] == [("page_size", "OUT_OF_RANGE")]


def test_empty_token_means_the_first_page() -> None:
    assert decode_page_token("", LISTING, arity=3) is None


@pytest.mark.parametrize(
    "position",
    [
        [True, 100, "key"],
        [False, 0, ""],
        [False, 7, "\U0001f600 unicode key é"],
        [None, 1.5, "x"],
    ],
)
def test_token_round_trips_its_position(position: list[object]) -> None:
    token = encode_page_token(LISTING, position)
    assert token
    assert "=" not in token
    assert decode_page_token(token, LISTING, arity=3) == position


def test_token_is_url_safe() -> None:
    token = encode_page_token(LISTING, [True, 1, "?>" * 50])
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def test_listings_of_different_owners_have_different_fingerprints() -> None:
    fingerprints = {
        listing_fingerprint("memories", "agent", "a"),
        listing_fingerprint("memories", "agent", "b"),
        listing_fingerprint("memories", "workspace", "a"),
        listing_fingerprint("events", "agent", "a"),
    }
    assert len(fingerprints) == 4


def test_token_of_another_listing_is_refused() -> None:
    other = listing_fingerprint("memories", "agent", "b")
    token = encode_page_token(other, [False, 0, "k"])
    assert_bad_token(token)


def test_token_of_the_same_owner_id_in_another_scope_is_refused() -> None:
    token = encode_page_token(listing_fingerprint("memories", "workspace", "a"), [False, 0, "k"])
    assert_bad_token(token)


@pytest.mark.parametrize(
    "token",
    [
        "garbage",
        "!!!!",
        "%%%%====",
        "not base64 at all",
        "\u00e9\u00e9\u00e9\u00e9",  # not ASCII
        "a",  # impossible base64 length
        b64(b"\xff\xfe\xfd"),  # not UTF-8
        b64(b"not json"),
        b64(b"   "),  # only whitespace
        b64(b"{"),
    ],
)
def test_garbage_tokens_are_refused(token: str) -> None:
    assert_bad_token(token)


@pytest.mark.parametrize(
    "payload",
    [
        [LISTING, [False, 0, "k"]],  # not an object
        "just a string",
        42,
        None,
        {"p": [False, 0, "k"]},  # no listing
        {"l": LISTING},  # no position
        {"l": LISTING, "p": "False,0,k"},  # position not a list
        {"l": LISTING, "p": {"0": False}},
        {"l": LISTING, "p": [False, 0, ["nested"]]},  # not a scalar
        {"l": LISTING, "p": [False, 0, {"k": 1}]},
    ],
)
def test_tokens_of_the_wrong_shape_are_refused(payload: object) -> None:
    assert_bad_token(token_of(payload))


@pytest.mark.parametrize("position", [[], [False], [False, 0], [False, 0, "k", "extra"]])
def test_tokens_of_the_wrong_arity_are_refused(position: list[object]) -> None:
    assert_bad_token(encode_page_token(LISTING, position), arity=3)


def test_arity_is_checked_against_the_caller() -> None:
    token = encode_page_token(LISTING, [False, 0, "2026-01-01T00:00:00+00:00", "id"])
    assert decode_page_token(token, LISTING, arity=4) is not None
    assert_bad_token(token, arity=3)


def test_deeply_nested_garbage_token_is_refused() -> None:
    # short enough to pass the size check, deep enough to exhaust json's recursion limit
    token = b64(b"[" * 1500)
    assert len(token) <= MAX_TOKEN_CHARS
    assert_bad_token(token)


def test_oversized_token_is_refused() -> None:
    token = encode_page_token(LISTING, [False, 0, "k" * MAX_TOKEN_CHARS])
    assert len(token) > MAX_TOKEN_CHARS
    assert_bad_token(token)


def test_token_at_the_size_limit_is_read() -> None:
    position: list[object] = [False, 0, ""]
    overhead = len(encode_page_token(LISTING, position))
    # base64 makes 4 characters of 3 bytes; fill up to just under the limit
    position[2] = "k" * ((MAX_TOKEN_CHARS - overhead) * 3 // 4 - 3)
    token = encode_page_token(LISTING, position)
    assert len(token) <= MAX_TOKEN_CHARS
    assert decode_page_token(token, LISTING, arity=3) == position


# --- pages cut short by the size of a response ----------------------------------------


def test_a_page_read_with_one_row_more_knows_another_page_follows() -> None:
    page = paged([1, 2, 3, 4], 3, LISTING, lambda n: [n])
    assert page.items == [1, 2, 3]
    assert decode_page_token(page.next_page_token, LISTING, arity=1) == [3]
    last = paged([1, 2], 3, LISTING, lambda n: [n])
    assert (last.items, last.next_page_token) == ([1, 2], "")


def test_a_cut_page_resumes_right_after_its_last_row() -> None:
    page = paged([1, 2, 3], 5, LISTING, lambda n: [n])
    cut = page.cut(2)
    assert cut.items == [1, 2]
    assert decode_page_token(cut.next_page_token, LISTING, arity=1) == [2]
    assert page.cut(3) is page


def test_a_page_is_never_cut_to_nothing() -> None:
    with pytest.raises(ValueError, match="at least one row"):
        paged([1, 2], 5, LISTING, lambda n: [n]).cut(0)


def test_a_response_takes_rows_up_to_its_byte_budget_and_hands_on_the_rest() -> None:
    page = paged(["a" * 100] * 5, 10, LISTING, lambda s: [len(s)])
    messages, token = fitted_page(page, lambda s: wrappers_pb2.StringValue(value=s), budget=250)
    assert len(messages) == 2
    assert decode_page_token(token, LISTING, arity=1) == [100]
    everything, last = fitted_page(page, lambda s: wrappers_pb2.StringValue(value=s))
    assert (len(everything), last) == (5, "")


def test_a_row_larger_than_the_budget_is_still_sent_alone() -> None:
    page = paged(["a" * 1000, "b"], 10, LISTING, lambda s: [s[0]])
    messages, token = fitted_page(page, lambda s: wrappers_pb2.StringValue(value=s), budget=10)
    assert [m.value for m in messages] == ["a" * 1000]
    assert decode_page_token(token, LISTING, arity=1) == ["a"]


def test_an_unpaged_listing_past_the_budget_is_refused_with_advice() -> None:
    rows = ["x" * 100] * 3
    assert len(fitted_all(rows, wrap, what="rows", advice="ask for less", budget=400)) == 3
    with pytest.raises(ResourceExhausted) as error:
        fitted_all(rows, wrap, what="rows", advice="ask for less", budget=200)
    assert error.value.reason == "RESPONSE_TOO_LARGE"
    assert error.value.message.endswith("ask for less")


def wrap(text: str) -> wrappers_pb2.StringValue:
    return wrappers_pb2.StringValue(value=text)
