"""ExtractMemories and GetUsage over real gRPC, with the real SDK talking to a fake
Messages API on loopback and the real PostgreSQL underneath.

Every guardrail, the known memories shown, de-duplication, scope rules, slugs and upsert by
key, secret refusal, best-effort outcomes, the all-or-nothing write, no transaction held
over the model call, and the usage ledger with its synthetic session ids.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import timedelta
from typing import Any

import grpc
import psycopg
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from psycopg import sql

from agent_memory.config import Settings
from agent_memory.extract import budget
from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.fake_anthropic import FakeAnthropic, fact
from tests.support import Client, ServerThread, error_details, wait_until

MODEL = "claude-haiku-4-5-20251001"
TRANSCRIPT = (
    "user: how do we deploy this service?\n"
    "assistant: We deploy with `make release` from the repository root; it builds the "
    "image, runs the migrations and rolls the pods one by one. The staging cluster is "
    "called blue and production is called green.\n"
    "user: thanks, and where do the database credentials live?\n"
    "assistant: In the vault under secret/prod/db; the service reads them at start.\n"
)
ANTHROPIC_KEY = "sk-ant-api03-" + "Q7vX2mK9pL4rT8wZ1nB6" + "cY3hJ5sD0fG2aE7uI9oR"

OUT = memory_pb2  # outcome and scope enums live here


# -- fixtures and helpers -----------------------------------------------------------------

# Every test runs beside the module's scripted model (tests/e2e/conftest.py), cleared
# around it: a server a test starts finds that model through the environment.
pytestmark = pytest.mark.usefixtures("fake")


def started(database_url: str, **settings: Any) -> ServerThread:
    running = ServerThread(database_url, settings=Settings(extraction_sdk_retries=0, **settings))
    running.start()
    return running


def enable(c: Client, agent_id: str = "a", enabled: bool = True) -> None:
    request = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id=agent_id, memory_enabled=enabled)
    )
    request.update_mask.paths.append("memory_enabled")
    c.call(c.memory.UpdateAgentSettings, request)


def extract(c: Client, **fields: Any) -> pb.ExtractMemoriesResponse:
    fields.setdefault("agent_id", "a")
    if "chain_id" not in fields:
        fields.setdefault("session_id", "s1")
    fields.setdefault("transcript", TRANSCRIPT)
    return c.call(c.memory.ExtractMemories, pb.ExtractMemoriesRequest(**fields))


def owner(agent_id: str | None = None, workspace_id: str | None = None) -> memory_pb2.MemoryOwner:
    if workspace_id is not None:
        return memory_pb2.MemoryOwner(workspace_id=workspace_id)
    return memory_pb2.MemoryOwner(agent_id=agent_id or "a")


def listed(
    c: Client, agent_id: str | None = None, workspace_id: str | None = None
) -> list[memory_pb2.Memory]:
    reply = c.call(
        c.memory.ListMemories,
        pb.ListMemoriesRequest(owner=owner(agent_id, workspace_id), page_size=1000),
    )
    return list(reply.memories)


def upsert(
    c: Client, key: str, value: str, agent_id: str | None = None, workspace_id: str | None = None
) -> memory_pb2.Memory:
    return c.call(
        c.memory.UpsertMemory,
        pb.UpsertMemoryRequest(owner=owner(agent_id, workspace_id), key=key, value=value),
    ).memory


def manual_under_extraction_key(
    c: Client, database_url: str, key: str, value: str, workspace_id: str | None = None
) -> memory_pb2.Memory:
    """A manual memory under a key of extraction's form: only extraction may write there
    now, so such a row is one stored before the prefix was reserved."""
    made = c.call(
        c.memory.UpsertMemory,
        pb.UpsertMemoryRequest(
            owner=owner(None, workspace_id),
            key=key,
            value=value,
            source=memory_pb2.MEMORY_SOURCE_AUTO,
        ),
    ).memory
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("UPDATE memories SET source = 'manual' WHERE id = %s", (uuid.UUID(made.id),))
    held: memory_pb2.Memory = c.call(c.memory.GetMemory, pb.GetMemoryRequest(id=made.id)).memory
    assert held.source == memory_pb2.MEMORY_SOURCE_MANUAL
    return held


def user_message(request: dict[str, Any]) -> str:
    messages = request["messages"]
    assert len(messages) == 1
    assert messages[0]["role"] == "user"
    content = messages[0]["content"]
    if isinstance(content, list):
        return "".join(block["text"] for block in content)
    return str(content)


def known_lines(message: str) -> list[tuple[str, str, str, str]]:
    """The known memories shown to the model, in order: (reference, scope, key, value)."""
    if "Known memories" not in message:
        return []
    section = message.split("Known memories (id, scope, key: value):\n", 1)[1]
    section = section.split("\n\n", 1)[0]
    shown = []
    for line in section.splitlines():
        ref, scope, rest = line[2:].split(" ", 2)
        key, value = rest.split(": ", 1)
        shown.append((ref, scope.strip("()"), key, value))
    return shown


def hint_lines(message: str) -> list[str]:
    """The values of the known memories shown to the model, in order."""
    return [value for _, _, _, value in known_lines(message)]


def dropped(reply: pb.ExtractMemoriesResponse) -> list[tuple[str, str]]:
    return [(d.key, d.reason) for d in reply.dropped]


def assert_nothing_written(c: Client, agent_id: str = "a", workspace_id: str | None = None) -> None:
    assert listed(c, agent_id=agent_id) == []
    if workspace_id is not None:
        assert listed(c, workspace_id=workspace_id) == []


# -- guardrails ---------------------------------------------------------------------------


def test_a_short_transcript_is_skipped_without_reaching_the_model(
    c: Client, fake: FakeAnthropic
) -> None:
    enable(c)
    fake.facts(fact("k", "a fact that must never be written"))
    reply = extract(c, transcript="x" * 199)
    assert reply.outcome == OUT.EXTRACTION_OUTCOME_SKIPPED_TOO_SHORT
    assert reply.synthetic_session_id == "memory-extract:s1"
    assert "200" in reply.detail
    assert not reply.HasField("usage")  # no model call, no usage
    # Surrounding whitespace does not count towards the length.
    reply = extract(c, transcript="  \n" + "y" * 150 + " " * 100)
    assert reply.outcome == OUT.EXTRACTION_OUTCOME_SKIPPED_TOO_SHORT
    assert fake.requests == []
    assert fake.count_requests == []
    assert_nothing_written(c)
    # At the minimum the pass runs.
    reply = extract(c, transcript="z" * 200)
    assert reply.outcome == OUT.EXTRACTION_OUTCOME_COMPLETED
    assert len(fake.requests) == 1


def test_a_long_transcript_keeps_its_head_and_tail_and_says_so(
    c: Client, fake: FakeAnthropic
) -> None:
    enable(c)
    transcript = "".join(f"line {i:06d}\n" for i in range(1700))[:20_000]
    assert len(transcript) == 20_000
    reply = extract(c, transcript=transcript)
    assert reply.outcome == OUT.EXTRACTION_OUTCOME_NO_FACTS
    sent = user_message(fake.requests[0])
    assert transcript[:3000] in sent
    assert transcript[-9000:] in sent
    assert "[... 8000 characters omitted ...]" in sent
    assert transcript[3000:11_000] not in sent
    assert "line 000500" not in sent  # from the middle
    assert "first 3000" in reply.detail
    assert "last 9000" in reply.detail
    assert "20000" in reply.detail


def test_a_transcript_within_the_cap_is_sent_whole(c: Client, fake: FakeAnthropic) -> None:
    enable(c)
    reply = extract(c)
    assert TRANSCRIPT in user_message(fake.requests[0])
    assert "whole transcript" in reply.detail
    # The SDK took its key from ANTHROPIC_API_KEY, as it does against the real API.
    headers = fake.requests[0]["_headers"]
    assert "test-key" in headers.get("x-api-key", "") + headers.get("authorization", "")


def test_at_most_five_facts_are_written(c: Client, fake: FakeAnthropic) -> None:
    enable(c)
    fake.facts(*(fact(f"fact {i}", f"durable fact number{i} about thing{i}") for i in range(7)))
    reply = extract(c)
    assert reply.outcome == OUT.EXTRACTION_OUTCOME_COMPLETED
    assert [m.key for m in reply.written] == [f"auto:fact-{i}" for i in range(5)]
    assert dropped(reply) == [("auto:fact-5", "OVER_LIMIT"), ("auto:fact-6", "OVER_LIMIT")]
    assert sorted(m.key for m in listed(c)) == [f"auto:fact-{i}" for i in range(5)]
    tool = fake.requests[0]["tools"][0]
    assert tool["input_schema"]["properties"]["facts"]["maxItems"] == 5
    assert fake.requests[0]["tool_choice"] == {"type": "tool", "name": tool["name"]}


def test_facts_under_confidence_point_six_are_dropped(c: Client, fake: FakeAnthropic) -> None:
    enable(c)
    fake.facts(
        fact("shaky", "the build might use bazel someday", confidence=0.59),
        fact("solid", "the build uses make and docker", confidence=0.6),
    )
    reply = extract(c)
    assert [(m.key, m.confidence) for m in reply.written] == [("auto:solid", 0.6)]
    assert [(d.key, d.reason, d.confidence) for d in reply.dropped] == [
        ("auto:shaky", "LOW_CONFIDENCE", pytest.approx(0.59))
    ]
    assert [m.key for m in listed(c)] == ["auto:solid"]


def test_a_pass_that_cannot_fit_the_budget_is_skipped_before_the_call(
    database_url: str, fake: FakeAnthropic
) -> None:
    running = started(database_url, extraction_prices='{"claude-haiku-4-5": [1000, 5000]}')
    try:
        with running.client() as client:
            enable(client)
            fake.facts(fact("k", "a fact that must never be written"))
            fake.counted_tokens = 500  # even the exact count is far too expensive
            reply = extract(client)
            assert reply.outcome == OUT.EXTRACTION_OUTCOME_SKIPPED_BUDGET
            assert "budget" in reply.detail
            assert fake.requests == []  # no /v1/messages call
            assert not reply.HasField("usage")
            assert_nothing_written(client)
    finally:
        running.stop()


def test_an_unpriced_model_is_skipped_because_its_budget_cannot_be_enforced(
    database_url: str, fake: FakeAnthropic
) -> None:
    running = started(database_url, extraction_model="mystery-model-1")
    try:
        with running.client() as client:
            enable(client)
            reply = extract(client)
            assert reply.outcome == OUT.EXTRACTION_OUTCOME_SKIPPED_BUDGET
            assert "mystery-model-1" in reply.detail
            assert fake.requests == []
    finally:
        running.stop()


def test_an_exact_token_count_rescues_a_pass_the_byte_bound_would_refuse(
    database_url: str, fake: FakeAnthropic
) -> None:
    running = started(database_url, extraction_prices='{"claude-haiku-4-5": [10, 10]}')
    try:
        with running.client() as client:
            enable(client)
            fake.counted_tokens = 100
            reply = extract(client, transcript=TRANSCRIPT * 6)
            assert reply.outcome == OUT.EXTRACTION_OUTCOME_NO_FACTS
            assert len(fake.count_requests) == 1
            sent = fake.requests[0]
            bound = budget.input_token_bound(sent["system"], sent["messages"], sent["tools"])
            price = 10 / 1e6
            assert bound * price + budget.MIN_OUTPUT_TOKENS * price > 0.03  # bound refused
            assert sent["max_tokens"] * price + 100 * price <= 0.03
            assert sent["max_tokens"] >= 2899
    finally:
        running.stop()


def test_max_tokens_keeps_the_worst_case_within_three_cents(c: Client, fake: FakeAnthropic) -> None:
    enable(c)
    for i in range(20):
        upsert(c, f"k{i}", f"known fact {i} " + "detail " * 25)
    # A long transcript makes the input expensive enough that the budget binds.
    transcript = "".join(f"event {i:06d} happened\n" for i in range(2000))
    extract(c, transcript=transcript)
    sent = fake.requests[0]
    assert sent["model"] == MODEL
    bound = budget.input_token_bound(sent["system"], sent["messages"], sent["tools"])
    assert bound > len(user_message(sent).encode())
    worst_case = bound * 1.0 / 1e6 + sent["max_tokens"] * 5.0 / 1e6
    assert worst_case <= 0.03
    assert budget.MIN_OUTPUT_TOKENS <= sent["max_tokens"] < budget.MAX_OUTPUT_TOKENS
    # A small input leaves the output cap at its ceiling, still within the budget.
    fake.requests.clear()
    extract(c, session_id="s2")
    small = fake.requests[0]
    assert small["max_tokens"] == budget.MAX_OUTPUT_TOKENS
    small_bound = budget.input_token_bound(small["system"], small["messages"], small["tools"])
    assert small_bound / 1e6 + small["max_tokens"] * 5 / 1e6 <= 0.03


def test_the_recorded_cost_is_the_reply_usage_at_the_model_price(
    c: Client, fake: FakeAnthropic
) -> None:
    enable(c)
    fake.facts(fact("k", "the service runs on port 8080"), input_tokens=2000, output_tokens=300)
    reply = extract(c)
    assert reply.usage.input_tokens == 2000
    assert reply.usage.output_tokens == 300
    assert reply.usage.cost_usd == pytest.approx(2000 * 1e-6 + 300 * 5e-6)


# -- what the model sees ------------------------------------------------------------------


def test_the_model_sees_the_transcript_and_the_twenty_most_recent_values(
    c: Client, fake: FakeAnthropic
) -> None:
    enable(c)
    values = [f"remembered fact {i:02d} about subsystem{i:02d}" for i in range(25)]
    for i, value in enumerate(values):
        # Both owners of the run count: its agent and its workspace.
        if i % 2:
            upsert(c, f"k{i:02d}", value, workspace_id="w")
        else:
            upsert(c, f"k{i:02d}", value, agent_id="a")
    upsert(c, "elsewhere", "a fact of another agent entirely", agent_id="other")
    extract(c, workspace_id="w")
    sent = user_message(fake.requests[0])
    assert TRANSCRIPT.strip() in sent
    assert hint_lines(sent) == list(reversed(values[5:]))  # newest first
    for old in values[:5]:
        assert old not in sent
    assert "another agent" not in sent


def test_the_model_is_told_when_the_run_has_no_workspace(c: Client, fake: FakeAnthropic) -> None:
    enable(c)
    extract(c)
    sent = fake.requests[0]
    assert "no workspace" in user_message(sent)
    assert hint_lines(user_message(sent)) == []
    scopes = sent["tools"][0]["input_schema"]["properties"]["facts"]["items"]["properties"]
    assert scopes["scope"]["enum"] == ["agent"]
    assert "secret" in sent["system"].lower()


# -- de-duplication -----------------------------------------------------------------------


def test_near_duplicates_of_stored_rows_and_of_each_other_are_dropped(
    c: Client, fake: FakeAnthropic
) -> None:
    enable(c)
    stored = "alpha bravo charlie delta echo foxtrot golf hotel india juliet"
    upsert(c, "manual-fact", stored)
    words = stored.split()
    fake.facts(
        fact("same", "Juliet, india; HOTEL golf foxtrot echo delta charlie bravo alpha!"),
        fact("nine", " ".join(words[:9])),  # 0.9 against the stored row
        fact("eight", " ".join(words[:8])),  # exactly 0.8: kept
        fact("api", "The public API lives at api example com slash v2 behind the gateway"),
        fact("api again", "the public api lives at api.example.com/v2, behind the gateway"),
    )
    reply = extract(c)
    assert [m.key for m in reply.written] == ["auto:eight", "auto:api"]
    assert dropped(reply) == [
        ("auto:same", "DUPLICATE"),
        ("auto:nine", "DUPLICATE"),
        ("auto:api-again", "DUPLICATE"),
    ]
    assert sorted(m.key for m in listed(c)) == ["auto:api", "auto:eight", "manual-fact"]


def test_a_second_pass_does_not_recapture_what_the_first_wrote(
    c: Client, fake: FakeAnthropic
) -> None:
    enable(c)
    fake.facts(fact("deploy", "Deploy with make release from the repository root"))
    assert len(extract(c).written) == 1
    fake.facts(fact("how to deploy", "deploy: with MAKE RELEASE, from the repository root"))
    reply = extract(c, session_id="s2")
    assert reply.written == []
    assert dropped(reply) == [("auto:how-to-deploy", "DUPLICATE")]
    assert len(listed(c)) == 1


def test_dedup_compares_against_the_hundred_most_recent_rows(
    c: Client, fake: FakeAnthropic
) -> None:
    enable(c)
    values = [f"fact {i} uses token{i} alpha{i} beta{i} gamma{i}" for i in range(101)]
    for i, value in enumerate(values):
        upsert(c, f"k{i:03d}", value)
    fake.facts(
        fact("oldest", values[0]),  # the 101st most recent: beyond the window
        fact("hundredth", values[1]),  # the 100th most recent: compared
    )
    reply = extract(c)
    assert [m.key for m in reply.written] == ["auto:oldest"]
    assert dropped(reply) == [("auto:hundredth", "DUPLICATE")]


# -- scope rules --------------------------------------------------------------------------


def test_with_a_workspace_the_model_picks_each_facts_scope(c: Client, fake: FakeAnthropic) -> None:
    enable(c)
    fake.facts(
        fact("stack", "the project runs on PostgreSQL 16 and FastAPI", scope="workspace"),
        fact("style", "this agent prefers small focused commits", scope="agent"),
    )
    reply = extract(c, workspace_id="w")
    assert [(m.key, m.scope, m.workspace_id, m.agent_id) for m in reply.written] == [
        ("auto:stack", OUT.SCOPE_WORKSPACE, "w", ""),
        ("auto:style", OUT.SCOPE_AGENT, "", "a"),
    ]
    assert all(m.source == OUT.MEMORY_SOURCE_AUTO and m.read_only for m in reply.written)
    assert [m.key for m in listed(c, workspace_id="w")] == ["auto:stack"]
    assert [m.key for m in listed(c, agent_id="a")] == ["auto:style"]
    scopes = fake.requests[0]["tools"][0]["input_schema"]["properties"]["facts"]["items"]
    assert scopes["properties"]["scope"]["enum"] == ["agent", "workspace"]


def test_without_a_workspace_a_workspace_fact_is_written_for_the_agent(
    c: Client, fake: FakeAnthropic
) -> None:
    enable(c)
    fake.facts(fact("stack", "the project runs on PostgreSQL 16", scope="workspace"))
    reply = extract(c)
    assert [(m.key, m.scope, m.agent_id) for m in reply.written] == [
        ("auto:stack", OUT.SCOPE_AGENT, "a")
    ]
    assert [m.key for m in listed(c, agent_id="a")] == ["auto:stack"]


def test_agent_facts_need_agent_memory_but_workspace_facts_do_not(
    c: Client, fake: FakeAnthropic
) -> None:
    enable(c, enabled=False)
    fake.facts(
        fact("stack", "the project runs on PostgreSQL 16", scope="workspace"),
        fact("style", "this agent prefers small focused commits", scope="agent"),
    )
    reply = extract(c, workspace_id="w")
    assert reply.outcome == OUT.EXTRACTION_OUTCOME_COMPLETED
    assert [m.key for m in reply.written] == ["auto:stack"]
    assert [(d.key, d.reason, d.scope) for d in reply.dropped] == [
        ("auto:style", "MEMORY_DISABLED", OUT.SCOPE_AGENT)
    ]
    assert listed(c, agent_id="a") == []


def test_an_agent_forgotten_while_the_model_answers_takes_none_of_its_facts(
    c: Client, fake: FakeAnthropic
) -> None:
    enable(c)
    arrived, release = fake.facts_when_released(
        fact("home", "the user of this agent lives in Porto", scope="agent"),
        fact("stack", "the project runs on PostgreSQL 16", scope="workspace"),
    )
    replies: list[pb.ExtractMemoriesResponse] = []
    passing = threading.Thread(target=lambda: replies.append(extract(c, workspace_id="w")))
    passing.start()
    try:
        assert arrived.wait(60), "the pass never reached the model"
        c.call(c.memory.ForgetAgent, pb.ForgetAgentRequest(agent_id="a"))
    finally:
        release.set()
        passing.join(60)
    (reply,) = replies
    assert reply.outcome == OUT.EXTRACTION_OUTCOME_COMPLETED
    assert [m.key for m in reply.written] == ["auto:stack"]  # the workspace's is not forgotten
    assert [(d.key, d.reason) for d in reply.dropped] == [("auto:home", "MEMORY_DISABLED")]
    assert listed(c, agent_id="a") == []


def test_a_pass_whose_caller_leaves_runs_to_its_end_and_its_spend_is_recorded(
    c: Client, fake: FakeAnthropic
) -> None:
    """The model's answer is paid for whether or not the caller still waits for it (a
    deadline, a cancel): the pass records what it cost and keeps its facts."""
    enable(c)
    arrived, release = fake.facts_when_released(fact("editor", "Ana edits in helix"))
    request = pb.ExtractMemoriesRequest(agent_id="a", session_id="left", transcript=TRANSCRIPT)
    call = c.memory.ExtractMemories.future(request, metadata=c.metadata)
    try:
        assert arrived.wait(60), "the pass never reached the model"
        call.cancel()
        with pytest.raises(grpc.FutureCancelledError):
            call.result()
    finally:
        release.set()
    prefix = pb.GetUsageRequest(synthetic_session_id_prefix="memory-extract:left")
    assert wait_until(lambda: len(c.call(c.memory.GetUsage, prefix).records) == 1, timeout=60)
    (record,) = c.call(c.memory.GetUsage, prefix).records
    assert record.outcome == OUT.EXTRACTION_OUTCOME_COMPLETED
    assert record.input_tokens == 1200
    assert wait_until(lambda: [m.value for m in listed(c)] == ["Ana edits in helix"], timeout=60)


@pytest.mark.parametrize("configured", [False, True], ids=["never-configured", "disabled"])
def test_no_agent_memory_and_no_workspace_skips_without_a_model_call(
    c: Client, fake: FakeAnthropic, configured: bool
) -> None:
    if configured:
        enable(c, enabled=False)
    fake.facts(fact("k", "a fact that must never be written", scope="workspace"))
    reply = extract(c)
    assert reply.outcome == OUT.EXTRACTION_OUTCOME_SKIPPED_MEMORY_DISABLED
    assert reply.detail
    assert fake.requests == []
    assert fake.count_requests == []
    assert_nothing_written(c)


# -- slugs and upsert by key ----------------------------------------------------------------


def test_a_proposed_slug_is_normalised_and_a_second_pass_updates_in_place(
    c: Client, fake: FakeAnthropic
) -> None:
    enable(c)
    fake.facts(fact("Deploy Command!", "Deploy with make release", confidence=0.7))
    first = extract(c).written
    assert [m.key for m in first] == ["auto:deploy-command"]
    fake.facts(fact("  deploy__COMMAND ", "Ship it by running the pipeline named ship-prod"))
    second = extract(c, session_id="s2").written
    assert [m.key for m in second] == ["auto:deploy-command"]
    assert second[0].id == first[0].id
    assert second[0].value == "Ship it by running the pipeline named ship-prod"
    assert second[0].confidence == pytest.approx(0.9)
    rows = listed(c)
    assert [(m.id, m.value) for m in rows] == [(first[0].id, second[0].value)]


def test_long_slugs_are_cut_to_sixty_characters(c: Client, fake: FakeAnthropic) -> None:
    enable(c)
    fake.facts(
        fact("The very long proposed slug " * 5, "a fact with a very long slug"),
        fact("!!!", "a fact whose slug is all punctuation"),
    )
    reply = extract(c)
    assert len(reply.written) == 1
    key = reply.written[0].key
    assert key.startswith("auto:the-very-long-proposed-slug-")
    assert len(key) <= len("auto:") + 60
    assert key == "auto:" + ("the-very-long-proposed-slug-" * 5)[:60].strip("-")
    assert [(d.key, d.reason) for d in reply.dropped] == [("!!!", "INVALID_FACT")]


def test_a_key_held_by_a_manual_row_is_not_overwritten(
    c: Client, fake: FakeAnthropic, database_url: str
) -> None:
    enable(c)
    manual = manual_under_extraction_key(
        c, database_url, "auto:deploy-command", "Deploys go through the release train only"
    )
    fake.facts(
        fact("Deploy command", "Deploy with make release from the root"),
        fact("port", "The service listens on port 8080"),
    )
    reply = extract(c)
    assert [m.key for m in reply.written] == ["auto:port"]
    assert dropped(reply) == [("auto:deploy-command", "KEY_HELD")]
    held = c.call(c.memory.GetMemory, pb.GetMemoryRequest(id=manual.id)).memory
    assert held.value == manual.value
    assert held.source == OUT.MEMORY_SOURCE_MANUAL
    assert held.etag == manual.etag


def test_values_are_cut_to_two_thousand_characters(c: Client, fake: FakeAnthropic) -> None:
    enable(c)
    long_value = "The deployment runbook says " + "step by step " * 300
    assert len(long_value) > 2000
    fake.facts(fact("runbook", long_value))
    reply = extract(c)
    assert len(reply.written[0].value) == 2000
    assert reply.written[0].value == long_value[:2000]
    assert len(listed(c)[0].value) == 2000


def test_a_candidate_carrying_a_secret_is_dropped_and_never_echoed(
    c: Client, fake: FakeAnthropic
) -> None:
    enable(c)
    fake.facts(
        fact("anthropic key", f"the Anthropic API key is {ANTHROPIC_KEY}"),
        fact(f"key {ANTHROPIC_KEY}", "the key lives in the vault"),
        fact("where the key lives", "the Anthropic key lives in the vault at secret/anthropic"),
    )
    reply = extract(c)
    assert [m.key for m in reply.written] == ["auto:where-the-key-lives"]
    assert [(d.key, d.value, d.reason) for d in reply.dropped] == [
        ("auto:anthropic-key", "", "SECRET_IN_VALUE"),
        ("", "", "SECRET_IN_VALUE"),
    ]
    assert ANTHROPIC_KEY not in str(reply)
    assert ANTHROPIC_KEY.lower() not in str(reply)
    assert all(ANTHROPIC_KEY not in m.value for m in listed(c))


def test_every_dropped_candidate_comes_back_with_its_reason(
    database_url: str, fake: FakeAnthropic
) -> None:
    running = started(database_url, extraction_max_facts=7)
    try:
        with running.client() as client:
            enable(client, enabled=False)
            upsert(client, "stored", "alpha bravo charlie delta echo", workspace_id="w")
            manual_under_extraction_key(
                client, database_url, "auto:held", "a manual fact under an auto key", "w"
            )
            fake.facts(
                fact("kept", "the project builds with make", scope="workspace"),
                fact("agentish", "this agent likes tabs", scope="agent"),
                fact("shaky", "maybe the project uses bazel", 0.3, scope="workspace"),
                fact("secret", f"token {ANTHROPIC_KEY}", scope="workspace"),
                fact("dup", "Alpha, bravo, charlie, delta, echo.", scope="workspace"),
                fact("???", "a fact with no usable key", scope="workspace"),
                fact("held", "the project deploys on fridays", scope="workspace"),
                fact("eighth", "one fact too many", scope="workspace"),
                fact("ninth", "two facts too many", scope="workspace"),
            )
            reply = extract(client, workspace_id="w")
            assert reply.outcome == OUT.EXTRACTION_OUTCOME_COMPLETED
            assert [m.key for m in reply.written] == ["auto:kept"]
            assert sorted(dropped(reply)) == sorted(
                [
                    ("auto:agentish", "MEMORY_DISABLED"),
                    ("auto:shaky", "LOW_CONFIDENCE"),
                    ("auto:secret", "SECRET_IN_VALUE"),
                    ("auto:dup", "DUPLICATE"),
                    ("???", "INVALID_FACT"),
                    ("auto:held", "KEY_HELD"),
                    ("auto:eighth", "OVER_LIMIT"),
                    ("auto:ninth", "OVER_LIMIT"),
                ]
            )
            by_key = {d.key: d for d in reply.dropped}
            assert by_key["auto:shaky"].confidence == pytest.approx(0.3)
            assert by_key["auto:shaky"].value == "maybe the project uses bazel"
            assert by_key["auto:shaky"].scope == OUT.SCOPE_WORKSPACE
    finally:
        running.stop()


def test_a_reply_with_no_facts_is_no_facts(c: Client, fake: FakeAnthropic) -> None:
    enable(c)
    fake.facts()
    reply = extract(c)
    assert reply.outcome == OUT.EXTRACTION_OUTCOME_NO_FACTS
    assert list(reply.written) == []
    assert list(reply.dropped) == []
    assert reply.usage.input_tokens == 1200


# -- best effort ----------------------------------------------------------------------------


def script_failure(fake: FakeAnthropic, kind: str) -> None:
    if kind == "500":
        fake.error(500)
    elif kind == "429":
        fake.error(429, "rate_limit_error")
    elif kind == "400":
        fake.error(400, "invalid_request_error")
    elif kind == "garbage":
        fake.garbage()
    elif kind == "text-only":
        fake.text_only()
    elif kind == "refusal":
        fake.refusal()
    elif kind.startswith("tool-input-"):
        shapes: dict[str, Any] = {
            "tool-input-no-facts": {"memories": []},
            "tool-input-facts-not-a-list": {"facts": "deploy with make"},
            "tool-input-bad-confidence": {
                "facts": [{"key": "k", "value": "v", "confidence": "high", "scope": "agent"}]
            },
            "tool-input-bad-scope": {
                "facts": [{"key": "k", "value": "v", "confidence": 0.9, "scope": "team"}]
            },
        }
        fake.malformed_tool_input(shapes[kind])
    else:
        raise AssertionError(kind)


@pytest.mark.parametrize(
    ("kind", "outcomes"),
    [
        ("500", {OUT.EXTRACTION_OUTCOME_MODEL_ERROR}),
        ("429", {OUT.EXTRACTION_OUTCOME_MODEL_ERROR}),
        ("400", {OUT.EXTRACTION_OUTCOME_MODEL_ERROR}),
        ("garbage", {OUT.EXTRACTION_OUTCOME_MODEL_ERROR, OUT.EXTRACTION_OUTCOME_MALFORMED_REPLY}),
        ("text-only", {OUT.EXTRACTION_OUTCOME_MALFORMED_REPLY}),
        ("refusal", {OUT.EXTRACTION_OUTCOME_REFUSED}),
        ("tool-input-no-facts", {OUT.EXTRACTION_OUTCOME_MALFORMED_REPLY}),
        ("tool-input-facts-not-a-list", {OUT.EXTRACTION_OUTCOME_MALFORMED_REPLY}),
        ("tool-input-bad-confidence", {OUT.EXTRACTION_OUTCOME_MALFORMED_REPLY}),
        ("tool-input-bad-scope", {OUT.EXTRACTION_OUTCOME_MALFORMED_REPLY}),
    ],
)
def test_a_failed_model_call_is_an_ok_reply_that_writes_nothing(
    c: Client, fake: FakeAnthropic, kind: str, outcomes: set[int]
) -> None:
    enable(c)
    script_failure(fake, kind)
    fake.facts(fact("k", "a fact only a second call would see"))
    reply = extract(c, workspace_id="w")  # an RPC error would raise here
    assert reply.outcome in outcomes, reply
    assert list(reply.written) == []
    assert list(reply.dropped) == []
    assert reply.detail
    assert len(fake.requests) == 1  # no retry within the pass
    assert_nothing_written(c, workspace_id="w")
    usage = c.call(c.memory.GetUsage, pb.GetUsageRequest())
    assert [r.outcome for r in usage.records] == [reply.outcome]


def test_a_slow_model_is_a_timeout_that_writes_nothing(
    database_url: str, fake: FakeAnthropic
) -> None:
    running = started(database_url, extraction_timeout_seconds=0.5)
    try:
        with running.client() as client:
            enable(client)
            fake.slow(3)
            reply = extract(client)
            assert reply.outcome == OUT.EXTRACTION_OUTCOME_TIMEOUT
            assert reply.written == []
            assert reply.detail
            assert_nothing_written(client)
    finally:
        running.stop()


def test_without_credentials_the_pass_is_a_model_error_not_a_failure(
    database_url: str, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    running = started(database_url)
    try:
        with running.client() as client:
            enable(client)
            reply = extract(client)
            assert reply.outcome == OUT.EXTRACTION_OUTCOME_MODEL_ERROR
            assert "ANTHROPIC_API_KEY" in reply.detail
            assert fake.requests == []
            assert_nothing_written(client)
    finally:
        running.stop()


# -- all or nothing -----------------------------------------------------------------------


class FailingInsert:
    """A trigger that makes one INSERT into memories fail inside PostgreSQL, for one tenant."""

    def __init__(self, database_url: str, tenant_id: str, key: str) -> None:
        self.url = database_url
        self.name = f"fail_insert_{uuid.uuid4().hex[:10]}"
        self.tenant_id = tenant_id
        self.key = key

    def __enter__(self) -> FailingInsert:
        fn = sql.Identifier(self.name)
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(
                sql.SQL(
                    "CREATE FUNCTION {}() RETURNS trigger LANGUAGE plpgsql AS $$ "
                    "BEGIN RAISE EXCEPTION 'refused by the test trigger'; END $$"
                ).format(fn)
            )
            conn.execute(
                sql.SQL(
                    "CREATE TRIGGER {} BEFORE INSERT ON memories FOR EACH ROW "
                    "WHEN (NEW.tenant_id = {} AND NEW.key = {}) EXECUTE FUNCTION {}()"
                ).format(fn, sql.Literal(self.tenant_id), sql.Literal(self.key), fn)
            )
        return self

    def __exit__(self, *exc: object) -> None:
        fn = sql.Identifier(self.name)
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP TRIGGER IF EXISTS {} ON memories").format(fn))
            conn.execute(sql.SQL("DROP FUNCTION IF EXISTS {}()").format(fn))


def test_when_one_write_fails_no_fact_of_the_batch_is_kept(
    c: Client, fake: FakeAnthropic, database_url: str
) -> None:
    enable(c)
    existing = upsert(c, "manual", "the staging cluster is called blue")
    with FailingInsert(database_url, c.tenant_id, "auto:boom"):
        fake.facts(
            fact("first", "the service listens on port 8080"),
            fact("boom", "the deploy pipeline is called ship"),
            fact("third", "logs go to the central loki instance"),
        )
        with pytest.raises(grpc.RpcError) as failed:
            extract(c)
    # The failure surfaces as INTERNAL: an unexpected database error, not a model outcome.
    assert failed.value.code() == grpc.StatusCode.INTERNAL
    assert "refused by the test trigger" not in (failed.value.details() or "")
    assert [(m.key, m.value) for m in listed(c)] == [("manual", existing.value)]
    # With the trigger gone the same batch is written whole.
    fake.facts(
        fact("first", "the service listens on port 8080"),
        fact("boom", "the deploy pipeline is called ship"),
        fact("third", "logs go to the central loki instance"),
    )
    reply = extract(c)
    assert [m.key for m in reply.written] == ["auto:first", "auto:boom", "auto:third"]


def test_a_failed_write_still_records_what_the_model_call_cost(
    c: Client, fake: FakeAnthropic, database_url: str
) -> None:
    enable(c)
    with FailingInsert(database_url, c.tenant_id, "auto:boom"):
        fake.facts(fact("boom", "the deploy pipeline is called ship"))
        with pytest.raises(grpc.RpcError):
            extract(c, session_id="costly")
    usage = c.call(
        c.memory.GetUsage, pb.GetUsageRequest(synthetic_session_id_prefix="memory-extract:")
    )
    assert usage.total_input_tokens == 1200


def test_no_transaction_is_held_open_during_the_model_call(
    database_url: str, fake: FakeAnthropic
) -> None:
    stale = (
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
        "AND application_name = 'agent-memory' AND state LIKE 'idle in transaction%%' "
        "AND now() - xact_start > interval '300 milliseconds'"
    )
    running = started(database_url, extraction_timeout_seconds=10)
    try:
        with running.client() as client, psycopg.connect(database_url, autocommit=True) as db:
            # The probe does see such a session: hold one open ourselves first.
            with psycopg.connect(database_url, application_name="agent-memory") as holder:
                holder.execute("SELECT 1")
                time.sleep(0.4)
                pids = [r[0] for r in db.execute(stale).fetchall()]
                assert holder.info.backend_pid in pids
                holder.rollback()
            enable(client)
            upsert(client, "manual", "the staging cluster is called blue")
            fake.slow(5)
            call = client.memory.ExtractMemories.future(
                pb.ExtractMemoriesRequest(agent_id="a", session_id="s1", transcript=TRANSCRIPT),
                metadata=client.metadata,
                timeout=30,
            )
            deadline = time.monotonic() + 10
            while not fake.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            assert fake.requests, "the model call never started"
            time.sleep(0.5)  # a transaction opened before the call would be old enough now
            held = db.execute(stale).fetchall()
            # Only a probe made while the model call still runs proves anything.
            assert not call.done(), "the model call ended before the probe"
            assert held == []
            # The scripted slow reply carries no tool call.
            assert call.result().outcome == OUT.EXTRACTION_OUTCOME_MALFORMED_REPLY
    finally:
        running.stop()


# -- usage and synthetic ids ----------------------------------------------------------------


def ts(at: Timestamp) -> Timestamp:
    copy = Timestamp()
    copy.CopyFrom(at)
    return copy


def test_usage_is_recorded_under_synthetic_ids_and_filtered_by_prefix_and_time(
    c: Client, other_client: Client, fake: FakeAnthropic
) -> None:
    enable(c)
    chain_id = "f3a9c2e1-77b0-4d6e-9a51-0c2d4e6f8a10"
    fake.facts(input_tokens=1000, output_tokens=100)
    fake.facts(input_tokens=2000, output_tokens=200)
    fake.facts(input_tokens=4000, output_tokens=400)
    assert extract(c, session_id="s1").synthetic_session_id == "memory-extract:s1"
    assert extract(c, session_id="s2").synthetic_session_id == "memory-extract:s2"
    chain = extract(c, chain_id=chain_id)
    assert chain.synthetic_session_id == "memory-extract:chain:f3a9c2e1"

    def usage(prefix: str, **times: Timestamp) -> pb.GetUsageResponse:
        return c.call(
            c.memory.GetUsage, pb.GetUsageRequest(synthetic_session_id_prefix=prefix, **times)
        )

    every = usage("memory-extract:")
    assert [r.synthetic_session_id for r in every.records] == [
        "memory-extract:s1",
        "memory-extract:s2",
        "memory-extract:chain:f3a9c2e1",
    ]
    assert every.total_input_tokens == 7000
    assert every.total_output_tokens == 700
    assert every.total_cost_usd == pytest.approx(7000 * 1e-6 + 700 * 5e-6)
    first = every.records[0]
    assert (first.model, first.agent_id, first.outcome) == (
        MODEL,
        "a",
        OUT.EXTRACTION_OUTCOME_NO_FACTS,
    )
    assert (first.input_tokens, first.output_tokens) == (1000, 100)
    assert first.cost_usd == pytest.approx(1000 * 1e-6 + 100 * 5e-6)

    one = usage("memory-extract:s1")
    assert [r.synthetic_session_id for r in one.records] == ["memory-extract:s1"]
    assert one.total_input_tokens == 1000
    chains = usage("memory-extract:chain:")
    assert [r.synthetic_session_id for r in chains.records] == ["memory-extract:chain:f3a9c2e1"]
    assert chains.total_output_tokens == 400
    assert usage(f"memory-extract:chain:{chain_id[:8]}").total_input_tokens == 4000
    assert usage("memory-extract:chain:0000").records == []
    assert usage("").total_input_tokens == 7000

    middle = every.records[1].recorded_at
    after = usage("memory-extract:", start_time=ts(middle))
    assert [r.synthetic_session_id for r in after.records] == [
        "memory-extract:s2",
        "memory-extract:chain:f3a9c2e1",
    ]
    assert after.total_input_tokens == 6000
    before = usage("memory-extract:", end_time=ts(middle))
    assert [r.synthetic_session_id for r in before.records] == ["memory-extract:s1"]
    assert before.total_input_tokens == 1000
    window = usage(
        "memory-extract:", start_time=ts(middle), end_time=ts(every.records[2].recorded_at)
    )
    assert [r.synthetic_session_id for r in window.records] == ["memory-extract:s2"]
    later = Timestamp()
    later.FromDatetime(every.records[2].recorded_at.ToDatetime() + timedelta(hours=1))
    assert usage("memory-extract:", start_time=later).records == []

    # Another tenant sees none of it.
    theirs = other_client.call(
        other_client.memory.GetUsage,
        pb.GetUsageRequest(synthetic_session_id_prefix="memory-extract:"),
    )
    assert list(theirs.records) == []
    assert theirs.total_input_tokens == 0
    assert theirs.total_cost_usd == 0


def test_a_reversed_time_range_is_invalid(c: Client) -> None:
    start, end = Timestamp(seconds=2_000_000_000), Timestamp(seconds=1_000_000_000)
    with pytest.raises(grpc.RpcError) as failed:
        c.call(c.memory.GetUsage, pb.GetUsageRequest(start_time=start, end_time=end))
    assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "end_time" in error_details(failed.value).violations


@pytest.mark.parametrize(
    ("run", "synthetic"),
    [
        ({"session_id": "run-42"}, "memory-extract:run-42"),
        ({"chain_id": "abcdefghijklmnop"}, "memory-extract:chain:abcdefgh"),
        ({"chain_id": "abc"}, "memory-extract:chain:abc"),
    ],
)
def test_synthetic_session_ids(c: Client, run: dict[str, str], synthetic: str) -> None:
    # A skipped pass still names the id its cost would be recorded under.
    reply = extract(c, transcript="too short", **run)
    assert reply.outcome == OUT.EXTRACTION_OUTCOME_SKIPPED_TOO_SHORT
    assert reply.synthetic_session_id == synthetic


def test_a_run_needs_a_session_or_a_chain_id(c: Client, fake: FakeAnthropic) -> None:
    with pytest.raises(grpc.RpcError) as failed:
        c.call(
            c.memory.ExtractMemories,
            pb.ExtractMemoriesRequest(agent_id="a", transcript=TRANSCRIPT),
        )
    assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "session_id" in error_details(failed.value).violations
    with pytest.raises(grpc.RpcError) as failed:
        extract(c, agent_id="")
    assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert fake.requests == []


def test_extraction_needs_credentials(srv: ServerThread) -> None:
    from agentmemory.v1 import memory_service_pb2_grpc

    with srv.anonymous_channel() as channel:
        stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
        with pytest.raises(grpc.RpcError) as failed:
            stub.ExtractMemories(
                pb.ExtractMemoriesRequest(agent_id="a", session_id="s", transcript=TRANSCRIPT),
                timeout=10,
            )
    assert failed.value.code() == grpc.StatusCode.UNAUTHENTICATED
