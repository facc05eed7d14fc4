#!/usr/bin/env bash
# The production sketch of compose.yaml, on the services a development machine already runs:
# PostgreSQL on 127.0.0.1:5432, Redis on 127.0.0.1:6379 and LocalStack's S3 on 127.0.0.1:4566
# (`bash localstack/start.sh`). It prepares the store and the database, starts one worker and the
# HTTP service, and stops both on Ctrl-C or SIGTERM. Every setting can be overridden from the
# environment; the defaults are this machine's services.
#
#   createdb -h 127.0.0.1 -U root snap      # once
#   bash examples/production/run.sh         # then: curl http://127.0.0.1:8080/healthz
set -euo pipefail
cd "$(dirname "$0")/../.."
snap=${SNAP_COMMAND:-.venv/bin/snap}

export SNAP_DATABASE_URL=${SNAP_DATABASE_URL:-postgresql+psycopg://root@127.0.0.1:5432/snap}
export SNAP_STORE=${SNAP_STORE:-s3://snap-evidence/snap}
export SNAP_BROKER_URL=${SNAP_BROKER_URL:-redis://127.0.0.1:6379/0}
export SNAP_QUEUE=${SNAP_QUEUE:-snap}
export AWS_ENDPOINT_URL=${AWS_ENDPOINT_URL:-http://127.0.0.1:4566}
export AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID:-test} AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-test}
export AWS_DEFAULT_REGION=${AWS_DEFAULT_REGION:-us-east-1}

"$snap" store init
"$snap" db upgrade

pids=()
stop() {
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
}
trap stop EXIT
trap 'exit 0' INT TERM
"$snap" worker --concurrency "${SNAP_WORKER_CONCURRENCY:-2}" --loglevel WARNING &
pids+=($!)
"$snap" serve --host 127.0.0.1 --port "${SNAP_PORT:-8080}" &
pids+=($!)
wait -n "${pids[@]}"  # one of them ended on its own: stop the other, and fail
exit 1
