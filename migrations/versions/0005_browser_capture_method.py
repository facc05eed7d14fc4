"""captures.method and extractions.source: how a capture was made, what a text was made from

A capture is made over HTTP, in a browser (snapshotter.browser), from a local file, or by
importing a web archive; ``method`` says which (NULL for captures recorded before it was
kept). An extraction is made from the stored raw bytes (``raw``: deterministic, ``snap
reextract`` can redo it) or is the text a browser rendered in one capture (``rendered``: its
key names that capture's browser document, and it cannot be made again). Both tables are
rebuilt on SQLite to carry the check constraints; neither has triggers.

Revision ID: browser_0005
Revises: 0004
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "browser_0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("captures", schema=None) as batch_op:
        batch_op.add_column(sa.Column("method", sa.String(length=10), nullable=True))
        batch_op.create_check_constraint(
            "method_known", "method IS NULL OR method IN ('http', 'browser', 'file', 'import')"
        )
    with op.batch_alter_table("extractions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("source", sa.String(length=10), server_default="raw", nullable=False)
        )
        batch_op.create_check_constraint("source_known", "source IN ('raw', 'rendered')")


def downgrade() -> None:
    with op.batch_alter_table("extractions", schema=None) as batch_op:
        batch_op.drop_constraint("source_known", type_="check")
        batch_op.drop_column("source")
    with op.batch_alter_table("captures", schema=None) as batch_op:
        batch_op.drop_constraint("method_known", type_="check")
        batch_op.drop_column("method")
