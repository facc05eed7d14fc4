#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs snap into .venv, starts the services the
# tests need (LocalStack's S3 on the host; PostgreSQL is the machine's own), runs the linters,
# the type checker and pytest, and stops what it started.
set -euo pipefail
cd "$(dirname "$0")/.."

python_bin=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$python_bin" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]' 2>&1 \
    | grep -v -e 'is ignored: it is neither' -e "does not provide the extra" || true

started_localstack=0
cleanup() {
    if [ "$started_localstack" = 1 ]; then bash localstack/stop.sh || true; fi
}
trap cleanup EXIT

if [ -z "${SNAP_TEST_S3_ENDPOINT:-}" ]; then
    bash localstack/start.sh
    started_localstack=1
    export SNAP_TEST_S3_ENDPOINT=http://127.0.0.1:4566
fi
export SNAP_TEST_DATABASE_URL=${SNAP_TEST_DATABASE_URL:-postgresql+psycopg://root@127.0.0.1:5432/postgres}

echo "== ruff"; .venv/bin/ruff check .
echo "== mypy"; .venv/bin/mypy
echo "== pytest"; .venv/bin/python -m pytest "$@"
