"""The benchmark's reporting: the verdict paragraph, progress lines, the quick plan,
the interleaved rounds and the ratio to the best peer with its spread.

No timing assertions here: the verdict and the table are computed from made-up
measurements, the quick plan and the rounds are checked by replacing the
measuring functions, and the one real run (tiny size, few rounds) is checked
for its structure only.
"""

import io
import json
import re

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

    def fake_measure(op, libs, w, target, repeat, **settings):
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


def tables(text):
    """The tables in ``text``: ``(header cells, {title: [row cells]})`` each.

    A table is a header line, a rule of dashes, then operation titles (flush
    left) each followed by its rows (indented); cells are two spaces apart.
    """
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines[1:], 1):
        if line and set(line) == {"-"}:
            header = cells(lines[i - 1])
            body, title = {}, None
            for row in lines[i + 1 :]:
                if not row.strip():
                    break
                if row.startswith("  "):
                    body[title].append(cells(row))
                else:
                    title = row
                    body[title] = []
            found.append((header, body))
    return found


def cells(line):
    return re.split(r" {2,}", line.strip())


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
    (values_header, values), (ratios_header, ratios) = tables(table)
    assert values_header == ["n", "fm:c", "dict", "immut"]
    assert values["lookup, hit: m[k]"] == [["1,000", "2.00 s", "4.00 s*", "8.00 s"]]
    assert ratios_header == ["n", "best peer", "fm:c vs best", "rounds' range", "call"]
    # every round has frozenmap faster: a win, with the rounds' range
    assert ratios["lookup, hit: m[k]"] == [
        ["1,000", "dict", "2.0× faster", "1.7–2.0× faster", "better"]
    ]
    # memory has no rounds: the ratio of the two figures
    assert ratios["memory per item"] == [["1,000", "dict", "1.5× larger", "-", "worse"]]
    assert max(len(line) for line in table.splitlines()) <= 100


def _realistic_report():
    """Every library, every operation at the full run's sizes (and their own),
    two cores, and per-round ratios as far apart as a busy machine makes them."""
    libs = [name for name in bench.LIBRARY_NAMES]
    cores = ["frozenmap:c", "frozenmap:py"]
    results = []
    for index, op in enumerate(bench.OPERATIONS):
        for n in op.sizes or (1000, 100_000, 1_000_000):
            for k, lib in enumerate(libs):
                scale = 1e-9 * 7.3 ** ((index + 3 * k) % 9)  # 1 ns to 8 s
                if op.unit == "B":
                    value = 1e9 * scale
                    results.append(
                        bench.Measurement(op=op.key, n=n, lib=lib, value=value, unit="B")
                    )
                    continue
                # a core varies wildly from round to round: ranges such as
                # "9,000× faster – 9,100× slower"
                spread = [1e-4, 1.0, 1e4] if lib in cores else [0.9, 1.0, 1.1]
                runs = [scale * f for f in spread * 3]
                results.append(
                    bench.Measurement(
                        op=op.key,
                        n=n,
                        lib=lib,
                        value=sorted(runs)[4],
                        unit="s",
                        noise=0.4,
                        runs=runs,
                        attempts=3,
                    )
                )
    meta = {
        "machine": {
            "python": "CPython 3.15.0",
            "platform": "Linux x86_64",
            "cpu": "AMD EPYC 7763 64-Core Processor, 2 cores",
            "date": "2026-12-07 12:00",
        },
        "libraries": [
            {"name": lib, "version": "2026.12.1", "frozenmap": lib in cores} for lib in libs
        ],
        "skipped": {"somepeer": "not installed: No module named 'somepeer'"},
        "sizes": [1000, 100_000, 1_000_000],
        "repeat": 9,
        "quick": True,
        "interleaved": True,
        "clock": "process CPU time",
        "load": [6.5, 11.25],
    }
    return {"meta": meta, "results": [vars(m) for m in results]}


def test_a_realistic_report_fits_100_columns_and_its_tables_stay_tables():
    data = _realistic_report()
    text = report.render_report(data) + "\n\n" + report.render_verdict(data)
    too_wide = [line for line in text.splitlines() if len(line) > 100]
    assert too_wide == []
    found = tables(text)
    # the libraries' columns went to more than one table (each with the sizes) ...
    value_tables = [(h, body) for h, body in found if h[0] == "n" and "best peer" not in h]
    assert len(value_tables) > 1
    shown = [name for header, _ in value_tables for name in header[1:]]
    assert shown == [report.short_name(lib) for lib in bench.LIBRARY_NAMES]
    # ... and each core has a comparison table
    ratio_headers = [h for h, _ in found if "best peer" in h]
    assert [h[2] for h in ratio_headers] == ["fm:c vs best", "fm:py vs best"]
    assert any(
        re.fullmatch("[0-9,]{5,}× faster – [0-9,]{5,}× slower", cell)
        for _, body in found
        for rows in body.values()
        for row in rows
        for cell in row
    )
    for header, body in found:
        assert body, header
        for title, rows in body.items():
            assert title and not title.startswith(" ")
            for row in rows:
                assert len(row) == len(header), (header, title, row)
    # a table row is never cut and continued on the next line
    for line in text.splitlines():
        assert not line.startswith("  -") or set(line.strip()) == {"-"}, line


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
        timing, "calibrate", lambda case, target, repeat, seconds: FakeTimer(case, wanted[case])
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
    assert data["meta"]["clock"] == "process CPU time"
    timed = [m for m in data["results"] if m["unit"] == "s"]
    assert {(m["op"], m["lib"]) for m in timed} == {
        (op, lib)
        for op in ("lookup_hit", "set_new")
        for lib in ("frozenmap:c", "frozenmap:py", "dict")
    }
    # At least 3 rounds (the floor), the same number for every library of an operation.
    assert {len(m["runs"]) for m in timed} == {3}
    assert "interleaved rounds" in out
    found = tables(out)
    assert [header[2] for header, _ in found[1:]] == ["fm:c vs best", "fm:py vs best"]
    for _, body in found[1:]:
        # best peer (dict is the only one), then the core against it in words,
        # the range of the rounds' ratios and the call.
        (row,) = body["set new key"]
        assert row[1] == "dict"
        assert row[2] == "same" or row[2].endswith(("faster", "slower"))
        assert row[3] != "-" and row[4] in report.CALLS.values()
        (memory,) = body["memory per item"]
        assert memory[1] == "dict" and memory[3] == "-"
    assert max(len(line) for line in out.splitlines()) <= 100


def _rounds(rows, n=100_000, sizes=None):
    """Saved results from per-round times: ``{(operation, library): runs}``."""
    data = _data({key: None for key in rows}, n=n)
    data["meta"]["interleaved"] = True
    if sizes:
        data["meta"]["sizes"] = sizes
    for m in data["results"]:
        runs = rows[(m["op"], m["lib"])]
        m["runs"], m["value"] = runs, sorted(runs)[len(runs) // 2]
    return data


@pytest.mark.parametrize(
    "low, ratio, high, call",
    [
        (0.4, 0.5, 0.6, "win"),
        (1.6, 2.0, 2.2, "loss"),
        (0.97, 1.02, 1.04, "same"),  # every round agrees, but within 5 %
        (0.85, 1.2, 1.3, "noise"),  # one round on the other side of 1
        (1.02, 1.3, 1.7, "noise"),  # one round barely slower: "same" in words
        (0.9, 0.97, 1.1, "same"),
        (0.23, 0.3, 1.2, "noisy"),  # "4.3× faster – 1.2× slower"
        (None, 0.5, None, "win"),  # memory: no rounds, the ratio decides
        (None, 1.03, None, "same"),
    ],
)
def test_a_ratio_is_called_only_when_every_round_agrees(low, ratio, high, call):
    assert report.Ratio("dict", ratio, low, high).call() == call


def test_the_verdict_claims_nothing_whose_rounds_cross_one():
    data = _rounds(
        {
            # every round: frozenmap faster (a win) ...
            ("set_new", "frozenmap:c"): [1.0, 1.1, 0.9, 1.0, 1.2],
            ("set_new", "immutables"): [2.0, 2.0, 2.1, 1.9, 2.0],
            ("set_new", "dict"): [900.0] * 5,
            # ... a median of 3.6× faster, but one round has immutables faster
            ("delete", "frozenmap:c"): [1.0, 1.0, 1.0, 1.0, 1.0],
            ("delete", "immutables"): [3.6, 4.3, 3.6, 0.83, 3.0],
            ("delete", "dict"): [900.0] * 5,
            # ... 1.3× slower by the median, one round 1.1× faster: within noise
            ("lookup_hit", "frozenmap:c"): [1.3, 1.3, 1.2, 1.0, 1.4],
            ("lookup_hit", "immutables"): [1.0, 1.0, 1.0, 1.1, 1.0],
            ("lookup_hit", "dict"): [1.1, 1.1, 1.1, 1.1, 1.1],
            # every round: immutables faster (a loss)
            ("set_existing", "frozenmap:c"): [1.5, 1.6, 1.5, 1.4, 1.5],
            ("set_existing", "immutables"): [1.0, 1.0, 1.0, 1.0, 1.0],
            ("set_existing", "dict"): [900.0] * 5,
        }
    )
    text = flat(bench.render_verdict(data))
    claims = text.split("Within noise")[0] + text.split("A peer is best at")[1]
    assert "frozenmap is best at set new key (1.9× faster than immutables)." in text
    assert "A peer is best at set existing key (immutables, 1.5× faster)." in text
    assert "delete" not in claims and "lookup" not in claims
    assert "Too noisy to call at delete (with immutables: 4.3× faster – 1.2× slower)." in text
    assert (
        "Within noise (not every round has one faster by more than 5%) at lookup, hit: m[k] "
        "(with immutables: 1.1× faster – 1.4× slower)." in text
    )
    assert "Worst loss at n=100,000 set existing key (1.5× slower than immutables)." in text


def test_the_worst_loss_at_each_size_is_a_claimed_one():
    small = _rounds(
        {
            # 3× slower by the median, but one round is faster: not a claimed loss
            ("batch", "frozenmap:c"): [3.0, 3.0, 3.0, 0.5, 3.0],
            ("batch", "dict"): [1.0] * 5,
            ("equal", "frozenmap:c"): [1.2, 1.2, 1.3, 1.2, 1.2],
            ("equal", "dict"): [1.0] * 5,
        },
        n=1000,
    )
    large = _rounds(
        {
            ("lookup_hit", "frozenmap:c"): [1.0, 1.1, 0.9, 1.0, 1.0],
            ("lookup_hit", "dict"): [2.0] * 5,
        }
    )
    # a size of its own (small maps): no worst-loss entry for it
    large["results"] += _data(
        {("mem_small", "frozenmap:c"): 900.0, ("mem_small", "dict"): 300.0}, n=8
    )["results"]
    data = {
        "meta": {**small["meta"], "sizes": [1000, 100_000]},
        "results": small["results"] + large["results"],
    }
    text = flat(bench.render_verdict(data))
    assert (
        "Worst loss at n=1,000 == one edit apart (1.2× slower than dict); at n=100,000 none."
        in text
    )
    assert "Too noisy to call at n=1,000: evolver: 100 edits, freeze." in text
    assert "n=8" not in text


def test_a_noisy_row_is_measured_again_and_the_quietest_attempt_kept(monkeypatch):
    class FakeLib:
        def __init__(self, name, core):
            self.name, self.is_frozenmap = name, core

    attempts = {
        # per attempt, per library: the runs of its rounds
        "fm": [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]],
        # first attempt: rounds on both sides of frozenmap while the medians
        # differ (uncalled); the second is quieter and settled
        "peer": [[3.0, 0.5, 3.0, 3.0], [2.0, 2.1, 1.9, 2.0], [9.0, 9.0, 9.0, 9.0]],
    }

    class FakeTimer:
        runs, count, passes = 4, 1, 1

        def __init__(self, name):
            self.name, self.made = name, 0

        def once(self):
            attempt, index = divmod(self.made, 4)
            self.made += 1
            return attempts[self.name][attempt][index]

    monkeypatch.setattr(timing, "calibrate", lambda case, target, repeat, seconds: FakeTimer(case))
    op = bench.Operation("delete", "delete", "s", case=lambda lib, w: lib.name)

    class FakeWorkload:
        n = 10

    libs = [FakeLib("fm", True), FakeLib("peer", False)]
    fm, peer = timing.measure_interleaved(op, libs, FakeWorkload(), 0.001, 4, retries=2)
    assert (fm.attempts, peer.attempts) == (2, 2)  # settled at the second attempt
    assert peer.runs == [2.0, 2.1, 1.9, 2.0] and fm.runs == [1.0] * 4
    # no retries allowed: the first attempt stays
    fm, peer = timing.measure_interleaved(op, libs, FakeWorkload(), 0.001, 4)
    assert (fm.attempts, peer.runs) == (1, [3.0, 0.5, 3.0, 3.0])
    # an attempt that costs more than retry_seconds is not repeated
    clock = iter(range(0, 1000, 10))
    monkeypatch.setattr(timing, "clock", lambda: float(next(clock)))
    fm, _ = timing.measure_interleaved(
        op, libs, FakeWorkload(), 0.001, 4, retries=2, retry_seconds=5.0
    )
    assert fm.attempts == 1


def test_a_long_step_prints_progress_while_it_runs(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(timing.sys, "stderr", err)
    clock = iter([0.0, 0.0, 1.0, 2.0, 4.5, 5.0, 9.0])
    monkeypatch.setattr(timing.time, "monotonic", lambda: next(clock))
    bar = timing.Progress(2)
    bar.step("n=10,000", "undo history: memory per version, unpickled")  # t=0: printed
    bar.step("n=10,000", "undo history: pickle per version")  # t=1: too soon
    bar.tick("dict")  # t=2: too soon
    bar.tick("pyrsistent")  # t=4.5: 4.5 s since the last line
    bar.tick("rpds")  # t=5: too soon
    bar.tick("frozendict")  # t=9
    lines = [line.split("] ", 1)[1] for line in err.getvalue().splitlines()]
    assert lines == [
        "n=10,000: undo history: memory per version, unpickled",
        "n=10,000: undo history: pickle per version (pyrsistent)",
        "n=10,000: undo history: pickle per version (frozendict)",
    ]


def test_the_help_never_cuts_a_name_in_two(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "60")
    with pytest.raises(SystemExit):
        bench.main(["--help"])
    words = set(re.findall(r"[\w:]+", capsys.readouterr().out))
    assert set(bench.LIBRARY_NAMES) <= words
    assert set(bench.OPERATION_KEYS) <= words


@pytest.mark.parametrize(
    "low, high, text",
    [
        (1.02, 1.7, "1.02–1.7× slower"),  # all rounds slower, one barely
        (0.97, 1.2, "1.03× faster – 1.2× slower"),
        (0.5, 0.6, "1.7–2.0× faster"),
        (1.0, 1.2, "same – 1.2× slower"),
        (0.9, 1.003, "1.1× faster – 1.003× slower"),
    ],
)
def test_a_range_shows_which_side_of_1_its_ends_are_on(low, high, text):
    assert report.Ratio("dict", (low + high) / 2, low, high).range_words("s") == text


def test_a_busy_machine_is_named_in_the_report_and_the_verdict():
    data = _realistic_report()
    text = flat(report.render_report(data))
    assert "a busy machine: load average 6.5 to 11.2 on 2 cores while measuring" in text
    assert "The machine was busy" in flat(report.render_verdict(data))
    data["meta"]["load"] = [0.3, 0.6]
    assert "busy" not in report.render_report(data) + report.render_verdict(data)


@pytest.mark.parametrize("passes, made", [(1, 2), (3, 4), (4, 4), (9, 9)])
def test_a_run_of_few_passes_begins_with_an_untimed_one(passes, made):
    seen = []
    case = bench.Case("seen.append(x)", {"seen": seen}, lambda c: list(range(c)), 3)
    timer = timing.Timer(case, case.compile(), case.inputs, 3, passes, 0.0, 3)
    timer.once()
    assert len(seen) == 3 * made


def test_sections_head_their_rows_in_every_table_and_only_when_they_have_some():
    data = _realistic_report()
    sections = [op.section for op in bench.OPERATIONS if op.section]
    assert len(sections) >= 3
    first_of = {op.section: op.title for op in bench.OPERATIONS if op.section}
    lines = report.render_table(
        [bench.Measurement(**m) for m in data["results"]],
        [lib["name"] for lib in data["meta"]["libraries"]],
        ["frozenmap:c", "frozenmap:py"],
        True,
    ).splitlines()
    for section in sections:
        heading = "== %s ==" % section
        at = [i for i, line in enumerate(lines) if line == heading]
        assert at, heading  # in each table: values (several), then each core's ratios
        assert len(at) >= 3
        assert all(lines[i + 1] == first_of[section] for i in at)
    # A section none of whose operations was measured has no heading.
    last_section_starts = bench.OPERATION_KEYS.index("mem_small")
    assert bench.OPERATIONS[last_section_starts].section == "small maps and the use cases"
    kept = [m for m in data["results"] if bench.OPERATION_KEYS.index(m["op"]) < last_section_starts]
    text = report.render_table(
        [bench.Measurement(**m) for m in kept],
        [lib["name"] for lib in data["meta"]["libraries"]],
        ["frozenmap:c"],
    )
    assert "== small maps and the use cases ==" not in text
    assert "== versions: derived from one another, kept ==" in text
