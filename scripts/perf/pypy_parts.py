"""Where one ``set`` / ``delete`` of the pure core spends its time (PyPy or CPython).

Usage: python scripts/perf/pypy_parts.py [--sizes 1000,100000] [--rounds 7]
                                         [--target 0.1] [--parts set,find,...]

Times, on ``pypy_ratios.py``'s workload (keys ``"key%d"``, 1,000 sampled keys,
fixed seed), each part of the derivations apart: the whole ``set`` of an
existing key and ``delete``; the key trie's one-walk copies
(``champ_set_copying``, ``champ_delete_copying``) and the order trie's
(``order_replace_copying``, ``order_remove_copying``), and both copies in
sequence (``set_tries``, ``delete_tries``); ``champ_find`` alone
(the walk, no copy); ``bare_copy``, the key-trie walk copying each node on
the path and nothing else (what any path copy of this layout pays); and the
same operations of the floor prototype (``pypy_floor.py``) and of immutables'
pure ``Map`` when installed.  Each part runs in turn per round (CPU time of
the process, median of the rounds, per key).  Results: docs/notes/pypy.md,
session 6.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _parts(n):
    """The named parts at size ``n``: name -> a function running it for every
    sampled key."""
    fd = importlib.import_module("frozenmap._pycore.frozendict").frozendict
    kt = importlib.import_module("frozenmap._pycore.keytrie")
    ot = importlib.import_module("frozenmap._pycore.ordertrie")
    key_mask = importlib.import_module("frozenmap._pycore.hashing").KEY_MASK
    from pypy_floor import FloorMap

    rng = random.Random(814)
    keys = ["key%d" % i for i in range(n)]
    data = dict(zip(keys, range(n)))
    sample = [keys[i] for i in rng.sample(range(n), min(n, 1000))]
    m = fd(data)
    root, order = m._root, m._order
    triples = [(hash(k) & key_mask, k, data[k] + n + 1) for k in sample]
    seqs = [(kt.champ_find(root, h, k)[1], (k, v)) for h, k, v in triples]
    floor = FloorMap(data)

    def bare_copy():
        for h, _, _ in triples:
            new = root[:]
            while True:
                if kt._NX:  # PyPy's layout: children by the nodemap
                    bit = 1 << (h & 31)
                    if not new[1] & bit:
                        break
                    j = -1 - (new[1] & (bit - 1)).bit_count()
                else:
                    j = new[3][h & 31]
                    if not j:
                        break
                child = new[j][:]
                child[2] = None
                new[j] = child
                new = child
                h >>= 5

    # (Loops that drop each result: a list of 1,000 new versions would make
    # every minor collection copy them, and time the collector instead.)
    def each(fn, args):
        def run():
            for a in args:
                fn(*a)

        return run

    def set_tries():
        # the two path copies of a set, in sequence, as fd.set makes them
        for (h, k, v), (s, _) in zip(triples, seqs):
            kt.champ_set_copying(root, h, k, v, 0)
            ot.order_replace_copying(order, s, (k, v))

    def delete_tries():
        for (h, k, _), (s, _) in zip(triples, seqs):
            kt.champ_delete_copying(root, h, k)
            ot.order_remove_copying(order, s)

    updates = [(k, v) for _, k, v in triples]
    alone = [(k,) for k in sample]
    parts = {
        "set": each(m.set, updates),
        "delete": each(m.delete, alone),
        "champ_set": each(kt.champ_set_copying, [(root, h, k, v, 0) for h, k, v in triples]),
        "champ_delete": each(kt.champ_delete_copying, [(root, h, k) for h, k, _ in triples]),
        "order_replace": each(ot.order_replace_copying, [(order, s, it) for s, it in seqs]),
        "order_remove": each(ot.order_remove_copying, [(order, s) for s, _ in seqs]),
        "set_tries": set_tries,
        "delete_tries": delete_tries,
        "find": each(kt.champ_find, [(root, h, k) for h, k, _ in triples]),
        "bare_copy": bare_copy,
        "floor_set": each(floor.set, updates),
        "floor_delete": each(floor.delete, alone),
    }
    try:
        import immutables
    except ImportError:
        return parts, len(sample)
    im = immutables.Map(data)
    parts["immutables_set"] = each(im.set, updates)
    parts["immutables_delete"] = each(im.delete, alone)
    return parts, len(sample)


def _time(fn, target):
    for _ in range(3):  # warm-up (JIT)
        fn()
    count = 0
    start = time.process_time()
    while True:
        fn()
        count += 1
        elapsed = time.process_time() - start
        if elapsed >= target:
            return elapsed / count


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="1000,100000")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--target", type=float, default=0.1)
    p.add_argument("--parts", help="comma-separated names (default: all)")
    args = p.parse_args(argv)
    print(sys.version.replace("\n", " "))
    for n in [int(s) for s in args.sizes.split(",")]:
        parts, per = _parts(n)
        names = args.parts.split(",") if args.parts else list(parts)
        times = {name: [] for name in names}
        for _ in range(args.rounds):
            for name in names:
                times[name].append(_time(parts[name], args.target) / per)
        print("n = %d, median of %d rounds, per key" % (n, args.rounds))
        for name in names:
            print("%-18s %8.0f ns" % (name, statistics.median(times[name]) * 1e9))


if __name__ == "__main__":
    main()
