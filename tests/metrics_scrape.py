"""Reading a server's `/metrics` as Prometheus would, for the tests."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.support import ServerThread

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def get_metrics(srv: ServerThread, key: str | None = None) -> httpx.Response:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    return httpx.get(f"http://{srv.http_address}/metrics", headers=headers, timeout=30)


def scrape(srv: ServerThread, key: str | None) -> Samples:
    """Every sample /metrics shows, by name and labels (OpenTelemetry's scope labels,
    the same on every sample, left out)."""
    answer = get_metrics(srv, key)
    assert answer.status_code == 200, answer.text
    samples: Samples = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            labels = frozenset(
                (k, v) for k, v in sample.labels.items() if not k.startswith("otel_scope")
            )
            samples[(sample.name, labels)] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` that carry ``labels``."""
    wanted = set(labels.items())
    return sum(v for (n, have), v in samples.items() if n == name and wanted <= have)


def has(samples: Samples, name: str, **labels: str) -> bool:
    wanted = set(labels.items())
    return any(n == name and wanted <= have for n, have in samples)


def calls(samples: Samples, method: str, code: str, transport: str = "grpc") -> float:
    return value(
        samples,
        "agent_memory_rpc_calls_total",
        rpc_method=method,
        rpc_code=code,
        rpc_transport=transport,
    )
