"""What a draft costs, layer by layer, against ``set_in`` (the C core).

The state is nested three levels deep, 250 maps of 20 maps of 20 leaves
(100,000 leaves).  Two measures:

``python scripts/perf/drafts_costs.py wall --rounds 61`` times, interleaved in
one process (process time, so other processes' load counts less), one change
at depth 3 by ``set_in``, by ``produce`` and by ``produce_with_patches``, and
1,000 changes as a chain of ``set_in`` calls, in one ``produce`` and in one
``produce_with_patches``; then the layers of ``produce`` (a recipe doing
nothing, one and two nested reads, the write).  It prints each median and the
median of the rounds' ratios with their interquartile range.

``python scripts/perf/drafts_costs.py callgrind`` counts instructions per
operation under ``valgrind --tool=callgrind`` (K and 2K repetitions, the
difference divided by K): a figure a busy machine does not change, for the
same operations.  Instructions are not time (the interpreter's bytecode runs
at another rate than the C core's code), but their ratios move with the code,
not with the load.
"""

import argparse
import gc
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time


def state():
    os.environ.setdefault("FROZENMAP_REQUIRE_C", "1")
    from frozenmap._ccore import frozendict as fd

    return fd(
        {
            "k%d" % i: fd({"j%d" % j: fd({"x%d" % x: x for x in range(20)}) for j in range(20)})
            for i in range(250)
        }
    )


def operations():
    """name -> (a zero-argument function, operations it performs)."""
    from frozenmap import produce, produce_with_patches

    s = state()
    rng = random.Random(814)
    paths = [
        ("k%d" % rng.randrange(250), "j%d" % rng.randrange(20), "x%d" % rng.randrange(20))
        for _ in range(1000)
    ]

    def nothing(d):
        pass

    def read_one(d):
        d["k5"]

    def read_two(d):
        d["k5"]["j7"]

    def write(d):
        d["k5"]["j7"]["x3"] = 99

    def many(d):
        for i, (a, b, c) in enumerate(paths):
            d[a][b][c] = -i

    def many_set_in():
        t = s
        for i, path in enumerate(paths):
            t = t.set_in(path, -i)

    return {
        "set_in": (lambda: s.set_in(("k5", "j7", "x3"), 99), 1),
        "produce": (lambda: produce(s, write), 1),
        "produce_with_patches": (lambda: produce_with_patches(s, write), 1),
        "layer: recipe doing nothing": (lambda: produce(s, nothing), 1),
        "layer: one nested read": (lambda: produce(s, read_one), 1),
        "layer: two nested reads": (lambda: produce(s, read_two), 1),
        "1000: chain of set_in": (many_set_in, 1000),
        "1000: one produce": (lambda: produce(s, many), 1000),
        "1000: one produce_with_patches": (lambda: produce_with_patches(s, many), 1000),
    }


RATIOS = [
    ("produce", "set_in"),
    ("produce_with_patches", "produce"),
    ("layer: recipe doing nothing", "set_in"),
    ("layer: one nested read", "set_in"),
    ("layer: two nested reads", "set_in"),
    ("1000: one produce", "1000: chain of set_in"),
    ("1000: one produce_with_patches", "1000: one produce"),
]


def wall(rounds):
    ops = operations()
    times = {name: [] for name in ops}
    gc.disable()
    names = list(ops)
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            run, count = ops[name]
            repeat = 300 if count == 1 else 1
            start = time.process_time()
            for _ in range(repeat):
                run()
            times[name].append((time.process_time() - start) / repeat / count)
    for name in names:
        print("%-32s %9.3f us per change" % (name, statistics.median(times[name]) * 1e6))
    print()
    for top, bottom in RATIOS:
        ratios = sorted(a / b for a, b in zip(times[top], times[bottom]))
        quarter = len(ratios) // 4
        print(
            "%-32s / %-22s %5.2f (IQR %.2f-%.2f)"
            % (top, bottom, statistics.median(ratios), ratios[quarter], ratios[-quarter - 1])
        )


def child(name, repeat):
    """Run one operation ``repeat`` times (inside callgrind)."""
    run, _ = operations()[name]
    gc.disable()
    for _ in range(repeat):
        run()


def instructions(name, repeat):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--callgrind-out-file=" + out,
                sys.executable,
                __file__,
                "child",
                name,
                str(repeat),
            ],
            check=True,
            capture_output=True,
        )
        with open(out) as f:
            totals = re.search(r"^totals:\s+(\d+)", f.read(), re.M)
        return int(totals.group(1))


def callgrind(repeat):
    counts = {}
    for name, (_, count) in operations().items():
        k = max(1, repeat // count)
        counts[name] = (instructions(name, 2 * k) - instructions(name, k)) / k / count
        print("%-32s %10.0f instructions per change" % (name, counts[name]), flush=True)
    print()
    for top, bottom in RATIOS:
        print("%-32s / %-22s %5.2f" % (top, bottom, counts[top] / counts[bottom]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    sub.add_parser("wall").add_argument("--rounds", type=int, default=61)
    sub.add_parser("callgrind").add_argument("--repeat", type=int, default=2000)
    run_one = sub.add_parser("child")
    run_one.add_argument("name")
    run_one.add_argument("repeat", type=int)
    args = parser.parse_args()
    if args.mode == "wall":
        wall(args.rounds)
    elif args.mode == "callgrind":
        callgrind(args.repeat)
    else:
        child(args.name, args.repeat)


if __name__ == "__main__":
    main()
