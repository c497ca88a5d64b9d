"""Facts valid for a period, over real gRPC and the real PostgreSQL: the period is
written, changed and cleared, refused when it ends before it starts, audited; a prompt
and recall show only facts valid now; superseding a fact ends its period; listings
filter on it; extraction dates a fact when the (scripted) model says so.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import pytest
from google.protobuf import timestamp_pb2

from agentmemory.v1 import memory_pb2, recall_pb2, recall_service_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.fake_anthropic import FakeAnthropic, fact
from tests.support import Client, ErrorDetails, error_details

NOW = datetime.now(UTC)
PAST = datetime(2020, 3, 12, tzinfo=UTC)
FUTURE = NOW.replace(microsecond=0) + timedelta(days=400)
# An instant between now and FUTURE, as a filter writes it.
BETWEEN = (NOW + timedelta(days=200)).strftime("%Y-%m-%dT%H:%M:%SZ")
RUN = (
    "user: Ana leads the platform team until the end of March; after that Ben does.\n"
    "assistant: Noted: Ana leads platform until March 31.\n"
) * 3


def stamp(when: datetime) -> timestamp_pb2.Timestamp:
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(when)
    return ts


def at(ts: timestamp_pb2.Timestamp) -> datetime:
    return ts.ToDatetime(tzinfo=UTC)


def upsert(c: Client, agent: str, key: str, value: str = "v", **kw: Any) -> memory_pb2.Memory:
    request = pb.UpsertMemoryRequest(
        owner=memory_pb2.MemoryOwner(agent_id=agent), key=key, value=value, **kw
    )
    memory: memory_pb2.Memory = c.call(c.memory.UpsertMemory, request).memory
    return memory


def update(c: Client, memory: memory_pb2.Memory, *paths: str) -> memory_pb2.Memory:
    request = pb.UpdateMemoryRequest(memory=memory)
    request.update_mask.paths.extend(paths)
    updated: memory_pb2.Memory = c.call(c.memory.UpdateMemory, request).memory
    return updated


def failure(call: Callable[[], object]) -> ErrorDetails:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return error_details(info.value)


def keys(c: Client, agent: str, text: str) -> set[str]:
    request = pb.ListMemoriesRequest(owner=memory_pb2.MemoryOwner(agent_id=agent), filter=text)
    response: pb.ListMemoriesResponse = c.call(c.memory.ListMemories, request)
    assert response.total_size == len(response.memories)
    return {m.key for m in response.memories}


def rendered(c: Client, agent: str) -> str:
    request = recall_service_pb2.RenderPromptRequest(
        agent_id=agent, memory_policy=recall_pb2.MemoryPolicy()
    )
    response: recall_service_pb2.RenderPromptResponse = c.call(c.recall.RenderPrompt, request)
    return response.system_prompt


def line_of(prompt: str, fact: str) -> str:
    (line,) = [line for line in prompt.splitlines() if fact in line]
    return line


def seed_periods(c: Client, agent: str) -> None:
    """A fact for each place a period can stand against now."""
    upsert(c, agent, "always", "Deploys run on Tuesdays")
    upsert(c, agent, "over", "Cleo leads platform", valid_end_time=stamp(PAST))
    upsert(c, agent, "lead", "Ana leads platform", valid_end_time=stamp(FUTURE))
    upsert(c, agent, "port", "Staging database on 5434", valid_start_time=stamp(PAST))
    upsert(c, agent, "soon", "Ben leads platform", valid_start_time=stamp(FUTURE))


# --- writing a period ----------------------------------------------------------------


def test_upsert_writes_a_period_a_later_upsert_keeps_and_update_changes_or_clears(
    c: Client, agent: str
) -> None:
    first = upsert(
        c, agent, "lead", "Ana leads platform", valid_start_time=stamp(PAST),
        valid_end_time=stamp(FUTURE),
    )  # fmt: skip
    assert (at(first.valid_start_time), at(first.valid_end_time)) == (PAST, FUTURE)
    kept = upsert(c, agent, "lead", "Ana leads the platform team")
    assert (at(kept.valid_start_time), at(kept.valid_end_time)) == (PAST, FUTURE)

    later = FUTURE + timedelta(days=1)
    moved = update(c, memory_pb2.Memory(id=first.id, valid_end_time=stamp(later)), "valid_end_time")
    assert at(moved.valid_end_time) == later
    cleared = update(c, memory_pb2.Memory(id=first.id), "valid_start_time", "valid_end_time")
    assert not cleared.HasField("valid_start_time")
    assert not cleared.HasField("valid_end_time")

    events = c.call(c.memory.ListMemoryEvents, pb.ListMemoryEventsRequest(memory_id=first.id))
    last = events.events[-1]
    assert last.type == memory_pb2.MEMORY_EVENT_TYPE_UPDATED
    assert at(last.old_memory.valid_end_time) == later
    assert not last.new_memory.HasField("valid_end_time")


def test_a_read_only_memory_may_have_its_period_changed(c: Client, agent: str) -> None:
    auto = upsert(c, agent, "auto:lead", "Ana leads platform", source=memory_pb2.MEMORY_SOURCE_AUTO)
    changed = update(
        c, memory_pb2.Memory(id=auto.id, valid_end_time=stamp(FUTURE)), "valid_end_time"
    )
    assert at(changed.valid_end_time) == FUTURE


def test_a_period_ending_before_it_starts_is_invalid_argument_and_changes_nothing(
    c: Client, agent: str
) -> None:
    refused = failure(
        lambda: upsert(c, agent, "lead", valid_start_time=stamp(FUTURE), valid_end_time=stamp(PAST))
    )
    assert refused.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(refused.violations) == {"valid_end_time"}

    stored = upsert(c, agent, "lead", "Ana leads platform", valid_start_time=stamp(FUTURE))
    against_stored = failure(lambda: upsert(c, agent, "lead", "x", valid_end_time=stamp(PAST)))
    assert against_stored.code is grpc.StatusCode.INVALID_ARGUMENT
    assert "stored valid_start_time" in against_stored.violations["valid_end_time"]
    by_mask = failure(
        lambda: update(
            c, memory_pb2.Memory(id=stored.id, valid_end_time=stamp(PAST)), "valid_end_time"
        )
    )
    assert by_mask.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(by_mask.violations) == {"memory.valid_end_time"}

    memorized = failure(
        lambda: c.call(
            c.memory.Memorize,
            pb.MemorizeRequest(
                owner=memory_pb2.MemoryOwner(agent_id=agent),
                content="Ana leads platform",
                valid_start_time=stamp(FUTURE),
                valid_end_time=stamp(FUTURE),
            ),
        )
    )
    assert memorized.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(memorized.violations) == {"valid_end_time"}

    after = c.call(c.memory.GetMemory, pb.GetMemoryRequest(id=stored.id)).memory
    assert (after.value, after.etag) == (stored.value, stored.etag)
    assert not after.HasField("valid_end_time")


# --- what a prompt and recall show ---------------------------------------------------


def days_around(action: Callable[[], Any]) -> tuple[Any, set[str]]:
    """What ``action`` gives, and the days (UTC) it may have run on: one, or two where it
    ran across midnight."""
    first = datetime.now(UTC).date().isoformat()
    done = action()
    return done, {first, datetime.now(UTC).date().isoformat()}


def ends_on_a_day(line: str, days: set[str], tail: str = "") -> bool:
    return any(line.endswith(f", {day}{tail}]") for day in days)


def test_a_prompt_shows_only_facts_valid_now_with_their_periods(c: Client, agent: str) -> None:
    def seeded_and_rendered() -> str:
        seed_periods(c, agent)
        return rendered(c, agent)

    prompt, days = days_around(seeded_and_rendered)
    assert ends_on_a_day(line_of(prompt, "Deploys run on Tuesdays"), days)
    assert ends_on_a_day(line_of(prompt, "Ana leads platform"), days, f", until {FUTURE.date()}")
    assert ends_on_a_day(line_of(prompt, "Staging database on 5434"), days, ", since 2020-03-12")
    assert "Cleo" not in prompt
    assert "Ben" not in prompt


def test_recall_leaves_out_facts_outside_their_period(c: Client, agent: str) -> None:
    seed_periods(c, agent)
    request = recall_service_pb2.RecallRequest(
        query="leads platform", agent_id=agent, limit=100, include_memories=True
    )
    found = [m.content for m in c.call(c.recall.Recall, request)]
    assert any("Ana leads platform" in m for m in found)
    assert not any("Cleo" in m or "Ben" in m for m in found)


def test_listings_show_every_period_and_filter_on_it(c: Client, agent: str) -> None:
    seed_periods(c, agent)
    assert keys(c, agent, "") == {"always", "over", "lead", "port", "soon"}
    assert keys(c, agent, "valid = true") == {"always", "lead", "port"}
    assert keys(c, agent, "valid = false") == {"over", "soon"}
    assert keys(c, agent, f'valid_end_time < "{BETWEEN}"') == {"over"}
    assert keys(c, agent, f'NOT valid_end_time < "{BETWEEN}"') == {"always", "lead", "port", "soon"}
    assert keys(c, agent, f'validStartTime > "{BETWEEN}" OR key = always') == {
        "soon",
        "always",
    }
    refused = failure(lambda: keys(c, agent, "valid = sometimes"))
    assert refused.code is grpc.StatusCode.INVALID_ARGUMENT
    assert "filter" in refused.violations


# --- supersession --------------------------------------------------------------------


def test_superseding_a_fact_ends_its_period_when_the_replacement_was_written(
    c: Client, agent: str
) -> None:
    owner = memory_pb2.MemoryOwner(agent_id=agent)
    old = c.call(
        c.memory.Memorize,
        pb.MemorizeRequest(
            owner=owner,
            content="Ana leads platform",
            valid_start_time=stamp(PAST),
            valid_end_time=stamp(FUTURE),
        ),
    ).memory
    assert (at(old.valid_start_time), at(old.valid_end_time)) == (PAST, FUTURE)
    assert f"until {FUTURE.date()}" in rendered(c, agent)
    reply = c.call(
        c.memory.Memorize,
        pb.MemorizeRequest(owner=owner, content="Ben leads platform", supersedes=[old.id]),
    )
    (superseded,) = reply.superseded
    assert superseded.superseded_by == reply.memory.id
    assert at(superseded.valid_end_time) == at(reply.memory.updated_at)
    assert at(superseded.valid_start_time) == PAST
    prompt = rendered(c, agent)
    assert "Ben leads platform" in prompt
    assert "Ana" not in prompt

    events = c.call(c.memory.ListMemoryEvents, pb.ListMemoryEventsRequest(memory_id=old.id))
    last = events.events[-1]
    assert last.type == memory_pb2.MEMORY_EVENT_TYPE_SUPERSEDED
    assert at(last.old_memory.valid_end_time) == FUTURE
    assert at(last.new_memory.valid_end_time) == at(reply.memory.updated_at)


# --- extraction ----------------------------------------------------------------------


def extract(c: Client, agent: str) -> pb.ExtractMemoriesResponse:
    request = pb.ExtractMemoriesRequest(agent_id=agent, session_id=uuid.uuid4().hex, transcript=RUN)
    reply: pb.ExtractMemoriesResponse = c.call(c.memory.ExtractMemories, request)
    return reply


def test_extraction_dates_a_fact_the_model_dates_and_drops_only_a_bad_date(
    c: Client, agent: str, fake: FakeAnthropic
) -> None:
    until = (NOW + timedelta(days=30)).date().isoformat()
    fake.facts(
        fact("platform-lead", "Ana leads the platform team") | {"valid_until": until},
        fact("staging-port", "The staging database listens on 5434")
        | {"valid_from": "2026-03-12", "valid_until": "next spring"},
    )
    reply, days = days_around(lambda: extract(c, agent))
    assert reply.outcome == memory_pb2.EXTRACTION_OUTCOME_COMPLETED
    written = {m.key: m for m in reply.written}
    lead, port = written["auto:platform-lead"], written["auto:staging-port"]
    assert at(lead.valid_end_time) == datetime.fromisoformat(until).replace(tzinfo=UTC)
    assert not lead.HasField("valid_start_time")
    assert at(port.valid_start_time) == datetime(2026, 3, 12, tzinfo=UTC)
    assert not port.HasField("valid_end_time")

    sent = fake.requests[0]
    assert any(f"Today is {day} (UTC)." in sent["messages"][0]["content"] for day in days)
    schema = sent["tools"][0]["input_schema"]["properties"]["facts"]["items"]["properties"]
    assert {"valid_from", "valid_until"} <= set(schema)
    shown = line_of(rendered(c, agent), "Ana leads the platform team")
    assert ends_on_a_day(shown, days, f", until {until}")


def test_an_extracted_date_that_would_end_a_stored_period_before_it_starts_is_dropped(
    c: Client, agent: str, fake: FakeAnthropic
) -> None:
    stored = upsert(
        c,
        agent,
        "auto:platform-lead",
        "Ana will lead the platform team",
        source=memory_pb2.MEMORY_SOURCE_AUTO,
        valid_start_time=stamp(FUTURE),
    )
    fake.facts(
        fact("platform-lead", "Ana leads the platform team for now")
        | {"valid_until": (NOW + timedelta(days=30)).date().isoformat()},
        fact("deploy-day", "Deploys run on Tuesdays"),
    )
    reply = extract(c, agent)
    assert reply.outcome == memory_pb2.EXTRACTION_OUTCOME_COMPLETED
    written = {m.key: m for m in reply.written}
    assert set(written) == {"auto:platform-lead", "auto:deploy-day"}
    lead = written["auto:platform-lead"]
    assert (lead.id, lead.value) == (stored.id, "Ana leads the platform team for now")
    assert at(lead.valid_start_time) == FUTURE
    assert not lead.HasField("valid_end_time")
