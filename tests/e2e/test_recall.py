"""RecallService.Recall over real gRPC and a real PostgreSQL: a ranked stream of archival
lines (and, on request, memory rows) that never leaves the caller's own scope."""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Iterator

import grpc
import psycopg
import pytest

from agent_memory.config import Settings
from agentmemory.v1 import block_pb2, memory_pb2
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import memory_service_pb2 as memory_pb
from agentmemory.v1 import recall_service_pb2 as pb
from tests.support import Client, ErrorDetails, ServerThread, error_details, wait_until

ARCHIVAL = block_pb2.BLOCK_LABEL_ARCHIVAL
CORE = block_pb2.BLOCK_LABEL_CORE
USER = memory_pb2.SCOPE_USER
AGENT = memory_pb2.SCOPE_AGENT
WORKSPACE = memory_pb2.SCOPE_WORKSPACE

ACCOUNTS = "\n".join(
    [
        "Acme renewal: CFO wants pricing options before the May 12 exec review.",
        "Globex implementation: legal approved the DPA on 2026-04-18.",
        "Acme headquarters moved to Denver last spring.",
        "Initech renewal is handled by the procurement team.",
        "Prefers concise account summaries with explicit next actions.",
        "Umbrella onboarding call is booked for Thursday.",
        "Hooli asked for a security questionnaire.",
        "Soylent support tickets go to the shared inbox.",
    ]
)


# --- helpers -------------------------------------------------------------------------


def write_block(
    client: Client,
    content: str,
    *,
    scope: int = USER,
    agent: str = "",
    label: int = ARCHIVAL,
) -> block_pb2.Block:
    """Create the block, or replace it when it already exists."""
    key = {"label": label, "scope": scope, "agent_id": agent}
    request = block_pb.WriteBlockRequest(content=content, **key)
    try:
        current = client.call(client.blocks.GetBlock, block_pb.GetBlockRequest(**key)).block
    except grpc.RpcError as error:
        if error.code() is not grpc.StatusCode.NOT_FOUND:  # type: ignore[attr-defined]
            raise
    else:
        request.expected_updated_at.CopyFrom(current.updated_at)
    block: block_pb2.Block = client.call(client.blocks.WriteBlock, request, timeout=120).block
    return block


def delete_block(client: Client, *, scope: int = USER, agent: str = "") -> None:
    request = block_pb.DeleteBlockRequest(label=ARCHIVAL, scope=scope, agent_id=agent)
    client.call(client.blocks.DeleteBlock, request)


def upsert(
    client: Client, key: str, value: str, *, agent: str | None = None, workspace: str | None = None
) -> memory_pb2.Memory:
    owner = (
        memory_pb2.MemoryOwner(workspace_id=workspace)
        if workspace is not None
        else memory_pb2.MemoryOwner(agent_id=agent)
    )
    request = memory_pb.UpsertMemoryRequest(owner=owner, key=key, value=value)
    memory: memory_pb2.Memory = client.call(client.memory.UpsertMemory, request).memory
    return memory


def recall(
    client: Client, query: str, agent: str = "records", **kw: object
) -> list[pb.RecallResponse]:
    request = pb.RecallRequest(query=query, agent_id=agent, **kw)  # type: ignore[arg-type]
    return list(client.call(client.recall.Recall, request))


def contents(matches: list[pb.RecallResponse]) -> list[str]:
    return [m.content for m in matches]


def failure(call: Callable[[], object]) -> ErrorDetails:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return error_details(info.value)


# --- streaming, order and scores ----------------------------------------------------


def test_matches_stream_one_line_per_message_best_first(client: Client) -> None:
    write_block(client, ACCOUNTS)
    lines = set(ACCOUNTS.splitlines())
    call = client.call(
        client.recall.Recall, pb.RecallRequest(query="Acme renewal", agent_id="records")
    )
    first = next(call)  # the stream yields before it is drained
    rest = list(call)
    matches = [first, *rest]
    assert len(matches) >= 3
    for match in matches:
        assert "\n" not in match.content
        assert match.content in lines
    scores = [m.score for m in matches]
    assert scores == sorted(scores, reverse=True)
    assert len(contents(matches)) == len(set(contents(matches)))


def test_the_line_holding_every_query_term_ranks_first(client: Client) -> None:
    write_block(client, ACCOUNTS)
    for query, best in [
        ("Acme renewal", ACCOUNTS.splitlines()[0]),
        ("Initech procurement", ACCOUNTS.splitlines()[3]),
        ("Globex legal DPA", ACCOUNTS.splitlines()[1]),
    ]:
        matches = recall(client, query)
        assert matches[0].content == best, query
        assert all(matches[0].score > m.score for m in matches[1:]), query


@pytest.mark.parametrize(
    "query",
    [
        "Acme renewal",
        "Acme",
        "renewal renewal renewal",
        "Acme renewal: CFO wants pricing options before the May 12 exec review.",
        "Hooli security questionnaire Umbrella onboarding",
        "the",
    ],
)
def test_every_score_is_between_zero_and_one(client: Client, query: str) -> None:
    write_block(client, ACCOUNTS + "\nAcme Acme Acme renewal renewal")
    write_block(client, "Acme renewal for the records agent", scope=AGENT, agent="records")
    for match in recall(client, query, limit=100):
        assert 0.0 <= match.score <= 1.0, (query, match)


def test_a_query_that_matches_nothing_yields_an_empty_stream(client: Client) -> None:
    write_block(client, ACCOUNTS)
    assert recall(client, "xylophone zeppelin") == []


def test_a_caller_without_blocks_gets_an_empty_stream(client: Client) -> None:
    assert recall(client, "Acme renewal") == []


# --- where a match comes from -------------------------------------------------------


def test_line_numbers_are_one_based_and_count_blank_lines(client: Client) -> None:
    content = "alpha first\n\nbravo second\n\n\n   charlie third  \r\ndelta fourth"
    write_block(client, content)
    numbers = {}
    for word in ("alpha", "bravo", "charlie", "delta"):
        matches = recall(client, word)
        assert matches[0].content.startswith(word)
        numbers[word] = matches[0].line_number
    assert numbers == {"alpha": 1, "bravo": 3, "charlie": 6, "delta": 7}
    assert recall(client, "charlie")[0].content == "charlie third"


def test_user_and_agent_block_matches_carry_their_scope(client: Client) -> None:
    write_block(client, "Acme renewal owned by the user")
    write_block(client, "noise line\nAcme renewal owned by the agent", scope=AGENT, agent="records")
    by_content = {m.content: m for m in recall(client, "Acme renewal owned")}
    user = by_content["Acme renewal owned by the user"]
    agent = by_content["Acme renewal owned by the agent"]
    assert (user.scope, user.agent_id, user.block_label, user.line_number) == (
        USER,
        "",
        ARCHIVAL,
        1,
    )
    assert (agent.scope, agent.agent_id, agent.block_label, agent.line_number) == (
        AGENT,
        "records",
        ARCHIVAL,
        2,
    )
    for match in (user, agent):
        assert match.memory_id == ""
        assert match.workspace_id == ""


# --- limit and min_score ------------------------------------------------------------


@pytest.fixture(scope="module")
def roomy_server(database_url: str) -> Iterator[ServerThread]:
    """A server whose archival blocks may hold far more than the default 8,000 chars, and
    whose statement timeout (two minutes) leaves writing such a block room on a loaded
    machine: the cancellation tests below must stop a query long before it."""
    running = ServerThread(
        database_url,
        settings=Settings(archival_max_chars=2_000_000, db_statement_timeout_ms=120_000),
    )
    with running:
        yield running


@pytest.fixture(scope="module")
def many_lines(roomy_server: ServerThread) -> Iterator[Client]:
    """A caller whose archival block holds 150 lines that all match "zephyr"."""
    with roomy_server.client() as c:
        write_block(c, "\n".join(f"zephyr sighting number {i} over the bay" for i in range(150)))
        yield c


@pytest.mark.parametrize(
    ("limit", "expected"), [(0, 10), (1, 1), (37, 37), (100, 100), (101, 100), (500, 100)]
)
def test_limit_defaults_to_10_and_stops_at_100(
    many_lines: Client, limit: int, expected: int
) -> None:
    matches = recall(many_lines, "zephyr sighting", limit=limit)
    assert len(matches) == expected
    assert len({m.line_number for m in matches}) == expected


def test_min_score_drops_weaker_matches(client: Client) -> None:
    write_block(client, ACCOUNTS)
    everything = recall(client, "Acme renewal pricing", limit=100)
    scores = sorted({m.score for m in everything})
    assert len(scores) >= 3, "the fixture must produce a spread of scores"
    # Just under a middle score, so float noise cannot move a line across the threshold.
    threshold = scores[len(scores) // 2] - 1e-9
    kept = recall(client, "Acme renewal pricing", limit=100, min_score=threshold)
    assert 0 < len(kept) < len(everything)
    assert all(m.score >= threshold for m in kept)
    assert contents(kept) == [m.content for m in everything if m.score >= threshold]


def test_min_score_zero_keeps_all_and_one_keeps_only_perfect_matches(client: Client) -> None:
    write_block(client, ACCOUNTS)
    everything = recall(client, "Acme renewal", limit=100)
    assert recall(client, "Acme renewal", limit=100, min_score=0.0) == everything
    perfect = recall(client, "Acme renewal", limit=100, min_score=1.0)
    assert all(m.score == pytest.approx(1.0) for m in perfect)
    assert len(perfect) < len(everything)


# --- ranking quality ----------------------------------------------------------------


def test_a_typo_in_a_name_still_finds_the_line(client: Client) -> None:
    write_block(client, ACCOUNTS)
    matches = recall(client, "Globx")
    assert matches
    assert matches[0].content.startswith("Globex implementation")


def test_a_misspelt_long_name_still_finds_the_line(client: Client) -> None:
    write_block(client, ACCOUNTS + "\nMassachusetts office renewal is due in June.")
    matches = recall(client, "Massachusets office")
    assert matches[0].content == "Massachusetts office renewal is due in June."


def test_an_inflected_word_finds_its_stem(client: Client) -> None:
    write_block(client, "The renewal was signed.\nUnrelated line about weather.")
    matches = recall(client, "renewals")
    assert contents(matches)[0] == "The renewal was signed."
    assert recall(client, "renewing")[0].content == "The renewal was signed."


# --- memory rows --------------------------------------------------------------------


def test_include_memories_ranks_the_agents_and_workspaces_rows(client: Client) -> None:
    write_block(client, "Deploy checklist lives in the wiki.")
    mine = upsert(client, "deploy-cmd", "Deploy with npm run deploy", agent="records")
    shared = upsert(client, "deploy-host", "Deploy target is fly.io", workspace="ws-1")
    upsert(client, "deploy-other", "Deploy from the other agent", agent="someone-else")
    upsert(client, "deploy-ws2", "Deploy from another workspace", workspace="ws-2")

    plain = recall(client, "deploy", limit=100)
    assert contents(plain) == ["Deploy checklist lives in the wiki."]

    with_agent = recall(client, "deploy", limit=100, include_memories=True)
    memories = {m.memory_id: m for m in with_agent if m.memory_id}
    assert set(memories) == {mine.id}
    row = memories[mine.id]
    assert (row.scope, row.agent_id, row.block_label, row.line_number, row.workspace_id) == (
        AGENT,
        "records",
        block_pb2.BLOCK_LABEL_UNSPECIFIED,
        0,
        "",
    )
    assert "Deploy with npm run deploy" in row.content
    assert 0.0 <= row.score <= 1.0

    with_workspace = recall(client, "deploy", limit=100, include_memories=True, workspace_id="ws-1")
    memories = {m.memory_id: m for m in with_workspace if m.memory_id}
    assert set(memories) == {mine.id, shared.id}
    ws = memories[shared.id]
    assert (ws.scope, ws.agent_id, ws.workspace_id, ws.block_label, ws.line_number) == (
        WORKSPACE,
        "",
        "ws-1",
        block_pb2.BLOCK_LABEL_UNSPECIFIED,
        0,
    )
    assert "Deploy checklist lives in the wiki." in contents(with_workspace)
    scores = [m.score for m in with_workspace]
    assert scores == sorted(scores, reverse=True)


def test_a_workspace_alone_without_include_memories_adds_no_rows(client: Client) -> None:
    upsert(client, "deploy-host", "Deploy target is fly.io", workspace="ws-1")
    assert recall(client, "deploy", workspace_id="ws-1") == []


# --- scope isolation ----------------------------------------------------------------


def test_never_another_users_lines_in_the_same_tenant(client: Client, server: ServerThread) -> None:
    with server.client(tenant_id=client.tenant_id, user_id="bob") as bob:
        write_block(bob, "Bob's secret project is called Nightingale.")
        write_block(bob, "Nightingale agent notes from Bob", scope=AGENT, agent="records")
        upsert(bob, "bob-note", "Nightingale ships in May", agent="bob-agent")
        assert recall(bob, "Nightingale")  # bob finds his own lines
    write_block(client, ACCOUNTS)
    assert recall(client, "Nightingale", limit=100) == []
    assert recall(client, "Nightingale project", agent="records", limit=100) == []


def test_never_another_agents_archival_block(client: Client) -> None:
    write_block(client, "Kestrel migration plan for the builder", scope=AGENT, agent="builder")
    write_block(client, "Records agent keeps invoices", scope=AGENT, agent="records")
    assert recall(client, "Kestrel migration", agent="records", limit=100) == []
    found = recall(client, "Kestrel migration", agent="builder")
    assert [(m.agent_id, m.content) for m in found] == [
        ("builder", "Kestrel migration plan for the builder")
    ]


def test_never_another_tenants_lines(client: Client, other_client: Client) -> None:
    write_block(other_client, "Osprey contract value is confidential.")
    write_block(other_client, "Osprey agent block", scope=AGENT, agent="records")
    upsert(other_client, "osprey", "Osprey memory row", agent="records")
    upsert(other_client, "osprey-ws", "Osprey workspace row", workspace="ws-1")
    assert recall(other_client, "Osprey", include_memories=True, workspace_id="ws-1")
    # Same user id, same agent id, same workspace id: a different tenant sees nothing.
    assert client.user_id == other_client.user_id
    assert (
        recall(client, "Osprey contract", limit=100, include_memories=True, workspace_id="ws-1")
        == []
    )


def test_the_core_block_is_never_searched(client: Client) -> None:
    write_block(client, "- Prefers Pelican summaries", label=CORE)
    write_block(client, "- Pelican agent core", label=CORE, scope=AGENT, agent="records")
    write_block(client, ACCOUNTS)
    assert recall(client, "Pelican", limit=100) == []


# --- recall follows the block ------------------------------------------------------------


def test_a_rewritten_block_replaces_its_lines(client: Client) -> None:
    write_block(client, "Falcon launch is in March.\nAcme renewal pending.")
    assert recall(client, "Falcon")[0].content == "Falcon launch is in March."
    write_block(client, "Acme renewal signed.\nHeron launch is in April.")
    assert recall(client, "Falcon", limit=100) == []
    assert recall(client, "Heron")[0].line_number == 2
    assert contents(recall(client, "Acme renewal", limit=100)) == ["Acme renewal signed."]


def test_a_deleted_block_is_no_longer_recalled(client: Client) -> None:
    write_block(client, "Falcon agent notes", scope=AGENT, agent="records")
    write_block(client, "Falcon user notes")
    assert len(recall(client, "Falcon notes")) == 2
    delete_block(client, scope=AGENT, agent="records")
    assert [(m.scope, m.content) for m in recall(client, "Falcon notes")] == [
        (USER, "Falcon user notes")
    ]
    delete_block(client)
    assert recall(client, "Falcon notes") == []


# --- validation ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_fields", "field"),
    [
        ({"query": "", "agent_id": "records"}, "query"),
        ({"query": "   \n\t", "agent_id": "records"}, "query"),
        ({"query": "Acme", "agent_id": "records", "limit": -1}, "limit"),
        ({"query": "Acme", "agent_id": "records", "min_score": -0.01}, "min_score"),
        ({"query": "Acme", "agent_id": "records", "min_score": 1.5}, "min_score"),
        ({"query": "Acme", "agent_id": ""}, "agent_id"),
    ],
)
def test_malformed_requests_are_invalid_arguments(
    client: Client, request_fields: dict[str, object], field: str
) -> None:
    request = pb.RecallRequest(**request_fields)  # type: ignore[arg-type]
    details = failure(lambda: list(client.call(client.recall.Recall, request)))
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert field in details.violations


# --- cancellation -------------------------------------------------------------------


def recall_backends(database_url: str) -> list[tuple[int, str, str]]:
    """(pid, state, query) of the service's connections busy with a recall right now: the
    ranking statement opens with the query's terms and the blocks' vocabularies, within
    the part of its text pg_stat_activity keeps."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            """
            SELECT pid, state, query FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'agent-memory'
              AND pid <> pg_backend_pid()
              AND state IN ('active', 'idle in transaction', 'idle in transaction (aborted)')
              AND query ILIKE '%terms AS%archival_vocabulary%'
            """
        ).fetchall()
    return [(int(pid), str(state), str(query)) for pid, state, query in rows]


@pytest.fixture(scope="module")
def big_block(roomy_server: ServerThread) -> Iterator[Client]:
    """A caller with a large archival block (10,000 lines that match "harbor")."""
    rnd = random.Random(20260430)

    def word() -> str:
        return "".join(rnd.choice(string.ascii_lowercase) for _ in range(8))

    lines = [" ".join(["harbor", *(word() for _ in range(11))]) for _ in range(10_000)]
    with roomy_server.client() as c:
        write_block(c, "\n".join(lines))
        yield c


def test_a_client_that_cancels_after_the_first_match_leaves_no_work_behind(
    roomy_server: ServerThread, big_block: Client, database_url: str
) -> None:
    client = big_block
    call = client.call(
        client.recall.Recall, pb.RecallRequest(query="harbor", agent_id="records", limit=100)
    )
    first = next(call)
    assert first.content.startswith("harbor ")
    call.cancel()
    with pytest.raises(grpc.RpcError) as info:
        list(call)
    assert info.value.code() is grpc.StatusCode.CANCELLED  # type: ignore[attr-defined]
    assert wait_until(lambda: recall_backends(database_url) == []), recall_backends(database_url)
    assert len(recall(client, "harbor", limit=3)) == 3


# A deadline that only a hang reaches: the steps it bounds take milliseconds, and may take
# far longer on a machine busy with other work without anything being wrong.
HANG_SECONDS = 240


@pytest.fixture(scope="module")
def patient_server(database_url: str) -> Iterator[ServerThread]:
    """A server without a statement timeout: a statement it runs ends when it is done or
    cancelled, and in no other way."""
    with ServerThread(database_url, settings=Settings(db_statement_timeout_ms=0)) as running:
        yield running


def waiting_recalls(database_url: str) -> list[int]:
    """The pids of the service's connections whose recall is running in PostgreSQL and
    waiting there for a lock."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            """
            SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'agent-memory'
              AND state = 'active' AND wait_event_type = 'Lock'
              AND query ILIKE '%terms AS%archival_vocabulary%'
            """
        ).fetchall()
    return [int(pid) for (pid,) in rows]


@pytest.mark.timeout(2 * HANG_SECONDS + 60)
def test_a_client_that_cancels_mid_query_stops_the_query_in_postgresql(
    patient_server: ServerThread, database_url: str
) -> None:
    with patient_server.client() as client:
        write_block(client, ACCOUNTS)
        # While the test holds the blocks' vocabularies, a recall's ranking statement
        # runs in PostgreSQL waiting for them: nothing but a cancel can end it there.
        with psycopg.connect(database_url) as holder:
            holder.execute("LOCK TABLE archival_vocabulary IN ACCESS EXCLUSIVE MODE")
            call = client.call(
                client.recall.Recall,
                pb.RecallRequest(query="Acme renewal", agent_id="records"),
                timeout=3 * HANG_SECONDS,
            )
            assert wait_until(
                lambda: bool(waiting_recalls(database_url)) or call.done(),
                timeout=HANG_SECONDS,
            )
            busy = waiting_recalls(database_url)
            assert busy, "the recall never showed up in PostgreSQL, waiting for the lock"
            call.cancel()
            with pytest.raises(grpc.RpcError) as info:
                next(call)
            assert info.value.code() is grpc.StatusCode.CANCELLED  # type: ignore[attr-defined]
            # The lock is still held: the statement leaves PostgreSQL because it was
            # cancelled there.
            assert wait_until(
                lambda: not set(busy) & {p for p, _, _ in recall_backends(database_url)},
                timeout=HANG_SECONDS,
            ), recall_backends(database_url)
            assert recall_backends(database_url) == []
        # The server keeps answering.
        assert recall(client, "Acme renewal", limit=2)[0].content.startswith("Acme renewal")
