#!/usr/bin/env bash
# Fuzzing: fuzz/fuzz_ops.py for a bounded time on the C core (the pure core if
# the C core did not build), checked against a dict model.
#
# Installs atheris into $VENV and runs it coverage-guided from the seeds in
# fuzz/corpus (new inputs go to a temporary copy, never into the repo).  If
# atheris cannot be installed for this Python, the harness's decoder is fed
# random bytes for the same time instead, and the output says so.
#
# Run by scripts/test.sh with $VENV (frozenmap already installed) and $ROOT.
# By hand:  VENV=.venv ROOT=$PWD bash scripts/checks/70-fuzz.sh
# Environment: FUZZ_SECONDS (default 120), FUZZ_CORE (c or python).
# A failing input is saved (crash-*, or fuzz/crash-* in the fallback) and the
# check fails; replay it with  python fuzz/fuzz_ops.py --replay FILE.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
VENV=${VENV:-$ROOT/.venv}
PYTHON="$VENV/bin/python"
SECONDS_BUDGET=${FUZZ_SECONDS:-120}
cd "$ROOT"

echo "-- replaying the seed corpus"
"$PYTHON" fuzz/fuzz_ops.py --replay fuzz/corpus

if "$PYTHON" -m pip install -q --disable-pip-version-check atheris 2>/dev/null \
        && "$PYTHON" -c 'import atheris' 2>/dev/null; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/frozenmap-fuzz.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    mkdir -p "$work/corpus" "$work/artifacts"
    echo "-- atheris: ${SECONDS_BUDGET}s, corpus in $work/corpus"
    set +e
    "$PYTHON" fuzz/fuzz_ops.py "$work/corpus" fuzz/corpus \
        -max_total_time="$SECONDS_BUDGET" -timeout=30 -rss_limit_mb=2048 \
        -artifact_prefix="$work/artifacts/" -print_final_stats=1 2>"$work/log"
    status=$?
    set -e
    grep -E "^(fuzz_ops|Done|stat::number_of_executed_units|stat::average_exec_per_sec|#[0-9]+ +DONE)" "$work/log" || true
    if [ "$status" -ne 0 ]; then
        tail -n 60 "$work/log"
        mkdir -p "$ROOT/fuzz/crashes"
        cp "$work"/artifacts/* "$ROOT/fuzz/crashes/" 2>/dev/null || true
        echo "FAIL: the fuzzer found a failing input (copied to fuzz/crashes/)"
        exit 1
    fi
else
    echo "-- atheris cannot be installed for $("$PYTHON" --version 2>&1):" \
         "falling back to random bytes through the same decoder (no coverage guidance)"
    "$PYTHON" fuzz/fuzz_ops.py --random-seconds "$SECONDS_BUDGET"
fi
