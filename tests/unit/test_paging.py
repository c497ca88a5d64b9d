"""Page sizes and sealed page tokens (domain/paging.py)."""

from __future__ import annotations

import base64
import json
import random
import secrets
from datetime import UTC, datetime, timedelta

import pytest
from google.protobuf import wrappers_pb2

from agent_memory.api.convert import fitted_all, fitted_page
from agent_memory.domain.errors import InvalidArgument, ResourceExhausted
from agent_memory.domain.memory import KEY_MAX_CHARS
from agent_memory.domain.paging import (
    DEFAULT_PAGE_SIZE,
    EXPIRED,
    KEY_BYTES,
    MAX_PAGE_SIZE,
    MAX_TOKEN_CHARS,
    NOT_OURS,
    OTHER_LISTING,
    OTHER_OWNER,
    OTHER_TENANT,
    PageKey,
    PageKeyring,
    PageTokens,
    page_size,
    paged,
    sealed_with,
)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def key(key_id: int, expires_at: datetime | None = None) -> PageKey:
    return PageKey(key_id, secrets.token_bytes(KEY_BYTES), expires_at)


KEYRING = PageKeyring((key(1),))


def tokens(
    keyring: PageKeyring = KEYRING,
    *,
    tenant: str = "acme",
    owner: tuple[str, ...] = ("agent", "a"),
    listing: tuple[str, ...] = ("memories",),
    now: datetime = NOW,
) -> PageTokens:
    return PageTokens(keyring, tenant=tenant, owner=owner, listing=listing, now=lambda: now)


MINE = tokens()


def refusal(opening: PageTokens, token: str, *, arity: int = 3) -> tuple[str, str]:
    """The one violation opening ``token`` gets: its description and reason."""
    with pytest.raises(InvalidArgument) as error:
        opening.open(token, arity=arity)
    [violation] = error.value.violations
    assert violation.field == "page_token"
    return violation.description, violation.reason


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def unb64(token: str) -> bytes:
    return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))


def is_json(raw: bytes) -> bool:
    try:
        json.loads(raw)
    except ValueError:
        return False
    return True


# --- page sizes ------------------------------------------------------------------------


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


# --- what a token holds ----------------------------------------------------------------


def test_empty_token_means_the_first_page() -> None:
    assert MINE.open("", arity=3) is None


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
    token = MINE.seal(position)  # type: ignore[arg-type]
    assert token
    assert "=" not in token
    assert MINE.open(token, arity=3) == position


def test_token_is_url_safe() -> None:
    token = MINE.seal([True, 1, "?>" * 50])
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def test_a_token_does_not_show_what_it_holds() -> None:
    key_text, total = "customer-acme-pricing", 987654
    token = MINE.seal([False, 42, key_text, total])
    raw = unb64(token)
    for secret in (key_text.encode(), str(total).encode(), b"acme", b"agent", b"memories"):
        assert secret not in raw
    assert not is_json(raw)


def test_the_same_position_seals_to_a_different_token_each_time() -> None:
    first, second = MINE.seal([False, 0, "k"]), MINE.seal([False, 0, "k"])
    assert first != second
    assert MINE.open(first, arity=3) == MINE.open(second, arity=3)


# --- whose listing it continues --------------------------------------------------------


def test_a_token_of_another_tenant_is_refused() -> None:
    token = tokens(tenant="globex").seal([False, 0, "k"])
    assert refusal(MINE, token) == (OTHER_TENANT, "INVALID_PAGE_TOKEN")


@pytest.mark.parametrize(
    "owner",
    [("agent", "b"), ("workspace", "a"), ("agent", "a", "x"), ()],
    ids=["other-agent", "same-id-as-workspace", "longer", "tenant"],
)
def test_a_token_for_another_owner_is_refused(owner: tuple[str, ...]) -> None:
    token = tokens(owner=owner).seal([False, 0, "k"])
    assert refusal(MINE, token) == (OTHER_OWNER, "INVALID_PAGE_TOKEN")


@pytest.mark.parametrize(
    "listing",
    [("events",), ("memories", "show_expired"), ("memories", "order_by=key")],
)
def test_a_token_of_another_listing_is_refused(listing: tuple[str, ...]) -> None:
    token = tokens(listing=listing).seal([False, 0, "k"])
    assert refusal(MINE, token) == (OTHER_LISTING, "INVALID_PAGE_TOKEN")


def test_a_token_of_another_method_is_said_to_be_another_listings_whatever_its_owner() -> None:
    token = tokens(owner=(), listing=("agents",)).seal([False, 0, "k"])
    assert refusal(MINE, token) == (OTHER_LISTING, "INVALID_PAGE_TOKEN")


def test_owner_and_listing_parts_do_not_run_into_each_other() -> None:
    token = tokens(owner=("agent", "a b")).seal([False, 0, "k"])
    assert refusal(tokens(owner=("agent a", "b")), token)[0] == OTHER_OWNER


def test_a_token_sealed_with_another_servers_key_is_refused() -> None:
    token = tokens(PageKeyring((key(1),))).seal([False, 0, "k"])
    assert refusal(MINE, token) == (NOT_OURS, "INVALID_PAGE_TOKEN")


# --- changed and made-up tokens ----------------------------------------------------------


def test_every_changed_byte_is_refused() -> None:
    raw = bytearray(unb64(MINE.seal([False, 3, "k", 12])))
    for at in range(len(raw)):
        changed = raw.copy()
        changed[at] ^= 0x01
        assert refusal(MINE, b64(bytes(changed)), arity=4) == (NOT_OURS, "INVALID_PAGE_TOKEN")


def test_a_cut_or_lengthened_token_is_refused() -> None:
    token = MINE.seal([False, 3, "k"])
    for changed in (token[:-1], token[:-4], token[: len(token) // 2], token + "A", token + "AAAA"):
        assert refusal(MINE, changed) == (NOT_OURS, "INVALID_PAGE_TOKEN")


@pytest.mark.parametrize(
    "token",
    [
        "garbage",
        "!!!!",
        "%%%%====",
        "not base64 at all",
        "\u00e9\u00e9\u00e9\u00e9",  # not ASCII
        "a",  # impossible base64 length
        b64(b"\xff\xfe\xfd"),
        b64(b'{"l":"0123456789abcdef","p":[false,0,"k"]}'),  # what tokens once were
        b64(b"\x01\x00\x00\x00\x01" + b"\x00" * 60),  # our header, nothing sealed
        "x" * (MAX_TOKEN_CHARS + 1),
    ],
)
def test_made_up_tokens_are_refused(token: str) -> None:
    assert refusal(MINE, token) == (NOT_OURS, "INVALID_PAGE_TOKEN")


@pytest.mark.parametrize("position", [[], [False], [False, 0], [False, 0, "k", "extra"]])
def test_tokens_of_the_wrong_arity_are_refused(position: list[object]) -> None:
    token = MINE.seal(position)  # type: ignore[arg-type]
    assert refusal(MINE, token, arity=3)[1] == "INVALID_PAGE_TOKEN"


@pytest.mark.parametrize("text", ["a\x00b", "\ud800"])
def test_a_position_no_database_can_store_is_refused(text: str) -> None:
    token = MINE.seal([False, 0, text])
    assert refusal(MINE, token)[1] == "INVALID_PAGE_TOKEN"


# --- size --------------------------------------------------------------------------------


def test_the_largest_positions_fit_the_token_limit() -> None:
    rng = random.Random(7)
    astral = "".join(chr(rng.randrange(0x10000, 0x10FFFF)) for _ in range(KEY_MAX_CHARS))
    wide = "".join(chr(rng.randrange(0x4E00, 0x9FFF)) for _ in range(KEY_MAX_CHARS))
    for text in (astral, wide):
        # Ordered by key: the key twice, then the total; and the natural order.
        for position in ([text, text, 2**31 - 1], [True, 100, text, 2**31 - 1]):
            token = MINE.seal(position)  # type: ignore[arg-type]
            assert len(token) <= MAX_TOKEN_CHARS
            assert MINE.open(token, arity=len(position)) == position


def test_an_oversized_token_is_refused() -> None:
    noise = "".join(chr(c) for c in secrets.token_bytes(MAX_TOKEN_CHARS))
    token = MINE.seal([False, 0, noise])
    assert len(token) > MAX_TOKEN_CHARS
    assert refusal(MINE, token) == (NOT_OURS, "INVALID_PAGE_TOKEN")


# --- keys and their rotation -----------------------------------------------------------


def rotated(keyring: PageKeyring, *, keep: timedelta) -> PageKeyring:
    """The keyring after a rotation at NOW."""
    older = tuple(PageKey(k.id, k.secret, k.expires_at or NOW + keep) for k in keyring.keys)
    return PageKeyring((*older, key(keyring.newest + 1)))


def test_after_a_rotation_an_older_token_still_opens_and_new_ones_use_the_new_key() -> None:
    old = MINE.seal([False, 0, "k"])
    after = tokens(rotated(KEYRING, keep=timedelta(hours=1)), now=NOW + timedelta(minutes=59))
    assert after.open(old, arity=3) == [False, 0, "k"]
    fresh = after.seal([False, 0, "l"])
    assert (sealed_with(old), sealed_with(fresh)) == (1, 2)
    assert after.open(fresh, arity=3) == [False, 0, "l"]


def test_a_token_of_an_expired_key_is_refused_as_expired() -> None:
    old = MINE.seal([False, 0, "k"])
    later = tokens(rotated(KEYRING, keep=timedelta(hours=1)), now=NOW + timedelta(hours=1))
    assert refusal(later, old) == (EXPIRED, "PAGE_TOKEN_EXPIRED")


def test_a_token_of_a_key_deleted_since_is_refused_as_expired() -> None:
    old = MINE.seal([False, 0, "k"])
    keyring = PageKeyring((key(3),))  # keys 1 and 2 expired and were deleted
    assert refusal(tokens(keyring), old) == (EXPIRED, "PAGE_TOKEN_EXPIRED")


def test_a_token_of_a_key_newer_than_any_held_is_refused() -> None:
    newer = tokens(PageKeyring((key(1), key(2)))).seal([False, 0, "k"])
    assert sealed_with(newer) == 2
    assert refusal(MINE, newer) == (NOT_OURS, "INVALID_PAGE_TOKEN")


@pytest.mark.parametrize("token", ["", "!!!", "a" * (MAX_TOKEN_CHARS + 1), b64(b"\x02abcd")])
def test_what_is_not_one_of_our_tokens_names_no_key(token: str) -> None:
    assert sealed_with(token) is None


def test_a_keyring_holds_keys_by_increasing_id() -> None:
    with pytest.raises(ValueError, match="increasing id"):
        PageKeyring(())
    with pytest.raises(ValueError, match="increasing id"):
        PageKeyring((key(2), key(1)))
    with pytest.raises(ValueError, match="32 bytes"):
        PageKey(1, b"short")


def test_a_key_never_shows_its_secret() -> None:
    secret_key = key(1)
    assert secret_key.secret.hex() not in repr(secret_key)
    assert repr(secret_key.secret) not in repr(PageKeyring((secret_key,)))


# --- pages cut short by the size of a response ------------------------------------------


ONE = tokens(listing=("numbers",))


def test_a_page_read_with_one_row_more_knows_another_page_follows() -> None:
    page = paged([1, 2, 3, 4], 3, ONE, lambda n: [n])
    assert page.items == [1, 2, 3]
    assert ONE.open(page.next_page_token, arity=1) == [3]
    last = paged([1, 2], 3, ONE, lambda n: [n])
    assert (last.items, last.next_page_token) == ([1, 2], "")


def test_a_cut_page_resumes_right_after_its_last_row() -> None:
    page = paged([1, 2, 3], 5, ONE, lambda n: [n])
    cut = page.cut(2)
    assert cut.items == [1, 2]
    assert ONE.open(cut.next_page_token, arity=1) == [2]
    assert page.cut(3) is page


def test_a_page_is_never_cut_to_nothing() -> None:
    with pytest.raises(ValueError, match="at least one row"):
        paged([1, 2], 5, ONE, lambda n: [n]).cut(0)


def test_a_response_takes_rows_up_to_its_byte_budget_and_hands_on_the_rest() -> None:
    page = paged(["a" * 100] * 5, 10, ONE, lambda s: [len(s)])
    messages, token = fitted_page(page, lambda s: wrappers_pb2.StringValue(value=s), budget=250)
    assert len(messages) == 2
    assert ONE.open(token, arity=1) == [100]
    everything, last = fitted_page(page, lambda s: wrappers_pb2.StringValue(value=s))
    assert (len(everything), last) == (5, "")


def test_a_row_larger_than_the_budget_is_still_sent_alone() -> None:
    page = paged(["a" * 1000, "b"], 10, ONE, lambda s: [s[0]])
    messages, token = fitted_page(page, lambda s: wrappers_pb2.StringValue(value=s), budget=10)
    assert [m.value for m in messages] == ["a" * 1000]
    assert ONE.open(token, arity=1) == ["a"]


def test_an_unpaged_listing_past_the_budget_is_refused_with_advice() -> None:
    rows = ["x" * 100] * 3
    assert len(fitted_all(rows, wrap, what="rows", advice="ask for less", budget=400)) == 3
    with pytest.raises(ResourceExhausted) as error:
        fitted_all(rows, wrap, what="rows", advice="ask for less", budget=200)
    assert error.value.reason == "RESPONSE_TOO_LARGE"
    assert error.value.message.endswith("ask for less")


def wrap(text: str) -> wrappers_pb2.StringValue:
    return wrappers_pb2.StringValue(value=text)
