#!/usr/bin/env python3
"""Reminders on LoCoMo: which archival lines RenderPrompt in ARCHIVAL_MODE_AUTO pushes
for a message, for each least score (``memory_policy.archival_min_score``), by words
and meaning and by words alone; what chooses the default.

Each conversation becomes one user's archival block as in bench/recall_locomo.py: the
service as it runs in production, two servers on one embedded database (the local
model, and ``--embedder none``), every line embedded before the first question. Every
question of categories 1-4 that names evidence is the user message of a RenderPrompt
in AUTO mode at the default limit, once for each least score and once with none set
(the server's default). For each:

* evidence pushed: the share of questions at least one of whose evidence lines was
  pushed;
* pushed: lines pushed per question;
* not evidence: the share of the pushed lines that are no evidence of the question,
  and how many per question;
* another's question: lines pushed per question when the message is a question of
  another conversation (asked of this user, whose block mostly has nothing for it).

    python bench/reminders_locomo.py [path/to/locomo.json]

Without a path it uses MEMORY_LOCOMO, bench/data/locomo-dev.json or
../shared/data/locomo-dev.json, and skips with one line when none is there.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import psycopg
from loadkit.corpus import find_locomo
from loadkit.driver import channel_to
from loadkit.harness import Run, create_keys, run_main
from loadkit.processes import Child, EmbeddedDatabase, start_service
from loadkit.workloads import RPC_TIMEOUT, Stubs
from recall_locomo import AGENT, MEANING, WORDS, Conversation, read_conversations
from recall_locomo import Bench as RecallBench

from agent_memory.domain.recall import (
    DEFAULT_LIMIT,
    DEFAULT_REMINDER_MIN_SCORE,
    DEFAULT_REMINDER_MIN_WORDS,
)
from agent_memory.render.text import inline
from agentmemory.v1 import recall_pb2
from agentmemory.v1 import recall_service_pb2 as recall_pb

# The least scores tried; None: none set (the server's default).
FLOORS: tuple[float | None, ...] = (
    None,
    0.0,
    0.1,
    0.15,
    0.2,
    0.25,
    0.3,
    0.35,
    0.4,
    0.45,
    0.5,
    0.6,
)
DEFAULTS = {MEANING: DEFAULT_REMINDER_MIN_SCORE, WORDS: DEFAULT_REMINDER_MIN_WORDS}


@dataclass
class Tally:
    """What one least score pushed, over the questions."""

    questions: int = 0
    found: int = 0  # questions with an evidence line pushed
    pushed: int = 0
    not_evidence: int = 0
    others: int = 0  # questions of another conversation
    others_pushed: int = 0

    def row(self, label: str) -> str:
        q, o = max(self.questions, 1), max(self.others, 1)
        share = self.not_evidence / self.pushed if self.pushed else 0.0
        return (
            f"| {label} | {self.found / q:.3f} | {self.pushed / q:.2f} | {share:.3f} "
            f"| {self.not_evidence / q:.2f} | {self.others_pushed / o:.2f} |"
        )


@dataclass
class Block:
    """A conversation as its lines are pushed: the dia ids of each rendered line."""

    conversation: Conversation
    ids_of: dict[str, set[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for line, dia in zip(self.conversation.lines, self.conversation.ids, strict=True):
            self.ids_of.setdefault(inline(line), set()).add(dia)

    def pushed(self, reminders: Sequence[str]) -> list[set[str]]:
        """The lines the reminders hold, each as the dia ids of its text. Read line by
        line: a list item ("- text"), or a line after its lead ("...: text")."""
        found = []
        for reminder in reminders:
            for text in reminder.splitlines():
                for shown in (text, text.removeprefix("- "), text.partition("): ")[2]):
                    if shown in self.ids_of:
                        found.append(self.ids_of[shown])
                        break
        return found


class Bench:
    def __init__(self, scratch: Path, conversations: list[Conversation]) -> None:
        self.base = RecallBench(scratch, conversations, duration=0)
        self.blocks = [Block(c) for c in conversations]
        self.tallies: dict[tuple[str, float | None], Tally] = {}
        self.renders = 0

    async def run(self) -> None:
        archival = 2_000_000
        base = self.base
        hybrid = start_service(base.scratch, workers=1, pool_size=8, archival_chars=archival)
        base.services[MEANING] = hybrid
        hybrid.wait_ready(180)
        lexical = start_service(
            base.scratch, workers=1, pool_size=8, archival_chars=archival, embedder="none"
        )
        base.services[WORDS] = lexical
        lexical.wait_ready(180)
        database = EmbeddedDatabase(base.scratch)
        try:
            base.keys = await create_keys(database.url, [c.user for c in base.conversations])
            await base.write_and_index(database.url)
            for mode, service in base.services.items():
                await self.remind(mode, service)
        finally:
            for service in base.services.values():
                service.stop()
            database.close()

    async def remind(self, mode: str, service: Child) -> None:
        """Every question through RenderPrompt at every least score, on ``mode``'s server:
        each block's own questions, then another conversation's."""
        for floor in FLOORS:
            self.tallies[(mode, floor)] = Tally()
        channel = await channel_to(service.address)
        try:
            stubs = Stubs.of(channel)
            n = len(self.blocks)
            await asyncio.gather(
                *(
                    self._ask(mode, stubs, b, self.blocks[(i + 1) % n])
                    for i, b in enumerate(self.blocks)
                )
            )
        finally:
            await channel.close()
        print(f"  {mode}: {self.renders} renders so far", file=sys.stderr, flush=True)

    async def _ask(self, mode: str, stubs: Stubs, block: Block, other: Block) -> None:
        user = block.conversation.user
        asked = [(qa, True) for qa in block.conversation.questions]
        if other is not block:
            asked += [(qa, False) for qa in other.conversation.questions]
        for qa, own in asked:
            # Every least score in turn: the server embeds the question once.
            for floor in FLOORS:
                reminders = await self._render(stubs, user, qa["question"], floor)
                pushed = block.pushed(reminders)
                tally = self.tallies[(mode, floor)]
                if not own:
                    tally.others += 1
                    tally.others_pushed += len(pushed)
                    continue
                evidence = set(qa["evidence"])
                tally.questions += 1
                tally.found += any(ids & evidence for ids in pushed)
                tally.pushed += len(pushed)
                tally.not_evidence += sum(1 for ids in pushed if not ids & evidence)

    async def _render(
        self, stubs: Stubs, user: str, message: str, floor: float | None
    ) -> list[str]:
        policy = recall_pb2.MemoryPolicy(
            archival_mode=recall_pb2.ARCHIVAL_MODE_AUTO, archival_min_score=floor
        )
        response = await stubs.recall.RenderPrompt(
            recall_pb.RenderPromptRequest(
                agent_id=AGENT, user_message=message, memory_policy=policy
            ),
            metadata=self.base.auth(user),
            timeout=RPC_TIMEOUT,
        )
        self.renders += 1
        return list(response.system_reminders)


def report(bench: Bench, run: Run, data: Path) -> None:
    conversations = bench.base.conversations
    questions = sum(len(c.questions) for c in conversations)
    print(f"\n## agent-memory reminders on LoCoMo ({time.strftime('%Y-%m-%d %H:%M')})\n")
    print(run.machine(f"grpcio {grpc.__version__}, psycopg {psycopg.__version__}"))
    print(
        f"{data.name}: {len(conversations)} conversations, "
        f"{sum(len(c.lines) for c in conversations):,} lines, {questions} questions "
        f"(categories 1-4 with evidence), each the user message of a RenderPrompt in "
        f"ARCHIVAL_MODE_AUTO at the default limit ({DEFAULT_LIMIT}). Meaning: "
        f"{bench.base.model}, in the service's process.\n"
    )
    for mode in (MEANING, WORDS):
        print(f"### {mode}\n")
        print(
            "| least score | evidence pushed | pushed / question | not evidence: share "
            "| not evidence / question | pushed / another's question |"
        )
        print("|---:|---:|---:|---:|---:|---:|")
        for floor in FLOORS:
            label = f"default ({DEFAULTS[mode]:g})" if floor is None else f"{floor:g}"
            print(bench.tallies[(mode, floor)].row(label))
        print()
    print(run.total())


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=find_locomo())
    args = parser.parse_args()
    conversations = read_conversations("reminders_locomo", args.data)
    if isinstance(conversations, int):
        return conversations

    def body(run: Run) -> None:
        bench = Bench(run.scratch, conversations)
        asyncio.run(bench.run())
        report(bench, run, args.data)

    return run_main("reminders_locomo", body)


if __name__ == "__main__":
    sys.exit(main())
