"""Run memory: active sessions and runs, decision cards, card types and re-examinations.

Agent settings gain the active memory switch.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25 22:06:34.946586
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "active_sessions",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("agent_id", sa.String(length=255), nullable=False),
        sa.Column("session_id", sa.String(length=255), nullable=True),
        sa.Column("session_updated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_reset_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "(session_id IS NULL) = (session_updated_at IS NULL)",
            name=op.f("ck_active_sessions_session"),
        ),
        sa.PrimaryKeyConstraint("tenant_id", "agent_id", name=op.f("pk_active_sessions")),
    )
    op.create_table(
        "agent_runs",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("agent_id", sa.String(length=255), nullable=False),
        sa.Column("run_id", sa.String(length=255), nullable=False),
        sa.Column("session_id_before", sa.String(length=255), nullable=True),
        sa.Column("session_id_after", sa.String(length=255), nullable=True),
        sa.Column("carried", sa.Boolean(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "NOT carried OR session_id_after IS NOT NULL", name=op.f("ck_agent_runs_carried")
        ),
        sa.CheckConstraint(
            "char_length(run_id) BETWEEN 1 AND 255", name=op.f("ck_agent_runs_run_id_length")
        ),
        sa.PrimaryKeyConstraint("tenant_id", "agent_id", "run_id", name=op.f("pk_agent_runs")),
    )
    op.create_index(
        "ix_agent_runs_recorded",
        "agent_runs",
        ["tenant_id", "agent_id", "recorded_at"],
        unique=False,
    )
    op.create_table(
        "card_types",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("re_examinable", sa.String(length=16), nullable=False),
        sa.Column(
            "actions", postgresql.ARRAY(sa.Text()), server_default=sa.text("'{}'"), nullable=False
        ),
        sa.Column(
            "decision_actions",
            postgresql.ARRAY(sa.Text()),
            server_default=sa.text("'{}'"),
            nullable=False,
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "re_examinable IN ('never', 'always', 'until_resolved')",
            name=op.f("ck_card_types_re_examinable"),
        ),
        sa.PrimaryKeyConstraint("tenant_id", "name", name=op.f("pk_card_types")),
    )
    op.create_table(
        "decisions",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("run_id", sa.String(length=255), nullable=False),
        sa.Column("agent_id", sa.String(length=255), nullable=False),
        sa.Column("card_type", sa.String(length=64), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("summary", sa.String(length=200), nullable=False),
        sa.Column("result", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("resolution_status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "(resolution_status = 'open') = (resolved_at IS NULL)",
            name=op.f("ck_decisions_resolved_at"),
        ),
        sa.CheckConstraint(
            "resolution_status IN ('open', 'resolved', 'expired')",
            name=op.f("ck_decisions_resolution_status"),
        ),
        sa.ForeignKeyConstraint(
            ["tenant_id", "card_type"],
            ["card_types.tenant_id", "card_types.name"],
            name="fk_decisions_card_type",
        ),
        sa.PrimaryKeyConstraint("tenant_id", "id", name=op.f("pk_decisions")),
        sa.UniqueConstraint("tenant_id", "run_id", name=op.f("uq_decisions_tenant_id_run_id")),
    )
    op.create_index(
        "ix_decisions_recent",
        "decisions",
        ["tenant_id", "agent_id", "created_at", "id"],
        unique=False,
    )
    op.create_table(
        "reexaminations",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("parent_decision_id", sa.UUID(), nullable=False),
        sa.Column("run_id", sa.String(length=255), nullable=False),
        sa.Column("conviction_score", sa.SmallInteger(), nullable=False),
        sa.Column("notes", sa.String(length=500), nullable=False),
        sa.Column("suggested_action", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "conviction_score BETWEEN 0 AND 100", name=op.f("ck_reexaminations_conviction_score")
        ),
        sa.ForeignKeyConstraint(
            ["tenant_id", "parent_decision_id"],
            ["decisions.tenant_id", "decisions.id"],
            name="fk_reexaminations_parent",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("tenant_id", "id", name=op.f("pk_reexaminations")),
        sa.UniqueConstraint("tenant_id", "run_id", name=op.f("uq_reexaminations_tenant_id_run_id")),
    )
    op.create_index(
        "ix_reexaminations_history",
        "reexaminations",
        ["tenant_id", "parent_decision_id", "created_at", "id"],
        unique=False,
    )
    op.add_column(
        "agent_settings",
        sa.Column(
            "active_memory_enabled", sa.Boolean(), server_default=sa.text("false"), nullable=False
        ),
    )


def downgrade() -> None:
    op.drop_column("agent_settings", "active_memory_enabled")
    op.drop_index("ix_reexaminations_history", table_name="reexaminations")
    op.drop_table("reexaminations")
    op.drop_index("ix_decisions_recent", table_name="decisions")
    op.drop_table("decisions")
    op.drop_table("card_types")
    op.drop_index("ix_agent_runs_recorded", table_name="agent_runs")
    op.drop_table("agent_runs")
    op.drop_table("active_sessions")
