"""The pure core's lookup index of a flat version read often.

A flat version of more than FLAT_SCAN_MAX keys scans its stored hashes for
its first FLAT_INDEX_AFTER lookups, then builds ``{stored hash: first
position}`` once and takes every later lookup's first candidate from it.
Whichever way a lookup goes, it must find the same entry and make the same
``__eq__`` calls in the same order; a version read once or twice keeps no
index, and a derived version never inherits one.  (The count starts at 0 in
every version of FLAT_SCAN_MAX + 1 to FLAT_MAX keys; the slot stays unset in
the others.)
"""

import threading

import pytest
from conftest import load_core
from keys import CountingKey

from frozenmap._pycore import flat
from frozenmap._pycore.flat import FLAT_INDEX_AFTER, FLAT_MAX, FLAT_SCAN_MAX

INDEXED = [FLAT_SCAN_MAX + 1, 16, FLAT_MAX]


@pytest.fixture
def pycore():
    """The pure core, whose versions carry the index (the C core scans)."""
    return load_core("python")


@pytest.fixture(autouse=True)
def _reset_counts():
    CountingKey.reset()
    yield
    CountingKey.reset()


def _colliding_map(core, n):
    """``n`` keys, those at 1, n // 2 and n - 1 sharing the hash 5 (the
    index holds the first of them); returns (map, keys)."""
    keys = [
        CountingKey("c%d" % i, 5) if i in (1, n // 2, n - 1) else CountingKey("k%d" % i)
        for i in range(n)
    ]
    return core.frozendict((key, i) for i, key in enumerate(keys)), keys


def _reads(fd, probe):
    """What each read answers for ``probe``, and the ``__eq__`` calls it made."""
    CountingKey.reset()
    got = (fd.get(probe, "absent"), probe in fd)
    return got, CountingKey.eq_calls


@pytest.mark.parametrize("n", INDEXED)
def test_indexed_lookups_answer_and_call_eq_as_the_scan(core, n):
    # The same probes, read before and after the version's index exists (the
    # C core has no index: its answers and calls are the reference).
    fd, keys = _colliding_map(core, n)
    probes = [CountingKey(key.name, key.hash_value) for key in keys]
    probes += [CountingKey("absent", 5), CountingKey("absent", 6)]
    first = [_reads(fd, probe) for probe in probes]
    for _ in range(FLAT_INDEX_AFTER + 1):
        assert [_reads(fd, probe) for probe in probes] == first
    assert [got for got, _ in first[:n]] == [(i, True) for i in range(n)]
    assert [got for got, _ in first[n:]] == [("absent", False)] * 2
    # The last key of hash 5 is tried after the two earlier ones.
    assert first[n - 1][1] == 2 * 3


def test_the_index_is_built_after_a_few_lookups_and_only_then(pycore):
    fd, keys = _colliding_map(pycore, FLAT_MAX)
    assert fd._hindex == 0
    for count in range(1, FLAT_INDEX_AFTER + 1):
        assert fd[keys[-1]] == FLAT_MAX - 1
        assert fd._hindex == count
        fd._check()
    assert keys[0] in fd
    assert fd._hindex == flat.flat_index(fd._root)
    assert fd._hindex[5] == 1  # the first position of the shared hash
    fd._check()
    # A derived version starts without one, even when it shares the hashes.
    derived = fd.set(keys[3], "changed")
    assert derived._root is fd._root and derived._hindex == 0
    assert derived[keys[3]] == "changed"


@pytest.mark.parametrize("n", [1, FLAT_SCAN_MAX, FLAT_MAX + 1, 100])
def test_other_versions_never_count_their_lookups(pycore, n):
    fd = pycore.frozendict(("k%d" % i, i) for i in range(n))
    for _ in range(FLAT_INDEX_AFTER + 3):
        assert fd["k0"] == 0
    assert not hasattr(fd, "_hindex")
    assert not hasattr(fd.set("k0", 1), "_hindex")


def test_a_wrong_index_is_caught_by_check(pycore):
    fd, keys = _colliding_map(pycore, 16)
    for _ in range(FLAT_INDEX_AFTER + 1):
        fd.get(keys[0])
    object.__setattr__(fd, "_hindex", {})
    with pytest.raises(AssertionError, match="index"):
        fd._check()
    object.__setattr__(fd, "_hindex", FLAT_INDEX_AFTER + 1)
    with pytest.raises(AssertionError, match="count"):
        fd._check()


def test_threads_reading_one_fresh_version_all_find_every_key(core):
    # Four threads race to count and to build the index of one version: each
    # write is a whole count or a whole index, so every read stays right.
    fd = core.frozendict(("k%d" % i, i) for i in range(FLAT_MAX))
    errors = []
    start = threading.Barrier(4)

    def read():
        start.wait()
        for _ in range(50):
            for i in range(FLAT_MAX):
                if fd["k%d" % i] != i or ("x%d" % i) in fd:
                    errors.append(i)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    fd._check()
