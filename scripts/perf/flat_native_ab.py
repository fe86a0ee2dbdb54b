"""A/B timing of small-map operations between two installs (issue 23, goal 2 at 9-32 keys).

    python scripts/perf/flat_native_ab.py --ab VENV_A VENV_B [--rounds 11] [--out FILE]
    python scripts/perf/flat_native_ab.py --once          (one round, JSON, this install)

Two builds cannot share a process (both are ``frozenmap``), so the driver runs
one round in each venv's interpreter in turn, alternating which goes first,
and reports the median over the rounds of each operation's time (ns per
operation, the best of 3 short repeats inside a round: a busy machine
preempts fewer of them) and the ratio B / A.  The operations are those
FLAT_MAX decides between: an Evolver round trip (evolve, two edits, freeze),
``fd | {two keys}`` (one replaced, one new), ``diff`` after one edit, a
lookup hit (the last key) and miss, set of an existing and of a new key,
delete, and iteration of the items, at 4-33 keys.
"""

import json
import os
import statistics
import subprocess
import sys
import time

SIZES = [4, 8, 9, 16, 24, 32, 33]
REPS = 1000


def _ops(fd_type, n):
    keys = ["k%d" % i for i in range(n)]
    fd = fd_type(zip(keys, range(n)))
    first, last = keys[0], keys[-1]
    other = fd.set(keys[n // 2], "x")
    two = {first: "a", "new": 1}

    def evolve():
        ev = fd.evolve()
        ev[first] = "a"
        ev[last] = "b"
        return ev.freeze()

    def iterate():
        for _ in fd.items():
            pass

    return {
        "evolve 2 edits freeze": evolve,
        "| two keys": lambda: fd | two,
        "diff one edit": lambda: fd.diff(other),
        "hit last": lambda: fd[last],
        "miss": lambda: fd.get("absent"),
        "set existing": lambda: fd.set(first, "a"),
        "set new": lambda: fd.set("new", 1),
        "delete": lambda: fd.delete(first),
        "iterate": iterate,
    }


def _time(fn):
    best = None
    for _ in range(3):
        start = time.perf_counter_ns()
        for _ in range(REPS):
            fn()
        elapsed = (time.perf_counter_ns() - start) / REPS
        best = elapsed if best is None else min(best, elapsed)
    return best


def once():
    import frozenmap

    out = {}
    for n in SIZES:
        for name, fn in _ops(frozenmap.frozendict, n).items():
            out["%s @%d" % (name, n)] = _time(fn)
    json.dump(out, sys.stdout)


def ab(venv_a, venv_b, rounds, out_path):
    runs = {"A": [], "B": []}
    me = os.path.abspath(__file__)
    for r in range(rounds):
        order = [("A", venv_a), ("B", venv_b)]
        if r % 2:
            order.reverse()
        for label, venv in order:
            text = subprocess.run(
                [os.path.join(venv, "bin", "python"), me, "--once"],
                check=True,
                capture_output=True,
                text=True,
                cwd="/",
            ).stdout
            runs[label].append(json.loads(text))
        print("round %d done" % (r + 1), file=sys.stderr)
    lines = ["| op @keys | A ns | B ns | B / A |", "|---|---|---|---|"]
    for name in runs["A"][0]:
        a = statistics.median(run[name] for run in runs["A"])
        b = statistics.median(run[name] for run in runs["B"])
        lines.append("| %s | %.0f | %.0f | %.2f |" % (name, a, b, b / a))
    text = "\n".join(lines)
    print(text)
    if out_path:
        with open(out_path, "w") as f:
            f.write(text + "\n")


def main(argv):
    if argv[:1] == ["--once"]:
        once()
        return
    rounds, out_path = 11, None
    if "--rounds" in argv:
        i = argv.index("--rounds")
        rounds = int(argv[i + 1])
        del argv[i : i + 2]
    if "--out" in argv:
        i = argv.index("--out")
        out_path = argv[i + 1]
        del argv[i : i + 2]
    assert argv[0] == "--ab", __doc__
    ab(argv[1], argv[2], rounds, out_path)


if __name__ == "__main__":
    main(sys.argv[1:])
