"""No crash from a GC-cleared object, a kwargs dict emptied mid-call, or a long chain.

Three rules of the C core (the essay at the top of ``frozenmap/_ccore/frozendict.c``,
section 8, says where each is enforced):

- **Borrowed references.**  No borrowed reference survives a call that can
  run Python code.  A stored key's ``__eq__`` can find the keyword dict of the
  call it runs in (``gc.get_referrers``) and empty it while that dict is the
  only owner of a name and its value: ``Evolver.update(**kw)`` and a
  subclass's constructor then raise ``RuntimeError`` (dictionary changed
  size during iteration), as the pure core's loop over ``kwargs.items()``
  does, and leave the evolver as it was.  ``Evolver(**{"source": obj})``
  whose ``obj.keys()`` empties that dict still reads ``obj``.
- **Cleared state.**  After ``tp_clear`` -- what the cyclic GC calls on
  garbage, and what a weakref callback run during a collection can still
  reach -- a frozendict, an Evolver (and a subclass instance of either) or an
  iterator is a valid *empty* object: every method gives what it gives on an
  empty one.  Views have no ``tp_clear`` (as ``dict``'s views): a view of a
  cleared mapping is a view of an empty mapping.
- **Trashcan.**  Releasing a chain of 500,000 iterators (or views), each over
  a frozendict whose only value is the previous link, does not overflow the
  C stack.

``tp_clear`` is called through ctypes (``call_tp_clear``, as in
``hostile/test_gc_and_finalizers.py``) for the method matrix -- deterministic -- and by the
real collector, from a weakref callback, for the crashes first found that way.
The pure core's objects are cleared by CPython's ``subtype_clear``, which
deletes their slots: a method then gives the empty object's answer or raises
``AttributeError`` (never crashes).  Everything else gives the same results
on both cores.
"""

import copy
import ctypes
import gc
import pickle
import platform
import weakref

import operations as registry
import pytest
from fault_helpers import TP_CLEAR_INDEX as _TP_CLEAR_INDEX
from fault_helpers import call_tp_clear, describe_crash, run_python
from test_recursion import _CHAIN

from frozenmap._pycore.flat import FLAT_MAX

# --- what an answer looks like, comparable across two objects ----------------


def _norm(core, x):
    """x as plain data: what two answers are compared by."""
    if isinstance(x, (core.frozendict, core.Evolver)):
        return (type(x).__name__, [(_norm(core, k), _norm(core, v)) for k, v in x.items()])
    if isinstance(x, core.Diff):
        return ("Diff", [_norm(core, part) for part in x])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_norm(core, item) for item in x])
    if isinstance(x, type(type.__dict__)):  # a view's .mapping (mappingproxy)
        return ("mappingproxy", _norm(core, dict(x)))
    if isinstance(x, dict):
        return ("dict", [(_norm(core, k), _norm(core, v)) for k, v in x.items()])
    if type(x).__name__.startswith("frozendict_"):  # views and iterators
        return (type(x).__name__, [_norm(core, item) for item in list(x)])
    return x


def _observe(core, op, obj):
    try:
        return ("ok", _norm(core, op(obj)))
    except Exception as exc:  # noqa: BLE001 -- the exception is the answer
        return ("raises", type(exc).__name__, str(exc))


def _assert_same_as_empty(core, op, cleared, fresh, what):
    got = _observe(core, op, cleared)
    expected = _observe(core, op, fresh)
    if core.name == "python" and got[:2] == ("raises", "AttributeError"):
        return  # subtype_clear deleted the slots: an error, never a crash
    assert got == expected, "%s on a cleared object" % what


# --- the method matrix ---------------------------------------------------------

# Every operation of the registry (tests/operations.py) that names the
# ``cleared`` engine, called on a cleared object m when m is its subject,
# and with m as each mapping it reads; then the entry points no engine runs
# as an operation (_PROBES).
_PROBE = "a"

_ROLE_OBJECTS = registry.role_table(
    registry.CLEARED,
    {
        "key": lambda core: _PROBE,
        "value": lambda core: 1,
        "pairs": lambda core: [(_PROBE, 1), ("b", 2)],
        "mapping": lambda core: {_PROBE: 1},
        "keys": lambda core: {_PROBE},
        "path": lambda core: [_PROBE, "b"],
        "fn": lambda core: lambda *args: args[-1],
        "other": lambda core: {_PROBE: 1},
        "version": lambda core: core.frozendict(a=1),
        "position": lambda core: 0,
        "span": lambda core: (0, 2),
    },
)
"""Each role's argument: a key the mappings may hold, plain values."""
_OPERANDS = ("version", "mapping", "other", "keys")


def _registry_ops(core, own):
    """{label: op(m)} for the registry's operations on ``own`` ("frozendict"
    or "Evolver"): on m, and (any subject) with m as each mapping (or
    iterable of keys) the operation reads."""
    subjects = {
        "frozendict": lambda: core.frozendict(a=1),
        "Evolver": lambda: core.Evolver({_PROBE: 1}),
        "type": lambda: core.frozendict,
    }
    ops = {}
    for entry in registry.for_engine(registry.CLEARED):
        if entry.on == own:
            ops[entry.name] = lambda m, entry=entry: entry.call(
                core, m, *registry.arguments(_ROLE_OBJECTS, entry, core)
            )
        for i, role in enumerate(entry.args):
            if role in _OPERANDS:

                def as_operand(m, entry=entry, i=i):
                    args = registry.arguments(_ROLE_OBJECTS, entry, core)
                    args[i] = m
                    return entry.call(core, subjects[entry.on](), *args)

                ops["%s, with m as %s" % (entry.name, role)] = as_operand
    return ops


def _probes(core, own):
    """The entry points no engine runs as an operation: truth and str, class
    patterns, the debugging methods, an iterator's length hint, the size,
    pickle's other paths, the options and corner cases of diff,
    copy.replace (NOT_OPERATIONS), evolve (run by the differential engine)."""
    probes = {
        "bool": bool,
        "str": str,
        "match": _match,
        "_check": lambda m: m._check(),
        "_node_ids": lambda m: len(m._node_ids()),
        "_dump": lambda m: m._dump(),
        "iter_length_hint": lambda m: iter(m).__length_hint__(),
        "__sizeof__": lambda m: m.__sizeof__() > 0,
    }
    if own == "frozendict":
        probes.update(
            {
                "__getnewargs__": lambda m: m.__getnewargs__(),
                "__reduce__:protocol 0": lambda m: pickle.loads(pickle.dumps(m, protocol=0)),
                "diff:deep": lambda m: m.diff(core.frozendict(a=core.frozendict(b=1)), deep=True),
                "diff:self": lambda m: m.diff(m),
                "__replace__": lambda m: m.__replace__(a=1),
                "evolve:freeze": lambda m: m.evolve().freeze(),
            }
        )
    else:
        probes["hash"] = hash
    return probes


def _match(m):
    match m:
        case {"a": value}:
            return ("a", value)
        case {}:
            return "mapping"
    return None


def _frozendict_ops(core):
    return {**_registry_ops(core, "frozendict"), **_probes(core, "frozendict")}


def _evolver_ops(core):
    return {**_registry_ops(core, "Evolver"), **_probes(core, "Evolver")}


def _public_methods(cls):
    return {
        name
        for name in dir(cls)
        if not name.startswith("_") and callable(getattr(cls, name)) and name != "mro"
    }


def test_the_matrix_calls_every_public_method(core):
    """Through the registry, whose coverage tests/test_operation_registry.py
    holds: a method added later is in the matrix once it is in the registry
    (evolve, which the registry leaves to the differential engine, is a
    probe)."""
    for name, ops in (("frozendict", _frozendict_ops), ("Evolver", _evolver_ops)):
        labels = {label.split(", with m as ")[0] for label in ops(core)}
        covered = {
            attr
            for entry in registry.for_engine(registry.CLEARED)
            if entry.name in labels
            for attr in entry.covers
        }
        covered |= {label.split(":")[0] for label in _probes(core, name)}
        missing = _public_methods(getattr(core, name)) - covered
        assert not missing, "%s: %s" % (name, sorted(missing))


_SUBCLASSES = {}


def _classes(core, kind):
    """The class to test: the type itself or a subclass made in Python."""
    base = core.frozendict if kind.startswith("frozendict") else core.Evolver
    if not kind.endswith("subclass"):
        return base
    key = (core.name, kind)
    if key not in _SUBCLASSES:
        _SUBCLASSES[key] = type("Sub" + base.__name__, (base,), {})
    return _SUBCLASSES[key]


def _contents(kind=""):
    """Atoms, and GC values (so that the order nodes are tracked); for a
    table kind, enough plain keys more for the table form (with its twin
    built, for a "-twin" kind)."""
    atoms = {_PROBE: [1], "b": (2,), 3: "three", "nested": {"x": [4]}}
    if "table" in kind:
        atoms.update(("t%d" % i, [i]) for i in range(FLAT_MAX))
    return atoms


def _build(cls, kind):
    """A cls of _contents(kind), in the form kind names."""
    m = cls(_contents(kind))
    if "table" in kind:
        assert m._dump().split(" ")[2].startswith("table"), kind
    if kind.endswith("-twin"):
        m.set(_PROBE, 0)  # (builds the tries beside the table)
        assert "(and tries)" in m._dump().split("\n", 1)[0]
    return m


def _has_tp_clear(obj):
    if platform.python_implementation() != "CPython":
        pytest.skip("reads CPython's PyTypeObject layout through ctypes")
    slots = ctypes.cast(id(type(obj)), ctypes.POINTER(ctypes.c_void_p))
    return bool(slots[_TP_CLEAR_INDEX])


def _cleared(cls, kind=""):
    m = _build(cls, kind)
    assert call_tp_clear(m) == 0
    return m


TABLE_KINDS = ["frozendict-table", "frozendict-table-twin"]


@pytest.mark.parametrize(
    "kind", ["frozendict", "frozendict-subclass", "evolver", "evolver-subclass"] + TABLE_KINDS
)
def test_every_method_of_a_cleared_mapping_acts_as_on_an_empty_one(core, kind):
    cls = _classes(core, kind)
    ops = _frozendict_ops(core) if kind.startswith("frozendict") else _evolver_ops(core)
    for name, op in ops.items():
        # A fresh pair per operation: an Evolver's methods edit it.
        _assert_same_as_empty(core, op, _cleared(cls, kind), cls(), "%s %s" % (kind, name))


def _view_ops():
    other = {_PROBE, ("a", 1)}
    return {
        "len": len,
        "iter": list,
        "reversed": lambda v: list(reversed(v)),
        "repr": repr,
        "contains": lambda v: _PROBE in v,
        "contains:pair": lambda v: (_PROBE, [1]) in v,
        "contains:value": lambda v: [1] in v,
        "mapping": lambda v: v.mapping,
        "eq": lambda v: v == set(),
        "ne": lambda v: v != other,
        "lt": lambda v: v < other,
        "le": lambda v: v <= other,
        "gt": lambda v: v > set(),
        "ge": lambda v: v >= set(),
        "and": lambda v: v & other,
        "rand": lambda v: other & v,
        "or": lambda v: v | other,
        "ror": lambda v: other | v,
        "sub": lambda v: v - other,
        "rsub": lambda v: other - v,
        "xor": lambda v: v ^ other,
        "rxor": lambda v: other ^ v,
        "isdisjoint": lambda v: v.isdisjoint(other),
        "pickle": pickle.dumps,
        "iter_length_hint": lambda v: iter(v).__length_hint__(),
    }


@pytest.mark.parametrize("kind", ["frozendict", "evolver"] + TABLE_KINDS)
@pytest.mark.parametrize("view", ["keys", "values", "items"])
def test_every_method_of_a_view_of_a_cleared_mapping(core, kind, view):
    """Was a crash (the view's mapping cleared, the view itself intact)."""
    cls = _classes(core, kind)
    for name, op in _view_ops().items():
        cleared = getattr(_cleared(cls, kind), view)()
        fresh = getattr(cls(), view)()
        _assert_same_as_empty(core, op, cleared, fresh, "%s %s view %s" % (kind, view, name))


@pytest.mark.parametrize("kind", ["frozendict", "evolver"])
@pytest.mark.parametrize("view", ["keys", "values", "items"])
def test_a_view_is_never_cleared_itself_or_works_when_it_is(core, kind, view):
    """Was a crash: a view whose own tp_clear dropped its mapping.

    The C core's views have no tp_clear (as dict's views): every cycle
    through a view passes through its mapping, whose tp_clear breaks it.
    """
    cls = _classes(core, kind)
    probe = getattr(cls(_contents()), view)()
    if core.name == "c":
        assert not _has_tp_clear(probe), "a C view keeps its mapping"
    if not _has_tp_clear(probe):
        return
    for name, op in _view_ops().items():
        cleared = getattr(cls(_contents()), view)()
        assert call_tp_clear(cleared) == 0
        fresh = getattr(cls(), view)()
        _assert_same_as_empty(core, op, cleared, fresh, "cleared %s view %s" % (view, name))


def _iterator_ops():
    return {
        "next": lambda it: next(it, "end"),
        "list": list,
        "iter": lambda it: iter(it) is it,
        "length_hint": lambda it: it.__length_hint__(),
        "reduce": lambda it: list(it.__reduce__()[1][0]),
        "pickle": lambda it: list(pickle.loads(pickle.dumps(it))),
        "copy": lambda it: list(copy.copy(it)),
    }


_ITERATORS = {
    "iter": iter,
    "reversed": reversed,
    "keys": lambda m: iter(m.keys()),
    "values": lambda m: iter(m.values()),
    "items": lambda m: iter(m.items()),
    "reversed-items": lambda m: reversed(m.items()),
}


@pytest.mark.parametrize("kind", ["frozendict", "evolver"] + TABLE_KINDS)
@pytest.mark.parametrize("make", sorted(_ITERATORS))
def test_every_method_of_a_cleared_iterator_acts_as_on_an_exhausted_one(core, kind, make):
    cls = _classes(core, kind)
    iterator = _ITERATORS[make]
    probe = iterator(_build(cls, kind))
    if not _has_tp_clear(probe):
        assert core.name == "python", "every C iterator has a tp_clear"
        return
    for name, op in _iterator_ops().items():
        it = iterator(_build(cls, kind))
        next(it)
        assert call_tp_clear(it) == 0
        label = "%s %s iterator %s" % (kind, make, name)
        _assert_same_as_empty(core, op, it, iterator(cls()), label)


# --- the same, reached by the real collector ---------------------------------


def _reach_cleared(base, kind=""):
    """An instance of a new subclass of base, as a weakref callback finds it
    while the collector clears it as garbage; None if the collector's order
    did not allow it (it clears in the order of creation on CPython 3.10-3.13).

    The cycle: the target holds a list q (in its __dict__, or as an
    Evolver's item), q holds the target, a code object and itself.  The
    collector clears the target first (the older), which empties it; q keeps
    it alive, so it goes back to a generation list, where gc.get_objects()
    sees it.  Then q's clear releases the code object, which is not a GC
    object (so the collector did not call its weakrefs' callbacks
    beforehand, as it does for garbage it tracks): its weakref, which the
    test holds, calls back and stashes the cleared target.
    """
    cls = type("Cleared" + base.__name__, (base,), {})
    found = []

    def callback(_ref):
        found.extend(obj for obj in gc.get_objects() if type(obj) is cls)

    def build():
        target = cls({"more": [1], "atom": "x", **_contents(kind)})
        q = [target, compile("pass", "<cleared>", "exec"), None]
        q[2] = q
        if hasattr(target, "__setitem__"):
            target["q"] = q
        else:
            target.q = q
        return weakref.ref(q[1], callback)

    gc.collect()
    ref = build()
    gc.collect()
    assert ref() is None
    return found[0] if found else None


@pytest.mark.parametrize("kind", ["flat", "table"])
def test_diff_with_a_frozendict_the_collector_cleared(core, kind):
    """Was a crash: champ_diff dereferenced the NULL root tp_clear left."""
    # (a subclass: its __dict__ closes the cycle)
    cleared = _reach_cleared(core.frozendict, kind)
    if cleared is None:
        pytest.skip("the collector cleared the cycle in another order")
    other = core.frozendict(a=1) if kind == "flat" else core.frozendict(_contents(kind))
    empty = core.frozendict()
    checks = {
        "len": lambda: len(cleared) == 0,
        "diff": lambda: cleared.diff(other) == empty.diff(other),
        "diff:reversed": lambda: other.diff(cleared) == other.diff(empty),
        "diff:self": lambda: cleared.diff(cleared) == empty.diff(empty),
        "eq": lambda: cleared == {} and hash(cleared) == hash(empty),
        "_check": lambda: cleared._check() is None,
    }
    for name, check in checks.items():
        try:
            assert check(), name
        except AttributeError:
            assert core.name == "python", name


@pytest.mark.parametrize("kind", ["frozendict", "evolver"])
def test_views_of_a_mapping_the_collector_cleared(core, kind):
    """Was a crash, through the collector: views of a cleared mapping."""
    cls = _classes(core, kind)
    cleared = _reach_cleared(cls)
    if cleared is None:
        pytest.skip("the collector cleared the cycle in another order")
    empty = cls()
    try:
        views = (cleared.keys(), cleared.values(), cleared.items())
    except AttributeError:
        assert core.name == "python"
        return
    for view, fresh in zip(views, (empty.keys(), empty.values(), empty.items())):
        for name, op in _view_ops().items():
            _assert_same_as_empty(core, op, view, fresh, "%s view %s" % (kind, name))


# --- borrowed references: a kwargs dict emptied mid-call ---------------------


class _Victim:
    """A keyword value whose only owner is the call's keyword dict."""

    alive = weakref.WeakSet()

    def __init__(self):
        _Victim.alive.add(self)


def _empty_kwargs_dicts():
    """Empty every dict holding a _Victim (the call's keyword dicts).

    Found through the values: a dict whose keys are all str does not report
    them to gc.get_referrers.
    """
    for victim in list(_Victim.alive):
        for ref in gc.get_referrers(victim):
            if type(ref) is dict:
                ref.clear()


class _EmptiesKwargs:
    """A stored key colliding with the keyword name: its __eq__ empties the kwargs."""

    def __init__(self, name):
        self.name = name
        self.calls = 0

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        self.calls += 1
        _empty_kwargs_dicts()
        return False

    def __repr__(self):
        return "_EmptiesKwargs(%r)" % self.name


def test_evolver_update_whose_kwargs_a_key_empties(core):
    """Was a crash: transient_merge used the borrowed name and value."""
    name = "victim_update"
    key = _EmptiesKwargs(name)
    e = core.Evolver({key: 1, "x": 2})
    before = list(e.items())
    with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
        e.update(**{name: _Victim(), "zz": [0]})
    assert key.calls >= 1
    assert list(e.items()) == before, "a failed update leaves the evolver unchanged"
    e._check()
    e[name] = 3  # still usable
    assert e[name] == 3


def test_subclass_constructor_whose_kwargs_a_key_empties(core):
    """Was a crash: S(base, **kw) goes through the same merge."""
    name = "victim_ctor"
    key = _EmptiesKwargs(name)
    base = core.frozendict({key: 1})
    sub = _classes(core, "frozendict-subclass")
    with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
        sub(base, **{name: _Victim(), "zz": [0]})
    assert key.calls >= 1
    assert list(base.items()) == [(key, 1)]
    base._check()


def test_new_whose_kwargs_a_key_empties(core):
    """frozendict.__new__(cls, base, **kw): the keyword dict reaches the merge."""
    name = "victim_new"
    key = _EmptiesKwargs(name)
    base = core.frozendict({key: 1})
    with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
        core.frozendict.__new__(core.frozendict, base, **{name: _Victim(), "zz": [0]})


def test_kwargs_emptied_by_the_last_key_still_raises(core):
    """As dict's iterator: the change is seen after the last pair too."""
    name = "victim_last"
    key = _EmptiesKwargs(name)
    e = core.Evolver({key: 1})
    with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
        e.update(**{name: _Victim()})
    assert list(e.items()) == [(key, 1)]


class _SourceEmptiesKwargs:
    """A mapping whose keys() empties the keyword dict holding it as "source"."""

    def keys(self):
        for ref in gc.get_referrers(self):
            if type(ref) is dict and ref.get("source") is self:
                ref.clear()
        return ["k", "j"]

    def __getitem__(self, key):
        return key.upper()


@pytest.mark.parametrize("kind", ["evolver", "evolver-subclass"])
def test_evolver_source_whose_keys_empty_the_kwargs(core, kind):
    """Was a crash: evolver_tp_init kept the source borrowed from kwds."""
    cls = _classes(core, kind)
    e = cls(**{"source": _SourceEmptiesKwargs()})
    assert list(e.items()) == [("k", "K"), ("j", "J")]
    e._check()
    e.__init__(**{"source": _SourceEmptiesKwargs()})  # a restart, the same way
    assert list(e.items()) == [("k", "K"), ("j", "J")]


# --- the trashcan ------------------------------------------------------------

# Each link: an iterator (or view) over a frozendict whose only value is the
# previous link; built and released by test_recursion's chain harness.
CHAINS = {
    name: "v = None\nfor i in range(N):\n    v = %s" % link
    for name, link in {
        "iterators": "iter(fd(a=v))",
        "reversed": "reversed(fd(a=v))",
        "items-iterators": "iter(fd(a=v).items())",
        "evolver-iterators": "iter(core.Evolver({'a': v}))",
        "views": "fd(a=v).values()",
    }.items()
}


@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_releasing_a_long_chain_of_iterators(core, chain):
    """Was a crash: order_dealloc and view_iter_tp_dealloc had no trashcan."""
    n = 500_000 if core.name == "c" else 50_000
    code = _CHAIN.format(module=core.module.__name__, n=n, build=CHAINS[chain])
    proc = run_python(code, timeout=600)
    assert proc.returncode == 0 and "done" in proc.stdout, describe_crash(proc)
