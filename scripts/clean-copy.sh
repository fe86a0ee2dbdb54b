# Sourced by scripts/test.sh, scripts/bench.sh and the checks that build
# (scripts/checks/35-versions.sh, 15-packaging.sh, 55-refleaks-dbg.sh, 60-asan.sh):
#
#   clean_copy DEST    copy the source tree at $ROOT to DEST as a fresh clone has it
#
# Tracked files plus new, not-ignored ones (uncommitted work is tested), and
# nothing a build leaves behind: no build/, no *.egg-info, no in-place *.so.
# pip builds in the source tree, and setuptools reuses what it finds in build/:
# an extension built earlier would then be installed even when compiling the
# current sources fails, so every install here starts from such a copy.
clean_copy() {
    local dest=$1
    mkdir -p "$dest"
    if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard \
            | tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$dest" -xf -
    else
        tar -C "$ROOT" --exclude=./.git --exclude='./.venv*' --exclude=./build \
            --exclude='*.egg-info' --exclude='*.so' --exclude='__pycache__' \
            --exclude=./.hypothesis -cf - . | tar -C "$dest" -xf -
    fi
    find "$dest" -name '*.so' -delete
}
