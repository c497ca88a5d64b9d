"""The service on its embedded PostgreSQL, whose postmaster is killed outright while
clients write: the service starts it again by itself, health comes back to SERVING,
calls succeed again, and no write it acknowledged (before, during or after) is lost.

Every wait is a bounded poll; nothing here asserts how long anything took.
"""

from __future__ import annotations

import os
import signal
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from agent_memory.store.embedded import DATABASE_NAME, SOCKET_NAME, SOCKET_PATH_MAX
from agent_memory.store.embedded import running_postmaster as postmaster_of
from tests.e2e.test_faults import Writers, stored_keys
from tests.support import ServeProcess, wait_until

SERVING = health_pb2.HealthCheckResponse.SERVING


def deep_folder(root: Path) -> Path:
    """A data folder too deep for a socket in it: the socket gets a folder of its own,
    which goes with the killed postmaster and must be made again where it was."""
    folder = root
    while len(str(folder)) <= 110:
        folder /= "a-rather-long-folder-name"
    folder.parent.mkdir(parents=True)
    assert len(os.fsencode(folder / "pgdata" / SOCKET_NAME)) > SOCKET_PATH_MAX
    return folder


def http_status(address: str) -> int:
    try:
        with urllib.request.urlopen(f"http://{address}/healthz", timeout=10) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_a_killed_embedded_postmaster_is_started_again_and_no_acknowledged_write_is_lost(
    tmp_path: Path,
) -> None:
    data_dir = deep_folder(tmp_path)
    pgdata = data_dir / "pgdata"
    tenant = "postmaster-killed"
    served = ServeProcess(
        "--data-dir",
        str(data_dir),
        "--insecure-local",
        "--http-listen",
        "127.0.0.1:0",
        "--indexer",
        "none",
        "--embedder",
        "none",
        env={"MEMORY_HEALTH_CHECK_SECONDS": "0.2"},
    )
    try:
        http = next(x for x in served.log().splitlines() if "agent-memory http on" in x)
        http_address = http.rsplit(" on ", 1)[1].strip()
        postmaster = postmaster_of(pgdata)
        assert postmaster is not None
        socket_dir = (pgdata / "postmaster.pid").read_text().splitlines()[4]
        assert socket_dir != str(pgdata)
        url = f"postgresql://postgres@/{DATABASE_NAME}?host={quote(socket_dir)}"
        channel = grpc.insecure_channel(served.address)
        health = health_pb2_grpc.HealthStub(channel)

        def serving() -> bool:
            try:
                reply = health.Check(health_pb2.HealthCheckRequest(), timeout=10)
            except grpc.RpcError:
                return False
            return reply.status == SERVING and http_status(http_address) == 200

        with Writers(channel, (("x-tenant-id", tenant),), threads=4) as writers:
            assert wait_until(lambda: writers.acked_count() >= 20), writers.failures

            os.kill(postmaster, signal.SIGKILL)

            def restarted() -> bool:
                return postmaster_of(pgdata) not in (None, postmaster)

            assert wait_until(restarted, timeout=90), served.log()
            # Back to serving: health says so, and writes are acknowledged again.
            assert wait_until(serving, timeout=60)
            acked_after_restart = writers.acked_count()
            assert wait_until(lambda: writers.acked_count() >= acked_after_restart + 20, 60), (
                "the writers never got going again",
                writers.failures,
            )
            writers.stop()
        channel.close()
        # Calls refused meanwhile said the database was unavailable, and nothing else.
        assert set(writers.failures) <= {("UNAVAILABLE", "DATABASE_UNAVAILABLE")}, writers.failures
        missing = set(writers.acked) - stored_keys(url, tenant)
        assert not missing, f"{len(missing)} acknowledged writes lost: {sorted(missing)[:5]}"

        code = served.terminate(timeout=60)
    finally:
        if served.proc.poll() is None:
            served.proc.kill()
    assert code == 0, served.log()
    log = served.log()
    assert log.count(" again (attempt 1 of ") == 1, log
    assert f"its postmaster (pid {postmaster}) is gone" in log
    assert log.count(" runs again (pid ") == 1, log
    assert "Traceback" not in log, log
    # Stopped with the service, its socket folder with it.
    assert wait_until(lambda: postmaster_of(pgdata) is None, timeout=30)
    assert not Path(socket_dir).exists()
