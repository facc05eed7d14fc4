"""batches and batch_items: the state of work split into tasks for workers

A batch (a list of URLs to capture, a re-verification split by snapshot group, a
re-extraction split by snapshot) and its items live in the database, not in the broker, so a
lost message is found by the items that are not done. New tables only: nothing existing is
touched, and the append-only triggers on verifications stay as they are.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import records.models

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "batches",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("created_at", records.models.UTCDateTime(), nullable=False),
        sa.CheckConstraint(
            "kind IN ('capture', 'reverify', 'reextract')", name=op.f("ck_batches_kind_known")
        ),
        sa.CheckConstraint("total >= 0", name=op.f("ck_batches_total_nonnegative")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_batches")),
    )
    op.create_table(
        "batch_items",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("batch_id", sa.String(length=32), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=10), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("error_kind", sa.String(length=10), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("result", sa.Text(), nullable=True),
        sa.Column("updated_at", records.models.UTCDateTime(), nullable=False),
        sa.CheckConstraint(
            "state IN ('pending', 'running', 'done', 'failed')",
            name=op.f("ck_batch_items_state_known"),
        ),
        sa.CheckConstraint(
            "error_kind IS NULL OR error_kind IN ('transient', 'permanent')",
            name=op.f("ck_batch_items_error_kind_known"),
        ),
        sa.ForeignKeyConstraint(
            ["batch_id"], ["batches.id"], name=op.f("fk_batch_items_batch_id_batches")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_batch_items")),
        sa.UniqueConstraint("batch_id", "key", name="uq_batch_items_batch_id_key"),
    )
    op.create_index(
        "ix_batch_items_batch_id_state", "batch_items", ["batch_id", "state"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_batch_items_batch_id_state", table_name="batch_items")
    op.drop_table("batch_items")
    op.drop_table("batches")
