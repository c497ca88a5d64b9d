"""Evidence that reads back, over real gRPC and PostgreSQL: the conversation snapshots
Memorize keeps (messages and raw provider events), groundings held to what those
snapshots have, and queued extraction passes read back from QUEUED to DONE with what
they wrote, dropped and cost."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import psycopg
import pytest

from agent_memory.config import Settings
from agent_memory.store import migrate
from agent_memory_client import InvalidArgument, MemoryClient, NotFound
from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.e2e.test_forget import holding
from tests.fake_anthropic import FakeAnthropic, fact, model_on_loopback
from tests.support import Client, ErrorDetails, ServerThread, error_details, wait_until

pytestmark = pytest.mark.e2e

AGENT = memory_pb2.MemoryOwner(agent_id="agent-evidence")
EVENTS = [
    '{"type":"message_start","message":{"id":"msg_1","role":"assistant"}}',
    '{"type":"content_block_delta","delta":{"type":"text_delta","text":"Deploy from main"}}',
    '{"type":"message_stop"}',
]
MESSAGES = [
    memory_pb2.ConversationMessage(role="user", content="where do we deploy from?"),
    memory_pb2.ConversationMessage(role="assistant", content="Deploy from main"),
]


def snapshot(
    conversation_id: str = "conv-e",
    messages: list[memory_pb2.ConversationMessage] | None = None,
    raw_events: list[str] | None = None,
    provider: str = "anthropic",
) -> memory_pb2.Conversation:
    return memory_pb2.Conversation(
        provider=provider,
        conversation_id=conversation_id,
        messages=MESSAGES if messages is None else messages,
        raw_events=EVENTS if raw_events is None else raw_events,
    )


def memorize(
    c: Client, content: str = "deploys go out from main", **kw: Any
) -> pb.MemorizeResponse:
    kw.setdefault("owner", AGENT)
    response: pb.MemorizeResponse = c.call(
        c.memory.Memorize, pb.MemorizeRequest(content=content, **kw)
    )
    return response


def get_conversation(
    c: Client, conversation_id: str = "conv-e", provider: str = "anthropic"
) -> memory_pb2.Conversation:
    request = pb.GetConversationRequest(provider=provider, conversation_id=conversation_id)
    conversation: memory_pb2.Conversation = c.call(c.memory.GetConversation, request).conversation
    return conversation


def list_page(c: Client, **kw: Any) -> pb.ListConversationsResponse:
    response: pb.ListConversationsResponse = c.call(
        c.memory.ListConversations, pb.ListConversationsRequest(**kw)
    )
    return response


def failure(call: Callable[[], object]) -> ErrorDetails:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return error_details(info.value)


def memories(c: Client) -> list[memory_pb2.Memory]:
    response = c.call(c.memory.ListMemories, pb.ListMemoriesRequest(owner=AGENT))
    return list(response.memories)


# --- conversations -------------------------------------------------------------------------


def test_a_memorized_snapshot_reads_back_with_its_raw_events(client: Client) -> None:
    grounded = memory_pb2.Grounding(
        message_position=1,
        end_character=16,
        quote="Deploy from main",
        raw_event_index=1,
        raw_start_character=67,
        raw_end_character=83,
    )
    memorize(client, groundings=[grounded], conversation=snapshot())
    first = get_conversation(client)
    assert (first.provider, first.conversation_id) == ("anthropic", "conv-e")
    assert list(first.messages) == MESSAGES
    assert list(first.raw_events) == EVENTS
    assert (first.message_count, first.raw_event_count) == (2, 3)
    assert first.created_at == first.updated_at
    assert EVENTS[1][67:83] == "Deploy from main"

    grown = snapshot(raw_events=[*EVENTS, '{"type":"ping"}'])
    memorize(client, "a second fact from the same talk", conversation=grown)
    second = get_conversation(client)
    assert list(second.raw_events) == list(grown.raw_events)
    assert second.raw_event_count == 4
    assert second.created_at == first.created_at
    assert second.updated_at.ToDatetime() > first.updated_at.ToDatetime()


def test_an_empty_provider_reads_back_as_memorize_filed_it(client: Client) -> None:
    memorize(client, conversation=snapshot("conv-np", provider=""))
    assert get_conversation(client, "conv-np", provider="").provider == "unknown"
    assert get_conversation(client, "conv-np", provider="unknown").conversation_id == "conv-np"


def test_listing_pages_newest_first_with_counts_and_the_full_view_on_request(
    client: Client,
) -> None:
    for n in range(5):
        messages = MESSAGES[: n % 2 + 1]
        memorize(
            client,
            f"fact {n}",
            conversation=snapshot(f"conv-{n}", messages=messages, raw_events=EVENTS[:n]),
        )
    # A snapshot that changes (one raw event more) takes the listing's first place.
    memorize(client, "fact 1 again", conversation=snapshot("conv-1", raw_events=EVENTS[:2]))
    seen: list[memory_pb2.Conversation] = []
    token = ""
    while True:
        page = list_page(client, page_size=2, page_token=token)
        assert len(page.conversations) <= 2
        seen.extend(page.conversations)
        token = page.next_page_token
        if not token:
            break
    # Most recently updated first: conv-1 was replaced last.
    assert [c.conversation_id for c in seen] == ["conv-1", "conv-4", "conv-3", "conv-2", "conv-0"]
    times = [c.updated_at.ToDatetime() for c in seen]
    assert times == sorted(times, reverse=True)
    # BASIC, the default: counts and times, no messages and no raw events.
    assert all(not c.messages and not c.raw_events for c in seen)
    assert [(c.message_count, c.raw_event_count) for c in seen] == [
        (2, 2),
        (1, 3),
        (2, 3),
        (1, 2),
        (1, 0),
    ]
    assert all(c.HasField("created_at") and c.HasField("updated_at") for c in seen)
    full = list_page(client, view=memory_pb2.CONVERSATION_VIEW_FULL).conversations
    assert [c.conversation_id for c in full] == [c.conversation_id for c in seen]
    assert list(full[1].raw_events) == EVENTS
    assert list(full[0].messages) == MESSAGES
    assert full[1] == get_conversation(client, "conv-4")
    basic = list_page(client, view=memory_pb2.CONVERSATION_VIEW_BASIC)
    assert list(basic.conversations) == seen


def test_the_full_view_holds_few_snapshots_a_page(client: Client) -> None:
    for n in range(12):
        memorize(client, f"fact {n}", conversation=snapshot(f"conv-page-{n}"))
    full = memory_pb2.CONVERSATION_VIEW_FULL
    assert len(list_page(client, view=full).conversations) == 5
    capped = list_page(client, view=full, page_size=1000)
    assert len(capped.conversations) == 10
    assert capped.next_page_token
    assert len(list_page(client, page_size=1000).conversations) == 12


def test_a_snapshot_too_large_to_read_back_is_refused(client: Client) -> None:
    big = ["x" * 100_000] * 16  # each event within its limit, 1.6 MB together
    details = failure(lambda: memorize(client, conversation=snapshot("conv-big", raw_events=big)))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.violations["conversation"].startswith(
        "message contents and raw events must be at most 1500000 bytes"
    )
    assert failure(lambda: get_conversation(client, "conv-big")).code is grpc.StatusCode.NOT_FOUND


def test_a_conversation_with_only_its_id_names_the_stored_snapshot(client: Client) -> None:
    memorize(client, "first", conversation=snapshot("conv-ref"))
    stored = get_conversation(client, "conv-ref")
    named = memorize(
        client,
        "second, grounded in the stored snapshot",
        conversation=memory_pb2.Conversation(provider="anthropic", conversation_id="conv-ref"),
        groundings=[memory_pb2.Grounding(message_position=1, end_character=16)],
    )
    assert named.created
    # Nothing of the snapshot changed, its place in the listing included.
    assert get_conversation(client, "conv-ref") == stored
    # Naming a snapshot that is not stored holds nothing to point into.
    details = failure(
        lambda: memorize(
            client,
            "third",
            conversation=memory_pb2.Conversation(provider="anthropic", conversation_id="nope"),
            groundings=[memory_pb2.Grounding(message_position=0)],
        )
    )
    assert "groundings[0].message_position" in details.violations


def test_the_same_snapshot_again_changes_nothing(client: Client) -> None:
    memorize(client, "a fact", conversation=snapshot("conv-same"))
    before = get_conversation(client, "conv-same")
    memorize(client, "another fact", conversation=snapshot("conv-same"))
    assert get_conversation(client, "conv-same").updated_at == before.updated_at
    memorize(client, "a third", conversation=snapshot("conv-same", raw_events=EVENTS[:1]))
    assert get_conversation(client, "conv-same").updated_at != before.updated_at


def test_bad_page_tokens_and_views_are_invalid_arguments(client: Client) -> None:
    for n in range(3):
        memorize(client, f"fact {n}", conversation=snapshot(f"conv-{n}"))
    basic_token = list_page(client, page_size=1).next_page_token
    assert basic_token
    cases = [
        pb.ListConversationsRequest(page_token="not-a-token"),
        # A token belongs to its view.
        pb.ListConversationsRequest(page_token=basic_token, view=memory_pb2.CONVERSATION_VIEW_FULL),
        pb.ListConversationsRequest(page_size=-1),
        pb.ListConversationsRequest(view=42),  # type: ignore[arg-type]
    ]
    for request in cases:
        details = failure(lambda r=request: client.call(client.memory.ListConversations, r))
        assert details.code is grpc.StatusCode.INVALID_ARGUMENT, request
        assert set(details.violations) <= {"page_token", "page_size", "view"}
        assert details.violations


def test_unknown_snapshots_and_another_tenants_are_not_found(
    client: Client, other_client: Client
) -> None:
    memorize(client, conversation=snapshot("conv-mine"))
    for caller, conversation_id in ((client, "conv-none"), (other_client, "conv-mine")):
        details = failure(lambda c=caller, i=conversation_id: get_conversation(c, i))
        assert details.code is grpc.StatusCode.NOT_FOUND
        assert details.reason == "CONVERSATION_NOT_FOUND"
    assert list(list_page(other_client).conversations) == []
    details = failure(lambda: get_conversation(client, ""))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"conversation_id"}


# --- groundings held to the snapshot --------------------------------------------------------


@pytest.mark.parametrize(
    ("grounding", "field"),
    [
        (memory_pb2.Grounding(message_position=2), "message_position"),
        (memory_pb2.Grounding(message_position=1, end_character=17), "end_character"),
        (memory_pb2.Grounding(raw_event_index=3), "raw_event_index"),
        (
            memory_pb2.Grounding(raw_event_index=2, raw_start_character=0, raw_end_character=99),
            "raw_end_character",
        ),
    ],
    ids=["message", "span", "raw-event", "raw-span"],
)
def test_a_grounding_past_the_end_is_refused_with_its_field_and_nothing_written(
    client: Client, grounding: memory_pb2.Grounding, field: str
) -> None:
    good = memory_pb2.Grounding(message_position=0, end_character=5, quote="where")
    request = {"groundings": [good, grounding], "conversation": snapshot()}
    details = failure(lambda: memorize(client, **request))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert list(details.violations) == [f"groundings[1].{field}"]
    assert "past the end" in details.violations[f"groundings[1].{field}"]
    assert memories(client) == []
    assert failure(lambda: get_conversation(client)).code is grpc.StatusCode.NOT_FOUND

    # Against a stored snapshot too, and it stays as it was.
    memorize(client, "first", conversation=snapshot())
    before = get_conversation(client)
    details = failure(lambda: memorize(client, "second", **request))
    assert list(details.violations) == [f"groundings[1].{field}"]
    assert get_conversation(client) == before
    assert [m.value for m in memories(client)] == ["first"]


def test_a_grounding_may_point_into_what_the_merge_keeps(client: Client) -> None:
    held = memory_pb2.Grounding(raw_event_index=2)
    memorize(client, "held", groundings=[held], conversation=snapshot())
    # A shorter snapshot keeps the raw events up to the grounded one: a grounding into
    # them holds, though this request does not carry them.
    shorter = snapshot(messages=MESSAGES[:1], raw_events=EVENTS[:1])
    memorize(
        client, "kept", groundings=[memory_pb2.Grounding(raw_event_index=1)], conversation=shorter
    )
    stored = get_conversation(client)
    assert list(stored.raw_events) == EVENTS
    assert list(stored.messages) == MESSAGES[:1]
    details = failure(
        lambda: memorize(
            client,
            "lost",
            groundings=[memory_pb2.Grounding(message_position=1)],
            conversation=shorter,
        )
    )
    assert list(details.violations) == ["groundings[0].message_position"]


def test_a_snapshot_never_changes_a_grounded_raw_event(client: Client) -> None:
    memorize(
        client,
        "held",
        groundings=[memory_pb2.Grounding(raw_event_index=1)],
        conversation=snapshot(),
    )
    changed = snapshot(raw_events=[EVENTS[0], '{"type":"other"}'])
    details = failure(lambda: memorize(client, "changes it", conversation=changed))
    assert details.code is grpc.StatusCode.FAILED_PRECONDITION
    assert details.reason == "GROUNDED_RAW_EVENT_CHANGED"
    assert details.metadata["raw_event_index"] == "1"
    assert list(get_conversation(client).raw_events) == EVENTS


def test_groundings_need_a_conversation(client: Client) -> None:
    details = failure(
        lambda: memorize(client, groundings=[memory_pb2.Grounding(message_position=0)])
    )
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert list(details.violations) == ["conversation"]
    assert memories(client) == []


def test_raw_events_have_limits(client: Client) -> None:
    for raw_events, field in (
        (["x" * 100_001], "conversation.raw_events[0]"),
        (["{}"] * 10_001, "conversation.raw_events"),
        (["ok", "a\x00b"], "conversation.raw_events[1]"),
    ):
        details = failure(
            lambda r=raw_events: memorize(client, conversation=snapshot(raw_events=r))
        )
        assert details.code is grpc.StatusCode.INVALID_ARGUMENT
        assert list(details.violations) == [field]
    assert memories(client) == []


def test_a_secret_in_a_raw_event_is_refused_and_stored_nowhere(
    client: Client, database_url: str
) -> None:
    secret = "ghp_" + uuid.uuid4().hex + uuid.uuid4().hex[:4]
    leaky = [EVENTS[0], f'{{"type":"tool_result","content":"GITHUB_TOKEN={secret}"}}']
    details = failure(lambda: memorize(client, conversation=snapshot(raw_events=leaky)))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.reason == "SECRET_IN_VALUE"
    assert list(details.violations) == ["conversation.raw_events[1]"]
    assert secret not in details.message
    assert holding(database_url, secret[4:]) == {}
    assert memories(client) == []


def test_the_typed_client_reads_evidence_back(server: ServerThread) -> None:
    tenant = f"tenant-{uuid.uuid4().hex[:10]}"
    with MemoryClient(server.address, api_key=server.new_key(tenant, "user-1")) as memory:
        memory.memorize(
            "deploys go out from main",
            agent_id="agent-evidence",
            conversation=snapshot("conv-client"),
            groundings=[memory_pb2.Grounding(raw_event_index=1)],
        )
        read = memory.get_conversation("conv-client", provider="anthropic")
        assert list(read.raw_events) == EVENTS
        listed = list(memory.list_conversations(page_size=1))
        assert [(c.conversation_id, c.raw_event_count, len(c.raw_events)) for c in listed] == [
            ("conv-client", 3, 0)
        ]
        assert [c.raw_events for c in memory.list_conversations(view="full")] == [read.raw_events]
        with pytest.raises(NotFound):
            memory.get_conversation("conv-none")
        with pytest.raises(InvalidArgument):
            memory.get_extraction_job("not-a-job")
        with pytest.raises(NotFound):
            memory.get_extraction_job(str(uuid.uuid4()))


# --- extraction jobs -------------------------------------------------------------------------

TRANSCRIPT = (
    "user: how do we deploy this service?\n"
    "assistant: We deploy with `make release` from the repository root; it builds the "
    "image, runs the migrations and rolls the pods one by one. Staging is called blue.\n"
) * 2


@pytest.fixture(scope="module")
def jobs_db(create_database: Callable[[str], str]) -> str:
    """A database of this module's own: its queued jobs are run only by servers here."""
    url = create_database("am_evidence_jobs")
    migrate.upgrade(url)
    return url


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with model_on_loopback() as f:
        yield f


def job_server(database_url: str, **settings: Any) -> ServerThread:
    settings.setdefault("extraction_sdk_retries", 0)
    settings.setdefault("extraction_poll_seconds", 0.1)
    settings.setdefault("extraction_settle_seconds", 0)
    return ServerThread(database_url, settings=Settings(**settings))


def get_job(c: Client, job_id: str) -> memory_pb2.ExtractionJob:
    job: memory_pb2.ExtractionJob = c.call(
        c.memory.GetExtractionJob, pb.GetExtractionJobRequest(job_id=job_id)
    ).job
    return job


def test_a_queued_job_reads_back_queued_then_done_with_what_it_did(
    jobs_db: str, fake: FakeAnthropic
) -> None:
    mark = f"zqj{uuid.uuid4().hex[:12]}"
    fake.facts(
        fact("deploy command", "deploy with make release from the repository root"),
        fact("staging name", f"staging is called blue {mark}", confidence=0.3),
        {
            **fact("staging cluster name", "The staging cluster is called blue."),
            "action": "supersede",
            "target": "m1",
        },
    )
    tenant = f"tenant-{uuid.uuid4().hex[:10]}"
    intake = job_server(jobs_db, extraction_workers=0)
    with intake, intake.client(tenant) as c, intake.client() as stranger:
        c.call(
            c.memory.UpdateAgentSettings,
            pb.UpdateAgentSettingsRequest(
                settings=memory_pb2.AgentSettings(agent_id="agent-j", memory_enabled=True)
            ),
        )
        green = c.call(
            c.memory.UpsertMemory,
            pb.UpsertMemoryRequest(
                owner=memory_pb2.MemoryOwner(agent_id="agent-j"),
                key="auto:staging-colour",
                value="The staging cluster is called green.",
                source=memory_pb2.MEMORY_SOURCE_AUTO,
            ),
        ).memory
        queued = c.call(
            c.memory.ExtractMemories,
            pb.ExtractMemoriesRequest(
                agent_id="agent-j",
                workspace_id="ws-j",
                session_id="run-j",
                transcript=TRANSCRIPT,
                queued=True,
            ),
        )
        waiting = get_job(c, queued.job_id)
        assert waiting.id == queued.job_id
        assert waiting.state == memory_pb2.EXTRACTION_JOB_STATE_QUEUED
        assert waiting.outcome == memory_pb2.EXTRACTION_OUTCOME_UNSPECIFIED
        assert (waiting.attempts, waiting.agent_id, waiting.workspace_id) == (0, "agent-j", "ws-j")
        assert waiting.synthetic_session_id == "memory-extract:run-j"
        assert not waiting.HasField("usage")
        assert not waiting.written_memory_ids
        assert not waiting.dropped
        assert waiting.HasField("created_at")
        assert waiting.HasField("run_after")
        # Another tenant, whatever id it sends, finds nothing.
        details = failure(lambda: get_job(stranger, queued.job_id))
        assert details.code is grpc.StatusCode.NOT_FOUND
        assert details.reason == "EXTRACTION_JOB_NOT_FOUND"
        assert failure(lambda: get_job(c, "nope")).code is grpc.StatusCode.INVALID_ARGUMENT

    runner = job_server(jobs_db)
    with runner, runner.client(tenant) as c:
        assert wait_until(
            lambda: get_job(c, queued.job_id).state == memory_pb2.EXTRACTION_JOB_STATE_DONE
        )
        done = get_job(c, queued.job_id)
        assert done.outcome == memory_pb2.EXTRACTION_OUTCOME_COMPLETED
        assert done.attempts == 1
        assert done.updated_at.ToDatetime() > waiting.updated_at.ToDatetime()
        written = c.call(
            c.memory.ListMemories,
            pb.ListMemoriesRequest(owner=memory_pb2.MemoryOwner(agent_id="agent-j")),
        ).memories
        assert [m.key for m in written] == ["auto:deploy-command", "auto:staging-cluster-name"]
        assert list(done.written_memory_ids) == [m.id for m in written]
        assert list(done.superseded_memory_ids) == [green.id]
        assert [(d.key, d.value, d.reason) for d in done.dropped] == [
            ("auto:staging-name", f"staging is called blue {mark}", "LOW_CONFIDENCE")
        ]
        assert (done.usage.input_tokens, done.usage.output_tokens) == (1200, 150)
        assert done.usage.cost_usd > 0

        # The job's result is text of the agent's: forgetting the agent leaves none.
        assert "extraction_jobs.result" in holding(jobs_db, mark)
        removed = c.call(c.memory.ForgetAgent, pb.ForgetAgentRequest(agent_id="agent-j")).removed
        assert removed.extraction_jobs == 1
        assert holding(jobs_db, mark) == {}
        assert failure(lambda: get_job(c, queued.job_id)).code is grpc.StatusCode.NOT_FOUND


def test_a_job_never_keeps_a_dropped_secret(jobs_db: str, fake: FakeAnthropic) -> None:
    secret = "ghp_" + uuid.uuid4().hex + uuid.uuid4().hex[:4]
    fake.facts(fact("registry token", f"the registry token is {secret}"))
    runner = job_server(jobs_db)
    with runner, runner.client() as c:
        c.call(
            c.memory.UpdateAgentSettings,
            pb.UpdateAgentSettingsRequest(
                settings=memory_pb2.AgentSettings(agent_id="agent-s", memory_enabled=True)
            ),
        )
        queued = c.call(
            c.memory.ExtractMemories,
            pb.ExtractMemoriesRequest(
                agent_id="agent-s", session_id="run-s", transcript=TRANSCRIPT, queued=True
            ),
        )
        assert wait_until(
            lambda: get_job(c, queued.job_id).state == memory_pb2.EXTRACTION_JOB_STATE_DONE
        )
        done = get_job(c, queued.job_id)
        assert [(d.value, d.reason) for d in done.dropped] == [("", "SECRET_IN_VALUE")]
        assert secret not in str(done)
        with psycopg.connect(jobs_db) as conn:
            row = conn.execute(
                "SELECT result::text FROM extraction_jobs WHERE id = %s", (queued.job_id,)
            ).fetchone()
        assert row is not None
        assert secret[4:] not in row[0]
