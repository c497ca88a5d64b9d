"""Metrics over real gRPC and HTTP on loopback: `/metrics` is off unless the operator
turns it on, asks for an orchestrator's key unless told to stay open, and counts every
call by method and code, the pool, indexing, extraction's spend by tenant and how each
Recall ranked; with an OTLP endpoint set, the same metrics are pushed there."""

from __future__ import annotations

import gzip
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc
import httpx
import psycopg
import pytest
from google.protobuf import field_mask_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2

from agent_memory.config import Settings, SettingsError
from agent_memory.domain.identity import Role
from agentmemory.v1 import memory_pb2, recall_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from agentmemory.v1 import recall_service_pb2 as recall_pb
from tests.fake_anthropic import FakeAnthropic, fact, model_on_loopback
from tests.metrics_scrape import calls, get_metrics, has, scrape, value
from tests.support import ServerThread, wait_until

pytestmark = pytest.mark.e2e

TRANSCRIPT = "user: how do we deploy?\nassistant: " + "We deploy with make release. " * 20


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    with model_on_loopback() as f:
        yield f


@pytest.fixture(scope="module")
def metered(fake: FakeAnthropic, module_database: str) -> Iterator[ServerThread]:
    """A server with /metrics on, behind API keys, a model to extract with, and an index
    worker beside it (in a database of the module's own)."""
    settings = Settings(
        http_listen="127.0.0.1:0",
        metrics_endpoint="on",
        extraction_sdk_retries=0,
        expiry_sweep_seconds=3600,
    )
    with ServerThread(module_database, settings=settings, index=True) as srv:
        yield srv


@pytest.fixture(scope="module")
def operator_key(metered: ServerThread) -> str:
    return metered.new_key(f"ops-{uuid.uuid4().hex[:8]}", "prometheus")


# --- on, off, and who may read ------------------------------------------------------


def test_metrics_are_off_unless_the_operator_turns_them_on(server: ServerThread) -> None:
    assert server.http_address
    assert get_metrics(server).status_code == 404


def test_metrics_need_an_orchestrators_key(metered: ServerThread, operator_key: str) -> None:
    anonymous = get_metrics(metered)
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"].startswith("Bearer")
    assert anonymous.json()["details"][0]["reason"] == "MISSING_CREDENTIALS"
    reader = metered.new_key("readers", "r", Role.READER)
    refused = get_metrics(metered, reader)
    assert refused.status_code == 403
    assert refused.json()["details"][0]["reason"] == "ROLE_FORBIDS"
    assert get_metrics(metered, "not-a-key").status_code == 401
    answer = get_metrics(metered, operator_key)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert "agent_memory_db_pool_size" in answer.text


def test_open_metrics_need_no_key(database_url: str) -> None:
    settings = Settings(http_listen="127.0.0.1:0", metrics_endpoint="open")
    with ServerThread(database_url, settings=settings) as srv:
        answer = get_metrics(srv)
        assert answer.status_code == 200
        assert "agent_memory_db_pool_max" in answer.text


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"metrics_endpoint": "yes"}, "MEMORY_METRICS_ENDPOINT='yes'"),
        ({"metrics_endpoint": "on"}, "--http-listen"),
    ],
)
def test_a_metrics_setting_that_cannot_work_is_refused_in_one_line(
    fields: dict[str, str], named: str
) -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.from_env({}, database_url="postgresql://127.0.0.1/x", **fields)
    assert named in str(refused.value)
    assert "\n" not in str(refused.value)


# --- what is counted ----------------------------------------------------------------


def test_calls_are_counted_by_method_and_code_on_both_transports(
    metered: ServerThread, operator_key: str
) -> None:
    before = scrape(metered, operator_key)
    with metered.client() as c:
        for _ in range(3):
            c.call(c.memory.GetCaller, pb.GetCallerRequest())
        missing = pb.GetMemoryRequest(id=str(uuid.uuid4()))
        for _ in range(2):
            with pytest.raises(grpc.RpcError) as error:
                c.call(c.memory.GetMemory, missing)
            assert error.value.code() is grpc.StatusCode.NOT_FOUND
        with pytest.raises(grpc.RpcError):
            c.memory.GetCaller(pb.GetCallerRequest(), timeout=30)  # no key
        http = httpx.Client(
            base_url=f"http://{metered.http_address}",
            headers={"authorization": c.metadata[0][1]},
            timeout=30,
        )
        with http:
            assert http.get("/v1/caller").status_code == 200
            assert http.get(f"/v1/memories/{uuid.uuid4()}").status_code == 404
    after = scrape(metered, operator_key)

    def delta(method: str, code: str, transport: str = "grpc") -> float:
        return calls(after, method, code, transport) - calls(before, method, code, transport)

    assert delta("GetCaller", "OK") == 3
    assert delta("GetMemory", "NOT_FOUND") == 2
    assert delta("GetCaller", "UNAUTHENTICATED") == 1
    assert delta("GetCaller", "OK", "http") == 1
    assert delta("GetMemory", "NOT_FOUND", "http") == 1
    # Errors are the calls whose code is not OK; every call is timed.
    errors = "agent_memory_rpc_errors_total"
    not_found = {"rpc_method": "GetMemory", "rpc_code": "NOT_FOUND", "rpc_transport": "grpc"}
    assert value(after, errors, **not_found) - value(before, errors, **not_found) == 2
    assert not has(after, errors, rpc_code="OK")
    timed = "agent_memory_rpc_duration_seconds_count"
    ok = {"rpc_method": "GetCaller", "rpc_code": "OK", "rpc_transport": "grpc"}
    assert value(after, timed, **ok) - value(before, timed, **ok) == 3
    assert value(after, "agent_memory_rpc_duration_seconds_sum", **ok) > 0
    assert has(after, "agent_memory_rpc_calls_total", rpc_service="agentmemory.v1.MemoryService")


def test_the_pool_is_measured(metered: ServerThread, operator_key: str) -> None:
    samples = scrape(metered, operator_key)
    primary = {"pool": "primary"}
    assert value(samples, "agent_memory_db_pool_max", **primary) == metered.settings.db_pool_size
    assert 1 <= value(samples, "agent_memory_db_pool_size", **primary) <= 10
    in_use = value(samples, "agent_memory_db_pool_in_use", **primary)
    assert 0 <= in_use <= value(samples, "agent_memory_db_pool_size", **primary)
    assert has(samples, "agent_memory_db_pool_waiting", **primary)


def test_a_call_past_its_deadline_is_counted_as_such(
    metered: ServerThread, operator_key: str, module_database: str
) -> None:
    """Not as CANCELLED: the client did not leave, its deadline did."""
    with metered.client() as c:
        request = pb.UpsertMemoryRequest(
            owner=memory_pb2.MemoryOwner(agent_id="late"), key="k", value="v"
        )
        row = c.call(c.memory.UpsertMemory, request).memory
        before = scrape(metered, operator_key)
        # The row's lock, held until the call has been counted, so the call can only end
        # by its deadline: 2 s, time enough for the server to reach it first.
        with psycopg.connect(module_database) as blocker:
            blocker.execute("SELECT 1 FROM memories WHERE id = %s FOR UPDATE", (row.id,))
            patch = pb.UpdateMemoryRequest(
                memory=memory_pb2.Memory(id=row.id, value="late"),
                update_mask=field_mask_pb2.FieldMask(paths=["value"]),
            )
            with pytest.raises(grpc.RpcError) as late:
                c.memory.UpdateMemory(patch, metadata=c.metadata, timeout=2)
            assert late.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED

            def counted() -> float:
                now = scrape(metered, operator_key)
                return calls(now, "UpdateMemory", "DEADLINE_EXCEEDED") - calls(
                    before, "UpdateMemory", "DEADLINE_EXCEEDED"
                )

            assert wait_until(lambda: counted() == 1, timeout=30)
        after = scrape(metered, operator_key)
        assert calls(after, "UpdateMemory", "CANCELLED") == calls(
            before, "UpdateMemory", "CANCELLED"
        )


def test_extraction_spend_is_counted_by_tenant(
    metered: ServerThread, operator_key: str, fake: FakeAnthropic
) -> None:
    with metered.client() as c:
        c.call(
            c.memory.UpdateAgentSettings,
            pb.UpdateAgentSettingsRequest(
                settings=memory_pb2.AgentSettings(agent_id="a", memory_enabled=True)
            ),
        )
        fake.facts(fact("deploy", "Deploy with make release"), input_tokens=1234, output_tokens=56)
        reply = c.call(
            c.memory.ExtractMemories,
            pb.ExtractMemoriesRequest(agent_id="a", session_id="run-1", transcript=TRANSCRIPT),
        )
        assert reply.outcome == memory_pb2.EXTRACTION_OUTCOME_COMPLETED
        tenant = c.tenant_id
        samples = scrape(metered, metered.new_key(tenant, "prometheus"))
        # Another tenant's key reads the series that name no tenant, and not this one's.
        elsewhere = scrape(metered, operator_key)
    assert not [name for name, labels in elsewhere if ("tenant", tenant) in labels]
    assert has(elsewhere, "agent_memory_db_pool_size")
    assert value(samples, "agent_memory_extraction_cost_usd_total", tenant=tenant) == pytest.approx(
        reply.usage.cost_usd
    )
    assert reply.usage.cost_usd == pytest.approx(1234 * 1e-6 + 56 * 5e-6)
    tokens = "agent_memory_extraction_tokens_total"
    assert value(samples, tokens, tenant=tenant, gen_ai_token_type="input") == 1234
    assert value(samples, tokens, tenant=tenant, gen_ai_token_type="output") == 56
    passes = "agent_memory_extraction_passes_total"
    assert value(samples, passes, tenant=tenant, outcome="completed") == 1
    assert value(samples, passes, tenant=tenant) == 1


def test_each_recall_counts_how_it_ranked(metered: ServerThread, operator_key: str) -> None:
    with metered.client() as c:
        status = c.call(c.recall.GetRecallStatus, recall_pb.GetRecallStatusRequest()).status
        before = scrape(metered, operator_key)
        for _ in range(2):
            list(c.call(c.recall.Recall, recall_pb.RecallRequest(query="deploy", agent_id="a")))
        after = scrape(metered, operator_key)
    mode = "hybrid" if status.mode == recall_pb2.RECALL_MODE_HYBRID else "lexical"
    name = "agent_memory_recall_calls_total"
    assert value(after, name, recall_mode=mode) - value(before, name, recall_mode=mode) == 2
    assert value(after, name) - value(before, name) == 2


def test_indexing_is_measured_when_recall_ranks_by_meaning(
    metered: ServerThread, operator_key: str
) -> None:
    with metered.client() as c:
        status = c.call(c.recall.GetRecallStatus, recall_pb.GetRecallStatusRequest()).status
    if not status.model:
        pytest.skip("recall is by words alone here: nothing is indexed")
    model = {"model": status.model}
    # The index worker beside the server says it is running; the gauges read the
    # database at most every few seconds.
    assert wait_until(
        lambda: value(scrape(metered, operator_key), "agent_memory_indexing_workers", **model) >= 1
    )
    samples = scrape(metered, operator_key)
    assert value(samples, "agent_memory_indexing_waiting", **model) >= 0
    assert has(samples, "agent_memory_indexing_rate_per_second", **model)


# --- pushed over OTLP -----------------------------------------------------------------


class Collector:
    """An OTLP/HTTP metrics receiver on loopback that keeps every export's metric names."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.exported = threading.Event()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                request = metrics_service_pb2.ExportMetricsServiceRequest.FromString(body)
                for resource in request.resource_metrics:
                    for scope in resource.scope_metrics:
                        collector.names.update(m.name for m in scope.metrics)
                if self.path == "/v1/metrics":
                    collector.exported.set()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Collector:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_metrics_are_pushed_to_the_otlp_endpoint_tracing_uses(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Collector() as collector:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url)
        monkeypatch.setenv("OTEL_METRIC_EXPORT_INTERVAL", "100")
        srv = ServerThread(database_url, settings=Settings(expiry_sweep_seconds=3600))
        with srv, srv.client() as c:
            assert not srv.http_address  # no /metrics: pushed only
            c.call(c.memory.GetCaller, pb.GetCallerRequest())
            assert wait_until(lambda: "agent_memory.rpc.calls" in collector.names)
        assert {"agent_memory.rpc.duration", "agent_memory.db.pool.in_use"} <= collector.names
