"""Opaque page tokens (AIP-158), sealed.

A token remembers where the previous page stopped (the sort key of its last row) and
whose listing it continues: the caller's tenant, the owner of the rows listed (an
agent, a workspace, a memory, the caller's own blocks), and the listing itself (what
it lists, with which filter, order and view). It is sealed with authenticated
encryption (AES-256-GCM) under a key every server of the database shares: a caller
can neither read what a token holds nor change it, and a token is refused, saying
why, when another tenant sends it, or for another owner or another listing.

Keys are kept in the database (:class:`PageKeyring`, one made on first use). The
newest seals; when an operator rotates, the key it replaces still opens the tokens
it sealed until its expiry, after which they are refused as expired and the listing
starts again from its first page.

A page can be cut shorter than it was read (a response has a size limit): every
page knows the token that continues right after any of its rows, so the rows cut
off come first on the next page and every row is still listed exactly once.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import os
import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Generic, NoReturn, TypeVar

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from agent_memory.domain.errors import FieldViolation, InvalidArgument, check

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 1000
MAX_TOKEN_CHARS = 2048
# A key's secret: AES-256.
KEY_BYTES = 32

INVALID_PAGE_TOKEN = "INVALID_PAGE_TOKEN"
PAGE_TOKEN_EXPIRED = "PAGE_TOKEN_EXPIRED"

T = TypeVar("T")
Scalar = str | int | bool | float | None
Position = list[Scalar]

# A token: format and key id (authenticated, not secret), nonce, then the sealed
# binding (a digest each of tenant, owner and listing) and the deflated position.
_FORMAT = 1
_HEADER = struct.Struct(">BI")
_NONCE_BYTES = 12
_TAG_BYTES = 16
_DIGEST_BYTES = 8
BINDING_BYTES = 3 * _DIGEST_BYTES
# What a position inflates to, at most: far above any token the service makes.
_MAX_POSITION_BYTES = 64 * 1024
_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


# --- keys ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PageKey:
    """A key that seals page tokens. ``expires_at`` is set once a newer key replaced
    it: until then it still opens the tokens it sealed."""

    id: int
    secret: bytes = field(repr=False)
    expires_at: datetime | None = None

    def __post_init__(self) -> None:
        if len(self.secret) != KEY_BYTES:
            raise ValueError(f"a page token key is {KEY_BYTES} bytes")
        if not 0 < self.id < 2**32:
            raise ValueError("a page token key id is from 1 to 2**32 - 1")

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now


@dataclass(frozen=True)
class PageKeyring:
    """The keys that open page tokens, oldest first; the newest seals them."""

    keys: tuple[PageKey, ...]

    def __post_init__(self) -> None:
        ids = [k.id for k in self.keys]
        if not ids or ids != sorted(set(ids)):
            raise ValueError("a keyring holds at least one key, by increasing id")

    @property
    def sealing(self) -> PageKey:
        return self.keys[-1]

    @property
    def newest(self) -> int:
        return self.keys[-1].id

    def find(self, key_id: int) -> PageKey | None:
        return next((k for k in self.keys if k.id == key_id), None)


def sealed_with(token: str) -> int | None:
    """The id of the key a token says it was sealed with (unchecked: a server that
    does not know it yet reloads its keys); ``None`` when it cannot be one of ours."""
    if not 0 < len(token) <= MAX_TOKEN_CHARS or not set(token) <= _ALPHABET:
        return None
    raw = _from_base64(token[:8])  # 6 bytes: the header and a little more
    if raw is None or len(raw) < _HEADER.size:
        return None
    version, key_id = _HEADER.unpack_from(raw)
    return key_id if version == _FORMAT else None


@functools.lru_cache(maxsize=16)
def _cipher(secret: bytes) -> AESGCM:
    return AESGCM(secret)


# --- refusals --------------------------------------------------------------------------

NOT_OURS = (
    "is not a page token this service returned, or was changed: send next_page_token "
    "exactly as the listing returned it"
)
EXPIRED = (
    "has expired (the service's page token key was rotated since): list again from "
    "the first page, without a page_token"
)
OTHER_TENANT = (
    "was returned to another tenant: a page token continues a listing only for the "
    "tenant that listed"
)
OTHER_OWNER = (
    "was returned for another owner's listing: send it with the same owner (agent, "
    "workspace, memory or block) as the request that returned it"
)
OTHER_LISTING = (
    "was returned by another listing: send it to the method that returned it, with the "
    "same filter, order and view"
)
NOT_THIS_LISTING = "is not a page token of this listing"


def _refuse(description: str, reason: str = INVALID_PAGE_TOKEN) -> NoReturn:
    raise InvalidArgument([FieldViolation("page_token", description, reason)], reason=reason)


def refuse_page_token() -> NoReturn:
    """Raises: InvalidArgument — the page token holds a position this listing never
    made."""
    _refuse(NOT_THIS_LISTING)


# --- sealing ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Sealed:
    """What a token holds once opened: whose listing it continues, and where."""

    binding: bytes
    position: Position


def seal(keyring: PageKeyring, binding: bytes, position: Sequence[Scalar]) -> str:
    """A token holding ``binding`` and ``position``, sealed with the newest key."""
    key = keyring.sealing
    header = _HEADER.pack(_FORMAT, key.id)
    nonce = os.urandom(_NONCE_BYTES)
    text = json.dumps(list(position), separators=(",", ":"), ensure_ascii=False)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = deflate.compress(text.encode("utf-8", "surrogatepass")) + deflate.flush()
    sealed = _cipher(key.secret).encrypt(nonce, binding + packed, header)
    return base64.urlsafe_b64encode(header + nonce + sealed).decode("ascii").rstrip("=")


def unseal(keyring: PageKeyring, token: str, now: datetime) -> Sealed:
    """Open a token sealed by one of the keyring's keys.

    Raises:
        InvalidArgument: on ``page_token``: not a token this service sealed, or changed
            (reason ``INVALID_PAGE_TOKEN``); sealed with a key that has expired since
            (reason ``PAGE_TOKEN_EXPIRED``).
    """
    if len(token) > MAX_TOKEN_CHARS or not set(token) <= _ALPHABET:
        _refuse(NOT_OURS)
    raw = _from_base64(token)
    least = _HEADER.size + _NONCE_BYTES + _TAG_BYTES + BINDING_BYTES
    if raw is None or len(raw) < least:
        _refuse(NOT_OURS)
    version, key_id = _HEADER.unpack_from(raw)
    if version != _FORMAT:
        _refuse(NOT_OURS)
    key = keyring.find(key_id)
    if key is None:
        if 0 < key_id < keyring.newest:  # keys count up: an older one has expired
            _refuse(EXPIRED, PAGE_TOKEN_EXPIRED)
        _refuse(NOT_OURS)
    if key.expired(now):
        _refuse(EXPIRED, PAGE_TOKEN_EXPIRED)
    nonce = raw[_HEADER.size : _HEADER.size + _NONCE_BYTES]
    try:
        body = _cipher(key.secret).decrypt(
            nonce, raw[_HEADER.size + _NONCE_BYTES :], raw[: _HEADER.size]
        )
    except InvalidTag:
        _refuse(NOT_OURS)
    binding, packed = body[:BINDING_BYTES], body[BINDING_BYTES:]
    inflate = zlib.decompressobj(-15)
    try:
        text = inflate.decompress(packed, _MAX_POSITION_BYTES)
        position = json.loads(text.decode("utf-8", "surrogatepass"))
    except (zlib.error, ValueError, RecursionError):
        _refuse(NOT_OURS)
    if not inflate.eof or inflate.unconsumed_tail or not isinstance(position, list):
        _refuse(NOT_OURS)
    return Sealed(binding, position)


def _from_base64(token: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (ValueError, binascii.Error):
        return None


def _digest(*parts: str) -> bytes:
    """Parts told apart however they are cut: ("a b",) is not ("a", "b")."""
    spelled = json.dumps(parts, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return hashlib.sha256(spelled).digest()[:_DIGEST_BYTES]


def _now() -> datetime:
    return datetime.now(UTC)


class PageTokens:
    """The page tokens of one listing, for one caller: ``tenant`` is the caller's,
    ``owner`` names whose rows are listed (empty for the tenant's own), ``listing``
    what is listed and how (its kind, filter, order, view)."""

    def __init__(
        self,
        keyring: PageKeyring,
        *,
        tenant: str,
        owner: Sequence[str],
        listing: Sequence[str],
        now: Callable[[], datetime] = _now,
    ) -> None:
        self._keyring = keyring
        self._tenant = _digest(tenant)
        self._owner = _digest(*owner)
        self._listing = _digest(*listing)
        self._now = now

    def seal(self, position: Sequence[Scalar]) -> str:
        """The token that continues the listing after ``position``."""
        return seal(self._keyring, self._tenant + self._owner + self._listing, position)

    def open(self, token: str, *, arity: int) -> Position | None:
        """The position a token names (``arity`` values); ``None`` for the first page.

        Raises:
            InvalidArgument: on ``page_token``: not a token of this service, or changed
                (reason ``INVALID_PAGE_TOKEN``); returned to another tenant, for another
                owner or by another listing (the same reason, the description says
                which); sealed with a key that has expired since (reason
                ``PAGE_TOKEN_EXPIRED``).
        """
        if not token:
            return None
        sealed = unseal(self._keyring, token, self._now())
        binding = sealed.binding
        if binding[:_DIGEST_BYTES] != self._tenant:
            _refuse(OTHER_TENANT)
        # Another method's token names another listing first, whatever owner it had.
        if binding[2 * _DIGEST_BYTES :] != self._listing:
            _refuse(OTHER_LISTING)
        if binding[_DIGEST_BYTES : 2 * _DIGEST_BYTES] != self._owner:
            _refuse(OTHER_OWNER)
        position = sealed.position
        if len(position) != arity or not all(_storable(v) for v in position):
            refuse_page_token()
        return position


def _storable(value: object) -> bool:
    """A position value the database can take: text without NUL or lone surrogates."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return "\x00" not in value
    return value is None or isinstance(value, int | bool | float)


# --- pages -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_page_token: str
    # The token that continues the listing right after a given row of this page.
    resume_after: Callable[[T], str] | None = None
    # How many rows the listing holds across all its pages, where it was counted.
    total_size: int | None = None

    def cut(self, count: int) -> Page[T]:
        """The first ``count`` rows, with the token that continues after the last of them."""
        if count >= len(self.items):
            return self
        if count < 1 or self.resume_after is None:
            raise ValueError("a page is cut after at least one row, by a listing that resumes")
        kept = self.items[:count]
        return Page(kept, self.resume_after(kept[-1]), self.resume_after, self.total_size)


def paged(
    rows: list[T], limit: int, tokens: PageTokens, position: Callable[[T], Sequence[Scalar]]
) -> Page[T]:
    """The page of ``rows`` (read with one row more than ``limit``, to know whether
    another page follows), resuming after a row at its ``position``."""

    def resume_after(row: T) -> str:
        return tokens.seal(position(row))

    items = rows[:limit]
    next_token = resume_after(items[-1]) if len(rows) > limit else ""
    return Page(items, next_token, resume_after)


def page_size(
    requested: int, *, default: int = DEFAULT_PAGE_SIZE, maximum: int = MAX_PAGE_SIZE
) -> int:
    """Zero means the default; above the maximum is lowered to it; negative is refused."""
    if requested < 0:
        check([FieldViolation("page_size", "must not be negative", "OUT_OF_RANGE")])
    if requested == 0:
        return default
    return min(requested, maximum)
