#!/usr/bin/env bash
# Keeps the benchmarks alive: the asv suite must still import and run, and the
# README's benchmark command (`python -m frozenmap.bench`) must still print its
# table, save JSON, reload it and plot.
#
# Run by scripts/test.sh with $VENV (frozenmap already installed in it) and
# $ROOT (the repository).  Installs the `bench` extra's requirements (the peer
# libraries, matplotlib, asv) into $VENV, then:
#   1. asv check --python=same              every benchmark is well formed
#   2. asv run --python=same --quick        a few benchmarks, sizes 10 and 1,000
#   3. python -m frozenmap.bench --quick --sizes 100 --json --plot, then --load
# Takes about a minute; exits non-zero on any failure.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
VENV=${VENV:-$ROOT/.venv}
PYTHON="$VENV/bin/python"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "-- installing the bench requirements into $VENV"
# From the installed frozenmap's metadata (the `bench` extra), so frozenmap
# itself is not rebuilt and pyproject.toml stays the only list.
. "$ROOT/scripts/common.sh"
install_extras "$PYTHON" bench
"$PYTHON" -c 'import asv, matplotlib' || { echo "FAIL: the bench extra did not install asv and matplotlib" >&2; exit 1; }

echo "-- asv check and a quick asv run"
cd "$ROOT/asv_benchmarks"
# asv keeps its machine description in ~/.asv-machine.json: give it a private HOME.
export HOME="$WORK/home" FROZENMAP_ASV_SIZES=10,1000
mkdir -p "$HOME"
"$PYTHON" -m asv machine --yes --machine ci >/dev/null
"$PYTHON" -m asv check --python=same
"$PYTHON" -m asv run --python=same --quick --machine ci --show-stderr \
    --bench 'TimeLookupHit|TimeSetExisting|TimeBatch|TimeHashDerived|TrackMemVersion|TimeNestedPaths' \
    | tee "$WORK/asv.log"
if ! grep -Eq 'Running [1-9][0-9]* total benchmarks' "$WORK/asv.log"; then
    echo "FAIL: asv ran no benchmarks (renamed operations?)" >&2
    exit 1
fi

echo "-- python -m frozenmap.bench --quick --sizes 100"
cd "$WORK"  # import the installed package, not the source tree
"$PYTHON" -m frozenmap.bench --quick --sizes 100 --json bench.json --plot plots | tee bench.log
grep -q '^libraries: frozenmap:' bench.log || { echo "FAIL: no frozenmap core was measured" >&2; exit 1; }
"$PYTHON" -m frozenmap.bench --load bench.json --plot plots-reloaded >/dev/null
test -s plots/time-lookup_hit.png -a -s plots/memory-per-version.png -a -s plots-reloaded/time-lookup_hit.png
echo "-- benchmarks OK"
