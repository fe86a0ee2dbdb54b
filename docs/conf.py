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
exclude_patterns = ["_build", "_static", "Thumbs.db", ".DS_Store"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = "frozenmap %s" % release
html_static_path = ["_static"]
html_css_files = ["bench.css"]

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
    """The results part of the performance page, generated from the saved runs:
    HTML tables (frozenmap.bench.pages) and one chart per operation."""
    from frozenmap.bench import OPERATIONS, pages
    from frozenmap.bench.plots import chart_name
    from frozenmap.bench.report import best_peer_ratio, in_words

    order = []
    ops = {}
    for op in OPERATIONS:
        name = chart_name(op)
        order.append(name)
        ops[name] = op

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
    main_run = None
    for path in paths:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        main_run = main_run or data
        meta = data["meta"]
        parts.append("### %s" % meta["machine"]["python"])
        parts.append(pages.render_html_tables(data))
    if main_run is not None:
        parts.append("### Charts")
        parts.append(
            "Each chart: one operation, n on the x axis, time (or bytes) on the y "
            "axis, both logarithmic; lower is better. Under each, how frozenmap's C "
            "core compares with the best other library at the largest n."
        )
    for path in sorted(glob.glob(os.path.join(_BENCH_DIR, "*.png")), key=rank):
        name = os.path.splitext(os.path.basename(path))[0]
        op = ops.get(name)
        if op is None or main_run is None:
            continue  # a chart of an operation the benchmark no longer has
        n = max(main_run["meta"]["sizes"])
        row = {
            m["lib"]: pages.Measurement(**m)
            for m in main_run["results"]
            if m["op"] == op.key and m["n"] == n
        }
        peers = [lib["name"] for lib in main_run["meta"]["libraries"] if not lib["frozenmap"]]
        ratio = best_peer_ratio(
            row, "frozenmap:c", peers, bool(main_run["meta"].get("interleaved"))
        )
        caption = (
            "At n = {:,}: frozenmap (C) {} {}.".format(
                n,
                in_words(ratio.ratio, op.unit),
                "as " + ratio.best
                if in_words(ratio.ratio, op.unit) == "same"
                else "than " + ratio.best,
            )
            if ratio
            else "At n = {:,}: no other library offers it.".format(n)
        )
        parts.append(
            "```{figure} _static/bench/%s.png\n:alt: %s\n:width: 100%%\n\n%s\n```"
            # Quote the alt text (a title like "| with 10 keys" is YAML syntax).
            % (name, json.dumps("chart: " + op.title), caption)
        )
    if not parts:
        parts.append(
            ":::{note}\n"
            "**Results not yet recorded.** No benchmark results were found in "
            "`docs/_static/bench/` when this page was built. Run the command above and "
            "rebuild the documentation to show the tables and the charts here.\n"
            ":::"
        )
    return "\n\n".join(parts)


def _insert_bench_results(app, docname, source):
    if docname == "performance" and _BENCH_MARKER in source[0]:
        source[0] = source[0].replace(_BENCH_MARKER, _bench_results_markdown())


# -- the API reference: the C core's slot methods (``__or__``, ``__hash__`` ...)
# carry CPython's generic slot texts ("Return self|value."); the reference shows
# the pure core's docstrings and signatures for them instead (the two cores'
# docstrings are the same text: scripts/gen_docstrings.py).


def _pure_twin(name):
    """The pure core's attribute for ``frozenmap.frozendict.__or__`` and the like."""
    import frozenmap._pycore as pycore

    parts = name.split(".")
    if len(parts) != 3 or parts[0] != "frozenmap" or not hasattr(pycore, parts[1]):
        return None
    return getattr(getattr(pycore, parts[1]), parts[2], None)


def _is_slot_wrapper(obj):
    return type(obj).__name__ in ("wrapper_descriptor", "method-wrapper", "slot wrapper")


def _slot_docstring(app, what, name, obj, options, lines):
    twin = _pure_twin(name) if _is_slot_wrapper(obj) else None
    if twin is not None and twin.__doc__:
        import inspect

        lines[:] = inspect.getdoc(twin).splitlines()


def _slot_signature(app, what, name, obj, options, signature, return_annotation):
    twin = _pure_twin(name) if _is_slot_wrapper(obj) else None
    if twin is None:
        return None
    import inspect

    params = list(inspect.signature(twin).parameters.values())[1:]  # without self
    return "(%s)" % ", ".join(p.name for p in params), return_annotation


def setup(app):
    app.connect("source-read", _insert_bench_results)
    app.connect("autodoc-process-docstring", _slot_docstring)
    app.connect("autodoc-process-signature", _slot_signature)

    from sphinx.ext.autodoc import Documenter, FunctionDocumenter

    class PlainFunctionDocumenter(FunctionDocumenter):
        """A function documented with an explicit signature shows only that one
        (``freeze`` is a ``singledispatch`` function: autodoc would add a
        signature per registered type)."""

        def format_signature(self, **kwargs):
            if self.args is not None:
                return Documenter.format_signature(self, **kwargs)
            return super().format_signature(**kwargs)

    # (add_autodocumenter would register the autofunction directive again)
    app.registry.documenters["function"] = PlainFunctionDocumenter
