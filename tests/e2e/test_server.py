"""The running service: health, reflection, grpcurl, status mapping, limits."""

from __future__ import annotations

import json
import logging
import subprocess

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from agent_memory.api.memory_servicer import MemoryServicer
from agent_memory.app.server import SERVICE_NAMES
from agent_memory.config import Settings
from agentmemory.v1 import memory_pb2, recall_service_pb2, recall_service_pb2_grpc
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import Client, ServerThread, error_details, executable


def test_health_reports_serving_for_the_server_and_each_service(server: ServerThread) -> None:
    with server.anonymous_channel() as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for name in ("", *SERVICE_NAMES):
            reply = health.Check(health_pb2.HealthCheckRequest(service=name), timeout=10)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING


def grpcurl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [executable("grpcurl"), "-plaintext", *args], capture_output=True, text=True, timeout=60
    )


def test_grpcurl_lists_the_services_through_reflection(server: ServerThread) -> None:
    listed = grpcurl(server.address, "list")
    assert listed.returncode == 0, listed.stderr
    services = set(listed.stdout.split())
    assert set(SERVICE_NAMES) <= services
    assert "grpc.health.v1.Health" in services
    described = grpcurl(server.address, "describe", "agentmemory.v1.MemoryService")
    assert "rpc UpsertMemory" in described.stdout


def test_grpcurl_upserts_and_reads_a_memory(server: ServerThread, client: Client) -> None:
    auth = f"authorization: {client.metadata[0][1]}"
    body = json.dumps({"owner": {"agentId": "coder"}, "key": "deploy", "value": "make deploy"})
    created = grpcurl(
        "-H", auth, "-d", body, server.address, "agentmemory.v1.MemoryService/UpsertMemory"
    )
    assert created.returncode == 0, created.stderr
    reply = json.loads(created.stdout)
    assert reply["created"] is True
    assert reply["memory"]["source"] == "MEMORY_SOURCE_MANUAL"
    got = grpcurl(
        "-H",
        auth,
        "-d",
        json.dumps({"id": reply["memory"]["id"]}),
        server.address,
        "agentmemory.v1.MemoryService/GetMemory",
    )
    assert json.loads(got.stdout)["memory"]["value"] == "make deploy"
    refused = grpcurl("-d", body, server.address, "agentmemory.v1.MemoryService/UpsertMemory")
    assert refused.returncode != 0
    assert "Unauthenticated" in refused.stderr


def test_an_rpc_without_an_implementation_answers_unimplemented(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An RPC added to the contract before its servicer method exists.
    from agent_memory.api.recall_servicer import RecallServicer

    monkeypatch.delattr(RecallServicer, "RenderPrompt")
    monkeypatch.delattr(RecallServicer, "Recall")
    partial = ServerThread(database_url, settings=Settings(insecure_local=True))
    with partial, grpc.insecure_channel(partial.address) as channel:
        stub = recall_service_pb2_grpc.RecallServiceStub(channel)
        with pytest.raises(grpc.RpcError) as unary:
            stub.RenderPrompt(recall_service_pb2.RenderPromptRequest(agent_id="a"), timeout=10)
        assert error_details(unary.value).code is grpc.StatusCode.UNIMPLEMENTED
        with pytest.raises(grpc.RpcError) as streamed:
            list(stub.Recall(recall_service_pb2.RecallRequest(query="x"), timeout=10))
        assert streamed.value.code() is grpc.StatusCode.UNIMPLEMENTED


def test_a_message_over_the_size_limit_is_resource_exhausted(
    database_url: str,
) -> None:
    small = ServerThread(
        database_url, settings=Settings(insecure_local=True, max_message_bytes=64 * 1024)
    )
    with small, grpc.insecure_channel(small.address) as channel:
        stub = pb_stub(channel)
        request = pb.UpsertMemoryRequest(
            owner=memory_pb2.MemoryOwner(agent_id="big"), key="k", value="x" * (128 * 1024)
        )
        with pytest.raises(grpc.RpcError) as info:
            stub.UpsertMemory(request, timeout=10)
        assert info.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        listed = stub.ListMemories(pb.ListMemoriesRequest(owner=request.owner), timeout=10)
        assert list(listed.memories) == []


def pb_stub(channel: grpc.Channel):  # type: ignore[no-untyped-def]
    from agentmemory.v1 import memory_service_pb2_grpc

    return memory_service_pb2_grpc.MemoryServiceStub(channel)


def test_an_unreachable_database_is_unavailable_not_internal() -> None:
    nowhere = ServerThread(
        "postgresql://postgres@127.0.0.1:9/nothing", settings=Settings(insecure_local=True)
    )
    with nowhere:
        with (
            grpc.insecure_channel(nowhere.address) as channel,
            pytest.raises(grpc.RpcError) as info,
        ):
            pb_stub(channel).ListMemories(
                pb.ListMemoriesRequest(owner=memory_pb2.MemoryOwner(agent_id="a")), timeout=30
            )
        details = error_details(info.value)
        assert details.code is grpc.StatusCode.UNAVAILABLE
        assert details.reason == "DATABASE_UNAVAILABLE"


class _Exploding(MemoryServicer):
    async def GetMemory(self, caller, request):  # type: ignore[no-untyped-def,override]
        raise RuntimeError("disk path /secret/location leaked")


def test_an_unexpected_error_is_internal_with_a_generic_message_and_a_logged_traceback(
    database_url: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_memory.app import server as server_module

    monkeypatch.setattr(server_module, "MemoryServicer", _Exploding)
    broken = ServerThread(database_url, settings=Settings(insecure_local=True))
    with broken:
        with (
            caplog.at_level(logging.ERROR, logger="agent_memory.api.interceptors"),
            grpc.insecure_channel(broken.address) as channel,
            pytest.raises(grpc.RpcError) as info,
        ):
            pb_stub(channel).GetMemory(
                pb.GetMemoryRequest(id="00000000-0000-0000-0000-000000000000"), timeout=10
            )
        details = error_details(info.value)
        assert details.code is grpc.StatusCode.INTERNAL
        assert details.message == "internal error"
        logged = [r for r in caplog.records if r.exc_info]
        assert any("disk path" in str(r.exc_info[1]) for r in logged if r.exc_info)
