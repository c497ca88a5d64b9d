"""Roles on API keys, over real gRPC: what a reader, an editor and an orchestrator
may call, the source rule of UpsertMemory, the local mode, and the CLI that makes
keys of each role.

The RPCs are enumerated from the generated descriptors, so an RPC added to any
service is called here too; one this file does not list as a reader's or an
editor's must refuse both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import grpc
import psycopg
import pytest
from google.protobuf import field_mask_pb2, message_factory
from google.protobuf.descriptor import MethodDescriptor

from agent_memory.config import Settings
from agentmemory.v1 import block_pb2, memory_pb2, memory_service_pb2_grpc
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import Client, ServerThread, agentmemory_rpcs, cli, error_details

READER_RPCS = {
    "MemoryService.GetMemory",
    "MemoryService.ListMemories",
    "MemoryService.ListLearnings",
    "MemoryService.ListMemoryEvents",
    "MemoryService.GetAgentSettings",
    "MemoryService.GetWorkspaceSettings",
    "MemoryService.GetUsage",
    "MemoryService.GetActiveSession",
    "MemoryService.ListAgentRuns",
    "MemoryService.GetConversation",
    "MemoryService.ListConversations",
    "MemoryService.GetExtractionJob",
    "MemoryService.GetCaller",
    "MemoryService.ListAgents",
    "MemoryService.ListWorkspaces",
    "BlockService.GetBlock",
    "BlockService.ListBlocks",
    "BlockService.ListBlockVersions",
    "RecallService.Recall",
    "RecallService.RenderPrompt",
    "RecallService.GetRecallStatus",
    "DecisionService.GetDecision",
    "DecisionService.ListRecentDecisions",
    "DecisionService.ListReexaminations",
    "DecisionService.RenderReexaminationPrompt",
}
EDITOR_RPCS = READER_RPCS | {
    "MemoryService.UpsertMemory",
    "MemoryService.UpdateMemory",
    "MemoryService.PinMemory",
    "MemoryService.DeleteMemory",
    "MemoryService.ResetActiveSession",
    "MemoryService.ForgetUser",
    "BlockService.WriteBlock",
    "BlockService.DeleteBlock",
}
ALLOWED = {"reader": READER_RPCS, "editor": EDITOR_RPCS}
RPCS = agentmemory_rpcs()
CALL_TIMEOUT = 10.0


def name_of(method: MethodDescriptor) -> str:
    return f"{method.containing_service.name}.{method.name}"


def invoke(client: Client, method: MethodDescriptor) -> None:
    """Call ``method`` with an empty request."""
    path = f"/{method.containing_service.full_name}/{method.name}"
    request = message_factory.GetMessageClass(method.input_type)()
    response = message_factory.GetMessageClass(method.output_type)
    kwargs: dict[str, Callable[..., object]] = {
        "request_serializer": lambda m: m.SerializeToString(),
        "response_deserializer": response.FromString,
    }
    if method.server_streaming:
        stream = client.channel.unary_stream(path, **kwargs)
        list(stream(request, metadata=client.metadata, timeout=CALL_TIMEOUT))
    else:
        unary = client.channel.unary_unary(path, **kwargs)
        unary(request, metadata=client.metadata, timeout=CALL_TIMEOUT)


def refusal(call: Callable[[], object]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value


@pytest.fixture(scope="module")
def clients(server: ServerThread) -> Iterator[dict[str, Client]]:
    """A reader and an editor of one tenant."""
    reader = server.client(role="reader")
    editor = server.client(reader.tenant_id, role="editor")
    with reader, editor:
        yield {"reader": reader, "editor": editor}


def test_the_lists_here_name_only_rpcs_that_exist() -> None:
    assert {name_of(m) for m in RPCS} >= EDITOR_RPCS
    assert "DecisionService.RecordDecision" in {name_of(m) for m in RPCS}


@pytest.mark.parametrize("role", ["reader", "editor"])
@pytest.mark.parametrize("method", RPCS, ids=name_of)
def test_every_rpc_is_refused_exactly_when_it_is_beyond_the_role(
    clients: dict[str, Client], role: str, method: MethodDescriptor
) -> None:
    error: grpc.RpcError | None = None
    try:
        invoke(clients[role], method)
    except grpc.RpcError as caught:
        error = caught
    if name_of(method) in ALLOWED[role]:
        if error is not None:
            code = error.code()  # type: ignore[attr-defined]
            assert code is not grpc.StatusCode.PERMISSION_DENIED, error.details()  # type: ignore[attr-defined]
        return
    assert error is not None, f"a {role} key called {name_of(method)}"
    details = error_details(error)
    assert details.code is grpc.StatusCode.PERMISSION_DENIED, details.message
    assert details.reason == "ROLE_FORBIDS"
    assert details.metadata["role"] == role
    assert details.metadata["required_role"] in {"editor", "orchestrator"}
    assert method.name in details.message


def upsert_request(
    key: str,
    source: memory_pb2.MemorySource = memory_pb2.MEMORY_SOURCE_MANUAL,
    agent: str = "coder",
) -> pb.UpsertMemoryRequest:
    return pb.UpsertMemoryRequest(
        owner=memory_pb2.MemoryOwner(agent_id=agent), key=key, value="v", source=source
    )


def keys_of(client: Client, agent: str = "coder") -> list[str]:
    listed = client.call(
        client.memory.ListMemories,
        pb.ListMemoriesRequest(owner=memory_pb2.MemoryOwner(agent_id=agent)),
    )
    return [m.key for m in listed.memories]


OTHER_SOURCES = {
    "auto": memory_pb2.MEMORY_SOURCE_AUTO,
    "director": memory_pb2.MEMORY_SOURCE_DIRECTOR,
    "memorize": memory_pb2.MEMORY_SOURCE_MEMORIZE,
}


@pytest.mark.parametrize("source", OTHER_SOURCES)
def test_an_editor_upserts_manual_memories_only(server: ServerThread, source: str) -> None:
    with server.client(role="editor") as editor:
        assert editor.call(editor.memory.UpsertMemory, upsert_request("by-hand")).created
        error = refusal(
            lambda: editor.call(
                editor.memory.UpsertMemory, upsert_request("forged", OTHER_SOURCES[source])
            )
        )
        details = error_details(error)
        assert details.code is grpc.StatusCode.PERMISSION_DENIED
        assert details.reason == "ROLE_FORBIDS"
        assert details.metadata == {"role": "editor", "required_role": "orchestrator"}
        assert keys_of(editor) == ["by-hand"]


def test_an_editor_cannot_rewrite_an_auto_memory_through_upsert(server: ServerThread) -> None:
    with server.client() as orchestrator:
        auto = upsert_request("fact", memory_pb2.MEMORY_SOURCE_AUTO)
        written = orchestrator.call(orchestrator.memory.UpsertMemory, auto).memory
        with server.client(orchestrator.tenant_id, role="editor") as editor:
            error = refusal(lambda: editor.call(editor.memory.UpsertMemory, auto))
        assert error_details(error).reason == "ROLE_FORBIDS"
        [memory] = orchestrator.call(
            orchestrator.memory.ListMemories, pb.ListMemoriesRequest(owner=auto.owner)
        ).memories
        assert memory == written


def test_an_orchestrator_upserts_every_source_upsert_takes(client: Client) -> None:
    for key, source in [
        ("manual", memory_pb2.MEMORY_SOURCE_MANUAL),
        ("auto", memory_pb2.MEMORY_SOURCE_AUTO),
        ("director", memory_pb2.MEMORY_SOURCE_DIRECTOR),
    ]:
        written = client.call(client.memory.UpsertMemory, upsert_request(key, source))
        assert written.memory.source == source
    # Memorize writes memorize-sourced rows: upsert refuses them as an argument, not a role.
    error = refusal(
        lambda: client.call(
            client.memory.UpsertMemory, upsert_request("m", memory_pb2.MEMORY_SOURCE_MEMORIZE)
        )
    )
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]


def test_an_editor_pins_and_deletes_rows_of_any_source_but_edits_only_manual_ones(
    server: ServerThread,
) -> None:
    with server.client() as orchestrator:
        auto = orchestrator.call(
            orchestrator.memory.UpsertMemory,
            upsert_request("captured", memory_pb2.MEMORY_SOURCE_AUTO),
        ).memory
        with server.client(orchestrator.tenant_id, role="editor") as editor:
            pinned = editor.call(
                editor.memory.PinMemory, pb.PinMemoryRequest(id=auto.id, pinned=True)
            )
            assert pinned.memory.pinned
            edit = pb.UpdateMemoryRequest(
                memory=memory_pb2.Memory(id=auto.id, value="changed"),
                update_mask=field_mask_pb2.FieldMask(paths=["value"]),
            )
            details = error_details(refusal(lambda: editor.call(editor.memory.UpdateMemory, edit)))
            assert details.code is grpc.StatusCode.FAILED_PRECONDITION
            assert details.reason == "READ_ONLY_MEMORY"
            unpin = pb.UpdateMemoryRequest(
                memory=memory_pb2.Memory(id=auto.id, pinned=False),
                update_mask=field_mask_pb2.FieldMask(paths=["pinned"]),
            )
            assert not editor.call(editor.memory.UpdateMemory, unpin).memory.pinned
            editor.call(editor.memory.DeleteMemory, pb.DeleteMemoryRequest(id=auto.id))
            assert keys_of(editor) == []
            block = editor.call(
                editor.blocks.WriteBlock,
                block_pb.WriteBlockRequest(
                    label=block_pb2.BLOCK_LABEL_CORE,
                    scope=memory_pb2.SCOPE_USER,
                    content="prefers short answers",
                ),
            ).block
            assert block.version == 1


def test_a_reader_reads_and_writes_nothing(server: ServerThread, database_url: str) -> None:
    with server.client() as orchestrator:
        orchestrator.call(orchestrator.memory.UpsertMemory, upsert_request("known"))
        with server.client(orchestrator.tenant_id, role="reader") as reader:
            assert keys_of(reader) == ["known"]
            error = refusal(lambda: reader.call(reader.memory.UpsertMemory, upsert_request("new")))
            details = error_details(error)
            assert details.code is grpc.StatusCode.PERMISSION_DENIED
            assert details.reason == "ROLE_FORBIDS"
            assert details.metadata == {"role": "reader", "required_role": "editor"}
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM memories WHERE tenant_id = %s", (orchestrator.tenant_id,)
        ).fetchone()
    assert row == (1,)


def test_the_local_mode_acts_as_an_orchestrator(database_url: str) -> None:
    local = ServerThread(database_url, settings=Settings(insecure_local=True))
    with local, grpc.insecure_channel(local.address) as channel:
        stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
        who = (("x-tenant-id", "local-roles"), ("x-user-id", "alice"))
        auto = upsert_request("auto", memory_pb2.MEMORY_SOURCE_AUTO)
        assert stub.UpsertMemory(auto, metadata=who, timeout=CALL_TIMEOUT).created
        learning = pb.RecordLearningRequest(chain_agent_ids=["coder"], content="ship on fridays")
        stub.RecordLearning(learning, metadata=who, timeout=CALL_TIMEOUT)


# --- the CLI ---------------------------------------------------------------------------


def create_key(database_url: str, tenant: str, *role: str) -> str:
    done = cli(
        "keys", "create", "--tenant", tenant, "--user", "ops", *role, "--database-url", database_url
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_a_reader_key_from_the_cli_lists_and_is_refused_writes(
    server: ServerThread, database_url: str
) -> None:
    key = create_key(database_url, "cli-roles-reader", "--role", "reader")
    auth = (("authorization", f"Bearer {key}"),)
    with server.anonymous_channel() as channel:
        stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
        listing = pb.ListMemoriesRequest(owner=memory_pb2.MemoryOwner(agent_id="coder"))
        assert list(stub.ListMemories(listing, metadata=auth, timeout=CALL_TIMEOUT).memories) == []
        error = refusal(
            lambda: stub.UpsertMemory(upsert_request("k"), metadata=auth, timeout=CALL_TIMEOUT)
        )
    details = error_details(error)
    assert details.code is grpc.StatusCode.PERMISSION_DENIED
    assert details.reason == "ROLE_FORBIDS"


def test_keys_list_shows_each_key_role_and_the_default_is_orchestrator(database_url: str) -> None:
    tenant = "cli-roles-list"
    ids = {
        role: create_key(database_url, tenant, "--role", role).split("_")[1]
        for role in ("reader", "editor", "orchestrator")
    }
    ids["default"] = create_key(database_url, tenant).split("_")[1]
    listed = cli("keys", "list", "--tenant", tenant, "--database-url", database_url)
    assert listed.returncode == 0, listed.stderr
    header, *lines = listed.stdout.splitlines()
    assert header.split()[:5] == ["KEY", "ID", "TENANT", "USER", "ROLE"]
    shown = {line.split()[0]: line.split()[3] for line in lines}
    assert shown == {
        ids["reader"]: "reader",
        ids["editor"]: "editor",
        ids["orchestrator"]: "orchestrator",
        ids["default"]: "orchestrator",
    }


def test_an_unknown_role_is_a_usage_error_naming_the_flag(database_url: str) -> None:
    done = cli(
        "keys", "create", "--tenant", "t", "--user", "u", "--role", "admin",
        "--database-url", database_url,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]
    assert "--role" in last
    assert "admin" in last


# --- whose blocks ------------------------------------------------------------------------


def test_an_orchestrator_reads_another_users_blocks_and_no_other_role_does(
    server: ServerThread,
) -> None:
    core, agent = block_pb2.BLOCK_LABEL_CORE, memory_pb2.SCOPE_AGENT
    with (
        server.client(user_id="ana", role="editor") as ana,
        server.client(ana.tenant_id, "ops") as ops,
        server.client(ana.tenant_id, "ben", role="editor") as ben,
    ):
        write = block_pb.WriteBlockRequest(
            label=core, scope=agent, agent_id="coder", content="- Prefers mornings"
        )
        first = ana.call(ana.blocks.WriteBlock, write).block
        write.content += "\n- Writes in Portuguese"
        write.expected_updated_at.CopyFrom(first.updated_at)
        ana.call(ana.blocks.WriteBlock, write)

        # The orchestrator reads ana's blocks with the agent when it names her.
        listed = ops.call(
            ops.blocks.ListBlocks, block_pb.ListBlocksRequest(agent_id="coder", user_id="ana")
        ).blocks
        assert [(b.scope, b.agent_id, b.content) for b in listed] == [
            (agent, "coder", "- Prefers mornings\n- Writes in Portuguese")
        ]
        got = ops.call(
            ops.blocks.GetBlock,
            block_pb.GetBlockRequest(label=core, agent_id="coder", user_id="ana"),
        ).block
        assert got.version == 2
        versions = ops.call(
            ops.blocks.ListBlockVersions,
            block_pb.ListBlockVersionsRequest(label=core, agent_id="coder", user_id="ana"),
        ).versions
        assert [(v.version, v.writer_user_id) for v in versions] == [(2, "ana"), (1, "ana")]
        # Its own are its own still.
        assert list(ops.call(ops.blocks.ListBlocks, block_pb.ListBlocksRequest()).blocks) == []

        # An editor naming itself reads its own; naming another user is refused.
        mine = block_pb.ListBlocksRequest(agent_id="coder", user_id="ana")
        assert len(ana.call(ana.blocks.ListBlocks, mine).blocks) == 1
        for call in (
            lambda: ben.call(ben.blocks.ListBlocks, mine),
            lambda: ben.call(
                ben.blocks.GetBlock,
                block_pb.GetBlockRequest(label=core, agent_id="coder", user_id="ana"),
            ),
            lambda: ben.call(
                ben.blocks.ListBlockVersions,
                block_pb.ListBlockVersionsRequest(label=core, agent_id="coder", user_id="ana"),
            ),
        ):
            details = error_details(refusal(call))
            assert details.code is grpc.StatusCode.PERMISSION_DENIED
            assert details.reason == "ROLE_FORBIDS"
        # A name no user can have is the request's fault, said with its field.
        bad = refusal(
            lambda: ops.call(ops.blocks.ListBlocks, block_pb.ListBlocksRequest(user_id="a/b"))
        )
        details = error_details(bad)
        assert details.code is grpc.StatusCode.INVALID_ARGUMENT
        assert list(details.violations) == ["user_id"]
