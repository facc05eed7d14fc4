#!/usr/bin/env bash
# Run every test module on its own (`pytest FILE`, one after another), as the brief asks: a
# module that passes only after another has imported or set something up fails here. Not part
# of tests/run.sh (it starts a new pytest per module, about 150 of them); run it after
# tests/run.sh has made .venv, with the SNAP_TEST_* variables of docs/index.md if the defaults
# do not fit. Extra arguments go to each pytest (e.g. -x, or -p no:randomly).
#
#   bash tests/each_module_alone.sh [PYTEST ARGS...]
#
# Prints one line per module (exit code, seconds, pytest's summary) and, at the end, the
# modules that failed; exits 1 if any did. SNAP_TEST_MODULES=FILE... limits it to those files.
set -uo pipefail
cd "$(dirname "$0")/.."

mapfile -t modules < <(
    if [ -n "${SNAP_TEST_MODULES:-}" ]; then
        printf '%s\n' $SNAP_TEST_MODULES
    else
        find tests -name 'test_*.py' | sort
    fi
)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=()
for module in "${modules[@]}"; do
    start=$(date +%s)
    .venv/bin/python -m pytest -n 0 -q -p no:cacheprovider "$@" "$module" >"$log" 2>&1
    status=$?
    printf '%s  %4ss  %s  %s\n' "$status" "$(($(date +%s) - start))" "$module" "$(tail -n 1 "$log")"
    if [ "$status" != 0 ]; then
        failed+=("$module")
        grep -E '^(FAILED|ERROR) ' "$log" | head -n 20 | sed 's/^/    /'
    fi
done
echo "${#modules[@]} modules, ${#failed[@]} failed: ${failed[*]:-none}"
[ "${#failed[@]}" = 0 ]
