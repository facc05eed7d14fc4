"""Alembic migrations for snap's database (run with ``snap db upgrade`` or on first SQLite use)."""
