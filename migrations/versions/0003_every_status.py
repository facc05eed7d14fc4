"""verifications.status accepts every status of verifier.status.Status

The checks added since 0001 (context_mismatch from the exact matcher, no_quote and
snippet_not_verbatim for model-provider citations) are recorded under their own names.

PostgreSQL swaps the CHECK constraint in place. SQLite cannot alter a constraint, so the table
is rebuilt (every row copied) and its append-only triggers, dropped with the old table, are
created again: the audit trail is never left open to UPDATE or DELETE after the migration.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_STATUSES = (
    "quote_found",
    "not_found",
    "could_not_check",
    "position_mismatch",
    "stale_fingerprint",
    "integrity_failure",
    "unknown_snapshot",
    "source_changed",
)
NEW_STATUSES = (*OLD_STATUSES, "context_mismatch", "no_quote", "snippet_not_verbatim")
CONSTRAINT = "ck_verifications_status_known"
APPEND_ONLY = "verifications are append-only"


def _check(statuses: Sequence[str]) -> str:
    return "status IN (" + ", ".join(f"'{status}'" for status in statuses) + ")"


def _replace_check(statuses: Sequence[str]) -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE verifications DROP CONSTRAINT {CONSTRAINT}")
        op.execute(f"ALTER TABLE verifications ADD CONSTRAINT {CONSTRAINT} CHECK ({_check(statuses)})")
        return
    with op.batch_alter_table("verifications", recreate="always") as batch:
        batch.drop_constraint(op.f(CONSTRAINT), type_="check")
        batch.create_check_constraint(op.f(CONSTRAINT), _check(statuses))
    _sqlite_append_only_triggers()


def _sqlite_append_only_triggers() -> None:
    """The triggers of revision 0001, on the rebuilt table."""
    for action in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER verifications_no_{action.lower()} BEFORE {action} ON verifications"
            f" BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END"
        )
    op.execute(
        "CREATE TRIGGER verifications_no_replace BEFORE INSERT ON verifications"
        " WHEN EXISTS (SELECT 1 FROM verifications WHERE id = NEW.id)"
        f" BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END"
    )


def upgrade() -> None:
    _replace_check(NEW_STATUSES)


def downgrade() -> None:
    _replace_check(OLD_STATUSES)
