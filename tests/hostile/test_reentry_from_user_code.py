"""User code that re-enters: a key's ``__eq__``/``__hash__`` or a value's
``__eq__``/``__repr__``/``__del__`` runs operations on the very map or evolver
in use (docs/spec.md §4; docs/how-it-works.md, "User code, finalizers and
threads"), on both cores.

The targeted cases; ``test_reentry_sweep.py`` runs every registry operation
against every inner action.

- **Keys whose ``__eq__`` derives from the map being used**, or reads,
  freezes, copies or edits the Evolver under edit: an edit from inside an
  edit raises ``RuntimeError`` and changes nothing, reads see the state before
  the edit, and the outer operation completes as if the key were ordinary.
- **Walks whose user code edits the Evolver** (``==`` against a mapping whose
  values shrink it, ``repr`` and pickling): ``RuntimeError``, never a stale
  answer.
- **Versions that share nodes**: a key's ``__eq__``, a value's finalizer, a
  weakref callback and a GC pass drop, derive from and edit them in the
  middle of derivations and evolver edits.
"""

import gc
import pickle

import pytest
from helpers import Snapshot
from keys import HashKey, HookKey

# --- re-entrance: keys whose __eq__ derives from the map or touches the evolver ----------------


def _colliding_map(core, n=12):
    stored = [HashKey(500, "s%d" % i) for i in range(4)] + [HashKey(i, "p%d" % i) for i in range(n)]
    return core.frozendict((k, k.name) for k in stored), stored


DERIVATIONS = {
    "set": lambda fd, stored: fd.set("new", 1),
    "set-colliding": lambda fd, stored: fd.set(HashKey(500, "s9"), 9),
    "delete": lambda fd, stored: fd.delete(stored[1]),
    "or": lambda fd, stored: fd | {stored[0]: "x", "y": 2},
    "sub": lambda fd, stored: fd - [stored[2], stored[3]],
    "and": lambda fd, stored: fd & [stored[0], stored[5]],
    "hash": lambda fd, stored: hash(fd),
    "eq": lambda fd, stored: fd == fd.set(stored[0], "other"),
    "diff": lambda fd, stored: fd.diff(fd.delete(stored[0])),
    "evolve": lambda fd, stored: fd.evolve().set("z", 0).freeze(),
    "iterate": lambda fd, stored: list(reversed(fd.items())),
}


@pytest.mark.parametrize("inner", sorted(DERIVATIONS))
@pytest.mark.parametrize(
    "outer",
    [
        "set",
        "get",
        "delete",
        "discard",
        "or",
        "sub",
        "and",
        "eq",
        "diff",
        "evolver-set",
        "evolver-update",
    ],
)
def test_key_eq_deriving_from_the_map_being_used(core, outer, inner):
    fd, stored = _colliding_map(core)
    before = Snapshot(fd)
    hook = HookKey("s1", 500, lambda: DERIVATIONS[inner](fd, stored), once=False)
    d = dict(fd.items())
    if outer == "set":
        result = fd.set(hook, "h")
        d[stored[1]] = "h"
    elif outer == "get":
        result = fd.get(hook)
        assert result == "s1"
    elif outer == "delete":
        result = fd.delete(hook)
        del d[stored[1]]
    elif outer == "discard":
        result = fd.discard(hook)
        del d[stored[1]]
    elif outer == "or":
        result = fd | {hook: "h"}
        d[stored[1]] = "h"
    elif outer == "sub":
        result = fd - [hook]
        del d[stored[1]]
    elif outer == "and":
        result = fd & [hook]
        d = {stored[1]: "s1"}
    elif outer == "eq":
        other = core.frozendict((hook if k is stored[1] else k, v) for k, v in fd.items())
        result = fd == other
        assert result is True
    elif outer == "diff":
        other = core.frozendict((hook if k is stored[1] else k, v) for k, v in fd.items())
        result = fd.diff(other)
        assert all(len(part) == 0 for part in result)
    elif outer == "evolver-set":
        e = fd.evolve()
        e[hook] = "h"
        result = e.freeze()
        d[stored[1]] = "h"
    else:
        e = fd.evolve()
        e.update([(hook, "h"), ("tail", 1)])
        result = e.freeze()
        d[stored[1]] = "h"
        d["tail"] = 1
    assert hook.results, "the hook never ran"
    before.check()
    if isinstance(result, core.frozendict):
        result._check()
        assert list(result.items()) == list(d.items())
        assert [type(k) for k in result] == [type(k) for k in d]
    for made in hook.results:
        if isinstance(made, core.frozendict):
            made._check()


EVOLVER_EDITS = {
    "setitem": lambda e, k: e.__setitem__(k, "v"),
    "set": lambda e, k: e.set(k, "v"),
    "delitem": lambda e, k: e.__delitem__(k),
    "pop": lambda e, k: e.pop(k),
    "discard": lambda e, k: e.discard(k),
    "setdefault": lambda e, k: e.setdefault(k, "v"),
    "update-pairs": lambda e, k: e.update([("u", 1), (k, "v")]),
    "update-dict": lambda e, k: e.update({k: "v"}, kw=1),
    "contains": lambda e, k: k in e,
}

INNER_EDITS = {
    "setitem": lambda e: e.__setitem__("sneaky", 1),
    "setitem-existing": lambda e: e.__setitem__("a", "sneaky"),
    "delitem": lambda e: e.__delitem__("a"),
    "pop": lambda e: e.pop("a"),
    "popitem": lambda e: e.popitem(),
    "setdefault": lambda e: e.setdefault("sneaky", 1),
    "update": lambda e: e.update(sneaky=1),
    "clear": lambda e: e.clear(),
    "discard": lambda e: e.discard("a"),
}


def _evolver_with_collisions(core):
    stored = HashKey(42, "stored")
    e = core.frozendict([("a", 1), (stored, 2), ("b", 3)] + [(i, i) for i in range(40)]).evolve()
    e["b"] = 4  # owned nodes
    e[7] = "seven"
    return e, stored


INNER_MODEL = dict(INNER_EDITS, discard=lambda d: d.pop("a", None))


@pytest.mark.parametrize("inner", sorted(INNER_EDITS))
@pytest.mark.parametrize("outer", sorted(EVOLVER_EDITS))
def test_inner_edit_from_a_key_eq_is_refused_and_the_outer_edit_completes(core, outer, inner):
    """The key's ``__eq__`` tries to edit the evolver and swallows the error.

    An edit re-entered from inside an edit must raise RuntimeError and change
    nothing; the outer edit then completes as if the key were ordinary.  When
    the outer operation is a read (``in``), the inner edit may also apply; the
    evolver must then hold it, consistently.
    """
    e, stored = _evolver_with_collisions(core)
    outcome = []

    def attempt():
        try:
            INNER_EDITS[inner](e)
        except RuntimeError:
            outcome.append("refused")
        else:
            outcome.append("applied")

    deleting = outer in ("delitem", "pop", "discard")
    hook = HookKey("stored" if deleting else "other", 42)
    d = dict(e.items())
    if deleting:
        del d[stored]
    elif outer == "update-pairs":
        d["u"] = 1
        d[hook] = "v"
    elif outer == "update-dict":
        d[hook] = "v"
        d["kw"] = 1
    elif outer != "contains":
        d[hook] = "v"
    hook.action = attempt
    EVOLVER_EDITS[outer](e, hook)
    assert outcome, "the hook never ran"
    e._check()
    if outer == "contains":
        assert outcome[0] in ("refused", "applied")
        if outcome[0] == "applied":
            INNER_MODEL[inner](d)
    else:
        assert outcome == ["refused"], "inner edit %s from inside %s was %s" % (
            inner,
            outer,
            outcome,
        )
    assert list(e.items()) == list(d.items())
    frozen = e.freeze()
    frozen._check()
    assert list(frozen.items()) == list(d.items())


READS = {
    "len": len,
    "get": lambda e: e.get("a"),
    "contains": lambda e: "b" in e,
    "list": lambda e: list(e),
    "items": lambda e: list(e.items()),
    "reversed": lambda e: list(reversed(e)),
    "repr": repr,
    "eq": lambda e: e == {"a": 1},
    "freeze": lambda e: e.freeze(),
    "copy": lambda e: e.copy(),
    "pickle": lambda e: pickle.loads(pickle.dumps(e)),
}


@pytest.mark.parametrize("read", sorted(READS))
@pytest.mark.parametrize(
    "outer", ["setitem", "setitem-existing", "delitem", "update", "setdefault"]
)
def test_key_eq_reading_freezing_or_copying_the_evolver_mid_edit(core, outer, read):
    """Reads, ``freeze()`` and ``copy()`` from inside an edit see the state before it.

    Whatever they return stays as it was; and once the outer edit is done,
    ``freeze()`` must reflect it (a freeze taken mid-edit must not be reused).
    """
    e, stored = _evolver_with_collisions(core)
    before = list(e.items())
    seen = []

    def look():
        try:
            seen.append(READS[read](e))
        except RuntimeError:
            seen.append(RuntimeError)

    hook = HookKey("other", 42, look)
    d = dict(e.items())
    if outer == "setitem":
        e[hook] = "h"
        d[hook] = "h"
    elif outer == "setitem-existing":
        hook.name = "stored"
        e[hook] = "h"
        d[stored] = "h"
    elif outer == "delitem":
        hook.name = "stored"
        del e[hook]
        del d[stored]
    elif outer == "update":
        e.update([(hook, "h"), ("z", 26)])
        d[hook] = "h"
        d["z"] = 26
    else:
        e.setdefault(hook, "h")
        d[hook] = "h"
    assert seen, "the hook never ran"
    e._check()
    assert list(e.items()) == list(d.items())
    frozen = e.freeze()
    frozen._check()
    assert list(frozen.items()) == list(d.items()), "freeze() after the edit does not show it"
    mid = seen[0]
    if isinstance(mid, (core.frozendict, core.Evolver)):
        mid._check()
        assert list(mid.items()) == before, "what the hook saw changed afterwards"
    e["after"] = 1
    assert "after" not in frozen
    if isinstance(mid, (core.frozendict, core.Evolver)):
        assert list(mid.items()) == before


def test_key_eq_editing_another_evolver_of_the_same_version(core):
    fd, stored = _colliding_map(core)
    e1 = fd.evolve()
    e2 = fd.evolve()
    hook = HookKey("s2", 500, lambda: e2.__setitem__(stored[2], "from-hook"), once=False)
    e1[hook] = "outer"
    assert e1[stored[2]] == "outer" and e2[stored[2]] == "from-hook"
    assert fd[stored[2]] == "s2"
    e1._check()
    e2._check()
    fd._check()


def test_key_eq_freezing_the_evolver_then_deriving_from_the_freeze(core):
    e, stored = _evolver_with_collisions(core)
    made = []

    def derive():
        frozen = e.freeze()
        made.append((frozen, frozen.set("x", 1), frozen.evolve()))

    e[HookKey("other", 42, derive)] = "h"
    frozen, derived, other_evolver = made[0]
    other_evolver["y"] = 2
    e["z"] = 3
    for v in (frozen, derived, other_evolver, e):
        v._check()
    assert "y" not in e and "y" not in frozen
    assert list(derived)[-1] == "x" and "x" not in e
    assert len(e) == len(frozen) + 2


# --- a key's __eq__ deriving from the map it is looked up in ------------------------------


class DerivingKey(HookKey):
    """A key whose ``__eq__`` derives new versions of a map it is given."""

    def __init__(self, name, hash_value=99):
        super().__init__(name, hash_value)
        self.target = None
        self.made = []

    __hash__ = HookKey.__hash__

    def __eq__(self, other):
        fd = self.target
        if fd is not None:
            self.target = None  # once per arming
            derived = fd.set("from-eq", len(self.made)).delete("a")
            derived = derived | {"x": 1}
            derived = (derived - ["b"]) & ["x", "from-eq", "c"]
            self.made.append((derived, fd.evolve().set(self, 0).freeze(), fd == derived))
        return super().__eq__(other)


@pytest.mark.parametrize(
    "op,check",
    [
        (lambda fd, k: fd.set(k, "v"), lambda out, k: out[k] == "v" and len(out) == 5),
        (lambda fd, k: fd.discard(k), lambda out, k: len(out) == 4),
        (lambda fd, k: fd - [k], lambda out, k: len(out) == 4),
        (lambda fd, k: fd & [k, "a"], lambda out, k: list(out) == ["a"]),
        (lambda fd, k: fd | {k: 1}, lambda out, k: out[k] == 1),
        (lambda fd, k: fd.get(k, "none"), lambda out, k: out == "none"),
        (lambda fd, k: fd.evolve().set(k, 2).freeze(), lambda out, k: out[k] == 2),
    ],
    ids=["set", "discard", "sub", "and", "or", "get", "evolver"],
)
def test_key_eq_that_derives_from_the_same_map(core, op, check):
    stored = DerivingKey("stored")
    fd = core.frozendict([("a", 1), ("b", 2), (stored, 3), ("c", 4)])
    snap = Snapshot(fd)
    probe = DerivingKey("probe")
    probe.target = fd
    stored.target = fd
    out = op(fd, probe)
    assert check(out, probe)
    if isinstance(out, core.frozendict):
        out._check()
    made = probe.made + stored.made
    assert made, "the key's __eq__ was never called"
    for derived, with_key, same in made:
        derived._check()
        assert list(derived) == ["c", "from-eq", "x"]
        with_key._check()
        assert same is False
    snap.check()


# --- walks over an Evolver whose user code edits it -------------------------------------------


class ShrinkingValue:
    """A value whose __eq__ empties an evolver down to one item."""

    evolver = None

    def __eq__(self, other):
        e = ShrinkingValue.evolver
        while e is not None and len(e) > 1:
            e.popitem()
        return True

    __hash__ = object.__hash__


@pytest.mark.parametrize("where", [0, 10, 19])
def test_evolver_eq_detects_a_change_of_size_mid_comparison(core, where):
    # C: True for an evolver that shrank from 20 items to 1.
    def items():  # a new ShrinkingValue each time: no identity shortcut
        return {i: (ShrinkingValue() if i == where else i) for i in range(20)}

    for compare in (
        lambda e, d: e == d,
        lambda e, d: d == e,
        lambda e, d: e != d,
        lambda e, d: e == core.frozendict(d),
        lambda e, d: core.frozendict(d) == e,
    ):
        e = core.frozendict(items()).evolve()
        ShrinkingValue.evolver = e
        try:
            with pytest.raises(RuntimeError, match="Evolver changed size during iteration"):
                compare(e, items())
        finally:
            ShrinkingValue.evolver = None
        assert len(e) == 1


class EditingRepr:
    """A value whose __repr__ (or a key whose __hash__) adds to an evolver."""

    evolver = None

    def __repr__(self):
        self.edit()
        return "EditingRepr()"

    def __hash__(self):
        self.edit()
        return 1

    def edit(self):
        e, EditingRepr.evolver = EditingRepr.evolver, None
        if e is not None:
            e["added"] = 1


@pytest.mark.parametrize("where", [0, 2])
def test_every_walk_over_an_evolver_that_runs_user_code_detects_a_change(core, where):
    # repr (a __repr__) and pickling (dict() hashes the keys): the pure core
    # raised, C printed or pickled the stale snapshot.
    for op in (repr, lambda e: e.__reduce__(), lambda e: pickle.dumps(e)):
        e = core.frozendict({(EditingRepr() if i == where else i): i for i in range(3)}).evolve()
        e[99] = EditingRepr()
        EditingRepr.evolver = e
        with pytest.raises(RuntimeError, match="Evolver changed size during iteration"):
            op(e)
        assert "added" in e


# --- versions that share nodes, under user code of every kind ------------------------------


class _LoanKey:
    """Equal by name, a new object per use (so every lookup runs ``__eq__``),
    with a hook that user code can be planted in."""

    __slots__ = ("name",)
    hook = None

    def __init__(self, name):
        self.name = name

    def __hash__(self):
        return hash(("loan-key", self.name))

    def __eq__(self, other):
        hook, _LoanKey.hook = _LoanKey.hook, None
        if hook is not None:
            hook()
        return isinstance(other, _LoanKey) and other.name == self.name

    def __repr__(self):
        return "L%d" % self.name


class _LoanValue:
    __slots__ = ("tag", "on_del", "__weakref__")

    def __init__(self, tag, on_del=None):
        self.tag = tag
        self.on_del = on_del

    def __del__(self):
        on_del, self.on_del = self.on_del, None
        if on_del is not None:
            on_del()


def test_hostile_code_around_versions_that_share_nodes(core):
    """Derived versions share their unchanged nodes with the versions they
    came from (in the C core a derived key-trie node borrows its source's
    children and keeps the source alive).  User code -- a key's ``__eq__``,
    a value's finalizer, a weakref callback, a GC pass -- drops those source
    versions, derives from them and edits an evolver over them in the middle
    of derivations and evolver edits; every version left must stay whole and
    hold what a dict model says."""
    import random
    import weakref

    rng = random.Random(814)
    n = 600
    pool = []  # [version, model dict]; user code appends and removes
    start = {_LoanKey(i): _LoanValue(i) for i in range(n)}
    pool.append([core.frozendict(start), {k.name: v for k, v in start.items()}])
    del start
    ev = {"e": None, "model": None}
    refs = []
    ran = [0] * 5  # how often each kind of hostile action ran

    def drop_some():
        for _ in range(min(len(pool) - 1, rng.randrange(4))):
            pool.pop(rng.randrange(len(pool)))

    def derive_one():
        version, model = pool[rng.randrange(len(pool))]
        name = rng.randrange(n + 50)
        if name in model and rng.random() < 0.4:
            pool.append(
                [version.delete(_LoanKey(name)), {k: v for k, v in model.items() if k != name}]
            )
        else:
            value = _LoanValue(("hook", name))
            pool.append([version.set(_LoanKey(name), value), {**model, name: value}])

    def edit_evolver():
        e = ev["e"]
        if e is None:
            return
        name = rng.randrange(n + 50)
        value = _LoanValue(("ev-hook", name))
        try:
            e[_LoanKey(name)] = value
        except RuntimeError:  # an edit of e is running: refused, nothing changed
            return
        ev["model"][name] = value

    def hostile():
        if ev.get("quiet"):  # the checks below compare a snapshot with its model
            return
        action = rng.randrange(5)
        ran[action] += 1
        if action == 0:
            drop_some()
        elif action == 1:
            derive_one()
        elif action == 2:
            edit_evolver()
        elif action == 3:
            gc.collect()
        else:
            for version, _ in pool[:3]:
                list(version.items())

    def check(version, model):
        version._check()
        assert {k.name: v for k, v in version.items()} == model
        assert len(version) == len(model)

    for step in range(400):
        _LoanKey.hook = hostile if rng.random() < 0.5 else None
        version, model = pool[rng.randrange(len(pool))]
        name = rng.randrange(n + 50)
        choice = rng.randrange(4)
        if choice == 0:
            value = _LoanValue(step, on_del=hostile if rng.random() < 0.3 else None)
            refs.append(weakref.ref(value, lambda _r: hostile()))
            pool.append([version.set(_LoanKey(name), value), {**model, name: value}])
        elif choice == 1 and name in model:
            pool.append(
                [version.delete(_LoanKey(name)), {k: v for k, v in model.items() if k != name}]
            )
        elif choice == 2:
            if ev["e"] is None or rng.random() < 0.1:
                ev["e"], ev["model"] = version.evolve(), dict(model)
            value = _LoanValue(("ev", step), on_del=hostile if rng.random() < 0.3 else None)
            # The model moves first: a finalizer run by this edit's release
            # may edit the evolver after it, and that edit must win.
            ev["model"][name] = value
            ev["e"][_LoanKey(name)] = value
            if name % 3 == 0:
                ev["model"].pop(name + 1, None)
                ev["e"].pop(_LoanKey(name + 1), None)
        else:
            drop_some()
        _LoanKey.hook = None
        if len(pool) > 40:
            del pool[1:20]
        if step % 25 == 0:
            ev["quiet"] = True
            for version, model in pool:
                check(version, model)
            if ev["e"] is not None:
                check(ev["e"].freeze(), ev["model"])
            ev["quiet"] = False
    ev["quiet"] = True
    ev["e"] = None
    refs.clear()
    gc.collect()
    for version, model in pool:
        check(version, model)
    assert min(ran) >= 10, ran  # the user code really ran, every kind of it
