"""extractions.code_hash, code_version_id: where an extracted text is code

The HTML extractor records the code-point ranges of text from ``<code>``, ``<pre>``, ``<kbd>``
and ``<samp>`` as a ``code`` blob beside the text (snapshotter.extract.code_spans); the
extraction names it, and ``verify``/``reverify`` give it to the matcher, which compares code as
code. NULL for every extraction made before, and for texts with no code. The table is rebuilt
on SQLite to carry the digest check; it has no triggers.

Revision ID: codespans_0008
Revises: imports_0007
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import records.models

revision: str = "codespans_0008"
down_revision: str | None = "imports_0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("extractions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("code_hash", sa.String(length=71), nullable=True))
        batch_op.add_column(sa.Column("code_version_id", sa.String(length=1024), nullable=True))
        batch_op.create_check_constraint(
            "code_hash_digest", records.models.digest_check("code_hash")
        )


def downgrade() -> None:
    with op.batch_alter_table("extractions", schema=None) as batch_op:
        batch_op.drop_constraint("code_hash_digest", type_="check")
        batch_op.drop_column("code_version_id")
        batch_op.drop_column("code_hash")
