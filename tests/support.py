"""Test helpers: a server on its own event loop thread, and an authenticated client."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import grpc
from google.protobuf.descriptor import MethodDescriptor
from opentelemetry.sdk.trace import TracerProvider
from sqlalchemy.engine import make_url

from agent_memory.app.server import RunningServer, database_for, start_server
from agent_memory.config import Settings
from agent_memory.domain.identity import Role
from agent_memory.service.keys import ApiKeys
from agent_memory.store.database import Database
from agent_memory.store.embedded import DATABASE_NAME, PORT, EmbeddedPostgres, postgres_bin_dir
from agent_memory.tasks import where_tasks_wait
from agentmemory.v1 import (
    block_pb2,
    block_service_pb2,
    block_service_pb2_grpc,
    memory_pb2,
    memory_service_pb2,
    memory_service_pb2_grpc,
    recall_service_pb2_grpc,
)

T = TypeVar("T")


def wait_until(condition: Callable[[], bool], timeout: float = 30, step: float = 0.05) -> bool:
    """Whether ``condition`` holds within ``timeout`` seconds (checked every ``step``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


def agentmemory_rpcs() -> list[MethodDescriptor]:
    """Every RPC of every service in every generated ``agentmemory.v1`` module, so a
    service or RPC added to the protos is found without naming it here."""
    import importlib
    import pkgutil

    import agentmemory.v1

    found: dict[str, MethodDescriptor] = {}
    for module in pkgutil.iter_modules(agentmemory.v1.__path__):
        if module.name.endswith("_pb2"):
            descriptor = importlib.import_module(f"agentmemory.v1.{module.name}").DESCRIPTOR
            for service in descriptor.services_by_name.values():
                for method in service.methods:
                    found[f"/{service.full_name}/{method.name}"] = method
    return [found[name] for name in sorted(found)]


def has_pgvector(url: str) -> bool:
    """Whether the database at ``url`` has pgvector installed (recall ranks by meaning)."""
    import psycopg

    from agent_memory.store.vectors import PGVECTOR_INSTALLED

    with psycopg.connect(url) as conn:
        row = conn.execute(PGVECTOR_INSTALLED).fetchone()
    return bool(row and row[0])


# How long a test waits for the local model to embed what it wrote.
WAIT_INDEXED_SECONDS = 300


def wait_indexed(
    client: Client, *, scope: int = memory_pb2.SCOPE_USER, agent: str = "", workspace: str = ""
) -> None:
    """Wait until every line of the caller's archival block (the user's, ``agent``'s or
    ``workspace``'s) has its vector. Asked twice a second: the indexer embeds in the
    lulls between calls, so asking without pause would leave it a step a second on a
    busy machine."""

    def block() -> block_pb2.Block:
        key = {
            "label": block_pb2.BLOCK_LABEL_ARCHIVAL,
            "scope": scope,
            "agent_id": agent,
            "workspace_id": workspace,
        }
        request = block_service_pb2.GetBlockRequest(**key)
        return client.call(client.blocks.GetBlock, request).block  # type: ignore[no-any-return]

    assert wait_until(
        lambda: (b := block()).indexed_line_count == b.entry_count,
        timeout=WAIT_INDEXED_SECONDS,
        step=0.5,
    ), block()


def wait_embedded(client: Client, *memory_ids: str, vectors: bool) -> None:
    """Wait until the indexer has stored each memory's vector, where the database stores
    vectors (``vectors``: it has pgvector): from then on its write of the row cannot
    hold the row when a use marks it (a use is a hint, skipped rather than waited for
    while a write holds the row)."""
    if not vectors:
        return  # nothing is embedded, and no write of a vector races the use

    def embedded() -> bool:
        for memory_id in memory_ids:
            got = client.call(
                client.memory.GetMemory, memory_service_pb2.GetMemoryRequest(id=memory_id)
            )
            if got.memory.HasField("embedded") and not got.memory.embedded:
                return False
        return True

    assert wait_until(embedded, timeout=WAIT_INDEXED_SECONDS, step=0.5)


def drop_pgvector(url: str) -> None:
    """Make the migrated database at ``url`` one whose server lacks pgvector: its vectors
    kept as plain arrays (as the migrations leave them there), and no extension."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        if not has_pgvector(url):
            return
        for (name,) in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%'"
        ).fetchall():
            conn.execute(f'DROP INDEX "{name}"')
        for table in ("archival_lines", "memories"):
            conn.execute(
                f"ALTER TABLE {table} ALTER COLUMN embedding TYPE real[] USING embedding::real[]"
            )
        conn.execute("DROP EXTENSION vector")


def database_url_for(admin_url: str, name: str) -> str:
    return make_url(admin_url).set(database=name).render_as_string(hide_password=False)


@dataclass
class Client:
    """Stubs on one channel, sending one tenant's credentials with every call."""

    channel: grpc.Channel
    tenant_id: str
    user_id: str
    metadata: tuple[tuple[str, str], ...]
    memory: memory_service_pb2_grpc.MemoryServiceStub = field(init=False)
    blocks: block_service_pb2_grpc.BlockServiceStub = field(init=False)
    recall: recall_service_pb2_grpc.RecallServiceStub = field(init=False)

    def __post_init__(self) -> None:
        self.memory = memory_service_pb2_grpc.MemoryServiceStub(self.channel)
        self.blocks = block_service_pb2_grpc.BlockServiceStub(self.channel)
        self.recall = recall_service_pb2_grpc.RecallServiceStub(self.channel)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.channel.close()

    def call(self, method: Any, request: Any, **kwargs: Any) -> Any:
        """Call ``method`` with this client's credentials (and a deadline)."""
        kwargs.setdefault("timeout", 30)
        return method(request, metadata=self.metadata, **kwargs)


class ServerThread:
    """The real server on its own asyncio loop, so tests can use plain blocking stubs."""

    def __init__(
        self,
        database_url: str,
        *,
        settings: Settings | None = None,
        tracer_provider: TracerProvider | None = None,
        index: bool = False,
    ) -> None:
        """``index``: run an index worker in the process too, as the one ``serve`` starts
        beside it would. Without one, as in a serving process, only queries are
        embedded: what a test writes is not, so a server that indexes is for the tests
        that look at vectors (on a database of their own where they can, so that the
        worker embeds what they wrote, not every earlier test's lines)."""
        self.database_url = database_url
        self.index = index
        self.settings = (settings or Settings()).with_overrides(listen="127.0.0.1:0")
        self.tracer_provider = tracer_provider
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._running: RunningServer | None = None
        self.db: Database | None = None
        self.address = ""
        self.http_address = ""  # HOST:PORT when settings.http_listen is set

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            raise TimeoutError(
                f"{coro.__qualname__} did not end within {timeout:g} s; the server's "
                f"tasks:\n{self._tasks()}"
            ) from None

    def _tasks(self) -> str:
        """Where each task of the server's loop waits (what a hung call waits on)."""

        async def where() -> str:
            return where_tasks_wait()

        try:
            return asyncio.run_coroutine_threadsafe(where(), self._loop).result(10)
        except TimeoutError:
            return "(the loop itself is blocked)"

    def start(self) -> None:
        self._thread.start()

        async def boot() -> RunningServer:
            self.db = database_for(self.settings, self.database_url, self.tracer_provider)
            # The index worker `serve` starts as a process of its own runs here, beside it.
            return await start_server(
                self.settings, self.db, tracer_provider=self.tracer_provider, index_here=self.index
            )

        self._running = self.run(boot())
        self.address = self._running.address
        self.http_address = self._running.http_address or ""

    def __enter__(self) -> ServerThread:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self, grace: float = 0) -> None:
        if self._running is not None:
            self.run(self._running.stop(grace))
        if self.db is not None:
            self.run(self.db.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def new_key(self, tenant_id: str, user_id: str, role: str = Role.ORCHESTRATOR) -> str:
        assert self.db is not None
        keys = ApiKeys(self.db)
        return self.run(keys.create(tenant_id=tenant_id, user_id=user_id, role=Role(role))).key

    def client(
        self,
        tenant_id: str | None = None,
        user_id: str = "user-1",
        *,
        role: str = Role.ORCHESTRATOR,
    ) -> Client:
        """A client with a new key of ``tenant_id`` (a fresh tenant when not given) and
        ``role`` (orchestrator when not given)."""
        tenant = tenant_id or f"tenant-{uuid.uuid4().hex[:10]}"
        key = self.new_key(tenant, user_id, role)
        return Client(
            channel=grpc.insecure_channel(self.address),
            tenant_id=tenant,
            user_id=user_id,
            metadata=(("authorization", f"Bearer {key}"),),
        )

    def anonymous_channel(self) -> grpc.Channel:
        return grpc.insecure_channel(self.address)


@dataclass
class ErrorDetails:
    """What a failed call carried: code, message, ErrorInfo and field violations."""

    code: grpc.StatusCode
    message: str
    reason: str
    metadata: dict[str, str]
    violations: dict[str, str]  # field -> description


def error_details(error: grpc.RpcError) -> ErrorDetails:
    """Unpack the google.rpc.Status details of a failed call (exactly one ErrorInfo)."""
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None, f"no rich status on {error.code()}: {error.details()}"
    infos, violations = [], {}
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            infos.append(info)
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            violations.update({v.field: v.description for v in bad.field_violations})
    assert len(infos) == 1, "every error carries exactly one ErrorInfo"
    return ErrorDetails(
        code=error.code(),  # type: ignore[attr-defined]
        message=status.message,
        reason=infos[0].reason,
        metadata=dict(infos[0].metadata),
        violations=violations,
    )


def cli(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``agent-memory ARGS`` as an operator runs it (``env`` added to this process's),
    its output captured."""
    return subprocess.run(
        [executable("agent-memory"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def cli_in_process(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """What :func:`cli` gives, run by this process's interpreter as the console script
    runs ``main`` (``env`` added to the environment while it runs): for a command's
    behaviour where the process is not the point, since a subprocess costs seconds of
    interpreter start. The logging set up for the command is put back as it was."""
    import logging
    from unittest import mock

    from agent_memory.cli import main

    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        with (
            mock.patch.dict(os.environ, env or {}),
            contextlib.redirect_stdout(stdout),
            contextlib.redirect_stderr(stderr),
        ):
            try:
                status = main(list(args))
            except SystemExit as exited:  # the parser's refusal of a flag, or --help
                code = exited.code
                status = code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    return subprocess.CompletedProcess(
        ["agent-memory", *args], status, stdout.getvalue(), stderr.getvalue()
    )


def executable(name: str) -> str:
    """A console script installed beside the running interpreter (agent-memory, grpcurl)."""
    import shutil
    import sys
    from pathlib import Path

    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    assert found, f"{name} is not installed"
    return found


class ServeProcess:
    """``agent-memory serve`` as a child process, as an operator runs it. Its log (its
    index worker's too) is read as it comes, all of it: a test that stops reading can
    neither block the server on a full pipe nor miss what it said last."""

    SERVING = "serving on "

    def __init__(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        until: str = SERVING,
        own_group: bool = False,
    ) -> None:
        """Start it and wait for ``until`` in its log (by default: until it serves).
        ``own_group``: in a process group of its own, as a terminal's foreground job is."""
        self.proc = subprocess.Popen(
            [executable("agent-memory"), "serve", "--listen", "127.0.0.1:0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **(env or {})},
            start_new_session=own_group,
        )
        self.output: list[str] = []
        self._seen = 0  # lines _wait_for has looked at
        self._ended = False
        self._said = threading.Condition()
        self._reader = threading.Thread(target=self._read, name="serve-log", daemon=True)
        self._reader.start()
        line = self._wait_for(until)
        self.address = line.rsplit(" on ", 1)[1].split()[0] if until == self.SERVING else ""

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._said:
                self.output.append(line)
                self._said.notify_all()
        with self._said:
            self._ended = True
            self._said.notify_all()

    def _wait_for(self, needle: str, timeout: float = 60) -> str:
        """The next line of the log holding ``needle``; the server is killed (and the
        test fails with its log) when none comes within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._said:
            while True:
                for index in range(self._seen, len(self.output)):
                    if needle in self.output[index]:
                        self._seen = index + 1
                        return self.output[index].strip()
                self._seen = len(self.output)
                left = deadline - time.monotonic()
                if self._ended or left <= 0:
                    break
                self._said.wait(left)
        self.proc.kill()
        raise AssertionError(f"server never logged {needle!r}:\n{self.log()}")

    def wait(self, timeout: float) -> int:
        """Its exit code once it has exited and all it logged is read (the index worker's
        last lines too); killed when it does not exit within ``timeout`` seconds."""
        try:
            self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(timeout)
        return self.proc.returncode

    def terminate(self, timeout: float = 30) -> int:
        """SIGTERM, then wait for a clean exit; returns the exit code."""
        self.proc.terminate()
        return self.wait(timeout)

    def log(self) -> str:
        """All it has logged so far."""
        with self._said:
            return "".join(self.output)


class StreamingStandby:
    """A hot standby of an embedded PostgreSQL, made with its own binaries: a base
    backup (``pg_basebackup -R``) streaming from the primary over its local socket,
    started as the primary's account on a socket folder of its own."""

    def __init__(self, primary: EmbeddedPostgres) -> None:
        import tempfile

        account, socket_dir = primary.account, primary.socket_dir
        assert account is not None, "start() the primary first"
        assert socket_dir is not None
        self._account = account
        self.data = primary.data_dir / "standby"
        self.data.mkdir()
        # Short: a socket's path must fit sun_path.
        self.socket_dir = Path(tempfile.mkdtemp(prefix="am-stby-"))
        for folder in (self.data, self.socket_dir):
            if not account.is_us:
                os.chown(folder, account.uid, account.gid)
            folder.chmod(0o700)
        backup = ["-D", str(self.data), "-R", "-X", "stream", "-c", "fast"]
        where = ["-h", str(socket_dir), "-p", str(PORT), "-U", "postgres"]
        self._run(["pg_basebackup", *where, *backup])
        self.primary_url = primary.url(DATABASE_NAME)
        self.url = f"postgresql://postgres@/{DATABASE_NAME}?host={quote(str(self.socket_dir))}"

    def _run(self, args: list[str]) -> None:
        command = self._account.command([str(postgres_bin_dir() / args[0]), *args[1:]])
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stdout}{done.stderr}")

    def start(self) -> None:
        options = (
            f"-p {PORT} -c listen_addresses='' -k {self.socket_dir} -c unix_socket_permissions=0700"
        )
        log = str(self.data / "log")
        self._run(["pg_ctl", "-D", str(self.data), "-l", log, "-o", options, "-w", "start"])

    def stop(self) -> None:
        """Stop it at once, as a crash would."""
        self._run(["pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop"])

    def __enter__(self) -> StreamingStandby:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(RuntimeError):  # stopped already
            self.stop()
