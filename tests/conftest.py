"""Shared fixtures: a real PostgreSQL and a real gRPC server on a loopback port.

By default the suite starts its own embedded PostgreSQL. With
``MEMORY_TEST_DATABASE_URL`` set it uses that server instead. Either way the
run gets a fresh database of its own, dropped at the end.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import hypothesis
import psycopg
import pytest
from psycopg import sql

from agent_memory.config import Settings
from agent_memory.store import migrate
from agent_memory.store.embedded import EmbeddedPostgres
from tests.support import Client, ServerThread, database_url_for, has_pgvector

TEST_DATABASE_ENV = "MEMORY_TEST_DATABASE_URL"

# No property test has a deadline: an example's time says how busy the machine is, not
# whether the code is right (a first example that waits on a cold import was failed).
hypothesis.settings.register_profile("agent-memory", deadline=None)
hypothesis.settings.load_profile("agent-memory")

# Imported whole before any server thread starts: the local model imports numpy on
# a server's thread at its first call, and pytest.approx on the test's thread reads a
# half-imported numpy from sys.modules if the two meet.
with contextlib.suppress(ImportError):
    importlib.import_module("numpy")


@pytest.fixture(scope="session")
def postgres_admin_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A URL to a maintenance database on a real PostgreSQL server."""
    external = os.environ.get(TEST_DATABASE_ENV)
    if external:
        yield external
        return
    embedded = EmbeddedPostgres(tmp_path_factory.mktemp("embedded-postgres"))
    url = embedded.start()
    try:
        yield url
    finally:
        embedded.stop()


@pytest.fixture(scope="session")
def create_database(postgres_admin_url: str) -> Iterator[object]:
    """A factory of fresh, empty databases on the test server; all dropped at the end."""
    created: list[str] = []

    def make(prefix: str = "am_test") -> str:
        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(postgres_admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        created.append(name)
        return database_url_for(postgres_admin_url, name)

    yield make
    with psycopg.connect(postgres_admin_url, autocommit=True) as conn:
        for name in created:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture(scope="session")
def database_url(create_database: object) -> str:
    """The session's migrated database, shared by the e2e tests."""
    url: str = create_database()  # type: ignore[operator]
    migrate.upgrade(url)
    return url


@pytest.fixture(scope="module")
def module_database(create_database: object) -> str:
    """A migrated database of the module's own: an index worker over it embeds what the
    module wrote, not first the lines every earlier test of the process left behind
    (the claims go round the tenants, and each test writes as a tenant of its own)."""
    url: str = create_database()  # type: ignore[operator]
    migrate.upgrade(url)
    return url


@pytest.fixture(scope="session")
def server(database_url: str) -> Iterator[ServerThread]:
    """The production server (interceptors, health, reflection) on a free loopback port,
    with its HTTP side on another."""
    # No expiry sweep during the run: a test that needs one starts a server of its own
    # that sweeps, so expired rows stay until a test looks at them.
    settings = Settings(http_listen="127.0.0.1:0", expiry_sweep_seconds=3600)
    running = ServerThread(database_url, settings=settings)
    with running:
        yield running


@pytest.fixture
def client(server: ServerThread) -> Iterator[Client]:
    """A caller with its own API key in a tenant no other test uses."""
    with server.client() as c:
        yield c


@pytest.fixture(scope="module")
def pgvector(database_url: str) -> bool:
    """Whether the test database has pgvector (recall ranks by meaning)."""
    return has_pgvector(database_url)


@pytest.fixture
def other_client(server: ServerThread) -> Iterator[Client]:
    """A caller of a second, separate tenant."""
    with server.client() as c:
        yield c


@pytest.fixture(scope="session")
def project_root() -> Path:
    return Path(__file__).resolve().parent.parent
