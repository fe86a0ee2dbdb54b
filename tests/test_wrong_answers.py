"""Wrong answers found by a hostile pass, on both cores.

Each test reproduces one finding: ``popitem`` of a key object stored twice, a
derived version's hash after a value's hash changed, ``__replace__`` through a
subclass's ``|``, ``!=`` of a subclass overriding only ``__eq__``, ``|`` with
``UserDict`` and ``defaultdict`` as CPython 3.15's builtin frozendict answers
it, the recursion error of hashing a deep nesting, and pprint of the views.
"""

import builtins
import copy
import pprint
import sys
from collections import OrderedDict, UserDict, defaultdict

import pytest
from keys import ChangingHashKey

BUILTIN = getattr(builtins, "frozendict", None)


# --- 6. Evolver.popitem() of a key object stored twice ----------------------------


def _twice_stored(core):
    """An Evolver holding one key object twice (its hash changed between the
    two insertions), with a dict built the same way."""
    key = ChangingHashKey(1)
    e = core.frozendict().evolve()
    d = {}
    for target in (e, d):
        key.h = 1
        target[key] = "first"
        target["x"] = "middle"
        key.h = 2
        target[key] = "last"
    return key, e, d


def test_popitem_removes_the_last_entry_of_a_key_stored_twice(core):
    key, e, d = _twice_stored(core)
    assert list(e.items()) == list(d.items()) == [(key, "first"), ("x", "middle"), (key, "last")]
    key.calls = 0
    # removing the first entry found by identity returned (key, "last") twice
    while d:
        assert e.popitem() == d.popitem()
        assert list(e.items()) == list(d.items())
        e._check()
    # popitem hashes its key once, to find the entry (dict.popitem does not):
    # the first entry, stored under the old hash, is then found by a scan
    assert key.calls == 2
    assert len(e) == 0


def test_popitem_of_a_key_stored_twice_the_last_in_a_collision_node(core):
    # the first entry inline in the root, the last one in a collision node
    # with another key of the same hash (a scan by identity meets the first)
    key = ChangingHashKey(1)
    other = ChangingHashKey(99)
    e = core.frozendict({other: "other", key: "first"}).evolve()
    key.h = 99
    e[key] = "last"
    assert list(e.items()) == [(other, "other"), (key, "first"), (key, "last")]
    assert e.popitem() == (key, "last")
    assert list(e.items()) == [(other, "other"), (key, "first")]
    e._check()
    assert e.popitem() == (key, "first")
    assert e.popitem() == (other, "other")


# --- 7. a derived version's hash after a value's hash changed --------------------


def _evolved(edit):
    """A derivation through an Evolver: ``edit(e)``, then ``freeze()``."""

    def derive(m):
        e = m.evolve()
        edit(e)
        return e.freeze()

    return derive


REPLACED = {"a": 3, "b": 2}  # the items after replacing a's value
DELETED = {"b": 2}  # the items after deleting a

# name -> (derive(m), the items of the result), m holding a and b
DERIVATIONS = {
    "set": (lambda m: m.set("a", 3), REPLACED),
    "delete": (lambda m: m.delete("a"), DELETED),
    "discard": (lambda m: m.discard("a"), DELETED),
    "or": (lambda m: m | {"a": 3}, REPLACED),
    "or-fd": (lambda m: m | type(m)(a=3), REPLACED),
    "sub": (lambda m: m - {"a"}, DELETED),
    "replace": (lambda m: copy.replace(m, a=3), REPLACED),
    "update_in": (lambda m: m.update_in(["a"], lambda _: 3), REPLACED),
    "set_in": (lambda m: m.set_in(["a"], 3), REPLACED),
    "delete_in": (lambda m: m.delete_in(["a"]), DELETED),
    "evolver-set": (_evolved(lambda e: e.__setitem__("a", 3)), REPLACED),
    "evolver-del": (_evolved(lambda e: e.__delitem__("a")), DELETED),
    "evolver-pop": (_evolved(lambda e: e.pop("a")), DELETED),
    "evolver-update": (_evolved(lambda e: e.update(a=3)), REPLACED),
}


@pytest.mark.parametrize("how", sorted(DERIVATIONS))
def test_derived_hash_after_the_old_values_hash_changed(core, how):
    if how == "replace" and sys.version_info < (3, 13):
        pytest.skip("copy.replace is 3.13+")
    derive, items = DERIVATIONS[how]
    fresh = core.frozendict(items)
    value = ChangingHashKey(5)
    m = core.frozendict(a=value, b=2)
    hash(m)  # the accumulator now holds the pair ('a', value) with hash 5
    value.h = 6  # re-hashing the old value now gives something else
    derived = derive(m)
    assert derived == fresh
    assert hash(derived) == hash(fresh) == hash(frozenset(fresh.items()))


@pytest.mark.parametrize("how", ["set", "delete", "evolver-set"])
def test_derived_hash_with_a_nested_value_whose_hash_changed(core, how):
    # the changing hash sits inside a tuple: the tuple's hash is not stable either
    derive, items = DERIVATIONS[how]
    fresh = core.frozendict(items)
    value = ChangingHashKey(5)
    m = core.frozendict(a=(1, value), b=2)
    hash(m)
    value.h = 6
    assert hash(derive(m)) == hash(fresh)


def test_derived_hash_from_stable_values_stays_known(core):
    # str, int, tuples of them and frozendicts are trusted: hash() of the
    # derived version must not walk its items (no value's __hash__ runs).
    fd = core.frozendict
    watched = ChangingHashKey(9)
    inner = fd(x=1)
    m = fd(a=1, b="s", c=(1, "t"), d=inner, w=watched)
    hash(m)
    watched.calls = 0
    derived = m.set("a", 2).set("b", "u").set("c", (2,)).set("d", fd(x=2)).delete("d")
    assert hash(derived) == hash(fd(a=2, b="u", c=(2,), w=watched))
    assert watched.calls == 1  # only the fresh build above hashed it


def test_update_in_of_a_nested_frozendict_keeps_the_hash_known(core):
    fd = core.frozendict
    watched = ChangingHashKey(3)
    state = fd(user=fd(name="ada", n=1), other=watched)
    hash(state)
    watched.calls = 0
    new = state.update_in(["user", "n"], lambda n: n + 1)
    got = hash(new)
    assert watched.calls == 0  # the nested frozendict's cached hash was trusted
    assert got == hash(frozenset(new.items()))


# --- 8. __replace__ is self | changes, a subclass's | included -------------------


def test_replace_goes_through_a_subclass_or(core):
    calls = []

    class Logged(core.frozendict):
        def __or__(self, other):
            calls.append(dict(other))
            return core.frozendict.__or__(self, other)

    got = Logged(a=1).__replace__(a=2, b=3)
    assert calls == [{"a": 2, "b": 3}]
    assert got == core.frozendict(a=2, b=3)
    assert type(got) is core.frozendict


def test_replace_returns_what_the_subclass_or_returns(core):
    class Weird(core.frozendict):
        def __or__(self, other):
            return ("or", dict(other))

    assert Weird(a=1).__replace__(b=2) == ("or", {"b": 2})
    if sys.version_info >= (3, 13):
        assert copy.replace(Weird(a=1), b=2) == ("or", {"b": 2})


# --- 9. != of a subclass overriding only __eq__ -----------------------------------


def test_ne_of_a_subclass_overriding_only_eq_is_the_base_comparison(core):
    class AlwaysEqual(core.frozendict):
        def __eq__(self, other):
            return True

    class DictAlwaysEqual(dict):
        def __eq__(self, other):
            return True

    # dict's inherited __ne__ compares the items, not "not self.__eq__"
    assert (DictAlwaysEqual(a=1) != {"b": 2}) is True
    assert (AlwaysEqual(a=1) != core.frozendict(b=2)) is True
    assert (AlwaysEqual(a=1) != core.frozendict(a=1)) is False
    assert (AlwaysEqual(a=1) == core.frozendict(b=2)) is True


def test_ne_of_an_evolver_subclass_overriding_only_eq(core):
    class AlwaysEqual(core.Evolver):
        def __eq__(self, other):
            return True

    e = AlwaysEqual(core.frozendict(a=1))
    assert (e != {"b": 2}) is True
    assert (e != {"a": 1}) is False


# --- 10, 11. | with UserDict and defaultdict, as the 3.15 builtin -----------------


def test_userdict_or_frozendict_is_a_userdict(core):
    got = UserDict(a=1) | core.frozendict(b=2)
    assert type(got) is UserDict
    assert list(got.items()) == [("a", 1), ("b", 2)]


def test_frozendict_or_userdict_is_a_userdict(core):
    got = core.frozendict(b=2, a=0) | UserDict(a=1)
    assert type(got) is UserDict
    assert list(got.items()) == [("b", 2), ("a", 1)]


def test_or_keeps_a_userdict_subclass(core):
    class Mine(UserDict):
        pass

    assert type(Mine(a=1) | core.frozendict(b=2)) is Mine
    assert type(core.frozendict(b=2) | Mine(a=1)) is Mine


def test_defaultdict_or_frozendict_is_a_defaultdict(core):
    got = defaultdict(int, a=1) | core.frozendict(b=2, a=3)
    assert type(got) is defaultdict
    assert got.default_factory is int
    assert list(got.items()) == [("a", 3), ("b", 2)]
    assert got["missing"] == 0


def test_defaultdict_subclass_or_frozendict_keeps_its_class(core):
    class Counts(defaultdict):
        pass

    got = Counts(list, a=[1]) | core.frozendict(b=[2])
    assert type(got) is Counts and got.default_factory is list
    assert dict(got) == {"a": [1], "b": [2]}


def test_frozendict_or_defaultdict_and_plain_dict_subclasses_unchanged(core):
    fd = core.frozendict

    class D(dict):
        pass

    assert type(fd(b=2) | defaultdict(int, a=1)) is fd
    assert type(D(a=1) | fd(b=2)) is dict
    assert type(dict(a=1) | fd(b=2)) is dict
    assert type(OrderedDict(a=1) | fd(b=2)) is OrderedDict
    with pytest.raises(TypeError):
        fd(a=1) | 5
    with pytest.raises(TypeError):
        5 | fd(a=1)


@pytest.mark.skipif(BUILTIN is None, reason="no builtin frozendict before 3.15")
@pytest.mark.parametrize(
    "make",
    [
        lambda f: UserDict(a=1) | f(b=2),
        lambda f: f(b=2) | UserDict(a=1),
        lambda f: defaultdict(int, a=1) | f(b=2, a=3),
        lambda f: f(b=2) | defaultdict(int, a=1),
    ],
)
def test_or_with_userdict_and_defaultdict_as_the_builtin(core, make):
    ours, theirs = make(core.frozendict), make(BUILTIN)
    assert type(ours) is type(theirs) or (
        isinstance(ours, core.frozendict) and isinstance(theirs, BUILTIN)
    )
    assert list(ours.items()) == list(theirs.items())


# --- 12. hashing a deep nesting ---------------------------------------------------


def test_hashing_a_deep_nesting_says_while_hashing_a_frozendict(core):
    # frozendicts straight inside frozendicts: with a tuple between them, the
    # tuple's hash may be the frame that hits the limit (3.14 checks the C
    # stack itself) and its message names the tuple
    v = core.frozendict()
    for _ in range(200_000):
        v = core.frozendict(a=v, b=1)
    with pytest.raises(RecursionError) as got:
        hash(v)
    assert str(got.value).endswith(" while hashing a frozendict")
    # a value's own RecursionError passes through unchanged

    class Deep:
        def __hash__(self):
            raise RecursionError("mine")

    with pytest.raises(RecursionError, match="^mine$"):
        hash(core.frozendict(a=Deep()))


# --- 13. pprint wraps the views as 3.15 wraps dict's ------------------------------

needs_view_wrap = pytest.mark.skipif(
    not hasattr(pprint.PrettyPrinter, "_pprint_dict_view"),
    reason="pprint wraps dict views from 3.15 on",
)


@needs_view_wrap
@pytest.mark.parametrize("view", ["keys", "values", "items"])
@pytest.mark.parametrize("sort_dicts", [True, False])
def test_pprint_wraps_views_as_dicts(core, view, sort_dicts):
    items = {("k%d" % (i * 7 % 30)): i for i in range(30)}
    ours = getattr(core.frozendict(items), view)()
    theirs = getattr(dict(items), view)()
    text = pprint.pformat(ours, sort_dicts=sort_dicts)
    assert "\n" in text
    assert text == pprint.pformat(theirs, sort_dicts=sort_dicts)
    evolver_view = getattr(core.frozendict(items).evolve(), view)()
    assert pprint.pformat(evolver_view, sort_dicts=sort_dicts) == text


@needs_view_wrap
def test_pprint_of_a_short_or_empty_view_is_its_repr(core):
    fd = core.frozendict
    assert pprint.pformat(fd(a=1).keys()) == repr({"a": 1}.keys())
    assert pprint.pformat(fd().items(), width=1) == repr({}.items())


@needs_view_wrap
@pytest.mark.skipif(BUILTIN is None, reason="no builtin frozendict before 3.15")
def test_pprint_of_views_as_the_builtins(core):
    ours = core.frozendict.fromkeys(range(100))
    theirs = BUILTIN.fromkeys(range(100))
    for view in ("keys", "values", "items"):
        assert pprint.pformat(getattr(ours, view)()) == pprint.pformat(getattr(theirs, view)())
