"""A render read section by section (as when its one statement fails) shows only facts
valid now and counts only those, against the in-memory store."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from agent_memory.config import Settings
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import MemorySource, MemoryWrite, Owner, Scope
from agent_memory.domain.recall import ArchivalMode, MemoryPolicy, RenderRequest
from agent_memory.render import prompt
from agent_memory.service.recall import Recall
from tests.fakes import FakeStore

ALICE = Principal("acme", "alice")
WORKSPACE = Owner(Scope.WORKSPACE, "acme-web")
PAST = datetime(2020, 3, 12, tzinfo=UTC)
FUTURE = datetime(2100, 3, 31, tzinfo=UTC)


def test_a_section_read_on_its_own_leaves_out_facts_outside_their_period() -> None:
    store = FakeStore()
    for key, value, period in (
        ("always", "Deploys run on Tuesdays", {}),
        ("over", "Cleo leads platform", {"valid_end_time": PAST}),
        ("lead", "Ana leads platform", {"valid_start_time": PAST, "valid_end_time": FUTURE}),
        ("soon", "Ben leads platform", {"valid_start_time": FUTURE}),
    ):
        store.add(ALICE, MemoryWrite(WORKSPACE, key, MemorySource.MANUAL, value, **period))
    recall = Recall(store, Settings(render_workspace_memory_cap=1))
    request = RenderRequest(
        agent_id="records",
        workspace_id=WORKSPACE.id,
        policy=MemoryPolicy(archival_mode=ArchivalMode.OFF, include_recent_decisions=False),
    )
    rendered, _, _ = asyncio.run(recall.render(ALICE, request))
    (section,) = [s for s in rendered.sections if s.name == prompt.WORKSPACE_MEMORY]
    lines = section.content.splitlines()[1:]
    # One row fits the cap; of the others only the one valid now is counted.
    assert len(lines) == 2
    assert lines[1] == "_(1 more memory not shown)_"
    assert "Cleo" not in section.content
    assert "Ben" not in section.content
    wider = Recall(store, Settings(render_workspace_memory_cap=10))
    rendered, _, _ = asyncio.run(wider.render(ALICE, request))
    assert "until 2100-03-31" in rendered.system_prompt
    assert "since 2020-03-12" in rendered.system_prompt
