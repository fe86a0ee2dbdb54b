#!/usr/bin/env bash
# Thread stress under pytest-run-parallel: the test_parallel_* tests of
# tests/test_threads.py run in 4 threads at once on both cores, each copy
# reading and deriving from the same module-level versions (the rest of
# tests/test_threads.py runs in the main suite with its own thread harness).
#
# Run by scripts/test.sh with $VENV (frozenmap already installed) and $ROOT.
# By hand:  VENV=.venv ROOT=$PWD bash scripts/checks/75-threads.sh
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
VENV=${VENV:-$ROOT/.venv}
cd "$ROOT"

if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check pytest-run-parallel 2>/dev/null; then
    echo "-- pytest-run-parallel cannot be installed here: the thread harness in tests/test_threads.py already ran"
    exit 0
fi
echo "-- pytest-run-parallel: test_parallel_* x 4 threads, 5 iterations"
"$VENV/bin/pytest" -p no:cacheprovider -q tests/test_threads.py -k parallel \
    --parallel-threads=4 --iterations=5
