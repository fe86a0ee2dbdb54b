#!/usr/bin/env bash
# The whole test suite, from a fresh clone with only python3 on the machine.
#
# Creates .venv (if missing), builds and installs frozenmap with its test
# dependencies (a real, non-editable install, so a missing package file fails
# here as it would for a user), runs pytest over both cores, then every extra
# check in scripts/checks/*.sh in name order (each gets $VENV and $PY).
# frozenmap is built from a clean copy of the tree (scripts/clean-copy.sh), so
# a stale build/ folder cannot stand in for a build that fails now.
#
# Takes 15-25 minutes on a 2-core machine (QUICK=1: a few minutes) and needs a
# C compiler with the Python headers, the ASan runtime (libasan, with gcc) for
# scripts/checks/60-asan.sh, and network access to the package index.
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

case "${FROZENMAP_TEST_CORES:-c,python}" in
    c,python | python,c) echo "== pytest (both cores)" ;;
    *) echo "== pytest (core: $FROZENMAP_TEST_CORES only)" ;;
esac
# Run from tests/ through the venv's pytest so the installed package is tested,
# not the source tree.
"$VENV/bin/pytest" -p no:cacheprovider tests "$@"

if [ -z "${QUICK:-}" ]; then
    for check in scripts/checks/*.sh; do
        [ -e "$check" ] || continue
        echo "== check: $check"
        bash "$check"
    done
fi
echo "== all tests passed"
