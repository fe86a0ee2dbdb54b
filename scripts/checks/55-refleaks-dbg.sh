#!/usr/bin/env bash
# Reference leaks on a debug interpreter: the C core built against a debug
# CPython (Debian's python3.11-dbg: /usr/bin/python3.11d, headers in
# /usr/include/python3.11d), then
#   1. scripts/leakcheck.py --cores c, which on a debug interpreter counts
#      sys.gettotalrefcount() as well as sys.getallocatedblocks(), as CPython's
#      regrtest -R does: warm-up rounds, then batches of measured rounds, and a
#      group leaks when a count grows in every batch.  The reference count sees
#      leaked references to objects that exist anyway (None, a key, a type),
#      which the block count of scripts/checks/50-leaks.sh cannot;
#   2. a subset of the pytest suite (C core) on the debug interpreter, whose
#      assertions catch what a release build lets pass: a reference count
#      going negative, an object freed twice, an error returned without an
#      exception set (or a result returned with one).
#
# - The package is installed with apt-get if the interpreter is missing (CI
#   runs as root on a fresh Debian machine); apt-get update is run first only
#   if the plain install fails.  Without apt-get, or without root, the check
#   fails and says what to install.
# - The extension is built into $ROOT/.venv-dbg from a clean copy of the tree,
#   with FROZENMAP_REQUIRE_C=1, and must carry the debug ABI tag ("311d").
#
# Environment (from scripts/test.sh): ROOT.  Also:
#   FROZENMAP_DBG_PYTHON        the debug interpreter (default python3.11d)
#   FROZENMAP_DBG_PACKAGES      what apt-get installs for it
#                               (default "python3.11-dbg python3.11-dev")
#   FROZENMAP_LEAKCHECK_ARGS    extra leakcheck arguments, e.g. "--rounds 100 -v"
#   FROZENMAP_DBG_PYTEST_ARGS   extra pytest arguments
#   FROZENMAP_CHECK_TIMEOUT     seconds allowed for each of the two runs (default 600)
set -euo pipefail

ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
DBG=${FROZENMAP_DBG_PYTHON:-python3.11d}
PACKAGES=${FROZENMAP_DBG_PACKAGES:-python3.11-dbg python3.11-dev}
LIMIT=${FROZENMAP_CHECK_TIMEOUT:-600}
VENV_DBG="$ROOT/.venv-dbg"
PIP_FLAGS=(-q --disable-pip-version-check)
# The pytest subset (~75 s): the allocation-failure sweep and the fault sweeps
# through user code (every error path of every operation), and the suites
# that drive construction, the Evolver, derivations, diff and bad input.
PYTEST_FILES=(tests/hostile/test_allocation_failure.py
              tests/hostile/test_raising_at_every_user_call.py
              tests/hostile/test_raising_hash_and_eq.py
              tests/hostile/test_reentry_from_user_code.py
              tests/hostile/test_gc_and_finalizers.py
              tests/hostile/test_colliding_and_equal_keys.py
              tests/hostile/test_bad_arguments.py
              tests/hostile/test_self_containing_values.py
              tests/hostile/test_versions_shared_between_threads.py
              tests/test_evolver.py tests/test_derivations.py tests/test_diff.py
              tests/test_pep814_construction.py tests/test_pep814_ops.py
              tests/test_pep814_objects.py tests/test_structure.py)
export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci}

if ! compgen -G "$ROOT/frozenmap/_ccore/*.c" >/dev/null; then
    echo "== refleaks (debug interpreter): skipped, there are no C sources in frozenmap/_ccore"
    exit 0
fi
start=$SECONDS

# --- the debug interpreter ---------------------------------------------------------
if ! command -v "$DBG" >/dev/null 2>&1; then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "FAIL: refleaks: no $DBG and no apt-get to install it (install a debug CPython"
        echo "      with sys.gettotalrefcount, or set FROZENMAP_DBG_PYTHON)"
        exit 1
    fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "FAIL: refleaks: no $DBG; install it as root: apt-get install -y $PACKAGES"
        exit 1
    fi
    echo "== refleaks: installing $PACKAGES"
    # shellcheck disable=SC2086  # PACKAGES is a list of words
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q $PACKAGES >/dev/null; then
        echo "== refleaks: apt-get install failed; apt-get update, then again"
        DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q $PACKAGES >/dev/null
    fi
    if ! command -v "$DBG" >/dev/null 2>&1; then
        echo "FAIL: refleaks: $PACKAGES installed, but there is still no $DBG"
        exit 1
    fi
fi
if ! "$DBG" -c 'import sys; sys.gettotalrefcount' 2>/dev/null; then
    echo "FAIL: refleaks: $DBG is not a debug build (no sys.gettotalrefcount)"
    exit 1
fi
echo "== refleaks: $("$DBG" -c 'import sys; print(sys.executable, sys.version.split()[0])') (debug build)"

# --- build into .venv-dbg ------------------------------------------------------------
DBGVERSION=$("$DBG" -c 'import sys; print(sys.version)')
if [ -x "$VENV_DBG/bin/python" ] \
    && [ "$("$VENV_DBG/bin/python" -c 'import sys; print(sys.version)' 2>/dev/null || true)" = "$DBGVERSION" ] \
    && "$VENV_DBG/bin/python" -c 'import sys; sys.gettotalrefcount' 2>/dev/null; then
    echo "== reusing $VENV_DBG"
else
    rm -rf "$VENV_DBG"
    echo "== creating $VENV_DBG"
    "$DBG" -m venv "$VENV_DBG"
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# A clean copy of the tree (tracked and new files, no build/ or in-place *.so).
# shellcheck source=scripts/clean-copy.sh
. "$ROOT/scripts/clean-copy.sh"
clean_copy "$WORK/src"

echo "== building the C core against the debug interpreter"
if ! FROZENMAP_REQUIRE_C=1 timeout -k 30 900 "$VENV_DBG/bin/python" -m pip install "${PIP_FLAGS[@]}" \
        --force-reinstall --no-deps --no-cache-dir "$WORK/src"; then
    echo "FAIL: refleaks: the C core does not build against $DBG"
    exit 1
fi
timeout -k 30 900 bash -c '. "$1/scripts/common.sh" && install_extras "$2" test' _ "$ROOT" "$VENV_DBG/bin/python"
SO=$(find "$VENV_DBG"/lib/python*/site-packages/frozenmap/_ccore -name '_cfrozenmap*.so' | head -n1)
case "$SO" in
    *d-*.so) ;;
    *) echo "FAIL: refleaks: the extension ($SO) is not built for the debug ABI"; exit 1 ;;
esac
echo "== built $(basename "$SO") in $((SECONDS - start))s"

status=0
# run_step NAME CMD...: run CMD with the C core required; report and return
# non-zero on a bad exit.
run_step() {
    local name=$1 rc=0 t0=$SECONDS
    shift
    FROZENMAP_TEST_CORES=c FROZENMAP_REQUIRE_C=1 PYTHONFAULTHANDLER=1 \
        timeout -k 30 "$LIMIT" "$@" || rc=$?
    echo "== $name on the debug interpreter: exit $rc in $((SECONDS - t0))s"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "FAIL: refleaks: $name timed out after ${LIMIT}s"
    elif [ "$rc" -ne 0 ]; then
        echo "FAIL: refleaks: $name exited $rc (134: a debug-build assertion aborted it)"
    fi
    return "$rc"
}

# From $WORK: the installed copy is imported, not the source tree.
echo "== leakcheck, C core: blocks and total reference count"
# shellcheck disable=SC2086  # FROZENMAP_LEAKCHECK_ARGS is a list of words
(cd "$WORK" && run_step leakcheck "$VENV_DBG/bin/python" "$ROOT/scripts/leakcheck.py" \
    --cores c --selftest --refs on ${FROZENMAP_LEAKCHECK_ARGS:-}) || status=1

echo "== pytest subset, C core: ${PYTEST_FILES[*]}"
# shellcheck disable=SC2086  # FROZENMAP_DBG_PYTEST_ARGS is a list of words
# (--capture=sys: a failed C assertion writes to fd 2, which must not be lost)
(cd "$ROOT" && run_step pytest "$VENV_DBG/bin/pytest" -p no:cacheprovider -q --capture=sys \
    "${PYTEST_FILES[@]}" ${FROZENMAP_DBG_PYTEST_ARGS:-}) || status=1

if [ "$status" -ne 0 ]; then
    echo "FAIL: refleaks (debug interpreter): see above"
    exit 1
fi
echo "== refleaks (debug interpreter): clean in $((SECONDS - start))s"
