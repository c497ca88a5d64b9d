"""Settings.from_env: defaults, MEMORY_* variables, explicit overrides, bad values."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from agent_memory.config import SETTING_DOCS, Settings, SettingsError


def test_defaults_without_any_variable() -> None:
    settings = Settings.from_env({})
    assert settings.listen == "127.0.0.1:50051"
    assert settings.database_url is None
    assert settings.data_dir.is_absolute()  # the user's data folder, not the current one
    assert settings.insecure_local is False
    assert settings.core_max_chars == 4000
    assert settings.core_max_entries == 20
    assert settings.archival_max_chars == 8000


def test_unrelated_variables_are_ignored() -> None:
    settings = Settings.from_env({"LISTEN": "0.0.0.0:1", "CORE_MAX_CHARS": "1", "PATH": "/bin"})
    assert settings == Settings()


def test_variables_are_parsed_to_their_types() -> None:
    settings = Settings.from_env(
        {
            "MEMORY_LISTEN": "127.0.0.1:6000",
            "MEMORY_DATABASE_URL": "postgresql://u@db:5432/memory",
            "MEMORY_DATA_DIR": "/var/lib/agent-memory",
            "MEMORY_INSECURE_LOCAL": "1",
            "MEMORY_LOG_LEVEL": "DEBUG",
            "MEMORY_CORE_MAX_CHARS": "5000",
            "MEMORY_CORE_MAX_ENTRIES": "30",
            "MEMORY_ARCHIVAL_MAX_CHARS": "9000",
            "MEMORY_SHUTDOWN_GRACE_SECONDS": "2.5",
        }
    )
    assert settings.listen == "127.0.0.1:6000"
    assert settings.database_url == "postgresql://u@db:5432/memory"
    assert settings.data_dir == Path("/var/lib/agent-memory")
    assert isinstance(settings.data_dir, Path)
    assert settings.insecure_local is True
    assert settings.log_level == "DEBUG"
    assert settings.core_max_chars == 5000
    assert settings.core_max_entries == 30
    assert settings.archival_max_chars == 9000
    assert settings.shutdown_grace_seconds == 2.5


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", True),
        ("true", True),
        ("TRUE", True),
        ("yes", True),
        ("on", True),
        (" On ", True),
        ("0", False),
        ("false", False),
        ("False", False),
        ("no", False),
        ("off", False),
    ],
)
def test_boolean_spellings(raw: str, expected: bool) -> None:
    assert Settings.from_env({"MEMORY_INSECURE_LOCAL": raw}).insecure_local is expected


def test_empty_variable_means_unset() -> None:
    settings = Settings.from_env({"MEMORY_CORE_MAX_CHARS": "", "MEMORY_LISTEN": ""})
    assert settings.core_max_chars == 4000
    assert settings.listen == "127.0.0.1:50051"


def test_the_process_environment_is_read_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_CORE_MAX_ENTRIES", "7")
    assert Settings.from_env().core_max_entries == 7


def test_explicit_overrides_beat_the_environment() -> None:
    env = {
        "MEMORY_LISTEN": "0.0.0.0:6000",
        "MEMORY_DATABASE_URL": "postgresql://env/db",
        "MEMORY_DATA_DIR": "/from/env",
        "MEMORY_INSECURE_LOCAL": "0",
    }
    settings = Settings.from_env(
        env,
        listen="127.0.0.1:0",
        database_url="postgresql://flag/db",
        data_dir=Path("/from/flag"),
        insecure_local=True,
    )
    assert settings.listen == "127.0.0.1:0"
    assert settings.database_url == "postgresql://flag/db"
    assert settings.data_dir == Path("/from/flag")
    assert settings.insecure_local is True


def test_none_overrides_leave_the_environment_value() -> None:
    settings = Settings.from_env({"MEMORY_LISTEN": "0.0.0.0:6000"}, listen=None, database_url=None)
    assert settings.listen == "0.0.0.0:6000"
    assert settings.database_url is None


@pytest.mark.parametrize(
    ("variable", "raw"),
    [
        ("MEMORY_CORE_MAX_CHARS", "many"),
        ("MEMORY_CORE_MAX_CHARS", "4000.5"),
        ("MEMORY_CORE_MAX_ENTRIES", "twenty"),
        ("MEMORY_ARCHIVAL_MAX_CHARS", "8k"),
        ("MEMORY_DB_POOL_SIZE", "ten"),
        ("MEMORY_INSECURE_LOCAL", "maybe"),
        ("MEMORY_INSECURE_LOCAL", "2"),
        ("MEMORY_SHUTDOWN_GRACE_SECONDS", "soon"),
    ],
)
def test_unparsable_values_name_the_variable(variable: str, raw: str) -> None:
    with pytest.raises(SettingsError, match=variable):
        Settings.from_env({variable: raw})


@pytest.mark.parametrize(
    "variable",
    [
        "MEMORY_CORE_MAX_CHARS",
        "MEMORY_CORE_MAX_ENTRIES",
        "MEMORY_ARCHIVAL_MAX_CHARS",
        "MEMORY_BLOCK_VERSIONS_KEPT",
        "MEMORY_DB_POOL_SIZE",
        "MEMORY_MAX_MESSAGE_BYTES",
        "MEMORY_WORKER_START_SECONDS",
    ],
)
@pytest.mark.parametrize("raw", ["0", "-1"])
def test_limits_must_be_positive(variable: str, raw: str) -> None:
    with pytest.raises(SettingsError, match=variable):
        Settings.from_env({variable: raw})


def test_negative_grace_is_refused() -> None:
    with pytest.raises(SettingsError, match="MEMORY_SHUTDOWN_GRACE_SECONDS"):
        Settings.from_env({"MEMORY_SHUTDOWN_GRACE_SECONDS": "-1"})


def test_listen_needs_host_and_port() -> None:
    with pytest.raises(SettingsError, match="MEMORY_LISTEN"):
        Settings.from_env({"MEMORY_LISTEN": "localhost"})


@pytest.mark.parametrize("listen", ["127.0.0.1:99999", "127.0.0.1:http", "127.0.0.1:", "localhost"])
def test_listen_needs_a_port_a_socket_can_have(listen: str) -> None:
    # 99999 would otherwise be taken modulo 65536 and serve on a port nobody asked for.
    with pytest.raises(SettingsError, match="--listen"):
        Settings.from_env({}, listen=listen)


@pytest.mark.parametrize("listen", ["0.0.0.0:0", "[::1]:50051", "localhost:65535"])
def test_listen_takes_any_host_with_a_port(listen: str) -> None:
    assert Settings.from_env({}, listen=listen).listen == listen


def test_invalid_override_is_refused_too() -> None:
    with pytest.raises(SettingsError, match="MEMORY_CORE_MAX_CHARS"):
        Settings.from_env({}, core_max_chars=0)


def test_settings_error_is_a_value_error() -> None:
    assert issubclass(SettingsError, ValueError)


def test_with_overrides_keeps_the_rest() -> None:
    base = Settings.from_env({"MEMORY_CORE_MAX_CHARS": "123"})
    changed = base.with_overrides(listen="127.0.0.1:0")
    assert changed.listen == "127.0.0.1:0"
    assert changed.core_max_chars == 123
    assert base.listen == "127.0.0.1:50051"


def test_workers_come_from_the_environment_or_the_flag() -> None:
    assert Settings.from_env({}).workers == 1
    assert Settings.from_env({"MEMORY_WORKERS": "3"}).workers == 3
    assert Settings.from_env({"MEMORY_WORKERS": "3"}, workers=2).workers == 2


@pytest.mark.parametrize("workers", ["0", "65", "99999"])
def test_workers_out_of_range_are_refused(workers: str) -> None:
    """Each is a process of its own: 99999 of them would take the machine's memory."""
    with pytest.raises(SettingsError, match=r"--workers .* must be from 1 to 64"):
        Settings.from_env({"MEMORY_WORKERS": workers})


def test_a_message_size_past_what_grpc_takes_is_refused() -> None:
    assert Settings.from_env({"MEMORY_MAX_MESSAGE_BYTES": str(2**31 - 1)}).max_message_bytes
    with pytest.raises(SettingsError, match="MEMORY_MAX_MESSAGE_BYTES must be at most"):
        Settings.from_env({"MEMORY_MAX_MESSAGE_BYTES": "99999999999"})


def test_several_workers_need_so_reuseport(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.platform", "darwin")
    with pytest.raises(SettingsError, match="--workers 2 needs SO_REUSEPORT"):
        Settings.from_env({}, workers=2)
    assert Settings.from_env({}, workers=1).workers == 1


@pytest.mark.parametrize("raw", ["-1", "5.5", "30"])
def test_the_auth_cache_is_at_most_five_seconds(raw: str) -> None:
    with pytest.raises(SettingsError, match="MEMORY_AUTH_CACHE_SECONDS"):
        Settings.from_env({"MEMORY_AUTH_CACHE_SECONDS": raw})


@pytest.mark.parametrize("level", ["LOUD", "verbose", "5"])
def test_an_unknown_log_level_names_the_flag(level: str) -> None:
    with pytest.raises(SettingsError, match="--log-level"):
        Settings.from_env({"MEMORY_LOG_LEVEL": level})


def test_log_levels_are_taken_in_any_case() -> None:
    assert Settings.from_env({"MEMORY_LOG_LEVEL": "warning"}).log_level == "warning"


@pytest.mark.parametrize("listen", ["0.0.0.0:50051", "192.0.2.7:1", "[::]:50051", "example.com:1"])
def test_insecure_local_refuses_an_address_beyond_loopback(listen: str) -> None:
    with pytest.raises(SettingsError, match="--insecure-local"):
        Settings.from_env({}, listen=listen, insecure_local=True)


@pytest.mark.parametrize("listen", ["127.0.0.1:0", "127.9.9.9:1", "[::1]:50051", "localhost:7"])
def test_insecure_local_is_served_on_loopback(listen: str) -> None:
    assert Settings.from_env({}, listen=listen, insecure_local=True).insecure_local


def test_a_data_dir_that_is_a_file_names_the_flag(tmp_path: Path) -> None:
    afile = tmp_path / "data"
    afile.write_text("not a folder")
    with pytest.raises(SettingsError, match=r"--data-dir .* is a file"):
        Settings.from_env({}, data_dir=afile)
    with pytest.raises(SettingsError, match="--data-dir"):
        Settings.from_env({}, data_dir=afile / "below")


def test_a_data_dir_is_not_checked_when_a_database_url_is_given(tmp_path: Path) -> None:
    afile = tmp_path / "data"
    afile.write_text("not a folder")
    Settings.from_env({}, data_dir=afile, database_url="postgresql://u@h/db")


def test_tls_files_go_in_pairs_and_must_be_readable(tmp_path: Path) -> None:
    cert = tmp_path / "cert.pem"
    cert.write_text("x")
    with pytest.raises(SettingsError, match="--tls-cert and --tls-key go together"):
        Settings.from_env({}, tls_cert=cert)
    with pytest.raises(SettingsError, match="--tls-client-ca needs --tls-cert"):
        Settings.from_env({}, tls_client_ca=cert)
    with pytest.raises(SettingsError, match=r"--tls-key .*not a readable file"):
        Settings.from_env({}, tls_cert=cert, tls_key=tmp_path / "missing.pem")
    with pytest.raises(SettingsError, match="not a PEM certificate chain"):
        Settings.from_env({"MEMORY_TLS_CERT": str(cert), "MEMORY_TLS_KEY": str(cert)})


def test_database_wait_must_not_be_negative() -> None:
    assert Settings.from_env({"MEMORY_DATABASE_WAIT_SECONDS": "0"}).database_wait_seconds == 0
    with pytest.raises(SettingsError, match="--database-wait"):
        Settings.from_env({}, database_wait_seconds=-1)


def test_every_setting_has_its_meaning_for_the_readme_table() -> None:
    assert set(SETTING_DOCS) == {f.name for f in fields(Settings)}
