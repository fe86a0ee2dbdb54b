#!/usr/bin/env bash
# Packaging check: what a release would upload is built cleanly and holds what
# it should.
#   1. `python -m build` (sdist, then a wheel from that sdist, as pip would)
#      from a clean copy of the tree prints no warning at all: no setuptools
#      deprecations, no compiler warnings;
#   2. `twine check --strict` on both, `check-wheel-contents` on the wheel;
#   3. the wheel holds only what runs (no .c/.h, no gen_docstrings.py, the
#      compiled C core present); the sdist holds the sources, the LICENSE and
#      the test suite;
#   4. `auditwheel show`: the wheel is manylinux-compatible (Linux only);
#   5. the cibuildwheel configuration selects CPython 3.10-3.15 on every
#      platform (`--print-build-identifiers`), and the release workflow is a
#      valid GitHub Actions workflow (check-jsonschema's bundled schema).
#
# Run by scripts/test.sh with $VENV and $ROOT.  By hand:
#   VENV=.venv ROOT=$PWD bash scripts/checks/15-packaging.sh
# Bounded: each step has a timeout (FROZENMAP_PACKAGING_TIMEOUT, default 600 s).
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
VENV=${VENV:-$ROOT/.venv}
PYTHON="$VENV/bin/python"
LIMIT=${FROZENMAP_PACKAGING_TIMEOUT:-600}
cd "$ROOT"

echo "-- installing the packaging tools"
timeout "$LIMIT" bash -c '. "$1/scripts/common.sh" && install_extras "$2" packaging' _ "$ROOT" "$PYTHON"

. "$ROOT/scripts/clean-copy.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/frozenmap-packaging.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
clean_copy "$WORK/src"

failed=()
fail() {
    echo "FAIL: $*"
    failed+=("$*")
}

echo "-- python -m build (sdist, then the wheel from it)"
# Byte-compiling is skipped (with a "warning:") when PYTHONDONTWRITEBYTECODE is
# set; a user's build does not set it.  The C core is required here.
if ! (cd "$WORK/src" && env -u PYTHONDONTWRITEBYTECODE FROZENMAP_REQUIRE_C=1 \
        timeout "$LIMIT" "$PYTHON" -m build --outdir "$WORK/dist" . >"$WORK/build.log" 2>&1); then
    cat "$WORK/build.log"
    fail "python -m build failed"
else
    tail -n 1 "$WORK/build.log"
    # pip's notes about this machine's index configuration are not build output.
    if grep -v "^WARNING: Location '" "$WORK/build.log" | grep -i -E "warning|deprecat" >"$WORK/warnings.txt"; then
        cat "$WORK/warnings.txt"
        fail "the build printed $(wc -l <"$WORK/warnings.txt") warning line(s)"
    else
        echo "   no warnings"
    fi
fi

wheel=$(ls "$WORK"/dist/*.whl 2>/dev/null | head -n 1 || true)
sdist=$(ls "$WORK"/dist/*.tar.gz 2>/dev/null | head -n 1 || true)
if [ -n "$wheel" ] && [ -n "$sdist" ]; then
    echo "-- twine check --strict"
    timeout "$LIMIT" "$VENV/bin/twine" check --strict "$sdist" "$wheel" || fail "twine check"

    echo "-- check-wheel-contents"
    timeout "$LIMIT" "$VENV/bin/check-wheel-contents" "$wheel" || fail "check-wheel-contents"

    echo "-- what the wheel and the sdist hold"
    "$PYTHON" - "$wheel" "$sdist" <<'PY' || fail "wheel or sdist contents"
import sys, tarfile, zipfile

wheel, sdist = sys.argv[1:]
names = zipfile.ZipFile(wheel).namelist()
problems = [n for n in names if n.endswith((".c", ".h", "gen_docstrings.py", "_build_status.txt"))]
if problems:
    print("the wheel ships files that do not run:", problems)
if not any("/_cfrozenmap." in n and n.endswith((".so", ".pyd")) for n in names):
    problems.append("no compiled C core in the wheel")
    print(problems[-1])
print("   wheel: %d files" % len(names))
with tarfile.open(sdist) as archive:
    members = {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}
for needed in ("LICENSE", "frozenmap/_ccore/module.c", "frozenmap/_ccore/cfrozenmap.h",
               "scripts/gen_docstrings.py", "tests/conftest.py", "MANIFEST.in"):
    if needed not in members:
        problems.append("the sdist lacks " + needed)
        print(problems[-1])
print("   sdist: %d files" % len(members))
sys.exit(1 if problems else 0)
PY

    if [ "$(uname -s)" = Linux ]; then
        echo "-- auditwheel show"
        out=$(timeout "$LIMIT" "$VENV/bin/auditwheel" show "$wheel" 2>&1) || fail "auditwheel show"
        echo "$out" | sed -n '1,4p'
        echo "$out" | grep -q 'platform tag: "manylinux_' || fail "the wheel is not manylinux-compatible"
    fi
fi

echo "-- cibuildwheel --print-build-identifiers"
for platform in linux macos windows; do
    ids=$(cd "$WORK/src" && timeout "$LIMIT" "$VENV/bin/cibuildwheel" --print-build-identifiers --platform "$platform" .)
    echo "   $platform: $(echo "$ids" | wc -l) wheels: $(echo "$ids" | tr '\n' ' ')"
    for v in 310 311 312 313 314 315; do
        echo "$ids" | grep -q "^cp$v-" || fail "cibuildwheel builds no cp$v wheel on $platform"
    done
done
ids=$(cd "$WORK/src" && "$VENV/bin/cibuildwheel" --print-build-identifiers --platform linux .)
for tag in manylinux_x86_64 manylinux_aarch64 musllinux_x86_64 musllinux_aarch64; do
    echo "$ids" | grep -q "$tag" || fail "cibuildwheel builds no $tag wheel"
done

echo "-- the release workflow"
timeout "$LIMIT" "$VENV/bin/check-jsonschema" --builtin-schema vendor.github-workflows \
    .github/workflows/release.yml || fail "release.yml is not a valid workflow"

if [ ${#failed[@]} -gt 0 ]; then
    printf 'packaging check failed: %s\n' "${failed[@]}"
    exit 1
fi
echo "-- packaging check passed"
