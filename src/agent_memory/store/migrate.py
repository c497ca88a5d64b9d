"""Alembic, driven from code: ``agent-memory migrate`` and start-up both use this."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from agent_memory.store.database import sqlalchemy_url

SCRIPT_LOCATION = "agent_memory.store:migrations"


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    config.attributes["url"] = sqlalchemy_url(url)
    return config


@dataclass(frozen=True)
class Migration:
    """What an upgrade did: the revision before (None: no schema) and after."""

    before: str | None
    after: str | None

    def describe(self) -> str:
        if self.before == self.after:
            return f"schema already at revision {self.after}"
        if self.before is None:
            return f"schema created at revision {self.after}"
        return f"schema upgraded from revision {self.before} to {self.after}"


def current(url: str) -> str | None:
    """The schema's revision, or None when the database has none."""
    engine = sa.create_engine(sqlalchemy_url(url), poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def upgrade(url: str, revision: str = "head") -> Migration:
    """Bring the schema up to ``revision``; running it twice is harmless."""
    before = current(url)
    command.upgrade(alembic_config(url), revision)
    return Migration(before, current(url))


def downgrade(url: str, revision: str) -> None:
    command.downgrade(alembic_config(url), revision)


def heads(url: str = "postgresql://localhost/unused") -> list[str]:
    return list(ScriptDirectory.from_config(alembic_config(url)).get_heads())
