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
for arg in "$@"; do
    case "$arg" in
    -h | --help)
        # At once: the options' help from the source tree, nothing built or installed.
        echo "usage: bash scripts/bench.sh [OPTIONS]"
        echo
        echo "Creates .venv (if missing), installs frozenmap (from a clean copy of the tree)"
        echo "and the peer libraries, then runs python -m frozenmap.bench with OPTIONS:"
        echo
        FROZENMAP_PURE_PYTHON=1 "${PYTHON:-python3}" -m frozenmap.bench --help
        exit
        ;;
    esac
done
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
