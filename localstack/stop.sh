#!/usr/bin/env bash
# Stop the LocalStack that start.sh started (found through its pid file); anything else that
# listens on the port is left alone.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=localstack/common.sh
source "$here/common.sh"

if [[ ! -f "$pidfile" ]]; then
    echo "localstack: not started by start.sh (no $pidfile); nothing to stop"
    exit 0
fi
pid="$(cat "$pidfile")"
if ! kill -0 "$pid" 2>/dev/null; then
    echo "localstack: process $pid is already gone"
    rm -f "$pidfile"
    exit 0
fi

# start.sh runs LocalStack under setsid, so its pid is also its process group: signal the
# group to take any helper processes down with it.
kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
for _ in $(seq 1 30); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
done
if kill -0 "$pid" 2>/dev/null; then
    echo "localstack: $pid did not stop within 15 s; killing it" >&2
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid"
fi
rm -f "$pidfile"
echo "localstack: stopped (pid $pid)"
