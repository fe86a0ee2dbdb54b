#!/usr/bin/env bash
# The main job: a side-by-side benchmark of frozenmap against dict and the peer
# libraries, from a fresh clone with only python3 on the machine.
#
# Creates .venv (if missing), installs frozenmap with the bench dependencies and
# runs `python -m frozenmap.bench` with the arguments given (e.g. --quick,
# --plot DIR).  frozenmap is built from a clean copy of the tree
# (scripts/clean-copy.sh), never from a stale build/ folder.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
. scripts/clean-copy.sh
SRC=$(mktemp -d "${TMPDIR:-/tmp}/frozenmap-src.XXXXXX")
trap 'rm -rf "$SRC"' EXIT
clean_copy "$SRC"
PY=${PYTHON:-python3}
VENV=${VENV:-$PWD/.venv}
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$SRC"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "$SRC[bench]"
cd /  # import the installed package, not the source tree
"$VENV/bin/python" -m frozenmap.bench "$@"
