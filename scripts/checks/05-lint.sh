#!/usr/bin/env bash
# Lint: ruff (lint rules and format) on the Python sources, clang-format on the
# C core, and frozenmap/_ccore/docstrings.h matching the pure core's docstrings
# and method signatures.
#
# The configurations are pyproject.toml's [tool.ruff] and .clang-format.  To fix
# what this reports:  ruff format . && ruff check --fix .;
# clang-format -i frozenmap/_ccore/*.c frozenmap/_ccore/cfrozenmap.h;
# python scripts/gen_docstrings.py.
#
# Environment (from scripts/test.sh): ROOT, VENV.
set -euo pipefail

ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
VENV=${VENV:-$ROOT/.venv}
RUFF_VERSION=0.17.6
CLANG_FORMAT_MAJOR=14   # Debian 12's; other versions lay out some lines differently
cd "$ROOT"
status=0
fail() { echo "FAIL: lint: $*"; status=1; }

PY_PATHS=(frozenmap tests scripts fuzz asv_benchmarks docs/conf.py setup.py)
if ! "$VENV/bin/ruff" --version 2>/dev/null | grep -q " $RUFF_VERSION\$"; then
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check "ruff==$RUFF_VERSION"
fi
echo "-- ruff check"
"$VENV/bin/ruff" check "${PY_PATHS[@]}" || fail "ruff check"
echo "-- ruff format --check"
"$VENV/bin/ruff" format --check "${PY_PATHS[@]}" || fail "ruff format (run: ruff format .)"

echo "-- clang-format"
if ! command -v clang-format >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get install -y -q clang-format >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q clang-format >/dev/null 2>&1; } \
        || true
fi
if ! command -v clang-format >/dev/null 2>&1; then
    fail "clang-format is not installed (Debian: apt-get install clang-format)"
elif ! clang-format --version | grep -q "version $CLANG_FORMAT_MAJOR\."; then
    echo "   skipped: $(clang-format --version) is not version $CLANG_FORMAT_MAJOR, whose layout the sources follow"
else
    clang-format --dry-run -Werror frozenmap/_ccore/*.c frozenmap/_ccore/cfrozenmap.h \
        || fail "clang-format (run: clang-format -i frozenmap/_ccore/*.c frozenmap/_ccore/cfrozenmap.h)"
fi

echo "-- docstrings.h is what scripts/gen_docstrings.py writes"
# (the script reads this checkout's pure core whatever Python runs it)
"$VENV/bin/python" scripts/gen_docstrings.py --check \
    || fail "docstrings.h is stale (run: python scripts/gen_docstrings.py)"

if [ "$status" -ne 0 ]; then
    exit 1
fi
echo "== lint: clean"
