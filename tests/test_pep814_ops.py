"""PEP 814 operators: equality, ordering, ``|``/``|=``, identity shortcuts, hashing.

Rows E1-E3 (§6), H1-H5 (§7), the union table (§8) and I1-I3, I5 (§2) of
docs/pep814.md.
"""

import collections
import re
import types

import pytest
from hypothesis import given
from hypothesis import strategies as st
from keys import Crasher, CrashError, HashKey


class CountingHash:
    """A value that counts how often it is hashed."""

    def __init__(self, value):
        self.value = value
        self.hash_calls = 0
        self.fail = False

    def __hash__(self):
        self.hash_calls += 1
        if self.fail:
            raise TypeError("refusing to hash %r" % (self.value,))
        return hash(self.value)

    def __eq__(self, other):
        return isinstance(other, CountingHash) and self.value == other.value


# --- E1/E2: equality --------------------------------------------------------------


def test_equality_ignores_order(fd):
    a = fd(x=1, y=2)
    b = fd(y=2, x=1)
    assert a == b
    assert not a != b
    assert a == {"y": 2, "x": 1}
    assert {"y": 2, "x": 1} == a
    assert not {"y": 2, "x": 1} != a


@pytest.mark.parametrize(
    "left, right",
    [
        ({"x": 1}, {"x": 2}),
        ({"x": 1}, {"y": 1}),
        ({"x": 1}, {"x": 1, "y": 2}),
        ({}, {"x": None}),
        ({"x": 1}, {1: "x"}),
    ],
)
def test_inequality(fd, left, right):
    a = fd(left)
    for b in (fd(right), right):
        assert a != b
        assert b != a
        assert not a == b
        assert not b == a


def test_equality_with_subclasses_both_ways(fd):
    class FrozenDict(fd):
        pass

    a = fd(x=1, y=2)
    b = FrozenDict(y=2, x=1)
    assert a == b and b == a
    assert b == {"x": 1, "y": 2} and {"x": 1, "y": 2} == b
    assert FrozenDict(x=1) != a


def test_equality_with_dict_subclasses(fd):
    class MyDict(dict):
        pass

    a = fd(x=1, y=2)
    assert a == MyDict(y=2, x=1)
    assert MyDict(y=2, x=1) == a
    od = collections.OrderedDict([("y", 2), ("x", 1)])
    # E2: OrderedDict is order-insensitive against anything but an OrderedDict.
    assert a == od
    assert od == a
    assert a != collections.OrderedDict(x=1)


def test_eq_returns_notimplemented_for_other_types(fd):
    a = fd(x=1)
    for other in (
        [("x", 1)],
        None,
        1,
        "x",
        types.MappingProxyType({"x": 1}),
        collections.UserDict(x=1),
    ):
        assert a.__eq__(other) is NotImplemented
        assert a.__ne__(other) is NotImplemented


def test_equality_with_non_mappings_is_false(fd):
    a = fd(x=1)
    assert a != [("x", 1)]
    assert not a == [("x", 1)]
    assert a != None  # noqa: E711
    assert fd() != []
    assert fd() != ()


def test_equality_with_mappingproxy_and_userdict(fd):
    # E2: decided by the other type, which accepts a registered Mapping.
    a = fd(x=1, y=2)
    proxy = types.MappingProxyType({"y": 2, "x": 1})
    assert proxy == a
    assert a == proxy
    user = collections.UserDict(y=2, x=1)
    assert user == a
    assert a == user
    assert a != collections.UserDict(x=1)


def test_value_equality_uses_identity_first(fd):
    # dict semantics: values compare with an identity shortcut.
    nan = float("nan")
    assert fd(a=nan) == fd(a=nan)
    assert fd(a=nan) == {"a": nan}
    assert fd(a=float("nan")) != fd(a=float("nan"))


def test_error_from_value_eq_propagates(fd):
    left = Crasher("v")
    right = Crasher("v")
    left.crash_eq = right.crash_eq = True
    with pytest.raises(CrashError):
        fd(a=left) == fd(a=right)


def test_equality_of_large_maps_built_in_different_orders(fd):
    keys = list(range(2000))
    a = fd((k, str(k)) for k in keys)
    b = fd((k, str(k)) for k in reversed(keys))
    assert a == b
    c = fd((k, str(k) if k != 1234 else "x") for k in keys)
    assert a != c
    assert c != dict(a)


# --- E3: ordering ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "symbol, op",
    [
        ("<", lambda a, b: a < b),
        ("<=", lambda a, b: a <= b),
        (">", lambda a, b: a > b),
        (">=", lambda a, b: a >= b),
    ],
)
def test_ordering_raises(fd, symbol, op):
    message = "'%s' not supported between instances of 'frozendict' and '%s'"
    with pytest.raises(TypeError, match=re.escape(message % (symbol, "frozendict"))):
        op(fd(a=1), fd(a=1))
    with pytest.raises(TypeError, match=re.escape(message % (symbol, "dict"))):
        op(fd(a=1), {"a": 1})


def test_ordering_methods_return_notimplemented(fd):
    a = fd(a=1)
    for name in ("__lt__", "__le__", "__gt__", "__ge__"):
        assert getattr(a, name)(fd(a=1)) is NotImplemented
        assert getattr(a, name)({"a": 1}) is NotImplemented


# --- §8: | -------------------------------------------------------------------------------


def test_or_right_side_wins_left_order_first(fd):
    result = fd(x=1, y=2) | fd(y=5, z=3, a=4)
    assert type(result) is fd
    assert list(result.items()) == [("x", 1), ("y", 5), ("z", 3), ("a", 4)]


def test_or_with_a_dict_gives_a_frozendict(fd):
    result = fd(x=1, y=2) | {"y": 5, "z": 3}
    assert type(result) is fd
    assert list(result.items()) == [("x", 1), ("y", 5), ("z", 3)]


def test_dict_or_frozendict_gives_a_dict(fd):
    # §8, our choice: reached through our __ror__ (dict.__or__ refuses us before 3.15).
    result = {"x": 1, "y": 2} | fd(y=5, z=3)
    assert type(result) is dict
    assert list(result.items()) == [("x", 1), ("y", 5), ("z", 3)]


def test_ror_with_a_dict_gives_a_dict(fd):
    result = fd(y=5, z=3).__ror__({"x": 1, "y": 2})
    assert type(result) is dict
    assert list(result.items()) == [("x", 1), ("y", 5), ("z", 3)]


def test_ror_with_a_frozendict_gives_a_frozendict(fd):
    # §8: __ror__ computes other | self, which keeps the left operand's kind.
    result = fd(y=5).__ror__(fd(x=1, y=2))
    assert type(result) is fd
    assert list(result.items()) == [("x", 1), ("y", 5)]


def test_subclass_operands_give_an_exact_frozendict(fd):
    class FrozenDict(fd):
        pass

    sub = FrozenDict(x=1)
    for result in (sub | {"y": 2}, sub | fd(y=2), sub | FrozenDict(y=2), fd(x=1) | FrozenDict(y=2)):
        assert type(result) is fd
        assert list(result.items()) == [("x", 1), ("y", 2)]
    empty_left = fd() | sub
    assert type(empty_left) is fd
    assert empty_left is not sub
    assert empty_left == sub


def test_dict_subclass_or_frozendict_gives_a_dict(fd):
    class MyDict(dict):
        pass

    result = MyDict(x=1) | fd(y=2)
    assert type(result) is dict
    assert list(result.items()) == [("x", 1), ("y", 2)]


def test_ordereddict_or_frozendict_merges(fd):
    # §8: the result type is OrderedDict on 3.15 and dict before it; we check contents only.
    result = collections.OrderedDict(x=1, y=2) | fd(y=5, z=3)
    assert list(result.items()) == [("x", 1), ("y", 5), ("z", 3)]


def test_frozendict_or_ordereddict_gives_a_frozendict(fd):
    result = fd(x=1, y=2) | collections.OrderedDict(y=5, z=3)
    assert type(result) is fd
    assert list(result.items()) == [("x", 1), ("y", 5), ("z", 3)]


def test_or_with_mappingproxy(fd):
    # §8: our __or__ refuses the proxy; the proxy's reflected | unwraps it.
    a = fd(x=1, y=2)
    proxy = types.MappingProxyType({"y": 5, "z": 3})
    assert a.__or__(proxy) is NotImplemented
    result = a | proxy
    assert type(result) is fd
    assert list(result.items()) == [("x", 1), ("y", 5), ("z", 3)]
    reverse = types.MappingProxyType({"w": 0, "x": 9}) | a
    assert type(reverse) is dict
    assert list(reverse.items()) == [("w", 0), ("x", 1), ("y", 2)]


def test_or_answers_for_userdict(fd):
    # §8: the builtin's __or__ refuses and 3.15's UserDict.__ror__ answers, but
    # that one cannot know our type: our __or__ gives its answer (a deviation).
    got = fd(x=1).__or__(collections.UserDict(y=2))
    assert type(got) is collections.UserDict and dict(got) == {"x": 1, "y": 2}


@pytest.mark.parametrize(
    "other, type_name", [([("k", 1)], "list"), (None, "NoneType"), (1, "int"), ({"k"}, "set")]
)
def test_or_with_other_types(fd, other, type_name):
    a = fd(x=1)
    assert a.__or__(other) is NotImplemented
    assert a.__ror__(other) is NotImplemented
    message = "unsupported operand type(s) for |: 'frozendict' and '%s'" % type_name
    with pytest.raises(TypeError, match=re.escape(message)):
        a | other


def test_ior_rebinds_and_leaves_the_old_object_alone(fd):
    original = fd(x=1)
    a = original
    a |= {"y": 2}
    assert a is not original
    assert type(a) is fd
    assert list(a.items()) == [("x", 1), ("y", 2)]
    assert list(original.items()) == [("x", 1)]
    a |= fd(x=3)
    assert list(a.items()) == [("x", 3), ("y", 2)]


def test_ior_refuses_an_iterable_of_pairs(fd):
    # §8: unlike dict |=, which accepts iterables.
    a = fd(x=1)
    with pytest.raises(
        TypeError, match=re.escape("unsupported operand type(s) for |=: 'frozendict' and 'list'")
    ):
        a |= [("y", 2)]
    assert list(a.items()) == [("x", 1)]


def test_dict_ior_frozendict_updates_the_dict_in_place(fd):
    d = {"x": 1, "y": 2}
    before = d
    d |= fd(y=5, z=3)
    assert d is before
    assert list(d.items()) == [("x", 1), ("y", 5), ("z", 3)]


def test_or_leaves_both_operands_unchanged(fd):
    a = fd(x=1, y=2)
    b = fd(y=5, z=3)
    a | b
    b | a
    assert list(a.items()) == [("x", 1), ("y", 2)]
    assert list(b.items()) == [("y", 5), ("z", 3)]


def test_or_with_colliding_keys(fd):
    a = fd((HashKey(1, i), i) for i in range(5))
    b = fd((HashKey(1, i), -i) for i in range(3, 8))
    result = a | b
    assert list(result.items()) == [(HashKey(1, i), i if i < 3 else -i) for i in range(8)]


def test_or_of_large_maps_keeps_order(fd):
    left = fd((k, 0) for k in range(0, 1000, 2))
    right = fd((k, 1) for k in range(999, -1, -3))
    expected = dict(left)
    expected.update(right)
    result = left | right
    assert list(result.items()) == list(expected.items())


# --- I1/I2: constructor identity ---------------------------------------------------------


def test_frozendict_of_an_exact_frozendict_is_itself(fd):
    m = fd(a=1)
    assert fd(m) is m
    empty = fd()
    assert fd(empty) is empty


def test_frozendict_with_keywords_builds_a_new_object(fd):
    m = fd(a=1)
    n = fd(m, b=2)
    assert n is not m
    assert list(n.items()) == [("a", 1), ("b", 2)]
    assert list(m.items()) == [("a", 1)]


def test_new_of_an_exact_frozendict_is_itself(fd):
    # I2, our choice: frozendict.__new__(frozendict, fd) also returns fd.
    m = fd(a=1)
    assert fd.__new__(fd, m) is m


# --- I3: copy() --------------------------------------------------------------------------


def test_copy_of_an_exact_frozendict_is_itself(fd):
    m = fd(a=1)
    assert m.copy() is m


def test_copy_of_a_subclass_is_a_new_exact_frozendict(fd):
    class FrozenDict(fd):
        pass

    sub = FrozenDict(a=1, b=2)
    copied = sub.copy()
    assert type(copied) is fd
    assert copied is not sub
    assert list(copied.items()) == [("a", 1), ("b", 2)]


def test_copy_takes_no_arguments(fd):
    with pytest.raises(TypeError):
        fd(a=1).copy({})


# --- I5: | identity shortcuts ------------------------------------------------------------


def test_or_with_an_empty_exact_operand_is_the_left_side(fd):
    m = fd(a=1)
    assert m | {} is m
    assert m | fd() is m


def test_empty_or_an_exact_frozendict_is_the_right_side(fd):
    m = fd(a=1)
    assert fd() | m is m


def test_no_shortcut_for_subclass_or_non_frozendict_operands(fd):
    class FrozenDict(fd):
        pass

    sub = FrozenDict(a=1)
    result = sub | {}
    assert type(result) is fd and result is not sub and result == sub
    m = fd(a=1)
    result = m | FrozenDict(a=2)
    assert type(result) is fd and result is not m and result == {"a": 2}
    # Our deliberate difference (docs/pep814.md, I5): a right side that adds
    # nothing (here: nothing at all) gives the left side back, subclass or not.
    assert m | FrozenDict() is m
    result = fd() | {"a": 1}
    assert type(result) is fd and result == {"a": 1}


def test_or_with_equal_but_distinct_values_is_a_new_object(fd):
    m = fd(a=[1])
    result = m | {"a": [1]}
    assert result == m and result is not m
    assert type(result) is fd
    assert m | {"a": m["a"]} is m  # the very same value: nothing changes


# --- H1: hash(fd) == hash(frozenset(fd.items())) -------------------------------------------


@pytest.mark.parametrize(
    "items",
    [
        {},
        {"a": 1},
        {"a": 1, "b": 2},
        {1: 2, 2: 1},
        {-1: -1, -2: -2},
        {None: (), (): None, 0.5: "x"},
        {("t", 1): frozenset({1}), b"b": True},
        {i: i * i for i in range(100)},
    ],
    ids=repr,
)
def test_hash_equals_the_frozenset_of_items_hash(fd, items):
    m = fd(items)
    assert hash(m) == hash(frozenset(m.items()))
    assert hash(m) == hash(frozenset(items.items()))


def test_hash_of_empty(fd):
    assert hash(fd()) == hash(frozenset())


def test_hash_with_chosen_key_hashes(fd):
    m = fd({HashKey(0, "a"): 1, HashKey(0, "b"): 2, HashKey(-1, "c"): 3, HashKey(2**61, "d"): 4})
    assert hash(m) == hash(frozenset(m.items()))


def test_hash_ignores_order_and_separates_key_from_value(fd):
    assert hash(fd(a=1, b=2)) == hash(fd(b=2, a=1))
    # H2: the first upstream algorithm made swapped keys and values collide.
    assert hash(fd({1: 2, 2: 1})) == hash(frozenset({(1, 2), (2, 1)}))
    assert hash(fd({1: 2, 3: 4})) != hash(fd({1: 4, 3: 2}))


def test_equal_frozendicts_with_equal_keys_of_other_types_hash_equal(fd):
    a = fd({1: "x", "v": 1})
    b = fd({1.0: "x", "v": True})
    assert a == b
    assert hash(a) == hash(b)
    # Still equal once both hashes are cached.
    assert a == b and b == a


def test_equality_after_hashing_both_sides(fd):
    a = fd(x=1, y=2)
    b = fd(y=2, x=1)
    c = fd(x=1, y=3)
    hash(a), hash(b), hash(c)
    assert a == b
    assert a != c
    assert not a == c


@given(
    st.dictionaries(
        st.integers() | st.text(max_size=3) | st.none(),
        st.integers() | st.text(max_size=3) | st.tuples(st.integers()),
    )
)
def test_hash_matches_frozenset_for_any_contents(core, items):
    m = core.frozendict(items)
    assert hash(m) == hash(frozenset(items.items()))


def test_hash_of_a_union_matches_a_fresh_build(fd):
    # §8 / gh-149676: the result of a | b must not inherit a stale cached hash.
    a = fd(x=1, y=2)
    b = fd(y=5, z=3)
    hash(a)
    hash(b)
    result = a | b
    assert hash(result) == hash(fd(x=1, y=5, z=3))
    assert hash(result) == hash(frozenset({("x", 1), ("y", 5), ("z", 3)}))
    assert hash(a | {}) == hash(a)


# --- H3: lazy and cached ------------------------------------------------------------------


def test_building_does_not_hash_values(fd):
    value = CountingHash(1)
    m = fd(a=value)
    fd({"b": value})
    m | {"c": value}
    assert value.hash_calls == 0


def test_hash_is_computed_once_and_cached(fd):
    value = CountingHash(1)
    m = fd(a=value)
    first = hash(m)
    calls = value.hash_calls
    assert calls >= 1
    assert hash(m) == first
    assert {m: 1}[m] == 1
    assert value.hash_calls == calls


def test_failed_hash_is_not_cached(fd):
    value = CountingHash(1)
    value.fail = True
    m = fd(a=value)
    with pytest.raises(TypeError, match="refusing to hash 1"):
        hash(m)
    with pytest.raises(TypeError, match="refusing to hash 1"):
        hash(m)
    value.fail = False
    assert hash(m) == hash(frozenset({("a", value)}))


# --- H4: unhashable values --------------------------------------------------------------------


def test_unhashable_value_is_allowed_but_cannot_be_hashed(fd):
    m = fd(a=[1])
    assert m["a"] == [1]
    for attempt in (lambda: hash(m), lambda: {m: 1}, lambda: {m}, lambda: hash(m)):
        with pytest.raises(TypeError, match=re.escape("unhashable type: 'list'")):
            attempt()


def test_non_type_error_from_a_value_hash_passes_through(fd):
    value = Crasher("v")
    value.crash_hash = True
    with pytest.raises(CrashError, match="hash of v"):
        hash(fd(a=value))


# --- H5: subclasses hash like the base -----------------------------------------------------------


def test_subclass_hash_equals_base_hash(fd):
    class FrozenDict(fd):
        pass

    assert hash(FrozenDict(x=1, y=2)) == hash(fd(y=2, x=1))
    base = fd(a=1, b=2)
    hash(base)
    assert hash(FrozenDict(base)) == hash(base) == hash(frozenset({("a", 1), ("b", 2)}))
    assert {fd(x=1): "v"}[FrozenDict(x=1)] == "v"
