"""The HTTP side of the service: the transcoded API, its OpenAPI document, a health
route and the memory panel, served by uvicorn on the gRPC server's event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import re
import socket
import ssl
from collections.abc import Awaitable, Callable, Sequence
from importlib import resources

import grpc
import h11
import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Match, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from agent_memory.config import Settings
from agent_memory.domain.errors import ServiceError
from agent_memory.http.transcoder import (
    API_HEADERS,
    Admit,
    Transcoder,
    allow_header,
    caller_metadata,
    plain_response,
    raw_path,
    status_response,
)
from agent_memory.net import bind_address
from agent_memory.status import status_message
from agent_memory.telemetry.metrics import PROMETHEUS_TEXT, Metrics
from agent_memory.telemetry.tracing import log_failure

log = logging.getLogger(__name__)

# The panel loads nothing from elsewhere, and the browser enforces it.
_PANEL_HEADERS = {
    "content-security-policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; "
        "form-action 'self'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def panel_file(name: str) -> bytes:
    """A file of the memory panel, from the installed package."""
    return resources.files("agent_memory.http").joinpath("panel", name).read_bytes()


METRICS_PATH = "/metrics"


class EveryMethod(Route):
    """A route that takes a request of any method (``TRACE``, ``get``, ``FOO`` too) and
    leaves its endpoint to answer it: the transcoder knows which methods each path of
    the API takes (405 naming exactly those) and which paths it has (404 for the others,
    whatever the method). A path one of ``beside`` matches, by any method, is that
    route's to answer (its own 405 included).
    """

    def __init__(
        self,
        path: str,
        endpoint: Callable[[Request], Awaitable[Response]],
        *,
        beside: Sequence[BaseRoute] = (),
    ) -> None:
        super().__init__(path, endpoint)
        self.methods = None
        self._beside = tuple(beside)
        # A path variable's ".*" stops at a line break (%0A decoded): the API's paths
        # are the transcoder's to judge, whatever they hold.
        self.path_regex = re.compile(self.path_regex.pattern, re.DOTALL)

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if any(route.matches(scope)[0] is not Match.NONE for route in self._beside):
            return Match.NONE, {}
        return super().matches(scope)


def metrics_route(metrics: Metrics, transcoder: Transcoder, admit: Admit | None) -> Route:
    """``GET /metrics``: every metric in the Prometheus text format; for anyone, or (with
    ``admit``) for the callers it admits to a method named ``/metrics``, each reading the
    series of its own tenant and those that name none. No RPC has that name, and a
    method the role table does not name needs the orchestrator role (``api/roles.py``):
    an orchestrator's key, as the API checks keys (in the local mode, any caller on
    loopback)."""

    async def serve(request: Request) -> Response:
        refused = transcoder.refused_origin(request)
        if refused is not None:
            return refused
        tenant = None
        if admit is not None:
            try:
                tenant = (await admit(METRICS_PATH, caller_metadata(request))).tenant_id
            except ServiceError as exc:
                return status_response(status_message(exc))
        return Response(
            await metrics.exposition(tenant), media_type=PROMETHEUS_TEXT, headers=API_HEADERS
        )

    return Route(METRICS_PATH, serve, methods=["GET"])


def http_app(
    transcoder: Transcoder,
    database_answers: Callable[[], Awaitable[bool]],
    *,
    metrics: Route | None = None,
) -> Starlette:
    """The ASGI application: ``/v1/...`` routes, ``/v1/openapi.json``, ``/healthz``,
    the panel at ``/`` with its files under ``/panel/``, and ``metrics`` (a
    :func:`metrics_route`) when given."""
    probing = asyncio.Lock()

    async def healthz(request: Request) -> Response:
        async with probing:
            serving = await database_answers()
        return JSONResponse(
            {"status": "SERVING" if serving else "NOT_SERVING"},
            status_code=200 if serving else 503,
        )

    async def openapi(request: Request) -> Response:
        from agent_memory.http.openapi import openapi_document

        return JSONResponse(openapi_document())

    async def panel(request: Request) -> Response:
        return Response(panel_file("index.html"), media_type="text/html", headers=_PANEL_HEADERS)

    async def api(request: Request) -> Response:
        try:
            return await transcoder(request)
        except ClientDisconnect:
            # The caller went away before its request was read: nothing to answer.
            log.debug("%s %s: the client disconnected", request.method, request.url.path)
            return Response(status_code=499)
        except SlowBody as exc:
            response = plain_response(
                grpc.StatusCode.DEADLINE_EXCEEDED, str(exc), "REQUEST_TIMEOUT", 408
            )
            response.headers["connection"] = "close"
            return response
        except Exception as exc:
            # As on the gRPC side: the traceback to the log once, a generic status to
            # the caller (an exception handler would leave uvicorn to log it again).
            log_failure(
                log, exc, "unexpected error serving %s %s", request.method, request.url.path
            )
            return plain_response(grpc.StatusCode.INTERNAL, "internal error", "INTERNAL", 500)

    static = StaticFiles(packages=[("agent_memory.http", "panel")])

    async def refused(request: Request, exc: Exception) -> Response:
        # Outside the API's own routes too, a refusal is a Status, as the API's are.
        assert isinstance(exc, HTTPException)
        if exc.status_code == 405:
            given = (exc.headers or {}).get("Allow", "")
            allowed = allow_header(verb.strip() for verb in given.split(",") if verb.strip())
            response = plain_response(
                grpc.StatusCode.UNIMPLEMENTED,
                f"{request.method} is not allowed on {raw_path(request)}; allowed: {allowed}",
                "METHOD_NOT_ALLOWED",
                405,
            )
            response.headers["allow"] = allowed
            return response
        if exc.status_code == 404:
            return plain_response(
                grpc.StatusCode.NOT_FOUND,
                f"no route for {request.method} {raw_path(request)}",
                "NO_ROUTE",
                404,
            )
        return plain_response(
            grpc.StatusCode.INVALID_ARGUMENT, exc.detail, "BAD_REQUEST", exc.status_code
        )

    async def panel_files(scope, receive, send):  # type: ignore[no-untyped-def]
        async def secured(message):  # type: ignore[no-untyped-def]
            if message["type"] == "http.response.start":
                message["headers"] = [
                    *message.get("headers", []),
                    *((k.encode(), v.encode()) for k, v in _PANEL_HEADERS.items()),
                ]
            await send(message)

        await static(scope, receive, secured)

    document = Route("/v1/openapi.json", openapi, methods=["GET"])
    return Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            document,
            EveryMethod("/v1/{rest:path}", api, beside=[document]),
            Route("/", panel, methods=["GET"]),
            Mount("/panel", app=panel_files),
            *([metrics] if metrics is not None else []),
        ],
        exception_handlers={HTTPException: refused},
    )


class SlowBody(TimeoutError):
    """A request's body did not arrive in time."""


class BodyDeadline:
    """ASGI middleware: a request's body must arrive within ``seconds`` of its headers.

    Only the body's reads are bounded: once it is whole, ``receive`` waits as long as
    it must (a streamed response listens on it for the client going away).
    """

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self._app = app
        self._seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._seconds
        whole = False

        async def bounded() -> Message:
            nonlocal whole
            if whole:
                return await receive()
            left = deadline - loop.time()
            try:
                if left <= 0:
                    raise TimeoutError
                message = await asyncio.wait_for(receive(), left)
            except TimeoutError:
                raise SlowBody(
                    f"the request body did not arrive within {self._seconds:g} s of its "
                    "headers; send it at once"
                ) from None
            whole = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        await self._app(scope, bounded, send)


def header_deadline_protocol(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, closing a connection whose request's headers have not
    arrived within ``seconds`` of the connection (or of the response before them): a
    client trickling its headers holds no connection longer."""

    class HeaderDeadline(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def _await_headers(self) -> None:
            self._stop_header_timer()
            self._header_timer = self.loop.call_later(seconds, self._headers_too_slow)

        def _stop_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if not self.transport.is_closing():
                log.debug("closed a connection whose request headers came too slowly")
                with contextlib.suppress(h11.LocalProtocolError):
                    self.conn.send(h11.ConnectionClosed())
                self.transport.close()

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._await_headers()

        def send_400_response(self, msg: str) -> None:
            # A request HTTP itself refuses (a bad Content-Length, no Host) is answered
            # with a Status, as every other refusal is, not uvicorn's plain text.
            refusal = plain_response(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"not a valid HTTP/1.1 request ({msg.rstrip('.')})",
                "BAD_REQUEST",
                400,
            )
            headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
            for event in (
                h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                h11.Data(data=bytes(refusal.body)),
                h11.EndOfMessage(),
            ):
                self.transport.write(self.conn.send(event) or b"")
            self.transport.close()

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            if self.cycle is not before:  # a request's headers came whole
                self._stop_header_timer()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and (
                self.cycle is None or self.cycle.response_complete
            ):
                self._await_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_header_timer()
            super().connection_lost(exc)

    return HeaderDeadline


def http_socket(address: str, *, reuse_port: bool = False) -> socket.socket:
    """A bound socket for ``address`` (HOST:PORT); the caller owns it.

    Raises:
        OSError: the address is taken or not this machine's.
    """
    family, kind, proto, bound = bind_address(address)
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(bound)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


class HttpServer:
    """uvicorn serving ``app`` on ``listen`` (HOST:PORT), in the running event loop,
    without taking over signals (the gRPC server's shutdown drives it)."""

    def __init__(self, app: Starlette, listen: str, settings: Settings) -> None:
        self._listen = listen
        self._sock: socket.socket | None = None
        tls: dict[str, object] = {}
        if settings.tls_cert is not None:
            tls = {"ssl_certfile": str(settings.tls_cert), "ssl_keyfile": str(settings.tls_key)}
            if settings.tls_client_ca is not None:
                tls |= {
                    "ssl_ca_certs": str(settings.tls_client_ca),
                    "ssl_cert_reqs": ssl.CERT_REQUIRED,
                }
        self._config = uvicorn.Config(
            BodyDeadline(app, settings.http_body_timeout_seconds),
            http=header_deadline_protocol(settings.http_header_timeout_seconds),
            limit_concurrency=settings.http_max_connections,
            lifespan="off",
            log_config=None,
            access_log=False,
            server_header=False,
            timeout_graceful_shutdown=math.ceil(settings.shutdown_grace_seconds),
            **tls,  # type: ignore[arg-type]
        )
        self._server = uvicorn.Server(self._config)
        self._loop: asyncio.Task[None] | None = None

    @property
    def address(self) -> str:
        """HOST:PORT as bound (port 0 resolved)."""
        assert self._sock is not None, "bind() first"
        host, port = self._sock.getsockname()[:2]
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def bind(self, *, reuse_port: bool = False) -> None:
        """Take the port now, so a busy one fails before anything serves.

        Raises:
            OSError: the address is taken or not this machine's.
            ValueError: the address does not parse.
        """
        self._sock = http_socket(self._listen, reuse_port=reuse_port)

    async def start(self) -> None:
        if self._sock is None:
            self.bind()
        assert self._sock is not None
        self._config.load()
        self._server.lifespan = self._config.lifespan_class(self._config)
        await self._server.startup(sockets=[self._sock])
        self._loop = asyncio.create_task(self._server.main_loop(), name="http-server")

    async def stop(self) -> None:
        """Stop accepting, let requests in flight finish (up to the grace period)."""
        self._server.should_exit = True
        if self._loop is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop
            await self._server.shutdown(sockets=[self._sock] if self._sock else None)
        if self._sock is not None:
            self._sock.close()
