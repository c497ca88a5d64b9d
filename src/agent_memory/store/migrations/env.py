"""Alembic environment: online migrations over a synchronous psycopg connection."""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import create_engine, pool

from agent_memory.store.database import sqlalchemy_url
from agent_memory.store.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.attributes.get("url") or config.get_main_option("sqlalchemy.url")
    url = url or os.environ.get("MEMORY_DATABASE_URL")
    if not url:
        raise RuntimeError("no database URL: pass one or set MEMORY_DATABASE_URL")
    return sqlalchemy_url(str(url))


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    # A failed statement's error names its SQL, never its parameters.
    engine = create_engine(_url(), poolclass=pool.NullPool, hide_parameters=True)
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=target_metadata)
        with context.begin_transaction():
            # Serialise concurrent start-ups of several replicas on one database.
            connection.exec_driver_sql("SELECT pg_advisory_xact_lock(727274261)")
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
