"""The Python client (``agent_memory_client``) against the running service, over real
gRPC: the calls an orchestrator makes, the typed errors it catches, the
compare-and-set helper, and recall as an iterator, sync and async; and a round trip
through every method of each RPC (``tests/unit/test_client_methods.py`` checks that
every RPC has one, on both clients alike). Answers are records
(``agent_memory_client.types``): aware UTC datetimes, enum members, tuples, None for
what is unset, and the message at ``.proto``."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import grpc
import pytest
from google.protobuf import field_mask_pb2

from agent_memory.render.prompt import ARCHIVAL_HINT_LINE, FRAMING
from agent_memory_client import (
    AlreadyExists,
    AsyncMemoryClient,
    BlockConflict,
    EtagMismatch,
    InvalidArgument,
    MemoryClient,
    NotFound,
    ReadOnlyMemory,
    RoleForbids,
    SecretInValue,
    Unauthenticated,
)
from agent_memory_client.types import (
    ActiveSessionStatus,
    Block,
    Decision,
    ExtractionOutcome,
    Memory,
    MemoryEventType,
    MemorySource,
    OwnerSummary,
    RecallResponse,
    ReExaminable,
    ResolutionStatus,
    Scope,
    UpdateMemoryResponse,
)
from agentmemory.v1 import block_pb2, memory_pb2, memory_service_pb2
from tests.support import ServerThread

pytestmark = pytest.mark.e2e

SECRET = "deploy key " + "AKIA" + "4HFT2QWRZ7ZXCVBN"


@pytest.fixture
def tenant() -> str:
    return f"tenant-{uuid.uuid4().hex[:10]}"


def client_for(server: ServerThread, tenant: str, role: str = "orchestrator") -> MemoryClient:
    return MemoryClient(server.address, api_key=server.new_key(tenant, "user-1", role))


def aware(when: datetime | None) -> datetime:
    """``when``, asserted set and in UTC."""
    assert when is not None
    assert when.utcoffset() == timedelta(0)
    return when


def test_memories_round_trip_with_paging(server: ServerThread, tenant: str) -> None:
    with client_for(server, tenant) as memory:
        created = memory.upsert_memory("timezone", "Europe/Lisbon", agent_id="planner")
        assert isinstance(created, Memory)
        assert created.source is MemorySource.MANUAL
        assert created.scope is Scope.AGENT
        assert aware(created.created_at) <= datetime.now(UTC)
        assert (created.tags, created.expire_time, created.confidence) == ((), None, None)
        assert isinstance(created.proto, memory_pb2.Memory)
        assert created.proto.id == created.id
        read = memory.get_memory(created.id)
        assert read.value == "Europe/Lisbon"
        assert read == created  # the same memory, read back field for field
        assert Memory.from_proto(read.proto) == read
        assert memory.get_memory(key="timezone", agent_id="planner") == created
        with pytest.raises(NotFound):
            memory.get_memory(key="timezone", workspace_id="planner")
        again = memory.upsert_memory("timezone", "Europe/Porto", agent_id="planner", pinned=True)
        assert (again.id, again.value, again.pinned) == (created.id, "Europe/Porto", True)
        for n in range(4):
            memory.upsert_memory(f"fact-{n}", f"value {n}", agent_id="planner")
        listed = list(memory.list_memories(agent_id="planner", page_size=2))
        assert sorted(m.key for m in listed) == ["fact-0", "fact-1", "fact-2", "fact-3", "timezone"]
        assert not memory.pin_memory(created.id, False).pinned
        memory.delete_memory(created.id)
        with pytest.raises(NotFound) as missing:
            memory.get_memory(created.id)
        assert missing.value.reason == "MEMORY_NOT_FOUND"
        assert missing.value.metadata["memory_id"] == created.id


def test_create_only_never_overwrites_a_key_and_says_which_memory_holds_it(
    server: ServerThread, tenant: str
) -> None:
    with client_for(server, tenant) as memory:
        first = memory.upsert_memory("tone", "warm", agent_id="planner", importance=62)
        with pytest.raises(AlreadyExists) as taken:
            memory.upsert_memory("tone", "cold", agent_id="planner", create_only=True)
        assert taken.value.reason == "KEY_TAKEN"
        assert taken.value.metadata["memory_id"] == first.id
        kept = memory.get_memory(first.id)
        assert (kept.value, kept.importance, kept.etag) == ("warm", 62, first.etag)
        made = memory.upsert_memory("pace", "slow", agent_id="planner", create_only=True)
        assert made.value == "slow"


def test_the_tenant_s_agents_and_workspaces_are_listed_with_their_counts(
    server: ServerThread, tenant: str
) -> None:
    with client_for(server, tenant) as memory:
        assert list(memory.list_agents()) == []
        for n in range(3):
            memory.upsert_memory(f"k{n}", "v", agent_id="planner")
        memory.upsert_memory("k", "v", agent_id="coder")
        gone = memory.upsert_memory("brief", "v", agent_id="coder")
        memory.delete_memory(gone.id)
        memory.update_agent_settings("reviewer", memory_enabled=True)
        memory.upsert_memory("k", "v", workspace_id="acme")
        agents = list(memory.list_agents(page_size=1))  # a page at a time
        workspaces = list(memory.list_workspaces())
    assert [(a.id, a.memory_count, a.memory_enabled) for a in agents] == [
        ("coder", 1, False),
        ("planner", 3, False),
        ("reviewer", 0, True),
    ]
    assert all(isinstance(a, OwnerSummary) for a in agents)
    assert all(aware(a.last_activity_time) <= datetime.now(UTC) for a in agents)
    assert repr(agents[0]).startswith("OwnerSummary(id='coder', memory_count=1, ")
    assert [(w.id, w.memory_count) for w in workspaces] == [("acme", 1)]
    with client_for(server, f"other-{tenant}") as stranger:
        assert list(stranger.list_agents()) == []


@pytest.mark.parametrize("role", ["reader", "editor", "orchestrator"])
def test_the_caller_is_told_who_it_is(server: ServerThread, tenant: str, role: str) -> None:
    with client_for(server, tenant, role) as memory:
        caller = memory.get_caller()
    assert (caller.tenant_id, caller.user_id, caller.role) == (tenant, "user-1", role)
    assert caller.key_id
    assert memory.connection.api_key is not None
    assert caller.key_id in memory.connection.api_key  # the key's public half


def test_a_memorized_fact_supersedes_the_one_it_replaces(server: ServerThread, tenant: str) -> None:
    with client_for(server, tenant) as memory:
        paris = memory.memorize("The user lives in Paris.", agent_id="planner")
        new_york = memory.memorize(
            "The user lives in New York.", agent_id="planner", supersedes=[paris.id]
        )
        assert [m.id for m in memory.list_memories(agent_id="planner")] == [new_york.id]
        everything = memory.list_memories(agent_id="planner", show_superseded=True)
        assert {m.id: m.superseded_by for m in everything} == {
            paris.id: new_york.id,
            new_york.id: "",
        }


def test_refusals_are_typed_errors_with_their_details(server: ServerThread, tenant: str) -> None:
    with client_for(server, tenant) as memory:
        with pytest.raises(SecretInValue) as secret:
            memory.upsert_memory("aws", SECRET, agent_id="planner")
        assert secret.value.code is grpc.StatusCode.INVALID_ARGUMENT
        assert "AKIA" not in str(secret.value)
        with pytest.raises(InvalidArgument) as invalid:
            memory.upsert_memory("", "a value", agent_id="planner")
        assert "key" in {v.field for v in invalid.value.field_violations}

        auto = memory.upsert_memory("seen", "likes tea", agent_id="planner", source="auto")
        change = memory_service_pb2.UpdateMemoryRequest(
            memory=memory_pb2.Memory(id=auto.id, value="likes coffee"),
            update_mask=field_mask_pb2.FieldMask(paths=["value"]),
        )
        with pytest.raises(ReadOnlyMemory) as read_only:
            memory.call("UpdateMemory", change)
        assert read_only.value.metadata["memory_id"] == auto.id
        # A request built by hand is answered with its response's record.
        pinned = memory.call(
            "UpdateMemory",
            memory_service_pb2.UpdateMemoryRequest(
                memory=memory_pb2.Memory(id=auto.id, pinned=True),
                update_mask=field_mask_pb2.FieldMask(paths=["pinned"]),
            ),
        )
        assert isinstance(pinned, UpdateMemoryResponse)
        assert pinned.memory is not None
        assert (pinned.memory.pinned, pinned.memory.source) == (True, MemorySource.AUTO)
        with pytest.raises(TypeError, match="UpdateMemoryRequest"):
            memory.call("UpdateMemory", memory_service_pb2.GetMemoryRequest(id=auto.id))

    with client_for(server, tenant, role="reader") as reader:
        with pytest.raises(RoleForbids) as forbidden:
            reader.upsert_memory("k", "v", agent_id="planner")
        assert (forbidden.value.role, forbidden.value.required_role) == ("reader", "editor")
        assert [m.key for m in reader.list_memories(agent_id="planner")] == ["seen"]

    with (
        MemoryClient(server.address, api_key="not-a-key") as stranger,
        pytest.raises(Unauthenticated),
    ):
        stranger.get_block("core")


def test_a_stale_block_write_is_a_conflict_carrying_the_current_version(
    server: ServerThread, tenant: str
) -> None:
    with client_for(server, tenant) as memory:
        first = memory.write_block("core", "Name: Ana", agent_id="planner")
        second = memory.write_block(
            "core", "Name: Ana\nRole: SRE", agent_id="planner", expected_updated_at=first.updated_at
        )
        with pytest.raises(BlockConflict) as conflict:
            memory.write_block(
                "core", "Name: Bo", agent_id="planner", expected_updated_at=first.updated_at
            )
        assert conflict.value.exists
        assert conflict.value.current_version == second.version
        assert conflict.value.current_updated_at == aware(second.updated_at)
        assert conflict.value.current_etag == second.etag
        # The etag is the same token: stale, it is refused; current, it writes.
        with pytest.raises(BlockConflict):
            memory.write_block("core", "Name: Bo", agent_id="planner", etag=first.etag)
        third = memory.write_block(
            "core", "Name: Ana\nRole: SRE", agent_id="planner", etag=second.etag
        )
        assert third.version == second.version + 1
        assert memory.get_block("core", agent_id="planner").etag == third.etag
        second = third
        assert isinstance(second, Block)
        assert second.proto.updated_at.ToDatetime(UTC) == second.updated_at
        # Creating what already exists is a conflict too, and nothing was written.
        with pytest.raises(BlockConflict):
            memory.write_block("core", "Name: Bo", agent_id="planner")
        assert memory.get_block("core", agent_id="planner").content == "Name: Ana\nRole: SRE"


def test_the_compare_and_set_helper_re_reads_and_re_applies_on_conflict(
    server: ServerThread, tenant: str
) -> None:
    with client_for(server, tenant) as memory, client_for(server, tenant) as rival:
        seen: list[str] = []

        def append_line(current: str) -> str:
            seen.append(current)
            if len(seen) == 1:  # another writer gets in between our read and our write
                rival.update_block("core", lambda c: c + "rival\n", agent_id="planner")
            return current + "mine\n"

        block = memory.update_block("core", append_line, agent_id="planner")
        assert block.content == "rival\nmine\n"
        assert seen == ["", "rival\n"]

        def always_interrupted(current: str) -> str:
            rival.update_block("core", lambda c: c + "x", agent_id="planner")
            return current + "lost"

        with pytest.raises(BlockConflict):
            memory.update_block("core", always_interrupted, agent_id="planner", attempts=3)
        assert "lost" not in memory.get_block("core", agent_id="planner").content
        # Nothing to change: no write, the block as it is.
        unchanged = memory.update_block("core", lambda c: c, agent_id="planner")
        assert unchanged.content == memory.get_block("core", agent_id="planner").content


def test_recall_is_an_iterator_of_ranked_matches(server: ServerThread, tenant: str) -> None:
    with client_for(server, tenant) as memory:
        lines = [f"note {n}: the staging database runs on port {5400 + n}" for n in range(12)]
        memory.write_block("archival", "\n".join(lines), agent_id="planner")
        with memory.recall("staging database port", agent_id="planner", limit=10) as matches:
            found = list(matches)
        assert 1 <= len(found) <= 10
        assert all(isinstance(m, RecallResponse) for m in found)
        assert {(m.scope, m.block_label.name) for m in found} == {(Scope.AGENT, "ARCHIVAL")}
        assert [m.score for m in found] == sorted((m.score for m in found), reverse=True)
        assert all(m.content in lines for m in found)
        # A closed stream is an ended one, and the client stays usable.
        stream = memory.recall("staging database port", agent_id="planner", limit=10)
        assert next(stream).content in lines
        stream.close()
        assert list(stream) == []
        assert memory.get_block("archival", agent_id="planner").entry_count == 12
        # A refusal arrives as the typed error where the matches would.
        with pytest.raises(InvalidArgument) as refused:
            list(memory.recall("", agent_id="planner"))
        assert "query" in {v.field for v in refused.value.field_violations}


def test_render_prompt_and_decisions(server: ServerThread, tenant: str) -> None:
    with client_for(server, tenant) as memory:
        memory.write_block("core", "Prefers short answers.", agent_id="planner")
        rendered = memory.render_prompt("planner", user_message="hello")
        assert "Prefers short answers." in rendered.system_prompt
        assert isinstance(rendered.sections, tuple)
        assert memory.list_recent_decisions("planner") == []
        memory.write_block("core", "Lives in Lisbon.")
        policy = memory.render_prompt(
            "planner", include_agent_core=False, count_tokens=True, recent_decisions_limit=50
        )
        assert "Lives in Lisbon." in policy.system_prompt
        assert "Prefers short answers." not in policy.system_prompt
        assert all(s.token_count for s in policy.sections), policy.sections
        assert (
            "Lives in Lisbon."
            not in memory.render_prompt("planner", include_user_core=False).system_prompt
        )
        with pytest.raises(InvalidArgument) as refused:
            memory.render_prompt("planner", archival_min_score=2.0)
        assert "memory_policy.archival_min_score" in {
            v.field for v in refused.value.field_violations
        }


def test_a_recorded_run_s_prompt_renders_again_as_it_was(server: ServerThread, tenant: str) -> None:
    with client_for(server, tenant) as memory:
        fact = memory.upsert_memory("editor", "vim", agent_id="planner")
        memory.write_block("core", "Prefers short answers.", agent_id="planner")
        memory.write_block("archival", "staging database runs on port 5432", agent_id="planner")
        rendered = memory.render_prompt("planner")
        then = aware(rendered.render_time)
        memory.record_run_session("planner", run_id="run-1", render_time=then)
        (run,) = memory.list_agent_runs("planner")
        assert run.render_time == then

        memory.upsert_memory("editor", "emacs", agent_id="planner")
        memory.write_block("core", "Prefers long answers.", agent_id="planner", etag="*")
        memory.write_block(
            "archival", "staging database moved to port 6543", agent_id="planner", etag="*"
        )
        now = memory.render_prompt("planner")
        assert now.system_prompt != rendered.system_prompt
        past = memory.render_prompt("planner", as_of_time=run.render_time)
        assert past.system_prompt.encode() == rendered.system_prompt.encode()
        assert past.render_time == then

        # The other reads of then, through the same keyword.
        assert memory.get_memory(fact.id, as_of_time=then).value == "vim"
        assert memory.get_memory(key="editor", agent_id="planner", as_of_time=then).value == "vim"
        listed = memory.list_memories(agent_id="planner", as_of_time=then)
        assert [m.value for m in listed] == ["vim"]
        page = memory.list_memories_page(agent_id="planner", as_of_time=then)
        assert [m.value for m in page.memories] == ["vim"]
        block = memory.get_block("core", agent_id="planner", as_of_time=then)
        assert block.content == "Prefers short answers."
        with memory.recall("staging database port", agent_id="planner", as_of_time=then) as found:
            assert [m.content for m in found] == ["staging database runs on port 5432"]
        with pytest.raises(InvalidArgument) as refused:
            memory.record_run_session(
                "planner", run_id="run-2", render_time=datetime.now(UTC) + timedelta(hours=1)
            )
        assert "render_time" in {v.field for v in refused.value.field_violations}


def test_the_async_client_does_the_same(server: ServerThread, tenant: str) -> None:
    key = server.new_key(tenant, "user-1", "orchestrator")

    async def scenario() -> None:
        async with (
            AsyncMemoryClient(server.address, api_key=key) as memory,
            AsyncMemoryClient(server.address, api_key=key) as rival,
        ):
            made = await memory.upsert_memory("editor", "helix", workspace_id="docs")
            assert (made.scope, made.source) == (Scope.WORKSPACE, MemorySource.MANUAL)
            assert [m async for m in memory.list_memories(workspace_id="docs")] == [made]
            newer = await memory.memorize("Uses zed.", workspace_id="docs", supersedes=[made.id])
            shown = memory.list_memories(workspace_id="docs", show_superseded=True)
            assert {m.id: m.superseded_by async for m in shown} == {made.id: newer.id, newer.id: ""}
            await memory.write_block("archival", "alpha line\nbeta line\ngamma line", agent_id="a")
            async with memory.recall("beta", agent_id="a") as matches:
                found = [m async for m in matches]
            assert found[0].content == "beta line"
            assert all(isinstance(m, RecallResponse) for m in found)
            stream = memory.recall("line", agent_id="a")
            assert (await anext(stream)).content.endswith("line")
            await stream.aclose()
            assert [m async for m in stream] == []
            with pytest.raises(InvalidArgument):
                [m async for m in memory.recall("", agent_id="a")]

            calls = 0

            async def change(current: str) -> str:
                nonlocal calls
                calls += 1
                if calls == 1:
                    await rival.update_block("core", lambda c: c + "rival\n", agent_id="a")
                return current + "mine\n"

            block = await memory.update_block("core", change, agent_id="a")
            assert (block.content, calls) == ("rival\nmine\n", 2)
            assert isinstance(block, Block)
            assert aware(block.updated_at) >= aware(block.created_at)
            with pytest.raises(SecretInValue):
                await memory.memorize(SECRET, agent_id="a")
            with pytest.raises(NotFound):
                await memory.get_block("core")

    asyncio.run(scenario())


def test_the_readme_example_runs_as_shown(server: ServerThread, project_root: Path) -> None:
    key = server.new_key(f"tenant-{uuid.uuid4().hex[:10]}", "ana")
    done = subprocess.run(
        [sys.executable, str(project_root / "examples" / "python" / "quickstart.py")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "MEMORY_SERVER": server.address, "MEMORY_API_KEY": key},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == 'saved timezone = Europe/Lisbon (W/"1")'
    assert re.fullmatch(r"\d\.\d{3}  Staging's database listens on port 5433\.", lines[1])
    assert lines[-13:-10] == ["<memory>", *FRAMING.splitlines()]
    assert re.fullmatch(r"Today is \d{4}-\d{2}-\d{2} \(UTC\)\.", lines[-10])
    assert lines[-9:-4] == [
        "",
        "## Core Memory (agent planner)",
        "Ana, SRE. Prefers short answers.",
        "",
        "## Agent Memory (agent planner)",
    ]
    # The pinned memory, in the prompt because the example turns the agent's memory on.
    assert re.fullmatch(
        r"- \*\*timezone\*\*: Europe/Lisbon \[stored for ana, \d{4}-\d{2}-\d{2}\]", lines[-4]
    )
    assert lines[-3:] == ["", ARCHIVAL_HINT_LINE, "</memory>"]


# -- a round trip through each method ------------------------------------------------


def test_a_facts_period_is_written_changed_and_cleared_through_the_client(
    server: ServerThread, tenant: str
) -> None:
    start = datetime(2026, 3, 12, tzinfo=UTC)
    end = datetime.now(UTC).replace(microsecond=0) + timedelta(days=30)
    with client_for(server, tenant) as memory:
        made = memory.upsert_memory(
            "lead", "Ana leads platform", agent_id="planner", valid_start_time=start
        )
        assert (aware(made.valid_start_time), made.valid_end_time) == (start, None)
        ending = memory.update_memory(made.id, valid_end_time=end)
        assert (aware(ending.valid_start_time), aware(ending.valid_end_time)) == (start, end)
        opened = memory.update_memory(made.id, update_mask=["valid_start_time"])
        assert (opened.valid_start_time, aware(opened.valid_end_time)) == (None, end)
        kept = memory.memorize(
            "Ben leads platform from April",
            agent_id="planner",
            valid_start_time=end,
            supersedes=[made.id],
        )
        assert aware(kept.valid_start_time) == end
        replaced = memory.get_memory(made.id)
        assert replaced.superseded_by == kept.id
        assert aware(replaced.valid_end_time) == aware(kept.updated_at)


def test_a_memorys_note_is_written_changed_and_cleared_through_the_client(
    server: ServerThread, tenant: str
) -> None:
    with client_for(server, tenant) as memory:
        made = memory.upsert_memory(
            "deploy-day", "Deploys go out on Tuesdays", agent_id="planner", note="per Ana"
        )
        assert made.note == "per Ana"
        kept = memory.upsert_memory(
            "deploy-day", "Deploys go out on Wednesdays", agent_id="planner"
        )
        assert (kept.value, kept.note) == ("Deploys go out on Wednesdays", "per Ana")
        changed = memory.update_memory(made.id, note="per Ben, after the freeze")
        assert (changed.value, changed.note) == (kept.value, "per Ben, after the freeze")
        assert memory.get_memory(made.id).note == "per Ben, after the freeze"
        cleared = memory.update_memory(made.id, update_mask=["note"])
        assert cleared.note == ""
        with pytest.raises(InvalidArgument):
            memory.update_memory(made.id, note="x" * 2001)


def test_a_person_holds_and_approves_a_memory_through_the_client(
    server: ServerThread, tenant: str
) -> None:
    with client_for(server, tenant) as memory:
        memory.update_agent_settings("planner", memory_enabled=True)
        made = memory.upsert_memory("deploy-day", "Deploys go out on Tuesdays", agent_id="planner")
        held = memory.update_memory(made.id, held_for_review=True)
        assert held.held_for_review
        assert held.etag != made.etag
        assert "Tuesdays" not in memory.render_prompt("planner").system_prompt
        listed = memory.list_memories(agent_id="planner", filter="held_for_review = true")
        assert [m.id for m in listed] == [made.id]
        approved = memory.update_memory(made.id, held_for_review=False)
        assert not approved.held_for_review
        assert "Tuesdays" in memory.render_prompt("planner").system_prompt


def test_update_memory_changes_what_it_is_given_guarded_by_the_etag(
    server: ServerThread, tenant: str
) -> None:
    with client_for(server, tenant) as memory:
        made = memory.upsert_memory_result(
            "editor", "vim", agent_id="planner", ttl=timedelta(days=1)
        )
        assert made.created
        assert made.memory is not None
        again = memory.upsert_memory_result("editor", "vim", agent_id="planner")
        assert again.memory is not None
        assert (again.created, again.memory.id) == (False, made.memory.id)

        changed = memory.update_memory(
            made.memory.id, value="helix", tags=["Tools"], etag=again.memory.etag
        )
        assert (changed.value, changed.tags, changed.key) == ("helix", ("tools",), "editor")
        expires = aware(changed.expire_time)
        assert timedelta(hours=23) < expires - datetime.now(UTC) <= timedelta(days=1)
        with pytest.raises(EtagMismatch) as stale:
            memory.update_memory(made.memory.id, value="zed", etag=again.memory.etag)
        assert stale.value.current_etag == changed.etag

        # Named but not given: cleared.
        cleared = memory.update_memory(made.memory.id, update_mask=["expire_time", "tags"])
        assert (cleared.expire_time, cleared.tags) == (None, ())
        soon = datetime.now(UTC) + timedelta(hours=2)
        expiring = memory.update_memory(made.memory.id, expire_time=soon, pinned=True)
        assert expiring.pinned
        assert abs(aware(expiring.expire_time) - soon) < timedelta(seconds=1)
        # What came back is what goes in again: the record's datetime, as it is.
        kept = memory.update_memory(made.memory.id, expire_time=expiring.expire_time)
        assert kept.expire_time == expiring.expire_time
        with pytest.raises(ValueError, match="at least one field"):
            memory.update_memory(made.memory.id)
        with pytest.raises(ValueError, match="leaves out value"):
            memory.update_memory(made.memory.id, value="x", update_mask=["tags"])

        events = list(memory.list_memory_events(made.memory.id, page_size=2))
        assert [e.type for e in events] == [
            MemoryEventType.CREATED,
            *[MemoryEventType.UPDATED] * (len(events) - 1),
        ]
        assert len(events) >= 4  # paged two at a time
        assert events[0].old_memory is None
        last = events[-1].new_memory
        assert isinstance(last, Memory)
        assert last.pinned


def test_memorize_result_says_whether_it_created_and_what_it_superseded(
    server: ServerThread, tenant: str
) -> None:
    with client_for(server, tenant) as memory:
        paris = memory.memorize_result("The user lives in Paris.", agent_id="planner")
        assert paris.created
        assert paris.memory is not None
        assert paris.memory.source is MemorySource.MEMORIZE
        assert not memory.memorize_result("The user lives in Paris.", agent_id="planner").created
        rome = memory.memorize_result(
            "The user lives in Rome.", agent_id="planner", supersedes=[paris.memory.id]
        )
        assert rome.memory is not None
        assert [m.superseded_by for m in rome.superseded] == [rome.memory.id]


def test_learnings_settings_and_the_active_session(server: ServerThread, tenant: str) -> None:
    with client_for(server, tenant) as memory:
        learning = memory.record_learning(
            "Ask for the failing test before fixing.", chain_agent_ids=["lead", "coder"]
        )
        assert (learning.agent_id, learning.source) == ("lead", MemorySource.DIRECTOR)
        learned = memory.list_learnings(chain_agent_ids=["coder", "lead"], limit=5)
        assert [m.id for m in learned] == [learning.id]
        with pytest.raises(TypeError, match="not a string"):
            memory.list_learnings(chain_agent_ids="lead")

        assert not memory.get_agent_settings("coder").memory_enabled
        both = memory.update_agent_settings(
            "coder", memory_enabled=True, active_memory_enabled=True
        )
        assert (both.memory_enabled, both.active_memory_enabled) == (True, True)
        one_off = memory.update_agent_settings("coder", memory_enabled=False)
        assert (one_off.memory_enabled, one_off.active_memory_enabled) == (False, True)
        assert aware(one_off.updated_at) <= datetime.now(UTC)

        fresh = memory.get_active_session("coder")
        assert (fresh.status, fresh.enabled) == (ActiveSessionStatus.FRESH, True)
        carried = memory.record_run_session("coder", run_id="run-1", session_id_after="s-1")
        assert (carried.status, carried.session_id, carried.runs_since_reset) == (
            ActiveSessionStatus.CARRYING_CONTEXT,
            "s-1",
            1,
        )
        assert carried.session_age is None or isinstance(carried.session_age, timedelta)
        reset = memory.reset_active_session("coder")
        assert (reset.status, reset.session_id) == (ActiveSessionStatus.FRESH, "")


def test_the_expiry_slides_of_an_agent_and_a_workspace(server: ServerThread, tenant: str) -> None:
    with client_for(server, tenant) as memory:
        week = timedelta(days=7)
        slid = memory.update_agent_settings("coder", expiry_slide=week)
        assert (slid.expiry_slide, slid.memory_enabled) == (week, False)
        assert memory.get_agent_settings("coder").expiry_slide == week
        # Off reads as unset.
        assert memory.update_agent_settings("coder", expiry_slide=timedelta(0)).expiry_slide is None

        fresh = memory.get_workspace_settings("repo")
        assert (fresh.workspace_id, fresh.expiry_slide, fresh.updated_at) == ("repo", None, None)
        stored = memory.update_workspace_settings("repo", expiry_slide=timedelta(hours=36))
        assert stored.expiry_slide == timedelta(hours=36)
        assert aware(stored.updated_at) <= datetime.now(UTC)
        assert memory.get_workspace_settings("repo").expiry_slide == timedelta(hours=36)
        with pytest.raises(InvalidArgument, match="expiry_slide"):
            memory.update_workspace_settings("repo", expiry_slide=-timedelta(seconds=1))


def test_extraction_and_usage(server: ServerThread, tenant: str) -> None:
    with client_for(server, tenant) as memory:
        # Under the minimum length: answered at once, no model call, no usage.
        skipped = memory.extract_memories("coder", transcript="user: hi", session_id="s-9")
        assert skipped.outcome is ExtractionOutcome.SKIPPED_TOO_SHORT
        assert skipped.synthetic_session_id == "memory-extract:s-9"
        queued = memory.extract_memories(
            "coder", transcript="user: hi", chain_id="chain-0001", workspace_id="ws", queued=True
        )
        assert queued.outcome is ExtractionOutcome.QUEUED
        assert memory.get_extraction_job(queued.job_id).workspace_id == "ws"
        with pytest.raises(ValueError, match="exactly one"):
            memory.extract_memories("coder", transcript="t", session_id="s", chain_id="c")

        hour_ago = datetime.now(UTC) - timedelta(hours=1)
        usage = memory.get_usage(synthetic_session_id_prefix="memory-extract:", start_time=hour_ago)
        assert (usage.records, usage.total_input_tokens) == ((), 0)
        with pytest.raises(ValueError, match="time zone"):
            memory.get_usage(start_time=datetime.now())


def test_forgetting_an_agent_a_workspace_and_the_user(server: ServerThread, tenant: str) -> None:
    with client_for(server, tenant) as memory:
        memory.upsert_memory("k", "v", agent_id="gone")
        memory.upsert_memory("k", "v", workspace_id="ws-gone")
        memory.write_block("core", "agent notes", agent_id="gone")
        memory.write_block("core", "user notes")

        dry = memory.forget_agent("gone", validate_only=True)
        assert (dry.memories, dry.blocks) == (1, 1)
        assert [m.key for m in memory.list_memories(agent_id="gone")] == ["k"]
        assert memory.forget_agent("gone").memories == 1
        assert list(memory.list_memories(agent_id="gone")) == []
        assert memory.forget_workspace("ws-gone").memories == 1
        assert memory.forget_user().blocks == 1
        with pytest.raises(NotFound):
            memory.get_block("core")


def test_deleting_a_block_and_reading_its_versions(server: ServerThread, tenant: str) -> None:
    with client_for(server, tenant) as memory:
        first = memory.write_block("core", "v1", agent_id="planner")
        second = memory.write_block(
            "core", "v2", agent_id="planner", expected_updated_at=first.updated_at
        )
        versions = list(memory.list_block_versions("core", agent_id="planner", page_size=1))
        assert [(v.version, v.content) for v in versions] == [(2, "v2"), (1, "v1")]

        with pytest.raises(BlockConflict) as stale:
            memory.delete_block("core", agent_id="planner", expected_updated_at=first.updated_at)
        current = stale.value.current_updated_at
        assert current is not None
        assert current.tzinfo is not None
        assert current == second.updated_at
        assert memory.delete_block("core", agent_id="planner", expected_updated_at=current) is None
        with pytest.raises(NotFound):
            memory.get_block("core", agent_id="planner")
        with pytest.raises(NotFound):
            list(memory.list_block_versions("core", agent_id="planner"))


def test_an_orchestrator_reads_another_users_blocks_by_name(
    server: ServerThread, tenant: str
) -> None:
    ana_key = server.new_key(tenant, "ana", "editor")
    with MemoryClient(server.address, api_key=ana_key) as ana, client_for(server, tenant) as ops:
        ana.write_block("core", "Prefers mornings", agent_id="planner")
        (block,) = ops.list_blocks(agent_id="planner", user_id="ana")
        assert block.content == "Prefers mornings"
        assert ops.get_block("core", agent_id="planner", user_id="ana").version == 1
        versions = list(ops.list_block_versions("core", agent_id="planner", user_id="ana"))
        assert [v.writer_user_id for v in versions] == ["ana"]
        assert ops.list_blocks(agent_id="planner") == []


def test_a_workspace_block_is_shared_by_the_users_of_the_tenant(
    server: ServerThread, tenant: str
) -> None:
    ana_key = server.new_key(tenant, "ana", "editor")
    bo_key = server.new_key(tenant, "bo", "editor")
    with (
        MemoryClient(server.address, api_key=ana_key) as ana,
        MemoryClient(server.address, api_key=bo_key) as bo,
    ):
        first = ana.write_block("core", "Release on Thursday", workspace_id="release")
        assert (first.scope, first.workspace_id, first.agent_id) == (
            Scope.WORKSPACE,
            "release",
            "",
        )
        assert bo.get_block("core", workspace_id="release") == first
        second = bo.update_block("core", lambda c: c + "\nFreeze Tuesday", workspace_id="release")
        assert second.version == 2
        with pytest.raises(BlockConflict):
            ana.write_block("core", "stale", workspace_id="release", etag=first.etag)
        (listed,) = ana.list_blocks(workspace_id="release")
        assert listed.content == "Release on Thursday\nFreeze Tuesday"
        versions = list(ana.list_block_versions("core", workspace_id="release"))
        assert [v.writer_user_id for v in versions] == ["bo", "ana"]
        rendered = bo.render_prompt("planner", workspace_id="release")
        assert "## Core Memory (workspace release)\nRelease on Thursday" in rendered.system_prompt
        without = bo.render_prompt("planner", workspace_id="release", include_workspace_core=False)
        assert "Release on Thursday" not in without.system_prompt
        assert ana.delete_block("core", workspace_id="release", etag=second.etag) is None
        with pytest.raises(NotFound):
            bo.get_block("core", workspace_id="release")


def test_decisions_from_card_type_to_re_examination(server: ServerThread, tenant: str) -> None:
    with client_for(server, tenant) as memory:
        registered = memory.register_card_type_result(
            "trade-decision", re_examinable="until_resolved", actions=["HOLD", "CLOSE"]
        )
        assert registered.created
        assert registered.card_type is not None
        assert registered.card_type.re_examinable is ReExaminable.UNTIL_RESOLVED
        replaced = memory.register_card_type(
            "trade-decision", re_examinable="always", actions=["HOLD", "CLOSE"]
        )
        assert replaced.re_examinable is ReExaminable.ALWAYS
        assert replaced.actions == ("HOLD", "CLOSE")

        decision = {
            "run_id": "run-1",
            "card_type": "trade-decision",
            "action": "WAIT",
            "summary": "range unresolved",
            "result": {"asset": "BTC", "entry": 97250.5, "watch_for": ["range break"]},
        }
        recorded = memory.record_decision_result("trader", **decision)
        assert recorded.created
        assert isinstance(recorded.decision, Decision)
        assert recorded.decision.resolution_status is ResolutionStatus.OPEN
        decision_id = recorded.decision.id
        assert memory.record_decision("trader", **decision).id == decision_id
        # The result is plain JSON-like values (numbers as floats, as JSON has them).
        assert memory.get_decision(decision_id).result == {
            "asset": "BTC",
            "entry": 97250.5,
            "watch_for": ["range break"],
        }
        recent = memory.list_recent_decisions_result(
            "trader", include_result=True, card_type="trade-decision"
        )
        assert [d.id for d in recent.decisions] == [decision_id]
        assert recent.decisions[0].result == memory.get_decision(decision_id).result
        assert aware(recent.as_of) >= aware(recent.decisions[0].created_at)
        assert memory.list_recent_decisions("trader", card_type="other") == []
        # The agent's review setting decides when the render is not told.
        assert "Recent Decisions" not in memory.render_prompt("trader").system_prompt
        assert memory.update_agent_settings("trader", review_decisions=True).review_decisions
        assert "## Recent Decisions" in memory.render_prompt("trader").system_prompt
        told = memory.render_prompt("trader", include_recent_decisions=False)
        assert "Recent Decisions" not in told.system_prompt

        second_look = memory.record_reexamination_result(
            decision_id,
            run_id="run-2",
            conviction_score=0,
            notes="The range broke down.",
            suggested_action="CLOSE",
        )
        assert second_look.created
        assert second_look.reexamination is not None
        assert second_look.reexamination.conviction_score == 0  # set, though zero
        assert [r.id for r in memory.list_reexaminations(decision_id)] == [
            second_look.reexamination.id
        ]
        same = memory.record_reexamination(
            decision_id,
            run_id="run-2",
            conviction_score=0,
            notes="The range broke down.",
            suggested_action="CLOSE",
        )
        assert same.id == second_look.reexamination.id

        resolved = memory.resolve_decision(decision_id)
        assert resolved.resolution_status is ResolutionStatus.RESOLVED
        assert aware(resolved.resolved_at) >= aware(resolved.created_at)
        assert resolved.latest_conviction_score == 0
        reopened = memory.resolve_decision(decision_id, "open")
        assert reopened.resolution_status is ResolutionStatus.OPEN


def test_the_async_client_runs_the_same_operations(server: ServerThread, tenant: str) -> None:
    key = server.new_key(tenant, "user-1", "orchestrator")

    async def scenario() -> None:
        async with AsyncMemoryClient(server.address, api_key=key) as memory:
            made = await memory.upsert_memory_result("editor", "vim", agent_id="a")
            assert made.created
            assert made.memory is not None
            changed = await memory.update_memory(made.memory.id, value="helix")
            assert changed.value == "helix"
            assert aware(changed.updated_at) >= aware(made.memory.updated_at)
            events = [e.type async for e in memory.list_memory_events(made.memory.id, page_size=1)]
            assert events == [MemoryEventType.CREATED, MemoryEventType.UPDATED]
            first = await memory.write_block("core", "v1", agent_id="a")
            await memory.write_block(
                "core", "v2", agent_id="a", expected_updated_at=first.updated_at
            )
            versions = [
                v async for v in memory.list_block_versions("core", agent_id="a", page_size=1)
            ]
            assert [v.version for v in versions] == [2, 1]
            assert versions[1].written_at == first.updated_at
            assert isinstance(versions[1].proto, block_pb2.BlockVersion)
            await memory.delete_block("core", agent_id="a")
            assert (await memory.forget_agent("a")).memories == 1

    asyncio.run(scenario())
