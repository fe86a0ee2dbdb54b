"""Rules no other test pinned down, each with the plausible slip it catches.

Every test here fails on a hand-made mutant of the pure core, named in its
docstring: a plausible slip that no other test caught.  The mutants are in
``scripts/mutants.py``'s table, which applies each to a copy of the package
and runs the tests (``--new test_rules.py`` measures what this file adds).  The
rules, in the order below:

- a value's ``MemoryError`` (or ``KeyboardInterrupt``) from ``__hash__`` while
  a hashed version's accumulator is updated reaches the caller (docs/spec.md
  section 4); an ordinary exception only makes the hash unknown;
- a lookup compares the stored hash before it calls any key's ``__eq__``;
- ``in`` on ``values()`` and ``items()``, ``==`` and ``diff`` try identity
  before equality (a NaN equals itself there, as in ``dict``);
- an iterator's ``__length_hint__`` counts down as it advances;
- ``Evolver(subclass_instance).freeze()`` is an exact ``frozendict``;
- a failed ``Evolver.update`` restores the hash accumulator with the tries;
- ``freeze()`` keeps a value only if freezing returned that very object, not
  an equal one (a ``dict`` equals its frozendict);
- a ``bytes`` path is a ``TypeError``, like a ``str`` path;
- a node left holding only a collision node after a delete gives way to it
  (the canonical shape that ``==`` and ``diff`` compare position by position);
- an edit of an Evolver whose order-trie step fails (``MemoryError``) undoes
  its key-trie step: the pure core's is injected by replacing the order-trie
  function, the C core's by failing allocations (``_testcapi``), so the rule
  is checked on every Python the suite runs on.

Then the rules the mutant run found unchecked: every Evolver edit keeps a
hashed source's accumulator; ``keys()`` is read as ``dict_merge`` reads it
(an exact list walked as it is, anything else read first), and a dict
subclass with its own ``__iter__`` through ``keys()`` and ``[]``; a collision
node's values are compared, and one made by ``set()`` is never edited in
place; an evolver that owns its nodes survives a failed ``update`` intact,
and a ``freeze()`` taken inside it is not kept; ``==`` with an Evolver that
changes size raises; a subclass's derivations are exact frozendicts even when
nothing changes; pickling keeps a mangled slot; ``json_default`` refuses other
mappings; ``freeze`` keeps a frozen namedtuple; patches and ``items() ^``
match values by identity first.
"""

import gc
import operator

import pytest
from keys import Crasher, CrashError, EqBomb, HashKey

import frozenmap._pycore.transient as pure_transient

FAR = 1 << 40
"""Added to a hash, a second hash that agrees with it on the first eight digits."""


class MemoryHash:
    """A value whose ``__hash__`` raises ``error`` (``MemoryError`` by default)."""

    def __init__(self, error=MemoryError):
        self.error = error

    def __hash__(self):
        raise self.error("no memory to hash this value")


class CountingEq:
    """A key with a chosen hash whose ``__eq__`` counts its calls and raises."""

    calls = 0

    def __init__(self, hash_value):
        self.hash_value = hash_value

    def __hash__(self):
        return self.hash_value

    def __eq__(self, other):
        CountingEq.calls += 1
        raise CrashError("__eq__ called across different hashes")

    __ne__ = __eq__


# --- a value's MemoryError from __hash__ --------------------------------------------


def _hashed(core, **items):
    m = core.frozendict(items)
    hash(m)
    return m


@pytest.mark.parametrize("error", [MemoryError, KeyboardInterrupt])
def test_value_hash_memory_error_propagates_from_derivations(core, error):
    """Mutants acc-memoryerror-swallowed, acc-baseexception-swallowed: ``hashing_acc_replace`` swallows them."""
    m = _hashed(core, a=1, b=2)
    bad = MemoryHash(error)
    with pytest.raises(error):
        m.set("c", bad)
    with pytest.raises(error):
        m.set("a", bad)
    with pytest.raises(error):
        m | {"c": bad}
    e = m.evolve()
    with pytest.raises(error):
        e["c"] = bad
    with pytest.raises(error):
        e["a"] = bad
    with pytest.raises(error):
        e.setdefault("c", bad)
    with pytest.raises(error):
        e.update(c=bad)
    assert e.freeze() is m
    assert list(m.items()) == [("a", 1), ("b", 2)]
    m._check()


def test_value_hash_ordinary_error_leaves_the_hash_unknown(core):
    """Mutant acc-ordinary-error-fails-edit: ``hashing_acc_replace`` re-raises a value's ordinary exception."""
    m = _hashed(core, a=1)
    bad = MemoryHash(ValueError)
    derived = m.set("b", bad)  # a frozendict may hold unhashable values
    assert list(derived.items()) == [("a", 1), ("b", bad)]
    with pytest.raises(ValueError):
        hash(derived)
    e = m.evolve()
    e["b"] = bad
    with pytest.raises(ValueError):
        hash(e.freeze())
    # Once the value is gone again, the hash is the right one.
    assert hash(derived.delete("b")) == hash(core.frozendict(a=1))


# --- the stored hash before __eq__ ---------------------------------------------------


def test_lookup_compares_the_stored_hash_before_eq(core):
    """Mutant find-no-hash-check: ``champ_find`` drops ``if entry[0] == h`` before ``__eq__``."""
    stored = EqBomb(1, "stored")
    m = core.frozendict({stored: "v"})
    probe = EqBomb(1 + FAR, "probe")  # same slot, another hash
    assert probe not in m
    assert m.get(probe, "none") == "none"
    with pytest.raises(KeyError):
        m[probe]
    assert m.discard(probe) is m
    with pytest.raises(KeyError):
        m.delete(probe)
    e = m.evolve()
    assert probe not in e
    assert e.pop(probe, "none") == "none"
    assert probe not in m.keys()
    assert (probe, "v") not in m.items()


def test_set_compares_the_stored_hash_before_eq(core):
    """Mutant set-copying-no-hash-check: ``champ_set_copying`` drops ``if old[0] == h``."""
    stored = EqBomb(1, "stored")
    m = core.frozendict({stored: "v"})
    probe = EqBomb(1 + FAR, "probe")
    derived = m.set(probe, "w")
    assert len(derived) == 2
    derived._check()
    e = m.evolve()
    e[probe] = "w"
    assert e.freeze() == derived


def test_delete_compares_the_stored_hash_before_eq(core):
    """Mutant delete-copying-no-hash-check: ``champ_delete_copying`` drops ``if old[0] != h``."""
    m = core.frozendict({EqBomb(1, "stored"): "v", "x": 1})
    with pytest.raises(KeyError):
        m.delete(EqBomb(1 + FAR, "probe"))
    assert m - [EqBomb(1 + FAR, "probe")] == m


def test_collision_lookup_compares_the_hash_before_eq(core):
    """Mutant collision-find-no-hash-check: ``_collision_find`` drops ``if node[4][0] == h``."""
    m = core.frozendict({HashKey(7, "x"): 1, HashKey(7, "y"): 2})
    CountingEq.calls = 0
    probe = CountingEq(7 + FAR)  # reaches the collision node, another full hash
    assert probe not in m
    assert m.get(probe) is None
    assert m.discard(probe) is m
    assert len(m.set(probe, 3)) == 3
    assert CountingEq.calls == 0


def test_equality_compares_stored_hashes_before_keys(core):
    """Mutant same-pair-no-hash-check: ``champ_same_pair`` drops ``a[0] != b[0]`` before the keys' ``==``."""
    a = core.frozendict({EqBomb(1, "a"): "v"})
    b = core.frozendict({EqBomb(1 + FAR, "b"): "v"})
    assert a != b
    assert not a == b
    d = a.diff(b)
    assert len(d.added) == 1 and len(d.removed) == 1 and not d.changed


# --- identity before equality --------------------------------------------------------


def test_values_membership_tries_identity_first(core):
    """Mutant values-contains-no-identity: ``frozendict_values.__contains__`` tests ``v == value`` only."""
    nan = float("nan")
    m = core.frozendict(a=nan, b=1)
    assert nan in m.values()
    assert float("nan") not in m.values()
    assert nan in m.evolve().values()
    bomb = EqBomb(0)
    assert bomb in core.frozendict(a=bomb).values()


def test_items_membership_tries_identity_first(core):
    """Mutant items-contains-no-identity: ``frozendict_items.__contains__`` tests ``value == item[1]`` only."""
    nan = float("nan")
    m = core.frozendict(a=nan)
    assert ("a", nan) in m.items()
    assert ("a", float("nan")) not in m.items()
    assert ("a", nan) in m.evolve().items()
    bomb = EqBomb(0)
    assert ("a", bomb) in core.frozendict(a=bomb).items()


def test_equality_and_diff_try_identity_first(core):
    """Mutants same-pair-no-identity, equal-no-identity, diff-lists-no-identity, generic-diff-no-identity."""
    nan = float("nan")
    m = core.frozendict(a=nan, b=1)
    other = core.frozendict(b=1, a=nan)  # built apart: no shared nodes
    assert m == other
    assert m == {"a": nan, "b": 1}
    assert m.evolve() == {"b": 1, "a": nan}
    assert m != {"a": float("nan"), "b": 1}
    assert not m.diff(other).changed
    assert not m.diff(other.set("c", 2)).changed
    assert not m.diff({"a": nan, "b": 1}).changed


# --- __length_hint__ -----------------------------------------------------------------


@pytest.mark.parametrize("view", ["keys", "values", "items"])
@pytest.mark.parametrize("direction", [iter, reversed])
def test_iterator_length_hint_counts_down(core, view, direction):
    """Mutant length-hint-static: ``frozendict_iterator.__next__`` drops ``self._remaining -= 1``."""
    m = core.frozendict.fromkeys(range(20), 0)
    for mapping in (m, m.evolve()):
        it = direction(getattr(mapping, view)())
        assert operator.length_hint(it) == 20
        for left in range(19, -1, -1):
            next(it)
            assert operator.length_hint(it) == left
        assert list(it) == []
        assert operator.length_hint(it) == 0
    it = iter(m)
    next(it)
    assert operator.length_hint(it) == 19


# --- Evolver of a subclass instance --------------------------------------------------


def test_evolver_of_a_subclass_freezes_to_an_exact_frozendict(core):
    """Mutant evolver-frozen-subclass: ``Evolver.__init__`` keeps a subclass instance as its freeze()."""

    class Sub(core.frozendict):
        pass

    s = Sub(a=1)
    for e in (core.Evolver(s), s.evolve()):
        frozen = e.freeze()
        assert type(frozen) is core.frozendict
        assert frozen == {"a": 1}
        e["b"] = 2
        del e["b"]  # edits that cancel out
        assert type(e.freeze()) is core.frozendict


# --- a failed Evolver.update restores the accumulator ---------------------------------


def _pairs_then_fail(pairs):
    yield from pairs
    raise CrashError("the pairs ran out")


def test_failed_update_restores_the_hash_accumulator(core):
    """Mutant update-no-acc-restore: ``Evolver.update``'s restore puts back all but ``self.acc``."""
    m = _hashed(core, a=1, b=2)
    crasher = Crasher("k")
    in_a_dict = {"c": 3, "a": 10, crasher: 11}
    crasher.crash_hash = True  # the third key fails
    for source in (_pairs_then_fail([("c", 3), ("a", 10)]), in_a_dict):
        e = m.evolve()
        with pytest.raises(CrashError):
            e.update(source)
        e["z"] = 26  # publish something new, not the restored source
        frozen = e.freeze()
        expected = core.frozendict(a=1, b=2, z=26)
        assert frozen == expected
        assert hash(frozen) == hash(expected) == hash(frozenset(expected.items()))
        frozen._check()


# --- freeze(): identity, not equality --------------------------------------------------


def test_freeze_replaces_values_equal_to_their_frozen_form(core):
    """Mutant freeze-mapping-by-equality: ``_freeze_mapping`` keeps values by ``fv != v``."""
    from frozenmap._freeze import freeze

    m = core.frozendict(a={"x": 1}, b={1, 2}, c=(1, 2))
    frozen = freeze(m)
    assert type(frozen["a"]) is not dict and frozen["a"] == {"x": 1}
    assert type(frozen["b"]) is frozenset
    assert frozen["c"] is m["c"]  # already frozen: the very object stays
    assert freeze(frozen) is frozen


def test_freeze_sequence_replaces_items_equal_to_their_frozen_form(core):
    """Mutant freeze-items-by-equality: ``_same_items`` compares ``a == b``."""
    from frozenmap._freeze import freeze

    t = ({1}, {"x": 1})
    frozen = freeze(t)
    assert type(frozen[0]) is frozenset
    assert type(frozen[1]) is not dict
    inner = (1, 2)
    assert freeze((inner,))[0] is inner


# --- bytes paths ----------------------------------------------------------------------


@pytest.mark.parametrize("path", [b"ab", b"a"])
def test_bytes_path_is_a_type_error(core, path):
    """Mutant bytes-path-accepted: ``path_keys`` rejects only ``str`` (b"a" reads as the key 97)."""
    m = core.frozendict({97: core.frozendict({98: 1}), "a": 1})
    for target in (m, m.evolve()):
        with pytest.raises(TypeError, match="bytes"):
            target.get_in(path)
        with pytest.raises(TypeError, match="bytes"):
            target.set_in(path, 0)
        with pytest.raises(TypeError, match="bytes"):
            target.update_in(path, lambda v: v)
        with pytest.raises(TypeError, match="bytes"):
            target.delete_in(path)
    assert m.get_in([97, 98]) == 1


# --- a lone collision node moves up after a delete --------------------------------------


def _collision_and_neighbour(core, neighbour_hash):
    """x and y collide (hash 7); k shares a prefix with them; o is elsewhere."""
    x, y = HashKey(7, "x"), HashKey(7, "y")
    k = HashKey(neighbour_hash, "k")
    o = HashKey(3, "o")
    with_k = core.frozendict([(o, 0), (x, 1), (k, 2), (y, 3)])
    expected = core.frozendict([(o, 0), (x, 1), (y, 3)])
    return with_k, expected, k


def _assert_canonical(core, result, expected):
    result._check()
    assert result == expected and expected == result
    d = result.diff(expected)
    assert not (d.added or d.removed or d.changed)
    assert hash(result) == hash(expected)


# 7 + 32: k parts from the collision one level below the root;
# 7 + (1 << 20): four levels of single-child nodes between them.
@pytest.mark.parametrize("neighbour_hash", [7 + 32, 7 + (1 << 20)])
def test_lone_collision_node_moves_up_after_a_delete(core, neighbour_hash):
    """Mutants remove-lone-collision-stays, delete-copying-lone-collision-stays, remove-collision-chain-stays."""
    with_k, expected, k = _collision_and_neighbour(core, neighbour_hash)
    _assert_canonical(core, with_k.delete(k), expected)
    _assert_canonical(core, with_k.discard(k), expected)
    _assert_canonical(core, with_k - [k], expected)
    e = with_k.evolve()
    e[HashKey(3, "o")] = 0  # own the root: the delete below edits in place
    del e[k]
    _assert_canonical(core, e.freeze(), expected)
    e = with_k.evolve()
    assert e.pop(k) == 2
    _assert_canonical(core, e.freeze(), expected)
    # One more step: the shape a later edit starts from is canonical too.
    z = HashKey(7 + 64, "z")
    _assert_canonical(
        core, with_k.delete(k).set(z, 9), core.frozendict([(HashKey(3, "o"), 0), (z, 9)]) | expected
    )


# --- an order-trie failure undoes the key-trie step -------------------------------------


def _owned_evolver(core):
    """An evolver that owns every node of its tries, and the items it holds.

    (The items are not read from it: iterating an evolver seals it, and its
    next edit would copy the paths instead of editing them in place.)
    """
    keys = ["k%d" % i for i in range(40)]
    e = core.frozendict.fromkeys(keys, 0).evolve()
    for i, key in enumerate(keys):
        e[key] = i  # copies (and so owns) every path
    e["extra"] = -1
    return e, [(key, i) for i, key in enumerate(keys)] + [("extra", -1)]


_EDITS = {
    "insert": lambda e: e.__setitem__("new", 1),
    "replace": lambda e: e.__setitem__("k7", "seven"),
    "remove": lambda e: e.__delitem__("k7"),
    "popitem": lambda e: e.popitem(),
    "setdefault": lambda e: e.setdefault("new", 1),
}
_ORDER_STEP = {
    "insert": "order_insert",
    "replace": "order_replace",
    "remove": "order_remove",
    "popitem": "order_remove",
    "setdefault": "order_insert",
}


def _failing(*args, **kwargs):
    raise MemoryError("injected: the order-trie step")


def _assert_unchanged(e, items):
    assert list(e.items()) == items
    assert len(e) == len(items)
    for key, value in items:
        assert e[key] is value
    assert "new" not in e
    e._check()


@pytest.mark.parametrize("edit", sorted(_EDITS))
def test_order_trie_failure_undoes_the_key_trie_edit(core, edit, monkeypatch):
    """Mutants put-new-no-undo, assoc-replace-no-undo, remove-entry-no-undo: the key-trie undo dropped."""
    if core.name == "python":
        e, items = _owned_evolver(core)
        monkeypatch.setattr(pure_transient, _ORDER_STEP[edit], _failing)
        with pytest.raises(MemoryError):
            _EDITS[edit](e)
        monkeypatch.undo()
        _assert_unchanged(e, items)
        _EDITS[edit](e)  # and it still works
        e._check()
        return
    _testcapi = pytest.importorskip("_testcapi")
    if not hasattr(_testcapi, "set_nomemory"):
        pytest.skip("_testcapi has no set_nomemory")
    # Every allocation from number n + 1 on fails, for n = 0, 1, ... until the
    # edit completes: each allocation point of the edit fails first once.
    for start in range(1000):
        e, items = _owned_evolver(core)
        gc.disable()
        _testcapi.set_nomemory(start, 0)
        try:
            _EDITS[edit](e)
            failed = False
        except MemoryError:
            failed = True
        finally:
            _testcapi.remove_mem_hooks()
            gc.enable()
        if not failed:
            e._check()
            break
        _assert_unchanged(e, items)
    else:  # pragma: no cover
        raise AssertionError("the edit never completed")


# --- popitem never runs a key's code -----------------------------------------------------


def test_popitem_never_iterates_a_tuple_subclass_key(core):
    """Mutant pure-hash-subclass-iter: ``hashing_pure_key_hash`` walks a tuple key with its own ``__iter__``."""

    class Pair(tuple):
        def __iter__(self):
            raise CrashError("a tuple subclass's __iter__ ran")

    key = Pair((1, 2))
    e = core.frozendict({"a": 1, key: 2}).evolve()
    item = e.popitem()
    assert item[0] is key and item[1] == 2
    assert len(e) == 1 and key not in e
    e._check()


# --- every Evolver edit keeps the hash of a hashed source right ---------------------------


_EVOLVER_EDITS_ON_HASHED = {
    "setdefault": lambda e: e.setdefault("new", 5),
    "clear then set": lambda e: (e.clear(), e.__setitem__("a", 1)),
    "popitem": lambda e: e.popitem(),
    "pop": lambda e: e.pop("b"),
    "update": lambda e: e.update({"a": 10, "new": 5}, other=6),
    "set_in": lambda e: e.set_in(["sub", "x"], 2),
    "update_in": lambda e: e.update_in(["sub", "y"], lambda v: v + 1, default=0),
    "delete_in": lambda e: e.delete_in(["sub", "x"]),
}


@pytest.mark.parametrize("edit", sorted(_EVOLVER_EDITS_ON_HASHED))
def test_evolver_edits_keep_the_hash_of_a_hashed_source(core, edit):
    """Mutants setdefault-acc-unchanged, clear-keeps-acc: an edit that leaves the accumulator behind."""
    m = core.frozendict(a=1, b=2, sub=core.frozendict(x=1))
    hash(m)
    e = m.evolve()
    _EVOLVER_EDITS_ON_HASHED[edit](e)
    frozen = e.freeze()
    assert hash(frozen) == hash(core.frozendict(list(frozen.items())))
    frozen._check()


# --- dict(mapping) reads keys() as dict_merge does -------------------------------------


class GrowingMapping:
    """A mapping whose ``__getitem__`` appends to the list its ``keys()`` walks.

    ``keys()`` returns that list itself (``"list"``), an iterator over it
    (``"iter"``) or a list subclass (``"sub"``).  dict walks an exact list as it
    is (PyMapping_Keys returns it unchanged) and reads anything else to the
    end first.
    """

    def __init__(self, kind):
        self.kind = kind
        self.names = ["a", "b"] if kind != "sub" else type("Names", (list,), {})(["a", "b"])

    def keys(self):
        return iter(self.names) if self.kind == "iter" else self.names

    def __getitem__(self, key):
        if len(self.names) < 6:
            self.names.append(key + "!")
        return key.upper()


@pytest.mark.parametrize("kind", ["list", "iter", "sub"])
def test_mapping_keys_are_read_as_dict_reads_them(core, kind):
    """Mutant merge-keys-interleaved: ``merge_into`` looks keys up while it walks an iterator."""
    expected = dict(GrowingMapping(kind))
    assert len(expected) == (6 if kind == "list" else 2)
    result = core.frozendict(GrowingMapping(kind))
    assert list(result.items()) == list(expected.items())
    e = core.frozendict(z=0).evolve()
    e.update(GrowingMapping(kind))
    assert list(e.items()) == [("z", 0)] + list(expected.items())


# --- a delete by the stored key object itself ---------------------------------------------


def test_delete_finds_the_stored_key_object_by_identity(core):
    """Mutant delete-copying-no-identity: ``champ_delete_copying`` tests ``k == key`` only."""
    nan = float("nan")
    bomb = EqBomb(5)
    m = core.frozendict({nan: 1, bomb: 2, "x": 3})
    assert list(m.delete(nan).items()) == [(bomb, 2), ("x", 3)]
    assert list(m.delete(bomb).items()) == [(nan, 1), ("x", 3)]
    assert list(m.discard(bomb).items()) == [(nan, 1), ("x", 3)]
    e = m.evolve()
    del e[bomb]
    del e[nan]
    assert list(e.items()) == [("x", 3)]


# --- an Evolver's iterator walks a snapshot -------------------------------------------------


def test_evolver_iterator_shows_the_values_it_started_with(core):
    """Mutant iter-snapshot-no-seal: ``Evolver._items`` walks nodes a later edit changes in place."""
    e = core.frozendict.fromkeys(range(40), 0).evolve()
    for i in range(40):
        e[i] = i  # the evolver owns every node now
    items = iter(e.items())
    assert next(items) == (0, 0)
    for i in range(40):
        e[i] = -i  # no size change: the walk goes on, over what it started with
    assert list(items) == [(i, i) for i in range(1, 40)]
    assert list(e.values()) == [-i for i in range(40)]


# --- a subclass instance's derivations are exact frozendicts ---------------------------------


def test_derivations_of_a_subclass_are_exact_even_when_nothing_changes(core):
    """Mutants or-/sub-/and-/set-same-value-/discard-missing-returns-subclass: ``self`` for ``_exact()``."""

    class Sub(core.frozendict):
        pass

    s = Sub(a=1, b=2)
    results = {
        "or": s | {"a": 1},
        "sub": s - ["z"],
        "and": s & ["a", "b"],
        "set same value": s.set("a", s["a"]),
        "discard missing": s.discard("z"),
        "copy": s.copy(),
    }
    for name, result in results.items():
        assert type(result) is core.frozendict, name
        assert result == s
    assert Sub(s) is not s and type(Sub(s)) is Sub  # constructor-shares-subclass
    assert core.frozendict(s) is not s


# --- cold paths: a subclass's pickle state and deep copy --------------------------------------


def test_pickle_keeps_a_mangled_slot_of_an_underscored_class(core):
    """Mutant slots-mangling-unstripped: ``subclass_state`` mangles ``__x`` with the leading underscores kept."""
    import pickle

    namespace = {"__slots__": ("__secret", "plain"), "__module__": __name__}
    cls = type("__Hidden", (core.frozendict,), namespace)
    globals()["__Hidden"] = cls  # so that pickle finds the class
    try:
        m = cls(a=1)
        m._Hidden__secret = "s"
        m.plain = "p"
        copied = pickle.loads(pickle.dumps(m))
        assert copied._Hidden__secret == "s" and copied.plain == "p"
    finally:
        del globals()["__Hidden"]


def test_deepcopy_of_a_subclass_copies_its_values(core):
    """Mutant reconstruct-no-memo: ``_cold.reconstruct`` passes no memo, so deepcopy is shallow."""
    import copy

    class Sub(core.frozendict):
        pass

    inner = [1]
    s = Sub(a=inner)
    s_copy = copy.deepcopy(s)
    assert type(s_copy) is Sub and s_copy == s
    assert s_copy["a"] is not inner


def test_json_default_refuses_other_mappings(core):
    """Mutant json-default-any-mapping: ``json_default`` serializes anything with ``keys``."""
    from types import MappingProxyType

    from frozenmap import json_default

    assert json_default(core.frozendict(a=1)) == {"a": 1}
    with pytest.raises(TypeError, match="mappingproxy"):
        json_default(MappingProxyType({"a": 1}))


# --- collision nodes: values compared, published nodes never edited --------------------------


def test_collision_nodes_with_different_values_are_unequal(core):
    """Mutant collision-equal-no-value-check: ``_collision_equal`` matches the keys only."""
    x, y = HashKey(7, "x"), HashKey(7, "y")
    a = core.frozendict([(x, 1), (y, 2), ("o", 0)])
    b = core.frozendict([(x, 1), (y, 3), ("o", 0)])
    c = core.frozendict([(y, 2), ("o", 0), (x, 1)])
    assert a != b and b != a
    assert a == c and c == a
    assert a.diff(b).changed == {y: (2, 3)}


def test_a_collision_node_made_by_set_is_never_edited_in_place(core):
    """Mutant collision-put-edits-unowned: ``champ_collision_put`` edits a node whose owner is None, as the caller's."""
    x, y, z = HashKey(7, "x"), HashKey(7, "y"), HashKey(7, "z")
    m = core.frozendict(o=0).set(x, 1).set(y, 2)  # the collision node made by set()
    before = list(m.items())
    grown = m.set(z, 3)
    replaced = m.set(x, 10)
    assert list(m.items()) == before
    assert m == core.frozendict(before) and len(m) == 3
    m._check()
    assert list(grown.items()) == before + [(z, 3)]
    assert list(replaced.items()) == [("o", 0), (x, 10), (y, 2)]
    grown._check()
    replaced._check()


# --- a dict subclass that overrides __iter__ is read through keys() and [] --------------------


def test_dict_subclass_with_its_own_iter_is_read_like_a_mapping(core):
    """Mutant merge-dict-subclass-iter-ignored: any dict subclass read from its storage."""

    class Doubling(dict):
        def __iter__(self):
            return iter(dict.keys(self))

        def __getitem__(self, key):
            return 2 * dict.__getitem__(self, key)

    source = Doubling(a=1, b=2)
    expected = dict(source)  # dict_merge: keys() and [] when __iter__ is overridden
    assert expected == {"a": 2, "b": 4}
    assert core.frozendict(source) == expected
    e = core.frozendict(z=0).evolve()
    e.update(source)
    assert e == {"z": 0, **expected}
    assert core.frozendict(z=0) | source == {"z": 0, **expected}


# --- a failed update of an evolver that owns its nodes --------------------------------------


def test_failed_update_of_an_owning_evolver_leaves_it_as_it_was(core):
    """Mutant update-no-seal: ``Evolver.update`` merges into the nodes it saved, in place."""
    e, items = _owned_evolver(core)
    with pytest.raises(CrashError):
        e.update(_pairs_then_fail([("k3", "three"), ("new", 1), ("k30", "thirty")]))
    assert list(e.items()) == items
    assert "new" not in e and e["k3"] == 3
    e._check()


# --- == on an evolver that changes size meanwhile -------------------------------------------


class Shrinking:
    """A value whose ``__eq__`` deletes a key of the evolver it is stored in."""

    def __init__(self, evolver, victim):
        self.evolver = evolver
        self.victim = victim

    def __eq__(self, other):
        self.evolver.pop(self.victim, None)
        return True

    __hash__ = None


def test_evolver_equality_raises_when_it_changes_size(core):
    """Mutant equal-no-resize-check: ``mapping_equal`` goes on after an Evolver changed size."""
    e = core.Evolver()
    e["a"] = Shrinking(e, "b")
    e["b"] = 2
    with pytest.raises(RuntimeError, match="changed size"):
        e == {"a": object(), "b": 2}
    # The evolver on the right: only the check after each comparison sees it.
    e = core.Evolver({"a": 1, "b": 2})
    m = core.frozendict(a=Shrinking(e, "b"), b=2)
    with pytest.raises(RuntimeError, match="changed size"):
        m == e


# --- freeze(): a namedtuple of frozen items is kept --------------------------------------------


def test_freeze_keeps_a_frozen_namedtuple_and_its_type(core):
    """Mutant freeze-namedtuple-rebuilt: ``_freeze_sequence`` rebuilds every namedtuple."""
    from collections import namedtuple

    from frozenmap._freeze import freeze

    Point = namedtuple("Point", "x y")
    p = Point(1, (2, 3))
    assert freeze(p) is p
    thawed = Point(1, [2, 3])
    frozen = freeze(thawed)
    assert type(frozen) is Point and frozen == Point(1, (2, 3))


# --- patches: a value that is not equal to itself --------------------------------------------


def test_diff_apply_matches_values_by_identity_first(core):
    """Mutant differs-no-identity: ``Diff.apply`` sees a conflict where the very object is there."""
    nan = float("nan")
    old = core.frozendict(a=nan, b=1)
    new = core.frozendict(a=2, b=nan)
    patch = old.diff(new)
    assert patch.apply(old) == {"a": 2, "b": nan}
    assert patch.invert().apply(patch.apply(old)) == old


def test_freeze_from_inside_a_failed_update_is_not_kept(core):
    """Mutant freeze-inside-edit-kept: a freeze() taken mid-update stays cached after the restore."""
    e = core.frozendict(a=1).evolve()
    e["b"] = 2  # no freeze() cached now
    seen = []

    def pairs():
        yield ("x", 1)
        seen.append(e.freeze())  # from inside the update: whatever it shows
        raise CrashError("the pairs ran out")

    with pytest.raises(CrashError):
        e.update(pairs())
    assert "x" not in e
    assert e.freeze() == {"a": 1, "b": 2}
    assert len(seen) == 1


def test_diff_apply_names_a_missing_removed_key(core):
    """Mutant apply-removed-missing-ignored: a missing key reported as holding another value."""
    patch = core.frozendict(a=1, b=2).diff(core.frozendict(b=2))
    with pytest.raises(ValueError, match="conflict at key 'a': it is missing"):
        patch.apply(core.frozendict(b=2))


def test_items_xor_matches_values_by_identity_first(core):
    """Mutant items-xor-no-identity: ``_items_xor`` compares values with ``==`` only."""
    nan = float("nan")
    a = core.frozendict(k=nan, x=1)
    b = core.frozendict(k=nan, y=2)
    expected = dict(a).items() ^ dict(b).items()
    assert expected == {("x", 1), ("y", 2)}
    assert a.items() ^ b.items() == expected
    assert a.items() ^ dict(b).items() == expected
