#!/usr/bin/env bash
# The C core's free-threaded code paths (Py_GIL_DISABLED) compile against the
# 3.14 and 3.15 headers.
#
# Debian ships no free-threaded CPython, so nothing here runs the C core
# without the GIL: this check only compiles every C file with
# -DPy_GIL_DISABLED (which switches the headers to the free-threaded object
# layout, atomics and critical sections, as a free-threaded pyconfig.h would)
# with warnings as errors, against the headers of the interpreters
# scripts/debian-python.sh fetches (cached; scripts/checks/35-versions.sh
# fetched them already in a full run).  What is and is not tested on
# free-threaded builds: docs/guide.md, "Threads and free-threaded Python".
#
# Environment: ROOT (from scripts/test.sh); FROZENMAP_FT_VERSIONS (default
# "3.14 3.15"); CC (default gcc).
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT"
CC=${CC:-gcc}
failed=0
for v in ${FROZENMAP_FT_VERSIONS:-3.14 3.15}; do
    if ! bash scripts/debian-python.sh "$v" >/dev/null; then
        echo "FAIL: python $v could not be fetched, its headers are not here"
        failed=1
        continue
    fi
    read -r -a includes <<<"$(bash scripts/debian-python.sh --cppflags "$v")"
    echo "-- $v headers, -DPy_GIL_DISABLED: $CC -fsyntax-only on frozenmap/_ccore/*.c"
    for source in frozenmap/_ccore/*.c; do
        if ! "$CC" -fsyntax-only -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter \
                -Wno-missing-field-initializers -DPy_GIL_DISABLED=1 "${includes[@]}" "$source"; then
            echo "FAIL: $source does not compile free-threaded against the $v headers"
            failed=1
        fi
    done
done
[ "$failed" -eq 0 ] || exit 1
echo "-- the free-threaded code paths compile"
