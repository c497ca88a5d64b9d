"""Page tokens are sealed: a caller cannot read them, change them, or use them for
another tenant, owner or listing; and the key that seals them can be rotated without
breaking the listings under way."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator

import grpc
import httpx
import pytest

from agent_memory.config import Settings
from agent_memory.domain.paging import (
    EXPIRED,
    NOT_OURS,
    OTHER_LISTING,
    OTHER_OWNER,
    OTHER_TENANT,
    sealed_with,
)
from agent_memory.store import migrate
from agentmemory.v1 import block_pb2, memory_pb2
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import Client, ErrorDetails, ServerThread, cli, error_details

pytestmark = pytest.mark.e2e

AGENT_A = memory_pb2.MemoryOwner(agent_id="a")
AGENT_B = memory_pb2.MemoryOwner(agent_id="b")
WORKSPACE_A = memory_pb2.MemoryOwner(workspace_id="a")
CORE = {"label": block_pb2.BLOCK_LABEL_CORE, "scope": memory_pb2.SCOPE_USER}


def upsert(client: Client, key: str, owner: memory_pb2.MemoryOwner = AGENT_A) -> memory_pb2.Memory:
    request = pb.UpsertMemoryRequest(owner=owner, key=key, value=f"value of {key}")
    memory: memory_pb2.Memory = client.call(client.memory.UpsertMemory, request).memory
    return memory


def listed(
    client: Client,
    owner: memory_pb2.MemoryOwner = AGENT_A,
    token: str = "",
    **kw: object,
) -> pb.ListMemoriesResponse:
    request = pb.ListMemoriesRequest(owner=owner, page_size=1, page_token=token, **kw)
    response: pb.ListMemoriesResponse = client.call(client.memory.ListMemories, request)
    return response


def refusal(call: Callable[[], object]) -> ErrorDetails:
    with pytest.raises(grpc.RpcError) as info:
        call()
    details = error_details(info.value)
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT, details.message
    assert list(details.violations) == ["page_token"], details.message
    return details


def raw(token: str) -> bytes:
    return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))


# --- what a caller sees of a token -----------------------------------------------------


def test_a_page_token_shows_neither_where_it_stopped_nor_the_total(client: Client) -> None:
    keys = [f"customer-globex-pricing-{i:02d}" for i in range(12)]
    for key in keys:
        upsert(client, key)
    first = listed(client)
    assert first.total_size == 12
    token = first.next_page_token
    sealed = raw(token)
    assert first.memories[0].key.encode() not in sealed
    assert b"customer" not in sealed
    assert b",12]" not in sealed
    assert client.tenant_id.encode() not in sealed
    # It still does its work: the listing goes on, with the total it counted.
    walked, pages = [first.memories[0].key], 1
    while token:
        page = listed(client, token=token)
        assert page.total_size == 12
        walked += [m.key for m in page.memories]
        token, pages = page.next_page_token, pages + 1
    assert walked == sorted(keys)
    assert pages == 12


def test_a_changed_token_is_refused(client: Client) -> None:
    for key in ("k1", "k2", "k3"):
        upsert(client, key)
    token = listed(client).next_page_token
    middle = len(token) // 2
    flipped = token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]
    for changed in (flipped, token[:-2], token + "AA"):
        details = refusal(lambda changed=changed: listed(client, token=changed))
        assert details.violations["page_token"] == NOT_OURS
        assert details.reason == "INVALID_PAGE_TOKEN"


# --- whose listing a token continues ---------------------------------------------------


def test_a_token_of_one_tenant_is_refused_with_another_tenants_key(
    client: Client, other_client: Client
) -> None:
    for key in ("k1", "k2", "k3"):
        upsert(client, key)
        upsert(other_client, key)
    token = listed(client).next_page_token
    details = refusal(lambda: listed(other_client, token=token))
    assert details.violations["page_token"] == OTHER_TENANT
    assert "page_token: was returned to another tenant" in details.message
    # The other tenant's own listing is unchanged.
    assert listed(other_client).total_size == 3


def test_a_token_of_one_tenant_is_refused_with_another_tenants_key_over_http(
    server: ServerThread, client: Client, other_client: Client
) -> None:
    for key in ("k1", "k2", "k3"):
        upsert(client, key)
    token = listed(client).next_page_token
    other = server.new_key(other_client.tenant_id, "user-1")
    answer = httpx.get(
        f"http://{server.http_address}/v1/agents/a/memories",
        params={"pageSize": 1, "pageToken": token},
        headers={"authorization": f"Bearer {other}"},
        timeout=30,
    )
    assert answer.status_code == 400, answer.text
    assert OTHER_TENANT in answer.text


def test_a_listing_pages_over_http_with_its_tokens(server: ServerThread, client: Client) -> None:
    keys = ["k1", "k2", "k3"]
    for key in keys:
        upsert(client, key)
    mine = server.new_key(client.tenant_id, "user-1")
    walked, token = [], ""
    with httpx.Client(
        base_url=f"http://{server.http_address}/v1",
        headers={"authorization": f"Bearer {mine}"},
        timeout=30,
    ) as api:
        while True:
            answer = api.get("/agents/a/memories", params={"pageSize": 1, "pageToken": token})
            assert answer.status_code == 200, answer.text
            body = answer.json()
            walked += [m["key"] for m in body["memories"]]
            token = body.get("nextPageToken", "")
            if not token:
                break
    assert walked == keys


def test_a_token_for_one_owner_is_refused_for_another(client: Client) -> None:
    for key in ("k1", "k2", "k3"):
        for owner in (AGENT_A, AGENT_B, WORKSPACE_A):
            upsert(client, key, owner)
    token = listed(client).next_page_token
    for owner in (AGENT_B, WORKSPACE_A):
        details = refusal(lambda owner=owner: listed(client, owner, token))
        assert details.violations["page_token"] == OTHER_OWNER


def test_a_token_of_one_memorys_events_is_refused_for_anothers(client: Client) -> None:
    first, second = upsert(client, "k1"), upsert(client, "k2")
    upsert(client, "k1")  # a second event of the first

    def events(memory_id: str, token: str = "") -> pb.ListMemoryEventsResponse:
        request = pb.ListMemoryEventsRequest(memory_id=memory_id, page_size=1, page_token=token)
        response: pb.ListMemoryEventsResponse = client.call(client.memory.ListMemoryEvents, request)
        return response

    token = events(first.id).next_page_token
    assert token
    assert events(first.id, token).events
    details = refusal(lambda: events(second.id, token))
    assert details.violations["page_token"] == OTHER_OWNER


def test_a_token_of_one_agents_runs_is_refused_for_anothers(client: Client) -> None:
    for agent in ("a", "b"):
        for run in ("run-1", "run-2"):
            client.call(
                client.memory.RecordRunSession,
                pb.RecordRunSessionRequest(agent_id=agent, run_id=run, session_id_after="s"),
            )

    def runs(agent: str, token: str = "") -> pb.ListAgentRunsResponse:
        request = pb.ListAgentRunsRequest(agent_id=agent, page_size=1, page_token=token)
        response: pb.ListAgentRunsResponse = client.call(client.memory.ListAgentRuns, request)
        return response

    token = runs("a").next_page_token
    assert token
    details = refusal(lambda: runs("b", token))
    assert details.violations["page_token"] == OTHER_OWNER


def test_a_token_of_one_users_block_versions_is_refused_for_another_user(
    server: ServerThread, client: Client
) -> None:
    with server.client(client.tenant_id, "user-2") as colleague:
        for who in (client, colleague):
            at = None
            for content in ("- one", "- two", "- three"):
                request = block_pb.WriteBlockRequest(content=content, **CORE)
                if at is not None:
                    request.expected_updated_at.CopyFrom(at)
                at = who.call(who.blocks.WriteBlock, request).block.updated_at

        def versions(who: Client, token: str = "") -> block_pb.ListBlockVersionsResponse:
            request = block_pb.ListBlockVersionsRequest(page_size=1, page_token=token, **CORE)
            response: block_pb.ListBlockVersionsResponse = who.call(
                who.blocks.ListBlockVersions, request
            )
            return response

        token = versions(client).next_page_token
        assert token
        assert [v.version for v in versions(client, token).versions] == [2]
        details = refusal(lambda: versions(colleague, token))
        assert details.violations["page_token"] == OTHER_OWNER


def test_a_token_of_one_listing_is_refused_by_another_of_the_same_owner(client: Client) -> None:
    for key in ("k1", "k2", "k3"):
        upsert(client, key)
    token = listed(client).next_page_token
    for other in ({"order_by": "key"}, {"filter": "pinned = false"}, {"show_expired": True}):
        details = refusal(lambda other=other: listed(client, token=token, **other))
        assert details.violations["page_token"] == OTHER_LISTING


# --- rotating the key ------------------------------------------------------------------


@pytest.fixture
def fresh_url(create_database: Callable[[], str]) -> str:
    """A database of its own: its keys are rotated, and no other test's tokens are."""
    url = create_database()
    migrate.upgrade(url)
    return url


@pytest.fixture
def first_server(fresh_url: str) -> Iterator[ServerThread]:
    with ServerThread(fresh_url, settings=Settings(indexer="none")) as running:
        yield running


def rotate(url: str, *args: str) -> str:
    done = cli("rotate-page-key", "--database-url", url, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_after_a_rotation_a_fresh_old_token_keeps_working_on_every_server(
    fresh_url: str, first_server: ServerThread
) -> None:
    with first_server.client() as client:
        for key in ("k1", "k2", "k3", "k4"):
            upsert(client, key)
        old = listed(client).next_page_token
        assert sealed_with(old) == 1

        said = rotate(fresh_url)
        assert "page token key 2 seals page tokens" in said
        assert "page token key 1 opens the tokens it sealed until" in said

        # The server that sealed it, and one that started after the rotation, both
        # continue the listing from it.
        assert [m.key for m in listed(client, token=old).memories] == ["k2"]
        with (
            ServerThread(fresh_url, settings=Settings(indexer="none")) as later,
            later.client(client.tenant_id) as again,
        ):
            page = listed(again, token=old)
            assert [m.key for m in page.memories] == ["k2"]
            # The later server seals with the new key; the first one, which has not
            # loaded it yet, opens its tokens all the same.
            fresh = page.next_page_token
            assert sealed_with(fresh) == 2
            assert [m.key for m in listed(client, token=fresh).memories] == ["k3"]


def test_a_token_of_a_key_rotated_out_is_refused_as_expired(
    fresh_url: str, first_server: ServerThread
) -> None:
    with first_server.client() as client:
        for key in ("k1", "k2", "k3"):
            upsert(client, key)
        old = listed(client).next_page_token
    rotate(fresh_url, "--keep-previous", "0")
    with (
        ServerThread(fresh_url, settings=Settings(indexer="none")) as later,
        later.client(client.tenant_id) as again,
    ):
        details = refusal(lambda: listed(again, token=old))
        assert details.violations["page_token"] == EXPIRED
        assert details.reason == "PAGE_TOKEN_EXPIRED"
        # Listing again from the first page works.
        assert [m.key for m in listed(again).memories] == ["k1"]


@pytest.mark.parametrize("seconds", ["-5", "1e30", "99999999999999"])
def test_a_rotation_refuses_a_time_out_of_range_with_one_line(seconds: str) -> None:
    done = cli("rotate-page-key", "--keep-previous", seconds)
    assert done.returncode == 2
    assert "--keep-previous" in done.stderr
    assert "from 0 to 315360000 (ten years)" in done.stderr
    assert "Traceback" not in done.stderr
