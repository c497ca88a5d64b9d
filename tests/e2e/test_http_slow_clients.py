"""HTTP under slow, greedy and vanished clients, over real sockets: headers and bodies
have deadlines, connections a cap, and a client that leaves is no error."""

from __future__ import annotations

import logging
import socket
import uuid
from collections.abc import Iterator

import httpx
import pytest

from agent_memory.config import Settings
from tests.support import ServerThread, wait_until

pytestmark = pytest.mark.e2e

CAP = 4


@pytest.fixture(scope="module")
def guarded(database_url: str) -> Iterator[ServerThread]:
    settings = Settings(
        http_listen="127.0.0.1:0",
        http_header_timeout_seconds=1.0,
        http_body_timeout_seconds=1.0,
        http_max_connections=CAP,
    )
    with ServerThread(database_url, settings=settings) as running:
        yield running


def connect(server: ServerThread) -> socket.socket:
    host, port = server.http_address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=15)
    return sock


def closed_by_server(sock: socket.socket) -> bytes:
    """What the server said before it closed the connection (blocks until it does, at
    most the socket's timeout)."""
    said = b""
    while chunk := sock.recv(65536):
        said += chunk
    return said


def key_for(server: ServerThread) -> str:
    return server.new_key(f"tenant-{uuid.uuid4().hex[:10]}", "user-1")


def test_a_client_trickling_its_headers_is_let_go(guarded: ServerThread) -> None:
    with connect(guarded) as sock:
        sock.sendall(b"GET /v1/agents/coder/memories HTTP/1.1\r\nhost: x\r\n")
        # Never the blank line that ends the headers: the server closes the connection.
        assert closed_by_server(sock) == b""


def test_a_client_trickling_its_body_is_answered_408(guarded: ServerThread) -> None:
    key = key_for(guarded)
    with connect(guarded) as sock:
        sock.sendall(
            b"POST /v1/agents/coder/memories HTTP/1.1\r\nhost: x\r\n"
            + f"authorization: Bearer {key}\r\n".encode()
            + b"content-type: application/json\r\ncontent-length: 100\r\n\r\n"
            + b'{"key": "k",'
        )
        said = closed_by_server(sock)
    status_line, _, rest = said.partition(b"\r\n")
    assert status_line == b"HTTP/1.1 408 Request Timeout"
    assert b"REQUEST_TIMEOUT" in rest
    listed = httpx.get(
        f"http://{guarded.http_address}/v1/agents/coder/memories",
        headers={"authorization": f"Bearer {key}"},
    )
    assert listed.json() == {"totalSize": 0}  # nothing half-written


def test_past_the_connection_cap_new_requests_are_503_until_one_closes(
    database_url: str,
) -> None:
    settings = Settings(
        http_listen="127.0.0.1:0", http_max_connections=CAP, http_header_timeout_seconds=30
    )
    with ServerThread(database_url, settings=settings) as server:
        url = f"http://{server.http_address}/healthz"
        held = [connect(server) for _ in range(CAP)]
        try:
            assert wait_until(lambda: httpx.get(url).status_code == 503, timeout=10)
        finally:
            for sock in held:
                sock.close()
        assert wait_until(lambda: httpx.get(url).status_code == 200, timeout=10)


def test_a_client_that_leaves_mid_body_is_no_error(
    guarded: ServerThread, caplog: pytest.LogCaptureFixture
) -> None:
    key = key_for(guarded)
    with caplog.at_level(logging.DEBUG, logger="agent_memory"):
        with connect(guarded) as sock:
            sock.sendall(
                b"POST /v1/agents/coder/memories HTTP/1.1\r\nhost: x\r\n"
                + f"authorization: Bearer {key}\r\n".encode()
                + b"content-type: application/json\r\ncontent-length: 100\r\n\r\n{"
            )
        assert wait_until(lambda: "disconnected" in caplog.text, timeout=10)
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert errors == []
    left = [r for r in caplog.records if "disconnected" in r.getMessage()]
    assert [r.levelno for r in left] == [logging.DEBUG]
    assert "Traceback" not in caplog.text
