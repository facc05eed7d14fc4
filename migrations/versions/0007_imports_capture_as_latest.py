"""captures.as_latest: whether a capture may be its URL's latest over snap's own captures

A capture imported from another tool's archive keeps its own time, but it must not become the
URL's latest snapshot over a capture snap made itself (an archive dated 2001, imported today,
would otherwise make every citation snap verified itself look changed). snap's own captures
are true; imports are false unless ``snap import --as-latest`` asked. Captures already
imported (provenance ``source`` = ``warc``) are set false here.

Revision ID: imports_0007
Revises: attest_0006
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "imports_0007"
down_revision: str | None = "attest_0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("captures") as batch:
        batch.add_column(
            sa.Column("as_latest", sa.Boolean(), nullable=False, server_default=sa.true())
        )
    if op.get_bind().dialect.name == "postgresql":
        imported = "provenance ->> 'source' = 'warc'"
    else:
        imported = "json_extract(provenance, '$.source') = 'warc'"
    op.execute(f"UPDATE captures SET as_latest = false WHERE {imported}")  # noqa: S608 (fixed text)


def downgrade() -> None:
    with op.batch_alter_table("captures") as batch:
        batch.drop_column("as_latest")
