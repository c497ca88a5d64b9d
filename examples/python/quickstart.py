"""Store, recall and render with the Python client (MEMORY_SERVER, MEMORY_API_KEY)."""

from agent_memory_client import MemoryClient

with MemoryClient.from_env() as memory:
    # An agent's memories reach its prompt once its memory is on (it starts off, so that
    # nothing shows up in a prompt nobody asked to carry memory).
    memory.update_agent_settings("planner", memory_enabled=True)
    saved = memory.upsert_memory("timezone", "Europe/Lisbon", agent_id="planner", pinned=True)
    print(f"saved {saved.key} = {saved.value} ({saved.etag})")
    memory.update_block("core", lambda _: "Ana, SRE. Prefers short answers.", agent_id="planner")
    notes = "Staging's database listens on port 5433.\nDeploys happen on Tuesdays."
    memory.update_block("archival", lambda _: notes, agent_id="planner")
    for match in memory.recall("which port does staging use?", agent_id="planner", limit=2):
        print(f"{match.score:.3f}  {match.content}")
    print(memory.render_prompt("planner", user_message="Deploy today?").system_prompt)
