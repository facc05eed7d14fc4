#!/usr/bin/env bash
# pywb, the replay tool the other side may run, in a virtual environment of its own
# (.venv-pywb): pywb installs a top-level package named `tests` that would shadow snap's own
# tests/ in the main .venv, and it pins its own dependencies. Set-up only: the replay test runs
# the installed `wb-manager` and `wayback` and never installs anything itself.
#
# The environment is built once per machine, outside the clone (named by a hash of the pinned
# release, the interpreter and pip's configuration, so a change of any of them builds a new
# one), and .venv-pywb is a link to it. SNAP_TEST_VENV_CACHE=0 builds it inside the clone.
set -euo pipefail
cd "$(dirname "$0")/../.."
python_bin=${PYTHON:-python3}
requirement='pywb==2.10.0'

# pip's own exit status is returned: a failed install is never marked complete.
install_into() {
    "$python_bin" -m venv "$1"
    if ! "$1/bin/python" -m pip install --quiet --disable-pip-version-check "$requirement" \
        >"$1.log" 2>&1; then
        grep -v -e 'is ignored: it is neither' "$1.log" >&2 || true
        echo "tests/exports/setup_pywb.sh: WARNING: installing $requirement failed" >&2
        return 1
    fi
}

if [ "${SNAP_TEST_VENV_CACHE:-1}" = 0 ]; then
    if [ ! -x .venv-pywb/bin/wayback ]; then
        rm -rf .venv-pywb
        install_into .venv-pywb || true  # the replay test then says pywb is missing
    fi
else
    key=$(
        {
            echo "$requirement"
            "$python_bin" -c 'import sys; print(sys.version, sys.platform, sys.executable)'
            "$python_bin" -m pip config list 2>/dev/null || true
        } | sha256sum | cut -c1-16
    )
    cache="${XDG_CACHE_HOME:-$HOME/.cache}/snap"
    venv="$cache/pywb-$key"
    if [ ! -f "$venv/.complete" ]; then
        mkdir -p "$cache"
        exec 9>"$venv.lock"
        flock 9
        if [ ! -f "$venv/.complete" ]; then
            rm -rf "$venv"
            if install_into "$venv"; then touch "$venv/.complete"; fi
        fi
        flock -u 9
        exec 9>&-
    fi
    if [ "$(readlink .venv-pywb 2>/dev/null)" != "$venv" ]; then
        rm -rf .venv-pywb
        ln -s "$venv" .venv-pywb
    fi
fi
.venv-pywb/bin/wayback --help >/dev/null
