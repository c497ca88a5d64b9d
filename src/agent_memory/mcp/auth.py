"""The bearer token that guards the MCP endpoint over HTTP."""

from __future__ import annotations

import hmac
import secrets
from typing import Any

# The least a chosen endpoint token may hold: guessing it must be out of reach.
TOKEN_MIN_CHARS = 24


class BearerOnly:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer <token>`` is
    answered 401 before it reaches the tools. Every other user of this machine can
    reach a loopback port; only the holder of the token acts with the service key."""

    def __init__(self, app: Any, token: str) -> None:
        self._app = app
        self._token = token.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not self._holds_token(scope):
            body = b'{"error": "send Authorization: Bearer <the token agent-memory mcp printed>"}'
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer realm="agent-memory mcp"'),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self._app(scope, receive, send)

    def _holds_token(self, scope: Any) -> bool:
        given = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
        scheme, _, value = given.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(value.strip(), self._token)


def endpoint_token(chosen: str | None) -> tuple[str, str]:
    """The token the HTTP endpoint requires, and how to say where it came from: the
    operator's (``MEMORY_MCP_TOKEN``), or one made now and shown once.

    Raises:
        ValueError: a chosen token too short to be secret.
    """
    if chosen:
        if len(chosen) < TOKEN_MIN_CHARS or chosen != chosen.strip():
            raise ValueError(
                f"use at least {TOKEN_MIN_CHARS} characters without surrounding spaces "
                "(or leave it unset for one made at start)"
            )
        return chosen, "the token in MEMORY_MCP_TOKEN"
    made = secrets.token_urlsafe(32)
    return made, f"token {made} (shown once; set MEMORY_MCP_TOKEN to choose it)"
