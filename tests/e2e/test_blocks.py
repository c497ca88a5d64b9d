"""BlockService over real gRPC: compare-and-set writes, limits, history, lines, tenancy."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import grpc
import psycopg
import pytest
from google.protobuf import timestamp_pb2
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from agent_memory.config import Settings
from agentmemory.v1 import block_pb2, memory_pb2
from agentmemory.v1 import block_service_pb2 as pb
from tests.page_tokens import reposition
from tests.support import Client, ErrorDetails, ServerThread, error_details, executable

CORE = block_pb2.BLOCK_LABEL_CORE
ARCHIVAL = block_pb2.BLOCK_LABEL_ARCHIVAL
USER = memory_pb2.SCOPE_USER
AGENT = memory_pb2.SCOPE_AGENT
EMOJI = "\U0001f600"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"


# --- helpers -------------------------------------------------------------------------


def as_written(block: block_pb2.Block) -> block_pb2.Block:
    """``block`` but for how many of its lines the index worker has embedded so far,
    which may grow between a write and a read."""
    copy = block_pb2.Block()
    copy.CopyFrom(block)
    copy.ClearField("indexed_line_count")
    return copy


def write(
    client: Client,
    content: str,
    *,
    label: int = CORE,
    scope: int = USER,
    agent: str = "",
    expected: timestamp_pb2.Timestamp | None = None,
) -> block_pb2.Block:
    request = pb.WriteBlockRequest(label=label, scope=scope, agent_id=agent, content=content)
    if expected is not None:
        request.expected_updated_at.CopyFrom(expected)
    block: block_pb2.Block = client.call(client.blocks.WriteBlock, request).block
    return block


def get(
    client: Client, *, label: int = CORE, scope: int = USER, agent: str = ""
) -> block_pb2.Block:
    request = pb.GetBlockRequest(label=label, scope=scope, agent_id=agent)
    block: block_pb2.Block = client.call(client.blocks.GetBlock, request).block
    return block


def delete(
    client: Client,
    *,
    label: int = CORE,
    scope: int = USER,
    agent: str = "",
    expected: timestamp_pb2.Timestamp | None = None,
) -> None:
    request = pb.DeleteBlockRequest(label=label, scope=scope, agent_id=agent)
    if expected is not None:
        request.expected_updated_at.CopyFrom(expected)
    client.call(client.blocks.DeleteBlock, request)


def listed(
    client: Client, scope_filter: int = block_pb2.BLOCK_SCOPE_FILTER_UNSPECIFIED, agent: str = ""
) -> list[tuple[int, int, str, str]]:
    """(scope, label, agent id, content) of each listed block, in listing order."""
    request = pb.ListBlocksRequest(scope_filter=scope_filter, agent_id=agent)
    blocks = client.call(client.blocks.ListBlocks, request).blocks
    return [(b.scope, b.label, b.agent_id, b.content) for b in blocks]


def versions(
    client: Client,
    *,
    label: int = CORE,
    scope: int = USER,
    agent: str = "",
    page_size: int = 0,
    page_token: str = "",
) -> pb.ListBlockVersionsResponse:
    request = pb.ListBlockVersionsRequest(
        label=label, scope=scope, agent_id=agent, page_size=page_size, page_token=page_token
    )
    response: pb.ListBlockVersionsResponse = client.call(client.blocks.ListBlockVersions, request)
    return response


def failure(call: Callable[[], object]) -> ErrorDetails:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return error_details(info.value)


def violation_reasons(call: Callable[[], object]) -> dict[str, str]:
    """field -> BadRequest violation reason of a call that must be INVALID_ARGUMENT."""
    with pytest.raises(grpc.RpcError) as info:
        call()
    assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    status = rpc_status.from_call(info.value)  # type: ignore[arg-type]
    assert status is not None
    reasons = {}
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            reasons.update({v.field: v.reason for v in bad.field_violations})
    return reasons


def shifted(ts: timestamp_pb2.Timestamp, nanos: int) -> timestamp_pb2.Timestamp:
    moved = timestamp_pb2.Timestamp()
    moved.FromNanoseconds(ts.ToNanoseconds() + nanos)
    return moved


def rfc3339(ts: timestamp_pb2.Timestamp) -> str:
    """The form conflicts report times in: UTC, six fractional digits."""
    return ts.ToDatetime().strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def assert_conflict(details: ErrorDetails, current: block_pb2.Block | None) -> None:
    assert details.code is grpc.StatusCode.ABORTED
    assert details.reason == "BLOCK_CONFLICT"
    if current is None:
        assert details.metadata["exists"] == "false"
        assert details.metadata["current_updated_at"] == ""
        assert details.metadata["current_version"] == "0"
    else:
        assert details.metadata["exists"] == "true"
        assert details.metadata["current_updated_at"] == rfc3339(current.updated_at)
        assert details.metadata["current_version"] == str(current.version)


def archival_lines(
    database_url: str, client: Client, *, scope: str = "user", agent: str = ""
) -> list[tuple[int, str]]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT line_number, content FROM archival_lines"
            " WHERE tenant_id = %s AND user_id = %s AND scope = %s AND agent_id = %s"
            " ORDER BY line_number",
            (client.tenant_id, client.user_id, scope, agent),
        ).fetchall()
    return [(int(n), str(c)) for n, c in rows]


def stored_rows(database_url: str, table: str, tenant_id: str) -> int:
    assert table in {"blocks", "block_versions", "archival_lines"}
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            f"SELECT count(*) FROM {table} WHERE tenant_id = %s",
            (tenant_id,),
        ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture(scope="module")
def small_server(database_url: str) -> Iterator[ServerThread]:
    """A server with tiny limits and only three versions kept per block."""
    running = ServerThread(
        database_url,
        settings=Settings(
            block_versions_kept=3, core_max_chars=20, core_max_entries=2, archival_max_chars=30
        ),
    )
    with running:
        yield running


# --- create, read, compare-and-set --------------------------------------------------------


def test_a_write_without_expected_updated_at_creates_the_block(client: Client) -> None:
    content = "- Prefers concise answers\n\n- Works in Europe/Paris\n"
    block = write(client, content)
    assert block.label == CORE
    assert block.scope == USER
    assert block.agent_id == ""
    assert block.content == content
    assert block.char_count == len(content)
    assert block.entry_count == 2
    assert block.version == 1
    assert block.HasField("updated_at")
    assert block.HasField("created_at")
    assert block.updated_at == block.created_at
    assert get(client) == block


def test_creating_a_block_that_exists_is_aborted_and_changes_nothing(client: Client) -> None:
    first = write(client, "first")
    details = failure(lambda: write(client, "second"))
    assert_conflict(details, first)
    assert details.metadata["current_updated_at"] in details.message
    assert get(client) == first


def test_expected_updated_at_round_trips_through_timestamp_to_the_microsecond(
    client: Client,
) -> None:
    first = write(client, "v1")
    read = get(client).updated_at
    assert read.nanos % 1000 == 0, "stored times are whole microseconds"

    second = write(client, "v2", expected=read)
    assert second.version == 2
    assert second.updated_at.ToNanoseconds() > first.updated_at.ToNanoseconds()
    assert second.created_at == first.created_at

    current = get(client)
    for stale in (read, shifted(current.updated_at, 1000), shifted(current.updated_at, -1000)):
        assert_conflict(failure(lambda s=stale: write(client, "v3", expected=s)), current)
    for not_a_microsecond in (1, 999, -1):
        off = shifted(current.updated_at, not_a_microsecond)
        assert_conflict(failure(lambda o=off: write(client, "v3", expected=o)), current)
    assert get(client) == current

    third = write(client, "v3", expected=current.updated_at)
    assert (third.version, third.content) == (3, "v3")


def test_every_accepted_write_is_strictly_later_and_one_version_up(client: Client) -> None:
    block = write(client, "0", label=ARCHIVAL)
    for n in range(1, 8):
        following = write(client, str(n), label=ARCHIVAL, expected=block.updated_at)
        assert following.updated_at.ToNanoseconds() > block.updated_at.ToNanoseconds()
        assert following.version == block.version + 1
        block = following
    assert as_written(get(client, label=ARCHIVAL)) == as_written(block)


def test_expected_updated_at_for_an_absent_block_is_aborted(client: Client) -> None:
    elsewhere = write(client, "user core")
    details = failure(
        lambda: write(client, "x", scope=AGENT, agent="coder", expected=elsewhere.updated_at)
    )
    assert_conflict(details, None)
    assert failure(lambda: get(client, scope=AGENT, agent="coder")).code is (
        grpc.StatusCode.NOT_FOUND
    )


def test_an_out_of_range_expected_updated_at_is_invalid(client: Client) -> None:
    block = write(client, "x")
    bad = timestamp_pb2.Timestamp(seconds=block.updated_at.seconds, nanos=-5)
    assert violation_reasons(lambda: write(client, "y", expected=bad)) == {
        "expected_updated_at": "INVALID_TIMESTAMP"
    }
    huge = timestamp_pb2.Timestamp(seconds=10**12)
    assert violation_reasons(lambda: delete(client, expected=huge)) == {
        "expected_updated_at": "INVALID_TIMESTAMP"
    }
    assert get(client) == block


# --- validation and limits ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"label": block_pb2.BLOCK_LABEL_UNSPECIFIED}, {"label": "REQUIRED"}),
        ({"label": 7}, {"label": "INVALID_ENUM"}),
        ({"scope": memory_pb2.SCOPE_UNSPECIFIED}, {"scope": "INVALID_SCOPE"}),
        (
            {"scope": memory_pb2.SCOPE_WORKSPACE, "agent_id": "w"},
            {"agent_id": "NOT_ALLOWED", "workspace_id": "REQUIRED"},
        ),
        ({"scope": AGENT}, {"agent_id": "REQUIRED"}),
        ({"agent_id": "coder"}, {"agent_id": "NOT_ALLOWED"}),
        ({"scope": AGENT, "agent_id": "a" * 256}, {"agent_id": "TOO_LONG"}),
        ({"scope": AGENT, "agent_id": "a\x00b"}, {"agent_id": "INVALID_CHARACTER"}),
        (
            {"label": block_pb2.BLOCK_LABEL_UNSPECIFIED, "scope": memory_pb2.SCOPE_UNSPECIFIED},
            {"label": "REQUIRED", "scope": "INVALID_SCOPE"},
        ),
    ],
    ids=[
        "no-label",
        "unknown-label",
        "no-scope",
        "workspace-scope",
        "agent-without-agent-id",
        "user-with-agent-id",
        "256-char-agent-id",
        "nul-in-agent-id",
        "no-label-no-scope",
    ],
)
@pytest.mark.parametrize("rpc", ["GetBlock", "WriteBlock", "DeleteBlock", "ListBlockVersions"])
def test_bad_block_identities_are_invalid_on_every_rpc(
    client: Client, database_url: str, rpc: str, fields: dict[str, object], expected: dict[str, str]
) -> None:
    request = getattr(pb, f"{rpc}Request")(**{"label": CORE, "scope": USER, **fields})
    if rpc == "WriteBlock":
        request.content = "content"
    method = getattr(client.blocks, rpc)
    assert violation_reasons(lambda: client.call(method, request)) == expected
    assert stored_rows(database_url, "blocks", client.tenant_id) == 0


def test_empty_content_clears_a_block_and_keeps_it(client: Client) -> None:
    block = write(client, "- something")
    cleared = write(client, "", expected=block.updated_at)
    assert (cleared.content, cleared.char_count, cleared.entry_count) == ("", 0, 0)
    assert cleared.version == 2
    assert get(client) == cleared


def test_nul_in_content_is_invalid(client: Client) -> None:
    assert violation_reasons(lambda: write(client, "a\x00b")) == {"content": "INVALID_CHARACTER"}


@pytest.mark.parametrize(
    ("label", "limit", "char"),
    [(CORE, 4000, "x"), (CORE, 4000, EMOJI), (ARCHIVAL, 8000, "x"), (ARCHIVAL, 8000, EMOJI)],
)
def test_limits_are_in_code_points(client: Client, label: int, limit: int, char: str) -> None:
    name = "core" if label == CORE else "archival"
    with pytest.raises(grpc.RpcError) as info:
        write(client, char * (limit + 1), label=label)
    details = error_details(info.value)
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.violations == {
        "content": f"{name} blocks hold at most {limit} characters; got {limit + 1}"
    }
    assert violation_reasons(lambda: write(client, char * (limit + 1), label=label)) == {
        "content": "TOO_LONG"
    }
    block = write(client, char * limit, label=label)
    assert block.char_count == limit


def test_core_blocks_hold_at_most_twenty_entries(client: Client) -> None:
    twenty = "\n\n".join(f"- fact {i}" for i in range(20))
    details = failure(lambda: write(client, twenty + "\n- fact 20"))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert "at most 20 entries" in details.violations["content"]
    assert "got 21" in details.violations["content"]
    assert violation_reasons(lambda: write(client, twenty + "\n- fact 20")) == {
        "content": "TOO_MANY_ENTRIES"
    }
    assert write(client, twenty).entry_count == 20
    assert write(client, "\n".join(["x"] * 21), label=ARCHIVAL).entry_count == 21


def test_limits_are_server_settings(small_server: ServerThread) -> None:
    with small_server.client() as client:
        assert violation_reasons(lambda: write(client, "x" * 21)) == {"content": "TOO_LONG"}
        assert violation_reasons(lambda: write(client, "a\nb\nc")) == {
            "content": "TOO_MANY_ENTRIES"
        }
        assert violation_reasons(lambda: write(client, "x" * 31, label=ARCHIVAL)) == {
            "content": "TOO_LONG"
        }
        assert write(client, "x" * 20).char_count == 20
        assert write(client, "x" * 30, label=ARCHIVAL).char_count == 30


def test_an_over_limit_replacement_leaves_the_block_unchanged(client: Client) -> None:
    block = write(client, "kept")
    details = failure(lambda: write(client, "x" * 4001, expected=block.updated_at))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert get(client) == block


def test_content_carrying_a_secret_is_refused_and_nothing_is_written(
    client: Client, database_url: str
) -> None:
    content = f"- deploy with aws key {AWS_KEY}"
    details = failure(lambda: write(client, content, label=ARCHIVAL))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.reason == "SECRET_IN_VALUE"
    assert set(details.violations) == {"content"}
    assert AWS_KEY not in details.message
    assert AWS_KEY not in json.dumps(details.metadata)
    assert failure(lambda: get(client, label=ARCHIVAL)).code is grpc.StatusCode.NOT_FOUND
    for table in ("blocks", "block_versions", "archival_lines"):
        assert stored_rows(database_url, table, client.tenant_id) == 0

    block = write(client, "- the deploy key lives in the vault", label=ARCHIVAL)
    refused = failure(lambda: write(client, content, label=ARCHIVAL, expected=block.updated_at))
    assert refused.reason == "SECRET_IN_VALUE"
    assert as_written(get(client, label=ARCHIVAL)) == as_written(block)
    assert len(versions(client, label=ARCHIVAL).versions) == 1
    assert archival_lines(database_url, client) == [(1, "- the deploy key lives in the vault")]


# --- not found, delete --------------------------------------------------------------------


def test_unknown_blocks_are_not_found(client: Client) -> None:
    for call in (
        lambda: get(client),
        lambda: get(client, label=ARCHIVAL, scope=AGENT, agent="coder"),
        lambda: delete(client),
        lambda: versions(client),
    ):
        details = failure(call)
        assert details.code is grpc.StatusCode.NOT_FOUND
        assert details.reason == "BLOCK_NOT_FOUND"


def test_delete_removes_the_block_its_versions_and_its_lines(
    client: Client, database_url: str
) -> None:
    block = write(client, "one\ntwo", label=ARCHIVAL, scope=AGENT, agent="coder")
    write(
        client, "one\nthree", label=ARCHIVAL, scope=AGENT, agent="coder", expected=block.updated_at
    )
    write(client, "user block stays")
    assert stored_rows(database_url, "block_versions", client.tenant_id) == 3

    delete(client, label=ARCHIVAL, scope=AGENT, agent="coder")
    assert failure(lambda: get(client, label=ARCHIVAL, scope=AGENT, agent="coder")).code is (
        grpc.StatusCode.NOT_FOUND
    )
    assert stored_rows(database_url, "blocks", client.tenant_id) == 1
    assert stored_rows(database_url, "block_versions", client.tenant_id) == 1
    assert archival_lines(database_url, client, scope="agent", agent="coder") == []
    assert failure(lambda: delete(client, label=ARCHIVAL, scope=AGENT, agent="coder")).code is (
        grpc.StatusCode.NOT_FOUND
    )

    again = write(client, "fresh", label=ARCHIVAL, scope=AGENT, agent="coder")
    assert again.version == 1
    assert [
        v.version for v in versions(client, label=ARCHIVAL, scope=AGENT, agent="coder").versions
    ] == [1]


def test_delete_with_expected_updated_at_is_compare_and_set(client: Client) -> None:
    first = write(client, "v1")
    current = write(client, "v2", expected=first.updated_at)

    assert_conflict(failure(lambda: delete(client, expected=first.updated_at)), current)
    off = shifted(current.updated_at, 1)
    assert_conflict(failure(lambda: delete(client, expected=off)), current)
    assert get(client) == current

    delete(client, expected=current.updated_at)
    assert failure(lambda: get(client)).code is grpc.StatusCode.NOT_FOUND
    details = failure(lambda: delete(client, expected=current.updated_at))
    assert details.code is grpc.StatusCode.NOT_FOUND


# --- listing ------------------------------------------------------------------------------


def test_list_blocks_filters_by_scope_and_agent(client: Client) -> None:
    write(client, "b archival", label=ARCHIVAL, scope=AGENT, agent="b")
    write(client, "user archival", label=ARCHIVAL)
    write(client, "a core", scope=AGENT, agent="a")
    write(client, "b core", scope=AGENT, agent="b")
    write(client, "user core")
    user = [(USER, CORE, "", "user core"), (USER, ARCHIVAL, "", "user archival")]
    agent_a = [(AGENT, CORE, "a", "a core")]
    agent_b = [(AGENT, CORE, "b", "b core"), (AGENT, ARCHIVAL, "b", "b archival")]

    assert listed(client) == user + agent_a + agent_b
    assert listed(client, block_pb2.BLOCK_SCOPE_FILTER_ALL) == user + agent_a + agent_b
    assert listed(client, block_pb2.BLOCK_SCOPE_FILTER_USER) == user
    assert listed(client, block_pb2.BLOCK_SCOPE_FILTER_AGENT) == agent_a + agent_b
    assert listed(client, block_pb2.BLOCK_SCOPE_FILTER_AGENT, "b") == agent_b
    assert listed(client, block_pb2.BLOCK_SCOPE_FILTER_ALL, "a") == user + agent_a
    assert listed(client, block_pb2.BLOCK_SCOPE_FILTER_UNSPECIFIED, "a") == user + agent_a
    assert listed(client, block_pb2.BLOCK_SCOPE_FILTER_AGENT, "nobody") == []


def test_listed_blocks_carry_every_field(client: Client) -> None:
    block = write(client, "one\ntwo", label=ARCHIVAL, scope=AGENT, agent="a")
    response = client.call(client.blocks.ListBlocks, pb.ListBlocksRequest())
    assert list(response.blocks) == [block]


@pytest.mark.parametrize(
    ("scope_filter", "agent", "expected"),
    [
        (block_pb2.BLOCK_SCOPE_FILTER_USER, "a", {"agent_id": "NOT_ALLOWED"}),
        (block_pb2.BLOCK_SCOPE_FILTER_AGENT, "a" * 256, {"agent_id": "TOO_LONG"}),
        (block_pb2.BLOCK_SCOPE_FILTER_ALL, "a\x00", {"agent_id": "INVALID_CHARACTER"}),
        (9, "", {"scope_filter": "INVALID_ENUM"}),
    ],
)
def test_bad_list_filters_are_invalid(
    client: Client, scope_filter: int, agent: str, expected: dict[str, str]
) -> None:
    assert violation_reasons(lambda: listed(client, scope_filter, agent)) == expected


# --- tenancy ------------------------------------------------------------------------------


def test_another_user_of_the_same_tenant_never_sees_the_blocks(
    server: ServerThread, client: Client
) -> None:
    mine = write(client, "mine")
    write(client, "mine too", label=ARCHIVAL, scope=AGENT, agent="coder")
    with server.client(tenant_id=client.tenant_id, user_id="someone-else") as other:
        assert listed(other) == []
        assert failure(lambda: get(other)).code is grpc.StatusCode.NOT_FOUND
        assert failure(lambda: versions(other)).code is grpc.StatusCode.NOT_FOUND
        assert failure(lambda: delete(other)).code is grpc.StatusCode.NOT_FOUND
        assert_conflict(failure(lambda: write(other, "x", expected=mine.updated_at)), None)

        theirs = write(other, "theirs")
        assert theirs.version == 1
        assert listed(other) == [(USER, CORE, "", "theirs")]
    assert get(client) == mine
    assert [b[3] for b in listed(client)] == ["mine", "mine too"]


def test_another_tenant_never_sees_the_blocks(client: Client, other_client: Client) -> None:
    mine = write(client, "mine", scope=AGENT, agent="coder")
    assert listed(other_client) == []
    assert failure(lambda: get(other_client, scope=AGENT, agent="coder")).code is (
        grpc.StatusCode.NOT_FOUND
    )
    assert failure(lambda: delete(other_client, scope=AGENT, agent="coder")).code is (
        grpc.StatusCode.NOT_FOUND
    )
    details = failure(
        lambda: write(other_client, "x", scope=AGENT, agent="coder", expected=mine.updated_at)
    )
    assert_conflict(details, None)
    write(other_client, "theirs", scope=AGENT, agent="coder")
    assert get(client, scope=AGENT, agent="coder") == mine


# --- version history ----------------------------------------------------------------------


def test_versions_list_every_write_newest_first(client: Client) -> None:
    written = [write(client, "v1 é", label=ARCHIVAL, scope=AGENT, agent="a")]
    for content in ("v2", f"v3 {EMOJI}"):
        previous = written[-1].updated_at
        written.append(
            write(client, content, label=ARCHIVAL, scope=AGENT, agent="a", expected=previous)
        )
    response = versions(client, label=ARCHIVAL, scope=AGENT, agent="a")
    assert response.next_page_token == ""
    assert [
        (v.version, v.content, v.char_count, v.writer_user_id, v.written_at)
        for v in response.versions
    ] == [
        (b.version, b.content, b.char_count, client.user_id, b.updated_at)
        for b in reversed(written)
    ]
    assert [v.char_count for v in response.versions] == [4, 2, 4]


def test_versions_page_with_opaque_tokens(client: Client) -> None:
    block = write(client, "v1")
    for n in range(2, 8):
        block = write(client, f"v{n}", expected=block.updated_at)
    seen: list[int] = []
    token = ""
    pages = 0
    while True:
        response = versions(client, page_size=3, page_token=token)
        seen += [v.version for v in response.versions]
        pages += 1
        token = response.next_page_token
        if not token:
            break
    assert seen == [7, 6, 5, 4, 3, 2, 1]
    assert pages == 3


def test_foreign_and_forged_version_page_tokens_are_invalid(
    server: ServerThread, client: Client
) -> None:
    block = write(client, "v1")
    write(client, "v2", expected=block.updated_at)
    write(client, "archival", label=ARCHIVAL)
    token = versions(client, page_size=1).next_page_token
    assert token
    assert violation_reasons(lambda: versions(client, label=ARCHIVAL, page_token=token)) == {
        "page_token": "INVALID_PAGE_TOKEN"
    }
    for position in (["2"], [True], [0], [None]):
        forged = reposition(server, token, position)
        assert violation_reasons(lambda f=forged: versions(client, page_token=f)) == {
            "page_token": "INVALID_PAGE_TOKEN"
        }
    assert violation_reasons(lambda: versions(client, page_token="not a token")) == {
        "page_token": "INVALID_PAGE_TOKEN"
    }
    assert violation_reasons(lambda: versions(client, page_size=-1)) == {
        "page_size": "OUT_OF_RANGE"
    }


def test_versions_past_the_newest_are_kept_while_the_history_lasts(
    small_server: ServerThread, database_url: str
) -> None:
    with small_server.client() as client:
        block = write(client, "v1")
        for n in range(2, 7):
            block = write(client, f"v{n}", expected=block.updated_at)
        # Younger than the history kept: every version stays, for reads as of then.
        assert [v.version for v in versions(client).versions] == [6, 5, 4, 3, 2, 1]
        # Once the first five are older than it, a write keeps the newest three and,
        # of the old ones, the newest: the block as it was at the horizon.
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(
                "UPDATE block_versions SET written_at = written_at - interval '100 days'"
                " WHERE tenant_id = %s AND version <= 5",
                (client.tenant_id,),
            )
        write(client, "v7", expected=block.updated_at)
        assert [(v.version, v.content) for v in versions(client).versions] == [
            (7, "v7"),
            (6, "v6"),
            (5, "v5"),
        ]
        assert stored_rows(database_url, "block_versions", client.tenant_id) == 3


# --- archival lines -----------------------------------------------------------------------


def test_archival_lines_follow_every_write(client: Client, database_url: str) -> None:
    first = write(
        client, "\n- Acme renewal: May 12  \n\n  \n- Globex: DPA approved\n", label=ARCHIVAL
    )
    assert archival_lines(database_url, client) == [
        (2, "- Acme renewal: May 12"),
        (5, "- Globex: DPA approved"),
    ]
    second = write(client, "- only line", label=ARCHIVAL, expected=first.updated_at)
    assert archival_lines(database_url, client) == [(1, "- only line")]

    assert_conflict(
        failure(
            lambda: write(client, "- lost\n- write", label=ARCHIVAL, expected=first.updated_at)
        ),
        second,
    )
    assert archival_lines(database_url, client) == [(1, "- only line")]

    write(client, "\n\n", label=ARCHIVAL, expected=second.updated_at)
    assert archival_lines(database_url, client) == []


def test_archival_lines_are_kept_per_owner_and_only_for_archival_blocks(
    client: Client, database_url: str
) -> None:
    write(client, "core line one\ncore line two")
    write(client, "user fact", label=ARCHIVAL)
    write(client, "coder fact", label=ARCHIVAL, scope=AGENT, agent="coder")
    write(client, "writer fact", label=ARCHIVAL, scope=AGENT, agent="writer")
    assert archival_lines(database_url, client) == [(1, "user fact")]
    assert archival_lines(database_url, client, scope="agent", agent="coder") == [(1, "coder fact")]
    assert stored_rows(database_url, "archival_lines", client.tenant_id) == 3

    delete(client, label=ARCHIVAL, scope=AGENT, agent="coder")
    delete(client)
    assert archival_lines(database_url, client) == [(1, "user fact")]
    assert archival_lines(database_url, client, scope="agent", agent="writer") == [
        (1, "writer fact")
    ]
    assert stored_rows(database_url, "archival_lines", client.tenant_id) == 2


# --- concurrency --------------------------------------------------------------------------

WRITERS = 20


def race(client: Client, requests: list[pb.WriteBlockRequest]) -> list[object]:
    """Send every request at once, each as its own call; the reply or the error of each."""
    barrier = threading.Barrier(len(requests))

    def send(request: pb.WriteBlockRequest) -> object:
        barrier.wait()
        try:
            return client.call(client.blocks.WriteBlock, request).block
        except grpc.RpcError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=len(requests)) as pool:
        return list(pool.map(send, requests))


def split(outcomes: list[object]) -> tuple[list[block_pb2.Block], list[ErrorDetails]]:
    won = [o for o in outcomes if isinstance(o, block_pb2.Block)]
    lost = [error_details(o) for o in outcomes if isinstance(o, grpc.RpcError)]
    assert len(won) + len(lost) == len(outcomes)
    return won, lost


def test_of_twenty_writers_holding_the_same_updated_at_exactly_one_wins(
    client: Client, database_url: str
) -> None:
    start = write(client, "start", label=ARCHIVAL)
    requests = [
        pb.WriteBlockRequest(
            label=ARCHIVAL,
            scope=USER,
            content=f"written by writer {i}",
            expected_updated_at=start.updated_at,
        )
        for i in range(WRITERS)
    ]
    won, lost = split(race(client, requests))

    assert len(won) == 1
    assert len(lost) == WRITERS - 1
    assert {(d.code, d.reason) for d in lost} == {(grpc.StatusCode.ABORTED, "BLOCK_CONFLICT")}
    winner = won[0]
    assert winner.version == 2
    assert as_written(get(client, label=ARCHIVAL)) == as_written(winner)
    assert [v.content for v in versions(client, label=ARCHIVAL).versions] == [
        winner.content,
        "start",
    ]
    assert archival_lines(database_url, client) == [(1, winner.content)]


def test_of_twenty_creators_of_a_new_block_exactly_one_wins(client: Client) -> None:
    requests = [
        pb.WriteBlockRequest(
            label=CORE, scope=AGENT, agent_id="racer", content=f"created by writer {i}"
        )
        for i in range(WRITERS)
    ]
    won, lost = split(race(client, requests))

    assert len(won) == 1
    assert len(lost) == WRITERS - 1
    assert {(d.code, d.reason) for d in lost} == {(grpc.StatusCode.ABORTED, "BLOCK_CONFLICT")}
    assert {d.metadata["exists"] for d in lost} == {"true"}
    winner = won[0]
    assert winner.version == 1
    assert get(client, scope=AGENT, agent="racer") == winner
    assert len(versions(client, scope=AGENT, agent="racer").versions) == 1


# --- grpcurl, as an operator types it ------------------------------------------------------


def grpcurl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [executable("grpcurl"), "-plaintext", *args], capture_output=True, text=True, timeout=60
    )


def test_grpcurl_compare_and_set_through_json_times(server: ServerThread, client: Client) -> None:
    auth = f"authorization: {client.metadata[0][1]}"
    method = "agentmemory.v1.BlockService/WriteBlock"
    body = {"label": "BLOCK_LABEL_CORE", "scope": "SCOPE_USER", "content": "- likes tea"}
    created = grpcurl("-H", auth, "-d", json.dumps(body), server.address, method)
    assert created.returncode == 0, created.stderr
    read = json.loads(created.stdout)["block"]["updated_at"]

    body = {**body, "content": "- likes coffee", "expected_updated_at": read}
    updated = grpcurl("-H", auth, "-d", json.dumps(body), server.address, method)
    assert updated.returncode == 0, updated.stderr
    current = json.loads(updated.stdout)["block"]
    assert current["version"] == "2"

    stale = grpcurl("-H", auth, "-d", json.dumps(body), server.address, method)
    assert stale.returncode != 0
    assert "Aborted" in stale.stderr
    assert "BLOCK_CONFLICT" in stale.stderr
    assert rfc3339(get(client).updated_at) in stale.stderr


def test_an_etag_is_a_compare_and_set_token_like_updated_at(client: Client) -> None:
    first = client.call(
        client.blocks.WriteBlock,
        pb.WriteBlockRequest(label=block_pb2.BLOCK_LABEL_CORE, agent_id="etags", content="one"),
    ).block
    assert first.scope == memory_pb2.SCOPE_AGENT  # inferred from the agent id
    assert first.etag.startswith('W/"1.')
    second = client.call(
        client.blocks.WriteBlock,
        pb.WriteBlockRequest(
            label=block_pb2.BLOCK_LABEL_CORE, agent_id="etags", content="two", etag=first.etag
        ),
    ).block
    assert (second.version, second.content) == (2, "two")
    assert second.etag != first.etag
    with pytest.raises(grpc.RpcError) as stale:
        client.call(
            client.blocks.WriteBlock,
            pb.WriteBlockRequest(
                label=block_pb2.BLOCK_LABEL_CORE, agent_id="etags", content="x", etag=first.etag
            ),
        )
    assert stale.value.code() is grpc.StatusCode.ABORTED  # type: ignore[attr-defined]
    assert error_details(stale.value).metadata["current_etag"] == second.etag
    # The etag and the time it carries agree; sent together they must name one write.
    same = client.call(
        client.blocks.WriteBlock,
        pb.WriteBlockRequest(
            label=block_pb2.BLOCK_LABEL_CORE,
            agent_id="etags",
            content="three",
            etag=second.etag,
            expected_updated_at=second.updated_at,
        ),
    ).block
    assert same.version == 3
    for etag, extra in (
        ('W/"3"', {}),
        ("not an etag", {}),
        ('W/"1.9999999999999999999"', {}),  # a time past any a block is written at
        (same.etag, {"expected_updated_at": second.updated_at}),
    ):
        with pytest.raises(grpc.RpcError) as refused:
            client.call(
                client.blocks.WriteBlock,
                pb.WriteBlockRequest(
                    label=block_pb2.BLOCK_LABEL_CORE,
                    agent_id="etags",
                    content="x",
                    etag=etag,
                    **extra,
                ),
            )
        assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
        assert list(error_details(refused.value).violations) == ["etag"]
    current = client.call(
        client.blocks.GetBlock,
        pb.GetBlockRequest(label=block_pb2.BLOCK_LABEL_CORE, agent_id="etags"),
    ).block
    assert (current.content, current.etag) == ("three", same.etag)
    with pytest.raises(grpc.RpcError) as stale_delete:
        client.call(
            client.blocks.DeleteBlock,
            pb.DeleteBlockRequest(
                label=block_pb2.BLOCK_LABEL_CORE, agent_id="etags", etag=second.etag
            ),
        )
    assert stale_delete.value.code() is grpc.StatusCode.ABORTED  # type: ignore[attr-defined]
    client.call(
        client.blocks.DeleteBlock,
        pb.DeleteBlockRequest(label=block_pb2.BLOCK_LABEL_CORE, agent_id="etags", etag="*"),
    )
