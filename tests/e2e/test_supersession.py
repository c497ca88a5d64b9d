"""Facts that change: extraction and Memorize supersede what a new fact replaces.

Over real gRPC and the real PostgreSQL, with the real SDK talking to a scripted model on
loopback. A superseded memory leaves listings, rendering and recall, and stays readable
by id and in the audit trail.
"""

from __future__ import annotations

import uuid
from typing import Any

import grpc
import pytest

from agentmemory.v1 import memory_pb2, recall_pb2, recall_service_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.fake_anthropic import FakeAnthropic, fact
from tests.support import Client, error_details

PARIS_RUN = (
    "user: I just signed the lease on a flat in Paris, so that is home now.\n"
    "assistant: Noted: you live in Paris. I will use Paris time for your reminders.\n"
) * 2
NEW_YORK_RUN = (
    "user: Big news, I moved from Paris to New York last week.\n"
    "assistant: Congratulations! I will use New York time for your reminders from now on.\n"
) * 2


def extract(c: Client, agent_id: str, transcript: str) -> pb.ExtractMemoriesResponse:
    request = pb.ExtractMemoriesRequest(
        agent_id=agent_id, session_id=uuid.uuid4().hex, transcript=transcript
    )
    reply: pb.ExtractMemoriesResponse = c.call(c.memory.ExtractMemories, request)
    return reply


def decision(key: str, value: str, action: str, target: str) -> dict[str, Any]:
    return {**fact(key, value), "action": action, "target": target}


def listed(c: Client, agent_id: str, **flags: bool) -> list[memory_pb2.Memory]:
    request = pb.ListMemoriesRequest(
        owner=memory_pb2.MemoryOwner(agent_id=agent_id), page_size=100, **flags
    )
    return list(c.call(c.memory.ListMemories, request).memories)


def rendered(c: Client, agent_id: str) -> str:
    request = recall_service_pb2.RenderPromptRequest(
        agent_id=agent_id,
        persona="You are a helpful assistant.",
        memory_policy=recall_pb2.MemoryPolicy(archival_mode=recall_pb2.ARCHIVAL_MODE_OFF),
    )
    prompt: str = c.call(c.recall.RenderPrompt, request).system_prompt
    return prompt


def recalled(c: Client, agent_id: str, query: str) -> list[str]:
    request = recall_service_pb2.RecallRequest(
        query=query, agent_id=agent_id, include_memories=True
    )
    return [m.memory_id for m in c.call(c.recall.Recall, request)]


def shown_to_model(fake: FakeAnthropic) -> str:
    (request,) = fake.requests
    content = request["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


def events(c: Client, memory_id: str) -> list[int]:
    request = pb.ListMemoryEventsRequest(memory_id=memory_id)
    return [e.type for e in c.call(c.memory.ListMemoryEvents, request).events]


def upsert(c: Client, agent_id: str, key: str, value: str) -> memory_pb2.Memory:
    request = pb.UpsertMemoryRequest(
        owner=memory_pb2.MemoryOwner(agent_id=agent_id), key=key, value=value
    )
    memory: memory_pb2.Memory = c.call(c.memory.UpsertMemory, request).memory
    return memory


# -- extraction ---------------------------------------------------------------------------


def test_a_move_from_paris_to_new_york_leaves_one_current_fact_and_one_superseded(
    c: Client, fake: FakeAnthropic, agent: str
) -> None:
    fake.facts(fact("user-home-city", "The user lives in Paris."))
    (paris,) = extract(c, agent, PARIS_RUN).written
    before = rendered(c, agent)
    assert "The user lives in Paris." in before

    fake.requests.clear()
    fake.facts(decision("user-city", "The user lives in New York.", "supersede", "m1"))
    reply = extract(c, agent, NEW_YORK_RUN)
    # The model was shown the memory the run speaks of, under the reference it used.
    assert "- m1 (agent) auto:user-home-city: The user lives in Paris.\n" in shown_to_model(fake)
    (new_york,) = reply.written
    (superseded,) = reply.superseded
    assert (new_york.key, new_york.value) == ("auto:user-city", "The user lives in New York.")
    assert (superseded.id, superseded.superseded_by) == (paris.id, new_york.id)
    assert list(reply.dropped) == []

    # One current fact: the listing, the prompt and recall know only New York.
    assert [m.value for m in listed(c, agent)] == ["The user lives in New York."]
    after = rendered(c, agent)
    assert "The user lives in New York." in after
    assert "Paris" not in after
    assert recalled(c, agent, "where does the user live Paris") == [new_york.id]
    # The superseded one stays readable: by id, on request in the listing, in the audit.
    kept = c.call(c.memory.GetMemory, pb.GetMemoryRequest(id=paris.id)).memory
    assert (kept.value, kept.superseded_by) == ("The user lives in Paris.", new_york.id)
    assert kept.etag != paris.etag
    assert {m.id for m in listed(c, agent, show_superseded=True)} == {paris.id, new_york.id}
    assert events(c, paris.id) == [
        memory_pb2.MEMORY_EVENT_TYPE_CREATED,
        memory_pb2.MEMORY_EVENT_TYPE_SUPERSEDED,
    ]


def test_an_update_rewrites_an_automatic_memory_under_its_own_key(
    c: Client, fake: FakeAnthropic, agent: str
) -> None:
    fake.facts(fact("reminders-timezone", "Reminders use Paris time (CET)."))
    (old,) = extract(c, agent, PARIS_RUN).written
    fake.facts(decision("tz", "Reminders use New York time (ET).", "update", "m1"))
    reply = extract(c, agent, NEW_YORK_RUN)
    (updated,) = reply.written
    assert (updated.id, updated.key) == (old.id, "auto:reminders-timezone")
    assert updated.value == "Reminders use New York time (ET)."
    assert list(reply.superseded) == []
    assert [m.id for m in listed(c, agent, show_superseded=True)] == [old.id]


def test_a_pass_never_changes_or_hides_what_a_person_wrote(
    c: Client, fake: FakeAnthropic, agent: str
) -> None:
    manual = upsert(c, agent, "home", "The user lives in Paris.")
    fake.facts(
        decision("user-city", "The user lives in New York.", "supersede", "m1"),
        decision("home", "The user lives in New York.", "update", "m1"),
    )
    reply = extract(c, agent, NEW_YORK_RUN)
    assert list(reply.written) == []
    assert list(reply.superseded) == []
    assert [d.reason for d in reply.dropped] == ["TARGET_PROTECTED", "TARGET_PROTECTED"]
    (still,) = listed(c, agent, show_superseded=True)
    assert (still.id, still.value, still.superseded_by) == (manual.id, manual.value, "")


def test_a_decision_about_a_memory_the_model_was_not_shown_is_dropped(
    c: Client, fake: FakeAnthropic, agent: str
) -> None:
    fake.facts(fact("user-home-city", "The user lives in Paris."))
    (paris,) = extract(c, agent, PARIS_RUN).written
    fake.facts(
        decision("user-city", "The user lives in New York.", "supersede", paris.id),
        decision("user-city-2", "The user now lives in New York.", "noop", "m1"),
    )
    reply = extract(c, agent, NEW_YORK_RUN)
    assert [d.reason for d in reply.dropped] == ["UNKNOWN_TARGET", "ALREADY_KNOWN"]
    assert [m.id for m in listed(c, agent)] == [paris.id]


def test_an_agent_only_sees_and_supersedes_its_own_memories(
    c: Client, fake: FakeAnthropic, agent: str
) -> None:
    other = upsert(c, f"{agent}-other", "home", "The other user lives in Paris.")
    fake.facts(decision("user-city", "The user lives in New York.", "supersede", "m1"))
    reply = extract(c, agent, NEW_YORK_RUN)
    assert "Known memories" not in shown_to_model(fake)
    assert [d.reason for d in reply.dropped] == ["UNKNOWN_TARGET"]
    got = c.call(c.memory.GetMemory, pb.GetMemoryRequest(id=other.id)).memory
    assert got.superseded_by == ""


# -- Memorize -----------------------------------------------------------------------------


def memorize(c: Client, agent_id: str, content: str, *supersedes: str) -> pb.MemorizeResponse:
    request = pb.MemorizeRequest(
        owner=memory_pb2.MemoryOwner(agent_id=agent_id),
        content=content,
        supersedes=list(supersedes),
    )
    reply: pb.MemorizeResponse = c.call(c.memory.Memorize, request)
    return reply


def refused(call: Any) -> Any:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return error_details(info.value)


def test_memorize_supersedes_the_ids_it_names_and_a_retry_changes_nothing(
    c: Client, agent: str
) -> None:
    old = memorize(c, agent, "Releases ship on Fridays.").memory
    reply = memorize(c, agent, "Releases ship on Thursdays.", old.id)
    assert reply.created
    (superseded,) = reply.superseded
    assert (superseded.id, superseded.superseded_by) == (old.id, reply.memory.id)
    assert [m.id for m in listed(c, agent)] == [reply.memory.id]

    again = memorize(c, agent, "Releases ship on Thursdays.", old.id)
    assert not again.created
    assert again.superseded[0].etag == superseded.etag  # not superseded a second time
    assert events(c, old.id).count(memory_pb2.MEMORY_EVENT_TYPE_SUPERSEDED) == 1


def test_writing_a_superseded_key_again_makes_it_current(c: Client, agent: str) -> None:
    old = upsert(c, agent, "office", "Works from the Paris office.")
    memorize(c, agent, "Works from the New York office.", old.id)
    revived = upsert(c, agent, "office", "Works from the Paris office again.")
    assert (revived.id, revived.superseded_by) == (old.id, "")
    assert old.id in {m.id for m in listed(c, agent)}


def test_memorize_refuses_what_it_cannot_supersede_and_writes_nothing(
    c: Client, agent: str
) -> None:
    mine = memorize(c, agent, "Uses tabs.").memory
    others = memorize(c, f"{agent}-other", "Uses spaces.").memory
    cases = [
        (["not-an-id"], grpc.StatusCode.INVALID_ARGUMENT, "supersedes[0]"),
        ([mine.id, others.id], grpc.StatusCode.INVALID_ARGUMENT, "supersedes[1]"),
        ([str(uuid.uuid4())], grpc.StatusCode.NOT_FOUND, None),
        ([str(uuid.uuid4()) for _ in range(21)], grpc.StatusCode.INVALID_ARGUMENT, "supersedes"),
    ]
    for ids, code, field in cases:
        details = refused(lambda ids=ids: memorize(c, agent, "Uses two spaces.", *ids))
        assert details.code is code
        if field is not None:
            assert field in details.violations
    # Nothing was written by any refused call: no new memory, nothing superseded.
    assert [m.id for m in listed(c, agent, show_superseded=True)] == [mine.id]
    assert events(c, mine.id) == [memory_pb2.MEMORY_EVENT_TYPE_CREATED]
    # A memory cannot supersede itself: the same content is the same memory.
    details = refused(lambda: memorize(c, agent, "Uses tabs.", mine.id))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert "supersedes[0]" in details.violations


def test_a_run_before_a_supersession_is_replayed_with_the_fact_it_saw(
    c: Client, fake: FakeAnthropic, agent: str
) -> None:
    fake.facts(fact("user-home-city", "The user lives in Paris."))
    extract(c, agent, PARIS_RUN)
    request = recall_service_pb2.RenderPromptRequest(
        agent_id=agent,
        memory_policy=recall_pb2.MemoryPolicy(archival_mode=recall_pb2.ARCHIVAL_MODE_OFF),
    )
    run = c.call(c.recall.RenderPrompt, request)
    assert "The user lives in Paris." in run.system_prompt

    fake.facts(decision("user-city", "The user lives in New York.", "supersede", "m1"))
    assert len(extract(c, agent, NEW_YORK_RUN).superseded) == 1
    assert "Paris" not in c.call(c.recall.RenderPrompt, request).system_prompt

    request.as_of_time.CopyFrom(run.render_time)
    replayed = c.call(c.recall.RenderPrompt, request)
    assert replayed.system_prompt == run.system_prompt
    # Recall as of the run finds the fact it could find then, and not its successor.
    asked = recall_service_pb2.RecallRequest(
        query="where does the user live", agent_id=agent, include_memories=True
    )
    asked.as_of_time.CopyFrom(run.render_time)
    found = [m.content for m in c.call(c.recall.Recall, asked)]
    assert found == ["The user lives in Paris."]
