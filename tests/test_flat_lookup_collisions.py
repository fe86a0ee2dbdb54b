"""Lookups in a flat map (at most FLAT_MAX keys) among equal stored hashes.

A flat lookup scans the stored hashes; the entries whose hash equals the
probe's are tried in insertion order, identity first, then ``stored == key``.
The pure core inlines the first candidate into ``[]``, ``get`` and ``in`` on
CPython and hands the rest to ``flat_find_after``; PyPy runs one loop.  These
tests put keys of one hash at several positions (first, middle, last), use
hashes CPython folds together (-1 becomes -2), negative and extreme hashes,
and hash values whose packed bytes straddle two neighbours' (what a search of
packed hashes would match at an offset that is not an entry's), and count the
``__eq__`` calls each lookup makes.
"""

import pytest
from keys import CountingKey

from frozenmap._pycore import flat
from frozenmap._pycore.flat import FLAT_MAX

SIZES = [1, 2, 8, 17, FLAT_MAX]


def _positions(n):
    """Where the colliding keys go in a map of ``n``: first, middle, last."""
    return sorted({0, n // 2, n - 1})


def _build(core, n, hash_value):
    """A flat map of ``n`` CountingKeys, those at ``_positions(n)`` sharing
    ``hash_value``; returns (the map, the keys in order, the colliding keys)."""
    keys = []
    colliding = []
    for i in range(n):
        if i in _positions(n):
            key = CountingKey("c%d" % i, hash_value)
            colliding.append(key)
        else:
            key = CountingKey("k%d" % i)
        keys.append(key)
    fd = core.frozendict((key, i) for i, key in enumerate(keys))
    assert len(fd) == n <= FLAT_MAX
    return fd, keys, colliding


@pytest.fixture(autouse=True)
def _reset_counts():
    CountingKey.reset()
    yield
    CountingKey.reset()


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("hash_value", [7, -7, -1, -2, 2**63 - 1, -(2**63)])
def test_every_colliding_key_is_found_by_each_read(core, n, hash_value):
    fd, keys, colliding = _build(core, n, hash_value)
    for key in keys:
        value = keys.index(key)
        for probe in (key, CountingKey(key.name, key.hash_value)):  # same object, equal copy
            assert fd[probe] == value
            assert fd.get(probe, "absent") == value
            assert probe in fd
    absent = CountingKey("absent", hash_value)
    assert fd.get(absent, "absent") == "absent"
    assert absent not in fd
    with pytest.raises(KeyError):
        fd[absent]


def test_hash_minus_one_and_minus_two_are_one_stored_hash(core):
    # CPython turns a __hash__ of -1 into -2: both keys collide, both are found.
    a = CountingKey("a", -1)
    b = CountingKey("b", -2)
    fd = core.frozendict([(CountingKey("x"), 0), (a, 1), (b, 2)])
    assert (fd[a], fd[b]) == (1, 2)
    assert fd.get(CountingKey("b", -1), None) == 2
    assert CountingKey("c", -1) not in fd


@pytest.mark.parametrize("n", SIZES)
def test_eq_runs_only_on_earlier_entries_of_the_same_hash(core, n):
    fd, keys, colliding = _build(core, n, 12345)
    for rank, key in enumerate(colliding):
        for read in (lambda k: fd[k], lambda k: fd.get(k), lambda k: k in fd):
            CountingKey.reset()
            read(key)  # identical object: no __eq__ on the match itself
            assert CountingKey.eq_calls == rank, (rank, n)
            CountingKey.reset()
            read(CountingKey(key.name, key.hash_value))  # an equal copy
            assert CountingKey.eq_calls == rank + 1, (rank, n)
    CountingKey.reset()
    assert CountingKey("absent", 12345) not in fd
    assert CountingKey.eq_calls == len(colliding)
    CountingKey.reset()
    assert CountingKey("other", 54321) not in fd
    assert CountingKey.eq_calls == 0


def _straddling_hashes():
    """Two neighbour hashes and a probe hash whose 8 bytes, little- or
    big-endian, are the last 4 of the first and the first 4 of the second."""
    first = 0x0102030405060708
    second = 0x1112131415161718
    little = int.from_bytes(
        first.to_bytes(8, "little")[4:] + second.to_bytes(8, "little")[:4], "little"
    )
    big = int.from_bytes(first.to_bytes(8, "big")[4:] + second.to_bytes(8, "big")[:4], "big")
    return first, second, [little, big]


@pytest.mark.parametrize("n", [2, 9, FLAT_MAX])
def test_a_probe_straddling_two_stored_hashes_misses(core, n):
    first, second, probes = _straddling_hashes()
    keys = [CountingKey("k%d" % i) for i in range(n - 2)]
    keys += [CountingKey("first", first), CountingKey("second", second)]
    fd = core.frozendict((key, i) for i, key in enumerate(keys))
    for probe_hash in probes:
        CountingKey.reset()
        probe = CountingKey("probe", probe_hash)
        assert probe not in fd
        assert fd.get(probe, "absent") == "absent"
        with pytest.raises(KeyError):
            fd[probe]
        assert CountingKey.eq_calls == 0
    assert fd[keys[-2]] == n - 2 and fd[keys[-1]] == n - 1


class RaisingEq:
    """A key of a fixed hash whose ``__eq__`` raises."""

    def __hash__(self):
        return 99

    def __eq__(self, other):
        raise ArithmeticError("eq")


@pytest.mark.parametrize("n", SIZES)
def test_identity_first_and_eq_errors_propagate(core, n):
    raiser = RaisingEq()
    pairs = [(CountingKey("k%d" % i), i) for i in range(n - 1)] + [(raiser, "r")]
    fd = core.frozendict(pairs)
    assert fd[raiser] == "r" and fd.get(raiser) == "r" and raiser in fd
    other = CountingKey("other", 99)  # its hash finds the raiser's entry
    with pytest.raises(ArithmeticError):
        fd[other]
    with pytest.raises(ArithmeticError):
        fd.get(other)
    with pytest.raises(ArithmeticError):
        other in fd


def test_missing_of_a_subclass_after_a_collision(core):
    class WithMissing(core.frozendict):
        def __missing__(self, key):
            return ("missing", key.name)

    fd = WithMissing([(CountingKey("a", 5), 1), (CountingKey("b", 5), 2)])
    assert fd[CountingKey("b", 5)] == 2
    assert fd[CountingKey("c", 5)] == ("missing", "c")
    assert fd[CountingKey("d", 6)] == ("missing", "d")


@pytest.mark.parametrize("find", [flat.flat_find, flat._flat_find_loop], ids=["in_c", "loop"])
def test_both_scans_of_the_pure_core_agree(find):
    # (PyPy runs the loop, CPython the C scan; both are checked here)
    hashes = (5, 9, 5, -2, 5, 9)
    keys = [CountingKey("k%d" % i, h) for i, h in enumerate(hashes)]
    items = tuple((key, i) for i, key in enumerate(keys))
    for i, key in enumerate(keys):
        assert find(hashes, items, hashes[i], key) == i
        assert find(hashes, items, hashes[i], CountingKey(key.name)) == i
    assert find(hashes, items, 5, CountingKey("absent")) == -1
    assert find(hashes, items, 6, keys[0]) == -1
    assert find((), (), 5, keys[0]) == -1
    assert flat.flat_find_after(hashes, items, 5, keys[4], 0) == 4
    assert flat.flat_find_after(hashes, items, 5, keys[0], 0) == -1  # only after position 0


@pytest.mark.parametrize("n", SIZES)
def test_equal_maps_in_one_order_compare_no_keys(core, n):
    # == pairs the entries at one position first (the same key object under
    # the same stored hash), as the C core does: no __eq__ on the keys.
    fd, keys, colliding = _build(core, n, 777)
    twin = core.frozendict((key, keys.index(key)) for key in keys)
    CountingKey.reset()
    assert fd == twin and twin == fd
    assert CountingKey.eq_calls == 0
    moved = core.frozendict((key, keys.index(key)) for key in reversed(keys))
    assert fd == moved  # another order: found by lookups
    assert fd != twin.set(keys[-1], "other")


class ShiftingHash:
    """A key whose hash is whatever ``value`` says when it is asked."""

    value = 1

    def __hash__(self):
        return ShiftingHash.value


def test_one_key_object_stored_under_two_hashes_is_not_equal(core):
    key = ShiftingHash()
    ShiftingHash.value = 1
    first = core.frozendict([(key, 0)])
    ShiftingHash.value = 2
    second = core.frozendict([(key, 0)])
    assert first != second and second != first
    assert first == core.frozendict(first) and second == core.frozendict(second)


@pytest.mark.parametrize("n", [FLAT_MAX // 4, FLAT_MAX // 2, FLAT_MAX])
def test_versions_stay_consistent_after_lookups(core, n):
    # (lookups leave a version as it was: a core that caches anything for them
    # in the version checks it in _check)
    fd, keys, colliding = _build(core, n, 4242)
    for key in keys:
        assert fd[key] == keys.index(key)
    assert CountingKey("absent", 4242) not in fd
    fd._check()
    derived = fd.set(keys[0], "x").delete(keys[-1])
    assert derived[keys[0]] == "x" and keys[-1] not in derived
    derived._check()
