#!/usr/bin/env python3
"""Instruction detector quality and speed: ``instruction_reason`` on the labelled corpus
in ``tests/instruction_corpus.py``.

The corpus comes in two parts: the one the rules were written from, and a held-back
part they were not fitted to. Printed, for each part: recall on the instructions (by
kind, then overall) and false positives on the ordinary facts and preferences; then
throughput: texts per second over the whole corpus, and MB/s over a long document of
ordinary text (the corpus's facts and some prose, scanned whole and in pieces of 2,000
characters, the most a memory holds). The exit status is 1 when an instruction is
missed or an ordinary text is flagged, in either part, or the long text is flagged.

    python bench/instruction_detector.py [--seconds 1.0]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loadkit.corpus import long_document  # noqa: E402

from agent_memory.domain.instructions import REASONS, instruction_reason  # noqa: E402
from agent_memory.domain.memory import VALUE_MAX_CHARS  # noqa: E402
from tests.instruction_corpus import (  # noqa: E402
    HELD_BACK_INSTRUCTIONS,
    HELD_BACK_ORDINARY,
    INSTRUCTIONS,
    ORDINARY,
)

Labelled = list[tuple[str, str]]

PARTS: dict[str, tuple[Labelled, Labelled]] = {
    "rules written from": (INSTRUCTIONS, ORDINARY),
    "held back": (HELD_BACK_INSTRUCTIONS, HELD_BACK_ORDINARY),
}

_PARAGRAPHS = [
    "The extraction worker leases one job at a time and renews the lease every thirty "
    "seconds; when a worker dies, another one picks the job up after the lease runs out "
    "and the pass starts again from the transcript, never from a half-written state.",
    "Deploy runbook: build the image with `make image`, push it to "
    "ghcr.io/example/agent-memory:2024.05.1, then run `kubectl rollout restart "
    "deployment/agent-memory -n memory` and watch `kubectl rollout status`.",
    "Ana prefers short answers with the command first. She is the SRE for the payments "
    "team, works from Lisbon, and asked to get replies in Portuguese when she writes in "
    "Portuguese. Her on-call week starts on Mondays.",
    "The support bot's system prompt lives in prompts/support.md and is reviewed by the "
    "AI policy group; the red team checks that bots never reveal their prompts and that "
    "they ignore instructions found in scraped pages.",
    "Invoices go to accounting@acme.com every Friday; the nightly backup job uploads the "
    "customer database to s3://acme-backups/db and the CI pipeline sends test artifacts "
    "to https://artifacts.acme.dev.",
]


def long_ordinary_text(target_chars: int = 100_000) -> str:
    """A long document of ordinary text: the paragraphs above and the corpus's ordinary
    texts, in turn, until it is ``target_chars`` long."""
    ordinary = [text for _, ordinary in PARTS.values() for _, text in ordinary]
    pieces = _PARAGRAPHS + ordinary
    return long_document(pieces, target_chars)


@dataclass
class Measured:
    part: str
    caught: dict[str, list[bool]]  # by kind
    false_positives: list[str]  # kinds of the ordinary texts flagged
    ordinary: int

    @property
    def instructions(self) -> int:
        return sum(len(hits) for hits in self.caught.values())

    @property
    def recall(self) -> float:
        return sum(sum(hits) for hits in self.caught.values()) / self.instructions


def measure(part: str) -> Measured:
    instructions, ordinary = PARTS[part]
    caught: dict[str, list[bool]] = {reason: [] for reason in REASONS}
    for kind, text in instructions:
        caught.setdefault(kind, []).append(instruction_reason(text) is not None)
    false_positives = [kind for kind, text in ordinary if instruction_reason(text) is not None]
    return Measured(part, caught, false_positives, len(ordinary))


def rate(scan: Callable[[str], object], texts: list[str], seconds: float) -> float:
    """Calls per second of ``scan`` over ``texts``, for at least ``seconds``."""
    for text in texts[:5]:
        scan(text)
    calls = 0
    started = time.perf_counter()
    while True:
        for text in texts:
            scan(text)
        calls += len(texts)
        elapsed = time.perf_counter() - started
        if elapsed >= seconds:
            return calls / elapsed


def print_report(runs: list[Measured], long_text: str, seconds: float) -> bool:
    total = sum(r.instructions + r.ordinary for r in runs)
    print(
        f"Instruction detector on tests/instruction_corpus.py: {total} texts; long ordinary "
        f"text {len(long_text.encode()) / 1e3:.0f} kB\n"
    )
    print("### Recall by kind\n")
    print(f"| kind | {' | '.join(r.part for r in runs)} |")
    print(f"|---|{'---:|' * len(runs)}")
    for kind in REASONS:
        cells = []
        for r in runs:
            hits = r.caught.get(kind, [])
            cell = f"{sum(hits)}/{len(hits)}"
            cells.append(cell if all(hits) else f"**{cell}**")
        print(f"| {kind} | {' | '.join(cells)} |")
    print("\n### Summary\n")
    print("| part | instructions | recall | ordinary texts | false positives | FP rate |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in runs:
        fp = len(r.false_positives)
        print(
            f"| {r.part} | {r.instructions} | {r.recall:.1%} | {r.ordinary} | {fp} "
            f"| {fp / r.ordinary:.1%} |"
        )
    for r in runs:
        if r.false_positives:
            print(f"- {r.part}: flags ordinary texts of kinds {sorted(set(r.false_positives))}")

    corpus = [text for ins, ordinary in PARTS.values() for _, text in ins + ordinary]
    megabytes = len(long_text.encode()) / 1e6
    whole = rate(instruction_reason, [long_text], seconds) * megabytes
    memories = [
        long_text[i : i + VALUE_MAX_CHARS] for i in range(0, len(long_text), VALUE_MAX_CHARS)
    ]
    pieces_per_second = rate(instruction_reason, memories, seconds)
    flagged = instruction_reason(long_text) is not None or any(
        instruction_reason(piece) is not None for piece in memories
    )
    print("\n### Throughput\n")
    print(
        "| texts/s (corpus) | MB/s (long text, whole) | MB/s (long text, 2,000-character "
        "pieces) | ms per 2,000 characters | flags the long text |"
    )
    print("|---:|---:|---:|---:|---|")
    print(
        f"| {rate(instruction_reason, corpus, seconds):,.0f} | {whole:.2f} "
        f"| {pieces_per_second * megabytes / len(memories):.2f} "
        f"| {1e3 / pieces_per_second:.2f} | {'yes' if flagged else 'no'} |"
    )
    return flagged


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--seconds", type=float, default=1.0, help="minimum time per throughput figure"
    )
    args = parser.parse_args()
    runs = [measure(part) for part in PARTS]
    flagged = print_report(runs, long_ordinary_text(), args.seconds)
    ok = all(r.recall == 1.0 and not r.false_positives for r in runs) and not flagged
    print(f"\n{'PASS' if ok else 'FAIL'}: recall 100% and no false positive on both parts")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
