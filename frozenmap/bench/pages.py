"""The published numbers: the docs' result tables and the README's table, from saved runs.

Numbers users read are generated, never typed by hand.  One dated run
of the benchmark, saved with ``--json docs/_static/bench/results.json`` (and
the CPython 3.15 run beside the builtin ``frozendict``, ``results-3.15.json``),
feeds both:

* the performance page: ``docs/conf.py`` calls :func:`render_html_tables` when
  the docs are built, one HTML table per size (MyST passes raw HTML through),
  each operation a row and each library a column, so every column fits a
  1280-pixel page;
* the README: ``python -m frozenmap.bench.pages`` rewrites the text between
  the ``<!-- bench-readme:start -->`` and ``<!-- bench-readme:end -->``
  markers with :func:`render_readme_section`; ``tests/test_bench_pages.py``
  fails when the README's table no longer matches the saved run.
"""

import argparse
import html
import os
import statistics
import sys
from typing import Any, Dict, Optional, Sequence

from .cli import README_OPS, README_SIZE
from .operations import OPERATIONS
from .report import best_peer_ratio, format_value, in_words, short_name
from .timing import Measurement

__all__ = ["Measurement", "render_html_tables", "render_readme_section", "update_readme", "main"]

START = "<!-- bench-readme:start -->"
END = "<!-- bench-readme:end -->"
README_LIBS = ("frozenmap:c", "dict", "immutables", "pyrsistent", "rpds", "frozendict")
README_LIBS_315 = ("frozenmap:c", "builtin")
README_OPS_315 = ("lookup_hit", "iterate", "construct", "lookup_hit_derived", "set_existing")
README_OPS_315 += ("equal_first",)
README_OPS_315 += ("equal_last", "hash_derived")

#: The first column of the tables of operations with sizes of their own.
_SIZE_LABELS = {
    "mem_small": "keys",
    "mem_small_version": "keys",
    "reducer": "todos",
    "reducer_gc": "todos",
    "mem_reducer": "todos",
}

FULL_NAMES = {
    "frozenmap:c": "frozenmap (C)",
    "frozenmap:py": "frozenmap (pure Python)",
    "dict": "dict (copied on write)",
    "builtin": "builtin frozendict",
    "immutables": "immutables.Map",
    "pyrsistent": "pyrsistent.pmap",
    "rpds": "rpds.HashTrieMap",
    "frozendict": "frozendict (PyPI)",
    "immutabledict": "immutabledict",
}


def _measurements(data: Dict[str, Any]) -> Dict[Any, Measurement]:
    return {(m["op"], m["n"], m["lib"]): Measurement(**m) for m in data["results"]}


def run_description(data: Dict[str, Any]) -> str:
    """``CPython 3.11.7, Linux x86_64, AMD EPYC (2 cores), 2026-12-04; noise ...``."""
    meta = data["meta"]
    machine = meta["machine"]
    noises = sorted(
        m["noise"] for m in data["results"] if m["unit"] == "s" and m["value"] is not None
    )
    noise = (
        "run-to-run noise (IQR / median): median %.0f %%, worst %.0f %%"
        % (100 * statistics.median(noises), 100 * noises[-1])
        if noises
        else "no timings"
    )
    rounds = "%d %s rounds" % (
        meta.get("repeat", 0),
        "interleaved" if meta.get("interleaved") else "",
    )
    return "%s, %s, %s, %s; median of %s; %s" % (
        machine["python"],
        machine["platform"],
        machine["cpu"],
        machine["date"].split(" ")[0],
        " ".join(rounds.split()),
        noise,
    )


def render_html_tables(data: Dict[str, Any]) -> str:
    """One HTML table per size: operations as rows, libraries as columns.

    The best peer's cell is bold, a noisy cell (IQR over 10 % of the median)
    carries a ``?``, and the last column says how frozenmap's C core (else its
    pure core) compares with the best peer, in words.
    """
    meta = data["meta"]
    libs = [lib["name"] for lib in meta["libraries"]]
    cores = [lib["name"] for lib in meta["libraries"] if lib["frozenmap"]]
    peers = [name for name in libs if name not in cores]
    core = "frozenmap:c" if "frozenmap:c" in cores else (cores[0] if cores else None)
    interleaved = bool(meta.get("interleaved"))
    cells = _measurements(data)
    head = "".join(
        '<th scope="col" title="%s">%s</th>'
        % (html.escape(FULL_NAMES.get(lib, lib)), html.escape(short_name(lib)))
        for lib in libs
    )

    def render_row(label: str, op: Any, n: int) -> Optional[str]:
        row = {lib: cells.get((op.key, n, lib)) for lib in libs}
        if not any(row.values()):
            return None
        measured = [(m.value, p) for p in peers for m in [row[p]] if m and m.value is not None]
        best = min(measured)[1] if measured else None
        tds = ['<th scope="row">%s</th>' % html.escape(label)]
        for lib in libs:
            m = row[lib]
            text = "–" if m is None else format_value(m.value, op.unit)
            if m is not None and m.value is not None and m.noise > 0.10:
                text += "<sup>?</sup>"
            if lib == best:
                text = "<strong>%s</strong>" % text
            tds.append("<td>%s</td>" % text.replace(" ", "&nbsp;"))
        ratio = best_peer_ratio(row, core, peers, interleaved) if core else None
        verdict = (
            "%s than %s" % (in_words(ratio.ratio, op.unit), short_name(ratio.best))
            if ratio and in_words(ratio.ratio, op.unit) != "same"
            else ("same as %s" % short_name(ratio.best) if ratio else "–")
        )
        tds.append("<td>%s</td>" % html.escape(verdict))
        return "<tr>%s</tr>" % "".join(tds)

    def table(caption: str, first: str, rows: Sequence[Optional[str]]) -> Optional[str]:
        kept = [row for row in rows if row]
        if not kept:
            return None
        return (
            '<table class="bench">\n<caption>{caption}</caption>\n'
            '<thead><tr><th scope="col">{first}</th>{head}'
            '<th scope="col">{core} vs best peer</th></tr></thead>\n'
            "<tbody>\n{rows}\n</tbody>\n</table>".format(
                caption=html.escape(caption),
                first=first,
                head=head,
                core=html.escape(short_name(core or "")),
                rows="\n".join(kept),
            )
        )

    # the run's sizes: one table each, every operation measured at them
    tables = [
        table(
            "n = {:,}".format(n),
            "operation",
            [render_row(op.title, op, n) for op in OPERATIONS if op.sizes is None],
        )
        for n in meta["sizes"]
    ]
    # operations with sizes of their own (small maps, the nested reducer): a
    # table each, one row per size
    tables += [
        table(
            op.title,
            _SIZE_LABELS.get(op.key, "n"),
            [render_row("{:,}".format(n), op, n) for n in op.sizes],
        )
        for op in OPERATIONS
        if op.sizes is not None
    ]
    parts = [t for t in tables if t]
    legend = ", ".join(
        "<code>%s</code> %s" % (html.escape(short_name(lib)), html.escape(FULL_NAMES.get(lib, lib)))
        for lib in libs
    )
    return (
        "<p>%s.</p>\n<p>Columns: %s. <strong>Bold</strong>: the best peer; "
        "<sup>?</sup>: a noisy cell (IQR over 10 %% of the median); –: not measured.</p>\n%s"
        % (html.escape(run_description(data)), legend, "\n".join(parts))
    )


def _readme_table(data: Dict[str, Any], libs: Sequence[str], ops: Sequence[str], n: int) -> str:
    cells = _measurements(data)
    present = [lib for lib in libs if any(key[2] == lib and key[1] == n for key in cells)]
    lines = [
        "| operation | %s |" % " | ".join(FULL_NAMES.get(lib, lib) for lib in present),
        "|---|" + "---|" * len(present),
    ]
    titles = {op.key: op for op in OPERATIONS}
    for key in ops:
        op = titles[key]
        row = [cells.get((key, n, lib)) for lib in present]
        if not any(m is not None and m.value is not None for m in row):
            continue
        values = ["–" if m is None else format_value(m.value, op.unit) for m in row]
        lines.append("| %s | %s |" % (op.title.replace("|", "\\|"), " | ".join(values)))
    return "\n".join(lines)


def render_readme_section(data: Dict[str, Any], data_315: Optional[Dict[str, Any]] = None) -> str:
    """The README's numbers: frozenmap's C core beside dict and the HAMT peers at
    n = 100,000, and (when saved) beside the builtin on CPython 3.15."""
    out = [
        START,
        "<!-- generated by `python -m frozenmap.bench.pages` from "
        "docs/_static/bench/results*.json: do not edit by hand -->",
        "",
        "Time per operation (memory: bytes) at n = {:,} string keys, from `bash "
        "scripts/bench.sh --json docs/_static/bench/results.json` on {}:".format(
            README_SIZE, run_description(data)
        ),
        "",
        _readme_table(data, README_LIBS, README_OPS, README_SIZE),
    ]
    if data_315 is not None:
        out += [
            "",
            "On CPython 3.15, beside the builtin `frozendict`, at n = {:,} ({}):".format(
                README_SIZE, run_description(data_315)
            ),
            "",
            _readme_table(data_315, README_LIBS_315, README_OPS_315, README_SIZE),
        ]
    out.append(END)
    return "\n".join(out)


def update_readme(readme: str, section: str) -> str:
    """``readme`` with the text between the markers replaced by ``section``."""
    start, end = readme.find(START), readme.find(END)
    if start < 0 or end < start:
        raise ValueError("the README has no %s ... %s section" % (START, END))
    return readme[:start] + section + readme[end + len(END) :]


def _load(path: str) -> Optional[Dict[str, Any]]:
    import json

    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)  # type: ignore[no-any-return]


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m frozenmap.bench.pages",
        description="Rewrite the README's benchmark table from saved results "
        "(the performance page reads the same files when the docs are built).",
    )
    parser.add_argument("--root", default=".", help="the repository (default: .)")
    args = parser.parse_args(argv)
    bench_dir = os.path.join(args.root, "docs", "_static", "bench")
    data = _load(os.path.join(bench_dir, "results.json"))
    if data is None:
        print("no %s/results.json: run the benchmark with --json first" % bench_dir)
        return 2
    section = render_readme_section(data, _load(os.path.join(bench_dir, "results-3.15.json")))
    path = os.path.join(args.root, "README.md")
    with open(path, encoding="utf-8") as f:
        readme = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(update_readme(readme, section))
    print("updated %s from %s" % (path, bench_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
