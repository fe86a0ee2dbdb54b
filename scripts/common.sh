# Sourced by scripts/test.sh, the checks and scripts/pypy-suite.sh: the steps
# several of them take, written once.
#
#   install_extras PYTHON EXTRA...     install the requirements of frozenmap's
#                                      extras into PYTHON's environment
#   fresh_venv VENV MAKE...            keep VENV if its python passes
#                                      `venv_ok VENV/bin/python`, else remove it
#                                      and run MAKE... (which creates VENV)
#   run_limited WHAT LIMIT CMD...      run CMD under `timeout -k 30 LIMIT`;
#                                      on a timeout or a failure print a FAIL
#                                      line naming WHAT and return non-zero
#
# The caller defines venv_ok (a shell function or command) before fresh_venv.

# The extras' requirements are read by pip from the frozenmap already installed
# there ("frozenmap[test]" is satisfied by it), so frozenmap is not built again:
# `pip install SRC[test]` would build and reinstall it a second time.  Extra pip
# arguments (e.g. --only-binary :all:) may follow the extras after "--".
install_extras() {
    local python=$1 extras="" pip_args=() out rc=0
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        extras+=${extras:+,}$1
        shift
    done
    [ "${1:-}" != -- ] || { shift; pip_args=("$@"); }
    if ! "$python" -c 'import importlib.metadata as m; m.version("frozenmap")' 2>/dev/null; then
        echo "FAIL: install_extras: frozenmap is not installed for $python" >&2
        return 1
    fi
    out=$("$python" -m pip install -q --disable-pip-version-check "${pip_args[@]}" \
        "frozenmap[$extras]" 2>&1) || rc=$?
    # (pip's notes about this machine's index configuration are noise)
    [ -z "$out" ] || grep -v "^WARNING: Location '" <<<"$out" || true
    return "$rc"
}

fresh_venv() {
    local venv=$1
    shift
    if venv_ok "$venv/bin/python"; then
        echo "== reusing $venv"
        return 0
    fi
    rm -rf "$venv"
    echo "== creating $venv"
    "$@"
}

run_limited() {
    local what=$1 limit=$2 rc=0
    shift 2
    timeout -k 30 "$limit" "$@" || rc=$?
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "FAIL: $what timed out after ${limit}s"
    elif [ "$rc" -ne 0 ]; then
        echo "FAIL: $what exited $rc"
    fi
    return "$rc"
}
