"""An operator's mistakes at the command line: one line naming the flag and the fix,
exit status 2, never a traceback."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from agent_memory import __version__
from tests.support import cli, database_url_for

pytestmark = pytest.mark.e2e


def assert_one_line(done: subprocess.CompletedProcess[str], *named: str) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    # Only the error line; a database line and the waiting notice may come before it.
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("agent-memory: "), done.stderr
    for name in named:
        assert name in last, done.stderr
    return last


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


def test_a_port_in_use_names_the_flag(database_url: str, busy_port: int) -> None:
    done = cli("serve", "--listen", f"127.0.0.1:{busy_port}", "--database-url", database_url)
    assert_one_line(done, "--listen", str(busy_port))


@pytest.mark.parametrize(
    ("flag", "env"), [("--listen", "MEMORY_LISTEN"), ("--http-listen", "MEMORY_HTTP_LISTEN")]
)
def test_a_port_in_use_is_found_before_the_embedded_database_is_made(
    tmp_path: Path, busy_port: int, flag: str, env: str
) -> None:
    data = tmp_path / "data"
    ports = {"--listen": "127.0.0.1:0", "--http-listen": "127.0.0.1:0"}
    ports[flag] = f"127.0.0.1:{busy_port}"
    done = cli(
        "serve",
        *(part for pair in ports.items() for part in pair),
        "--data-dir",
        str(data),
        env={"MEMORY_DATABASE_URL": ""},
    )
    assert_one_line(done, flag, str(busy_port), env)
    assert not (data / "pgdata").exists()


def test_insecure_local_http_on_a_public_address_names_the_flag() -> None:
    done = cli("serve", "--insecure-local", "--http-listen", "0.0.0.0:0")
    assert_one_line(done, "--insecure-local", "--http-listen", "127.0.0.1")


@pytest.mark.parametrize("flag", ["--listen", "--http-listen"])
@pytest.mark.parametrize("listen", ["127.0.0.1:70000", "127.0.0.1", "127.0.0.1:http"])
def test_a_listen_address_without_a_usable_port_names_the_flag(listen: str, flag: str) -> None:
    assert_one_line(cli("serve", flag, listen), flag)


@pytest.mark.parametrize(
    "url", ["postgresql://[::1/db", "mysql://root@127.0.0.1/db", "not a url at all"]
)
def test_a_malformed_or_foreign_database_url_names_the_flag(url: str) -> None:
    assert_one_line(cli("migrate", "--database-url", url), "--database-url")


@pytest.mark.parametrize(
    "url", ["postgresql://[::1/db", "mysql://root@127.0.0.1/db", "not a url at all"]
)
def test_a_malformed_or_foreign_standby_url_names_the_flag(url: str) -> None:
    done = cli("serve", "--listen", "127.0.0.1:0", "--database-read-url", url)
    assert_one_line(done, "--database-read-url")


def test_an_unreachable_database_is_retried_for_a_bounded_time_then_one_line() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://postgres:hunter2@127.0.0.1:{port}/memory"
    done = cli("keys", "list", "--database-url", url, "--database-wait", "1")
    line = assert_one_line(done, "--database-url", "--database-wait")
    assert "no answer after 1s" in line
    assert "does not answer yet" in done.stderr  # the wait was announced
    assert "hunter2" not in done.stderr


def test_an_unknown_database_or_role_is_one_line_at_once(
    postgres_admin_url: str, create_database: Callable[[], str]
) -> None:
    missing_db = database_url_for(postgres_admin_url, "no_such_database_here")
    # Waiting would not help: these are refused at once, whatever the wait.
    line = assert_one_line(
        cli("migrate", "--database-url", missing_db, "--database-wait", "600"), "--database-url"
    )
    assert "create the database" in line
    missing_role = (
        make_url(create_database())
        .set(username="no_such_role_here", password=None)
        .render_as_string(hide_password=False)
    )
    line = assert_one_line(
        cli("migrate", "--database-url", missing_role, "--database-wait", "600"), "--database-url"
    )
    assert "role" in line


def test_a_data_dir_that_is_a_file_names_the_flag(tmp_path: Path) -> None:
    afile = tmp_path / "data"
    afile.write_text("a file")
    for command in (("serve",), ("keys", "list"), ("migrate",)):
        done = cli(*command, "--data-dir", str(afile), env={"MEMORY_DATABASE_URL": ""})
        assert_one_line(done, "--data-dir", "is a file")


def test_a_bad_log_level_names_the_flag() -> None:
    assert_one_line(cli("migrate", "--log-level", "chatty"), "--log-level", "INFO")
    done = cli("serve", env={"MEMORY_LOG_LEVEL": "chatty"})
    assert_one_line(done, "--log-level", "MEMORY_LOG_LEVEL")


def test_insecure_local_on_a_public_address_names_the_flag() -> None:
    done = cli("serve", "--insecure-local", "--listen", "0.0.0.0:0")
    assert_one_line(done, "--insecure-local", "127.0.0.1")


def test_version() -> None:
    done = cli("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"agent-memory {__version__}"


@pytest.mark.parametrize(
    ("query", "named"),
    [("?foo=bar", "foo"), ("?connect_timeout=abc", "connect_timeout")],
    ids=["unknown-option", "bad-value"],
)
def test_a_database_url_libpq_cannot_use_is_one_line_at_once(
    postgres_admin_url: str, query: str, named: str
) -> None:
    url = make_url(postgres_admin_url).render_as_string(hide_password=False)
    # No wait, however long one is allowed: the URL itself is wrong.
    line = assert_one_line(
        cli("migrate", "--database-url", url.split("?")[0] + query, "--database-wait", "600"),
        "--database-url",
    )
    assert named in line


def test_a_port_out_of_range_in_the_database_url_is_one_line_at_once() -> None:
    url = "postgresql://postgres@127.0.0.1:99999/memory"
    line = assert_one_line(
        cli("migrate", "--database-url", url, "--database-wait", "600"), "--database-url"
    )
    assert "port" in line


def test_a_data_dir_the_embedded_database_cannot_use_names_the_flag(tmp_path: Path) -> None:
    (tmp_path / "pgdata").write_text("a file where the cluster would go")
    for command in (("migrate",), ("keys", "list")):
        done = cli(*command, "--data-dir", str(tmp_path), env={"MEMORY_DATABASE_URL": ""})
        assert_one_line(done, "--data-dir", "--database-url")


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("MEMORY_DATABASE_WAIT_SECONDS", "nan"),
        ("MEMORY_HEALTH_CHECK_SECONDS", "inf"),
        ("MEMORY_HEALTH_CHECK_SECONDS", "0.001"),
    ],
)
def test_a_number_that_would_hang_or_spin_names_the_setting(variable: str, value: str) -> None:
    done = cli("serve", "--listen", "127.0.0.1:0", env={variable: value})
    assert_one_line(done, variable)


@pytest.mark.parametrize(
    "flags",
    [
        ("--address", "garbage"),
        ("--address", "127.0.0.1:70000"),
        ("--timeout", "-1"),
        ("--timeout", "nan"),
    ],
)
def test_a_health_check_asked_wrongly_is_a_usage_error_not_a_verdict(
    flags: tuple[str, ...],
) -> None:
    done = cli("health", *flags)
    # 2: the question was wrong; 1 would tell a container runtime the server is unwell.
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert flags[0] in done.stderr
    assert "Traceback" not in done.stderr


def test_a_data_dir_holding_something_else_is_refused_before_anything_is_changed(
    tmp_path: Path,
) -> None:
    import os

    from agent_memory.store.embedded import acl_entries

    data = tmp_path / "data"
    (data / "pgdata").mkdir(parents=True)
    (data / "pgdata" / "notes.txt").write_text("someone else's file")
    modes = {p: p.stat().st_mode for p in (tmp_path, data, data / "pgdata")}
    done = cli("migrate", "--data-dir", str(data), env={"MEMORY_DATABASE_URL": ""})
    assert_one_line(done, "--data-dir", "something other than a database cluster")
    # Its owner, modes and ACLs are as they were: a refused start changes nothing.
    assert (data / "pgdata").stat().st_uid == os.geteuid()
    assert {p: p.stat().st_mode for p in modes} == modes
    user_entries = 0x02  # ACL_USER: an entry naming another account
    assert not [k for p in modes for k in acl_entries(p) if k[0] == user_entries]
