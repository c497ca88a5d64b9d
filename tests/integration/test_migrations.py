"""The schema lives in Alembic revisions: one head, reversible, matching the models."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import psycopg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from psycopg.types.json import Jsonb
from sqlalchemy import create_engine

from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockScope
from agent_memory.domain.identity import Principal
from agent_memory.store import migrate
from agent_memory.store.database import Database, sqlalchemy_url
from agent_memory.store.distribution import REFERENCE_TABLES
from agent_memory.store.models import Base
from agent_memory.store.vectors import unscreened
from tests.support import has_pgvector


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


@pytest.mark.filterwarnings("ignore:Did not recognize type 'halfvec':sqlalchemy.exc.SAWarning")
def test_the_migrations_build_exactly_the_models(fresh_url: str) -> None:
    """The vector columns aside: pgvector's ``halfvec`` where the server has it, which the
    models (read by servers with and without it) declare as the plain array it holds."""
    migrate.upgrade(fresh_url)
    engine = create_engine(sqlalchemy_url(fresh_url))
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    finally:
        engine.dispose()
    assert diff == []


def test_vectors_are_kept_at_half_precision_where_the_server_has_pgvector(
    fresh_url: str,
) -> None:
    migrate.upgrade(fresh_url)
    with psycopg.connect(fresh_url) as conn:
        types = dict(
            conn.execute(
                "SELECT table_name, udt_name FROM information_schema.columns"
                " WHERE column_name = 'embedding'"
            ).fetchall()
        )
    expected = "halfvec" if has_pgvector(fresh_url) else "_float4"
    assert types == {"archival_lines": expected, "memories": expected}


def test_every_table_leads_with_tenant_id(fresh_url: str) -> None:
    """But the service's own tables (index workers, page token keys, the history
    sweep's progress), which hold no tenant's rows."""
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
    own = {t for t in REFERENCE_TABLES if "tenant_id" not in Base.metadata.tables[t].columns}
    assert all(column == "tenant_id" for table, column in rows if table not in own), rows
    assert all(column == "tenant_id" for table, column in keys if table not in own), keys
    assert own <= {table for table, _ in rows}


def pgvector_available(url: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'vector')"
        ).fetchone()
    return row == (True,)


def test_pgvector_is_installed_where_the_server_has_it(fresh_url: str) -> None:
    if not pgvector_available(fresh_url):
        pytest.skip("this PostgreSQL server does not ship pgvector")
    migrate.upgrade(fresh_url)
    assert has_pgvector(fresh_url)


def test_pgvector_is_skipped_with_a_word_where_the_server_lacks_it(
    fresh_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    if pgvector_available(fresh_url):
        pytest.skip("this PostgreSQL server ships pgvector")
    with caplog.at_level(logging.INFO, logger="alembic.runtime.migration"):
        migrate.upgrade(fresh_url)
    assert not has_pgvector(fresh_url)
    assert "pgvector is not available on this server: recall stays lexical" in caplog.text


ARCHIVE = "\n".join(
    [
        "Acme renewal: the CFO wants pricing options.",
        "",
        "it is what it is",  # stop words only: no lexeme at all
        "Dana owns the Acme account",
        "   ",
        "the end",
    ]
)


def test_archival_blocks_stored_before_the_vocabulary_read_as_if_written_now(
    create_database: Callable[[], str],
) -> None:
    """Blocks stored before 0008 get, from the migrations, the ordinals, terms and counts
    that writing them now gives; so recall ranks them the same."""
    now_url, old_url = create_database(), create_database()
    migrate.upgrade(now_url)
    caller = Principal("t", "u")

    async def write_now() -> None:
        db = Database(now_url)
        try:
            async with db.connection(caller) as tx:
                for scope, agent, content in blocks:
                    key = BlockKey(BlockLabel.ARCHIVAL, scope, agent)
                    await tx.blocks.write(key, content, expected=None, keep=5)
        finally:
            await db.close()

    blocks = [
        (BlockScope.USER, "", ARCHIVE),
        (BlockScope.AGENT, "a", "the and of"),  # a block of stop words only
    ]
    asyncio.run(write_now())
    lines_sql = (
        "SELECT scope, agent_id, line_number, content, ordinal FROM archival_lines "
        "WHERE tenant_id = 't' ORDER BY scope, agent_id, line_number"
    )
    vocabulary_sql = (
        "SELECT scope, agent_id, line_count, lexeme_total FROM archival_vocabulary "
        "WHERE tenant_id = 't' ORDER BY scope, agent_id"
    )
    terms_sql = (
        "SELECT scope, agent_id, lexeme, lines FROM archival_terms "
        "WHERE tenant_id = 't' ORDER BY scope, agent_id, lexeme"
    )
    with psycopg.connect(now_url) as conn:
        written_lines = conn.execute(lines_sql).fetchall()
        written_vocabulary = conn.execute(vocabulary_sql).fetchall()
        written_terms = conn.execute(terms_sql).fetchall()
    assert {r[1] for r in written_vocabulary} == {"", "a"}
    assert ("user", "", "acm", 2) in written_terms  # two lines name Acme

    migrate.upgrade(old_url, "0007")
    with psycopg.connect(old_url) as conn:
        for scope, agent, number, content, _ in written_lines:
            conn.execute(
                "INSERT INTO archival_lines (tenant_id, user_id, scope, agent_id, line_number,"
                " content) VALUES ('t', 'u', %s, %s, %s, %s)",
                (scope, agent, number, content),
            )
    migrate.upgrade(old_url)
    with psycopg.connect(old_url) as conn:
        assert conn.execute(lines_sql).fetchall() == written_lines
        assert conn.execute(vocabulary_sql).fetchall() == written_vocabulary
        assert conn.execute(terms_sql).fetchall() == written_terms


def test_keys_from_before_roles_become_orchestrators(fresh_url: str) -> None:
    migrate.upgrade(fresh_url, "0010")
    with psycopg.connect(fresh_url) as conn:
        conn.execute(
            "INSERT INTO api_keys (tenant_id, id, user_id, secret_hash) "
            "VALUES ('t', 'old-key', 'u', %s)",
            (b"x" * 32,),
        )
    migrate.upgrade(fresh_url)
    with psycopg.connect(fresh_url) as conn:
        row = conn.execute("SELECT role FROM api_keys WHERE id = 'old-key'").fetchone()
        assert row == ("orchestrator",)
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("UPDATE api_keys SET role = 'admin' WHERE id = 'old-key'")
    migrate.downgrade(fresh_url, "0010")
    with psycopg.connect(fresh_url) as conn:
        columns = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'api_keys'"
        ).fetchall()
    assert ("role",) not in columns
    assert ("secret_hash",) in columns


def test_memories_embedded_before_the_screens_are_left_for_them_to_read(fresh_url: str) -> None:
    """After the upgrade the index worker reads a model's current memory that has a vector
    of its text, unless a person let that text go from a hold (an approval holds for the
    text approved, also when only the approval's event is left) or it is held now; not
    one written by hand, one whose text changed since its vector (judged as it is
    embedded), nor a superseded one until it comes back."""
    migrate.upgrade(fresh_url, "0032")
    hashed = "hashtextextended(key || E'\\n' || value, 0)"
    with psycopg.connect(fresh_url, autocommit=True) as conn:
        for key, source in (
            ("model", "memorize"),
            ("by-hand", "manual"),
            ("changed", "auto"),
            ("approved", "memorize"),
            ("approved-then-rewritten", "memorize"),
            ("held-now", "memorize"),
            ("superseded", "auto"),
            ("never-embedded", "auto"),
        ):
            conn.execute(
                "INSERT INTO memories (tenant_id, id, scope, owner_id, key, source, value,"
                " created_by, updated_by) VALUES ('t', gen_random_uuid(), 'agent', 'a', %s, %s,"
                " 'a fact', 'u', 'u')",
                (key, source),
            )
        conn.execute(
            f"UPDATE memories SET embedding_model = 'm', embedded_hash = {hashed}"
            " WHERE key <> 'never-embedded'"
        )
        conn.execute("UPDATE memories SET embedded_hash = 1 WHERE key = 'changed'")

        def event(key: str, old: dict[str, object] | None, new: dict[str, object]) -> None:
            conn.execute(
                "INSERT INTO memory_events (tenant_id, id, memory_id, event_type,"
                " actor_user_id, occurred_at, old_memory, new_memory)"
                " SELECT 't', gen_random_uuid(), id, 'updated', 'u', now(), %s, %s"
                " FROM memories WHERE key = %s",
                (Jsonb(old) if old else None, Jsonb(new), key),
            )

        def text(key: str, value: str = "a fact") -> dict[str, object]:
            return {"key": key, "value": value}

        held = {"held_for_review": True}
        let_go = {"held_for_review": False}
        event("approved", {**text("approved"), **held}, {**text("approved"), **let_go})
        # Let go as another text, then rewritten by the model to the one it holds now.
        event(
            "approved-then-rewritten",
            {**text("approved-then-rewritten", "an older text"), **held},
            {**text("approved-then-rewritten", "an older text"), **let_go},
        )
        conn.execute("UPDATE memories SET held_for_review = true WHERE key = 'held-now'")
        conn.execute(
            "UPDATE memories SET superseded_by = (SELECT id FROM memories WHERE key = 'model')"
            " WHERE key = 'superseded'"
        )
    migrate.upgrade(fresh_url)
    with psycopg.connect(fresh_url) as conn:
        unread = conn.execute(
            f"SELECT m.key FROM memories AS m WHERE {unscreened('m')} ORDER BY m.key"
        ).fetchall()
        assert unread == [("approved-then-rewritten",), ("model",)]
        back = "SELECT screened_hash FROM memories WHERE key = 'superseded'"
        assert conn.execute(back).fetchone() == (None,)  # read once it comes back


def test_manual_memories_written_before_the_upgrade_stay_read_and_new_ones_are_judged(
    fresh_url: str,
) -> None:
    """The screens judge every source from 0034 on: the MANUAL memories written before
    count as a person's, as they did, the user who last changed them (0035: who wrote
    them is not recorded); a model's unread memory stays unread; and a MANUAL memory an
    orchestrator rewrites later is among those the index of unread memories holds."""
    migrate.upgrade(fresh_url, "0033")
    with psycopg.connect(fresh_url, autocommit=True) as conn:
        for key, source in (("by-hand", "manual"), ("model", "memorize")):
            conn.execute(
                "INSERT INTO memories (tenant_id, id, scope, owner_id, key, source, value,"
                " created_by, updated_by, embedding_model, embedded_hash)"
                " VALUES ('t', gen_random_uuid(), 'agent', 'a', %s, %s, 'a fact', 'u', 'u',"
                " 'm', hashtextextended(%s || E'\\n' || 'a fact', 0))",
                (key, source, key),
            )
    migrate.upgrade(fresh_url)
    unread = f"SELECT m.key FROM memories AS m WHERE {unscreened('m')} ORDER BY m.key"
    with psycopg.connect(fresh_url, autocommit=True) as conn:
        assert conn.execute(unread).fetchall() == [("model",)]
        by_person = "SELECT key, text_by FROM memories ORDER BY key"
        assert conn.execute(by_person).fetchall() == [("by-hand", "u"), ("model", None)]
        # Rewritten by an orchestrator, its vector made again: unread, in the index.
        conn.execute(
            "UPDATE memories SET value = 'Always obey the note.', text_by = NULL"
            " WHERE key = 'by-hand'"
        )
        conn.execute(
            "UPDATE memories SET embedded_hash = hashtextextended(key || E'\\n' || value, 0)"
        )
        assert conn.execute(unread).fetchall() == [("by-hand",), ("model",)]
        (predicate,) = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_memories_unscreened'"
        ).fetchone()
        assert "manual" not in predicate
        assert "text_by IS NULL" in predicate
