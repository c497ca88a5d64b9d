"""Opening the configured database for the server and the operator's commands: the
embedded PostgreSQL started when no URL is given, a server that does not answer yet
waited for, and the schema brought up to date. Kept apart from the server's wiring,
so that a command such as ``agent-memory keys`` loads no more than it needs."""

from __future__ import annotations

import logging
import subprocess
import time

import psycopg
from sqlalchemy import exc as sa_exc

from agent_memory.config import Settings, SettingsError
from agent_memory.store import migrate
from agent_memory.store.database import libpq_url
from agent_memory.store.embedded import EmbeddedPostgres, describe_database, redacted_url

log = logging.getLogger(__name__)


def open_database(
    settings: Settings,
) -> tuple[str, EmbeddedPostgres | None, migrate.Migration]:
    """The configured database, or a started embedded PostgreSQL when none is set, with
    its schema brought up to date (and what that took). The caller stops the embedded
    server it is given.

    Raises:
        SettingsError: the database cannot be reached, or a URL (``--database-url``,
            ``--database-read-url``) is not one we can use.
    """
    _check_read_url(settings.database_read_url)
    if not settings.database_url:
        embedded = EmbeddedPostgres(settings.data_dir)
        try:
            url = embedded.start()
        except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
            cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise SettingsError(
                f"--data-dir {str(settings.data_dir)!r}: cannot start the embedded PostgreSQL "
                f"there ({cause}); give an empty or earlier agent-memory folder with --data-dir "
                "(or MEMORY_DATA_DIR), or a server with --database-url"
            ) from exc
        try:
            migration = migrate.upgrade(url)
        except BaseException:
            embedded.stop()
            raise
        log.info("using database: %s; %s", describe_database(url, embedded), migration.describe())
        return url, embedded, migration
    deadline = time.monotonic() + settings.database_wait_seconds
    pause = 0.25
    while True:
        try:
            migration = migrate.upgrade(settings.database_url)
            log.info(
                "using database: %s; %s",
                describe_database(settings.database_url, None),
                migration.describe(),
            )
            return settings.database_url, None, migration
        except (ValueError, sa_exc.ArgumentError, sa_exc.DBAPIError) as exc:
            orig = getattr(exc, "orig", None)
            cause = str(orig or exc).strip().splitlines()[0]
            # Not answering yet (starting, restarting) is worth waiting for; a refusal
            # with a reason (no such role or database, a wrong password) or a URL libpq
            # cannot use (an unknown option, a port out of range) is not.
            waitable = isinstance(orig, psycopg.OperationalError) and _worth_waiting(cause)
            left = deadline - time.monotonic()
            if not waitable or left <= 0:
                raise SettingsError(_database_fix(settings, cause, waited=waitable)) from exc
            if pause == 0.25:
                log.warning(
                    "the database at %s does not answer yet (%s); retrying for up to %.0fs "
                    "(--database-wait)",
                    redacted_url(settings.database_url),
                    cause,
                    settings.database_wait_seconds,
                )
            time.sleep(min(pause, left))
            pause = min(pause * 2, 5.0)


def _check_read_url(url: str | None) -> None:
    """A standby's URL libpq can use; whether the standby answers is found out as reads
    go (they go to the primary while it does not).

    Raises: SettingsError — it is not such a URL."""
    if not url:
        return
    try:
        psycopg.conninfo.conninfo_to_dict(libpq_url(url))
    except (ValueError, sa_exc.ArgumentError, psycopg.ProgrammingError) as exc:
        cause = str(exc).strip().splitlines()[0]
        raise SettingsError(
            f"--database-read-url {redacted_url(url)}: cannot use it ({cause}); give the "
            "standby's URL as postgresql://USER@HOST:PORT/DB (--database-read-url or "
            "MEMORY_DATABASE_READ_URL), or drop it to read from the primary"
        ) from exc


def _worth_waiting(cause: str) -> bool:
    """No answer at all, or a server that is starting, stopping or full: it may answer
    soon. A server that refused with a reason (no such database or role) will not."""
    if "invalid" in cause:  # libpq refusing the URL itself: "invalid port number"
        return False
    if "FATAL:" not in cause:
        return True
    return any(
        passing in cause
        for passing in ("starting up", "shutting down", "in recovery", "too many clients")
    )


def _database_fix(settings: Settings, cause: str, *, waited: bool) -> str:
    url = redacted_url(settings.database_url or "")
    if waited:
        return (
            f"--database-url {url}: no answer after {settings.database_wait_seconds:.0f}s "
            f"({cause}); check that the server is up and the URL is "
            "postgresql://USER@HOST:PORT/DB (--database-url or MEMORY_DATABASE_URL; wait "
            "longer with --database-wait)"
        )
    if "unsupported database URL scheme" in cause or "Could not parse" in cause:
        fix = "give a URL of the form postgresql://USER@HOST:PORT/DB"
    elif "permission denied for schema" in cause:
        fix = (
            "the user must be able to create tables there: GRANT CREATE ON SCHEMA public "
            "TO the user, or make it the database's owner (ALTER DATABASE ... OWNER TO ...)"
        )
    elif "does not exist" in cause and "database" in cause:
        fix = "create the database (createdb NAME) or name another in the URL"
    elif "role" in cause or "authentication" in cause or "password" in cause:
        fix = "fix the user or password in the URL, or create the role on the server"
    else:
        fix = "check that the server is up and the URL is postgresql://USER@HOST:PORT/DB"
    return (
        f"--database-url {url}: cannot use it ({cause}); {fix} "
        "(--database-url or MEMORY_DATABASE_URL)"
    )
