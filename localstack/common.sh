# Shared by start.sh and stop.sh: where things live and how to ask LocalStack if it is healthy.
# shellcheck shell=bash

fail() {
    echo "localstack: error: $*" >&2
    exit 1
}

listen="${SNAP_LOCALSTACK_LISTEN:-127.0.0.1:4566}"
port="${listen##*:}"
host="${listen%:*}"
endpoint="http://$host:$port"
timeout="${SNAP_LOCALSTACK_TIMEOUT:-120}"
requirements="$here/requirements.txt"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/snap"
req_hash="$(sha256sum "$requirements" | cut -c1-16)"
venv="$cache/localstack-$req_hash"
state="${SNAP_LOCALSTACK_STATE:-$cache/run-$port}"
pidfile="$state/localstack.pid"
log="$state/localstack.log"

# An interpreter >= 3.13: LocalStack 2026.x needs it, while snap itself runs on 3.11.
find_python() {
    local candidate
    for candidate in "${SNAP_LOCALSTACK_PYTHON:-}" python3.13 /root/.pyenv/versions/3.13*/bin/python \
        "$HOME"/.pyenv/versions/3.13*/bin/python python3; do
        [[ -n "$candidate" ]] || continue
        command -v "$candidate" >/dev/null 2>&1 || continue
        if "$candidate" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 13) else 1)' \
            >/dev/null 2>&1; then
            echo "$candidate"
            return 0
        fi
    done
    for candidate in "${SNAP_LOCALSTACK_PYTHON:-}" python3.14 python3; do
        [[ -n "$candidate" ]] || continue
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 13) else 1)' \
                >/dev/null 2>&1; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

# Prints "ok" when /_localstack/health says s3 is available or running, else a short reason.
# Any Python will do for this probe; proxies are bypassed because the address is loopback.
health_status() {
    local probe
    probe="$(command -v python3 || find_python || true)"
    [[ -n "$probe" ]] || { echo "no python3 to probe health"; return 0; }
    "$probe" - "$endpoint/_localstack/health" <<'PY' 2>/dev/null || echo "not answering"
import json, sys, urllib.request
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    with opener.open(sys.argv[1], timeout=2) as response:
        services = json.load(response).get("services", {})
except Exception as error:  # noqa: BLE001 - any failure just means "not ready yet"
    print(f"not answering ({type(error).__name__})")
    sys.exit(0)
state = services.get("s3")
print("ok" if state in ("available", "running") else f"s3 is {state!r}")
PY
}

port_in_use() {
    local probe
    probe="$(command -v python3 || find_python)"
    "$probe" - "$host" "$port" <<'PY'
import socket, sys
with socket.socket() as s:
    s.settimeout(1)
    sys.exit(0 if s.connect_ex((sys.argv[1], int(sys.argv[2]))) == 0 else 1)
PY
}

# Build the cached virtual environment once; a marker file says the install finished, and a lock
# keeps two concurrent starts from building it at the same time.
ensure_venv() {
    [[ -f "$venv/.complete" ]] && return 0
    local python
    python="$(find_python)" || fail "no Python >= 3.13 found (set SNAP_LOCALSTACK_PYTHON)"
    mkdir -p "$cache"
    exec 9>"$venv.lock"
    flock 9
    if [[ ! -f "$venv/.complete" ]]; then
        echo "localstack: building $venv with $python (one time; log: $venv.install.log)"
        rm -rf "$venv"
        "$python" -m venv "$venv"
        if ! "$venv/bin/python" -m pip install --no-input -r "$requirements" \
            >"$venv.install.log" 2>&1; then
            tail -n 20 "$venv.install.log" >&2
            fail "pip install of $requirements failed; full log: $venv.install.log"
        fi
        touch "$venv/.complete"
    fi
    flock -u 9
}
