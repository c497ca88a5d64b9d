"""Finding memories: ListMemories' filter (AIP-160), order_by (AIP-132) and total_size,
over real gRPC and HTTP, paged and refused as a caller relies on."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator
from datetime import UTC, timedelta
from typing import Any

import grpc
import httpx
import pytest

from agent_memory.config import Settings
from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import Client, ServerThread, error_details

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[ServerThread]:
    settings = Settings(http_listen="127.0.0.1:0", embedder="none")
    with ServerThread(database_url, settings=settings) as running:
        yield running


@pytest.fixture
def tenant(server: ServerThread) -> str:
    return f"tenant-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def client(server: ServerThread, tenant: str) -> Iterator[Client]:
    with server.client(tenant) as c:
        yield c


AGENT = memory_pb2.MemoryOwner(agent_id="coder")


def upsert(
    client: Client, key: str, value: str, tags: tuple[str, ...] = (), **fields: object
) -> memory_pb2.Memory:
    request = pb.UpsertMemoryRequest(owner=AGENT, key=key, value=value, **fields)  # type: ignore[arg-type]
    memory: memory_pb2.Memory = client.call(client.memory.UpsertMemory, request).memory
    if tags:
        tagged = pb.UpdateMemoryRequest(memory=memory_pb2.Memory(id=memory.id, tags=tags))
        tagged.update_mask.paths.append("tags")
        memory = client.call(client.memory.UpdateMemory, tagged).memory
    return memory


def memorize(client: Client, content: str, **fields: object) -> pb.MemorizeResponse:
    request = pb.MemorizeRequest(owner=AGENT, content=content, **fields)  # type: ignore[arg-type]
    response: pb.MemorizeResponse = client.call(client.memory.Memorize, request)
    return response


def listing(client: Client, **fields: object) -> pb.ListMemoriesResponse:
    request = pb.ListMemoriesRequest(owner=AGENT, **fields)  # type: ignore[arg-type]
    response: pb.ListMemoriesResponse = client.call(client.memory.ListMemories, request)
    return response


def keys(client: Client, **fields: object) -> list[str]:
    return [m.key for m in listing(client, **fields).memories]


@pytest.fixture
def stocked(client: Client) -> dict[str, str]:
    """A mixed agent: hand-written rows (pinned, tagged, of several importances) and
    memorized ones, one of which a later one superseded."""
    upsert(client, "deploy-day", "Deploys happen on Tuesdays.", importance=80, pinned=True)
    upsert(client, "tone", "Warm and brief; no emoji.", importance=60, tags=("style",))
    upsert(
        client,
        "billing-contact",
        "Invoices go to ana@example.com.",
        importance=30,
        tags=("billing", "people"),
    )
    upsert(client, "editor", "Uses Helix, not Vim.", importance=10)
    old = memorize(client, "The staging cluster is in Frankfurt.", tags=["infra"]).memory
    new = memorize(
        client, "The staging cluster moved to Dublin.", tags=["infra"], supersedes=[old.id]
    ).memory
    return {"old": old.key, "new": new.key}


def test_without_a_filter_the_current_memories_are_listed_with_their_total(
    client: Client, stocked: dict[str, str]
) -> None:
    response = listing(client)
    assert len(response.memories) == 5
    assert response.total_size == 5
    assert stocked["old"] not in [m.key for m in response.memories]
    # This server runs no embedder: whether a memory is embedded is not said.
    assert not any(m.HasField("embedded") for m in response.memories)


def test_each_field_keeps_only_the_memories_that_match(
    client: Client, stocked: dict[str, str]
) -> None:
    assert keys(client, filter='text:"tuesday"') == ["deploy-day"]
    assert keys(client, filter="DEPLOY") == ["deploy-day"]  # a key matches too, in any case
    assert keys(client, filter="tag = billing") == ["billing-contact"]
    assert keys(client, filter='tags:"billing" tags:"people"') == ["billing-contact"]
    assert keys(client, filter="pinned = true") == ["deploy-day"]
    assert keys(client, filter="importance >= 30 importance < 80") == ["tone", "billing-contact"]
    assert keys(client, filter="source = memorize") == [stocked["new"]]
    assert set(keys(client, filter="source != manual")) == {stocked["new"]}
    assert keys(client, filter="superseded = true") == [stocked["old"]]
    assert keys(client, filter="source = manual pinned = false text:o") == [
        "tone",
        "billing-contact",
        "editor",
    ]
    assert keys(client, filter="text:staging", show_superseded=True) == [
        stocked["new"],
        stocked["old"],
    ] or set(keys(client, filter="text:staging", show_superseded=True)) == {
        stocked["new"],
        stocked["old"],
    }
    nothing = listing(client, filter='text:"no such words"')
    assert (list(nothing.memories), nothing.total_size, nothing.next_page_token) == ([], 0, "")


def test_a_key_and_the_times_of_creation_and_change_restrict_a_listing(
    client: Client, stocked: dict[str, str]
) -> None:
    assert keys(client, filter='key = "editor"') == ["editor"]
    assert keys(client, filter='key = "Editor"') == []  # exactly as stored
    editor = listing(client, filter='key = "editor"').memories[0]
    made = editor.created_at.ToDatetime(tzinfo=UTC)
    stamp = editor.created_at.ToJsonString()
    assert keys(client, filter=f'key = "editor" create_time = "{stamp}"') == ["editor"]
    assert keys(client, filter=f'key = "editor" create_time > "{stamp}"') == []
    later = (made + timedelta(hours=1)).isoformat()
    assert len(keys(client, filter=f'createTime < "{later}"')) == 5
    assert keys(client, filter=f'update_time > "{later}"') == []


def test_order_by_sorts_by_one_field_and_pages_walk_it_once(
    client: Client, stocked: dict[str, str]
) -> None:
    assert keys(client, order_by="key") == sorted(keys(client))
    assert keys(client, order_by="key desc") == sorted(keys(client), reverse=True)
    by_importance = listing(client, order_by="importance desc", filter="source = manual")
    assert [m.importance for m in by_importance.memories] == [80, 60, 30, 10]
    newest = keys(client, order_by="updated_at desc")
    assert (newest[0], newest[-1]) == (stocked["new"], "deploy-day")
    assert keys(client, order_by="created_at") == list(reversed(newest))

    for order in ("", "key", "importance desc", "updated_at", "created_at desc"):
        whole = keys(client, order_by=order)
        walked: list[str] = []
        token = ""
        while True:
            page = listing(client, order_by=order, page_size=2, page_token=token)
            assert page.total_size == 5
            walked += [m.key for m in page.memories]
            token = page.next_page_token
            if not token:
                break
        assert walked == whole, order


def test_or_not_and_parentheses_combine_with_aip_160_precedence(
    client: Client, stocked: dict[str, str]
) -> None:
    assert keys(client, filter="pinned = true OR tag = billing") == [
        "deploy-day",
        "billing-contact",
    ]
    # OR binds tighter than AND: source = manual AND (text:helix OR importance >= 60).
    assert keys(client, filter="source = manual AND text:helix OR importance >= 60") == [
        "deploy-day",
        "tone",
        "editor",
    ]
    assert keys(client, filter="(source = manual AND text:helix) OR importance >= 60") == [
        "deploy-day",
        "tone",
        "editor",
    ]
    assert keys(client, filter="source = manual (text:helix OR text:warm)") == ["tone", "editor"]
    assert keys(client, filter="NOT source = manual") == [stocked["new"]]
    assert keys(client, filter="-source = manual") == [stocked["new"]]
    assert keys(client, filter="source = manual -(pinned = true OR tag = style)") == [
        "billing-contact",
        "editor",
    ]
    assert keys(client, filter="superseded = true OR pinned = true") == [
        "deploy-day",
        stocked["old"],
    ]
    response = listing(client, filter="tag = infra OR tag = style", page_size=1)
    assert response.total_size == 2


def test_a_filter_refusal_says_where_it_failed(client: Client) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        listing(client, filter="pinned = true AND (colour = red OR tag = x)")
    details = error_details(refused.value)
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.violations["filter"].endswith("(at character 20)")
    assert "'colour' is not a field" in details.violations["filter"]


def test_order_by_takes_several_fields_and_pages_walk_them_once(
    client: Client, stocked: dict[str, str]
) -> None:
    for n, importance in enumerate((40, 40, 70, 40, 70)):
        upsert(client, f"extra-{n}", f"Extra {n}.", importance=importance, pinned=n == 3)
    memories = listing(client, page_size=100).memories

    def value(m: memory_pb2.Memory, *, name: str) -> Any:
        field = getattr(m, name)
        return (field.seconds, field.nanos) if name.endswith("_at") else field

    def sort(fields: list[tuple[str, bool]]) -> list[str]:
        rows = sorted(memories, key=lambda m: m.key)
        for name, descending in reversed(fields):
            rows.sort(key=functools.partial(value, name=name), reverse=descending)
        return [m.key for m in rows]

    for order, fields in (
        ("importance desc, key", [("importance", True)]),
        ("importance desc, updated_at desc", [("importance", True), ("updated_at", True)]),
        ("importance desc,key desc", [("importance", True), ("key", True)]),
        ("updateTime desc,importance", [("updated_at", True), ("importance", False)]),
        ("created_at, importance desc", [("created_at", False), ("importance", True)]),
    ):
        whole = keys(client, order_by=order, page_size=100)
        assert whole == sort(fields), order
        for size in (1, 3):
            walked: list[str] = []
            token = ""
            while True:
                page = listing(client, order_by=order, page_size=size, page_token=token)
                assert page.total_size == len(whole)
                walked += [m.key for m in page.memories]
                token = page.next_page_token
                if not token:
                    break
            assert walked == whole, (order, size)


def test_a_token_belongs_to_its_filter_and_order(client: Client, stocked: dict[str, str]) -> None:
    token = listing(client, filter="source = manual", page_size=1).next_page_token
    assert token
    assert (
        len(listing(client, filter="source = manual", page_size=1, page_token=token).memories) == 1
    )
    for other in ({"filter": "source = auto"}, {"filter": "source = manual", "order_by": "key"}):
        with pytest.raises(grpc.RpcError) as refused:
            listing(client, page_size=1, page_token=token, **other)
        details = error_details(refused.value)
        assert details.code is grpc.StatusCode.INVALID_ARGUMENT
        assert set(details.violations) == {"page_token"}


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"filter": "colour = red"}, "filter"),
        ({"filter": "pinned = true OR"}, "filter"),
        ({"filter": "(pinned = true"}, "filter"),
        ({"order_by": "colour"}, "order_by"),
        ({"order_by": "importance, importance desc"}, "order_by"),
        ({"order_by": "importance,,key"}, "order_by"),
    ],
)
def test_a_filter_or_order_it_cannot_read_is_invalid_with_its_field(
    client: Client, fields: dict[str, str], field: str
) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        listing(client, **fields)
    details = error_details(refused.value)
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {field}


def test_a_memory_is_read_by_its_owner_and_key_as_by_its_id(
    client: Client, stocked: dict[str, str]
) -> None:
    def get(**fields: object) -> memory_pb2.Memory:
        request = pb.GetMemoryRequest(**fields)  # type: ignore[arg-type]
        memory: memory_pb2.Memory = client.call(client.memory.GetMemory, request).memory
        return memory

    listed = listing(client, filter='key = "tone"').memories[0]
    assert get(owner=AGENT, key="tone") == get(id=listed.id) == listed
    # Superseded memories stay readable, by key as by id.
    old = get(owner=AGENT, key=stocked["old"])
    assert old.superseded_by
    assert get(id=old.id) == old
    for fields, field, code in (
        ({"owner": AGENT, "key": "Tone"}, None, grpc.StatusCode.NOT_FOUND),
        (
            {"owner": memory_pb2.MemoryOwner(workspace_id="coder"), "key": "tone"},
            None,
            grpc.StatusCode.NOT_FOUND,
        ),
        ({"owner": AGENT}, "key", grpc.StatusCode.INVALID_ARGUMENT),
        ({"key": "tone"}, "owner", grpc.StatusCode.INVALID_ARGUMENT),
        ({"id": listed.id, "owner": AGENT, "key": "tone"}, "id", grpc.StatusCode.INVALID_ARGUMENT),
        ({}, "id", grpc.StatusCode.INVALID_ARGUMENT),
    ):
        with pytest.raises(grpc.RpcError) as refused:
            get(**fields)
        details = error_details(refused.value)
        assert details.code is code, fields
        if field is not None:
            assert set(details.violations) == {field}, fields
        else:
            assert details.reason == "MEMORY_NOT_FOUND"


def test_http_reads_a_memory_by_its_key(
    server: ServerThread, tenant: str, client: Client, stocked: dict[str, str]
) -> None:
    key = server.new_key(tenant, "user-2")
    with httpx.Client(
        base_url=f"http://{server.http_address}/v1",
        headers={"authorization": f"Bearer {key}"},
        timeout=30,
    ) as api:
        upsert(client, "path/with:odd chars", "Still found.")
        for memory_key in ("tone", "path/with:odd chars"):
            found = api.get("/agents/coder/memories:lookup", params={"key": memory_key})
            assert found.status_code == 200, found.text
            body = found.json()["memory"]
            assert body["key"] == memory_key
            assert api.get(f"/memories/{body['id']}").json()["memory"] == body
        missing = api.get("/agents/coder/memories:lookup", params={"key": "nothing"})
        assert missing.status_code == 404
        elsewhere = api.get("/workspaces/coder/memories:lookup", params={"key": "tone"})
        assert elsewhere.status_code == 404


def test_http_takes_filter_and_order_as_query_parameters(
    server: ServerThread, tenant: str, client: Client, stocked: dict[str, str]
) -> None:
    key = server.new_key(tenant, "user-2")
    with httpx.Client(
        base_url=f"http://{server.http_address}/v1",
        headers={"authorization": f"Bearer {key}"},
        timeout=30,
    ) as api:
        answer = api.get(
            "/agents/coder/memories",
            params={"filter": 'source = manual text:"o"', "orderBy": "importance", "pageSize": 2},
        )
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert [m["key"] for m in body["memories"]] == ["editor", "billing-contact"]
        assert body["totalSize"] == 4
        assert body["nextPageToken"]
        # The JSON's own field names order it too, and a total of none is still said.
        newest = api.get("/agents/coder/memories", params={"orderBy": "updatedAt desc"})
        assert newest.status_code == 200, newest.text
        none = api.get("/agents/coder/memories", params={"filter": 'text:"no such words"'})
        assert none.status_code == 200, none.text
        assert none.json()["totalSize"] == 0
        assert none.json().get("memories", []) == []
        refused = api.get("/agents/coder/memories", params={"filter": "source = bogus"})
        assert refused.status_code == 400
        assert "source is one of" in refused.text
