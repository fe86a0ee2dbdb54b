"""Merges that cost what changed (docs/spec.md §2).

``a | b``, ``a - b``, ``a & b`` and ``Evolver.update(b)`` with a frozendict
``b`` walk the two key tries together and skip the subtrees they share.  The
result must be exactly what the entry-by-entry path gives: the same items in
the same order, the same key objects (a's for common keys) and value
objects (b's for ``|``), and a correct hash.  Checked against a dict model
and against the entry-by-entry path itself (a plain dict or set operand),
for operands derived from a common ancestor through random edits, with
colliding keys; and that shared subtrees are neither copied nor compared.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from keys import CountingKey, CountingValue, HashKey

# Keys: small ints, strings, and HashKeys of few hashes (collision nodes).
KEYS = (
    list(range(40))
    + ["s%d" % i for i in range(20)]
    + [HashKey(h, "h%d" % i) for i, h in enumerate([7, 7, 7, 39, 39, 1 << 40, (1 << 40) | 7])]
)


def fresh(n):
    """An int equal to n but (for big n) a new object each time."""
    return int(str(n + 10**30))


edit = st.tuples(
    st.sampled_from(["set", "same", "equal", "delete"]),
    st.integers(0, len(KEYS) - 1),
    st.integers(0, 5),
)


def derive(version, edits):
    """Apply edits: set a new value, set the value already there, set an
    equal but distinct value, or delete."""
    for op, index, n in edits:
        key = KEYS[index]
        if op == "delete":
            version = version.discard(key)
        elif op == "same" and key in version:
            version = version.set(key, version[key])
        elif op == "equal" and key in version:
            version = version.set(key, fresh(version[key] - 10**30))
        else:
            version = version.set(key, fresh(n))
    return version


def identities(mapping):
    return [(id(k), id(v)) for k, v in mapping.items()]


def assert_sound(result):
    result._check()
    assert hash(result) == hash(frozenset(result.items()))


@given(
    base=st.lists(st.integers(0, len(KEYS) - 1), max_size=60),
    edits_a=st.lists(edit, max_size=12),
    edits_b=st.lists(edit, max_size=12),
    hash_first=st.booleans(),
)
def test_merges_of_related_versions_match_the_entry_by_entry_path(
    core, base, edits_a, edits_b, hash_first
):
    fd = core.frozendict
    ancestor = fd((KEYS[i], fresh(i)) for i in base)
    if hash_first:  # a known accumulator is then kept up to date by every edit
        hash(ancestor)
    a = derive(ancestor, edits_a)
    b = derive(ancestor, edits_b)
    for left, right in ((a, b), (b, a), (ancestor, b), (a, ancestor)):
        # |: left's keys in left's order with right's values, then right's new keys
        model = dict(left)
        model.update(right)
        merged = left | right
        assert list(merged.items()) == list(model.items())
        assert identities(merged) == identities(left | dict(right))
        assert_sound(merged)
        e = left.evolve()
        e.update(right)
        assert identities(e.freeze()) == identities(merged)
        # - and &: left's entries whose key right lacks / holds, left's order
        minus = left - right
        assert identities(minus) == [(id(k), id(v)) for k, v in left.items() if k not in right]
        assert identities(minus) == identities(left - set(right))
        assert_sound(minus)
        both = left & right
        assert identities(both) == [(id(k), id(v)) for k, v in left.items() if k in right]
        assert identities(both) == identities(left & list(right))
        assert_sound(both)


@given(
    left=st.lists(st.integers(0, len(KEYS) - 1), max_size=40),
    right=st.lists(st.integers(0, len(KEYS) - 1), max_size=40),
)
def test_merges_of_unrelated_versions_match_the_entry_by_entry_path(core, left, right):
    fd = core.frozendict
    a = fd((KEYS[i], fresh(i)) for i in left)
    b = fd((KEYS[i], fresh(i + 1)) for i in right)
    assert identities(a | b) == identities(a | dict(b))
    assert identities(a - b) == identities(a - set(b))
    assert identities(a & b) == identities(a & list(b))


def test_or_keeps_the_left_key_object_and_takes_the_right_value_object(fd):
    key_a, key_b = HashKey(5, "k"), HashKey(5, "k")
    value_a, value_b = fresh(1), fresh(1)
    a = fd({key_a: value_a, "x": 1})
    b = a.delete(key_a).set(key_b, value_b).set("x", 1)
    merged = a | b
    (k, v), _ = merged.items()
    assert k is key_a and v is value_b
    assert list(merged) == [key_a, "x"]  # a's order: the re-added key keeps a's place


def test_or_of_an_equal_but_distinct_value_takes_it(fd):
    a = fd({i: fresh(i) for i in range(500)})
    value = fresh(3)
    b = a.set(3, value)
    assert a[3] == value and a[3] is not value
    assert (a | b)[3] is value


def test_merging_shared_versions_returns_the_left_version(fd):
    a = fd({i: i for i in range(2000)})
    assert a | a is a
    assert a & a is a
    assert (a | a.set(5, 5)) is a  # the very value already there
    b = a.delete(7)
    assert a & b.set(7, 0) is a
    disjoint = fd({-i - 1: 0 for i in range(2000)})
    assert b - disjoint is b  # nothing to remove
    assert list((b - a.delete(9)).items()) == [(9, 9)]


def test_derived_merges_share_all_but_the_changed_paths(fd):
    a = fd({i: i for i in range(5000)})
    b = a.set(17, "new").delete(4000).set("extra", 1)
    shared = set(a._node_ids())
    for result in (a | b, a & b):
        fresh_nodes = [i for i in result._node_ids() if i not in shared]
        assert len(fresh_nodes) < 40, len(fresh_nodes)
    assert (a | b)[17] == "new" and list(a | b)[-1] == "extra"
    assert list((a - b).items()) == [(4000, 4000)]


def test_shared_subtrees_run_no_user_code(fd):
    keys = [CountingKey("k%d" % i) for i in range(3000)]
    a = fd((k, CountingValue(i)) for i, k in enumerate(keys))
    hash(a)
    b = a.set(keys[10], CountingValue(-1))
    CountingKey.reset()
    CountingValue.reset()
    merged = a | b
    minus = a - b
    both = a & b
    e = a.evolve()
    e.update(b)
    assert CountingKey.eq_calls == 0 and CountingKey.hash_calls == 0
    # per merge, one value leaves and one arrives in the hash accumulator
    assert CountingValue.eq_calls == 0 and CountingValue.hash_calls <= 4
    assert merged[keys[10]].payload == -1 and len(minus) == 0 and both is a
    assert e[keys[10]] is b[keys[10]]


def test_evolver_update_with_a_derived_version(core):
    a = core.frozendict({i: i for i in range(3000)})
    b = a.set(1, "one").delete(2).set("new", 0)
    e = a.evolve()
    e[5] = "five"
    e.update(b)
    expected = dict(a)
    expected[5] = "five"
    expected.update(b)
    assert list(e.items()) == list(expected.items())
    e._check()
    assert list(a.items()) == [(i, i) for i in range(3000)]  # the source unchanged


@pytest.mark.parametrize("small", [0, 1, 5])
def test_a_small_operand_still_reads_its_entries(fd, small):
    # (the walk is only taken for an operand at least 1/4 of the other's size)
    a = fd({i: i for i in range(1000)})
    b = fd({i: -i for i in range(small)})
    assert list((a | b).items()) == [(i, -i if i < small else i) for i in range(1000)]
    assert list((a - b).items()) == [(i, i) for i in range(small, 1000)]
    assert list((a & b).items()) == [(i, i) for i in range(small)]


def test_new_keys_of_a_related_operand_arrive_in_its_order(fd):
    """The walk lists what b adds in trie order; they are applied in b's
    insertion order, as the entry-by-entry path applies them (|, and an
    Evolver's update)."""
    a = fd({"k%d" % i: i for i in range(40)})
    b = a
    for i in reversed(range(30)):  # an order no hash gives
        b = b.set("n%d" % i, i)
    b = b.set("k3", "three")
    expected = dict(a)
    expected.update(b)
    e = a.evolve()
    e.update(b)
    for merged in (a | b, e.freeze()):
        assert list(merged.items()) == list(expected.items())
        merged._check()
