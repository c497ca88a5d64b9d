"""What the embedded database decides before it starts anything: where its data lives by
default, what running as root may change, and how a database is named to people."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import platformdirs
import pytest

from agent_memory.config import Settings, SettingsError
from agent_memory.store import embedded
from agent_memory.store.embedded import (
    Account,
    EmbeddedPostgres,
    acl_entries,
    describe_database,
)

NO_ID = 0xFFFFFFFF


def test_the_default_data_folder_is_the_users_whatever_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = Path(platformdirs.user_data_dir("agent-memory"))
    assert expected.is_absolute()
    assert Settings.from_env({}).data_dir == expected
    monkeypatch.chdir(tmp_path)
    assert Settings.from_env({}).data_dir == expected
    assert Settings.from_env({"MEMORY_DATA_DIR": "/srv/memory"}).data_dir == Path("/srv/memory")
    assert Settings.from_env({}, data_dir=tmp_path).data_dir == tmp_path


def test_as_root_without_a_way_to_make_the_servers_account_it_refuses_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = tmp_path / "home"
    parent.mkdir(mode=0o700)
    parent.chmod(0o700)
    modes = {folder: folder.stat().st_mode for folder in (tmp_path, parent)}
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(embedded, "SYSTEM_ACCOUNT", "agent-memory-no-such-user")
    monkeypatch.setenv("PATH", str(tmp_path))  # no useradd
    with pytest.raises(SettingsError) as refused:
        EmbeddedPostgres(parent / "data").start()
    message = str(refused.value)
    assert "\n" not in message
    assert "run agent-memory as a normal user or pass --database-url" in message
    # Nothing on the way was opened to anyone.
    assert {folder: folder.stat().st_mode for folder in modes} == modes
    assert not (parent / "data" / "pgdata").exists()


def test_letting_the_servers_account_search_a_folder_opens_it_to_nobody_else(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    folder.chmod(0o700)
    account = Account("db", 54321, 54321)
    try:
        embedded._grant_search(folder, account)
    except SettingsError:
        pytest.skip("this file system has no POSIX ACLs")
    entries = acl_entries(folder)
    assert entries == {
        (0x01, NO_ID): 0o7,  # the owner, as before
        (0x02, 54321): 0o1,  # the server's account: search only
        (0x04, NO_ID): 0o0,  # the owning group, as before
        (0x10, NO_ID): 0o1,  # the mask lets the account's entry through
        (0x20, NO_ID): 0o0,  # everyone else, as before
    }
    assert stat.S_IMODE(folder.stat().st_mode) & 0o007 == 0
    # Granting again changes nothing.
    embedded._grant_search(folder, account)
    assert acl_entries(folder) == entries


def test_an_external_database_is_named_without_its_password() -> None:
    line = describe_database("postgresql://memory:s3cret@db.internal:5432/memory", None)
    assert line == "postgresql://memory:***@db.internal:5432/memory"
    assert describe_database("not a url", None) == "(unparseable URL)"


def test_the_embedded_database_is_named_by_version_folder_and_socket(tmp_path: Path) -> None:
    server = EmbeddedPostgres(tmp_path / "data")
    server.pgdata.mkdir(parents=True)
    (server.pgdata / "PG_VERSION").write_text("18\n")
    server.socket_dir = Path("/run/user/1000/agent-memory-abcd1234")
    server.account = Account("me", os.geteuid(), os.getegid())
    assert describe_database("postgresql://postgres@/agent_memory", server) == (
        f"embedded PostgreSQL 18 in {tmp_path / 'data'} "
        "(socket /run/user/1000/agent-memory-abcd1234)"
    )
