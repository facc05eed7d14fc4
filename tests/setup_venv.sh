#!/usr/bin/env bash
# .venv for the test suite, quick on a machine that has run the suite before.
#
# Installing snap's dependencies (the dev extra included: about 900 MB, 400 packages) is most of
# a fresh clone's set-up. They are installed once into a virtual environment cached outside the
# clone, named by a hash of what decides its contents: the requirement lists in pyproject.toml,
# the interpreter, and pip's configuration and constraints. A change to any of them builds a new
# one; an unchanged one is reused by every clone on the machine.
#
# The clone's own .venv stays small: a venv without packages whose site-packages reads the
# cached one's through a .pth file (the way pipx shares one environment between its apps), with
# snap installed into it editable, and the cached environment's scripts copied into .venv/bin
# with their first line pointed at .venv/bin/python. So .venv/bin/python imports this clone's
# snap and every dependency, and .venv/bin/ruff, mypy, wacz, ... run as they would in a normal
# install.
#
# A .venv that this script did not make (a developer's own) is left alone and only brought up
# to date with `pip install -e '.[dev]'`, as before. SNAP_TEST_VENV_CACHE=0 does the same
# for a new .venv (a plain install, no cache).
set -euo pipefail
cd "$(dirname "$0")/.."

python_bin=${PYTHON:-python3}
marker=.venv/.snap-test-deps

plain_install() {
    if [ ! -x .venv/bin/python ]; then
        "$python_bin" -m venv .venv
    fi
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]' 2>&1 \
        | grep -v -e 'is ignored: it is neither' -e "does not provide the extra" || true
}

if [ "${SNAP_TEST_VENV_CACHE:-1}" = 0 ] || { [ -e .venv ] && [ ! -f "$marker" ]; }; then
    plain_install
    exit 0
fi

# The requirement lines of [project] dependencies and the dev extra, one a line.
requirements=$("$python_bin" - <<'PY'
import tomllib

with open("pyproject.toml", "rb") as file:
    project = tomllib.load(file)["project"]
for line in project["dependencies"] + project["optional-dependencies"]["dev"]:
    print(line)
PY
)
key=$(
    {
        printf '%s\n' "$requirements"
        "$python_bin" -c 'import sys; print(sys.version, sys.platform, sys.executable)'
        "$python_bin" -m pip config list 2>/dev/null || true
        cat "${PIP_CONSTRAINT:-/dev/null}" /etc/xdg/pip/constraints.txt 2>/dev/null || true
    } | sha256sum | cut -c1-16
)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/snap"
deps="$cache/test-deps-$key"

# Build the cached environment once; a marker says the install finished, and a lock keeps two
# clones from building it at the same time.
if [ ! -f "$deps/.complete" ]; then
    mkdir -p "$cache"
    exec 9>"$deps.lock"
    flock 9
    if [ ! -f "$deps/.complete" ]; then
        echo "tests/setup_venv.sh: installing snap's dependencies into $deps (once per change of pyproject.toml)"
        rm -rf "$deps"
        "$python_bin" -m venv "$deps"
        printf '%s\n' "$requirements" >"$deps/requirements.txt"
        # pip's own exit status decides: a failed install must never be marked complete.
        if ! "$deps/bin/python" -m pip install --quiet --disable-pip-version-check \
            -r "$deps/requirements.txt" >"$deps.log" 2>&1; then
            grep -v -e 'is ignored: it is neither' "$deps.log" >&2 || true
            echo "tests/setup_venv.sh: installing the dependencies failed (log: $deps.log)" >&2
            exit 1
        fi
        touch "$deps/.complete"
    fi
    flock -u 9
    exec 9>&-
fi

if [ -f "$marker" ] && [ "$(cat "$marker")" = "$deps" ] && [ -x .venv/bin/python ]; then
    exit 0
fi
rm -rf .venv
"$python_bin" -m venv --without-pip .venv
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
deps_site=$("$deps/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
echo "import site; site.addsitedir('$deps_site')" >"$site/_snap_test_deps.pth"
# The scripts of the dependencies (ruff, mypy, lint-imports, wacz, pip, ...): those pip wrote
# for the cached interpreter are run by this venv's instead; others (ruff's binary) are linked.
for script in "$deps"/bin/*; do
    name=$(basename "$script")
    [ -f "$script" ] || continue
    case "$name" in python* | activate* | Activate*) continue ;; esac
    if [ "$(head -c 300 "$script" | head -n 1 | tr -d '\0')" = "#!$deps/bin/python" ]; then
        { echo "#!$PWD/.venv/bin/python"; tail -n +2 "$script"; } >".venv/bin/$name"
        chmod +x ".venv/bin/$name"
    else
        ln -s "$script" ".venv/bin/$name"
    fi
done
if ! .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
    --no-build-isolation -e . >.venv/install.log 2>&1; then
    grep -v -e 'is ignored: it is neither' .venv/install.log >&2 || true
    echo "tests/setup_venv.sh: installing snap into .venv failed" >&2
    exit 1
fi
.venv/bin/python -c 'import snap.cli, pytest, mypy' # the layering works, or this run stops here
echo "$deps" >"$marker"
