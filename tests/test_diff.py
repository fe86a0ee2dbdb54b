"""``frozendict.diff`` (docs/spec.md §2): what changed from one mapping to another.

``added`` holds the keys only in ``other`` (its values, in its order),
``removed`` the keys only in ``self`` (old values, self's order), ``changed``
maps keys in both whose values differ (``old is not new and old != new``) to
``(old, new)``, in self's order.  Checked against frozendicts derived from one
another (the parallel walk over shared subtrees) and unrelated ones, dicts and
other mappings, with colliding keys.
"""

from collections import OrderedDict
from types import MappingProxyType

import pytest
from helpers import Snapshot, typed_items
from keys import CountingValue, HashKey


def model_diff(old, new):
    """The expected diff of two mappings, computed the obvious way."""
    added = [(k, new[k]) for k in new if k not in old]
    removed = [(k, v) for k, v in old.items() if k not in new]
    changed = []
    for k, v in old.items():
        if k in new:
            w = new[k]
            if v is not w and v != w:
                changed.append((k, (v, w)))
    return added, removed, changed


def assert_diff(core, old, new):
    """``old.diff(new)`` as a frozendict-vs-anything diff, checked field by field."""
    result = old.diff(new)
    assert type(result) is core.Diff
    added, removed, changed = model_diff(old, new)
    for field, expected in zip(result, (added, removed, changed)):
        assert type(field) is core.frozendict
        field._check()
        assert list(field.items()) == expected
    return result


def versions(core):
    """A base frozendict and versions derived from it (sharing structure)."""
    base = core.frozendict(("k%d" % i, i) for i in range(300))
    return base, [
        base,
        base.set("k5", "five"),
        base.set("new", 1),
        base.delete("k7"),
        base.set("k5", "five").delete("k9").set("x", 0).set("k100", -1),
        base - ["k%d" % i for i in range(0, 300, 4)],
        base & ["k%d" % i for i in range(0, 300, 7)],
        base | {"k1": "one", "y": 2},
        base.evolve().set("k2", 2.0).freeze(),  # equal value: not a change
        base.delete("k3").set("k3", 3),  # same items, new position
        core.frozendict(),
    ]


def test_diff_result_is_a_named_tuple(core):
    result = core.frozendict(a=1, b=2).diff({"b": 3, "c": 4})
    assert isinstance(result, tuple)
    assert result._fields == ("added", "removed", "changed")
    assert result.added == {"c": 4}
    assert result.removed == {"a": 1}
    assert result.changed == {"b": (2, 3)}
    added, removed, changed = result
    assert (added, removed, changed) == (result.added, result.removed, result.changed)
    assert result == core.Diff(result.added, result.removed, result.changed)


def test_diff_between_derived_versions(core):
    base, vs = versions(core)
    snaps = [Snapshot(v) for v in vs]
    for a in vs:
        for b in vs:
            assert_diff(core, a, b)
    for snap in snaps:
        snap.check()


def test_diff_with_itself_is_empty(core):
    base, vs = versions(core)
    for v in vs:
        assert v.diff(v) == ({}, {}, {})


def test_diff_between_unrelated_frozendicts(core):
    a = core.frozendict(("k%d" % i, i) for i in range(200))
    b = core.frozendict(("k%d" % i, i if i % 5 else -i) for i in range(150, 50, -1))
    assert_diff(core, a, b)
    assert_diff(core, b, a)
    # Equal contents built in another order: no difference at all.
    c = core.frozendict(reversed(list(a.items())))
    assert a.diff(c) == ({}, {}, {})


@pytest.mark.parametrize(
    "convert",
    [dict, OrderedDict, MappingProxyType, lambda m: m.evolve()],
    ids=["dict", "OrderedDict", "mappingproxy", "evolver"],
)
def test_diff_against_other_mappings(core, convert):
    base, vs = versions(core)
    for a in vs[:6]:
        for b in vs[:6]:
            other = convert(b) if convert is not dict else dict(b.items())
            assert_diff(core, a, other)


def test_diff_order_of_each_field(core):
    old = core.frozendict([("r1", 1), ("c1", 1), ("same", 0), ("r2", 2), ("c2", 2)])
    new = {"a2": 2, "c2": 20, "same": 0, "a1": 1, "c1": 10}
    result = old.diff(new)
    assert list(result.added) == ["a2", "a1"]  # other's order
    assert list(result.removed) == ["r1", "r2"]  # self's order
    assert list(result.changed.items()) == [("c1", (1, 10)), ("c2", (2, 20))]  # self's order


def test_diff_order_between_frozendicts_follows_insertion_not_hash(core):
    # Keys whose hashes run opposite to their insertion order.
    keys = [HashKey(1000 - i, "k%d" % i) for i in range(100)]
    old = core.frozendict((k, 0) for k in keys[:60])
    new = old - keys[:30:3]
    new = new | {k: 1 for k in reversed(keys[60:])}
    new = new.set(keys[50], 5).set(keys[40], 4)
    result = old.diff(new)
    assert list(result.added) == list(reversed(keys[60:]))
    assert list(result.removed) == keys[:30:3]
    assert list(result.changed) == [keys[40], keys[50]]


def test_changed_uses_identity_then_equality(core):
    nan = float("nan")
    other_nan = float("nan")
    old = core.frozendict(same_nan=nan, two_nans=nan, eq=1, eq_types=1, ne=[1])
    new_items = dict(same_nan=nan, two_nans=other_nan, eq=1, eq_types=1.0, ne=[2])
    for new in (old | new_items, new_items):
        result = old.diff(new)
        assert list(result.changed) == ["two_nans", "ne"]
        (o, n) = result.changed["two_nans"]
        assert o is nan and n is other_nan
        assert result.added == {} and result.removed == {}


def test_changed_value_objects_are_the_stored_ones(core):
    old_value, new_value = [1], [2]
    old = core.frozendict(k=old_value)
    result = old.diff(old.set("k", new_value))
    o, n = result.changed["k"]
    assert o is old_value and n is new_value


def test_diff_key_objects(core):
    old = core.frozendict({1: "a", 2: "b"})
    new = core.frozendict({True: "A", 2.0: "b", 3.0: "c"})
    result = old.diff(new)
    assert typed_items(result.added) == [(float, 3.0, "c")]
    assert typed_items(result.changed) == [(int, 1, ("a", "A"))]
    assert result.removed == {}


def test_diff_with_colliding_keys(core):
    keys = [HashKey(77, i) for i in range(40)] + [HashKey(77 + 32 * j, "p%d" % j) for j in range(5)]
    base = core.frozendict((k, 0) for k in keys)
    derived = [
        base.set(keys[3], 1),
        base.delete(keys[10]),
        base.set(HashKey(77, "new"), 1),
        base - keys[:35],  # the collision node shrinks to a few entries
        base - keys[1:40],  # ... and to a single entry
        base & keys[:2],
        core.frozendict((k, 0) for k in reversed(keys)),
    ]
    for a in [base] + derived:
        for b in [base] + derived:
            assert_diff(core, a, b)
            assert_diff(core, a, dict(b.items()))


def test_diff_skips_shared_subtrees(core):
    """Versions a few edits apart diff in O(d log n): few value comparisons."""
    base = core.frozendict((i, CountingValue(i)) for i in range(20000))
    new = base.set(5, CountingValue(-5)).delete(17).set("x", CountingValue(0))
    CountingValue.reset()
    result = base.diff(new)
    assert CountingValue.eq_calls <= 50
    assert list(result.added) == ["x"] and list(result.removed) == [17]
    assert list(result.changed) == [5]


def test_diff_against_non_mappings_fails(core):
    fd = core.frozendict(a=1)
    with pytest.raises((TypeError, AttributeError)):
        fd.diff(5)


@pytest.mark.parametrize("n", [2, 31, 40])
def test_an_identical_nan_is_unchanged_between_maps_built_apart(core, n):
    """Two maps built apart (no shared structure) with the same key objects in
    the same order and one value object that is not equal to itself: the
    identity test before ``!=`` keeps it out of ``changed`` on every path
    (both flat, both in tries, one of each)."""
    nan = float("nan")
    keys = ["k%d" % i for i in range(n)]
    a = core.frozendict([(k, nan if k == "k0" else i) for i, k in enumerate(keys)])
    b = core.frozendict([(k, nan if k == "k0" else i + (k == "k1")) for i, k in enumerate(keys)])
    assert dict(a.diff(b).changed) == {"k1": (1, 2)}
    assert not a.diff(core.frozendict(list(a.items())))  # another build of the same items
    small = core.frozendict([("k0", nan), ("k1", 2)])
    assert dict(small.diff(b).changed) == {}
    assert dict(b.diff(small).changed) == {}


@pytest.mark.parametrize(
    "old, new, truth",
    [
        ({"a": 1}, {"a": 2}, True),  # changed only
        ({}, {"a": 1}, True),  # added only
        ({"a": 1}, {}, True),  # removed only
        ({"a": 1}, {"a": 1}, False),
        ({}, {}, False),
    ],
)
def test_a_diff_is_truthy_when_any_field_holds_something(core, old, new, truth):
    d = core.frozendict(old).diff(core.frozendict(new))
    assert bool(d) is truth
    assert (not d) is (not truth)
