#!/usr/bin/env python3
"""Leak check: run every operation of each core for many rounds, fail on growth.

Not a pytest module (its name does not start with ``test_``): CI runs it as a
script from ``scripts/checks/50-leaks.sh``, against the installed package::

    python scripts/leakcheck.py               # every available core, every group
    python scripts/leakcheck.py --cores c --groups evolver_errors,cycles
    python scripts/leakcheck.py --selftest    # prove the checker sees a leak

How it works.  The operations are split into groups (construction, lookups,
iteration, views, derivations, the Evolver, diff, hash, repr, pickle and
copy, equality, large and colliding maps, the other core's maps, reference
cycles, and ``registry``: every operation of ``tests/operations.py`` that
names the ``leaks`` engine, with plain and with failing arguments), each
with its failure paths: unhashable keys, ``__hash__`` and
``__eq__`` that raise, missing keys, bad pairs, an ``update()`` that fails
half-way, re-entrant evolver edits.  Each group runs alone: ``--warmup``
rounds first (caches, interned names and lazily created type attributes
settle), then a count of the allocated blocks, then ``--rounds`` more rounds
and a second count.  A leak of even one object per round grows the count by
``--rounds`` blocks; noise is a handful.  Growth above ``--tolerance`` must
repeat in ``--confirm`` more batches before the group is reported as leaking
(a cache fills up and stops; a leak does not), and the report names the group
and the growth per round.  Each count is taken after emptying the type
attribute cache (see ``Counter``) and a full ``gc.collect()``, which also
empties CPython's free lists.

The count is ``sys.getallocatedblocks()`` (every block of CPython's object
allocator, which is what ``PyObject_Malloc``/``PyObject_GC_New`` and
``PyMem_Malloc`` use).  Under ``PYTHONMALLOC=malloc`` (the sanitizer run) that
count is always 0, so the check falls back to the number of blocks traced by
``tracemalloc``, which sees every domain, raw ``malloc`` included.

On a debug interpreter (``sys.gettotalrefcount``, e.g. Debian's
``python3.11d``; ``scripts/checks/55-refleaks-dbg.sh``) the total reference
count is measured too, as CPython's ``regrtest -R`` does: a group leaks when
either count grows above the tolerance in every batch.  The reference count
sees what the block count cannot: a reference leaked to an object that exists
anyway (``None``, a key, a type), which allocates nothing.  ``--refs off``
turns it off.

Then the cycle check: maps whose values refer back to the map (directly, or
through an Evolver, a subclass instance's ``__dict__``, a view, an iterator, a
``Diff``) are built and dropped; a sentinel object inside each cycle must be
freed by ``gc.collect()`` (so the core's objects take part in the cyclic GC),
and the block count must come back to its baseline.

Exit status: 0 when every group of every core is clean, 1 when something
leaked or an operation misbehaved, 2 on a usage or import error.
"""

import argparse
import copy
import gc
import operator
import os
import pickle
import sys
import time
import tracemalloc
import weakref
from collections import OrderedDict
from types import MappingProxyType

try:
    from frozenmap._diff import Diff
except ImportError as exc:  # pragma: no cover - run from a broken install
    sys.stderr.write("leakcheck: cannot import frozenmap: %s\n" % exc)
    sys.exit(2)


# --- keys and values that misbehave on purpose ------------------------------------------
#
# The keys are the tests' own (tests/keys.py), defined once for both: HashKey (a
# chosen hash, equal by name), HashBomb (``__hash__`` raises CrashError), EqBomb
# (``__eq__`` raises CrashError, whichever side the core compares from: HashKey
# answers NotImplemented to other types) and UnhashableKey.

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests"))
from keys import CrashError, EqBomb, HashBomb, HashKey, UnhashableKey  # noqa: E402


class BadRepr:
    def __repr__(self):
        raise CrashError("repr")


class BadValueEq:
    """A value whose ``__eq__`` raises (used by ``==`` and ``diff``)."""

    __hash__ = object.__hash__

    def __eq__(self, other):
        raise CrashError("value eq")


class ReenterKey:
    """Collides with ``HashKey(7, ...)``; its ``__eq__`` runs ``action()`` first."""

    __slots__ = ("action",)

    def __init__(self, action):
        self.action = action

    def __hash__(self):
        return 7

    def __eq__(self, other):
        self.action()
        return False


class KeysMapping:
    """Not a dict: has ``keys()`` and ``__getitem__`` (maybe failing)."""

    def __init__(self, data, fail_at=None):
        self.data = data
        self.fail_at = fail_at

    def keys(self):
        return list(self.data)

    def __iter__(self):
        return iter(self.data)

    def __contains__(self, key):
        return key in self.data

    def __getitem__(self, key):
        if key == self.fail_at:
            raise CrashError("getitem")
        return self.data[key]


class ListMapping:
    """A mapping over a list of pairs, so keys are hashed only by the callee."""

    def __init__(self, pairs):
        self.pairs = pairs

    def keys(self):
        return [k for k, _ in self.pairs]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.pairs)

    def __contains__(self, key):
        return any(k is key for k, _ in self.pairs)

    def __getitem__(self, key):
        for k, v in self.pairs:
            if k is key:
                return v
        raise KeyError(key)

    def get(self, key, default=None):
        for k, v in self.pairs:
            if k is key or (type(k) is str and k == key):
                return v
        return default


def failing_pairs(n, fail_at):
    for i in range(n):
        if i == fail_at:
            raise CrashError("iterator")
        yield (KEYS[i], i)


class Sentinel:
    """Lives inside a reference cycle; freed only if the cycle is collected."""

    __slots__ = ("__weakref__", "payload")


KEYS = ["k%03d" % i for i in range(4096)]
INTS = list(range(-5, 4096))
BIG_N = 1500
BIG_ITEMS = [(KEYS[i], i) for i in range(BIG_N)]
BIG_DICT = dict(BIG_ITEMS)
COLLIDING = [HashKey(12345, "c%d" % i) for i in range(40)]
# keys whose hashes share long prefixes: deep CHAMP paths
DEEP = [HashKey(((i & 7) << 60) | 0x5555, "d%d" % i) for i in range(24)]


def raises(expected, fn, *args, **kwargs):
    """Call ``fn``; it must raise ``expected``."""
    try:
        fn(*args, **kwargs)
    except expected:
        return
    except Exception as exc:
        raise AssertionError(
            "%s(%r) raised %s: %s, expected %s"
            % (getattr(fn, "__name__", fn), args, type(exc).__name__, exc, expected)
        ) from None
    raise AssertionError("%s(%r) did not raise %s" % (getattr(fn, "__name__", fn), args, expected))


# --- the operation groups -----------------------------------------------------------------
#
# Each takes the core namespace ``ns`` (frozendict, Evolver, subclasses, the
# other core's frozendict or None) and runs one round.


def g_construct(ns):
    fd = ns.frozendict
    a = fd()
    b = fd({"a": 1, "b": 2})
    c = fd([("a", 1), ("b", 2), ("a", 3)])
    d = fd(a=1, b=2)
    e = fd({"a": 1}, b=2, c=3)
    f = fd([("x", 1)], y=2)
    g = fd(KeysMapping({"p": 1, "q": 2}))
    h = fd(b)
    i = fd(b, z=0)
    j = fd((k, v) for k, v in BIG_ITEMS[:50])
    k = fd(OrderedDict(BIG_ITEMS[:20]))
    m = fd(MappingProxyType({"m": 1}))
    n = fd(zip(KEYS[:30], INTS[:30]))
    o = fd([[1, 2], "ab", (3, 4)])  # pairs from lists and strings
    p = fd.fromkeys(KEYS[:40])
    q = fd.fromkeys(KEYS[:40], 7)
    r = ns.Sub({"a": 1}, b=2)
    s = ns.Sub.fromkeys("abc", 0)
    t = ns.SubSlots(b)
    u = fd(r)
    w = fd({k2: k2 for k2 in COLLIDING})
    x = fd(dict.fromkeys(DEEP, 1))
    y = fd(BIG_DICT)
    z = fd(a=[1], b={"x": [2]})
    assert len(b) == 2 and c["a"] == 3 and len(j) == 50 and len(y) == BIG_N
    del a, b, c, d, e, f, g, h, i, j, k, m, n, o, p, q, r, s, t, u, w, x, y, z


def g_construct_errors(ns):
    fd = ns.frozendict
    raises(TypeError, fd, 1)
    raises(TypeError, fd, {}, {})
    raises(TypeError, fd, [1])
    raises(TypeError, fd, [("a", 1), 2])
    raises(ValueError, fd, [("a", 1, 2)])
    raises(ValueError, fd, [("a", 1), ("b",)])
    raises(ValueError, fd, ["abc"])
    raises(TypeError, fd, [([], 1)])
    raises(TypeError, fd, [("a", 1), (UnhashableKey(), 2)])
    raises(CrashError, fd, [("a", 1), (HashBomb(), 2)])
    raises(CrashError, fd, [(HashKey(5, "x"), 1), (EqBomb(5), 2)])
    raises(CrashError, fd, [(EqBomb(5), 1), (HashKey(5, "y"), 2)])
    raises(CrashError, fd, failing_pairs(100, 60))
    raises(CrashError, fd, KeysMapping({"a": 1, "b": 2, "c": 3}, fail_at="b"))
    raises(TypeError, fd, [(UnhashableKey(), 1)])
    raises(TypeError, fd.fromkeys, [1, [], 2])
    raises(CrashError, fd.fromkeys, [HashBomb()])
    raises(CrashError, fd.fromkeys, failing_pairs(10, 5))
    raises(TypeError, fd.fromkeys, 5)
    raises(TypeError, ns.Sub, 1)
    raises(CrashError, ns.Sub, failing_pairs(30, 20))


def g_lookup(ns):
    m = ns.frozendict(BIG_ITEMS[:300])
    c = ns.frozendict({k: i for i, k in enumerate(COLLIDING)})
    total = 0
    for key in KEYS[:400]:
        total += m.get(key, 0)
        if key in m:
            total += m[key]
    for k in COLLIDING:
        total += c[k] + c.get(k, 0)
        assert k in c
    assert HashKey(12345, "absent") not in c
    assert c.get(HashKey(12345, "absent")) is None
    assert m.get("nope") is None and m.get("nope", 5) == 5
    raises(KeyError, m.__getitem__, "nope")
    raises(KeyError, c.__getitem__, HashKey(12345, "absent"))
    raises(KeyError, lambda: m[("a", "tuple")])
    raises(TypeError, m.__getitem__, [])
    raises(TypeError, m.get, {})
    raises(TypeError, m.__contains__, UnhashableKey())
    raises(CrashError, m.__getitem__, HashBomb())
    raises(CrashError, c.__getitem__, EqBomb(12345))
    raises(CrashError, c.get, EqBomb(12345))
    raises(CrashError, c.__contains__, EqBomb(12345))
    s = ns.SubMissing(a=1)
    assert s["a"] == 1 and s["zz"] == ("missing", "zz")
    s2 = ns.SubMissingRaises(a=1)
    raises(CrashError, s2.__getitem__, "zz")
    assert len(m) == 300
    match m:  # the mapping pattern: get() and the Mapping registration
        case {"k000": 0, "k001": v, **rest}:
            assert v == 1 and len(rest) == 298
        case _:
            raise AssertionError("mapping pattern did not match")
    match c:
        case {"absent": _}:
            raise AssertionError("matched a missing key")
    return total


def g_iterate(ns):
    m = ns.frozendict(BIG_ITEMS[:200])
    assert len(list(m)) == 200
    assert len(list(reversed(m))) == 200
    list(m.keys())
    list(m.values())
    list(m.items())
    list(reversed(m.keys()))
    list(reversed(m.values()))
    list(reversed(m.items()))
    it = iter(m.items())
    next(it)
    next(it)
    del it  # dropped half-way
    it = iter(m)
    for _ in it:
        pass
    raises(StopIteration, next, it)
    rit = reversed(m.values())
    next(rit)
    del rit
    dict(m)
    list(zip(m, m.values()))
    it = iter(m.items())
    next(it)
    operator.length_hint(it)
    try:  # iterators may or may not pickle (C: like dict's; Python: no)
        pickle.loads(pickle.dumps(it))
    except (TypeError, pickle.PicklingError):
        pass
    del it
    sum(1 for _ in m.items())
    e = ns.frozendict()
    assert list(e) == [] and list(reversed(e.items())) == []
    # iterate a map while deriving versions from it
    for key in ns.frozendict(BIG_ITEMS[:40]):
        m = m.set(key, 0)


def g_views(ns):
    m = ns.frozendict(BIG_ITEMS[:60])
    other = ns.frozendict(BIG_ITEMS[30:90])
    k, v, i = m.keys(), m.values(), m.items()
    ok, oi = other.keys(), other.items()
    assert len(k) == 60 and len(v) == 60 and len(i) == 60
    k & ok
    k | ok
    k - ok
    k ^ ok
    k & set(KEYS[:10])
    k | ["x", "y"]
    k - ["k000"]
    k ^ {"k001", "zzz"}
    ["k000"] & k
    {"k000"} & k
    i & oi
    i | oi
    i - oi
    i ^ oi
    i & {("k000", 0), ("k001", 99)}
    k <= ok, k < ok, k >= ok, k > ok, k == ok, k != ok
    k == set(KEYS[:60]), i == set(BIG_ITEMS[:60])
    k.isdisjoint(ok), i.isdisjoint([("zz", 1)])
    assert "k000" in k and "zzz" not in k
    assert ("k000", 0) in i and ("k000", 1) not in i and ("zz", 0) not in i
    raises(TypeError, k.__contains__, [])
    raises(TypeError, lambda: ([], 1) in i)
    assert (1, 2, 3) not in i and "notatuple" not in i
    assert 0 in v and -1 not in v
    raises(CrashError, v.__contains__, BadValueEq())
    raises(TypeError, lambda: k & 5)
    raises(TypeError, lambda: i | 5)
    raises(CrashError, k.__contains__, HashBomb())
    repr(k), repr(v), repr(i)
    mp = k.mapping
    assert mp["k000"] == 0
    del mp
    v.mapping, i.mapping
    list(reversed(k)), list(reversed(i))
    # views of an empty map and a colliding one
    c = ns.frozendict({key: 1 for key in COLLIDING})
    c.keys() & set(COLLIDING[:5])
    c.items() - {(COLLIDING[0], 1)}
    ns.frozendict().keys() | {1}


def g_derive(ns):
    fd = ns.frozendict
    m = fd(BIG_ITEMS[:100])
    versions = [m]
    for key in KEYS[90:140]:
        m = m.set(key, 1)  # replaces, then adds
        versions.append(m)
    m2 = m.set(KEYS[0], m[KEYS[0]])  # same value object: returns self
    m3 = m.set(KEYS[0], "other")
    for key in KEYS[:60:3]:
        m3 = m3.delete(key)
    m4 = m3.discard("absent").discard(KEYS[1])
    u = m | {"new": 1, KEYS[2]: 2}
    u2 = m | m3
    u3 = {"a": 1} | m
    u4 = m | fd()
    u5 = fd() | m
    u6 = m | ns.Sub(z=1)
    u7 = ns.Sub(z=1) | m
    acc = fd(a=1)
    acc |= {"b": 2}
    acc |= fd(c=3)
    d1 = m - {"k000", "k001", "absent"}
    d2 = m - KEYS[:50]
    d3 = m - []
    d4 = m - (k for k in KEYS[:10])
    a1 = m & ["k005", "k001", "absent"]
    a2 = m & set(KEYS[:80])
    a3 = m & m.keys()
    a4 = m & []
    # deep and colliding shapes
    c = fd()
    for key in COLLIDING:
        c = c.set(key, 1)
    for key in COLLIDING[::2]:
        c = c.delete(key)
    c = c.set(COLLIDING[1], 2) - COLLIDING[:10]
    dp = fd()
    for key in DEEP:
        dp = dp.set(key, 0)
    while dp:
        dp = dp.delete(next(iter(dp)))
    s = ns.Sub(BIG_ITEMS[:5])
    s.set("x", 1), s.delete("k000"), s.discard("zz"), s - ["k001"], s & ["k002"], s | {}
    s.copy(), m.copy()
    del versions, m2, m4, u, u2, u3, u4, u5, u6, u7, acc, d1, d2, d3, d4, a1, a2, a3, a4, c


def g_derive_errors(ns):
    fd = ns.frozendict
    m = fd(BIG_ITEMS[:50])
    c = fd({key: 1 for key in COLLIDING[:8]})
    raises(TypeError, m.set, [], 1)
    raises(TypeError, m.delete, {})
    raises(TypeError, m.discard, UnhashableKey())
    raises(KeyError, m.delete, "absent")
    raises(KeyError, c.delete, HashKey(12345, "absent"))
    raises(CrashError, m.set, HashBomb(), 1)
    raises(CrashError, c.set, EqBomb(12345), 1)
    raises(CrashError, c.delete, EqBomb(12345))
    raises(CrashError, c.discard, EqBomb(12345))
    raises(TypeError, lambda: m | [("a", 1)])
    raises(TypeError, lambda: m | 5)
    raises(TypeError, lambda: 5 | m)
    raises(TypeError, lambda: m - 5)
    raises(TypeError, lambda: m & 5)
    raises(TypeError, lambda: m - [[]])
    raises(TypeError, lambda: m & [[]])
    raises(CrashError, lambda: m - failing_pairs(20, 10))
    raises(CrashError, lambda: m & failing_pairs(20, 10))
    raises(CrashError, lambda: m - [KEYS[0], HashBomb()])
    raises(CrashError, lambda: c & [EqBomb(12345)])
    raises(CrashError, lambda: c | {EqBomb(12345): 1})

    def bad_ior():
        x = fd(a=1)
        x |= [("b", 2)]

    raises(TypeError, bad_ior)
    # re-entrant derivation: a key's __eq__ derives new versions of the same map
    seen = []
    c7 = fd({HashKey(7, "seven"): 1})
    r = c7.set(ReenterKey(lambda: seen.append(c7.set("q", 2))), 2)
    assert len(r) == 2
    r = c7.discard(ReenterKey(lambda: seen.append(c7 - ["q"])))
    del seen, r


def g_evolver(ns):
    fd, Ev = ns.frozendict, ns.Evolver
    base = fd(BIG_ITEMS[:100])
    e = base.evolve()
    for key in KEYS[80:160]:
        e[key] = 1
    for key in KEYS[:40:2]:
        del e[key]
    e.set("s", 1).discard("s").discard("absent")
    assert e.pop("k001") == 1 and e.pop("absent", None) is None
    e.popitem()
    e.setdefault("sd", [])
    e.setdefault("sd", 5)
    e.update({"u1": 1, "k003": 3})
    e.update([("u2", 2), ("u3", 3)], kw=1)
    e.update(fd(f1=1))
    e.update(KeysMapping({"km": 1}))
    e.update()
    e.update(x=1)
    frozen = e.freeze()
    assert e.freeze() is frozen
    e["after"] = 1
    frozen2 = e.freeze()
    assert "after" not in frozen and "after" in frozen2
    e2 = e.copy()
    e2["only2"] = 1
    len(e), "k005" in e, e.get("k005"), e["k005"], e.get("absent", 0)
    list(e), list(reversed(e)), list(e.keys()), list(e.values()), list(e.items())
    e.keys() & {"k005"}, e.keys() | set(), e.items() & {("k005", 5)}
    e == base, e == e2, e == dict(e), e != frozen2
    repr(e), repr(Ev())
    Ev(), Ev({"a": 1}), Ev(base), Ev([("a", 1)]), Ev(ns.Sub(a=1))
    e.clear()
    assert len(e) == 0
    e["again"] = 1
    e.clear()
    e.freeze()
    # drain with popitem
    e3 = fd(BIG_ITEMS[:30]).evolve()
    while e3:
        e3.popitem()
    # colliding keys and deep paths in place
    e4 = Ev()
    for key in COLLIDING:
        e4[key] = 0
    for key in COLLIDING[::3]:
        del e4[key]
    for key in DEEP:
        e4[key] = 1
    e4.freeze()
    for key in DEEP[::2]:
        e4.pop(key)
    e4.freeze()._check() if hasattr(e4.freeze(), "_check") else None
    # many freezes interleaved with edits (each freeze seals the nodes)
    e5 = Ev()
    snaps = []
    for i in range(60):
        e5[KEYS[i % 20]] = i
        if i % 7 == 0:
            snaps.append(e5.freeze())
    unpickle(e5, pickle.DEFAULT_PROTOCOL)
    copy.copy(e5), copy.deepcopy(e5)
    del e, e2, e3, e4, e5, snaps, frozen, frozen2


def g_evolver_errors(ns):
    fd, Ev = ns.frozendict, ns.Evolver
    e = fd(BIG_ITEMS[:40]).evolve()
    e[HashKey(7, "seven")] = 7
    raises(KeyError, e.__getitem__, "absent")
    raises(KeyError, e.__delitem__, "absent")
    raises(KeyError, e.pop, "absent")
    raises(KeyError, Ev().popitem)
    raises(TypeError, e.__setitem__, [], 1)
    raises(TypeError, e.__delitem__, [])
    raises(TypeError, e.pop, {})
    raises(TypeError, e.setdefault, [], 1)
    raises(TypeError, e.get, [])
    raises(CrashError, e.__setitem__, HashBomb(), 1)
    raises(CrashError, e.__setitem__, EqBomb(7), 1)
    raises(CrashError, e.__delitem__, EqBomb(7))
    raises(CrashError, e.setdefault, EqBomb(7))
    raises(CrashError, e.discard, EqBomb(7))
    raises(CrashError, e.pop, EqBomb(7), None)
    before = e.freeze()
    # update fails half-way: the evolver is unchanged
    raises(CrashError, e.update, failing_pairs(50, 45))
    raises(ValueError, e.update, [("a", 1), ("b", 2, 3)])
    raises(TypeError, e.update, [("a", 1), 5])
    raises(TypeError, e.update, [("a", 1), ([], 2)])
    raises(CrashError, e.update, KeysMapping({"a": 1, "b": 2}, fail_at="b"))
    raises(CrashError, e.update, {"new": 1, EqBomb(7): 2})
    raises(TypeError, e.update, 5)
    raises(TypeError, e.update, {}, {})
    assert e.freeze() == before
    # re-entrant edits from a key's __eq__ raise RuntimeError
    raises(RuntimeError, e.__setitem__, ReenterKey(lambda: e.__setitem__("r", 1)), 1)
    raises(RuntimeError, e.__delitem__, ReenterKey(lambda: e.__delitem__("k000")))
    raises(RuntimeError, e.setdefault, ReenterKey(lambda: e.clear()))
    raises(RuntimeError, e.pop, ReenterKey(lambda: e.popitem()))
    raises(RuntimeError, e.update, [(ReenterKey(lambda: e.update(a=1)), 1)])
    raises(RuntimeError, e.discard, ReenterKey(lambda: e.setdefault("q")))
    assert e.freeze() == before
    # reading and freezing from inside an edit are allowed
    got = []
    e[ReenterKey(lambda: got.append((len(e), e.get("k000"), e.freeze())))] = 1
    e.discard(next(k for k in e if type(k) is ReenterKey))

    # size change during iteration
    def mutate_while_iterating():
        for _key in e:
            e["grow-%d" % len(e)] = 1

    raises(RuntimeError, mutate_while_iterating)

    def delete_while_iterating():
        for key, _ in e.items():
            del e[key]

    raises(RuntimeError, delete_while_iterating)
    raises(TypeError, hash, e)
    raises(TypeError, Ev, 5)
    raises(CrashError, Ev, failing_pairs(10, 3))
    ee = Ev()
    ee["v"] = BadRepr()
    raises(CrashError, repr, ee)
    del e, ee, got, before


def g_diff(ns):
    fd = ns.frozendict
    a = fd(BIG_ITEMS[:300])
    b = a.set("k010", "changed").delete("k020").set("added", 1)
    d = a.diff(b)
    assert isinstance(d, Diff) and len(d.added) == 1 and len(d.removed) == 1
    a.diff(a)
    a.diff(fd())
    fd().diff(a)
    a.diff(dict(b))
    a.diff(fd(BIG_ITEMS[100:400]))  # unrelated tries
    a.diff(KeysMapping(dict(BIG_ITEMS[:5])))
    a.diff(ns.Sub(BIG_ITEMS[:10]))
    c = fd({key: 1 for key in COLLIDING})
    c.diff(c.set(COLLIDING[3], 2).delete(COLLIDING[4]))
    c.diff({key: 1 for key in COLLIDING[5:]})
    v1 = fd(a=BadValueEq())
    v2 = fd(a=BadValueEq())
    raises(CrashError, v1.diff, v2)
    raises(CrashError, v1.diff, {"a": BadValueEq()})
    raises(CrashError, fd({EqBomb(12345): 1}).diff, fd({HashKey(12345, "y"): 1}))
    raises(CrashError, a.diff, ListMapping([(HashBomb(), 1)]))
    raises(CrashError, a.diff, ListMapping([("k000", BadValueEq())]))
    raises(TypeError, a.diff, 5)


def g_hash(ns):
    fd = ns.frozendict
    m = fd(BIG_ITEMS[:200])
    h = hash(m)
    assert hash(m) == h
    m2 = m.set("k000", "x")
    hash(m2)
    hash(m2.delete("k001"))
    hash(m | {"n": 1})
    hash(fd())
    hash(fd({key: 1 for key in COLLIDING}))
    hash(ns.Sub(a=1))
    raises(TypeError, hash, fd(a=[]))
    raises(TypeError, hash, fd(a=1, b={}))
    bad = fd(a=1, b=HashBomb())
    raises(CrashError, hash, bad)
    raises(CrashError, hash, bad)  # a failed hash is not cached
    raises(TypeError, hash, m.set("x", []))
    e = m.evolve()
    e["y"] = 2
    hash(e.freeze())
    {m: 1, m2: 2}
    frozenset([m, m2])


def g_repr(ns):
    fd = ns.frozendict
    repr(fd()), str(fd(a=1))
    repr(fd(BIG_ITEMS[:100]))
    repr(ns.Sub(a=1)), repr(ns.Sub())
    repr(fd({key: 1 for key in COLLIDING[:4]}))
    lst = []
    m = fd(a=lst)
    lst.append(m)
    repr(m)  # recursive: frozendict({'a': [frozendict({...})]})
    lst.clear()
    raises(CrashError, repr, fd(a=BadRepr()))
    raises(CrashError, repr, fd({HashKey(1, "x"): BadRepr()}))
    raises(CrashError, repr, fd(x=BadRepr()).values())
    raises(CrashError, repr, fd(x=BadRepr()).items())
    e = fd(a=1).evolve()
    e["self"] = e
    repr(e)
    del e["self"]
    format(fd(a=1)), "%s %r" % (fd(b=2), fd(c=3))


def unpickle(obj, proto):
    """``pickle.loads(pickle.dumps(obj, proto))``."""
    return pickle.loads(pickle.dumps(obj, proto))


def g_pickle_copy(ns):
    fd = ns.frozendict
    m = fd(BIG_ITEMS[:100])
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        assert unpickle(m, proto) == m
        unpickle(fd(), proto)
        s = ns.Sub(a=1)
        s.attr = [1]
        assert unpickle(s, proto).attr == [1]
        unpickle(ns.SubSlots(a=1), proto)
        assert unpickle(m.evolve(), proto) == m
        unpickle(fd(a=fd(b=1)), proto)
        m.__reduce__(), m.__reduce_ex__(proto), m.__getnewargs__()
    raises((pickle.PicklingError, TypeError, AttributeError), pickle.dumps, fd(a=lambda: 0))
    copy.copy(m), copy.deepcopy(m)
    copy.copy(ns.Sub(a=1)), copy.deepcopy(ns.Sub(a=[1]))
    copy.deepcopy(fd(a=[1, 2], b={"c": [3]}))
    copy.copy(m.evolve()), copy.deepcopy(m.evolve())
    lst = []
    cyc = fd(a=lst)
    lst.append(cyc)
    copy.deepcopy(cyc)
    lst.clear()
    raises(CrashError, copy.deepcopy, fd(a=DeepBoom()))


class DeepBoom:
    def __deepcopy__(self, memo):
        raise CrashError("deepcopy")


def g_equality(ns):
    fd = ns.frozendict
    a = fd(BIG_ITEMS[:200])
    b = fd(list(reversed(BIG_ITEMS[:200])))
    assert a == b and not (a != b)
    assert a == dict(BIG_ITEMS[:200])
    assert dict(BIG_ITEMS[:200]) == a
    assert a != a.set("k000", -1)
    assert a != a.delete("k000")
    assert a.set("k000", -1).set("k000", 0) == a
    hash(a), hash(b)
    a == b, a == a.set("x", 1)
    assert a != 5 and a != [] and a != set()
    a == OrderedDict(BIG_ITEMS[:200])
    a == ns.Sub(BIG_ITEMS[:200]), ns.Sub(BIG_ITEMS[:200]) == a
    a == a.evolve(), a.evolve() == a
    a == MappingProxyType({}), a == KeysMapping({})
    assert fd() == fd() == {}
    a.__eq__(5), a.__ne__(5)
    raises(TypeError, lambda: a < b)
    raises(TypeError, lambda: a >= {})
    c1 = fd({key: 1 for key in COLLIDING})
    c2 = fd({key: 1 for key in reversed(COLLIDING)})
    assert c1 == c2
    raises(CrashError, lambda: fd(a=BadValueEq()) == fd(a=BadValueEq()))
    raises(CrashError, lambda: fd(a=BadValueEq()) == {"a": BadValueEq()})
    raises(CrashError, lambda: fd({EqBomb(3): 1}) == fd({HashKey(3, "y"): 1}))
    raises(CrashError, lambda: fd({HashKey(3, "x"): 1}) == {EqBomb(3): 1})


def g_big(ns):
    fd = ns.frozendict
    m = fd(BIG_DICT)
    hash(m)
    history = [m]
    for i in range(0, BIG_N, 7):
        m = m.set(KEYS[i], -i)
        history.append(m)
    for i in range(0, BIG_N, 5):
        m = m.discard(KEYS[i])
    m2 = m | {KEYS[i]: i for i in range(BIG_N, BIG_N + 300)}
    m3 = m2 - KEYS[:BIG_N:2]
    m4 = m2 & KEYS[::3]
    history[0].diff(m4)
    m4.diff(history[5])
    e = m3.evolve()
    for i in range(0, 600):
        e[KEYS[i]] = i
    while len(e) > 100:
        e.popitem()
    e.freeze() == m3
    list(m2.items())
    hash(m3)
    sys.getsizeof(m3), sys.getsizeof(e)
    del history, m, m2, m3, m4, e


def g_interop(ns):
    """The other core's frozendict as an operand (both cores installed)."""
    fd, other = ns.frozendict, ns.other
    if other is None:
        return
    o = other(BIG_ITEMS[:50])
    m = fd(o)
    assert m == o and o == m
    m | o, o | m, m.diff(o), m == o.set("x", 1)
    fd(o, extra=1)
    e = m.evolve()
    e.update(o)
    e == o
    hash(m) == hash(o)
    unpickle(o, pickle.DEFAULT_PROTOCOL) == m
    mixed = fd(other({HashKey(5, "a"): 1, HashKey(5, "b"): 2}))
    raises(CrashError, mixed.set, EqBomb(5), 0)
    raises(CrashError, lambda: fd(a=BadValueEq()) == other(a=BadValueEq()))


def g_cycles(ns):
    """Values that refer back to their map; collected only by the cyclic GC."""
    fd = ns.frozendict
    # a list value holding the map
    lst = []
    m = fd({"self": lst, "k": 1})
    lst.append(m)
    # a version derived from it, and its keys view and an iterator in the list
    m2 = m.set("x", 2)
    lst.append(m2)
    lst.append(m2.keys())
    lst.append(iter(m2.items()))
    lst.append(m.diff(m2))
    # an Evolver holding itself, and its frozen result holding the evolver
    e = m.evolve()
    e["me"] = e
    e["frozen"] = e.freeze()
    # a subclass instance whose __dict__ holds it
    s = ns.Sub(a=1)
    s.me = s
    s2 = ns.SubSlots(a=1)
    s2.a = s2
    # a map whose key holds the map
    holder = Holder()
    km = fd({holder: 1})
    holder.ref = km
    # a deep one
    box = []
    big = fd(BIG_ITEMS[:200]).set("box", box)
    box.append(big)
    del lst, m, m2, e, s, s2, holder, km, box, big


class Holder:
    __slots__ = ("ref", "__weakref__")


CYCLE_MAKERS = []


def cycle_maker(fn):
    CYCLE_MAKERS.append(fn)
    return fn


@cycle_maker
def cycle_list_value(ns, sentinel):
    lst = [sentinel]
    m = ns.frozendict({"self": lst, "k": 1})
    lst.append(m)


@cycle_maker
def cycle_derived_version(ns, sentinel):
    lst = [sentinel]
    m = ns.frozendict(BIG_ITEMS[:100]).set("self", lst)
    lst.append(m.set("other", 1))


@cycle_maker
def cycle_key(ns, sentinel):
    h = Holder()
    h.ref = ns.frozendict({h: sentinel})


@cycle_maker
def cycle_evolver_self(ns, sentinel):
    e = ns.Evolver()
    e["me"] = e
    e["s"] = sentinel


@cycle_maker
def cycle_evolver_frozen(ns, sentinel):
    e = ns.frozendict(a=1).evolve()
    lst = [sentinel, e]
    e["lst"] = lst
    lst.append(e.freeze())


@cycle_maker
def cycle_subclass_dict(ns, sentinel):
    s = ns.Sub(a=sentinel)
    s.me = s


@cycle_maker
def cycle_subclass_slot(ns, sentinel):
    s = ns.SubSlots(a=sentinel)
    s.a = s


@cycle_maker
def cycle_view(ns, sentinel):
    lst = [sentinel]
    m = ns.frozendict(a=lst)
    lst.append(m.keys())
    lst.append(m.items())
    lst.append(m.values())


@cycle_maker
def cycle_iterator(ns, sentinel):
    lst = [sentinel]
    m = ns.frozendict(a=lst, b=2)
    it = iter(m.items())
    next(it)
    lst.append(it)
    lst.append(reversed(m))


@cycle_maker
def cycle_diff(ns, sentinel):
    lst = [sentinel]
    m = ns.frozendict(a=lst)
    lst.append(m.diff(m.set("b", lst)))


@cycle_maker
def cycle_colliding(ns, sentinel):
    lst = [sentinel]
    m = ns.frozendict({key: lst for key in COLLIDING[:6]})
    lst.append(m)


# --- the machinery ------------------------------------------------------------------------


class Counter:
    """Counts allocated blocks: pymalloc's count, or tracemalloc's under malloc."""

    def __init__(self, metric, refs="auto"):
        if metric == "auto":
            metric = "blocks" if sys.getallocatedblocks() > 0 else "tracemalloc"
        self.metric = metric
        if metric == "tracemalloc" and not tracemalloc.is_tracing():
            tracemalloc.start(1)
        have_refs = hasattr(sys, "gettotalrefcount")  # debug builds only
        if refs == "on" and not have_refs:
            raise SystemExit(
                "leakcheck: --refs on needs a debug interpreter (sys.gettotalrefcount)"
            )
        self.refs = have_refs and refs != "off"
        # one reading per name, in this order, from each call
        self.names = (() if metric == "none" else (metric,)) + (("refs",) if self.refs else ())

    def __call__(self):
        # The type attribute cache holds a strong reference to the name of each
        # attribute looked up on a type; a name made afresh for each lookup (by
        # PyObject_GetAttrString, the unpickler, getattr(o, computed)) stays
        # alive until its slot is reused: up to 4096 strings, which looks like
        # a slow leak.  Empty it before counting.
        sys._clear_type_cache()
        gc.collect()
        gc.collect()
        gc.collect()
        readings = []
        if self.refs:
            readings.append(sys.gettotalrefcount())
        if self.metric == "blocks":
            readings.insert(0, sys.getallocatedblocks())
        elif self.metric == "tracemalloc":
            snapshot = tracemalloc.take_snapshot()
            readings.insert(0, len(snapshot.traces))
            del snapshot
        return tuple(readings)

    def growth(self, before, after):
        """The growth of each count from reading ``before`` to ``after``."""
        return tuple(a - b for a, b in zip(after, before))

    def describe(self, growth):
        return (
            ", ".join("%+d %s" % (g, name) for g, name in zip(growth, self.names)) or "not counted"
        )


def load_core(name):
    import importlib
    import types

    module = importlib.import_module({"c": "frozenmap._ccore", "python": "frozenmap._pycore"}[name])
    fd = module.frozendict

    class Sub(fd):
        pass

    class SubSlots(fd):
        __slots__ = ("a",)

    class SubMissing(fd):
        def __missing__(self, key):
            return ("missing", key)

    class SubMissingRaises(fd):
        def __missing__(self, key):
            raise CrashError("missing")

    for cls in (Sub, SubSlots, SubMissing, SubMissingRaises):
        cls.__module__ = __name__
        cls.__qualname__ = "%s_%s" % (cls.__name__, name)
        globals()[cls.__qualname__] = cls  # so pickle finds them
    return types.SimpleNamespace(
        name=name,
        module=module,
        frozendict=fd,
        Evolver=module.Evolver,
        Sub=Sub,
        SubSlots=SubSlots,
        SubMissing=SubMissing,
        SubMissingRaises=SubMissingRaises,
        other=None,
    )


def _registry_roles(registry):
    """The arguments of a registry operation (tests/operations.py) by role:
    plain ones, and ones that fail inside the operation, each made from the
    core's namespace."""
    plain = registry.role_table(
        registry.LEAKS,
        {
            "key": lambda ns: "a",
            "value": lambda ns: (5,),
            "pairs": lambda ns: [("a", 5), ("c", (6,))],
            "mapping": lambda ns: {"a": 5, "c": (6,)},
            "keys": lambda ns: ["a", "z", HashKey(7, "y")],
            "path": lambda ns: ["a"],
            "fn": lambda ns: lambda *args: args[-1],
            "other": lambda ns: {"a": 2, "d": (4,)},
            "version": lambda ns: ns.frozendict({"a": 2, "d": (4,), HashKey(7, "x"): 1}),
            "position": lambda ns: -2,
            "span": lambda ns: (1, 3),
        },
    )
    failing = registry.role_table(
        registry.LEAKS,
        {
            "key": lambda ns: HashBomb(),
            "value": lambda ns: BadValueEq(),
            "pairs": lambda ns: failing_pairs(5, 3),
            "mapping": lambda ns: KeysMapping({"a": 5}, fail_at="a"),
            "keys": lambda ns: ["a", UnhashableKey()],
            "path": lambda ns: ["a", "x"],  # through a value that is no frozendict
            "fn": lambda ns: _raise_crash,
            "other": lambda ns: {"a": BadValueEq(), HashKey(7, "x"): 3},
            "version": lambda ns: ns.frozendict({EqBomb(7): 1, "a": [1]}),
            "position": lambda ns: 1.5,
            "span": lambda ns: (0, "x"),
        },
    )
    return plain, failing


def _raise_crash(*args):
    raise CrashError("fn")


def g_registry(ns):
    """Every operation of tests/operations.py that names the leak check."""
    import operations

    roles = _registry_roles(operations)
    base = {"a": 1, "b": (2,), HashKey(7, "x"): 3, HashKey(7, "y"): 4}
    for entry in operations.for_engine(operations.LEAKS):
        for failing in (False, True):
            subject = {
                "frozendict": lambda: ns.frozendict(base),
                "Evolver": lambda: ns.frozendict(base).evolve(),
                "type": lambda: ns.frozendict,
            }[entry.on]()
            try:
                args = operations.arguments(roles[failing], entry, ns)
                entry.call(ns, subject, *args)
            except (CrashError, TypeError, KeyError, ValueError, RuntimeError):
                if not failing and entry.name not in _REGISTRY_RAISES:
                    raise
            del subject


_REGISTRY_RAISES = {"fd[k]", "frozendict.delete", "del Evolver[k]", "Evolver.pop"}
"""Operations that may raise even with plain arguments (a key the last edit removed)."""


GROUPS = {
    "construct": g_construct,
    "construct_errors": g_construct_errors,
    "lookup": g_lookup,
    "iterate": g_iterate,
    "views": g_views,
    "derive": g_derive,
    "derive_errors": g_derive_errors,
    "evolver": g_evolver,
    "evolver_errors": g_evolver_errors,
    "diff": g_diff,
    "hash": g_hash,
    "repr": g_repr,
    "pickle_copy": g_pickle_copy,
    "equality": g_equality,
    "big": g_big,
    "interop": g_interop,
    "cycles": g_cycles,
    "registry": g_registry,
}

_selftest_sink = []


def g_selftest_leak(ns):
    """Leaks one small object per round on purpose (``--selftest``)."""
    _selftest_sink.append(ns.frozendict(a=len(_selftest_sink)))


def g_selftest_refleak(ns):
    """Leaks one reference per round to an object that exists anyway (no new
    block: only the total reference count sees it)."""
    _selftest_sink.append(ns.frozendict)


def cycle_selftest_uncollectable(ns, sentinel):
    """A 'cycle' kept alive from outside, as one the GC cannot see would be."""
    lst = [sentinel]
    m = ns.frozendict(a=lst)
    lst.append(m)
    _selftest_sink.append(m)


def run_group(ns, name, fn, count, args):
    """Run one group; return "ok (growth)", "leaked: ..." or "operation failed: ...".

    A group leaks when every one of ``1 + args.confirm`` batches of
    ``args.rounds`` rounds grows a count (blocks, or the total reference count
    on a debug interpreter) by more than the tolerance: an operation that
    leaks leaks in every round, while a cache inside CPython (pickle's, the
    type attribute cache, free lists) fills up and stops.
    """
    try:
        for _ in range(args.warmup):
            fn(ns)
        start = before = count()
        growths = []
        for _ in range(1 + args.confirm):
            for _ in range(args.rounds):
                fn(ns)
            after = count()
            growths.append(count.growth(before, after))
            before = after
            if all(g <= args.tolerance for g in growths[-1]):
                break
    except Exception as exc:  # an operation misbehaved: report it like a leak
        import traceback

        traceback.print_exc()
        return "operation failed: %s: %s" % (type(exc).__name__, exc)
    total = count.growth(start, after)
    leaks = [
        "%s %s in %d batches of %d rounds (%.1f per round)"
        % (
            " then ".join("%+d" % g[i] for g in growths),
            metric,
            len(growths),
            args.rounds,
            total[i] / float(len(growths) * args.rounds),
        )
        for i, metric in enumerate(count.names)
        if all(g[i] > args.tolerance for g in growths)
    ]
    if leaks:
        return "leaked: " + "; ".join(leaks)
    return "ok (%s)" % " then ".join(count.describe(g) for g in growths)


def locate(ns, fn, rounds, top=5):
    """Rerun a leaking group under tracemalloc; print where new blocks came from.

    The lines are those of this file whose operations allocated the blocks
    that stayed alive (an allocation made in C is charged to the Python line
    that called it).
    """
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start(8)
    try:
        fn(ns)
        sys._clear_type_cache()
        gc.collect()
        before = tracemalloc.take_snapshot()
        for _ in range(rounds):
            fn(ns)
        sys._clear_type_cache()
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    keep = [
        tracemalloc.Filter(True, __file__, all_frames=True),
        tracemalloc.Filter(False, tracemalloc.__file__, all_frames=True),
    ]
    stats = after.filter_traces(keep).compare_to(before.filter_traces(keep), "traceback")
    shown = 0
    for stat in stats:
        if stat.count_diff <= 0 or shown >= top:
            continue
        shown += 1
        print(
            "      %+d blocks (%+d bytes) in %d rounds, allocated at:"
            % (stat.count_diff, stat.size_diff, rounds)
        )
        for line in stat.traceback.format(limit=2, most_recent_first=True):
            print("        " + line.strip())


def check_cycles(ns, count, args, makers=None):
    """Every cycle maker's cycle is collected; blocks return to the baseline."""
    errors = []
    for maker in CYCLE_MAKERS if makers is None else makers:
        refs = []
        try:
            for _ in range(3):  # warm-up
                maker(ns, Sentinel())
            baseline = count()
            gc.disable()
            try:
                for _ in range(args.cycles):
                    sentinel = Sentinel()
                    refs.append(weakref.ref(sentinel))
                    maker(ns, sentinel)
                    del sentinel
                alive_before = sum(r() is not None for r in refs)
            finally:
                gc.enable()
            after = count()
            alive = sum(r() is not None for r in refs)
        except Exception as exc:
            import traceback

            traceback.print_exc()
            errors.append(
                "%s: operation failed: %s: %s" % (maker.__name__, type(exc).__name__, exc)
            )
            continue
        del refs
        after = count()
        if alive:
            errors.append(
                "%s: %d of %d cycles not collected by gc.collect()"
                % (maker.__name__, alive, args.cycles)
            )
        elif any(g > args.tolerance for g in count.growth(baseline, after)):
            errors.append(
                "%s: %s after collecting %d cycles"
                % (maker.__name__, count.describe(count.growth(baseline, after)), args.cycles)
            )
        elif alive_before == 0 and args.verbose:
            print("   note: %s: cycles were freed without the cyclic GC" % maker.__name__)
    return errors


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cores", default=os.environ.get("FROZENMAP_TEST_CORES", "c,python"))
    parser.add_argument("--groups", default="", help="comma-separated group names (default: all)")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--cycles", type=int, default=200, help="cycles built per cycle maker")
    parser.add_argument("--tolerance", type=int, default=10, help="allowed growth per batch")
    parser.add_argument(
        "--confirm",
        type=int,
        default=3,
        help="extra batches run to confirm a growth before calling it a leak",
    )
    parser.add_argument(
        "--metric", choices=["auto", "blocks", "tracemalloc", "none"], default="auto"
    )
    parser.add_argument(
        "--refs",
        choices=["auto", "on", "off"],
        default="auto",
        help="also count sys.gettotalrefcount() (auto: on a debug interpreter)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="3 warm-up, 10 rounds (sanitizer runs)"
    )
    parser.add_argument(
        "--selftest", action="store_true", help="check that a planted leak is reported"
    )
    parser.add_argument(
        "--require-c",
        action="store_true",
        default=os.environ.get("FROZENMAP_REQUIRE_C", "") not in ("", "0"),
    )
    parser.add_argument(
        "--no-locate",
        dest="locate",
        action="store_false",
        help="do not rerun a leaking group under tracemalloc to show where",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.warmup, args.rounds, args.cycles = 3, 10, 50

    import frozenmap

    print(
        "== leakcheck: frozenmap %s from %s"
        % (frozenmap.__version__, os.path.dirname(frozenmap.__file__))
    )
    cores = []
    for name in [n.strip() for n in args.cores.split(",") if n.strip()]:
        try:
            cores.append(load_core(name))
        except ImportError as exc:
            if name == "c" and args.require_c:
                print(
                    "FAIL: the C core is required (FROZENMAP_REQUIRE_C=1) but does not import: %s"
                    % exc
                )
                return 2
            print("== %s core not available, skipped: %s" % (name, exc))
    if not cores:
        print("FAIL: no core to check")
        return 2
    if len(cores) == 1:
        try:
            other_name = "python" if cores[0].name == "c" else "c"
            cores[0].other = load_core(other_name).frozendict
        except ImportError:
            pass
    else:
        cores[0].other, cores[1].other = cores[1].frozendict, cores[0].frozendict

    count = Counter(args.metric, args.refs)
    print(
        "== counting %s; %d warm-up + %d rounds per group, tolerance %d"
        % (" and ".join(count.names) or "nothing", args.warmup, args.rounds, args.tolerance)
    )
    gc.collect()

    if args.selftest:
        ns = cores[0]
        result = run_group(ns, "selftest_leak", g_selftest_leak, count, args)
        _selftest_sink.clear()
        if not count.names:
            print("== selftest skipped: no counter")
        elif result.startswith("leaked"):
            print(
                "== selftest ok: a planted leak of one object per round was reported (%s)" % result
            )
        else:
            print("FAIL: selftest: a planted leak was not reported (%s)" % (result,))
            return 1
        if count.refs:
            result = run_group(ns, "selftest_refleak", g_selftest_refleak, count, args)
            _selftest_sink.clear()
            if result.startswith("leaked") and "refs" in result:
                print("== selftest ok: a planted reference leak was reported (%s)" % result)
            else:
                print("FAIL: selftest: a planted reference leak was not reported (%s)" % (result,))
                return 1
        errors = check_cycles(ns, count, args, [cycle_selftest_uncollectable])
        _selftest_sink.clear()
        if errors and "not collected" in errors[0]:
            print("== selftest ok: an uncollected cycle was reported (%s)" % errors[0])
        else:
            print("FAIL: selftest: an uncollected cycle was not reported (%r)" % (errors,))
            return 1

    wanted = [g.strip() for g in args.groups.split(",") if g.strip()] or list(GROUPS)
    unknown = [g for g in wanted if g not in GROUPS and g != "cycle_collection"]
    if unknown:
        print(
            "unknown groups: %s (known: %s, cycle_collection)"
            % (", ".join(unknown), ", ".join(GROUPS))
        )
        return 2
    if not args.groups:
        wanted.append("cycle_collection")

    failures = []
    for ns in cores:
        start = time.monotonic()
        print("== core %s" % ns.name)
        for name in wanted:
            t0 = time.monotonic()
            if name == "cycle_collection":
                errors = check_cycles(ns, count, args)
                status = "ok" if not errors else "; ".join(errors)
                result = None if not errors else status
            else:
                result = status = run_group(ns, name, GROUPS[name], count, args)
                if status.startswith("ok"):
                    result = None
            line = "   %-6s %-18s %s  [%.1fs]" % (ns.name, name, status, time.monotonic() - t0)
            print(line, flush=True)
            if isinstance(result, str) and result.startswith("leaked") and args.locate:
                locate(ns, GROUPS[name], args.rounds)
            if isinstance(result, str):
                failures.append("%s core, group %s: %s" % (ns.name, name, result))
        print("== core %s done in %.1fs" % (ns.name, time.monotonic() - start))

    if failures:
        print("FAIL: leakcheck found %d problem(s):" % len(failures))
        for f in failures:
            print("  - " + f)
        return 1
    print("== leakcheck: clean")
    return 0


if __name__ == "__main__":
    sys.exit(main())
