"""What the service refuses to keep: a secret in any stored text, and an instruction to
the assistant posing as a fact. The detectors (:mod:`agent_memory.detectors`) find
them; here a finding becomes a refusal naming the field and the kind, never the text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from functools import lru_cache

from agent_memory.detectors.instructions import INSTRUCTION_NOT_FACT, instruction_reason
from agent_memory.detectors.secrets import OFF_LOOP_CHARS, find_secrets
from agent_memory.domain.errors import FieldViolation, InvalidArgument

SECRET_IN_VALUE = "SECRET_IN_VALUE"


def refuse_secrets(field: str, text: str) -> None:
    """Raise ``SECRET_IN_VALUE`` naming the kinds found (never the secret).

    Raises:
        InvalidArgument: ``text`` carries a secret.
    """
    findings = find_secrets(text)
    if not findings:
        return
    kinds = ", ".join(f.kind for f in findings)
    raise InvalidArgument(
        [
            FieldViolation(
                field,
                f"looks like it holds a secret ({kinds}); store where the credential "
                "lives, never the credential",
                SECRET_IN_VALUE,
            )
        ],
        reason=SECRET_IN_VALUE,
        metadata={"field": field, "kinds": kinds},
    )


async def refuse_secrets_in(fields: Sequence[tuple[str, str]]) -> None:
    """:func:`refuse_secrets` for each (field, text), in order; off the event loop when
    the texts are long.

    Raises:
        InvalidArgument: a text carries a secret (the first such field is named).
    """

    def scan() -> None:
        for field, text in fields:
            refuse_secrets(field, text)

    if sum(len(text) for _, text in fields) <= OFF_LOOP_CHARS:
        scan()
    else:
        await asyncio.to_thread(scan)


def memory_orders(key: str, value: str) -> bool:
    """Whether a memory's key or value reads as an instruction to the assistant, by the
    rules: what a memory a person did not write is held for where it is not refused
    (an import, and the index worker's judging of an upsert, off the write's path)."""
    return any(instruction_reason(text) is not None for text in (key, value))


def refuse_instructions(field: str, text: str) -> None:
    """Raise ``INSTRUCTION_NOT_FACT`` naming the kind of instruction (never the text).

    Raises:
        InvalidArgument: ``text`` reads as an instruction to the assistant.
    """
    reason = instruction_reason(text)
    if reason is None:
        return
    raise InvalidArgument(
        [
            FieldViolation(
                field,
                f"reads as an instruction to the assistant ({reason}), not a fact; store "
                "what is true of the world or of the user, such as what they prefer",
                INSTRUCTION_NOT_FACT,
            )
        ],
        reason=INSTRUCTION_NOT_FACT,
        metadata={"field": field, "kind": reason},
    )


# A block is judged a line at a time, and a short line judged before is remembered: a
# rewrite of a block judges the lines it changes.
_LINE_REMEMBERED_CHARS = 512
_line_reason = lru_cache(maxsize=4096)(instruction_reason)


def _reason_of_line(line: str) -> str | None:
    return _line_reason(line) if len(line) <= _LINE_REMEMBERED_CHARS else instruction_reason(line)


async def refuse_instruction_lines(
    field: str, text: str, *, known: Collection[str] = frozenset()
) -> None:
    """:func:`refuse_instructions` for each line of ``text`` (a block's content: each
    line a fact or a rule, judged alone) but the ``known`` ones, naming the first line
    that reads as an instruction to the assistant; off the event loop when the text is
    long.

    Raises:
        InvalidArgument: a line reads as an instruction (``INSTRUCTION_NOT_FACT``).
    """

    def first() -> tuple[int, str] | None:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line in known:
                continue
            if (reason := _reason_of_line(line.strip())) is not None:
                return number, reason
        return None

    found = first() if len(text) <= OFF_LOOP_CHARS else await asyncio.to_thread(first)
    if found is None:
        return
    number, reason = found
    raise InvalidArgument(
        [
            FieldViolation(
                field,
                f"line {number} reads as an instruction to the assistant ({reason}), not a "
                "fact or a rule the agent learned; store what is true of the world or of "
                "the user",
                INSTRUCTION_NOT_FACT,
            )
        ],
        reason=INSTRUCTION_NOT_FACT,
        metadata={"field": field, "kind": reason, "line": str(number)},
    )
