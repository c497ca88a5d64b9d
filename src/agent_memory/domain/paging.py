"""Opaque page tokens (AIP-158).

A token remembers where the previous page stopped (the sort key of its last
row) and which listing it belongs to, so a token from one listing is refused
by another instead of silently skipping rows.

A page can be cut shorter than it was read (a response has a size limit): every
page knows the token that continues right after any of its rows, so the rows cut
off come first on the next page and every row is still listed exactly once.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, NoReturn, TypeVar

from agent_memory.domain.errors import FieldViolation, InvalidArgument, check

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 1000
MAX_TOKEN_CHARS = 2048

T = TypeVar("T")
Scalar = str | int | bool | float | None
Position = list[Scalar]


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
    rows: list[T], limit: int, listing: str, position: Callable[[T], Sequence[Scalar]]
) -> Page[T]:
    """The page of ``rows`` (read with one row more than ``limit``, to know whether
    another page follows), resuming after a row at its ``position`` in ``listing``."""

    def resume_after(row: T) -> str:
        return encode_page_token(listing, position(row))

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


def listing_fingerprint(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def encode_page_token(listing: str, position: Sequence[Scalar]) -> str:
    payload = json.dumps({"l": listing, "p": list(position)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def refuse_page_token() -> NoReturn:
    """Raises: InvalidArgument — the page token was not made by this listing."""
    raise InvalidArgument(
        [FieldViolation("page_token", "is not a page token of this listing", "INVALID_PAGE_TOKEN")]
    )


def decode_page_token(token: str, listing: str, *, arity: int) -> Position | None:
    """The position a token names; ``None`` for the first page."""
    if not token:
        return None
    if len(token) > MAX_TOKEN_CHARS:
        refuse_page_token()
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeError, binascii.Error, RecursionError):
        refuse_page_token()
    if (
        not isinstance(data, dict)
        or data.get("l") != listing
        or not isinstance(data.get("p"), list)
        or len(data["p"]) != arity
        or not all(_storable(v) for v in data["p"])
    ):
        refuse_page_token()
    position: Position = data["p"]
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
