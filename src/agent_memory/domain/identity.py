"""Who is calling: every read and write is confined to the caller's tenant."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: a user inside a tenant."""

    tenant_id: str
    user_id: str


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
class StoredApiKey:
    """A key as stored: its description and a hash of its secret, never the secret."""

    info: ApiKeyInfo
    secret_hash: bytes
