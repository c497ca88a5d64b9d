"""The schema lives in Alembic revisions: one head, reversible, matching the models."""

from __future__ import annotations

import logging
from collections.abc import Callable

import psycopg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine

from agent_memory.store import migrate
from agent_memory.store.database import sqlalchemy_url
from agent_memory.store.models import Base


@pytest.fixture
def fresh_url(create_database: Callable[[], str]) -> str:
    return create_database()


def tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
    return {r[0] for r in rows}


def test_there_is_exactly_one_head() -> None:
    assert len(migrate.heads()) == 1


def test_upgrade_downgrade_upgrade(fresh_url: str) -> None:
    migrate.upgrade(fresh_url)
    expected = {t.name for t in Base.metadata.sorted_tables}
    assert expected <= tables(fresh_url)
    migrate.downgrade(fresh_url, "base")
    assert tables(fresh_url) <= {"alembic_version"}
    migrate.upgrade(fresh_url)
    assert expected <= tables(fresh_url)


def test_the_migrations_build_exactly_the_models(fresh_url: str) -> None:
    migrate.upgrade(fresh_url)
    engine = create_engine(sqlalchemy_url(fresh_url))
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    finally:
        engine.dispose()
    assert diff == []


def test_every_table_leads_with_tenant_id(fresh_url: str) -> None:
    migrate.upgrade(fresh_url)
    with psycopg.connect(fresh_url) as conn:
        rows = conn.execute(
            """
            SELECT c.table_name, c.column_name
            FROM information_schema.columns c
            WHERE c.table_schema = 'public' AND c.ordinal_position = 1
              AND c.table_name <> 'alembic_version'
            """
        ).fetchall()
        keys = conn.execute(
            """
            SELECT tc.table_name, kcu.column_name
            FROM information_schema.table_constraints tc
            JOIN information_schema.key_column_usage kcu
              ON kcu.constraint_name = tc.constraint_name AND kcu.ordinal_position = 1
            WHERE tc.table_schema = 'public' AND tc.constraint_type = 'PRIMARY KEY'
              AND tc.table_name <> 'alembic_version'
            """
        ).fetchall()
    assert rows
    assert keys
    assert all(column == "tenant_id" for _, column in rows), rows
    assert all(column == "tenant_id" for _, column in keys), keys


def test_pgvector_is_installed_where_the_server_has_it_and_skipped_with_a_word_elsewhere(
    fresh_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="alembic.runtime.migration"):
        migrate.upgrade(fresh_url)
    with psycopg.connect(fresh_url) as conn:
        available = conn.execute(
            "SELECT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'vector')"
        ).fetchone()
        installed = conn.execute(
            "SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'vector')"
        ).fetchone()
    if available == (True,):
        assert installed == (True,)
    else:
        assert installed == (False,)
        assert "pgvector is not available on this server: recall stays lexical" in caplog.text
