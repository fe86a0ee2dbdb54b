#!/usr/bin/env bash
# The whole test suite, from a fresh clone with only python3 on the machine.
#
# Creates .venv (if missing), builds and installs frozenmap with its test
# dependencies (a real, non-editable install, so a missing package file fails
# here as it would for a user) and, for a full run, the requirements of every
# extra the checks use (typing, docs, packaging, bench: installed once, before
# any check, so no check installs into the venv while another runs), then:
#   1. the static checks, scripts/checks/0*.sh (lint: a minute at most), one
#      after the other; a failure stops the run here;
#   2. pytest over both cores and every other check in scripts/checks/*.sh,
#      $FROZENMAP_JOBS (default 2) at a time: typing first, then the runs on
#      other Pythons (the longest check) beside pytest, then the others in
#      number order.  Each job's output is printed whole when it ends.  After a
#      failure no new job starts; those running are finished.  (The versions
#      check tests two Pythons at a time itself, so while it runs three
#      processes share a 2-core machine: none of them waits for the others.)
#      Each check gets $ROOT, $VENV and $PY.
# Each check's wall time is printed as it ends ("== check NAME: 123 s ok") and
# all of them in a table at the end.
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
#   bash scripts/test.sh -h | --help       this text; nothing is built or run
#                                          (pytest's own options:
#                                          .venv/bin/pytest --help)
#
# Environment:
#   PYTHON=python3.12      interpreter for the venv (default: python3)
#   FROZENMAP_REQUIRE_C=1  a C core that fails to build or import is an error
#   QUICK=1                pytest only; skip scripts/checks
#   FROZENMAP_JOBS=2       checks run at once after the static ones (1: one by one)
set -euo pipefail

# -h/--help anywhere: this file's opening comment, before anything is built,
# installed or created.
for arg in "$@"; do
    case "$arg" in
        -h | --help)
            sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
            exit 0
            ;;
    esac
done

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
TOTAL_START=$SECONDS
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
. scripts/common.sh
if [ -z "${QUICK:-}" ] && [ ${#wanted[@]} -eq 0 ]; then
    install_extras "$VENV/bin/python" test typing docs packaging bench
else
    install_extras "$VENV/bin/python" test
fi
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
JOBS=1
job_name() { # "pytest", or a check's NN-name
    local name=${1##*/}
    echo "${name%.sh}"
}

# The wall time of each job, for the table at the end: "NAME SECONDS STATUS".
TIMES=()
record() { # NAME SECONDS RC
    local status=ok
    [ "$3" -eq 0 ] || status="FAILED (exit $3)"
    echo "== check $1: $2 s $status"
    TIMES+=("$(printf '%-20s %5d s  %s' "$1" "$2" "$status")")
}
print_times() {
    echo "== wall time of each step (total $((SECONDS - TOTAL_START)) s; checks after the"\
        "static ones ran $JOBS at a time, so their times add up to more):"
    local line
    for line in "${TIMES[@]}"; do
        echo "   $line"
    done
}
run_timed() { # WHAT [PYTEST ARGS]: one job in the foreground; returns its status
    local what=$1 t0=$SECONDS rc=0
    shift
    if [ "$what" = pytest ]; then run_pytest "$@" || rc=$?; else run_check "$what" || rc=$?; fi
    record "$(job_name "$what")" $((SECONDS - t0)) "$rc"
    return "$rc"
}

record install $((SECONDS - TOTAL_START)) 0

if [ ${#wanted[@]} -gt 0 ]; then
    status=0
    for what in "${wanted[@]}"; do
        run_timed "$what" "$@" || { status=$?; break; }
    done
    print_times
    [ "$status" -eq 0 ] || exit "$status"
    echo "== the chosen checks passed"
    exit 0
fi

if [ -z "${QUICK:-}" ]; then
    for check in scripts/checks/0[0-9]-*.sh; do
        [ -e "$check" ] || continue
        run_timed "$check" || { print_times; exit 1; }
    done
fi
if [ -n "${QUICK:-}" ]; then
    run_pytest "$@"
    echo "== all tests passed"
    exit 0
fi

# The pool: typing (quick, fails fast), the other Pythons (the longest, at
# once), pytest, then the other checks in number order.
queue=()
for check in scripts/checks/[2-9][0-9]-typing.sh scripts/checks/[1-9][0-9]-versions.sh; do
    [ -e "$check" ] && queue+=("$check")
done
queue+=(pytest)
for check in scripts/checks/*.sh; do
    case " ${queue[*]} " in *" $check "*) continue ;; esac
    case ${check##*/} in 0[0-9]-*) continue ;; esac
    queue+=("$check")
done
JOBS=${FROZENMAP_JOBS:-2}
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/frozenmap-logs.XXXXXX")
trap 'rm -rf "$SRC" "$LOGS"' EXIT
declare -A RUNNING=() STARTED=()
failed=0
finish_one() { # wait for a job to end; print its output and time
    local pid rc=0 what
    wait -n -p pid "${!RUNNING[@]}" || rc=$?
    what=${RUNNING[$pid]}
    unset "RUNNING[$pid]"
    cat "$LOGS/$(job_name "$what").log"
    record "$(job_name "$what")" $((SECONDS - ${STARTED[$what]})) "$rc"
    [ "$rc" -eq 0 ] || failed=1
}
for what in "${queue[@]}"; do
    while [ ${#RUNNING[@]} -ge "$JOBS" ]; do finish_one; done
    [ "$failed" -eq 0 ] || break
    echo "== started $(job_name "$what") ($((SECONDS - TOTAL_START)) s in)"
    STARTED[$what]=$SECONDS
    if [ "$what" = pytest ]; then
        run_pytest "$@" >"$LOGS/pytest.log" 2>&1 &
    else
        run_check "$what" >"$LOGS/$(job_name "$what").log" 2>&1 &
    fi
    RUNNING[$!]=$what
done
while [ ${#RUNNING[@]} -gt 0 ]; do finish_one; done
print_times
if [ "$failed" -ne 0 ]; then
    not_run=()
    for what in "${queue[@]}"; do
        [ -n "${STARTED[$what]:-}" ] || not_run+=("$(job_name "$what")")
    done
    echo "FAIL: a check failed (see above)${not_run[*]:+; not started: ${not_run[*]}}"
    exit 1
fi
echo "== all tests passed"
