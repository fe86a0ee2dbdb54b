"""The benchmark's reporting: the verdict paragraph, progress lines, the quick plan,
the interleaved rounds and the ratio to the best peer with its spread.

No timing assertions here: the verdict and the table are computed from made-up
measurements, the quick plan and the rounds are checked by replacing the
measuring functions, and the one real run (tiny size, few rounds) is checked
for its structure only.
"""

import io
import json

import pytest

from frozenmap import bench
from frozenmap.bench import cli, report, timing


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
    assert "frozenmap is best at == one edit apart (4,000× faster than dict)" in text
    assert (
        "A peer is best at lookup, hit: m[k] (dict, 2.0× faster); "
        "set new key (immutables, 2.0× faster)" in text
    )
    assert "memory per item (dict, 1.6× smaller)" in text
    assert "Only frozenmap offers diff one edit apart." in text
    assert "quick run" not in text
    assert "quick run" in bench.render_verdict({**data, "meta": {**data["meta"], "quick": True}})


def test_verdict_uses_the_largest_size_and_needs_a_peer():
    data = _data({("lookup_hit", "frozenmap:c"): 1e-9, ("lookup_hit", "dict"): 2e-9}, n=1000)
    data["results"] += _data({("lookup_hit", "frozenmap:c"): 3e-9, ("lookup_hit", "dict"): 1e-9})[
        "results"
    ]
    assert "A peer is best at lookup, hit: m[k] (dict, 3.0× faster)" in flat(
        bench.render_verdict(data)
    )
    lonely = {"meta": {"libraries": [{"name": "frozenmap:c", "frozenmap": True}]}, "results": []}
    assert "nothing to compare" in bench.render_verdict(lonely)


def test_progress_without_a_terminal_names_the_operation(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(timing.sys, "stderr", err)
    clock = iter([0.0, 0.0, 1.0, 5.0, 6.0, 20.0])
    monkeypatch.setattr(timing.time, "monotonic", lambda: next(clock))
    bar = timing.Progress(4)
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

    def fake_measure(op, libs, w, target, repeat):
        measured.extend((w.n, lib.name, op.key) for lib in libs)
        return [
            bench.Measurement(op=op.key, n=w.n, lib=lib.name, value=1e-6, unit=op.unit)
            for lib in libs
        ]

    class FakeWorkload:
        def __init__(self, n):
            self.n = n

        def forget(self, lib):
            pass

    monkeypatch.setattr(timing, "measure_interleaved", fake_measure)
    monkeypatch.setattr(timing, "Workload", FakeWorkload)
    monkeypatch.setattr(cli, "render_report", lambda data: "")
    monkeypatch.setattr(cli, "render_verdict", lambda data: "")
    assert bench.main(["--quick", "--no-progress", "--libs", "frozenmap:c,frozenmap:py,dict"]) == 0
    at_readme = {(lib, op) for n, lib, op in measured if n == 100_000}
    assert at_readme == {(lib, op) for lib in ("frozenmap:c", "dict") for op in bench.README_OPS}
    own_sizes = {n for op in bench.OPERATIONS for n in op.sizes or ()}
    assert {n for n, _, _ in measured} == {1000, 10_000, 100_000} | own_sizes
    assert {(lib, op) for n, lib, op in measured if n == 1000} == {
        (lib, op.key)
        for lib in ("frozenmap:c", "frozenmap:py", "dict")
        for op in bench.OPERATIONS
        if op.sizes is None
    }


@pytest.mark.parametrize(
    "ratio, text",
    [(1.04, "1.0×"), (2.91, "2.9×"), (29.4, "29×"), (393.2, "393×"), (13_345, "13,000×")],
)
def test_factor_format(ratio, text):
    assert report.factor_text(ratio) == text


@pytest.mark.parametrize(
    "ratio, unit, text",
    [
        (1.03, "s", "same"),
        (0.97, "B", "same"),
        (2.1, "s", "2.1× slower"),
        (1 / 14_000, "s", "14,000× faster"),
        (7.24e-05, "s", "14,000× faster"),
        (0.5, "B", "2.0× smaller"),
        (1.6, "B", "1.6× larger"),
    ],
)
def test_ratios_are_written_in_words_never_exponents(ratio, unit, text):
    assert report.in_words(ratio, unit) == text
    assert "e-" not in text and "e+" not in text


def test_verdict_names_the_worst_loss_at_each_size():
    small = _data(
        {
            ("batch", "frozenmap:c"): 3.3e-6,
            ("batch", "dict"): 1e-6,
            ("equal", "frozenmap:c"): 1e-6,
            ("equal", "dict"): 2e-6,
        },
        n=1000,
    )
    large = _data({("lookup_hit", "frozenmap:c"): 1e-9, ("lookup_hit", "dict"): 2e-9})
    data = {"meta": small["meta"], "results": small["results"] + large["results"]}
    text = flat(bench.render_verdict(data))
    assert text.startswith("Verdict at n=100,000")
    assert (
        "Worst loss at n=1,000 evolver: 100 edits, freeze (3.3× slower than dict); "
        "at n=100,000 none." in text
    )


def test_verdict_sets_apart_times_below_the_timers_resolution():
    # A net time of 0 (the loop overhead ate it) makes no factor, on either side.
    data = _data(
        {
            ("lookup_hit", "frozenmap:c"): 0.0,
            ("lookup_hit", "dict"): 10e-9,
            ("set_new", "frozenmap:c"): 1e-6,
            ("set_new", "dict"): 0.0,
            ("equal", "frozenmap:c"): 1e-6,
            ("equal", "dict"): 2e-6,
        },
        n=10,
    )
    text = flat(bench.render_verdict(data))
    assert "Too fast to tell apart at this size: lookup, hit: m[k], set new key." in text
    assert "frozenmap is best at == one edit apart (2.0× faster than dict)" in text
    assert "lookup" not in text.split("Too fast")[0]


def _result(op, lib, runs, unit="s"):
    runs = list(runs)
    value = sorted(runs)[len(runs) // 2] if runs else None
    return bench.Measurement(op=op, n=1000, lib=lib, value=value, unit=unit, runs=runs)


def test_ratio_to_the_best_peer_is_the_median_of_the_rounds_with_their_range():
    row = {
        "frozenmap:c": _result("set_new", "frozenmap:c", [1.0, 2.0, 3.0]),
        "dict": _result("set_new", "dict", [10.0, 10.0, 10.0]),
        "immutables": _result("set_new", "immutables", [2.0, 4.0, 5.0]),
    }
    ratio = report.best_peer_ratio(row, "frozenmap:c", ["dict", "immutables"], interleaved=True)
    assert (ratio.best, ratio.rounds) == ("immutables", 3)
    assert (ratio.low, ratio.ratio, ratio.high) == (0.5, 0.5, 0.6)
    assert str(ratio) == "2.0× faster (1.7–2.0× faster)"
    # Results saved before the rounds were interleaved: the ratio of the medians, no range.
    plain = report.best_peer_ratio(row, "frozenmap:c", ["dict", "immutables"], interleaved=False)
    assert (plain.best, plain.ratio, plain.low, str(plain)) == (
        "immutables",
        0.5,
        None,
        "2.0× faster",
    )
    assert report.best_peer_ratio(row, "frozenmap:c", [], interleaved=True) is None
    assert report.best_peer_ratio({"dict": row["dict"]}, "frozenmap:c", ["dict"], True) is None


def test_table_names_the_best_peer_and_the_ratio_with_its_spread():
    results = [
        _result("lookup_hit", "frozenmap:c", [1.0, 2.0, 3.0]),
        _result("lookup_hit", "dict", [2.0, 4.0, 5.0]),
        _result("lookup_hit", "immutables", [8.0, 8.0, 8.0]),
        _result("mem_item", "frozenmap:c", [], unit="B"),
        _result("mem_item", "dict", [], unit="B"),
    ]
    results[3].value, results[4].value = 60.0, 40.0
    table = report.render_table(
        results, ["frozenmap:c", "dict", "immutables"], ["frozenmap:c"], True
    )
    values, ratios = table.split("\n\n")
    lines = values.splitlines()
    assert lines[0].split() == ["n", "fm:c", "dict", "immut"]
    row = lines[lines.index("lookup, hit: m[k]") + 1]
    assert row.split() == ["1,000", "2.00", "s", "4.00", "s*", "8.00", "s"]
    lines = ratios.splitlines()
    assert lines[0].split() == ["n", "best", "peer", "fm:c", "vs", "best"]
    row = lines[lines.index("lookup, hit: m[k]") + 1]
    assert row.split()[1:] == ["dict", "2.0×", "faster", "(1.7–2.0×", "faster)"]
    memory = lines[lines.index("memory per item") + 1]
    assert memory.split()[1:] == ["dict", "1.5×", "larger"]
    assert max(len(line) for line in table.splitlines()) <= 100


def test_interleaved_rounds_run_every_library_once_per_round_in_turn(monkeypatch):
    calls = []

    class FakeTimer:
        def __init__(self, name, runs):
            self.name, self.runs, self.count, self.passes = name, runs, 1, 1

        def once(self):
            calls.append(self.name)
            return float(len(calls))

    wanted = {"a": 3, "b": 3, "slow": 2}
    monkeypatch.setattr(
        timing, "calibrate", lambda case, target, repeat: FakeTimer(case, wanted[case])
    )

    class FakeLib:
        def __init__(self, name):
            self.name = name

    op = bench.Operation("lookup_hit", "lookup", "s", case=lambda lib, w: lib.name)

    class FakeWorkload:
        n = 10

    libs = [FakeLib(name) for name in ("a", "b", "slow")]
    results = timing.measure_interleaved(op, libs, FakeWorkload(), 0.001, 3)
    # Round 0: a b slow; round 1 starts one further on; round 2 without the slow one.
    assert calls == ["a", "b", "slow", "b", "slow", "a", "a", "b"]
    assert [(m.lib, len(m.runs)) for m in results] == [("a", 3), ("b", 3), ("slow", 2)]
    assert [m.runs for m in results] == [[1.0, 6.0, 7.0], [2.0, 4.0, 8.0], [3.0, 5.0]]
    assert [m.value for m in results] == [6.0, 4.0, 4.0]


def test_a_tiny_real_run_reports_interleaved_ratios(tmp_path, capsys):
    saved = tmp_path / "bench.json"
    argv = ["--sizes", "10", "--repeat", "2", "--target", "0.0001", "--no-progress"]
    argv += ["--libs", "frozenmap:c,frozenmap:py,dict", "--ops", "lookup_hit,set_new,mem_item"]
    assert bench.main(argv + ["--json", str(saved)]) == 0
    out = capsys.readouterr().out
    data = json.loads(saved.read_text())
    assert data["meta"]["interleaved"] is True
    timed = [m for m in data["results"] if m["unit"] == "s"]
    assert {(m["op"], m["lib"]) for m in timed} == {
        (op, lib)
        for op in ("lookup_hit", "set_new")
        for lib in ("frozenmap:c", "frozenmap:py", "dict")
    }
    # At least 3 rounds (the floor), the same number for every library of an operation.
    assert {len(m["runs"]) for m in timed} == {3}
    assert "interleaved rounds" in out
    header = next(line for line in out.splitlines() if line.endswith("fm:py vs best"))
    assert header.split() == ["n", "best", "peer", "fm:c", "vs", "best", "fm:py", "vs", "best"]
    table = out.split(header, 1)[1]
    row = table.splitlines()[table.splitlines().index("set new key") + 1]
    # best peer (dict is the only one), then each core against it in words, with the
    # range of the rounds' ratios.
    assert row.split()[1] == "dict"
    assert "×" in row and "(" in row and ("faster" in row or "slower" in row or "same" in row)
    memory = table.splitlines()[table.splitlines().index("memory per item") + 1]
    assert memory.split()[1] == "dict" and "(" not in memory
    assert max(len(line) for line in out.splitlines()) <= 100
