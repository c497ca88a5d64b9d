#!/usr/bin/env python3
"""Print an MCP session with ``agent-memory mcp`` as an agent runtime sees it.

The MCP SDK's client starts ``agent-memory mcp`` over stdio against a running
service, lists the tools, stores and recalls archival facts, and loses a
compare-and-set race on core memory to another writer, then recovers:

    MEMORY_SERVER=127.0.0.1:50051 MEMORY_API_KEY=... \\
        .venv/bin/python scripts/mcp_transcript.py [--agent-id demo-agent]

It writes to the agent's memory (core and archival blocks), so point it at an
agent of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, TextContent

from agent_memory.mcp.server import check_service
from agent_memory_client import MemoryClient, connection_from_env


def show_call(name: str, arguments: dict[str, Any], result: CallToolResult) -> str:
    text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
    flag = " (is_error)" if result.is_error else ""
    print(f"→ {name} {json.dumps(arguments, ensure_ascii=False)}")
    print(f"← {flag.strip() or 'result'}:")
    for line in text.splitlines():
        print(f"    {line}")
    print()
    return text


def updated_at(text: str) -> str:
    return text.split("updated_at ", 1)[1].split(":\n", 1)[0].rstrip(".")


async def session(agent: str) -> None:
    command = Path(sys.executable).parent / "agent-memory"
    params = StdioServerParameters(
        command=str(command) if command.exists() else (shutil.which("agent-memory") or ""),
        args=["mcp", "--agent-id", agent],
        env={k: v for k, v in os.environ.items() if k.startswith("MEMORY_")},
    )
    other_writer = MemoryClient.from_env()

    async with Client(params, cache=None) as mcp:

        async def call(name: str, arguments: dict[str, Any]) -> str:
            return show_call(name, arguments, await mcp.call_tool(name, arguments))

        tools = (await mcp.list_tools()).tools
        print("→ tools/list")
        for tool in tools:
            print(f"    {tool.name}({', '.join(tool.input_schema.get('properties', {}))})")
            for line in textwrap.wrap(tool.description or "", 84):
                print(f"        {line}")
        print()

        for fact in (
            "The staging database listens on port 5433.",
            "Deploys happen on Tuesdays after standup.",
            "Ana's manager is Rui.",
        ):
            await call("archival_memory_insert", {"content": fact})
        await call("recall", {"query": "which port does staging use?", "limit": 3})

        await call("core_memory_replace", {"old_text": "", "new_text": "User: Ana, SRE."})
        read = await call("core_memory_read", {})
        print("  (meanwhile another writer changes core memory)\n")
        other_writer.update_block(
            "core", lambda text: f"{text}\nPrefers short answers.", agent_id=agent
        )
        conflict = await call(
            "core_memory_replace",
            {"old_text": "SRE", "new_text": "SRE lead", "expected_updated_at": updated_at(read)},
        )
        await call(
            "core_memory_replace",
            {
                "old_text": "SRE",
                "new_text": "SRE lead",
                "expected_updated_at": updated_at(conflict),
            },
        )
        await call("core_memory_read", {})
    other_writer.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--agent-id", default="demo-agent")
    args = parser.parse_args()
    try:
        connection = connection_from_env()
    except ValueError as exc:
        print(f"mcp_transcript: MEMORY_API_KEY, MEMORY_TENANT_ID or MEMORY_USER_ID: {exc}")
        return 2
    problem = check_service(connection, args.agent_id)
    if problem is not None:  # what agent-memory mcp would refuse to start on, said once
        print(f"mcp_transcript: {problem}", file=sys.stderr)
        return 2
    asyncio.run(session(args.agent_id))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
