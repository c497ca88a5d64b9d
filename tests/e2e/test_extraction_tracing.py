"""Each extraction pass is one `memory.extract` span carrying its synthetic session id and
the GenAI semantic-convention usage attributes, plus its cost and kept/dropped counts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agent_memory.config import Settings
from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.fake_anthropic import FakeAnthropic, fact, model_on_loopback
from tests.support import Client, ServerThread

MODEL = "claude-haiku-4-5-20251001"
TRANSCRIPT = "user: how do we deploy?\nassistant: " + "We deploy with make release. " * 20


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with model_on_loopback() as f:
        yield f


@pytest.fixture
def traced(fake: FakeAnthropic, database_url: str) -> Iterator[tuple[Client, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    srv = ServerThread(
        database_url, settings=Settings(extraction_sdk_retries=0), tracer_provider=provider
    )
    with srv:
        with srv.client() as client:
            client.call(
                client.memory.UpdateAgentSettings,
                pb.UpdateAgentSettingsRequest(
                    settings=memory_pb2.AgentSettings(agent_id="a", memory_enabled=True)
                ),
            )
            exporter.clear()
            yield client, exporter
        provider.shutdown()


def extract(c: Client, **fields: Any) -> pb.ExtractMemoriesResponse:
    fields.setdefault("agent_id", "a")
    fields.setdefault("transcript", TRANSCRIPT)
    return c.call(c.memory.ExtractMemories, pb.ExtractMemoriesRequest(**fields))


def passes(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == "memory.extract"]


def test_a_pass_is_one_span_with_its_synthetic_id_usage_cost_and_counts(
    traced: tuple[Client, InMemorySpanExporter], fake: FakeAnthropic
) -> None:
    c, exporter = traced
    fake.facts(
        fact("deploy", "Deploy with make release"),
        fact("shaky", "maybe the build uses bazel", confidence=0.2),
        input_tokens=1234,
        output_tokens=56,
    )
    reply = extract(c, session_id="run-7")
    [span] = passes(exporter)
    attrs = dict(span.attributes or {})
    assert attrs["session.id"] == "memory-extract:run-7" == reply.synthetic_session_id
    assert attrs["gen_ai.system"] == "anthropic"
    assert attrs["gen_ai.request.model"] == MODEL
    assert attrs["gen_ai.usage.input_tokens"] == 1234
    assert attrs["gen_ai.usage.output_tokens"] == 56
    assert attrs["memory.extract.cost_usd"] == pytest.approx(1234 * 1e-6 + 56 * 5e-6)
    assert attrs["memory.extract.cost_usd"] == pytest.approx(reply.usage.cost_usd)
    assert attrs["memory.extract.kept"] == 1
    assert attrs["memory.extract.dropped"] == 1
    assert attrs["memory.extract.outcome"] == "completed"
    # The pass runs inside the RPC's trace.
    [rpc] = [
        s
        for s in exporter.get_finished_spans()
        if s.name == "/agentmemory.v1.MemoryService/ExtractMemories"
    ]
    assert span.context.trace_id == rpc.context.trace_id


def test_a_chain_pass_carries_the_chain_form_of_the_id(
    traced: tuple[Client, InMemorySpanExporter], fake: FakeAnthropic
) -> None:
    c, exporter = traced
    fake.facts(fact("deploy", "Deploy with make release"), input_tokens=800, output_tokens=40)
    extract(c, chain_id="9f8e7d6c5b4a39281706")
    [span] = passes(exporter)
    attrs = dict(span.attributes or {})
    assert attrs["session.id"] == "memory-extract:chain:9f8e7d6c"
    assert attrs["gen_ai.usage.input_tokens"] == 800
    assert attrs["gen_ai.usage.output_tokens"] == 40


def test_every_pass_has_its_own_span_even_without_a_model_call(
    traced: tuple[Client, InMemorySpanExporter], fake: FakeAnthropic
) -> None:
    c, exporter = traced
    fake.error(500)
    extract(c, session_id="one")
    extract(c, session_id="two", transcript="too short")
    extract(c, session_id="three")  # the fake's default reply: no facts
    spans = passes(exporter)
    summary = [
        (
            s.attributes["session.id"],
            s.attributes["memory.extract.outcome"],
            s.attributes["gen_ai.usage.input_tokens"],
        )
        for s in spans
        if s.attributes
    ]
    assert summary == [
        ("memory-extract:one", "model_error", 0),
        ("memory-extract:two", "skipped_too_short", 0),
        ("memory-extract:three", "no_facts", 1200),
    ]
    assert all(s.attributes and s.attributes["memory.extract.kept"] == 0 for s in spans)
    assert all(s.attributes and s.attributes["gen_ai.system"] == "anthropic" for s in spans)


def test_the_idle_workers_polls_make_no_spans(database_url: str) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    srv = ServerThread(database_url, tracer_provider=provider)
    with srv:
        running = srv._running
        assert running is not None
        with srv.client() as client:
            # A call's statements are traced (so the check below can fail) ...
            client.call(
                client.memory.ListMemories,
                pb.ListMemoriesRequest(owner=memory_pb2.MemoryOwner(agent_id="idle")),
            )
            assert any(s.kind.name == "CLIENT" for s in exporter.get_finished_spans())
            exporter.clear()
            # ... an idle worker's look at the queue is not.
            for _ in range(3):
                assert srv.run(running.workers._run_one()) is False
            assert exporter.get_finished_spans() == ()
    provider.shutdown()
