"""Authentication and tenancy: no call touches anything without valid credentials,
and no key of one tenant reaches another tenant's rows, whatever ids it sends."""

from __future__ import annotations

import time
from collections.abc import Iterator

import grpc
import psycopg
import pytest
from google.protobuf import field_mask_pb2

from agent_memory.config import Settings
from agentmemory.v1 import memory_pb2, memory_service_pb2_grpc
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import Client, ErrorDetails, ServerThread, error_details


def memory_count(database_url: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT count(*) FROM memories").fetchone()
        assert row is not None
        return int(row[0])


def upsert_request(
    agent: str = "agent-1", key: str = "k", value: str = "v"
) -> pb.UpsertMemoryRequest:
    return pb.UpsertMemoryRequest(
        owner=memory_pb2.MemoryOwner(agent_id=agent), key=key, value=value
    )


def refused_upsert(server: ServerThread, metadata: tuple[tuple[str, str], ...]) -> ErrorDetails:
    """The status an UpsertMemory with ``metadata`` (and no key of the channel's) ends in:
    it must fail."""
    with server.anonymous_channel() as channel:
        stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
        with pytest.raises(grpc.RpcError) as info:
            stub.UpsertMemory(upsert_request(), metadata=metadata, timeout=10)
    return error_details(info.value)


@pytest.mark.parametrize(
    "metadata",
    [
        (),
        (("authorization", "Basic dXNlcjpwYXNz"),),
        (("authorization", "Bearer "),),
        (("authorization", "Bearer not-a-key"),),
        (("authorization", "Bearer amk_0123456789abcdef_wrongsecret"),),
    ],
    ids=["none", "basic", "empty-bearer", "malformed", "unknown-key"],
)
def test_calls_without_a_valid_key_are_unauthenticated_and_write_nothing(
    server: ServerThread, database_url: str, metadata: tuple[tuple[str, str], ...]
) -> None:
    before = memory_count(database_url)
    details = refused_upsert(server, metadata)
    assert details.code is grpc.StatusCode.UNAUTHENTICATED
    assert details.reason in {"MISSING_CREDENTIALS", "INVALID_API_KEY"}
    assert memory_count(database_url) == before


def test_two_authorization_headers_are_refused_saying_so(
    server: ServerThread, database_url: str
) -> None:
    """Even both naming a good key: which to believe is not the service's guess."""
    key = server.new_key("tenant-two-headers", "ana", "orchestrator")
    metadata = (("authorization", f"Bearer {key}"), ("authorization", f"Bearer {key}"))
    before = memory_count(database_url)
    details = refused_upsert(server, metadata)
    assert memory_count(database_url) == before
    assert details.code is grpc.StatusCode.UNAUTHENTICATED
    assert details.message.startswith("2 authorization headers: send exactly one")


def test_a_key_with_the_wrong_secret_is_refused(client: Client) -> None:
    scheme, key = client.metadata[0][1].split(" ")
    prefix, key_id, secret = key.split("_")
    forged = f"{prefix}_{key_id}_{secret[::-1]}"
    stub = client.memory
    with pytest.raises(grpc.RpcError) as info:
        stub.UpsertMemory(
            upsert_request(), metadata=(("authorization", f"{scheme} {forged}"),), timeout=10
        )
    assert info.value.code() is grpc.StatusCode.UNAUTHENTICATED


def test_a_revoked_key_stops_working_on_every_replica_within_the_cache_time(
    database_url: str,
) -> None:
    """Replicas remember a verified key for ``auth_cache_seconds``, never longer: once
    that much time has passed since the revocation, every replica refuses the key."""
    from agent_memory.service.keys import ApiKeys

    settings = Settings(auth_cache_seconds=1.0)
    with (
        ServerThread(database_url, settings=settings) as first,
        ServerThread(database_url, settings=settings) as second,
        first.client() as client,
        grpc.insecure_channel(second.address) as other_channel,
    ):
        replicas = [client.memory, memory_service_pb2_grpc.MemoryServiceStub(other_channel)]
        listing = pb.ListMemoriesRequest(owner=upsert_request().owner)
        for stub in replicas:  # each replica verifies the key and remembers it
            stub.ListMemories(listing, metadata=client.metadata, timeout=10)
        key_id = client.metadata[0][1].split("_")[1]
        assert first.db is not None
        assert first.run(ApiKeys(first.db).revoke(key_id)) is not None
        time.sleep(settings.auth_cache_seconds)
        for stub in replicas:
            with pytest.raises(grpc.RpcError) as info:
                stub.ListMemories(listing, metadata=client.metadata, timeout=10)
            assert error_details(info.value).code is grpc.StatusCode.UNAUTHENTICATED


def test_without_the_cache_a_revoked_key_is_refused_at_once(database_url: str) -> None:
    from agent_memory.service.keys import ApiKeys

    with (
        ServerThread(database_url, settings=Settings(auth_cache_seconds=0)) as server,
        server.client() as client,
    ):
        client.call(client.memory.UpsertMemory, upsert_request())
        key_id = client.metadata[0][1].split("_")[1]
        assert server.db is not None
        assert server.run(ApiKeys(server.db).revoke(key_id)) is not None
        with pytest.raises(grpc.RpcError) as info:
            client.call(
                client.memory.ListMemories, pb.ListMemoriesRequest(owner=upsert_request().owner)
            )
        assert error_details(info.value).code is grpc.StatusCode.UNAUTHENTICATED


@pytest.fixture
def victim_rows(client: Client) -> Iterator[list[memory_pb2.Memory]]:
    rows = [
        client.call(
            client.memory.UpsertMemory, upsert_request("shared-agent", "plan", "A's plan")
        ).memory,
        client.call(
            client.memory.UpsertMemory,
            pb.UpsertMemoryRequest(
                owner=memory_pb2.MemoryOwner(workspace_id="shared-ws"),
                key="stack",
                value="A's stack",
            ),
        ).memory,
    ]
    yield rows
    # Whatever the attacker tried, the victim's rows are exactly as written.
    for row in rows:
        again = client.call(client.memory.GetMemory, pb.GetMemoryRequest(id=row.id)).memory
        assert again == row


def test_another_tenant_cannot_read_a_row_by_id(
    victim_rows: list[memory_pb2.Memory], other_client: Client
) -> None:
    for row in victim_rows:
        with pytest.raises(grpc.RpcError) as info:
            other_client.call(other_client.memory.GetMemory, pb.GetMemoryRequest(id=row.id))
        assert error_details(info.value).code is grpc.StatusCode.NOT_FOUND


def test_another_tenant_lists_nothing_under_the_same_owner_ids(
    victim_rows: list[memory_pb2.Memory], other_client: Client
) -> None:
    for owner in (
        memory_pb2.MemoryOwner(agent_id="shared-agent"),
        memory_pb2.MemoryOwner(workspace_id="shared-ws"),
    ):
        listed = other_client.call(
            other_client.memory.ListMemories, pb.ListMemoriesRequest(owner=owner)
        )
        assert list(listed.memories) == []


def test_another_tenant_cannot_update_pin_or_delete(
    victim_rows: list[memory_pb2.Memory], other_client: Client
) -> None:
    stub = other_client.memory
    for row in victim_rows:
        attempts = [
            (
                stub.UpdateMemory,
                pb.UpdateMemoryRequest(
                    memory=memory_pb2.Memory(id=row.id, value="stolen"),
                    update_mask=field_mask_pb2.FieldMask(paths=["value"]),
                ),
            ),
            (
                stub.UpdateMemory,
                pb.UpdateMemoryRequest(
                    memory=memory_pb2.Memory(id=row.id, value="stolen"),
                    update_mask=field_mask_pb2.FieldMask(paths=["value"]),
                    etag=row.etag,
                ),
            ),
            (stub.PinMemory, pb.PinMemoryRequest(id=row.id, pinned=True)),
            (stub.DeleteMemory, pb.DeleteMemoryRequest(id=row.id)),
            (stub.DeleteMemory, pb.DeleteMemoryRequest(id=row.id, etag=row.etag)),
        ]
        for method, request in attempts:
            with pytest.raises(grpc.RpcError) as info:
                other_client.call(method, request)
            assert error_details(info.value).code is grpc.StatusCode.NOT_FOUND


def test_the_same_owner_and_key_in_two_tenants_are_two_rows(
    victim_rows: list[memory_pb2.Memory], other_client: Client
) -> None:
    theirs = other_client.call(
        other_client.memory.UpsertMemory, upsert_request("shared-agent", "plan", "B's plan")
    )
    assert theirs.created
    assert theirs.memory.id != victim_rows[0].id


def test_unauthenticated_local_mode_takes_identity_from_metadata(database_url: str) -> None:
    local = ServerThread(database_url, settings=Settings(insecure_local=True))
    with local, grpc.insecure_channel(local.address) as channel:
        stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
        team_a = (("x-tenant-id", "local-a"), ("x-user-id", "alice"))
        team_b = (("x-tenant-id", "local-b"), ("x-user-id", "bob"))
        created = stub.UpsertMemory(upsert_request("ag", "k", "from a"), metadata=team_a)
        assert created.created
        owner = upsert_request("ag").owner
        listed_b = stub.ListMemories(pb.ListMemoriesRequest(owner=owner), metadata=team_b)
        assert list(listed_b.memories) == []
        listed_a = stub.ListMemories(pb.ListMemoriesRequest(owner=owner), metadata=team_a)
        assert [m.value for m in listed_a.memories] == ["from a"]
        # No metadata at all: the "default" tenant, which is neither of the above.
        default = stub.ListMemories(pb.ListMemoriesRequest(owner=owner))
        assert list(default.memories) == []
        # A tenant or user named as no key could name one is refused, not served.
        for bad in (("x-tenant-id", ".."), ("x-tenant-id", "."), ("x-user-id", "a/b")):
            with pytest.raises(grpc.RpcError) as refused:
                stub.ListMemories(pb.ListMemoriesRequest(owner=owner), metadata=(bad,))
            assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT, bad


def test_local_mode_is_off_by_default() -> None:
    assert Settings().insecure_local is False
    assert Settings.from_env({}).insecure_local is False
