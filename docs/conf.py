"""Sphinx configuration for the frozenmap documentation.

Build:   sphinx-build -W --keep-going -b html docs docs/_build/html
Doctest: sphinx-build -W --keep-going -b doctest docs docs/_build/doctest

Both run in CI through scripts/checks/30-docs.sh.  The pages are MyST Markdown;
every ``{doctest}`` and ``{testcode}`` block on them is executed by the doctest
builder, and so are the doctests in the docstrings that autodoc pulls in.
"""

import glob
import json
import os
import re

import frozenmap

project = "frozenmap"
author = "frozenmap developers"
copyright = "frozenmap developers"
release = frozenmap.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
# _static holds benchmark output (maybe a Markdown table): data, not pages.
# notes/: working notes (measurements, what was tried), read in the repository.
exclude_patterns = ["_build", "_static", "notes", "Thumbs.db", ".DS_Store"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = "frozenmap %s" % release
html_static_path = ["_static"]

# autodoc: document what the user imports (``frozenmap.frozendict``), in source order.
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_preserve_defaults = True

# doctest: every page shares these imports, and the core in use is recorded in
# the output so a failure says which core it came from.
doctest_global_setup = """
from frozenmap import frozendict, Evolver, Diff
import frozenmap
"""
doctest_test_doctest_blocks = "default"

# -- the performance page: show whatever the benchmark command wrote into
# docs/_static/bench (PNG charts from --plot, results from --json), and a clear
# "not yet measured" note otherwise; numbers are never typed into the page.

_HERE = os.path.dirname(os.path.abspath(__file__))
_BENCH_DIR = os.path.join(_HERE, "_static", "bench")
_BENCH_MARKER = "<!-- bench-results -->"


def _bench_results_markdown():
    from frozenmap import bench

    titles = {"time-all": "All timed operations"}
    order = ["time-all"]
    for op in bench.OPERATIONS:
        name = {"mem_item": "memory-per-item", "mem_version": "memory-per-version"}.get(
            op.key, "time-" + op.key
        )
        titles[name] = op.title
        order.append(name)

    def rank(path):
        name = os.path.splitext(os.path.basename(path))[0]
        return (order.index(name) if name in order else len(order), name)

    parts = []
    # results.json (the full run, with the charts) first, then the others
    # (results-3.15.json: a run on 3.15, with the builtin frozendict).
    paths = sorted(
        glob.glob(os.path.join(_BENCH_DIR, "*.json")),
        key=lambda path: (os.path.basename(path) != "results.json", path),
    )
    for path in paths:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        meta = data["meta"]
        parts.append(
            "**%s**, n = %s:"
            % (meta["machine"]["python"], ", ".join("{:,}".format(n) for n in meta["sizes"]))
        )
        parts.append("```text\n%s\n```" % bench.render_report(data))
    for path in sorted(glob.glob(os.path.join(_BENCH_DIR, "*.png")), key=rank):
        name = os.path.splitext(os.path.basename(path))[0]
        title = titles.get(name, name.replace("-", " "))
        parts.append(
            "```{figure} _static/bench/%s.png\n:alt: %s\n:width: 100%%\n\n%s\n```"
            # Quote the alt text (a title like "| with 10 keys" is YAML syntax)
            # and escape markdown punctuation in the caption ("- 10 keys").
            % (name, json.dumps(title), re.sub(r"([|&*_`\\-])", r"\\\1", title))
        )
    if not parts:
        parts.append(
            ":::{note}\n"
            "**Results not yet recorded.** No benchmark results were found in "
            "`docs/_static/bench/` when this page was built. Run the command above and "
            "rebuild the documentation to show the table and the charts here.\n"
            ":::"
        )
    return "\n\n".join(parts)


def _insert_bench_results(app, docname, source):
    if docname == "performance" and _BENCH_MARKER in source[0]:
        source[0] = source[0].replace(_BENCH_MARKER, _bench_results_markdown())


def setup(app):
    app.connect("source-read", _insert_bench_results)
