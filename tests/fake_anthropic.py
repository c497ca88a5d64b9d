"""A fake Anthropic Messages API on loopback: real HTTP for the real SDK, scripted replies.

Each call to ``/v1/messages`` takes the next scripted reply (or, when none is
left, a reply with no facts) and records the request body so tests can see
what the model was shown.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

TOOL_NAME = "record_memories"
# The longest a held reply waits for its test to release it (a test that fails first).
RELEASE_WAIT_SECONDS = 120


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    delay: float = 0.0
    content_type: str = "application/json"
    # Set when the request has arrived; the reply waits for ``release`` (if any).
    arrived: threading.Event | None = None
    release: threading.Event | None = None


def fact(key: str, value: str, confidence: float = 0.9, scope: str = "agent") -> dict[str, Any]:
    return {"key": key, "value": value, "confidence": confidence, "scope": scope}


def message(
    content: list[dict[str, Any]],
    *,
    stop_reason: str = "tool_use",
    input_tokens: int = 1200,
    output_tokens: int = 150,
) -> bytes:
    return json.dumps(
        {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5-20251001",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        }
    ).encode()


@dataclass
class FakeAnthropic:
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    count_requests: list[dict[str, Any]] = field(default_factory=list)
    counted_tokens: int | None = None  # None: the count endpoint answers 500
    base_url: str = ""

    # -- scripting ---------------------------------------------------------------
    def facts(
        self, *facts: dict[str, Any], input_tokens: int = 1200, output_tokens: int = 150
    ) -> None:
        content = [
            {
                "type": "tool_use",
                "id": "toolu_fake",
                "name": TOOL_NAME,
                "input": {"facts": list(facts)},
            }
        ]
        self.replies.append(
            Reply(body=message(content, input_tokens=input_tokens, output_tokens=output_tokens))
        )

    def facts_when_released(
        self, *facts: dict[str, Any]
    ) -> tuple[threading.Event, threading.Event]:
        """The next reply gives ``facts`` once the test sets the second event; the first
        is set when the request has arrived."""
        self.facts(*facts)
        reply = self.replies[-1]
        reply.arrived, reply.release = threading.Event(), threading.Event()
        return reply.arrived, reply.release

    def error(self, status: int = 500, kind: str = "api_error") -> None:
        body = json.dumps({"type": "error", "error": {"type": kind, "message": "scripted"}})
        self.replies.append(Reply(status=status, body=body.encode()))

    def slow(self, seconds: float) -> None:
        self.replies.append(Reply(body=message([]), delay=seconds))

    def garbage(self) -> None:
        self.replies.append(Reply(body=b"<html>not json", content_type="text/html"))

    def text_only(self) -> None:
        self.replies.append(
            Reply(body=message([{"type": "text", "text": "no tool"}], stop_reason="end_turn"))
        )

    def tool_use(self, name: str, tool_input: dict[str, Any], tool_use_id: str) -> None:
        """The model asks for one tool call, as an agent runtime would receive it."""
        content = [{"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input}]
        self.replies.append(Reply(body=message(content)))

    def says(self, text: str) -> None:
        """The model ends its turn with ``text``."""
        reply = message([{"type": "text", "text": text}], stop_reason="end_turn")
        self.replies.append(Reply(body=reply))

    def malformed_tool_input(self, tool_input: Any) -> None:
        content = [{"type": "tool_use", "id": "toolu_fake", "name": TOOL_NAME, "input": tool_input}]
        self.replies.append(Reply(body=message(content)))

    def refusal(self) -> None:
        self.replies.append(Reply(body=message([], stop_reason="refusal")))

    # -- serving -----------------------------------------------------------------
    def _next(self) -> Reply:
        try:
            return self.replies.popleft()
        except IndexError:
            content = [
                {"type": "tool_use", "id": "toolu_fake", "name": TOOL_NAME, "input": {"facts": []}}
            ]
            return Reply(body=message(content, output_tokens=20))


@contextmanager
def running_fake() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            body["_headers"] = {k.lower(): v for k, v in self.headers.items()}
            if self.path.startswith("/v1/messages/count_tokens"):
                fake.count_requests.append(body)
                if fake.counted_tokens is None:
                    self._send(
                        Reply(
                            status=500,
                            body=b'{"type":"error","error":'
                            b'{"type":"api_error","message":"no count"}}',
                        )
                    )
                else:
                    self._send(
                        Reply(body=json.dumps({"input_tokens": fake.counted_tokens}).encode())
                    )
                return
            if not self.path.startswith("/v1/messages"):
                self._send(Reply(status=404, body=b"{}"))
                return
            fake.requests.append(body)
            self._send(fake._next())

        def _send(self, reply: Reply) -> None:
            if reply.arrived is not None:
                reply.arrived.set()
            if reply.release is not None:
                reply.release.wait(RELEASE_WAIT_SECONDS)
            if reply.delay:
                time.sleep(reply.delay)
            try:
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def model_on_loopback() -> Iterator[FakeAnthropic]:
    """A fake Messages API on loopback that the SDK finds through its environment
    (``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``) while the block runs."""
    with running_fake() as fake, pytest.MonkeyPatch.context() as mp:
        mp.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        mp.setenv("ANTHROPIC_API_KEY", "test-key")
        yield fake
