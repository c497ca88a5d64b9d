"""When metrics are on, where they go, and how often the indexing gauges ask the
database."""

from __future__ import annotations

import asyncio
import io
import json
import re
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics.export import ConsoleMetricExporter
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from agent_memory.config import Settings
from agent_memory.domain.indexing import IndexingStatus
from agent_memory.telemetry.metrics import Metrics, metrics_for, otlp_metrics_requested

ENDPOINT = "http://127.0.0.1:4318"
DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana-dashboard.json"


def samples(text: str, name: str) -> list[Sample]:
    return [s for f in text_string_to_metric_families(text) for s in f.samples if s.name == name]


@pytest.mark.parametrize(
    ("environ", "pushed"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}, True),
        ({"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": ENDPOINT + "/v1/metrics"}, True),
        ({"OTEL_METRICS_EXPORTER": "console"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_METRICS_EXPORTER": "none"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_SDK_DISABLED": "true"}, False),
        # Spans only: the traces' own endpoint says nothing of metrics.
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": ENDPOINT}, False),
    ],
)
def test_metrics_are_pushed_where_the_otel_variables_say(
    environ: dict[str, str], pushed: bool
) -> None:
    assert otlp_metrics_requested(environ) is pushed


def test_without_an_endpoint_or_a_collector_metrics_are_off() -> None:
    metrics = metrics_for(Settings(), {})
    assert not metrics.enabled
    assert metrics.registry is None
    # Recording into nothing is allowed, and free.
    metrics.call_ended("/agentmemory.v1.MemoryService/GetMemory", "OK", 0.001, "grpc")
    metrics.extraction_pass("t", "completed")
    metrics.extraction_spent("t", input_tokens=1, output_tokens=1, cost_usd=0.1)
    metrics.recall_ranked("lexical")
    metrics.shutdown()


def test_the_endpoint_reads_what_is_recorded() -> None:
    metrics = metrics_for(Settings(http_listen="127.0.0.1:0", metrics_endpoint="open"), {})
    assert metrics.enabled
    assert metrics.registry is not None
    metrics.call_ended("/agentmemory.v1.MemoryService/GetMemory", "NOT_FOUND", 0.002, "grpc")
    text = asyncio.run(metrics.exposition()).decode()
    [errors] = samples(text, "agent_memory_rpc_errors_total")
    assert errors.value == 1
    assert {k: v for k, v in errors.labels.items() if not k.startswith("otel_scope")} == {
        "rpc_service": "agentmemory.v1.MemoryService",
        "rpc_method": "GetMemory",
        "rpc_code": "NOT_FOUND",
        "rpc_transport": "grpc",
    }
    [target] = samples(text, "target_info")
    assert target.labels["service_name"] == "agent-memory"
    metrics.shutdown()


def test_a_pushing_reader_pushes_what_is_left_as_it_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    printed = io.StringIO()
    monkeypatch.setattr(
        "agent_memory.telemetry.metrics.ConsoleMetricExporter",
        lambda: ConsoleMetricExporter(out=printed),
    )
    metrics = metrics_for(Settings(), {"OTEL_METRICS_EXPORTER": "console"})
    assert metrics.enabled
    assert metrics.registry is None
    metrics.recall_ranked("hybrid")
    metrics.shutdown()
    assert "agent_memory.recall.calls" in printed.getvalue()


@pytest.mark.parametrize(("every", "reads"), [(3600.0, 1), (0.0, 3)])
def test_the_indexing_gauges_ask_the_database_at_most_as_often_as_allowed(
    every: float, reads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[int] = []

    async def read() -> IndexingStatus:
        asked.append(1)
        return IndexingStatus(
            waiting_lines=5, waiting_memories=2, waiting_capped=False, workers=1, per_second=2.5
        )

    async def scrape_three_times() -> str:
        metrics = metrics_for(Settings(http_listen="127.0.0.1:0", metrics_endpoint="on"), {})
        monkeypatch.setattr("agent_memory.telemetry.metrics.INDEXING_READ_SECONDS", every)
        metrics.watch_indexing("m", read)
        texts = [(await metrics.exposition()).decode() for _ in range(3)]
        metrics.shutdown()
        return texts[-1]

    text = asyncio.run(scrape_three_times())
    assert len(asked) == reads
    [waiting] = samples(text, "agent_memory_indexing_waiting")
    assert (waiting.labels["model"], waiting.value) == ("m", 7)
    [rate] = samples(text, "agent_memory_indexing_rate_per_second")
    assert rate.value == 2.5
    [workers] = samples(text, "agent_memory_indexing_workers")
    assert workers.value == 1


def test_no_metrics_object_is_needed_to_record() -> None:
    Metrics().call_ended("/x.Y/Z", "OK", 0.0, "http")


def test_the_dashboard_reads_only_metrics_the_service_exports() -> None:
    async def everything() -> str:
        metrics = metrics_for(Settings(http_listen="127.0.0.1:0", metrics_endpoint="on"), {})
        metrics.call_ended("/agentmemory.v1.MemoryService/GetMemory", "NOT_FOUND", 0.002, "http")
        metrics.extraction_pass("t", "completed")
        metrics.extraction_spent("t", input_tokens=5, output_tokens=1, cost_usd=0.1)
        metrics.recall_ranked("hybrid")
        metrics.watch_pools(lambda: {"primary": {"pool_size": 2, "pool_available": 1}})

        async def read() -> IndexingStatus:
            return IndexingStatus(
                waiting_lines=0, waiting_memories=0, waiting_capped=False, workers=0, per_second=0.0
            )

        metrics.watch_indexing("m", read)
        text = (await metrics.exposition()).decode()
        metrics.shutdown()
        return text

    exported = {
        s.name for f in text_string_to_metric_families(asyncio.run(everything())) for s in f.samples
    }
    dashboard = json.loads(DASHBOARD.read_text())
    queries = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    queries += [v["definition"] for v in dashboard["templating"]["list"] if "definition" in v]
    read = {name for q in queries for name in re.findall(r"\bagent_memory_[a-z_]+", q)}
    assert len(read) >= 12
    assert read <= exported, read - exported
    assert all(t["expr"] for p in dashboard["panels"] for t in p.get("targets", []))
