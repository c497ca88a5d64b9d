"""The printed report: a table per operation and the targets."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from loadkit.driver import RunResult

SERVICE, PSYCOPG, NULL = "service", "psycopg", "null"

TARGET_UPSERT_RATIO = 0.4
TARGET_CAS_RATIO = 0.4
# RenderPrompt against its minimal SQL alone (psycopg), not the lower of the two limits.
TARGET_RENDER_SQL_RATIO = 0.4
TARGET_RECALL_P99_MS = 10.0
TARGET_RENDER_P99_MS = 5.0
# Per process, with the local embedding model loaded (its weights are about 70 MB).
TARGET_RSS_MB = 400.0


@dataclass
class Results:
    """Every measured run, by (operation, workers, clients, mode); the psycopg baseline
    does not depend on workers and is measured once per (operation, clients)."""

    runs: dict[tuple[str, int, int, str], RunResult]

    def get(self, op: str, workers: int, clients: int, mode: str) -> RunResult:
        return self.runs[(op, 0 if mode == PSYCOPG else workers, clients, mode)]

    def limit(self, op: str, workers: int, clients: int) -> float:
        return min(
            self.get(op, workers, clients, PSYCOPG).throughput,
            self.get(op, workers, clients, NULL).throughput,
        )

    def ratio(self, op: str, workers: int, clients: int) -> float:
        limit = self.limit(op, workers, clients)
        service = self.get(op, workers, clients, SERVICE).throughput
        return service / limit if limit else math.nan


def _cpu_per_op(r: RunResult) -> str:
    """The server's CPU time per completed call in the window, in ms."""
    if r.cpu_seconds is None or not r.latencies:
        return "n/a"
    return f"{1000 * r.cpu_seconds / len(r.latencies):.2f}"


def _lat(r: RunResult) -> str:
    return f"{r.ms(0.5):.1f} / {r.ms(0.95):.1f} / {r.ms(0.99):.1f}"


def print_table(
    op: str, title: str, workers: Sequence[int], clients: Sequence[int], results: Results
) -> None:
    print(f"\n### {title}\n")
    print(
        "| workers | clients | service ops/s | service p50 / p95 / p99 ms | psycopg ops/s "
        "| psycopg p50 / p95 / p99 ms | null gRPC ops/s | null p50 / p95 / p99 ms "
        "| limit ops/s | service / limit | server CPU ms/op | null CPU ms/op "
        "| peak RSS MB (per process) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    notes: list[str] = []
    for w in workers:
        for c in clients:
            s, p, n = (results.get(op, w, c, m) for m in (SERVICE, PSYCOPG, NULL))
            rss = f"{s.peak_rss / 2**20:.0f}" if s.peak_rss else "n/a"
            cpu, null_cpu = (_cpu_per_op(r) for r in (s, n))
            print(
                f"| {w} | {c} | {s.throughput:,.0f} | {_lat(s)} | {p.throughput:,.0f} | {_lat(p)} "
                f"| {n.throughput:,.0f} | {_lat(n)} | {results.limit(op, w, c):,.0f} "
                f"| {results.ratio(op, w, c):.2f} | {cpu} | {null_cpu} | {rss} |"
            )
            for mode, r in ((SERVICE, s), (PSYCOPG, p), (NULL, n)):
                if r.errors:
                    notes.append(
                        f"{w} workers, {c} clients, {mode}: {r.errors} errors "
                        f"(last: {r.last_error})"
                    )
                if r.retries:
                    notes.append(f"{w} workers, {c} clients, {mode}: {r.retries} CAS retries")
    for note in notes:
        print(f"- {note}")


def print_targets(
    ops: Sequence[str],
    workers: Sequence[int],
    clients: Sequence[int],
    results: Results,
    peak_rss: int,
    profiled: tuple[str, int, int] | None = None,
) -> None:
    """Each target against this run. The service run recorded under py-spy ``profiled``
    (operation, workers, clients) ran slower than it does: its figures are shown, not
    judged."""
    print("\n### Targets\n")
    print("| target | measured | met |")
    print("|---|---|---|")

    def row(
        target: str, measured: str, met: bool | None, run: tuple[str, int, int] | None = None
    ) -> None:
        if run is not None and run == profiled:
            verdict = "not judged (under py-spy)"
        elif met is None:
            verdict = "not measured"
        else:
            verdict = "yes" if met else "**no**"
        print(f"| {target} | {measured} | {verdict} |")

    for op, name, bound in (
        ("upsert", "UpsertMemory", TARGET_UPSERT_RATIO),
        ("writeblock", "WriteBlock CAS cycle", TARGET_CAS_RATIO),
    ):
        for w in workers:
            target = (
                f"{name}, {w} worker{'s' if w > 1 else ''}, 8 clients: service / limit >= {bound}"
            )
            if op in ops and 8 in clients:
                ratio = results.ratio(op, w, 8)
                s = results.get(op, w, 8, SERVICE).throughput
                measured = f"{ratio:.2f} ({s:,.0f} of {results.limit(op, w, 8):,.0f} ops/s)"
                row(target, measured, ratio >= bound, (op, w, 8))
            else:
                row(target, "-", None)
    for w in workers:
        target = (
            f"RenderPrompt, {w} worker{'s' if w > 1 else ''}, 8 clients: service / minimal SQL"
            f" >= {TARGET_RENDER_SQL_RATIO}"
        )
        if "render" in ops and 8 in clients:
            s = results.get("render", w, 8, SERVICE).throughput
            sql = results.get("render", w, 8, PSYCOPG).throughput
            ratio = s / sql if sql else 0.0
            measured = f"{ratio:.2f} ({s:,.0f} of {sql:,.0f} ops/s)"
            row(target, measured, ratio >= TARGET_RENDER_SQL_RATIO, ("render", w, 8))
        else:
            row(target, "-", None)
    first = workers[0]
    for op, name, bound in (
        ("recall", "Recall", TARGET_RECALL_P99_MS),
        ("render", "RenderPrompt", TARGET_RENDER_P99_MS),
    ):
        target = f"{name} p99 < {bound:g} ms (1 client, {first} worker{'s' if first > 1 else ''})"
        if op in ops and 1 in clients:
            p99 = results.get(op, first, 1, SERVICE).ms(0.99)
            row(target, f"{p99:.1f} ms", p99 < bound, (op, first, 1))
        else:
            row(target, "-", None)
    mb = peak_rss / 2**20
    row(
        f"peak RSS < {TARGET_RSS_MB:g} MB per service process (every run, setup excluded)",
        f"{mb:.0f} MB",
        mb < TARGET_RSS_MB,
    )


def print_profile(title: str, own: list[tuple[str, float]], total: list[tuple[str, float]]) -> None:
    print(f"\n### Profile: {title}\n")
    print("| own % | function |")
    print("|---:|---|")
    for name, share in own:
        print(f"| {share:.1f} | `{name}` |")
    print("\n| total % | function |")
    print("|---:|---|")
    for name, share in total:
        print(f"| {share:.1f} | `{name}` |")
