"""Who is calling: every read and write is confined to the caller's tenant."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: a user inside a tenant."""

    tenant_id: str
    user_id: str
