"""Reading the past, over real gRPC on a real PostgreSQL: a render at a past run's
render time gives the bytes that run received after later writes; memories, blocks and
recall read as of an instant show that instant's state; what has since expired stays
gone; an instant in the future, or before the history kept, is refused with details."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import grpc
import pytest
from google.protobuf import duration_pb2, field_mask_pb2, timestamp_pb2

from agentmemory.v1 import block_pb2, memory_pb2
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import memory_service_pb2 as memory_pb
from agentmemory.v1 import recall_service_pb2 as pb
from tests.support import Client, ServerThread, error_details, wait_until

AGENT = "planner"
WORKSPACE = "release"
CORE = block_pb2.BLOCK_LABEL_CORE
ARCHIVAL = block_pb2.BLOCK_LABEL_ARCHIVAL


@pytest.fixture
def ana(server: ServerThread) -> Iterator[Client]:
    with server.client(user_id="ana") as c:
        yield c


def stamp(at: datetime) -> timestamp_pb2.Timestamp:
    t = timestamp_pb2.Timestamp()
    t.FromDatetime(at)
    return t


def owner(workspace: bool = False) -> memory_pb2.MemoryOwner:
    if workspace:
        return memory_pb2.MemoryOwner(workspace_id=WORKSPACE)
    return memory_pb2.MemoryOwner(agent_id=AGENT)


def upsert(c: Client, key: str, value: str, **kw: object) -> memory_pb2.Memory:
    workspace = bool(kw.pop("workspace", False))
    request = memory_pb.UpsertMemoryRequest(owner=owner(workspace), key=key, value=value, **kw)
    memory: memory_pb2.Memory = c.call(c.memory.UpsertMemory, request).memory
    return memory


def update(c: Client, memory: memory_pb2.Memory, *paths: str) -> memory_pb2.Memory:
    request = memory_pb.UpdateMemoryRequest(
        memory=memory, update_mask=field_mask_pb2.FieldMask(paths=list(paths))
    )
    updated: memory_pb2.Memory = c.call(c.memory.UpdateMemory, request).memory
    return updated


def write_block(
    c: Client, content: str, *, label: int = CORE, scope: int = memory_pb2.SCOPE_AGENT
) -> block_pb2.Block:
    agent = AGENT if scope == memory_pb2.SCOPE_AGENT else ""
    listed = c.call(c.blocks.ListBlocks, block_pb.ListBlocksRequest(agent_id=AGENT)).blocks
    current = [b for b in listed if (b.label, b.scope, b.agent_id) == (label, scope, agent)]
    request = block_pb.WriteBlockRequest(
        label=label,
        scope=scope,
        agent_id=agent,
        content=content,
        expected_updated_at=current[0].updated_at if current else None,
    )
    block: block_pb2.Block = c.call(c.blocks.WriteBlock, request).block
    return block


def render(c: Client, at: timestamp_pb2.Timestamp | None = None) -> pb.RenderPromptResponse:
    request = pb.RenderPromptRequest(agent_id=AGENT, workspace_id=WORKSPACE, as_of_time=at)
    response: pb.RenderPromptResponse = c.call(c.recall.RenderPrompt, request)
    return response


def enable_memory(c: Client) -> None:
    settings = memory_pb2.AgentSettings(agent_id=AGENT, memory_enabled=True)
    request = memory_pb.UpdateAgentSettingsRequest(
        settings=settings, update_mask=field_mask_pb2.FieldMask(paths=["memory_enabled"])
    )
    c.call(c.memory.UpdateAgentSettings, request)


def database_now(c: Client) -> datetime:
    """The server's clock, as a render reads it (a render of nothing remembered)."""
    request = pb.RenderPromptRequest(agent_id="clock-only")
    at: datetime = c.call(c.recall.RenderPrompt, request).render_time.ToDatetime(tzinfo=UTC)
    return at


def test_a_past_runs_render_time_gives_the_bytes_it_received_after_later_changes(
    ana: Client,
) -> None:
    enable_memory(ana)
    write_block(ana, "- Ana leads the release", scope=memory_pb2.SCOPE_USER)
    write_block(ana, "- Plan: ship 4.2 on Thursday")
    tz = upsert(ana, "timezone", "Europe/Lisbon", pinned=True)
    editor = upsert(ana, "editor", "vim")
    room = upsert(ana, "standup-room", "Room 4", ttl=duration_pb2.Duration(seconds=3600))
    upsert(ana, "freeze", "Tuesday noon", workspace=True)

    run = render(ana)
    assert "Europe/Lisbon" in run.memory_markdown
    assert "Room 4" in run.memory_markdown

    # Everything the run saw changes afterwards.
    tz.value = "America/New_York"
    update(ana, tz, "value")
    editor.pinned = True
    update(ana, editor, "pinned")
    ana.call(ana.memory.DeleteMemory, memory_pb.DeleteMemoryRequest(id=room.id))
    upsert(ana, "desk", "C4")
    upsert(ana, "freeze", "Wednesday noon", workspace=True)
    write_block(ana, "- Plan: ship 4.3 on Monday")
    closed = upsert(ana, "oncall", "Bo this week")
    closed.valid_end_time.FromDatetime(database_now(ana) - timedelta(seconds=1))
    update(ana, closed, "valid_end_time")

    now = render(ana)
    assert now.system_prompt != run.system_prompt
    assert "America/New_York" in now.memory_markdown
    assert "Room 4" not in now.memory_markdown

    replayed = render(ana, run.render_time)
    assert replayed.system_prompt == run.system_prompt
    assert list(replayed.sections) == list(run.sections)
    assert replayed.render_time == run.render_time
    # Rendering the present again is unchanged by the replay.
    assert render(ana).system_prompt == now.system_prompt


def test_memories_and_blocks_read_as_of_an_instant(ana: Client) -> None:
    first = upsert(ana, "editor", "vim")
    write_block(ana, "- v1 of the plan")
    before = database_now(ana)
    first.value = "helix"
    update(ana, first, "value")
    upsert(ana, "desk", "C4")
    write_block(ana, "- v2 of the plan")
    at = stamp(before)

    old = ana.call(ana.memory.GetMemory, memory_pb.GetMemoryRequest(id=first.id, as_of_time=at))
    assert old.memory.value == "vim"
    assert ana.call(ana.memory.GetMemory, memory_pb.GetMemoryRequest(id=first.id)).memory.value == (
        "helix"
    )
    by_key = memory_pb.GetMemoryRequest(owner=owner(), key="editor", as_of_time=at)
    assert ana.call(ana.memory.GetMemory, by_key).memory.value == "vim"

    listed = ana.call(
        ana.memory.ListMemories, memory_pb.ListMemoriesRequest(owner=owner(), as_of_time=at)
    )
    assert [(m.key, m.value) for m in listed.memories] == [("editor", "vim")]
    assert listed.total_size == 1

    # A memory created later did not exist then.
    with pytest.raises(grpc.RpcError) as missing:
        ana.call(
            ana.memory.GetMemory,
            memory_pb.GetMemoryRequest(owner=owner(), key="desk", as_of_time=at),
        )
    assert missing.value.code() is grpc.StatusCode.NOT_FOUND

    block = ana.call(
        ana.blocks.GetBlock,
        block_pb.GetBlockRequest(
            label=CORE, scope=memory_pb2.SCOPE_AGENT, agent_id=AGENT, as_of_time=at
        ),
    ).block
    assert (block.content, block.version) == ("- v1 of the plan", 1)


def test_a_memory_read_as_of_the_instant_it_says_it_was_written_is_that_write(
    ana: Client,
) -> None:
    """A write's updated_at is the instant it happened: read as of it, the memory is
    the one written; a microsecond before, the one before it (or none)."""

    def as_of(memory_id: str, at: timestamp_pb2.Timestamp) -> memory_pb2.Memory | None:
        request = memory_pb.GetMemoryRequest(id=memory_id, as_of_time=at)
        try:
            found: memory_pb2.Memory = ana.call(ana.memory.GetMemory, request).memory
        except grpc.RpcError as exc:
            if exc.code() is not grpc.StatusCode.NOT_FOUND:
                raise
            return None
        return found

    def just_before(at: timestamp_pb2.Timestamp) -> timestamp_pb2.Timestamp:
        return stamp(at.ToDatetime(tzinfo=UTC) - timedelta(microseconds=1))

    created = upsert(ana, "tea", "green")
    assert as_of(created.id, created.updated_at) == created
    assert as_of(created.id, just_before(created.updated_at)) is None
    created.value = "black"
    changed = update(ana, created, "value")
    assert as_of(created.id, changed.updated_at) == changed
    was = as_of(created.id, just_before(changed.updated_at))
    assert was is not None
    assert was.value == "green"
    upserted = upsert(ana, "tea", "oolong")
    assert as_of(created.id, upserted.updated_at) == upserted


def test_recall_as_of_an_instant_searches_that_instants_lines(ana: Client) -> None:
    write_block(ana, "The staging database listens on port 5432", label=ARCHIVAL)
    before = database_now(ana)
    write_block(ana, "The staging database moved to port 5434", label=ARCHIVAL)

    def recall(at: datetime | None) -> list[str]:
        request = pb.RecallRequest(query="staging database port", agent_id=AGENT)
        if at is not None:
            request.as_of_time.CopyFrom(stamp(at))
        return [m.content for m in ana.call(ana.recall.Recall, request)]

    assert recall(before) == ["The staging database listens on port 5432"]
    assert "The staging database moved to port 5434" in recall(None)


def test_a_memory_that_has_since_expired_stays_gone_from_the_past(ana: Client) -> None:
    enable_memory(ana)
    brief = upsert(ana, "brief", "Room 9 for the retro", ttl=duration_pb2.Duration(seconds=2))
    run = render(ana)
    assert "Room 9" in run.memory_markdown
    # Wait until the server itself no longer shows it: expired, by its clock.
    assert wait_until(lambda: "Room 9" not in render(ana).memory_markdown, timeout=120)
    replayed = render(ana, run.render_time)
    assert "Room 9" not in replayed.memory_markdown
    with pytest.raises(grpc.RpcError) as gone:
        ana.call(
            ana.memory.GetMemory,
            memory_pb.GetMemoryRequest(id=brief.id, as_of_time=run.render_time),
        )
    assert gone.value.code() is grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize(
    ("offset", "code", "reason"),
    [
        (timedelta(hours=1), grpc.StatusCode.INVALID_ARGUMENT, "IN_THE_FUTURE"),
        (-timedelta(days=91), grpc.StatusCode.FAILED_PRECONDITION, "HISTORY_PRUNED"),
    ],
)
def test_an_instant_in_the_future_or_before_the_history_kept_is_refused(
    ana: Client, offset: timedelta, code: grpc.StatusCode, reason: str
) -> None:
    at = stamp(datetime.now(UTC) + offset)
    calls = [
        (ana.recall.RenderPrompt, pb.RenderPromptRequest(agent_id=AGENT, as_of_time=at)),
        (ana.memory.ListMemories, memory_pb.ListMemoriesRequest(owner=owner(), as_of_time=at)),
        (
            ana.blocks.GetBlock,
            block_pb.GetBlockRequest(label=CORE, scope=memory_pb2.SCOPE_USER, as_of_time=at),
        ),
    ]
    for method, request in calls:
        with pytest.raises(grpc.RpcError) as refused:
            ana.call(method, request)
        assert refused.value.code() is code
        details = error_details(refused.value)
        if code is grpc.StatusCode.INVALID_ARGUMENT:
            assert "as_of_time" in details.violations, details
        else:
            assert details.reason == reason, details
            assert "oldest_kept" in details.metadata


def test_an_instant_just_ahead_is_read_once_it_has_passed_and_answers_the_same_later(
    ana: Client,
) -> None:
    """A replica's clock may run a little ahead: its instant is taken, and read once it
    has passed here, so a write that lands after the answer is not in it later either."""
    upsert(ana, "editor", "vim")
    at = stamp(database_now(ana) + timedelta(seconds=1))
    request = memory_pb.ListMemoriesRequest(owner=owner(), as_of_time=at)
    first = [m.value for m in ana.call(ana.memory.ListMemories, request).memories]
    upsert(ana, "editor", "emacs")
    again = [m.value for m in ana.call(ana.memory.ListMemories, request).memories]
    assert first == again == ["vim"]


def test_a_memory_its_uses_kept_alive_is_shown_as_of_then(ana: Client) -> None:
    """A use that slides an expiry writes no event; a replay still shows the memory
    that uses kept past the expiry its last event holds."""
    settings = memory_pb2.AgentSettings(
        agent_id=AGENT, memory_enabled=True, expiry_slide=duration_pb2.Duration(seconds=3600)
    )
    ana.call(
        ana.memory.UpdateAgentSettings,
        memory_pb.UpdateAgentSettingsRequest(
            settings=settings,
            update_mask=field_mask_pb2.FieldMask(paths=["memory_enabled", "expiry_slide"]),
        ),
    )
    brief = upsert(ana, "brief", "Room 9 for the retro", ttl=duration_pb2.Duration(seconds=2))
    written = brief.expire_time.ToDatetime(tzinfo=UTC)
    assert "Room 9" in render(ana).memory_markdown  # the use slides it an hour on
    # Past the expiry the memory's event holds, the memory is still shown, and so is
    # it when that render is read again.
    assert wait_until(lambda: database_now(ana) > written, timeout=120)
    later = render(ana)
    assert "Room 9" in later.memory_markdown
    assert render(ana, later.render_time).system_prompt == later.system_prompt
