"""A client generated from the OpenAPI document the server serves works against it.

openapi-python-client (run as its own process, offline: it reads the document from a
file) writes a Python package from the document; the test imports it and makes a
partial update of one memory with the etag it read, then reads the memory back.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from tests.support import ServerThread

pytestmark = pytest.mark.e2e

PACKAGE = "agent_memory_openapi_client"


@pytest.fixture(scope="module")
def generated(server: ServerThread, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The package openapi-python-client writes from the served document, importable."""
    root = tmp_path_factory.mktemp("openapi-client")
    document = root / "openapi.json"
    served = httpx.get(f"http://{server.http_address}/v1/openapi.json", timeout=30)
    assert served.status_code == 200
    document.write_bytes(served.content)
    config = root / "config.yaml"
    # No formatting hooks: the generated code is imported, not read.
    config.write_text(f"package_name_override: {PACKAGE}\npost_hooks: []\n")
    generator = Path(sys.executable).with_name("openapi-python-client")
    finished = subprocess.run(
        [
            str(generator),
            "generate",
            "--path",
            str(document),
            "--output-path",
            str(root / PACKAGE),
            "--meta",
            "none",
            "--config",
            str(config),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    # Every operation made it into the client: none was dropped for its media type.
    assert "will be omitted" not in finished.stdout + finished.stderr, finished.stdout
    sys.path.insert(0, str(root))
    try:
        yield root / PACKAGE
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def module(name: str) -> ModuleType:
    return importlib.import_module(f"{PACKAGE}.{name}")


def test_a_generated_client_updates_one_field_of_a_memory_with_its_etag(
    server: ServerThread, generated: Path
) -> None:
    key = server.new_key(f"tenant-{uuid.uuid4().hex[:10]}", "user-1")
    client = module("client").AuthenticatedClient(
        base_url=f"http://{server.http_address}", token=key, raise_on_unexpected_status=True
    )
    models = module("models")
    upsert = module("api.memory_service.memory_service_upsert_memory_for_agent")
    update = module("api.memory_service.memory_service_update_memory")
    get = module("api.memory_service.memory_service_get_memory")

    created = upsert.sync(
        "coder",
        client=client,
        body=models.MemoryServiceUpsertMemoryForAgentBody(key="tone", value="warm"),
    )
    assert isinstance(created, models.AgentmemoryV1UpsertMemoryResponse), created
    memory = created.memory
    assert memory.pinned is not True

    changed = update.sync_detailed(
        memory.id,
        client=client,
        body=models.MemoryServiceUpdateMemoryBody(pinned=True),
        update_mask="pinned",
        if_match=memory.etag,
    )
    assert changed.status_code == 200, changed.content
    assert changed.parsed.memory.pinned is True
    assert changed.parsed.memory.etag != memory.etag

    # The etag it read is stale now: the same update is 412 and changes nothing.
    stale = update.sync_detailed(
        memory.id,
        client=client,
        body=models.MemoryServiceUpdateMemoryBody(pinned=False),
        update_mask="pinned",
        if_match=memory.etag,
    )
    assert stale.status_code == 412
    assert isinstance(stale.parsed, models.GoogleRpcStatus)

    read = get.sync(memory.id, client=client)
    assert isinstance(read, models.AgentmemoryV1GetMemoryResponse), read
    assert read.memory.pinned is True
    assert read.memory.value == "warm"
    assert read.memory.etag == changed.parsed.memory.etag
