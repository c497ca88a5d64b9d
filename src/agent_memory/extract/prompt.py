"""What the model sees: instructions, the capped transcript, a do-not-repeat hint, one tool."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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
works. Do not repeat facts that are already known. Record nothing when
nothing durable was learned."""


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
                        },
                        "required": ["key", "value", "confidence", "scope"],
                    },
                }
            },
            "required": ["facts"],
        },
    }


def user_message(transcript: CappedTranscript, known: Sequence[str], workspace: bool) -> str:
    lines = []
    if known:
        lines.append("Already known (do not repeat these):")
        lines += [f"- {v[:HINT_VALUE_CHARS]}" for v in known]
        lines.append("")
    if not workspace:
        lines.append("This run has no workspace: every fact is about the agent.")
        lines.append("")
    lines.append("Transcript of the finished run:")
    lines.append("<transcript>")
    lines.append(transcript.text)
    lines.append("</transcript>")
    return "\n".join(lines)
