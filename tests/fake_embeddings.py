"""A fake OpenAI-compatible ``/v1/embeddings`` API on loopback, with deterministic vectors.

A word of the concept table lands on its concept's dimension, so texts that share a
concept but no word ("car", "automobile") embed alike; any other word lands on a
dimension of its own (by hash), so unrelated texts are (nearly) orthogonal.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIMENSIONS = 64
CONCEPTS = {
    "car": 0,
    "cars": 0,
    "automobile": 0,
    "automobiles": 0,
    "vehicle": 0,
    "vehicles": 0,
    "physician": 1,
    "doctor": 1,
    "dentist": 1,
    "feline": 2,
    "cat": 2,
    "kitten": 2,
}
_FIRST_FREE = max(CONCEPTS.values()) + 1


def vector(text: str) -> list[float]:
    v = [0.0] * DIMENSIONS
    for word in re.findall(r"[a-z]+", text.lower()):
        if word in CONCEPTS:
            v[CONCEPTS[word]] += 1.0
        else:
            digest = int(hashlib.sha256(word.encode()).hexdigest(), 16)
            v[_FIRST_FREE + digest % (DIMENSIONS - _FIRST_FREE)] += 0.2
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / norm for x in v] if any(v) else [1.0 / math.sqrt(DIMENSIONS)] * DIMENSIONS


@dataclass
class FakeEmbeddings:
    base_url: str = ""
    failing: bool = False  # answer 500 to every request
    requests: list[dict[str, Any]] = field(default_factory=list)
    peers: list[tuple[str, int]] = field(default_factory=list)  # the client's address, per request


@contextmanager
def running_fake() -> Iterator[FakeEmbeddings]:
    fake = FakeEmbeddings()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: a client may reuse its connection

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            body["_headers"] = {k.lower(): v for k, v in self.headers.items()}
            fake.requests.append(body)
            fake.peers.append(self.client_address)
            if self.path != "/v1/embeddings":
                self._send(404, {"error": {"message": "not found"}})
            elif fake.failing:
                self._send(500, {"error": {"message": "scripted failure"}})
            else:
                texts = body["input"]
                data = [
                    {"object": "embedding", "index": i, "embedding": vector(t)}
                    for i, t in enumerate(texts)
                ]
                # Out of order on purpose: clients must follow ``index``.
                self._send(200, {"object": "list", "data": data[::-1], "model": body["model"]})

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

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
