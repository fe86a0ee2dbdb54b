"""The benchmark's reporting: the verdict paragraph, progress lines, the quick plan.

No timing here: the verdict is computed from made-up measurements, and the
quick plan is checked by replacing ``measure``.
"""

import io

import pytest

from frozenmap import bench


def flat(text):
    """Text with its line breaks and runs of spaces made single spaces."""
    return " ".join(text.split())


def _data(values, n=100_000, quick=False):
    libs = [
        {"name": "frozenmap:c", "version": "", "frozenmap": True},
        {"name": "dict", "version": "", "frozenmap": False},
        {"name": "immutables", "version": "", "frozenmap": False},
    ]
    results = [
        vars(
            bench.Measurement(
                op=op, n=n, lib=lib, value=value, unit="B" if op.startswith("mem") else "s"
            )
        )
        for (op, lib), value in values.items()
    ]
    return {"meta": {"libraries": libs, "quick": quick}, "results": results}


def test_verdict_names_wins_and_losses_with_factors():
    data = _data(
        {
            ("lookup_hit", "frozenmap:c"): 60e-9,
            ("lookup_hit", "dict"): 30e-9,
            ("lookup_hit", "immutables"): 40e-9,
            ("set_new", "frozenmap:c"): 1e-6,
            ("set_new", "dict"): 800e-6,
            ("set_new", "immutables"): 0.5e-6,
            ("equal", "frozenmap:c"): 400e-9,
            ("equal", "dict"): 1.6e-3,
            ("mem_item", "frozenmap:c"): 60.0,
            ("mem_item", "dict"): 38.0,
            ("diff", "frozenmap:c"): 2e-6,
        }
    )
    text = flat(bench.render_verdict(data))
    assert text.startswith("Verdict at n=100,000 (frozenmap:c against the best other library")
    assert "frozenmap is best at == one edit apart (4,000x faster than dict)" in text
    assert (
        "A peer is best at lookup, hit m[k] (dict, 2x faster); set new key (immutables, 2x faster)"
        in text
    )
    assert "memory per item (dict, 1.6x smaller)" in text
    assert "Only frozenmap offers diff one edit apart." in text
    assert "quick run" not in text
    assert "quick run" in bench.render_verdict({**data, "meta": {**data["meta"], "quick": True}})


def test_verdict_uses_the_largest_size_and_needs_a_peer():
    data = _data({("lookup_hit", "frozenmap:c"): 1e-9, ("lookup_hit", "dict"): 2e-9}, n=1000)
    data["results"] += _data({("lookup_hit", "frozenmap:c"): 3e-9, ("lookup_hit", "dict"): 1e-9})[
        "results"
    ]
    assert "A peer is best at lookup, hit m[k] (dict, 3x faster)" in flat(
        bench.render_verdict(data)
    )
    lonely = {"meta": {"libraries": [{"name": "frozenmap:c", "frozenmap": True}]}, "results": []}
    assert "nothing to compare" in bench.render_verdict(lonely)


def test_progress_without_a_terminal_names_the_operation(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(bench.sys, "stderr", err)
    clock = iter([0.0, 0.0, 1.0, 5.0, 6.0, 20.0])
    monkeypatch.setattr(bench.time, "monotonic", lambda: next(clock))
    bar = bench.Progress(4)
    bar.step("n=1 a", "construct")  # t=0: a new group
    bar.step("n=1 a", "lookup")  # t=1: too soon
    bar.step("n=1 a", "delete")  # t=5: 5 s since the last line
    bar.step("n=1 b", "construct")  # t=6: a new group
    lines = err.getvalue().splitlines()
    assert [line.split("] ", 1)[1] for line in lines] == [
        "n=1 a: construct",
        "n=1 a: delete",
        "n=1 b: construct",
    ]


def test_quick_plan_covers_the_readme_table_at_100000(monkeypatch):
    measured = []

    def fake_measure(op, lib, w, target, repeat):
        measured.append((w.n, lib.name, op.key))
        return bench.Measurement(op=op.key, n=w.n, lib=lib.name, value=1e-6, unit=op.unit)

    class FakeWorkload:
        def __init__(self, n):
            self.n = n

        def forget(self, lib):
            pass

    monkeypatch.setattr(bench, "measure", fake_measure)
    monkeypatch.setattr(bench, "Workload", FakeWorkload)
    monkeypatch.setattr(bench, "render_report", lambda data: "")
    monkeypatch.setattr(bench, "render_verdict", lambda data: "")
    assert bench.main(["--quick", "--no-progress", "--libs", "frozenmap:c,frozenmap:py,dict"]) == 0
    at_readme = {(lib, op) for n, lib, op in measured if n == 100_000}
    assert at_readme == {(lib, op) for lib in ("frozenmap:c", "dict") for op in bench.README_OPS}
    assert {n for n, _, _ in measured} == {1000, 10_000, 100_000}
    assert {(lib, op) for n, lib, op in measured if n == 1000} == {
        (lib, op) for lib in ("frozenmap:c", "frozenmap:py", "dict") for op in bench.OPERATION_KEYS
    }


@pytest.mark.parametrize(
    "ratio, text", [(1.04, "1x"), (2.91, "2.9x"), (393.2, "393x"), (13_345, "13,300x")]
)
def test_factor_format(ratio, text):
    assert bench._factor(ratio) == text
