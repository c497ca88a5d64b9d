"""Recall with an embedder (a fake OpenAI-compatible API on loopback): lines found by
meaning where PostgreSQL has pgvector, lexical recall where it has not or when the
embedder fails, and scores in [0, 1] either way."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import psycopg
import pytest

from agent_memory.config import Settings
from agent_memory.embed import HttpEmbedder
from agentmemory.v1 import block_pb2, memory_pb2
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import recall_service_pb2 as pb
from tests.fake_embeddings import FakeEmbeddings, running_fake, vector
from tests.support import Client, ServerThread

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


@pytest.fixture(scope="module")
def embedding_server(database_url: str, fake: FakeEmbeddings) -> Iterator[ServerThread]:
    settings = Settings(embedder_url=f"{fake.base_url}/v1", embedder_model="fake")
    running = ServerThread(database_url, settings=settings)
    with running:
        yield running


@pytest.fixture
def caller(embedding_server: ServerThread, fake: FakeEmbeddings) -> Iterator[Client]:
    fake.failing = False
    with embedding_server.client() as c:
        yield c
    fake.failing = False


@pytest.fixture(scope="module")
def has_pgvector(database_url: str) -> bool:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')"
        ).fetchone()
    return bool(row and row[0])


def write(client: Client, content: str) -> None:
    request = block_pb.WriteBlockRequest(
        label=block_pb2.BLOCK_LABEL_ARCHIVAL,
        scope=memory_pb2.SCOPE_USER,
        content=content,
    )
    client.call(client.blocks.WriteBlock, request)


def recall(client: Client, query: str, **kw: object) -> list[pb.RecallResponse]:
    request = pb.RecallRequest(query=query, agent_id="a", **kw)  # type: ignore[arg-type]
    return list(client.call(client.recall.Recall, request))


def stored_embeddings(database_url: str, client: Client) -> list[list[float] | None]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT embedding FROM archival_lines WHERE tenant_id = %s ORDER BY line_number",
            (client.tenant_id,),
        ).fetchall()
    return [r[0] for r in rows]


def test_a_line_is_recalled_by_meaning_where_pgvector_is(
    caller: Client, database_url: str, fake: FakeEmbeddings, has_pgvector: bool
) -> None:
    write(caller, "\n".join(LINES))
    embeddings = stored_embeddings(database_url, caller)
    assert len(embeddings) == len(LINES)
    for line, stored in zip(LINES, embeddings, strict=True):
        assert stored == pytest.approx(vector(line), abs=1e-6)
    assert fake.requests[-1]["model"] == "fake"

    matches = recall(caller, "automobile")  # shares no word with the line about a car
    if has_pgvector:
        assert matches, "the car line is found by meaning"
        assert matches[0].content == CAR
        assert 0 < matches[0].score <= 1
    else:
        assert CAR not in [m.content for m in matches]  # lexical only

    # Words still count: the line holding the query's word ranks first.
    dentist = recall(caller, "dentist")
    assert dentist[0].content == LINES[2]


def test_an_embedder_that_fails_leaves_writes_and_recall_lexical(
    caller: Client, database_url: str, fake: FakeEmbeddings
) -> None:
    fake.failing = True
    write(caller, "\n".join(LINES))
    assert stored_embeddings(database_url, caller) == [None] * len(LINES)
    assert recall(caller, "dentist")[0].content == LINES[2]
    assert CAR not in [m.content for m in recall(caller, "automobile")]
    assert recall(caller, "hiking mountains")[0].content == LINES[1]


def test_scores_stay_between_zero_and_one(caller: Client) -> None:
    write(caller, "\n".join(LINES))
    for query in ["automobile", "car", "red car dentist hiking tea", "kitten", "dentist Friday"]:
        matches = recall(caller, query, limit=100)
        scores = [m.score for m in matches]
        assert all(0 <= s <= 1 for s in scores), (query, scores)
        assert scores == sorted(scores, reverse=True), query
        high = recall(caller, query, min_score=0.5)
        assert all(m.score >= 0.5 for m in high), query


def test_the_http_embedder_batches_and_keeps_the_order(fake: FakeEmbeddings) -> None:
    texts = [f"text number {i} about a car" if i % 2 else f"plain {i}" for i in range(300)]
    embedder = HttpEmbedder(f"{fake.base_url}/v1", "fake", api_key="sk-test")
    before = len(fake.requests)
    vectors = asyncio.run(embedder.embed(texts))
    sent = fake.requests[before:]
    assert [len(r["input"]) for r in sent] == [128, 128, 44]
    assert all(r["_headers"]["authorization"] == "Bearer sk-test" for r in sent)
    assert vectors == [pytest.approx(vector(t)) for t in texts]


def test_the_http_embedder_keeps_one_connection_across_calls(fake: FakeEmbeddings) -> None:
    embedder = HttpEmbedder(f"{fake.base_url}/v1", "fake")

    async def calls() -> None:
        try:
            for n in range(5):
                await embedder.embed([f"call {n}"])
        finally:
            await embedder.close()

    before = len(fake.peers)
    asyncio.run(calls())
    assert len(fake.peers) - before == 5
    assert len(set(fake.peers[before:])) == 1
