"""The Node.js example client (examples/node) against the live server.

The example is the contract's proof for non-Python callers: it loads the
.proto files directly with @grpc/proto-loader, so a field renamed or a
stream broken shows up here and not first in someone's orchestrator.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from tests.support import ServerThread

ARCHIVE_LINE = "The staging database lives in eu-west-1 and is rebuilt every Sunday night."
PERSONA = "You are a careful release engineer."


def node_example(project_root: Path) -> Path:
    """examples/node, with its locked dependencies installed."""
    example = project_root / "examples" / "node"
    assert shutil.which("node"), "node is not on PATH: install Node.js 20 to run the example client"
    # npm writes this file last, so its absence also catches a half-finished install.
    marker = example / "node_modules" / ".package-lock.json"
    # npm ci starts by deleting node_modules: pytest-xdist workers must not race it.
    with open(Path(tempfile.gettempdir()) / "agent-memory-node-example.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists():
            npm = shutil.which("npm")
            assert npm, "npm is not on PATH: install Node.js 20 (with npm) to run the example"
            installed = subprocess.run(
                [npm, "ci", "--prefix", str(example), "--no-audit", "--no-fund"],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert installed.returncode == 0, (
                f"npm ci failed:\n{installed.stdout}\n{installed.stderr}"
            )
    return example


def run_client(example: Path, address: str, key: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["node", str(example / "client.js")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "MEMORY_SERVER": address, "MEMORY_API_KEY": key},
    )


def test_node_client_writes_recalls_and_renders(server: ServerThread, project_root: Path) -> None:
    example = node_example(project_root)
    key = server.new_key(f"tenant-{uuid.uuid4().hex[:10]}", "node-user")

    first = run_client(example, server.address, key)
    assert first.returncode == 0, f"stdout:\n{first.stdout}\nstderr:\n{first.stderr}"
    out = first.stdout
    assert "created USER archival block: version 1, 3 lines" in out
    recalled = out.split("recall ", 1)[1].split("system prompt:", 1)[0]
    assert f"line 1  {ARCHIVE_LINE}" in recalled
    prompt = out.split("system prompt:", 1)[1].split("system reminders:", 1)
    assert PERSONA in prompt[0]
    assert ARCHIVE_LINE in prompt[1], "AUTO mode returns the archival match as a reminder"

    # The block exists now: the second run takes the compare-and-set path.
    second = run_client(example, server.address, key)
    assert second.returncode == 0, f"stdout:\n{second.stdout}\nstderr:\n{second.stderr}"
    assert "replaced USER archival block: version 2, 3 lines" in second.stdout
    assert f"line 1  {ARCHIVE_LINE}" in second.stdout


def test_node_client_reports_a_grpc_error_and_exits_1(
    server: ServerThread, project_root: Path
) -> None:
    refused = run_client(node_example(project_root), server.address, "not-a-key")
    assert refused.returncode == 1, f"stdout:\n{refused.stdout}\nstderr:\n{refused.stderr}"
    assert "gRPC error: UNAUTHENTICATED (16)" in refused.stderr
