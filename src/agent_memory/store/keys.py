"""API keys across tenants; only a hash of each secret is stored."""

from __future__ import annotations

from typing import LiteralString

from agent_memory.domain.identity import ApiKeyInfo, Role, StoredApiKey
from agent_memory.store.columns import insert_columns, insert_values, output
from agent_memory.store.models import ApiKeyRow
from agent_memory.store.repositories import KeyRepository
from agent_memory.store.sql import Connection, Row, fetch_all, fetch_one

_COLUMNS = output(ApiKeyRow, "")
_ADD: LiteralString = f"""
INSERT INTO api_keys ({insert_columns(ApiKeyRow)})
VALUES ({insert_values(ApiKeyRow)})
RETURNING {_COLUMNS}
"""
_FIND: LiteralString = f"SELECT {_COLUMNS} FROM api_keys WHERE id = %(id)s"
_ALL: LiteralString = f"""
SELECT {_COLUMNS} FROM api_keys
WHERE %(tenant_id)s::text IS NULL OR tenant_id = %(tenant_id)s
ORDER BY tenant_id, created_at, id
"""
_REVOKE: LiteralString = f"""
UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = %(id)s
RETURNING {_COLUMNS}
"""


def _info(row: Row) -> ApiKeyInfo:
    return ApiKeyInfo(
        key_id=row["id"],
        tenant_id=row["tenant_id"],
        user_id=row["user_id"],
        name=row["name"],
        created_at=row["created_at"],
        revoked_at=row["revoked_at"],
        role=Role(row["role"]),
    )


class PgKeys(KeyRepository):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    async def add(
        self,
        *,
        tenant_id: str,
        key_id: str,
        user_id: str,
        name: str,
        secret_hash: bytes,
        role: Role = Role.ORCHESTRATOR,
    ) -> ApiKeyInfo:
        row = await fetch_one(
            self._conn,
            _ADD,
            {
                "tenant_id": tenant_id,
                "id": key_id,
                "user_id": user_id,
                "secret_hash": secret_hash,
                "name": name,
                "role": role.value,
            },
        )
        assert row is not None  # an insert returns its row
        return _info(row)

    async def find(self, key_id: str) -> StoredApiKey | None:
        row = await fetch_one(self._conn, _FIND, {"id": key_id})
        return StoredApiKey(_info(row), bytes(row["secret_hash"])) if row else None

    async def select(self, tenant_id: str | None = None) -> list[ApiKeyInfo]:
        return [_info(r) for r in await fetch_all(self._conn, _ALL, {"tenant_id": tenant_id})]

    async def revoke(self, key_id: str) -> ApiKeyInfo | None:
        row = await fetch_one(self._conn, _REVOKE, {"id": key_id})
        return _info(row) if row else None
