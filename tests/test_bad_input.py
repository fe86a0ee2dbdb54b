"""Bad input and faults (docs/spec.md §4).

A failing ``__hash__`` or ``__eq__``, an unhashable key, a wrong-length pair,
a ``KeyboardInterrupt`` or ``MemoryError`` from user code: the exception
reaches the caller, every existing version is unchanged and passes
``_check()``, an evolver is left as it was, and nothing is kept alive.  And the
hard-but-legal inputs work: thousands of colliding keys, keys equal across
types, integers whose hashes coincide, keys whose ``__eq__`` derives new
versions of the same map, values that contain the map itself.
"""

import copy
import gc
import sys
import threading

import pytest
from helpers import typed_items
from keys import HashKey

MODULUS = sys.hash_info.modulus  # 2**61 - 1 on 64-bit builds


# --- collisions ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def colliding(core):
    keys = [HashKey(0xC0FFEE, i) for i in range(2_000)]
    return keys, core.frozendict((k, i) for i, k in enumerate(keys))


def test_thousands_of_colliding_keys(core, colliding):
    keys, fd = colliding
    fd._check()
    assert len(fd) == 2_000
    assert list(fd) == keys
    for i in range(0, 2_000, 37):
        assert fd[keys[i]] == i
        assert HashKey(0xC0FFEE, i) in fd
    assert HashKey(0xC0FFEE, "absent") not in fd
    assert fd.get(HashKey(0xC0FFEE, -1), "no") == "no"
    assert hash(fd) == hash(frozenset(fd.items()))

    replaced = fd.set(keys[1_000], "x")
    added = fd.set(HashKey(0xC0FFEE, "new"), "y")
    other_hash = fd.set(HashKey(0xC0FFEE + 1, "near"), "z")  # splits the collision node
    removed = fd.delete(keys[7]).delete(keys[1_999]).discard(keys[0])
    for v in (replaced, added, other_hash, removed):
        v._check()
        assert hash(v) == hash(frozenset(v.items()))
    assert list(replaced)[1_000] is keys[1_000] and replaced[keys[1_000]] == "x"
    assert list(added)[-1] == HashKey(0xC0FFEE, "new")
    assert len(removed) == 1_997 and keys[7] not in removed
    with pytest.raises(KeyError):
        removed.delete(keys[7])
    assert len(fd) == 2_000 and fd[keys[1_000]] == 1_000

    # Equality with the same keys in another order, and with a dict.
    assert fd == dict(fd.items())
    assert replaced != fd and fd != replaced
    assert replaced.set(keys[1_000], 1_000) == fd
    result = fd.diff(removed.set(keys[5], "five") | {HashKey(0xC0FFEE, "n2"): 0})
    assert list(result.removed) == [keys[0], keys[7], keys[1_999]]
    assert list(result.changed.items()) == [(keys[5], (5, "five"))]
    assert list(result.added) == [HashKey(0xC0FFEE, "n2")]


def test_colliding_keys_reordered_compare_equal(core, colliding):
    keys, fd = colliding
    sub = keys[:400]
    a = core.frozendict((k, 0) for k in sub)
    b = core.frozendict((k, 0) for k in reversed(sub))
    assert a == b and b == a
    assert a.diff(b) == ({}, {}, {})
    assert hash(a) == hash(b)
    # Shrinking a collision node to one entry moves it back up.
    lone = fd - keys[1:]
    lone._check()
    assert list(lone.items()) == [(keys[0], 0)]
    assert lone == core.frozendict({keys[0]: 0})


def test_integers_differing_by_multiples_of_the_hash_modulus(core):
    keys = [7 + j * MODULUS for j in range(3_000)]
    assert len({hash(k) for k in keys}) == 1
    fd = core.frozendict((k, j) for j, k in enumerate(keys))
    fd._check()
    assert len(fd) == 3_000
    assert all(fd[k] == j for j, k in enumerate(keys))
    assert 7 + 3_000 * MODULUS not in fd
    assert fd.set(keys[5], "x")[keys[5]] == "x"
    smaller = fd - keys[::2]
    assert list(smaller) == keys[1::2]
    smaller._check()
    assert fd == dict(zip(keys, range(3_000)))
    assert hash(fd) == hash(frozenset(fd.items()))
    # -1 and -2 hash alike in CPython.
    pair = core.frozendict({-1: "a", -2: "b"})
    assert pair[-1] == "a" and pair[-2] == "b"
    assert list(pair.delete(-1).items()) == [(-2, "b")]


# --- keys equal across types ------------------------------------------------------------------------


def test_first_key_object_stays_and_the_value_is_updated(core):
    from decimal import Decimal
    from fractions import Fraction

    equal_ones = [1, 1.0, True, Fraction(1), Decimal(1), complex(1, 0)]
    fd = core.frozendict((k, i) for i, k in enumerate(equal_ones))
    assert typed_items(fd) == [(int, 1, 5)]
    fd._check()
    for k in equal_ones:
        assert fd[k] == 5
        out = fd.set(k, "new")
        assert typed_items(out) == [(int, 1, "new")]
    assert typed_items(fd | {True: "or"}) == [(int, 1, "or")]
    assert typed_items(core.frozendict({1.0: "f"}).set(1, "i")) == [(float, 1.0, "i")]
    assert (fd - [True]) == {}
    assert typed_items(fd & [1.0]) == [(int, 1, 5)]
    e = core.frozendict({True: "t"}).evolve()
    e[1] = "one"
    e.update({1.0: "float"})
    assert typed_items(e) == [(bool, True, "float")]
    zeros = core.frozendict([(0, "a"), (0.0, "b"), (False, "c"), (-0.0, "d")])
    assert typed_items(zeros) == [(int, 0, "d")]
    assert zeros == {False: "d"} and hash(zeros) == hash(frozenset({0: "d"}.items()))


# --- values that contain the map -----------------------------------------------------------------


def test_value_containing_the_map_itself(core):
    fd = core.frozendict(a=[], b=2)
    fd["a"].append(fd)
    assert repr(fd) == "frozendict({'a': [frozendict({...})], 'b': 2})"
    assert fd == fd
    assert fd == core.frozendict(a=fd["a"], b=2)  # the same list object: equal by identity
    with pytest.raises(TypeError):
        hash(fd)
    derived = fd.set("c", 3)
    assert repr(derived) == "frozendict({'a': [frozendict({'a': [...], 'b': 2})], 'b': 2, 'c': 3})"
    derived._check()
    clone = copy.deepcopy(fd)
    assert clone["a"][0] is clone
    assert clone is not fd
    fd._check()


def test_subclass_repr_of_a_self_containing_value(core):
    class Sub(core.frozendict):
        pass

    sub = Sub(a=[])
    sub["a"].append(sub)
    assert repr(sub) == "Sub({'a': [Sub({...})]})"


def test_deep_nesting_through_values_does_not_crash(core):
    fd = core.frozendict()
    for _i in range(30_000):
        fd = core.frozendict(v=fd)
    for op in (hash, repr):
        try:
            op(fd)
        except RecursionError:
            pass
    assert len(fd) == 1
    del fd  # deallocating a 30,000-deep chain must not overflow the C stack
    gc.collect()


# --- threads ----------------------------------------------------------------------------------------


def test_versions_shared_between_threads(core):
    base = core.frozendict((i, i) for i in range(2_000))
    errors = []

    def work(seed):
        try:
            cur = base
            for step in range(300):
                k = (seed * 7919 + step * 31) % 2_500
                cur = cur.set(k, (seed, step)) if step % 3 else cur.discard(k)
                assert base[k % 2_000] == k % 2_000
            cur._check()
            e = base.evolve()
            for k in range(seed, 2_000, 50):
                e[k] = seed
            frozen = e.freeze()
            assert all(frozen[k] == seed for k in range(seed, 2_000, 50))
            assert hash(base) == hash(frozenset(base.items()))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert list(base.items()) == [(i, i) for i in range(2_000)]
    base._check()
