"""The order trie's node widths on PyPy (issue 26): does a wider node make
the order half of a ``set`` or ``delete`` cheaper?

Usage: pypy3 scripts/perf/pypy_order_widths.py [n]   (default 100,000)

Loads ``frozenmap/_pycore/ordertrie.py`` once per geometry (leaf bits,
inner bits), with its constants changed and its two full-node literals
(``0xFFFF``, ``0xFF``) computed from them, checks each variant on one
remove and one replace, then times ``order_replace_copying``,
``order_remove_copying`` and ``order_get`` over 1,000 sampled seqs of an
``order_build`` of n items (CPU time, median of 7 rounds, per seq).  The
library keeps 8-item leaves and 16-child inner nodes (3, 4): the C core
measured them best (the module's docstring).  Results: docs/notes/pypy.md,
session 8.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import types
from typing import Any, Callable, Dict, Tuple

SOURCE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "frozenmap", "_pycore", "ordertrie.py"
)
GEOMETRIES = [(3, 4), (4, 4), (3, 5), (4, 5), (5, 5)]

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pypy_parts import _time  # noqa: E402  (the same timing loop)


def variant(text: str, leaf_bits: int, inner_bits: int) -> types.ModuleType:
    """``ordertrie.py`` with other node widths, as a fresh module."""
    for old, new in (
        ("LEAF_BITS = 3", "LEAF_BITS = %d" % leaf_bits),
        ("INNER_BITS = 4", "INNER_BITS = %d" % inner_bits),
        ("bitmap == 0xFFFF", "bitmap == FULL_INNER"),
        ("bitmap == 0xFF ", "bitmap == FULL_LEAF "),
    ):
        assert old in text, old
        text = text.replace(old, new)
    text += "\nFULL_INNER = (1 << INNER_SIZE) - 1\nFULL_LEAF = (1 << LEAF_SIZE) - 1\n"
    module = types.ModuleType("ordertrie_%d_%d" % (leaf_bits, inner_bits))
    exec(compile(text, module.__name__, "exec"), module.__dict__)
    return module


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    with open(SOURCE) as f:
        text = f.read()
    items = [("key%d" % i, i) for i in range(n)]
    seqs = random.Random(814).sample(range(n), 1000)
    runs: Dict[Tuple[Tuple[int, int], str], Callable[[], None]] = {}
    for geometry in GEOMETRIES:
        ot: Any = variant(text, *geometry)
        root = ot.order_build(items, None)
        s0, s1 = seqs[0], seqs[1]
        assert (
            list(ot.order_items(ot.order_remove_copying(root, s0))) == items[:s0] + items[s0 + 1 :]
        )
        assert ot.order_get(ot.order_replace_copying(root, s1, ("x", 1)), s1) == ("x", 1)

        def replace(ot: Any = ot, root: Any = root) -> None:
            for s in seqs:
                ot.order_replace_copying(root, s, ("x", s))

        def remove(ot: Any = ot, root: Any = root) -> None:
            for s in seqs:
                ot.order_remove_copying(root, s)

        def get(ot: Any = ot, root: Any = root) -> None:
            for s in seqs:
                ot.order_get(root, s)

        runs[geometry, "replace"] = replace
        runs[geometry, "remove"] = remove
        runs[geometry, "get"] = get
    times: Dict[Tuple[Tuple[int, int], str], list] = {key: [] for key in runs}
    for _ in range(7):
        for key, run in runs.items():
            times[key].append(_time(run, 0.1) / len(seqs))  # (warm-up included)
    print(sys.version.replace("\n", " "))
    print("n = %d, median of 7 rounds, per seq; (leaf bits, inner bits)" % n)
    for op in ("replace", "remove", "get"):
        cells = ["%s %.0f ns" % (g, statistics.median(times[g, op]) * 1e9) for g in GEOMETRIES]
        print("%-8s %s" % (op, "  ".join(cells)))


if __name__ == "__main__":
    main()
