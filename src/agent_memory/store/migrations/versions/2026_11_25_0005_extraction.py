"""The usage ledger and the queue of extraction passes.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25 22:08:57.261335
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "extraction_jobs",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("synthetic_session_id", sa.String(length=300), nullable=False),
        sa.Column("agent_id", sa.String(length=255), nullable=False),
        sa.Column("workspace_id", sa.String(length=255), nullable=True),
        sa.Column("session_id", sa.String(length=255), nullable=True),
        sa.Column("chain_id", sa.String(length=255), nullable=True),
        sa.Column("actor_user_id", sa.String(length=255), nullable=False),
        sa.Column("transcript", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), server_default="queued", nullable=False),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column(
            "run_after", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("outcome", sa.String(length=32), nullable=True),
        sa.Column("detail", sa.Text(), server_default="", nullable=False),
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
            "status IN ('queued', 'running', 'done')", name=op.f("ck_extraction_jobs_status")
        ),
        sa.PrimaryKeyConstraint("tenant_id", "id", name=op.f("pk_extraction_jobs")),
    )
    op.create_index(
        "ix_extraction_jobs_due", "extraction_jobs", ["status", "run_after"], unique=False
    )
    op.create_index(
        "uq_extraction_jobs_pending",
        "extraction_jobs",
        ["tenant_id", "synthetic_session_id"],
        unique=True,
        postgresql_where=sa.text("status = 'queued'"),
    )
    op.create_table(
        "usage_records",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("synthetic_session_id", sa.String(length=300), nullable=False),
        sa.Column("agent_id", sa.String(length=255), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cost_usd", sa.Numeric(precision=14, scale=8), nullable=False),
        sa.Column("outcome", sa.String(length=32), nullable=False),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("tenant_id", "id", name=op.f("pk_usage_records")),
    )
    op.create_index(
        "ix_usage_records_session",
        "usage_records",
        ["tenant_id", "synthetic_session_id", "recorded_at"],
        unique=False,
    )
    op.create_index(
        "ix_usage_records_time", "usage_records", ["tenant_id", "recorded_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_usage_records_time", table_name="usage_records")
    op.drop_index("ix_usage_records_session", table_name="usage_records")
    op.drop_table("usage_records")
    op.drop_index(
        "uq_extraction_jobs_pending",
        table_name="extraction_jobs",
        postgresql_where=sa.text("status = 'queued'"),
    )
    op.drop_index("ix_extraction_jobs_due", table_name="extraction_jobs")
    op.drop_table("extraction_jobs")
