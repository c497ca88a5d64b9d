"""OpenTelemetry metrics: what calls, the pool, indexing, extraction and recall do.

One :class:`Metrics` per server holds every instrument, on a ``MeterProvider`` of its
own. Metrics are on when ``/metrics`` is (``MEMORY_METRICS_ENDPOINT``, read there in
the Prometheus text format) or when the ``OTEL_*`` variables name an OTLP endpoint
(pushed there, as spans are); otherwise every instrument is a no-op and nothing is
read or kept.

Instruments (Prometheus names in brackets):

- ``agent_memory.rpc.calls`` [``agent_memory_rpc_calls_total``], counter; and
  ``agent_memory.rpc.duration`` [``agent_memory_rpc_duration_seconds``], histogram:
  every call, by ``rpc.service``, ``rpc.method``, ``rpc.code`` (the gRPC status code's
  name, for HTTP calls too) and ``rpc.transport`` (``grpc`` or ``http``).
  ``agent_memory.rpc.errors`` [``agent_memory_rpc_errors_total``]: the calls among them
  whose code is not ``OK``.
- ``agent_memory.db.pool.*`` [``agent_memory_db_pool_*``], gauges by ``pool``
  (``primary``, ``standby``): ``in_use``, ``size`` (open), ``max`` and ``waiting``
  (callers waiting for a connection).
- ``agent_memory.indexing.waiting`` (lines and memories waiting for a vector, each
  kind counted up to a bound), ``agent_memory.indexing.rate``
  [``agent_memory_indexing_rate_per_second``] (what the index workers heard from lately
  embed a second) and ``agent_memory.indexing.workers``: gauges by ``model``, read from
  the database at most every :data:`INDEXING_READ_SECONDS`.
- ``agent_memory.extraction.passes`` (by ``tenant`` and ``outcome``),
  ``agent_memory.extraction.tokens`` (by ``tenant`` and ``gen_ai.token.type``) and
  ``agent_memory.extraction.cost_usd``: counters of what extraction spent.
- ``agent_memory.recall.calls``: Recall calls by ``recall.mode`` (``lexical``: by
  words; ``hybrid``: by words and meaning), as each one ranked.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import math
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Generic, TypeVar

from opentelemetry import trace
from opentelemetry.metrics import CallbackOptions, Meter, NoOpMeterProvider, Observation
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric

from agent_memory import __version__
from agent_memory.config import METRICS_OFF, Settings
from agent_memory.domain.indexing import IndexingStatus
from agent_memory.telemetry.tracing import service_resource

log = logging.getLogger(__name__)
T = TypeVar("T")

METER_NAME = "agent_memory"
# The content type of the text /metrics answers.
PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"
# The indexing gauges ask the database at most this often.
INDEXING_READ_SECONDS = 5.0
# Call durations, in seconds: a fast read is a millisecond or two; an extraction pass
# waits on a model for seconds.
DURATION_BUCKETS = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)


def otlp_metrics_requested(environ: Mapping[str, str]) -> bool:
    """Whether the ``OTEL_*`` variables ask for metrics to be pushed: an OTLP endpoint
    (the one tracing uses, or one for metrics), or ``OTEL_METRICS_EXPORTER``."""
    if environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return False
    exporter = environ.get("OTEL_METRICS_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return bool(
        exporter
        or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or environ.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
    )


def _pushing_readers(environ: Mapping[str, str]) -> list[MetricReader]:
    """A reader per exporter ``OTEL_METRICS_EXPORTER`` names (``otlp`` unless it says
    otherwise), each pushing every ``OTEL_METRIC_EXPORT_INTERVAL`` ms (60 s)."""
    readers: list[MetricReader] = []
    names = [e.strip() for e in environ.get("OTEL_METRICS_EXPORTER", "otlp").split(",")]
    for name in filter(None, names):
        if name == "console":
            readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter()))
        elif name == "otlp":
            protocol = environ.get("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL") or environ.get(
                "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
            )
            if protocol == "grpc":
                from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
                    OTLPMetricExporter,
                )
            else:
                from opentelemetry.exporter.otlp.proto.http.metric_exporter import (  # type: ignore[assignment]
                    OTLPMetricExporter,
                )
            readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
        elif name != "prometheus":  # /metrics is MEMORY_METRICS_ENDPOINT's
            log.warning("unknown OTEL_METRICS_EXPORTER %r ignored", name)
    return readers


PoolStats = Callable[[], Mapping[str, Mapping[str, int]]]
ReadIndexing = Callable[[], Awaitable[IndexingStatus]]


class Metrics:
    """The service's instruments, on ``provider``; no-ops without one.

    ``registry``: where the Prometheus reader of ``provider`` is registered, which
    :meth:`exposition` writes out (``None``: no ``/metrics``).
    """

    def __init__(
        self,
        provider: MeterProvider | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.provider = provider
        self.registry = registry
        meter: Meter = (provider or NoOpMeterProvider()).get_meter(METER_NAME, __version__)
        self._meter = meter
        self._indexing: _Cached[IndexingStatus] | None = None
        self._calls = meter.create_counter(
            "agent_memory.rpc.calls", unit="{call}", description="Calls, by method and code."
        )
        self._errors = meter.create_counter(
            "agent_memory.rpc.errors",
            unit="{call}",
            description="Calls that ended with a code other than OK, by method and code.",
        )
        self._duration = meter.create_histogram(
            "agent_memory.rpc.duration",
            unit="s",
            description="How long calls took, to their last response, by method and code.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self._passes = meter.create_counter(
            "agent_memory.extraction.passes",
            unit="{pass}",
            description="Extraction passes run, by tenant and outcome.",
        )
        self._tokens = meter.create_counter(
            "agent_memory.extraction.tokens",
            unit="{token}",
            description="Tokens extraction passes sent and received, by tenant.",
        )
        self._cost = meter.create_counter(
            "agent_memory.extraction.cost_usd",
            unit="{USD}",
            description="What extraction passes cost, in US dollars, by tenant.",
        )
        self._recalls = meter.create_counter(
            "agent_memory.recall.calls",
            unit="{call}",
            description="Recall calls by how they ranked: lexical (words) or hybrid (meaning).",
        )

    @property
    def enabled(self) -> bool:
        """Whether anything reads what is recorded."""
        return self.provider is not None

    # --- calls ----------------------------------------------------------------------

    def call_ended(self, method: str, code: str, seconds: float, transport: str) -> None:
        """One call of ``method`` (``/package.Service/Method``) ended with ``code`` (a
        gRPC status code's name) after ``seconds``."""
        service, _, name = method.lstrip("/").rpartition("/")
        attributes = {
            "rpc.service": service,
            "rpc.method": name,
            "rpc.code": code,
            "rpc.transport": transport,
        }
        self._calls.add(1, attributes)
        self._duration.record(seconds, attributes)
        if code != "OK":
            self._errors.add(1, attributes)

    # --- extraction and recall ------------------------------------------------------

    def extraction_pass(self, tenant: str, outcome: str) -> None:
        """One extraction pass of ``tenant`` ended with ``outcome``."""
        self._passes.add(1, {TENANT_LABEL: tenant, "outcome": outcome})

    def extraction_spent(
        self, tenant: str, *, input_tokens: int, output_tokens: int, cost_usd: float
    ) -> None:
        """A model call of an extraction pass of ``tenant`` spent this."""
        if input_tokens:
            self._tokens.add(input_tokens, {TENANT_LABEL: tenant, "gen_ai.token.type": "input"})
        if output_tokens:
            self._tokens.add(output_tokens, {TENANT_LABEL: tenant, "gen_ai.token.type": "output"})
        if cost_usd > 0 and math.isfinite(cost_usd):
            self._cost.add(cost_usd, {TENANT_LABEL: tenant})

    def recall_ranked(self, mode: str) -> None:
        """A Recall ranked by ``mode`` (``lexical`` or ``hybrid``); its span says so too."""
        self._recalls.add(1, {"recall.mode": mode})
        trace.get_current_span().set_attribute("recall.mode", mode)

    # --- what is read when collected ------------------------------------------------

    def watch_pools(self, stats: PoolStats) -> None:
        """Gauges of each connection pool ``stats`` describes (psycopg_pool's
        ``get_stats()`` of each, by name), read as they are collected."""

        def gauge(
            key: Callable[[Mapping[str, int]], int],
        ) -> Callable[[CallbackOptions], Iterable[Observation]]:
            def observe(options: CallbackOptions) -> Iterable[Observation]:
                return [Observation(key(s), {"pool": name}) for name, s in stats().items()]

            return observe

        described = {
            "in_use": (
                "Connections lent to calls now.",
                lambda s: s.get("pool_size", 0) - s.get("pool_available", 0),
            ),
            "size": ("Connections open now, lent or idle.", lambda s: s.get("pool_size", 0)),
            "max": ("The most connections the pool opens.", lambda s: s.get("pool_max", 0)),
            "waiting": (
                "Callers waiting for a connection now.",
                lambda s: s.get("requests_waiting", 0),
            ),
        }
        for name, (description, key) in described.items():
            self._meter.create_observable_gauge(
                f"agent_memory.db.pool.{name}",
                callbacks=[gauge(key)],
                unit="{connection}" if name != "waiting" else "{request}",
                description=description,
            )

    def watch_indexing(self, model: str, read: ReadIndexing) -> None:
        """Gauges of indexing for ``model`` across tenants, from ``read`` (run on the
        running event loop, at most every :data:`INDEXING_READ_SECONDS`, when
        collected)."""
        cached: _Cached[IndexingStatus] = _Cached(
            read, INDEXING_READ_SECONDS, asyncio.get_running_loop()
        )
        self._indexing = cached
        of_model = {"model": model}

        def observing(
            value: Callable[[IndexingStatus], float],
        ) -> Callable[[CallbackOptions], Iterable[Observation]]:
            def observe(options: CallbackOptions) -> Iterable[Observation]:
                status = cached.get()
                return [] if status is None else [Observation(value(status), of_model)]

            return observe

        self._meter.create_observable_gauge(
            "agent_memory.indexing.waiting",
            callbacks=[observing(lambda s: s.waiting)],
            unit="{item}",
            description="Lines and memories waiting for a vector of their text (each kind "
            "counted up to a bound).",
        )
        self._meter.create_observable_gauge(
            "agent_memory.indexing.rate",
            callbacks=[observing(lambda s: s.per_second)],
            unit="{item}/s",
            description="Lines and memories the index workers heard from lately embed a second.",
        )
        self._meter.create_observable_gauge(
            "agent_memory.indexing.workers",
            callbacks=[observing(lambda s: s.workers)],
            unit="{worker}",
            description="Index workers of the model heard from lately.",
        )

    # --- reading and stopping -------------------------------------------------------

    async def exposition(self, tenant: str | None = None) -> bytes:
        """Every metric in the Prometheus text format (what ``/metrics`` answers), the
        indexing gauges read first when their reading is older than allowed. With
        ``tenant``, a series that names a tenant is given only where it names that one:
        a tenant's key reads its own spend, never another's."""
        assert self.registry is not None, "no /metrics on this server"
        if self._indexing is not None:
            await self._indexing.refresh()
        if tenant is None:
            return generate_latest(self.registry)
        return generate_latest(_OneTenant(self.registry, tenant))

    def shutdown(self) -> None:
        """Push what is left (OTLP) and stop reading."""
        if self.provider is not None:
            self.provider.shutdown()


# The attribute, and Prometheus label, that names the tenant a series is about.
TENANT_LABEL = "tenant"


class _OneTenant:
    """A registry's metrics with the series of every tenant but one left out (the series
    that name no tenant stay)."""

    def __init__(self, registry: CollectorRegistry, tenant: str) -> None:
        self._registry = registry
        self._tenant = tenant

    def collect(self) -> Iterable[Metric]:
        for family in self._registry.collect():
            kept = copy.copy(family)
            kept.samples = [
                s
                for s in family.samples
                if s.labels.get(TENANT_LABEL, self._tenant) == self._tenant
            ]
            yield kept


class _Cached(Generic[T]):
    """A value read asynchronously at most every ``every`` seconds, for callbacks that
    cannot wait (a collection runs them on whichever thread collects)."""

    def __init__(
        self, read: Callable[[], Awaitable[T]], every: float, loop: asyncio.AbstractEventLoop
    ) -> None:
        self._read = read
        self._every = every
        self._loop = loop
        self._value: T | None = None
        self._read_at = -math.inf
        self._reading: asyncio.Future[None] | None = None

    def get(self) -> T | None:
        """The last value read; a read begins on the loop when it is stale."""
        if self._stale():
            # RuntimeError: the loop is closed, the server has stopped.
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._begin)
        return self._value

    async def refresh(self) -> None:
        """Read now, unless the value is fresh (or a read is under way: wait for it)."""
        if self._stale():
            self._begin()
        if self._reading is not None:
            await asyncio.shield(self._reading)

    def _stale(self) -> bool:
        return time.monotonic() - self._read_at >= self._every

    def _begin(self) -> None:
        if (self._reading is None or self._reading.done()) and self._stale():
            self._reading = asyncio.ensure_future(self._load())

    async def _load(self) -> None:
        try:
            self._value = await self._read()
        except Exception as exc:
            # The gauges go missing rather than show an old reading; the outage itself
            # is the database's to report.
            log.debug("indexing gauges left out: %s", exc)
            self._value = None
        finally:
            self._read_at = time.monotonic()


def metrics_for(settings: Settings, environ: Mapping[str, str] | None = None) -> Metrics:
    """The metrics of a server: read at ``/metrics`` when ``settings`` serve it, pushed
    where the ``OTEL_*`` variables say; no-ops when neither."""
    env = os.environ if environ is None else environ
    readers = _pushing_readers(env) if otlp_metrics_requested(env) else []
    registry: CollectorRegistry | None = None
    if settings.metrics_endpoint != METRICS_OFF:
        from opentelemetry.exporter.prometheus import PrometheusMetricReader

        registry = CollectorRegistry(auto_describe=True)
        readers.append(PrometheusMetricReader(registry=registry))
    if not readers:
        return Metrics()
    provider = MeterProvider(
        metric_readers=readers, resource=service_resource(env), shutdown_on_exit=False
    )
    return Metrics(provider, registry)
