"""Opaque page tokens (AIP-158).

A token remembers where the previous page stopped (the sort key of its last
row) and which listing it belongs to, so a token from one listing is refused
by another instead of silently skipping rows.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, NoReturn, TypeVar

from agent_memory.domain.errors import FieldViolation, InvalidArgument, check

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 1000
MAX_TOKEN_CHARS = 2048

T = TypeVar("T")
Position = list[str | int | bool | float | None]


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_page_token: str


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


def encode_page_token(listing: str, position: Sequence[str | int | bool | float | None]) -> str:
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
