#!/usr/bin/env bash
# Typing check:
#   1. mypy --strict on the pure-Python core (annotated inline) and the public stubs;
#   2. mypy and pyright on tests/typing: assert_type checks of the public API, and
#      lines that must be rejected (each with an ignore comment that the checker
#      reports as unused if the error goes away);
#   3. tests/typing/test_api.py and api_*.py run as scripts, so everything typed
#      there also works at run time;
#   4. stubtest: the public stub against the runtime, on each core that imports.
#
# Run by scripts/test.sh with $VENV (frozenmap already installed) and $ROOT.
# By hand:  VENV=.venv ROOT=$PWD bash scripts/checks/20-typing.sh
# Configuration: mypy.ini and pyrightconfig.json at the repository root.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
VENV=${VENV:-$ROOT/.venv}
PYTHON="$VENV/bin/python"
cd "$ROOT"

echo "-- installing the typing tools"
# The typing extra: mypy, pyright, and typing_extensions for tests/typing on 3.10.
. "$ROOT/scripts/common.sh"
install_extras "$PYTHON" typing

# pyright's pip package bundles pyright itself and runs it with the system's node;
# without this it asks PyPI whether a newer pyright exists, on every run.
export PYRIGHT_PYTHON_IGNORE_WARNINGS=1

# Every step runs, so one report shows everything; the check fails if any did.
failed=()
step() {
    local name=$1
    shift
    echo "-- $name"
    if ! "$@"; then
        failed+=("$name")
    fi
}

step "mypy --strict: the pure-Python core, the modules above the cores and the public stubs" \
    "$PYTHON" -m mypy --config-file mypy.ini --strict \
    frozenmap/_pycore frozenmap/versioned.py frozenmap/__init__.pyi frozenmap/_ccore/_cfrozenmap.pyi

step "mypy: tests/typing" \
    "$PYTHON" -m mypy --config-file mypy.ini --strict tests/typing

step "pyright: tests/typing and the stubs" \
    "$VENV/bin/pyright" --project pyrightconfig.json --pythonpath "$PYTHON"

# Run from outside the tree, so the installed package is what runs.
run_test_api() {
    local script
    for script in "$ROOT"/tests/typing/test_api.py "$ROOT"/tests/typing/api_*.py; do
        (cd / && "$PYTHON" "$script") || return 1
    done
}
step "tests/typing/test_api.py and api_*.py at run time" run_test_api

# stubtest compares the installed package's stub with the runtime, once for each
# core that imports, so neither the stub nor either core can drift from the other.
# $1 is the value for FROZENMAP_PURE_PYTHON.
run_stubtest() {
    (cd / && FROZENMAP_PURE_PYTHON=$1 "$PYTHON" -m mypy.stubtest frozenmap \
        --mypy-config-file "$ROOT/tests/typing/stubtest-mypy.ini" \
        --allowlist "$ROOT/tests/typing/stubtest-allowlist.txt" --ignore-unused-allowlist)
}
step "stubtest: frozenmap on the pure-Python core" run_stubtest 1
if (cd / && FROZENMAP_PURE_PYTHON=0 "$PYTHON" -c 'import frozenmap._ccore._cfrozenmap') 2>/dev/null; then
    step "stubtest: frozenmap on the C core" run_stubtest 0
else
    echo "-- stubtest on the C core skipped: it is not installed"
fi

if [ ${#failed[@]} -gt 0 ]; then
    printf 'typing check failed: %s\n' "${failed[@]}"
    exit 1
fi
echo "-- typing check passed"
