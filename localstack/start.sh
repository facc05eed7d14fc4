#!/usr/bin/env bash
# Start LocalStack's S3 on this host, without Docker, and wait until it answers.
#
# The virtual environment is built once per version of requirements.txt and cached outside the
# clone (${XDG_CACHE_HOME:-~/.cache}/snap/localstack-<hash>), so a fresh clone in CI reuses it.
# A LocalStack that is already healthy on the address is left alone (exit 0).
#
# Settings (environment):
#   SNAP_LOCALSTACK_LISTEN   host:port to listen on             (default 127.0.0.1:4566)
#   SNAP_LOCALSTACK_PYTHON   interpreter >= 3.13 for the venv   (default: found on PATH or pyenv)
#   SNAP_LOCALSTACK_TIMEOUT  seconds to wait for readiness      (default 120)
#   SNAP_LOCALSTACK_STATE    folder for pid file, log and data  (default <cache>/run-<port>)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=localstack/common.sh
source "$here/common.sh"

if [[ "$(health_status)" == ok ]]; then
    echo "localstack: already healthy at $endpoint (nothing to do)"
    exit 0
fi
if port_in_use; then
    fail "something else is listening on $listen but it is not a healthy LocalStack;" \
        "stop it or set SNAP_LOCALSTACK_LISTEN"
fi

ensure_venv

mkdir -p "$state/data"
: >"$log"
echo "localstack: starting on $endpoint (log: $log)"
started_ms=$(date +%s%3N)
# Host mode, S3 only, nothing that reaches outside this machine: no DNS server, no analytics
# events, no certificate download, and LocalStack's platform API (consulted for its
# service catalogue) pointed at a closed loopback port.  Data lives in memory (PERSISTENCE=0);
# FILESYSTEM_ROOT keeps LocalStack's working folders under $state instead of the site-packages.
env -u PYTHONPATH -u VIRTUAL_ENV \
    GATEWAY_LISTEN="$listen" \
    GATEWAY_SERVER="${SNAP_LOCALSTACK_SERVER:-hypercorn}" \
    SERVICES=s3 \
    EAGER_SERVICE_LOADING=1 \
    PERSISTENCE=0 \
    DNS_ADDRESS=0 \
    DISABLE_EVENTS=1 \
    SKIP_SSL_CERT_DOWNLOAD=1 \
    API_ENDPOINT=http://127.0.0.1:9/v1 \
    ANALYTICS_API=http://127.0.0.1:9/v1 \
    FILESYSTEM_ROOT="$state/data" \
    setsid "$venv/bin/python" -m localstack.runtime.main >>"$log" 2>&1 </dev/null &
echo $! >"$pidfile"

deadline=$((started_ms / 1000 + timeout))
while :; do
    status="$(health_status)"
    if [[ "$status" == ok ]]; then
        elapsed_ms=$(($(date +%s%3N) - started_ms))
        printf 'localstack: S3 ready at %s after %d.%01d s (pid %s)\n' \
            "$endpoint" $((elapsed_ms / 1000)) $((elapsed_ms % 1000 / 100)) "$(cat "$pidfile")"
        exit 0
    fi
    if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
        tail -n 30 "$log" >&2 || true
        rm -f "$pidfile"
        fail "LocalStack exited during startup (last health: $status); full log: $log"
    fi
    if (($(date +%s) >= deadline)); then
        tail -n 30 "$log" >&2 || true
        "$here/stop.sh" >/dev/null 2>&1 || true
        fail "S3 not ready at $endpoint within ${timeout}s (last health: $status); full log: $log"
    fi
    sleep 1
done
