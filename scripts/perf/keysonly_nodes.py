"""Bytes and allocations per kept version of a chain of 1,000 sets of existing keys (C core).

    python scripts/perf/keysonly_nodes.py N [N ...]

Used by docs/notes/keys-only-order-prototype.md to count the key-trie nodes
a set copies (allocations minus the frozendict object).
"""

import collections
import random
import sys
import tracemalloc

from frozenmap._ccore import frozendict as F

for n in map(int, sys.argv[1:]):
    data = {"key%d" % i: i for i in range(n)}
    m = F(data)
    rnd = random.Random(1)
    keys = ["key%d" % rnd.randrange(n) for _ in range(1000)]
    vals = [object() for _ in range(1000)]
    kept = [None] * 1000
    tracemalloc.start()
    s0 = tracemalloc.take_snapshot()
    x = m
    for i, k in enumerate(keys):
        x = kept[i] = x.set(k, vals[i])
    s1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    sizes = collections.Counter()
    tot = cnt = 0
    for st in s1.compare_to(s0, "traceback"):
        if st.count_diff > 0:
            tot += st.size_diff
            cnt += st.count_diff
    print(n, "bytes/version %.0f allocs/version %.2f" % (tot / 1000, cnt / 1000))
