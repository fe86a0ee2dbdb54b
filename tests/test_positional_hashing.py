"""The two operations that start from the order trie, which stores no hashes,
hash the keys they take (docs/spec.md §2 "Positions" and the Evolver, §4):
``slice`` each key it keeps, ``Evolver.popitem`` the key it removes.

The counts pin the cost as well: a slice of k items of a 10,000-key map
hashes k keys, not n, and compares none; popitem hashes one key.  A key whose
hash changed since it was stored is where the two differ from a plain reading
of stored hashes, so each test sets one beside ``dict``.
"""

import pytest
from helpers import unhashable_key_message
from keys import CountingKey, Crasher, CrashError, HashKey

N = 10_000


class Mutable:
    """A key hashing and comparing its state, which can change after it was stored."""

    def __init__(self, state):
        self.state = state
        self.hash_calls = 0

    def __hash__(self):
        self.hash_calls += 1
        return hash(self.state)

    def __eq__(self, other):
        return isinstance(other, Mutable) and self.state == other.state

    def __repr__(self):
        return "Mutable(%r)" % (self.state,)


# --- slice -----------------------------------------------------------------------------


def _counting_map(core):
    # 16 hashes for 10,000 keys: a build that looked keys up would compare them
    return core.frozendict((CountingKey(i, i % 16), i) for i in range(N))


def test_slice_hashes_each_kept_key_once_and_compares_none(core):
    fd = _counting_map(core)
    CountingKey.reset()
    part = fd.slice(5000, 5003)
    assert (CountingKey.hash_calls, CountingKey.eq_calls) == (3, 0)
    assert list(part.values()) == [5000, 5001, 5002]
    part._check()
    CountingKey.reset()
    last = fd.slice(-1)
    empty = fd.slice(N // 2, N // 2)
    assert (CountingKey.hash_calls, CountingKey.eq_calls) == (1, 0)
    assert list(last.items()) == [fd.item_at(-1)] and len(empty) == 0


def test_evolver_slice_hashes_each_kept_key_once(core):
    e = _counting_map(core).evolve()
    del e[CountingKey(0, 0)]
    CountingKey.reset()
    part = e.slice(0, 4)
    assert list(part.values()) == [1, 2, 3, 4]
    assert (CountingKey.hash_calls, CountingKey.eq_calls) == (4, 0)


def test_slice_files_a_key_under_its_new_hash_as_a_dict_built_from_it(core):
    key = Mutable("old")
    fd = core.frozendict({"a": 1, key: 2, "z": 3})
    d = dict(fd)
    key.state = "new"
    part = fd.slice(0, 2)
    part._check()
    rebuilt = dict(list(d.items())[0:2])
    # (not compared with `key in d`: a dict tries identity before the hash,
    # so whether it finds the key under its new hash depends on where that
    # hash's probe lands -- on the key's slot by chance, with 3 keys)
    assert (key in part, key in rebuilt) == (True, True)
    assert key not in fd  # filed under its old hash, compared in full
    assert part[key] == 2
    assert hash(part) == hash(frozenset(part.items()))


def test_slice_keeps_two_keys_that_have_become_equal(core):
    a, b = Mutable("a"), Mutable("b")
    fd = core.frozendict({a: 1, b: 2, "c": 3})
    b.state = "a"
    a.hash_calls = b.hash_calls = 0
    part = fd.slice(0, 2)
    part._check()
    assert list(part.items()) == [(a, 1), (b, 2)]  # never compared: both stay
    assert (a.hash_calls, b.hash_calls) == (1, 1)


def test_slice_propagates_a_failing_hash_and_makes_nothing(core):
    bad = Crasher("bad")
    fd = core.frozendict([("a", 1), (bad, 2), ("c", 3)])
    bad.crash_hash = True
    with pytest.raises(CrashError, match="hash of bad"):
        fd.slice(1)
    assert fd.slice(2) == {"c": 3}  # a slice without it needs no hash of it
    bad.crash_hash = False
    assert list(fd.items()) == [("a", 1), (bad, 2), ("c", 3)]
    fd._check()


def test_slice_rewrites_an_unhashable_key_as_the_constructor_does(core):
    class Unhashable(HashKey):
        broken = False

        def __hash__(self):
            if self.broken:
                raise TypeError("unhashable now")
            return self.hash

    key = Unhashable(1, "k")
    fd = core.frozendict({key: 1, "x": 2})
    Unhashable.broken = True
    with pytest.raises(TypeError) as info:
        fd.slice(0, 1)
    assert str(info.value) == unhashable_key_message(key)


def test_a_kept_keys_hash_that_edits_the_evolver_sees_the_slice_of_before(core):
    e = core.frozendict(a=1).evolve()

    class Editing(HashKey):
        armed = False

        def __hash__(self):
            if Editing.armed:
                e["late"] = 9  # the slice reads a snapshot: this edit is not in it
            return self.hash

    key = Editing(5, "k")
    e[key] = 2
    e["b"] = 3
    Editing.armed = True
    part = e.slice(1)
    assert list(part.items()) == [(key, 2), ("b", 3)]
    assert e.key_at(-1) == "late"
    part._check()
    e._check()


# --- Evolver.popitem ---------------------------------------------------------------------


def test_popitem_hashes_the_removed_key_once(core):
    e = _counting_map(core).evolve()
    CountingKey.reset()
    assert [e.popitem()[1] for _ in range(3)] == [N - 1, N - 2, N - 3]
    assert (CountingKey.hash_calls, CountingKey.eq_calls) == (3, 0)
    assert len(e) == N - 3
    e._check()


def test_popitem_removes_the_last_item_whose_hash_changed(core):
    key = Mutable("old")
    items = [(i, i) for i in range(200)] + [(key, "k")]
    e = core.frozendict(items).evolve()
    d = dict(items)
    key.state = "new"
    assert e.popitem() == d.popitem() == (key, "k")
    assert list(e.items()) == list(d.items())
    e._check()


def test_popitem_discards_an_exception_from_the_hash_and_still_removes(core):
    bad = Crasher("bad")
    e = core.frozendict([("a", 1), (bad, 2)]).evolve()
    bad.crash_hash = True
    assert e.popitem() == (bad, 2)
    assert list(e.items()) == [("a", 1)]
    e._check()


def test_popitem_lets_keyboard_interrupt_through_and_removes_nothing(core):
    bad = Crasher("bad", error=KeyboardInterrupt)
    e = core.frozendict([("a", 1), (bad, 2)]).evolve()
    bad.crash_hash = True
    with pytest.raises(KeyboardInterrupt):
        e.popitem()
    bad.crash_hash = False
    assert list(e.items()) == [("a", 1), (bad, 2)]
    e._check()
    assert e.popitem() == (bad, 2)


def test_popitem_from_a_hash_that_reads_freezes_and_edits_the_evolver(core):
    e = core.frozendict(a=1).evolve()
    seen = []

    class Reentrant(HashKey):
        def __hash__(self):
            if seen == ["armed"]:
                seen.append((len(e), e.freeze()))
                try:
                    e["late"] = 0
                except RuntimeError as exc:  # an edit from inside an edit
                    seen.append(str(exc))
            return self.hash

    key = Reentrant(3, "k")
    e[key] = 2
    seen.append("armed")
    assert e.popitem() == (key, 2)
    _, (size, frozen), error = seen
    assert size == 2 and list(frozen.items()) == [("a", 1), (key, 2)]
    assert "Evolver" in error
    assert list(e.items()) == [("a", 1)]
    e._check()
    frozen._check()
