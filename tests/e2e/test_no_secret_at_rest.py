"""No secret at rest, over real gRPC and PostgreSQL, field by field.

Every string field of every write RPC's request, found by walking the descriptors
(nested, repeated, oneof, map and Struct contents included, so a field added later is
covered the day it is added), is sent a credential, one field at a time, in a request
that would otherwise succeed. Each is refused (INVALID_ARGUMENT, SECRET_IN_VALUE, the
field named), and afterwards no table of the database holds the credential anywhere.

ExtractMemories' transcript is the one string not refused: a credential in it is
redacted before it is queued or shown to the model, and a queued transcript is emptied
when its job ends.
"""

from __future__ import annotations

import contextlib
import secrets
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import psycopg
import pytest
from google.protobuf import duration_pb2, field_mask_pb2, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message
from psycopg import sql
from psycopg.rows import dict_row

from agent_memory.api.stored_text import NOT_REFUSED, NOT_STORING
from agent_memory.config import Settings
from agent_memory.store import migrate
from agentmemory.v1 import (
    block_pb2,
    block_service_pb2,
    decision_pb2,
    decision_service_pb2,
    memory_pb2,
    memory_service_pb2,
    recall_pb2,
    recall_service_pb2,
)
from tests.fake_anthropic import FakeAnthropic, fact, model_on_loopback
from tests.support import Client, ServerThread, agentmemory_rpcs, error_details, wait_until

# A GitHub token no detector can miss, new on every run, built so no credential sits in
# the source. Searched for case-insensitively: a slugged copy would be found too.
_ALPHANUMERIC = string.ascii_letters + string.digits
BODY = "".join(secrets.choice(_ALPHANUMERIC) for _ in range(36))
SECRET = "ghp_" + BODY

TRANSCRIPT_FIELD = "agentmemory.v1.ExtractMemoriesRequest.transcript"
AGENT = "agent-rest"
CARD = "rest-card"
LONG_TRANSCRIPT = (
    "user: how do we deploy this service?\n"
    "assistant: We deploy with `make release` from the repository root; it builds the "
    "image, runs the migrations and rolls the pods one by one. Staging is called blue.\n"
    "user: and the token for the registry?\n"
    f"assistant: it is {SECRET}, keep it safe; the rest lives in the vault.\n"
)


# -- the contract, from the descriptors ---------------------------------------------------


def methods() -> list[MethodDescriptor]:
    return agentmemory_rpcs()


def full_name(method: MethodDescriptor) -> str:
    return f"/{method.containing_service.full_name}/{method.name}"


WRITES = [m for m in methods() if full_name(m) not in NOT_STORING]
READS = [m for m in methods() if full_name(m) in NOT_STORING]

Setter = Callable[[Any], None]


@dataclass(frozen=True)
class Target:
    """One string a request can carry: the path the server names, and how to put the
    secret there."""

    path: str
    put: Setter


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def targets(descriptor: Descriptor, path: str = "", depth: int = 0) -> Iterator[Target]:
    """Every place a string can go in a message of ``descriptor``."""
    assert depth < 8, f"{path}: nested too deep for a request"
    if descriptor.full_name == "google.protobuf.Struct":
        yield from _struct_targets(path)
        return
    if descriptor.full_name == "google.protobuf.Value":
        yield _value_target(path)
        return
    if descriptor.full_name == "google.protobuf.ListValue":
        yield _list_target(path)
        return
    for field in descriptor.fields:
        if field.full_name in NOT_REFUSED:
            continue
        at = _join(path, field.name)
        if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry:
            yield from _map_targets(field, at, depth)
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            inside = f"{at}[0]" if field.is_repeated else at
            for inner in targets(field.message_type, inside, depth + 1):
                yield Target(inner.path, _into(field, inner.put))
        elif field.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
            text: str | bytes = SECRET
            if field.type == FieldDescriptor.TYPE_BYTES:
                text = SECRET.encode()
            yield Target(f"{at}[0]" if field.is_repeated else at, _text_setter(field, text))


def _into(field: FieldDescriptor, put: Setter) -> Setter:
    def setter(message: Any) -> None:
        value = getattr(message, field.name)
        if field.is_repeated:
            put(value[0] if len(value) else value.add())
        else:
            put(value)

    return setter


def _text_setter(field: FieldDescriptor, text: str | bytes) -> Setter:
    def setter(message: Any) -> None:
        if field.is_repeated:
            items = getattr(message, field.name)
            if len(items):
                items[0] = text
            else:
                items.append(text)
        else:
            setattr(message, field.name, text)

    return setter


def _map_targets(field: FieldDescriptor, path: str, depth: int) -> Iterator[Target]:
    key = field.message_type.fields_by_name["key"]
    value = field.message_type.fields_by_name["value"]
    if key.type != FieldDescriptor.TYPE_STRING:
        raise NotImplementedError(f"{path}: teach this test maps keyed by type {key.type}")

    def entries(message: Any) -> Any:
        return getattr(message, field.name)

    if value.type == FieldDescriptor.TYPE_MESSAGE:
        yield Target(path, lambda m: entries(m)[SECRET])  # made on first access
        for inner in targets(value.message_type, f'{path}["k"]', depth + 1):
            yield Target(inner.path, lambda m, put=inner.put: put(entries(m)["k"]))
    elif value.type == FieldDescriptor.TYPE_STRING:
        yield Target(path, lambda m: entries(m).__setitem__(SECRET, "a value"))
        yield Target(f'{path}["k"]', lambda m: entries(m).__setitem__("k", SECRET))
    else:
        yield Target(path, lambda m: entries(m).__setitem__(SECRET, value.default_value))


def _struct_targets(path: str) -> Iterator[Target]:
    at = _join(path, "fields")
    yield Target(f'{at}["note"]', lambda s: s.update({"note": f"token {SECRET}"}))
    yield Target(at, lambda s: s.update({SECRET: "a value"}))
    yield Target(f'{at}["deep"].fields["inner"]', lambda s: s.update({"deep": {"inner": SECRET}}))
    yield Target(f'{at}["list"].values[1]', lambda s: s.update({"list": ["plain", SECRET]}))


def _value_target(path: str) -> Target:
    return Target(path, lambda v: setattr(v, "string_value", SECRET))


def _list_target(path: str) -> Target:
    return Target(f"{_join(path, 'values')}[0]", lambda v: v.append(SECRET))


# -- requests that succeed -----------------------------------------------------------------


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def call(client: Client, method: MethodDescriptor, request: Message) -> Any:
    """Any RPC by its descriptor, with the client's credentials."""
    response_type = _message_class(method.output_type)
    if method.server_streaming:
        stream = client.channel.unary_stream(
            full_name(method),
            request_serializer=type(request).SerializeToString,
            response_deserializer=response_type.FromString,
        )
        return list(stream(request, metadata=client.metadata, timeout=30))
    unary = client.channel.unary_unary(
        full_name(method),
        request_serializer=type(request).SerializeToString,
        response_deserializer=response_type.FromString,
    )
    return unary(request, metadata=client.metadata, timeout=30)


def _message_class(descriptor: Descriptor) -> type[Message]:
    return message_factory.GetMessageClass(descriptor)


def method(name: str) -> MethodDescriptor:
    [found] = [m for m in methods() if full_name(m).endswith(f"/{name}")]
    return found


def rpc(client: Client, name: str, request: Message) -> Any:
    return call(client, method(name), request)


def owner() -> memory_pb2.MemoryOwner:
    return memory_pb2.MemoryOwner(agent_id=AGENT)


def a_memory(client: Client) -> memory_pb2.Memory:
    request = memory_service_pb2.UpsertMemoryRequest(
        owner=owner(), key=unique("k"), value="the deploy key lives in the vault"
    )
    return rpc(client, "UpsertMemory", request).memory  # type: ignore[no-any-return]


def a_decision(client: Client, *, record: bool = True) -> decision_pb2.Decision:
    """A decision of a registered card type: recorded, or only ready to record."""
    rpc(client, "RegisterCardType", card_type_request(CARD))
    decision = decision_pb2.Decision(
        run_id=unique("run"),
        agent_id=AGENT,
        card_type=CARD,
        action="WAIT",
        summary="range unresolved",
        result={"note": "plain", "deep": {"inner": "text"}, "list": ["a", "b"]},
    )
    if not record:
        return decision
    request = decision_service_pb2.RecordDecisionRequest(decision=decision)
    return rpc(client, "RecordDecision", request).decision  # type: ignore[no-any-return]


def card_type_request(name: str) -> decision_service_pb2.RegisterCardTypeRequest:
    return decision_service_pb2.RegisterCardTypeRequest(
        card_type=decision_pb2.CardType(
            name=name,
            re_examinable=decision_pb2.RE_EXAMINABLE_ALWAYS,
            actions=["HOLD", "CLOSE"],
            decision_actions=["WAIT", "LONG"],
        )
    )


def memorize(client: Client) -> Message:
    return memory_service_pb2.MemorizeRequest(
        owner=owner(),
        content=unique("the staging cluster is called blue"),
        tags=["deploy", "ops"],
        confidence=0.9,
        memory_key=unique("mk"),
        metadata={"note": "plain", "deep": {"inner": "text"}, "list": ["a", "b"]},
        groundings=[
            memory_pb2.Grounding(
                message_position=0,
                provider_message_id="msg-0",
                start_character=0,
                end_character=5,
                quote="hello",
                metadata={"note": "plain"},
            )
        ],
        conversation=memory_pb2.Conversation(
            provider="anthropic",
            conversation_id=unique("conv"),
            messages=[
                memory_pb2.ConversationMessage(
                    role="user", content="hello there", provider_message_id="msg-0"
                ),
                memory_pb2.ConversationMessage(
                    role="assistant", content="hi", provider_message_id="msg-1"
                ),
            ],
        ),
    )


def update_memory(client: Client) -> Message:
    memory = a_memory(client)
    return memory_service_pb2.UpdateMemoryRequest(
        memory=memory_pb2.Memory(id=memory.id, value="the key moved to the new vault"),
        update_mask=field_mask_pb2.FieldMask(paths=["value"]),
        etag=memory.etag,
    )


def delete_memory(client: Client) -> Message:
    memory = a_memory(client)
    return memory_service_pb2.DeleteMemoryRequest(id=memory.id, etag=memory.etag)


def block_request(client: Client) -> Message:
    return block_service_pb2.WriteBlockRequest(
        label=block_pb2.BLOCK_LABEL_CORE,
        scope=memory_pb2.SCOPE_AGENT,
        agent_id=unique("blk"),
        content="- deploys go out on tuesdays",
    )


def delete_block(client: Client) -> Message:
    written = rpc(client, "WriteBlock", block_request(client)).block
    return block_service_pb2.DeleteBlockRequest(
        label=written.label,
        scope=written.scope,
        agent_id=written.agent_id,
        expected_updated_at=written.updated_at,
    )


BASES: dict[str, Callable[[Client], Message]] = {
    "UpsertMemory": lambda c: memory_service_pb2.UpsertMemoryRequest(
        owner=owner(),
        key=unique("k"),
        value="deploys go out on tuesdays",
        pinned=True,
        importance=5,
        source=memory_pb2.MEMORY_SOURCE_MANUAL,
    ),
    "UpdateMemory": update_memory,
    "PinMemory": lambda c: memory_service_pb2.PinMemoryRequest(id=a_memory(c).id, pinned=True),
    "DeleteMemory": delete_memory,
    "Memorize": memorize,
    "RecordLearning": lambda c: memory_service_pb2.RecordLearningRequest(
        chain_agent_ids=[AGENT, "agent-second"], content="ask before deploying on fridays"
    ),
    "UpdateAgentSettings": lambda c: memory_service_pb2.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id=AGENT, memory_enabled=True),
        update_mask=field_mask_pb2.FieldMask(paths=["memory_enabled"]),
    ),
    "UpdateWorkspaceSettings": lambda c: memory_service_pb2.UpdateWorkspaceSettingsRequest(
        settings=memory_pb2.WorkspaceSettings(
            workspace_id="ws-rest", expiry_slide=duration_pb2.Duration(seconds=3600)
        ),
        update_mask=field_mask_pb2.FieldMask(paths=["expiry_slide"]),
    ),
    # Under the minimum length: the pass is skipped, so no model is called.
    "ExtractMemories": lambda c: memory_service_pb2.ExtractMemoriesRequest(
        agent_id=AGENT, workspace_id="ws-rest", session_id=unique("sess"), transcript="user: hi"
    ),
    "RecordRunSession": lambda c: memory_service_pb2.RecordRunSessionRequest(
        agent_id=AGENT,
        run_id=unique("run"),
        session_id_before="session-before",
        session_id_after="session-after",
    ),
    "ResetActiveSession": lambda c: memory_service_pb2.ResetActiveSessionRequest(agent_id=AGENT),
    # Dry runs: they answer like the forget and leave the tenant as it is.
    "ForgetAgent": lambda c: memory_service_pb2.ForgetAgentRequest(
        agent_id=AGENT, validate_only=True
    ),
    "ForgetWorkspace": lambda c: memory_service_pb2.ForgetWorkspaceRequest(
        workspace_id="ws-forgotten", validate_only=True
    ),
    "ForgetUser": lambda c: memory_service_pb2.ForgetUserRequest(validate_only=True),
    "WriteBlock": block_request,
    "DeleteBlock": delete_block,
    "RegisterCardType": lambda c: card_type_request(unique("card")),
    "RecordDecision": lambda c: decision_service_pb2.RecordDecisionRequest(
        decision=a_decision(c, record=False)
    ),
    "ResolveDecision": lambda c: decision_service_pb2.ResolveDecisionRequest(
        decision_id=a_decision(c).id, resolution_status=decision_pb2.RESOLUTION_STATUS_RESOLVED
    ),
    "RecordReexamination": lambda c: decision_service_pb2.RecordReexaminationRequest(
        parent_decision_id=a_decision(c).id,
        run_id=unique("rerun"),
        conviction_score=60,
        notes="the range still holds",
        suggested_action="HOLD",
    ),
}

CASES = [pytest.param(m, t, id=f"{m.name}:{t.path}") for m in WRITES for t in targets(m.input_type)]


# -- the database, searched whole ------------------------------------------------------------


def holding(database_url: str, needle: str = BODY) -> list[str]:
    """Every table of the database with a row whose text holds ``needle`` (any case)."""
    found: list[str] = []
    with psycopg.connect(database_url) as conn:
        tables = conn.execute(
            """
            SELECT table_schema, table_name FROM information_schema.tables
            WHERE table_catalog = current_database() AND table_type = 'BASE TABLE'
              AND table_schema NOT IN ('pg_catalog', 'information_schema')
            """
        ).fetchall()
        assert len(tables) > 10, "the search must see the service's tables"
        for schema, table in tables:
            query = sql.SQL("SELECT count(*) FROM {}.{} AS t WHERE t::text ILIKE %s").format(
                sql.Identifier(schema), sql.Identifier(table)
            )
            row = conn.execute(query, (f"%{needle}%",)).fetchone()
            if row and row[0]:
                found.append(f"{schema}.{table}")
    return found


def purge(database_url: str, needle: str = BODY) -> None:
    """Delete every row holding ``needle``: a known gap must not fail the tests after it."""
    with psycopg.connect(database_url) as conn:
        for name in holding(database_url, needle):
            schema, table = name.split(".", 1)
            conn.execute(
                sql.SQL("DELETE FROM {}.{} AS t WHERE t::text ILIKE %s").format(
                    sql.Identifier(schema), sql.Identifier(table)
                ),
                (f"%{needle}%",),
            )


# -- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    with model_on_loopback() as f:
        yield f


@pytest.fixture(scope="module")
def rest_db(create_database: Callable[[str], str]) -> str:
    """A database of this module's own: it is searched whole, and its queued jobs are
    run only by this module's servers."""
    url = create_database("am_rest")
    migrate.upgrade(url)
    return url


def settings(**overrides: Any) -> Settings:
    overrides.setdefault("extraction_sdk_retries", 0)
    overrides.setdefault("extraction_settle_seconds", 0)
    overrides.setdefault("extraction_poll_seconds", 0.1)
    return Settings(**overrides)


@pytest.fixture(scope="module")
def intake(fake: FakeAnthropic, rest_db: str) -> Iterator[ServerThread]:
    """A server that runs no queued job: queued transcripts stay as they were stored."""
    running = ServerThread(rest_db, settings=settings(extraction_workers=0))
    with running:
        yield running


@pytest.fixture
def client(intake: ServerThread) -> Iterator[Client]:
    with intake.client() as c:
        yield c


# -- the tests ------------------------------------------------------------------------------


def test_every_write_rpc_has_a_request_that_succeeds(client: Client, rest_db: str) -> None:
    missing = sorted({m.name for m in WRITES} - set(BASES))
    assert not missing, f"give these writes a base request: {missing}"
    for m in WRITES:
        call(client, m, BASES[m.name](client))
    assert holding(rest_db) == []


@pytest.mark.parametrize(("rpc_method", "target"), CASES)
def test_a_secret_in_any_string_of_a_write_is_refused_and_stored_nowhere(
    client: Client, rest_db: str, rpc_method: MethodDescriptor, target: Target
) -> None:
    request = BASES[rpc_method.name](client)
    target.put(request)
    with pytest.raises(grpc.RpcError) as info:
        call(client, rpc_method, request)
    details = error_details(info.value)
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.reason == "SECRET_IN_VALUE"
    assert list(details.violations) == [target.path]
    assert details.metadata["field"] == target.path
    said = " ".join([details.message, *details.metadata.values(), *details.violations.values()])
    assert BODY.lower() not in said.lower()
    assert holding(rest_db) == []


@pytest.mark.parametrize("rpc_method", READS, ids=lambda m: m.name)
def test_reads_store_nothing_of_what_they_are_sent(
    client: Client, rest_db: str, rpc_method: MethodDescriptor
) -> None:
    for target in targets(rpc_method.input_type):
        request = _message_class(rpc_method.input_type)()
        target.put(request)
        with contextlib.suppress(grpc.RpcError):  # whatever the answer, nothing is stored
            call(client, rpc_method, request)
    assert holding(rest_db) == []


def test_renders_and_recalls_of_ordinary_content_still_work(client: Client) -> None:
    rpc(
        client,
        "WriteBlock",
        block_service_pb2.WriteBlockRequest(
            label=block_pb2.BLOCK_LABEL_ARCHIVAL,
            scope=memory_pb2.SCOPE_AGENT,
            agent_id=AGENT,
            content="- the staging cluster is called blue\n- deploys go out on tuesdays",
        ),
    )
    render = rpc(
        client,
        "RenderPrompt",
        recall_service_pb2.RenderPromptRequest(
            agent_id=AGENT,
            workspace_id="ws-rest",
            persona="You are a careful release engineer.",
            user_message="when do deploys go out?",
            memory_policy=recall_pb2.MemoryPolicy(archival_mode=recall_pb2.ARCHIVAL_MODE_AUTO),
        ),
    )
    assert render.system_prompt.startswith("You are a careful release engineer.")
    assert any("tuesdays" in r for r in render.system_reminders)
    matches = rpc(
        client, "Recall", recall_service_pb2.RecallRequest(agent_id=AGENT, query="deploys tuesdays")
    )
    assert matches
    assert "tuesdays" in matches[0].content


def extract(client: Client, **fields: Any) -> memory_service_pb2.ExtractMemoriesResponse:
    fields.setdefault("agent_id", AGENT)
    fields.setdefault("session_id", unique("sess"))
    fields.setdefault("transcript", LONG_TRANSCRIPT)
    return rpc(  # type: ignore[no-any-return]
        client, "ExtractMemories", memory_service_pb2.ExtractMemoriesRequest(**fields)
    )


def enable(client: Client) -> None:
    rpc(
        client,
        "UpdateAgentSettings",
        memory_service_pb2.UpdateAgentSettingsRequest(
            settings=memory_pb2.AgentSettings(agent_id=AGENT, memory_enabled=True)
        ),
    )


def sent_to_model(fake: FakeAnthropic) -> str:
    return " ".join(str(r.get("messages")) for r in fake.requests)


def test_a_transcript_s_secret_reaches_neither_the_model_nor_the_database(
    client: Client, fake: FakeAnthropic, rest_db: str
) -> None:
    enable(client)
    fake.requests.clear()
    fake.facts(
        fact("registry token", f"the registry token is {SECRET}"),
        fact("deploy command", "deploy with make release from the repository root"),
    )
    reply = extract(client)
    assert reply.outcome == memory_pb2.EXTRACTION_OUTCOME_COMPLETED
    assert [m.key for m in reply.written] == ["auto:deploy-command"]
    assert [(d.key, d.value, d.reason) for d in reply.dropped] == [
        ("auto:registry-token", "", "SECRET_IN_VALUE")
    ]
    assert BODY.lower() not in str(reply).lower()
    assert len(fake.requests) == 1
    shown = sent_to_model(fake)
    assert "make release" in shown
    assert BODY not in shown
    assert "[REDACTED" in shown
    assert holding(rest_db) == []


def test_a_secret_in_a_proposed_key_is_neither_written_nor_echoed(
    client: Client, fake: FakeAnthropic, rest_db: str
) -> None:
    enable(client)
    fake.facts(fact(f"token {SECRET}", "the registry token lives in the vault"))
    try:
        reply = extract(client)
        # The model was asked and its one fact dropped for the secret, not lost otherwise.
        assert [d.reason for d in reply.dropped] == ["SECRET_IN_VALUE"], reply
        assert reply.written == []
        assert BODY.lower() not in str(reply).lower()
        assert holding(rest_db) == []
    finally:
        purge(rest_db)


def test_a_fact_dropped_for_any_reason_never_echoes_a_secret(
    client: Client, fake: FakeAnthropic
) -> None:
    enable(client)
    fake.facts(
        fact("shaky", f"maybe the token is {SECRET}", confidence=0.3),
        fact("???", f"a fact with no usable key but {SECRET}"),
    )
    reply = extract(client)
    assert len(reply.dropped) == 2
    assert BODY.lower() not in str(reply).lower()


def jobs(database_url: str, tenant_id: str) -> list[dict[str, Any]]:
    with psycopg.connect(database_url, row_factory=dict_row) as conn:
        return conn.execute(
            "SELECT id, status, transcript FROM extraction_jobs WHERE tenant_id = %s",
            (tenant_id,),
        ).fetchall()


def ended_jobs(database_url: str, tenant_id: str) -> list[dict[str, Any]]:
    """The tenant's jobs that have ended, once one has (the worker runs meanwhile)."""
    assert wait_until(lambda: any(j["status"] == "done" for j in jobs(database_url, tenant_id))), (
        "the job never ended"
    )
    return [j for j in jobs(database_url, tenant_id) if j["status"] == "done"]


def test_a_queued_transcript_is_stored_redacted_and_emptied_once_its_job_ends(
    client: Client, fake: FakeAnthropic, rest_db: str
) -> None:
    enable(client)
    fake.requests.clear()
    reply = extract(client, queued=True, session_id="queued-run")
    assert reply.outcome == memory_pb2.EXTRACTION_OUTCOME_QUEUED
    [pending] = jobs(rest_db, client.tenant_id)
    assert pending["status"] == "queued"
    assert "make release" in pending["transcript"]
    assert "[REDACTED" in pending["transcript"]
    assert holding(rest_db) == []

    fake.facts(
        fact("registry token", f"the registry token is {SECRET}"),
        fact("deploy command", "deploy with make release from the repository root"),
    )
    runner = ServerThread(rest_db, settings=settings())
    with runner:
        done = ended_jobs(rest_db, client.tenant_id)
    assert [j["transcript"] for j in done] == [""]
    mine = [r for r in fake.requests if "make release" in str(r.get("messages"))]
    assert len(mine) == 1
    assert BODY not in str(mine[0].get("messages"))
    assert holding(rest_db) == []


def test_a_job_that_fails_for_good_keeps_no_transcript(
    client: Client, fake: FakeAnthropic, rest_db: str
) -> None:
    enable(client)
    extract(client, queued=True, session_id="failing-run")
    for _ in range(2):
        fake.error(500)
    runner = ServerThread(
        rest_db,
        settings=settings(extraction_max_attempts=2, extraction_retry_base_seconds=0.1),
    )
    with runner:
        done = ended_jobs(rest_db, client.tenant_id)
    assert [j["transcript"] for j in done] == [""]
    assert holding(rest_db) == []


def test_upgrading_empties_the_transcripts_of_jobs_that_ended(
    create_database: Callable[[str], str],
) -> None:
    url = create_database("am_rest_upgrade")
    migrate.upgrade(url, "0011")
    insert = """
        INSERT INTO extraction_jobs (tenant_id, id, synthetic_session_id, agent_id,
                                     actor_user_id, transcript, status)
        VALUES ('t', %s, %s, 'a', 'u', %s, %s)
    """
    with psycopg.connect(url) as conn:
        conn.execute(insert, (uuid.uuid4(), "memory-extract:done", "ran with it", "done"))
        conn.execute(insert, (uuid.uuid4(), "memory-extract:queued", "still to run", "queued"))
    migrate.upgrade(url)
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT status, transcript FROM extraction_jobs ORDER BY status"
        ).fetchall()
    assert rows == [("done", ""), ("queued", "still to run")]
