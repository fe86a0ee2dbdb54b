"""Where a kept version's bytes go, and the nested reducer's time per action.

    python scripts/perf/version_bytes.py 1000 10000 100000
    python scripts/perf/version_bytes.py --reducer

The first form derives 100 versions of a map of n string keys by one set of
an existing key, one set of a new key and one delete, and sizes the nodes
each version does not share with its parent (from ``_dump()`` and
``_node_ids()``, C core): key-trie bytes, order-trie bytes and the
frozendict object.  The second times the benchmark's nested reducer (every
state kept) by the median of per-action times, which a preempted pass on a
loaded machine does not skew, in interleaved rounds against immutables.
Results: docs/notes/memory-of-versions.md.
"""

import gc
import random
import re
import statistics
import sys
import time

FD_BYTES = 16 + 56  # GC header + fd_object
ORDER_HEAD = 16 + 40  # GC header + order_node up to its first slot


def _nodes(m):
    """``[(id, trie, bytes)]`` for every node of ``m``, in ``_node_ids`` order."""
    sizes = []
    for line in m._dump().splitlines():
        text = line.strip()
        if text.startswith("Bitmap"):
            data, nodes = (bin(int(x, 16)).count("1") for x in re.findall(r"0x[0-9a-f]+", text))
            sizes.append(("key", 16 + 32 * data + 8 * nodes))
        elif text.startswith("Collision"):
            sizes.append(("key", 0))
        elif text.startswith("Order"):
            shift = int(re.search(r"shift=(\d+)", text).group(1))
            count = bin(int(re.search(r"bitmap=(0x[0-9a-f]+)", text).group(1), 16)).count("1")
            units = 2 if shift == 0 else 1
            sizes.append(("order", ORDER_HEAD + 8 * (count * units - 1)))
    ids = m._node_ids()
    assert len(ids) == len(sizes)
    return [(i, trie, size) for i, (trie, size) in zip(ids, sizes)]


def split(n):
    from frozenmap._ccore import frozendict

    base = frozendict({"key%d" % i: i for i in range(n)})
    shared = {i for i, _, _ in _nodes(base)}
    rng = random.Random(1)
    rows = {"set existing": [], "set new": [], "delete": []}
    for j in range(100):
        key = "key%d" % rng.randrange(n)
        versions = {
            "set existing": base.set(key, -j - 10**6),
            "set new": base.set("new%d" % j, j),
            "delete": base.delete(key),
        }
        for name, version in versions.items():
            new = [(trie, size) for i, trie, size in _nodes(version) if i not in shared]
            rows[name].append(
                (sum(s for t, s in new if t == "key"), sum(s for t, s in new if t == "order"))
            )
    for name, pairs in rows.items():
        key_bytes = statistics.mean(k for k, _ in pairs)
        order_bytes = statistics.mean(o for _, o in pairs)
        total = key_bytes + order_bytes + FD_BYTES
        print(
            "n=%-9s %-13s key trie %5.0f B  order trie %5.0f B  object %d B  total %5.0f B"
            % (format(n, ","), name, key_bytes, order_bytes, FD_BYTES, total)
        )


def reducer(rounds=7):
    from frozenmap.bench.operations import Workload
    from frozenmap.bench.peers import load_libraries

    w = Workload(10_000)
    r = w.reducer()
    libs, _ = load_libraries(["frozenmap:c", "immutables", "pyrsistent", "rpds", "frozenmap:py"])
    steps = {lib.name: (w.reducer_base(lib), r.stepper(lib)) for lib in libs}
    medians = {lib.name: [] for lib in libs}
    gc.disable()
    for turn in range(rounds):
        for lib in libs[turn % len(libs) :] + libs[: turn % len(libs)]:
            state, step = steps[lib.name]
            history, per_action = [state], []
            for action in r.actions:
                start = time.perf_counter()
                history.append(step(history[-1], action))
                per_action.append(time.perf_counter() - start)
            medians[lib.name].append(statistics.median(per_action))
            del history
    gc.enable()
    reference = medians.get("immutables")
    for name, values in medians.items():
        line = "%-13s %.2f µs per action" % (name, 1e6 * statistics.median(values))
        if reference:
            ratios = [a / b for a, b in zip(values, reference)]
            line += "  /immutables %.2f (%.2f-%.2f)" % (
                statistics.median(ratios),
                min(ratios),
                max(ratios),
            )
        print(line)


if __name__ == "__main__":
    if "--reducer" in sys.argv:
        reducer()
    else:
        for size in [int(float(a)) for a in sys.argv[1:]] or [1000, 10_000, 100_000]:
            split(size)
