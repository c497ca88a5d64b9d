"""The MCP server exposing the tools, over stdio or streamable HTTP, and its checks
before serving."""

from __future__ import annotations

import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import replace
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp_types import ToolAnnotations
from pydantic import ValidationError

from agent_memory import __version__
from agent_memory.domain.identity import Role
from agent_memory.mcp.auth import BearerOnly, endpoint_token
from agent_memory.mcp.tools import (
    INSTRUCTIONS,
    MemoryTools,
    plain_arguments,
    refusals_as_tool_errors,
    refused_not_unicode,
)
from agent_memory.mcp.wire import MarkedBodies, MarkedLines, not_unicode
from agent_memory_client import (
    AgentMemoryError,
    Connection,
    DeadlineExceeded,
    Unauthenticated,
    Unavailable,
)


class _MemoryServer(MCPServer[None]):
    """The MCP server, whose tools refuse bad arguments in plain sentences too, text
    that is not valid Unicode among them (:mod:`agent_memory.mcp.wire`)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        refused = not_unicode(arguments, _request_meta(context))
        if refused:
            raise ToolError(f"Error executing tool {name}: {refused_not_unicode(refused)}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            raise ToolError(f"Error executing tool {name}: {plain_arguments(cause)}") from None

    async def run_stdio_async(self) -> None:
        """Serve over stdio, as the SDK does, but a line its parser refuses for a lone
        surrogate reaches the tools, marked, for a tool error to answer it."""
        async with stdio_server() as (read_stream, write_stream):
            await self._lowlevel_server.run(
                MarkedLines(read_stream),
                write_stream,
                self._lowlevel_server.create_initialization_options(),
            )


def _request_meta(context: Any) -> Any:
    """The ``_meta`` of the request a tool call came in, or None outside one."""
    try:
        return context.request_context.meta if context is not None else None
    except ValueError:  # no request: a call made in this process
        return None


def build_server(tools: MemoryTools) -> MCPServer[None]:
    """The MCP server exposing ``tools`` under the names the contract fixes."""

    @asynccontextmanager
    async def lifespan(_: MCPServer[None]) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            await tools.close()

    server: MCPServer[None] = _MemoryServer(
        "agent-memory",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
    )
    read = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    write = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
    upsert = write.model_copy(update={"idempotent_hint": True})
    destroy = write.model_copy(update={"destructive_hint": True})
    catalogue: list[tuple[Callable[..., Awaitable[str]], ToolAnnotations]] = [
        (tools.recall, read),
        (tools.core_memory_read, read),
        (tools.core_memory_replace, write),
        (tools.archival_memory_insert, write),
        (tools.memory_list, read),
        (tools.memory_upsert, upsert),
        (tools.memorize, write),
        (tools.get_my_decisions, read),
        (tools.memory_delete, destroy),
        (tools.memory_pin, upsert),
        (tools.memory_set_expiry, upsert),
        (tools.archival_memory_delete, destroy),
        (tools.forget, destroy),
    ]
    for tool, hints in catalogue:
        server.add_tool(
            refusals_as_tool_errors(tool, writes=not hints.read_only_hint),
            name=tool.__name__,
            description=" ".join((tool.__doc__ or "").split()),  # one paragraph, as models read it
            annotations=hints,
        )
    return server


def note(message: str) -> None:
    """One line for the operator, on stderr (stdout is the protocol's under stdio)."""
    print(f"agent-memory mcp: {message}", file=sys.stderr, flush=True)


def check_service(connection: Connection, agent_id: str) -> str | None:
    """Ask the service one cheap question with these credentials before serving: the
    operator's mistake (nothing listening, a refused key) as one line, or None."""
    from agent_memory_client import MemoryClient

    probe = replace(connection, timeout=min(connection.timeout, 5.0), attempts=1)
    refused = f"refused --agent-id {agent_id!r}"
    try:
        with MemoryClient(connection=probe) as client:
            client.list_blocks(agent_id=agent_id)
            refused = "would not say whom MEMORY_API_KEY stands for"
            role = client.get_caller().role
    except (Unavailable, DeadlineExceeded) as exc:
        return (
            f"no memory service answers at {connection.target} ({exc.message}): start one "
            "with `agent-memory serve`, or point --server / MEMORY_SERVER at it"
        )
    except Unauthenticated as exc:
        return (
            f"the service at {connection.target} refused the credentials ({exc.message}): "
            "set MEMORY_API_KEY to a key from `agent-memory keys create`"
        )
    except AgentMemoryError as exc:
        return f"the service at {connection.target} {refused}: {exc.message}"
    if role == Role.EDITOR:
        # An editor key is a person's: an agent's words written with it would pass for
        # that person's own, which the learned screens take as read.
        return (
            "MEMORY_API_KEY is a key of the editor role, a person's: give the agent a key of "
            "its own, `agent-memory keys create --role orchestrator`, so the service's "
            "screens read what it writes"
        )
    return None


def serve(tools: MemoryTools, http: str | None = None, token: str | None = None) -> int:
    """Serve the tools over stdio, or over streamable HTTP on ``http`` (HOST:PORT, a
    loopback address), where every request must carry ``token`` (one is made when
    none is given). Returns the exit status: 0 when stopped, 2 for an operator's
    mistake."""
    server = build_server(tools)
    if http is None:
        with suppress(KeyboardInterrupt):
            server.run("stdio")
        return 0
    import asyncio

    import uvicorn

    from agent_memory.config import is_loopback
    from agent_memory.http.app import http_socket

    host = http.rpartition(":")[0]
    if not is_loopback(host.strip("[]")):
        note(
            f"--http {http}: not a loopback address; the MCP endpoint acts with this "
            "server's key for whoever reaches it, so it listens on loopback only "
            "(e.g. --http 127.0.0.1:8765)"
        )
        return 2
    try:
        required, told = endpoint_token(token)
    except ValueError as exc:
        note(f"MEMORY_MCP_TOKEN: {exc}")
        return 2
    try:
        sock = http_socket(http)
    except (OSError, ValueError) as exc:
        note(f"--http {http}: cannot listen there ({exc}); pick another port")
        return 2
    app = BearerOnly(MarkedBodies(server.streamable_http_app(host=host.strip("[]"))), required)
    web = uvicorn.Server(
        uvicorn.Config(
            app,
            log_config=None,
            log_level="warning",
            # Open event streams would hold a stop for good; a second is enough.
            timeout_graceful_shutdown=1,
        )
    )

    # Listening before uvicorn starts: a client that connects at once waits in the
    # backlog instead of being refused.
    sock.listen(128)
    note(
        f"streamable HTTP on http://{host}:{sock.getsockname()[1]}/mcp; "
        f"send Authorization: Bearer with {told}"
    )

    # uvicorn stops gracefully on SIGTERM, then raises it again for the handler it
    # found: this one, so that a requested stop exits 0.
    signal.signal(signal.SIGTERM, lambda *_: None)
    with suppress(KeyboardInterrupt):
        asyncio.run(web.serve(sockets=[sock]))
    return 0
