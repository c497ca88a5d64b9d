"""Alembic, driven from code: ``agent-memory migrate`` and start-up both use this."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

from agent_memory.store.database import sqlalchemy_url

SCRIPT_LOCATION = "agent_memory.store:migrations"


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    config.attributes["url"] = sqlalchemy_url(url)
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Bring the schema up to ``revision``; running it twice is harmless."""
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    command.downgrade(alembic_config(url), revision)


def heads(url: str = "postgresql://localhost/unused") -> list[str]:
    return list(ScriptDirectory.from_config(alembic_config(url)).get_heads())
