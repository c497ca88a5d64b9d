"""Spans an operator can split by whom the work was for: every call's span carries the
caller's tenant and user (and the workspace and run chain the request names), over
gRPC and HTTP, refused calls included; so do extraction's passes, queued ones too. A
Recall stream its client cancels ends its span as cancelled, with nothing in the log."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agent_memory.config import Settings
from agent_memory.domain.identity import Role
from agentmemory.v1 import block_pb2, memory_pb2
from agentmemory.v1 import block_service_pb2 as block_pb
from agentmemory.v1 import memory_service_pb2 as pb
from agentmemory.v1 import recall_service_pb2 as recall_pb
from tests.fake_anthropic import FakeAnthropic, fact, model_on_loopback
from tests.metrics_scrape import calls, scrape
from tests.support import Client, ServerThread, agentmemory_rpcs, wait_until

pytestmark = pytest.mark.e2e

TRANSCRIPT = "user: how do we deploy?\nassistant: " + "We deploy with make release. " * 20
RPCS = agentmemory_rpcs()


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    with model_on_loopback() as f:
        yield f


@pytest.fixture(scope="module")
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture(scope="module")
def traced(
    fake: FakeAnthropic, exporter: InMemorySpanExporter, database_url: str
) -> Iterator[ServerThread]:
    """A traced server, its metrics open, whose archival blocks may be large and whose
    queued extraction passes run at once."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = Settings(
        http_listen="127.0.0.1:0",
        metrics_endpoint="open",
        archival_max_chars=4_000_000,
        extraction_sdk_retries=0,
        extraction_settle_seconds=0,
        extraction_poll_seconds=0.1,
        expiry_sweep_seconds=3600,
    )
    with ServerThread(database_url, settings=settings, tracer_provider=provider) as srv:
        yield srv
    provider.shutdown()


def spans_named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def path_of(method: MethodDescriptor) -> str:
    return f"/{method.containing_service.full_name}/{method.name}"


def invoke(client: Client, method: MethodDescriptor) -> None:
    """Call ``method`` with an empty request; whatever it answers."""
    request = message_factory.GetMessageClass(method.input_type)()
    response = message_factory.GetMessageClass(method.output_type)
    kwargs: dict[str, Callable[..., object]] = {
        "request_serializer": lambda m: m.SerializeToString(),
        "response_deserializer": response.FromString,
    }
    try:
        if method.server_streaming:
            stream = client.channel.unary_stream(path_of(method), **kwargs)
            list(stream(request, metadata=client.metadata, timeout=30))
        else:
            unary = client.channel.unary_unary(path_of(method), **kwargs)
            unary(request, metadata=client.metadata, timeout=30)
    except grpc.RpcError:
        pass


def test_every_rpcs_span_names_its_caller(
    traced: ServerThread, exporter: InMemorySpanExporter
) -> None:
    # A reader's key: calls beyond its role are refused, and their spans name it too.
    with traced.client(role=Role.READER) as c:
        exporter.clear()
        for method in RPCS:
            invoke(c, method)
        names = [path_of(m) for m in RPCS]
        assert wait_until(lambda: all(spans_named(exporter, name) for name in names))
        for method in RPCS:
            [span] = spans_named(exporter, path_of(method))
            assert attributes(span)["tenant"] == c.tenant_id, method.name
            assert attributes(span)["user"] == c.user_id, method.name


def test_spans_name_the_workspace_and_chain_the_request_names(
    traced: ServerThread, exporter: InMemorySpanExporter, fake: FakeAnthropic
) -> None:
    with traced.client(user_id="ana") as c:
        c.call(
            c.memory.UpdateAgentSettings,
            pb.UpdateAgentSettingsRequest(
                settings=memory_pb2.AgentSettings(agent_id="a", memory_enabled=True)
            ),
        )
        exporter.clear()
        c.call(
            c.memory.UpsertMemory,
            pb.UpsertMemoryRequest(
                owner=memory_pb2.MemoryOwner(workspace_id="globex"), key="k", value="v"
            ),
        )
        fake.facts(fact("deploy", "Deploy with make release"), input_tokens=800, output_tokens=40)
        c.call(
            c.memory.ExtractMemories,
            pb.ExtractMemoriesRequest(
                agent_id="a", workspace_id="globex", chain_id="chain-42", transcript=TRANSCRIPT
            ),
        )
        c.call(
            c.memory.RecordRunSession,
            pb.RecordRunSessionRequest(agent_id="a", run_id="run-9", session_id_after="s-1"),
        )
        [upsert] = spans_named(exporter, "/agentmemory.v1.MemoryService/UpsertMemory")
        assert attributes(upsert)["tenant"] == c.tenant_id
        assert attributes(upsert)["user"] == "ana"
        assert attributes(upsert)["workspace"] == "globex"
        assert "chain" not in attributes(upsert)
        [extract] = spans_named(exporter, "/agentmemory.v1.MemoryService/ExtractMemories")
        assert attributes(extract)["workspace"] == "globex"
        assert attributes(extract)["chain"] == "chain-42"
        [run] = spans_named(exporter, "/agentmemory.v1.MemoryService/RecordRunSession")
        assert attributes(run)["chain"] == "run-9"
        # The pass's own span says whose it is, as a queued pass's must (no call's
        # span is around it).
        [extraction] = spans_named(exporter, "memory.extract")
        assert {k: attributes(extraction)[k] for k in ("tenant", "user", "workspace", "chain")} == {
            "tenant": c.tenant_id,
            "user": "ana",
            "workspace": "globex",
            "chain": "chain-42",
        }


def test_a_queued_passs_span_names_its_tenant(
    traced: ServerThread, exporter: InMemorySpanExporter, fake: FakeAnthropic
) -> None:
    with traced.client(user_id="bo") as c:
        c.call(
            c.memory.UpdateAgentSettings,
            pb.UpdateAgentSettingsRequest(
                settings=memory_pb2.AgentSettings(agent_id="a", memory_enabled=True)
            ),
        )
        exporter.clear()
        fake.facts(fact("deploy", "Deploy with make release"))
        queued = c.call(
            c.memory.ExtractMemories,
            pb.ExtractMemoriesRequest(
                agent_id="a", session_id="run-3", transcript=TRANSCRIPT, queued=True
            ),
        )
        assert queued.outcome == memory_pb2.EXTRACTION_OUTCOME_QUEUED
        assert wait_until(lambda: bool(spans_named(exporter, "memory.extract")))
        [extraction] = spans_named(exporter, "memory.extract")
        assert attributes(extraction)["tenant"] == c.tenant_id
        assert attributes(extraction)["user"] == "bo"
        assert attributes(extraction)["chain"] == "run-3"


def test_an_http_calls_span_names_its_caller(
    traced: ServerThread, exporter: InMemorySpanExporter
) -> None:
    with traced.client(user_id="cy") as c:
        exporter.clear()
        answer = httpx.get(
            f"http://{traced.http_address}/v1/workspaces/globex/memories",
            headers={"authorization": c.metadata[0][1]},
            timeout=30,
        )
        assert answer.status_code == 200
        [span] = spans_named(exporter, "/agentmemory.v1.MemoryService/ListMemories")
        assert attributes(span)["tenant"] == c.tenant_id
        assert attributes(span)["user"] == "cy"
        assert attributes(span)["workspace"] == "globex"


# --- a Recall its client cancels ------------------------------------------------------


def test_a_cancelled_recall_ends_its_span_as_cancelled_and_logs_nothing(
    traced: ServerThread, exporter: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    # Matches far larger than the stream's flow-control window, which a client that
    # reads one and stops leaves the server waiting to write the rest.
    lines = "\n".join(f"harbor {i} " + "x" * 20_000 for i in range(100))
    channel_options = [("grpc.http2.bdp_probe", 0)]
    with traced.client() as c:
        c.call(
            c.blocks.WriteBlock,
            block_pb.WriteBlockRequest(
                label=block_pb2.BLOCK_LABEL_ARCHIVAL,
                scope=memory_pb2.SCOPE_USER,
                content=lines,
            ),
            timeout=120,
        )
        before = scrape(traced, None)
        exporter.clear()
        caplog.clear()
        with (
            caplog.at_level(logging.WARNING),
            grpc.insecure_channel(traced.address, options=channel_options) as channel,
        ):
            recall = channel.unary_stream(
                "/agentmemory.v1.RecallService/Recall",
                request_serializer=recall_pb.RecallRequest.SerializeToString,
                response_deserializer=recall_pb.RecallResponse.FromString,
            )
            stream = recall(
                recall_pb.RecallRequest(query="harbor", agent_id="a", limit=100),
                metadata=c.metadata,
                timeout=60,
            )
            first = next(stream)
            assert first.content.startswith("harbor ")
            stream.cancel()
            name = "/agentmemory.v1.RecallService/Recall"
            assert wait_until(lambda: bool(spans_named(exporter, name)))
            # What a stream left open would leave to the collector is collected, and
            # the server's loop runs what that schedules.
            gc.collect()
            for _ in range(3):
                traced.run(asyncio.sleep(0.01))
        [span] = spans_named(exporter, name)
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description is not None
        assert span.status.description.startswith("CANCELLED")
        assert attributes(span)["rpc.grpc.status_code"] == grpc.StatusCode.CANCELLED.value[0]
        assert attributes(span)["tenant"] == c.tenant_id
        logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert logged == [], [r.getMessage() for r in logged]
        assert not any(r.exc_info for r in caplog.records)
        after = scrape(traced, None)
    assert calls(after, "Recall", "CANCELLED") - calls(before, "Recall", "CANCELLED") == 1
    assert calls(after, "Recall", "OK") == calls(before, "Recall", "OK")
