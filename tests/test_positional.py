"""Positional access (docs/spec.md §2, "Positions"): key_at, value_at, item_at,
index and slice on frozendict and Evolver, against ``list(d.items())``.

The order trie keeps the number of items below each inner node; ``_check()``
verifies those counts, so every model step below also checks them.
"""

import operator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from keys import HashKey

# --- the model: random derivations, old versions kept ------------------------------

# ints and strs hash without Python code; a HashKey is hashed in Python (some
# colliding: slice files them without comparing them).
keys = st.one_of(
    st.integers(-40, 200),
    st.sampled_from(["a", "b", "c", "d", "e"]),
    st.builds(HashKey, st.integers(0, 3), st.sampled_from("pq")),
)
edit = st.one_of(
    st.tuples(st.just("set"), keys, st.integers()),
    st.tuples(st.just("delete"), keys),
    st.tuples(st.just("or"), st.dictionaries(keys, st.integers(), max_size=12)),
    st.tuples(st.just("sub"), st.lists(keys, max_size=12)),
    st.tuples(st.just("and"), st.lists(keys, max_size=80)),
    st.tuples(
        st.just("evolver"),
        st.lists(st.tuples(st.booleans(), keys, st.integers()), max_size=40),
    ),
    st.tuples(st.just("bulk"), st.integers(0, 300)),
)


def derive(fd, model, step):
    """Apply one step to both the frozendict and the dict model."""
    kind = step[0]
    if kind == "set":
        _, key, value = step
        model[key] = value
        return fd.set(key, value)
    if kind == "delete":
        key = step[1]
        if key in model:
            del model[key]
        return fd.discard(key)
    if kind == "or":
        model.update(step[1])
        return fd | step[1]
    if kind == "sub":
        for key in step[1]:
            model.pop(key, None)
        return fd - step[1]
    if kind == "and":
        kept = set(step[1])
        for key in [k for k in model if k not in kept]:
            del model[key]
        return fd & step[1]
    if kind == "evolver":
        e = fd.evolve()
        for put, key, value in step[1]:
            if put:
                e[key] = value
                model[key] = value
            else:
                e.pop(key, None)
                model.pop(key, None)
            # the evolver answers positions mid-batch, from its current contents
            assert e.item_at(-1) == list(model.items())[-1] if model else len(e) == 0
        return e.freeze()
    # "bulk": many new keys at once (deep tries, several levels of counts)
    base = 1000 + len(model) * 7
    new = {base + i: i for i in range(step[1])}
    model.update(new)
    return fd | new


def check_positions(fd, items):
    """Every positional read of ``fd`` agrees with ``items`` (a list)."""
    fd._check()
    n = len(items)
    assert len(fd) == n
    for i, (key, value) in enumerate(items):
        assert fd.item_at(i) == (key, value)
        assert fd.key_at(i) is key
        assert fd.value_at(i) is value
        assert fd.item_at(i - n) == (key, value)
        assert fd.index(key) == i
    for bad in (n, -n - 1):
        with pytest.raises(IndexError, match="frozendict index out of range"):
            fd.item_at(bad)


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(edit, max_size=25),
    bounds=st.lists(st.integers(-400, 400) | st.none(), min_size=2, max_size=2),
)
def test_positions_follow_the_model_over_random_derivations(core, steps, bounds):
    fd = core.frozendict()
    model = {}
    history = []
    for step in steps:
        fd = derive(fd, model, step)
        history.append((fd, list(model.items())))
    # Old versions too: their counts were never touched by later derivations.
    for version, items in history:
        check_positions(version, items)
        start, stop = bounds
        part = version.slice(start, stop)
        part._check()
        assert type(part) is core.frozendict
        assert list(part.items()) == items[start:stop]


# --- key_at, value_at, item_at ------------------------------------------------------


def test_reads_at_both_ends_of_a_map_of_several_levels(core):
    n = 5000
    fd = core.frozendict.fromkeys(range(n), 0).delete(0).delete(4321)
    items = [(k, 0) for k in range(1, n) if k != 4321]
    assert fd.key_at(0) == 1
    assert fd.key_at(-1) == n - 1
    assert fd.key_at(4319) == 4320
    assert fd.key_at(4320) == 4322  # past the deleted key
    assert fd.item_at(len(items) // 2) == items[len(items) // 2]


def test_a_replaced_value_keeps_its_position(core):
    fd = core.frozendict(a=1, b=2, c=3).set("b", 20)
    assert fd.item_at(1) == ("b", 20)
    assert fd.index("b") == 1


def test_index_accepts_dunder_index_and_bool(core):
    fd = core.frozendict(a=1, b=2)

    class Two:
        def __index__(self):
            return 1

    assert fd.key_at(Two()) == "b"
    assert fd.key_at(True) == "b"
    assert fd.key_at(operator.index(-2)) == "a"


@pytest.mark.parametrize("bad", ["1", 1.0, None, [0]])
def test_a_non_integer_index_is_a_type_error_as_for_a_list(core, bad):
    fd = core.frozendict(a=1)
    with pytest.raises(TypeError) as caught:
        fd.key_at(bad)
    with pytest.raises(TypeError) as expected:
        [1].pop(bad)
    assert str(caught.value) == str(expected.value)


@pytest.mark.parametrize("index", [1, -2, 10**30, -(10**30)])
def test_out_of_range_is_an_index_error(core, index):
    fd = core.frozendict(a=1)
    for method in (fd.key_at, fd.value_at, fd.item_at):
        with pytest.raises(IndexError, match="^frozendict index out of range$"):
            method(index)


def test_an_empty_map_has_no_position(core):
    with pytest.raises(IndexError):
        core.frozendict().key_at(0)
    with pytest.raises(IndexError):
        core.frozendict().key_at(-1)


# --- index ----------------------------------------------------------------------------


def test_index_of_an_absent_key_is_a_key_error(core):
    fd = core.frozendict(a=1)
    with pytest.raises(KeyError) as caught:
        fd.index("b")
    assert caught.value.args == ("b",)


def test_index_of_an_unhashable_key_is_a_type_error(core):
    with pytest.raises(TypeError, match="unhashable"):
        core.frozendict(a=1).index([])


def test_index_finds_keys_on_one_hash_and_equal_keys_across_types(core):
    colliding = [HashKey(7, name) for name in "pqrs"]
    fd = core.frozendict({k: i for i, k in enumerate(colliding)})
    assert [fd.index(HashKey(7, name)) for name in "pqrs"] == [0, 1, 2, 3]
    mixed = core.frozendict({1: "a", "x": "b"})
    assert mixed.index(1.0) == 0 and mixed.index(True) == 0


# --- slice ----------------------------------------------------------------------------


def test_slice_follows_list_slicing(core):
    fd = core.frozendict((str(i), i) for i in range(50))
    items = list(fd.items())
    for start, stop in [
        (None, None),
        (3, 9),
        (-5, None),
        (None, -45),
        (40, 10),
        (-100, 100),
        (7, 8),
    ]:
        part = fd.slice(start, stop)
        part._check()
        assert list(part.items()) == items[start:stop]
        assert part == dict(items[start:stop])
        assert hash(part) == hash(frozenset(items[start:stop]))


def test_slice_of_everything_is_self_and_of_nothing_is_empty(core):
    fd = core.frozendict(a=1, b=2)
    assert fd.slice() is fd
    assert fd.slice(0, 2) is fd
    assert fd.slice(1, 1) == {}
    assert type(fd.slice(2)) is core.frozendict


def test_slice_of_a_subclass_is_an_exact_frozendict(core):
    class Sub(core.frozendict):
        pass

    whole = Sub(a=1, b=2).slice()
    assert type(whole) is core.frozendict and whole == {"a": 1, "b": 2}
    assert type(Sub(a=1, b=2).slice(1)) is core.frozendict


def test_slice_of_str_keys_with_one_key_hashed_in_python(core):
    # One key among strs is hashed in Python (tests/test_positional_hashing.py counts).
    items = [("k%d" % i, i) for i in range(400)]
    items[250] = (HashKey(5, "odd"), 250)
    fd = core.frozendict(items)
    for start, stop in [(240, 260), (0, 250), (251, 400), (-3, None), (100, 101)]:
        part = fd.slice(start, stop)
        part._check()
        assert list(part.items()) == items[start:stop]


def test_slice_bad_bounds_are_type_errors_as_for_a_list(core):
    with pytest.raises(TypeError, match="slice indices must be integers"):
        core.frozendict(a=1).slice("1")
    with pytest.raises(TypeError):
        core.frozendict(a=1).slice(0, 1, 2)


def test_slice_results_derive_like_any_version(core):
    fd = core.frozendict.fromkeys(range(200), 0)
    part = fd.slice(50, 60).set(5, 1).delete(55)
    part._check()
    assert list(part) == [50, 51, 52, 53, 54, 56, 57, 58, 59, 5]
    assert part.index(5) == 9


# --- the Evolver ----------------------------------------------------------------------


def test_evolver_reads_positions_of_its_current_contents(core):
    e = core.frozendict(a=1, b=2, c=3).evolve()
    del e["a"]
    e["d"] = 4
    assert [e.item_at(i) for i in range(3)] == [("b", 2), ("c", 3), ("d", 4)]
    assert e.key_at(-1) == "d" and e.value_at(0) == 2
    assert e.index("d") == 2
    assert e.slice(1) == {"c": 3, "d": 4}
    assert type(e.slice(1)) is core.frozendict
    with pytest.raises(IndexError, match="^Evolver index out of range$"):
        e.key_at(3)
    with pytest.raises(KeyError):
        e.index("a")
    # reading positions does not stop later edits from applying
    e["e"] = 5
    assert e.key_at(-1) == "e"
    e._check()


def test_evolver_index_from_a_key_eq_that_edits_the_evolver(core):
    e = core.frozendict({HashKey(1, "x"): 0, HashKey(1, "y"): 1}).evolve()

    class Editing(HashKey):
        def __eq__(self, other):
            e[HashKey(2, "late")] = 9  # an edit from inside the lookup
            return HashKey.__eq__(self, other)

        __hash__ = HashKey.__hash__

    assert e.index(Editing(1, "y")) == 1
    assert e.key_at(-1) == HashKey(2, "late")
    e._check()


def test_positions_of_versions_shared_with_an_evolver_batch(core):
    base = core.frozendict.fromkeys(range(1000), 0)
    e = base.evolve()
    for k in range(0, 1000, 3):
        del e[k]
    for k in range(2000, 2100):
        e[k] = 1
    out = e.freeze()
    out._check()
    base._check()
    expected = [k for k in range(1000) if k % 3] + list(range(2000, 2100))
    assert [out.key_at(i) for i in range(len(expected))] == expected
    assert base.key_at(999) == 999 and base.index(3) == 3


def test_slice_reads_each_bound_once(core):
    """Each bound's ``__index__`` runs once, start first, as list's slicing
    and the C core's PySlice_Unpack read them."""
    calls = []

    class Bound:
        def __init__(self, value):
            self.value = value

        def __index__(self):
            calls.append(self.value)
            return self.value

    fd = core.frozendict(a=1, b=2, c=3, d=4)
    assert fd.slice(Bound(1), Bound(3)) == {"b": 2, "c": 3}
    assert calls == [1, 3]
    del calls[:]
    assert list(fd.slice(Bound(-2))) == ["c", "d"]
    assert calls == [-2]
    with pytest.raises(TypeError) as info:
        fd.slice(Bound(0), 1.5)
    assert calls == [-2, 0]
    with pytest.raises(TypeError) as expected:
        [][0:1.5]
    assert str(info.value) == str(expected.value)
