#!/usr/bin/env bash
# Documentation check: the Sphinx site builds with no warnings, every code example
# on it runs (the doctest builder executes each page's {doctest}/{testcode} blocks
# and the docstring examples autodoc pulls in), and the README's examples run.
#
# Run by scripts/test.sh with $VENV (frozenmap already installed) and $ROOT.
# By hand:  VENV=.venv ROOT=$PWD bash scripts/checks/30-docs.sh
# Output goes to $DOCS_OUT (default: a temporary directory, removed afterwards).
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
VENV=${VENV:-$ROOT/.venv}
PYTHON="$VENV/bin/python"
cd "$ROOT"

echo "-- installing the docs extra"
. "$ROOT/scripts/common.sh"
install_extras "$PYTHON" docs

if [ -n "${DOCS_OUT:-}" ]; then
    mkdir -p "$DOCS_OUT"
    out=$(cd "$DOCS_OUT" && pwd)
else
    out=$(mktemp -d "${TMPDIR:-/tmp}/frozenmap-docs.XXXXXX")
    trap 'rm -rf "$out"' EXIT
fi

# Build from outside the source tree so the pages document (and the doctests
# exercise) the installed package, with whichever core it loads by default.
cd "$out"
"$PYTHON" -c 'import frozenmap; print("-- documenting frozenmap", frozenmap.__version__, "core:", frozenmap.IMPLEMENTATION)'

echo "-- sphinx-build -b html (warnings are errors)"
"$PYTHON" -m sphinx -W --keep-going -q -b html -d "$out/doctrees" "$ROOT/docs" "$out/html"

echo "-- sphinx-build -b doctest (every example on every page)"
"$PYTHON" -m sphinx -W --keep-going -q -b doctest -d "$out/doctrees" "$ROOT/docs" "$out/doctest"
tail -n 6 "$out/doctest/output.txt"
if [ "$("$PYTHON" -c 'import frozenmap; print(frozenmap.IMPLEMENTATION)')" = c ]; then
    echo "-- sphinx-build -b doctest again on the pure-Python core"
    FROZENMAP_PURE_PYTHON=1 "$PYTHON" -m sphinx -W --keep-going -q -E -b doctest \
        -d "$out/doctrees-python" "$ROOT/docs" "$out/doctest-python"
    tail -n 6 "$out/doctest-python/output.txt"
fi

echo "-- README.md examples"
if [ ! -f "$ROOT/README.md" ]; then
    echo "README.md not found: nothing to check"
    exit 0
fi
# The README's ``>>>`` examples, block by block in one shared namespace, as a
# reader would type them.  Blocks are taken from the Markdown code fences, so a
# closing ``` is never mistaken for expected output.
"$PYTHON" - "$ROOT/README.md" <<'PY'
import doctest
import re
import sys

path = sys.argv[1]
text = open(path, encoding="utf-8").read()
fences = re.finditer(r"^(?P<indent> *)(?P<fence>```+|~~~+)[^\n]*\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
                     text, re.M | re.S)
parser = doctest.DocTestParser()
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
globs = {"__name__": "__readme__"}
examples = 0
for match in fences:
    body = match.group("body")
    if ">>>" not in body:
        continue
    line = text.count("\n", 0, match.start("body"))
    test = parser.get_doctest(body, globs, "README.md", path, line)
    examples += len(test.examples)
    runner.run(test, clear_globs=False)
    globs = test.globs  # the next block sees what this one defined
failed, attempted = runner.summarize(verbose=False)
print("README.md: %d examples, %d failed" % (attempted, failed))
if not examples:
    print("warning: README.md has no >>> examples to check")
sys.exit(1 if failed else 0)
PY
