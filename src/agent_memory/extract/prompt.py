"""What the model sees: instructions, the capped transcript, the known memories a new
fact may repeat, update or contradict, and one tool."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_memory.domain.extraction import Action
from agent_memory.domain.memory import Memory
from agent_memory.extract.dedup import word_set
from agent_memory.render.text import inline

TOOL_NAME = "record_memories"
HINT_VALUE_CHARS = 200
OMISSION = "\n[... {n} characters omitted ...]\n"

SYSTEM = """You distil durable memory from a finished agent run.

Record only stable facts that will help future runs: tech stack, file
locations, conventions, API endpoints, where credentials live, and how this
agent prefers to work. Never record one-off task details, transient state, or
secret values themselves (point at where a secret lives instead).

For each fact give a short key slug, the fact itself in one or two sentences,
a confidence between 0 and 1, and a scope: "workspace" for project facts any
agent could use, "agent" for a learning about how this particular agent
works. Record nothing when nothing durable was learned.

Known memories are listed with an id. Say what each fact does to them:
"add" for a new fact; "update" with the id when it is the same fact with a
changed value; "supersede" with the id when it makes that memory untrue or
obsolete (the user moved, the command changed); "noop" with the id when it is
already known as it stands. Never repeat a known fact as "add".

When the transcript says a fact holds only from or until a day ("Ana leads
platform until March", "the staging database moved to port 5434 on the 12th"),
give valid_from (the first day it holds) and/or valid_until (the day it stops
holding) as ISO dates, YYYY-MM-DD, reckoned from today's date; otherwise leave
them out."""


@dataclass(frozen=True)
class CappedTranscript:
    text: str
    original_chars: int
    kept_head: int
    kept_tail: int

    @property
    def was_cut(self) -> bool:
        return self.kept_head + self.kept_tail < self.original_chars

    def describe(self) -> str:
        if not self.was_cut:
            return f"whole transcript ({self.original_chars} characters)"
        return (
            f"first {self.kept_head} and last {self.kept_tail} of {self.original_chars} characters"
        )


def cap_transcript(transcript: str, max_chars: int) -> CappedTranscript:
    """Keep the opening quarter and the closing three quarters of the allowance.

    The opening states the task and its setting (stack, paths, conventions);
    the end holds what the run concluded and settled on. The middle is mostly
    the back-and-forth of the work itself, the least durable part.
    """
    if len(transcript) <= max_chars:
        return CappedTranscript(transcript, len(transcript), len(transcript), 0)
    head = max_chars // 4
    tail = max_chars - head
    omitted = len(transcript) - head - tail
    text = transcript[:head] + OMISSION.format(n=omitted) + transcript[-tail:]
    return CappedTranscript(text, len(transcript), head, tail)


def tool(max_facts: int, workspace: bool) -> dict[str, Any]:
    scopes = ["agent", "workspace"] if workspace else ["agent"]
    return {
        "name": TOOL_NAME,
        "description": "Record the durable facts learned in this run (possibly none).",
        "input_schema": {
            "type": "object",
            "properties": {
                "facts": {
                    "type": "array",
                    "maxItems": max_facts,
                    "items": {
                        "type": "object",
                        "properties": {
                            "key": {
                                "type": "string",
                                "description": "short slug, e.g. deploy-command",
                            },
                            "value": {"type": "string", "description": "the fact"},
                            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                            "scope": {"type": "string", "enum": scopes},
                            "action": {
                                "type": "string",
                                "enum": [a.value for a in Action],
                                "description": "what the fact does to the known memories; "
                                "default add",
                            },
                            "target": {
                                "type": "string",
                                "description": "id of the known memory, e.g. m3 "
                                "(update, supersede and noop)",
                            },
                            "valid_from": {
                                "type": "string",
                                "description": "the first day the fact holds, YYYY-MM-DD, "
                                "when the transcript says",
                            },
                            "valid_until": {
                                "type": "string",
                                "description": "the day the fact stops holding, "
                                "YYYY-MM-DD, when the transcript says",
                            },
                        },
                        "required": ["key", "value", "confidence", "scope"],
                    },
                }
            },
            "required": ["facts"],
        },
    }


@dataclass(frozen=True)
class Known:
    """An existing memory as the model is shown it, under a short reference."""

    ref: str
    memory: Memory


def known_memories(existing: Sequence[Memory], transcript: str, limit: int) -> list[Known]:
    """The memories a fact of this run is most likely to repeat, update or contradict:
    those sharing the most of their words with the transcript, the most recent first
    among equals (``existing`` is newest first), at most ``limit``, referenced m1, m2..."""
    words = word_set(transcript)

    def shared(memory: Memory) -> float:
        own = word_set(f"{memory.key} {memory.value}")
        return len(own & words) / len(own) if own else 0.0

    ranked = sorted(range(len(existing)), key=lambda i: (-shared(existing[i]), i))
    return [Known(f"m{n}", existing[i]) for n, i in enumerate(ranked[:limit], start=1)]


def user_message(
    transcript: CappedTranscript, known: Sequence[Known], workspace: bool, today: str = ""
) -> str:
    """The transcript, after the known memories and, when ``today`` (a UTC day) is
    given, the date the model reckons a fact's days from."""
    lines = [f"Today is {today} (UTC).", ""] if today else []
    if known:
        lines.append("Known memories (id, scope, key: value):")
        lines += [
            f"- {k.ref} ({k.memory.owner.scope.value}) {inline(k.memory.key)}: "
            f"{inline(k.memory.value[:HINT_VALUE_CHARS])}"
            for k in known
        ]
        lines.append("")
    if not workspace:
        lines.append("This run has no workspace: every fact is about the agent.")
        lines.append("")
    lines.append("Transcript of the finished run:")
    lines.append("<transcript>")
    lines.append(transcript.text)
    lines.append("</transcript>")
    return "\n".join(lines)
