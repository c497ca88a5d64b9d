"""API keys: created and revoked by operators, checked on every call."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime

from agent_memory.domain.errors import Unauthenticated, check
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import text_violations
from agent_memory.store import keys as key_store
from agent_memory.store.database import Database
from agent_memory.store.models import ApiKeyRow

KEY_PREFIX = "amk"
IDENTITY_MAX_CHARS = 255


@dataclass(frozen=True)
class ApiKeyInfo:
    """What an operator may see of a key: never its secret."""

    key_id: str
    tenant_id: str
    user_id: str
    name: str
    created_at: datetime
    revoked_at: datetime | None


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
        text_violations("tenant", tenant_id, max_chars=IDENTITY_MAX_CHARS)
        + text_violations("user", user_id, max_chars=IDENTITY_MAX_CHARS)
    )


class ApiKeys:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(self, *, tenant_id: str, user_id: str, name: str = "") -> NewApiKey:
        validate_identity(tenant_id, user_id)
        check(text_violations("name", name, max_chars=255, min_chars=0))
        key_id = secrets.token_hex(8)
        secret = secrets.token_urlsafe(32).replace("_", "-")
        async with self._db.transaction() as session:
            row = await key_store.add(
                session,
                tenant_id=tenant_id,
                key_id=key_id,
                user_id=user_id,
                secret_hash=_hash(secret),
                name=name,
            )
            info = _info(row)
        return NewApiKey(info=info, key=f"{KEY_PREFIX}_{key_id}_{secret}")

    async def list(self, *, tenant_id: str | None = None) -> list[ApiKeyInfo]:
        async with self._db.transaction() as session:
            return [_info(r) for r in await key_store.list_all(session, tenant_id=tenant_id)]

    async def revoke(self, key_id: str) -> ApiKeyInfo | None:
        async with self._db.transaction() as session:
            if await key_store.revoke(session, key_id) is None:
                return None
            row = await key_store.find(session, key_id)
            return _info(row) if row else None

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
        async with self._db.transaction() as session:
            row = await key_store.find(session, key_id)
            if (
                row is None
                or row.revoked_at is not None
                or not hmac.compare_digest(row.secret_hash, _hash(secret))
            ):
                raise Unauthenticated("invalid API key", reason="INVALID_API_KEY")
            return Principal(tenant_id=row.tenant_id, user_id=row.user_id)


def _info(row: ApiKeyRow) -> ApiKeyInfo:
    return ApiKeyInfo(
        key_id=row.id,
        tenant_id=row.tenant_id,
        user_id=row.user_id,
        name=row.name,
        created_at=row.created_at,
        revoked_at=row.revoked_at,
    )
