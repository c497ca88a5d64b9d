"""Text that is not valid Unicode on its way in: a lone surrogate.

JSON may escape half of a surrogate pair alone (``"\\ud800"``), which no Unicode text
holds. The SDK's JSON parser refuses such a message outright: over stdio the line is
dropped without an answer, over HTTP the client gets a parse error instead of the
tool's answer. Before the SDK parses a message, :func:`marked` rewrites one that holds
such text into one it accepts: each lone surrogate becomes U+FFFD, and a tool call
names the arguments that held one under ``params._meta`` (:data:`NOT_UNICODE`), so
the server refuses the call with a tool error (:func:`not_unicode`) instead of
running the tool on text its caller never wrote.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Protocol

import anyio
import mcp_types
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.message import SessionMessage
from pydantic_core import ValidationError

from agent_memory.proto_json import LONE_SURROGATE, may_hold_lone_surrogate

# The request's _meta entry naming the arguments that held a lone surrogate.
NOT_UNICODE = "agent-memory/not-unicode"

_REPLACEMENT = "\ufffd"


def _paths(value: Any, path: str) -> list[str]:
    """Where ``value`` holds a lone surrogate: ``key``, ``tags[1]``, ``a.b``."""
    if isinstance(value, str):
        return [path or "arguments"] if LONE_SURROGATE.search(value) else []
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in _paths(item, f"{path}[{i}]")]
    if isinstance(value, dict):
        found: list[str] = []
        for name, item in value.items():
            inner = f"{path}.{_cleaned(name)}" if path else _cleaned(name)
            found += [inner] if LONE_SURROGATE.search(name) else _paths(item, inner)
        return found
    return []


def _cleaned(value: Any) -> Any:
    """``value`` with every lone surrogate replaced by U+FFFD."""
    if isinstance(value, str):
        return LONE_SURROGATE.sub(_REPLACEMENT, value)
    if isinstance(value, list):
        return [_cleaned(item) for item in value]
    if isinstance(value, dict):
        return {_cleaned(name): _cleaned(item) for name, item in value.items()}
    return value


def marked(raw: str | bytes) -> str | None:
    """The JSON-RPC message ``raw``, when it holds a lone surrogate, as the SDK can
    parse it: each one replaced by U+FFFD and, for a tool call, the arguments that held
    one named under ``params._meta[NOT_UNICODE]``. None when it holds none, or is not
    JSON at all: it goes on as it came."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if not may_hold_lone_surrogate(data):
        return None
    text = data.decode("utf-8", "replace")
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not _paths(message, ""):
        return None
    cleaned = _cleaned(message)
    if isinstance(message, dict) and message.get("method") == "tools/call":
        params, given = cleaned.get("params"), message.get("params")
        arguments = given.get("arguments") if isinstance(given, dict) else None
        found = _paths(arguments, "") if isinstance(arguments, dict) else []
        if found and isinstance(params, dict):
            meta = params.get("_meta")
            params["_meta"] = {**(meta if isinstance(meta, dict) else {}), NOT_UNICODE: found}
    return json.dumps(cleaned, ensure_ascii=False)


def not_unicode(arguments: Mapping[str, Any], meta: Mapping[str, Any] | None) -> list[str]:
    """The arguments of a tool call that held a lone surrogate: those :func:`marked`
    named, and any that still hold one (a transport that parses them as they are)."""
    named = (meta or {}).get(NOT_UNICODE)
    found = [str(p) for p in named] if isinstance(named, list) else []
    return list(dict.fromkeys(found + _paths(dict(arguments), "")))


class _Messages(Protocol):
    """What a transport's stream of read messages offers."""

    async def receive(self) -> SessionMessage | Exception: ...
    async def aclose(self) -> None: ...


class MarkedLines:
    """The messages the stdio transport read, where a line its parser refused for a
    lone surrogate is given again as :func:`marked` rewrites it."""

    def __init__(self, inner: _Messages) -> None:
        self._inner = inner

    @property
    def last_context(self) -> Any:
        """The sender's context of the last message, as the transport's stream keeps it."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        item = await self._inner.receive()
        if not isinstance(item, ValidationError):
            return item
        refused = item.errors()
        if len(refused) != 1 or refused[0]["type"] != "json_invalid":
            return item
        line = refused[0].get("input")
        again = marked(line) if isinstance(line, str) else None
        if again is None:
            return item
        try:
            return SessionMessage(
                mcp_types.jsonrpc_message_adapter.validate_json(again, by_name=False)
            )
        except ValidationError as exc:
            return exc

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> MarkedLines:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> MarkedLines:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class MarkedBodies:
    """ASGI middleware: a POSTed message that holds a lone surrogate reaches the app
    as :func:`marked` rewrites it. A body over the transport's limit goes on as it
    came, for the transport to refuse."""

    def __init__(self, app: Any) -> None:
        self._app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        read: list[Any] = []
        size = 0
        while size <= DEFAULT_MAX_REQUEST_BODY_SIZE:
            message = await receive()
            read.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                body = b"".join(m.get("body", b"") for m in read)
                again = marked(body)
                if again is not None:
                    rewritten = again.encode()
                    read = [{"type": "http.request", "body": rewritten, "more_body": False}]
                    headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
                    headers.append((b"content-length", str(len(rewritten)).encode()))
                    scope = {**scope, "headers": headers}
                break

        async def replay() -> Any:
            return read.pop(0) if read else await receive()

        await self._app(scope, replay, send)
