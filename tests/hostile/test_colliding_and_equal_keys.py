"""Hard but legal keys: hash collisions at scale, and keys equal across types
(docs/spec.md §4), on both cores.

Thousands of keys sharing one hash (``HashKey``; integers that collide in
CPython's hash: multiples of 2**61-1, and -1/-2), built at once and one at a
time, derived from, compared, diffed, copied and pickled; hashes that differ
only in their top bits; ``__hash__`` results out of range; NaN keys; ``==`` of
versions with one big collision node stays linear.  Keys equal across types
(``1``, ``1.0``, ``True``, ...): the first key object stays, the value is
updated.
"""

import copy
import pickle
import sys

import pytest
from fault_helpers import M61
from helpers import typed_items
from keys import HashKey

MODULUS = sys.hash_info.modulus  # 2**61 - 1 on 64-bit builds


# --- thousands of keys sharing one hash ------------------------------------------------------


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


# --- collisions at scale -------------------------------------------------------------------------


_COLLIDING = {}


def colliding_ints(n=10_000):
    """``n`` distinct integers whose hashes are all 0 (multiples of 2**61-1), and a dict of them.

    Built once per run: a dict of n fully colliding keys costs O(n**2) to build.
    """
    if n not in _COLLIDING:
        keys = [k * M61 for k in range(n)]
        _COLLIDING[n] = (keys, dict(zip(keys, range(n))))
    return _COLLIDING[n]


def test_ten_thousand_keys_sharing_one_hash(core):
    keys, d = colliding_ints()
    assert {hash(k) for k in keys[:100]} == {0}
    fd = core.frozendict(d)
    fd._check()
    assert len(fd) == 10_000
    assert list(fd) == keys
    for k in keys[::97] + [keys[-1]]:
        assert fd[k] == k // M61
    absent = 10_001 * M61
    assert absent not in fd and fd.get(-M61) is None  # -M61 hashes to 0 too
    v1 = fd.set(keys[5000], "changed")
    v2 = v1.delete(keys[0]).delete(keys[9999]).set(absent, "new")
    v3 = v2.discard(keys[1234])
    for v in (v1, v2, v3):
        v._check()
    assert list(v2)[-1] == absent and list(v2)[:2] == [keys[1], keys[2]]
    assert v1[keys[5000]] == "changed" and fd[keys[5000]] == 5000
    assert hash(fd) == hash(frozenset(d.items()))
    assert hash(v1) == hash(frozenset(v1.items()))
    diff = fd.diff(v3)
    assert dict(diff.added) == {absent: "new"}
    assert set(diff.removed) == {keys[0], keys[9999], keys[1234]}
    assert dict(diff.changed) == {keys[5000]: (5000, "changed")}
    assert fd != v1 and v1 == v1.set(keys[3], 3)
    e = v3.evolve()
    for k in keys[:50]:
        e[k] = "e"
    for k in keys[50:100]:
        del e[k]
    e.popitem()
    frozen = e.freeze()
    frozen._check()
    assert len(frozen) == len(v3) + 1 - 50 - 1
    sub = fd - keys[:5000]
    assert list(sub) == keys[5000:]
    small = fd & [keys[7], keys[3], absent]
    assert list(small.items()) == [(keys[3], 3), (keys[7], 7)]
    fd._check()
    assert len(fd) == 10_000 and fd[keys[0]] == 0


def test_colliding_keys_built_one_at_a_time(core):
    """Insertion through lookups (construction from pairs, an evolver): n**2/2 comparisons."""
    n = 10_000 if core.name == "c" else 2_000
    keys, _ = colliding_ints(n)
    fd = core.frozendict(zip(keys, keys))
    fd._check()
    assert list(fd) == keys
    e = core.frozendict().evolve()
    for k in keys[: n // 4]:
        e[k] = 1
    for k in keys[: n // 4 : 2]:
        del e[k]
    e._check()
    assert list(e) == keys[1 : n // 4 : 2]


def test_integers_colliding_in_cpythons_hash(core):
    """-1 and -2 hash alike; so do 1, 2**61 and 1 + 2**61-1 (and 1.0, True equal 1)."""
    assert hash(-1) == hash(-2)
    keys = [-1, -2, 1, 2**61, M61 + 1, 2 * M61 + 1, -(M61 - 1), 1.0, True, 0, M61, -M61, 0.0, False]
    fd = core.frozendict((k, i) for i, k in enumerate(keys))
    expected = {}
    for i, k in enumerate(keys):
        expected[k] = i
    fd._check()
    assert [(type(k), k, v) for k, v in fd.items()] == [
        (type(k), k, v) for k, v in expected.items()
    ]
    assert fd[1] == fd[1.0] == fd[True] == expected[1]
    assert type(next(k for k in fd if k == 1)) is int  # the first key object stays
    gone = fd.delete(True).delete(-2).delete(0.0)
    gone._check()
    assert 1 not in gone and 2**61 in gone and -1 in gone and 0 not in gone and M61 in gone
    assert hash(fd) == hash(frozenset(fd.items()))


@pytest.mark.parametrize("top_bits", [1, 4, 8])
def test_hashes_differing_only_in_their_top_bits(core, top_bits):
    """The deepest trie level (bits 60-63), signed and unsigned extremes."""
    low = 0x0123456789ABCDE
    hashes = []
    for hi in range(2**top_bits):
        h = (hi << (64 - top_bits)) | low
        if h >= 2**63:
            h -= 2**64  # a signed Py_hash_t
        if h != -1:
            hashes.append(h)
    keys = [HashKey(h, "h%d" % i) for i, h in enumerate(hashes)]
    keys += [HashKey(2**63 - 1, "max"), HashKey(-(2**63), "min"), HashKey(-2, "m2")]
    fd = core.frozendict((k, k.name) for k in keys)
    fd._check()
    assert list(fd) == keys
    v = fd
    for k in keys[::2]:
        v = v.delete(k)
        v._check()
    assert list(v) == keys[1::2]
    for k in keys:
        assert fd[HashKey(k.hash, k.name)] == k.name
    assert hash(fd) == hash(frozenset(fd.items()))


def test_hash_method_returning_out_of_range_and_minus_one(core):
    class Odd:
        def __init__(self, h):
            self.h = h

        def __hash__(self):
            return self.h

    keys = [Odd(-1), Odd(2**64 + 5), Odd(-(2**70)), Odd(2**63), Odd(True)]
    fd = core.frozendict((k, i) for i, k in enumerate(keys))
    fd._check()
    for i, k in enumerate(keys):
        assert fd[k] == i
    assert hash(fd) == hash(frozenset(fd.items()))


def test_nan_keys_are_distinct_unless_identical(core):
    a, b = float("nan"), float("nan")
    fd = core.frozendict([(a, 1), (b, 2), (a, 3)])
    assert len(fd) == 2 and fd[a] == 3 and fd[b] == 2
    assert float("nan") not in fd
    fd._check()
    assert fd == {a: 3, b: 2}
    assert fd.diff({a: 3, b: 2}) == core.Diff(
        core.frozendict(), core.frozendict(), core.frozendict()
    )


def test_deepcopy_and_pickle_of_adversarial_keys(core):
    keys, _ = colliding_ints(300)
    fd = core.frozendict(zip(keys, range(300))).set(float("nan"), -1).set(HashKey(-2, "m"), 0)
    for clone in (copy.deepcopy(fd), pickle.loads(pickle.dumps(fd))):
        clone._check()
        assert len(clone) == 302 and list(clone)[:300] == keys


def test_eq_of_versions_with_one_big_collision_node_does_not_compare_all_pairs(core):
    """Versions derived from one another share key objects: matching them by
    position and identity first keeps == linear in a collision node's size
    (it used to call __eq__ O(k**2) times: 6 s for 10,000 keys, pure core)."""
    calls = []

    class Key:
        def __init__(self, i):
            self.i = i

        def __hash__(self):
            return 7

        def __eq__(self, other):
            calls.append(1)
            return isinstance(other, Key) and other.i == self.i

    keys = [Key(i) for i in range(400)]
    a = core.frozendict.fromkeys(keys, 0)
    moved = a.delete(keys[10]).set(keys[10], 0)  # the same items, keys[10] now last
    changed = a.set(keys[200], 1)
    calls.clear()
    assert a == moved and moved == a
    assert a != changed
    assert len(calls) <= 2 * len(keys), len(calls)
    # keys that are equal but other objects still compare by __eq__
    left = core.frozendict.fromkeys([Key(i) for i in range(20)], 0)
    right = core.frozendict.fromkeys([Key(i) for i in range(20)], 0)
    calls.clear()
    assert left == right
    assert len(calls) >= 20


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
