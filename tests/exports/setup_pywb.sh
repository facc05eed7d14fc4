#!/usr/bin/env bash
# pywb, the replay tool the other side may run, in a virtual environment of its own
# (.venv-pywb): pywb installs a top-level package named `tests` that would shadow snap's own
# tests/ in the main .venv, and it pins its own dependencies. Set-up only: the replay test runs
# the installed `wb-manager` and `wayback` and never installs anything itself.
set -euo pipefail
cd "$(dirname "$0")/../.."
python_bin=${PYTHON:-python3}
if [ ! -x .venv-pywb/bin/wayback ]; then
    "$python_bin" -m venv .venv-pywb
    .venv-pywb/bin/python -m pip install --quiet --disable-pip-version-check 'pywb==2.10.0' 2>&1 \
        | grep -v -e 'is ignored: it is neither' || true
fi
.venv-pywb/bin/wayback --help >/dev/null
