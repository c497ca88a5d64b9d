"""Page tokens as a running server seals them, for tests that forge what only the
service could: a real token of a listing with its position replaced."""

from __future__ import annotations

from datetime import UTC, datetime

from agent_memory.domain.paging import PageKeyring, Position, Scalar, seal, unseal
from tests.support import ServerThread


def keyring_of(server: ServerThread) -> PageKeyring:
    """The keys ``server`` seals and opens page tokens with."""
    assert server.db is not None
    return server.run(server.db.page_keyring())


def position_of(server: ServerThread, token: str) -> Position:
    """Where a real token of ``server`` says its page stopped."""
    return unseal(keyring_of(server), token, datetime.now(UTC)).position


def reposition(server: ServerThread, token: str, position: list[Scalar]) -> str:
    """``token`` (a real one of ``server``, for the same caller and listing) sealed again
    with ``position`` instead of its own: a forgery only the server's key could make."""
    keyring = keyring_of(server)
    return seal(keyring, unseal(keyring, token, datetime.now(UTC)).binding, position)
