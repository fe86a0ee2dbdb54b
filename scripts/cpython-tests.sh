#!/usr/bin/env bash
# CPython 3.15's own frozendict tests, run against the frozenmap installed in
# one venv, on each core it has (C, then FROZENMAP_PURE_PYTHON=1).
#
# Usage: bash scripts/cpython-tests.sh VENV
#
# The tests are those of Debian's libpython3.15-testsuite, the same release as
# the 3.15 interpreter scripts/debian-python.sh fetches (`--testsuite 3.15`
# fetches them and prints their folder; cached between runs).
# scripts/cpython_frozendict_tests.py picks the tests that use frozendict, binds
# that name to frozenmap's, and runs them; its tables record, with a reason,
# every test that is a documented deviation (docs/pep814.md §14), a known bug,
# or needs a newer Python than the venv's.  Any other failure fails this script.
# scripts/checks/65-cpython-tests.sh runs it on the main venv and
# scripts/checks/35-versions.sh on each other Python's venv.
#
# Environment:
#   FROZENMAP_CPYTHON_TESTDIR  a folder holding 3.15's `test` package (e.g. a
#                              CPython 3.15 checkout's Lib); default: fetch it
#   FROZENMAP_FETCH_PYTHON=0   do not fetch it: skip (with a message) instead
#   FROZENMAP_REQUIRE_C=1      a venv whose C core does not import fails
#   FROZENMAP_CHECK_TIMEOUT    seconds allowed per core (default 900)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${1:?usage: cpython-tests.sh VENV}
LIMIT=${FROZENMAP_CHECK_TIMEOUT:-900}
if [ ! -x "$VENV/bin/python" ]; then
    echo "FAIL: no venv at $VENV"
    exit 1
fi
python=$(cd "$VENV" && pwd)/bin/python
testdir=${FROZENMAP_CPYTHON_TESTDIR:-}
if [ -z "$testdir" ]; then
    if [ "${FROZENMAP_FETCH_PYTHON:-1}" = 0 ]; then
        echo "== CPython's frozendict tests: skipped (FROZENMAP_FETCH_PYTHON=0 and no FROZENMAP_CPYTHON_TESTDIR)"
        exit 0
    fi
    if ! testdir=$(bash "$ROOT/scripts/debian-python.sh" --testsuite 3.15); then
        echo "FAIL: CPython 3.15's tests could not be fetched from Debian"
        exit 1
    fi
fi

# (from /: run from $ROOT, python would import the source tree)
default_core=$(cd / && FROZENMAP_PURE_PYTHON='' "$python" -W ignore -c 'import frozenmap; print(frozenmap.IMPLEMENTATION)')
cores=(python)
if [ "$default_core" = c ]; then
    cores=(c python)
elif [ "${FROZENMAP_REQUIRE_C:-}" = 1 ]; then
    echo "FAIL: the C core of frozenmap in $VENV does not import"
    exit 1
else
    echo "== CPython's frozendict tests: the C core is not built in $VENV, the pure core only"
fi

. "$ROOT/scripts/common.sh"  # run_limited
status=0
for core in "${cores[@]}"; do
    pure=""
    [ "$core" = python ] && pure=1
    (cd / && FROZENMAP_PURE_PYTHON=$pure run_limited "CPython's frozendict tests on core $core (see above)" \
        "$LIMIT" "$python" "$ROOT/scripts/cpython_frozendict_tests.py" "$testdir") || status=1
done
exit "$status"
