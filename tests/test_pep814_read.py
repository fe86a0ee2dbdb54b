"""PEP 814 reads: lookups, ``len``, ``bool``, iteration, ``reversed``, views.

Rows L1-L4 (§4) and V1-V3 (§5) of docs/pep814.md.
"""

import collections.abc
import pickle
import random
import types

import pytest
from helpers import unhashable_key_message
from hypothesis import given
from hypothesis import strategies as st
from keys import Crasher, CrashError, HashKey, UnhashableKey

LIST_KEY_MESSAGE = "cannot use 'list' as a frozendict key (unhashable type: 'list')"


# --- L1: [] and KeyError ---------------------------------------------------------


def test_getitem_finds_each_value(fd):
    m = fd(a=1, b=[2], c=None)
    assert m["a"] == 1
    assert m["b"] == [2]
    assert m["c"] is None


def test_getitem_missing_key_raises_keyerror_with_the_key(fd):
    m = fd(a=1)
    with pytest.raises(KeyError) as info:
        m["b"]
    assert info.value.args == ("b",)


def test_getitem_missing_tuple_key_keeps_the_tuple_whole(fd):
    # L1: KeyError((1,)).args == ((1,),), not (1,).
    with pytest.raises(KeyError) as info:
        fd(a=1)[(1,)]
    assert info.value.args == ((1,),)


def test_getitem_on_empty(fd):
    with pytest.raises(KeyError) as info:
        fd()[0]
    assert info.value.args == (0,)


def test_equal_keys_of_other_types_find_the_value(fd):
    m = fd({1: "one", "s": "str"})
    assert m[1.0] == "one"
    assert m[True] == "one"
    assert 1.0 in m
    assert m.get(True) == "one"


def test_identity_is_checked_before_equality(fd):
    # dict semantics: a NaN key is found by identity, a different NaN is not.
    nan = float("nan")
    m = fd({nan: 1})
    assert m[nan] == 1
    assert nan in m
    assert float("nan") not in m


def test_colliding_keys_are_told_apart(fd):
    keys = [HashKey(42, i) for i in range(40)]
    m = fd((k, i) for i, k in enumerate(keys))
    for i in range(40):
        assert m[HashKey(42, i)] == i
    assert HashKey(42, "absent") not in m
    with pytest.raises(KeyError):
        m[HashKey(42, "absent")]
    assert m.get(HashKey(42, "absent"), "d") == "d"


def test_exception_from_eq_during_lookup_propagates(fd):
    stored = Crasher("stored", hash_value=5)
    m = fd({stored: 1})
    probe = Crasher("probe", hash_value=5)
    probe.crash_eq = True
    stored.crash_eq = True
    with pytest.raises(CrashError):
        m[probe]
    with pytest.raises(CrashError):
        probe in m
    with pytest.raises(CrashError):
        m.get(probe)


# --- L1: __missing__ ----------------------------------------------------------------


def test_missing_is_called_by_getitem_on_a_subclass(fd):
    calls = []

    class WithDefault(fd):
        def __missing__(self, key):
            calls.append(key)
            return "default for %r" % (key,)

    m = WithDefault(a=1)
    assert m["a"] == 1
    assert calls == []
    assert m["zz"] == "default for 'zz'"
    assert calls == ["zz"]
    assert "zz" not in m
    assert len(m) == 1


def test_missing_is_not_called_by_get_or_in(fd):
    class Loud(fd):
        def __missing__(self, key):
            raise AssertionError("__missing__ called for %r" % (key,))

    m = Loud(a=1)
    assert m.get("b") is None
    assert m.get("b", 7) == 7
    assert "b" not in m
    assert m.keys().__contains__("b") is False


def test_missing_can_raise_its_own_error(fd):
    class Strict(fd):
        def __missing__(self, key):
            raise LookupError("no %s" % key)

    with pytest.raises(LookupError, match="no x"):
        Strict()["x"]


def test_exact_frozendict_has_no_missing(fd):
    assert not hasattr(fd, "__missing__")


# --- L2: get ---------------------------------------------------------------------------


def test_get_default_and_hit(fd):
    m = fd(a=1, n=None)
    assert m.get("a") == 1
    assert m.get("a", 2) == 1
    assert m.get("b") is None
    sentinel = object()
    assert m.get("b", sentinel) is sentinel
    assert m.get("n", sentinel) is None


def test_get_arguments_are_positional_only(fd):
    m = fd(a=1)
    with pytest.raises(TypeError):
        m.get("a", default=1)
    with pytest.raises(TypeError):
        m.get(key="a")


@pytest.mark.parametrize("args", [(), ("a", 1, 2)])
def test_get_argument_count(fd, args):
    with pytest.raises(TypeError):
        fd(a=1).get(*args)


# --- L3: unhashable keys in lookups ------------------------------------------------


@pytest.mark.parametrize(
    "lookup",
    [
        pytest.param(lambda m, k: m[k], id="getitem"),
        pytest.param(lambda m, k: m.get(k), id="get"),
        pytest.param(lambda m, k: m.get(k, 0), id="get-default"),
        pytest.param(lambda m, k: k in m, id="in"),
        pytest.param(lambda m, k: k not in m, id="not-in"),
        pytest.param(lambda m, k: k in m.keys(), id="in-keys"),
        pytest.param(lambda m, k: (k, 1) in m.items(), id="in-items"),
    ],
)
def test_unhashable_key_in_a_lookup(fd, lookup):
    for m in (fd(), fd(a=1)):
        with pytest.raises(TypeError) as info:
            lookup(m, [1])
        assert str(info.value) == LIST_KEY_MESSAGE


def test_unhashable_user_class_in_a_lookup(fd):
    key = UnhashableKey()
    m = fd(a=1)
    for lookup in (lambda: m[key], lambda: m.get(key), lambda: key in m):
        with pytest.raises(TypeError) as info:
            lookup()
        assert str(info.value) == unhashable_key_message(key)


def test_unhashable_key_on_a_subclass_uses_the_frozendict_wording(fd):
    class FrozenDict(fd):
        pass

    with pytest.raises(TypeError) as info:
        FrozenDict(a=1)[[1]]
    assert str(info.value) == LIST_KEY_MESSAGE


@pytest.mark.parametrize("error", [KeyError, CrashError])
def test_other_errors_from_hash_pass_through_lookups(fd, error):
    key = Crasher("k", error=error)
    key.crash_hash = True
    m = fd(a=1)
    for lookup in (lambda: m[key], lambda: m.get(key), lambda: key in m):
        with pytest.raises(error) as info:
            lookup()
        assert type(info.value) is error
        assert "hash of k" in str(info.value)


def test_unhashable_value_is_not_a_lookup_error_in_values(fd):
    # values() containment compares by equality and never hashes.
    m = fd(a=[1])
    assert [1] in m.values()
    assert [2] not in m.values()


# --- L4: len, bool, iteration, reversed ------------------------------------------------


def test_len_and_bool(fd):
    assert len(fd()) == 0
    assert not fd()
    assert bool(fd()) is False
    assert len(fd(a=None)) == 1
    assert bool(fd(a=None)) is True
    assert len(fd.fromkeys(range(1000))) == 1000


def test_iteration_is_in_insertion_order(fd):
    keys = ["m", "a", "z", "b"]
    m = fd((k, None) for k in keys)
    assert list(m) == keys
    assert [k for k in m] == keys


def test_large_iteration_order_is_insertion_order(fd):
    keys = list(range(3000))
    random.Random(814).shuffle(keys)
    m = fd((k, -k) for k in keys)
    assert list(m) == keys
    assert list(reversed(m)) == keys[::-1]
    assert list(m.values()) == [-k for k in keys]


def test_iteration_order_with_collisions(fd):
    keys = [HashKey(i % 3, i) for i in range(30)]
    random.Random(5).shuffle(keys)
    m = fd((k, None) for k in keys)
    assert list(m) == keys
    assert list(reversed(m)) == keys[::-1]


@given(st.lists(st.tuples(st.integers(-20, 20), st.integers())))
def test_iteration_and_reversed_match_dict(core, pairs):
    m = core.frozendict(pairs)
    expected = dict(pairs)
    assert list(m) == list(expected)
    assert list(reversed(m)) == list(reversed(expected))
    assert list(m.items()) == list(expected.items())
    assert len(m) == len(expected)


def test_iterators_are_single_pass(fd):
    m = fd(a=1, b=2)
    for make in (iter, reversed, lambda x: iter(x.values()), lambda x: iter(x.items())):
        it = make(m)
        assert iter(it) is it
        assert len(list(it)) == 2
        assert list(it) == []
        with pytest.raises(StopIteration):
            next(it)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(iter, id="keys"),
        pytest.param(reversed, id="reversed"),
        pytest.param(lambda m: iter(m.values()), id="values"),
        pytest.param(lambda m: iter(m.items()), id="items"),
        pytest.param(lambda m: reversed(m.items()), id="reversed-items"),
    ],
)
def test_iterators_pickle_with_what_remains(fd, make):
    # L4: iterators over a frozendict pickle like dict iterators.
    m = fd(a=1, b=2, c=3)
    expected = list(make(m))
    it = make(m)
    next(it)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert list(pickle.loads(pickle.dumps(it, protocol))) == expected[1:]
    assert list(it) == expected[1:]


def test_reversed_empty(fd):
    assert list(reversed(fd())) == []


def test_iterating_does_not_hash_or_compare(fd):
    # L4 + docs/spec.md §3: iteration needs no hash lookups per item.
    keys = [Crasher(str(i)) for i in range(20)]
    m = fd((k, i) for i, k in enumerate(keys))
    for k in keys:
        k.crash_hash = k.crash_eq = True
    assert list(m) == keys
    assert list(reversed(m)) == keys[::-1]
    assert [v for _, v in m.items()] == list(range(20))


# --- V1: views ---------------------------------------------------------------------------


def test_views_list_their_contents_in_order(fd):
    m = fd(x=1, y=2, a=3)
    assert list(m.keys()) == ["x", "y", "a"]
    assert list(m.values()) == [1, 2, 3]
    assert list(m.items()) == [("x", 1), ("y", 2), ("a", 3)]
    assert len(m.keys()) == len(m.values()) == len(m.items()) == 3


def test_views_reverse(fd):
    m = fd(x=1, y=2, a=3)
    assert list(reversed(m.keys())) == ["a", "y", "x"]
    assert list(reversed(m.values())) == [3, 2, 1]
    assert list(reversed(m.items())) == [("a", 3), ("y", 2), ("x", 1)]


def test_views_containment(fd):
    m = fd(x=1, y=[2])
    assert "x" in m.keys()
    assert "z" not in m.keys()
    assert ("x", 1) in m.items()
    assert ("x", 2) not in m.items()
    assert ("y", [2]) in m.items()
    assert ("z", 1) not in m.items()
    assert 1 in m.values()
    assert [2] in m.values()
    assert 3 not in m.values()


@pytest.mark.parametrize("probe", [1, "x", ("x",), ("x", 1, 2), None])
def test_items_containment_of_a_non_pair_is_false(fd, probe):
    assert (probe in fd(x=1).items()) is False


def test_views_repr_is_the_builtin_text(fd):
    # V1, our choice: our own view classes, with the builtin views' repr.
    m = fd(x=1, y=2)
    assert repr(m.keys()) == "dict_keys(['x', 'y'])"
    assert repr(m.values()) == "dict_values([1, 2])"
    assert repr(m.items()) == "dict_items([('x', 1), ('y', 2)])"
    assert repr(fd().keys()) == "dict_keys([])"
    assert repr(fd().values()) == "dict_values([])"
    assert repr(fd().items()) == "dict_items([])"


def test_views_repr_of_a_recursive_value(fd):
    # V1: the builtin view repr guards recursion like list/dict do.
    m = fd(a=[])
    m["a"].append(m)
    assert repr(m.values()) == "dict_values([[frozendict({'a': [...]})]])"


def test_views_are_collections_abc_views(fd):
    m = fd(x=1)
    assert isinstance(m.keys(), collections.abc.KeysView)
    assert isinstance(m.values(), collections.abc.ValuesView)
    assert isinstance(m.items(), collections.abc.ItemsView)
    assert isinstance(m.keys(), collections.abc.Set)
    assert isinstance(m.items(), collections.abc.Set)
    assert not isinstance(m.values(), collections.abc.Set)


# --- V2: view.mapping ----------------------------------------------------------------------


@pytest.mark.parametrize("view", ["keys", "values", "items"])
def test_view_mapping_is_a_read_only_proxy_of_the_frozendict(fd, view):
    m = fd(x=1, y=2)
    proxy = getattr(m, view)().mapping
    assert isinstance(proxy, types.MappingProxyType)
    assert proxy == m
    assert proxy["x"] == 1
    assert list(proxy) == ["x", "y"]
    # The proxy wraps m itself: its copy() is m.copy(), which is m (I3).
    assert proxy.copy() is m
    with pytest.raises(TypeError):
        proxy["z"] = 3


# --- V3: set operations on keys and items views ------------------------------------------


def _both_ways(view, other, op):
    return op(view, other), op(other, view)


@pytest.mark.parametrize(
    "op, expected_forward, expected_backward",
    [
        (lambda a, b: a & b, {"b"}, {"b"}),
        (lambda a, b: a | b, {"a", "b", "c"}, {"a", "b", "c"}),
        (lambda a, b: a - b, {"a"}, {"c"}),
        (lambda a, b: a ^ b, {"a", "c"}, {"a", "c"}),
    ],
    ids=["and", "or", "sub", "xor"],
)
@pytest.mark.parametrize("other_kind", ["set", "list", "dict-keys", "frozendict-keys"])
def test_keys_view_set_operations_return_plain_sets(
    fd, op, expected_forward, expected_backward, other_kind
):
    # V3, our choice: the result is a plain set in both operand orders.
    m = fd(a=1, b=2)
    other = {
        "set": {"b", "c"},
        "list": ["b", "c"],
        "dict-keys": {"b": 0, "c": 0}.keys(),
        "frozendict-keys": fd(b=0, c=0).keys(),
    }[other_kind]
    forward, backward = _both_ways(m.keys(), other, op)
    assert type(forward) is set
    assert forward == expected_forward
    assert type(backward) is set
    assert backward == expected_backward


@pytest.mark.parametrize(
    "op, expected_forward, expected_backward",
    [
        (lambda a, b: a & b, {("b", 2)}, {("b", 2)}),
        (
            lambda a, b: a | b,
            {("a", 1), ("b", 2), ("b", 3), ("c", 4)},
            {("a", 1), ("b", 2), ("b", 3), ("c", 4)},
        ),
        (lambda a, b: a - b, {("a", 1)}, {("b", 3), ("c", 4)}),
        (lambda a, b: a ^ b, {("a", 1), ("b", 3), ("c", 4)}, {("a", 1), ("b", 3), ("c", 4)}),
    ],
    ids=["and", "or", "sub", "xor"],
)
@pytest.mark.parametrize("other_kind", ["set", "list"])
def test_items_view_set_operations_return_plain_sets(
    fd, op, expected_forward, expected_backward, other_kind
):
    # V3, our choice: the result is a plain set in both operand orders.
    m = fd(a=1, b=2)
    pairs = [("b", 2), ("b", 3), ("c", 4)]
    other = set(pairs) if other_kind == "set" else pairs
    forward, backward = _both_ways(m.items(), other, op)
    assert type(forward) is set
    assert forward == expected_forward
    assert type(backward) is set
    assert backward == expected_backward


def test_items_xor_between_two_frozendicts(fd):
    result = fd(a=1, b=2).items() ^ fd(b=2, c=3).items()
    assert type(result) is set
    assert result == {("a", 1), ("c", 3)}


def test_isdisjoint(fd):
    m = fd(a=1, b=2)
    assert m.keys().isdisjoint(["c", "d"])
    assert not m.keys().isdisjoint({"b"})
    assert m.items().isdisjoint([("a", 2)])
    assert not m.items().isdisjoint([("a", 1)])
    assert fd().keys().isdisjoint(["a"])


def test_keys_and_items_views_compare_like_sets(fd):
    m = fd(a=1, b=2)
    assert m.keys() == {"a", "b"}
    assert {"b", "a"} == m.keys()
    assert m.keys() != {"a"}
    assert m.keys() < {"a", "b", "c"}
    assert m.keys() <= {"a", "b"}
    assert m.keys() > {"a"}
    assert not m.keys() < {"a", "b"}
    assert m.items() == {("a", 1), ("b", 2)}
    assert m.items() < {("a", 1), ("b", 2), ("c", 3)}
    assert m.items() != {("a", 1), ("b", 3)}


def test_views_compare_equal_regardless_of_order(fd):
    m1 = fd(a=1, b=2)
    m2 = fd(b=2, a=1)
    assert m1.keys() == m2.keys()
    assert m1.items() == m2.items()
    assert m1.keys() == {"b": 0, "a": 0}.keys()
    assert {"b": 0, "a": 0}.keys() == m1.keys()
    assert m1.items() == {"b": 2, "a": 1}.items()
    assert {"b": 2, "a": 1}.items() == m1.items()
    assert m1.items() != {"b": 2, "a": 5}.items()


def test_values_view_is_not_set_like(fd):
    m = fd(a=1)
    with pytest.raises(TypeError):
        m.values() & {1}
    with pytest.raises(TypeError):
        m.values() | {1}
    assert not hasattr(m.values(), "isdisjoint")
