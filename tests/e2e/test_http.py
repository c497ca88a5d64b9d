"""HTTP/JSON over real loopback HTTP against the real server, compared with gRPC.

The main test plays one scenario twice, in two fresh tenants: once over gRPC, once
over HTTP, with requests encoded for HTTP by the route each RPC's annotation gives
(path variables, query parameters, body). Every route must be played, so an RPC
added to the contract without a step here fails the test.
"""

from __future__ import annotations

import gzip
import http.client
import json
import re
import socket
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import grpc
import httpx
import pytest
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from agent_memory.config import Settings
from agent_memory.http.routes import Route, routes
from agent_memory.http.transcoder import HTTP_STATUS
from tests.support import Client, ServeProcess, ServerThread

pytestmark = pytest.mark.e2e

Context = dict[str, Any]
Build = Callable[[Context], dict[str, Any]]
MEMORY = "/agentmemory.v1.MemoryService/"
BLOCKS = "/agentmemory.v1.BlockService/"
RECALL = "/agentmemory.v1.RecallService/"
DECISIONS = "/agentmemory.v1.DecisionService/"
NOT_A_MEMORY = "00000000-0000-4000-8000-000000000000"


@dataclass(frozen=True)
class Step:
    """One call of the scenario: a label for later steps, the RPC and its request as
    proto JSON (built from what earlier steps answered)."""

    label: str
    method: str
    build: Build


def const(document: dict[str, Any]) -> Build:
    return lambda ctx: document


SCENARIO = [
    Step(
        "upsert",
        MEMORY + "UpsertMemory",
        const(
            {
                "owner": {"agentId": "coder"},
                "key": "deploy-cmd",
                "value": "Deploy with npm run deploy from the repo root",
                "pinned": True,
                "importance": 80,
            }
        ),
    ),
    Step(
        "upsert-ws",
        MEMORY + "UpsertMemory",
        const({"owner": {"workspaceId": "acme"}, "key": "stack", "value": "Next.js and Fastify"}),
    ),
    Step(
        "auto",
        MEMORY + "UpsertMemory",
        const(
            {
                "owner": {"agentId": "coder"},
                "key": "auto:tests",
                "value": "Tests run with pytest -q",
                "source": "MEMORY_SOURCE_AUTO",
            }
        ),
    ),
    Step(
        "bad-upsert",
        MEMORY + "UpsertMemory",
        const({"owner": {"agentId": "coder"}, "key": "", "value": "", "importance": 101}),
    ),
    Step(
        "secret",
        MEMORY + "UpsertMemory",
        const({"owner": {"agentId": "coder"}, "key": "db", "value": "password: Tr0ub4dor&3x"}),
    ),
    Step("get", MEMORY + "GetMemory", lambda ctx: {"id": ctx["upsert"]["memory"]["id"]}),
    Step("get-missing", MEMORY + "GetMemory", const({"id": NOT_A_MEMORY})),
    Step(
        "get-by-key",
        MEMORY + "GetMemory",
        const({"owner": {"agentId": "coder"}, "key": "deploy-cmd"}),
    ),
    Step(
        "get-ws-by-key",
        MEMORY + "GetMemory",
        const({"owner": {"workspaceId": "acme"}, "key": "stack"}),
    ),
    Step(
        "update",
        MEMORY + "UpdateMemory",
        lambda ctx: {
            "memory": {"id": ctx["upsert"]["memory"]["id"], "value": "npm run deploy:prod"},
            "updateMask": "value",
            "etag": ctx["upsert"]["memory"]["etag"],
        },
    ),
    Step(
        "update-auto",
        MEMORY + "UpdateMemory",
        lambda ctx: {
            "memory": {"id": ctx["auto"]["memory"]["id"], "value": "changed"},
            "updateMask": "value",
        },
    ),
    Step(
        "pin",
        MEMORY + "PinMemory",
        lambda ctx: {"id": ctx["auto"]["memory"]["id"], "pinned": True},
    ),
    Step("list", MEMORY + "ListMemories", const({"owner": {"agentId": "coder"}, "pageSize": 1})),
    Step(
        "list-next",
        MEMORY + "ListMemories",
        lambda ctx: {
            "owner": {"agentId": "coder"},
            "pageSize": 1,
            "pageToken": ctx["list"]["nextPageToken"],
        },
    ),
    Step("list-ws", MEMORY + "ListMemories", const({"owner": {"workspaceId": "acme"}})),
    Step(
        "memorize",
        MEMORY + "Memorize",
        const(
            {
                "owner": {"agentId": "coder"},
                "content": "The staging database is refreshed nightly",
                "tags": ["ops", "staging"],
                "confidence": 0.9,
                "metadata": {"origin": "run-7", "weight": 2},
                "groundings": [
                    {"messagePosition": 1, "endCharacter": 7, "quote": "nightly"},
                    {"rawEventIndex": 0, "rawStartCharacter": 9, "rawEndCharacter": 16},
                ],
                "conversation": {
                    "provider": "claude-code",
                    "conversationId": "conv-42",
                    "messages": [
                        {"role": "user", "content": "when is staging refreshed?"},
                        {"role": "assistant", "content": "nightly, at 02:00"},
                    ],
                    "rawEvents": ['{"text":"nightly"}'],
                },
            }
        ),
    ),
    Step(
        "memorize-past-end",
        MEMORY + "Memorize",
        const(
            {
                "owner": {"agentId": "coder"},
                "content": "Grounded on nothing",
                "groundings": [{"messagePosition": 5}],
                "conversation": {"provider": "claude-code", "conversationId": "conv-42"},
            }
        ),
    ),
    Step(
        "conversation",
        MEMORY + "GetConversation",
        const({"provider": "claude-code", "conversationId": "conv-42"}),
    ),
    Step(
        "conversation-missing",
        MEMORY + "GetConversation",
        const({"provider": "claude-code", "conversationId": "conv-none"}),
    ),
    Step("conversations", MEMORY + "ListConversations", const({"pageSize": 1})),
    Step(
        "conversations-full",
        MEMORY + "ListConversations",
        const({"view": "CONVERSATION_VIEW_FULL"}),
    ),
    Step("conversations-bad-token", MEMORY + "ListConversations", const({"pageToken": "nope"})),
    Step(
        "memorize-ws",
        MEMORY + "Memorize",
        const({"owner": {"workspaceId": "acme"}, "content": "Design reviews are on Tuesdays"}),
    ),
    Step(
        "learn",
        MEMORY + "RecordLearning",
        const({"chainAgentIds": ["coder", "reviewer"], "content": "Reviewer wants small PRs"}),
    ),
    Step("learnings", MEMORY + "ListLearnings", const({"chainAgentIds": ["coder", "reviewer"]})),
    Step(
        "events",
        MEMORY + "ListMemoryEvents",
        lambda ctx: {"memoryId": ctx["upsert"]["memory"]["id"]},
    ),
    Step(
        "settings",
        MEMORY + "UpdateAgentSettings",
        const(
            {
                "settings": {
                    "agentId": "coder",
                    "memoryEnabled": True,
                    "activeMemoryEnabled": True,
                },
                "updateMask": "memoryEnabled,activeMemoryEnabled",
            }
        ),
    ),
    Step("get-settings", MEMORY + "GetAgentSettings", const({"agentId": "coder"})),
    Step(
        "workspace-settings",
        MEMORY + "UpdateWorkspaceSettings",
        const({"settings": {"workspaceId": "acme", "expirySlide": "604800s"}}),
    ),
    Step("get-workspace-settings", MEMORY + "GetWorkspaceSettings", const({"workspaceId": "acme"})),
    Step(
        "extract",
        MEMORY + "ExtractMemories",
        const({"agentId": "coder", "sessionId": "s-1", "transcript": "too short to read"}),
    ),
    Step(
        "extract-queued",
        MEMORY + "ExtractMemories",
        const(
            {
                "agentId": "coder",
                "sessionId": "s-2",
                "transcript": "user: the staging database is refreshed nightly\n" * 8,
                "queued": True,
            }
        ),
    ),
    Step("job", MEMORY + "GetExtractionJob", lambda ctx: {"jobId": ctx["extract-queued"]["jobId"]}),
    Step("job-missing", MEMORY + "GetExtractionJob", const({"jobId": NOT_A_MEMORY})),
    Step("usage", MEMORY + "GetUsage", const({"syntheticSessionIdPrefix": "memory-extract:"})),
    Step(
        "run",
        MEMORY + "RecordRunSession",
        const(
            {
                "agentId": "coder",
                "runId": "run-1",
                "sessionIdAfter": "claude-session-1",
                "kind": "RUN_KIND_CHAT",
                "renderTime": "2025-06-01T09:30:00.123456Z",
            }
        ),
    ),
    Step("session", MEMORY + "GetActiveSession", const({"agentId": "coder"})),
    Step("runs", MEMORY + "ListAgentRuns", const({"agentId": "coder"})),
    Step("reset", MEMORY + "ResetActiveSession", const({"agentId": "coder"})),
    Step(
        "write",
        BLOCKS + "WriteBlock",
        const(
            {
                "label": "BLOCK_LABEL_CORE",
                "scope": "SCOPE_AGENT",
                "agentId": "coder",
                "content": "- prefers small commits",
            }
        ),
    ),
    Step(
        "rewrite",
        BLOCKS + "WriteBlock",
        lambda ctx: {
            "label": "BLOCK_LABEL_CORE",
            "scope": "SCOPE_AGENT",
            "agentId": "coder",
            "content": "- prefers small commits\n- writes tests first",
            "expectedUpdatedAt": ctx["write"]["block"]["updatedAt"],
        },
    ),
    Step(
        "stale-write",
        BLOCKS + "WriteBlock",
        lambda ctx: {
            "label": "BLOCK_LABEL_CORE",
            "scope": "SCOPE_AGENT",
            "agentId": "coder",
            "content": "lost update",
            "expectedUpdatedAt": ctx["write"]["block"]["updatedAt"],
        },
    ),
    Step(
        "archival",
        BLOCKS + "WriteBlock",
        const(
            {
                "label": "BLOCK_LABEL_ARCHIVAL",
                "scope": "SCOPE_USER",
                "content": "The deploy pipeline runs on GitHub Actions\nStaging deploys at noon",
            }
        ),
    ),
    Step(
        "block",
        BLOCKS + "GetBlock",
        const({"label": "BLOCK_LABEL_CORE", "scope": "SCOPE_AGENT", "agentId": "coder"}),
    ),
    Step("blocks", BLOCKS + "ListBlocks", const({"agentId": "coder"})),
    Step(
        "versions",
        BLOCKS + "ListBlockVersions",
        const({"label": "BLOCK_LABEL_CORE", "scope": "SCOPE_AGENT", "agentId": "coder"}),
    ),
    Step(
        "workspace-block-write",
        BLOCKS + "WriteBlock",
        const({"label": "BLOCK_LABEL_CORE", "workspaceId": "acme", "content": "Ship Thursday"}),
    ),
    Step(
        "workspace-block",
        BLOCKS + "GetBlock",
        const({"label": "BLOCK_LABEL_CORE", "workspaceId": "acme"}),
    ),
    Step("workspace-blocks", BLOCKS + "ListBlocks", const({"workspaceId": "acme"})),
    Step(
        "workspace-versions",
        BLOCKS + "ListBlockVersions",
        const({"label": "BLOCK_LABEL_CORE", "workspaceId": "acme"}),
    ),
    Step(
        "workspace-block-delete",
        BLOCKS + "DeleteBlock",
        const({"label": "BLOCK_LABEL_CORE", "workspaceId": "acme"}),
    ),
    Step(
        "recall",
        RECALL + "Recall",
        const({"query": "deploy", "agentId": "coder", "includeMemories": True, "limit": 5}),
    ),
    Step("recall-status", RECALL + "GetRecallStatus", const({})),
    Step("caller", MEMORY + "GetCaller", const({})),
    Step("agents", MEMORY + "ListAgents", const({"pageSize": 2})),
    Step("workspaces", MEMORY + "ListWorkspaces", const({})),
    Step(
        "render",
        RECALL + "RenderPrompt",
        const({"agentId": "coder", "workspaceId": "acme", "persona": "You are a careful coder."}),
    ),
    Step(
        "render-then",
        RECALL + "RenderPrompt",
        lambda ctx: {
            "agentId": "coder",
            "workspaceId": "acme",
            "persona": "You are a careful coder.",
            "asOfTime": ctx["render"]["renderTime"],
        },
    ),
    Step(
        "card",
        DECISIONS + "RegisterCardType",
        const(
            {
                "cardType": {
                    "name": "trade-decision",
                    "reExaminable": "RE_EXAMINABLE_UNTIL_RESOLVED",
                    "actions": ["HOLD", "CLOSE"],
                }
            }
        ),
    ),
    Step(
        "decide",
        DECISIONS + "RecordDecision",
        const(
            {
                "decision": {
                    "runId": "run-1",
                    "agentId": "coder",
                    "cardType": "trade-decision",
                    "action": "WAIT",
                    "summary": "range unresolved",
                    "result": {"symbol": "ACME", "confidence": 0.4},
                }
            }
        ),
    ),
    Step(
        "decision",
        DECISIONS + "GetDecision",
        lambda ctx: {"decisionId": ctx["decide"]["decision"]["id"]},
    ),
    Step(
        "reexamine",
        DECISIONS + "RecordReexamination",
        lambda ctx: {
            "parentDecisionId": ctx["decide"]["decision"]["id"],
            "runId": "run-2",
            "convictionScore": 60,
            "notes": "Still inside the range.",
            "suggestedAction": "HOLD",
        },
    ),
    Step(
        "reexaminations",
        DECISIONS + "ListReexaminations",
        lambda ctx: {"parentDecisionId": ctx["decide"]["decision"]["id"]},
    ),
    Step(
        "reexamination-prompt",
        DECISIONS + "RenderReexaminationPrompt",
        lambda ctx: {"decisionId": ctx["decide"]["decision"]["id"]},
    ),
    Step(
        "recent",
        DECISIONS + "ListRecentDecisions",
        const({"agentId": "coder", "limit": 5, "includeResult": True}),
    ),
    Step(
        "resolve",
        DECISIONS + "ResolveDecision",
        lambda ctx: {
            "decisionId": ctx["decide"]["decision"]["id"],
            "resolutionStatus": "RESOLUTION_STATUS_RESOLVED",
        },
    ),
    Step(
        "delete-block",
        BLOCKS + "DeleteBlock",
        lambda ctx: {
            "label": "BLOCK_LABEL_CORE",
            "scope": "SCOPE_AGENT",
            "agentId": "coder",
            "expectedUpdatedAt": ctx["rewrite"]["block"]["updatedAt"],
        },
    ),
    Step(
        "delete",
        MEMORY + "DeleteMemory",
        lambda ctx: {"id": ctx["upsert-ws"]["memory"]["id"]},
    ),
    Step("deleted", MEMORY + "GetMemory", lambda ctx: {"id": ctx["upsert-ws"]["memory"]["id"]}),
    Step("forget-dry", MEMORY + "ForgetAgent", const({"agentId": "coder", "validateOnly": True})),
    Step("forget-workspace", MEMORY + "ForgetWorkspace", const({"workspaceId": "acme"})),
    Step("forget-user", MEMORY + "ForgetUser", const({})),
    Step("forget-agent", MEMORY + "ForgetAgent", const({"agentId": "coder"})),
]

ROUTES = routes()
METHODS = {route.grpc_path: route.method for route in ROUTES}


@dataclass
class Answer:
    """What one call answered, transport aside: messages as proto JSON, or a status."""

    messages: list[dict[str, Any]] | None = None
    code: grpc.StatusCode | None = None
    status: dict[str, Any] | None = None

    def first(self) -> dict[str, Any]:
        assert self.messages, f"expected an answer, got {self.code}: {self.status}"
        return self.messages[0]


def request_of(method: str, document: dict[str, Any]) -> Message:
    message: Message = message_factory.GetMessageClass(METHODS[method].input_type)()
    json_format.ParseDict(document, message)
    return message


def call_grpc(client: Client, method: str, request: Message) -> Answer:
    descriptor = METHODS[method]
    response = message_factory.GetMessageClass(descriptor.output_type)
    kwargs: dict[str, Any] = {
        "request_serializer": lambda m: m.SerializeToString(),
        "response_deserializer": response.FromString,
    }
    try:
        if descriptor.server_streaming:
            stream = client.channel.unary_stream(method, **kwargs)
            answers = list(stream(request, metadata=client.metadata, timeout=30))
        else:
            unary = client.channel.unary_unary(method, **kwargs)
            answers = [unary(request, metadata=client.metadata, timeout=30)]
    except grpc.RpcError as error:
        from grpc_status import rpc_status

        status = rpc_status.from_call(error)  # type: ignore[arg-type]
        code = error.code()  # type: ignore[attr-defined]
        return Answer(code=code, status=json_format.MessageToDict(status) if status else None)
    return Answer(messages=[json_format.MessageToDict(a) for a in answers])


def value_at(message: Message, path: str) -> str:
    """A set field's value as a path or query parameter: enums by name."""
    *parents, leaf = path.split(".")
    for part in parents:
        message = getattr(message, part)
    field = message.DESCRIPTOR.fields_by_name[leaf]
    value = getattr(message, leaf)
    if field.type == FieldDescriptor.TYPE_ENUM:
        return str(field.enum_type.values_by_number[value].name)
    return str(value)


def route_for(method: str, request: Message) -> Route:
    """The binding whose path variables the request sets (agent or workspace), the one
    that sets most of them where several do (a workspace's block by its own path)."""
    fitting = [
        route
        for route in ROUTES
        if route.grpc_path == method and all(value_at(request, v) for v in route.variables)
    ]
    if not fitting:
        raise AssertionError(f"no route of {method} fits {request}")
    return max(fitting, key=lambda route: len(route.variables))


def json_path(route: Route, path: str) -> list[str]:
    names = []
    descriptor = route.request
    for part in path.split("."):
        field = descriptor.fields_by_name[part]
        names.append(field.json_name)
        descriptor = field.message_type
    return names


def drop(document: dict[str, Any], names: list[str]) -> None:
    *parents, leaf = names
    for name in parents:
        document = document.get(name, {})
    document.pop(leaf, None)


def query_of(document: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Proto JSON flattened to query parameters: nested names dotted, lists repeated."""
    pairs: list[tuple[str, str]] = []
    for name, value in document.items():
        if isinstance(value, dict):
            pairs.extend(query_of(value, f"{prefix}{name}."))
        elif isinstance(value, list):
            pairs.extend((f"{prefix}{name}", str(item)) for item in value)
        elif isinstance(value, bool):
            pairs.append((f"{prefix}{name}", "true" if value else "false"))
        else:
            pairs.append((f"{prefix}{name}", str(value)))
    return pairs


def http_parts(route: Route, request: Message) -> tuple[str, list[tuple[str, str]], Any]:
    """The path, query and JSON body of ``request`` on ``route``."""
    path = route.template
    for variable in route.variables:
        path = path.replace("{" + variable + "}", quote(value_at(request, variable), safe=""))
    document = json_format.MessageToDict(request)
    for variable in route.variables:
        drop(document, json_path(route, variable))
    if route.body == "*":
        return path, [], document
    if route.body:
        name = route.request.fields_by_name[route.body].json_name
        body = document.pop(name, {})
        return path, query_of(document), body
    return path, query_of(document), None


def call_http(base: str, headers: dict[str, str], method: str, request: Message) -> Answer:
    route = route_for(method, request)
    path, query, body = http_parts(route, request)
    response = httpx.request(
        route.verb.upper(),
        base + path,
        params=query,
        json=body if route.body else None,
        headers=headers,
        timeout=30,
    )
    if response.status_code != 200:
        status = response.json()
        code = next(c for c in grpc.StatusCode if c.value[0] == status["code"])
        assert response.status_code == HTTP_STATUS[code], (response.status_code, status)
        assert response.headers["content-type"] == "application/json"
        return Answer(code=code, status=status)
    descriptor = METHODS[method]
    decode = message_factory.GetMessageClass(descriptor.output_type)
    if descriptor.server_streaming:
        assert response.headers["content-type"] == "application/x-ndjson"
        lines = [line for line in response.text.split("\n") if line]
    else:
        lines = [response.text]
    # Each line must be the response message's JSON: parsing it proves the shape.
    return Answer(
        messages=[json_format.MessageToDict(json_format.Parse(line, decode())) for line in lines]
    )


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_DURATION = re.compile(r"-?\d+(\.\d+)?s")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
# An age inside a line ("1s ago · WAIT · ..."): the two sides ask a second apart.
_AGE = re.compile(r"\b\d+[smhd] ago\b")
# A block's etag carries its write time, to the microsecond.
_BLOCK_ETAG = re.compile(r'(W/"\d+)\.\d+"')


class Normalizer:
    """Replaces what differs between two tenants by nature (ids, times, ages, sealed page
    tokens) with placeholders numbered by first appearance, so equal histories compare
    equal."""

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.ids: dict[str, str] = {}

    def text(self, value: str) -> str:
        if _DURATION.fullmatch(value):
            return "<duration>"
        value = value.replace(self.tenant, "<tenant>")
        value = _UUID.sub(lambda m: self.ids.setdefault(m.group(0), f"<id{len(self.ids)}>"), value)
        value = _BLOCK_ETAG.sub(r'\1.<time>"', value)
        return _AGE.sub("<age> ago", _TIME.sub("<time>", value))

    def __call__(self, value: Any) -> Any:
        if isinstance(value, dict):
            # Each side calls with a key of its own, and gets page tokens sealed for it.
            return {
                k: "<key>"
                if k in ("keyId", "key_id")
                else "<page token>"
                if k in ("nextPageToken", "next_page_token") and v
                else self(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value


def play(call: Callable[[str, Message], Answer]) -> list[tuple[str, Answer]]:
    ctx: Context = {}
    played = []
    for step in SCENARIO:
        answer = call(step.method, request_of(step.method, step.build(ctx)))
        if answer.messages is not None:
            ctx[step.label] = answer.first()
        played.append((step.label, answer))
    return played


@pytest.fixture(scope="module")
def words_server(database_url: str) -> Iterator[ServerThread]:
    """A server that ranks recall by words alone: the same history then answers the
    same whenever the background indexer gets to its lines, and the two transports'
    answers can be compared byte for byte."""
    settings = Settings(http_listen="127.0.0.1:0", embedder="none", expiry_sweep_seconds=3600)
    with ServerThread(database_url, settings=settings) as running:
        yield running


@pytest.fixture
def tenants(words_server: ServerThread) -> Iterator[tuple[Client, dict[str, str], str]]:
    """A gRPC client of one fresh tenant, and the HTTP headers of another."""
    http_tenant = f"tenant-{uuid.uuid4().hex[:10]}"
    key = words_server.new_key(http_tenant, "user-1")
    with words_server.client() as client:
        yield client, {"authorization": f"Bearer {key}"}, http_tenant


def test_the_scenario_plays_every_route() -> None:
    played: set[str] = set()
    for step in SCENARIO:
        played.add(step.method)
    assert played == set(METHODS), "steps missing for: " + ", ".join(set(METHODS) - played)


def test_every_rpc_answers_over_http_as_it_does_over_grpc(
    words_server: ServerThread, tenants: tuple[Client, dict[str, str], str]
) -> None:
    client, headers, http_tenant = tenants
    base = f"http://{words_server.http_address}"
    used: set[str] = set()

    def over_http(method: str, request: Message) -> Answer:
        used.add(route_for(method, request).template + " " + method)
        return call_http(base, headers, method, request)

    over_grpc = play(lambda method, request: call_grpc(client, method, request))
    over_http_played = play(over_http)
    grpc_side, http_side = Normalizer(client.tenant_id), Normalizer(http_tenant)
    for (label, by_grpc), (_, by_http) in zip(over_grpc, over_http_played, strict=True):
        assert by_http.code == by_grpc.code, label
        assert http_side(by_http.status) == grpc_side(by_grpc.status), label
        assert http_side(by_http.messages) == grpc_side(by_grpc.messages), label
    every = {f"{route.template} {route.grpc_path}" for route in ROUTES}
    assert used == every, "routes not played: " + ", ".join(sorted(every - used))
    # The scenario does reach the outcomes it means to: not all errors, not all fine.
    outcomes = {label: answer.code for label, answer in over_http_played}
    assert outcomes["bad-upsert"] is grpc.StatusCode.INVALID_ARGUMENT
    assert outcomes["secret"] is grpc.StatusCode.INVALID_ARGUMENT
    assert outcomes["get-missing"] is grpc.StatusCode.NOT_FOUND
    assert outcomes["update-auto"] is grpc.StatusCode.FAILED_PRECONDITION
    assert outcomes["stale-write"] is grpc.StatusCode.ABORTED
    assert outcomes["deleted"] is grpc.StatusCode.NOT_FOUND
    assert outcomes["memorize-past-end"] is grpc.StatusCode.INVALID_ARGUMENT
    assert outcomes["conversation-missing"] is grpc.StatusCode.NOT_FOUND
    assert outcomes["conversations-bad-token"] is grpc.StatusCode.INVALID_ARGUMENT
    assert outcomes["job-missing"] is grpc.StatusCode.NOT_FOUND
    failed = {label for label, code in outcomes.items() if code is not None}
    assert failed == {
        "bad-upsert",
        "secret",
        "get-missing",
        "update-auto",
        "stale-write",
        "deleted",
        "memorize-past-end",
        "conversation-missing",
        "conversations-bad-token",
        "job-missing",
    }
    answers = dict(over_http_played)
    assert answers["forget-dry"].messages == answers["forget-agent"].messages
    assert int(answers["forget-agent"].messages[0]["removed"]["memories"]) > 0
    (run,) = answers["runs"].messages[0]["runs"]
    assert run["renderTime"] == "2025-06-01T09:30:00.123456Z"
    render, then = answers["render"].first(), answers["render-then"].first()
    assert (then["systemPrompt"], then["renderTime"]) == (
        render["systemPrompt"],
        render["renderTime"],
    )
    recalled = answers["recall"].messages
    assert recalled
    assert any("deploy" in line["content"] for line in recalled)


def post(server: ServerThread, path: str, headers: dict[str, str], **kw: Any) -> httpx.Response:
    return httpx.post(f"http://{server.http_address}{path}", headers=headers, timeout=30, **kw)


def get(server: ServerThread, path: str, headers: dict[str, str], **kw: Any) -> httpx.Response:
    return httpx.get(f"http://{server.http_address}{path}", headers=headers, timeout=30, **kw)


def bearer(server: ServerThread, role: str = "orchestrator", tenant: str = "") -> dict[str, str]:
    key = server.new_key(tenant or f"tenant-{uuid.uuid4().hex[:10]}", "user-1", role)
    return {"authorization": f"Bearer {key}"}


def reason(response: httpx.Response) -> str:
    infos = [d for d in response.json()["details"] if d["@type"].endswith("ErrorInfo")]
    assert len(infos) == 1, response.text
    return str(infos[0]["reason"])


def test_without_a_key_every_route_is_401_with_the_reason(server: ServerThread) -> None:
    for route in ROUTES:
        path = re.sub(r"\{[^}]+\}", "x", route.template)
        response = httpx.request(route.verb.upper(), f"http://{server.http_address}{path}")
        assert response.status_code == 401, (route.template, response.text)
        assert response.json()["code"] == grpc.StatusCode.UNAUTHENTICATED.value[0]
        assert reason(response) == "MISSING_CREDENTIALS"


def test_a_wrong_key_is_401(server: ServerThread) -> None:
    response = get(server, "/v1/agents/coder/memories", {"authorization": "Bearer nope"})
    assert response.status_code == 401
    assert response.json()["code"] == grpc.StatusCode.UNAUTHENTICATED.value[0]


def test_a_reader_key_reads_and_is_refused_writes_with_403(server: ServerThread) -> None:
    reader = bearer(server, "reader")
    assert get(server, "/v1/agents/coder/memories", reader).status_code == 200
    refused = post(server, "/v1/agents/coder/memories", reader, json={"key": "k", "value": "v"})
    assert refused.status_code == 403
    assert reason(refused) == "ROLE_FORBIDS"
    info = next(d for d in refused.json()["details"] if d["@type"].endswith("ErrorInfo"))
    assert info["metadata"] == {"role": "reader", "required_role": "editor"}


def test_tenants_never_see_each_other_over_http(server: ServerThread) -> None:
    mine, theirs = bearer(server), bearer(server)
    created = post(
        server, "/v1/agents/coder/memories", mine, json={"key": "k", "value": "mine only"}
    )
    memory_id = created.json()["memory"]["id"]
    assert get(server, f"/v1/memories/{memory_id}", theirs).status_code == 404
    assert get(server, "/v1/agents/coder/memories", theirs).json() == {"totalSize": 0}
    deleted = httpx.delete(f"http://{server.http_address}/v1/memories/{memory_id}", headers=theirs)
    assert deleted.status_code == 404
    assert get(server, f"/v1/memories/{memory_id}", mine).status_code == 200


def test_a_block_conflict_is_409_with_the_block_as_it_is(server: ServerThread) -> None:
    headers = bearer(server)
    block = {"scope": "SCOPE_USER", "content": "first"}
    first = post(server, "/v1/blocks/BLOCK_LABEL_CORE:write", headers, json=block)
    assert first.status_code == 200, first.text
    again = post(server, "/v1/blocks/BLOCK_LABEL_CORE:write", headers, json=block)
    assert again.status_code == 409
    assert reason(again) == "BLOCK_CONFLICT"
    info = next(d for d in again.json()["details"] if d["@type"].endswith("ErrorInfo"))
    assert info["metadata"]["exists"] == "true"
    assert info["metadata"]["current_version"] == "1"


@pytest.mark.parametrize(
    ("verb", "path", "body", "status", "field"),
    [
        ("post", "/v1/agents/coder/memories", b"{not json", 400, "body"),
        ("post", "/v1/agents/coder/memories", b'{"key": "k", "valu": "x"}', 400, "body"),
        ("post", "/v1/agents/coder/memories", b'{"key": "k", "importance": "high"}', 400, "body"),
        ("get", "/v1/agents/coder/memories?pageSize=ten", None, 400, "pageSize"),
        ("get", "/v1/agents/coder/memories?colour=red", None, 400, "colour"),
        # Not UTF-8: the parameter is named, the bytes not replaced.
        ("get", "/v1/agents/coder/memories?pageToken=%ff", None, 400, "pageToken"),
        ("get", "/v1/agents/coder/memories?%ff=1", None, 400, "query"),
        ("get", "/v1/agents/coder/memories?pageSize=1&pageSize=2", None, 400, "pageSize"),
        ("get", "/v1/agents/coder/memories?owner.agentId=other", None, 400, "owner.agentId"),
        ("post", "/v1/recall?limit=3", b'{"query": "q", "agentId": "a"}', 400, "limit"),
        ("get", "/v1/blocks/BLOCK_LABEL_NOPE?scope=SCOPE_USER", None, 400, "label"),
        # An enum by number: the document names its values.
        ("get", "/v1/blocks?agentId=a&scopeFilter=7", None, 400, "scope_filter"),
        ("get", "/v1/blocks?agentId=a&scopeFilter=1", None, 400, "scope_filter"),
        ("post", "/v1/agents/coder/memories", b'{"key": "k", "source": 1}', 400, "body"),
        # null is no value of a field: leave it out.
        ("post", "/v1/agents/coder/memories", b'{"key": "k", "pinned": null}', 400, "body"),
        ("get", "/v1/memories/some-id", b'{"id": "x"}', 400, "body"),
        # Ids the contract declares UUIDs, as the same request check refuses over gRPC.
        ("get", "/v1/memories/some-id", None, 400, "id"),
        ("get", "/v1/memories/0123456789abcdef0123456789abcdef", None, 400, "id"),
        (
            "post",
            "/v1/agents/a/memories:memorize",
            b'{"content": "c", "supersedes": ["x"]}',
            400,
            "supersedes[0]",
        ),
    ],
)
def test_a_malformed_http_request_is_400_naming_what_is_wrong(
    server: ServerThread, verb: str, path: str, body: bytes | None, status: int, field: str
) -> None:
    response = httpx.request(
        verb.upper(),
        f"http://{server.http_address}{path}",
        content=body,
        headers={**bearer(server), "content-type": "application/json"},
    )
    assert response.status_code == status, response.text
    payload = response.json()
    assert payload["code"] == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    bad = next(d for d in payload["details"] if d["@type"].endswith("BadRequest"))
    assert field in {v["field"] for v in bad["fieldViolations"]}, payload


def test_an_unknown_route_is_404_and_a_wrong_verb_405_with_allow(server: ServerThread) -> None:
    headers = bearer(server)
    missing = get(server, "/v1/nothing/here", headers)
    assert missing.status_code == 404
    assert reason(missing) == "NO_ROUTE"
    # The path quoted as it was sent: a break it holds does not vanish from it.
    broken = get(server, "/v1/nothing%0A/here", headers)
    assert broken.json()["message"] == "no route for GET /v1/nothing%0A/here"
    wrong = httpx.put(f"http://{server.http_address}/v1/recall", headers=headers)
    assert wrong.status_code == 405
    assert wrong.headers["allow"] == "POST"
    assert reason(wrong) == "METHOD_NOT_ALLOWED"
    # A custom verb's path is that route's, not a memory id that ends in ":pin".
    verb = get(server, f"/v1/memories/{NOT_A_MEMORY}:pin", headers)
    assert verb.status_code == 405
    assert verb.headers["allow"] == "POST"
    # Beyond the API's routes too, the refusal is a Status in JSON.
    for path in ("/nothing", "/panel/nothing.js", "/v2/memories"):
        elsewhere = get(server, path, headers)
        assert elsewhere.status_code == 404, path
        assert elsewhere.headers["content-type"] == "application/json"
        assert reason(elsewhere) == "NO_ROUTE"
    health = httpx.post(f"http://{server.http_address}/healthz")
    assert health.status_code == 405
    assert health.headers["content-type"] == "application/json"
    assert health.headers["allow"] == "GET, HEAD"
    assert reason(health) == "METHOD_NOT_ALLOWED"


def test_a_body_or_message_over_the_limits_is_413(database_url: str) -> None:
    settings = Settings(http_listen="127.0.0.1:0", max_message_bytes=64 * 1024)
    with ServerThread(database_url, settings=settings) as small:
        headers = bearer(small)
        url = f"http://{small.http_address}/v1/agents/coder/memories"
        huge = httpx.post(url, headers=headers, content=b" " * (300 * 1024))
        assert huge.status_code == 413
        assert reason(huge) == "MESSAGE_TOO_LARGE"
        # Within the body limit, but a message larger than gRPC would take.
        big = httpx.post(url, headers=headers, json={"key": "k", "value": "v" * 70_000})
        assert big.status_code == 413
        assert big.json()["code"] == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]


def test_path_values_are_percent_decoded(server: ServerThread) -> None:
    headers = bearer(server)
    agent = "team alpha:bot"
    path = f"/v1/agents/{quote(agent, safe='')}/memories"
    created = post(server, path, headers, json={"key": "k", "value": "v"})
    assert created.status_code == 200, created.text
    assert created.json()["memory"]["agentId"] == agent
    listed = get(server, path, headers)
    assert [m["agentId"] for m in listed.json()["memories"]] == [agent]


def test_recall_streams_one_response_per_line(server: ServerThread) -> None:
    headers = bearer(server)
    for key, value in [("a", "deploy on friday"), ("b", "deploy with care"), ("c", "lunch")]:
        post(server, "/v1/agents/coder/memories", headers, json={"key": key, "value": value})
    body = {"query": "deploy", "agentId": "coder", "includeMemories": True}
    with httpx.stream(
        "POST", f"http://{server.http_address}/v1/recall", headers=headers, json=body
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/x-ndjson"
        lines = [json.loads(line) for line in response.iter_lines() if line]
    assert len(lines) == 2
    assert all("deploy" in line["content"] for line in lines)
    assert lines[0]["score"] >= lines[1]["score"]
    # A caller that accepts JSON and not NDJSON gets the same answers as one array (their
    # scores may move as the index catches up between the two calls).
    whole = post(server, "/v1/recall", {**headers, "accept": "application/json"}, json=body)
    assert whole.status_code == 200, whole.text
    assert whole.headers["content-type"] == "application/json"
    assert sorted(item["content"] for item in whole.json()) == sorted(
        line["content"] for line in lines
    )
    # ... and a failure as its status, as any call's.
    refused = post(
        server, "/v1/recall", {**headers, "accept": "application/json"}, json={"query": "q"}
    )
    assert refused.status_code == 400
    assert refused.headers["content-type"] == "application/json"


def test_the_local_mode_takes_the_caller_from_headers(database_url: str) -> None:
    settings = Settings(http_listen="127.0.0.1:0", insecure_local=True)
    tenant = f"tenant-{uuid.uuid4().hex[:10]}"
    with ServerThread(database_url, settings=settings) as local:
        mine = {"x-tenant-id": tenant, "x-user-id": "ann"}
        post(local, "/v1/agents/coder/memories", mine, json={"key": "k", "value": "v"})
        assert len(get(local, "/v1/agents/coder/memories", mine).json()["memories"]) == 1
        other = {"x-tenant-id": f"{tenant}-other", "x-user-id": "ann"}
        assert get(local, "/v1/agents/coder/memories", other).json() == {"totalSize": 0}


def test_healthz_answers_while_the_database_does(server: ServerThread) -> None:
    response = httpx.get(f"http://{server.http_address}/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "SERVING"}


def test_the_openapi_document_is_served(server: ServerThread) -> None:
    response = httpx.get(f"http://{server.http_address}/v1/openapi.json")
    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.1")
    assert "/v1/recall" in document["paths"]


def test_the_command_serves_http_next_to_grpc_and_stops_cleanly(database_url: str) -> None:
    served = ServeProcess(
        "--database-url", database_url, "--insecure-local", "--http-listen", "127.0.0.1:0"
    )
    try:
        lines = served.log().splitlines()
        http_line = next(line for line in lines if "agent-memory http on" in line)
        # The serving line stays as it was, and comes once HTTP answers too.
        assert lines.index(http_line) < next(
            i for i, line in enumerate(lines) if "agent-memory serving on" in line
        )
        base = "http://" + http_line.rsplit(" on ", 1)[1].split()[0]
        page = httpx.get(base + "/", timeout=10)
        assert page.status_code == 200
        assert "<title>" in page.text
        tenant = {"x-tenant-id": f"tenant-{uuid.uuid4().hex[:10]}"}
        made = httpx.post(
            base + "/v1/agents/coder/memories",
            headers=tenant,
            json={"key": "k", "value": "v"},
            timeout=10,
        )
        assert made.status_code == 200, made.text
    finally:
        assert served.terminate() == 0, served.log()


def test_a_caller_without_a_key_is_refused_before_its_body_is_read(server: ServerThread) -> None:
    url = f"http://{server.http_address}/v1/agents/coder/memories"
    # Over every limit and not JSON: still only "who are you?".
    response = httpx.post(url, content=b"[" * (20 * 1024 * 1024))
    assert response.status_code == 401
    assert reason(response) == "MISSING_CREDENTIALS"
    # A key, and a length over the limit: refused on the header, before any byte.
    host, port = server.http_address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        raw.sendall(
            b"POST /v1/agents/coder/memories HTTP/1.1\r\nhost: x\r\n"
            + f"authorization: {bearer(server)['authorization']}\r\n".encode()
            + f"content-length: {1 << 30}\r\n\r\n".encode()
        )
        status_line = raw.recv(4096).split(b"\r\n", 1)[0]
    assert status_line == b"HTTP/1.1 413 Request Entity Too Large"


@pytest.mark.parametrize("segment", ["a%0Ab", "a%09b", "a%0Db", "a%E2%80%A8b"])
def test_a_line_break_in_a_path_segment_is_refused_for_its_field(
    server: ServerThread, segment: str
) -> None:
    """Not a 404 for a path whose break vanished from what the server read of it."""
    response = get(server, f"/v1/agents/{segment}/memories", bearer(server))
    assert response.status_code == 400, response.text
    bad = next(d for d in response.json()["details"] if d["@type"].endswith("BadRequest"))
    (violation,) = bad["fieldViolations"]
    assert violation["field"] == "owner.agent_id"
    assert "must not contain control characters" in violation["description"]


@pytest.mark.parametrize(
    "head",
    [
        b"GET /v1/agents/coder/memories HTTP/1.1\r\n\r\n",  # no Host
        b"POST /v1/recall HTTP/1.1\r\nhost: x\r\ncontent-length: ten\r\n\r\n",
        b"POST /v1/recall HTTP/1.1\r\nhost: x\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n",
    ],
)
def test_a_request_http_refuses_is_answered_with_a_status(
    server: ServerThread, head: bytes
) -> None:
    host, port = server.http_address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        raw.sendall(head)
        answer = b""
        while chunk := raw.recv(4096):
            answer += chunk
    status_line, rest = answer.split(b"\r\n", 1)
    headers, body = rest.split(b"\r\n\r\n", 1)
    assert status_line == b"HTTP/1.1 400 Bad Request"
    assert b"content-type: application/json" in headers.lower()
    payload = json.loads(body)
    assert payload["code"] == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert payload["message"].startswith("not a valid HTTP/1.1 request")
    assert [d["reason"] for d in payload["details"]] == ["BAD_REQUEST"]


def test_a_time_in_a_query_with_an_offset_no_zone_has_is_refused(server: ServerThread) -> None:
    response = get(
        server,
        "/v1/agents/coder/memories",
        bearer(server),
        params={"asOfTime": "2026-01-01T00:00:00+24:00"},
    )
    assert response.status_code == 400, response.text
    bad = next(d for d in response.json()["details"] if d["@type"].endswith("BadRequest"))
    described = " ".join(v["description"] for v in bad["fieldViolations"])
    assert "must be an RFC 3339 time with its zone" in described, response.text


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "not JSON: nested too deeply"),
        (b'{"key": "k\xff"}', "not JSON: not UTF-8"),
        (b'{"key": "k", "value": "v", "importance": 1' + b"1" * 5000 + b"}", "not JSON"),
        (b'"just a string"', "must be a JSON object"),
        (b"[1, 2]", "must be a JSON object"),
        # Which of two values would win is the parser's accident: neither is taken.
        (b'{"key": "k", "value": "v", "value": "w"}', "the key 'value' is given twice"),
        (b'{"key": "k", "owner": {"agentId": "coder", "agentId": "x"}, "value": "v"}', "twice"),
        # What the field takes, in the contract's words, never the parser's internals.
        (
            b'{"key": "k", "value": "v", "expireTime": "2026-04"}',
            "expireTime: must be an RFC 3339 time with its zone",
        ),
        # An offset RFC 3339 has no such hour or minute in: not a time moved by it.
        (
            b'{"key": "k", "value": "v", "expireTime": "2030-04-01T09:00:00+99:99"}',
            "expireTime: must be an RFC 3339 time with its zone",
        ),
        (b'{"key": "k", "value": "v", "importance": "high"}', "importance: must be a whole number"),
        # The document says a number: one in quotes is refused, saying so.
        (
            b'{"key": "k", "value": "v", "importance": "50"}',
            "importance: must be a whole number from -2147483648 to 2147483647, written as a "
            "JSON number, not a string",
        ),
        # A message is an object: not a string whose characters would be read as field
        # names, nor an empty list or string read as an empty message.
        (b'{"key": "k", "value": "v", "owner": "coder"}', "owner: must be a JSON object"),
        (b'{"key": "k", "value": "v", "owner": []}', "owner: must be a JSON object"),
        (b'{"key": "k", "value": "v", "pinned": "yes"}', "pinned: must be true or false"),
    ],
)
def test_a_body_the_parser_cannot_take_is_400_not_500(
    server: ServerThread, body: bytes, problem: str
) -> None:
    headers = {**bearer(server), "content-type": "application/json"}
    response = post(server, "/v1/agents/coder/memories", headers, content=body)
    assert response.status_code == 400, response.text
    bad = next(d for d in response.json()["details"] if d["@type"].endswith("BadRequest"))
    assert [v["field"] for v in bad["fieldViolations"]] == ["body"]
    assert problem in bad["fieldViolations"][0]["description"]
    for internal in ("int()", "time data", "literal", "does not match format"):
        assert internal not in response.text


def violations(response: httpx.Response) -> list[tuple[str, str]]:
    bad = next(d for d in response.json()["details"] if d["@type"].endswith("BadRequest"))
    return [(v["field"], v["description"]) for v in bad["fieldViolations"]]


@pytest.mark.parametrize(
    ("path", "body", "said"),
    [
        # An enum, a string, a nested string, a key at the top and deeper: each named.
        (
            "/v1/agents/coder/memories",
            rb'{"key": "s", "value": "v", "source": "\ud800"}',
            "source: is not valid Unicode: it holds the lone surrogate U+D800",
        ),
        (
            "/v1/agents/coder/memories",
            rb'{"key": "s", "value": "\udc00 trailing"}',
            "value: is not valid Unicode: it holds the lone surrogate U+DC00",
        ),
        (
            "/v1/agents/coder/memories",
            rb'{"key": "s", "value": "v", "\ud800": 1}',
            'has a key, "\\ud800", that is not valid Unicode',
        ),
        (
            "/v1/agents/coder/memories:memorize",
            rb'{"content": "c", "conversation": {"messages": [{"role": "user", "\udbff": "x"}]}}',
            'conversation.messages[0]: has a key, "\\udbff", that is not valid Unicode',
        ),
        (
            "/v1/agents/coder/memories:memorize",
            rb'{"content": "c", "tags": ["ok", "\ud83d"]}',
            "tags[1]: is not valid Unicode",
        ),
        (
            "/v1/agents/coder:renderPrompt",
            rb'{"memoryPolicy": "\ud800"}',
            "memoryPolicy: is not valid Unicode: it holds the lone surrogate U+D800",
        ),
        # A body that is one field of the request: named by that field.
        (
            "/v1/agents/coder/settings",
            rb'{"\ud800": true}',
            'settings: has a key, "\\ud800", that is not valid Unicode',
        ),
    ],
)
def test_text_that_is_not_unicode_is_400_naming_where_it_is(
    server: ServerThread, path: str, body: bytes, said: str
) -> None:
    headers = {**bearer(server), "content-type": "application/json"}
    verb = "PATCH" if path.endswith("/settings") else "POST"
    response = httpx.request(
        verb, f"http://{server.http_address}{path}", headers=headers, content=body, timeout=30
    )
    assert response.status_code == 400, response.text
    assert response.json()["code"] == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    [(field, description)] = violations(response)
    assert field == "body"
    assert said in description, description


def test_every_route_with_a_body_refuses_a_lone_surrogate_with_400(server: ServerThread) -> None:
    headers = {**bearer(server), "content-type": "application/json"}
    with_body = [route for route in ROUTES if route.body]
    assert len(with_body) > 10
    for route in with_body:
        path = re.sub(r"\{[^}]+\}", "x", route.template)
        for body in (rb'{"\ud800": 1}', rb'{"a": ["\udfff"]}'):
            response = httpx.request(
                route.verb.upper(),
                f"http://{server.http_address}{path}",
                headers=headers,
                content=body,
                timeout=30,
            )
            assert response.status_code == 400, (route.template, response.text)
            assert "lone surrogate" in response.text, (route.template, response.text)
    # A pair of escapes is one character past U+FFFF: taken, and stored as it.
    made = post(
        server,
        "/v1/agents/coder/memories",
        headers,
        content=rb'{"key": "smile", "value": "fine \ud83d\ude00"}',
    )
    assert made.status_code == 200, made.text
    assert made.json()["memory"]["value"] == "fine \U0001f600"


@pytest.mark.parametrize(
    ("path", "body", "said"),
    [
        ("/v1/agents/coder:renderPrompt", {"memoryPolicy": "archival"}, "memoryPolicy"),
        ("/v1/agents/coder:renderPrompt", {"memoryPolicy": ["ab"]}, "memoryPolicy"),
        ("/v1/agents/coder:renderPrompt", {"memoryPolicy": []}, "memoryPolicy"),
        ("/v1/agents/coder:renderPrompt", {"memoryPolicy": ""}, "memoryPolicy"),
        (
            "/v1/agents/coder/memories:memorize",
            {"content": "c", "conversation": []},
            "conversation",
        ),
        ("/v1/agents/coder/memories:memorize", {"content": "c", "metadata": "x"}, "metadata"),
        (
            "/v1/agents/coder/memories:memorize",
            {"content": "c", "conversation": {"messages": ["hi"]}},
            "conversation.messages[0]",
        ),
    ],
)
def test_a_message_given_as_anything_but_an_object_is_400(
    server: ServerThread, path: str, body: Any, said: str
) -> None:
    response = post(server, path, bearer(server), json=body)
    assert response.status_code == 400, response.text
    assert violations(response) == [("body", f"{said}: must be a JSON object")]


def test_a_repeated_message_given_as_one_object_is_400_asking_for_a_list(
    server: ServerThread,
) -> None:
    body = {"content": "c", "groundings": {"messagePosition": 0}}
    response = post(server, "/v1/agents/coder/memories:memorize", bearer(server), json=body)
    assert response.status_code == 400, response.text
    assert violations(response) == [
        ("body", "groundings: must be a list; each item must be a JSON object")
    ]


@pytest.mark.parametrize("segment", ["%2e%2e", "%2E", "a%2Fb", "%2F"])
def test_an_agent_id_that_is_a_path_of_its_own_is_400(server: ServerThread, segment: str) -> None:
    # Decoded, these are "..", ".", "a/b" and "/": no agent may be named so, however a
    # client encodes it.
    path = f"/v1/agents/{segment}/memories"
    key = bearer(server)
    for response in (
        get(server, path, key),
        post(server, path, key, json={"key": "k", "value": "v"}),
    ):
        assert response.status_code == 400, response.text
        bad = next(d for d in response.json()["details"] if d["@type"].endswith("BadRequest"))
        assert bad["fieldViolations"][0]["field"].endswith("agent_id")
        assert "'/'" in bad["fieldViolations"][0]["description"]


def test_a_path_that_is_not_utf8_is_400(server: ServerThread) -> None:
    response = get(server, "/v1/agents/a%FF/memories", bearer(server))
    assert response.status_code == 400
    bad = next(d for d in response.json()["details"] if d["@type"].endswith("BadRequest"))
    assert bad["fieldViolations"][0]["field"] == "owner.agent_id"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/agents/coder/memories", {"owner": {"workspaceId": "acme"}, "key": "k", "value": "v"}),
        ("/v1/agents/coder/memories", {"owner": {"agentId": "other"}, "key": "k", "value": "v"}),
    ],
)
def test_a_path_that_contradicts_the_body_is_400(
    server: ServerThread, path: str, body: dict[str, Any]
) -> None:
    headers = bearer(server)
    response = post(server, path, headers, json=body)
    assert response.status_code == 400, response.text
    assert get(server, path, headers).json() == {"totalSize": 0}


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "https://evil.example"},
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},
        {"origin": "null"},
    ],
)
def test_a_request_from_another_site_s_page_is_refused(
    server: ServerThread, headers: dict[str, str]
) -> None:
    key = bearer(server)
    response = post(
        server,
        "/v1/agents/coder/memories",
        {**key, **headers, "content-type": "text/plain"},
        content=b'{"key": "k", "value": "planted"}',
    )
    assert response.status_code == 403
    assert reason(response) == "CROSS_ORIGIN"
    assert get(server, "/v1/agents/coder/memories", key).json() == {"totalSize": 0}


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/xml",
        "application/jsonp",
        "",
    ],
)
def test_a_body_of_another_media_type_than_json_is_415(
    server: ServerThread, content_type: str
) -> None:
    key = bearer(server)
    response = post(
        server,
        "/v1/agents/coder/memories",
        {**key, "content-type": content_type},
        content=b'{"key": "k", "value": "v"}',
    )
    assert response.status_code == 415, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json()["code"] == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert reason(response) == "UNSUPPORTED_MEDIA_TYPE"
    assert "Content-Type: application/json" in response.json()["message"]
    assert response.headers["cache-control"] == "no-store"
    assert get(server, "/v1/agents/coder/memories", key).json() == {"totalSize": 0}


@pytest.mark.parametrize("coding", ["gzip", "br"])
def test_a_compressed_body_is_415_not_read_as_it_came(server: ServerThread, coding: str) -> None:
    """Read as sent, gzip is no UTF-8, and a plain body labelled br would be taken."""
    key = bearer(server)
    plain = b'{"key": "k", "value": "v"}'
    response = post(
        server,
        "/v1/agents/coder/memories",
        {**key, "content-type": "application/json", "content-encoding": coding},
        content=gzip.compress(plain) if coding == "gzip" else plain,
    )
    assert response.status_code == 415, response.text
    assert reason(response) == "UNSUPPORTED_MEDIA_TYPE"
    assert f"Content-Encoding {coding}: send it uncompressed" in response.json()["message"]
    assert get(server, "/v1/agents/coder/memories", key).json() == {"totalSize": 0}


def test_json_of_any_spelling_or_without_a_content_type_is_read(server: ServerThread) -> None:
    key = bearer(server)
    for i, content_type in enumerate(
        [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON;charset=UTF-8",
            "application/merge-patch+json",
            None,
        ]
    ):
        headers = key if content_type is None else {**key, "content-type": content_type}
        body = json.dumps({"key": f"k{i}", "value": "v"}).encode()
        made = post(server, "/v1/agents/coder/memories", headers, content=body)
        assert made.status_code == 200, (content_type, made.text)
    # No body, whatever its type says: nothing to read, the call as with an empty one.
    bare = post(server, "/v1/agents/coder:renderPrompt", {**key, "content-type": "text/plain"})
    assert bare.status_code == 200, bare.text
    # Who calls comes first: a caller without a key learns nothing of the body's type.
    unknown = post(
        server, "/v1/agents/coder/memories", {"content-type": "text/plain"}, content=b"{}"
    )
    assert unknown.status_code == 401


def test_every_refusal_of_the_api_is_neither_cached_nor_sniffed(server: ServerThread) -> None:
    key = bearer(server)
    base = f"http://{server.http_address}"
    refusals = {
        403: httpx.get(f"{base}/v1/agents/coder/memories", headers={**key, "origin": "null"}),
        401: httpx.get(f"{base}/v1/agents/coder/memories"),
        404: httpx.get(f"{base}/v1/nowhere", headers=key),
        405: httpx.put(f"{base}/v1/recall", headers=key),
        400: httpx.post(f"{base}/v1/agents/coder/memories", headers=key, json={"key": 1}),
        415: httpx.post(
            f"{base}/v1/recall", headers={**key, "content-type": "text/plain"}, content=b"{}"
        ),
    }
    for status, response in refusals.items():
        assert response.status_code == status, response.text
        assert response.headers["content-type"] == "application/json", status
        assert response.headers["cache-control"] == "no-store", status
        assert response.headers["x-content-type-options"] == "nosniff", status


def test_an_origin_of_another_scheme_on_the_same_host_is_another_site(
    server: ServerThread,
) -> None:
    # This server speaks plain HTTP: a page served over HTTPS (or any other scheme) at
    # the same host and port is not its own.
    for origin in (f"https://{server.http_address}", f"ftp://{server.http_address}"):
        headers = {**bearer(server), "origin": origin}
        response = get(server, "/v1/agents/coder/memories", headers)
        assert response.status_code == 403, origin
        assert reason(response) == "CROSS_ORIGIN"
    upper = {**bearer(server), "origin": f"HTTP://{server.http_address.upper()}"}
    assert get(server, "/v1/agents/coder/memories", upper).status_code == 200


def test_the_local_mode_answers_only_requests_for_a_loopback_name(database_url: str) -> None:
    settings = Settings(http_listen="127.0.0.1:0", insecure_local=True)
    with ServerThread(database_url, settings=settings) as local:
        url = f"http://{local.http_address}/v1/agents/coder/memories"
        # A page of attacker.example whose name now resolves to 127.0.0.1.
        rebound = httpx.get(url, headers={"host": "attacker.example"})
        assert rebound.status_code == 403
        assert reason(rebound) == "CROSS_ORIGIN"
        port = local.http_address.rsplit(":", 1)[1]
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost"):
            assert httpx.get(url, headers={"host": host}).status_code == 200, host


def test_same_origin_pages_and_plain_clients_are_let_through(server: ServerThread) -> None:
    headers = {**bearer(server), "origin": f"http://{server.http_address}"}
    assert get(server, "/v1/agents/coder/memories", headers).status_code == 200
    same = {**bearer(server), "sec-fetch-site": "same-origin"}
    assert get(server, "/v1/agents/coder/memories", same).status_code == 200


def test_head_answers_as_get_without_a_body_and_options_is_405(server: ServerThread) -> None:
    headers = bearer(server)
    head = httpx.head(f"http://{server.http_address}/v1/agents/coder/memories", headers=headers)
    assert head.status_code == 200
    assert head.content == b""
    options = httpx.options(f"http://{server.http_address}/v1/recall", headers=headers)
    assert options.status_code == 405
    assert reason(options) == "METHOD_NOT_ALLOWED"
    # OPTIONS is not served, so no Allow header lists it.
    assert options.headers["allow"] == "POST"


def request_as_sent(
    server: ServerThread, method: str, path: str, headers: dict[str, str]
) -> tuple[int, dict[str, str], bytes]:
    """One request with its method exactly as given (``get`` stays lower case, as httpx
    would not leave it): the status, the headers by lower-case name, and the body."""
    connection = http.client.HTTPConnection(server.http_address, timeout=30)
    try:
        connection.request(method, path, headers=headers)
        response = connection.getresponse()
        return (
            response.status,
            {name.lower(): value for name, value in response.getheaders()},
            response.read(),
        )
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/v1/caller", "GET, HEAD"),
        ("/v1/agents/coder/memories", "GET, HEAD, POST"),
        (f"/v1/memories/{NOT_A_MEMORY}", "DELETE, GET, HEAD, PATCH"),
        ("/v1/recall", "POST"),
        # The document beside the API's routes answers for its own path.
        ("/v1/openapi.json", "GET, HEAD"),
    ],
)
def test_a_method_a_path_does_not_take_is_405_naming_exactly_the_ones_it_does(
    server: ServerThread, path: str, allowed: str
) -> None:
    headers = bearer(server)
    taken = set(allowed.split(", "))
    # Methods are case-sensitive (RFC 9110): "get" is a method no route takes.
    for method in ("TRACE", "FOO", "get", "OPTIONS", "PUT", "PATCH", "DELETE", "POST"):
        if method in taken:
            continue
        status, answered, body = request_as_sent(server, method, path, headers)
        assert status == 405, (method, path, body)
        assert answered["allow"] == allowed, (method, path)
        assert answered["content-type"] == "application/json"
        refused = json.loads(body)
        assert refused["code"] == grpc.StatusCode.UNIMPLEMENTED.value[0]
        assert f"allowed: {allowed}" in refused["message"]
    # What Allow lists is served: HEAD as GET is, without the body.
    if "GET" in taken:
        got, _, body = request_as_sent(server, "GET", path, headers)
        head, _, nothing = request_as_sent(server, "HEAD", path, headers)
        assert head == got
        assert nothing == b""


def test_a_path_no_route_has_is_404_whatever_the_method(server: ServerThread) -> None:
    headers = bearer(server)
    for method in ("GET", "PUT", "FOO", "TRACE", "get", "OPTIONS"):
        for path in ("/v1/nope", "/v1/caller/more", "/v2/caller"):
            status, answered, body = request_as_sent(server, method, path, headers)
            assert status == 404, (method, path, body)
            assert "allow" not in answered, (method, path)
            details = json.loads(body)["details"]
            infos = [d for d in details if d["@type"].endswith("ErrorInfo")]
            assert [info["reason"] for info in infos] == ["NO_ROUTE"], (method, path)


def test_answers_are_not_cached_and_bools_read_in_any_case(
    server: ServerThread,
) -> None:
    headers = bearer(server)
    response = get(server, "/v1/agents/coder/decisions?includeResult=True", headers)
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-content-type-options"] == "nosniff"


def test_an_action_whose_fields_are_all_optional_takes_no_body(server: ServerThread) -> None:
    headers = bearer(server)
    document = get(server, "/v1/openapi.json", headers).json()
    calls = [
        (
            "POST",
            "/v1/agents/coder/activeSession:reset",
            "/v1/agents/{agent_id}/activeSession:reset",
        ),
        ("POST", "/v1/agents/coder:forget", "/v1/agents/{agent_id}:forget"),
        ("POST", "/v1/workspaces/acme:forget", "/v1/workspaces/{workspace_id}:forget"),
        ("POST", "/v1/user:forget", "/v1/user:forget"),
        ("POST", "/v1/agents/coder:renderPrompt", "/v1/agents/{agent_id}:renderPrompt"),
        ("PATCH", "/v1/agents/coder/settings", "/v1/agents/{agent_id}/settings"),
    ]
    for verb, path, documented in calls:
        # The document says the body may be left out ...
        body = document["paths"][documented][verb.lower()]["requestBody"]
        assert body["required"] is False, documented
        # ... and the server takes the call without one, as with an empty object.
        bare = httpx.request(verb, f"http://{server.http_address}{path}", headers=headers)
        assert bare.status_code == 200, (path, bare.text)
        empty = httpx.request(verb, f"http://{server.http_address}{path}", headers=headers, json={})
        assert empty.status_code == 200, (path, empty.text)
    # A body with a required field is documented as required.
    upsert = document["paths"]["/v1/agents/{agent_id}/memories"]["post"]["requestBody"]
    assert upsert["required"] is True
