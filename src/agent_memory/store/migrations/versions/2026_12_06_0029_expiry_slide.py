"""Expiry that slides with use: ``expiry_slide`` on an agent's settings, and settings of
a workspace (``workspace_settings``) holding the same for its memories. Zero is off, as
every expiry stood before.

``expiry_after_use(memory)`` is a memory's expiry once it is used now: the statement
that marks a use (``store.memories.mark_used``) sets it in the same UPDATE, and a
function keeps the render's statement, which holds that UPDATE, under the length
psycopg parses once per connection.

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-06 05:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "agent_settings",
        sa.Column("expiry_slide", sa.Interval(), server_default=sa.text("'0'"), nullable=False),
    )
    op.create_table(
        "workspace_settings",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("workspace_id", sa.String(length=255), nullable=False),
        sa.Column("expiry_slide", sa.Interval(), server_default=sa.text("'0'"), nullable=False),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("updated_by", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "workspace_id", name=op.f("pk_workspace_settings")),
    )
    op.execute(_EXPIRY_AFTER_USE)


def downgrade() -> None:
    op.execute("DROP FUNCTION expiry_after_use(memories)")
    op.drop_table("workspace_settings")
    op.drop_column("agent_settings", "expiry_slide")


# A live memory that expires is kept at least its owner's slide past now; one that never
# expires, or has expired, keeps its expiry. No settings, or a slide of zero, keep it too.
_EXPIRY_AFTER_USE = """
CREATE FUNCTION expiry_after_use(m memories) RETURNS timestamptz
LANGUAGE sql VOLATILE AS $$
SELECT CASE WHEN m.expire_time > clock_timestamp() THEN greatest(
    m.expire_time,
    clock_timestamp() + (
        SELECT s.expiry_slide FROM agent_settings AS s
        WHERE m.scope = 'agent' AND s.tenant_id = m.tenant_id AND s.agent_id = m.owner_id
        UNION ALL
        SELECT w.expiry_slide FROM workspace_settings AS w
        WHERE m.scope = 'workspace' AND w.tenant_id = m.tenant_id
          AND w.workspace_id = m.owner_id))
ELSE m.expire_time END
$$
"""
