"""OpenTelemetry, configured by the standard ``OTEL_*`` variables.

With none of them set nothing is created: no provider, no instrumentation,
no cost on the request path.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

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


def tracer_provider_from_env(environ: Mapping[str, str] | None = None) -> TracerProvider | None:
    """A provider exporting where ``OTEL_*`` says, or ``None`` when tracing is off."""
    env = os.environ if environ is None else environ
    if not tracing_requested(env):
        return None
    resource = Resource.create(
        {"service.name": env.get("OTEL_SERVICE_NAME", SERVICE_NAME), "service.version": __version__}
    )
    provider = TracerProvider(resource=resource)
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
