# shellcheck shell=bash
# Sourced by scripts/checks/*.sh (not a check itself: scripts/test.sh runs
# only scripts/checks/*.sh).  Needs $ROOT.
#
# copy_source DEST: copy the source tree as a clean clone would have it, plus
# uncommitted work (tracked and new, not ignored, files): no build/, no
# *.egg-info, no in-place built *.so, no venvs; so that a build from DEST never
# reuses objects from another build.
copy_source() {
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
