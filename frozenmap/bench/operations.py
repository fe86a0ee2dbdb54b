"""What is measured: the data for one size and the benchmarked operations.

An :class:`Operation` turns a library and a :class:`Workload` (the data set
for one size) into a :class:`Case`: a loop body such as ``m[x]`` or
``f(k, v)``, the names it uses, and the inputs it loops over.  Memory
operations measure bytes with :mod:`tracemalloc` instead.
"""

import gc
import pickle
import random
import tracemalloc
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional

from .peers import Library

#: Inputs prepared per operation (lookup keys, keys to set, ...); a pass over
#: them takes at most this many operations.
SAMPLE = 1000
#: Copy-on-write peers: at most this many items in a pool of derived versions.
POOL_ITEMS = 4_000_000
#: Copy-on-write peers: at most this many bytes in the measured version history.
HISTORY_BYTES = 256 << 20
#: Length of the version history behind "memory per version".
HISTORY = 1000


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


def _union_related(lib, w):
    """``a | b`` for ``b`` derived from ``a`` by 10 edits (5 updates, 5 new
    keys): two versions that share structure, which frozenmap merges in
    O(d log n) (the shared subtrees are skipped) and the others in O(n) or
    O(k log n)."""

    def make(c):
        base = w.base(lib)
        versions = []
        for g in range(c):
            version = base
            for key, value in w.unions[g % len(w.unions)].items():
                version = lib.setter(version)(key, value)
            versions.append(version)
        return versions

    return Case("f(x)", {"f": lib.unioner(w.base(lib))}, make, w.pool_limit(lib))


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


def _json_patch(lib, w):
    """One ``replace`` operation on a top-level member, as a JSON Patch."""
    if lib.json_patcher is None:
        return None
    patches = [[{"op": "replace", "path": "/" + k, "value": v}] for k, v in w.updates]
    return Case("f(m, x)", {"f": lib.json_patcher, "m": w.base(lib)}, _fixed(patches), SAMPLE)


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


def bytes_per_item(lib: Library, w: Workload) -> Optional[float]:
    """Bytes a map of ``n`` items takes beyond its keys and values."""
    if not lib.traced:
        return None
    return _traced(lambda: lib.build(w.data)) / max(w.n, 1)


def bytes_per_version(lib: Library, w: Workload) -> Optional[float]:
    """Bytes per version in a history of single-key updates, all kept alive."""
    if not lib.traced:
        return None
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


def _history_versions(lib: Library, w: Workload) -> list:
    """The base map and the versions of :attr:`Workload.history`, each one
    update after the one before (fewer for copy-on-write peers at large n)."""
    count = len(w.history)
    if not lib.persistent:
        count = min(count, max(2, int(HISTORY_BYTES // max(64 * w.n, 1))))
    versions, m = [w.base(lib)], w.base(lib)
    for k, v in w.history[:count]:
        m = lib.setter(m)(k, v)
        versions.append(m)
    return versions


def history_pickle_per_version(lib: Library, w: Workload) -> Optional[float]:
    """Pickle bytes per version of an undo history (frozenmap: ``History``,
    which stores one version and diffs; the others: a list of versions)."""
    versions = _history_versions(lib, w)
    try:
        size = len(pickle.dumps(lib.history(versions), protocol=5))
    except Exception:  # a peer whose maps do not pickle
        return None
    return size / len(versions)


def history_loaded_per_version(lib: Library, w: Workload) -> Optional[float]:
    """Bytes per version that an unpickled undo history takes in memory."""
    if not lib.traced:
        return None
    try:
        data = pickle.dumps(lib.history(_history_versions(lib, w)), protocol=5)
    except Exception:
        return None
    count = len(pickle.loads(data))
    return _traced(lambda: pickle.loads(data)) / count


#: The benchmarked operations, in table order.
OPERATIONS = [
    Operation("construct", "construct from dict (per item)", "s", _construct),
    Operation("lookup_hit", "lookup, hit: m[k]", "s", _lookup_hit, asv_count=100),
    Operation("lookup_miss", "lookup, miss: k in m", "s", _lookup_miss, asv_count=100),
    Operation("iterate", "iterate items (per item)", "s", _iterate),
    Operation("set_existing", "set existing key", "s", _set_existing, asv_count=100),
    Operation("set_new", "set new key", "s", _set_new, asv_count=100),
    Operation("delete", "delete", "s", _delete, asv_count=100),
    Operation("union", "| with 10 keys", "s", _with("unioner", "unions"), asv_count=10),
    Operation("union_related", "a | b, b 10 edits away from a", "s", _union_related),
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
    Operation("json_patch", "JSON Patch, one replace", "s", _json_patch),
    Operation("mem_item", "memory per item", "B", measure=bytes_per_item),
    Operation("mem_version", "memory per version (history)", "B", measure=bytes_per_version),
    Operation(
        "history_pickle",
        "undo history: pickle per version",
        "B",
        measure=history_pickle_per_version,
    ),
    Operation(
        "history_loaded",
        "undo history: memory per version, unpickled",
        "B",
        measure=history_loaded_per_version,
    ),
]
OPERATION_KEYS = [op.key for op in OPERATIONS]
