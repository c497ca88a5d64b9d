"""The memory part of a system prompt, and the same memory as a MEMORY.md document.

Rendering is pure and deterministic: the same state gives the same bytes, so
prompt caches keep hitting. Every section carries a stable name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agent_memory.domain.memorize import is_content_key
from agent_memory.domain.memory import MemoryLine, MemoryRows
from agent_memory.domain.recall import RecallMatch

PERSONA = "persona"
USER_CORE = "user_core"
AGENT_CORE = "agent_core"
AGENT_MEMORY = "agent_memory"
WORKSPACE_MEMORY = "workspace_memory"
RECENT_DECISIONS = "recent_decisions"

_TITLES = {
    USER_CORE: "## Core Memory (user)",
    AGENT_CORE: "## Core Memory (agent)",
    AGENT_MEMORY: "## Agent Memory",
    WORKSPACE_MEMORY: "## Workspace Memory",
    RECENT_DECISIONS: "## Recent Decisions",
}


# Stored text must not open a section of its own: a line that markdown reads as a
# heading (``#`` at its start, or a setext underline of ``=`` or ``-``) gets a
# backslash in front, and the reminder tags inside a reminder are spelled as text.
_HEADING_LINE = re.compile(r"^([ \t]{0,3})(#|=+[ \t]*$|-+[ \t]*$)", re.MULTILINE)
_REMINDER_TAG = re.compile(r"<(\s*/?\s*system-reminder)", re.IGNORECASE)


@dataclass(frozen=True)
class Section:
    name: str
    content: str


@dataclass(frozen=True)
class RenderInput:
    persona: str = ""
    user_core: str | None = None
    agent_core: str | None = None
    agent_memory: MemoryRows | None = None
    workspace_memory: MemoryRows | None = None
    recent_decisions: Sequence[str] | None = None
    archival: Sequence[RecallMatch] = field(default_factory=tuple)


@dataclass(frozen=True)
class Rendered:
    system_prompt: str
    sections: list[Section]
    system_reminders: list[str]
    memory_markdown: str


def _memory_line(m: MemoryLine) -> str:
    """A memory as one list item: its key and value, or, when the key is a content hash
    that says nothing (Memorize without a key), its value and tags."""
    if not is_content_key(m.key):
        return f"- **{_one_line(m.key)}**: {_one_line(m.value)}"
    tags = f" (tags: {_one_line(', '.join(m.tags))})" if m.tags else ""
    return f"- {_one_line(m.value)}{tags}"


def _memory_lines(rows: MemoryRows) -> str:
    lines = [_memory_line(m) for m in rows.rows]
    if rows.left_out:
        noun = "memory" if rows.left_out == 1 else "memories"
        lines.append(f"_({rows.left_out} more {noun} not shown)_")
    return "\n".join(lines)


def _one_line(text: str) -> str:
    """A value stays one list item: inner newlines would break the list."""
    return " ".join(text.split())


def _no_headings(text: str) -> str:
    """Multi-line stored text (a core block) with no line that reads as a heading.
    Every line break (``\\r``, ``\\u2028`` ...) becomes ``\\n``, so none hides one."""
    return _HEADING_LINE.sub(r"\1\\\2", "\n".join(text.splitlines()))


def _titled(name: str, body: str) -> Section:
    return Section(name, f"{_TITLES[name]}\n{body.strip()}")


def memory_sections(data: RenderInput) -> list[Section]:
    """Every memory section that has something to say, in prompt order."""
    sections: list[Section] = []
    if data.user_core and data.user_core.strip():
        sections.append(_titled(USER_CORE, _no_headings(data.user_core.strip())))
    if data.agent_core and data.agent_core.strip():
        sections.append(_titled(AGENT_CORE, _no_headings(data.agent_core.strip())))
    if data.agent_memory is not None and data.agent_memory.rows:
        sections.append(_titled(AGENT_MEMORY, _memory_lines(data.agent_memory)))
    if data.workspace_memory is not None and data.workspace_memory.rows:
        sections.append(_titled(WORKSPACE_MEMORY, _memory_lines(data.workspace_memory)))
    if data.recent_decisions:
        sections.append(
            _titled(RECENT_DECISIONS, "\n".join(f"- {line}" for line in data.recent_decisions))
        )
    return sections


def reminder(match: RecallMatch) -> str:
    where = f"{match.scope.value} archival memory"
    if match.line_number:
        where += f", line {match.line_number}"
    return (
        "<system-reminder>\n"
        f"Possibly relevant ({where}, score {match.score:.2f}): {_inert(match.content)}\n"
        "</system-reminder>"
    )


def _inert(text: str) -> str:
    """One line in which no reminder tag opens or closes a reminder."""
    return _REMINDER_TAG.sub(r"&lt;\1", _one_line(text))


def render(data: RenderInput) -> Rendered:
    sections = memory_sections(data)
    prompt_sections = [Section(PERSONA, data.persona.strip())] if data.persona.strip() else []
    prompt_sections += sections
    markdown = "# Memory\n"
    if sections:
        markdown += "\n" + "\n\n".join(s.content for s in sections) + "\n"
    return Rendered(
        system_prompt="\n\n".join(s.content for s in prompt_sections),
        sections=prompt_sections,
        system_reminders=[reminder(m) for m in data.archival],
        memory_markdown=markdown,
    )
