"""What the Python client does on the wire, against a scripted gRPC server on
loopback: which calls it retries on UNAVAILABLE (exactly those the contract marks
safe to repeat), deadlines, the credentials it sends, and that stopping a recall
early cancels the stream at the server."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest

from agent_memory.http.routes import routes
from agent_memory_client import (
    TLS,
    AsyncMemoryClient,
    DeadlineExceeded,
    MemoryClient,
    Unavailable,
)
from agent_memory_client._channel import SERVICES, safe_to_repeat, service_config
from agentmemory.v1 import (
    block_pb2,
    block_service_pb2,
    memory_pb2,
    memory_service_pb2,
    recall_service_pb2,
)

pytestmark = pytest.mark.e2e


class Scripted:
    """A gRPC server answering a few RPCs as a test scripts them, counting attempts."""

    def __init__(self) -> None:
        self.attempts: Counter[str] = Counter()
        self.metadata: list[dict[str, str]] = []
        self.unavailable_first: dict[str, int] = {}
        self.delay = 0.0
        self.stream_cancelled = threading.Event()
        self.streamed = 0
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        self._server.add_generic_rpc_handlers(
            [
                grpc.method_handlers_generic_handler(
                    "agentmemory.v1.MemoryService",
                    {
                        "GetMemory": self._unary(
                            "GetMemory",
                            memory_service_pb2.GetMemoryRequest,
                            lambda r: memory_service_pb2.GetMemoryResponse(
                                memory=memory_pb2.Memory(id=r.id, value="found")
                            ),
                        )
                    },
                ),
                grpc.method_handlers_generic_handler(
                    "agentmemory.v1.BlockService",
                    {
                        "WriteBlock": self._unary(
                            "WriteBlock",
                            block_service_pb2.WriteBlockRequest,
                            lambda r: block_service_pb2.WriteBlockResponse(
                                block=block_pb2.Block(content=r.content)
                            ),
                        )
                    },
                ),
                grpc.method_handlers_generic_handler(
                    "agentmemory.v1.RecallService",
                    {
                        "Recall": grpc.unary_stream_rpc_method_handler(
                            self._recall,
                            request_deserializer=recall_service_pb2.RecallRequest.FromString,
                            response_serializer=recall_service_pb2.RecallResponse.SerializeToString,
                        )
                    },
                ),
            ]
        )
        port = self._server.add_insecure_port("127.0.0.1:0")
        self.address = f"127.0.0.1:{port}"
        self._server.start()

    def _unary(self, name: str, request_type: Any, answer: Callable[[Any], Any]) -> Any:
        def handle(request: Any, context: grpc.ServicerContext) -> Any:
            self.attempts[name] += 1
            self.metadata.append(dict(context.invocation_metadata()))  # type: ignore[arg-type]
            if self.attempts[name] <= self.unavailable_first.get(name, 0):
                context.abort(grpc.StatusCode.UNAVAILABLE, "the database does not answer")
            time.sleep(self.delay)
            return answer(request)

        return grpc.unary_unary_rpc_method_handler(
            handle,
            request_deserializer=request_type.FromString,
            response_serializer=lambda m: m.SerializeToString(),
        )

    def _recall(
        self, request: recall_service_pb2.RecallRequest, context: grpc.ServicerContext
    ) -> Iterator[recall_service_pb2.RecallResponse]:
        context.add_callback(self.stream_cancelled.set)
        for n in range(10_000):
            if not context.is_active():
                return
            self.streamed = n + 1
            yield recall_service_pb2.RecallResponse(content=f"line {n}", score=1 / (n + 1))
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.stop(0)


@pytest.fixture
def scripted() -> Iterator[Scripted]:
    server = Scripted()
    yield server
    server.stop()


def test_a_read_is_retried_on_unavailable_until_it_succeeds(scripted: Scripted) -> None:
    scripted.unavailable_first["GetMemory"] = 2
    with MemoryClient(scripted.address, api_key="k") as memory:
        assert memory.get_memory("m-1").value == "found"
    assert scripted.attempts["GetMemory"] == 3


def test_a_write_that_may_have_taken_effect_is_never_sent_twice(scripted: Scripted) -> None:
    scripted.unavailable_first["WriteBlock"] = 10
    with MemoryClient(scripted.address, api_key="k") as memory, pytest.raises(Unavailable):
        memory.write_block("core", "text", agent_id="a")
    assert scripted.attempts["WriteBlock"] == 1


def test_retries_stop_at_the_attempts_asked_for(scripted: Scripted) -> None:
    scripted.unavailable_first["GetMemory"] = 10
    with MemoryClient(scripted.address, attempts=2) as memory, pytest.raises(Unavailable) as info:
        memory.get_memory("m-1")
    assert info.value.message == "the database does not answer"
    assert scripted.attempts["GetMemory"] == 2
    with MemoryClient(scripted.address, attempts=1) as memory, pytest.raises(Unavailable):
        memory.get_memory("m-1")
    assert scripted.attempts["GetMemory"] == 3


def test_the_async_client_retries_the_same_way(scripted: Scripted) -> None:
    scripted.unavailable_first["GetMemory"] = 1
    scripted.unavailable_first["WriteBlock"] = 1

    async def run() -> None:
        async with AsyncMemoryClient(scripted.address, api_key="k") as memory:
            assert (await memory.get_memory("m-1")).value == "found"
            with pytest.raises(Unavailable):
                await memory.write_block("core", "text", agent_id="a")

    asyncio.run(run())
    assert scripted.attempts == Counter({"GetMemory": 2, "WriteBlock": 1})


def test_a_call_past_its_deadline_fails_as_such(scripted: Scripted) -> None:
    scripted.delay = 2
    with MemoryClient(scripted.address, timeout=0.2) as memory:
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            memory.get_memory("m-1")
        assert time.monotonic() - started < 1.5
        scripted.delay = 0
        assert memory.get_memory("m-1", timeout=5).value == "found"


def test_credentials_travel_as_the_service_reads_them(scripted: Scripted) -> None:
    with MemoryClient(scripted.address, api_key="secret-key") as memory:
        memory.get_memory("m-1")
    with MemoryClient(scripted.address, tenant_id="acme", user_id="ana") as memory:
        memory.get_memory("m-1")
    keyed, local = scripted.metadata
    assert keyed["authorization"] == "Bearer secret-key"
    assert "x-tenant-id" not in keyed
    assert (local["x-tenant-id"], local["x-user-id"]) == ("acme", "ana")
    assert "authorization" not in local
    assert "agent-memory-grpc-client/" in keyed["user-agent"]
    with pytest.raises(ValueError, match="not both"):
        MemoryClient(scripted.address, api_key="k", tenant_id="acme")


def test_stopping_a_recall_early_cancels_the_stream_at_the_server(scripted: Scripted) -> None:
    with MemoryClient(scripted.address) as memory:
        for n, match in enumerate(memory.recall("anything")):
            assert match.content == f"line {n}"
            if n == 2:
                break  # the stream is dropped here
        assert scripted.stream_cancelled.wait(5)
        assert scripted.streamed < 100


def test_leaving_an_async_recall_cancels_it_at_the_server(scripted: Scripted) -> None:
    async def run() -> None:
        async with AsyncMemoryClient(scripted.address) as memory:
            async with memory.recall("anything") as matches:
                async for match in matches:
                    if match.content == "line 2":
                        break
            await asyncio.to_thread(scripted.stream_cancelled.wait, 5)

    asyncio.run(run())
    assert scripted.stream_cancelled.is_set()
    assert scripted.streamed < 100


RETRIED = {
    "BlockService": {"GetBlock", "ListBlocks", "ListBlockVersions"},
    "DecisionService": {
        "RegisterCardType",
        "GetDecision",
        "ListRecentDecisions",
        "ListReexaminations",
        "RenderReexaminationPrompt",
    },
    "MemoryService": {
        "UpsertMemory",
        "GetMemory",
        "PinMemory",
        "ListMemories",
        "ListLearnings",
        "ListMemoryEvents",
        "GetAgentSettings",
        "UpdateAgentSettings",
        "GetWorkspaceSettings",
        "UpdateWorkspaceSettings",
        "GetUsage",
        "GetActiveSession",
        "ListAgentRuns",
        "ForgetAgent",
        "ForgetWorkspace",
        "ForgetUser",
        "GetConversation",
        "ListConversations",
        "GetExtractionJob",
        "GetCaller",
        "ListAgents",
        "ListWorkspaces",
    },
    "RecallService": {"Recall", "RenderPrompt", "GetRecallStatus"},
}


def test_the_retry_policy_covers_the_reads_and_idempotent_writes_only() -> None:
    import json

    config = json.loads(service_config(4))
    (policy,) = config["methodConfig"]
    retried = {(n["service"], n["method"]) for n in policy["name"]}
    assert retried == {
        (f"agentmemory.v1.{service}", method)
        for service, methods in RETRIED.items()
        for method in methods
    }
    assert policy["retryPolicy"]["retryableStatusCodes"] == ["UNAVAILABLE"]
    assert policy["retryPolicy"]["maxAttempts"] == 4
    assert json.loads(service_config(9))["methodConfig"][0]["retryPolicy"]["maxAttempts"] == 5
    assert json.loads(service_config(1)) == {"methodConfig": []}
    # Whatever is read over HTTP GET has no side effects, so it must be retried.
    methods = {m.full_name: m for descriptor, _ in SERVICES.values() for m in descriptor.methods}
    read_over_get = {
        methods[route.grpc_path.strip("/").replace("/", ".")]
        for route in routes()
        if route.verb == "get"
    }
    assert len(read_over_get) >= 10
    assert all(safe_to_repeat(m) for m in read_over_get)


def test_bad_settings_are_refused_before_any_call() -> None:
    with pytest.raises(ValueError, match="printable ASCII"):
        MemoryClient(api_key="key\nx-evil: 1")
    with pytest.raises(ValueError, match="spaces"):
        MemoryClient(tenant_id="acme corp")
    with pytest.raises(ValueError, match="timeout"):
        MemoryClient(timeout=0)
    with MemoryClient(api_key="amk_secret") as memory:
        assert "amk_secret" not in repr(memory.connection)
        with pytest.raises(ValueError, match="timeout"):
            memory.get_memory("m-1", timeout=-1)
    assert MemoryClient.from_env(tls=True).connection.tls == TLS()
    assert MemoryClient.from_env(tls=False).connection.tls is None
