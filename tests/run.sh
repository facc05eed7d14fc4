#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs snap into .venv, starts the services the
# tests need (LocalStack's S3 on the host; PostgreSQL is the machine's own), runs the linters,
# the type checker and pytest, and stops what it started.
set -euo pipefail
cd "$(dirname "$0")/.."

# .venv: snap editable over its dependencies, which are cached outside the clone (see
# tests/setup_venv.sh). pywb (the replay test's tool) is .venv-pywb, cached the same way (see
# tests/exports/setup_pywb.sh); it is built meanwhile.
bash tests/exports/setup_pywb.sh &
pywb_pid=$!
bash tests/setup_venv.sh
wait "$pywb_pid"

started_localstack=0
moto_pid=
cleanup() {
    if [ "$started_localstack" = 1 ]; then bash localstack/stop.sh || true; fi
    if [ -n "$moto_pid" ]; then kill "$moto_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

# The S3 tests need a real S3 API over HTTP. LocalStack is the one we test against; if it cannot
# start, moto's server (also over HTTP) stands in, loudly, rather than the S3 tests being skipped.
start_moto_instead() {
    echo "tests/run.sh: WARNING: LocalStack did not start; running the S3 tests against moto's server" >&2
    local port=${SNAP_TEST_MOTO_PORT:-4567}
    .venv/bin/moto_server -H 127.0.0.1 -p "$port" >"${TMPDIR:-/tmp}/snap-moto-$port.log" 2>&1 &
    moto_pid=$!
    for _ in $(seq 50); do
        .venv/bin/python -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/', timeout=1)" \
            2>/dev/null && break
        sleep 0.2
    done
    export SNAP_TEST_S3_ENDPOINT=http://127.0.0.1:$port
}

# start.sh exits 0 both when it started LocalStack and when one was already healthy; only the
# first is ours to stop, so ask first (a shared LocalStack must outlive this run).
localstack_healthy() {
    # shellcheck disable=SC2034  # `here` is read by common.sh
    (here=localstack; source localstack/common.sh; [[ "$(health_status)" == ok ]])
}

if [ -z "${SNAP_TEST_S3_ENDPOINT:-}" ]; then
    if localstack_healthy; then
        echo "tests/run.sh: using the LocalStack already running (it is left running)"
        export SNAP_TEST_S3_ENDPOINT=http://127.0.0.1:4566
    elif bash localstack/start.sh; then
        started_localstack=1
        export SNAP_TEST_S3_ENDPOINT=http://127.0.0.1:4566
    else
        start_moto_instead
    fi
fi
echo "tests/run.sh: S3 tests use $SNAP_TEST_S3_ENDPOINT"
export SNAP_TEST_DATABASE_URL=${SNAP_TEST_DATABASE_URL:-postgresql+psycopg://root@127.0.0.1:5432/postgres}

# The evidence page is opened in Debian's headless Chromium (tests/exports/); install it here,
# as set-up, when it is missing and apt can install it. The tests never install anything: without
# Chromium they are skipped, and say why.
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then sudo_cmd=(); else sudo_cmd=(sudo -n); fi
    echo "tests/run.sh: installing Debian's chromium for the evidence page browser tests"
    install_chromium() {
        "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
    }
    install_chromium || { "${sudo_cmd[@]}" apt-get update -q >/dev/null && install_chromium; } \
        || echo "tests/run.sh: WARNING: could not install chromium; the browser tests will be skipped" >&2
fi

echo "== ruff"; .venv/bin/ruff check .
# mypy's cache lives outside the clone, one per mypy release: mypy re-checks every module whose
# source or dependencies differ from what the cache recorded, so clones can share it.
mypy_cache="${XDG_CACHE_HOME:-$HOME/.cache}/snap/mypy-$(.venv/bin/mypy --version | sha256sum | cut -c1-16)"
echo "== mypy"; .venv/bin/mypy --cache-dir "$mypy_cache"
echo "== lint-imports"; .venv/bin/lint-imports --no-cache
# pytest-xdist: one pytest session per worker (so each has its own PostgreSQL database, S3
# bucket and SQLite template), whole files per worker (module fixtures start once). 0: no workers.
# --durations: the slowest tests are named in every run's log, so a run that grows slower says
# where (CI stops at 90 minutes).
workers=${SNAP_TEST_WORKERS:-$(nproc 2>/dev/null || echo 2)}
echo "== pytest ($workers workers)"
status=0
.venv/bin/python -m pytest -n "$workers" --dist loadfile --durations=30 "$@" || status=$?
# Exit code 5 is "no tests collected": a filter or a collection change that ran nothing is a
# failure of the run, never a quiet pass.
if [ "$status" = 5 ]; then echo "tests/run.sh: pytest collected no tests" >&2; fi
exit "$status"
