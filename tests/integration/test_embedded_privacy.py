"""The embedded PostgreSQL is private: a socket folder only its account may enter, a data
folder nobody else may read, one postmaster per data folder even after a crash, and, as
root, the folders on the way opened to the server's account alone."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from agent_memory.store.embedded import (
    SOCKET_PATH_MAX,
    EmbeddedPostgres,
    acl_entries,
)
from tests.support import wait_until

pytestmark = pytest.mark.integration

ACL_USER_OBJ, ACL_USER, ACL_GROUP_OBJ, ACL_MASK, ACL_OTHER = 0x01, 0x02, 0x04, 0x10, 0x20

# A process of ours using the server until its stdin closes (then it lets go cleanly).
USER_PROCESS = """
import sys
from pathlib import Path
from agent_memory.store.embedded import EmbeddedPostgres

embedded = EmbeddedPostgres(Path(sys.argv[1]))
print(embedded.start(), flush=True)
sys.stdin.readline()
embedded.stop()
"""


class UserProcess:
    """Another process of ours sharing the data folder's server."""

    def __init__(self, data_dir: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", USER_PROCESS, str(data_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        assert self.url.startswith("postgresql://"), "the user process did not start"

    def let_go(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert self.proc.wait(60) == 0

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


def postmasters(pgdata: Path) -> list[int]:
    """The pids of the postmasters working in ``pgdata`` (seen from the process table,
    not from postmaster.pid)."""
    found = []
    for proc in psutil.process_iter(["name", "cwd", "ppid"]):
        if proc.info["name"] != "postgres" or proc.info["cwd"] != str(pgdata):
            continue
        try:
            parent = psutil.Process(proc.info["ppid"]).name()
        except psutil.Error:
            parent = ""
        if parent != "postgres":
            found.append(proc.pid)
    return found


def watchers(data_dir: Path) -> list[psutil.Process]:
    """The watcher processes of the server in ``data_dir``."""
    return [
        p
        for p in psutil.process_iter(["cmdline"])
        if p.info["cmdline"]
        and "agent_memory.store.embedded" in p.info["cmdline"]
        and str(data_dir) in p.info["cmdline"]
    ]


def socket_folder(pgdata: Path) -> Path:
    """The socket folder postmaster.pid names."""
    return Path((pgdata / "postmaster.pid").read_text().splitlines()[4])


def gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie waiting for a reaper has)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def answers(url: str) -> bool:
    with psycopg.connect(url, connect_timeout=10) as conn:
        return conn.execute("SELECT 1").fetchone() == (1,)


def open_to_others(path: Path) -> bool:
    """Whether anyone but the owner (and, for a folder, the server's account through an
    ACL entry of its own) may do anything with ``path``."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return False
    if stat.S_IMODE(st.st_mode) & 0o007:
        return True
    if stat.S_ISDIR(st.st_mode):
        return acl_entries(path)[(ACL_GROUP_OBJ, 0xFFFFFFFF)] != 0
    return bool(stat.S_IMODE(st.st_mode) & 0o070)


def everything_under(*roots: Path) -> Iterator[Path]:
    for root in roots:
        yield root
        for folder, dirs, files in os.walk(root):
            for name in dirs + files:
                yield Path(folder, name)


@pytest.fixture
def long_data_dir(tmp_path: Path) -> Path:
    data_dir = tmp_path
    while len(str(data_dir)) <= 110:
        data_dir /= "a-rather-long-folder-name"
    data_dir.parent.mkdir(parents=True)
    assert len(os.fsencode(data_dir / "pgdata" / ".s.PGSQL.5432")) > SOCKET_PATH_MAX
    return data_dir


def test_a_long_data_path_gets_a_private_socket_folder_and_nothing_is_open_to_others(
    long_data_dir: Path,
) -> None:
    embedded = EmbeddedPostgres(long_data_dir)
    url = embedded.start()
    try:
        socket_dir = embedded.socket_dir
        assert socket_dir is not None
        assert socket_dir != embedded.pgdata  # the data path is too long for a socket
        st = os.lstat(socket_dir)
        assert stat.S_ISDIR(st.st_mode)
        assert stat.S_IMODE(st.st_mode) == 0o700
        assert st.st_uid == embedded.pgdata.stat().st_uid  # the server's account
        socket = socket_dir / ".s.PGSQL.5432"
        assert stat.S_ISSOCK(os.lstat(socket).st_mode)
        assert stat.S_IMODE(os.lstat(socket).st_mode) == 0o700

        assert stat.S_IMODE(long_data_dir.stat().st_mode) & 0o007 == 0
        exposed = [p for p in everything_under(long_data_dir, socket_dir) if open_to_others(p)]
        assert exposed == []

        assert answers(url)
        with psycopg.connect(url) as conn:
            assert conn.execute("SHOW listen_addresses").fetchone() == ("",)
            assert conn.execute("SHOW unix_socket_permissions").fetchone() == ("0700",)
        assert str(socket_dir) in embedded.description()
    finally:
        embedded.stop()
    assert not socket_dir.exists()  # the folder made for the socket goes with the server
    assert postmasters(embedded.pgdata) == []


def test_a_short_data_path_keeps_the_socket_in_the_cluster_folder(tmp_path: Path) -> None:
    embedded = EmbeddedPostgres(tmp_path / "data")
    url = embedded.start()
    try:
        assert embedded.socket_dir == embedded.pgdata
        assert stat.S_IMODE(embedded.pgdata.stat().st_mode) == 0o700
        assert not open_to_others(tmp_path / "data")
        assert answers(url)
        description = embedded.description()
        assert description.startswith("embedded PostgreSQL 1")
        assert f"in {tmp_path / 'data'} (socket {embedded.pgdata}" in description
    finally:
        embedded.stop()


def test_an_existing_data_folder_open_to_others_is_made_private(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o755)
    data_dir.chmod(0o755)
    embedded = EmbeddedPostgres(data_dir)
    embedded.start()
    try:
        assert not open_to_others(data_dir)
    finally:
        embedded.stop()


def test_a_server_left_by_a_killed_process_is_stopped_and_started_afresh(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    crashed = UserProcess(data_dir)
    pgdata = data_dir / "pgdata"
    [orphan] = postmasters(pgdata)
    for watcher in watchers(data_dir):
        watcher.kill()  # nothing is left to stop the postmaster of a killed user
    crashed.kill()  # SIGKILL: it never lets go, its postmaster stays behind
    assert postmasters(pgdata) == [orphan]

    embedded = EmbeddedPostgres(data_dir)
    url = embedded.start()
    try:
        running = postmasters(pgdata)
        assert len(running) == 1
        assert running != [orphan]
        assert gone(orphan)
        assert answers(url)
    finally:
        embedded.stop()
    assert wait_until(lambda: postmasters(pgdata) == [], timeout=10)


def test_a_server_whose_users_are_all_killed_stops_and_leaves_no_socket_folder(
    long_data_dir: Path,
) -> None:
    pgdata = long_data_dir / "pgdata"
    killed = UserProcess(long_data_dir)
    [postmaster] = postmasters(pgdata)
    folder = socket_folder(pgdata)
    assert folder != pgdata
    assert len(watchers(long_data_dir)) == 1
    killed.kill()  # SIGKILL: it never lets go
    assert wait_until(lambda: gone(postmaster), timeout=60)
    assert wait_until(lambda: not folder.exists(), timeout=10)
    assert wait_until(lambda: watchers(long_data_dir) == [], timeout=10)


def test_a_killed_postmaster_leaves_no_socket_folder_and_the_next_start_is_afresh(
    long_data_dir: Path,
) -> None:
    pgdata = long_data_dir / "pgdata"
    user = UserProcess(long_data_dir)
    [postmaster] = postmasters(pgdata)
    folder = socket_folder(pgdata)
    psutil.Process(postmaster).kill()
    assert wait_until(lambda: not folder.exists(), timeout=10)
    user.kill()
    embedded = EmbeddedPostgres(long_data_dir)
    try:
        assert answers(embedded.start())
    finally:
        embedded.stop()
    assert postmasters(pgdata) == []


def test_processes_sharing_the_server_the_last_one_to_let_go_stops_it(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    pgdata = data_dir / "pgdata"
    first = EmbeddedPostgres(data_dir)
    url = first.start()
    other = UserProcess(data_dir)
    try:
        assert other.url == url
        [postmaster] = postmasters(pgdata)
        first.stop()
        assert postmasters(pgdata) == [postmaster]  # the other process still uses it
        assert answers(other.url)
    finally:
        first.stop()
        other.let_go()
    assert postmasters(pgdata) == []


def test_a_user_killed_meanwhile_does_not_keep_the_server_running(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    pgdata = data_dir / "pgdata"
    first = EmbeddedPostgres(data_dir)
    first.start()
    killed = UserProcess(data_dir)
    killed.kill()
    [postmaster] = postmasters(pgdata)
    try:
        joined = EmbeddedPostgres(data_dir)  # a live user remains: joins, restarts nothing
        assert answers(joined.start())
        assert postmasters(pgdata) == [postmaster]
        joined.stop()
        assert postmasters(pgdata) == [postmaster]
    finally:
        first.stop()
    assert postmasters(pgdata) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="what running as root changes")
def test_as_root_only_the_servers_account_is_let_through_the_folders_on_the_way(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    data_dir = private / "data"
    embedded = EmbeddedPostgres(data_dir)
    with caplog.at_level(logging.WARNING, logger="agent_memory.store.embedded"):
        url = embedded.start()
    try:
        assert answers(url)
        account = embedded.account
        assert account is not None
        assert account.uid != 0
        assert embedded.pgdata.stat().st_uid == account.uid
        for folder in (private, data_dir):
            entries = acl_entries(folder)
            assert entries[(ACL_USER_OBJ, 0xFFFFFFFF)] == 0o7
            assert entries[(ACL_GROUP_OBJ, 0xFFFFFFFF)] == 0  # the group gains nothing
            assert entries[(ACL_OTHER, 0xFFFFFFFF)] == 0  # nor does anyone else
            named = {ident: perms for (tag, ident), perms in entries.items() if tag == ACL_USER}
            assert named == {account.uid: 0o1}  # the server's account may search, only
        [warning] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert "refuses to run as root" in warning
        assert str(private) in warning
        assert str(data_dir) in warning
        assert f"run as user {account.name}" in embedded.description()
    finally:
        embedded.stop()
