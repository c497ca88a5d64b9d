"""A span per RPC and per SQL statement when tracing is on; nothing when it is off."""

from __future__ import annotations

import uuid

import httpx
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from agent_memory.config import Settings
from agent_memory.telemetry.tracing import tracer_provider_from_env
from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import ServerThread


def test_each_rpc_has_a_server_span_with_its_sql_statements_inside(database_url: str) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    traced = ServerThread(database_url, tracer_provider=provider)
    with traced, traced.client() as client:
        client.call(
            client.memory.UpsertMemory,
            pb.UpsertMemoryRequest(
                owner=memory_pb2.MemoryOwner(agent_id="traced"), key="k", value="v"
            ),
        )
    spans = exporter.get_finished_spans()
    rpc = [s for s in spans if s.name == "/agentmemory.v1.MemoryService/UpsertMemory"]
    assert len(rpc) == 1
    assert rpc[0].kind is SpanKind.SERVER
    statements = [
        s
        for s in spans
        if s.attributes
        and s.attributes.get("db.system") == "postgresql"
        and s.context.trace_id == rpc[0].context.trace_id
    ]
    assert statements, [s.name for s in spans]
    assert all(s.parent is not None for s in statements)
    # Verifying the key reads api_keys (unless a recent call left it verified); besides
    # that, one statement writes the memory and its audit event.
    writes = [s for s in statements if "api_keys" not in str(s.attributes.get("db.statement", ""))]
    assert [s.name for s in writes] == ["WITH"]
    sql = str(writes[0].attributes.get("db.statement", ""))
    assert "INSERT INTO memories" in sql
    assert "INSERT INTO memory_events" in sql


def test_no_otel_variables_means_no_tracer_provider() -> None:
    assert tracer_provider_from_env({}) is None
    assert tracer_provider_from_env({"OTEL_TRACES_EXPORTER": "none"}) is None
    assert (
        tracer_provider_from_env(
            {"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
        )
        is None
    )


def test_otel_variables_configure_an_exporting_provider() -> None:
    provider = tracer_provider_from_env({"OTEL_TRACES_EXPORTER": "console"})
    assert provider is not None
    provider.shutdown()
    otlp = tracer_provider_from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert otlp is not None
    assert otlp.resource.attributes["service.name"] == "agent-memory"
    otlp.shutdown()


def test_an_http_call_has_a_server_span_named_as_its_rpc_with_its_sql_inside(
    database_url: str,
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = Settings(http_listen="127.0.0.1:0")
    traced = ServerThread(database_url, settings=settings, tracer_provider=provider)
    with traced:
        key = traced.new_key(f"tenant-{uuid.uuid4().hex[:10]}", "user-1")
        headers = {"authorization": f"Bearer {key}"}
        base = f"http://{traced.http_address}"
        # The caller's trace goes on in the server, as over gRPC.
        caller = {"traceparent": f"00-{'ab' * 16}-{'cd' * 8}-01"}
        made = httpx.post(
            f"{base}/v1/agents/traced/memories",
            headers={**headers, **caller},
            json={"key": "k", "value": "v"},
        )
        assert made.status_code == 200
        recalled = httpx.post(
            f"{base}/v1/recall", headers=headers, json={"query": "v", "agentId": "traced"}
        )
        assert recalled.status_code == 200
    spans = exporter.get_finished_spans()
    for name, route in [
        ("/agentmemory.v1.MemoryService/UpsertMemory", "/v1/agents/{owner.agent_id}/memories"),
        ("/agentmemory.v1.RecallService/Recall", "/v1/recall"),
    ]:
        [span] = [s for s in spans if s.name == name]
        assert span.kind is SpanKind.SERVER
        assert span.attributes is not None
        assert span.attributes["http.route"] == route
        assert span.attributes["http.response.status_code"] == 200
        inside = [
            s
            for s in spans
            if s.context.trace_id == span.context.trace_id
            and s.attributes
            and s.attributes.get("db.system") == "postgresql"
        ]
        assert inside, name
    [upsert] = [s for s in spans if s.name.endswith("/UpsertMemory")]
    assert upsert.context.trace_id == int("ab" * 16, 16)
    assert upsert.parent is not None
    assert upsert.parent.span_id == int("cd" * 8, 16)
