"""API keys: created and revoked by operators, checked on every call.

A verified key is remembered in the process for a few seconds (``cache_seconds``,
at most 5), so a call costs no database round trip for its credentials; a revoked
key stops working on every replica within that time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from agent_memory.domain.errors import Unauthenticated, check
from agent_memory.domain.identity import ApiKeyInfo, Principal, Role
from agent_memory.domain.text_rules import name_violations, text_violations
from agent_memory.store.repositories import Store

KEY_PREFIX = "amk"
IDENTITY_MAX_CHARS = 255
MAX_CACHE_SECONDS = 5.0
CACHE_ENTRIES = 10_000


@dataclass(frozen=True)
class NewApiKey:
    info: ApiKeyInfo
    key: str  # shown once, at creation; only a hash is stored


def _hash(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def _split(key: str) -> tuple[str, str] | None:
    parts = key.split("_")
    if len(parts) != 3 or parts[0] != KEY_PREFIX or not parts[1] or not parts[2]:
        return None
    return parts[1], parts[2]


def validate_identity(tenant_id: str, user_id: str) -> None:
    check(
        name_violations("tenant", tenant_id, max_chars=IDENTITY_MAX_CHARS)
        + name_violations("user", user_id, max_chars=IDENTITY_MAX_CHARS)
    )


class VerifiedKeys:
    """Keys verified against the store, each remembered for ``ttl`` seconds from its
    verification, the least recently used dropped beyond ``entries``.

    Only the hash of a key's secret is kept, never the secret; the caller it stands
    for is kept whole, role included.
    """

    def __init__(
        self,
        ttl: float,
        *,
        entries: int = CACHE_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 <= ttl <= MAX_CACHE_SECONDS:
            raise ValueError(f"a verified key is remembered 0 to {MAX_CACHE_SECONDS:g} seconds")
        self._ttl = ttl
        self._entries = entries
        self._clock = clock
        self._keys: OrderedDict[str, tuple[bytes, Principal, float]] = OrderedDict()

    def get(self, key_id: str, secret_hash: bytes) -> Principal | None:
        found = self._keys.get(key_id)
        if found is None:
            return None
        stored_hash, principal, expires = found
        if self._clock() >= expires:
            del self._keys[key_id]
            return None
        if not hmac.compare_digest(stored_hash, secret_hash):
            return None
        self._keys.move_to_end(key_id)
        return principal

    def put(
        self, key_id: str, secret_hash: bytes, principal: Principal, verified_at: float
    ) -> None:
        if self._ttl <= 0:
            return
        self._keys[key_id] = (secret_hash, principal, verified_at + self._ttl)
        self._keys.move_to_end(key_id)
        while len(self._keys) > self._entries:
            self._keys.popitem(last=False)

    def now(self) -> float:
        return self._clock()


class ApiKeys:
    def __init__(self, store: Store, *, cache_seconds: float = 0.0) -> None:
        self._store = store
        self._verified = VerifiedKeys(cache_seconds)

    async def create(
        self,
        *,
        tenant_id: str,
        user_id: str,
        name: str = "",
        role: Role = Role.ORCHESTRATOR,
    ) -> NewApiKey:
        """A new key of ``role`` for the user; its secret is in the result only."""
        validate_identity(tenant_id, user_id)
        check(text_violations("name", name, max_chars=255, min_chars=0))
        key_id = secrets.token_hex(8)
        secret = secrets.token_urlsafe(32).replace("_", "-")
        async with self._store.admin() as tx:
            info = await tx.keys.add(
                tenant_id=tenant_id,
                key_id=key_id,
                user_id=user_id,
                name=name,
                secret_hash=_hash(secret),
                role=role,
            )
        return NewApiKey(info=info, key=f"{KEY_PREFIX}_{key_id}_{secret}")

    async def list(self, *, tenant_id: str | None = None) -> list[ApiKeyInfo]:
        async with self._store.admin() as tx:
            return await tx.keys.select(tenant_id)

    async def revoke(self, key_id: str) -> tuple[ApiKeyInfo, bool] | None:
        """Revoke a key: the key as stored, and whether this call revoked it (False: it
        was revoked before, at its ``revoked_at``); ``None`` when there is no such key."""
        async with self._store.admin() as tx:
            stored = await tx.keys.find(key_id)
            if stored is not None and stored.info.revoked_at is not None:
                return stored.info, False
            revoked = await tx.keys.revoke(key_id)
        return None if revoked is None else (revoked, True)

    async def authenticate(self, key: str) -> Principal:
        """The caller a bearer key stands for.

        Raises:
            Unauthenticated: the key is malformed, unknown or revoked (one
                message for all three, so probing learns nothing).
        """
        parts = _split(key)
        if parts is None:
            raise Unauthenticated("invalid API key", reason="INVALID_API_KEY")
        key_id, secret = parts
        secret_hash = _hash(secret)
        principal = self._verified.get(key_id, secret_hash)
        if principal is not None:
            return principal
        verified_at = self._verified.now()
        async with self._store.admin() as tx:
            stored = await tx.keys.find(key_id)
        if (
            stored is None
            or stored.info.revoked_at is not None
            or not hmac.compare_digest(stored.secret_hash, secret_hash)
        ):
            raise Unauthenticated("invalid API key", reason="INVALID_API_KEY")
        principal = Principal(
            tenant_id=stored.info.tenant_id,
            user_id=stored.info.user_id,
            role=stored.info.role,
            key_id=stored.info.key_id,
        )
        self._verified.put(key_id, secret_hash, principal, verified_at)
        return principal
