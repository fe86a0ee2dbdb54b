"""Small maps (issue 23, goal 2): memory and time at 1-32 keys, against dict and immutables.

    python scripts/perf/small_maps.py [--rounds 11] [SIZES ...]

Memory (tracemalloc, bytes per map, 2,000 kept): one map built from a dict,
and one version derived by a set of an existing key (every version derived
from the same base, all kept), as the benchmark's "small map" rows.

Time (ns per operation, the median of ``--rounds`` rounds, the libraries
interleaved in each round in one process): lookup hit (the last key and the middle one) and miss, set of an
existing and of a new key, delete, and iteration of the items.  Results:
docs/notes/memory-of-versions.md.
"""

import gc
import statistics
import sys
import time
import tracemalloc

import frozenmap

try:
    import immutables
except ImportError:  # pragma: no cover - the comparison needs it
    immutables = None

KEPT = 2000
REPS = 2000  # short rounds: a busy machine preempts fewer of them
SIZES = [1, 3, 8, 9, 12, 16, 24, 32]


def _libraries():
    libs = {"fm": (frozenmap.frozendict, lambda m, k, v: m.set(k, v), lambda m, k: m.delete(k))}
    if immutables is not None:
        libs["imm"] = (immutables.Map, lambda m, k, v: m.set(k, v), lambda m, k: m.delete(k))

    def dict_set(m, k, v):
        c = m.copy()
        c[k] = v
        return c

    def dict_del(m, k):
        c = m.copy()
        del c[k]
        return c

    libs["dict"] = (dict, dict_set, dict_del)
    return libs


def _bytes(make):
    kept = [None] * KEPT  # allocated before tracing: only the maps count
    gc.collect()
    tracemalloc.start()
    make(kept)
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    return size / KEPT


def memory(sizes):
    print("keys | one map: fm / dict / imm | derived version: fm / dict / imm")
    for n in sizes:
        data = {"key%d" % i: i for i in range(n)}
        values = [object() for _ in range(KEPT)]
        one, derived = {}, {}
        for name, (build, setter, _) in _libraries().items():

            def build_all(kept, build=build):
                for i in range(KEPT):
                    kept[i] = build(data)

            base, key = build(data), "key%d" % (n // 2)

            def derive_all(kept, setter=setter, base=base, key=key):
                for i, v in enumerate(values):
                    kept[i] = setter(base, key, v)

            one[name] = _bytes(build_all)
            derived[name] = _bytes(derive_all)
        print(
            "%d | %s | %s"
            % (
                n,
                " / ".join("%.0f" % one.get(k, 0) for k in ("fm", "dict", "imm")),
                " / ".join("%.0f" % derived.get(k, 0) for k in ("fm", "dict", "imm")),
            )
        )


def _time(fn, reps):
    t = time.perf_counter_ns()
    fn(reps)
    return (time.perf_counter_ns() - t) / reps


def timing(sizes, rounds):
    libs = _libraries()
    print("ns per op, median of %d rounds (fm / imm / dict)" % rounds)
    for n in sizes:
        data = {"key%d" % i: i for i in range(n)}
        ops = {}
        for name, (build, setter, deleter) in libs.items():
            m = build(data)
            hit, miss, new = "key%d" % (n - 1), "nokey", "newkey"
            keys = ["key%d" % i for i in range(n)]

            def lookup_hit(r, m=m, hit=hit):
                for _ in range(r):
                    m[hit]

            def lookup_mid(r, m=m, k=keys[n // 2]):
                for _ in range(r):
                    m[k]

            def lookup_miss(r, m=m, miss=miss):
                get = m.get
                for _ in range(r):
                    get(miss)

            def set_existing(r, m=m, k=keys[n // 2], s=setter):
                for i in range(r):
                    s(m, k, i)

            def set_new(r, m=m, s=setter, new=new):
                for i in range(r):
                    s(m, new, i)

            def delete(r, m=m, k=keys[n // 2], d=deleter):
                for _ in range(r):
                    d(m, k)

            def iterate(r, m=m):
                for _ in range(r):
                    for _kv in m.items():
                        pass

            ops[name] = {
                "hit last": lookup_hit,
                "hit middle": lookup_mid,
                "miss": lookup_miss,
                "set existing": set_existing,
                "set new": set_new,
                "delete": delete,
                "iterate": iterate,
            }
        results = {name: {op: [] for op in ops[name]} for name in ops}
        for _ in range(rounds):
            for op in ops["fm"]:
                for name in ops:
                    results[name][op].append(_time(ops[name][op], REPS))
        for op in ops["fm"]:
            med = {name: statistics.median(results[name][op]) for name in results}
            print(
                "%2d %-13s %s"
                % (n, op, " / ".join("%6.1f" % med[k] for k in ("fm", "imm", "dict") if k in med))
            )


def main(argv):
    rounds = 11
    if argv[:1] == ["--rounds"]:
        rounds, argv = int(argv[1]), argv[2:]
    sizes = [int(a) for a in argv] or SIZES
    from frozenmap._ccore import _cfrozenmap

    print("frozenmap", frozenmap.IMPLEMENTATION, "flat_max", _cfrozenmap._layout["flat_max"])
    memory(sizes)
    timing(sizes, rounds)


if __name__ == "__main__":
    main(sys.argv[1:])
