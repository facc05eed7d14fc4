"""extractions as records of their own; verification run ids and idempotency keys

Every existing row is kept. Each snapshot gets one extraction row made from its own text
columns (decoding 'unrecorded': snap did not record the declared charset before), and each
citation pinned to a snapshot is pinned to that extraction. Verifications are append-only, so
old rows are not touched: a NULL extraction_id means the snapshot's first extraction.

Columns are added in place (no table rebuild), so the append-only triggers stay as they are.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import records.models
from records.urls import canonical_url

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DIGEST_CHECK = (
    "{0} IS NULL OR (length({0}) = 71 AND substr({0}, 1, 7) = 'sha256:'"
    " AND ltrim(substr({0}, 8), '0123456789abcdef') = '')"
)


def upgrade() -> None:
    op.create_table(
        "extractions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("snapshot_id", sa.String(length=71), nullable=False),
        sa.Column("extractor", sa.String(length=300), nullable=False),
        sa.Column("decoding", sa.String(length=300), nullable=False),
        sa.Column("content_type", sa.Text(), nullable=False),
        sa.Column("text_hash", sa.String(length=71), nullable=True),
        sa.Column("norm_hash", sa.String(length=71), nullable=True),
        sa.Column("text_size", sa.Integer(), nullable=True),
        sa.Column("normalizer", sa.String(length=100), nullable=False),
        sa.Column("text_version_id", sa.String(length=1024), nullable=True),
        sa.Column("pages", sa.JSON(), nullable=False),
        sa.Column("flags", sa.JSON(), nullable=False),
        sa.Column("created_at", records.models.UTCDateTime(), nullable=False),
        sa.CheckConstraint(
            DIGEST_CHECK.format("norm_hash"), name=op.f("ck_extractions_norm_hash_digest")
        ),
        sa.CheckConstraint(
            DIGEST_CHECK.format("text_hash"), name=op.f("ck_extractions_text_hash_digest")
        ),
        sa.ForeignKeyConstraint(
            ["snapshot_id"], ["snapshots.id"], name=op.f("fk_extractions_snapshot_id_snapshots")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_extractions")),
        sa.UniqueConstraint(
            "snapshot_id", "extractor", "decoding", name="uq_extractions_snapshot_extractor"
        ),
    )
    op.add_column("citations", sa.Column("extraction_id", sa.Integer(), nullable=True))
    op.create_index("ix_citations_extraction_id", "citations", ["extraction_id"], unique=False)
    op.add_column("verifications", sa.Column("extraction_id", sa.Integer(), nullable=True))
    op.add_column("verifications", sa.Column("run_id", sa.String(length=64), nullable=True))
    op.add_column(
        "verifications", sa.Column("idempotency_key", sa.String(length=71), nullable=True)
    )
    op.create_index(
        "ix_verifications_idempotency_key", "verifications", ["idempotency_key"], unique=True
    )
    op.create_index("ix_verifications_run_id", "verifications", ["run_id"], unique=False)
    op.add_column("captures", sa.Column("url_key", sa.Text(), nullable=True))
    op.add_column("captures", sa.Column("final_url_key", sa.Text(), nullable=True))
    op.add_column("citations", sa.Column("url_key", sa.Text(), nullable=True))
    op.create_index("ix_captures_url_key", "captures", ["url_key"], unique=False)
    op.create_index("ix_captures_final_url_key", "captures", ["final_url_key"], unique=False)
    op.create_index("ix_citations_url_key", "citations", ["url_key"], unique=False)
    _fill_url_keys()
    op.execute(
        "INSERT INTO extractions (snapshot_id, extractor, decoding, content_type, text_hash,"
        " norm_hash, text_size, normalizer, text_version_id, pages, flags, created_at)"
        " SELECT id, extractor, 'unrecorded', content_type, text_hash, norm_hash, text_size,"
        " normalizer, text_version_id, pages, flags, created_at FROM snapshots ORDER BY created_at, id"
    )
    op.execute(
        "UPDATE citations SET extraction_id = (SELECT e.id FROM extractions e"
        " WHERE e.snapshot_id = citations.snapshot_id) WHERE snapshot_id IS NOT NULL"
    )


def _fill_url_keys() -> None:
    """Lookup keys for the URLs already recorded (the URLs themselves are not changed)."""
    connection = op.get_bind()
    captures = connection.execute(sa.text("SELECT id, url, final_url FROM captures")).all()
    for row_id, url, final_url in captures:
        connection.execute(
            sa.text("UPDATE captures SET url_key = :u, final_url_key = :f WHERE id = :i"),
            {"u": canonical_url(url), "f": final_url and canonical_url(final_url), "i": row_id},
        )
    citations = connection.execute(sa.text("SELECT id, url FROM citations")).all()
    for row_id, url in citations:
        connection.execute(
            sa.text("UPDATE citations SET url_key = :u WHERE id = :i"),
            {"u": url and canonical_url(url), "i": row_id},
        )


def downgrade() -> None:
    op.drop_index("ix_citations_url_key", table_name="citations")
    op.drop_index("ix_captures_final_url_key", table_name="captures")
    op.drop_index("ix_captures_url_key", table_name="captures")
    op.drop_column("citations", "url_key")
    op.drop_column("captures", "final_url_key")
    op.drop_column("captures", "url_key")
    op.drop_index("ix_verifications_run_id", table_name="verifications")
    op.drop_index("ix_verifications_idempotency_key", table_name="verifications")
    op.drop_column("verifications", "idempotency_key")
    op.drop_column("verifications", "run_id")
    op.drop_column("verifications", "extraction_id")
    op.drop_index("ix_citations_extraction_id", table_name="citations")
    op.drop_column("citations", "extraction_id")
    op.drop_table("extractions")
