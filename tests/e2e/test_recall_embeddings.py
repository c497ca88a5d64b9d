"""Recall with an embeddings API (a fake OpenAI-compatible one on loopback): lines are
embedded in the background with the passage form, queries with the query form, and
found by meaning where PostgreSQL has pgvector; by words where it has not, or while
the embedder fails (and indexing catches up once it answers again)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import psycopg
import pytest

from agent_memory.config import Settings
from agent_memory.embed import embedder_from_settings
from agent_memory.embed.http import HttpEmbedder
from agent_memory.store import migrate
from agentmemory.v1 import block_pb2, memory_pb2
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import recall_service_pb2 as pb
from tests.fake_embeddings import FakeEmbeddings, running_fake, vector
from tests.support import Client, ServerThread, wait_until

CAR = "Bought a red car last week, it still smells new."
LINES = [
    CAR,
    "Likes hiking in the mountains on weekends.",
    "Booked the dentist for Friday morning.",
    "Prefers tea over coffee.",
]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEmbeddings]:
    with running_fake() as running:
        yield running


def http_settings(fake: FakeEmbeddings) -> Settings:
    return Settings(
        embedder="http",
        embedder_url=f"{fake.base_url}/v1",
        embedder_model="fake",
        embedder_query_prefix="query: ",
        embedder_passage_prefix="passage: ",
        index_poll_seconds=0.2,
    )


@pytest.fixture(scope="module")
def database_url(create_database: Callable[[], str]) -> str:
    """A database of this module's own: the indexer of another server in this process
    (with another embedder) would claim and embed these lines too."""
    url = create_database()
    migrate.upgrade(url)
    return url


@pytest.fixture(scope="module")
def embedding_server(database_url: str, fake: FakeEmbeddings) -> Iterator[ServerThread]:
    running = ServerThread(database_url, settings=http_settings(fake), index=True)
    with running:
        yield running


@pytest.fixture
def caller(embedding_server: ServerThread, fake: FakeEmbeddings) -> Iterator[Client]:
    fake.failing = False
    with embedding_server.client() as c:
        yield c
    fake.failing = False


def write(client: Client, content: str) -> block_pb2.Block:
    request = block_pb.WriteBlockRequest(
        label=block_pb2.BLOCK_LABEL_ARCHIVAL,
        scope=memory_pb2.SCOPE_USER,
        content=content,
    )
    return client.call(client.blocks.WriteBlock, request).block  # type: ignore[no-any-return]


def indexed_lines(client: Client) -> int:
    request = block_pb.GetBlockRequest(
        label=block_pb2.BLOCK_LABEL_ARCHIVAL, scope=memory_pb2.SCOPE_USER
    )
    return int(client.call(client.blocks.GetBlock, request).block.indexed_line_count)


def recall(client: Client, query: str, **kw: object) -> list[pb.RecallResponse]:
    request = pb.RecallRequest(query=query, agent_id="a", **kw)  # type: ignore[arg-type]
    return list(client.call(client.recall.Recall, request))


def stored(database_url: str, client: Client) -> list[tuple[list[float] | None, str | None]]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT embedding::real[], embedding_model FROM archival_lines WHERE tenant_id = %s"
            " ORDER BY line_number",
            (client.tenant_id,),
        ).fetchall()
    return [(r[0], r[1]) for r in rows]


def test_lines_are_embedded_in_the_background_in_their_passage_form(
    caller: Client, database_url: str, fake: FakeEmbeddings, pgvector: bool
) -> None:
    assert write(caller, "\n".join(LINES)).indexed_line_count == 0
    if not pgvector:
        # Nothing could compare the vectors: nothing is embedded, recall is by words.
        assert stored(database_url, caller) == [(None, None)] * len(LINES)
        assert CAR not in [m.content for m in recall(caller, "automobile")]
        return
    assert wait_until(lambda: indexed_lines(caller) == len(LINES), timeout=30)
    model = embedder_from_settings(http_settings(fake)).model  # type: ignore[union-attr]
    assert model.startswith("fake#")  # the forms are part of what made the vectors
    for line, (vector_stored, made_by) in zip(LINES, stored(database_url, caller), strict=True):
        # Kept at half precision (pgvector's halfvec): about three significant digits.
        assert vector_stored == pytest.approx(vector("passage: " + line), abs=1e-3)
        assert made_by == model
    assert all(r["model"] == "fake" for r in fake.requests)

    matches = recall(caller, "automobile")  # shares no word with the line about a car
    assert matches[0].content == CAR
    assert 0 < matches[0].score <= 1
    assert {"input": ["query: automobile"], "model": "fake"}.items() <= next(
        r for r in reversed(fake.requests) if r["input"][0].startswith("query: ")
    ).items()
    # Words still count: the line holding the query's word ranks first.
    assert recall(caller, "dentist")[0].content == LINES[2]


def test_while_the_embedder_fails_writes_and_recall_go_on_by_words(
    caller: Client, database_url: str, fake: FakeEmbeddings, pgvector: bool
) -> None:
    fake.failing = True
    before = len(fake.requests)
    write(caller, "\n".join(LINES))
    assert recall(caller, "dentist")[0].content == LINES[2]
    assert CAR not in [m.content for m in recall(caller, "automobile")]
    assert recall(caller, "hiking mountains")[0].content == LINES[1]
    asked = [text for r in fake.requests[before:] for text in r["input"]]
    if not pgvector:
        assert asked == []  # nothing could compare vectors: nothing is embedded
    else:
        # The query's embedding was asked for, and failed: recall went on by words. (The
        # others' were kept from the test before.)
        assert "query: hiking mountains" in asked
        # The indexer tried the lines, one by one too, and kept nothing.
        assert wait_until(
            lambda: all(
                sum(f"passage: {line}" in r["input"] for r in fake.requests[before:]) >= 2
                for line in LINES
            ),
            timeout=30,
        )
    assert indexed_lines(caller) == 0
    if pgvector:
        # Once it answers again, the lines are embedded when their lease runs out.
        fake.failing = False
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(
                "UPDATE archival_lines SET index_lease_until = NULL WHERE tenant_id = %s",
                (caller.tenant_id,),
            )
        assert wait_until(lambda: indexed_lines(caller) == len(LINES), timeout=30)
        assert recall(caller, "automobile")[0].content == CAR


def test_scores_stay_between_zero_and_one(caller: Client) -> None:
    write(caller, "\n".join(LINES))
    for query in ["automobile", "car", "red car dentist hiking tea", "kitten", "dentist Friday"]:
        matches = recall(caller, query, limit=100)
        scores = [m.score for m in matches]
        assert all(0 <= s <= 1 for s in scores), (query, scores)
        assert scores == sorted(scores, reverse=True), query
        high = recall(caller, query, min_score=0.5)
        assert all(m.score >= 0.5 for m in high), query


@pytest.fixture
def own_fake() -> Iterator[FakeEmbeddings]:
    """A fake API no server's indexer talks to: every request it gets is the test's."""
    with running_fake() as running:
        yield running


def test_the_http_embedder_batches_and_keeps_the_order(own_fake: FakeEmbeddings) -> None:
    fake = own_fake
    texts = [f"text number {i} about a car" if i % 2 else f"plain {i}" for i in range(300)]
    embedder = HttpEmbedder(f"{fake.base_url}/v1", "fake", api_key="sk-test")
    before = len(fake.requests)
    vectors = asyncio.run(embedder.passages(texts))
    sent = fake.requests[before:]
    assert [len(r["input"]) for r in sent] == [128, 128, 44]
    assert all(r["_headers"]["authorization"] == "Bearer sk-test" for r in sent)
    assert vectors == [pytest.approx(vector(t)) for t in texts]


def test_the_http_embedder_keeps_one_connection_across_calls(own_fake: FakeEmbeddings) -> None:
    fake = own_fake
    embedder = HttpEmbedder(f"{fake.base_url}/v1", "fake")

    async def calls() -> None:
        try:
            for n in range(5):
                await embedder.queries([f"call {n}"])
        finally:
            await embedder.close()

    before = len(fake.peers)
    asyncio.run(calls())
    assert len(fake.peers) - before == 5
    assert len(set(fake.peers[before:])) == 1
