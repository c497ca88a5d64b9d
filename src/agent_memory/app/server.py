"""Server wiring: services, interceptors, health, reflection, graceful shutdown."""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import grpc
from google.protobuf.descriptor import ServiceDescriptor
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.sdk.trace import TracerProvider

from agent_memory.api.block_servicer import BlockServicer
from agent_memory.api.convert import response_budget
from agent_memory.api.decision_servicer import DecisionServicer
from agent_memory.api.handlers import add_servicer
from agent_memory.api.interceptors import (
    BearerAuth,
    CallTelemetry,
    IdentifyCaller,
    LocalIdentity,
    ServiceInterceptor,
)
from agent_memory.api.memory_servicer import MemoryServicer
from agent_memory.api.recall_servicer import RecallServicer
from agent_memory.app.index_process import worker_name
from agent_memory.app.tls import server_credentials
from agent_memory.config import METRICS_KEYED, Settings
from agent_memory.domain.indexing import IndexingStatus
from agent_memory.embed import Embedder, embedder_from_settings, model_of
from agent_memory.embed.local import token_counts
from agent_memory.extract import budget
from agent_memory.extract.model import NOT_CONFIGURED, AnthropicModel, model_configured
from agent_memory.http.app import HttpServer, http_app, metrics_route
from agent_memory.http.transcoder import HandlerTable, Transcoder
from agent_memory.net import unbindable
from agent_memory.service.active_sessions import ActiveSessions
from agent_memory.service.agents import Agents, Workspaces
from agent_memory.service.blocks import Blocks, block_limits
from agent_memory.service.decisions import Decisions
from agent_memory.service.evidence import EvidenceReads
from agent_memory.service.expiry import ExpirySweeper
from agent_memory.service.extraction import Extraction
from agent_memory.service.extraction_worker import ExtractionWorkers
from agent_memory.service.forgetting import Forgetting
from agent_memory.service.indexing import IndexWorker
from agent_memory.service.keys import ApiKeys
from agent_memory.service.memories import Memories
from agent_memory.service.recall import Recall, recall_status
from agent_memory.store.database import Database
from agent_memory.tasks import cancel_and_wait, obey_cancel, where_tasks_wait
from agent_memory.telemetry.metrics import Metrics, metrics_for
from agent_memory.telemetry.tracing import log_failure, tracer_provider_from_env
from agentmemory.v1 import (
    block_service_pb2,
    decision_service_pb2,
    memory_service_pb2,
    recall_service_pb2,
)

log = logging.getLogger(__name__)

MEMORY_SERVICE = memory_service_pb2.DESCRIPTOR.services_by_name["MemoryService"]
BLOCK_SERVICE = block_service_pb2.DESCRIPTOR.services_by_name["BlockService"]
RECALL_SERVICE = recall_service_pb2.DESCRIPTOR.services_by_name["RecallService"]
DECISION_SERVICE = decision_service_pb2.DESCRIPTOR.services_by_name["DecisionService"]
SERVICE_NAMES = tuple(
    s.full_name for s in (MEMORY_SERVICE, BLOCK_SERVICE, RECALL_SERVICE, DECISION_SERVICE)
)


@dataclass
class RunningServer:
    """A started gRPC server and what it needs to stop cleanly."""

    server: grpc.aio.Server
    health: HealthServicer
    address: str
    workers: ExtractionWorkers
    extraction: Extraction
    embedder: Embedder | None
    watcher: asyncio.Task[None] | None = None
    http: HttpServer | None = None
    sweeper: ExpirySweeper | None = None
    indexer: IndexWorker | None = None
    metrics: Metrics | None = None

    @property
    def http_address(self) -> str | None:
        """HOST:PORT of the HTTP side, when it serves."""
        return self.http.address if self.http is not None else None

    async def stop(self, grace: float) -> None:
        """Refuse new calls at once; let in-flight calls finish for up to ``grace`` seconds.

        Queued extraction passes that were running resume on the next start.
        """
        if self.watcher is not None:
            await cancel_and_wait(self.watcher)
        await self.health.enter_graceful_shutdown()
        stopping = [self.server.stop(grace)]
        if self.http is not None:
            stopping.append(self.http.stop())
        # One side failing to stop must not keep the other, or the workers, running.
        for failed in await asyncio.gather(*stopping, return_exceptions=True):
            if isinstance(failed, Exception):
                log_failure(log, failed, "stopping a server failed")
        await self.workers.stop()
        # Passes whose callers left (or whose worker stopped) end, or are stopped, now.
        await self.extraction.drain(grace)
        if self.sweeper is not None:
            await self.sweeper.stop()
        if self.indexer is not None:
            await self.indexer.stop()
        if self.embedder is not None:
            await self.embedder.close()
        if self.metrics is not None:
            # Its last push (OTLP) waits on the network: not on the event loop.
            await asyncio.to_thread(self.metrics.shutdown)


def server_options(settings: Settings) -> list[tuple[str, int]]:
    """The gRPC server's channel options (without SO_REUSEPORT, which the caller decides)."""
    return [
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.max_send_message_length", settings.max_message_bytes),
    ]


async def start_server(
    settings: Settings,
    db: Database,
    *,
    tracer_provider: TracerProvider | None = None,
    reuse_port: bool = False,
    index_here: bool = False,
) -> RunningServer:
    """Build the server over ``db``, bind ``settings.listen`` and start serving.

    With ``reuse_port`` other processes may bind the same port (SO_REUSEPORT) and the
    kernel spreads connections over them. With ``index_here`` an index worker runs in
    this process too (for a server embedded in a program of its own, and the tests);
    ``serve`` runs it in a process of its own instead (app/index_process.py).
    """
    identify: IdentifyCaller = (
        LocalIdentity()
        if settings.insecure_local
        else BearerAuth(ApiKeys(db, cache_seconds=settings.auth_cache_seconds))
    )
    metrics = metrics_for(settings)
    # Outermost: every call of every service is measured, and a stream runs in its
    # call's own task (api/interceptors.py says why).
    interceptors: list[grpc.aio.ServerInterceptor] = [CallTelemetry(metrics)]
    if tracer_provider is not None:
        from opentelemetry.instrumentation.grpc import aio_server_interceptor

        interceptors.append(aio_server_interceptor(tracer_provider=tracer_provider))
    service_interceptor = ServiceInterceptor(identify, wrote=db.wrote)
    interceptors.append(service_interceptor)
    server = grpc.aio.server(
        interceptors=interceptors,
        options=[*server_options(settings), ("grpc.so_reuseport", 1 if reuse_port else 0)],
    )
    extraction = Extraction(
        db,
        AnthropicModel(
            timeout_seconds=settings.extraction_timeout_seconds,
            max_retries=settings.extraction_sdk_retries,
        ),
        settings,
        tracer_provider=tracer_provider,
        metrics=metrics,
    )
    # Listings fit what this server sends: the rest goes on with a next page token.
    response_bytes = response_budget(settings.max_message_bytes)
    embedder = embedder_from_settings(settings)
    recall = Recall(db, settings, embedder=embedder, metrics=metrics)
    if metrics.enabled:
        _watch(metrics, db, embedder)
    indexer = (
        IndexWorker(
            db,
            embedder_from_settings(settings, indexing=True) or embedder,
            settings,
            name=worker_name(),
        )
        if embedder is not None and index_here
        else None
    )
    servicers: list[tuple[ServiceDescriptor, object]] = [
        (
            MEMORY_SERVICE,
            MemoryServicer(
                Memories(db),
                Agents(db),
                Workspaces(db),
                extraction,
                ActiveSessions(db, warning_runs=settings.active_memory_warning_runs),
                Forgetting(db),
                EvidenceReads(db),
                response_bytes=response_bytes,
            ),
        ),
        (
            DECISION_SERVICE,
            DecisionServicer(Decisions(db), response_bytes=response_bytes),
        ),
        (
            BLOCK_SERVICE,
            BlockServicer(
                Blocks(
                    db,
                    block_limits(settings),
                    on_written=indexer.wake if indexer is not None else None,
                ),
                response_bytes=response_bytes,
            ),
        ),
        (
            RECALL_SERVICE,
            RecallServicer(recall, count_tokens=token_counts),
        ),
    ]
    # The same servicers answer gRPC and, through this table, HTTP.
    table = HandlerTable()
    for service, servicer in servicers:
        add_servicer(servicer, service, server)
        add_servicer(servicer, service, table)
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    reflection.enable_server_reflection(
        (
            *SERVICE_NAMES,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
        ),
        server,
    )
    host = settings.listen.rsplit(":", 1)[0]
    credentials = server_credentials(settings)
    try:
        if credentials is None:
            port = server.add_insecure_port(settings.listen)
        else:
            port = server.add_secure_port(settings.listen, credentials)
    except RuntimeError as exc:
        metrics.shutdown()
        raise unbindable(settings.listen, "in use, or not an address of this machine") from exc
    http: HttpServer | None = None
    try:
        if settings.http_listen is not None:
            http = await _http_server(
                settings, db, table, service_interceptor, tracer_provider, metrics
            )
            try:
                http.bind(reuse_port=reuse_port)
            except (OSError, ValueError) as exc:
                raise unbindable(settings.http_listen, exc, flag="--http-listen") from exc
        await server.start()
        if http is not None:
            await http.start()
    except BaseException:
        # A start that fails halfway leaves no port bound and nothing serving.
        await server.stop(0)
        if http is not None:
            await http.stop()
        metrics.shutdown()
        raise
    await _set_health(health, serving=await db.probe())
    workers = ExtractionWorkers(db, extraction, settings)
    extraction.on_queued = workers.wake
    workers.start()
    sweeper = ExpirySweeper(db, settings)
    sweeper.start()
    if indexer is not None:
        indexer.start()
    return RunningServer(
        server=server,
        health=health,
        address=f"{host}:{port}",
        workers=workers,
        extraction=extraction,
        sweeper=sweeper,
        embedder=embedder,
        indexer=indexer,
        watcher=asyncio.create_task(
            _watch_database(db, health, settings.health_check_seconds), name="health-watcher"
        ),
        http=http,
        metrics=metrics,
    )


async def _http_server(
    settings: Settings,
    db: Database,
    table: HandlerTable,
    interceptor: ServiceInterceptor,
    tracer_provider: TracerProvider | None,
    metrics: Metrics,
) -> HttpServer:
    """The HTTP side over the handlers gRPC calls, as ``interceptor`` wraps them."""
    assert settings.http_listen is not None
    transcoder = Transcoder(
        await table.intercepted(interceptor),
        admit=interceptor.admit,
        max_message_bytes=settings.max_message_bytes,
        loopback_hosts_only=settings.insecure_local,
        tracer_provider=tracer_provider,
        metrics=metrics,
    )
    route = None
    if metrics.registry is not None:
        keyed = settings.metrics_endpoint == METRICS_KEYED
        route = metrics_route(metrics, transcoder, interceptor.admit if keyed else None)
    app = http_app(transcoder, db.probe, metrics=route)
    return HttpServer(app, settings.http_listen, settings)


def _watch(metrics: Metrics, db: Database, embedder: Embedder | None) -> None:
    """The gauges read from the pools, and (when recall ranks by meaning) from the
    database's indexing across tenants; those reads are not traced."""
    metrics.watch_pools(db.pool_stats)
    if embedder is None:
        return
    model = embedder.model

    async def indexing() -> IndexingStatus:
        with suppress_instrumentation():
            return await db.indexing_overview(model)

    metrics.watch_indexing(model, indexing)


async def _set_health(health: HealthServicer, *, serving: bool) -> None:
    status = (
        health_pb2.HealthCheckResponse.SERVING
        if serving
        else health_pb2.HealthCheckResponse.NOT_SERVING
    )
    for name in ("", *SERVICE_NAMES):
        await health.set(name, status)


async def _watch_database(db: Database, health: HealthServicer, every: float) -> None:
    """Health follows the database: NOT_SERVING while it does not answer, SERVING when
    it does again. Every call would fail meanwhile, so a balancer should look elsewhere."""
    serving = not db.outage.down
    while True:
        obey_cancel()
        await asyncio.sleep(every)
        answered = await db.probe()
        if answered != serving:
            serving = answered
            await _set_health(health, serving=serving)


async def log_recall_mode(db: Database, settings: Settings) -> None:
    """Say once at start how recall ranks on this database, and with which model."""
    status = recall_status(
        settings, embedder_from_settings(settings), pgvector=await db.has_pgvector()
    )
    log.info("recall is %s", status.detail)


def mode(settings: Settings) -> str:
    auth = "unauthenticated local mode" if settings.insecure_local else "API keys required"
    if settings.tls_cert is None:
        return f"{auth}, plaintext"
    if settings.tls_client_ca is None:
        return f"{auth}, TLS"
    return f"{auth}, TLS with client certificates"


def database_for(
    settings: Settings, url: str, tracer_provider: TracerProvider | None = None
) -> Database:
    """The database a server process serves from, as ``settings`` set it up."""
    return Database(
        url,
        pool_size=settings.db_pool_size,
        statement_timeout_ms=settings.db_statement_timeout_ms,
        tracer_provider=tracer_provider,
        index_model=model_of(settings),
        read_url=settings.database_read_url,
        standby_max_lag_seconds=settings.standby_max_lag_seconds,
        read_your_writes_seconds=settings.read_your_writes_seconds,
        history=timedelta(days=settings.history_days),
    )


def run_serving(main: Coroutine[Any, Any, None]) -> None:
    """Run a serving process's ``main`` to its end on uvloop's event loop where uvloop is
    installed (Linux and macOS), on asyncio's own elsewhere: every call's turns of the
    loop, grpc.aio's and the database driver's, cost about a seventh less CPU on it."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
        return
    uvloop.run(main)


async def serve_on(
    settings: Settings,
    url: str,
    *,
    reuse_port: bool = False,
    serving: Callable[[str], None] | None = None,
    describe_recall: bool = True,
    stopping: Callable[[], None] | None = None,
) -> None:
    """Serve on ``url``'s database until SIGTERM or SIGINT, then shut down gracefully.

    ``serving`` is told the bound address once the server accepts calls; without it
    the serving line operators and scripts wait for is logged. ``describe_recall``:
    log how recall ranks on this database (one worker of several says it for all).
    ``stopping`` is told at once when a stop is asked for, before calls in flight are
    let finish: what stops beside the server (its index worker) starts to then.
    """
    # From the first moment: a stop requested while starting drains what was started.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    tracer_provider = tracer_provider_from_env()
    db = database_for(settings, url, tracer_provider)
    watch: asyncio.Task[None] | None = None
    try:
        if describe_recall:
            await log_recall_mode(db, settings)
            if not model_configured():
                log.warning(
                    "extraction is off: %s; ExtractMemories answers MODEL_ERROR saying so",
                    NOT_CONFIGURED,
                )
            model = settings.extraction_model
            if budget.price_for(model, budget.prices(settings.extraction_prices)) is None:
                log.warning(
                    "extraction is off: no price for model %r, so no budget can hold it; every "
                    "pass is SKIPPED_BUDGET until MEMORY_EXTRACTION_PRICES gives its price",
                    model,
                )
        running = await start_server(
            settings, db, tracer_provider=tracer_provider, reuse_port=reuse_port
        )
        # What start-up made lives as long as the process: out of the collector's sight,
        # it does not lengthen the collections that calls trigger.
        gc.collect()
        gc.freeze()
        if serving is not None:
            serving(running.address)
        else:
            # The serving line last: once scripts see it, HTTP answers too.
            if running.http_address is not None:
                log.info("agent-memory http on %s", running.http_address)
            log.info("agent-memory serving on %s (%s)", running.address, mode(settings))
        await stop.wait()
        # Shutdown is bounded by the grace period: a repeated signal changes nothing.
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, log.info, "already shutting down")
        if stopping is not None:
            stopping()
        log.info(
            "shutting down: finishing in-flight calls (up to %ss)",
            settings.shutdown_grace_seconds,
        )
        watch = asyncio.create_task(
            say_where_a_stop_waits(settings.shutdown_grace_seconds + STOP_SLACK_SECONDS),
            name="stop-watch",
        )
        await running.stop(settings.shutdown_grace_seconds)
    finally:
        # Also when start-up failed (a busy port): the pool's connections are closed,
        # not left for the event loop's teardown to wait on.
        await db.close()
        if tracer_provider is not None:
            tracer_provider.shutdown()
        if watch is not None:
            await cancel_and_wait(watch)


# How long a stop may take beyond the grace period of calls in flight (the rounds, the
# pools and the exporters let go) before the log says where it waits.
STOP_SLACK_SECONDS = 30.0


async def say_where_a_stop_waits(after: float) -> None:
    """A stop that has not ended ``after`` seconds on says in the log where it waits."""
    await asyncio.sleep(after)
    log.warning("still shutting down after %.0f s; waiting in:\n%s", after, where_tasks_wait())
