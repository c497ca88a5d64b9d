"""Blocks of a workspace: shared by the users of its tenant, so a workspace block has
no user (``user_id`` is empty) and its owner column (``agent_id``) holds the
workspace's id. The key, the versions and the archival lines keep their columns.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-06 02:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_constraint(op.f("ck_blocks_scope"), "blocks", type_="check")
    op.create_check_constraint(
        op.f("ck_blocks_scope"), "blocks", "scope IN ('user', 'agent', 'workspace')"
    )
    op.create_check_constraint(
        op.f("ck_blocks_user_id"), "blocks", "(scope = 'workspace') = (user_id = '')"
    )


def downgrade() -> None:
    # Workspace blocks go with their versions and lines: the older schema has no owner
    # for them.
    where = "user_id = '' AND scope = 'workspace'"
    for table in ("archival_lines", "archival_vocabulary", "archival_terms", "block_versions"):
        op.execute(f"DELETE FROM {table} WHERE {where}")
    op.execute(f"DELETE FROM blocks WHERE {where}")
    op.drop_constraint(op.f("ck_blocks_user_id"), "blocks", type_="check")
    op.drop_constraint(op.f("ck_blocks_scope"), "blocks", type_="check")
    op.create_check_constraint(op.f("ck_blocks_scope"), "blocks", "scope IN ('user', 'agent')")
