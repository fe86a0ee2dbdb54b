"""Lying types: the cores never trust what Python code hands them.

A metaclass can make ``__name__``, ``__qualname__``, ``__module__``,
``__mro__`` or ``__dict__`` of a class return anything; a subclass can make
``__len__``, ``__iter__``, ``keys``, ``items``, ``get``, ``__getitem__``,
``__reduce_ex__`` or ``__missing__`` return wrong types, raise or re-enter; a
key's hash can change after it was stored.  The first part reproduces each
finding of a review for hostile types on both cores (each failed before the fix: an abort, a
use after free under ASan, a ``SystemError``, a wrong answer, or two cores
that disagreed).  The second part is a hypothesis search: hostile classes
built from a menu of such overrides, fed to every public operation, must give
a clean exception or dict's answer, and the same outcome on both cores.
(The review's findings about user code editing an Evolver during a walk are
in ``test_reentry_from_user_code.py``; stale iterators and an Evolver made
without ``__init__`` in ``test_bad_arguments.py``.)
"""

import copy
import pickle
import re

import operations as registry
import pytest
from conftest import available_cores
from differential_engine import ItemsAsLists, IterKeysDict, LyingDict
from hypothesis import given, settings
from hypothesis import strategies as st
from keys import ChangingHashKey, CrashError


def _real_name(cls):
    return type.__dict__["__name__"].__get__(cls)


def metaclass_lying_about(**lies):
    """A metaclass whose class attributes named in ``lies`` return those values
    (or raise, for an exception instance)."""

    class Liar(type):
        def __getattribute__(cls, name):
            if name in lies:
                value = lies[name]
                if isinstance(value, BaseException):
                    raise value
                return value
            return type.__getattribute__(cls, name)

    return Liar


# --- 1. type attributes used unchecked -------------------------------------------


def test_repr_of_a_subclass_whose_metaclass_makes_name_an_int(core):
    # C: the int went to %U (abort, ASan SEGV).  Both print the real name now.
    class Meta(type):
        @property
        def __name__(cls):
            return 12345

    class Sub(core.frozendict, metaclass=Meta):
        pass

    assert repr(Sub({1: 2})) == "Sub({1: 2})"
    assert repr(Sub()) == "Sub()"


@pytest.mark.parametrize("lie", [12345, None, b"bytes", CrashError("qualname")])
def test_unhashable_key_whose_type_lies_about_qualname_and_module(core, lie):
    # C: the message builder checked __module__ but not __qualname__ (abort).
    class Key(metaclass=metaclass_lying_about(__qualname__=lie, __module__=lie)):
        __hash__ = None

    qualname = type.__dict__["__qualname__"].__get__(Key)
    expected = "cannot use '%s.%s' as a frozendict key (unhashable type: 'Key')" % (
        __name__,
        qualname,
    )
    fd = core.frozendict({1: 2})
    for op in (
        lambda: fd.set(Key(), 1),
        lambda: fd.get(Key()),
        lambda: Key() in fd,
        lambda: core.frozendict([(Key(), 1)]),
        lambda: fd.evolve().update([(Key(), 1)]),
    ):
        with pytest.raises(TypeError) as info:
            op()
        assert str(info.value) == expected


@pytest.mark.parametrize("fake_mro", [(1, 2, "x"), None, "not a tuple", CrashError("mro")])
def test_copy_and_pickle_of_a_subclass_whose_metaclass_fakes_mro(core, fake_mro):
    # C: the fake __mro__ was walked as a tuple of types (heap-use-after-free
    # under ASan); now the real MRO is used, and the slot values survive.
    Meta = metaclass_lying_about(__mro__=fake_mro, __name__=12345)
    Sub = _slotted_subclass(core, Meta)
    x = Sub({1: 2})
    x.plain = "p"
    x._Sub__private = "q"
    for clone in (copy.copy(x), copy.deepcopy(x)):
        assert type(clone) is Sub and clone == {1: 2}
        assert clone.plain == "p" and clone._Sub__private == "q"
    state = x.__reduce_ex__(2)[2]
    assert state == (None, {"plain": "p", "_Sub__private": "q"})


def _slotted_subclass(core, meta):
    class Sub(core.frozendict, metaclass=meta):
        __slots__ = ("plain", "__private")

    return Sub


def test_a_private_slot_in_a_class_named_only_underscores_is_not_mangled(core):
    class _(core.frozendict):
        __slots__ = ("__p",)

    x = _({1: 2})
    setattr(x, "__p", 7)  # Python does not mangle names in a class called '_'
    clone = copy.copy(x)
    assert getattr(clone, "__p") == 7


# --- 2. results of user methods used unchecked ----------------------------------


def test_copy_when_reduce_ex_returns_a_string(core):
    # A string is legal for pickle (a global name): copy returns the object.
    # C: "SystemError: ... returned NULL without setting an exception".
    class Sub(core.frozendict):
        def __reduce_ex__(self, protocol):
            return "Sub"

    x = Sub({1: 2})
    assert copy.copy(x) is x
    assert copy.deepcopy(x) is x


@pytest.mark.parametrize("result", [12345, None, [1, 2], {"a": 1}])
def test_copy_when_reduce_ex_returns_neither_a_string_nor_a_tuple(core, result):
    class Sub(core.frozendict):
        def __reduce_ex__(self, protocol):
            return result

    for op in (copy.copy, copy.deepcopy):
        with pytest.raises(
            TypeError,
            match=r"Sub\.__reduce_ex__\(\) must return a string "
            r"or a tuple, not %s" % type(result).__name__,
        ):
            op(Sub({1: 2}))


def test_keys_returning_a_non_iterable_raises_dicts_message(core):
    class Mapping:
        def keys(self):
            return 12345

        def __getitem__(self, key):
            return key

    with pytest.raises(TypeError) as expected:
        dict(Mapping())
    for op in (
        lambda: core.frozendict(Mapping()),
        lambda: core.frozendict().evolve().update(Mapping()),
    ):
        with pytest.raises(TypeError) as got:
            op()
        # dict's own message on the running Python (its wording changed in 3.15)
        assert str(got.value) == str(expected.value)


# --- 3. Evolver.popitem() of a key whose hash changed or raises --------------------


@pytest.mark.parametrize("after", [2, 10**20, CrashError("hash"), TypeError("hash")])
def test_evolver_popitem_removes_the_last_item_whatever_the_hash_says(core, after):
    # C: "SystemError: popitem: tries disagree"; pure: AssertionError; a key
    # whose __hash__ now raises made popitem raise.  The hash only guides the
    # search (spec §2): a changed or raising one costs a scan.
    keys = [ChangingHashKey(1), ChangingHashKey(1), ChangingHashKey(33)]  # a collision, a split
    e = core.frozendict({k: i for i, k in enumerate(keys)}).evolve()
    e["s"] = "str"
    e[(1, "t")] = "tuple"
    for k in keys:
        k.h = after
        k.calls = 0
    assert e.popitem() == ((1, "t"), "tuple")
    assert e.popitem() == ("s", "str")
    for i in reversed(range(3)):
        assert e.popitem() == (keys[i], i)
    assert [k.calls for k in keys] == [1, 1, 1]
    assert len(e) == 0
    e._check()
    with pytest.raises(KeyError):
        e.popitem()


def test_update_and_or_from_a_frozendict_never_hash_its_stored_keys(core):
    keys = [ChangingHashKey(5), ChangingHashKey(5), ChangingHashKey(70)]
    source = core.frozendict({k: i for i, k in enumerate(keys)})
    for k in keys:
        k.h = CrashError("hashed again")
    e = core.frozendict({"a": 1}).evolve()
    e.update(source)
    assert list(e.items()) == [("a", 1)] + [(k, i) for i, k in enumerate(keys)]
    merged = core.frozendict({"a": 1}) | source
    assert list(merged.items()) == list(e.items())
    merged._check()
    with_kw = core.frozendict(source, z=0)
    assert list(with_kw.items()) == [(k, i) for i, k in enumerate(keys)] + [("z", 0)]


# --- 4. cores that disagreed ---------------------------------------------------------


@pytest.mark.parametrize("cls", [ItemsAsLists, LyingDict, IterKeysDict])
def test_a_dict_subclass_is_read_as_dict_reads_it(core, cls):
    # fd | d where items() yields [k, v] lists: C raised, the pure core accepted.
    d = cls({3: 4, 5: 6})
    fd = core.frozendict({1: 2, 3: 0})
    expected = {1: 2, 3: 0} | d
    assert list((fd | d).items()) == list(expected.items())
    assert list(core.frozendict(d).items()) == list(dict(d).items())
    e = fd.evolve()
    e.update(d)
    assert list(e.items()) == list(expected.items())
    assert (fd == d) is ({1: 2, 3: 0} == d)
    assert (core.frozendict(dict(d)) == d) is (dict(dict(d)) == d)


@pytest.mark.parametrize("length", [0, 99, -1])
def test_a_len_override_is_never_consulted(core, length):
    # As dict's own ==, repr and views; both cores consulted it.
    def lying_len(self):
        if length < 0:
            raise CrashError("__len__")
        return length

    Sub = type("Sub", (core.frozendict,), {"__len__": lying_len})
    x = Sub({1: 2})
    assert x == {1: 2} and {1: 2} == x and x == core.frozendict({1: 2})
    assert not (x != {1: 2})
    assert repr(x) == "Sub({1: 2})"
    assert len(x.keys()) == len(x.values()) == len(x.items()) == 1
    assert list(x.keys()) == [1]

    e = type("SubEvolver", (core.Evolver,), {"__len__": lying_len})({1: 2})
    assert e == {1: 2} and repr(e) == "Evolver({1: 2})" and len(e.keys()) == 1


# --- found by the audit ------------------------------------------------------------------


def test_missing_is_looked_up_as_dict_looks_it_up(core):
    class Meta(type):
        def __missing__(cls, self, key):  # an attribute of the metaclass: not used
            return "meta"

    class Sub(core.frozendict, metaclass=Meta):
        pass

    with pytest.raises(KeyError):
        Sub()[1]

    class Static(core.frozendict):
        __missing__ = staticmethod(lambda key: ("static", key))

    assert Static()[1] == ("static", 1)

    class Nothing(core.frozendict):
        __missing__ = None

    with pytest.raises(TypeError):
        Nothing()[1]


class FakeDict:
    """Claims to be a dict through __class__ (isinstance believes it)."""

    @property
    def __class__(self):
        return dict

    def keys(self):
        return [1]

    def __getitem__(self, key):
        return "fake"


def test_an_object_claiming_to_be_a_dict_is_not_one(core):
    fd = core.frozendict({1: "fake"})
    assert isinstance(FakeDict(), dict)
    assert fd.__eq__(FakeDict()) is NotImplemented
    assert fd != FakeDict()
    with pytest.raises(TypeError):
        fd | FakeDict()
    assert core.frozendict(FakeDict()) == fd  # read through keys() like any mapping


# --- the hypothesis search: hostile classes against every public operation ----------

BEHAVIOURS = ["int", "str", "none", "list", "junk", "raise", "self", "reenter"]
TYPE_ATTRS = ["__name__", "__qualname__", "__module__", "__mro__", "__dict__"]
INSTANCE_ATTRS = [
    "__len__",
    "__iter__",
    "keys",
    "items",
    "get",
    "__getitem__",
    "__reduce_ex__",
    "__missing__",
    "__class__",
]
BASES = ["frozendict", "dict", "evolver", "object"]

hostile_spec = st.fixed_dictionaries(
    {
        "base": st.sampled_from(BASES),
        "meta": st.dictionaries(
            st.sampled_from(TYPE_ATTRS), st.sampled_from(BEHAVIOURS), max_size=3
        ),
        "attrs": st.dictionaries(
            st.sampled_from(INSTANCE_ATTRS), st.sampled_from(BEHAVIOURS), max_size=4
        ),
        "slots": st.booleans(),
    }
)


def _wrong(behaviour, self_obj):
    return {
        "int": 12345,
        "str": "hostile",
        "none": None,
        "list": [[1, "x"], 2],
        "junk": (1, "x", None),
        "self": self_obj,
    }[behaviour]


def build_hostile(core, spec):
    """One hostile class per core, from the same spec (so both cores see the
    same names and the same behaviour)."""
    base = {"frozendict": core.frozendict, "dict": dict, "evolver": core.Evolver, "object": object}[
        spec["base"]
    ]
    depth = {"n": 0}

    def nested(obj):
        # re-enter: another operation on the same object, once
        if depth["n"]:
            return
        depth["n"] += 1
        try:
            core.frozendict(obj)
        except Exception:
            pass
        finally:
            depth["n"] -= 1

    meta_lies = {}
    for name, behaviour in spec["meta"].items():
        if behaviour == "raise":
            meta_lies[name] = CrashError(name)
        elif behaviour not in ("reenter", "self"):
            meta_lies[name] = _wrong(behaviour, None)
    Meta = metaclass_lying_about(**meta_lies)

    def method(name, behaviour):
        def impl(self, *args, **kwargs):
            if behaviour == "raise":
                raise CrashError(name)
            if behaviour == "reenter":
                nested(self)
                fallback = getattr(base, name, None)
                if fallback is None:
                    return {
                        "keys": [1],
                        "__getitem__": "v",
                        "get": "v",
                        "__len__": 1,
                        "__iter__": iter([1]),
                        "items": [(1, "v")],
                    }.get(name)
                return fallback(self, *args, **kwargs)
            return _wrong(behaviour, self)

        impl.__name__ = name
        return impl

    namespace = {}
    for name, behaviour in spec["attrs"].items():
        if name == "__class__":
            namespace[name] = property(
                lambda self, b=behaviour: (
                    (_ for _ in ()).throw(CrashError("__class__"))
                    if b == "raise"
                    else dict
                    if b in ("self", "reenter")
                    else _wrong(b, self)
                )
            )
        else:
            namespace[name] = method(name, behaviour)
    if spec["base"] == "object":
        namespace.setdefault("keys", lambda self: [1, 2])
        namespace.setdefault("__getitem__", _object_getitem)
        # (never the old sequence protocol, which a constant __getitem__ makes endless)
        namespace.setdefault("__iter__", lambda self: iter([1, 2]))
    if spec["slots"] and spec["base"] != "object":
        namespace["__slots__"] = ("plain", "__private")
    return Meta("Hostile", (base,), namespace)


def _object_getitem(self, key):
    if key in (1, 2):
        return "item%r" % (key,)
    raise KeyError(key)


def make_instance(core, cls, spec):
    if spec["base"] == "object":
        return cls()
    x = cls({1: "a", 2: ["b"]})
    if spec["slots"]:
        object.__setattr__(x, "plain", "p")
        object.__setattr__(x, "_Hostile__private", "q")
    return x


def norm(core, obj, depth=0):
    """A description of obj that calls none of its (hostile) methods."""
    if depth > 4:
        return "..."
    cls = type(obj)
    name = _real_name(cls)
    if obj is None or cls in (int, str, bool, float, bytes):
        return re.sub(r"0x[0-9a-f]+", "0x?", repr(obj))
    for tag, base in (("fd", core.frozendict), ("ev", core.Evolver)):
        if issubclass(cls, base):
            items = base.items(obj)
            return (
                tag,
                name,
                tuple((norm(core, k, depth + 1), norm(core, v, depth + 1)) for k, v in items),
            )
    if issubclass(cls, dict):
        return (
            "dict",
            name,
            tuple((norm(core, k, depth + 1), norm(core, v, depth + 1)) for k, v in dict.items(obj)),
        )
    if issubclass(cls, (tuple, list)):
        return (name,) + tuple(
            norm(core, x, depth + 1)
            for x in (tuple.__iter__(obj) if issubclass(cls, tuple) else list.__iter__(obj))
        )
    if issubclass(cls, type):
        return ("type", _real_name(obj))
    return ("obj", name)


def outcome(core, fn):
    try:
        return ("ok", norm(core, fn()))
    except Exception as exc:
        message = re.sub(r"0x[0-9a-f]+", "0x?", str(exc))
        return ("raise", type(exc).__name__, message)


def operations(core, x, make):
    """Every public operation that takes or reads the hostile object x."""
    fd = core.frozendict({1: "a", 3: "c"})
    ops = {
        "repr": lambda: repr(x),
        "fd==x": lambda: fd.__eq__(x),
        "fd!=x": lambda: fd.__ne__(x),
        "x==fd": lambda: x == fd,
        "fd|x": lambda: fd | x,
        "x|fd": lambda: x | fd,
        "fd-x": lambda: fd - x,
        "fd&x": lambda: fd & x,
        "frozendict(x)": lambda: core.frozendict(x),
        "frozendict(x,kw)": lambda: core.frozendict(x, z=0),
        "update(x)": lambda: _updated(fd, x),
        "Evolver(x)": lambda: core.Evolver(x),
        "diff(x)": lambda: fd.diff(x),
        "copy.copy": lambda: copy.copy(x),
        "copy.deepcopy": lambda: copy.deepcopy(x),
        "pickle": lambda: [pickle.loads(pickle.dumps(x, p)) for p in (0, 2, 5)],
        "ev==x": lambda: fd.evolve().__eq__(x),
        "ev.update(x)": lambda: _updated(core.Evolver(), x),
        "unhashable key": lambda: fd.set(_unhashable_key_like(type(x))(), 1),
    }
    cls = type(x)  # (isinstance would ask a hostile __class__)
    if issubclass(cls, (core.frozendict, core.Evolver)):
        base = core.frozendict if issubclass(cls, core.frozendict) else core.Evolver
        ops.update(
            {
                "keys": lambda: list(base.keys(x)),
                "len(keys)": lambda: len(base.keys(x)),
                "values": lambda: list(base.values(x)),
                "items": lambda: list(base.items(x)),
                "reversed": lambda: list(base.__reversed__(x)),
                "iter": lambda: list(base.__iter__(x)),
                "get": lambda: base.get(x, 1),
                "getitem": lambda: base.__getitem__(x, 1),
                "missing": lambda: base.__getitem__(x, 99),
                "contains": lambda: base.__contains__(x, 2),
                "x.__eq__(dict)": lambda: base.__eq__(x, {1: "a", 2: ["b"]}),
                "reduce_ex": lambda: (
                    base.__reduce_ex__(x, 2)[2:] if base is core.frozendict else None
                ),
            }
        )
    if issubclass(cls, core.frozendict):
        ops.update(
            {
                "copy()": lambda: core.frozendict.copy(x),
                "set": lambda: core.frozendict.set(x, 3, "c"),
                "evolve==x": lambda: core.frozendict.evolve(x) == x,
                "x.diff": lambda: core.frozendict.diff(x, {1: "a"}),
                "fromkeys": lambda: type(x).fromkeys([1, 2]),
                "hash": lambda: hash(x),
            }
        )
    if issubclass(cls, core.Evolver):
        ops.update(
            {
                "popitem": lambda: core.Evolver.popitem(make()),
                "freeze": lambda: core.Evolver.freeze(x),
            }
        )
    ops.update(_registry_operations(core, x, cls))
    return ops


_PLAIN_ARGS = registry.role_table(
    registry.HOSTILE,
    {
        "key": lambda fd: 1,
        "value": lambda fd: "v",
        "pairs": lambda fd: [(1, "z"), (4, "w")],
        "mapping": lambda fd: {3: "z"},
        "keys": lambda fd: [1, 5],
        "path": lambda fd: [1],
        "fn": lambda fd: lambda *args: args[-1],
        "other": lambda fd: {1: "a"},
        "version": lambda fd: fd,
        "position": lambda fd: -1,
        "span": lambda fd: (0, 1),
    },
)
"""Each role's plain argument (``fd``: the frozendict the operations share)."""
_OPERANDS = ("mapping", "version", "other")


def _registry_operations(core, x, cls):
    """Every operation of tests/operations.py with x as its subject (when x
    is a frozendict or an Evolver) and with x as each mapping it reads."""
    fd = core.frozendict({1: "a", 3: "c"})

    def subject(entry):
        return {"frozendict": fd, "Evolver": core.Evolver(fd), "type": core.frozendict}[entry.on]

    def run(entry, on, args):
        return lambda: entry.call(core, on() if callable(on) else on, *args)

    ops = {}
    for entry in registry.for_engine(registry.HOSTILE):
        args = registry.arguments(_PLAIN_ARGS, entry, fd)
        own = {"frozendict": core.frozendict, "Evolver": core.Evolver}.get(entry.on)
        if own is not None and issubclass(cls, own):
            ops["%s on x" % entry.name] = run(entry, x, args)
        for i, role in enumerate(entry.args):
            if role in _OPERANDS:
                with_x = args[:i] + [x] + args[i + 1 :]
                ops["%s, x as %s" % (entry.name, role)] = run(
                    entry, lambda e=entry: subject(e), with_x
                )
    return ops


def _updated(fd_or_evolver, x):
    e = fd_or_evolver.evolve() if hasattr(fd_or_evolver, "evolve") else fd_or_evolver
    e.update(x)
    return e.freeze()


def _unhashable_key_like(cls):
    """An unhashable key class with cls's metaclass (lying about its names)."""
    return type(cls)("HostileKey", (), {"__hash__": None})


def run_all(core, spec):
    try:
        cls = build_hostile(core, spec)
        x = make_instance(core, cls, spec)
    except Exception as exc:
        return {"make": ("raise", type(exc).__name__, str(exc))}
    results = {}
    for name, op in operations(core, x, lambda: make_instance(core, cls, spec)).items():
        results[name] = outcome(core, op)
    return results


def check_clean(results):
    for name, result in results.items():
        if result[0] == "raise":
            assert result[1] != "SystemError" and "returned NULL" not in result[2], (name, result)


def check_dict_consistent(core, spec, results):
    """For a dict subclass, the operations that read it give dict's answers."""
    if spec["base"] != "dict" or "__class__" in spec["attrs"]:
        return
    if "make" in results:
        return
    d = make_instance(core, build_hostile(core, spec), spec)
    fd_items = {1: "a", 3: "c"}
    expected = {
        "fd==x": lambda: dict.__eq__(fd_items, d),
        "fd|x": lambda: core.frozendict(dict.__or__(fd_items, d)),
        "frozendict(x)": lambda: core.frozendict(dict(d)),
        "update(x)": lambda: core.frozendict(_dict_updated(fd_items, d)),
    }
    for name, fn in expected.items():
        want = outcome(core, fn)
        got = results[name]
        if want[0] == "raise":
            assert got[:2] == want[:2], (name, got, want)
        else:
            assert got == want, (name, got, want)


def _dict_updated(items, d):
    tmp = dict(items)
    tmp.update(d)
    return tmp


CORES = available_cores()


@settings(max_examples=max(20, settings.default.max_examples // 2))
@given(spec=hostile_spec)
def test_hostile_types_against_every_operation(spec):
    per_core = {}
    for core in CORES:
        results = run_all(core, spec)
        check_clean(results)
        check_dict_consistent(core, spec, results)
        per_core[core.name] = results
    if len(per_core) == 2:
        c, py = per_core["c"], per_core["python"]
        assert c.keys() == py.keys()
        for name in c:
            assert c[name] == py[name], (name, c[name], py[name])


class LyingStr(str):
    """A str subclass a class's __name__ can be set to: its methods lie."""

    def lstrip(self, *args):
        return 12345

    def __str__(self):
        return "lie"

    def __eq__(self, other):
        raise CrashError("__eq__")

    __hash__ = str.__hash__


def test_a_str_subclass_as_name_is_read_as_plain_text(core):
    # __name__ and __qualname__ accept str subclasses; their methods never run.
    class Sub(core.frozendict):
        __slots__ = ("__p",)

    Sub.__name__ = LyingStr("__Sub")
    Sub.__qualname__ = LyingStr("Qual")
    x = Sub({1: 2})
    x._Sub__p = 5
    assert repr(x) == "__Sub({1: 2})"
    assert copy.copy(x)._Sub__p == 5

    class Key:
        __hash__ = None

    Key.__qualname__ = LyingStr("KeyQual")
    with pytest.raises(TypeError, match=r"cannot use '%s\.KeyQual' as a frozendict key" % __name__):
        core.frozendict().set(Key(), 1)


def test_diff_looks_up_get_once_and_only_swallows_attribute_error(core):
    class Mapping(dict):
        lookups = 0

        @property
        def get(self):
            Mapping.lookups += 1
            return dict(self).get

    fd = core.frozendict({1: 1, 2: 2})
    assert fd.diff(Mapping({1: 1, 3: 3})) == ({3: 3}, {2: 2}, {})
    assert Mapping.lookups == 1

    class Raising(dict):
        @property
        def get(self):
            raise CrashError("get")

    with pytest.raises(CrashError):
        fd.diff(Raising({1: 1}))
