"""The keys that seal page tokens: the service's own table, no tenant's rows, read
alike by every server of the database.

Each server keeps the keys it loaded for a minute (:class:`KeyringCache`): after a
rotation, every server seals with the new key within that minute, and a token sealed
with a key this server has not loaded yet makes it load them again at once.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import LiteralString

from agent_memory.domain.errors import Conflict, Timeout, Unavailable
from agent_memory.domain.paging import KEY_BYTES, PageKey, PageKeyring
from agent_memory.store.repositories import PageKeyRepository
from agent_memory.store.sql import Connection, execute, fetch_all, fetch_one

# How long a server seals with the keys it loaded before it reads them again.
KEYRING_SECONDS = 60.0
# A token naming a key newer than those loaded loads them again, at most this often.
RELOAD_SECONDS = 1.0
ROTATE_ATTEMPTS = 5

_LOAD: LiteralString = """
SELECT id, secret, expires_at FROM page_token_keys
WHERE expires_at IS NULL OR expires_at > now()
ORDER BY id
"""
# The first key, when none seals (on first use): servers starting together make one.
_FIRST: LiteralString = """
INSERT INTO page_token_keys (id, secret)
SELECT coalesce(max(id), 0) + 1, %(secret)s FROM page_token_keys
HAVING NOT bool_or(expires_at IS NULL) OR count(*) = 0
ON CONFLICT (id) DO NOTHING
"""
# The keys that seal or open now start expiring; those expired go; a new one seals.
_ROTATE: LiteralString = """
WITH retired AS (
    UPDATE page_token_keys
    SET expires_at = least(coalesce(expires_at, 'infinity'::timestamptz), now() + %(keep)s)
    WHERE expires_at IS NULL OR expires_at > now()
    RETURNING id
), forgotten AS (
    DELETE FROM page_token_keys WHERE expires_at <= now() RETURNING id
)
INSERT INTO page_token_keys (id, secret)
SELECT coalesce(max(id), 0) + 1, %(secret)s FROM page_token_keys
ON CONFLICT (id) DO NOTHING
RETURNING id
"""


class PgPageKeys(PageKeyRepository):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    async def load(self) -> PageKeyring:
        rows = await fetch_all(self._conn, _LOAD, {})
        if not rows or rows[-1]["expires_at"] is not None:
            await execute(self._conn, _FIRST, {"secret": secrets.token_bytes(KEY_BYTES)})
            rows = await fetch_all(self._conn, _LOAD, {})
        return PageKeyring(
            tuple(PageKey(r["id"], bytes(r["secret"]), r["expires_at"]) for r in rows)
        )

    async def rotate(self, keep: timedelta) -> int:
        for _ in range(ROTATE_ATTEMPTS):
            # A rotation running beside this one took the next id: take the one after.
            params = {"keep": keep, "secret": secrets.token_bytes(KEY_BYTES)}
            row = await fetch_one(self._conn, _ROTATE, params)
            if row is not None:
                new_id: int = row["id"]
                return new_id
        raise Conflict(
            "other page token key rotations kept getting in the way; run it again",
            reason="CONCURRENT_ROTATION",
        )


class KeyringCache:
    """The keyring ``load`` returns, kept ``ttl`` seconds. When a load fails and keys
    are held, they are kept (tokens keep working while the primary is away)."""

    def __init__(
        self,
        load: Callable[[], Awaitable[PageKeyring]],
        *,
        ttl: float = KEYRING_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._load = load
        self._ttl = ttl
        self._clock = clock
        self._keyring: PageKeyring | None = None
        self._loaded_at = 0.0
        self._reloaded_at: float | None = None

    async def get(self, *, knowing: int = 0) -> PageKeyring:
        """The keyring, loaded again when older than ``ttl``, or when ``knowing`` names
        a key newer than its newest (at most once a second)."""
        now = self._clock()
        keyring = self._keyring
        if keyring is None:
            return await self._fetch(now)
        newer = knowing > keyring.newest and (
            self._reloaded_at is None or now - self._reloaded_at >= RELOAD_SECONDS
        )
        if not newer and now - self._loaded_at < self._ttl:
            return keyring
        if newer:
            self._reloaded_at = now
        try:
            return await self._fetch(now)
        except (Unavailable, Timeout):
            self._loaded_at = now  # try again after another while, not at every call
            return keyring

    async def _fetch(self, now: float) -> PageKeyring:
        self._keyring = await self._load()
        self._loaded_at = now
        return self._keyring
