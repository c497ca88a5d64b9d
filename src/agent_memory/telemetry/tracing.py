"""OpenTelemetry, configured by the standard ``OTEL_*`` variables.

With none of them set nothing is created: no provider, no instrumentation,
no cost on the request path.

What a request stores never reaches a span or the log through an error: a
database error's message quotes the statement's values ("DETAIL: Key (key)=(...)
already exists", "Failing row contains (...)"), so such errors are described by
their type, SQLSTATE and the schema names involved only (:func:`describe_error`).
SQL statements are traced as their text, whose values are placeholders;
parameters are never captured.
"""

from __future__ import annotations

import logging
import os
import traceback
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import Attributes

from agent_memory import __version__

log = logging.getLogger(__name__)

SERVICE_NAME = "agent-memory"


def tracing_requested(environ: Mapping[str, str]) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return False
    exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return bool(
        exporter
        or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def service_resource(environ: Mapping[str, str]) -> Resource:
    """What spans and metrics say of the process that made them."""
    return Resource.create(
        {
            "service.name": environ.get("OTEL_SERVICE_NAME", SERVICE_NAME),
            "service.version": __version__,
        }
    )


def tracer_provider_from_env(environ: Mapping[str, str] | None = None) -> TracerProvider | None:
    """A provider exporting where ``OTEL_*`` says, or ``None`` when tracing is off."""
    env = os.environ if environ is None else environ
    if not tracing_requested(env):
        return None
    provider = TracerProvider(resource=service_resource(env))
    exporters = [e.strip() for e in env.get("OTEL_TRACES_EXPORTER", "otlp").split(",") if e.strip()]
    for name in exporters:
        if name == "console":
            provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
        elif name == "otlp":
            protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get(
                "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
            )
            if protocol == "grpc":
                from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
            else:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[assignment]
                    OTLPSpanExporter,
                )
            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        else:
            log.warning("unknown OTEL_TRACES_EXPORTER %r ignored", name)
    log.info("tracing on: exporters %s", ", ".join(exporters))
    return provider


# --- who a span's work is for ----------------------------------------------------------

# The code a call ends with, on its span (OpenTelemetry's gRPC attribute), and what the
# span of a call cancelled before it ended says.
GRPC_STATUS_CODE = "rpc.grpc.status_code"
CANCELLED = (
    "CANCELLED: the call was cancelled before it ended (its client gave up, or the server stopped)"
)


def set_caller(
    span: Span,
    tenant: str,
    user: str,
    *,
    workspace: str | None = None,
    chain: str | None = None,
) -> None:
    """Say on ``span`` whose work it is: ``tenant``, ``user``, and the ``workspace`` and
    ``chain`` (the run, or chain of runs) the request names, so that traces, and what
    their work cost, can be split by them."""
    if not span.is_recording():
        return
    attributes: dict[str, str] = {"tenant": tenant, "user": user}
    if workspace:
        attributes["workspace"] = workspace
    if chain:
        attributes["chain"] = chain
    span.set_attributes(attributes)


def set_cancelled(span: Span) -> None:
    """Say on ``span`` that its call was cancelled (its client gave up, or the server
    stopped before it ended): code CANCELLED (1), not the OK it started with."""
    if span.is_recording():
        span.set_attribute(GRPC_STATUS_CODE, 1)
        span.set_status(Status(StatusCode.ERROR, CANCELLED))


# --- errors as telemetry may keep them ------------------------------------------------


def describe_error(exc: BaseException) -> str:
    """``type: message`` of an exception; for a database error the SQLSTATE and the
    constraint, table and column it names instead of its message."""
    name = f"{type(exc).__module__}.{type(exc).__qualname__}"
    if isinstance(exc, psycopg.Error):
        diag = exc.diag
        named = [
            f"{what} {value}"
            for what, value in (
                ("constraint", diag.constraint_name),
                ("table", diag.table_name),
                ("column", diag.column_name),
            )
            if value
        ]
        return f"{name}: SQLSTATE {exc.sqlstate or '?'}" + "".join(f", {n}" for n in named)
    message = str(exc)
    return f"{name}: {message}" if message else name


def log_failure(logger: logging.Logger, exc: BaseException, message: str, *args: object) -> None:
    """Log ``message`` at ERROR with the traceback of ``exc``; when a database error is
    among the exceptions that led to it, as :func:`redacted_traceback` tells it."""
    if any(isinstance(link, psycopg.Error) for link in _chain(exc)):
        logger.error(message + "\n%s", *args, redacted_traceback(exc))
    else:
        logger.error(message, *args, exc_info=exc)


def redacted_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` and of the exceptions that led to it, as the log may keep
    it: every frame, each exception as :func:`describe_error` tells it."""
    parts: list[str] = []
    for i, link in enumerate(reversed(_chain(exc))):
        if i:
            parts.append("\nwhich led to:\n\n")
        parts.append("Traceback (most recent call last):\n")
        parts += traceback.format_tb(link.__traceback__)
        parts.append(describe_error(link) + "\n")
    return "".join(parts).rstrip("\n")


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc``, then what caused it, as far back as a traceback would show."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        if current.__cause__ is not None:
            current = current.__cause__
        else:
            current = None if current.__suppress_context__ else current.__context__
    return chain


class RedactingTracerProvider(trace.TracerProvider):
    """Tracers whose spans record a failure as :func:`describe_error` tells it, without
    the exception's message or stack: for the database instrumentation, whose spans
    would otherwise keep a database error's message, values and all."""

    def __init__(self, provider: trace.TracerProvider) -> None:
        self._provider = provider

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: Attributes = None,
    ) -> trace.Tracer:
        return _RedactingTracer(
            self._provider.get_tracer(
                instrumenting_module_name, instrumenting_library_version, schema_url, attributes
            )
        )


class _RedactingTracer(trace.Tracer):
    def __init__(self, tracer: trace.Tracer) -> None:
        self._tracer = tracer

    def start_span(
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> Span:
        # A span used as a context manager records what leaves it: not the message.
        return self._tracer.start_span(
            name, context, kind, attributes, links, start_time, False, False
        )

    @contextmanager
    def start_as_current_span(  # type: ignore[override]
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
        end_on_exit: bool = True,
    ) -> Iterator[Span]:
        with self._tracer.start_as_current_span(
            name,
            context,
            kind,
            attributes,
            links,
            start_time,
            record_exception=False,
            set_status_on_exception=False,
            end_on_exit=end_on_exit,
        ) as span:
            try:
                yield span
            except BaseException as exc:
                if span.is_recording():
                    _record_failure(span, exc, record_exception, set_status_on_exception)
                raise


def _record_failure(
    span: Span, exc: BaseException, record_exception: bool, set_status: bool
) -> None:
    described = describe_error(exc)
    if record_exception:
        attributes: dict[str, Any] = {
            "exception.type": f"{type(exc).__module__}.{type(exc).__qualname__}",
            "exception.message": described,
        }
        span.add_event("exception", attributes)
    if set_status:
        span.set_status(Status(StatusCode.ERROR, described))
