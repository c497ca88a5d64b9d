from __future__ import annotations

import grpc
import pytest

from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import Client, error_details


def test_upsert_then_get(client: Client) -> None:
    created = client.call(
        client.memory.UpsertMemory,
        pb.UpsertMemoryRequest(owner=memory_pb2.MemoryOwner(agent_id="a"), key="k", value="v"),
    )
    assert created.created
    got = client.call(client.memory.GetMemory, pb.GetMemoryRequest(id=created.memory.id))
    assert got.memory.value == "v"


def test_bad_key(client: Client) -> None:
    with pytest.raises(grpc.RpcError) as info:
        client.call(
            client.memory.UpsertMemory,
            pb.UpsertMemoryRequest(owner=memory_pb2.MemoryOwner(agent_id="a"), key="", value="v"),
        )
    details = error_details(info.value)
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert "key" in details.violations
