"""Re-entrancy matrix: user code run by an operation calls another operation.

For every Evolver, view and iterator operation that can run user code (a
key's ``__hash__`` and ``__eq__``, a value's ``__del__``), a hostile key or
value runs each other operation on the *same* evolver from inside it.  Rules
checked for every pair, on both cores:

* nothing crashes, and no exception but the allowed ones escapes (a
  ``RuntimeError`` for an edit from inside an edit, ``KeyError`` for a key
  the inner operation removed; never ``SystemError`` or garbage);
* a read returns a value the key held before or after the operation, or
  misses (or raises ``RuntimeError``) -- never another object;
* the evolver passes ``_check()`` afterwards, and its iteration, ``len`` and
  lookups agree;
* every version published by ``freeze()`` during the operation passes
  ``_check()`` and still holds exactly the items it held when it was made.

The C core's version of these failures was reads walking freed key-trie
nodes (heap-use-after-free under ASan) and ``Evolver.__init__`` swapping the
tries under a running edit; the ASan check runs this module too.
"""

import pickle

import operations as registry
import pytest

N_KEYS = 12


class Plan:
    """The action to run once, from the first user-code call in a mode."""

    def __init__(self):
        self.mode = None  # "eq", "hash" or "del"
        self.action = None
        self.fired = False
        self.errors = []
        self.published = []  # (version, its items when made)

    def arm(self, mode, action):
        self.mode, self.action, self.fired = mode, action, False

    def disarm(self):
        self.mode = None

    def fire(self, mode):
        if self.mode != mode or self.fired:
            return
        self.fired = True
        try:
            self.action()
        except Exception as exc:  # recorded; the outer operation carries on
            self.errors.append(exc)


PLAN = Plan()


class RKey:
    """Odd names share one hash (a collision node); even names are spread."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __hash__(self):
        PLAN.fire("hash")
        return 7 if self.name % 2 else self.name * 1_000_003

    def __eq__(self, other):
        PLAN.fire("eq")
        return isinstance(other, RKey) and other.name == self.name

    def __repr__(self):
        return f"K{self.name}"


class RVal:
    __slots__ = ("tag", "__weakref__")

    def __init__(self, tag):
        self.tag = tag

    def __del__(self, _plan=PLAN):  # (PLAN may be gone at interpreter exit)
        _plan.fire("del")

    def __repr__(self):
        return f"V{self.tag}"


def _publish(e):
    fd = e.freeze()
    PLAN.published.append((fd, list(fd.items())))
    return fd


# Inner actions: each runs one operation on the evolver under attack.
def _inner_actions(core, e, it):
    k_present = RKey(3)
    k_new = RKey(101)

    def reinit():
        core.Evolver.__init__(e, {RKey(1): RVal("re")})

    return {
        "getitem": lambda: e[RKey(5)],
        "get": lambda: e.get(RKey(5)),
        "contains": lambda: RKey(5) in e,
        "keys_contains": lambda: RKey(5) in e.keys(),
        "items_contains": lambda: (RKey(5), None) in e.items(),
        "values_contains": lambda: None in e.values(),
        "len_iter": lambda: (len(e), list(e)),
        "repr": lambda: repr(e),
        "freeze": lambda: _publish(e),
        "eq": lambda: e == {},
        "pickle": lambda: pickle.dumps(e),
        "copy": lambda: e.copy(),
        "next_iter": lambda: next(it, None),
        "setitem_new": lambda: e.__setitem__(k_new, RVal("new")),
        "setitem_existing": lambda: e.__setitem__(k_present, RVal("set")),
        "delitem": lambda: e.__delitem__(k_present),
        "pop": lambda: e.pop(RKey(9), None),
        "popitem": lambda: e.popitem(),
        "setdefault": lambda: e.setdefault(RKey(102), RVal("sd")),
        "update": lambda: e.update({RKey(103): RVal("up"), k_present: RVal("up3")}),
        "clear": lambda: e.clear(),
        "discard": lambda: e.discard(RKey(1)),
        "reinit": reinit,
    }


INNER = sorted(_inner_actions(None, None, None))


def _fresh(core):
    e = core.Evolver()
    for i in range(N_KEYS):
        e[RKey(i)] = RVal(i)
    return e


def _values_of(e, name):
    """The value object stored for key ``name`` now, or a miss marker."""
    for k, v in list(e.items()):
        if isinstance(k, RKey) and k.name == name:
            return v
    return MISS


MISS = object()


OUTER_ROLES = registry.role_table(
    registry.REENTRANCY,
    {
        "key": lambda core: RKey(11),
        "value": lambda core: RVal("outer"),
        "pairs": lambda core: [(RKey(11), RVal("u1")), (RKey(202), RVal("u2"))],
        "mapping": lambda core: {RKey(11): RVal("u1"), RKey(202): RVal("u2")},
        "keys": lambda core: [RKey(11), RKey(7)],
        "path": lambda core: [RKey(11)],
        "fn": lambda core: lambda *args: RVal("fn"),
        "other": lambda core: {RKey(i): None for i in range(N_KEYS)},
        "version": lambda core: core.frozendict({RKey(i): i for i in range(N_KEYS)}),
        "position": lambda core: 5,
        "span": lambda core: (2, -3),
    },
    on="Evolver",
)
"""What an outer operation on an Evolver gets for each argument role (tests/operations.py)."""


def _registry_outer(entry):
    def op(core, e, it):
        args = registry.arguments(OUTER_ROLES, entry, core)
        result = entry.call(core, e, *args)
        # a read may also answer the default it was given
        return MISS if any(result is a for a in args) else result

    return op, (11 if entry.reads else None), entry.fires


# Outer operations: name -> (function(core, e, it) -> result, read key name or
# None, the modes in which it must run the hostile code).  Every Evolver
# operation of the registry, and the cases it does not spell out.
OUTER = {
    entry.name: _registry_outer(entry)
    for entry in registry.for_engine(registry.REENTRANCY, on="Evolver")
}
_LOOKUP = frozenset({"eq", "hash"})
OUTER.update({
    "keys_contains": (lambda core, e, it: RKey(11) in e.keys(), None, _LOOKUP),
    "items_contains": (lambda core, e, it: (RKey(11), None) in e.items(), None, _LOOKUP),
    "values_contains": (lambda core, e, it: RVal(-1) in e.values(), None, frozenset()),
    "setitem_new": (lambda core, e, it: e.__setitem__(RKey(201), RVal("outer")), None,
                    frozenset({"hash"})),
    "update_fails": (lambda core, e, it: e.update([(RKey(11), RVal("u")), (RKey(203),)]), None,
                     frozenset({"eq", "hash", "del"})),
    "iterate": (lambda core, e, it: list(it), None, frozenset()),
})  # fmt: skip

# (IndexError: a position past the end of what an inner clear() or pop left)
ALLOWED = (RuntimeError, KeyError, ValueError, TypeError, IndexError)


def _check_evolver(e):
    e._check()
    items = list(e.items())
    assert len(items) == len(e)
    for k, v in items:
        assert e[RKey(k.name) if isinstance(k, RKey) else k] is v
        assert e.get(k) is v
        assert k in e


@pytest.mark.parametrize("mode", ["eq", "hash", "del"])
@pytest.mark.parametrize("outer", sorted(OUTER))
def test_user_code_running_another_operation_on_the_same_evolver(core, outer, mode):
    op, read_key, fires = OUTER[outer]
    fired = 0
    for inner in INNER:
        PLAN.published.clear()
        PLAN.errors.clear()
        e = _fresh(core)
        it = iter(e.items())
        for i in range(N_KEYS):  # values the iterator's snapshot does not hold
            e[RKey(i)] = RVal(i)
        before = _values_of(e, read_key) if read_key is not None else None
        PLAN.arm(mode, _inner_actions(core, e, it)[inner])
        try:
            result = op(core, e, it)
        except ALLOWED:
            result = None
        finally:
            PLAN.disarm()
        fired += PLAN.fired
        for exc in PLAN.errors:
            assert isinstance(exc, ALLOWED + (StopIteration,)), (outer, inner, exc)
        if read_key is not None and result is not None and result is not MISS:
            after = _values_of(e, read_key)
            assert result is before or result is after, (outer, inner, result)
        if isinstance(result, core.frozendict):
            result._check()
        for version, items in PLAN.published:
            version._check()
            got = list(version.items())
            assert len(got) == len(items) and all(
                a[0] is b[0] and a[1] is b[1] for a, b in zip(got, items)
            ), (outer, inner)
        _check_evolver(e)
    # The matrix is only a test if the hostile code actually ran.
    if mode in fires:
        assert fired == len(INNER), (outer, mode, fired)


@pytest.mark.parametrize(
    "outer",
    ["Evolver[k] = v", "setitem_new", "del Evolver[k]", "Evolver.pop", "Evolver.setdefault",
     "Evolver.update", "Evolver.discard"],
)  # fmt: skip
def test_an_edit_from_inside_an_edit_raises_and_changes_nothing(core, outer):
    """Re-entry into an edit is refused; the outer edit completes."""
    op, _, _ = OUTER[outer]
    e = _fresh(core)
    before = dict(e.items())
    PLAN.errors.clear()
    PLAN.arm("eq", lambda: e.__setitem__(RKey(300), RVal("inner")))
    try:
        op(core, e, None)
    except KeyError:
        pass
    finally:
        PLAN.disarm()
    assert PLAN.fired
    assert [type(x) for x in PLAN.errors] == [RuntimeError]
    assert RKey(300) not in e
    _check_evolver(e)
    assert len(e) in (len(before) - 1, len(before), len(before) + 1, len(before) + 2)


def test_reinit_from_inside_an_edit_raises_runtime_error(core):
    e = _fresh(core)
    PLAN.errors.clear()
    PLAN.arm("eq", lambda: core.Evolver.__init__(e, {1: 2}))
    try:
        e[RKey(11)] = RVal("x")
    finally:
        PLAN.disarm()
    assert [type(x) for x in PLAN.errors] == [RuntimeError]
    assert len(e) == N_KEYS and e[RKey(11)].tag == "x"
    published = e.freeze()
    published._check()
    assert len(published) == N_KEYS


def test_reinit_of_an_idle_evolver_is_a_clean_restart(core):
    e = _fresh(core)
    old = e.freeze()
    it = iter(e)
    next(it)
    core.Evolver.__init__(e, {"a": 1})
    assert dict(e.items()) == {"a": 1}
    e._check()
    old._check()
    assert len(old) == N_KEYS  # the earlier version is untouched
    with pytest.raises(RuntimeError):
        next(it)  # an iterator over the old contents stops
    e["b"] = 2
    assert e.freeze() == {"a": 1, "b": 2}


def test_failed_update_shows_finalizers_the_state_before_it(core):
    """Finalizers run by the rollback see the evolver as before update()."""
    seen = []

    class Watch:
        def __init__(self, e):
            self.e = e

        def __del__(self):
            fd = self.e.freeze()
            seen.append((len(self.e), list(self.e.items()), fd))

    e = core.Evolver({"a": 1, "b": 2, "c": 3})
    before = list(e.items())

    def bad():
        yield ("x", Watch(e))
        yield ("y",)  # not a pair: update fails here

    with pytest.raises((ValueError, TypeError)):
        e.update(bad())
    assert list(e.items()) == before
    assert len(seen) == 1  # the value was released by the rollback
    length, items, fd = seen[0]
    assert (length, items) == (3, before)
    fd._check()
    assert list(fd.items()) == before
    e._check()
    assert e.freeze() == dict(before)


# --- frozendicts: user code re-entering operations on the same version -------------------------
#
# A version never changes, so here every result must be exactly right: reads
# find the stored value, derivations give what a dict would, and the version
# itself keeps its items and passes _check(), whatever the hostile key ran.


def _fd_inner_actions(core, fd, it):
    other = core.frozendict({RKey(i): i for i in range(N_KEYS)}) if core else None
    return {
        "getitem": lambda: fd[RKey(5)],
        "contains": lambda: RKey(5) in fd.keys(),
        "items_contains": lambda: (RKey(5), None) in fd.items(),
        "iterate": lambda: list(fd.items()),
        "next_iter": lambda: next(it, None),
        "hash": lambda: hash(fd),
        "eq": lambda: fd == other,
        "diff": lambda: fd.diff(other),
        "set": lambda: fd.set(RKey(3), "x"),
        "union": lambda: fd | {RKey(3): "y", RKey(104): "z"},
        "minus": lambda: fd - {RKey(3)},
        "evolve_edit": lambda: fd.evolve().update({RKey(3): 1, RKey(105): 2}),
        "repr": lambda: repr(fd),
        "pickle": lambda: pickle.loads(pickle.dumps(fd)),
        "gc": lambda: __import__("gc").collect(),
    }


FD_INNER = sorted(_fd_inner_actions(None, None, None))


FD_OUTER_ROLES = registry.role_table(
    registry.REENTRANCY,
    {
        "key": lambda core: RKey(11),
        "value": lambda core: "new",
        "pairs": lambda core: [(RKey(11), "u"), (RKey(300), "v")],
        "mapping": lambda core: {RKey(11): "u", RKey(300): "v"},
        "keys": lambda core: [RKey(11), RKey(7)],
        "path": lambda core: [RKey(11)],
        "fn": lambda core: lambda *args: "fn",
        "other": lambda core: {RKey(i): i for i in range(N_KEYS)},
        "version": lambda core: core.frozendict({RKey(i): i for i in range(N_KEYS)}),
        "position": lambda core: -4,
        "span": lambda core: (1, -2),
    },
    on=("frozendict", "type"),
)
"""What an outer operation on a frozendict gets for each argument role."""


FD_OUTER = {
    entry.name: entry
    for entry in registry.OPERATIONS
    if registry.REENTRANCY in entry.engines and entry.on in ("frozendict", "type")
}


def _same_answer(entry, result, expected):
    if entry.makes:
        return list(result.items()) == list(expected.items())
    if isinstance(expected, registry.DictModel):  # fresh copies of keys and values
        return repr(result) == repr(expected)
    return result == expected


@pytest.mark.parametrize("mode", ["eq", "hash"])
@pytest.mark.parametrize("outer", sorted(FD_OUTER))
def test_user_code_running_operations_on_the_same_frozendict(core, outer, mode):
    """Every frozendict operation of the registry, against its dict model."""
    entry = FD_OUTER[outer]
    fired = 0
    for inner in FD_INNER:
        fd = core.frozendict({RKey(i): RVal(i) for i in range(N_KEYS)})
        it = iter(fd.items())
        snapshot = list(fd.items())
        args = registry.arguments(FD_OUTER_ROLES, entry, core)
        model_args = [dict(a.items()) if isinstance(a, core.frozendict) else a for a in args]
        subject = fd if entry.on == "frozendict" else core.frozendict
        expected = entry.model(dict(snapshot) if entry.on == "frozendict" else None, *model_args)
        PLAN.errors.clear()
        PLAN.arm(mode, _fd_inner_actions(core, fd, it)[inner])
        try:
            result = entry.call(core, subject, *args)
        finally:
            PLAN.disarm()
        fired += PLAN.fired
        assert not PLAN.errors, (outer, inner, PLAN.errors)
        if isinstance(result, core.frozendict):
            result._check()
        assert _same_answer(entry, result, expected), (outer, inner, result, expected)
        fd._check()
        got = list(fd.items())
        assert all(a[0] is b[0] and a[1] is b[1] for a, b in zip(got, snapshot))
        assert len(got) == len(snapshot)
    if mode in entry.fires:
        assert fired == len(FD_INNER), (outer, mode, fired)
