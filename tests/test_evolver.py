"""The Evolver (docs/spec.md §2): a MutableMapping over a private copy-on-write version.

Each MutableMapping method is checked against a ``dict`` doing the same; then
``freeze()`` (O(1), and later edits never change what was frozen), the guard
against keys added or removed during iteration, all-or-nothing ``update()``,
the re-entrancy guard, pickling and ``copy()``.
"""

import copy
import pickle
from collections.abc import MutableMapping

import pytest
from helpers import Snapshot, typed_items
from keys import HashKey


def pair(core, items=()):
    """A fresh evolver and a dict with the same items."""
    items = list(items)
    return core.frozendict(items).evolve(), dict(items)


def same(e, d):
    """Assert the evolver matches the dict in order, key objects and values."""
    assert typed_items(e) == typed_items(d)
    assert len(e) == len(d)
    assert list(e) == list(d)
    assert list(reversed(e)) == list(reversed(d))
    assert e == d and d == e
    e._check()


ITEMS = [("a", 1), ("b", 2), ("c", 3), (1, "one"), (2.5, None)]


# --- the MutableMapping methods against dict -------------------------------------------


def test_evolver_is_a_mutable_mapping(core):
    e = core.frozendict().evolve()
    assert isinstance(e, core.Evolver)
    assert isinstance(e, MutableMapping)


def test_setitem_and_delitem(core):
    e, d = pair(core, ITEMS)
    for target in (e, d):
        target["b"] = 20
        target["new"] = 0
        del target["a"]
        target["a"] = "back"
        target[1.0] = "float"
        target[True] = "bool"
    same(e, d)
    with pytest.raises(KeyError) as info:
        del e["missing"]
    assert info.value.args == ("missing",)
    same(e, d)


def test_reads(core):
    e, d = pair(core, ITEMS)
    for key in ["a", 1, 1.0, True, 2.5, "zz"]:
        assert (key in e) == (key in d)
        assert e.get(key) == d.get(key)
        assert e.get(key, "dflt") == d.get(key, "dflt")
    assert e["c"] == 3
    with pytest.raises(KeyError):
        e["zz"]
    assert list(e.keys()) == list(d.keys())
    assert list(e.values()) == list(d.values())
    assert list(e.items()) == list(d.items())
    assert bool(e) and not bool(core.frozendict().evolve())


def test_views_are_live(core):
    e = core.frozendict(a=1).evolve()
    keys, values, items = e.keys(), e.values(), e.items()
    e["b"] = 2
    assert list(keys) == ["a", "b"]
    assert list(values) == [1, 2]
    assert list(items) == [("a", 1), ("b", 2)]
    assert len(keys) == 2


def test_popitem_is_lifo(core):
    e, d = pair(core, ITEMS)
    e["x"] = 9
    d["x"] = 9
    del e["b"]
    del d["b"]
    popped = []
    while d:
        expected = d.popitem()
        got = e.popitem()
        assert got == expected
        assert type(got[0]) is type(expected[0])
        popped.append(got)
        same(e, d)
    assert [k for k, _ in popped] == ["x", 2.5, 1, "c", "a"]
    with pytest.raises(KeyError):
        e.popitem()


def test_setdefault(core):
    e, d = pair(core, ITEMS)
    assert e.setdefault("a", 100) == d.setdefault("a", 100) == 1
    assert e.setdefault("new") is d.setdefault("new") is None
    assert e.setdefault("new2", [7]) == d.setdefault("new2", [7]) == [7]
    assert e.setdefault(1.0, "x") == "one"
    same(e, d)


def test_pop(core):
    e, d = pair(core, ITEMS)
    assert e.pop("b") == d.pop("b") == 2
    assert e.pop("zz", "dflt") == d.pop("zz", "dflt") == "dflt"
    assert e.pop("zz", None) is None
    with pytest.raises(KeyError):
        e.pop("zz")
    assert e.pop(True) == d.pop(True) == "one"
    same(e, d)


UPDATES = [
    ("mapping", lambda: ({"b": 20, "z": 26},), {}),
    ("pairs", lambda: ([("b", 20), ("z", 26), ("b", 21)],), {}),
    ("kwargs", lambda: (), {"b": 20, "z": 26}),
    ("mapping+kwargs", lambda: ({"b": 20},), {"b": 30, "y": 1}),
    ("generator", lambda: ((x for x in [("q", 1), ("a", 0)]),), {}),
    ("lists-and-strings", lambda: ([["k", "v"], "xy"],), {}),
    ("equal-keys", lambda: ([(1.0, "float"), (True, "bool"), (2.5, 0)],), {}),
    ("nothing", lambda: (), {}),
]


@pytest.mark.parametrize("name,make_args,kwargs", UPDATES, ids=[u[0] for u in UPDATES])
def test_update(core, name, make_args, kwargs):
    e, d = pair(core, ITEMS)
    d.update(*make_args(), **kwargs)
    assert e.update(*make_args(), **kwargs) is None
    same(e, d)


def test_update_from_other_mapping_types(core):
    class KeysOnly:
        def keys(self):
            return ["m", "a"]

        def __getitem__(self, key):
            return key * 2

    for source in (core.frozendict(a=0, w=1), core.frozendict(a=0, w=1).evolve(), KeysOnly()):
        e, d = pair(core, ITEMS)
        e.update(source)
        d.update(source)
        same(e, d)


def test_update_with_the_evolver_itself(core):
    e, d = pair(core, ITEMS)
    e.update(e)
    d.update(d)
    same(e, d)


def test_clear(core):
    e, d = pair(core, ITEMS)
    e.clear()
    d.clear()
    same(e, d)
    e["a"] = 1
    d["a"] = 1
    same(e, d)
    assert e.freeze() == {"a": 1}
    assert hash(e.freeze()) == hash(frozenset({"a": 1}.items()))


def test_iteration_order_follows_dict(core):
    e, d = pair(core, [(i, i) for i in range(40)])
    for target in (e, d):
        for i in range(0, 40, 3):
            del target[i]
        for i in range(0, 40, 6):
            target[i] = -i
        target[5] = "five"
    same(e, d)


def test_random_operations_against_dict(core):
    import random

    rng = random.Random(1234)
    e, d = pair(core)
    for step in range(3000):
        key = rng.choice([rng.randrange(60), str(rng.randrange(10)), float(rng.randrange(5))])
        op = rng.randrange(8)
        if op <= 2:
            e[key] = d[key] = step
        elif op == 3:
            assert e.pop(key, None) == d.pop(key, None)
        elif op == 4:
            assert e.setdefault(key, step) == d.setdefault(key, step)
        elif op == 5 and d:
            assert e.popitem() == d.popitem()
        elif op == 6:
            batch = [(rng.randrange(60), step) for _ in range(rng.randrange(5))]
            e.update(batch)
            d.update(batch)
        else:
            assert e.discard(key) is e
            d.pop(key, None)
        if step % 100 == 0:
            same(e, d)
    same(e, d)


# --- freeze ---------------------------------------------------------------------------


def test_freeze_returns_an_exact_frozendict(core):
    e = core.frozendict(a=1).evolve()
    e["b"] = 2
    out = e.freeze()
    assert type(out) is core.frozendict
    assert list(out.items()) == [("a", 1), ("b", 2)]
    out._check()


def test_freeze_without_edits_is_the_same_object_each_time(core):
    e = core.frozendict(a=1).evolve()
    e["b"] = 2
    first = e.freeze()
    assert e.freeze() is first
    assert e.freeze() is first
    e["c"] = 3
    second = e.freeze()
    assert second is not first
    assert e.freeze() is second


def test_freeze_of_an_unedited_evolver_equals_the_source(core):
    fd = core.frozendict(a=1, b=2)
    out = fd.evolve().freeze()
    assert out == fd and list(out.items()) == list(fd.items())


def test_editing_after_freeze_never_changes_what_was_frozen(core):
    e = core.frozendict((i, i) for i in range(500)).evolve()
    snaps = []
    for round_ in range(6):
        # Edits of many nearby keys, so the evolver owns (and would edit in place)
        # the nodes it made since the last freeze.
        for i in range(round_, 500, 3):
            e[i] = (round_, i)
        for i in range(round_ * 7, round_ * 7 + 20):
            e.pop(i, None)
        e[1000 + round_] = round_
        frozen = e.freeze()
        snaps.append((frozen, Snapshot(frozen), dict(frozen.items())))
    e.clear()
    e.update((i, "after") for i in range(100))
    e.popitem()
    for frozen, snap, as_dict in snaps:
        snap.check()
        assert frozen == as_dict
        assert hash(frozen) == hash(frozenset(as_dict.items()))


def test_edits_never_change_the_source_version(core):
    fd = core.frozendict((i, i) for i in range(300))
    snap = Snapshot(fd)
    e = fd.evolve()
    for i in range(300):
        e[i] = -i
    for i in range(0, 300, 2):
        del e[i]
    e.update({1000: 0})
    e.popitem()
    e.setdefault(5000, 1)
    e.clear()
    snap.check()


def test_two_evolvers_from_one_version_are_independent(core):
    fd = core.frozendict((i, i) for i in range(100))
    e1, e2 = fd.evolve(), fd.evolve()
    for i in range(100):
        e1[i] = "one"
    del e2[5]
    assert all(v == "one" for v in e1.values())
    assert 5 not in e2 and all(v == k for k, v in e2.items())
    assert list(fd.items()) == [(i, i) for i in range(100)]


# --- set / discard chain ----------------------------------------------------------------


def test_set_and_discard_return_the_evolver(core):
    e = core.frozendict(a=1).evolve()
    assert e.set("b", 2) is e
    assert e.discard("a") is e
    assert e.discard("missing") is e
    assert e.set("c", 3).set("b", 20).discard("c") is e
    assert list(e.items()) == [("b", 20)]
    e._check()


# --- repr, equality, hashing ---------------------------------------------------------------


def test_repr(core):
    assert repr(core.frozendict().evolve()) == "Evolver()"
    e = core.frozendict(a=1).evolve()
    e[2] = "b"
    assert repr(e) == "Evolver({'a': 1, 2: 'b'})"
    e.clear()
    assert repr(e) == "Evolver()"


def test_repr_of_a_self_containing_evolver(core):
    e = core.frozendict().evolve()
    e["me"] = e
    assert repr(e) == "Evolver({'me': Evolver({...})})"


def test_equality(core):
    e = core.frozendict(a=1, b=2).evolve()
    assert e == {"b": 2, "a": 1} and {"b": 2, "a": 1} == e
    assert e == core.frozendict(b=2, a=1) and core.frozendict(b=2, a=1) == e
    assert e == core.frozendict(a=1, b=2).evolve()
    assert not (e != {"a": 1, "b": 2})
    assert e != {"a": 1} and {"a": 1} != e
    assert e != {"a": 1, "b": 3}
    assert e != core.frozendict(a=1)
    assert e != [("a", 1), ("b", 2)]
    assert (e == 5) is False


def test_evolver_is_unhashable(core):
    e = core.frozendict(a=1).evolve()
    with pytest.raises(TypeError):
        hash(e)
    with pytest.raises(TypeError):
        {e}


# --- iteration while editing -------------------------------------------------------------


def test_replacing_values_during_iteration_is_allowed(core):
    e, d = pair(core, [(i, i) for i in range(50)])
    for key in e:
        e[key] = e[key] + 1
    for key in d:
        d[key] = d[key] + 1
    same(e, d)
    for key, value in e.items():
        e[key] = value * 2
    assert list(e.values()) == [2 * (i + 1) for i in range(50)]


@pytest.mark.parametrize(
    "edit",
    [
        lambda e: e.__setitem__("new", 1),
        lambda e: e.__delitem__(49),
        lambda e: e.pop(30),
        lambda e: e.popitem(),
        lambda e: e.setdefault("new"),
        lambda e: e.update({"new": 1}),
        lambda e: e.clear(),
        lambda e: (e.__delitem__(40), e.__setitem__("new", 1)),
        lambda e: e.discard(20),
    ],
    ids=["add", "del", "pop", "popitem", "setdefault", "update", "clear", "del+add", "discard"],
)
@pytest.mark.parametrize("view", ["keys", "values", "items", "reversed"])
def test_adding_or_removing_keys_during_iteration_raises(core, edit, view):
    e = core.frozendict((i, i) for i in range(50)).evolve()
    iterators = {
        "keys": lambda: iter(e),
        "values": lambda: iter(e.values()),
        "items": lambda: iter(e.items()),
        "reversed": lambda: reversed(e),
    }
    it = iterators[view]()
    next(it)
    edit(e)
    with pytest.raises(RuntimeError):
        for _ in it:
            pass
    e._check()


def test_no_size_change_edits_do_not_break_iteration(core):
    e = core.frozendict((i, i) for i in range(50)).evolve()
    it = iter(e)
    next(it)
    e.setdefault(3, "ignored")  # present: nothing changes
    e.discard("missing")
    e.pop("missing", None)
    e.update({})
    assert len(list(it)) == 49


# --- failing edits leave the evolver as it was -----------------------------------------------


def _failing_updates():
    def gen():
        yield ("a", "changed")
        yield ("new1", 1)
        raise ValueError("generator broke")

    class BadMapping:
        def keys(self):
            return ["a", "new2", "boom"]

        def __getitem__(self, key):
            if key == "boom":
                raise LookupError("boom")
            return key

    return [
        ("generator", lambda: gen(), ValueError),
        ("wrong length", lambda: [("a", 5), ("new", 1), ("x", 1, 2)], ValueError),
        ("not a pair", lambda: [("a", 5), 7], TypeError),
        ("unhashable key", lambda: [("a", 5), ("new", 1), ([], 1)], TypeError),
        ("unhashable kwargs-free dict key", lambda: [("b", 9), ({}, 0)], TypeError),
        ("bad mapping", lambda: BadMapping(), LookupError),
    ]


@pytest.mark.parametrize(
    "name,make,error", _failing_updates(), ids=[f[0] for f in _failing_updates()]
)
@pytest.mark.parametrize("owned", [False, True], ids=["fresh", "after-edits"])
def test_failing_update_applies_nothing(core, name, make, error, owned):
    e = core.frozendict((k, i) for i, k in enumerate(["a", "b", "c"] + list(range(100)))).evolve()
    if owned:
        # The evolver now owns nodes it could edit in place during the update.
        for i in range(100):
            e[i] = ("owned", i)
        e["a"] = "owned"
    before = typed_items(e)
    frozen_before = e.freeze()
    with pytest.raises(error):
        e.update(make())
    assert typed_items(e) == before
    assert e == frozen_before
    e._check()
    assert list(frozen_before.items()) == [(k, v) for _, k, v in before]
    # Still usable.
    e["after"] = 1
    assert list(e)[-1] == "after"
    e._check()


def test_failing_update_with_kwargs_applies_nothing(core):
    e = core.frozendict(a=1).evolve()
    with pytest.raises(ValueError):
        e.update([("b", 2), (1, 2, 3)], c=3)
    assert list(e.items()) == [("a", 1)]


def test_failing_update_does_not_break_iteration(core):
    e = core.frozendict((i, i) for i in range(10)).evolve()
    it = iter(e)
    next(it)
    with pytest.raises(ValueError):
        e.update([("z", 1), (1, 2, 3)])
    assert list(it) == list(range(1, 10))


def test_failing_edits_leave_the_evolver_as_it_was(core):
    e = core.frozendict(a=1, b=2).evolve()
    before = typed_items(e)
    for op in (
        lambda: e.__setitem__([], 1),
        lambda: e.__getitem__([]),
        lambda: e.__delitem__({}),
        lambda: e.pop([]),
        lambda: e.setdefault([], 1),
        lambda: e.discard([]),
        lambda: e.set([], 1),
    ):
        with pytest.raises(TypeError, match="unhashable type: 'list'|unhashable type: 'dict'"):
            op()
        assert typed_items(e) == before
        e._check()


class ReentrantKey:
    """A key whose ``__eq__`` edits (or reads) the evolver it is used with.

    It hashes like ``HashKey(42, ...)``, so comparing it with the stored
    ``HashKey(42, "stored")`` runs its ``__eq__`` whichever side is asked first
    (HashKey answers NotImplemented for other types).
    """

    def __init__(self, name, evolver=None, action=None):
        self.name = name
        self.evolver = evolver
        self.action = action

    def __hash__(self):
        return 42

    def __eq__(self, other):
        if self.action is not None and self.evolver is not None:
            action, self.action = self.action, None
            action(self.evolver)
        if not isinstance(other, ReentrantKey):
            return NotImplemented
        return self.name == other.name

    def __repr__(self):
        return "ReentrantKey(%r)" % (self.name,)


@pytest.mark.parametrize(
    "operation",
    [
        lambda e, k: e.__setitem__(k, "v"),
        lambda e, k: e.__delitem__(k),
        lambda e, k: e.pop(k, None),
        lambda e, k: e.setdefault(k, "v"),
        lambda e, k: e.update({k: "v"}),
        lambda e, k: e.discard(k),
    ],
    ids=["setitem", "delitem", "pop", "setdefault", "update", "discard"],
)
@pytest.mark.parametrize(
    "inner",
    [
        lambda e: e.__setitem__("sneaky", 1),
        lambda e: e.__delitem__("a"),
        lambda e: e.clear(),
        lambda e: e.popitem(),
    ],
    ids=["inner-set", "inner-del", "inner-clear", "inner-popitem"],
)
def test_key_eq_editing_the_same_evolver_raises_runtimeerror(core, operation, inner):
    stored = HashKey(42, "stored")
    e = core.frozendict([("a", 1), (stored, 2), ("b", 3)]).evolve()
    e["b"] = 4  # the evolver owns some nodes
    before = typed_items(e)
    trigger = ReentrantKey("other", e, inner)
    with pytest.raises(RuntimeError):
        operation(e, trigger)
    assert typed_items(e) == before
    e._check()
    e["c"] = 5  # still usable
    assert list(e)[-1] == "c"


def test_key_eq_reading_the_same_evolver_is_fine(core):
    stored = HashKey(42, "stored")
    e = core.frozendict([("a", 1), (stored, 2)]).evolve()
    seen = []
    trigger = ReentrantKey("other", e, lambda ev: seen.append((len(ev), ev["a"], list(ev))))
    e[trigger] = 3
    assert seen == [(2, 1, ["a", stored])]
    assert list(e.values()) == [1, 2, 3]
    e._check()


def test_key_eq_deriving_from_the_frozen_version_is_fine(core):
    stored = HashKey(42, "stored")
    e = core.frozendict([("a", 1), (stored, 2)]).evolve()
    frozen = e.freeze()
    made = []
    trigger = ReentrantKey("other", e, lambda ev: made.append(frozen.set("x", 1).delete("a")))
    e[trigger] = 3
    assert list(made[0].items()) == [(stored, 2), ("x", 1)]
    assert list(frozen.items()) == [("a", 1), (stored, 2)]
    assert list(e.values()) == [1, 2, 3]


# --- pickling and copying ------------------------------------------------------------------


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_an_evolver(core, protocol):
    e = core.frozendict((i, str(i)) for i in range(40)).evolve()
    del e[3]
    e["last"] = [1, 2]
    clone = pickle.loads(pickle.dumps(e, protocol))
    assert type(clone).__name__ == "Evolver"
    assert list(clone.items()) == list(e.items())
    clone["more"] = 1
    assert "more" not in e
    clone._check()


def test_copy_is_independent(core):
    e = core.frozendict((i, i) for i in range(200)).evolve()
    for i in range(200):
        e[i] = "owned"  # nodes the evolver may edit in place
    c = e.copy()
    assert type(c) is type(e)
    assert list(c.items()) == list(e.items())
    for i in range(200):
        e[i] = "e"
    del e[0]
    assert all(v == "owned" for v in c.values()) and len(c) == 200
    for i in range(200):
        c[i] = "c"
    c["c-only"] = 1
    assert all(v == "e" for v in e.values()) and len(e) == 199
    assert "c-only" not in e
    e._check()
    c._check()


def test_copy_module_on_an_evolver(core):
    e = core.frozendict(a=[1]).evolve()
    shallow = copy.copy(e)
    shallow["b"] = 2
    assert "b" not in e
    deep = copy.deepcopy(e)
    deep["a"].append(2)
    assert e["a"] == [1]


def test_colliding_keys_in_an_evolver(core):
    keys = [HashKey(5, i) for i in range(300)]
    e, d = pair(core)
    for i, k in enumerate(keys):
        e[k] = d[k] = i
    for k in keys[::3]:
        del e[k]
        del d[k]
    for k in keys[::5]:
        e[k] = d[k] = "again"
    same(e, d)
    assert e.freeze() == d
