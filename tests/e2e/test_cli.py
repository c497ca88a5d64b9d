"""The ``agent-memory`` command as an operator runs it: migrate, keys, serve, shutdown."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import grpc
import psycopg
import pytest
from google.protobuf import field_mask_pb2
from psycopg import sql
from sqlalchemy.engine import make_url

from agentmemory.v1 import memory_pb2, memory_service_pb2_grpc
from agentmemory.v1 import memory_service_pb2 as pb
from tests.support import ServeProcess, cli, executable


@pytest.fixture(scope="module")
def cli_database(create_database: Callable[[], str]) -> str:
    url = create_database()
    done = cli("migrate", "--database-url", url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("schema created at revision "), done.stdout
    return url


def create_key(url: str, tenant: str, user: str) -> str:
    done = cli("keys", "create", "--tenant", tenant, "--user", user, "--database-url", url)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_migrate_twice_is_harmless(cli_database: str) -> None:
    again = cli("migrate", "--database-url", cli_database)
    assert again.returncode == 0
    assert again.stdout.startswith("schema already at revision "), again.stdout


def test_distribute_without_citus_migrates_then_says_so_plainly(cli_database: str) -> None:
    done = cli("migrate", "--distribute", "--database-url", cli_database)
    assert done.returncode == 2
    assert done.stdout.startswith("schema already at revision "), done.stdout
    said = [line for line in done.stderr.splitlines() if line.startswith("agent-memory")]
    assert said == [
        "agent-memory migrate --distribute: this PostgreSQL has no Citus: install Citus on "
        "the coordinator and the workers, or run migrate without --distribute"
    ]
    assert "Traceback" not in done.stderr


def test_keys_create_list_revoke(cli_database: str) -> None:
    key = create_key(cli_database, "acme", "ops")
    assert key.startswith("amk_")
    key_id = key.split("_")[1]
    with psycopg.connect(cli_database) as conn:
        stored = conn.execute(
            "SELECT secret_hash FROM api_keys WHERE id = %s", (key_id,)
        ).fetchone()
    assert stored is not None
    assert key.split("_")[2].encode() not in bytes(stored[0])

    listed = cli("keys", "list", "--database-url", cli_database)
    assert listed.returncode == 0
    line = next(ln for ln in listed.stdout.splitlines() if key_id in ln)
    assert "acme" in line
    assert "active" in line
    assert key.split("_")[2] not in listed.stdout

    revoked = cli("keys", "revoke", key_id, "--database-url", cli_database)
    assert revoked.returncode == 0
    assert revoked.stdout.strip() == f"revoked key {key_id}"
    relisted = cli("keys", "list", "--tenant", "acme", "--database-url", cli_database)
    revoked_line = next(ln for ln in relisted.stdout.splitlines() if key_id in ln)
    assert "revoked" in revoked_line
    # Revoking again changes nothing, and says so: the key stays revoked as it was.
    again = cli("keys", "revoke", key_id, "--database-url", cli_database)
    assert again.returncode == 0
    assert again.stdout.startswith(f"key {key_id} was already revoked, at ")
    listed_again = cli("keys", "list", "--tenant", "acme", "--database-url", cli_database)
    assert revoked_line in listed_again.stdout.splitlines()
    missing = cli("keys", "revoke", "nosuchkey", "--database-url", cli_database)
    assert missing.returncode == 1


def test_keys_create_refuses_an_empty_tenant(cli_database: str) -> None:
    done = cli("keys", "create", "--tenant", "", "--user", "u", "--database-url", cli_database)
    assert done.returncode != 0
    assert "tenant" in done.stderr


def test_an_empty_data_dir_is_refused_not_taken_for_the_current_folder(tmp_path: Path) -> None:
    done = cli("keys", "list", "--data-dir", "", cwd=tmp_path)
    assert done.returncode == 2
    assert "--data-dir: an empty folder name" in done.stderr
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # no database was made where it ran


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("export", "--tenant", ""), "--tenant: must not be empty"),
        (("import", "--tenant", "a/b", "-"), "--tenant: must not contain '/'"),
        (("health", "--tls-ca", "{not-pem}"), "holds no PEM certificate"),
        (("keys", "revoke", "amk_0123456789abcdef_s3cr3t"), "not the whole key"),
        (
            ("serve", "--embedder", "none", "--embedder-url", "http://127.0.0.1:1/v1"),
            "--embedder none with --embedder-url",
        ),
        (
            ("serve", "--database-read-url", "postgresql://x@127.0.0.1:1/db"),
            "--database-read-url needs --database-url",
        ),
    ],
)
def test_an_operators_mistake_is_one_line_and_status_2(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    not_pem = tmp_path / "ca.txt"
    not_pem.write_text("a file, not a certificate\n")
    args = tuple(str(not_pem) if a == "{not-pem}" else a for a in args)
    done = cli(*args, "--data-dir", str(tmp_path / "d")) if args[0] != "health" else cli(*args)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("agent-memory")]
    assert len(lines) == 1, done.stderr
    assert said in lines[0]
    assert "Traceback" not in done.stderr
    assert "s3cr3t" not in done.stderr
    assert not (tmp_path / "d").exists()  # refused before a database was made


def test_health_of_an_address_that_is_no_address_is_one_line_naming_it() -> None:
    done = cli("health", env={"MEMORY_LISTEN": "abc"})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "agent-memory: MEMORY_LISTEN 'abc': must be HOST:PORT with a port from 0 to 65535 "
        "(MEMORY_LISTEN)"
    ]


def test_bad_settings_are_reported_not_raised(cli_database: str) -> None:
    done = subprocess.run(
        [executable("agent-memory"), "migrate", "--database-url", cli_database],
        capture_output=True,
        text=True,
        env={"MEMORY_CORE_MAX_CHARS": "lots", "PATH": ""},
        timeout=60,
    )
    assert done.returncode == 2
    assert "MEMORY_CORE_MAX_CHARS" in done.stderr


def upsert(
    stub: memory_service_pb2_grpc.MemoryServiceStub, key: str, auth: tuple[tuple[str, str], ...]
) -> pb.UpsertMemoryResponse:
    response: pb.UpsertMemoryResponse = stub.UpsertMemory(
        pb.UpsertMemoryRequest(owner=memory_pb2.MemoryOwner(agent_id="ops"), key=key, value="v"),
        metadata=auth,
        timeout=30,
    )
    return response


def wait_for_lock_waiter(url: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).fetchone()
            if row and row[0] > 0:
                return
            time.sleep(0.05)
    raise AssertionError("the in-flight call never reached the database")


def refusing_new_calls(
    address: str, auth: tuple[tuple[str, str], ...], timeout: float = 30
) -> None:
    """Wait until a fresh channel's read is UNAVAILABLE (a read, so probing writes nothing)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with grpc.insecure_channel(address) as fresh:
            stub = memory_service_pb2_grpc.MemoryServiceStub(fresh)
            try:
                stub.GetAgentSettings(
                    pb.GetAgentSettingsRequest(agent_id="probe"), metadata=auth, timeout=5
                )
            except grpc.RpcError as exc:
                if exc.code() is grpc.StatusCode.UNAVAILABLE:
                    return
        time.sleep(0.05)
    raise AssertionError("the server never stopped taking new calls after SIGTERM")


def test_sigterm_finishes_in_flight_calls_and_refuses_new_ones(cli_database: str) -> None:
    auth = (("authorization", f"Bearer {create_key(cli_database, 'shutdown', 'ops')}"),)
    served = ServeProcess("--database-url", cli_database)
    try:
        channel = grpc.insecure_channel(served.address)
        stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
        row = upsert(stub, "in-flight", auth).memory

        # Hold the row's lock so an UpdateMemory is provably in flight at SIGTERM.
        blocker = psycopg.connect(cli_database)
        blocker.execute("SELECT 1 FROM memories WHERE id = %s FOR UPDATE", (row.id,))
        outcome: dict[str, object] = {}

        def update() -> None:
            try:
                outcome["reply"] = stub.UpdateMemory(
                    pb.UpdateMemoryRequest(
                        memory=memory_pb2.Memory(id=row.id, value="written during shutdown"),
                        update_mask=field_mask_pb2.FieldMask(paths=["value"]),
                    ),
                    metadata=auth,
                    timeout=60,
                )
            except grpc.RpcError as exc:  # pragma: no cover - reported below
                outcome["error"] = exc

        worker = threading.Thread(target=update)
        worker.start()
        wait_for_lock_waiter(cli_database)
        served.proc.terminate()
        served._wait_for("shutting down")
        refusing_new_calls(served.address, auth)
        with grpc.insecure_channel(served.address) as fresh:
            with pytest.raises(grpc.RpcError) as refused:
                upsert(memory_service_pb2_grpc.MemoryServiceStub(fresh), "too-late", auth)
            assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
        blocker.rollback()
        blocker.close()
        worker.join(30)
        assert "error" not in outcome, outcome.get("error")
        channel.close()
        assert served.terminate() == 0
    finally:
        if served.proc.poll() is None:
            served.proc.kill()
    with psycopg.connect(cli_database) as conn:
        value = conn.execute("SELECT value FROM memories WHERE id = %s", (row.id,)).fetchone()
        late = conn.execute("SELECT count(*) FROM memories WHERE key = 'too-late'").fetchone()
    assert value == ("written during shutdown",)
    assert late == (0,)
    assert "agent-memory stopped" in served.log()


def test_serve_without_a_database_url_starts_an_embedded_postgres(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    served = ServeProcess("--data-dir", str(data_dir), "--insecure-local")
    try:
        with grpc.insecure_channel(served.address) as channel:
            stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
            assert upsert(stub, "embedded", ()).created
        assert (data_dir / "pgdata" / "PG_VERSION").exists()
    finally:
        code = served.terminate()
    assert code == 0, served.log()
    assert "starting embedded PostgreSQL" in served.log()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@pytest.mark.parametrize(
    "command",
    [
        ("migrate",),
        ("keys", "list"),
        ("serve", "--listen", "127.0.0.1:0"),
        ("serve", "--listen", "127.0.0.1:0", "--workers", "2"),
    ],
)
def test_an_unreachable_database_is_one_line_naming_the_flag(command: tuple[str, ...]) -> None:
    url = f"postgresql://postgres:hunter2@127.0.0.1:{free_port()}/nothing"
    # A server that is not up yet is waited for; a second is enough to see the end.
    done = cli(*command, "--database-url", url, "--database-wait", "1", timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "--database-url" in done.stderr
    assert "hunter2" not in done.stderr  # the password stays out of logs


def test_a_database_url_of_another_kind_is_one_line_naming_the_flag() -> None:
    done = cli("migrate", "--database-url", "mysql://root@127.0.0.1/db", timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "--database-url" in done.stderr
    assert "give a URL of the form postgresql://" in done.stderr
    assert "server is up" not in done.stderr


def test_a_user_who_may_not_create_tables_is_told_which_grant_it_needs(
    create_database: Callable[[], str],
) -> None:
    url = create_database()
    role = f"am_limited_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        # PostgreSQL 15 and later: only the owner may create in public unless granted.
        conn.execute(sql.SQL("REVOKE CREATE ON SCHEMA public FROM PUBLIC"))
    try:
        as_role = make_url(url).set(username=role, password=None)
        done = cli(
            "migrate", "--database-url", as_role.render_as_string(hide_password=False), timeout=60
        )
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert "permission denied for schema public" in lines[-1]
        assert "GRANT CREATE ON SCHEMA public" in lines[-1]
        assert "server is up" not in done.stderr
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_a_model_with_no_price_is_named_at_start(cli_database: str) -> None:
    """Every pass of a model the budget has no price for is skipped: the operator hears it
    when the server starts, not from a pass's outcome."""
    served = ServeProcess(
        "--database-url",
        cli_database,
        "--indexer",
        "none",
        env={"MEMORY_EXTRACTION_MODEL": "claude-mystery-1", "ANTHROPIC_API_KEY": "test-key"},
    )
    try:
        said = [line for line in served.output if "no price for model" in line]
        assert said, served.log()
        assert "'claude-mystery-1'" in said[0]
        assert "MEMORY_EXTRACTION_PRICES" in said[0]
    finally:
        assert served.terminate() == 0


def test_health_verbose_says_which_key_the_server_refused(cli_database: str) -> None:
    """No key, a key the server does not know, and a key it holds: each says so."""
    key = create_key(cli_database, "health", "ops")
    served = ServeProcess("--database-url", cli_database, "--indexer", "none")
    try:

        def verbose(api_key: str) -> str:
            done = cli(
                "health", "--verbose", "--address", served.address, env={"MEMORY_API_KEY": api_key}
            )
            assert done.returncode == 0, done.stderr
            return done.stdout

        assert "recall unknown: set MEMORY_API_KEY to a key" in verbose("")
        bogus = verbose("amk_0123456789abcdef_s3cr3t")
        assert "the server refused the key in MEMORY_API_KEY (invalid API key)" in bogus
        assert "s3cr3t" not in bogus
        known = verbose(key)
        assert "recall unknown" not in known
        assert f"{served.address}: recall by " in known  # by words or by meaning, as it ranks
    finally:
        assert served.terminate() == 0
