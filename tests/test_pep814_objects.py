"""PEP 814 object protocol: repr, pickle, copy, typing, subclassing, mutators, ABCs, match.

Rows R1-R4 (§9), P1/P4 and I4/I6 (§10, §2), §11, S1-S3 (§12), M1-M5 (§13),
A1-A2 (§12) and F1-F3 (§3) of docs/pep814.md.
"""

import collections.abc
import copy
import pickle
import re
import types
import weakref

import pytest
from keys import Crasher, CrashError

import frozenmap._common

PROTOCOLS = list(range(pickle.HIGHEST_PROTOCOL + 1))


# --- naming ----------------------------------------------------------------------------


def test_class_is_named_and_placed_as_the_public_frozendict(fd):
    # Our choice: both cores report the public module.
    assert fd.__module__ == "frozenmap"
    assert fd.__name__ == "frozendict"
    assert fd.__qualname__ == "frozendict"


# --- R1-R4: repr -------------------------------------------------------------------------


def test_repr_of_empty_and_filled(fd):
    assert repr(fd()) == "frozendict()"
    assert repr(fd(x=1, y=2)) == "frozendict({'x': 1, 'y': 2})"
    assert repr(fd([(2, "b"), (1, "a")])) == "frozendict({2: 'b', 1: 'a'})"


def test_str_is_repr(fd):
    m = fd(x=1, y="two")
    assert str(m) == repr(m) == "frozendict({'x': 1, 'y': 'two'})"
    assert str(fd()) == "frozendict()"


def test_repr_of_a_subclass_uses_its_plain_name(fd):
    # R2: __name__ only, no module and no enclosing qualname.
    class FrozenDict(fd):
        pass

    assert repr(FrozenDict(x=1, y=2)) == "FrozenDict({'x': 1, 'y': 2})"
    assert repr(FrozenDict()) == "FrozenDict()"
    assert str(FrozenDict(x=1)) == "FrozenDict({'x': 1})"


def test_repr_of_a_recursive_frozendict(fd):
    m = fd(a=[])
    m["a"].append(m)
    assert repr(m) == "frozendict({'a': [frozendict({...})]})"


def test_repr_of_a_recursive_subclass(fd):
    class FrozenDict(fd):
        pass

    m = FrozenDict(a=[])
    m["a"].append(m)
    assert repr(m) == "FrozenDict({'a': [FrozenDict({...})]})"


def test_repr_of_recursion_through_a_dict(fd):
    d = {}
    m = fd(d=d)
    d["m"] = m
    assert repr(m) == "frozendict({'d': {'m': frozendict({...})}})"
    assert repr(d) == "{'m': frozendict({'d': {...}})}"


def test_repr_of_a_repeated_but_not_recursive_value(fd):
    inner = fd(a=1)
    m = fd(b=[inner, inner], c=inner)
    assert (
        repr(m)
        == "frozendict({'b': [frozendict({'a': 1}), frozendict({'a': 1})], 'c': frozendict({'a': 1})})"
    )


def test_repr_of_nested_frozendicts(fd):
    assert repr(fd(a=fd(b=1))) == "frozendict({'a': frozendict({'b': 1})})"
    assert repr(fd({fd(): fd()})) == "frozendict({frozendict(): frozendict()})"


def test_repr_error_propagates_and_leaves_repr_usable(fd):
    key = Crasher("k")
    m = fd({key: 1})
    key.crash_repr = True
    with pytest.raises(CrashError, match="repr of k"):
        repr(m)
    key.crash_repr = False
    assert repr(m) == "frozendict({Crasher('k'): 1})"


# --- pickle ---------------------------------------------------------------------------------

# Subclasses must be reachable by name for pickle, so they are module globals,
# one per core.
_PICKLE_SUBCLASSES = {}


def picklable_subclass(core, kind):
    """A module-level subclass of ``core.frozendict``: ``kind`` is 'Plain' or 'Slots'."""
    key = (core.name, kind)
    if key not in _PICKLE_SUBCLASSES:
        name = "Pickled%s_%s" % (kind, core.name)
        namespace = {"__module__": __name__, "__qualname__": name}
        if kind == "Slots":
            namespace["__slots__"] = ("x", "y")
        cls = type(name, (core.frozendict,), namespace)
        globals()[name] = cls
        _PICKLE_SUBCLASSES[key] = cls
    return _PICKLE_SUBCLASSES[key]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_pickle_round_trip_keeps_type_items_and_order(fd, protocol):
    # P1/P2, our choice: protocols 0 and 1 work too.
    m = fd([("z", 1), ("a", [2]), (3, (4, 5)), (None, fd(q=1))])
    restored = pickle.loads(pickle.dumps(m, protocol))
    assert type(restored) is fd
    assert restored == m
    assert list(restored.items()) == list(m.items())
    assert type(restored[None]) is fd


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_pickle_of_a_large_frozendict_keeps_order(fd, protocol):
    keys = [(k * 7919) % 1009 for k in range(1009)]
    m = fd((k, str(k)) for k in keys)
    restored = pickle.loads(pickle.dumps(m, protocol))
    assert list(restored) == keys
    assert hash(restored) == hash(m)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_exact_frozendict_pickles_through_the_shared_restore(fd, protocol):
    # Our choice: the pickle names frozenmap._common.restore, so either core can load it.
    data = pickle.dumps(fd(a=1), protocol)
    assert b"frozenmap._common" in data
    assert b"restore" in data
    assert b"_pycore" not in data
    assert b"_ccore" not in data
    assert fd(a=1).__reduce_ex__(protocol)[0] is frozenmap._common.restore


def test_getnewargs_gives_a_plain_dict(fd):
    # P1: __getnewargs__() returns (dict(self),).
    args = fd(b=1, a=2).__getnewargs__()
    assert type(args) is tuple and len(args) == 1
    assert type(args[0]) is dict
    assert list(args[0].items()) == [("b", 1), ("a", 2)]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_pickle_empty(fd, protocol):
    restored = pickle.loads(pickle.dumps(fd(), protocol))
    assert type(restored) is fd
    assert len(restored) == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_pickle_subclass_keeps_type_and_instance_dict(core, protocol):
    cls = picklable_subclass(core, "Plain")
    m = cls(b=1, a=2)
    m.note = ["attr"]
    restored = pickle.loads(pickle.dumps(m, protocol))
    assert type(restored) is cls
    assert list(restored.items()) == [("b", 1), ("a", 2)]
    assert restored.note == ["attr"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_pickle_subclass_keeps_slot_values(core, protocol):
    cls = picklable_subclass(core, "Slots")
    m = cls(b=1, a=2)
    m.x = "slot x"
    restored = pickle.loads(pickle.dumps(m, protocol))
    assert type(restored) is cls
    assert list(restored.items()) == [("b", 1), ("a", 2)]
    assert restored.x == "slot x"
    assert not hasattr(restored, "y")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_pickle_shared_references_stay_shared(fd, protocol):
    shared = [1]
    m = fd(a=shared, b=shared)
    restored = pickle.loads(pickle.dumps([m, m], protocol))
    assert restored[0] is restored[1]
    assert restored[0]["a"] is restored[0]["b"]


# --- I4/P4: copy.copy -------------------------------------------------------------------------


def test_copy_copy_of_an_exact_frozendict_is_itself(fd):
    m = fd(a=[1])
    assert copy.copy(m) is m


def test_copy_copy_of_a_subclass_is_a_new_instance_with_its_state(core):
    cls = picklable_subclass(core, "Plain")
    m = cls(a=[1], b=2)
    m.note = "n"
    copied = copy.copy(m)
    assert type(copied) is cls
    assert copied is not m
    assert list(copied.items()) == [("a", [1]), ("b", 2)]
    assert copied["a"] is m["a"]
    assert copied.note == "n"


# --- I6/P4: copy.deepcopy ------------------------------------------------------------------------


def test_deepcopy_builds_a_new_frozendict_even_when_atomic(fd):
    m = fd(a=1, b="s")
    copied = copy.deepcopy(m)
    assert copied is not m
    assert type(copied) is fd
    assert list(copied.items()) == [("a", 1), ("b", "s")]


def test_deepcopy_copies_keys_and_values(fd):
    class Key:
        def __init__(self, name):
            self.name = name

        def __hash__(self):
            return hash(self.name)

        def __eq__(self, other):
            return isinstance(other, Key) and other.name == self.name

    key = Key("k")
    m = fd([(key, [1, [2]]), ("z", {"d": 1})])
    copied = copy.deepcopy(m)
    assert copied == m
    assert list(copied) == [key, "z"]
    copied_key = next(iter(copied))
    assert copied_key is not key
    assert copied[key] is not m[key]
    assert copied[key][1] is not m[key][1]
    assert copied["z"] is not m["z"]


def test_deepcopy_of_a_recursive_frozendict(fd):
    # P4: x = frozendict(foo=[]); x['foo'].append(x); y = deepcopy(x) -> y['foo'][0] is y.
    x = fd(foo=[])
    x["foo"].append(x)
    y = copy.deepcopy(x)
    assert y is not x
    assert type(y) is fd
    assert y["foo"] is not x["foo"]
    assert y["foo"][0] is y


def test_deepcopy_keeps_shared_references_shared(fd):
    m = fd(a=[1])
    outer = [m, m, m["a"]]
    copied = copy.deepcopy(outer)
    assert copied[0] is copied[1]
    assert copied[0]["a"] is copied[2]
    assert copied[0] is not m


def test_deepcopy_of_a_subclass_keeps_type_and_state(core):
    cls = picklable_subclass(core, "Plain")
    m = cls(a=[1])
    m.note = ["n"]
    copied = copy.deepcopy(m)
    assert type(copied) is cls
    assert copied == m
    assert copied["a"] is not m["a"]
    assert copied.note == ["n"]
    assert copied.note is not m.note


# --- T1 (§11): generic alias ----------------------------------------------------------------------------


def test_class_getitem_gives_a_generic_alias(fd):
    alias = fd[str, int]
    assert isinstance(alias, types.GenericAlias)
    assert alias.__origin__ is fd
    assert alias.__args__ == (str, int)
    assert alias == types.GenericAlias(fd, (str, int))


def test_generic_alias_of_a_subclass_and_calling_it(fd):
    class FrozenDict(fd):
        pass

    alias = FrozenDict[str, int]
    assert isinstance(alias, types.GenericAlias)
    assert alias.__origin__ is FrozenDict
    m = fd[str, int](a=1)
    assert type(m) is fd
    assert m == {"a": 1}


# --- S1/S3: subclasses --------------------------------------------------------------------------


def test_subclass_instances_have_a_dict_unless_slotted(fd):
    class FrozenDict(fd):
        pass

    class Slotted(fd):
        __slots__ = ("x",)

    m = FrozenDict(a=1)
    m.attr = 5
    assert m.__dict__ == {"attr": 5}
    assert list(m.items()) == [("a", 1)]
    s = Slotted(a=1)
    s.x = 1
    with pytest.raises(AttributeError):
        s.attr = 5
    assert not hasattr(s, "__dict__")


def test_subclass_item_assignment_names_the_subclass(fd):
    class FrozenDict(fd):
        pass

    m = FrozenDict(a=1)
    with pytest.raises(
        TypeError, match=re.escape("'FrozenDict' object does not support item assignment")
    ):
        m["a"] = 2
    with pytest.raises(
        TypeError, match=re.escape("'FrozenDict' object does not support item deletion")
    ):
        del m["a"]
    assert list(m.items()) == [("a", 1)]


def test_subclass_methods_and_properties_work(fd):
    class Config(fd):
        @property
        def total(self):
            return sum(self.values())

    c = Config(a=1, b=2)
    assert c.total == 3
    assert isinstance(c, fd)
    assert issubclass(Config, collections.abc.Mapping)


# --- M1-M4: what is missing ----------------------------------------------------------------------

MISSING_METHODS = [
    "__setitem__",
    "__delitem__",
    "setdefault",
    "pop",
    "popitem",
    "update",
    "clear",
    "__ior__",
]


@pytest.mark.parametrize("name", MISSING_METHODS)
def test_mutating_methods_do_not_exist(fd, name):
    m = fd(a=1)
    assert not hasattr(fd, name)
    with pytest.raises(
        AttributeError, match=re.escape("'frozendict' object has no attribute '%s'" % name)
    ):
        getattr(m, name)


def test_item_assignment_and_deletion_raise(fd):
    m = fd(a=1)
    with pytest.raises(
        TypeError, match=re.escape("'frozendict' object does not support item assignment")
    ):
        m["k"] = 1
    with pytest.raises(
        TypeError, match=re.escape("'frozendict' object does not support item assignment")
    ):
        m["a"] = 2
    with pytest.raises(
        TypeError, match=re.escape("'frozendict' object does not support item deletion")
    ):
        del m["a"]
    with pytest.raises(
        TypeError, match=re.escape("'frozendict' object does not support item deletion")
    ):
        del m["missing"]
    assert list(m.items()) == [("a", 1)]


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda m: dict.__setitem__(m, "b", 2), id="setitem"),
        pytest.param(lambda m: dict.__delitem__(m, "a"), id="delitem"),
        pytest.param(lambda m: dict.update(m, b=2), id="update"),
        pytest.param(lambda m: dict.clear(m), id="clear"),
        pytest.param(lambda m: dict.__init__(m, b=2), id="init"),
        pytest.param(lambda m: dict.pop(m, "a"), id="pop"),
    ],
)
def test_dict_methods_refuse_a_frozendict(fd, call):
    m = fd(a=1)
    with pytest.raises(TypeError):
        call(m)
    assert list(m.items()) == [("a", 1)]


def test_no_instance_dict_or_new_attributes(fd):
    m = fd(a=1)
    assert not hasattr(m, "__dict__")
    with pytest.raises(AttributeError):
        m.attr = 1
    with pytest.raises(AttributeError):
        m.keys = None
    assert list(m.keys()) == ["a"]


def test_no_instance_attribute_can_be_set_or_deleted(fd):
    # M4: no attribute of an exact instance, including any internal field, can be
    # rebound or deleted; otherwise the frozendict is not immutable.
    m = fd(a=1, b=2)
    names = [n for n in dir(m) if not (n.startswith("__") and n.endswith("__"))]
    for cls in type(m).__mro__:
        names.extend(n for n in getattr(cls, "__slots__", ()) if n != "__weakref__")
    for name in sorted(set(names)):
        with pytest.raises(AttributeError):
            setattr(m, name, None)
        with pytest.raises((AttributeError, TypeError)):
            delattr(m, name)
    assert list(m.items()) == [("a", 1), ("b", 2)]
    assert hash(m) == hash(frozenset({("a", 1), ("b", 2)}))


# --- M5: weak references -------------------------------------------------------------------------


def test_exact_frozendict_has_no_weak_references(fd):
    with pytest.raises(
        TypeError, match=re.escape("cannot create weak reference to 'frozendict' object")
    ):
        weakref.ref(fd(a=1))
    with pytest.raises(TypeError):
        weakref.ref(fd())


def test_subclass_instances_have_weak_references(fd):
    class FrozenDict(fd):
        pass

    m = FrozenDict(a=1)
    ref = weakref.ref(m)
    assert ref() is m
    assert weakref.WeakValueDictionary({"k": m})["k"] is m


def test_slotted_subclass_without_weakref_slot_has_none(fd):
    class Slotted(fd):
        __slots__ = ("x",)

    class SlottedWeak(fd):
        __slots__ = ("x", "__weakref__")

    with pytest.raises(
        TypeError, match=re.escape("cannot create weak reference to 'Slotted' object")
    ):
        weakref.ref(Slotted())
    s = SlottedWeak()
    assert weakref.ref(s)() is s


# --- A1: ABCs ------------------------------------------------------------------------------------


def test_is_a_mapping_but_not_a_mutable_mapping_nor_a_dict(fd):
    m = fd(a=1)
    assert isinstance(m, collections.abc.Mapping)
    assert issubclass(fd, collections.abc.Mapping)
    assert not isinstance(m, collections.abc.MutableMapping)
    assert not issubclass(fd, collections.abc.MutableMapping)
    assert not isinstance(m, dict)
    assert not issubclass(fd, dict)


def test_bases_are_just_object(fd):
    assert fd.__bases__ == (object,)


@pytest.mark.parametrize(
    "abc",
    [
        collections.abc.Hashable,
        collections.abc.Reversible,
        collections.abc.Collection,
        collections.abc.Sized,
        collections.abc.Iterable,
        collections.abc.Container,
    ],
)
def test_other_abcs(fd, abc):
    assert isinstance(fd(a=1), abc)


# --- A2 (§12): pattern matching -------------------------------------------------------------------------


def test_mapping_pattern_with_rest(fd):
    match fd(a=1, b=2, c=3):
        case {"a": x, **rest}:
            pass
        case _:
            pytest.fail("mapping pattern did not match")
    assert x == 1
    assert type(rest) is dict
    assert list(rest.items()) == [("b", 2), ("c", 3)]


def test_mapping_pattern_selects_by_keys(fd):
    def describe(m):
        match m:
            case {"kind": "point", "x": x, "y": y}:
                return ("point", x, y)
            case {"kind": "empty"}:
                return "empty"
            case {}:
                return "other mapping"
        return "no match"

    assert describe(fd(kind="point", x=1, y=2)) == ("point", 1, 2)
    assert describe(fd(kind="point", x=1)) == "other mapping"
    assert describe(fd(kind="empty", extra=1)) == "empty"
    assert describe(fd()) == "other mapping"


def test_mapping_pattern_on_a_subclass_does_not_call_missing(fd):
    class WithDefault(fd):
        def __missing__(self, key):
            return "default"

    match WithDefault(a=1):
        case {"b": value}:
            pytest.fail("matched a key that is not there: %r" % (value,))
        case {"a": value}:
            assert value == 1


def test_sequence_pattern_never_matches(fd):
    match fd({0: "a", 1: "b"}):
        case [*_]:
            pytest.fail("sequence pattern matched a frozendict")
        case (_, _):
            pytest.fail("sequence pattern matched a frozendict")
        case _:
            pass


def test_dict_class_pattern_does_not_match(fd):
    match fd(a=1):
        case dict():
            pytest.fail("frozendict matched dict()")
        case _:
            pass


def test_class_pattern_binds_the_subject_itself(core):
    m = core.frozendict(a=1)
    match m:
        case core.frozendict(x):
            assert x is m
        case _:
            pytest.fail("class pattern did not match")


def test_class_pattern_binds_a_subclass_subject(core):
    class FrozenDict(core.frozendict):
        pass

    m = FrozenDict(a=1)
    match m:
        case core.frozendict(x):
            assert x is m
        case _:
            pytest.fail("class pattern did not match a subclass instance")
    match core.frozendict(a=1):
        case FrozenDict():
            pytest.fail("subclass pattern matched a base instance")
        case core.frozendict({"a": 1}):
            pass
        case _:
            pytest.fail("class pattern with a mapping sub-pattern did not match")


# --- F1-F3: fromkeys ----------------------------------------------------------------------------------


def test_fromkeys_maps_every_key_to_the_same_value_object(fd):
    value = []
    m = fd.fromkeys(["b", "a", "b", "c"], value)
    assert type(m) is fd
    assert list(m) == ["b", "a", "c"]
    assert all(v is value for v in m.values())


def test_fromkeys_default_value_is_none(fd):
    assert list(fd.fromkeys("ab").items()) == [("a", None), ("b", None)]
    assert fd.fromkeys([]) == {}


def test_fromkeys_arguments_are_positional_only(fd):
    with pytest.raises(TypeError):
        fd.fromkeys("ab", value=1)
    with pytest.raises(TypeError):
        fd.fromkeys(iterable="ab")
    with pytest.raises(TypeError):
        fd.fromkeys()
    with pytest.raises(TypeError):
        fd.fromkeys("a", 1, 2)


def test_fromkeys_on_an_instance_builds_a_new_frozendict(fd):
    m = fd(z=0)
    result = m.fromkeys("ab", 1)
    assert type(result) is fd
    assert list(result.items()) == [("a", 1), ("b", 1)]
    assert list(m.items()) == [("z", 0)]


def test_fromkeys_from_a_mapping_uses_its_keys(fd):
    assert list(fd.fromkeys(fd(x=1, y=2)).items()) == [("x", None), ("y", None)]
    assert list(fd.fromkeys({"q": 1}, 0).items()) == [("q", 0)]


def test_fromkeys_errors(fd):
    with pytest.raises(TypeError, match=re.escape("'int' object is not iterable")):
        fd.fromkeys(1)
    with pytest.raises(TypeError) as info:
        fd.fromkeys(["ok", [1]])
    assert str(info.value) == "cannot use 'list' as a frozendict key (unhashable type: 'list')"


def test_fromkeys_on_a_subclass_builds_in_two_steps(fd):
    # F2: cls() first, then cls(frozendict_with_the_keys); the result is a cls.
    calls = []

    class FrozenDict(fd):
        def __init__(self, *args, **kwargs):
            calls.append((args, kwargs))

    result = FrozenDict.fromkeys("ab", 0)
    assert type(result) is FrozenDict
    assert list(result.items()) == [("a", 0), ("b", 0)]
    assert len(calls) == 2
    assert calls[0] == ((), {})
    (args, kwargs) = calls[1]
    assert kwargs == {}
    assert len(args) == 1
    assert type(args[0]) is fd
    assert list(args[0].items()) == [("a", 0), ("b", 0)]


def test_fromkeys_on_a_subclass_keeps_what_the_empty_call_returned(fd):
    # F2: items from cls() come first; the object cls() returned is not changed.
    made = []

    class Prefilled(fd):
        def __new__(cls, *args, **kwargs):
            if not args and not kwargs:
                obj = super().__new__(cls, start=1, a="old")
            else:
                obj = super().__new__(cls, *args, **kwargs)
            made.append(obj)
            return obj

    result = Prefilled.fromkeys(["a", "b"], 2)
    assert type(result) is Prefilled
    assert list(result.items()) == [("start", 1), ("a", 2), ("b", 2)]
    first = made[0]
    assert list(first.items()) == [("start", 1), ("a", "old")]
    assert result is made[-1]


def test_fromkeys_on_a_subclass_with_a_custom_signature(fd):
    class Tagged(fd):
        def __new__(cls, source=(), tag="none"):
            obj = super().__new__(cls, source)
            return obj

    result = Tagged.fromkeys("xy")
    assert type(result) is Tagged
    assert list(result) == ["x", "y"]
