"""frozenmap's frozendict next to the builtin ``frozendict`` of CPython 3.15.

The two are different types with the same behaviour, and each accepts the
other wherever it accepts a dict: ``==`` compares items both ways, equal
maps hash alike, each constructor takes the other, and ``|`` follows the
builtin's rule for dict (the left operand's type wins: ``fd | d`` is a
frozendict, ``d | fd`` a dict).  Skipped on Pythons without the builtin.
"""

import builtins
import collections

import pytest

BUILTIN = getattr(builtins, "frozendict", None)
pytestmark = pytest.mark.skipif(
    BUILTIN is None, reason="needs the builtin frozendict (CPython 3.15+)"
)

ITEMS = [("x", 1), ("y", [2]), (3, "z")]


def test_equal_both_ways_ignoring_order(fd):
    ours, theirs = fd(ITEMS), BUILTIN(reversed(ITEMS))
    assert ours == theirs and theirs == ours
    assert not (ours != theirs) and not (theirs != ours)
    assert fd(x=1) != BUILTIN(x=2) and BUILTIN(x=2) != fd(x=1)
    assert fd() == BUILTIN() and fd(x=1) != BUILTIN()


def test_equal_maps_hash_alike(fd):
    items = [("a", 1), (2, "b"), ((3, 4), None), (1.5, frozenset({1}))]
    assert hash(fd(items)) == hash(BUILTIN(items)) == hash(frozenset(items))
    assert hash(fd()) == hash(BUILTIN())
    derived = fd(items).set("a", 2).delete(2)
    assert hash(derived) == hash(BUILTIN(derived))
    assert {fd(items): "ours"}[BUILTIN(items)] == "ours"


def test_unhashable_values_fail_alike(fd):
    with pytest.raises(TypeError) as ours:
        hash(fd(ITEMS))
    with pytest.raises(TypeError) as theirs:
        hash(BUILTIN(ITEMS))
    assert str(ours.value) == str(theirs.value)


def test_each_constructor_takes_the_other(fd):
    theirs = BUILTIN(ITEMS)
    ours = fd(theirs)
    assert type(ours) is fd and list(ours.items()) == ITEMS
    back = BUILTIN(ours)
    assert type(back) is BUILTIN and list(back.items()) == ITEMS
    assert fd(theirs, extra=0) == dict(ITEMS, extra=0)


def test_union_keeps_the_left_operands_type(fd):
    ours, theirs = fd(x=1, y=2), BUILTIN(y=5, z=3)
    left_ours = ours | theirs
    assert type(left_ours) is fd
    assert list(left_ours.items()) == [("x", 1), ("y", 5), ("z", 3)]
    left_builtin = theirs | ours
    assert type(left_builtin) is BUILTIN
    assert list(left_builtin.items()) == [("y", 2), ("z", 3), ("x", 1)]
    # as for dict: fd | d is a frozendict, d | fd a dict
    assert type(ours | dict(theirs)) is fd and type(dict(ours) | theirs) is dict


def test_union_assignment_rebinds_to_the_left_type(fd):
    a = fd(x=1)
    a |= BUILTIN(y=2)
    assert type(a) is fd and a == {"x": 1, "y": 2}
    b = BUILTIN(x=1)
    b |= fd(y=2)
    assert type(b) is BUILTIN and b == {"x": 1, "y": 2}


def test_union_with_an_empty_side(fd):
    ours = fd(x=1)
    assert type(ours | BUILTIN()) is fd and ours | BUILTIN() == ours
    assert type(BUILTIN() | ours) is BUILTIN and BUILTIN() | ours == ours


def test_subclasses_of_either_give_exact_types(fd):
    class Sub(BUILTIN):
        pass

    assert type(Sub(a=1) | fd(b=2)) is BUILTIN
    assert type(fd(b=2) | Sub(a=1)) is fd


def test_ordereddict_union_is_an_ordereddict(fd):
    result = collections.OrderedDict(x=1, y=2) | fd(y=5, z=3)
    assert type(result) is collections.OrderedDict
    assert list(result.items()) == [("x", 1), ("y", 5), ("z", 3)]
    assert type(collections.OrderedDict(x=1) | BUILTIN(y=2)) is collections.OrderedDict


def test_views_compare_across_types(fd):
    ours, theirs = fd(ITEMS), BUILTIN(ITEMS)
    assert ours.keys() == theirs.keys() and theirs.keys() == ours.keys()
    assert ours.keys() & theirs.keys() == set(dict(ITEMS))
    assert list(ours.values()) == list(theirs.values())
