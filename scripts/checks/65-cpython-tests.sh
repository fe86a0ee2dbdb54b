#!/usr/bin/env bash
# CPython 3.15's own frozendict tests (Lib/test of the 3.15 release that
# scripts/debian-python.sh fetches) against the frozenmap installed in $VENV,
# on both cores: scripts/cpython-tests.sh says how, and
# scripts/cpython_frozendict_tests.py holds the recorded deviations, known bugs
# and tests that need a newer Python.  The other Pythons (3.10-3.15) run the
# same tests in scripts/checks/35-versions.sh.
#
# Environment (from scripts/test.sh): ROOT, VENV.  Also those of
# scripts/cpython-tests.sh (FROZENMAP_CPYTHON_TESTDIR, FROZENMAP_FETCH_PYTHON,
# FROZENMAP_REQUIRE_C, FROZENMAP_CHECK_TIMEOUT).
set -euo pipefail

ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
VENV=${VENV:-$ROOT/.venv}
echo "== CPython 3.15's frozendict tests on $("$VENV/bin/python" --version 2>&1) from $VENV"
bash "$ROOT/scripts/cpython-tests.sh" "$VENV"
echo "== CPython's frozendict tests: no failure of frozenmap's"
