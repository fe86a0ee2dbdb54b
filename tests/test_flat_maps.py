"""Small maps are flat: a frozendict of at most FLAT_MAX keys is one
array of (hash, key, value) in insertion order, a larger one has the tries.

Every way of making a frozendict must land on the right side of the threshold
(flat exactly when ``len <= FLAT_MAX``: promotion at one key more, demotion when a
removal leaves FLAT_MAX), and the switch must be invisible: the same items, order,
hash, equality, diff, pickles, views and user calls as a dict model.  The
``_dump()`` text says which form a map has (``frozendict len=3 flat``).

A core without the flat form yet (the two cores gain it on separate branches)
skips these tests; once both have it, every test runs on both.
"""

import copy
import gc
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st
from keys import CountingKey, HashKey

from frozenmap._pycore.flat import FLAT_MAX

TOP = "k%d" % FLAT_MAX  # the key that makes items(FLAT_MAX + 1)
MASK = (1 << 64) - 1


def _needs_flat(core):
    if "flat" not in core.frozendict(a=1)._dump():
        pytest.skip("this core has no flat form yet")


@pytest.fixture
def fcore(core):
    _needs_flat(core)
    return core


def is_flat(fd):
    return fd._dump().split("\n", 1)[0].endswith(" flat")


def assert_form(fd):
    """The invariant, plus the core's own consistency check."""
    fd._check()
    assert is_flat(fd) == (len(fd) <= FLAT_MAX), fd._dump()


def items(n, start=0):
    return [("k%d" % i, i) for i in range(start, start + n)]


# --- the form and its text --------------------------------------------------------


def test_dump_of_a_flat_map_lists_hash_key_value_in_order(fcore):
    fd = fcore.frozendict([("b", 2), ("a", 1), (3, "c")])
    expected = ["frozendict len=3 flat"] + [
        "  (%d, %r, %r)" % (hash(k) & MASK, k, v) for k, v in [("b", 2), ("a", 1), (3, "c")]
    ]
    assert fd._dump() == "\n".join(expected)
    assert fcore.frozendict()._dump() == "frozendict len=0 flat"


@pytest.mark.parametrize("n", range(0, FLAT_MAX + 5))
def test_construction_paths_are_flat_exactly_up_to_eight(fcore, n):
    pairs = items(n)
    made = [
        fcore.frozendict(dict(pairs)),
        fcore.frozendict(pairs),
        fcore.frozendict(iter(pairs)),
        fcore.frozendict(**dict(pairs)),
        fcore.frozendict(dict(pairs[: n // 2]), **dict(pairs[n // 2 :])),
        fcore.frozendict(fcore.frozendict(pairs)),
        fcore.frozendict.fromkeys([k for k, _ in pairs], 0),
        fcore.frozendict(pairs).copy(),
        pickle.loads(pickle.dumps(fcore.frozendict(pairs))),
        copy.deepcopy(fcore.frozendict(pairs)),
    ]
    for fd in made:
        assert_form(fd)
        assert len(fd) == n
    assert list(made[0].items()) == pairs


def test_set_promotes_at_nine_and_delete_demotes_at_eight(fcore):
    fd = fcore.frozendict(items(FLAT_MAX))
    assert is_flat(fd)
    big = fd.set(TOP, FLAT_MAX)
    assert not is_flat(big)
    assert_form(big)
    assert list(big.items()) == items(FLAT_MAX + 1)
    for k, _ in items(FLAT_MAX + 1):
        small = big.delete(k)
        assert_form(small)
        assert is_flat(small)
        assert list(small.items()) == [p for p in items(FLAT_MAX + 1) if p[0] != k]
        assert small == dict(small.items())
        assert hash(small) == hash(fcore.frozendict(small.items()))
    assert big.discard("k0") == fd.delete("k0").set(TOP, FLAT_MAX)
    assert is_flat(fd)  # the old version is untouched
    assert list(fd.items()) == items(FLAT_MAX)


def test_every_derivation_lands_on_its_side_of_the_threshold(fcore):
    fd8 = fcore.frozendict(items(FLAT_MAX))
    fd9 = fcore.frozendict(items(FLAT_MAX + 1))
    results = {
        "set new": fd8.set("x", 1),
        "set existing": fd8.set("k0", 100),
        "delete": fd9.delete("k4"),
        "or": fd8 | {"x": 1},
        "or small": fcore.frozendict(items(3)) | {"x": 1},
        "or flat to trie": fcore.frozendict({"x": 1}) | fd8,
        "sub": fd9 - {"k0"},
        "sub big": fcore.frozendict(items(FLAT_MAX + 12)) - [k for k, _ in items(12)],
        "and": fd9 & {"k0", "k1"},
        "and walk": fcore.frozendict(items(FLAT_MAX + 4)) & fcore.frozendict(items(4)),
        "replace": fd8.__replace__(x=1),
        "merge_with": fd8.merge_with(lambda a, b: a + b, {"x": 1}),
        "set_in": fd8.set_in(["x"], 1),
        "set_in nested": fcore.frozendict(a=fd8).set_in(["a", "x"], 1)["a"],
        "update_in": fd9.update_in(["k0"], lambda v: v + 1),
        "delete_in": fd9.delete_in(["k0"]),
        "slice": fd9.slice(0, FLAT_MAX),
        "slice small": fd9.slice(2, 5),
        "slice all": fd8.slice(0, FLAT_MAX),
        "diff apply": fd9.diff(fd8).apply(fd9),
        "diff added": fd8.set("x", 1).diff(fd8).added,
    }
    for name, fd in results.items():
        assert_form(fd), name
    assert is_flat(results["delete"]) and not is_flat(results["set new"])
    assert results["diff apply"] == fd8


def test_evolver_from_flat_and_back(fcore):
    fd = fcore.frozendict(items(FLAT_MAX))
    ev = fd.evolve()
    assert ev.freeze() is fd
    ev["x"] = 1
    big = ev.freeze()
    assert not is_flat(big) and len(big) == FLAT_MAX + 1
    del ev["x"]
    back = ev.freeze()
    assert is_flat(back) and back == fd
    ev2 = fcore.frozendict(items(3)).evolve()
    ev2["k0"] = ev2["k0"]  # the same value object: nothing changed
    assert ev2.freeze() == fcore.frozendict(items(3))
    ev3 = fd.evolve()
    ev3["k1"] = "changed"
    ev3["k1"] = 1
    frozen = ev3.freeze()
    assert frozen == fd
    assert_form(frozen)


# --- behaviour identical to a dict across the threshold ------------------------------


@given(
    st.lists(
        st.tuples(st.sampled_from(["set", "del"]), st.integers(0, FLAT_MAX + 4), st.integers(0, 3)),
        max_size=40,
    )
)
def test_model_against_a_dict_keeping_every_version(core, ops):
    _needs_flat(core)
    fcore = core
    fd = fcore.frozendict()
    model = {}
    history = [(fd, dict(model))]
    for op, k, v in ops:
        if op == "set":
            fd = fd.set(k, v)
            model[k] = v
        else:
            fd = fd.discard(k)
            model.pop(k, None)
        history.append((fd, dict(model)))
    for version, expected in history:
        assert_form(version)
        assert list(version.items()) == list(expected.items())
        assert version == expected
        assert list(reversed(version)) == list(reversed(expected))
        assert hash(version) == hash(fcore.frozendict(expected))
        for k in range(FLAT_MAX + 5):
            assert (k in version) == (k in expected)
            assert version.get(k, "missing") == expected.get(k, "missing")


# --- flat against trie: equality, hash, diff -----------------------------------------


def test_a_nine_key_map_minus_one_equals_the_eight_key_map(fcore):
    fd9 = fcore.frozendict(items(FLAT_MAX + 1))
    fd8 = fcore.frozendict(items(FLAT_MAX))
    smaller = fd9.delete(TOP)
    assert smaller == fd8 and hash(smaller) == hash(fd8)
    assert fd9 != fd8 and fd8 != fd9
    # diff between the two forms: what the generic (dict) path says
    others = [fd8, fd9, fd8.set("k0", "zero"), fd9.set("k0", "zero").delete("k5"), fd8.slice(0, 3)]
    for a in others:
        for b in others:
            d = a.diff(b)
            g = a.diff(dict(b))
            assert (dict(d.added), dict(d.removed), dict(d.changed)) == (
                dict(g.added),
                dict(g.removed),
                dict(g.changed),
            )
            assert list(d.added.items()) == list(g.added.items())
            assert d.apply(a) == b


def test_hash_is_kept_across_promotion_and_demotion(fcore):
    fd8 = fcore.frozendict(items(FLAT_MAX))
    h = hash(fd8)
    up = fd8.set("x", 1)
    assert hash(up) == hash(fcore.frozendict(items(FLAT_MAX) + [("x", 1)]))
    assert hash(up.delete("x")) == h


# --- user calls on a flat scan ----------------------------------------------------


class Recorder:
    def __init__(self, log, name, h):
        self.log, self.name, self.h = log, name, h

    def __hash__(self):
        return self.h

    def __eq__(self, other):
        self.log.append((self.name, getattr(other, "name", other)))
        return isinstance(other, Recorder) and other.name == self.name

    def __repr__(self):
        return "Recorder(%r)" % self.name


def test_lookup_calls_eq_once_per_equal_hash_in_insertion_order(fcore):
    log = []
    keys = [Recorder(log, n, 7 if n in "bd" else ord(n)) for n in "abcd"]
    fd = fcore.frozendict((k, i) for i, k in enumerate(keys))
    log.clear()
    probe = Recorder([], "d", 7)
    assert fd[probe] == 3
    assert log == [("b", "d"), ("d", "d")]
    log.clear()
    assert Recorder([], "z", 7) not in fd
    assert log == [("b", "z"), ("d", "z")]
    log.clear()
    assert fd[keys[3]] == 3  # identity first: no __eq__ for the key itself
    assert log == [("b", "d")]


def test_colliding_keys_cross_the_threshold(fcore):
    count = FLAT_MAX + 4
    keys = [HashKey(5, i) for i in range(count)]
    fd = fcore.frozendict()
    for i, k in enumerate(keys):
        fd = fd.set(k, i)
        assert_form(fd)
    assert [fd[k] for k in keys] == list(range(count))
    for k in keys[:6]:
        fd = fd.delete(k)
        assert_form(fd)
    assert list(fd.values()) == list(range(6, count))


@pytest.mark.parametrize("n", [1, 3, FLAT_MAX, FLAT_MAX + 1])
def test_construction_hashes_each_key_once_and_compares_none(fcore, n):
    keys = [CountingKey("k%d" % i) for i in range(n)]
    source = {k: i for i, k in enumerate(keys)}
    for make in (lambda: fcore.frozendict(source), lambda: fcore.frozendict(source.items())):
        CountingKey.reset()
        fd = make()
        assert (CountingKey.hash_calls, CountingKey.eq_calls) == (n, 0)
        assert_form(fd)
    CountingKey.reset()
    assert [fd[k] for k in keys] == list(range(n))  # found by identity
    assert (CountingKey.hash_calls, CountingKey.eq_calls) == (n, 0)


class Hostile:
    """A key whose __eq__ runs the next of its actions (derive, collect...)."""

    def __init__(self, h, *actions):
        self.h, self.actions = h, list(actions)

    def __hash__(self):
        return self.h

    def __eq__(self, other):
        if self.actions:
            self.actions.pop(0)()
        return self is other


def test_hostile_eq_during_a_flat_scan_and_edit(fcore):
    """The stored key's __eq__ derives from the map, drops versions and runs
    the collector in the middle of a lookup, a set and a delete."""
    held = []
    base = fcore.frozendict(items(5))

    def derive():
        held.append(base.set("late", 1).delete("k0"))
        held.append(base.set("k1", "x"))
        del held[:1]
        gc.collect()

    # (the first action runs in base.set: "k2" has the same hash)
    key = Hostile(hash("k2"), derive, derive, derive, derive, gc.collect)
    fd = base.set(key, "v")
    assert Hostile(hash("k2")) not in fd
    assert fd.get(Hostile(hash("k2"))) is None
    out = fd.set(Hostile(hash("k2")), "w")
    assert len(out) == 7 and is_flat(out) and out[key] == "v"
    out._check()
    assert fd.discard(Hostile(hash("k2"))) is fd
    assert not key.actions  # every action ran inside a scan
    assert list(fd.items()) == items(5) + [(key, "v")]
    for version in held:
        version._check()
    assert fd.delete(key) == base


def test_an_iterator_over_a_cleared_flat_map_stops(fcore):
    """tp_clear (what the GC calls on a cycle) empties a flat map under a live
    iterator: the iterator then ends, it never reads the released entries."""
    from fault_helpers import call_tp_clear

    if fcore.name != "c":
        pytest.skip("the pure core's objects are cleared by subtype_clear")
    fd = fcore.frozendict(items(5))
    forward, backward, values = iter(fd), reversed(fd), iter(fd.values())
    assert next(forward) == "k0" and next(backward) == "k4"
    assert call_tp_clear(fd) == 0
    assert len(fd) == 0 and is_flat(fd) and list(fd.items()) == []
    fd._check()
    assert list(forward) == [] and list(backward) == [] and list(values) == []
    assert fd == {} and hash(fd) == hash(fcore.frozendict())
    assert fd.set("a", 1) == {"a": 1}


# --- pickles, views, iterators, positions -------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 3, FLAT_MAX, FLAT_MAX + 1])
def test_pickle_round_trips(fcore, n):
    fd = fcore.frozendict(items(n))
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(fd, proto))
        assert back == fd and list(back.items()) == items(n)
        assert_form(back)
        it = iter(fd.items())
        if n:
            next(it)
        assert list(pickle.loads(pickle.dumps(it, proto))) == items(n)[1:]


def test_views_iterators_and_positions_over_a_flat_map(fcore):
    fd = fcore.frozendict(items(6))
    assert list(fd) == [k for k, _ in items(6)]
    assert list(fd.values()) == list(range(6))
    assert list(reversed(fd.items())) == items(6)[::-1]
    assert list(reversed(fd.values())) == list(range(6))[::-1]
    it = iter(fd.keys())
    assert it.__length_hint__() == 6
    next(it)
    assert it.__length_hint__() == 5
    assert ("k1", 1) in fd.items() and ("k1", 2) not in fd.items()
    assert fd.keys() & {"k1", "zz"} == {"k1"}
    assert fd.key_at(0) == "k0" and fd.key_at(-1) == "k5"
    assert fd.value_at(2) == 2 and fd.item_at(3) == ("k3", 3)
    assert fd.index("k4") == 4
    with pytest.raises(KeyError):
        fd.index("nope")
    with pytest.raises(IndexError):
        fd.key_at(6)
    assert list(fd.slice(1, 3).items()) == items(6)[1:3]
    assert repr(fd) == "frozendict(%r)" % dict(items(6))
    ev = fd.evolve()
    assert ev.key_at(1) == "k1" and ev.index("k5") == 5


def test_subclass_with_slots_is_flat_too(fcore):
    class Sub(fcore.frozendict):
        __slots__ = ("extra",)

    s = Sub(items(3))
    s.extra = 1
    assert is_flat(s) and s.extra == 1
    assert type(s.set("x", 1)) is fcore.frozendict
    assert Sub(s) == s


def test_evolver_edits_freeze_to_the_right_form(fcore):
    ev = fcore.frozendict(items(FLAT_MAX + 4)).evolve()
    for _ in range(3):
        ev.popitem()
    assert not is_flat(ev.freeze()) and len(ev.freeze()) == FLAT_MAX + 1
    ev.pop("k0")
    small = ev.freeze()
    assert_form(small)
    assert is_flat(small) and list(small.items()) == items(FLAT_MAX + 1)[1:]
    ev.update(items(4, start=20))
    assert_form(ev.freeze())
    ev.clear()
    empty = ev.freeze()
    assert_form(empty) and len(empty) == 0
    ev.setdefault("a", 1)
    assert_form(ev.freeze())
    ev2 = fcore.frozendict(items(FLAT_MAX)).evolve()
    ev2.update({"x": 1})
    assert not is_flat(ev2.freeze())
    del ev2["x"]
    assert is_flat(ev2.freeze()) and ev2.freeze() == fcore.frozendict(items(FLAT_MAX))


@pytest.mark.parametrize("extra", [0, FLAT_MAX])
def test_one_key_object_stored_twice_under_two_hashes_is_a_legal_map(core, extra):
    """A key whose hash changed between two insertions is stored twice, as
    dict stores it; ``_check()`` accepts that map in either form (flat, and
    in tries past FLAT_MAX), and both entries are there."""

    class Shifty:
        def __init__(self):
            self.h = 1

        def __hash__(self):
            return self.h

    key = Shifty()
    fd = core.frozendict([("x%d" % i, i) for i in range(extra)] + [(key, "first")])
    model = dict(fd)
    key.h = 2
    twice = fd.set(key, "second")
    model[key] = "second"  # dict stores it twice as well
    twice._check()
    assert len(twice) == len(model) == extra + 2
    assert list(twice.values()) == list(model.values())
    assert [k is key for k in twice] == [k is key for k in model]
