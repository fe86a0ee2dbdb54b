#!/usr/bin/env bash
# Leak check: scripts/leakcheck.py runs every operation of each available core
# (including the ones that raise) for many rounds and fails when
# sys.getallocatedblocks() keeps growing, or when reference cycles through a
# map's values are not collected by gc.collect().  It first checks itself: a
# planted leak and a planted uncollectable cycle must be reported.
#
# Runs against the package installed in $VENV (by scripts/test.sh), from a
# directory outside the source tree so that the installed copy is the one
# imported.  With FROZENMAP_REQUIRE_C=1 a C core that does not import fails.
#
# Environment (from scripts/test.sh): ROOT, VENV.  Also:
#   FROZENMAP_LEAKCHECK_ARGS   extra arguments, e.g. "--rounds 200 -v"
#   FROZENMAP_CHECK_TIMEOUT    seconds allowed (default 900)
set -euo pipefail

ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
VENV=${VENV:-$ROOT/.venv}
LIMIT=${FROZENMAP_CHECK_TIMEOUT:-900}

if [ ! -x "$VENV/bin/python" ]; then
    echo "FAIL: no venv at $VENV (run scripts/test.sh, which installs frozenmap there)"
    exit 1
fi
echo "== leak check with $("$VENV/bin/python" --version 2>&1) from $VENV (limit ${LIMIT}s)"
start=$SECONDS
. "$ROOT/scripts/common.sh"
# shellcheck disable=SC2086  # FROZENMAP_LEAKCHECK_ARGS is a list of words
(cd / && run_limited "the leak check (see the groups above)" "$LIMIT" "$VENV/bin/python" \
    "$ROOT/scripts/leakcheck.py" --selftest ${FROZENMAP_LEAKCHECK_ARGS:-}) || exit 1
echo "== leak check passed in $((SECONDS - start))s"
