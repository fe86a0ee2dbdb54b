"""Side-by-side benchmark of frozenmap against dict and the peer libraries.

Run ``python -m frozenmap.bench`` (or ``scripts/bench.sh``, which also installs
the peers).  It prints, for each operation and size, the time per operation of
each frozenmap core that imports (``frozenmap._ccore``, ``frozenmap._pycore``)
and of each installed peer, and frozenmap's ratio to the best peer::

    python -m frozenmap.bench                    # n = 1,000 / 100,000 / 1,000,000
    python -m frozenmap.bench --quick            # 1,000 and 10,000; 100,000 for the README table: < 1 min
    python -m frozenmap.bench --sizes 1000,1e5 --plot bench-plots --json bench.json
    python -m frozenmap.bench --load bench.json --plot bench-plots   # no re-run

How it measures
---------------
The code is organised as one table: *operations* x *libraries*.

* A :class:`Library` says how one library does each operation (``dict``
  copied on write is the baseline).  Its defaults go through the library's
  mutable builder (``thaw``/``freeze``), and each library overrides them with
  its native API where it has one (``immutables.Map.set``, ``pmap.remove``,
  ``frozendict.set`` ...).  An operation a library does not offer is ``n/a``.
* An :class:`Operation` turns a library and a :class:`Workload` (the data set
  for one size) into a :class:`Case`: a loop body such as ``m[x]`` or
  ``f(k, v)``, the names it uses, and the inputs it loops over.
* :func:`time_case` compiles the case into a function, picks how many inputs
  one pass takes and how many passes one run takes (timeit-style auto-ranging),
  and reports the median over several runs of the time per operation, net of
  the bare loop's own cost, with the spread (IQR / median) as a noise figure.
  Garbage collection is off while timing, as in :mod:`timeit`.  Inputs an
  operation uses up (``hash()`` caches its result) are rebuilt, untimed,
  before every pass.
* Memory is measured with :mod:`tracemalloc`: bytes allocated by building the
  map from a dict (keys and values exist beforehand, so they are excluded),
  divided by n; and bytes per version kept in a history of 1,000 single-key
  updates (fewer for copy-on-write peers whose history would not fit in memory;
  the figure is per version either way).

The asv suite in ``asv_benchmarks/`` reuses :data:`OPERATIONS`,
:func:`load_libraries` and :class:`Workload` from this module.
"""

import argparse
import gc
import importlib
import json
import math
import os
import pickle
import platform
import random
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

__all__ = [
    "Library",
    "Workload",
    "Case",
    "Operation",
    "OPERATIONS",
    "load_libraries",
    "time_case",
    "main",
]

#: Inputs prepared per operation (lookup keys, keys to set, ...); a pass over
#: them takes at most this many operations.
SAMPLE = 1000
#: Copy-on-write peers: at most this many items in a pool of derived versions.
POOL_ITEMS = 4_000_000
#: Copy-on-write peers: at most this many bytes in the measured version history.
HISTORY_BYTES = 256 << 20
#: Length of the version history behind "memory per version".
HISTORY = 1000


# --------------------------------------------------------------------------
# Libraries: how each one does each operation
# --------------------------------------------------------------------------


class Library:
    """How one mapping library performs each benchmarked operation.

    Subclasses set :attr:`name` and implement :meth:`build`, :meth:`thaw` and
    :meth:`freeze`; the derivations default to going through ``thaw``/``freeze``
    and are overridden where the library has a native call.  Methods that
    return callables (``setter(m)`` -> ``f(key, value)``) let the timed loops
    call a bound method directly, with no extra Python frame.
    """

    #: Column label.
    name = "?"
    #: True for frozenmap's own cores (their ratio to the best peer is shown).
    is_frozenmap = False
    #: True when a derived version costs O(log n), False when it copies O(n).
    persistent = True
    #: False when the type cannot be hashed (dict).
    hashable = True

    def __init__(self, version: str = ""):
        self.version = version

    def __repr__(self):
        return "<%s %s>" % (type(self).__name__, self.name)

    # -- the three primitives every library provides ------------------------
    def build(self, data: dict) -> Any:
        """A new map with the items of ``data``."""
        raise NotImplementedError

    def thaw(self, m: Any) -> Any:
        """A mutable builder (MutableMapping-like) starting from ``m``."""
        raise NotImplementedError

    def freeze(self, e: Any) -> Any:
        """The immutable map a builder made by :meth:`thaw` holds."""
        raise NotImplementedError

    # -- derivations; each returns a callable bound to ``m`` ----------------
    def setter(self, m: Any) -> Callable[[Any, Any], Any]:
        """``f(key, value)`` -> ``m`` with ``key`` set."""

        def set_(key, value):
            e = self.thaw(m)
            e[key] = value
            return self.freeze(e)

        return set_

    def deleter(self, m: Any) -> Callable[[Any], Any]:
        """``f(key)`` -> ``m`` without ``key`` (which is present)."""

        def delete(key):
            e = self.thaw(m)
            del e[key]
            return self.freeze(e)

        return delete

    def unioner(self, m: Any) -> Callable[[dict], Any]:
        """``f(other)`` -> ``m | other`` (right side wins)."""

        def union(other):
            e = self.thaw(m)
            e.update(other)
            return self.freeze(e)

        return union

    def minuser(self, m: Any) -> Callable[[Sequence], Any]:
        """``f(keys)`` -> ``m`` without ``keys`` (missing keys ignored)."""

        def minus(keys):
            e = self.thaw(m)
            for key in keys:
                if key in e:
                    del e[key]
            return self.freeze(e)

        return minus

    def keeper(self, m: Any) -> Callable[[Sequence], Any]:
        """``f(keys)`` -> ``m`` restricted to ``keys`` (missing keys ignored)."""

        def keep(keys):
            return self.build({key: m[key] for key in keys if key in m})

        return keep

    def batcher(self, m: Any) -> Callable[[Any], Any]:
        """``f((sets, deletes))`` -> ``m`` after a batch of edits in one builder."""

        def batch(edits):
            sets, deletes = edits
            e = self.thaw(m)
            for key, value in sets:
                e[key] = value
            for key in deletes:
                del e[key]
            return self.freeze(e)

        return batch

    #: ``f(a, b)`` -> what changed from ``a`` to ``b``; None when not offered.
    differ: Optional[Callable[[Any, Any], Any]] = None


class FrozenMap(Library):
    """One of frozenmap's cores: every operation is native."""

    is_frozenmap = True

    def __init__(self, core: str):
        try:
            module = importlib.import_module("frozenmap._%score" % core)
        except ImportError as exc:
            raise ImportError("%s core does not import: %s" % (core.upper(), exc)) from exc
        self.type = module.frozendict
        self.name = "frozenmap:%s" % ("c" if core == "c" else "py")
        self.differ = self.type.diff
        super().__init__(_dist_version("frozenmap"))

    def build(self, data):
        return self.type(data)

    def thaw(self, m):
        return m.evolve()

    def freeze(self, e):
        return e.freeze()

    def setter(self, m):
        return m.set

    def deleter(self, m):
        return m.delete

    def unioner(self, m):
        return m.__or__

    def minuser(self, m):
        return m.__sub__

    def keeper(self, m):
        return m.__and__


def mapping_diff(a, b):
    """``(added, removed, changed)`` from ``a`` to ``b`` as a dict user writes it.

    Cost: O(len(a) + len(b)).
    """
    added = {k: v for k, v in b.items() if k not in a}
    removed = {k: v for k, v in a.items() if k not in b}
    changed = {}
    for k, old in a.items():
        if k in b:
            new = b[k]
            if old is not new and old != new:
                changed[k] = (old, new)
    return added, removed, changed


class CopyOnWrite(Library):
    """A dict, or a dict-backed immutable type: every derivation copies O(n).

    ``kind`` is ``dict`` itself (the baseline: ``copy()`` then edit) or an
    immutable wrapper (PyPI ``frozendict``, ``immutabledict``, the builtin
    ``frozendict`` of Python 3.15), whose native ``set``/``delete`` and ``|``
    are used when present; its builder is a plain dict.
    """

    persistent = False

    def __init__(self, name: str, kind: type, version: str = ""):
        self.name = name
        self.type = kind
        self.hashable = kind.__hash__ is not None
        if kind is dict:
            self.differ = mapping_diff
        super().__init__(version)

    def build(self, data):
        return self.type(data)

    def thaw(self, m):
        return m.copy() if self.type is dict else dict(m)

    def freeze(self, e):
        return e if self.type is dict else self.type(e)

    def setter(self, m):
        if hasattr(m, "set"):
            return m.set
        union = m.__or__
        return lambda key, value: union({key: value})

    def deleter(self, m):
        return m.delete if hasattr(m, "delete") else super().deleter(m)

    def unioner(self, m):
        return m.__or__


class Immutables(Library):
    """``immutables.Map`` (PEP 603's HAMT); builder: ``Map.mutate()``."""

    name = "immutables"

    def __init__(self):
        import immutables

        self.type = immutables.Map
        super().__init__(immutables.__version__)

    def build(self, data):
        return self.type(data)

    def thaw(self, m):
        return m.mutate()

    def freeze(self, e):
        return e.finish()

    def setter(self, m):
        return m.set

    def deleter(self, m):
        return m.delete

    def unioner(self, m):
        return m.update


class Pyrsistent(Library):
    """``pyrsistent.pmap``; builder: ``pmap.evolver()``."""

    name = "pyrsistent"

    def __init__(self):
        import pyrsistent

        self.build = pyrsistent.pmap
        super().__init__(_dist_version("pyrsistent"))

    def thaw(self, m):
        return m.evolver()

    def freeze(self, e):
        return e.persistent()

    def setter(self, m):
        return m.set

    def deleter(self, m):
        return m.remove

    def unioner(self, m):
        return m.update


def _pypi_frozendict():
    import frozendict as pypi_frozendict

    return CopyOnWrite("frozendict", pypi_frozendict.frozendict, _dist_version("frozendict"))


def _immutabledict():
    import immutabledict

    return CopyOnWrite("immutabledict", immutabledict.immutabledict, _dist_version("immutabledict"))


def _builtin_frozendict():
    import builtins

    kind = getattr(builtins, "frozendict", None)
    if kind is None:
        raise ImportError("needs Python 3.15+")
    return CopyOnWrite("builtin", kind, "Python %s" % platform.python_version())


#: Column order: frozenmap's cores, the dict baseline, then the peers.
LIBRARY_FACTORIES = [
    ("frozenmap:c", lambda: FrozenMap("c")),
    ("frozenmap:py", lambda: FrozenMap("py")),
    ("dict", lambda: CopyOnWrite("dict", dict, "Python %s" % platform.python_version())),
    ("immutables", Immutables),
    ("pyrsistent", Pyrsistent),
    ("frozendict", _pypi_frozendict),
    ("immutabledict", _immutabledict),
    ("builtin", _builtin_frozendict),
]
LIBRARY_NAMES = [name for name, _ in LIBRARY_FACTORIES]


def load_library(name: str) -> Library:
    """The :class:`Library` called ``name``; ImportError when it is not available."""
    factory = dict(LIBRARY_FACTORIES)[name]
    try:
        return factory()
    except ImportError:
        raise
    except Exception as exc:  # a broken core is reported like a missing one
        raise ImportError("%s: %s" % (type(exc).__name__, exc)) from exc


def load_libraries(names: Optional[Sequence[str]] = None):
    """``(libraries, skipped)``: the available libraries and ``{name: reason}``."""
    libraries, skipped = [], {}
    for name in names or LIBRARY_NAMES:
        try:
            libraries.append(load_library(name))
        except ImportError as exc:
            skipped[name] = str(exc) or type(exc).__name__
    return libraries, skipped


def _dist_version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:
        return ""


# --------------------------------------------------------------------------
# The data for one size
# --------------------------------------------------------------------------


class Workload:
    """The data set and input samples for maps of ``n`` string keys.

    Keys are ``"key0" .. "key{n-1}"`` with int values; samples are drawn with
    a fixed seed, and cycle when ``n`` is smaller than :data:`SAMPLE`.  Built
    maps are cached per library (:meth:`base`) so that all operations of one
    library share one base map; :meth:`forget` drops them.
    """

    def __init__(self, n: int, seed: int = 814):
        rng = random.Random(seed)
        self.n = n
        keys = ["key%d" % i for i in range(n)]
        self.data = dict(zip(keys, range(n)))

        def sample(count):
            picks = rng.sample(range(n), min(n, count)) if n else []
            picks = (picks * (count // max(len(picks), 1) + 1))[:count]
            return [keys[i] for i in picks]

        self.hits = sample(SAMPLE)
        self.misses = ["miss%d" % i for i in range(SAMPLE)]
        #: (existing key, new value): the value is never the one stored.
        self.updates = [(k, self.data[k] + n + 1) for k in sample(SAMPLE)]
        self.inserts = [("new%d" % i, i) for i in range(SAMPLE)]
        self.deletes = sample(SAMPLE)
        self.history = [(k, self.data[k] + n + 1 + i) for i, k in enumerate(sample(HISTORY))]
        groups = 16
        #: 10-key right-hand sides for ``|``: 5 existing keys (new values), 5 new.
        self.unions = [
            dict(self.updates[10 * g : 10 * g + 5] + self.inserts[10 * g : 10 * g + 5])
            for g in range(groups)
        ]
        #: 10-key operands for ``-`` and ``&``: 5 existing keys, 5 missing.
        self.keysets = [
            self.deletes[5 * g : 5 * g + 5] + self.misses[5 * g : 5 * g + 5] for g in range(groups)
        ]
        self.batches = [self._batch(rng, keys, g) for g in range(groups)]
        self._bases: Dict[tuple, Any] = {}

    def _batch(self, rng, keys, group):
        """100 edits: 50 updates, 25 deletions, 25 insertions (fewer for tiny n)."""
        existing = [keys[i] for i in rng.sample(range(self.n), min(self.n, 75))]
        split = len(existing) * 2 // 3
        sets = [(k, -1 - i) for i, k in enumerate(existing[:split])]
        deletes = existing[split:]
        sets += [("batch%d_%d" % (group, i), i) for i in range(100 - len(sets) - len(deletes))]
        return sets, deletes

    def base(self, lib: Library, hashed: bool = False):
        """``lib``'s map of :attr:`data`; with ``hashed``, a version whose hash is known."""
        key = (lib.name, hashed)
        if key not in self._bases:
            if hashed:  # a new key, so that no sampled update leaves it unchanged
                m = lib.setter(self.base(lib))("hashed version", 0)
                hash(m)
            else:
                m = lib.build(self.data)
            self._bases[key] = m
        return self._bases[key]

    def forget(self, lib: Library) -> None:
        """Drop the maps cached for ``lib``."""
        for key in [k for k in self._bases if k[0] == lib.name]:
            del self._bases[key]

    def pool_limit(self, lib: Library) -> int:
        """How many derived versions of ``lib`` a pool may hold."""
        return SAMPLE if lib.persistent else max(1, min(SAMPLE, POOL_ITEMS // max(self.n, 1)))


# --------------------------------------------------------------------------
# Operations: one Case per (operation, library, workload)
# --------------------------------------------------------------------------


@dataclass
class Case:
    """A timed loop: ``for <target> in xs: <body>``, with ``ns`` bound as locals.

    ``inputs(c)`` returns ``c`` inputs (``c <= limit``).  ``consumes`` marks
    inputs that one pass uses up: they are rebuilt before every pass.  The
    time per operation is the time per input divided by ``scale`` (``n`` for
    the per-item operations).
    """

    body: str
    ns: Dict[str, Any]
    inputs: Callable[[int], list]
    limit: int
    target: str = "x"
    consumes: bool = False
    scale: int = 1

    def compile(self, body: Optional[str] = None) -> Callable[[list], None]:
        """``run(xs)``: one pass of the loop (``body`` replaces the case's own)."""
        names = sorted(self.ns)
        source = "def run(xs, %s):\n    for %s in xs:\n        %s\n" % (
            ", ".join("%s=%s" % (name, name) for name in names),
            self.target,
            body or self.body,
        )
        scope = dict(self.ns)
        exec(compile(source, "<bench %s>" % self.body, "exec"), scope)
        return scope["run"]


@dataclass(frozen=True)
class Operation:
    """One benchmarked operation.

    ``case(lib, workload)`` returns a :class:`Case` (time) or, for memory
    operations, ``measure(lib, workload)`` returns bytes; either returns None
    when ``lib`` does not offer the operation.  ``asv_count`` is how many
    operations one asv call performs.
    """

    key: str
    title: str
    unit: str  # "s" (seconds per operation) or "B" (bytes)
    case: Optional[Callable[[Library, Workload], Optional[Case]]] = None
    measure: Optional[Callable[[Library, Workload], Optional[float]]] = None
    asv_count: int = 1


def _fixed(items: list) -> Callable[[int], list]:
    """Inputs taken from a prepared list."""
    return lambda c: items[:c]


def _repeat(item: Any) -> Callable[[int], list]:
    """Inputs that are all the same object."""
    return lambda c: [item] * c


def _derived(lib: Library, w: Workload, hashed: bool) -> Callable[[int], list]:
    """Versions derived from the base map by one update each."""

    def make(c):
        derive = lib.setter(w.base(lib, hashed))
        return [derive(k, v) for k, v in w.updates[:c]]

    return make


def _pairs(lib: Library, w: Workload) -> Callable[[int], list]:
    """``(base, version one update apart)`` pairs."""
    return lambda c: [(w.base(lib), m) for m in _derived(lib, w, False)(c)]


def _construct(lib, w):
    return Case("build(x)", {"build": lib.build}, _repeat(w.data), SAMPLE, scale=max(w.n, 1))


def _lookup_hit(lib, w):
    return Case("m[x]", {"m": w.base(lib)}, _fixed(w.hits), SAMPLE)


def _lookup_miss(lib, w):
    return Case("x in m", {"m": w.base(lib)}, _fixed(w.misses), SAMPLE)


def _iterate(lib, w):
    return Case("for item in x.items(): pass", {}, _repeat(w.base(lib)), SAMPLE, scale=max(w.n, 1))


def _set_existing(lib, w):
    f = lib.setter(w.base(lib))
    return Case("f(k, v)", {"f": f}, _fixed(w.updates), SAMPLE, target="k, v")


def _set_new(lib, w):
    f = lib.setter(w.base(lib))
    return Case("f(k, v)", {"f": f}, _fixed(w.inserts), SAMPLE, target="k, v")


def _delete(lib, w):
    return Case("f(x)", {"f": lib.deleter(w.base(lib))}, _fixed(w.deletes), SAMPLE)


def _with(method: str, inputs: str):
    """A case calling ``lib.<method>(base)`` on each of ``w.<inputs>``."""

    def case(lib, w):
        f = getattr(lib, method)(w.base(lib))
        items = getattr(w, inputs)
        return Case("f(x)", {"f": f}, _fixed(items), len(items))

    return case


def _equal(lib, w):
    return Case("a == b", {}, _pairs(lib, w), w.pool_limit(lib), target="a, b")


def _equal_at(last: bool):
    """``==`` of the base map and a version whose first (or last) key differs.

    A dict-backed ``==`` walks one side in insertion order and stops at the
    first mismatch, so an edit of the first key favours it; the last key makes
    it walk everything.  frozenmap's cost does not depend on the position.
    """

    def case(lib, w):
        if w.n == 0:
            return None
        k = "key%d" % (w.n - 1 if last else 0)

        def make(c):
            base = w.base(lib)
            derive = lib.setter(base)
            return [(base, derive(k, w.data[k] + w.n + 1 + i)) for i in range(c)]

        return Case("a == b", {}, make, w.pool_limit(lib), target="a, b")

    return case


def _diff(lib, w):
    if lib.differ is None:
        return None
    return Case("f(a, b)", {"f": lib.differ}, _pairs(lib, w), w.pool_limit(lib), target="a, b")


def _hash(hashed: bool):
    """``hash()`` of versions one update away from the base map.

    ``hashed=False`` ("fresh"): no ancestor's hash is known, so every library
    pays O(n).  ``hashed=True`` ("derived"): the parent's hash is known, which
    frozenmap updates in O(1); the others recompute it.
    """

    def case(lib, w):
        if not lib.hashable:
            return None
        make = _derived(lib, w, hashed)
        return Case("hash(x)", {}, make, w.pool_limit(lib), consumes=True)

    return case


def _pickle(lib, w):
    return Case(
        "loads(dumps(x, 5))",
        {"loads": pickle.loads, "dumps": pickle.dumps},
        _repeat(w.base(lib)),
        SAMPLE,
    )


def _traced(make: Callable[[], Any]) -> float:
    """Bytes still allocated after ``make()`` (which keeps what it builds alive).

    The garbage collector stays out of the measured window: objects that
    exist beforehand are frozen (``gc.freeze``), so garbage left by earlier
    work is not freed inside it, and collections are off while ``make()``
    runs.  With a large workload alive, collections walk millions of objects
    (pyrsistent's vectors traverse every element: one collection after a
    1,000-version history at n = 100,000 takes ~20 s).  None of the measured
    libraries leaves cyclic garbage behind (a collection after ``make()``
    frees nothing), so the figure is what ``make()`` keeps.
    """
    enabled = gc.isenabled()
    gc.disable()
    gc.freeze()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = make()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
        gc.unfreeze()
        if enabled:
            gc.enable()
    del kept
    return float(after - before)


def bytes_per_item(lib: Library, w: Workload) -> float:
    """Bytes a map of ``n`` items takes beyond its keys and values."""
    return _traced(lambda: lib.build(w.data)) / max(w.n, 1)


def bytes_per_version(lib: Library, w: Workload) -> float:
    """Bytes per version in a history of single-key updates, all kept alive."""
    base = w.base(lib)

    def history(count):
        def make():
            kept, m = [None] * count, base
            for i, (k, v) in enumerate(w.history[:count]):
                m = kept[i] = lib.setter(m)(k, v)
            return kept

        return make

    probe = _traced(history(1))
    count = min(len(w.history), max(2, int(HISTORY_BYTES // max(probe, 1.0))))
    return _traced(history(count)) / count


#: The benchmarked operations, in table order.
OPERATIONS = [
    Operation("construct", "construct from dict (per item)", "s", _construct),
    Operation("lookup_hit", "lookup, hit  m[k]", "s", _lookup_hit, asv_count=100),
    Operation("lookup_miss", "lookup, miss  k in m", "s", _lookup_miss, asv_count=100),
    Operation("iterate", "iterate items (per item)", "s", _iterate),
    Operation("set_existing", "set existing key", "s", _set_existing, asv_count=100),
    Operation("set_new", "set new key", "s", _set_new, asv_count=100),
    Operation("delete", "delete", "s", _delete, asv_count=100),
    Operation("union", "| with 10 keys", "s", _with("unioner", "unions"), asv_count=10),
    Operation("minus", "- 10 keys", "s", _with("minuser", "keysets"), asv_count=10),
    Operation("keep", "& 10 keys", "s", _with("keeper", "keysets"), asv_count=10),
    Operation("batch", "evolver: 100 edits, freeze", "s", _with("batcher", "batches")),
    Operation("equal", "== one edit apart", "s", _equal),
    Operation("equal_first", "== one edit apart, first key", "s", _equal_at(False)),
    Operation("equal_last", "== one edit apart, last key", "s", _equal_at(True)),
    Operation("diff", "diff one edit apart", "s", _diff),
    Operation("hash_fresh", "hash(), fresh", "s", _hash(False)),
    Operation("hash_derived", "hash(), derived version", "s", _hash(True)),
    Operation("pickle", "pickle round trip", "s", _pickle),
    Operation("mem_item", "memory per item", "B", measure=bytes_per_item),
    Operation("mem_version", "memory per version (history)", "B", measure=bytes_per_version),
]
OPERATION_KEYS = [op.key for op in OPERATIONS]


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------


@dataclass
class Measurement:
    """One result: the median value, its noise, and how it was obtained."""

    op: str
    n: int
    lib: str
    value: Optional[float]  # seconds per operation, or bytes; None for n/a
    unit: str
    noise: float = 0.0  # IQR / median over the runs
    runs: List[float] = field(default_factory=list)
    per_pass: int = 0  # inputs per pass
    passes: int = 0  # passes per run


def _passes(run, xs_source, count: int, passes: int, consumes: bool) -> float:
    """Seconds for ``passes`` passes of ``run``; fresh inputs per pass if ``consumes``."""
    timer = time.perf_counter
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        if not consumes:
            xs = xs_source(count)
            start = timer()
            for _ in range(passes):
                run(xs)
            return timer() - start
        total = 0.0
        for _ in range(passes):
            xs = xs_source(count)
            start = timer()
            run(xs)
            total += timer() - start
            del xs
        return total
    finally:
        if gc_was_enabled:
            gc.enable()


def time_case(case: Case, target: float, repeat: int, max_seconds: float = 15.0):
    """Time ``case``: ``(median seconds per operation, noise, runs, count, passes)``.

    A pass loops over ``count`` inputs, a run makes ``passes`` passes; both
    are chosen so that a run lasts about ``target`` seconds.  The bare loop's
    time (same inputs, body ``pass``) is subtracted.  Fewer runs are made when
    ``repeat`` runs would take more than ``max_seconds`` (never fewer than 3).
    """
    run = case.compile()
    bare = case.compile("pass")
    one = _passes(run, case.inputs, 1, 1, case.consumes)  # also warms up
    count = max(1, min(case.limit, int(target / 10 / max(one, 1e-9))))
    inputs = case.inputs
    if not case.consumes:  # build the pool once for every run
        pool = case.inputs(count)
        count = len(pool)
        inputs = lambda c: pool  # noqa: E731
    # A one-input pass already timed the single input a slow operation gets.
    per_pass = one if count == 1 else _passes(run, inputs, count, 1, case.consumes)
    passes = max(1, int(target / max(per_pass, 1e-9)))
    runs_wanted = max(3, min(repeat, int(max_seconds / max(per_pass * passes, 1e-9))))
    overhead = min(_passes(bare, inputs, count, passes, False) for _ in range(3))
    runs = []
    for _ in range(runs_wanted):
        elapsed = _passes(run, inputs, count, passes, case.consumes)
        runs.append(max(elapsed - overhead, 0.0) / (passes * count * case.scale))
    median = statistics.median(runs)
    return median, _noise(runs, median), runs, count, passes


def _noise(runs: List[float], median: float) -> float:
    if len(runs) < 2 or median <= 0:
        return 0.0
    q1, _, q3 = statistics.quantiles(runs, n=4, method="inclusive")
    return (q3 - q1) / median


def measure(op: Operation, lib: Library, w: Workload, target: float, repeat: int) -> Measurement:
    """Run one operation for one library on one workload."""
    result = Measurement(op.key, w.n, lib.name, None, op.unit)
    if op.measure is not None:
        result.value = op.measure(lib, w)
        return result
    case = op.case(lib, w)
    if case is not None:
        result.value, result.noise, result.runs, result.per_pass, result.passes = time_case(
            case, target, repeat
        )
    return result


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------


def format_value(value: Optional[float], unit: str) -> str:
    """``12.3 µs``, ``1.20 ms``, ``48.1 B``; ``n/a`` for None."""
    if value is None:
        return "n/a"
    if unit == "B":
        steps = ((1e6, "MB"), (1e3, "kB"), (1.0, "B"))
    else:
        steps = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
    for scale, suffix in steps:  # noqa: B007  (suffix is used after the loop)
        if value >= scale:
            break
    number = value / scale
    digits = 0 if number >= 100 else 1 if number >= 10 else 2
    return "%.*f %s" % (digits, number, suffix)


NOISY = 0.10  # cells noisier than this (IQR / median) are marked "?"


def _cell(m: Optional[Measurement], unit: str, best: bool) -> str:
    """A value with two marker columns: ``*`` best peer, ``?`` noisy."""
    if m is None:
        return "-  "
    if m.value is None:
        return "n/a  "
    return format_value(m.value, unit) + ("*" if best else " ") + ("?" if m.noise > NOISY else " ")


def render_table(results: List[Measurement], libraries: List[str], frozenmaps: List[str]) -> str:
    """The terminal table: a block per operation, a row per size, a column per library.

    The last columns divide each frozenmap core's value by the best peer's
    (every library that is not a frozenmap core, dict included).
    """
    peers = [name for name in libraries if name not in frozenmaps]
    cells = {(m.op, m.n, m.lib): m for m in results}
    sizes = sorted({m.n for m in results})
    header = [""] + [name + "  " for name in libraries]
    header += ["%s/best" % name.split(":")[1] for name in frozenmaps]
    blocks = []  # (operation title, rows)
    for op in OPERATIONS:
        rows = []
        for n in sizes:
            row = {lib: cells.get((op.key, n, lib)) for lib in libraries}
            if not any(row.values()):
                continue
            measured = [(row[p].value, p) for p in peers if row[p] and row[p].value is not None]
            best, best_name = min(measured) if measured else (None, None)
            line = ["n=%s" % format(n, ",")]
            line += [_cell(row[lib], op.unit, lib == best_name) for lib in libraries]
            for fm in frozenmaps:
                value = row[fm].value if row[fm] else None
                line.append("%.3g×" % (value / best) if value is not None and best else "-")
            rows.append(line)
        if rows:
            blocks.append((op.title, rows))
    every_row = [header] + [row for _, rows in blocks for row in rows]
    widths = [max(len(row[i]) for row in every_row) for i in range(len(header))]
    widths[1:] = [max(w, 9) for w in widths[1:]]

    def join(row):
        return (
            "  "
            + row[0].ljust(widths[0])
            + "  ".join(c.rjust(w) for c, w in zip(row[1:], widths[1:]))
        )

    lines = [join(header)]
    lines.append("-" * len(lines[0]))
    for title, rows in blocks:
        lines.append(title)
        lines.extend(join(row) for row in rows)
    return "\n".join(lines)


def machine_description() -> Dict[str, str]:
    """Python, OS, CPU: what a reader needs to weigh the numbers."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "python": "%s %s" % (platform.python_implementation(), platform.python_version()),
        "platform": "%s %s" % (platform.system(), platform.machine()),
        "cpu": "%s, %d cores" % (cpu, os.cpu_count() or 0),
        "date": time.strftime("%Y-%m-%d %H:%M"),
    }


def render_report(data: Dict[str, Any]) -> str:
    """The whole printed report: header, skipped libraries, table, noise summary."""
    meta = data["meta"]
    results = [Measurement(**m) for m in data["results"]]
    libraries = [lib["name"] for lib in meta["libraries"]]
    frozenmaps = [lib["name"] for lib in meta["libraries"] if lib["frozenmap"]]
    out = [
        "frozenmap benchmark: %s on %s (%s), %s"
        % (
            meta["machine"]["python"],
            meta["machine"]["platform"],
            meta["machine"]["cpu"],
            meta["machine"]["date"],
        ),
        "libraries: "
        + ", ".join("%s %s" % (lib["name"], lib["version"]) for lib in meta["libraries"]),
    ]
    for name, reason in meta["skipped"].items():
        out.append("skipped: %s (%s)" % (name, reason))
    out += [
        "time per operation, median of %d runs (%s), net of loop overhead; memory by tracemalloc."
        % (meta["repeat"], "quick" if meta["quick"] else "full"),
        "* best peer (dict copied on write counts as a peer)   ? noisy (IQR > %d%% of median)"
        % (NOISY * 100),
        "x/best: frozenmap's core x divided by the best peer (below 1: frozenmap is better)",
        "",
        render_table(results, libraries, frozenmaps),
        "",
    ]
    timed = sorted(
        (m.noise, m.op, m.lib, m.n) for m in results if m.unit == "s" and m.value is not None
    )
    if timed:
        noises = [t[0] for t in timed]
        worst = timed[-1]
        out.append(
            "noise (IQR/median over runs): median %.1f%%, 90th percentile %.1f%%, "
            "worst %.1f%% (%s, %s, n=%s)"
            % (
                100 * statistics.median(noises),
                100 * noises[int(0.9 * (len(noises) - 1))],
                100 * worst[0],
                worst[1],
                worst[2],
                format(worst[3], ","),
            )
        )
    return "\n".join(out)


def _factor(ratio: float) -> str:
    """``2.9x``, ``393x``, ``13,300x``."""
    return "%.2gx" % ratio if ratio < 100 else "{:,}x".format(int(float("%.3g" % ratio)))


def render_verdict(data: Dict[str, Any]) -> str:
    """One paragraph at the largest size: where frozenmap is best, where a peer is, by how much.

    frozenmap means its C core when it was measured (else the pure-Python one);
    each operation compares it with the best of the other libraries.
    """
    import textwrap

    results = [Measurement(**m) for m in data["results"]]
    libs = data["meta"]["libraries"]
    cores = [lib["name"] for lib in libs if lib["frozenmap"]]
    peers = [lib["name"] for lib in libs if not lib["frozenmap"]]
    if not cores or not peers or not results:
        return "verdict: nothing to compare (frozenmap and at least one peer are needed)"
    core = "frozenmap:c" if "frozenmap:c" in cores else cores[0]
    n = max(m.n for m in results)
    cells = {(m.op, m.lib): m.value for m in results if m.n == n and m.value is not None}
    wins, losses, alone = [], [], []  # (factor, op, best peer): factor >= 1
    for op in OPERATIONS:
        mine = cells.get((op.key, core))
        if mine is None:
            continue
        theirs = [(cells[op.key, p], p) for p in peers if (op.key, p) in cells]
        if not theirs:
            alone.append(op.title)
            continue
        best, best_name = min(theirs)
        if mine <= best:
            wins.append((best / mine if mine else math.inf, op, best_name))
        else:
            losses.append((mine / best if best else math.inf, op, best_name))

    def better(op):
        return "faster" if op.unit == "s" else "smaller"

    text = "Verdict at n=%s (%s against the best other library for each operation): " % (
        format(n, ","),
        core,
    )
    if wins:
        text += "frozenmap is best at %s. " % "; ".join(
            "%s (%s %s than %s)" % (op.title, _factor(factor), better(op), name)
            for factor, op, name in sorted(wins, key=lambda e: -e[0])
        )
    if losses:
        text += "A peer is best at %s. " % "; ".join(
            "%s (%s, %s %s)" % (op.title, name, _factor(factor), better(op))
            for factor, op, name in sorted(losses, key=lambda e: -e[0])
        )
    if alone:
        text += "Only frozenmap offers %s. " % ", ".join(alone)
    if data["meta"].get("quick"):
        text += "(A quick run: factors below 2x can flip between runs; run without --quick for firm numbers.)"
    return textwrap.fill(text.strip(), width=100)


# --------------------------------------------------------------------------
# Plots
# --------------------------------------------------------------------------


def write_plots(data: Dict[str, Any], directory: str) -> List[str]:
    """PNG charts: each time operation (and an overview), memory per item and per version."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(directory, exist_ok=True)
    results = [Measurement(**m) for m in data["results"]]
    libraries = [lib["name"] for lib in data["meta"]["libraries"]]
    styles = {
        name: dict(
            color="C%d" % i, marker="os^vD<>p"[i % 8], linewidth=2.5 if "frozenmap" in name else 1.2
        )
        for i, name in enumerate(libraries)
    }
    subtitle = "%(python)s, %(cpu)s" % data["meta"]["machine"]

    def draw(ax, op):
        for lib in libraries:
            points = sorted(
                (m.n, m.value) for m in results if m.op == op.key and m.lib == lib and m.value
            )
            if points:
                xs, ys = zip(*points)
                ys = [y * 1e6 for y in ys] if op.unit == "s" else ys
                ax.plot(xs, ys, label=lib, **styles[lib])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(op.title, fontsize=9)
        ax.set_xlabel("n (items)")
        if op.unit == "B":
            ax.set_ylabel("bytes" + op.title.split("memory", 1)[1])
        else:
            ax.set_ylabel("µs per item" if "per item" in op.title else "µs per operation")
        ax.grid(True, which="major", alpha=0.3)

    written = []
    present = [op for op in OPERATIONS if any(m.op == op.key and m.value for m in results)]

    def save(fig, name):
        path = os.path.join(directory, name)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)

    for op in present:
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        draw(ax, op)
        ax.legend(fontsize=8)
        fig.suptitle(subtitle, fontsize=8)
        fig.tight_layout()
        name = {"mem_item": "memory-per-item", "mem_version": "memory-per-version"}.get(
            op.key, "time-" + op.key
        )
        save(fig, name + ".png")
    timed = [op for op in present if op.unit == "s"]
    if timed:
        cols = 4
        rows = math.ceil(len(timed) / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows), squeeze=False)
        for ax, op in zip(axes.flat, timed):
            draw(ax, op)
        for ax in list(axes.flat)[len(timed) :]:
            ax.set_visible(False)
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper center", ncol=len(labels), fontsize=9)
        fig.tight_layout(rect=(0, 0, 1, 0.96))
        save(fig, "time-all.png")
    return written


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


class Progress:
    """Progress on stderr: one updating line on a terminal; otherwise a line when
    the size or library changes and every few seconds, each naming the
    operation being measured."""

    EVERY = 3.0  # seconds between lines when stderr is not a terminal

    def __init__(self, total: int):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.tty = sys.stderr.isatty()
        self.last_group = None
        self.last_line = -self.EVERY

    def step(self, group: str, detail: str) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.start
        line = "[%*d/%d %3.0fs] %s: %s" % (
            len(str(self.total)),
            self.done,
            self.total,
            elapsed,
            group,
            detail,
        )
        if self.tty:
            sys.stderr.write("\r\x1b[K" + line[:150])
        elif group != self.last_group or elapsed - self.last_line >= self.EVERY:
            sys.stderr.write(line + "\n")
            self.last_line = elapsed
        self.last_group = group
        sys.stderr.flush()

    def finish(self) -> None:
        if self.tty:
            sys.stderr.write("\r\x1b[K")
        sys.stderr.write("done in %.0f s\n" % (time.monotonic() - self.start))


#: The README's table: these operations at this size, for the C core and the
#: peers (``--quick`` measures them).
README_SIZE = 100_000
README_OPS = (
    "construct",
    "lookup_hit",
    "lookup_miss",
    "iterate",
    "set_existing",
    "set_new",
    "delete",
    "equal",
    "diff",
    "hash_derived",
    "mem_item",
    "mem_version",
)
QUICK_SIZES = [1000, 10_000, README_SIZE]


def _sizes(text: str) -> List[int]:
    return [int(float(part)) for part in text.replace(" ", "").split(",") if part]


def run(
    sizes, libraries, operations, target, repeat, progress=True, keep=None
) -> List[Measurement]:
    """Measure every operation for every library at every size.

    ``keep(n, lib, op)``, when given, says which of those to measure.
    """
    plan = [
        (n, lib, op)
        for n in sizes
        for lib in libraries
        for op in operations
        if keep is None or keep(n, lib, op)
    ]
    results = []
    bar = Progress(len(plan)) if progress else None
    for n in sizes:
        w = Workload(n)
        for lib in libraries:
            for op in [op for size, each, op in plan if size == n and each is lib]:
                if bar:
                    bar.step("n=%s %s" % (format(n, ","), lib.name), op.title)
                results.append(measure(op, lib, w, target, repeat))
            w.forget(lib)
        del w
        gc.collect()
    if bar:
        bar.finish()
    return results


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m frozenmap.bench",
        description="Time frozenmap's cores side by side with dict and the peer libraries.",
    )
    parser.add_argument(
        "--sizes",
        type=_sizes,
        help="comma-separated sizes (default 1000,100000,1000000; quick: 1000,10000, "
        "and 100000 for the operations of the README's table)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, short runs, 5 repeats: under a minute"
    )
    parser.add_argument("--repeat", type=int, help="runs per measurement (default 7; quick: 5)")
    parser.add_argument("--target", type=float, help="seconds per run (default 0.1; quick: 0.005)")
    parser.add_argument(
        "--libs", help="comma-separated libraries (default: all of %s)" % ",".join(LIBRARY_NAMES)
    )
    parser.add_argument(
        "--ops", help="comma-separated operations (default: all of %s)" % ",".join(OPERATION_KEYS)
    )
    parser.add_argument("--json", metavar="FILE", help="also save the results as JSON")
    parser.add_argument(
        "--load",
        metavar="FILE",
        help="report (and plot) results saved by --json instead of measuring",
    )
    parser.add_argument("--plot", metavar="DIR", help="write PNG charts (matplotlib) into DIR")
    parser.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)

    if args.load:
        with open(args.load) as f:
            data = json.load(f)
    else:
        data = _measure_all(args, parser)
    print(render_report(data))
    print()
    print(render_verdict(data))
    if args.json and not args.load:
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1)
        print("results saved to %s" % args.json)
    if args.plot:
        for path in write_plots(data, args.plot):
            print("wrote %s" % path)
    return 0


def _measure_all(args, parser) -> Dict[str, Any]:
    sizes = args.sizes or (QUICK_SIZES if args.quick else [1000, 100_000, 1_000_000])
    keep = None
    if args.quick and not args.sizes:
        # The quick run's largest size measures what the README's table shows
        # (its operations, the C core and the peers), so the README's numbers
        # can be checked in under a minute.
        def keep(n, lib, op):
            return n != README_SIZE or (op.key in README_OPS and lib.name != "frozenmap:py")

    repeat = args.repeat or (5 if args.quick else 7)
    target = args.target or (0.005 if args.quick else 0.1)
    names = args.libs.split(",") if args.libs else None
    for name in names or []:
        if name not in LIBRARY_NAMES:
            parser.error("unknown library %r (choose from %s)" % (name, ", ".join(LIBRARY_NAMES)))
    ops = OPERATIONS
    if args.ops:
        wanted = args.ops.split(",")
        unknown = sorted(set(wanted) - set(OPERATION_KEYS))
        if unknown:
            parser.error(
                "unknown operation(s) %s (choose from %s)"
                % (", ".join(unknown), ", ".join(OPERATION_KEYS))
            )
        ops = [op for op in OPERATIONS if op.key in wanted]
    libraries, skipped = load_libraries(names)
    if not any(lib.is_frozenmap for lib in libraries):
        sys.stderr.write("warning: no frozenmap core imports; measuring the peers only\n")
    results = run(sizes, libraries, ops, target, repeat, progress=not args.no_progress, keep=keep)
    return {
        "meta": {
            "machine": machine_description(),
            "libraries": [
                {"name": lib.name, "version": lib.version, "frozenmap": lib.is_frozenmap}
                for lib in libraries
            ],
            "skipped": skipped,
            "sizes": sizes,
            "repeat": repeat,
            "target": target,
            "quick": bool(args.quick),
        },
        "results": [vars(m) for m in results],
    }


if __name__ == "__main__":
    sys.exit(main())
