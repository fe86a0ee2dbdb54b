"""The key trie's edits find the old entry by what it holds (its key object and
seq), never by the entry object's identity: what lets the pure core store its
entries flat in the nodes on PyPy and build entry tuples on demand
(docs/design-decisions.md, "PyPy: the key trie's layout and the floors").
Checked on the pure key trie directly (with the hashes chosen, to reach
collision nodes), then through the public API of both cores with colliding
keys whose hash changes while they are stored."""

import pytest

from frozenmap._pycore import champ
from frozenmap._pycore.champ import (
    champ_build,
    champ_check,
    champ_entries,
    champ_find,
    champ_put,
    champ_remove,
)

# Keys are ints whose hash is chosen: entries are built by hand.
H_A = 0x21  # digit 1, then 1
H_B = 0x41  # digit 1, then 2: a child under digit 1
H_C = 0x3  # digit 3


def _entries(root):
    return sorted(champ_entries(root), key=lambda e: e[1])


def _build(entries):
    root = champ_build(entries, None)
    champ_check(root)
    return root


@pytest.mark.parametrize("owner", [None, object()], ids=["copying", "owned"])
def test_put_replaces_the_entry_a_copy_describes(owner):
    entries = [(H_A, 0, "a", 1), (H_B, 1, "b", 2), (H_C, 2, "c", 3)]
    root = champ_build(entries, owner)
    for i, (h, seq, key, _) in enumerate(entries):
        old = champ_find(root, h, key)
        copy = tuple(list(old))  # an equal tuple, not the stored object
        assert copy is not old
        root = champ_put(root, 0, (h, seq, key, 10 + i), copy, owner)
        champ_check(root)
    assert _entries(root) == [(H_A, 0, "a", 10), (H_B, 1, "b", 11), (H_C, 2, "c", 12)]


@pytest.mark.parametrize("owner", [None, object()], ids=["copying", "owned"])
def test_remove_takes_out_the_entry_a_copy_describes(owner):
    entries = [(H_A, 0, "a", 1), (H_B, 1, "b", 2), (H_C, 2, "c", 3)]
    root = champ_build(entries, owner)
    root = champ_remove(root, 0, (H_B, 1, "b", 2), owner)
    champ_check(root)
    assert _entries(root) == [(H_A, 0, "a", 1), (H_C, 2, "c", 3)]
    root = champ_remove(root, 0, (H_A, 0, "a", 1), owner)
    assert _entries(root) == [(H_C, 2, "c", 3)]


class Key:
    """One key object stored twice in one collision node (as dict keeps a key
    whose hash changed between two insertions): only the seq tells the two
    entries apart."""


@pytest.mark.parametrize("owner", [None, object()], ids=["copying", "owned"])
def test_collision_edits_tell_one_key_object_apart_by_seq(owner):
    k = Key()
    h = 0x5
    entries = [(h, 0, k, "first"), (h, 1, "other", 0), (h, 2, k, "second")]
    root = _build(entries) if owner is None else champ_build(entries, owner)
    # Replace the second of k's entries: the first must stay as it was.
    root = champ_put(root, 0, (h, 2, k, "new"), (h, 2, k, "second"), owner)
    champ_check(root)
    assert _entries(root) == [(h, 0, k, "first"), (h, 1, "other", 0), (h, 2, k, "new")]
    # Remove the first: the second (now "new") stays.
    root = champ_remove(root, 0, (h, 0, k, "first"), owner)
    champ_check(root)
    assert _entries(root) == [(h, 1, "other", 0), (h, 2, k, "new")]


def test_an_entry_not_stored_is_an_error_not_a_wrong_edit():
    k = Key()
    h = 0x5
    root = _build([(h, 0, k, 1), (h, 1, "other", 2)])
    with pytest.raises(AssertionError):
        champ_remove(root, 0, (h, 7, k, 1), None)  # k is stored, but not at seq 7
    with pytest.raises(AssertionError):
        champ_put(root, 0, (h, 7, k, 3), (h, 7, k, 1), None)


def test_collect_gives_every_entry_once():
    entries = [(i * 0x9E3779B97F4A7C15 & keytrie_mask(), i, "k%d" % i, i) for i in range(300)]
    entries.append((entries[5][0], 300, "same-hash", 0))  # a collision node
    root = _build(entries)
    out = []
    champ.champ_collect(root, out)
    assert sorted(out, key=lambda e: e[1]) == sorted(entries, key=lambda e: e[1])


def keytrie_mask():
    return (1 << 64) - 1


class Shifty:
    """Colliding keys (one hash bucket) whose hash can be changed while one is
    stored: the map then holds the object twice, under two seqs."""

    def __init__(self, name):
        self.name = name
        self.h = 7

    def __hash__(self):
        return self.h

    def __eq__(self, other):
        return self is other

    def __repr__(self):
        return "Shifty(%s)" % self.name


def _model_set(model, key, value):
    """``model``: [stored hash, key, value] in insertion order; a key is
    found by its current hash, then identity (the cores' rule: the stored
    hash first)."""
    for item in model:
        if item[0] == hash(key) and item[1] is key:
            item[2] = value
            return
    model.append([hash(key), key, value])


def _model_del(model, key):
    for i, item in enumerate(model):
        if item[0] == hash(key) and item[1] is key:
            del model[i]
            return
    raise KeyError(key)


@pytest.mark.parametrize("fill", [1, 40], ids=["flat", "tries"])
def test_evolver_edits_of_a_key_stored_twice(core, fill):
    a, b = Shifty("a"), Shifty("b")
    e = core.frozendict({a: 1, b: 2}).evolve()
    model = [[7, a, 1], [7, b, 2]]
    for i in range(fill):
        e["f%d" % i] = i
        _model_set(model, "f%d" % i, i)
    steps = [
        (8, "set", 4),  # a is stored under hash 7 and looked up under 8: a second entry
        (7, "set", 5),  # the first entry (hash 7) takes the value; the second stays
        (7, "del", None),  # the first one goes
        (8, "set", 6),  # the second one takes the value
        (8, "del", None),
    ]
    for h, op, value in steps:
        a.h = h
        if op == "set":
            e[a] = value
            _model_set(model, a, value)
        else:
            del e[a]
            _model_del(model, a)
        version = e.freeze()
        if fill > 8:  # (a flat version's _check refuses a key object held twice)
            version._check()
        assert [(k, v) for k, v in version.items()] == [(k, v) for _, k, v in model]
        assert [v for _, k, v in model if k is a] == [v for k, v in version.items() if k is a]
        e = version.evolve()
    assert len(e) == fill + 1
