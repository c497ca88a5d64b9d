"""``agent-memory mcp`` acts only on what is the agent's own, over real gRPC and
PostgreSQL: a tool that names a memory by id refuses one of another agent or of a
workspace not configured, saying nothing of it; forgetting the agent forgets what it
keeps with the user of the server's key, and no other user's; a memory held for review
is said to be held."""

from __future__ import annotations

import asyncio
import re
import uuid

import pytest

from agent_memory_client import MemoryClient, NotFound
from tests.e2e.test_mcp import AGENT, mcp_session, text
from tests.support import ServerThread

pytestmark = pytest.mark.e2e

# The tools that name a memory by id, at least: any other that takes a memory_id is
# held to the same.
BY_ID = {"memory_delete", "memory_pin", "memory_set_expiry"}


@pytest.fixture
def tenant() -> str:
    return f"tenant-{uuid.uuid4().hex[:10]}"


def test_a_tool_that_names_a_memory_by_id_acts_only_on_the_agents_own(
    server: ServerThread, tenant: str
) -> None:
    key = server.new_key(tenant, "user-1")
    with MemoryClient(server.address, api_key=key) as direct:
        coders = direct.upsert_memory("k2", "the coder's secret plan", agent_id="coder")
        teamx = direct.upsert_memory("roster", "teamx's roster", workspace_id="teamx")
        teamy = direct.upsert_memory("roster", "teamy's roster", workspace_id="teamy")
        mine = direct.upsert_memory("tz", "Lisbon", agent_id=AGENT)
        others = [coders, teamx, teamy]

        def refused_the_same(name: str, said: str) -> None:
            # The same words for an id of another owner and one of none: they tell
            # nothing of the other memory.
            assert said == (
                f"Error executing tool {name}: Nothing was changed: that id is not one "
                "of your memories. Use memory_list to find the ids of yours."
            ), said

        async def session() -> None:
            async with mcp_session(server, key) as mcp:
                tools = (await mcp.list_tools()).tools
                by_id = {t.name for t in tools if "memory_id" in t.input_schema["properties"]}
                assert by_id >= BY_ID
                for name in sorted(by_id):
                    for memory_id in [m.id for m in others] + [str(uuid.uuid4())]:
                        refused = await mcp.call_tool(name, {"memory_id": memory_id})
                        assert refused.is_error
                        refused_the_same(name, text(refused))
                # The agent's own, by the same tools.
                pinned = await mcp.call_tool("memory_pin", {"memory_id": mine.id})
                assert text(pinned) == f"Pinned [agent · manual, pinned] id {mine.id} · key: tz"
                expiring = await mcp.call_tool(
                    "memory_set_expiry", {"memory_id": mine.id, "ttl_hours": 3}
                )
                assert re.fullmatch(
                    rf"Expiry set: \[agent · manual, pinned, expires \S+\] id {mine.id} · key: tz",
                    text(expiring),
                ), text(expiring)

            # With a workspace configured, its memories are the agent's too; another
            # workspace's are not.
            async with mcp_session(server, key, workspace="teamx") as mcp:
                pinned = await mcp.call_tool("memory_pin", {"memory_id": teamx.id})
                assert text(pinned).startswith(f"Pinned [workspace · manual, pinned] id {teamx.id}")
                for other in (coders, teamy):
                    refused = await mcp.call_tool("memory_delete", {"memory_id": other.id})
                    refused_the_same("memory_delete", text(refused))
                deleted = await mcp.call_tool("memory_delete", {"memory_id": mine.id})
                assert text(deleted).startswith("Deleted [agent · manual, pinned, expires ")

        asyncio.run(session())

        # Nothing of another owner's changed: the same version, the same fields.
        for other in (coders, teamy):
            now = direct.get_memory(other.id)
            assert (now.etag, now.pinned, now.expire_time) == (other.etag, False, None)
        assert direct.get_memory(teamx.id).pinned
        with pytest.raises(NotFound):
            direct.get_memory(mine.id)


def test_forgetting_the_agent_forgets_what_it_keeps_with_this_user_only(
    server: ServerThread, tenant: str
) -> None:
    """The blocks of the key's user go, with what the preview counted; another user's
    blocks of the same agent and the agent's saved memories, every user's, stay."""
    ana_key = server.new_key(tenant, "ana")
    with (
        MemoryClient(server.address, api_key=ana_key) as ana,
        MemoryClient(server.address, api_key=server.new_key(tenant, "bo")) as bo,
    ):
        ana.write_block("core", "Name: Ana", agent_id=AGENT)
        ana.write_block("archival", "Ana likes tea.\nAna's manager is Rui.", agent_id=AGENT)
        bo.write_block("core", "Name: Bo", agent_id=AGENT)
        bo.write_block(
            "archival", "Bo likes coffee.\nBo is on call.\nBo is in Porto.", agent_id=AGENT
        )
        ana.upsert_memory("office", "Lisbon", agent_id=AGENT)

        async def session() -> tuple[str, str]:
            async with mcp_session(server, ana_key) as mcp:
                asked = text(await mcp.call_tool("forget", {"target": "agent"}))
                done = text(await mcp.call_tool("forget", {"target": "agent", "confirm": True}))
                return asked, done

        asked, done = asyncio.run(session())
        what = "your core memory and your archival memory (2 lines), with their earlier versions"
        assert asked.startswith(
            f"Would forget: {what}; that is what you keep with the user you work for. "
            "Your saved memories (memory_list), which every user shares, and what you keep "
            "with other users stay"
        ), asked
        assert done.startswith(f"Forgotten for good: {what}."), done
        for label in ("core", "archival"):
            with pytest.raises(NotFound):
                ana.get_block(label, agent_id=AGENT)
        assert bo.get_block("core", agent_id=AGENT).content == "Name: Bo"
        assert bo.get_block("archival", agent_id=AGENT).entry_count == 3
        assert [m.key for m in ana.list_memories(agent_id=AGENT)] == ["office"]


def test_a_memory_held_for_review_is_said_to_be_held(server: ServerThread, tenant: str) -> None:
    key = server.new_key(tenant, "user-1")
    with MemoryClient(server.address, api_key=key) as direct:
        held = direct.upsert_memory("errand", "Buy stamps.", agent_id=AGENT)
        direct.update_memory(held.id, held_for_review=True)

        async def session() -> str:
            async with mcp_session(server, key) as mcp:
                return text(
                    await mcp.call_tool("memory_upsert", {"key": "errand", "value": "Buy ink."})
                )

        said = asyncio.run(session())
    assert said == (
        f"Saved, but held for review: [agent · manual, held for review] id {held.id}; the "
        "service keeps it, but leaves it out of your prompt and recall, and withholds its "
        "key and text, until a person approves it in the memory panel."
    ), said
