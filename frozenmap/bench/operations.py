"""What is measured: the data for one size and the benchmarked operations.

An :class:`Operation` turns a library and a :class:`Workload` (the data set
for one size) into a :class:`Case`: a loop body such as ``m[x]`` or
``f(k, v)``, the names it uses, and the inputs it loops over.  Memory
operations measure bytes with :mod:`tracemalloc` instead (on PyPy, which has
no tracemalloc, with its garbage collector's count of live bytes).
"""

import gc
import pickle
import platform
import random
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from .peers import Library

#: Inputs prepared per operation (lookup keys, keys to set, ...); a pass over
#: them takes at most this many operations.
SAMPLE = 1000
#: Copy-on-write peers: at most this many items in a pool of derived versions.
POOL_ITEMS = 4_000_000
#: Copy-on-write peers (and every peer's pickled undo history): at most this many
#: bytes in the measured version history.
HISTORY_BYTES = 256 << 20
#: Random keys per pass of the cold lookup: more than the caches hold at n >= 100,000.
COLD = 200_000
#: Length of the version history behind "memory per version".
HISTORY = 1000
#: Peers' undo histories (a list of whole versions, pickled): at least this many
#: versions when :data:`UNDO_ITEMS` allows fewer (the keys, shared by every
#: version once unpickled, are then at most 1 % of a version's figure) ...
UNDO_VERSIONS = 100
#: ... and at most this many items in all their versions (besides :data:`HISTORY_BYTES`).
UNDO_ITEMS = 250_000
#: Key counts of the small maps a state tree is made of.
SMALL_SIZES = (1, 3, 8, 16, 32)
#: Small maps built, or versions derived from one, per memory measurement.
SMALL_COUNT = 1000
#: Todos in the nested reducer's state (state -> todos -> todo of 3 keys).
REDUCER_TODOS = 10_000
#: Actions prepared for the nested reducer (toggle, rename, add, delete).
REDUCER_ACTIONS = 1000
#: Copy-on-write peers: at most this many todos copied per timed pass of the reducer.
REDUCER_COPIED = 1_000_000
#: Leaves of the nested state the drafts rows edit: 256 maps of 20 maps of 20
#: leaves (about 100,000, and not the quick run's README size, which measures
#: the README's rows only).
NESTED_LEAVES = 102_400
#: Leaf changes per recipe in the "many" drafts rows.
NESTED_CHANGES = 1000


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
        #: ``(key,)``: distinct keys to delete one after the other (at most half the map).
        self.removals = [(k,) for k in list(dict.fromkeys(self.deletes))[: max(1, n // 2)]]
        #: Values for versions derived from the base, one per version.
        self.values = [n + 1 + i for i in range(SAMPLE)]
        #: Positions in insertion order (drawn last: the samples above stay as they were).
        self.positions = [rng.randrange(n) for _ in range(SAMPLE)] if n else []
        self._bases: Dict[tuple, Any] = {}
        self._reducer: Optional[Reducer] = None
        self._nested: Optional[Nested] = None
        self._seed = seed
        self._cold: Optional[list] = None
        #: Each library's pickled undo history and its version count, made
        #: by ``history_pickle`` and used up by ``history_loaded``.
        self._undo: Dict[str, Tuple[bytes, int]] = {}

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
                m = self.derived(lib)
                hash(m)
            else:
                m = lib.build(self.data)
            self._bases[key] = m
        return self._bases[key]

    def derived(self, lib: Library):
        """A version of ``lib`` derived from :meth:`base` by one new key (a
        frozenmap version in tries, where the base is in the table form)."""
        key = (lib.name, "derived")
        if key not in self._bases:
            self._bases[key] = lib.setter(self.base(lib))("derived version", 0)
        return self._bases[key]

    def reducer(self) -> "Reducer":
        """The nested reducer's data and actions (built on first use)."""
        if self._reducer is None:
            self._reducer = Reducer(self.n)
        return self._reducer

    def nested(self, lib: Library) -> Tuple["Nested", Any]:
        """The drafts rows' nested state: its data, and ``lib``'s state (built on first use)."""
        if self._nested is None:
            self._nested = Nested(NESTED_LEAVES)
        key = (lib.name, "nested")
        if key not in self._bases:
            self._bases[key] = self._nested.build(lib)
        return self._nested, self._bases[key]

    def reducer_base(self, lib: Library):
        """``lib``'s initial reducer state."""
        key = (lib.name, "reducer")
        if key not in self._bases:
            self._bases[key] = self.reducer().build(lib)
        return self._bases[key]

    def cold_keys(self) -> list:
        """:data:`COLD` keys drawn at random (with repeats) over the whole map."""
        if self._cold is None:
            rng = random.Random(self._seed + 1)
            keys = list(self.data)
            self._cold = [keys[i] for i in rng.choices(range(self.n), k=COLD)] if self.n else []
        return self._cold

    def forget(self, lib: Library) -> None:
        """Drop the maps cached for ``lib``."""
        for key in [k for k in self._bases if k[0] == lib.name]:
            del self._bases[key]
        self._undo.pop(lib.name, None)

    def pool_limit(self, lib: Library) -> int:
        """How many derived versions of ``lib`` a pool may hold."""
        return SAMPLE if lib.persistent else max(1, min(SAMPLE, POOL_ITEMS // max(self.n, 1)))


class Reducer:
    """The use case frozenmap exists for: a reducer over nested state, every state kept.

    The state is ``{"filter": "all", "todos": {id: {"id", "title", "done"}}}``
    with ``todos`` todos; each action toggles a todo's ``done``, renames it,
    adds a new todo or deletes one (a quarter each, drawn with a fixed seed
    against the live ids), and returns the next state.  Strings, ints and the
    dicts new todos are built from exist beforehand, so memory figures count
    the maps only.
    """

    TOGGLE, RENAME, ADD, DELETE = "toggle", "rename", "add", "delete"

    def __init__(self, todos: int, actions: int = REDUCER_ACTIONS, seed: int = 814):
        rng = random.Random(seed)
        self.todos = {
            "todo%d" % i: {"id": i, "title": "task %d" % i, "done": False} for i in range(todos)
        }
        live = list(self.todos)
        self.actions: List[tuple] = []
        for j in range(actions):
            kind = rng.choice((self.TOGGLE, self.RENAME, self.ADD, self.DELETE))
            if not live or kind == self.ADD:
                key = "todo%d" % (todos + j)
                self.actions.append(
                    (self.ADD, key, {"id": todos + j, "title": "new %d" % j, "done": False})
                )
                live.append(key)
            elif kind == self.DELETE:
                i = rng.randrange(len(live))
                live[i], live[-1] = live[-1], live[i]
                self.actions.append((self.DELETE, live.pop(), None))
            else:
                arg = "renamed %d" % j if kind == self.RENAME else None
                self.actions.append((kind, rng.choice(live), arg))

    def build(self, lib: Library):
        """``lib``'s initial state: maps all the way down."""
        todos = lib.build({key: lib.build(todo) for key, todo in self.todos.items()})
        return lib.build({"filter": "all", "todos": todos})

    def stepper(self, lib: Library) -> Callable[[Any, tuple], Any]:
        """``step(state, action)`` -> the next state, through ``lib``'s native calls."""
        build, setter, deleter = lib.build, lib.setter, lib.deleter
        toggle, delete, add = self.TOGGLE, self.DELETE, self.ADD

        def step(state, action):
            kind, key, arg = action
            todos = state["todos"]
            if kind == delete:
                todos = deleter(todos)(key)
            elif kind == add:
                todos = setter(todos)(key, build(arg))
            else:
                todo = todos[key]
                if kind == toggle:
                    todo = setter(todo)("done", not todo["done"])
                else:
                    todo = setter(todo)("title", arg)
                todos = setter(todos)(key, todo)
            return setter(state)("todos", todos)

        return step


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
    #: Every pass loops over all ``limit`` inputs, whatever the run's target:
    #: the size of the working set is what is measured (cold lookups).
    whole: bool = False
    #: The cyclic GC stays on while timed (every other case times with it
    #: off, as ``timeit`` does): what a program keeping every version pays
    #: for the collector's passes over them.
    gc: bool = False

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
    #: The sizes this operation is measured at, whatever the run's sizes
    #: (small maps; the nested reducer); None: the run's sizes.
    sizes: Optional[Tuple[int, ...]] = None
    #: The heading of the group of rows it opens in the tables ("": none).
    section: str = ""


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


def _lookup_cold(lib, w):
    if w.n == 0:
        return None
    keys = w.cold_keys()
    return Case("m[x]", {"m": w.base(lib)}, _fixed(keys), len(keys), whole=True)


def _iterate(lib, w):
    return Case("for item in x.items(): pass", {}, _repeat(w.base(lib)), SAMPLE, scale=max(w.n, 1))


def _build_first(lib, w):
    """A map built from a dict, then one key set: the table form's first
    derivation builds its tries."""
    key, value = w.updates[0]
    build, setter = lib.build, lib.setter

    def build_and_set(data):
        return setter(build(data))(key, value)

    return Case("f(x)", {"f": build_and_set}, _repeat(w.data), SAMPLE, scale=max(w.n, 1))


def _lookup_hit_derived(lib, w):
    return Case("m[x]", {"m": w.derived(lib)}, _fixed(w.hits), SAMPLE)


def _iterate_derived(lib, w):
    return Case(
        "for item in x.items(): pass", {}, _repeat(w.derived(lib)), SAMPLE, scale=max(w.n, 1)
    )


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


def _item_at(lib, w):
    if w.n == 0:
        return None
    return Case("f(x)", {"f": lib.positioner(w.base(lib))}, _fixed(w.positions), SAMPLE)


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


def _traced(make: Callable[[], Any], peak: bool = False) -> float:
    """Bytes still allocated after ``make()`` (which keeps what it builds alive).

    With ``peak``, the most bytes allocated at any moment during ``make()``
    instead (a builder's temporaries included).

    On PyPy: :func:`_pypy_kept` (what is kept; PyPy has no peak figure).  On CPython:

    The garbage collector stays out of the measured window: objects that
    exist beforehand are frozen (``gc.freeze``), so garbage left by earlier
    work is not freed inside it, and collections are off while ``make()``
    runs.  With a large workload alive, collections walk millions of objects
    (pyrsistent's vectors traverse every element: one collection after a
    1,000-version history at n = 100,000 takes ~20 s).  None of the measured
    libraries leaves cyclic garbage behind (a collection after ``make()``
    frees nothing), so the figure is what ``make()`` keeps.
    """
    if ON_PYPY:
        return _pypy_kept(make)
    import tracemalloc

    enabled = gc.isenabled()
    gc.disable()
    gc.freeze()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = make()
        after = tracemalloc.get_traced_memory()[1 if peak else 0]
    finally:
        tracemalloc.stop()
        gc.unfreeze()
        if enabled:
            gc.enable()
    del kept
    return float(after - before)


ON_PYPY = platform.python_implementation() == "PyPy"
#: How memory is measured, for the report.
MEMORY_BY = "PyPy's GC (live bytes between full collections)" if ON_PYPY else "tracemalloc"


def _pypy_live_bytes() -> int:
    """Bytes PyPy's GC holds for live objects, right after a full collection."""
    gc.collect()
    gc.collect()  # a second pass frees what the first one's finalizers released
    # (get_stats() formats its figures as text; its _s holds the raw counts.)
    return int(gc.get_stats()._s.total_gc_memory)  # type: ignore[attr-defined]


def _pypy_kept(make: Callable[[], Any]) -> float:
    """PyPy: growth of the live heap across ``make()``, between full collections.

    Objects are only freed by collections, and PyPy's are cheap (no walk over
    old objects that did not change), so a collection on each side measures
    what ``make()`` keeps, with the page-level rounding of PyPy's arenas as the
    noise (a few KiB; the figure is per item or per version of many).
    """
    before = _pypy_live_bytes()
    kept = make()
    after = _pypy_live_bytes()
    del kept
    return float(after - before)


def bytes_per_item(lib: Library, w: Workload) -> Optional[float]:
    """Bytes a map of ``n`` items takes beyond its keys and values."""
    if not lib.traced:
        return None
    lib.build(w.data)  # warm up: a first build in a process allocates caches too
    return _traced(lambda: lib.build(w.data)) / max(w.n, 1)


def _history(
    lib: Library, make: Callable[[List[Any]], None], probe_count: int, count: int
) -> float:
    """Bytes per version kept by ``make(kept)``, which fills the list ``kept``.

    The list is allocated outside the measured window.  A probe of
    ``probe_count`` versions bounds ``count`` so that the history of a
    copy-on-write peer stays under :data:`HISTORY_BYTES`.
    """

    def traced(c):
        kept = [None] * c
        return _traced(lambda: make(kept))

    probe = traced(probe_count) / probe_count
    count = min(count, max(probe_count, int(HISTORY_BYTES // max(probe, 1.0))))
    return probe if count == probe_count else traced(count) / count


def _chain(derive: str, edits: str):
    """Bytes per version in a chain of derivations ``lib.<derive>(m)(*edit)``, all kept."""

    def measure(lib: Library, w: Workload) -> Optional[float]:
        if not lib.traced:
            return None
        base, make_derive = w.base(lib), getattr(lib, derive)
        chosen = getattr(w, edits)

        def make(kept):
            m = base
            for i, edit in enumerate(chosen[: len(kept)]):
                m = kept[i] = make_derive(m)(*edit)

        return _history(lib, make, 1, len(chosen))

    return measure


def _small_maps(derived: bool):
    """Bytes of one map of n keys (``derived``: of one version derived by a set).

    :data:`SMALL_COUNT` maps built from the same dict (or versions derived
    from the same map, each setting one existing key to a new value), all
    kept, divided by their count.
    """

    def measure(lib: Library, w: Workload) -> Optional[float]:
        if not lib.traced or not w.n:
            return None
        if derived:
            f, key = lib.setter(w.base(lib)), "key%d" % (w.n // 2)
            inputs = [(key, v) for v in w.values[:SMALL_COUNT]]
        else:
            f, inputs = lib.build, [(w.data,)] * SMALL_COUNT

        def make(kept):
            for i, args in enumerate(inputs):
                kept[i] = f(*args)

        return _history(lib, make, SMALL_COUNT, SMALL_COUNT)

    return measure


def _build_peak(lib: Library, w: Workload) -> Optional[float]:
    """Peak bytes per item while building the map from a dict (what it keeps: mem_item)."""
    if not lib.traced:
        return None
    lib.build(w.data)  # warm up, as for bytes_per_item
    return _traced(lambda: lib.build(w.data), peak=True) / max(w.n, 1)


def _reducer_case(lib: Library, w: Workload, collect: bool = False) -> Case:
    """One action of the nested reducer, every state kept (reset before each
    pass); with ``collect``, the cyclic GC on while timed."""
    r = w.reducer()
    base, history = w.reducer_base(lib), []
    limit = len(r.actions)
    if not lib.persistent:  # each action copies the todos
        limit = max(1, min(limit, REDUCER_COPIED // max(w.n, 1)))

    def inputs(c):
        history[:] = [base]
        return r.actions[:c]

    body = "k.append(f(k[-1], x))"
    return Case(body, {"f": r.stepper(lib), "k": history}, inputs, limit, consumes=True, gc=collect)


def _reducer_gc_case(lib: Library, w: Workload) -> Case:
    """The nested reducer with the cyclic GC on, as a program runs."""
    return _reducer_case(lib, w, collect=True)


def _reducer_memory(lib: Library, w: Workload) -> Optional[float]:
    """Bytes per action of the nested reducer's history, every state kept."""
    if not lib.traced:
        return None
    r = w.reducer()
    base, step = w.reducer_base(lib), r.stepper(lib)

    def make(kept):
        state = base
        for i, action in enumerate(r.actions[: len(kept)]):
            state = kept[i] = step(state, action)

    return _history(lib, make, 1, len(r.actions))


def _history_versions(lib: Library, w: Workload) -> list:
    """The base map and the versions of :attr:`Workload.history`, each one
    update after the one before (fewer at large n for every library but
    frozenmap: their history pickles as a list of whole versions, and
    unpickles as as many unshared copies -- 1,000 versions of 100,000 keys
    took ~20 GB -- so at most :data:`HISTORY_BYTES`, and at most
    :data:`UNDO_ITEMS` items unless that leaves fewer than
    :data:`UNDO_VERSIONS` versions)."""
    count = len(w.history)
    if not lib.is_frozenmap:
        by_bytes = max(2, int(HISTORY_BYTES // max(64 * w.n, 1)))
        by_items = max(UNDO_VERSIONS, UNDO_ITEMS // max(w.n, 1))
        count = min(count, by_bytes, by_items)
    versions, m = [w.base(lib)], w.base(lib)
    for k, v in w.history[:count]:
        m = lib.setter(m)(k, v)
        versions.append(m)
    return versions


def _pickled_history(lib: Library, w: Workload) -> Optional[Tuple[bytes, int]]:
    """``lib``'s undo history pickled, and its number of versions; None for a
    peer whose maps do not pickle.  Made once per library: ``history_pickle``
    leaves it for ``history_loaded``, which takes it."""
    if lib.name not in w._undo:
        versions = _history_versions(lib, w)
        try:
            data = pickle.dumps(lib.history(versions), protocol=5)
        except Exception:  # a peer whose maps do not pickle
            return None
        w._undo[lib.name] = (data, len(versions))
    return w._undo[lib.name]


def history_pickle_per_version(lib: Library, w: Workload) -> Optional[float]:
    """Pickle bytes per version of an undo history (frozenmap: ``History``,
    which stores one version and diffs; the others: a list of versions)."""
    pickled = _pickled_history(lib, w)
    if pickled is None:
        return None
    data, count = pickled
    if not lib.traced:  # history_loaded has no figure for it: nothing to keep
        w._undo.pop(lib.name, None)
    return len(data) / count


def history_loaded_per_version(lib: Library, w: Workload) -> Optional[float]:
    """Bytes per version that an unpickled undo history takes in memory."""
    if not lib.traced:
        return None
    pickled = _pickled_history(lib, w)
    w._undo.pop(lib.name, None)
    if pickled is None:
        return None
    data, count = pickled
    return _traced(lambda: pickle.loads(data)) / count


class Nested:
    """Nested state three levels deep, for the drafts rows: ``leaves // 400`` top
    maps of 20 maps of 20 int leaves (102,400 leaves: 256 x 20 x 20).

    ``paths`` are leaf paths drawn with a fixed seed (the one-change rows
    take one each); ``batches`` are groups of :data:`NESTED_CHANGES` of them,
    each path with a new value (the many-change rows take one group each).
    """

    def __init__(self, leaves: int, seed: int = 814):
        rng = random.Random(seed)
        tops = max(1, leaves // 400)
        self.data = {
            "k%d" % i: {"j%d" % j: {"x%d" % x: x for x in range(20)} for j in range(20)}
            for i in range(tops)
        }

        def path():
            return (
                "k%d" % rng.randrange(tops),
                "j%d" % rng.randrange(20),
                "x%d" % rng.randrange(20),
            )

        self.paths = [path() + (-1 - i,) for i in range(SAMPLE)]
        self.batches = [[path() + (-1 - i,) for i in range(NESTED_CHANGES)] for _ in range(8)]

    def build(self, lib: Library):
        """``lib``'s state: maps all the way down."""
        return lib.build(
            {
                top: lib.build({mid: lib.build(leaves) for mid, leaves in middle.items()})
                for top, middle in self.data.items()
            }
        )


def _path_setter(lib: Library) -> Callable[[Any, Any, Any, Any, Any], Any]:
    """``f(state, a, b, c, value)``: ``state`` with the leaf at ``(a, b, c)`` set,
    by the library's own path call (frozenmap's ``set_in``, pyrsistent's
    ``transform``), or else by a ``set`` at each level."""
    if lib.is_frozenmap:
        return lambda s, a, b, c, v: s.set_in((a, b, c), v)
    if lib.name == "pyrsistent":
        return lambda s, a, b, c, v: s.transform((a, b, c), v)

    def chain(s, a, b, c, v):
        top = s[a]
        return lib.setter(s)(a, lib.setter(top)(b, lib.setter(top[b])(c, v)))

    return chain


def _one_change(lib, w):
    """One leaf changed at depth 3, by the library's path call."""
    nested, state = w.nested(lib)
    return Case(
        "f(s, a, b, c, v)",
        {"f": _path_setter(lib), "s": state},
        _fixed(nested.paths),
        SAMPLE,
        target="a, b, c, v",
    )


def _draft_case(patches: bool, many: bool):
    """frozenmap's ``produce`` (``produce_with_patches``) changing one leaf at
    depth 3, or a group of :data:`NESTED_CHANGES` leaves in one recipe."""

    def case(lib, w):
        if not lib.is_frozenmap:
            return None
        from frozenmap.drafts import produce, produce_with_patches

        nested, state = w.nested(lib)
        run = produce_with_patches if patches else produce

        if many:

            def changes(group):
                def recipe(draft):
                    for a, b, c, v in group:
                        draft[a][b][c] = v

                return run(state, recipe)

            return Case("f(x)", {"f": changes}, _fixed(nested.batches), len(nested.batches))

        def one(a, b, c, v):
            def recipe(draft):
                draft[a][b][c] = v

            return run(state, recipe)

        return Case("f(a, b, c, v)", {"f": one}, _fixed(nested.paths), SAMPLE, target="a, b, c, v")

    return case


def _many_path_sets(lib, w):
    """A group of :data:`NESTED_CHANGES` leaf changes as a chain of path calls."""
    nested, state = w.nested(lib)
    set_path = _path_setter(lib)

    def changes(group):
        s = state
        for a, b, c, v in group:
            s = set_path(s, a, b, c, v)
        return s

    return Case("f(x)", {"f": changes}, _fixed(nested.batches), len(nested.batches))


def _many_builders(lib, w):
    """A group of :data:`NESTED_CHANGES` leaf changes with one builder per
    changed map (frozenmap's Evolvers, pyrsistent's evolvers, the others'
    mutable builders), each level frozen into the one above."""
    nested, state = w.nested(lib)
    thaw, freeze = lib.thaw, lib.freeze

    def changes(group):
        tops: Dict[Any, Any] = {}
        middles: Dict[Any, Any] = {}
        for a, b, c, v in group:
            leaves = middles.get((a, b))
            if leaves is None:
                leaves = middles[(a, b)] = thaw(state[a][b])
            leaves[c] = v
        for (a, b), leaves in middles.items():
            top = tops.get(a)
            if top is None:
                top = tops[a] = thaw(state[a])
            top[b] = freeze(leaves)
        root = thaw(state)
        for a, top in tops.items():
            root[a] = freeze(top)
        return freeze(root)

    return Case("f(x)", {"f": changes}, _fixed(nested.batches), len(nested.batches))


#: The benchmarked operations, in table order.
OPERATIONS = [
    Operation(
        "construct",
        "construct from dict (per item)",
        "s",
        _construct,
        section="built once and read: a map built from a dict, never derived from",
    ),
    Operation("lookup_hit", "lookup, hit: m[k]", "s", _lookup_hit, asv_count=100),
    Operation("lookup_miss", "lookup, miss: k in m", "s", _lookup_miss, asv_count=100),
    Operation(
        "lookup_cold",
        "lookup, cold: %s random keys" % format(COLD, ","),
        "s",
        _lookup_cold,
        asv_count=COLD,
    ),
    Operation("iterate", "iterate items (per item)", "s", _iterate),
    Operation("hash_fresh", "hash(), fresh", "s", _hash(False)),
    Operation("mem_item", "memory per item", "B", measure=bytes_per_item),
    Operation("mem_build_peak", "construction's peak memory per item", "B", measure=_build_peak),
    Operation("build_first", "construct, then one set (per item)", "s", _build_first),
    Operation(
        "lookup_hit_derived",
        "lookup, hit, in a derived version",
        "s",
        _lookup_hit_derived,
        asv_count=100,
        section="versions: derived from one another, kept",
    ),
    Operation("iterate_derived", "iterate items of a derived version", "s", _iterate_derived),
    Operation("item_at", "item at a random position", "s", _item_at, asv_count=100),
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
    Operation("hash_derived", "hash(), derived version", "s", _hash(True)),
    Operation("pickle", "pickle round trip", "s", _pickle),
    Operation("json_patch", "JSON Patch, one replace", "s", _json_patch),
    Operation(
        "mem_version", "memory per version (history)", "B", measure=_chain("setter", "history")
    ),
    Operation(
        "mem_version_new",
        "memory per version, set new (history)",
        "B",
        measure=_chain("setter", "inserts"),
    ),
    Operation(
        "mem_version_delete",
        "memory per version, delete (history)",
        "B",
        measure=_chain("deleter", "removals"),
    ),
    Operation(
        "mem_small",
        "small map: memory of one map",
        "B",
        measure=_small_maps(False),
        sizes=SMALL_SIZES,
        section="small maps and the use cases",
    ),
    Operation(
        "mem_small_version",
        "small map: memory of a derived version",
        "B",
        measure=_small_maps(True),
        sizes=SMALL_SIZES,
    ),
    Operation(
        "reducer",
        "nested reducer: one action (10,000 todos)",
        "s",
        _reducer_case,
        asv_count=100,
        sizes=(REDUCER_TODOS,),
    ),
    Operation(
        "reducer_gc",
        "nested reducer: one action, GC on",
        "s",
        _reducer_gc_case,
        asv_count=100,
        sizes=(REDUCER_TODOS,),
    ),
    Operation(
        "mem_reducer",
        "nested reducer: history memory per action",
        "B",
        measure=_reducer_memory,
        sizes=(REDUCER_TODOS,),
    ),
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
    Operation(
        "nested_set_in",
        "nested 102,400 leaves: 1 change at depth 3, path set",
        "s",
        _one_change,
        asv_count=100,
        sizes=(NESTED_LEAVES,),
    ),
    Operation(
        "nested_produce",
        "nested: 1 change at depth 3, produce",
        "s",
        _draft_case(patches=False, many=False),
        asv_count=100,
        sizes=(NESTED_LEAVES,),
    ),
    Operation(
        "nested_produce_patches",
        "nested: 1 change at depth 3, produce_with_patches",
        "s",
        _draft_case(patches=True, many=False),
        asv_count=100,
        sizes=(NESTED_LEAVES,),
    ),
    Operation(
        "nested_many_set_in",
        "nested: 1,000 changes, chained path sets",
        "s",
        _many_path_sets,
        sizes=(NESTED_LEAVES,),
    ),
    Operation(
        "nested_many_builders",
        "nested: 1,000 changes, a builder per changed map",
        "s",
        _many_builders,
        sizes=(NESTED_LEAVES,),
    ),
    Operation(
        "nested_many_produce",
        "nested: 1,000 changes, one produce",
        "s",
        _draft_case(patches=False, many=True),
        sizes=(NESTED_LEAVES,),
    ),
    Operation(
        "nested_many_patches",
        "nested: 1,000 changes, one produce_with_patches",
        "s",
        _draft_case(patches=True, many=True),
        sizes=(NESTED_LEAVES,),
    ),
]
OPERATION_KEYS = [op.key for op in OPERATIONS]
