"""The installed frozendict against ``immutables.Map``: interleaved single-key timings.

Usage: ``python scripts/perf/positional_cost.py [--sizes 1000,100000]
[--rounds 21] [--ops lookup_hit,...] [--json FILE]``

Issue 25 bounds what the positional bookkeeping (item counts in the order
trie's inner nodes) may cost the existing operations: 3% of wall clock.  Two
builds cannot share a process (both C modules would be ``_cfrozenmap``), so
this script measures one build against a fixed reference, ``immutables.Map``
(a C HAMT without an order index), in one process: each round times every
operation on both back to back (the order alternating between rounds), over
the same sampled keys, and records the ratio frozenmap / immutables (each the
best of 3 calls).  Printed: the median µs per operation of each and the median
ratio with its spread.  Run it in a venv with the build before the counts and
in one with the build after, and compare the ratios: the reference absorbs
most of the machine's drift between the two runs.  ``--json`` keeps the
ratios for that comparison.  Which core runs follows ``FROZENMAP_PURE_PYTHON``.

Only the derivations of both libraries are timed (``set``/``delete`` return a
new version; ``Evolver`` has no counterpart worth comparing), and lookups.
On a shared machine one median still moves by several percent between runs:
a difference of 3% needs many runs, or callgrind (scripts/perf/callgrind_ops.py).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

SAMPLE = 1000
OPS = ["lookup_hit", "lookup_miss", "set_existing", "set_new", "delete", "iterate"]

Timed = Tuple[Callable[[], None], int]


def make_ops(m: Any, remove: str, data: Dict[str, int], rng: random.Random) -> Dict[str, Timed]:
    """Per operation: a function doing SAMPLE operations (n for iterate), and that count."""
    keys = list(data)
    n = len(keys)
    hits = [keys[i] for i in rng.sample(range(n), min(SAMPLE, n))]
    misses = ["miss%d" % i for i in range(SAMPLE)]
    updates = [(k, data[k] + n + 1) for k in hits]
    inserts = [("new%d" % i, i) for i in range(SAMPLE)]
    setter = m.set
    deleter = getattr(m, remove)

    def lookup_hit() -> None:
        for k in hits:
            m[k]

    def lookup_miss() -> None:
        for k in misses:
            k in m

    def set_existing() -> None:
        for k, v in updates:
            setter(k, v)

    def set_new() -> None:
        for k, v in inserts:
            setter(k, v)

    def delete() -> None:
        for k in hits:
            deleter(k)

    def iterate() -> None:
        for _ in m.items():
            pass

    return {
        "lookup_hit": (lookup_hit, len(hits)),
        "lookup_miss": (lookup_miss, SAMPLE),
        "set_existing": (set_existing, len(updates)),
        "set_new": (set_new, SAMPLE),
        "delete": (delete, len(hits)),
        "iterate": (iterate, n),
    }


def timed(fn: Callable[[], None], count: int, repeat: int = 3) -> float:
    """Seconds per operation: the best of ``repeat`` calls of ``fn`` (GC off while timing)."""
    best = float("inf")
    gc.disable()
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
    finally:
        gc.enable()
    return best / count


def measure(n: int, rounds: int, ops: List[str]) -> Dict[str, Dict[str, float]]:
    """Interleaved rounds at size ``n``: per operation the median times and ratios."""
    import immutables

    from frozenmap import frozendict

    data = {"key%d" % i: i for i in range(n)}
    libs = {
        "frozenmap": make_ops(frozendict(data), "delete", data, random.Random(814)),
        "immutables": make_ops(immutables.Map(data), "delete", data, random.Random(814)),
    }
    times: Dict[Tuple[str, str], List[float]] = {}
    ratios: Dict[str, List[float]] = {op: [] for op in ops}
    order = ("frozenmap", "immutables")
    for r in range(rounds):
        for op in ops:
            got = {}
            for lib in order if r % 2 == 0 else order[::-1]:
                fn, count = libs[lib][op]
                got[lib] = timed(fn, count)
                times.setdefault((lib, op), []).append(got[lib])
            ratios[op].append(got["frozenmap"] / got["immutables"])
    return {
        op: {
            "frozenmap_us": statistics.median(times["frozenmap", op]) * 1e6,
            "immutables_us": statistics.median(times["immutables", op]) * 1e6,
            "ratio": statistics.median(ratios[op]),
            "min": min(ratios[op]),
            "max": max(ratios[op]),
        }
        for op in ops
    }


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    import frozenmap

    ops = args.ops.split(",")
    print(
        "Python %s, frozenmap %s core, %d interleaved rounds; ratio frozenmap / immutables"
        % (sys.version.split()[0], frozenmap.IMPLEMENTATION, args.rounds)
    )
    results = {}
    for n in [int(s) for s in args.sizes.split(",")]:
        got = measure(n, args.rounds, ops)
        results[str(n)] = got
        print(
            "n=%d\n%-13s %10s %10s %8s %14s"
            % (n, "operation", "frozenmap", "immutables", "ratio", "spread")
        )
        for op in ops:
            g = got[op]
            print(
                "%-13s %8.3fus %8.3fus %7.3fx %6.2f..%-6.2f"
                % (op, g["frozenmap_us"], g["immutables_us"], g["ratio"], g["min"], g["max"]),
                flush=True,
            )
        print()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"implementation": frozenmap.IMPLEMENTATION, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
