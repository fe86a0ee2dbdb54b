"""The pure core's small-map operations, A/B between trees (issue 23, goal 2 at 9-32 keys).

    python scripts/perf/flat_ops_pure_ab.py [--rounds 11] [--sizes 4,8,...] TREE:FLAT_MAX ...

Each ``TREE`` is a git ref of this repository (``main``, ``flatpy``) or a
directory holding a ``frozenmap/`` package (a worktree, uncommitted edits
included); ``:FLAT_MAX`` rewrites ``FLAT_MAX`` in the copy's
``frozenmap/_pycore/flat.py`` (the pure core only: the copies are imported
with ``FROZENMAP_PURE_PYTHON=1``).  Example, the flat-native operations
against main at both thresholds::

    python scripts/perf/flat_ops_pure_ab.py main:8 main:32 .:8 .:32

The tree ``pmap`` stands for pyrsistent's ``pmap`` (installed beside the
script's interpreter), timed on the operations it has; the lookups against
main and pmap per size (issue 23, goal 6)::

    python scripts/perf/flat_ops_pure_ab.py --lookups main . pmap

Every round runs one fresh process per tree, the trees in a rotated order
(alternating runs on a loaded machine); each process times every operation
at every size once (the best of ``REPEATS`` loops of ``REPS`` calls, µs
per call).  Printed: the median over
the rounds per tree, and each tree's median ratio to the first tree's
(the ratio taken per round, so a slow round slows both sides).

Operations, on a frozendict ``fd`` of n keys (``k0``..``k{n-1}``, int
values): ``evolve2`` (``evolve()``, two existing keys set, ``freeze()``),
``or2`` (``fd | {k0: new, "new": 1}``: one key replaced, one added),
``diff1`` (``fd.diff(fd.set(middle key, new))``), ``hit`` (the last key:
the longest scan), ``hit_mid`` (the middle key), ``hit_first``, ``miss``
(``get`` with a default), ``in_miss``, ``set_old`` (the middle key),
``set_new`` (at n = FLAT_MAX: the promotion), ``delete`` (the middle key;
at FLAT_MAX + 1: the demotion), ``iter`` (a walk of ``items()``),
``from_dict`` (the constructor on a dict), ``eq`` (against an equal map
built apart), ``pickle`` (a ``dumps``/``loads`` round trip), ``set_hit``
and ``new_hit`` (a version made by a value change, or by a new key, then one
lookup of the last key in it: a fresh version's first lookup).  ``--lookups``
times the six lookups only, at every size 1-33 unless ``--sizes`` says.
Results: docs/notes/memory-of-versions.md.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPS = 200
REPEATS = 5  # the best of five short loops per round: a preempted loop is dropped
SIZES = [4, 8, 9, 16, 24, 32, 33]
OPERATIONS = [
    "evolve2",
    "or2",
    "diff1",
    "hit",
    "hit_mid",
    "miss",
    "hit_first",
    "in_miss",
    "set_old",
    "set_new",
    "delete",
    "iter",
    "from_dict",
    "eq",
    "pickle",
    "set_hit",
    "new_hit",
]
LOOKUPS = ["hit", "hit_mid", "hit_first", "miss", "in_miss"]


# --- the worker: one tree, one round -----------------------------------------------


def _cases(fd_type, n):
    """``{operation: a function of no argument}`` at n keys."""
    import pickle

    source = {"k%d" % i: i for i in range(n)}
    fd = fd_type(source)
    last = "k%d" % (n - 1)
    middle = "k%d" % (n // 2)
    derived = fd.set(middle, -1)
    operand = {"k0": -1, "new": 1}
    twin = fd_type(dict(source))

    def evolve2():
        e = fd.evolve()
        e["k0"] = -1
        e[last] = -2
        return e.freeze()

    def iterate():
        for _ in fd.items():
            pass

    return {
        "evolve2": evolve2,
        "or2": lambda: fd | operand,
        "diff1": lambda: fd.diff(derived),
        "hit": lambda: fd[last],
        "hit_mid": lambda: fd[middle],
        "hit_first": lambda: fd["k0"],
        "miss": lambda: fd.get("absent"),
        "in_miss": lambda: "absent" in fd,
        "set_old": lambda: fd.set(middle, -1),
        "set_new": lambda: fd.set("new", 1),
        "delete": lambda: fd.delete(middle),
        "iter": iterate,
        "from_dict": lambda: fd_type(source),
        "eq": lambda: fd == twin,
        "set_hit": lambda: fd.set(middle, -1)[last],
        "new_hit": lambda: fd.set("new", 1)[last],
        "pickle": lambda: pickle.loads(pickle.dumps(fd)),
    }


def _pmap_cases(n):
    """``_cases`` for pyrsistent's pmap, on the operations it has."""
    from pyrsistent import pmap

    source = {"k%d" % i: i for i in range(n)}
    pm = pmap(source)
    last = "k%d" % (n - 1)
    middle = "k%d" % (n // 2)

    def iterate():
        for _ in pm.items():
            pass

    return {
        "hit": lambda: pm[last],
        "hit_mid": lambda: pm[middle],
        "hit_first": lambda: pm["k0"],
        "miss": lambda: pm.get("absent"),
        "in_miss": lambda: "absent" in pm,
        "set_old": lambda: pm.set(middle, -1),
        "set_new": lambda: pm.set("new", 1),
        "delete": lambda: pm.remove(middle),
        "iter": iterate,
        "from_dict": lambda: pmap(source),
    }


def _time(fn):
    clock = time.perf_counter
    best = float("inf")
    for _ in range(REPEATS):
        start = clock()
        for _ in range(REPS):
            fn()
        best = min(best, clock() - start)
    return best / REPS * 1e6


def worker(sizes, operations):
    if os.environ.get("FLAT_AB_PMAP"):
        cases = _pmap_cases
    else:
        import frozenmap

        assert frozenmap.IMPLEMENTATION == "python", frozenmap.IMPLEMENTATION

        def cases(n):
            return _cases(frozenmap.frozendict, n)

    result = {}
    for n in sizes:
        made = cases(n)
        for name in operations:
            fn = made.get(name)
            if fn is None:
                continue
            fn()  # (warm: first-call costs out of the loop)
            result["%s@%d" % (name, n)] = _time(fn)
    json.dump(result, sys.stdout)


# --- the parent: copies of the trees, interleaved rounds ---------------------------


def _prepare(spec, root, index):
    if spec == "pmap":
        return None
    tree, _, flat_max = spec.rpartition(":")
    if not tree:
        tree, flat_max = flat_max, ""
    dest = os.path.join(root, "t%d" % index)
    os.makedirs(dest)
    if os.path.isdir(os.path.join(tree, "frozenmap")):
        shutil.copytree(
            os.path.join(tree, "frozenmap"),
            os.path.join(dest, "frozenmap"),
            ignore=shutil.ignore_patterns("*.so", "__pycache__"),
        )
    else:
        archive = subprocess.run(
            ["git", "archive", tree, "frozenmap"], check=True, stdout=subprocess.PIPE
        ).stdout
        subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)
    if flat_max:
        path = os.path.join(dest, "frozenmap", "_pycore", "flat.py")
        with open(path) as f:
            text = f.read()
        text, found = re.subn(r"(?m)^FLAT_MAX = \d+$", "FLAT_MAX = %d" % int(flat_max), text)
        assert found == 1, "no FLAT_MAX line in %s" % path
        with open(path, "w") as f:
            f.write(text)
    return dest


def _run(dest, sizes, operations):
    env = dict(os.environ, FROZENMAP_PURE_PYTHON="1", PYTHONHASHSEED="0")
    if dest is None:
        env["FLAT_AB_PMAP"] = "1"
    else:
        env["PYTHONPATH"] = dest
    command = [sys.executable, os.path.abspath(__file__), "--worker", ",".join(map(str, sizes))]
    out = subprocess.run(
        command + ["--operations", ",".join(operations)],
        env=env,
        check=True,
        stdout=subprocess.PIPE,
        cwd=dest or tempfile.gettempdir(),
    ).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trees", nargs="*")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--lookups", action="store_true", help="the lookups only, sizes 1-33")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--operations", default=",".join(OPERATIONS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker([int(n) for n in args.worker.split(",")], args.operations.split(","))
        return
    operations = LOOKUPS if args.lookups else args.operations.split(",")
    if args.lookups and args.sizes == ",".join(map(str, SIZES)):
        args.sizes = ",".join(map(str, range(1, 34)))
    sizes = [int(n) for n in args.sizes.split(",")]
    root = tempfile.mkdtemp(prefix="flat-ab-")
    try:
        dests = [_prepare(spec, root, i) for i, spec in enumerate(args.trees)]
        runs = [[] for _ in dests]
        for r in range(args.rounds):
            order = list(range(len(dests)))
            order = order[r % len(order) :] + order[: r % len(order)]
            for i in order:
                runs[i].append(_run(dests[i], sizes, operations))
            print("round %d/%d done" % (r + 1, args.rounds), file=sys.stderr)
    finally:
        shutil.rmtree(root)
    header = "%-12s" % "op@n" + "".join("%16s" % spec for spec in args.trees)
    print(header + "   (µs per call, median; ratio to %s)" % args.trees[0])
    for key in runs[0][0]:
        cells = []
        for i, tree_runs in enumerate(runs):
            if key not in tree_runs[0]:
                cells.append("%16s" % "-")
                continue
            median = statistics.median(run[key] for run in tree_runs)
            if i == 0:
                cells.append("%16.2f" % median)
            else:
                ratio = statistics.median(
                    run[key] / base[key] for run, base in zip(tree_runs, runs[0])
                )
                cells.append("%9.2f %5.2fx" % (median, ratio))
        print("%-12s" % key + "".join(cells))


if __name__ == "__main__":
    main()
