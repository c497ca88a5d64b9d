#!/usr/bin/env python3
"""Recall quality on LoCoMo: the service's Recall against a BM25 reference.

Each conversation becomes one user's archival block (one line per turn,
"<speaker>: <text>" plus the shared image's caption), written through the real
gRPC API of a freshly started server on an embedded PostgreSQL. Every question
of categories 1-4 that names evidence is asked through Recall; recall@k is the
share of its evidence turns among the top k lines, averaged over questions.
The BM25 reference (rank_bm25's BM25Okapi, lowercase alphanumeric tokens, a
short English stopword list removed) is computed in the same run on the same
lines.

    python bench/recall_locomo.py [path/to/locomo.json]

Without a path it uses MEMORY_LOCOMO, bench/data/locomo-dev.json or
../shared/data/locomo-dev.json, and skips with one line when none is there.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
from loadkit.corpus import LOCOMO_HOWTO, find_locomo
from rank_bm25 import BM25Okapi

from agentmemory.v1 import block_pb2, block_service_pb2_grpc, memory_pb2, recall_service_pb2_grpc
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import recall_service_pb2 as recall_pb

KS = (1, 5, 10)
STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with about as is are was were be been
    being do does did have has had i you he she it we they me him her us them my your his
    its our their this that these those what which who whom when where why how not no so
    than too very can will just from into over under again then once here there all any
    both each few more most other some such only own same""".split()  # noqa: SIM905
)


def tokens(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS]


def conversation_lines(conversation: dict) -> tuple[list[str], list[str]]:
    lines, ids = [], []
    n = 1
    while f"session_{n}" in conversation:
        for turn in conversation[f"session_{n}"]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [image: {turn['blip_caption']}]"
            lines.append(" ".join(text.split()))
            ids.append(turn["dia_id"])
        n += 1
    return lines, ids


@contextmanager
def server() -> Iterator[str]:
    """``agent-memory serve`` on an embedded PostgreSQL in a scratch folder."""
    with tempfile.TemporaryDirectory(prefix="recall-bench-") as data_dir:
        env = {**os.environ, "MEMORY_ARCHIVAL_MAX_CHARS": "2000000", "MEMORY_LOG_LEVEL": "WARNING"}
        env.pop("MEMORY_DATABASE_URL", None)
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agent_memory.cli",
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--insecure-local",
                "--data-dir",
                data_dir,
                "--log-level",
                "INFO",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        assert proc.stdout is not None
        address = ""
        for line in proc.stdout:
            if "serving on" in line:
                address = line.split(" on ", 1)[1].split()[0]
                break
        if not address:
            proc.kill()
            raise SystemExit("the server did not start")
        try:
            yield address
        finally:
            proc.terminate()
            proc.wait(30)


def recall_at(ranked: list[str], evidence: set[str]) -> dict[int, float]:
    return {k: len(evidence & set(ranked[:k])) / len(evidence) for k in KS}


def mean(rows: list[dict[int, float]], k: int) -> float:
    return sum(r[k] for r in rows) / len(rows) if rows else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=find_locomo())
    args = parser.parse_args()
    if args.data is None:
        print(f"recall_locomo: skipped. {LOCOMO_HOWTO}")
        return 0
    if not args.data.is_file():
        print(f"recall_locomo: {args.data} is not a file. {LOCOMO_HOWTO}", file=sys.stderr)
        return 2
    samples = json.loads(args.data.read_text())

    ours: list[dict[int, float]] = []
    reference: list[dict[int, float]] = []
    latencies: list[float] = []
    with server() as address, grpc.insecure_channel(address) as channel:
        blocks = block_service_pb2_grpc.BlockServiceStub(channel)
        recall = recall_service_pb2_grpc.RecallServiceStub(channel)
        for sample in samples:
            lines, ids = conversation_lines(sample["conversation"])
            identity = (("x-tenant-id", "locomo"), ("x-user-id", sample["sample_id"]))
            blocks.WriteBlock(
                block_pb.WriteBlockRequest(
                    label=block_pb2.BLOCK_LABEL_ARCHIVAL,
                    scope=memory_pb2.SCOPE_USER,
                    content="\n".join(lines),
                ),
                metadata=identity,
                timeout=120,
            )
            bm25 = BM25Okapi([tokens(line) for line in lines])
            for qa in sample["qa"]:
                if qa.get("category") not in (1, 2, 3, 4) or not qa.get("evidence"):
                    continue
                evidence = set(qa["evidence"])
                started = time.perf_counter()
                matches = list(
                    recall.Recall(
                        recall_pb.RecallRequest(query=qa["question"], agent_id="bench", limit=10),
                        metadata=identity,
                        timeout=60,
                    )
                )
                latencies.append(time.perf_counter() - started)
                ours.append(recall_at([ids[m.line_number - 1] for m in matches], evidence))
                scores = bm25.get_scores(tokens(qa["question"]))
                order = sorted(range(len(lines)), key=lambda i: -scores[i])[: max(KS)]
                reference.append(recall_at([ids[i] for i in order], evidence))

    latencies.sort()
    print(
        f"LoCoMo recall on {args.data.name}: {len(samples)} conversations, "
        f"{len(ours)} questions (categories 1-4 with evidence)\n"
    )
    print(f"| ranker | {' | '.join(f'recall@{k}' for k in KS)} |")
    print(f"|---|{'---|' * len(KS)}")
    print(f"| BM25 reference (rank_bm25) | {' | '.join(f'{mean(reference, k):.3f}' for k in KS)} |")
    print(f"| agent-memory Recall | {' | '.join(f'{mean(ours, k):.3f}' for k in KS)} |")
    ratios = " | ".join(
        f"{mean(ours, k) / mean(reference, k):.2f}x" if mean(reference, k) else "n/a" for k in KS
    )
    print(f"| ratio | {ratios} |")
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000  # noqa: E731
    print(
        f"\nRecall latency over gRPC: p50 {p(0.5):.1f} ms, p95 {p(0.95):.1f} ms, "
        f"p99 {p(0.99):.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
