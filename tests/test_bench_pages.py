"""The published numbers are generated from the saved run: the README's table
and the performance page's HTML tables (frozenmap.bench.pages)."""

import json
import os
import re

import pytest

from frozenmap.bench import pages
from frozenmap.bench.operations import OPERATIONS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "docs", "_static", "bench")


def _load(name):
    path = os.path.join(BENCH, name)
    if not os.path.exists(path):
        pytest.skip("no saved run %s (tests run outside a checkout?)" % path)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def test_readme_table_is_the_saved_run():
    readme_path = os.path.join(ROOT, "README.md")
    if not os.path.exists(readme_path):
        pytest.skip("no README.md beside the tests")
    with open(readme_path, encoding="utf-8") as f:
        readme = f.read()
    data = _load("results.json")
    extra = os.path.join(BENCH, "results-3.15.json")
    data_315 = _load("results-3.15.json") if os.path.exists(extra) else None
    expected = pages.render_readme_section(data, data_315)
    start, end = readme.index(pages.START), readme.index(pages.END) + len(pages.END)
    assert readme[start:end] == expected, (
        "README.md's benchmark table is stale: run python -m frozenmap.bench.pages"
    )


def test_html_tables_show_every_library_and_size_without_exponents():
    data = _load("results.json")
    text = pages.render_html_tables(data)
    for lib in data["meta"]["libraries"]:
        assert 'title="%s"' % pages.FULL_NAMES.get(lib["name"], lib["name"]) in text
    for n in data["meta"]["sizes"]:
        assert "<caption>n = {:,}</caption>".format(n) in text
    assert not re.search(r"\de[+-]\d", text)
    own_sizes = {m["op"] for m in data["results"]} & {
        op.key for op in OPERATIONS if op.sizes is not None
    }
    assert text.count("<table") == len(data["meta"]["sizes"]) + len(own_sizes)


def _result(op, n, lib, value, unit):
    return {"op": op, "n": n, "lib": lib, "value": value, "unit": unit, "noise": 0.0}


def test_operations_with_sizes_of_their_own_get_a_table_each():
    """Small maps (1-32 keys) and the nested reducer are measured at their own
    sizes, never the run's: each gets its own table, a row per size, and no
    row in the run's tables."""
    libs = [("frozenmap:c", True), ("dict", False), ("immutables", False)]
    results = [_result("lookup_hit", 1000, lib, 1e-7, "s") for lib, _ in libs]
    for n, sizes in zip((1, 3, 8), ((72, 184, 136), (120, 184, 168), (240, 272, 248))):
        results += [_result("mem_small", n, lib, b, "B") for (lib, _), b in zip(libs, sizes)]
    results += [
        _result("reducer", 10_000, lib, t, "s") for (lib, _), t in zip(libs, (2e-6, 1e-4, 2.2e-6))
    ]
    data = {
        "meta": {
            "machine": {"python": "CPython 3.11.7", "platform": "Linux", "cpu": "x", "date": "d"},
            "libraries": [{"name": lib, "version": "0", "frozenmap": fm} for lib, fm in libs],
            "sizes": [1000],
            "interleaved": True,
        },
        "results": results,
    }
    text = pages.render_html_tables(data)
    tables = text.split("<table")[1:]
    assert len(tables) == 3
    run, small, reducer = tables
    assert "<caption>n = 1,000</caption>" in run and "small map" not in run
    assert "<caption>small map: memory of one map</caption>" in small
    assert '<th scope="col">keys</th>' in small
    rows = re.findall(r'<tr><th scope="row">([^<]*)</th>(.*?)</tr>', small)
    assert [label for label, _ in rows] == ["1", "3", "8"]
    # 72 B against immutables' 136 B: the best peer is bold, the verdict says smaller
    assert "<strong>136&nbsp;B</strong>" in rows[0][1] and "smaller than immut" in rows[0][1]
    assert '<th scope="col">todos</th>' in reducer and ">10,000<" in reducer


def test_update_readme_replaces_only_the_marked_section():
    readme = "intro\n%s\nold\n%s\noutro\n" % (pages.START, pages.END)
    out = pages.update_readme(readme, "%s\nnew\n%s" % (pages.START, pages.END))
    assert out == "intro\n%s\nnew\n%s\noutro\n" % (pages.START, pages.END)
    with pytest.raises(ValueError, match="no <!-- bench-readme:start -->"):
        pages.update_readme("no markers", "x")
