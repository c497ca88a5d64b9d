"""Which database is in use, as the commands and the server say it: the first line each
command writes to stderr, and one line of the server's log; never a password. Without a
flag, the embedded database lives in the user's data folder, from whatever folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sqlalchemy.engine import make_url

from tests.support import ServeProcess, cli


def first_line(text: str) -> str:
    """The first line of a command's stderr, after any warning the embedded database's
    start logs (as root: what it changed to run as its own account; a server left behind
    by a crash being stopped)."""
    lines = text.splitlines()
    while lines and " WARNING agent_memory.store.embedded: " in lines[0]:
        lines.pop(0)
    return lines[0] if lines else ""


def test_every_command_names_its_database_first_without_the_password(
    create_database: Callable[[], str],
) -> None:
    # The test server trusts local connections: the password is carried, never checked.
    url = make_url(create_database()).set(password="s3cret-pw")
    plain = url.render_as_string(hide_password=False)
    shown = f"database: {url.render_as_string(hide_password=True)}"

    done = cli("migrate", "--database-url", plain)
    assert done.returncode == 0, done.stderr
    assert first_line(done.stderr) == shown
    created = cli("keys", "create", "--tenant", "acme", "--user", "ops", "--database-url", plain)
    assert created.returncode == 0, created.stderr
    assert first_line(created.stderr) == shown
    key_id = created.stdout.strip().splitlines()[-1].split("_")[1]
    listed = cli("keys", "list", "--database-url", plain)
    assert first_line(listed.stderr) == shown
    revoked = cli("keys", "revoke", key_id, "--database-url", plain)
    assert revoked.returncode == 0, revoked.stderr
    assert first_line(revoked.stderr) == shown
    for done in (created, listed, revoked):
        assert "s3cret-pw" not in done.stderr + done.stdout


def test_without_a_data_dir_every_folder_uses_the_same_embedded_database(
    tmp_path: Path,
) -> None:
    share = tmp_path / "share"
    env = {"XDG_DATA_HOME": str(share)}
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    for name in ("MEMORY_DATA_DIR", "MEMORY_DATABASE_URL"):
        env[name] = ""  # unset for the command: the defaults apply

    created = cli("keys", "create", "--tenant", "acme", "--user", "ops", cwd=here, env=env)
    assert created.returncode == 0, created.stderr
    key_id = created.stdout.strip().splitlines()[-1].split("_")[1]
    listed = cli("keys", "list", cwd=there, env=env)
    assert listed.returncode == 0, listed.stderr
    assert key_id in listed.stdout

    data_dir = share / "agent-memory"
    for done in (created, listed):
        line = first_line(done.stderr)
        assert line.startswith("database: embedded PostgreSQL 1"), done.stderr
        assert f" in {data_dir} (socket " in line
    assert (data_dir / "pgdata" / "PG_VERSION").exists()
    assert not (here / ".agent-memory").exists()
    assert not (there / ".agent-memory").exists()


def test_the_server_logs_the_database_it_uses(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    served = ServeProcess("--data-dir", str(data_dir), "--insecure-local")
    try:
        lines = [ln for ln in served.log().splitlines() if "using database: " in ln]
        assert len(lines) == 1, served.log()
        assert "using database: embedded PostgreSQL 1" in lines[0]
        assert f" in {data_dir} (socket " in lines[0]
    finally:
        assert served.terminate() == 0
