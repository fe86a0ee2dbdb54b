#!/usr/bin/env bash
# Sanitizers: the C core built with -fsanitize=address,undefined, and the test
# suite (C core only) plus a short leak-check run under it.  Any AddressSanitizer
# or UndefinedBehaviorSanitizer report fails the check.
#
# - The extension is built into its own venv, $ROOT/.venv-asan (same Python
#   as $PY), from a clean copy of the tree, with FROZENMAP_REQUIRE_C=1: C
#   sources that do not build fail the check.  No C sources: skipped (exit 0).
# - The interpreter is not instrumented, so the ASan runtime is preloaded
#   (LD_PRELOAD), and PYTHONMALLOC=malloc sends every object
#   allocation through malloc, where ASan sees overflows and use after free.
# - A non-zero exit, an ASan report file (log_path: it survives an abort), or a
#   report in the output (UBSan writes to stderr; pytest runs with
#   --capture=sys so that it is not swallowed) fails the check.
# - Leak detection is off (detect_leaks=0): CPython does not free everything
#   at exit, so LeakSanitizer would report the interpreter, not us; leaks are
#   what scripts/checks/50-leaks.sh (scripts/leakcheck.py) looks for.
#
# Environment (from scripts/test.sh): ROOT, PY.  Also:
#   HYPOTHESIS_PROFILE         default "ci" (bounded)
#   FROZENMAP_CHECK_TIMEOUT    seconds allowed for the pytest run (default 1800)
#   FROZENMAP_ASAN_PYTEST_ARGS extra pytest arguments (e.g. "-x -k evolver")
#   FROZENMAP_SANITIZE_FLAGS   the compile+link flags (default above), for a
#                              local look past one report with -fno-sanitize=...
set -euo pipefail

ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
PY=${PY:-python3}
LIMIT=${FROZENMAP_CHECK_TIMEOUT:-1800}
export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci}
SANITIZE_FLAGS=${FROZENMAP_SANITIZE_FLAGS:-"-fsanitize=address,undefined -fno-omit-frame-pointer -O1 -g"}
VENV_ASAN="$ROOT/.venv-asan"
PIP_FLAGS=(-q --disable-pip-version-check)

if ! compgen -G "$ROOT/frozenmap/_ccore/*.c" >/dev/null; then
    echo "== sanitizers: skipped, there are no C sources in frozenmap/_ccore"
    exit 0
fi
start=$SECONDS

# --- the sanitizer runtimes -------------------------------------------------------
CC=${CC:-gcc}
if ! command -v "$CC" >/dev/null 2>&1; then
    echo "FAIL: sanitizers: no C compiler ($CC) on this machine"
    exit 1
fi
runtime() {  # absolute path of the compiler's shared runtime $1, or nothing
    local path
    path=$("$CC" -print-file-name="$1" 2>/dev/null || true)
    case "$path" in
        /*) [ -e "$path" ] && readlink -f "$path" ;;
    esac
}
LIBASAN=$(runtime libasan.so)
if [ -z "$LIBASAN" ]; then
    echo "FAIL: sanitizers: $CC has no shared ASan runtime (libasan.so)"
    echo "      (Debian: apt-get install libasan8, or the gcc package that ships it)"
    exit 1
fi
echo "== sanitizers: ASan runtime $LIBASAN"

# --- build into .venv-asan -----------------------------------------------------------
PYVERSION=$("$PY" -c 'import sys; print(sys.version)')
if [ -x "$VENV_ASAN/bin/python" ] \
    && [ "$("$VENV_ASAN/bin/python" -c 'import sys; print(sys.version)' 2>/dev/null || true)" = "$PYVERSION" ]; then
    echo "== reusing $VENV_ASAN"
else
    rm -rf "$VENV_ASAN"
    echo "== creating $VENV_ASAN with $("$PY" --version 2>&1)"
    "$PY" -m venv "$VENV_ASAN"
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# A clean copy of the tree (tracked and new files, no build/ or in-place *.so),
# so that the sanitizer build never reuses objects from another build.
# shellcheck source=scripts/clean-copy.sh
. "$ROOT/scripts/clean-copy.sh"
clean_copy "$WORK/src"

echo "== building the C core with $SANITIZE_FLAGS"
if ! FROZENMAP_REQUIRE_C=1 FROZENMAP_EXTRA_CFLAGS="$SANITIZE_FLAGS" \
        timeout -k 30 900 "$VENV_ASAN/bin/python" -m pip install "${PIP_FLAGS[@]}" \
        --force-reinstall --no-deps --no-cache-dir "$WORK/src"; then
    echo "FAIL: sanitizers: the C core does not build with $SANITIZE_FLAGS"
    exit 1
fi
timeout -k 30 900 bash -c '. "$1/scripts/common.sh" && install_extras "$2" test' _ "$ROOT" "$VENV_ASAN/bin/python"
SO=$(find "$VENV_ASAN"/lib/python*/site-packages/frozenmap/_ccore -name '_cfrozenmap*.so' | head -n1)
if [ -z "$SO" ]; then
    echo "FAIL: sanitizers: the install has no C extension"
    exit 1
fi
if ! readelf -d "$SO" 2>/dev/null | grep -q 'libasan'; then
    echo "FAIL: sanitizers: $SO is not linked with ASan (FROZENMAP_EXTRA_CFLAGS ignored?)"
    exit 1
fi
echo "== built $(basename "$SO") in $((SECONDS - start))s"

# --- run under the sanitizers -------------------------------------------------------
LOGS="$WORK/reports"
mkdir -p "$LOGS"
# UBSan needs no preload (the extension pulls libubsan in when it loads);
# ASan must come first in the process.  ASan writes its reports to files
# (log_path), which survive an abort; UBSan ignores log_path when ASan is
# present and writes to stderr, so pytest runs with --capture=sys (C-level
# writes to fd 2 are not captured and lost) and the output is scanned.
asan_env=(
    env
    LD_PRELOAD="$LIBASAN${LD_PRELOAD:+ $LD_PRELOAD}"
    ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1:allocator_may_return_null=1:log_path=$LOGS/asan:log_exe_name=1"
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    PYTHONMALLOC=malloc
    PYTHONFAULTHANDLER=1
    FROZENMAP_TEST_CORES=c
    FROZENMAP_REQUIRE_C=1
)
REPORT_PATTERN='runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer|SUMMARY: [A-Za-z]*Sanitizer'

# The runtimes must load and the extension must import (fails loudly if not).
(cd "$WORK" && "${asan_env[@]}" "$VENV_ASAN/bin/python" -c \
    'import frozenmap; assert frozenmap.IMPLEMENTATION == "c", frozenmap.IMPLEMENTATION; print("== frozenmap C core imported under the sanitizers")')

status=0
# run_logged NAME DIR LIMIT CMD...: run CMD in DIR under the sanitizers, its
# output shown and kept in $LOGS/NAME.out; fail on a bad exit or a report.
run_logged() {
    local name=$1 dir=$2 limit=$3 rc=0 t0=$SECONDS
    shift 3
    (cd "$dir" && "${asan_env[@]}" timeout -k 30 "$limit" "$@") 2>&1 | tee "$LOGS/$name.out" || rc=$?
    echo "== $name under sanitizers: exit $rc in $((SECONDS - t0))s"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "FAIL: sanitizers: $name timed out after ${limit}s"
        status=1
    elif [ "$rc" -ne 0 ]; then
        echo "FAIL: sanitizers: $name exited $rc (134: abort on an ASan report; 1 with a 'runtime error' above: UBSan)"
        status=1
    fi
    if grep -Eq "$REPORT_PATTERN" "$LOGS/$name.out"; then
        echo "FAIL: sanitizers: $name printed a sanitizer report:"
        grep -E -A 12 "$REPORT_PATTERN" "$LOGS/$name.out" | head -n 60
        status=1
    fi
}

echo "== pytest, C core, under ASan+UBSan (hypothesis profile $HYPOTHESIS_PROFILE, limit ${LIMIT}s)"
# shellcheck disable=SC2086  # FROZENMAP_ASAN_PYTEST_ARGS is a list of words
run_logged pytest "$ROOT" "$LIMIT" "$VENV_ASAN/bin/pytest" -p no:cacheprovider -q --capture=sys \
    tests ${FROZENMAP_ASAN_PYTEST_ARGS:-}

# The leak check's operations (every failure path) under ASan: for memory
# errors, and its growth count, which under PYTHONMALLOC=malloc counts the
# blocks tracemalloc sees (raw malloc included) instead of pymalloc's.
echo "== leakcheck, C core, under ASan+UBSan"
run_logged leakcheck "$WORK" 600 "$VENV_ASAN/bin/python" "$ROOT/scripts/leakcheck.py" --cores c --selftest

# ASan's report files (one per process that hit an error).
for f in "$LOGS"/asan*; do
    [ -e "$f" ] || continue
    echo "FAIL: sanitizers: AddressSanitizer report $(basename "$f"):"
    cat "$f"
    status=1
done

if [ "$status" -ne 0 ]; then
    echo "FAIL: sanitizers: see above"
    exit 1
fi
echo "== sanitizers: clean in $((SECONDS - start))s"
