"""``agent-memory serve --workers N``: N processes on one port, one database start,
SIGTERM draining all of them, and no worker outliving its supervisor."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import grpc
import httpx
import psutil
import psycopg
import pytest

from agent_memory.store import migrate
from agentmemory.v1 import memory_pb2, memory_service_pb2_grpc
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import ServeProcess, executable, wait_until

OWNER = memory_pb2.MemoryOwner(agent_id="spread")


def holders(served: ServeProcess, status: str, port: int | None = None) -> set[int]:
    """Processes under the server with a socket in ``status`` on its port: the listeners
    (``psutil.CONN_LISTEN``), or those serving a connection (``CONN_ESTABLISHED``)."""
    port = port or int(served.address.rsplit(":", 1)[1])
    found = set()
    for child in psutil.Process(served.proc.pid).children(recursive=True):
        try:
            sockets = child.net_connections(kind="tcp")
        except psutil.Error:
            continue
        if any(s.status == status and s.laddr.port == port for s in sockets):
            found.add(child.pid)
    return found


def listeners(served: ServeProcess) -> set[int]:
    return holders(served, psutil.CONN_LISTEN)


def gone(pids: set[int]) -> bool:
    """Whether every process in ``pids`` exits (or is left a zombie) in good time."""

    def exited() -> bool:
        for pid in pids:
            try:
                if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    return False
            except psutil.NoSuchProcess:
                pass
        return True

    return wait_until(exited, step=0.2)


def using(data_dir: Path) -> set[int]:
    """Processes whose command line names ``data_dir`` (the embedded PostgreSQL's)."""
    found = set()
    for proc in psutil.process_iter(["cmdline"]):
        if any(str(data_dir) in part for part in proc.info["cmdline"] or ()):
            found.add(proc.pid)
    return found


@pytest.fixture
def workers_database(create_database: Callable[[], str]) -> str:
    url = create_database()
    migrate.upgrade(url)
    return url


def test_two_workers_listen_on_one_port_and_both_take_calls(workers_database: str) -> None:
    served = ServeProcess(
        "--workers",
        "2",
        "--database-url",
        workers_database,
        "--insecure-local",
        "--http-listen",
        "127.0.0.1:0",
    )
    channels: list[grpc.Channel] = []
    try:
        # Each worker listens on the gRPC port and on the HTTP port.
        assert len(listeners(served)) == 2
        http_line = next(x for x in served.log().splitlines() if "agent-memory http on" in x)
        http_address = http_line.rsplit(" on ", 1)[1].split()[0]
        http_port = int(http_address.rsplit(":", 1)[1])
        assert holders(served, psutil.CONN_LISTEN, http_port) == listeners(served)
        assert httpx.get(f"http://{http_address}/healthz", timeout=10).status_code == 200
        # Each channel is its own connection (no shared subchannel); the kernel spreads
        # the connections over the listeners.
        for i in range(32):
            channel = grpc.insecure_channel(
                served.address, options=[("grpc.use_local_subchannel_pool", 1)]
            )
            channels.append(channel)
            stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
            stub.UpsertMemory(
                pb.UpsertMemoryRequest(owner=OWNER, key=f"k{i}", value="v"), timeout=20
            )
        assert holders(served, psutil.CONN_ESTABLISHED) == listeners(served)
    finally:
        for channel in channels:
            channel.close()
        code = served.terminate()
    assert code == 0, served.log()
    lines = served.log().splitlines()
    assert sum("agent-memory serving on" in line for line in lines) == 1
    assert "2 workers" in next(line for line in lines if "agent-memory serving on" in line)


def test_sigterm_drains_every_worker_and_loses_no_acknowledged_write(
    workers_database: str,
) -> None:
    served = ServeProcess("--workers", "2", "--database-url", workers_database, "--insecure-local")
    workers = set(listeners(served))
    acked: list[str] = []
    failures: list[grpc.StatusCode] = []
    lock = threading.Lock()
    enough = threading.Event()

    def write(n: int) -> None:
        own_connection = [("grpc.use_local_subchannel_pool", 1)]
        with grpc.insecure_channel(served.address, options=own_connection) as channel:
            stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
            for i in itertools.count():
                key = f"w{n}-{i}"
                try:
                    stub.UpsertMemory(
                        pb.UpsertMemoryRequest(owner=OWNER, key=key, value="v"), timeout=20
                    )
                except grpc.RpcError as error:
                    with lock:
                        failures.append(error.code())  # type: ignore[attr-defined]
                    enough.set()  # stop waiting: the check below reports it
                    return
                with lock:
                    acked.append(key)
                    if len(acked) >= 60:
                        enough.set()

    writers = [threading.Thread(target=write, args=(n,)) for n in range(6)]
    for writer in writers:
        writer.start()
    try:
        assert enough.wait(60), "the writers made no progress"
        with lock:
            assert len(acked) >= 60, f"the writers stopped early: {failures}"
        code = served.terminate()
    finally:
        for writer in writers:
            writer.join(30)
    assert code == 0, served.log()
    assert not any(
        psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        for pid in workers
    )
    # Calls refused by a closing worker are UNAVAILABLE, or CANCELLED when the connection
    # closed under a call that had not started; never an error of the service's own.
    assert set(failures) <= {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED}, failures
    with psycopg.connect(workers_database) as conn:
        stored = {r[0] for r in conn.execute("SELECT key FROM memories").fetchall()}
    assert set(acked) <= stored
    assert "agent-memory stopped" in served.log()


def test_the_embedded_database_starts_once_for_every_worker(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    served = ServeProcess("--workers", "2", "--data-dir", str(data_dir), "--insecure-local")
    try:
        assert len(listeners(served)) == 2
        with grpc.insecure_channel(served.address) as channel:
            stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
            assert stub.UpsertMemory(
                pb.UpsertMemoryRequest(owner=OWNER, key="k", value="v"), timeout=20
            ).created
    finally:
        code = served.terminate()
    assert code == 0, served.log()
    assert served.log().count("starting embedded PostgreSQL") == 1
    # The last one to let go stopped it.
    assert not (data_dir / "pgdata" / "postmaster.pid").exists()


def test_workers_stop_when_the_supervisor_is_killed(workers_database: str) -> None:
    served = ServeProcess("--workers", "2", "--database-url", workers_database, "--insecure-local")
    workers = set(listeners(served))
    assert len(workers) == 2
    try:
        # SIGKILL: the supervisor cannot pass anything on; the workers notice by themselves.
        os.kill(served.proc.pid, signal.SIGKILL)
        served.proc.wait(30)
        assert gone(workers), "a worker outlived its supervisor"
        # The port is free again.
        port = served.address.rsplit(":", 1)[1]
        assert not any(
            c.status == psutil.CONN_LISTEN and c.laddr.port == int(port)
            for c in psutil.net_connections(kind="tcp")
        )
    finally:
        for pid in workers:
            if psutil.pid_exists(pid):
                os.kill(pid, signal.SIGKILL)


def test_sigterm_during_start_up_stops_cleanly(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    served = ServeProcess(
        "--workers",
        "2",
        "--data-dir",
        str(data_dir),
        "--insecure-local",
        until="starting embedded PostgreSQL",
    )
    code = served.terminate()
    assert code == 0, served.log()
    assert "serving on" not in served.log()
    assert "agent-memory stopped" in served.log()
    # The database it was starting is stopped, not left running.
    assert gone(using(data_dir)), "the embedded PostgreSQL outlived the service"
    assert not (data_dir / "pgdata" / "postmaster.pid").exists()


def test_ctrl_c_while_the_workers_start_stops_cleanly(workers_database: str) -> None:
    # A terminal's Ctrl-C is SIGINT to the whole process group: the supervisor and the
    # workers it has just spawned, which are still importing.
    served = ServeProcess(
        "--workers",
        "2",
        "--database-url",
        workers_database,
        "--insecure-local",
        until="started 2 workers",
        own_group=True,
    )
    workers = {c.pid for c in psutil.Process(served.proc.pid).children(recursive=True)}
    assert workers
    os.killpg(served.proc.pid, signal.SIGINT)
    code = served.terminate()
    assert code == 0, served.log()
    assert "Traceback" not in served.log(), served.log()
    assert "KeyboardInterrupt" not in served.log()
    assert gone(workers), "a worker outlived the stop"


def test_a_port_another_server_listens_on_is_refused(workers_database: str) -> None:
    first = ServeProcess("--workers", "2", "--database-url", workers_database, "--insecure-local")
    try:
        for workers in ("2", "1"):
            second = subprocess.run(
                [executable("agent-memory"), "serve", "--listen", first.address],
                capture_output=True,
                text=True,
                timeout=120,
                env={
                    **os.environ,
                    "MEMORY_WORKERS": workers,
                    "MEMORY_DATABASE_URL": workers_database,
                    "MEMORY_INSECURE_LOCAL": "1",
                },
            )
            # Sharing the port would silently split the calls between two services.
            assert second.returncode == 2, second.stderr
            assert "--listen" in second.stderr
            assert "Traceback" not in second.stderr
        assert len(listeners(first)) == 2
    finally:
        assert first.terminate() == 0, first.log()
