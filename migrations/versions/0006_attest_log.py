"""log_entries and log_checkpoints: the verifiable Merkle log of records (issue 22)

New tables only, append-only in the database itself like verifications (UPDATE and DELETE are
refused by triggers; on PostgreSQL TRUNCATE too). The log does not rely on the triggers:
``snap log verify`` finds a change made with them dropped.

Revision ID: attest_0006
Revises: browser_0005
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import records.models

revision: str = "attest_0006"
down_revision: str | None = "browser_0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("log_entries", "log_checkpoints")
APPEND_ONLY = "the log is append-only"


def upgrade() -> None:
    op.create_table(
        "log_entries",
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("record_id", sa.String(length=200), nullable=False),
        sa.Column("leaf_hash", sa.String(length=71), nullable=False),
        sa.Column("appended_at", records.models.UTCDateTime(), nullable=False),
        sa.CheckConstraint(
            records.models.digest_check("leaf_hash"), name=op.f("ck_log_entries_leaf_hash_digest")
        ),
        sa.CheckConstraint(
            "kind IN ('capture', 'extraction', 'verification')",
            name=op.f("ck_log_entries_kind_known"),
        ),
        sa.CheckConstraint("position >= 0", name=op.f("ck_log_entries_position_nonnegative")),
        sa.PrimaryKeyConstraint("position", name=op.f("pk_log_entries")),
        sa.UniqueConstraint("kind", "record_id", name="uq_log_entries_kind_record"),
    )
    op.create_table(
        "log_checkpoints",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tree_size", sa.Integer(), nullable=False),
        sa.Column("root_hash", sa.String(length=71), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("signature", sa.JSON(), nullable=False),
        sa.Column("timestamp", sa.JSON(), nullable=False),
        sa.Column("created_at", records.models.UTCDateTime(), nullable=False),
        sa.CheckConstraint(
            records.models.digest_check("root_hash"),
            name=op.f("ck_log_checkpoints_root_hash_digest"),
        ),
        sa.CheckConstraint("tree_size >= 0", name=op.f("ck_log_checkpoints_tree_size_nonnegative")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_log_checkpoints")),
    )
    for table in TABLES:
        _forbid_changes(table)


def _forbid_changes(table: str) -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(  # the function of revision 0001
            f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table}"
            " FOR EACH ROW EXECUTE FUNCTION snap_refuse_change()"
        )
        op.execute(
            f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}"
            " FOR EACH STATEMENT EXECUTE FUNCTION snap_refuse_change()"
        )
        return
    for action in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER {table}_no_{action.lower()} BEFORE {action} ON {table}"
            f" BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END"
        )


def downgrade() -> None:
    op.drop_table("log_checkpoints")
    op.drop_table("log_entries")
