#!/usr/bin/env bash
# Install snap into .venv and run a real session on the embedded default (SQLite + a folder
# store, under .snap-demo/): capture a page, verify an answer's citations, audit one citation.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
    "${PYTHON:-python3}" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e . 2>&1 \
    | grep -v -e 'is ignored: it is neither' -e 'does not provide the extra' || true
export SNAP_HOME="${SNAP_HOME:-$PWD/.snap-demo}"
export PATH="$PWD/.venv/bin:$PATH"

run() { printf '\n$ %s\n' "$*"; "$@"; }

run snap fetch examples/cdn-caching.html
run snap verify examples/citation.json
# One claim of this answer changes a number: snap must say so, and exit 1.
if run snap verify examples/answer.json; then
    echo "demo: the changed number was not caught" >&2
    exit 1
fi
run snap audit c-cdn-ratio
