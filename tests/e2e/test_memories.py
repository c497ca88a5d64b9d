"""MemoryService CRUD, listing, etags and agent settings over real gRPC."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.page_tokens import reposition
from tests.support import Client, ErrorDetails, ServerThread, error_details

EMOJI = "\U0001f600"


# --- helpers -------------------------------------------------------------------------


def owner_of(agent: str | None = "a", workspace: str | None = None) -> memory_pb2.MemoryOwner:
    if workspace is not None:
        return memory_pb2.MemoryOwner(workspace_id=workspace)
    return memory_pb2.MemoryOwner(agent_id=agent)


def upsert(
    client: Client,
    key: str,
    value: str = "v",
    *,
    agent: str | None = "a",
    workspace: str | None = None,
    **kw: Any,
) -> pb.UpsertMemoryResponse:
    request = pb.UpsertMemoryRequest(owner=owner_of(agent, workspace), key=key, value=value, **kw)
    response: pb.UpsertMemoryResponse = client.call(client.memory.UpsertMemory, request)
    return response


def get(client: Client, memory_id: str) -> memory_pb2.Memory:
    response = client.call(client.memory.GetMemory, pb.GetMemoryRequest(id=memory_id))
    memory: memory_pb2.Memory = response.memory
    return memory


def page(
    client: Client,
    *,
    agent: str | None = "a",
    workspace: str | None = None,
    page_size: int = 0,
    page_token: str = "",
) -> pb.ListMemoriesResponse:
    request = pb.ListMemoriesRequest(
        owner=owner_of(agent, workspace), page_size=page_size, page_token=page_token
    )
    response: pb.ListMemoriesResponse = client.call(client.memory.ListMemories, request)
    return response


def listed_keys(
    client: Client, *, agent: str | None = "a", workspace: str | None = None
) -> list[str]:
    response = page(client, agent=agent, workspace=workspace)
    assert response.next_page_token == ""
    return [m.key for m in response.memories]


def update(
    client: Client,
    memory: memory_pb2.Memory,
    paths: list[str] | None = None,
    etag: str | None = None,
) -> memory_pb2.Memory:
    request = pb.UpdateMemoryRequest(memory=memory)
    if paths is not None:
        request.update_mask.SetInParent()
        request.update_mask.paths.extend(paths)
    if etag is not None:
        request.etag = etag
    response = client.call(client.memory.UpdateMemory, request)
    updated: memory_pb2.Memory = response.memory
    return updated


def pin(client: Client, memory_id: str, pinned: bool) -> memory_pb2.Memory:
    response = client.call(
        client.memory.PinMemory, pb.PinMemoryRequest(id=memory_id, pinned=pinned)
    )
    memory: memory_pb2.Memory = response.memory
    return memory


def delete(client: Client, memory_id: str, etag: str | None = None) -> None:
    request = pb.DeleteMemoryRequest(id=memory_id)
    if etag is not None:
        request.etag = etag
    client.call(client.memory.DeleteMemory, request)


def failure(call: Callable[[], object]) -> ErrorDetails:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return error_details(info.value)


def nanos(memory: memory_pb2.Memory, field: str) -> int:
    value: int = getattr(memory, field).ToNanoseconds()
    return value


# --- UpsertMemory ----------------------------------------------------------------------


def test_upsert_creates_a_manual_memory(client: Client) -> None:
    response = upsert(client, "favourite-colour", "blue")
    memory = response.memory
    assert response.created
    assert uuid.UUID(memory.id)
    assert memory.scope == memory_pb2.SCOPE_AGENT
    assert memory.agent_id == "a"
    assert memory.workspace_id == ""
    assert memory.key == "favourite-colour"
    assert memory.value == "blue"
    assert memory.pinned is False
    assert memory.importance == 0
    assert memory.source == memory_pb2.MEMORY_SOURCE_MANUAL
    assert memory.read_only is False
    assert memory.etag
    assert memory.HasField("created_at")
    assert memory.created_at == memory.updated_at
    assert get(client, memory.id) == memory


def test_upsert_creates_with_pin_and_importance(client: Client) -> None:
    memory = upsert(client, "k", pinned=True, importance=100).memory
    assert memory.pinned is True
    assert memory.importance == 100


def test_explicit_manual_source_is_accepted(client: Client) -> None:
    memory = upsert(client, "k", source=memory_pb2.MEMORY_SOURCE_MANUAL).memory
    assert memory.source == memory_pb2.MEMORY_SOURCE_MANUAL


def test_limits_count_code_points_not_bytes(client: Client) -> None:
    key, value = EMOJI * 255, EMOJI * 2000
    memory = upsert(client, key, value).memory
    assert get(client, memory.id).key == key
    assert get(client, memory.id).value == value


def test_reupsert_updates_in_place_and_keeps_absent_fields(client: Client) -> None:
    first = upsert(client, "k", "old", pinned=True, importance=40).memory

    again = upsert(client, "k", "new")
    assert again.created is False
    memory = again.memory
    assert memory.id == first.id
    assert memory.value == "new"
    assert memory.pinned is True
    assert memory.importance == 40
    assert memory.etag != first.etag
    assert memory.created_at == first.created_at
    assert nanos(memory, "updated_at") > nanos(memory, "created_at")
    assert listed_keys(client) == ["k"]
    assert get(client, first.id).value == "new"


def test_reupsert_changes_pin_and_importance_when_present(client: Client) -> None:
    first = upsert(client, "k", pinned=True, importance=40).memory
    memory = upsert(client, "k", "v2", pinned=False, importance=0).memory
    assert memory.id == first.id
    assert memory.pinned is False
    assert memory.importance == 0
    memory = upsert(client, "k", "v3", importance=77).memory
    assert (memory.pinned, memory.importance) == (False, 77)


def test_same_key_under_another_owner_is_another_row(client: Client) -> None:
    mine = upsert(client, "k", "agent a").memory
    other_agent = upsert(client, "k", "agent b", agent="b")
    workspace = upsert(client, "k", "workspace a", workspace="a")

    assert other_agent.created
    assert workspace.created
    assert len({mine.id, other_agent.memory.id, workspace.memory.id}) == 3
    assert workspace.memory.scope == memory_pb2.SCOPE_WORKSPACE
    assert workspace.memory.workspace_id == "a"
    assert workspace.memory.agent_id == ""
    assert get(client, mine.id).value == "agent a"
    assert [m.value for m in page(client, agent="b").memories] == ["agent b"]
    assert [m.value for m in page(client, workspace="a").memories] == ["workspace a"]


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (pb.UpsertMemoryRequest(owner=owner_of("a"), key="", value="v"), "key"),
        (pb.UpsertMemoryRequest(owner=owner_of("a"), key="k" * 256, value="v"), "key"),
        (pb.UpsertMemoryRequest(owner=owner_of("a"), key=EMOJI * 256, value="v"), "key"),
        (pb.UpsertMemoryRequest(owner=owner_of("a"), key="k", value=""), "value"),
        (pb.UpsertMemoryRequest(owner=owner_of("a"), key="k", value="v" * 2001), "value"),
        (
            pb.UpsertMemoryRequest(owner=owner_of("a"), key="k", value="v", importance=101),
            "importance",
        ),
        (
            pb.UpsertMemoryRequest(owner=owner_of("a"), key="k", value="v", importance=-1),
            "importance",
        ),
        (pb.UpsertMemoryRequest(key="k", value="v"), "owner"),
        (pb.UpsertMemoryRequest(owner=memory_pb2.MemoryOwner(), key="k", value="v"), "owner"),
        (pb.UpsertMemoryRequest(owner=owner_of(""), key="k", value="v"), "owner.agent_id"),
        (
            pb.UpsertMemoryRequest(owner=owner_of(workspace=""), key="k", value="v"),
            "owner.workspace_id",
        ),
    ],
    ids=[
        "empty-key",
        "256-char-key",
        "256-emoji-key",
        "empty-value",
        "2001-char-value",
        "importance-101",
        "importance-minus-1",
        "no-owner",
        "owner-without-kind",
        "empty-agent-id",
        "empty-workspace-id",
    ],
)
def test_invalid_upsert_is_refused_and_writes_nothing(
    client: Client, request_: pb.UpsertMemoryRequest, field: str
) -> None:
    details = failure(lambda: client.call(client.memory.UpsertMemory, request_))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {field}
    assert listed_keys(client) == []


def test_every_bad_field_is_reported_at_once(client: Client) -> None:
    request = pb.UpsertMemoryRequest(owner=owner_of("a"), key="", value="v" * 2001, importance=101)
    details = failure(lambda: client.call(client.memory.UpsertMemory, request))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"key", "value", "importance"}
    assert listed_keys(client) == []


def test_invalid_reupsert_leaves_the_row_unchanged(client: Client) -> None:
    first = upsert(client, "k", "kept", importance=5).memory
    details = failure(lambda: upsert(client, "k", "v" * 2001, importance=6))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert get(client, first.id) == first


def test_upsert_with_memorize_source_is_refused(client: Client) -> None:
    details = failure(lambda: upsert(client, "k", source=memory_pb2.MEMORY_SOURCE_MEMORIZE))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"source"}
    assert listed_keys(client) == []


def test_upsert_with_unknown_source_is_refused(client: Client) -> None:
    details = failure(lambda: upsert(client, "k", source=99))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"source"}
    assert listed_keys(client) == []


@pytest.mark.parametrize("key", ["auto:deploy", "director:learning:2026", "memorize:0f"])
def test_a_key_the_service_reserves_for_another_source_is_refused(client: Client, key: str) -> None:
    # A manual memory under such a key would pass for extraction's, a director's
    # learning or Memorize's.
    details = failure(lambda: upsert(client, key))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"key"}
    assert "reserved" in details.violations["key"]
    plain = upsert(client, "deploy", "friday").memory
    details = failure(lambda: update(client, memory_pb2.Memory(id=plain.id, key=key), ["key"]))
    assert set(details.violations) == {"memory.key"}
    assert get(client, plain.id).key == "deploy"


def test_extraction_s_own_prefix_is_open_to_its_source(client: Client) -> None:
    made = upsert(client, "auto:deploy", "friday", source=memory_pb2.MEMORY_SOURCE_AUTO)
    assert made.memory.key == "auto:deploy"


# --- GetMemory -------------------------------------------------------------------------


def test_get_unknown_id_is_not_found(client: Client) -> None:
    details = failure(lambda: get(client, str(uuid.uuid4())))
    assert details.code is grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("raw", ["", "not-a-uuid", "42"])
def test_get_malformed_id_is_invalid(client: Client, raw: str) -> None:
    details = failure(lambda: get(client, raw))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"id"}


def test_another_tenant_cannot_see_or_change_a_memory(client: Client, other_client: Client) -> None:
    memory = upsert(client, "k", "secret-free but private").memory
    assert failure(lambda: get(other_client, memory.id)).code is grpc.StatusCode.NOT_FOUND
    assert failure(lambda: pin(other_client, memory.id, True)).code is grpc.StatusCode.NOT_FOUND
    assert failure(lambda: delete(other_client, memory.id)).code is grpc.StatusCode.NOT_FOUND
    assert listed_keys(other_client) == []
    assert get(client, memory.id) == memory


# --- ListMemories ----------------------------------------------------------------------


def test_agent_order_is_pinned_then_importance_then_key(client: Client) -> None:
    upsert(client, "c")
    upsert(client, "a")
    upsert(client, "b", importance=10)
    upsert(client, "z", pinned=True)
    upsert(client, "y", pinned=True, importance=5)
    upsert(client, "d", importance=10)
    assert listed_keys(client) == ["y", "z", "b", "d", "a", "c"]


def test_workspace_order_is_pinned_then_importance_then_recency(client: Client) -> None:
    upsert(client, "pinned-oldest", workspace="w", pinned=True)
    upsert(client, "important", workspace="w", importance=50)
    upsert(client, "first", workspace="w")
    upsert(client, "second", workspace="w")
    upsert(client, "third", workspace="w")
    assert listed_keys(client, workspace="w") == [
        "pinned-oldest",
        "important",
        "third",
        "second",
        "first",
    ]

    upsert(client, "first", "touched", workspace="w")
    assert listed_keys(client, workspace="w") == [
        "pinned-oldest",
        "important",
        "first",
        "third",
        "second",
    ]


def test_listing_holds_only_the_owners_rows(client: Client) -> None:
    upsert(client, "mine")
    upsert(client, "theirs", agent="b")
    upsert(client, "shared", workspace="a")
    assert listed_keys(client) == ["mine"]
    assert listed_keys(client, agent="b") == ["theirs"]
    assert listed_keys(client, workspace="a") == ["shared"]
    assert listed_keys(client, agent="nobody") == []


def walk(
    client: Client, *, agent: str | None = "a", workspace: str | None = None, size: int
) -> tuple[list[str], int]:
    """Every id of a listing, page by page; and how many pages it took."""
    walked: list[str] = []
    token = ""
    pages = 0
    while True:
        response = page(client, agent=agent, workspace=workspace, page_size=size, page_token=token)
        pages += 1
        assert len(response.memories) <= size
        walked += [m.id for m in response.memories]
        token = response.next_page_token
        if not token:
            return walked, pages
        assert pages < 10, "the listing does not end"


def test_first_page_stops_at_page_size_and_says_whether_more_follow(client: Client) -> None:
    for i in range(5):
        upsert(client, f"k{i}")
    first = page(client, page_size=2)
    assert [m.key for m in first.memories] == ["k0", "k1"]
    assert first.next_page_token
    exact = page(client, page_size=5)
    assert len(exact.memories) == 5
    assert exact.next_page_token == ""
    assert page(client, page_size=6).next_page_token == ""


def test_pages_walk_every_row_once_in_order(client: Client) -> None:
    for i in range(5):
        upsert(client, f"k{i}", importance=i % 2, pinned=i == 3)
        upsert(client, f"k{i}", importance=i % 2, pinned=i == 3, agent=None, workspace="w")
    for i in range(4):
        upsert(client, f"k{i}", agent="four")

    for agent, workspace, rows in (("a", None, 5), (None, "w", 5), ("four", None, 4)):
        everything = [m.id for m in page(client, agent=agent, workspace=workspace).memories]
        assert len(everything) == rows
        walked, pages = walk(client, agent=agent, workspace=workspace, size=2)
        assert walked == everything
        assert pages == (rows + 1) // 2


def test_a_token_is_refused_by_another_owner(client: Client) -> None:
    for key in "abc":
        upsert(client, key)
        upsert(client, key, agent="b")
        upsert(client, key, workspace="a")
    token = page(client, page_size=1).next_page_token
    assert token
    for details in (
        failure(lambda: page(client, agent="b", page_size=1, page_token=token)),
        failure(lambda: page(client, workspace="a", page_size=1, page_token=token)),
    ):
        assert details.code is grpc.StatusCode.INVALID_ARGUMENT
        assert set(details.violations) == {"page_token"}


def test_forged_token_with_unstorable_position_is_invalid(
    server: ServerThread, client: Client
) -> None:
    upsert(client, "k")
    upsert(client, "l")
    token = page(client, page_size=1).next_page_token
    # A position, then the total the first page counted.
    nul_key = reposition(server, token, [False, 0, "a\x00b", 1])
    huge_importance = reposition(server, token, [False, 10**30, "k", 1])
    negative_total = reposition(server, token, [False, 0, "k", -1])
    no_total = reposition(server, token, [False, 0, "k"])
    for details in (
        failure(lambda: page(client, page_token=nul_key)),
        failure(lambda: page(client, page_token=huge_importance)),
        failure(lambda: page(client, page_token=negative_total)),
        failure(lambda: page(client, page_token=no_total)),
    ):
        assert details.code is grpc.StatusCode.INVALID_ARGUMENT
        assert set(details.violations) == {"page_token"}


@pytest.mark.parametrize("token", ["garbage", "!!!", "eyJsIjoxfQ", "\u00e9t\u00e9"])
def test_garbage_token_is_invalid(client: Client, token: str) -> None:
    upsert(client, "k")
    details = failure(lambda: page(client, page_token=token))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"page_token"}


def test_negative_page_size_is_invalid(client: Client) -> None:
    details = failure(lambda: page(client, page_size=-1))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"page_size"}


def test_huge_page_size_is_capped_not_refused(client: Client) -> None:
    upsert(client, "k")
    assert [m.key for m in page(client, page_size=2**31 - 1).memories] == ["k"]


def test_list_without_owner_is_invalid(client: Client) -> None:
    details = failure(lambda: client.call(client.memory.ListMemories, pb.ListMemoriesRequest()))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"owner"}


def test_a_note_is_written_kept_changed_by_mask_and_refused_past_its_limit(
    client: Client,
) -> None:
    created = upsert(client, "noted", note="from the onboarding call").memory
    assert get(client, created.id).note == "from the onboarding call"
    assert upsert(client, "noted", "v2").memory.note == "from the onboarding call"
    changed = update(client, memory_pb2.Memory(id=created.id, note="checked"), ["note"])
    assert changed.note == "checked"
    assert update(client, memory_pb2.Memory(id=created.id), ["note"]).note == ""
    for bad in ("x" * 2001, "two\nlines"):
        with pytest.raises(grpc.RpcError) as caught:
            upsert(client, "noted", note=bad)
        details = error_details(caught.value)
        assert details.code is grpc.StatusCode.INVALID_ARGUMENT
        assert "note" in details.violations


# --- UpdateMemory ----------------------------------------------------------------------


def test_update_with_value_mask_changes_only_the_value(client: Client) -> None:
    before = upsert(client, "k", "old", importance=3, pinned=True).memory
    patch = memory_pb2.Memory(id=before.id, key="ignored", value="new", importance=99)
    after = update(client, patch, ["value"])
    assert after.value == "new"
    assert (after.key, after.importance, after.pinned) == ("k", 3, True)
    assert after.id == before.id
    assert after.etag != before.etag
    assert after.created_at == before.created_at
    assert nanos(after, "updated_at") > nanos(before, "updated_at")
    assert get(client, before.id) == after


def test_update_without_mask_changes_populated_fields(client: Client) -> None:
    before = upsert(client, "k", "old", importance=3, pinned=True).memory
    after = update(client, memory_pb2.Memory(id=before.id, value="new", importance=9))
    assert (after.key, after.value, after.importance, after.pinned) == ("k", "new", 9, True)


def test_update_can_set_zero_and_false_through_the_mask(client: Client) -> None:
    before = upsert(client, "k", importance=3, pinned=True).memory
    after = update(client, memory_pb2.Memory(id=before.id), ["importance", "pinned"])
    assert (after.importance, after.pinned) == (0, False)


def test_update_renames_the_key(client: Client) -> None:
    before = upsert(client, "old-key", "v").memory
    after = update(client, memory_pb2.Memory(id=before.id, key="new-key"), ["key"])
    assert after.key == "new-key"
    assert listed_keys(client) == ["new-key"]
    assert upsert(client, "old-key", "fresh").created


def test_update_sets_and_clears_tags_of_any_memory(client: Client) -> None:
    manual = upsert(client, "k", "v").memory
    tagged = update(client, memory_pb2.Memory(id=manual.id, tags=["Release Flow", "git"]))
    assert list(tagged.tags) == ["release-flow", "git"]  # slugged as Memorize slugs them
    assert list(get(client, manual.id).tags) == ["release-flow", "git"]
    # Tags annotate: they change on a read-only memory too, and nothing else does.
    auto = upsert(client, "auto:x", "seen", source=memory_pb2.MEMORY_SOURCE_AUTO).memory
    after = update(client, memory_pb2.Memory(id=auto.id, value="changed", tags=["ops"]), ["tags"])
    assert (list(after.tags), after.value, after.read_only) == (["ops"], "seen", True)
    cleared = update(client, memory_pb2.Memory(id=manual.id), ["tags"])
    assert list(cleared.tags) == []
    details = failure(
        lambda: update(client, memory_pb2.Memory(id=manual.id, tags=["t"] * 33), ["tags"])
    )
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"memory.tags"}


@pytest.mark.parametrize("paths", [["source"], ["id"], ["value", "created_at"], ["read_only"]])
def test_update_with_unknown_mask_path_is_invalid(client: Client, paths: list[str]) -> None:
    before = upsert(client, "k", "old").memory
    patch = memory_pb2.Memory(id=before.id, value="new", source=memory_pb2.MEMORY_SOURCE_AUTO)
    details = failure(lambda: update(client, patch, paths))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"update_mask"}
    assert get(client, before.id) == before


def test_update_with_invalid_value_is_refused(client: Client) -> None:
    before = upsert(client, "k", "old").memory
    details = failure(lambda: update(client, memory_pb2.Memory(id=before.id), ["value"]))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"memory.value"}
    details = failure(
        lambda: update(client, memory_pb2.Memory(id=before.id, importance=101), ["importance"])
    )
    assert set(details.violations) == {"memory.importance"}
    assert get(client, before.id) == before


def test_a_value_out_of_bounds_outside_the_mask_is_refused_before_any_precondition(
    client: Client,
) -> None:
    """A field the mask leaves out is ignored, but the memory sent must still be a valid
    one: a malformed request is INVALID_ARGUMENT, even on a read-only memory whose
    named fields would fail their precondition."""
    auto = upsert(client, "auto:x", "seen", source=memory_pb2.MEMORY_SOURCE_AUTO).memory
    for body, field in [
        (memory_pb2.Memory(id=auto.id, value="changed", confidence=-1), "memory.confidence"),
        (memory_pb2.Memory(id=auto.id, value="changed", key="k" * 256), "memory.key"),
        (memory_pb2.Memory(id=auto.id, value="changed", importance=101), "memory.importance"),
    ]:
        details = failure(lambda body=body: update(client, body, ["value", "pinned"]))
        assert details.code is grpc.StatusCode.INVALID_ARGUMENT
        assert set(details.violations) == {field}
    assert get(client, auto.id) == auto


def test_update_of_unknown_memory_is_not_found(client: Client) -> None:
    patch = memory_pb2.Memory(id=str(uuid.uuid4()), value="v")
    assert failure(lambda: update(client, patch, ["value"])).code is grpc.StatusCode.NOT_FOUND


def test_update_with_malformed_id_is_invalid(client: Client) -> None:
    details = failure(lambda: update(client, memory_pb2.Memory(id="nope", value="v"), ["value"]))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"memory.id"}


def test_update_with_current_etag_is_accepted(client: Client) -> None:
    before = upsert(client, "k", "old").memory
    after = update(client, memory_pb2.Memory(id=before.id, value="new"), ["value"], before.etag)
    assert after.value == "new"
    again = update(client, memory_pb2.Memory(id=before.id, value="newer"), ["value"], after.etag)
    assert again.value == "newer"


def test_update_with_stale_etag_is_aborted_and_changes_nothing(client: Client) -> None:
    stale = upsert(client, "k", "v1").memory
    current = upsert(client, "k", "v2").memory
    details = failure(
        lambda: update(client, memory_pb2.Memory(id=stale.id, value="v3"), ["value"], stale.etag)
    )
    assert details.code is grpc.StatusCode.ABORTED
    assert details.reason == "ETAG_MISMATCH"
    assert details.metadata["current_etag"] == current.etag
    assert get(client, stale.id) == current


@pytest.mark.parametrize("etag", ["", "garbage", '"1"', 'W/"x"'])
def test_update_with_malformed_etag_is_invalid(client: Client, etag: str) -> None:
    before = upsert(client, "k", "old").memory
    details = failure(
        lambda: update(client, memory_pb2.Memory(id=before.id, value="new"), ["value"], etag)
    )
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"etag"}
    assert get(client, before.id) == before


def test_rename_to_a_key_in_use_already_exists(client: Client) -> None:
    taken = upsert(client, "taken", "t").memory
    mine = upsert(client, "mine", "m").memory
    details = failure(lambda: update(client, memory_pb2.Memory(id=mine.id, key="taken"), ["key"]))
    assert details.code is grpc.StatusCode.ALREADY_EXISTS
    assert get(client, mine.id) == mine
    assert get(client, taken.id) == taken


def test_rename_to_a_key_used_by_another_owner_is_fine(client: Client) -> None:
    upsert(client, "taken", agent="b")
    upsert(client, "taken", workspace="a")
    mine = upsert(client, "mine").memory
    assert update(client, memory_pb2.Memory(id=mine.id, key="taken"), ["key"]).key == "taken"


# --- PinMemory -------------------------------------------------------------------------


def test_pin_moves_the_row_to_the_top_and_unpin_moves_it_back(client: Client) -> None:
    upsert(client, "a", importance=50)
    upsert(client, "b", importance=10)
    low = upsert(client, "c").memory

    pinned = pin(client, low.id, True)
    assert pinned.pinned is True
    assert pinned.etag != low.etag
    assert get(client, low.id).pinned is True
    assert listed_keys(client) == ["c", "a", "b"]

    unpinned = pin(client, low.id, False)
    assert unpinned.pinned is False
    assert listed_keys(client) == ["a", "b", "c"]


def test_pin_in_a_workspace_moves_the_row_to_the_top(client: Client) -> None:
    old = upsert(client, "old", workspace="w").memory
    upsert(client, "new", workspace="w", importance=20)
    assert listed_keys(client, workspace="w") == ["new", "old"]
    pin(client, old.id, True)
    assert listed_keys(client, workspace="w") == ["old", "new"]


def test_pin_unknown_memory_is_not_found(client: Client) -> None:
    assert failure(lambda: pin(client, str(uuid.uuid4()), True)).code is grpc.StatusCode.NOT_FOUND


def test_pin_malformed_id_is_invalid(client: Client) -> None:
    details = failure(lambda: pin(client, "nope", True))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"id"}


# --- DeleteMemory ----------------------------------------------------------------------


def test_delete_removes_the_row(client: Client) -> None:
    memory = upsert(client, "k").memory
    upsert(client, "other")
    delete(client, memory.id)
    assert failure(lambda: get(client, memory.id)).code is grpc.StatusCode.NOT_FOUND
    assert failure(lambda: delete(client, memory.id)).code is grpc.StatusCode.NOT_FOUND
    assert listed_keys(client) == ["other"]


def test_key_is_free_again_after_delete(client: Client) -> None:
    memory = upsert(client, "k", "first").memory
    delete(client, memory.id)
    again = upsert(client, "k", "second")
    assert again.created
    assert again.memory.id != memory.id


def test_delete_with_current_etag_removes(client: Client) -> None:
    memory = upsert(client, "k").memory
    delete(client, memory.id, memory.etag)
    assert failure(lambda: get(client, memory.id)).code is grpc.StatusCode.NOT_FOUND


def test_delete_with_stale_etag_is_aborted_and_the_row_remains(client: Client) -> None:
    stale = upsert(client, "k", "v1").memory
    current = upsert(client, "k", "v2").memory
    details = failure(lambda: delete(client, stale.id, stale.etag))
    assert details.code is grpc.StatusCode.ABORTED
    assert details.reason == "ETAG_MISMATCH"
    assert details.metadata["current_etag"] == current.etag
    assert get(client, stale.id) == current


def test_delete_with_malformed_etag_is_invalid(client: Client) -> None:
    memory = upsert(client, "k").memory
    details = failure(lambda: delete(client, memory.id, "garbage"))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"etag"}
    assert get(client, memory.id) == memory


def test_delete_malformed_id_is_invalid(client: Client) -> None:
    details = failure(lambda: delete(client, "nope"))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"id"}


# --- Agent settings --------------------------------------------------------------------


def get_settings(client: Client, agent: str) -> memory_pb2.AgentSettings:
    response = client.call(
        client.memory.GetAgentSettings, pb.GetAgentSettingsRequest(agent_id=agent)
    )
    settings: memory_pb2.AgentSettings = response.settings
    return settings


def set_settings(
    client: Client, agent: str, enabled: bool, paths: list[str] | None = None
) -> memory_pb2.AgentSettings:
    request = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id=agent, memory_enabled=enabled)
    )
    if paths is not None:
        request.update_mask.SetInParent()
        request.update_mask.paths.extend(paths)
    response = client.call(client.memory.UpdateAgentSettings, request)
    settings: memory_pb2.AgentSettings = response.settings
    return settings


def test_unknown_agent_has_memory_disabled(client: Client) -> None:
    settings = get_settings(client, "never-seen")
    assert settings.agent_id == "never-seen"
    assert settings.memory_enabled is False
    assert not settings.HasField("updated_at")


def test_agent_settings_are_written_and_read_back(client: Client) -> None:
    written = set_settings(client, "a", True)
    assert written.agent_id == "a"
    assert written.memory_enabled is True
    assert written.HasField("updated_at")
    assert get_settings(client, "a").memory_enabled is True
    assert get_settings(client, "b").memory_enabled is False

    set_settings(client, "a", False, ["memory_enabled"])
    assert get_settings(client, "a").memory_enabled is False


def test_agent_settings_without_a_mask_change_only_the_switches_sent_on(
    client: Client,
) -> None:
    both = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(
            agent_id="partial", memory_enabled=True, active_memory_enabled=True
        )
    )
    client.call(client.memory.UpdateAgentSettings, both)
    # Only memory_enabled is populated: active memory stays on.
    assert set_settings(client, "partial", True).active_memory_enabled is True
    # A switch sent as false is not populated: nothing changes until the mask names it.
    assert set_settings(client, "partial", False).memory_enabled is True
    assert set_settings(client, "partial", False, ["memory_enabled"]).memory_enabled is False
    assert get_settings(client, "partial").active_memory_enabled is True


def test_agent_settings_with_empty_mask_change_nothing(client: Client) -> None:
    set_settings(client, "a", True)
    assert set_settings(client, "a", False, []).memory_enabled is True
    assert get_settings(client, "a").memory_enabled is True


def test_agent_settings_with_unknown_mask_path_are_invalid(client: Client) -> None:
    details = failure(lambda: set_settings(client, "a", True, ["agent_id"]))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"update_mask"}
    assert get_settings(client, "a").memory_enabled is False


def test_agent_settings_need_an_agent_id(client: Client) -> None:
    details = failure(lambda: get_settings(client, ""))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"agent_id"}
    details = failure(lambda: set_settings(client, "", True))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert set(details.violations) == {"settings.agent_id"}


def test_agent_settings_are_per_tenant(client: Client, other_client: Client) -> None:
    set_settings(client, "shared-agent-id", True)
    assert get_settings(other_client, "shared-agent-id").memory_enabled is False

    set_settings(other_client, "shared-agent-id", False)
    assert get_settings(client, "shared-agent-id").memory_enabled is True
    assert get_settings(other_client, "shared-agent-id").memory_enabled is False
