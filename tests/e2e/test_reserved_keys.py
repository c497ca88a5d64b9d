"""A key that looks like one of the service's own (``auto:``, ``director:learning:``,
``memorize:``) is refused for a manual write as the prefix itself is, over gRPC and
HTTP alike."""

from __future__ import annotations

from collections.abc import Callable

import grpc
import httpx
import pytest
from google.protobuf import field_mask_pb2

from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import Client, ErrorDetails, ServerThread, error_details

pytestmark = pytest.mark.e2e

OWNER = memory_pb2.MemoryOwner(agent_id="coder")
LOOK_ALIKES = {
    "upper case": "AUTO:x1",
    "leading space": " auto:x1",
    "fullwidth colon": "auto\uff1ax1",
    "fullwidth letters": "\uff41\uff55\uff54\uff4f:x1",
    "zero-width space": "\u200bauto:x1",
    "zero-width joiner inside": "au\u200dto:x1",
    "no-break space and case": "\u00a0Auto:x1",
    "learning prefix": "Director:Learning:x1",
    "memorize prefix": "\ufeffMEMORIZE:x1",
}
PLAIN = {
    "learning prefix": "director:learning:x1",
    "memorize prefix": "memorize:x1",
}


def refused(call: Callable[[], object]) -> ErrorDetails:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return error_details(info.value)


def upsert(client: Client, key: str) -> pb.UpsertMemoryResponse:
    request = pb.UpsertMemoryRequest(owner=OWNER, key=key, value="overwritten by hand")
    response: pb.UpsertMemoryResponse = client.call(client.memory.UpsertMemory, request)
    return response


def keys(client: Client) -> list[str]:
    request = pb.ListMemoriesRequest(owner=OWNER)
    return [m.key for m in client.call(client.memory.ListMemories, request).memories]


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_a_look_alike_of_a_reserved_key_is_refused_over_grpc_as_the_key_itself(
    client: Client, name: str
) -> None:
    plain = refused(lambda: upsert(client, PLAIN.get(name, "auto:x1")))
    details = refused(lambda: upsert(client, LOOK_ALIKES[name]))
    assert details.code is plain.code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.reason == plain.reason
    assert details.violations == plain.violations
    assert list(details.violations) == ["key"]
    assert "are reserved for memories of source" in details.violations["key"]
    assert keys(client) == []


def test_renaming_or_memorizing_under_a_look_alike_is_refused_over_grpc(client: Client) -> None:
    memory = upsert(client, "stack").memory
    for key in ("AUTO:x1", " auto:x1", "auto\uff1ax1"):
        rename = pb.UpdateMemoryRequest(
            memory=memory_pb2.Memory(id=memory.id, key=key),
            update_mask=field_mask_pb2.FieldMask(paths=["key"]),
        )
        details = refused(lambda rename=rename: client.call(client.memory.UpdateMemory, rename))
        assert details.code is grpc.StatusCode.INVALID_ARGUMENT
        assert list(details.violations) == ["memory.key"]
        memorize = pb.MemorizeRequest(owner=OWNER, content="Ana likes tea.", memory_key=key)
        details = refused(lambda memorize=memorize: client.call(client.memory.Memorize, memorize))
        assert details.code is grpc.StatusCode.INVALID_ARGUMENT
        assert list(details.violations) == ["memory_key"]
    assert keys(client) == ["stack"]


def test_a_look_alike_is_refused_over_http(server: ServerThread, client: Client) -> None:
    key = server.new_key(client.tenant_id, "user-1")
    answer = httpx.post(
        f"http://{server.http_address}/v1/agents/coder/memories",
        json={"key": "\u3000AUTO\uff1ax1", "value": "overwritten by hand"},
        headers={"authorization": f"Bearer {key}"},
        timeout=30,
    )
    assert answer.status_code == 400, answer.text
    assert "reserved for memories of source auto" in answer.text
    assert keys(client) == []
