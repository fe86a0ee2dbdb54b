"""The key trie's rules, on versions too large to be flat.

A frozendict of at most ``FLAT_MAX`` keys holds no tries, so a
rule checked on a map of two or three keys tests the flat form only: the key
trie's lookups, one-walk copies, collision nodes and deletions are never
reached.  Each test here checks a rule of ``test_rules.py`` (or a neighbour)
on maps padded with ``FLAT_MAX`` filler keys, whose hashes take level-0
digits 16 to 31 (several per digit, apart one level down), which no key
under test uses, so the keys under test keep the places in the
trie the rule is about.  The mutants of ``scripts/mutants.py`` each test
kills are named in its docstring (they survived the suite before):

- the stored hash is compared before any key's ``__eq__`` (lookup, a
  collision node's lookup, ``set``, ``delete``, ``==`` and ``diff``);
- identity before equality: a NaN key is deleted by itself, a NaN value
  makes two versions equal, ``set`` of an equal but distinct value stores it;
- a node left holding only a collision node after a delete gives way to it;
- a collision node made by ``set`` is never edited in place, and its values
  are compared by ``==``;
- ``Evolver.popitem`` removes the entry of the very key object at the last
  position, even when the key's current hash leads to another key's entry;
- merging a frozendict held in tries (``|``, ``update``, the constructor)
  adds its new keys in its order, not in the key trie's (hash) order;
- a subclass's derivations that change nothing are exact frozendicts.
"""

import pytest
from keys import ChangingHashKey, EqBomb, HashKey
from test_rules import FAR, CountingEq, _assert_canonical

from frozenmap._pycore.flat import FLAT_MAX

FILLERS = [(HashKey(16 + i % 16 + ((i // 16) << 5), "filler%d" % i), i) for i in range(FLAT_MAX)]


def padded(core, items):
    """A frozendict of the filler items, then ``items``: held in tries."""
    m = core.frozendict(FILLERS + list(items))
    assert "flat" not in m._dump().split("\n", 1)[0]
    return m


# --- the stored hash before __eq__ -------------------------------------------------------


def test_lookup_compares_the_stored_hash_before_eq(core):
    """Mutant find-no-hash-check (in tries)."""
    m = padded(core, [(EqBomb(1, "stored"), "v")])
    probe = EqBomb(1 + FAR, "probe")  # the stored key's slot, another hash
    assert probe not in m
    assert m.get(probe, "none") == "none"
    assert m.discard(probe) is m
    e = m.evolve()
    assert probe not in e


def test_collision_lookup_compares_the_hash_before_eq(core):
    """Mutant collision-find-no-hash-check: ``_collision_find`` drops ``if node[4][0] == h``."""
    m = padded(core, [(HashKey(7, "x"), 1), (HashKey(7, "y"), 2)])
    CountingEq.calls = 0
    probe = CountingEq(7 + FAR)  # reaches the collision node, another full hash
    assert probe not in m
    assert m.get(probe) is None
    assert m.discard(probe) is m
    grown = m.set(probe, 3)
    assert len(grown) == len(m) + 1
    grown._check()
    assert CountingEq.calls == 0


def test_set_compares_the_stored_hash_before_eq(core):
    """Mutant set-copying-no-hash-check: ``champ_set_copying`` drops ``if old[0] == h``."""
    m = padded(core, [(EqBomb(1, "stored"), "v")])
    probe = EqBomb(1 + FAR, "probe")
    derived = m.set(probe, "w")
    assert len(derived) == len(m) + 1
    assert list(derived.items())[-1] == (probe, "w")
    derived._check()


def test_delete_compares_the_stored_hash_before_eq(core):
    """Mutant delete-copying-no-hash-check: ``champ_delete_copying`` drops ``if old[0] != h``."""
    m = padded(core, [(EqBomb(1, "stored"), "v"), ("x", 1)])
    with pytest.raises(KeyError):
        m.delete(EqBomb(1 + FAR, "probe"))
    assert m - [EqBomb(1 + FAR, "probe")] == m


def test_equality_compares_stored_hashes_before_keys(core):
    """Mutant same-pair-no-hash-check: ``champ_same_pair`` drops ``a[0] != b[0]`` before the keys' ``==``."""
    a = padded(core, [(EqBomb(1, "a"), "v")])
    b = padded(core, [(EqBomb(1 + FAR, "b"), "v")])
    assert a != b
    assert not a == b
    d = a.diff(b)
    assert len(d.added) == 1 and len(d.removed) == 1 and not d.changed


# --- identity before equality ------------------------------------------------------------


def test_delete_finds_the_stored_key_object_by_identity(core):
    """Mutant delete-copying-no-identity: ``champ_delete_copying`` tests ``k == key`` only."""
    nan = float("nan")
    bomb = EqBomb(5)
    m = padded(core, [(nan, 1), (bomb, 2), ("x", 3)])
    assert list(m.delete(nan).items()) == FILLERS + [(bomb, 2), ("x", 3)]
    assert list(m.delete(bomb).items()) == FILLERS + [(nan, 1), ("x", 3)]
    assert list(m.discard(bomb).items()) == FILLERS + [(nan, 1), ("x", 3)]


def test_equality_matches_values_by_identity_first(core):
    """Mutant same-pair-no-identity: ``champ_same_pair`` compares the values with ``==`` only."""
    nan = float("nan")
    x, y = HashKey(7, "x"), HashKey(7, "y")  # a collision node: its entries compared in pairs
    a = padded(core, [(x, nan), (y, 1), ("n", nan)])
    b = padded(core, [(y, 1), (x, nan), ("n", nan)])
    assert a == b and b == a
    assert not (a != b)
    c = a.set("n", float("nan"))  # another NaN object: not equal
    assert a != c


def test_set_of_an_equal_but_distinct_value_stores_it(core):
    """Mutant set-copying-noop-by-equality: ``champ_set_copying`` returns the old
    version when the value is equal, not the same object."""
    m = padded(core, [("a", 1)])
    derived = m.set("a", 1.0)
    assert derived is not m
    assert type(derived["a"]) is float
    assert type(m["a"]) is int


# --- a lone collision node moves up after a delete ---------------------------------------


# 7 + 32: k parts from the collision one level below the root;
# 7 + (1 << 20): four levels of single-child nodes between them.
@pytest.mark.parametrize("neighbour_hash", [7 + 32, 7 + (1 << 20)])
def test_lone_collision_node_moves_up_after_a_delete(core, neighbour_hash):
    """Mutants remove-lone-collision-stays, delete-copying-lone-collision-stays,
    remove-collision-chain-stays (in tries)."""
    x, y = HashKey(7, "x"), HashKey(7, "y")
    k = HashKey(neighbour_hash, "k")
    o = HashKey(3, "o")
    with_k = padded(core, [(o, 0), (x, 1), (k, 2), (y, 3)])
    expected = padded(core, [(o, 0), (x, 1), (y, 3)])
    _assert_canonical(core, with_k.delete(k), expected)
    _assert_canonical(core, with_k.discard(k), expected)
    _assert_canonical(core, with_k - [k], expected)
    e = with_k.evolve()
    e[o] = 0  # own the root: the delete below edits in place
    del e[k]
    _assert_canonical(core, e.freeze(), expected)
    e = with_k.evolve()
    assert e.pop(k) == 2
    _assert_canonical(core, e.freeze(), expected)


# --- a collision node made by set() is never edited in place ------------------------------


def test_a_collision_node_made_by_set_is_never_edited_in_place(core):
    """Mutant collision-put-edits-unowned: ``champ_collision_put`` edits a node whose owner is None."""
    x, y, z = HashKey(7, "x"), HashKey(7, "y"), HashKey(7, "z")
    m = padded(core, [("o", 0)]).set(x, 1).set(y, 2)  # the collision node made by set()
    before = list(m.items())
    grown = m.set(z, 3)
    replaced = m.set(x, 10)
    assert list(m.items()) == before
    m._check()
    assert list(grown.items()) == before + [(z, 3)]
    assert list(replaced.items()) == FILLERS + [("o", 0), (x, 10), (y, 2)]
    grown._check()
    replaced._check()


# --- Evolver.popitem finds the entry by identity --------------------------------------------


def test_popitem_removes_the_last_key_when_its_hash_leads_to_another_key(core):
    """Mutant find-stored-any-key: ``champ_find_stored`` returns the entry in the
    slot the key's current hash reaches, whoever's it is."""
    other = HashKey(5, "other")
    key = ChangingHashKey(6)
    items = FILLERS + [(other, "o"), (key, "k")]
    e = core.frozendict(items).evolve()
    d = dict(items)
    key.h = 5  # now leads to other's slot
    assert e.popitem() == d.popitem() == (key, "k")
    assert list(e.items()) == list(d.items())
    assert e[other] == "o"
    e._check()


# --- a frozendict in tries is merged in its own order ---------------------------------------


@pytest.mark.parametrize("size", [20, 3000])  # the diff walk; a walk of the source's entries
def test_merging_a_frozendict_in_tries_follows_its_order(core, size):
    """Mutant merge-frozendict-trie-order: ``_merge_frozendict`` applies the
    source's entries in key-trie order (ascending int hashes here)."""
    fd = core.frozendict
    base = fd((k, 0) for k in range(size))
    source = fd((k, k) for k in range(size + 100, size + 80, -1))  # descending: not hash order
    source = source.set(5, "five")  # an existing key, changed
    expected = dict(base) | dict(source)
    assert list((base | source).items()) == list(expected.items())
    e = base.evolve()
    e.update(source)
    assert list(e.items()) == list(expected.items())
    assert list(fd(base, **{}).items()) == list(base.items())
    assert list(fd(source).items()) == list(dict(source).items())
    assert list((fd() | source).items()) == list(dict(source).items())


# --- a subclass's derivations are exact frozendicts ------------------------------------------


def test_derivations_of_a_subclass_in_tries_are_exact_even_when_nothing_changes(core):
    """Mutant discard-missing-returns-subclass: ``discard`` of a missing key
    returns ``self``, a subclass instance, on the trie path."""

    class Sub(core.frozendict):
        pass

    s = Sub(FILLERS + [("a", 1)])
    results = {
        "or": s | {"a": 1},
        "sub": s - ["z"],
        "and": s & list(s),
        "set same value": s.set("a", s["a"]),
        "discard missing": s.discard("z"),
    }
    for name, result in results.items():
        assert type(result) is core.frozendict, name
        assert result == s


# --- a collision node's values are compared ---------------------------------------------------


def test_collision_nodes_with_different_values_are_unequal(core):
    """Mutant collision-equal-no-value-check: ``_collision_equal`` matches the keys only."""
    x, y = HashKey(7, "x"), HashKey(7, "y")
    a = padded(core, [(x, 1), (y, 2), ("o", 0)])
    b = padded(core, [(x, 1), (y, 3), ("o", 0)])
    c = padded(core, [(y, 2), ("o", 0), (x, 1)])
    assert a != b and b != a
    assert a == c and c == a
    assert a.diff(b).changed == {y: (2, 3)}
