"""The published numbers are generated from the saved run: the README's table
and the performance page's HTML tables (frozenmap.bench.pages)."""

import json
import os
import re

import pytest

from frozenmap.bench import pages

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
    assert text.count("<table") == len(data["meta"]["sizes"])


def test_update_readme_replaces_only_the_marked_section():
    readme = "intro\n%s\nold\n%s\noutro\n" % (pages.START, pages.END)
    out = pages.update_readme(readme, "%s\nnew\n%s" % (pages.START, pages.END))
    assert out == "intro\n%s\nnew\n%s\noutro\n" % (pages.START, pages.END)
    with pytest.raises(ValueError, match="no <!-- bench-readme:start -->"):
        pages.update_readme("no markers", "x")
