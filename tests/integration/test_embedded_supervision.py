"""The embedded PostgreSQL after its postmaster dies: what the dead one left (lock files
naming processes that are gone or are other programs, backends still holding its shared
memory) never stops a start, a supervising process starts it again on the same socket,
and one that cannot be started again is given up in one line."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
from pathlib import Path

import psutil
import psycopg
import pytest

from agent_memory.store.embedded import (
    SOCKET_NAME,
    SOCKET_PATH_MAX,
    EmbeddedPostgres,
    RestartPolicy,
    running_postmaster,
)
from tests.support import wait_until

pytestmark = pytest.mark.integration

EMBEDDED_LOG = "agent_memory.store.embedded"


def answers(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            return conn.execute("SELECT 1").fetchone() == (1,)
    except psycopg.OperationalError:
        return False


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie waiting for its reaper has ended)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def started_again(pgdata: Path, before: int) -> int | None:
    """The pid of a postmaster of ``pgdata`` other than ``before``, once one runs."""
    pid = running_postmaster(pgdata)
    return pid if pid not in (None, before) else None


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def long_data_dir(tmp_path: Path) -> Path:
    """A data folder too deep for a socket in it: the socket gets a folder of its own."""
    folder = tmp_path
    while len(str(folder)) <= 110:
        folder /= "a-rather-long-folder-name"
    folder.parent.mkdir(parents=True)
    assert len(os.fsencode(folder / "pgdata" / SOCKET_NAME)) > SOCKET_PATH_MAX
    return folder


def rewrite_pid(path: Path, pid: int) -> None:
    """A lock file as PostgreSQL leaves it, naming ``pid`` instead of its own process."""
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join([f"{pid}\n", *lines[1:]]))


@pytest.mark.parametrize("holder", ["gone", "another program"])
def test_lock_files_naming_a_process_that_is_gone_or_another_program_do_not_block_a_start(
    data_dir: Path, holder: str
) -> None:
    pgdata = data_dir / "pgdata"
    first = EmbeddedPostgres(data_dir)
    first.start()
    assert first.socket_dir == pgdata  # a short path: the socket is in the cluster folder
    assert first.account is not None
    lock_files = {
        name: (pgdata / name).read_text() for name in ("postmaster.pid", f"{SOCKET_NAME}.lock")
    }
    first.stop()
    assert running_postmaster(pgdata) is None
    # What a postmaster killed outright leaves, its pid since gone, or given to another
    # program (of the server's account: PostgreSQL takes any other user's for gone).
    other = subprocess.Popen(
        first.account.command(["true"] if holder == "gone" else ["sleep", "300"])
    )
    try:
        if holder == "gone":
            other.wait(10)
        for name, text in lock_files.items():
            (pgdata / name).write_text(text)
            rewrite_pid(pgdata / name, other.pid)

        again = EmbeddedPostgres(data_dir)
        try:
            assert answers(again.start())
            postmaster = running_postmaster(pgdata)
            assert postmaster is not None
            assert postmaster != other.pid
            if holder != "gone":
                assert alive(other.pid), "another program was stopped"
        finally:
            again.stop()
    finally:
        other.kill()
        other.wait(10)
    assert running_postmaster(pgdata) is None


def busy_backend(url: str) -> tuple[int, threading.Thread]:
    """A session running a statement that never waits (it does not notice its postmaster
    die): its pid, and the thread running it, which ends when the session is killed."""
    conn = psycopg.connect(url, autocommit=True)
    pid = conn.info.backend_pid

    def spin() -> None:
        try:
            conn.execute("DO $$ BEGIN LOOP PERFORM 1; END LOOP; END $$")
        except psycopg.Error:
            pass  # killed
        finally:
            conn.close()

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()

    def spinning() -> bool:
        with psycopg.connect(url) as other:
            row = other.execute(
                "SELECT state = 'active' FROM pg_stat_activity WHERE pid = %s", (pid,)
            ).fetchone()
        return bool(row and row[0])

    assert wait_until(spinning, timeout=30)
    return pid, thread


def test_a_killed_postmaster_is_started_again_on_the_same_socket_despite_a_backend_it_left(
    long_data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pgdata = long_data_dir / "pgdata"
    embedded = EmbeddedPostgres(long_data_dir)
    url = embedded.start()
    gave_up: list[str] = []
    backend = 0
    try:
        socket_dir = embedded.socket_dir
        assert socket_dir is not None
        assert socket_dir != pgdata
        embedded.supervise(on_give_up=gave_up.append)
        backend, spinning = busy_backend(url)
        postmaster = running_postmaster(pgdata)
        assert postmaster is not None
        caplog.set_level(logging.INFO, logger=EMBEDDED_LOG)

        os.kill(postmaster, signal.SIGKILL)

        def said() -> list[str]:
            return [r.getMessage() for r in caplog.records if r.name == EMBEDDED_LOG]

        assert wait_until(lambda: any(" runs again (pid " in m for m in said()), timeout=60), (
            caplog.text
        )
        assert started_again(pgdata, postmaster) == embedded.postmaster_pid
        # The same URL: the socket folder was made again where it was.
        assert wait_until(lambda: answers(url), timeout=30), caplog.text
        assert embedded.socket_dir == socket_dir
        # The backend the dead postmaster left (it held its shared memory) was ended.
        assert not alive(backend)
        spinning.join(30)
        assert not spinning.is_alive()
        assert not gave_up
        assert not embedded.gave_up
        told = said()
        attempts = [m for m in told if " again (attempt " in m]
        assert len(attempts) == 1, told
        assert f"its postmaster (pid {postmaster}) is gone" in attempts[0]
        assert sum(" runs again (pid " in m for m in told) == 1, told
        # It was made to quit: busy, it never noticed its postmaster die.
        assert any(f"(pids {backend})" in m and "SIGQUIT" in m for m in told), told
    finally:
        embedded.stop()
        if backend and alive(backend):  # never left spinning on a core past a failure
            os.kill(backend, signal.SIGKILL)
    assert running_postmaster(pgdata) is None


def test_a_postmaster_that_cannot_start_again_is_given_up_in_one_line(
    data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pgdata = data_dir / "pgdata"
    embedded = EmbeddedPostgres(data_dir)
    embedded.start()
    config = pgdata / "postgresql.conf"
    kept = config.read_text()
    gave_up = threading.Event()
    said_when_giving_up: list[str] = []

    def give_up(line: str) -> None:
        said_when_giving_up.append(line)
        gave_up.set()

    try:
        # Read at the next start only: the running postmaster is unaffected.
        with config.open("a") as out:
            out.write("\nno_such_setting_at_all = 1\n")
        policy = RestartPolicy(attempts=2, first_pause=0.05, most_pause=0.05)
        embedded.supervise(on_give_up=give_up, policy=policy)
        postmaster = running_postmaster(pgdata)
        assert postmaster is not None
        caplog.set_level(logging.INFO, logger=EMBEDDED_LOG)

        os.kill(postmaster, signal.SIGKILL)

        assert gave_up.wait(120), caplog.text
        assert embedded.gave_up
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert [r.getMessage() for r in errors] == said_when_giving_up
        [line] = said_when_giving_up
        assert "\n" not in line
        assert "could not be started again (2 attempts" in line
        assert "configuration file" in line, line  # the server's own reason
        attempts = [r.getMessage() for r in caplog.records if " again (attempt " in r.getMessage()]
        assert len(attempts) == 2, attempts
        assert running_postmaster(pgdata) is None
    finally:
        config.write_text(kept)
        embedded.stop()
