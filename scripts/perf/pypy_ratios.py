"""Interleaved timing of the pure core against its peers (PyPy or CPython).

Usage: python scripts/perf/pypy_ratios.py [--sizes 1000,100000] [--rounds 7]
                                          [--ops lookup_hit,...] [--libs py,immutables,dict]
                                          [--baseline DIR]

Libraries: ``py`` (frozenmap's pure core), ``immutables``, ``pyrsistent``
(``pmap``), ``frozendict`` (the PyPI package), ``dict`` (copied per edit),
``floor``, ``orderedfloor`` (``orderedfloorinsert``: built one key at a
time), ``orderedfloorhashed`` and ``floortuple`` (the lower-bound prototypes
of ``pypy_floor.py``; ``floortuple`` and ``orderedfloorhashed`` have no
edits; ``floorordered`` and ``floororderedtuple`` are for ``mem`` only).  The op ``mem`` is the
benchmark's memory per item (PyPy: live-heap growth between full
collections), not a time.  The ops ``evolve_set`` and ``evolve_delete``
(``py`` and ``base`` only, not run by default) time the sample's edits made
through one evolver, ``freeze()`` included, per edit.

Each round times every (operation, library) pair once, in turn, so that the
machine's load drifts over all of them alike; the table gives the median of
the rounds per operation (time per operation) and the ratio of frozenmap's
pure core to each peer.  Keys are the benchmark's ``"key%d"`` strings with int
values; samples are drawn with a fixed seed.  Each measurement runs warm-up
passes first (PyPy's JIT compiles the loops), then times enough passes for
about ``--target`` seconds (CPU time of this process: the machine is shared).

``--baseline DIR`` adds the column ``base``: the pure core of the source tree
at DIR (e.g. a ``git worktree`` of main), imported under another package name
from a copy, so that a change is measured against what it changes in one
process (ratios ``py/base``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

SAMPLE = 1000


def _pure(package="frozenmap"):
    return importlib.import_module(package + "._pycore").frozendict


def _baseline(tree):
    """Copy ``tree``'s package as ``frozenmap_base`` into a temporary folder on
    sys.path (its imports are relative)."""
    folder = tempfile.mkdtemp(prefix="pypy_ratios_")
    shutil.copytree(
        os.path.join(tree, "frozenmap"),
        os.path.join(folder, "frozenmap_base"),
        ignore=shutil.ignore_patterns("*.so", "__pycache__"),
    )
    sys.path.insert(0, folder)
    return _pure("frozenmap_base")


def _libs(names, baseline=None):
    out = {}
    for name in names:
        if name in ("py", "base"):
            fd = _pure() if name == "py" else _baseline(baseline)
            out[name] = (fd, fd.set, fd.delete)
        elif name == "immutables":
            import immutables

            out[name] = (immutables.Map, immutables.Map.set, immutables.Map.delete)
        elif name == "floor":
            from pypy_floor import FloorMap

            out[name] = (FloorMap, FloorMap.set, FloorMap.delete)
        elif name == "orderedfloor":
            from pypy_floor import OrderedFloorMap

            out[name] = (OrderedFloorMap, OrderedFloorMap.set, OrderedFloorMap.delete)
        elif name == "orderedfloorhashed":
            from pypy_floor import OrderedFloorHashed

            out[name] = (OrderedFloorHashed, None, None)
        elif name == "orderedfloorinsert":
            from pypy_floor import OrderedFloorMap

            insert = lambda data: OrderedFloorMap(data, bulk=False)  # noqa: E731
            out[name] = (insert, OrderedFloorMap.set, OrderedFloorMap.delete)
        elif name in ("floorordered", "floororderedtuple"):
            from pypy_floor import FloorOrdered

            tuples = name == "floororderedtuple"
            out[name] = (lambda data, t=tuples: FloorOrdered(data, t), None, None)
        elif name == "floortuple":
            from pypy_floor import FloorTupleMap

            out[name] = (FloorTupleMap, None, None)
        elif name == "pyrsistent":
            import pyrsistent

            out[name] = (pyrsistent.pmap, pyrsistent.PMap.set, pyrsistent.PMap.remove)
        elif name == "frozendict":
            from frozendict import frozendict

            out[name] = (frozendict, frozendict.set, frozendict.delete)
        elif name == "dict":

            def dset(m, k, v):
                c = dict(m)
                c[k] = v
                return c

            def ddel(m, k):
                c = dict(m)
                del c[k]
                return c

            out[name] = (dict, dset, ddel)
        else:
            raise SystemExit("unknown library %r" % name)
    return out


def _op_construct(make, setter, deleter, data, w):
    make(data)
    return 1


def _op_lookup_hit(make, setter, deleter, m, w):
    for k in w["hits"]:
        m[k]
    return len(w["hits"])


def _op_lookup_miss(make, setter, deleter, m, w):
    for k in w["misses"]:
        k in m
    return len(w["misses"])


def _op_set_existing(make, setter, deleter, m, w):
    for k, v in w["updates"]:
        setter(m, k, v)
    return len(w["updates"])


def _op_set_new(make, setter, deleter, m, w):
    for k, v in w["inserts"]:
        setter(m, k, v)
    return len(w["inserts"])


def _op_delete(make, setter, deleter, m, w):
    for k in w["deletes"]:
        deleter(m, k)
    return len(w["deletes"])


def _op_evolve_set(make, setter, deleter, m, w):
    e = m.evolve()
    for k, v in w["updates"]:
        e[k] = v
    e.freeze()
    return len(w["updates"])


def _op_evolve_delete(make, setter, deleter, m, w):
    e = m.evolve()
    for k in w["deletes"]:
        del e[k]
    e.freeze()
    return len(w["deletes"])


def _mem_per_item(make, data):
    """The benchmark's memory per item (on PyPy: live-heap growth between full
    collections), after one warm-up build."""
    from frozenmap.bench.operations import _traced

    make(data)
    return _traced(lambda: make(data)) / len(data)


OPS = {
    "construct": _op_construct,
    "lookup_hit": _op_lookup_hit,
    "lookup_miss": _op_lookup_miss,
    "set_existing": _op_set_existing,
    "set_new": _op_set_new,
    "delete": _op_delete,
    "evolve_set": _op_evolve_set,
    "evolve_delete": _op_evolve_delete,
}
EVOLVER_OPS = ("evolve_set", "evolve_delete")
"""Not in the default ``--ops``: a batch of edits through one evolver (the
transient's ``champ_put`` / ``champ_remove``), for ``py`` and ``base`` only."""


def _workload(n):
    rng = random.Random(814)
    keys = ["key%d" % i for i in range(n)]
    data = dict(zip(keys, range(n)))
    picks = rng.sample(range(n), min(n, SAMPLE))
    sample = [keys[i] for i in picks]
    return {
        "data": data,
        "hits": sample,
        "misses": ["miss%d" % i for i in range(SAMPLE)],
        "updates": [(k, data[k] + n + 1) for k in sample],
        "inserts": [("new%d" % i, i) for i in range(SAMPLE)],
        "deletes": sample,
    }


def _time(fn, args, target):
    for _ in range(3):  # warm-up (JIT)
        fn(*args)
    count = 0
    ops = 0
    start = time.process_time()
    while True:
        ops += fn(*args)
        count += 1
        elapsed = time.process_time() - start
        if elapsed >= target:
            return elapsed / ops


def _fmt(t):
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if t >= scale:
            return "%.3g %s" % (t / scale, unit)
    return "%.3g ns" % (t / 1e-9)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="1000,100000")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--target", type=float, default=0.2)
    p.add_argument("--ops", default=",".join(op for op in OPS if op not in EVOLVER_OPS))
    p.add_argument("--libs", default="py,immutables,dict")
    p.add_argument("--baseline", metavar="DIR")
    args = p.parse_args(argv)
    names = args.libs.split(",")
    if args.baseline:
        names.insert(1, "base")
    libs = _libs(names, args.baseline)
    ops = args.ops.split(",")
    print(sys.version.replace("\n", " "))
    for n in [int(s) for s in args.sizes.split(",")]:
        w = _workload(n)
        maps = {name: lib[0](w["data"]) for name, lib in libs.items()}
        times = {(op, name): [] for op in ops for name in libs}
        for _ in range(args.rounds):
            for op in ops:
                for name, (make, setter, deleter) in libs.items():
                    if op == "mem":
                        times[op, name].append(_mem_per_item(make, w["data"]))
                        continue
                    if (setter is None and op in ("set_existing", "set_new", "delete")) or (
                        op in EVOLVER_OPS and name not in ("py", "base")
                    ):
                        times[op, name].append(float("nan"))
                        continue
                    m = w["data"] if op == "construct" else maps[name]
                    t = _time(OPS[op], (make, setter, deleter, m, w), args.target)
                    times[op, name].append(t)
        print("n = %d, median of %d rounds" % (n, args.rounds))
        head = "%-14s" % "op" + "".join("%12s" % name for name in libs)
        me = "floor" if "floor" in libs else "py"
        peers = [name for name in libs if name != me]
        print(head + "".join(" %13s" % (me + "/" + p) for p in peers))
        for op in ops:
            med = {name: statistics.median(times[op, name]) for name in libs}
            fmt = (lambda b: "%.1f B" % b) if op == "mem" else _fmt
            row = "%-14s" % op + "".join("%12s" % fmt(med[name]) for name in libs)
            if me in med:
                row += "".join("%13.2fx" % (med[me] / med[p]) for p in peers)
            print(row)


if __name__ == "__main__":
    main()
