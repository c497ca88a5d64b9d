"""The prompt renderer (render/prompt.py) as a pure function: no transport, no storage."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from agent_memory.domain.memory import (
    Memory,
    MemoryLine,
    MemoryRows,
    MemorySource,
    Owner,
    Scope,
)
from agent_memory.domain.recall import RecallMatch
from agent_memory.render import prompt
from agent_memory.render.prompt import RenderInput, render

WHEN = datetime(2026, 4, 30, 16, 20, tzinfo=UTC)


def memory(key: str, value: str, *, scope: Scope = Scope.AGENT) -> Memory:
    return Memory(
        id=uuid.uuid5(uuid.NAMESPACE_URL, key),
        owner=Owner(scope, "owner-1"),
        key=key,
        value=value,
        pinned=False,
        importance=0,
        source=MemorySource.MANUAL,
        created_at=WHEN,
        updated_at=WHEN,
        version=1,
    )


def rows(*pairs: tuple[str, str], left_out: int = 0) -> MemoryRows:
    return MemoryRows(rows=[MemoryLine.of(memory(k, v)) for k, v in pairs], left_out=left_out)


def full_input() -> RenderInput:
    return RenderInput(
        persona="You are a careful records assistant.",
        user_core="- Prefers concise answers\n- Works in America/New_York",
        agent_core="- Files summaries under /records",
        agent_memory=rows(("deploy-cmd", "npm run deploy"), ("stack", "Fastify")),
        workspace_memory=rows(("endpoint", "https://api.example.test")),
    )


def names(data: RenderInput) -> list[str]:
    return [s.name for s in render(data).sections]


# --- sections and their order ------------------------------------------------------


def test_sections_come_in_prompt_order() -> None:
    assert names(full_input()) == [
        prompt.PERSONA,
        prompt.USER_CORE,
        prompt.AGENT_CORE,
        prompt.AGENT_MEMORY,
        prompt.WORKSPACE_MEMORY,
    ]


def test_section_names_are_the_stable_contract_names() -> None:
    assert (
        prompt.PERSONA,
        prompt.USER_CORE,
        prompt.AGENT_CORE,
        prompt.AGENT_MEMORY,
        prompt.WORKSPACE_MEMORY,
    ) == ("persona", "user_core", "agent_core", "agent_memory", "workspace_memory")


def test_each_memory_section_opens_with_its_heading() -> None:
    by_name = {s.name: s.content for s in render(full_input()).sections}
    assert by_name[prompt.PERSONA] == "You are a careful records assistant."
    assert by_name[prompt.USER_CORE] == (
        "## Core Memory (user)\n- Prefers concise answers\n- Works in America/New_York"
    )
    assert by_name[prompt.AGENT_CORE] == "## Core Memory (agent)\n- Files summaries under /records"
    assert by_name[prompt.AGENT_MEMORY].startswith("## Agent Memory\n")
    assert by_name[prompt.WORKSPACE_MEMORY].startswith("## Workspace Memory\n")


def test_memory_rows_are_key_value_list_items_in_the_given_order() -> None:
    data = RenderInput(agent_memory=rows(("zeta", "last"), ("alpha", "first"), ("mid", "x")))
    (section,) = render(data).sections
    assert section.content == (
        "## Agent Memory\n- **zeta**: last\n- **alpha**: first\n- **mid**: x"
    )


def test_a_value_with_newlines_stays_one_list_item() -> None:
    data = RenderInput(
        workspace_memory=rows(("multi", "line one\nline two\r\n\n  line three\tend  "))
    )
    (section,) = render(data).sections
    assert section.content == "## Workspace Memory\n- **multi**: line one line two line three end"
    assert section.content.count("\n") == 1


@pytest.mark.parametrize(
    ("left_out", "line"),
    [
        (1, "_(1 more memory not shown)_"),
        (2, "_(2 more memories not shown)_"),
        (47, "_(47 more memories not shown)_"),
    ],
)
def test_rows_left_out_are_counted_in_a_closing_line(left_out: int, line: str) -> None:
    data = RenderInput(agent_memory=rows(("a", "1"), ("b", "2"), left_out=left_out))
    (section,) = render(data).sections
    assert section.content.splitlines() == ["## Agent Memory", "- **a**: 1", "- **b**: 2", line]


def test_no_closing_line_when_nothing_was_left_out() -> None:
    data = RenderInput(workspace_memory=rows(("a", "1")))
    assert "not shown" not in render(data).system_prompt


# --- empty sections ----------------------------------------------------------------


def test_empty_input_renders_nothing() -> None:
    rendered = render(RenderInput())
    assert rendered.sections == []
    assert rendered.system_prompt == ""
    assert rendered.system_reminders == []
    assert rendered.memory_markdown == "# Memory\n"


@pytest.mark.parametrize(
    ("field", "empty"),
    [
        ("persona", ""),
        ("persona", "  \n\t "),
        ("user_core", None),
        ("user_core", ""),
        ("user_core", "\n  \n"),
        ("agent_core", None),
        ("agent_core", "   "),
        ("agent_memory", None),
        ("agent_memory", MemoryRows(rows=[])),
        ("workspace_memory", None),
        ("workspace_memory", MemoryRows(rows=[])),
    ],
)
def test_an_empty_section_is_left_out(field: str, empty: object) -> None:
    full = full_input()
    data = RenderInput(**{**full.__dict__, field: empty})
    gone = {
        "persona": prompt.PERSONA,
        "user_core": prompt.USER_CORE,
        "agent_core": prompt.AGENT_CORE,
        "agent_memory": prompt.AGENT_MEMORY,
        "workspace_memory": prompt.WORKSPACE_MEMORY,
    }[field]
    expected = [n for n in names(full) if n != gone]
    assert names(data) == expected
    assert "\n\n\n" not in render(data).system_prompt


def test_persona_and_core_blocks_are_trimmed() -> None:
    data = RenderInput(persona="\n  Be brief.  \n", user_core="\n\n- likes tea\n\n")
    rendered = render(data)
    assert rendered.system_prompt == "Be brief.\n\n## Core Memory (user)\n- likes tea"


# --- the whole prompt and the markdown document ------------------------------------


def test_system_prompt_joins_sections_with_one_blank_line() -> None:
    rendered = render(full_input())
    assert rendered.system_prompt == "\n\n".join(s.content for s in rendered.sections)
    assert rendered.system_prompt == (
        "You are a careful records assistant.\n"
        "\n"
        "## Core Memory (user)\n"
        "- Prefers concise answers\n"
        "- Works in America/New_York\n"
        "\n"
        "## Core Memory (agent)\n"
        "- Files summaries under /records\n"
        "\n"
        "## Agent Memory\n"
        "- **deploy-cmd**: npm run deploy\n"
        "- **stack**: Fastify\n"
        "\n"
        "## Workspace Memory\n"
        "- **endpoint**: https://api.example.test"
    )


def test_memory_markdown_is_a_memory_document_without_the_persona() -> None:
    rendered = render(full_input())
    memory_sections = [s.content for s in rendered.sections if s.name != prompt.PERSONA]
    assert rendered.memory_markdown == "# Memory\n\n" + "\n\n".join(memory_sections) + "\n"
    assert "careful records assistant" not in rendered.memory_markdown
    assert rendered.memory_markdown.startswith("# Memory\n\n## Core Memory (user)\n")
    assert rendered.memory_markdown.endswith("- **endpoint**: https://api.example.test\n")


def test_memory_markdown_of_a_persona_alone_is_just_the_title() -> None:
    rendered = render(RenderInput(persona="Be brief."))
    assert rendered.system_prompt == "Be brief."
    assert rendered.memory_markdown == "# Memory\n"


# --- system reminders --------------------------------------------------------------


def test_archival_matches_become_one_reminder_each_in_order() -> None:
    matches = [
        RecallMatch(
            content="Acme renewal: CFO wants pricing options",
            score=0.876,
            scope=Scope.USER,
            agent_id="",
            line_number=3,
        ),
        RecallMatch(
            content="Globex DPA\napproved",
            score=0.5,
            scope=Scope.AGENT,
            agent_id="records",
            line_number=12,
        ),
    ]
    rendered = render(RenderInput(archival=matches))
    assert rendered.system_reminders == [
        "<system-reminder>\n"
        "Possibly relevant (user archival memory, line 3, score 0.88): "
        "Acme renewal: CFO wants pricing options\n"
        "</system-reminder>",
        "<system-reminder>\n"
        "Possibly relevant (agent archival memory, line 12, score 0.50): Globex DPA approved\n"
        "</system-reminder>",
    ]


def test_reminders_stay_out_of_the_system_prompt() -> None:
    match = RecallMatch(
        content="Acme renewal", score=1.0, scope=Scope.USER, agent_id="", line_number=1
    )
    rendered = render(RenderInput(persona="Be brief.", archival=[match]))
    assert rendered.system_prompt == "Be brief."
    assert "Acme" not in rendered.memory_markdown
    assert len(rendered.system_reminders) == 1


def test_a_match_without_a_line_number_names_no_line() -> None:
    match = RecallMatch(content="tech stack: Fastify", score=0.25, scope=Scope.AGENT, agent_id="a")
    assert prompt.reminder(match) == (
        "<system-reminder>\n"
        "Possibly relevant (agent archival memory, score 0.25): tech stack: Fastify\n"
        "</system-reminder>"
    )


# --- determinism -------------------------------------------------------------------


def test_the_same_input_renders_the_same_bytes() -> None:
    first, second = render(full_input()), render(full_input())
    assert first.system_prompt.encode() == second.system_prompt.encode()
    assert first.memory_markdown.encode() == second.memory_markdown.encode()
    assert first == second


def test_a_memorized_row_keyed_by_its_content_hash_renders_by_its_content_and_tags() -> None:
    hashed = "memorize:" + "c349" * 10
    data = RenderInput(
        agent_memory=MemoryRows(
            rows=[
                MemoryLine(hashed, "Releases are cut from release/*", ("release-flow", "git")),
                MemoryLine("memorize:" + "0" * 40, "No tags here"),
                # A key the caller chose says something: it stays.
                MemoryLine("release-branch", "release/*", ("git",)),
            ]
        )
    )
    assert render(data).sections[0].content.splitlines()[1:] == [
        "- Releases are cut from release/* (tags: release-flow, git)",
        "- No tags here",
        "- **release-branch**: release/*",
    ]
