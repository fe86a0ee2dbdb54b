"""Persistent derivations (docs/spec.md §2): set, delete, discard, |, -, &.

Every test runs on each core through the ``core`` fixture.  Each derivation is
checked for its result (items in order, which key object was kept), for the
source being unchanged afterwards, for ``_check()``, and for a hash equal to
that of a freshly built equal map, including along the O(1) accumulator path
(the parent's hash known before deriving).
"""

import pytest
from helpers import Snapshot, typed_items
from keys import CountingKey, CountingValue, HashKey


def fresh_hash(core, mapping):
    """The hash of an equal map built from scratch, checked against frozenset's."""
    expected = hash(frozenset(mapping.items()))
    assert hash(core.frozendict(dict(mapping.items()))) == expected
    return expected


def checked(result, expected_items):
    """Assert ``result`` is an exact, valid frozendict holding ``expected_items``."""
    assert type(result).__name__ == "frozendict"
    result._check()
    assert list(result.items()) == list(expected_items)
    return result


# --- set ----------------------------------------------------------------------------


def test_set_replacing_a_value_keeps_the_position(core):
    fd = core.frozendict(a=1, b=2, c=3)
    snap = Snapshot(fd)
    out = checked(fd.set("b", 20), [("a", 1), ("b", 20), ("c", 3)])
    assert out is not fd
    snap.check()


def test_set_of_a_new_key_goes_last(core):
    fd = core.frozendict(a=1, b=2)
    snap = Snapshot(fd)
    checked(fd.set("z", 0), [("a", 1), ("b", 2), ("z", 0)])
    checked(fd.set("z", 0).set("a", 5), [("a", 5), ("b", 2), ("z", 0)])
    snap.check()


def test_set_after_delete_puts_the_key_last(core):
    fd = core.frozendict(a=1, b=2, c=3)
    checked(fd.delete("a").set("a", 1), [("b", 2), ("c", 3), ("a", 1)])


def test_set_of_the_identical_value_returns_self(core):
    value = object()
    fd = core.frozendict(a=value, b=2)
    assert fd.set("a", value) is fd


def test_set_of_an_equal_but_distinct_value_stores_the_new_object(core):
    old = 10**20
    new = int(str(10**20))
    assert old == new and old is not new
    fd = core.frozendict(a=old)
    out = fd.set("a", new)
    assert out == fd
    assert out["a"] is new
    assert fd["a"] is old
    out._check()


def test_set_keeps_the_first_key_object(core):
    fd = core.frozendict({1: "int"})
    out = fd.set(1.0, "float").set(True, "bool")
    assert typed_items(out) == [(int, 1, "bool")]
    out._check()


def test_set_on_a_subclass_returns_an_exact_frozendict(core):
    class Sub(core.frozendict):
        pass

    value = object()
    sub = Sub(a=value)
    for out in (sub.set("b", 2), sub.set("a", 1), sub.set("a", value)):
        assert type(out) is core.frozendict
        out._check()
    assert sub.set("a", value) == sub
    assert type(sub) is Sub


def test_set_on_the_empty_map(core):
    empty = core.frozendict()
    checked(empty.set("k", "v"), [("k", "v")])
    assert len(empty) == 0
    empty._check()


def test_set_chain_from_one_old_version(core):
    base = core.frozendict((i, i) for i in range(300))
    snap = Snapshot(base)
    for i in range(0, 300, 7):
        out = base.set(i, -i)
        assert out[i] == -i
        assert list(out) == list(range(300))
        out._check()
    snap.check()


# --- delete and discard --------------------------------------------------------------


def test_delete_removes_and_keeps_the_rest_in_order(core):
    fd = core.frozendict(a=1, b=2, c=3)
    snap = Snapshot(fd)
    checked(fd.delete("b"), [("a", 1), ("c", 3)])
    checked(fd.delete("a"), [("b", 2), ("c", 3)])
    checked(fd.delete("c"), [("a", 1), ("b", 2)])
    checked(fd.delete("a").delete("b").delete("c"), [])
    snap.check()


def test_delete_of_a_missing_key_raises_keyerror_with_the_key(core):
    fd = core.frozendict(a=1)
    with pytest.raises(KeyError) as info:
        fd.delete("zz")
    assert info.value.args == ("zz",)
    with pytest.raises(KeyError):
        core.frozendict().delete("a")
    fd._check()


def test_delete_with_an_equal_key_of_another_type(core):
    fd = core.frozendict({1: "a", 2: "b"})
    checked(fd.delete(True), [(2, "b")])
    checked(fd.delete(2.0), [(1, "a")])


def test_discard_of_a_missing_key_returns_self(core):
    fd = core.frozendict(a=1)
    assert fd.discard("zz") is fd
    checked(fd.discard("a"), [])


def test_discard_and_delete_on_a_subclass_return_an_exact_frozendict(core):
    class Sub(core.frozendict):
        pass

    sub = Sub(a=1, b=2)
    assert type(sub.delete("a")) is core.frozendict
    assert type(sub.discard("a")) is core.frozendict
    out = sub.discard("zz")
    assert type(out) is core.frozendict and out == sub


# --- | --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["dict", "frozendict"])
def test_or_right_side_wins_left_order_then_new_keys_in_right_order(core, kind):
    fd = core.frozendict(a=1, b=2, c=3)
    other = {"z": 26, "b": 20, "y": 25}
    if kind == "frozendict":
        other = core.frozendict(other)
    snap = Snapshot(fd)
    checked(fd | other, [("a", 1), ("b", 20), ("c", 3), ("z", 26), ("y", 25)])
    snap.check()


def test_or_keeps_the_left_key_object(core):
    fd = core.frozendict({1: "a"})
    out = fd | {1.0: "b", 2: "d"}
    assert typed_items(out) == [(int, 1, "b"), (int, 2, "d")]
    out = fd | core.frozendict([(True, "c"), (2.0, "d")])
    assert typed_items(out) == [(int, 1, "c"), (float, 2.0, "d")]


def test_or_does_not_rehash_the_left_side(core):
    """``fd | other`` costs O(k log n): stored keys are never hashed again."""
    fd = core.frozendict((CountingKey(i), i) for i in range(500))
    other = {CountingKey(1000): 0, CountingKey(3): 33}
    CountingKey.reset()
    out = fd | other
    # At most one hash per key of the right side; none of the 500 stored keys.
    assert CountingKey.hash_calls <= 2
    assert CountingKey.eq_calls <= 2
    assert len(out) == 501 and out[CountingKey(3)] == 33
    out._check()


def test_single_key_derivations_do_not_rehash_stored_keys(core):
    keys = [CountingKey(i) for i in range(500)]
    fd = core.frozendict((k, 0) for k in keys)
    for op in (
        lambda: fd.set(CountingKey(7), 1),
        lambda: fd.set(CountingKey(-1), 1),
        lambda: fd.delete(CountingKey(7)),
        lambda: fd.discard(CountingKey(-1)),
    ):
        CountingKey.reset()
        op()._check()
        assert CountingKey.hash_calls == 1
        assert CountingKey.eq_calls <= 1


def test_or_with_an_empty_right_side_is_equal(core):
    fd = core.frozendict(a=1)
    assert fd | {} == fd
    assert core.frozendict() | fd == fd


# --- - and & ----------------------------------------------------------------------------


def _iterables(keys):
    """The same keys as a list, a tuple, a set, a generator, a dict and a keys view."""
    return [
        list(keys),
        tuple(keys),
        set(keys),
        (k for k in keys),
        iter(list(keys)),
        dict.fromkeys(keys),
        dict.fromkeys(keys).keys(),
    ]


def test_sub_with_any_iterable_and_missing_keys(core):
    fd = core.frozendict(a=1, b=2, c=3, d=4)
    snap = Snapshot(fd)
    for keys in _iterables(["c", "zz", "a", "a"]):
        checked(fd - keys, [("b", 2), ("d", 4)])
    checked(fd - core.frozendict(b=0), [("a", 1), ("c", 3), ("d", 4)])
    assert fd - [] == fd
    assert fd - (k for k in ["missing"]) == fd
    checked(fd - fd.keys(), [])
    snap.check()


def test_sub_with_equal_keys_of_other_types(core):
    fd = core.frozendict({1: "a", 2: "b", 3: "c"})
    checked(fd - [1.0, True, 2.0], [(3, "c")])


def test_and_keeps_selfs_order_with_any_iterable(core):
    fd = core.frozendict(a=1, b=2, c=3, d=4)
    snap = Snapshot(fd)
    for keys in _iterables(["d", "zz", "b", "d"]):
        checked(fd & keys, [("b", 2), ("d", 4)])
    checked(fd & [], [])
    checked(fd & (k for k in "dcba"), [("a", 1), ("b", 2), ("c", 3), ("d", 4)])
    snap.check()


def test_and_keeps_selfs_key_objects(core):
    fd = core.frozendict({1: "a", 2: "b"})
    out = fd & [2.0, True]
    assert typed_items(out) == [(int, 1, "a"), (int, 2, "b")]


def test_sub_and_and_consume_a_generator_once(core):
    fd = core.frozendict((i, i) for i in range(50))
    seen = []

    def keys():
        for k in (3, 40, 99):
            seen.append(k)
            yield k

    assert list((fd - keys()).keys()) == [i for i in range(50) if i not in (3, 40)]
    assert seen == [3, 40, 99]
    seen.clear()
    assert list((fd & keys()).keys()) == [3, 40]
    assert seen == [3, 40, 99]


def test_sub_and_and_refuse_non_iterables(core):
    fd = core.frozendict(a=1)
    with pytest.raises(TypeError):
        fd - 5
    with pytest.raises(TypeError):
        fd & 5
    with pytest.raises(TypeError):
        fd - None


def test_sub_and_and_on_a_subclass_return_an_exact_frozendict(core):
    class Sub(core.frozendict):
        pass

    sub = Sub(a=1, b=2)
    for out in (sub - ["a"], sub - [], sub & ["a"], sub & ["a", "b"]):
        assert type(out) is core.frozendict
        out._check()


def test_sub_and_and_on_large_maps(core):
    fd = core.frozendict((i, str(i)) for i in range(2000))
    drop = range(0, 2000, 3)
    out = fd - drop
    assert list(out) == [i for i in range(2000) if i % 3]
    out._check()
    keep = list(range(1999, 0, -5))
    out = fd & keep
    assert list(out) == sorted(keep)
    out._check()


# --- sources unchanged, and derivations from one version many times ---------------------


def test_every_derivation_leaves_its_source_unchanged(core):
    fd = core.frozendict((i, i * i) for i in range(100))
    snap = Snapshot(fd)
    results = [
        fd.set(5, "x"),
        fd.set(500, "x"),
        fd.delete(7),
        fd.discard(8),
        fd.discard(800),
        fd | {1: 1, 1000: 0},
        fd - [1, 2, 3],
        fd & [4, 5, 6],
        fd.evolve().set(1, 2).freeze(),
    ]
    snap.check()
    for out in results:
        out._check()
    # Deriving again from the same source gives the same contents.
    assert fd.set(5, "x") == results[0]
    assert fd.delete(7) == results[2]


# --- hash of derived versions --------------------------------------------------------------


DERIVATIONS = [
    ("set existing", lambda fd: fd.set("k3", "new")),
    ("set new", lambda fd: fd.set("new", 1)),
    ("set equal value", lambda fd: fd.set("k3", 3.0)),
    ("delete", lambda fd: fd.delete("k3")),
    ("discard", lambda fd: fd.discard("k4")),
    ("or", lambda fd: fd | {"k1": "x", "n1": 1, "n2": 2}),
    ("sub", lambda fd: fd - ["k1", "k2", "missing"]),
    ("and", lambda fd: fd & ["k1", "k5", "missing"]),
    ("evolver", lambda fd: fd.evolve().set("k1", 0).discard("k2").set("n", 9).freeze()),
    ("chain", lambda fd: fd.set("a", 1).delete("k0").set("k9", "z").set("a", 2)),
]


@pytest.mark.parametrize("parent_hashed", [False, True], ids=["fresh", "accumulated"])
@pytest.mark.parametrize("name,derive", DERIVATIONS, ids=[d[0] for d in DERIVATIONS])
def test_hash_of_a_derived_version_equals_a_fresh_build(core, name, derive, parent_hashed):
    fd = core.frozendict(("k%d" % i, i) for i in range(40))
    if parent_hashed:
        hash(fd)
    out = derive(fd)
    out._check()
    assert hash(out) == fresh_hash(core, out)
    out._check()
    # A grandchild along the accumulator path too.
    grand = out.set("k7", ("t", 1))
    assert hash(grand) == fresh_hash(core, grand)
    assert hash(fd) == fresh_hash(core, fd)


def test_hash_of_a_derived_version_does_not_rehash_every_value(core):
    """With the parent's hash known, the child's hash is an O(1) update.

    (The values replaced or deleted are ints: an old value whose hash is Python
    code is not trusted twice, and makes the child's hash a walk, see
    test_wrong_answers.py.)"""
    fd = core.frozendict(("k%d" % i, i if i in (5, 6) else CountingValue(i)) for i in range(200))
    hash(fd)
    child = fd.set("k5", CountingValue(-5)).delete("k6").set("new", CountingValue(0))
    CountingValue.reset()
    h = hash(child)
    assert CountingValue.hash_calls == 0
    assert h == hash(frozenset(child.items()))


def test_hash_after_many_accumulated_steps(core):
    fd = core.frozendict((i, i) for i in range(64))
    hash(fd)
    for step in range(200):
        if step % 3 == 0:
            fd = fd.delete(next(iter(fd)))
        fd = fd.set((step * 7) % 90, step)
        hash(fd)
    assert hash(fd) == fresh_hash(core, fd)
    fd._check()


@pytest.mark.parametrize("parent_hashed", [False, True], ids=["fresh", "accumulated"])
def test_unhashable_value_derivation_succeeds_and_only_hash_fails(core, parent_hashed):
    fd = core.frozendict(a=1, b=2)
    if parent_hashed:
        hash(fd)
    for out in (
        fd.set("a", []),
        fd.set("new", {}),
        fd | {"b": [1]},
        fd.evolve().set("c", []).freeze(),
    ):
        out._check()
        with pytest.raises(TypeError, match="unhashable type"):
            hash(out)
        with pytest.raises(TypeError, match="unhashable type"):
            hash(out)  # again: a failure is not cached as a hash
        # Replacing or removing the unhashable value makes it hashable again.
        (key,) = [k for k, v in out.items() if not isinstance(v, int)]
        for healed in (out.set(key, 5), out.delete(key), out - [key]):
            assert hash(healed) == fresh_hash(core, healed)
    assert hash(fd) == fresh_hash(core, fd)


def test_value_whose_hash_raises_does_not_break_set(core):
    class BadHash:
        def __hash__(self):
            raise ValueError("no hash")

    fd = core.frozendict(a=1)
    hash(fd)
    out = fd.set("b", BadHash())
    out._check()
    with pytest.raises(ValueError, match="no hash"):
        hash(out)
    assert hash(out.delete("b")) == hash(fd)


def test_hash_of_derivations_with_colliding_keys(core):
    keys = [HashKey(7, i) for i in range(20)]
    fd = core.frozendict((k, i) for i, k in enumerate(keys))
    hash(fd)
    out = fd.set(keys[3], "x").delete(keys[10]).set(HashKey(7, "new"), 1)
    assert hash(out) == fresh_hash(core, out)
    out._check()


@pytest.mark.parametrize("method", ["delete", "discard"])
@pytest.mark.parametrize("extra", [0, 40])
def test_removing_a_colliding_key_compares_each_key_before_it_once(core, method, extra):
    """Keys of one full hash share a collision node (or, flat, are scanned in
    order): removing the third of them compares it with the two stored before
    it, once each, whether the version is flat or in tries."""
    colliding = [CountingKey("c%d" % i, 7) for i in range(4)]
    fd = core.frozendict([("x%d" % i, i) for i in range(extra)] + [(k, 0) for k in colliding])
    probe = CountingKey("c2", 7)  # equal to the third, another object
    CountingKey.reset()
    result = getattr(fd, method)(probe)
    assert CountingKey.eq_calls == 3  # c0, c1 (unequal), then c2
    assert colliding[2] not in result and len(result) == len(fd) - 1
