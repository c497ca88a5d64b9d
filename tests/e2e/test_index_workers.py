"""Index workers as an operator runs them: ``serve`` starts one as a process of its own
at the lowest CPU priority, starts it again when it dies, and takes it down with it;
``agent-memory index`` runs more, apart; GetRecallStatus and ``health --verbose`` say
how they keep up."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Iterator

import grpc
import psutil
import pytest

from agent_memory.store import migrate
from agentmemory.v1 import block_pb2, memory_pb2
from agentmemory.v1 import block_service_pb2 as blocks_pb
from agentmemory.v1 import block_service_pb2_grpc as blocks_grpc
from agentmemory.v1 import recall_service_pb2 as recall_pb
from agentmemory.v1 import recall_service_pb2_grpc as recall_grpc
from tests.support import ServeProcess, executable, has_pgvector, wait_until

# A test here waits on a SCHED_IDLE worker several times (IDLE below): the suite's
# per-test limit would cut it short on a machine whose cores are all busy.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1200)]

# The local mode's caller, whom `health --verbose` asks as too.
CALLER: tuple[tuple[str, str], ...] = ()
LINES = ["Ana leads platform until March", "The harbor opens at nine", "Refunds need sign-off"]


@pytest.fixture
def url(create_database: Callable[[], str]) -> str:
    url = create_database()
    migrate.upgrade(url)
    return url


@pytest.fixture
def vectors(url: str) -> str:
    if not has_pgvector(url):
        pytest.skip("this PostgreSQL server has no pgvector: nothing is indexed")
    return url


@pytest.fixture
def channel_to() -> Iterator[Callable[[str], grpc.Channel]]:
    opened: list[grpc.Channel] = []

    def make(address: str) -> grpc.Channel:
        channel = grpc.insecure_channel(address)
        opened.append(channel)
        return channel

    yield make
    for channel in opened:
        channel.close()


# An index worker runs at the lowest priority there is: on a machine whose cores are all
# busy it gets a sliver of one, to embed or to wind down, so what waits on it waits long.
IDLE = 300


def write(channel: grpc.Channel, agent: str, lines: list[str]) -> None:
    blocks_grpc.BlockServiceStub(channel).WriteBlock(  # type: ignore[no-untyped-call]
        blocks_pb.WriteBlockRequest(
            label=block_pb2.BLOCK_LABEL_ARCHIVAL,
            scope=memory_pb2.SCOPE_AGENT,
            agent_id=agent,
            content="\n".join(lines),
        ),
        metadata=CALLER,
        timeout=30,
    )


def indexed(channel: grpc.Channel, agent: str) -> int:
    block = (
        blocks_grpc.BlockServiceStub(channel)
        .GetBlock(  # type: ignore[no-untyped-call]
            blocks_pb.GetBlockRequest(
                label=block_pb2.BLOCK_LABEL_ARCHIVAL, scope=memory_pb2.SCOPE_AGENT, agent_id=agent
            ),
            metadata=CALLER,
            timeout=30,
        )
        .block
    )
    return int(block.indexed_line_count)


def indexing(channel: grpc.Channel) -> recall_pb.recall__pb2.IndexingStatus:
    reply = recall_grpc.RecallServiceStub(channel).GetRecallStatus(  # type: ignore[no-untyped-call]
        recall_pb.GetRecallStatusRequest(), metadata=CALLER, timeout=30
    )
    assert reply.status.HasField("indexing"), reply
    return reply.status.indexing


def children(served: ServeProcess) -> list[psutil.Process]:
    """The server's child processes but multiprocessing's own resource tracker."""
    found = []
    for child in psutil.Process(served.proc.pid).children():
        try:
            if child.is_running() and "resource_tracker" not in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:
            continue
    return found


def the_worker(served: ServeProcess, but: int | None = None) -> psutil.Process:
    """The server's one child (its index worker), other than ``but``."""
    found: list[psutil.Process] = []

    def one() -> bool:
        found[:] = [p for p in children(served) if p.pid != but and p.status() != "zombie"]
        return len(found) == 1

    assert wait_until(one), [p.pid for p in children(served)]
    return found[0]


def test_serve_runs_an_index_worker_at_the_lowest_priority_and_restarts_it(
    vectors: str, channel_to: Callable[[str], grpc.Channel]
) -> None:
    served = ServeProcess("--database-url", vectors, "--insecure-local")
    try:
        channel = channel_to(served.address)
        started = served._wait_for("index worker embedding with", timeout=IDLE)
        assert "at SCHED_IDLE" in started
        worker = the_worker(served)
        assert os.sched_getscheduler(worker.pid) == os.SCHED_IDLE
        write(channel, "first", LINES)
        assert wait_until(lambda: indexed(channel, "first") == len(LINES), timeout=IDLE)
        status = indexing(channel)
        assert (status.worker_count, status.waiting_count) == (1, 0)

        # Killed, it is started again, and goes on where it was.
        worker.kill()
        served._wait_for("the index worker exited with status -9")
        assert "at SCHED_IDLE" in served._wait_for("index worker embedding with", timeout=IDLE)
        again = the_worker(served, but=worker.pid)
        assert os.sched_getscheduler(again.pid) == os.SCHED_IDLE
        write(channel, "second", LINES)
        assert wait_until(lambda: indexed(channel, "second") == len(LINES), timeout=IDLE)
    finally:
        code = served.terminate(timeout=IDLE)
    assert code == 0, served.log()
    # The worker stopped when told: it was not killed for a stop it had made.
    assert "did not stop in time" not in served.log()
    assert not worker.is_running() or worker.status() == "zombie"
    assert wait_until(
        lambda: not again.is_running() or again.status() == "zombie", timeout=IDLE, step=0.2
    )


def all_stopped(pid: int) -> bool:
    """Whether every thread of ``pid`` is stopped by a signal (state T)."""
    states = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as stat:
                states.append(stat.read().rsplit(")", 1)[1].split()[0])
        except FileNotFoundError:
            continue  # a thread that ended meanwhile
    return all(state == "T" for state in states)


def sigterm_pending(pid: int) -> bool:
    """Whether a SIGTERM waits to be delivered to ``pid`` (a stopped process)."""
    with open(f"/proc/{pid}/status") as status:
        masks = dict(line.split(":", 1) for line in status if line.startswith(("SigPnd", "ShdPnd")))
    return any(int(mask, 16) & (1 << (signal.SIGTERM - 1)) for mask in masks.values())


def test_a_second_sigterm_while_the_index_worker_stops_still_exits_cleanly(
    vectors: str,
) -> None:
    # The server waits for its stopped worker long enough for the second stop to come.
    served = ServeProcess(
        "--database-url",
        vectors,
        "--insecure-local",
        env={"MEMORY_INDEX_STOP_SECONDS": str(IDLE)},
    )
    worker: psutil.Process | None = None
    try:
        served._wait_for("index worker embedding with", timeout=IDLE)
        worker = the_worker(served)
        # Held stopped, the worker cannot exit: the server waits on it after its event
        # loop (and its signal handlers) are gone, and a second stop arrives then.
        os.kill(worker.pid, signal.SIGSTOP)
        # Until every thread of it has stopped, one that still runs (its lowest priority
        # makes that a while on a busy machine) takes the SIGTERM in for Python to see
        # later, and it is no longer pending.
        assert wait_until(lambda: all_stopped(worker.pid), timeout=IDLE)
        served.proc.terminate()
        served._wait_for("waiting up to 300 s for the index worker to stop", timeout=IDLE)
        # Told as soon as the server was, not once the server's own stop had ended.
        assert sigterm_pending(worker.pid), served.log()
        served.proc.terminate()
        os.kill(worker.pid, signal.SIGCONT)
        code = served.wait(IDLE + 60)
    finally:
        if worker is not None and worker.is_running():
            os.kill(worker.pid, signal.SIGCONT)
        if served.proc.poll() is None:
            served.proc.kill()
    assert code == 0, served.log()
    assert "index worker stopping" in served.log()


def test_an_index_worker_stops_when_its_server_is_killed(vectors: str) -> None:
    served = ServeProcess("--database-url", vectors, "--insecure-local")
    try:
        served._wait_for("index worker embedding with", timeout=IDLE)
        worker = the_worker(served)
    finally:
        served.proc.kill()
        served.proc.wait(30)
    assert wait_until(
        lambda: not worker.is_running() or worker.status() == "zombie", timeout=IDLE, step=0.2
    )


def test_with_indexer_none_workers_started_apart_embed_and_say_so(
    vectors: str, channel_to: Callable[[str], grpc.Channel]
) -> None:
    served = ServeProcess("--database-url", vectors, "--insecure-local", "--indexer", "none")
    worker: subprocess.Popen[str] | None = None
    try:
        assert children(served) == []
        channel = channel_to(served.address)
        write(channel, "apart", LINES)
        status = indexing(channel)
        assert (status.worker_count, status.waiting_count) == (0, len(LINES))
        assert (status.waiting_line_count, status.waiting_memory_count) == (len(LINES), 0)
        verbose = subprocess.run(
            [executable("agent-memory"), "health", "--verbose", "--address", served.address],
            capture_output=True,
            text=True,
            timeout=IDLE,
            env={**os.environ, "MEMORY_API_KEY": ""},
        )
        assert "indexing: no index worker is running; 3 lines and 0 memories wait" in (
            verbose.stdout
        ), verbose.stdout

        worker = subprocess.Popen(
            [executable("agent-memory"), "index", "--database-url", vectors],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert wait_until(lambda: indexed(channel, "apart") == len(LINES), timeout=IDLE)
        assert wait_until(lambda: indexing(channel).worker_count == 1, timeout=IDLE)
        assert os.sched_getscheduler(worker.pid) == os.SCHED_IDLE
        worker.send_signal(signal.SIGTERM)
        out, _ = worker.communicate(timeout=IDLE)
        assert worker.returncode == 0, out
        assert "index worker stopping" in out
        assert indexing(channel).worker_count == 0  # it said goodbye
    finally:
        if worker is not None and worker.poll() is None:
            worker.kill()
        assert served.terminate(timeout=IDLE) == 0, served.log()


def test_an_index_worker_needs_a_model(url: str) -> None:
    done = subprocess.run(
        [executable("agent-memory"), "index", "--embedder", "none", "--database-url", url],
        capture_output=True,
        text=True,
        timeout=IDLE,  # an interpreter that starts, refuses and exits, on a busy machine
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "--embedder local" in lines[0]
    assert "Traceback" not in done.stderr


def test_an_index_worker_needs_pgvector(url: str) -> None:
    if has_pgvector(url):
        pytest.skip("this PostgreSQL server has pgvector")
    done = subprocess.run(
        [executable("agent-memory"), "index", "--database-url", url],
        capture_output=True,
        text=True,
        timeout=IDLE,
    )
    assert done.returncode == 2
    said = [line for line in done.stderr.splitlines() if line.startswith("agent-memory:")]
    assert len(said) == 1, done.stderr
    assert "has no pgvector" in said[0]
    assert "Traceback" not in done.stderr
