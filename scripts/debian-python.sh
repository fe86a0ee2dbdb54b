#!/usr/bin/env bash
# Fetch CPython 3.X or PyPy from Debian's development suite (sid) and make it run here.
#
# Usage: bash scripts/debian-python.sh 3.15              prints the interpreter's path
#        bash scripts/debian-python.sh --cppflags 3.15   prints the -I flags C builds need
#        bash scripts/debian-python.sh --venv 3.15 DIR   makes a venv with pip in DIR
#        bash scripts/debian-python.sh --testsuite 3.15  prints the folder holding 3.15's
#                                                        `test` package (Lib/test)
#        bash scripts/debian-python.sh pypy3.11          the same for PyPy (sid's
#        bash scripts/debian-python.sh --venv pypy3.11 DIR   pypy3 package, Python 3.11)
#
# pyenv on this machine stops at 3.13; sid ships python3.14 and python3.15 as
# binary packages built against a newer glibc than the host's.  So this script
# downloads them (and sid's libc and the few libraries the interpreter and its
# extension modules link) with apt-get, through a private apt configuration
# that leaves the system's sources untouched, unpacks everything into one
# folder, and relinks the interpreter with patchelf to that folder's loader and
# libraries.  The relinked binary finds its own stdlib next to it.
#
# Everything is cached in $FROZENMAP_PYTHON_CACHE (default
# ~/.cache/frozenmap-python), one folder per Python version, and rebuilt only
# when sid's package versions change (the package lists are refreshed when
# older than FROZENMAP_APT_MAX_AGE minutes, default 60; when sid cannot be
# reached, a cached interpreter is used as it is).  Calls that fetch take a
# lock on the cache, so checks running at once can call this.
# Needs root (or patchelf already installed) on a Debian-based machine.
#
# --testsuite fetches the interpreter too, then CPython's own tests of the same
# release (libpython3.X-testsuite, whose version is pinned to the interpreter's
# libpython3.X-stdlib), and assembles the whole `test` package in a folder of
# its own, $CACHE/3.X-testsuite: the testsuite's files plus the `test/__init__`,
# `test.support` and `test.libregrtest` that Debian ships in libpython3.X-stdlib.
# That folder holds nothing but `test`, so any Python can put it on its path
# (scripts/cpython_frozendict_tests.py runs 3.15's frozendict tests that way).
#
# Extension modules built against it need the multiarch pyconfig.h, which the
# compiler would otherwise look for in the host's /usr/include.  Pass the
# flags as CPPFLAGS, which setuptools adds to the interpreter's own flags
# (CFLAGS replaces them, dropping -O2 and -DNDEBUG):
#     CPPFLAGS="$(bash scripts/debian-python.sh --cppflags 3.15)" pip install .
# (PyPy has no --cppflags: frozenmap installs its pure core there.)
set -euo pipefail

want_cppflags=""
want_testsuite=""
venv_dir=""
if [ "${1:-}" = "--cppflags" ]; then
    want_cppflags=1
    shift
elif [ "${1:-}" = "--testsuite" ]; then
    want_testsuite=1
    shift
elif [ "${1:-}" = "--venv" ]; then
    venv_dir=${3:?usage: debian-python.sh --venv 3.X DIR}
    set -- "$2"
fi
V=${1:?usage: debian-python.sh [--cppflags | --testsuite] 3.X | --venv 3.X DIR | [--venv] pypy3.X [DIR]}
case "$V" in
    3.[0-9]|3.[0-9][0-9]) IMPL=python ;;
    pypy3.[0-9]|pypy3.[0-9][0-9]) IMPL=pypy ;;
    *) echo "debian-python.sh: not a Python version: $V" >&2; exit 2 ;;
esac

CACHE=${FROZENMAP_PYTHON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/frozenmap-python}
ARCH_TRIPLET=x86_64-linux-gnu
APTDIR=$CACHE/apt
DEST=$CACHE/$V
ROOTFS=$DEST/root
if [ "$IMPL" = pypy ]; then
    PYBIN=$ROOTFS/usr/bin/$V
    NAME=$V
else
    PYBIN=$ROOTFS/usr/bin/python$V
    NAME="python $V"
fi

log() { echo "debian-python.sh: $*" >&2; }

if [ -n "$venv_dir" ]; then
    # Debian's ensurepip looks for the host's wheels: make the venv without
    # pip and bootstrap pip from the wheel fetched with the interpreter.
    python=$(bash "$0" "$V")
    "$python" -m venv --without-pip "$venv_dir"
    wheel=$(ls "$(dirname "$python")"/../share/python-wheels/pip-*.whl | head -n1)
    "$venv_dir/bin/python" "$wheel/pip" install -q --disable-pip-version-check --no-index "$wheel"
    exit 0
fi

if [ -n "$want_cppflags" ]; then
    if [ "$IMPL" = pypy ]; then
        log "--cppflags is for CPython only"
        exit 2
    fi
    # Debian's python3.X/pyconfig.h includes <x86_64-linux-gnu/python3.X/pyconfig.h>;
    # -idirafter finds that in our folder after the host's own include dirs.
    echo "-I$ROOTFS/usr/include/python$V -I$ROOTFS/usr/include/$ARCH_TRIPLET/python$V -idirafter $ROOTFS/usr/include"
    [ -x "$PYBIN" ] || { log "$NAME is not fetched yet"; exit 1; }
    exit 0
fi

# One fetch at a time: scripts/test.sh runs two checks at once, and the checks
# that call this share one apt state and one cache.  (A nested call, from
# --testsuite or --venv, runs under its caller's lock.)
mkdir -p "$CACHE"
if [ -z "${FROZENMAP_PYTHON_LOCKED:-}" ]; then
    exec 9>"$CACHE/.lock"
    flock 9
    export FROZENMAP_PYTHON_LOCKED=1
fi

if [ "$(dpkg --print-architecture 2>/dev/null || true)" != amd64 ]; then
    log "only amd64 Debian machines are supported"
    exit 1
fi

# The interpreter and what it (and the stdlib's extension modules that the
# tests and venv use) links against, all from sid: mixing sid's libpython with
# the host's older libc does not load.
# sid's PyPy is one package set (pypy3) whose Python version is checked once
# unpacked (the binary is named pypy3.X).
if [ "$IMPL" = pypy ]; then
    PACKAGES=(
        pypy3 pypy3-lib pypy3-venv python3-pip-whl
        libc6 zlib1g libexpat1 libffi8 libssl3t64 libbz2-1.0 liblzma5 libsqlite3-0
        libgcc-s1 libgdbm6t64 libncursesw6 libtinfo6
    )
    MAIN_PACKAGE=pypy3
else
    PACKAGES=(
        "python$V" "python$V-minimal" "libpython$V-minimal" "libpython$V-stdlib"
        "python$V-dev" "libpython$V-dev" "python$V-venv" python3-pip-whl
        libc6 zlib1g libexpat1 libffi8 libssl3t64 libbz2-1.0 liblzma5 libzstd1
        libmpdec4 libsqlite3-0 libuuid1
    )
    MAIN_PACKAGE=python$V
fi

# A private apt: sid's package list only, in our own state and cache dirs.
mkdir -p "$APTDIR/sources" "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial" "$APTDIR/debs"
cat >"$APTDIR/sources/sid.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: sid
Components: main
Architectures: amd64
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
APT_OPTS=(
    -o Dir::Etc::sourcelist=/dev/null
    -o "Dir::Etc::sourceparts=$APTDIR/sources"
    -o "Dir::State::Lists=$APTDIR/lists"
    -o "Dir::Cache=$APTDIR/cache"
    -o APT::Architectures=amd64
    -o Debug::NoLocking=1
    -o APT::Sandbox::User=root
)

if [ -n "$want_testsuite" ]; then
    # The interpreter first: that call refreshes sid's package list and says
    # which release is current.
    bash "$0" "$V" >/dev/null
    stdlib_version=$(sed -n "s/^libpython$V-stdlib=//p" "$DEST/packages")
    TSDEST=$CACHE/$V-testsuite
    TESTDIR=$TSDEST/root/usr/lib/python$V
    want="libpython$V-testsuite=$stdlib_version"
    if [ -f "$TESTDIR/test/test_dict.py" ] && [ -f "$TESTDIR/test/support/__init__.py" ] \
            && [ "$(cat "$TSDEST/packages" 2>/dev/null)" = "$want" ]; then
        echo "$TESTDIR"
        exit 0
    fi
    log "fetching CPython's tests from sid: $want"
    if ! (cd "$APTDIR/debs" && apt-get -qq "${APT_OPTS[@]}" download "$want" >/dev/null); then
        if [ -f "$TESTDIR/test/test_dict.py" ]; then
            log "cannot download $want; using the cached $(cat "$TSDEST/packages")"
            echo "$TESTDIR"
            exit 0
        fi
        log "cannot download $want"
        exit 1
    fi
    NEW=$TSDEST.new
    rm -rf "$NEW"
    mkdir -p "$NEW/root"
    dpkg-deb -x "$(ls "$APTDIR/debs/libpython${V}-testsuite_${stdlib_version//:/%3a}_"*.deb | head -n1)" "$NEW/root"
    # Debian ships test/__init__.py, test.support and test.libregrtest in
    # libpython3.X-stdlib: copy them from the interpreter of the same release.
    cp -a "$ROOTFS/usr/lib/python$V/test/." "$NEW/root/usr/lib/python$V/test/"
    printf '%s' "$want" >"$NEW/packages"
    rm -rf "$TSDEST"
    mv "$NEW" "$TSDEST"
    log "CPython $V's tests ready at $TESTDIR"
    echo "$TESTDIR"
    exit 0
fi

# sid's package list is refreshed at most every $FROZENMAP_APT_MAX_AGE minutes
# (0: on every call): one CI run asks for it about ten times.
UPDATED=$APTDIR/updated
max_age=${FROZENMAP_APT_MAX_AGE:-60}
if [ "$max_age" -gt 0 ] && [ -n "$(find "$UPDATED" -mmin "-$max_age" 2>/dev/null)" ]; then
    :
elif apt-get -qq "${APT_OPTS[@]}" update >"$APTDIR/update.log" 2>&1; then
    touch "$UPDATED"
else
    if [ -x "$PYBIN" ]; then
        log "cannot refresh sid's package list (see $APTDIR/update.log); using the cached $NAME"
        echo "$PYBIN"
        exit 0
    fi
    log "apt-get update for sid failed:"
    cat "$APTDIR/update.log" >&2
    exit 1
fi

# name=version for every package (one apt-cache call: each loads the whole
# list): the cache key.
declare -A candidate=()
while IFS='=' read -r pkg ver; do
    candidate[$pkg]=$ver
done < <(apt-cache "${APT_OPTS[@]}" show --no-all-versions "${PACKAGES[@]}" 2>/dev/null \
         | awk '/^Package: /{p=$2} /^Version: /{print p "=" $2}')
versions=""
for pkg in "${PACKAGES[@]}"; do
    if [ -z "${candidate[$pkg]:-}" ]; then
        log "sid has no package $pkg"
        exit 1
    fi
    versions+="$pkg=${candidate[$pkg]}"$'\n'
done

if [ -x "$PYBIN" ] && [ -f "$DEST/packages" ] && [ "$(cat "$DEST/packages")" = "${versions%$'\n'}" ] \
        && "$PYBIN" -c 'import ssl, venv, sqlite3' >/dev/null 2>&1; then
    echo "$PYBIN"
    exit 0
fi

log "fetching $V from sid: $(grep "^$MAIN_PACKAGE=" <<<"$versions")"
if ! command -v patchelf >/dev/null 2>&1; then
    log "installing patchelf"
    apt-get install -y -qq -o DPkg::Lock::Timeout=300 patchelf >/dev/null 2>&1 \
        || { apt-get update -qq -o DPkg::Lock::Timeout=300 >/dev/null \
             && apt-get install -y -qq -o DPkg::Lock::Timeout=300 patchelf >/dev/null; }
fi

# Download into a per-version folder, dropping .debs of older versions.
(
    cd "$APTDIR/debs"
    mapfile -t specs < <(printf '%s' "$versions")
    apt-get -qq "${APT_OPTS[@]}" download "${specs[@]}" >/dev/null
)

NEW=$DEST.new
rm -rf "$NEW"
mkdir -p "$NEW/root"
while IFS='=' read -r pkg ver; do
    [ -n "$pkg" ] || continue
    # apt names the file pkg_version_arch.deb with ':' in the version as %3a.
    deb=$(ls "$APTDIR/debs/${pkg}_${ver//:/%3a}_"*.deb 2>/dev/null | head -n1)
    [ -n "$deb" ] || { log "download of $pkg=$ver is missing"; exit 1; }
    dpkg-deb -x "$deb" "$NEW/root"
done <<<"$versions"

lib=$DEST/root/usr/lib/$ARCH_TRIPLET
loader=$(ls "$NEW/root/usr/lib/$ARCH_TRIPLET/ld-linux-x86-64.so.2" 2>/dev/null \
         || ls "$NEW/root/lib64/ld-linux-x86-64.so.2")
loader=${loader/#$NEW/$DEST}
# The paths are final ($DEST, not $NEW): the folder is renamed into place below.
# DT_RPATH (--force-rpath), not RUNPATH: RPATH also applies to what the
# interpreter dlopens later (lib-dynload's _ssl needs sid's libcrypto).
if [ ! -f "$NEW/root${PYBIN#$ROOTFS}" ]; then
    log "sid's $MAIN_PACKAGE has no ${PYBIN#$ROOTFS}: it is another Python version"
    exit 1
fi
patchelf --set-interpreter "$loader" --force-rpath --set-rpath "$lib" "$NEW/root${PYBIN#$ROOTFS}"
printf '%s' "${versions%$'\n'}" >"$NEW/packages"
rm -rf "$DEST"
mv "$NEW" "$DEST"
# Keep only the .debs of the current versions.
find "$APTDIR/debs" -name '*.deb' -mtime +7 -delete 2>/dev/null || true

if ! "$PYBIN" -c 'import ssl, venv, sqlite3, zlib, ctypes, decimal' >&2; then
    log "the relinked $NAME does not start or lacks stdlib modules"
    exit 1
fi
log "$NAME ready: $("$PYBIN" -c 'import sys; print(sys.version.split()[0])') at $PYBIN"
echo "$PYBIN"
