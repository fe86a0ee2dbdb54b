#!/usr/bin/env bash
# The whole test suite, from a fresh clone with only python3 on the machine.
#
# Creates .venv (if missing), builds and installs frozenmap with its test
# dependencies (a real, non-editable install, so a missing package file fails
# here as it would for a user), then runs, cheapest first:
#   1. the static checks, scripts/checks/0*.sh (lint: a minute at most);
#   2. pytest over both cores;
#   3. every other check in scripts/checks/*.sh in number order (typing,
#      packaging and docs before the runs on other Pythons, the sanitizer,
#      leak and fuzz runs last).  Each check gets $ROOT, $VENV and $PY.
# frozenmap is built from a clean copy of the tree (scripts/clean-copy.sh), so
# a stale build/ folder cannot stand in for a build that fails now.
#
# Check numbers are unique and give the order; a new check takes a free
# number where its cost puts it (0x: static, before pytest; 10-49: under a
# few minutes each; 50 and up: long runs).
#
# Takes 15-25 minutes on a 2-core machine (QUICK=1: a few minutes) and needs a
# C compiler with the Python headers, the ASan runtime (libasan, with gcc) for
# scripts/checks/60-asan.sh, and network access to the package index.
#
# Usage:
#   bash scripts/test.sh [PYTEST ARGS]     everything (arguments go to pytest)
#   bash scripts/test.sh --only NAME [PYTEST ARGS]
#                                          install, then only check NAME
#                                          (scripts/checks/NN-NAME.sh, e.g.
#                                          "lint" or "05-lint"), or only
#                                          pytest with NAME "pytest"; repeatable
#
# Environment:
#   PYTHON=python3.12      interpreter for the venv (default: python3)
#   FROZENMAP_REQUIRE_C=1  a C core that fails to build or import is an error
#   QUICK=1                pytest only; skip scripts/checks
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
VENV=${VENV:-$ROOT/.venv}
export PY VENV ROOT

# --only NAME (repeatable): the checks to run; what is left goes to pytest.
only=()
while [ "${1:-}" = "--only" ]; do
    [ -n "${2:-}" ] || { echo "test.sh: --only needs a check name" >&2; exit 2; }
    only+=("$2")
    shift 2
done
check_path() { # the check script that NAME names, or nothing
    local name=${1%.sh} path
    for path in scripts/checks/"$name".sh scripts/checks/[0-9][0-9]-"$name".sh; do
        [ -e "$path" ] && { echo "$path"; return 0; }
    done
    return 0
}
wanted=()
for name in "${only[@]}"; do
    [ "$name" = pytest ] && { wanted+=(pytest); continue; }
    path=$(check_path "$name")
    if [ -z "$path" ]; then
        echo "test.sh: no check named '$name'; there are: pytest" \
            $(for c in scripts/checks/*.sh; do c=${c##*/}; echo "${c%.sh}"; done) >&2
        exit 2
    fi
    wanted+=("$path")
done
. scripts/clean-copy.sh
SRC=$(mktemp -d "${TMPDIR:-/tmp}/frozenmap-src.XXXXXX")
trap 'rm -rf "$SRC"' EXIT
clean_copy "$SRC"

if [ ! -x "$VENV/bin/python" ]; then
    echo "== creating $VENV with $($PY --version 2>&1)"
    "$PY" -m venv "$VENV"
fi
echo "== installing frozenmap[test] into $VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$SRC"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "$SRC[test]"
# The version, the core that loads by default, and why (a missing C core warns).
(cd / && "$VENV/bin/python" -m frozenmap | sed 's/^/== /')

run_check() {
    echo "== check: $1"
    bash "$1"
}
run_pytest() {
    case "${FROZENMAP_TEST_CORES:-c,python}" in
        c,python | python,c) echo "== pytest (both cores)" ;;
        *) echo "== pytest (core: $FROZENMAP_TEST_CORES only)" ;;
    esac
    # Run from tests/ through the venv's pytest so the installed package is
    # tested, not the source tree.
    "$VENV/bin/pytest" -p no:cacheprovider tests "$@"
}

if [ ${#wanted[@]} -gt 0 ]; then
    for what in "${wanted[@]}"; do
        if [ "$what" = pytest ]; then run_pytest "$@"; else run_check "$what"; fi
    done
    echo "== the chosen checks passed"
    exit 0
fi

if [ -z "${QUICK:-}" ]; then
    for check in scripts/checks/0[0-9]-*.sh; do
        [ -e "$check" ] && run_check "$check"
    done
fi
run_pytest "$@"
if [ -z "${QUICK:-}" ]; then
    for check in scripts/checks/*.sh; do
        case ${check##*/} in 0[0-9]-*) continue ;; esac
        run_check "$check"
    done
fi
echo "== all tests passed"
