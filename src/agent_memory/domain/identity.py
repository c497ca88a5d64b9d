"""Who is calling: every read and write is confined to the caller's tenant, and to
what the caller's role allows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from agent_memory.domain.errors import PermissionDenied

ROLE_FORBIDS = "ROLE_FORBIDS"


class Role(StrEnum):
    """What an API key may do. Each role allows everything the roles before it do.

    - ``reader``: read RPCs only.
    - ``editor``: also writes MANUAL memories and blocks (a person in the memory panel).
    - ``orchestrator``: everything: other memory sources, extraction, learnings, runs,
      decisions and settings.
    """

    READER = "reader"
    EDITOR = "editor"
    ORCHESTRATOR = "orchestrator"

    @property
    def rank(self) -> int:
        return _RANKS[self]

    def allows(self, needed: Role) -> bool:
        return self.rank >= needed.rank


_RANKS = {Role.READER: 0, Role.EDITOR: 1, Role.ORCHESTRATOR: 2}


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: a user inside a tenant, acting with a role.

    The role is the API key's; the unauthenticated local mode and the server's own
    background work (queued extraction passes) act as orchestrator.
    """

    tenant_id: str
    user_id: str
    role: Role = Role.ORCHESTRATOR
    key_id: str = ""  # the API key it authenticated with; empty in the local mode

    @property
    def person(self) -> bool:
        """Whether the caller is a person: a key of the editor role, the role the memory
        panel is for. What it writes is that person's own words, which the learned
        screens take as read; an orchestrator's writes (a model's tools among them, as
        the MCP server's memory_upsert) are judged, whatever their source."""
        return self.role is Role.EDITOR

    @property
    def person_id(self) -> str | None:
        """The person whose words the caller writes (their user id) where the caller is a
        person, else None."""
        return self.user_id if self.person else None


def require_role(principal: Principal, needed: Role, action: str) -> None:
    """Refuse ``action`` unless the caller's role allows ``needed``.

    Raises:
        PermissionDenied: reason ``ROLE_FORBIDS``, metadata ``role`` (held) and
            ``required_role`` (needed).
    """
    if principal.role.allows(needed):
        return
    raise PermissionDenied(
        f"{action} needs the {needed} role; this key has the {principal.role} role",
        reason=ROLE_FORBIDS,
        metadata={"role": principal.role.value, "required_role": needed.value},
    )


@dataclass(frozen=True)
class ApiKeyInfo:
    """What an operator may see of a key: never its secret."""

    key_id: str
    tenant_id: str
    user_id: str
    name: str
    created_at: datetime
    revoked_at: datetime | None
    role: Role


@dataclass(frozen=True)
class StoredApiKey:
    """A key as stored: its description and a hash of its secret, never the secret."""

    info: ApiKeyInfo
    secret_hash: bytes
