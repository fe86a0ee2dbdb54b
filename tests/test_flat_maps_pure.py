"""Small maps as flat ordered arrays: the contract of the flat form.

A frozendict is flat exactly when it holds ``FLAT_MAX`` keys or fewer,
whatever made it; crossing the threshold (a set making FLAT_MAX + 1, a delete
leaving FLAT_MAX) is invisible: the same items, order, hash, ``==`` and ``diff`` as a dict
model gives.  ``_dump()`` says which form a version is in (its first line
ends in ``flat``); ``_check()`` asserts the invariant.

Tests that depend on the flat form skip on a core that lacks it (the two
cores gained it on separate branches; once both have it, every test runs on
both).
"""

import copy
import operator
import pickle

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings
from keys import HashKey

from frozenmap._pycore.flat import FLAT_MAX

SIZES = range(0, FLAT_MAX + 5)
TOP = "k%d" % FLAT_MAX  # the key that makes model_of(FLAT_MAX + 1)


@pytest.fixture(scope="session")
def fcore(core):
    """The core under test, when it has the flat form."""
    if "flat" not in core.frozendict(a=1)._dump():
        pytest.skip("the %s core has no flat form yet" % core.name)
    return core


def is_flat(m):
    return m._dump().split("\n", 1)[0].endswith(" flat")


def assert_form(m, model=None):
    """m is flat iff it holds <= FLAT_MAX keys, passes _check, and (with a
    model) holds the model's items in its order."""
    m._check()
    assert is_flat(m) == (len(m) <= FLAT_MAX), m._dump()
    if model is not None:
        assert list(m.items()) == list(model.items())
        assert len(m) == len(model)


def model_of(n, start=0):
    return {"k%d" % i: i for i in range(start, start + n)}


# --- the form at each size, through every derivation path --------------------


def _derivations(core, n):
    """(name, result, dict model) for every way to make a map of about n keys."""
    fd = core.frozendict
    d = model_of(n)
    base = fd(d)
    bigger = fd(model_of(n + 1))
    out = [
        ("dict", base, d),
        ("kwargs", fd(**d), d),
        ("pairs", fd(list(d.items())), d),
        ("generator", fd((k, v) for k, v in d.items())),
        ("frozendict", fd(base), d),
        ("dict+kwargs", fd(model_of(n // 2), **model_of(n - n // 2, n // 2)), d),
        ("fromkeys", fd.fromkeys(list(d)), dict.fromkeys(d)),
        ("copy", base.copy(), d),
        ("copy.copy", copy.copy(base), d),
        ("deepcopy", copy.deepcopy(base), d),
        ("pickle", pickle.loads(pickle.dumps(base)), d),
        ("set", fd(model_of(n - 1)).set("k%d" % (n - 1), n - 1) if n else fd(), d),
        ("set-replace", base.set("k0", 0) if n else base, d),
        ("delete", bigger.delete("k%d" % n), d),
        ("discard", bigger.discard("k%d" % n), d),
        ("or-dict", fd(model_of(n // 2)) | model_of(n - n // 2, n // 2), d),
        ("or-frozendict", fd(model_of(n // 2)) | fd(model_of(n - n // 2, n // 2)), d),
        ("sub", bigger - ["k%d" % n], d),
        ("sub-frozendict", bigger - fd({"k%d" % n: 0}), d),
        ("and", bigger & list(d), d),
        ("and-frozendict", bigger & base, d),
        (
            "merge_with",
            fd(model_of(n // 2)).merge_with(operator.add, model_of(n - n // 2, n // 2)),
            d,
        ),
        ("slice", bigger.slice(0, n), d),
        ("slice-end", fd(model_of(n + 4)).slice(4), model_of(n, 4)),
        ("evolver", _evolved(base, n), d),
        ("Evolver", core.Evolver(d).freeze(), d),
        ("diff.added", fd().diff(base).added, d),
        ("diff.apply", _applied(core, fd(), base), d),
        ("set_in", _set_in(core, n), d),
        ("delete_in", fd(top=bigger).delete_in(["top", "k%d" % n])["top"], d),
        ("update_in", fd(top=bigger.delete("k%d" % n)).update_in(["top"], lambda m: m)["top"], d),
    ]
    return [entry if len(entry) == 3 else (entry[0], entry[1], d) for entry in out]


def _evolved(base, n):
    e = base.evolve()
    e["extra"] = 1  # may cross the threshold on the way...
    del e["extra"]  # ...and come back
    return e.freeze()


def _applied(core, old, new):
    diff = old.diff(new)
    apply = getattr(diff, "apply", None)
    if apply is None:
        return new
    return apply(old)


def _set_in(core, n):
    top = core.frozendict(top=core.frozendict(model_of(n - 1)) if n else core.frozendict())
    if not n:
        return top["top"]
    return top.set_in(["top", "k%d" % (n - 1)], n - 1)["top"]


@pytest.mark.parametrize("n", SIZES)
def test_every_derivation_is_flat_exactly_at_eight_keys_or_fewer(fcore, n):
    for name, result, model in _derivations(fcore, n):
        try:
            assert_form(result, model)
        except AssertionError as exc:
            raise AssertionError("%s at n=%d: %s" % (name, n, exc)) from None


def test_set_promotes_at_nine_and_delete_demotes_at_eight(fcore):
    m = fcore.frozendict()
    versions = [m]
    top = FLAT_MAX + 4
    for i in range(top):
        m = m.set(i, -i)
        versions.append(m)
        assert is_flat(m) == (i + 1 <= FLAT_MAX)
    for i in range(top):
        m = m.delete(i)
        versions.append(m)
        assert_form(m, {j: -j for j in range(i + 1, top)})
    # every kept version is still what it was
    for k, v in enumerate(versions[: top + 1]):
        assert_form(v, {j: -j for j in range(k)})


def test_deleting_from_nine_keys_demotes_in_order(fcore):
    m = fcore.frozendict(model_of(FLAT_MAX + 1))
    for k in list(model_of(FLAT_MAX + 1)):
        small = m.delete(k)
        expected = dict(model_of(FLAT_MAX + 1))
        del expected[k]
        assert_form(small, expected)
        assert small == fcore.frozendict(expected)
        assert hash(small) == hash(fcore.frozendict(expected)) == hash(frozenset(expected.items()))


def test_evolver_popitem_and_clear_then_freeze(fcore):
    e = fcore.frozendict(model_of(FLAT_MAX + 2)).evolve()
    e.popitem()
    assert_form(e.freeze(), model_of(FLAT_MAX + 1))
    e.popitem()
    assert_form(e.freeze(), model_of(FLAT_MAX))
    e.clear()
    assert_form(e.freeze(), {})


def test_evolver_from_a_flat_map_crosses_and_freezes_back(fcore):
    source = fcore.frozendict(model_of(FLAT_MAX))
    e = source.evolve()
    assert e.freeze() is source  # no edit: the source itself
    e[TOP] = FLAT_MAX
    nine = e.freeze()
    assert_form(nine, model_of(FLAT_MAX + 1))
    del e[TOP]
    eight = e.freeze()
    assert_form(eight, model_of(FLAT_MAX))
    assert eight == source and hash(eight) == hash(source)
    e["k0"] = "x"
    assert_form(e.freeze(), dict(model_of(FLAT_MAX), k0="x"))
    assert_form(source, model_of(FLAT_MAX))  # untouched
    assert_form(nine, model_of(FLAT_MAX + 1))


def test_the_dump_of_a_flat_map(fcore):
    assert fcore.frozendict()._dump() == "frozendict len=0 flat"
    m = fcore.frozendict({1: "a", 2: ("b",), 3: None})
    assert m._dump() == "\n".join(
        ["frozendict len=3 flat", "  (1, 1, 'a')", "  (2, 2, ('b',))", "  (3, 3, None)"]
    )


# --- a model against dict, sizes 0..12, every version kept -------------------

KEYS = (
    [HashKey(7, "c%d" % i) for i in range(3)]  # one full collision group
    + [1, 1.0, True, 0, "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
    + ["x%d" % i for i in range(FLAT_MAX - 8)]  # FLAT_MAX + 6 distinct keys
)
values = st.sampled_from([0, 1, "v", None, (1, 2)])
ops = st.lists(
    st.one_of(
        st.tuples(st.just("set"), st.sampled_from(KEYS), values),
        st.tuples(st.just("delete"), st.sampled_from(KEYS)),
        st.tuples(st.just("discard"), st.sampled_from(KEYS)),
        st.tuples(st.just("or"), st.dictionaries(st.sampled_from(KEYS), values, max_size=4)),
        st.tuples(st.just("sub"), st.lists(st.sampled_from(KEYS), max_size=4)),
        st.tuples(st.just("and"), st.lists(st.sampled_from(KEYS), max_size=FLAT_MAX + 4)),
        st.tuples(st.just("or-version"), st.integers(0, 10**6)),
        st.tuples(
            st.just("evolve"), st.lists(st.tuples(st.sampled_from(KEYS), values), max_size=5)
        ),
    ),
    max_size=40,
)


def _step(core, m, model, op, versions):
    kind = op[0]
    if kind == "set":
        return m.set(op[1], op[2]), _replaced(model, op[1], op[2])
    if kind in ("delete", "discard"):
        key = op[1]
        if key not in model:
            if kind == "delete":
                with pytest.raises(KeyError):
                    m.delete(key)
            return m.discard(key), model
        out = dict(model)
        del out[key]
        return getattr(m, kind)(key), out
    if kind == "or":
        out = dict(model)
        out.update(op[1])
        return m | op[1], out
    if kind == "sub":
        return m - op[1], {k: v for k, v in model.items() if k not in op[1]}
    if kind == "and":
        return m & op[1], {k: v for k, v in model.items() if k in op[1]}
    if kind == "or-version":
        other, other_model = versions[op[1] % len(versions)]
        out = dict(model)
        out.update(other_model)
        return m | other, out
    e = m.evolve()
    out = dict(model)
    for key, value in op[1]:
        e[key] = value
        out[key] = value
    return e.freeze(), out


def _replaced(model, key, value):
    out = dict(model)
    out[key] = value
    return out


def _same_as_model(core, m, model):
    assert_form(m, model)
    assert [type(k) for k in m] == [type(k) for k in model]  # the first key object stays
    assert list(reversed(m)) == list(reversed(model))
    assert m == model and model == m
    assert m == core.frozendict(model)
    assert hash(m) == hash(frozenset(model.items()))
    for key in KEYS:
        assert (key in m) == (key in model)
        assert m.get(key, "missing") == model.get(key, "missing")


@settings(max_examples=150, deadline=None)
@given(start=st.dictionaries(st.sampled_from(KEYS), values, max_size=FLAT_MAX + 4), program=ops)
def test_flat_and_trie_versions_follow_a_dict_model(fcore, start, program):
    m = fcore.frozendict(start)
    versions = [(m, dict(start))]
    for op in program:
        # derive from a kept version, not only the last one
        base, model = versions[(len(versions) * 7 + len(op)) % len(versions)]
        new, new_model = _step(fcore, base, model, op, versions)
        _same_as_model(fcore, new, new_model)
        versions.append((new, new_model))
    for v, model in versions:  # persistence: every kept version is as made
        _same_as_model(fcore, v, model)
    for (a, ma), (b, mb) in zip(versions, versions[1:]):
        assert (a == b) == (ma == mb)
        diff = a.diff(b)
        assert dict(diff.added) == {k: v for k, v in mb.items() if k not in ma}
        assert dict(diff.removed) == {k: v for k, v in ma.items() if k not in mb}
        assert dict(diff.changed) == {k: (ma[k], mb[k]) for k in ma if k in mb and ma[k] != mb[k]}


# --- user calls ----------------------------------------------------------------


class Recorder:
    """A key with a chosen hash that logs each ``__eq__`` call it receives."""

    def __init__(self, name, log, hash_value=5):
        self.name = name
        self.log = log
        self.hash_value = hash_value

    def __hash__(self):
        return self.hash_value

    def __eq__(self, other):
        self.log.append((self.name, getattr(other, "name", other)))
        return isinstance(other, Recorder) and self.name == other.name

    def __repr__(self):
        return "Recorder(%r)" % self.name


def test_a_flat_lookup_asks_each_equal_hash_in_insertion_order(fcore):
    log = []
    stored = [Recorder(name, log) for name in "abc"]
    m = fcore.frozendict({k: i for i, k in enumerate(stored)} | {"x": 9, 6: 6})
    log.clear()
    assert m[Recorder("c", [])] == 2
    assert log == [("a", "c"), ("b", "c"), ("c", "c")]
    log.clear()
    assert m.get(Recorder("b", [])) == 1
    assert log == [("a", "b"), ("b", "b")]
    log.clear()
    assert Recorder("z", []) not in m
    assert log == [("a", "z"), ("b", "z"), ("c", "z")]
    log.clear()
    assert m[stored[1]] == 1  # identity first: only the entry before it is asked
    assert log == [("a", "b")]
    log.clear()
    assert Recorder("q", [], hash_value=77) not in m  # no equal hash: nobody asked
    assert log == []


def test_a_flat_set_and_delete_ask_as_a_lookup_does(fcore):
    log = []
    stored = [Recorder(name, log) for name in "abc"]
    m = fcore.frozendict({k: i for i, k in enumerate(stored)})
    log.clear()
    m2 = m.set(Recorder("b", []), "new")
    assert log == [("a", "b"), ("b", "b")]
    assert list(m2.values()) == [0, "new", 2] and list(m2)[1] is stored[1]
    log.clear()
    m3 = m.delete(Recorder("c", []))
    assert log == [("a", "c"), ("b", "c"), ("c", "c")]
    assert list(m3) == stored[:2]
    log.clear()
    assert m.discard(Recorder("z", [])) is m
    assert log == [("a", "z"), ("b", "z"), ("c", "z")]


class Meddler:
    """A key whose ``__eq__`` runs ``action`` (once) before answering."""

    def __init__(self, name, action=None):
        self.name = name
        self.action = action

    def __hash__(self):
        return 11

    def __eq__(self, other):
        action, self.action = self.action, None
        if action is not None:
            action()
        return isinstance(other, Meddler) and self.name == other.name


@pytest.mark.parametrize("n", [2, FLAT_MAX])
def test_an_eq_that_derives_from_the_map_it_is_scanned_in(fcore, n):
    made = []
    first = Meddler("first")
    m = fcore.frozendict({first: 0, **{"k%d" % i: i for i in range(n - 1)}})
    model = dict(m)

    def meddle():
        made.append(m.set("extra", 1))
        made.append(m.delete("k0") if "k0" in model else m)
        made.append(m | {"more%d" % i: i for i in range(FLAT_MAX + 1)})
        made.append(m.evolve().freeze())

    first.action = meddle
    probe = Meddler("first")
    assert m[probe] == 0
    assert len(made) == 4
    assert_form(m, model)
    assert_form(made[0], {**model, "extra": 1})
    assert_form(made[2], {**model, **{"more%d" % i: i for i in range(FLAT_MAX + 1)}})
    for op in (
        lambda: m.set(Meddler("first"), 5),
        lambda: m.delete(Meddler("first")),
        lambda: m.discard(Meddler("first")),
        lambda: m.set(Meddler("nobody"), 5),
    ):
        first.action = meddle
        result = op()
        assert_form(result)
        assert_form(m, model)


def test_an_eq_that_raises_during_a_flat_edit_leaves_nothing_behind(fcore):
    class Boom(Exception):
        pass

    def boom():
        raise Boom

    first = Meddler("first")
    m = fcore.frozendict({first: 0, "a": 1})
    for op in (lambda k: m.set(k, 1), lambda k: m.delete(k), lambda k: m[k], lambda k: k in m):
        first.action = boom
        with pytest.raises(Boom):
            op(Meddler("first"))
        assert_form(m, {first: 0, "a": 1})


def test_an_eq_that_edits_an_evolver_made_from_a_flat_map(fcore):
    first = Meddler("first")
    e = fcore.frozendict({first: 0, "a": 1}).evolve()

    def edit():
        with pytest.raises(RuntimeError):
            e["b"] = 2

    first.action = edit
    e[Meddler("first")] = 5
    assert dict(e) == {first: 5, "a": 1}
    assert_form(e.freeze(), {first: 5, "a": 1})


# --- reads over a flat map --------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 5, FLAT_MAX, FLAT_MAX + 1])
def test_views_iterators_and_positions(fcore, n):
    d = model_of(n)
    m = fcore.frozendict(d)
    assert list(m.keys()) == list(d) and list(m.values()) == list(d.values())
    assert list(m.items()) == list(d.items())
    assert list(reversed(m)) == list(reversed(d))
    assert list(reversed(m.items())) == list(reversed(d.items()))
    assert repr(m.keys()) == repr(d.keys())
    it = iter(m.items())
    assert it.__length_hint__() == n
    if n:
        next(it)
        assert it.__length_hint__() == n - 1
        assert list(pickle.loads(pickle.dumps(it))) == list(d.items())[1:]
        assert m.keys() & {"k0", "zz"} == {"k0"}
        assert ("k0", 0) in m.items() and ("k0", 1) not in m.items()
        assert n - 1 in m.values()
    keys = list(d)
    for i in range(-n, n):
        assert m.key_at(i) == keys[i]
        assert m.value_at(i) == d[keys[i]]
        assert m.item_at(i) == (keys[i], d[keys[i]])
    for bad in (n, -n - 1):
        with pytest.raises(IndexError):
            m.key_at(bad)
    for i, k in enumerate(keys):
        assert m.index(k) == i
    with pytest.raises(KeyError):
        m.index("zz")
    for lo in (None, 0, 1, -2, n):
        for hi in (None, 0, 2, -1, n + 3):
            part = m.slice(lo, hi)
            assert_form(part, dict(list(d.items())[lo:hi]))
    assert m.slice() is m
    e = m.evolve()
    for i in range(-n, n):
        assert e.key_at(i) == keys[i]


@pytest.mark.parametrize("n", SIZES)
def test_pickle_round_trips(fcore, n):
    m = fcore.frozendict(model_of(n))
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(m, protocol))
        assert_form(back, model_of(n))
        assert back == m and hash(back) == hash(m)
    e = pickle.loads(pickle.dumps(m.evolve()))
    assert_form(e.freeze(), model_of(n))


# --- between the two forms ----------------------------------------------------------


def test_a_flat_map_and_a_trie_map_compare_hash_and_diff_by_items(fcore):
    fd = fcore.frozendict
    nine = fd(model_of(FLAT_MAX + 1))
    eight = fd(model_of(FLAT_MAX))
    assert is_flat(eight) and not is_flat(nine)
    minus = nine.delete(TOP)
    assert minus == eight and eight == minus and hash(minus) == hash(eight)
    assert nine != eight
    hashed = fd(model_of(FLAT_MAX + 1))
    hash(hashed)  # a known hash carried through the demotion (O(1) accumulator)
    assert hash(hashed.delete(TOP)) == hash(eight)
    assert hash(eight.set(TOP, FLAT_MAX)) == hash(nine)
    d = eight.diff(nine)
    assert (dict(d.added), dict(d.removed), dict(d.changed)) == ({TOP: FLAT_MAX}, {}, {})
    d = nine.diff(eight.set("k0", "x"))
    assert list(d.removed.items()) == [(TOP, FLAT_MAX)]
    assert list(d.changed.items()) == [("k0", (0, "x"))]
    d = fd(model_of(FLAT_MAX + 4)).diff(fd(model_of(3, 5)))
    assert list(d.removed) == ["k%d" % i for i in list(range(5)) + list(range(8, FLAT_MAX + 4))]
    assert dict(d.added) == {} and dict(d.changed) == {}
    assert nine - eight == fd({TOP: FLAT_MAX})
    assert nine & eight == eight
    assert_form(nine & eight, model_of(FLAT_MAX))
    assert_form(eight | nine, model_of(FLAT_MAX + 1))
    assert_form(nine | eight, model_of(FLAT_MAX + 1))
    assert (nine | eight) is nine  # every value already there, by identity
    assert (eight | eight.copy()) is eight


def test_or_of_a_flat_map_with_nothing_new_is_itself(fcore):
    m = fcore.frozendict(model_of(5))
    assert (m | {"k1": 1}) is m
    assert (m | fcore.frozendict(k2=2)) is m
    assert (m | {"k1": 2}) == dict(model_of(5), k1=2)


def test_a_flat_map_with_collisions_and_equal_numbers(fcore):
    keys = [HashKey(3, "a"), HashKey(3, "b"), 1, 1.0, True, 2]
    m = fcore.frozendict()
    model = {}
    for k in keys:
        m = m.set(k, repr(k))
        model[k] = repr(k)
    assert_form(m, model)
    assert [type(k) for k in m] == [type(k) for k in model]
    assert m[HashKey(3, "b")] == "HashKey(3, 'b')"
    assert m.delete(HashKey(3, "a")) == {k: v for k, v in model.items() if k != HashKey(3, "a")}


# --- a GC-cleared flat map --------------------------------------------------------


@pytest.mark.parametrize("n", [1, FLAT_MAX, FLAT_MAX + 1])
def test_a_cleared_flat_map_acts_as_an_empty_one(fcore, n):
    """tp_clear (what the cyclic GC calls on garbage) leaves a flat map, and
    the nine-key map next to the threshold, a valid empty map (the pure
    core's slots are deleted: AttributeError, never a crash)."""
    from test_cleared_and_borrowed import (
        _assert_same_as_empty,
        _frozendict_ops,
        _has_tp_clear,
        call_tp_clear,
    )

    contents = {("k%d" % i): [i] for i in range(n)}
    probe = fcore.frozendict(contents)
    if not _has_tp_clear(probe):
        pytest.skip("the %s core's frozendict has no tp_clear of its own" % fcore.name)
    for name, op in _frozendict_ops(fcore).items():
        cleared = fcore.frozendict(contents)
        assert call_tp_clear(cleared) == 0
        _assert_same_as_empty(fcore, op, cleared, fcore.frozendict(), "n=%d %s" % (n, name))
