"""Allocation-failure sweeps: every operation, failing at every allocation.

``_testcapi.set_nomemory(start, stop)`` makes the allocators fail from
allocation number ``start + 1`` on (``stop=0``), or only allocation number
``start + 1`` (``stop=start + 1``); ``_testcapi.remove_mem_hooks()`` ends it.
Each case below builds its maps (outside the window), then runs one operation
with ``start`` = 0, 1, 2, ... until it succeeds without hitting the limit: that
``start`` is the number of allocation points the operation has.  Then each
point is failed alone.  (The pure core: single failures only, see
``Sweep.run``.)  After every attempt:

- the operation raised ``MemoryError`` or returned what it returns without the
  hook (anything else -- ``SystemError``, a wrong result -- fails the test; a
  crash kills the run);
- every version built beforehand holds the very same (key, value) objects in
  the same order and passes ``_check()``, and so does the result;
- an Evolver that failed holds exactly what it held before and passes
  ``_check()`` (both cores; ``test_pure_evolver_write_phase`` sweeps every
  point of the pure core's write phase); one that succeeded holds what it
  does without the hook;
- the reference counts of every key and value come back: to what they were
  before the attempt when it failed (unless an Evolver kept a path it
  copied), to what they were before the case was
  built once everything is dropped (so an error path leaks nothing and frees
  nothing it does not own);
- nothing was reported to ``sys.unraisablehook`` (an error swallowed in a
  destructor).

``set_nomemory`` fails the C allocators (raw, mem and object domains), so it
mostly exercises the C core; the pure core runs the same cases (a
``MemoryError`` can then come out of any bytecode of the core), sampled,
because its operations allocate hundreds of times.

Between ``set_nomemory`` and ``remove_mem_hooks`` only the operation runs (and
one ``except``); expectations, arguments and snapshots are made before, checks
after, with the cyclic GC paused so that no unrelated finalizer runs in the
window.  The operations are single calls into the core: Python code that fails
to allocate trips CPython 3.11's own debug assertions (a list comprehension
failing from some allocation on aborts python3.11d with ``STACK_LEVEL() == 0``).

Time: the C core is always swept at every point (a few seconds in all).  The
pure core is sampled by default (``_SAMPLE_POINTS`` points spread over each
operation, ~6 s); ``FROZENMAP_NOMEMORY=full`` fails every one of its points
too (minutes: a deliberate run), ``FROZENMAP_NOMEMORY=off`` skips the module.

Findings that are CPython's, not the cores' (the checks allow for them on
the pure core only, which runs Python code in the window): see
``_cpython_failure`` and ``Sweep.run``.
"""

import gc
import os
import pickle
import sys

import operations as registry
import pytest
from fault_helpers import M61, same_items

if sys.implementation.name != "cpython":  # PyPy's _testcapi stub needs a C compiler to import
    pytest.skip("the sweep needs CPython's _testcapi (set_nomemory)", allow_module_level=True)
_testcapi = pytest.importorskip("_testcapi", reason="the sweep needs CPython's _testcapi")
if not hasattr(_testcapi, "set_nomemory"):  # pragma: no cover - very old or unusual builds
    pytest.skip("_testcapi has no set_nomemory", allow_module_level=True)

MODE = os.environ.get("FROZENMAP_NOMEMORY", "sample")
if MODE not in ("full", "sample", "off"):
    raise ValueError("FROZENMAP_NOMEMORY must be full, sample or off, not %r" % (MODE,))
if MODE == "off":
    pytest.skip("FROZENMAP_NOMEMORY=off", allow_module_level=True)

_SAMPLE_POINTS = 40
"""Points failed per pure-core case in a sampled sweep."""

_FAILED = object()
"""What an attempt returns when the operation raised MemoryError."""


def _attempt(op, start, stop):
    """Run ``op()`` with allocations ``start+1`` .. ``stop`` (0: all) failing.

    Kept minimal: nothing but the operation runs while the hook is installed.
    """
    # This frame's frame object, made now: a frame that returns to this one
    # with an exception would otherwise allocate it, and CPython 3.11-3.13
    # lose the exception in flight when that fails (see _cpython_failure).
    here = sys._getframe()
    gc.disable()
    _testcapi.set_nomemory(start, stop)
    try:
        result = op()
    except MemoryError:
        result = _FAILED
    except (SystemError, RuntimeError) as exc:
        result = exc  # judged by the caller, outside the window
    finally:
        _testcapi.remove_mem_hooks()
        gc.enable()
    del here
    if isinstance(result, BaseException):
        result.__traceback__ = None
    return result


_PURE_CORE_CRASHES_CPYTHON = sys.version_info >= (3, 12)
"""CPython 3.12 and 3.13 themselves crash when single allocations fail inside
Python code: ``", ".join("%r: %r" % item for item in generator())`` (the pure
core's repr, with no frozenmap involved) segfaults in the next gc.collect().
So the pure core is swept on 3.10 and 3.11 only (the main run is 3.11)."""


def _skip_pure_core_here(core):
    if core.name == "python" and _PURE_CORE_CRASHES_CPYTHON:
        pytest.skip(
            "CPython %d.%d crashes in its own code under these faults" % sys.version_info[:2]
        )


def _cpython_failure(core, exc):
    """Whether ``exc`` is how CPython itself (not the core) reported a failed
    allocation.

    - ``SystemError: error return without exception set`` (or ``... returned
      NULL without setting an exception``): CPython 3.11-3.13 (not 3.10) lose
      the exception in flight when an allocation fails while a frame unwinds
      (a frame object made for the traceback: python/cpython#131173); plain
      Python functions that raise show it, and the pure core unwinds through
      many frames.
    - ``RuntimeError: can't allocate lock``: ``threading.RLock()`` (each pure
      Evolver has one) and the import lock (pickle imports the reconstructor
      on 3.10) report a failed allocation this way; the C core allocates no
      lock of its own, so this always comes from CPython.
    """
    message = str(exc)
    if type(exc) is RuntimeError and message == "can't allocate lock":
        return True  # (also the import lock, when unpickling imports: any core)
    lost = ("error return without exception set", "returned NULL without setting an exception")
    return core.name == "python" and type(exc) is SystemError and message.endswith(lost)


# --- the objects the cases are built from ------------------------------------------------------


class Pool:
    """Keys and values made at run time (so their reference counts are their own).

    ``keys``: 1200 distinct strings.  ``coll``: integers that all hash to 7
    (CPython hashes integers modulo 2**61-1), so they share a collision node;
    ``near``: integers hashing to 7 + 32*i, sharing the root digit of ``coll``
    but not the full hash.  ``values``: strings.
    """

    def __init__(self):
        self.keys = ["k%d" % i for i in range(1200)]
        self.coll = [7 + j * M61 for j in range(1, 7)]
        self.near = [7 + 32 * i + M61 for i in range(1, 5)]
        self.values = ["v%d" % i for i in range(1200)]
        self.new_values = ["w%d" % i for i in range(200)]
        self.all = self.keys + self.coll + self.near + self.values + self.new_values
        assert len({hash(k) for k in self.coll}) == 1

    def items(self, n, start=0):
        return [(self.keys[i], self.values[i]) for i in range(start, start + n)]

    def coll_items(self, n=4):
        return [(self.coll[i], self.values[100 + i]) for i in range(n)]

    def refcounts(self):
        return [sys.getrefcount(o) for o in self.all]


class Scenario:
    """What one attempt runs and checks.

    ``op``: the operation (no arguments).  ``versions``: frozendicts and
    evolvers that the operation must leave as they are.  ``evolver``: the
    Evolver the operation edits (unchanged on failure, as without the hook on
    success), or None.
    """

    def __init__(self, op, versions=(), evolver=None):
        self.op = op
        self.versions = list(versions)
        self.evolver = evolver


CASES = {}


def case(fn):
    CASES[fn.__name__[len("case_") :]] = fn
    return fn


def _base(c, p, n=40, coll=0):
    return c.frozendict(p.items(n) + p.coll_items(coll))


# construction


@case
def case_construct_dict_small(c, p):
    src = dict(p.items(5))
    return Scenario(lambda: c.frozendict(src))


@case
def case_construct_dict(c, p):
    src = dict(p.items(200))
    return Scenario(lambda: c.frozendict(src))


@case
def case_construct_dict_large(c, p):
    src = dict(p.items(1100))
    return Scenario(lambda: c.frozendict(src))


@case
def case_construct_pairs(c, p):
    src = p.items(40) + p.coll_items(4)
    return Scenario(lambda: c.frozendict(src))


@case
def case_construct_pairs_duplicates(c, p):
    src = p.items(20) + [(k, p.new_values[i]) for i, (k, _) in enumerate(p.items(10))]
    return Scenario(lambda: c.frozendict(src))


@case
def case_construct_kwargs(c, p):
    src = dict(p.items(20))
    return Scenario(lambda: c.frozendict(**src))


@case
def case_construct_dict_and_kwargs(c, p):
    src = dict(p.items(20))
    kw = dict(p.items(10, 15))
    return Scenario(lambda: c.frozendict(src, **kw))


@case
def case_construct_frozendict(c, p):
    m = _base(c, p)
    return Scenario(lambda: c.frozendict(m), [m])


@case
def case_construct_collisions(c, p):
    src = dict(p.coll_items(6) + [(k, p.values[50]) for k in p.near])
    return Scenario(lambda: c.frozendict(src))


@case
def case_fromkeys(c, p):
    src = p.keys[:40]
    return Scenario(lambda: c.frozendict.fromkeys(src, p.values[0]))


@case
def case_fromkeys_frozendict(c, p):
    m = _base(c, p, 20, coll=3)
    return Scenario(lambda: c.frozendict.fromkeys(m), [m])


@case
def case_evolver_constructor(c, p):
    src = dict(p.items(40) + p.coll_items(3))
    return Scenario(lambda: c.Evolver(src).freeze())


# derivations


@case
def case_set_new(c, p):
    m = _base(c, p)
    return Scenario(lambda: m.set(p.keys[100], p.values[100]), [m])


@case
def case_set_replace(c, p):
    m = _base(c, p)
    return Scenario(lambda: m.set(p.keys[17], p.new_values[17]), [m])


@case
def case_set_hashed(c, p):
    m = _base(c, p)
    hash(m)
    return Scenario(lambda: m.set(p.keys[100], p.values[100]), [m])


@case
def case_set_collision_new_node(c, p):
    m = _base(c, p, coll=1)
    return Scenario(lambda: m.set(p.coll[1], p.values[1]), [m])


@case
def case_set_collision_grow(c, p):
    m = _base(c, p, coll=3)
    return Scenario(lambda: m.set(p.coll[3], p.values[1]), [m])


@case
def case_set_collision_replace(c, p):
    m = _base(c, p, coll=3)
    return Scenario(lambda: m.set(p.coll[1], p.new_values[1]), [m])


@case
def case_set_near_collision(c, p):
    m = _base(c, p, 5, coll=3)
    return Scenario(lambda: m.set(p.near[0], p.values[1]), [m])


@case
def case_set_large(c, p):
    m = _base(c, p, 1100, coll=2)
    return Scenario(lambda: m.set(p.keys[1150], p.values[1150]).delete(p.keys[500]), [m])


@case
def case_delete(c, p):
    m = _base(c, p)
    return Scenario(lambda: m.delete(p.keys[20]), [m])


@case
def case_delete_collision_shrink(c, p):
    m = _base(c, p, coll=2)
    return Scenario(lambda: m.delete(p.coll[0]), [m])


@case
def case_delete_collision(c, p):
    m = _base(c, p, coll=4)
    return Scenario(lambda: m.delete(p.coll[2]), [m])


@case
def case_delete_missing(c, p):
    m = _base(c, p, 5, coll=2)

    def op():
        try:
            m.delete(p.coll[4])
        except KeyError:
            return "KeyError"

    return Scenario(op, [m])


@case
def case_discard(c, p):
    m = _base(c, p, coll=2)
    return Scenario(lambda: m.discard(p.keys[3]), [m])


@case
def case_discard_missing(c, p):
    m = _base(c, p, coll=2)
    return Scenario(lambda: m.discard(p.keys[150]), [m])


@case
def case_or_dict(c, p):
    m = _base(c, p, coll=2)
    other = dict(p.items(20, 30) + [(p.coll[1], p.new_values[0]), (p.coll[3], p.new_values[1])])
    return Scenario(lambda: m | other, [m])


@case
def case_or_frozendict(c, p):
    m = _base(c, p, 20)
    other = c.frozendict(p.items(20, 10))
    return Scenario(lambda: m | other, [m, other])


@case
def case_ror_dict(c, p):
    m = _base(c, p, 20, coll=2)
    other = dict(p.items(10, 15))
    return Scenario(lambda: other | m, [m])


@case
def case_or_large(c, p):
    m = _base(c, p, 1000, coll=2)
    other = dict(p.items(150, 900) + p.coll_items(4))
    return Scenario(lambda: m | other, [m])


@case
def case_sub(c, p):
    m = _base(c, p, coll=4)
    keys = p.keys[10:30] + p.coll[1:3] + [p.keys[150]]
    return Scenario(lambda: m - keys, [m])


@case
def case_and(c, p):
    m = _base(c, p, coll=4)
    keys = p.keys[10:20] + p.coll[2:5] + [p.keys[150]]
    return Scenario(lambda: m & keys, [m])


@case
def case_diff(c, p):
    m = _base(c, p, coll=3)
    m2 = (
        m.set(p.keys[3], p.new_values[3])
        .delete(p.keys[30])
        .delete(p.coll[1])
        .set(p.keys[120], p.values[1])
    )
    return Scenario(lambda: m.diff(m2), [m, m2])


@case
def case_diff_dict(c, p):
    m = _base(c, p, 20, coll=2)
    other = dict(p.items(15, 10))
    return Scenario(lambda: m.diff(other), [m])


# whole-map reads


@case
def case_hash(c, p):
    m = _base(c, p, coll=3)
    return Scenario(lambda: hash(m), [m])


@case
def case_eq_versions(c, p):
    m = _base(c, p, coll=3)
    m2 = m.set(p.keys[3], p.new_values[3]).set(p.keys[3], p.values[3])
    return Scenario(lambda: m == m2, [m, m2])


@case
def case_eq_collision_order(c, p):
    m = c.frozendict(p.coll_items(4) + p.items(10))
    m2 = c.frozendict(list(reversed(p.coll_items(4) + p.items(10))))
    return Scenario(lambda: m == m2, [m, m2])


@case
def case_eq_dict(c, p):
    m = _base(c, p, 20, coll=2)
    other = dict(p.items(20) + p.coll_items(2))
    return Scenario(lambda: m == other, [m])


@case
def case_repr(c, p):
    m = _base(c, p, 20, coll=2)
    return Scenario(lambda: repr(m), [m])


@case
def case_iterate_keys(c, p):
    m = _base(c, p, coll=2)
    return Scenario(lambda: list(m), [m])


@case
def case_iterate_items(c, p):
    m = _base(c, p, coll=2)
    return Scenario(lambda: list(m.items()), [m])


@case
def case_iterate_values_reversed(c, p):
    m = _base(c, p, coll=2)
    return Scenario(lambda: list(reversed(m.values())), [m])


@case
def case_reduce(c, p):
    m = _base(c, p, 20, coll=2)
    return Scenario(lambda: m.__reduce_ex__(2), [m])


@case
def case_unpickle(c, p):
    m = _base(c, p, 20, coll=2)
    data = pickle.dumps(m, 2)
    return Scenario(lambda: pickle.loads(data), [m])


@case
def case_copy_evolve_freeze(c, p):
    m = _base(c, p, 5)
    return Scenario(lambda: m.copy().evolve().freeze(), [m])


# the Evolver


def _fresh(c, p, **kw):
    m = _base(c, p, **kw)
    return m, m.evolve()


def _owned(c, p, **kw):
    """An evolver that has frozen once and edited its paths since (in place)."""
    m = _base(c, p, **kw)
    e = m.evolve()
    e[p.keys[180]] = p.values[180]
    frozen = e.freeze()
    for i in range(0, 40, 3):
        e[p.keys[i]] = p.new_values[i]
    del e[p.keys[1]]
    return [m, frozen], e


def _evolver_cases(name, op, arg=None, **kw):
    """Register ``op(e, p)`` on a fresh evolver and on one that owns its paths.

    With ``arg(c, p)``: ``op(e, p, arg(c, p))``, the argument built beforehand.
    """

    def bind(c, p, e):
        if arg is None:
            return lambda: op(e, p)
        a = arg(c, p)
        return lambda: op(e, p, a)

    def fresh(c, p):
        m, e = _fresh(c, p, **kw)
        return Scenario(bind(c, p, e), [m], e)

    def owned(c, p):
        versions, e = _owned(c, p, **kw)
        return Scenario(bind(c, p, e), versions, e)

    CASES["evolver_%s_fresh" % name] = fresh
    CASES["evolver_%s_owned" % name] = owned


def _setitem(e, k, v):
    e[k] = v


def _delitem(e, k):
    del e[k]


_evolver_cases("set_new", lambda e, p: _setitem(e, p.keys[100], p.values[100]))
_evolver_cases("set_replace", lambda e, p: _setitem(e, p.keys[12], p.values[77]))
_evolver_cases("set_collision_new_node", lambda e, p: _setitem(e, p.coll[1], p.values[9]), coll=1)
_evolver_cases("set_collision_grow", lambda e, p: _setitem(e, p.coll[3], p.values[9]), coll=3)
_evolver_cases("set_near_collision", lambda e, p: _setitem(e, p.near[1], p.values[9]), coll=3)
_evolver_cases("delete", lambda e, p: _delitem(e, p.keys[22]))
_evolver_cases("delete_collision_shrink", lambda e, p: _delitem(e, p.coll[1]), coll=2)
_evolver_cases("delete_collision", lambda e, p: _delitem(e, p.coll[0]), coll=4)
_evolver_cases("pop", lambda e, p: e.pop(p.keys[25]))
_evolver_cases("pop_missing", lambda e, p: e.pop(p.keys[199], None))
_evolver_cases("popitem", lambda e, p: e.popitem(), coll=2)
_evolver_cases("setdefault", lambda e, p: e.setdefault(p.keys[101], p.values[101]))
_evolver_cases("discard", lambda e, p: e.discard(p.coll[1]), coll=3)
_evolver_cases("set_method", lambda e, p: e.set(p.keys[101], p.values[2]))
_evolver_cases(
    "update_dict",
    lambda e, p, other: e.update(other),
    arg=lambda c, p: dict(p.items(20, 30) + [(p.coll[4], p.values[4])]),
    coll=3,
)
_evolver_cases(
    "update_pairs",
    lambda e, p, args: e.update(args[0], **args[1]),
    arg=lambda c, p: (p.items(10, 35), {p.keys[60]: p.values[61]}),
)
_evolver_cases(
    "update_frozendict",
    lambda e, p, other: e.update(other),
    arg=lambda c, p: c.frozendict(p.items(30, 30) + p.coll_items(4)),
    coll=2,
)
_evolver_cases("clear", lambda e, p: e.clear())
_evolver_cases("copy", lambda e, p: e.copy().freeze())
_evolver_cases("freeze", lambda e, p: e.freeze())


@case
def case_evolver_empty(c, p):
    e = c.Evolver()
    return Scenario(lambda: _setitem(e, p.keys[0], p.values[0]), [], e)


# every operation of the registry (tests/operations.py)


def _newest(*args):
    return args[-1]


POOL_ARGS = registry.role_table(
    registry.NOMEMORY,
    {
        "key": lambda c, p: p.keys[12],
        "value": lambda c, p: p.values[77],
        "pairs": lambda c, p: p.items(10, 35) + [(p.coll[4], p.values[4])],
        "mapping": lambda c, p: dict(p.items(10, 35)),
        "keys": lambda c, p: p.keys[5:15] + [p.coll[1]],
        "path": lambda c, p: [p.keys[12]],
        "fn": lambda c, p: _newest,
        "other": lambda c, p: dict(p.items(20, 30)),
        "version": lambda c, p: c.frozendict(p.items(20, 30) + p.coll_items(2)),
        "position": lambda c, p: -3,
        "span": lambda c, p: (1, -2),
    },
)
"""An operation's arguments by role, built before the window from the pool."""


def _registry_cases(entry):
    name = "registry %s" % entry.name

    def run(c, subject, args):
        return lambda: entry.call(c, subject, *args)

    if entry.on == "Evolver":
        for variant, make in (("fresh", _fresh), ("owned", _owned)):

            def case(c, p, make=make):
                versions, e = make(c, p, coll=3)
                args = registry.arguments(POOL_ARGS, entry, c, p)
                return Scenario(
                    run(c, e, args), versions if isinstance(versions, list) else [versions], e
                )

            CASES["%s (%s evolver)" % (name, variant)] = case
        return

    def case(c, p):
        if entry.in_python and _PURE_CORE_CRASHES_CPYTHON:
            pytest.skip(
                "%s is Python code, which CPython %d.%d crashes on under these faults"
                % (entry.name, *sys.version_info[:2])  # (see _PURE_CORE_CRASHES_CPYTHON)
            )
        m = _base(c, p, coll=3)
        args = registry.arguments(POOL_ARGS, entry, c, p)
        versions = [m] + [a for a in args if isinstance(a, c.frozendict)]
        return Scenario(run(c, m if entry.on == "frozendict" else c.frozendict, args), versions)

    case.singles_only = entry.stdlib_python
    CASES[name] = case


for _entry in registry.for_engine(registry.NOMEMORY):
    _registry_cases(_entry)


# --- the sweep ------------------------------------------------------------------------------------


def _snapshot(mapping):
    return list(mapping.items())


def _normalize(x):
    """A comparable picture of a result: maps as their type and item lists."""
    if hasattr(x, "items") and callable(x.items):
        return (type(x).__name__, [(k, _normalize(v)) for k, v in x.items()])
    if isinstance(x, tuple):
        return tuple(_normalize(v) for v in x)
    if isinstance(x, list):
        return [_normalize(v) for v in x]
    return x


def _check_all(x):
    if hasattr(x, "_check"):
        x._check()
    elif isinstance(x, tuple):
        for v in x:
            _check_all(v)


def _build_tries(core, versions):
    """Build each table version's tries (a cache the first operation that
    needs them builds once, kept by the version) before a baseline count."""
    for version in versions:
        if isinstance(version, core.frozendict) and len(version):
            version.key_at(0)


class Sweep:
    """Runs one case of one core and keeps its findings."""

    def __init__(self, core, name, evolver_atomic=None):
        self.core = core
        self.name = name
        # Both cores' Evolvers are failure-atomic (the pure core's since its
        # trie edits allocate first and then only store).
        self.evolver_atomic = True if evolver_atomic is None else evolver_atomic
        self.setup = CASES[name]
        # Python code in the window fails one point at a time (see run()): the
        # pure core's, or the standard library's that a case calls (both cores)
        self.singles_only = core.name == "python" or getattr(self.setup, "singles_only", False)
        self.pool = Pool()
        self.unraisable = []
        sc = self.setup(core, self.pool)
        result = sc.op()
        self.expected = _normalize(result)
        self.expected_evolver = _snapshot(sc.evolver) if sc.evolver is not None else None
        del sc, result

    def attempt(self, start, stop):
        """One attempt with its checks; returns whether the operation failed."""
        p = self.pool
        where = "%s core, %s, set_nomemory(%d, %d)" % (self.core.name, self.name, start, stop)
        before = p.refcounts()
        sc = self.setup(self.core, p)
        _build_tries(self.core, sc.versions)
        snaps = [_snapshot(v) for v in sc.versions]
        evolver_snap = _snapshot(sc.evolver) if sc.evolver is not None else None
        built = p.refcounts()

        result = _attempt(sc.op, start, stop)

        if isinstance(result, BaseException):
            if not _cpython_failure(self.core, result):
                raise AssertionError(
                    "%s: %s instead of MemoryError" % (where, type(result).__name__)
                ) from result
            result = _FAILED
        failed = result is _FAILED
        self._check_outcome(sc, snaps, evolver_snap, result, failed, where)
        del result
        if failed and sc.evolver is None:
            # (an evolver that failed may keep the path it copied: same items,
            # its own nodes, so the items' counts may grow until it is dropped)
            self._same_refcounts(built, p.refcounts(), where + ": after the failure")
        del sc, snaps, evolver_snap
        self._same_refcounts(before, p.refcounts(), where + ": once everything is dropped")
        return failed

    def _check_outcome(self, sc, snaps, evolver_snap, result, failed, where):
        if not failed:
            assert _normalize(result) == self.expected, "%s: wrong result %r" % (where, result)
            _check_all(result)
        for v, snap in zip(sc.versions, snaps):
            assert same_items(v.items(), snap), "%s: an earlier version changed" % where
            assert len(v) == len(snap), where
            v._check()
        if sc.evolver is not None and (self.evolver_atomic or not failed):
            sc.evolver._check()
            if failed:
                assert same_items(sc.evolver.items(), evolver_snap), (
                    "%s: the evolver changed" % where
                )
            else:
                assert _snapshot(sc.evolver) == self.expected_evolver, "%s: evolver wrong" % where

    def _same_refcounts(self, expected, actual, where):
        if actual != expected:
            gc.collect()  # a cycle made on the failure path (the pure core) is no leak
            actual = self.pool.refcounts()
        if actual != expected:
            changed = [
                "%r: %+d" % (o, a - e) for o, e, a in zip(self.pool.all, expected, actual) if a != e
            ]
            pytest.fail("%s: reference counts changed: %s" % (where, ", ".join(changed[:10])))

    def count_points(self):
        """How many allocations the operation makes: the smallest n for which
        failing allocation n+1 (and, in the C core, every one after it) does
        not stop it."""
        if not self.singles_only:
            n = 0
            while self.attempt(n, 0):
                n += 1
                assert n < 100000, "%s: still failing after 100000 allocations" % self.name
            return n
        # Python code: single failures only (see run()), bisected.
        hi = 1
        while self.attempt(hi, hi + 1):
            hi *= 2
        lo = hi // 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.attempt(mid, mid + 1):
                lo = mid
            else:
                hi = mid
        return hi

    def run(self):
        """Sweep the case; return its number of allocation points.

        The C core: every point, failing from there on (found while counting)
        and failing alone.  The pure core: each point failing alone, every
        point with FROZENMAP_NOMEMORY=full and _SAMPLE_POINTS of them spread
        over the operation otherwise.  ("From there on" is not used on Python
        code: CPython up to 3.13 loops forever when it cannot allocate the int
        it pushes while unwinding into a ``with`` or ``finally`` handler past
        offset 256 -- python/cpython#132508 -- so the pure core's ``with``
        blocks would hang the test instead of raising; and a Python frame that
        unwinds when its frame object cannot be allocated loses the exception
        -- python/cpython#131173 -- which python3.11d turns into an abort:
        ``copy.deepcopy``'s own frames do it on the C core too, so a case that
        calls the standard library's Python code (``singles_only``) fails every
        point alone on the C core.)
        """

        def hook(unraisable):
            self.unraisable.append(
                "%s: %r (%s %r)"
                % (
                    unraisable.exc_type.__name__,
                    unraisable.exc_value,
                    unraisable.err_msg,
                    unraisable.object,
                )
            )

        old_hook = sys.unraisablehook
        sys.unraisablehook = hook
        try:
            points = self.count_points()
            if self.core.name == "c" or MODE == "full":
                singles = range(points)
            else:
                singles = _spread(points, _SAMPLE_POINTS)
            for n in singles:
                self.attempt(n, n + 1)
        finally:
            sys.unraisablehook = old_hook
        assert not self.unraisable, "%s: errors in destructors: %s" % (
            self.name,
            self.unraisable[:5],
        )
        return points


def _spread(n, k):
    """About k points spread evenly over range(n), always including both ends."""
    if n <= k:
        return list(range(n))
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


POINTS = {}
"""Allocation points found per (core, case), for the summary line."""


@pytest.mark.parametrize("name", sorted(CASES))
def test_allocation_failures(core, name):
    _skip_pure_core_here(core)
    POINTS[core.name, name] = Sweep(core, name).run()


def test_sweep_reaches_the_cases(core):
    """The hook works here: building a frozendict under it fails."""
    pool = Pool()
    src = dict(pool.items(40))
    assert _attempt(lambda: core.frozendict(src), 0, 0) is _FAILED
    assert len(core.frozendict(src)) == 40


def test_pure_evolver_write_phase(core):
    """The pure core's Evolver edits are failure-atomic: an allocation failing
    between the key-trie and the order-trie edit, or inside an in-place node
    edit, leaves the Evolver as it was (its trie edits allocate first and then
    only store; the first edit is undone when the second fails)."""
    if core.name != "python":
        pytest.skip("the C core's Evolver is swept by test_allocation_failures")
    _skip_pure_core_here(core)
    for name in ("evolver_set_new_owned", "evolver_delete_owned", "evolver_set_replace_owned"):
        Sweep(core, name, evolver_atomic=True).run()
