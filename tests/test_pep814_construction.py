"""PEP 814 construction: the call forms and errors of ``frozendict(...)``.

Rows C1-C12 of docs/pep814.md (§1), plus S1/S4 of §11 where
they concern what a constructor call builds.  Identity shortcuts (§2) live in
test_pep814_ops.py, ``fromkeys`` (§3) in test_pep814_objects.py.
"""

import platform
import re

import pytest
from helpers import unhashable_key_message
from hypothesis import given
from hypothesis import strategies as st
from keys import Crasher, CrashError, HashKey, UnhashableKey

# --- C1: call forms ----------------------------------------------------------


def test_no_arguments_builds_an_empty_frozendict(fd):
    empty = fd()
    assert len(empty) == 0
    assert list(empty) == []
    assert empty == {}


def test_keywords_become_items_in_call_order(fd):
    m = fd(b=2, a=1, c=3)
    assert list(m.items()) == [("b", 2), ("a", 1), ("c", 3)]


def test_mapping_argument_keeps_its_order(fd):
    source = {"z": 1, "a": 2, "m": 3}
    assert list(fd(source).items()) == [("z", 1), ("a", 2), ("m", 3)]


def test_iterable_of_pairs_argument(fd):
    m = fd([("a", 1), ["b", 2], "cd"])
    assert list(m.items()) == [("a", 1), ("b", 2), ("c", "d")]


def test_generator_of_pairs_is_consumed_once(fd):
    consumed = []

    def pairs():
        for i in range(5):
            consumed.append(i)
            yield (i, i * i)

    m = fd(pairs())
    assert consumed == [0, 1, 2, 3, 4]
    assert list(m.items()) == [(0, 0), (1, 1), (2, 4), (3, 9), (4, 16)]


def test_mapping_and_keywords_together(fd):
    m = fd({"a": 1}, b=2)
    assert list(m.items()) == [("a", 1), ("b", 2)]
    m = fd([("a", 1)], b=2)
    assert list(m.items()) == [("a", 1), ("b", 2)]


@pytest.mark.parametrize("name", ["cls", "self", "mapping", "iterable", "other", "kwargs"])
def test_positional_argument_is_positional_only(fd, name):
    # C1: any keyword, even the name the positional parameter might have, is an item.
    m = fd(**{name: 1})
    assert dict(m) == {name: 1}
    m = fd({"a": 0}, **{name: 1})
    assert list(m.items()) == [("a", 0), (name, 1)]


def test_keyword_names_may_be_any_string(fd):
    m = fd(**{"a b": 1, "": 2, "é": 3})
    assert list(m.items()) == [("a b", 1), ("", 2), ("é", 3)]


@given(st.lists(st.tuples(st.integers(-5, 5) | st.text(max_size=2), st.integers())))
def test_pairs_build_what_dict_builds(core, pairs):
    # C1/C4: the same items, in the same order, as dict() from the same pairs.
    assert list(core.frozendict(pairs).items()) == list(dict(pairs).items())


# --- C2: too many positional arguments --------------------------------------


@pytest.mark.parametrize("count", [2, 3])
def test_more_than_one_positional_argument(fd, count):
    message = "frozendict expected at most 1 argument, got %d" % count
    with pytest.raises(TypeError, match=re.escape(message)):
        fd(*([{}] * count))


def test_more_than_one_positional_argument_on_a_subclass(fd):
    # C2: the subclass path reports the base type's name.
    class FrozenDict(fd):
        pass

    with pytest.raises(TypeError, match=re.escape("frozendict expected at most 1 argument, got 2")):
        FrozenDict({}, {})


# --- C3: how the positional argument is read --------------------------------


class KeysAndGetitem:
    """Not iterable itself; ``keys()`` gives the keys, ``[]`` the values."""

    def __init__(self, keys):
        self._keys = keys
        self.looked_up = []

    def keys(self):
        return iter(self._keys)

    def __getitem__(self, key):
        self.looked_up.append(key)
        return "v%r" % (key,)


def test_object_with_keys_is_read_through_keys_and_getitem(fd):
    source = KeysAndGetitem([3, 1, 2])
    m = fd(source)
    assert list(m.items()) == [(3, "v3"), (1, "v1"), (2, "v2")]
    assert source.looked_up == [3, 1, 2]


def test_keys_wins_over_iteration(fd):
    class Both(KeysAndGetitem):
        def __iter__(self):
            return iter([("wrong", "pairs")])

    assert list(fd(Both(["a"])).items()) == [("a", "v'a'")]


def test_frozendict_argument_is_copied(fd):
    source = fd(x=1, y=[2])
    m = fd(source, z=3)
    assert list(m.items()) == [("x", 1), ("y", [2]), ("z", 3)]
    assert m["y"] is source["y"]


def test_items_view_of_a_frozendict_is_an_iterable_of_pairs(fd):
    source = fd(b=1, a=2)
    assert list(fd(source.items()).items()) == [("b", 1), ("a", 2)]


# --- C4: duplicates ------------------------------------------------------------


def test_later_duplicate_wins_and_keeps_first_position(fd):
    m = fd([("a", 1), ("b", 2), ("a", 3)])
    assert list(m.items()) == [("a", 3), ("b", 2)]


def test_keywords_override_the_positional_argument(fd):
    m = fd({"a": 1}, a=2, b=3)
    assert list(m.items()) == [("a", 2), ("b", 3)]


def test_equal_keys_keep_the_first_key_object(fd):
    m = fd([(1, "int"), (1.0, "float"), (True, "bool")])
    assert len(m) == 1
    [key] = list(m)
    assert type(key) is int
    assert m[1] == "bool"


def test_colliding_keys_stay_distinct(fd):
    keys = [HashKey(7, name) for name in "abcde"]
    m = fd((k, i) for i, k in enumerate(keys))
    assert list(m.items()) == [(k, i) for i, k in enumerate(keys)]
    m2 = fd([(keys[0], 0), (keys[1], 1), (HashKey(7, "a"), 9)])
    assert list(m2.items()) == [(keys[0], 9), (keys[1], 1)]


# --- C5: wrong-length element ---------------------------------------------------


@pytest.mark.parametrize(
    "pairs, message",
    [
        ([(1, 2, 3)], "dictionary update sequence element #0 has length 3; 2 is required"),
        ([(1, 2), (3,)], "dictionary update sequence element #1 has length 1; 2 is required"),
        (
            [(1, 2), (3, 4), "abc"],
            "dictionary update sequence element #2 has length 3; 2 is required",
        ),
        ([()], "dictionary update sequence element #0 has length 0; 2 is required"),
    ],
)
def test_wrong_length_element(fd, pairs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        fd(pairs)


# --- C6: element that is not iterable ---------------------------------------------


@pytest.mark.parametrize("pairs, index", [([1], 0), ([(1, 2), None], 1), ([(1, 2), "ab", 3.5], 2)])
def test_non_iterable_element(fd, pairs, index):
    # C6: the running interpreter's dict text (3.14 moved it into a note).
    with pytest.raises(TypeError) as info:
        fd(pairs)
    with pytest.raises(TypeError) as expected:
        dict(pairs)
    assert str(info.value) == str(expected.value)
    assert getattr(info.value, "__notes__", None) == getattr(expected.value, "__notes__", None)
    if platform.python_implementation() == "CPython":  # (PyPy's names the element's type)
        text = "onvert dictionary update sequence element #%d to a sequence" % index
        assert text in str(info.value) + str(getattr(info.value, "__notes__", ""))


# --- C7: argument neither a mapping nor iterable ----------------------------------


@pytest.mark.parametrize(
    "argument, message",
    [
        (1, "'int' object is not iterable"),
        (None, "'NoneType' object is not iterable"),
        (1.5, "'float' object is not iterable"),
    ],
)
def test_non_iterable_argument(fd, argument, message):
    with pytest.raises(TypeError) as info:
        fd(argument)
    assert str(info.value) == message


# --- C8: unhashable keys --------------------------------------------------------------


def test_unhashable_key_from_pairs(fd):
    message = "cannot use 'list' as a frozendict key (unhashable type: 'list')"
    with pytest.raises(TypeError) as info:
        fd([([1], 2)])
    assert str(info.value) == message


def test_unhashable_key_from_a_mapping_like_object(fd):
    source = KeysAndGetitem([{"a": 1}])
    with pytest.raises(TypeError) as info:
        fd(source)
    assert str(info.value) == "cannot use 'dict' as a frozendict key (unhashable type: 'dict')"


def test_unhashable_user_class_key_names_the_qualified_type(fd):
    key = UnhashableKey()
    with pytest.raises(TypeError) as info:
        fd([(key, 1)])
    assert str(info.value) == unhashable_key_message(key)
    assert "'keys.UnhashableKey'" in str(info.value)


def test_type_error_from_hash_is_rewritten_with_its_text(fd):
    class Refuses:
        def __hash__(self):
            raise TypeError("not today")

    key = Refuses()
    with pytest.raises(TypeError) as info:
        fd([("ok", 0), (key, 1)])
    assert str(info.value) == "cannot use '%s.%s' as a frozendict key (not today)" % (
        Refuses.__module__,
        Refuses.__qualname__,
    )


def test_type_error_subclass_from_hash_passes_through(fd):
    # C8: dict_unhashable_type rewrites only an exact TypeError (Py_IS_TYPE).
    class HashRefused(TypeError):
        pass

    class Refuses:
        def __hash__(self):
            raise HashRefused("refused")

    with pytest.raises(HashRefused) as info:
        fd([(Refuses(), 1)])
    assert str(info.value) == "refused"


@pytest.mark.parametrize("error", [CrashError, KeyError, ValueError])
def test_other_exceptions_from_hash_pass_through(fd, error):
    # C8: only a TypeError is rewritten.
    key = Crasher("k", error=error)
    key.crash_hash = True
    with pytest.raises(error) as info:
        fd([(key, 1)])
    assert type(info.value) is error
    assert "hash of k" in str(info.value)


def test_exception_from_eq_during_construction_propagates(fd):
    first = Crasher("a", hash_value=1)
    second = Crasher("b", hash_value=1)
    second.crash_eq = True
    first.crash_eq = True
    with pytest.raises(CrashError):
        fd([(first, 1), (second, 2)])


def test_exception_from_the_source_iterator_propagates(fd):
    def pairs():
        yield ("a", 1)
        raise CrashError("source broke")

    with pytest.raises(CrashError, match="source broke"):
        fd(pairs())


# --- C9: non-string keyword keys ---------------------------------------------------


def test_non_string_keyword_keys(fd):
    with pytest.raises(TypeError):
        fd(**{1: 2})


# --- C10: shallow copy of the source -------------------------------------------------


def test_source_changes_do_not_show_up(fd):
    source = {"a": 1, "b": 2}
    m = fd(source)
    source["a"] = 100
    source["c"] = 3
    del source["b"]
    assert list(m.items()) == [("a", 1), ("b", 2)]


def test_values_are_shared_not_copied(fd):
    value = [1, 2]
    key = ("k",)
    m = fd({key: value})
    assert m[key] is value
    assert next(iter(m)) is key
    value.append(3)
    assert m[key] == [1, 2, 3]


# --- C11: no __init__ of its own ----------------------------------------------------------


def test_init_is_objects_and_does_nothing(fd):
    assert fd.__init__ is object.__init__
    m = fd(a=1)
    assert m.__init__(x=1) is None
    assert m.__init__({"y": 2}) is None
    assert list(m.items()) == [("a", 1)]


def test_dict_init_refuses_a_frozendict(fd):
    m = fd(a=1)
    with pytest.raises(TypeError):
        dict.__init__(m, x=1)
    assert list(m.items()) == [("a", 1)]


# --- C12: calling __new__ directly ------------------------------------------------------


def test_new_called_directly_populates(fd):
    m = fd.__new__(fd, {"a": 1}, b=2)
    assert type(m) is fd
    assert list(m.items()) == [("a", 1), ("b", 2)]


def test_new_called_directly_on_a_subclass(fd):
    class FrozenDict(fd):
        pass

    m = fd.__new__(FrozenDict, a=1)
    assert type(m) is FrozenDict
    assert list(m.items()) == [("a", 1)]


# --- S1/S4: constructing subclasses ------------------------------------------------------


def test_subclass_init_gets_the_call_arguments_but_cannot_change_contents(fd):
    seen = []

    class FrozenDict(fd):
        def __init__(self, *args, **kwargs):
            seen.append((args, kwargs))
            super().__init__()

    m = FrozenDict({"a": 1}, b=2)
    assert seen == [(({"a": 1},), {"b": 2})]
    assert type(m) is FrozenDict
    assert list(m.items()) == [("a", 1), ("b", 2)]


def test_subclass_new_can_pass_different_contents(fd):
    class Defaults(fd):
        def __new__(cls, *args, **kwargs):
            return super().__new__(cls, {"default": 0}, **kwargs)

    m = Defaults(a=1)
    assert type(m) is Defaults
    assert list(m.items()) == [("default", 0), ("a", 1)]


def test_subclass_built_from_a_frozendict_is_a_new_subclass_instance(fd):
    class FrozenDict(fd):
        pass

    base = fd(a=1)
    m = FrozenDict(base)
    assert type(m) is FrozenDict
    assert m is not base
    assert m == base


def test_frozendict_built_from_a_subclass_instance_is_exact(fd):
    class FrozenDict(fd):
        pass

    sub = FrozenDict(a=1, b=2)
    m = fd(sub)
    assert type(m) is fd
    assert m is not sub
    assert list(m.items()) == [("a", 1), ("b", 2)]
