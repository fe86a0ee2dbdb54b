#!/usr/bin/env bash
# The test suite (both cores) on every other CPython of 3.10 to 3.15 (the main
# run of scripts/test.sh covers its own version), then CPython 3.15's own
# frozendict tests on each (scripts/cpython-tests.sh; FROZENMAP_CPYTHON_TESTS=0
# leaves them out).  3.10-3.13 come from the
# machine (pyenv or python3.X on PATH); 3.14 and 3.15, when the machine has
# none, are fetched from Debian's development suite by scripts/debian-python.sh
# (cached in ~/.cache/frozenmap-python between runs).  "pypy3.11" runs the
# suite on PyPy (the pure core) through scripts/pypy-suite.sh.
#
# On 3.14 and 3.15 the suite includes the subinterpreter tests
# (tests/test_subinterpreters.py, concurrent.interpreters, both cores); this
# check sets FROZENMAP_REQUIRE_SUBINTERPRETERS=1, so that there a missing
# concurrent.interpreters fails them instead of skipping them (older
# versions and PyPy skip them with the reason, as the main run on its own
# version does).
#
# Each version gets its own venv, $ROOT/.venv-3.X, kept between runs, and a
# fresh non-editable install of frozenmap[test] built from a clean copy of the
# tree (no build/ directory, no stale in-place *.so).  The interpreters are
# found or fetched and the venvs made one after the other; then two versions
# are tested at a time (FROZENMAP_VERSIONS_JOBS), each job's output printed
# whole when it ends.  test.sh runs this check beside the others
# (FROZENMAP_JOBS), so the two versions share the cores with another check:
# in the fresh-clone CI run of 2026-12-04 it took 786 s of CI's 877.  A
# version that is not installed is skipped with a message; one that is installed (or fetched) but fails to
# build or test fails the check after the others have run, and so does a
# failure to fetch 3.14 or 3.15.
#
# Environment (from scripts/test.sh): ROOT, VENV, PY.  Also:
#   FROZENMAP_REQUIRE_C=1        passed through: the C core must build and import
#   FROZENMAP_VERSIONS="3.10 3.15"   the versions to try (default: 3.10 to 3.15, pypy3.11)
#   FROZENMAP_FETCH_PYTHON=0     do not fetch 3.14/3.15 from Debian (skip them
#                                when the machine has none)
#   HYPOTHESIS_PROFILE           default "ci" (bounded), as CI=true selects
#   FROZENMAP_CHECK_TIMEOUT      seconds allowed per version (default 900)
#   FROZENMAP_VERSIONS_BUDGET    seconds allowed for all versions (default 3300)
#   FROZENMAP_VERSIONS_JOBS      versions tested at once (default 2)
set -euo pipefail

ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
VENV=${VENV:-$ROOT/.venv}
VERSIONS=${FROZENMAP_VERSIONS:-3.10 3.11 3.12 3.13 3.14 3.15 pypy3.11}
FETCHABLE=" 3.14 3.15 "
LIMIT=${FROZENMAP_CHECK_TIMEOUT:-900}
BUDGET=${FROZENMAP_VERSIONS_BUDGET:-3300}
export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci}
export FROZENMAP_REQUIRE_SUBINTERPRETERS=1  # (tests/test_subinterpreters.py; 3.14+ only)
PIP_FLAGS=(-q --disable-pip-version-check)

# The main run's version is tested by scripts/test.sh itself.
MAIN_VERSION=""
if [ -x "$VENV/bin/python" ]; then
    MAIN_VERSION=$("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
fi

# Does $1 run and report CPython $2 (a GIL build, with venv and ensurepip)?
python_is() {
    "$1" -I - "$2" >/dev/null 2>&1 <<'EOF'
import sys, platform, sysconfig, venv, ensurepip
want = sys.argv[1]
assert "%d.%d" % sys.version_info[:2] == want
assert platform.python_implementation() == "CPython"
assert not sysconfig.get_config_var("Py_GIL_DISABLED")
EOF
}

# Print the newest interpreter for version $1 (e.g. 3.12), or nothing.
find_python() {
    local v=$1 root cand
    local roots=()
    if command -v pyenv >/dev/null 2>&1; then
        roots+=("$(pyenv root 2>/dev/null || true)")
    fi
    roots+=("${PYENV_ROOT:-}" "$HOME/.pyenv" /root/.pyenv)
    for root in "${roots[@]}"; do
        [ -n "$root" ] && [ -d "$root/versions" ] || continue
        # newest patch release first; only plain X.Y.Z (not 3.13.0t, 3.12-dev)
        while IFS= read -r cand; do
            if python_is "$cand/bin/python" "$v"; then
                echo "$cand/bin/python"
                return
            fi
        done < <(find "$root/versions" -mindepth 1 -maxdepth 1 -regex ".*/${v//./\\.}\.[0-9]+" \
                     -printf '%f %p\n' 2>/dev/null | sort -rV | cut -d' ' -f2-)
    done
    for cand in "python$v" "/usr/local/bin/python$v" "/usr/bin/python$v"; do
        cand=$(command -v "$cand" 2>/dev/null || true)
        if [ -n "$cand" ] && python_is "$cand" "$v"; then
            echo "$cand"
            return
        fi
    done
}

# clean_copy DEST: a clean copy of the tree (no build/, no in-place *.so);
# install_extras, fresh_venv, run_limited.
# shellcheck source=scripts/clean-copy.sh
. "$ROOT/scripts/clean-copy.sh"
. "$ROOT/scripts/common.sh"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
clean_copy "$WORK/src"

declare -a SUMMARY=()
FAILED=0
TOTAL_START=$SECONDS
JOBS=${FROZENMAP_VERSIONS_JOBS:-2}

# Phase 1, one version after the other: find or fetch each interpreter and
# make its venv (the Debian fetches share one apt cache).  RUN lists the
# versions to test; PYTHONS/DEBIANS hold what phase 2 needs.
declare -a RUN=()
declare -A PYTHONS=() DEBIANS=()
for v in $VERSIONS; do
    if [[ "$v" == pypy* ]]; then
        if command -v "$v" >/dev/null 2>&1 || [ "${FROZENMAP_FETCH_PYTHON:-1}" = 0 ] \
            || bash "$ROOT/scripts/debian-python.sh" "$v" >/dev/null; then
            RUN+=("$v")  # pypy-suite.sh finds it again (cached) and says if it is missing
        else
            echo "FAIL: $v: could not be fetched from Debian"
            SUMMARY+=("$v: fetch failed")
            FAILED=1
        fi
        continue
    fi
    if [ "$v" = "$MAIN_VERSION" ]; then
        echo "== python $v: skipped, it is the main run's version"
        SUMMARY+=("$v: main run")
        continue
    fi
    python=$(find_python "$v")
    debian=""
    if [ -z "$python" ] && [[ "$FETCHABLE" == *" $v "* ]] && [ "${FROZENMAP_FETCH_PYTHON:-1}" != 0 ]; then
        echo "== python $v: not on this machine, fetching it from Debian (scripts/debian-python.sh)"
        if python=$(bash "$ROOT/scripts/debian-python.sh" "$v") && python_is "$python" "$v"; then
            debian=1
        else
            echo "FAIL: python $v: could not be fetched from Debian"
            SUMMARY+=("$v: fetch failed")
            FAILED=1
            continue
        fi
    fi
    if [ -z "$python" ]; then
        echo "== python $v: not installed on this machine (pyenv or python$v), skipped"
        SUMMARY+=("$v: not installed, skipped")
        continue
    fi
    venv="$ROOT/.venv-$v"
    echo "== python $v: $python ($("$python" -c 'import sys; print(sys.version.split()[0])'))"
    venv_ok() { python_is "$1" "$v"; }
    if [ -n "$debian" ]; then
        fresh_venv "$venv" bash "$ROOT/scripts/debian-python.sh" --venv "$v" "$venv"
    else
        fresh_venv "$venv" "$python" -m venv "$venv"
    fi
    PYTHONS[$v]=$python
    DEBIANS[$v]=$debian
    RUN+=("$v")
done
# CPython's own frozendict tests: fetched once for every version
# (each scripts/cpython-tests.sh would otherwise ask scripts/debian-python.sh).
if [ "${FROZENMAP_CPYTHON_TESTS:-1}" != 0 ] && [ -z "${FROZENMAP_CPYTHON_TESTDIR:-}" ] \
    && [ "${FROZENMAP_FETCH_PYTHON:-1}" != 0 ]; then
    FROZENMAP_CPYTHON_TESTDIR=$(bash "$ROOT/scripts/debian-python.sh" --testsuite 3.15) || true
    export FROZENMAP_CPYTHON_TESTDIR
fi

# run_version V: install and test one version; its status goes to
# $WORK/status-V (its output is the job's log).
run_version() {
    local v=$1 start=$SECONDS status=ok rc remaining cppflags venv="$ROOT/.venv-$1"
    if [[ "$v" == pypy* ]]; then
        rc=0
        ROOT=$ROOT bash "$ROOT/scripts/pypy-suite.sh" "$v" "$WORK/src" "$LIMIT" || rc=$?
        case $rc in
            0) status=ok ;;
            3) status="not installed, skipped" ;;
            *) status="failed" ;;
        esac
        echo "$status ($((SECONDS - start))s)" >"$WORK/status-$v"
        return
    fi
    # Debian's pyconfig.h sits in a multiarch folder the compiler must be told
    # of: CPPFLAGS adds to the interpreter's flags, where CFLAGS would replace them.
    cppflags=${CPPFLAGS:-}
    if [ -n "${DEBIANS[$v]}" ]; then
        cppflags="$cppflags $(bash "$ROOT/scripts/debian-python.sh" --cppflags "$v")"
    fi
    # A forced rebuild of frozenmap itself (FROZENMAP_REQUIRE_C passes through
    # the environment), then its test dependencies, as scripts/test.sh does.
    if ! (CPPFLAGS=$cppflags timeout -k 30 "$LIMIT" "$venv/bin/python" -m pip install "${PIP_FLAGS[@]}" \
              --force-reinstall --no-deps --no-cache-dir "$WORK/src" \
          && install_extras "$venv/bin/python" test); then
        echo "FAIL: python $v: installing frozenmap[test] failed"
        status="install failed"
    else
        # (from $WORK: run from $ROOT, python -c would import the source tree)
        (cd "$WORK" && "$venv/bin/python" -c 'import frozenmap; print("== python %s: frozenmap %s, default core %s" % (__import__("sys").version.split()[0], frozenmap.__version__, frozenmap.IMPLEMENTATION))') \
            || status="import failed"
        remaining=$((LIMIT - (SECONDS - start)))
        [ "$remaining" -gt 60 ] || remaining=60
        echo "== python $v: pytest (both cores, hypothesis profile $HYPOTHESIS_PROFILE, limit ${remaining}s)"
        # (CPPFLAGS too: the packaging tests build wheels of their own)
        (cd "$ROOT" && CPPFLAGS=$cppflags run_limited "python $v: pytest" "$remaining" \
            "$venv/bin/pytest" -p no:cacheprovider -q tests) || status="pytest failed or timed out"
        if [ "${FROZENMAP_CPYTHON_TESTS:-1}" != 0 ]; then
            remaining=$((LIMIT - (SECONDS - start)))
            [ "$remaining" -gt 60 ] || remaining=60
            echo "== python $v: CPython 3.15's frozendict tests (limit ${remaining}s per core)"
            if ! FROZENMAP_CHECK_TIMEOUT=$remaining bash "$ROOT/scripts/cpython-tests.sh" "$venv"; then
                [ "$status" != ok ] || status="CPython's frozendict tests failed"
            fi
        fi
    fi
    echo "== python $v: $status in $((SECONDS - start))s"
    echo "$status ($((SECONDS - start))s)" >"$WORK/status-$v"
}

# Phase 2: $JOBS versions at a time (each job is one process at a time).  A job's output is printed whole when it ends.  A version that
# would start after the budget is spent is not run (and fails the check).
declare -A PIDS=()
print_finished() {
    local v
    for v in "${!PIDS[@]}"; do
        if ! kill -0 "${PIDS[$v]}" 2>/dev/null; then
            wait "${PIDS[$v]}" || true
            cat "$WORK/log-$v"
            unset "PIDS[$v]"
        fi
    done
}
for v in "${RUN[@]}"; do
    while [ "${#PIDS[@]}" -ge "$JOBS" ]; do
        wait -n 2>/dev/null || true
        print_finished
    done
    if [ $((BUDGET - (SECONDS - TOTAL_START))) -lt 120 ]; then
        echo "FAIL: $v: not run, the ${BUDGET}s budget for this check is spent"
        echo "not run (budget spent)" >"$WORK/status-$v"
        continue
    fi
    echo "== $v: started ($((SECONDS - TOTAL_START))s into the check)"
    run_version "$v" >"$WORK/log-$v" 2>&1 &
    PIDS[$v]=$!
done
while [ "${#PIDS[@]}" -gt 0 ]; do
    wait -n 2>/dev/null || true
    print_finished
done
for v in "${RUN[@]}"; do
    status=$(cat "$WORK/status-$v" 2>/dev/null || echo "no status (the job died)")
    SUMMARY+=("$v: $status")
    case $status in
        ok* | "not installed, skipped"*) ;;
        *) FAILED=1 ;;
    esac
done

echo "== versions summary ($((SECONDS - TOTAL_START))s):"
for line in "${SUMMARY[@]}"; do
    echo "   $line"
done
if [ "$FAILED" -ne 0 ]; then
    echo "FAIL: the suite failed on at least one Python version"
    exit 1
fi
