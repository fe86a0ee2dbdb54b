"""Small maps as flat ordered arrays: a frozendict of at most ``FLAT_MAX`` keys.

A frozendict is *flat* exactly when it holds ``FLAT_MAX`` keys or fewer:
every path that makes one (the constructor, ``set``, ``delete``, ``|``,
``-``, ``&``, ``freeze()``, unpickling, ...) yields the flat form at <= 32 keys
and the two tries at >= 33.  A flat version holds, in insertion order, the
stored hash, the key and the value of each entry, and nothing else: no
sequence numbers, no trie nodes (Clojure's ``PersistentArrayMap`` does the
same below 9 entries).  32, not 8: a version derived from a map of 9-32 keys
then costs its values only (the numbers, and what a lookup at 17-32 keys
pays in this core, in docs/design-decisions.md, "Small maps: the flat form
and FLAT_MAX"); both cores must agree on the limit.  In this core the two
trie slots of a frozendict hold

- ``_root``: the tuple of the stored key hashes ``(h0, h1, ...)``, and
- ``_order``: the tuple of the items ``((k0, v0), (k1, v1), ...)``,

so a lookup scans the hashes with the interpreter's own ``in`` and
``tuple.index`` (ints compared with ints: no user code), iteration is a walk
of one tuple, and a version with one value replaced shares the hashes.  (The
C core keeps an array of the values and a key block of the (hash, key)
pairs, which a version made by a value change shares; the functions below
are mirrored by ``frozenmap/_ccore/flat.c`` under the same names, but for
``flat_diff`` and ``flat_equal``, whose twins are ``fd_diff_flat`` and
``fd_flat_equal`` in ``frozendict.c`` beside the C core's other paths for
two versions.)

User code: a lookup (``flat_find``) visits the entries whose stored hash
equals the key's, in insertion order, and for each compares identity, then
``stored_key == key`` (one ``__eq__`` per entry with an equal hash), as the
key trie does.  The tuples are never changed, so a key's ``__eq__`` that
derives, reads or drops versions meanwhile finds everything as it was.

The derivations of many edits work on the tuples too: a builder started
from a flat version (``|``, ``-``, the Evolver) is in *flat mode*
(``transient``: each edit makes new tuples, so publishing shares them) until
it outgrows FLAT_MAX, and two flat versions meet on ``PAIR_FLAT`` (the one
choice, ``reads.mapping_pair_path``): ``flat_equal`` and ``flat_diff`` pair
their entries by position first (related versions hold the same key objects
in the same order), with lookups for the rest.  A flat version beside tries
is walked through a key trie built for the call (``flat_key_trie``).

Crossing the threshold: a ``set`` that makes the key FLAT_MAX + 1 builds both
tries from the entries in order (``flat_promote``, seqs 0..FLAT_MAX; a
builder in flat mode does the same with its own owner token); a derivation
that leaves FLAT_MAX keys reads the order trie and the stored hashes back
into the flat form (``flat_demote``).  Sequence numbers are never
observable, so the renumbering is harmless; the stored hashes (and so the
hash accumulator) are carried across unchanged.

Layers: beside the tries (it builds and reads them); ``transient`` and
everything else sit above it.
"""

from __future__ import annotations

import sys
from itertools import compress, count
from operator import is_not, itemgetter, ne, or_
from typing import Any, Dict, List, Optional, Tuple

from .champ import (
    BitmapNode,
    DiffOut,
    Entry,
    champ_build_items,
    champ_collect,
    champ_diff_lists,
)
from .hashing import MASK
from .ordertrie import OrderNode, order_build, order_items

__all__ = [
    "FLAT_MAX",
    "Hashes",
    "Items",
    "FLAT_SCAN_IN_C",
    "FLAT_SCAN_MAX",
    "FLAT_INDEX_AFTER",
    "flat_index",
    "flat_find",
    "flat_find_after",
    "flat_entry",
    "flat_with_value",
    "flat_copy_without",
    "flat_promote",
    "flat_key_trie",
    "flat_demote",
    "flat_entries",
    "flat_equal",
    "flat_diff",
    "flat_same_items",
    "flat_check",
    "flat_dump",
]

FLAT_MAX = 32
"""The most keys a flat frozendict holds; one more and it holds the tries."""

Hashes = Tuple[int, ...]
"""The stored key hashes of a flat version, in insertion order."""
Items = Tuple[Tuple[Any, Any], ...]
"""The ``(key, value)`` pairs of a flat version, in insertion order."""


def _flat_find_scan(hashes: Hashes, items: Items, h: int, key: Any) -> int:
    """The position of ``key`` (whose stored hash is ``h``), or -1
    (``flat_find`` on CPython).

    The entries with an equal stored hash are tried in insertion order:
    identity, then ``stored_key == key``, whose exceptions propagate.
    Cost: O(FLAT_MAX), no user code for entries of another hash.

    (CPython: the hashes are scanned by ``in`` and ``tuple.index``, in C;
    PyPy's JIT runs the plain loop of ``_flat_find_loop`` faster.  The reads
    of ``frozendict`` -- ``[]``, ``get``, ``in`` -- inline this on CPython,
    the call being a fifth of a hit at 8 keys: ``FLAT_SCAN_IN_C``.)
    """
    if h in hashes:
        i = hashes.index(h)
        k = items[i][0]
        if k is key or k == key:
            return i
        return flat_find_after(hashes, items, h, key, i)
    return -1


def flat_find_after(hashes: Hashes, items: Items, h: int, key: Any, i: int) -> int:
    """The position of ``key`` among the entries after position ``i`` whose
    stored hash is ``h``, or -1: the rest of ``flat_find`` once the entry at
    ``i`` (of hash ``h``) was not ``key`` (a hash collision, rare).
    Cost: O(FLAT_MAX)."""
    while True:
        try:
            i = hashes.index(h, i + 1)
        except ValueError:
            return -1
        k = items[i][0]
        if k is key or k == key:
            return i


def _flat_find_loop(hashes: Hashes, items: Items, h: int, key: Any) -> int:
    """``flat_find`` as one loop (what PyPy runs)."""
    i = 0
    for stored in hashes:
        if stored == h:
            k = items[i][0]
            if k is key or k == key:
                return i
        i += 1
    return -1


FLAT_SCAN_IN_C = sys.implementation.name != "pypy"
"""Whether a flat lookup scans the hashes with ``in`` and ``tuple.index``
(CPython: in C, so the readers inline the first candidate) rather than with
``_flat_find_loop`` (PyPy, whose ``tuple.index`` is ~4x the loop)."""

flat_find = _flat_find_scan if FLAT_SCAN_IN_C else _flat_find_loop
"""The position of ``key`` (whose stored hash is ``h``) in a flat version's
``hashes`` and ``items``, or -1: ``flat_find(hashes, items, h, key)``.  The
scan of the stored hashes chosen for the interpreter: ``in`` and
``tuple.index`` (in C) on CPython, a plain loop on PyPy."""

FLAT_SCAN_MAX = 8
"""A flat version of more keys, once looked up more than FLAT_INDEX_AFTER
times (``[]``, ``get``, ``in``), is looked up through an index built then
(``flat_index``), not by a scan: the scan compares ~9 ns an entry on CPython
3.11 (a last key of 32: 0.75 us, against 0.25 us through the index)."""

FLAT_INDEX_AFTER = 2
"""How many lookups of such a version scan before its index is built (the
build costs ~3 scans: a version read once or twice keeps no index)."""


def flat_index(hashes: Hashes) -> Dict[int, int]:
    """``{stored hash: its first position}`` (the first of equal hashes: the
    first candidate of a lookup, ``flat_find_after`` taking the rest).
    Runs no user code (the keys are ints).  Cost: O(n), in C."""
    return dict(zip(reversed(hashes), range(len(hashes) - 1, -1, -1)))


def flat_entry(hashes: Hashes, items: Items, i: int) -> Entry:
    """The entry at position ``i`` in the key trie's shape ``(hash, i, key,
    value)``: the position stands for the seq (what the layers above read
    from an entry: its hash, its order, its key, its value)."""
    item = items[i]
    return (hashes[i], i, item[0], item[1])


def flat_with_value(items: Items, i: int, value: Any) -> Items:
    """``items`` with the value at position ``i`` replaced (the stored key
    object stays, as in dict).  The hashes are unchanged: share them."""
    return items[:i] + ((items[i][0], value),) + items[i + 1 :]


def flat_copy_without(hashes: Hashes, items: Items, i: int) -> Tuple[Hashes, Items]:
    """``(hashes, items)`` without the entry at position ``i``."""
    return hashes[:i] + hashes[i + 1 :], items[:i] + items[i + 1 :]


def flat_promote(
    hashes: Hashes, items: Items, owner: Optional[object] = None
) -> Tuple[BitmapNode, Optional[OrderNode]]:
    """Both tries holding the entries in order, at seqs 0..k-1 (the next seq
    is then k).  (Loops, not comprehensions, here and below: CPython 3.11
    leaks a comprehension's argument when an allocation fails in it.)

    The nodes carry ``owner``: a transient's token (it promotes itself and
    edits them in place), or by default a fresh token that nobody else
    holds (a transient that starts from them copies each node it touches,
    once).  Runs no user code (the hashes are the stored ones).
    Cost: O(k log k).
    """
    if owner is None:
        owner = object()
    root = champ_build_items(hashes, items, owner)
    # (the tuple as it is: list(items) leaks it when its allocation fails,
    # on CPython < 3.13)
    return root, order_build(items, owner)


def flat_key_trie(hashes: Hashes, items: Items) -> BitmapNode:
    """A key trie of a flat version's entries (their positions for seqs),
    for a walk beside another version's tries (``PAIR_WALK``: ``diff``,
    ``-``, ``&``).  Its nodes carry a fresh owner token: nobody edits them.
    Runs no user code.  Cost: O(k log k)."""
    return champ_build_items(hashes, items, object())


def flat_demote(root: BitmapNode, order: Optional[OrderNode]) -> Tuple[Hashes, Items]:
    """The flat form of a version held in tries (of at most FLAT_MAX keys):
    the order trie's items as they are, and the stored hashes beside them
    (the key trie's entries sorted by seq).  Runs no user code."""
    entries: List[Entry] = []
    champ_collect(root, entries)
    entries.sort(key=_seq_of)
    hashes: List[int] = []
    for entry in entries:
        hashes.append(entry[0])
    # (a loop, not tuple() of the generator: CPython < 3.13 leaks the items
    # taken so far when an allocation fails inside tuple(generator))
    items: List[Tuple[Any, Any]] = []
    for item in order_items(order):
        items.append(item)
    return tuple(hashes), tuple(items)


_seq_of = itemgetter(1)
"""An entry's seq (the sort key into insertion order)."""


def flat_entries(hashes: Hashes, items: Items) -> List[Entry]:
    """Every entry in insertion order, shaped as ``flat_entry`` makes them."""
    entries: List[Entry] = []
    for i, item in enumerate(items):
        entries.append((hashes[i], i, item[0], item[1]))
    return entries


def flat_equal(ha: Hashes, ia: Items, hb: Hashes, ib: Items) -> bool:
    """Whether two flat versions of equal length hold equal items.

    For each entry of ``a`` in order: its key is ``b``'s at the same
    position when that holds the same key object under the same stored hash
    (versions derived from one another, or built from one source, keep the
    order: no lookup, no ``__eq__``, as the C core's ``fd_flat_equal``), else
    it is found in ``b`` (``flat_find``); then the values are compared,
    identity first, then ``a_value == b_value``.  Stops at the first
    difference.  Cost: O(n) for maps in one order, O(n * FLAT_MAX) else.
    """
    for i, h in enumerate(ha):
        item = ia[i]
        key = item[0]
        other = ib[i]
        if other[0] is key and hb[i] == h:
            vb = other[1]
        else:
            j = flat_find(hb, ib, h, key)
            if j < 0:
                return False
            vb = ib[j][1]
        va = item[1]
        if not (va is vb or va == vb):
            return False
    return True


def flat_diff(ha: Hashes, ia: Items, hb: Hashes, ib: Items, out: DiffOut) -> None:
    """Append to ``out`` = (added, removed, changed) what differs from flat
    version a to flat version b, as ``champ_diff`` does (entries shaped as
    ``flat_entry`` makes them; a list given as None is not wanted).

    Positions first: versions derived from one another hold the same key
    objects at the same positions, shifted by one past a delete (a new key
    goes last).  The positions from which both sides hold the same item
    objects and stored hashes are skipped by a scan in C (no user code);
    at a position where they differ, the same key object with the same
    stored hash is a value compared as ``champ_diff`` compares it (``old is
    not new and old != new``), and one side's entry whose key the other side
    holds one position further is left over, the walk going on from there.
    The entries left over are matched by hash, then key (``champ_diff_lists``,
    the keys' ``__eq__``).  Cost: O(n) steps in C and O(d) in Python for
    versions d edits apart; O(n) lookups for unrelated versions.
    """
    changed = out[2]
    loose_a: List[Entry] = []
    loose_b: List[Entry] = []
    la = len(ia)
    lb = len(ib)
    i = j = 0
    if ha is hb or ha == hb:  # (ints: no user code)
        # The same stored hashes at every position (a value changed, or
        # none: versions that share the tuple): only the items can differ.
        for p in compress(count(), map(is_not, ia, ib)):
            a = ia[p]
            b = ib[p]
            if a[0] is b[0]:
                _value_change(changed, ha[p], p, a, p, b)
            else:
                loose_a.append((ha[p], p, a[0], a[1]))
                loose_b.append((ha[p], p, b[0], b[1]))
        i = j = la
    while i < la and j < lb:
        shifted = False
        # (the offsets from (i, j) at which the stored hash or the item differs)
        for k in compress(count(), map(or_, map(ne, ha[i:], hb[j:]), map(is_not, ia[i:], ib[j:]))):
            p = i + k
            q = j + k
            a = ia[p]
            b = ib[q]
            h = ha[p]
            if h == hb[q] and a[0] is b[0]:  # one key, its value replaced
                _value_change(changed, h, p, a, q, b)
                continue
            if p + 1 < la and ha[p + 1] == hb[q] and ia[p + 1][0] is b[0]:
                loose_a.append((h, p, a[0], a[1]))  # gone from b: go on past it
                i = p + 1
                j = q
                shifted = True
                break
            if q + 1 < lb and hb[q + 1] == h and ib[q + 1][0] is a[0]:
                loose_b.append((hb[q], q, b[0], b[1]))  # not in a: go on past it
                i = p
                j = q + 1
                shifted = True
                break
            loose_a.append((h, p, a[0], a[1]))
            loose_b.append((hb[q], q, b[0], b[1]))
        if not shifted:
            k = min(la - i, lb - j)
            i += k
            j += k
    for p in range(i, la):
        loose_a.append((ha[p], p, ia[p][0], ia[p][1]))
    for q in range(j, lb):
        loose_b.append((hb[q], q, ib[q][0], ib[q][1]))
    if loose_a or loose_b:
        champ_diff_lists(loose_a, loose_b, out, False)


def _value_change(changed: Any, h: int, p: int, a: Any, q: int, b: Any) -> None:
    """Append to ``changed`` (unless None) the entries of item ``a`` at
    position ``p`` and item ``b`` at ``q``, of one key with stored hash ``h``,
    if their values differ: ``old is not new and old != new``."""
    if changed is not None:
        va = a[1]
        vb = b[1]
        if va is not vb and va != vb:
            changed.append(((h, p, a[0], va), (h, q, b[0], vb)))


def flat_same_items(hashes: Hashes, items: Items, root: Any, order: Any) -> bool:
    """Whether a flat form, or tries, of as many entries hold the very same
    entries as a flat version: the same hashes, and the same key and value
    objects in the same order.  No user code runs."""
    if type(root) is tuple:  # a flat form (a transient's in flat mode)
        other_hashes, other_items = root, order
    else:
        other_hashes, other_items = flat_demote(root, order)
    if other_hashes != hashes:  # (ints: no user code)
        return False
    # (the positions holding another pair object, found in C: most share it)
    for i in compress(count(), map(is_not, items, other_items)):
        a = items[i]
        b = other_items[i]
        if a[0] is not b[0] or a[1] is not b[1]:
            return False
    return True


def flat_check(hashes: Any, items: Any, length: int) -> None:
    """Assert the flat form's invariants (no user code runs: keys are never
    hashed or compared here)."""
    assert type(hashes) is tuple and type(items) is tuple, "flat parts are not tuples"
    assert length <= FLAT_MAX, "a flat version of %d keys (FLAT_MAX is %d)" % (length, FLAT_MAX)
    assert len(hashes) == length, "flat version holds %d hashes, len is %d" % (len(hashes), length)
    assert len(items) == length, "flat version holds %d items, len is %d" % (len(items), length)
    seen = {}
    for h, item in zip(hashes, items):
        assert type(h) is int, "stored hash %r is not an int" % (h,)
        assert type(item) is tuple and len(item) == 2, "item %r is not a pair" % (item,)
        # One key object may be stored twice (its hash changed between the
        # two insertions, as dict allows), never twice under one hash: a
        # lookup would have found the first by identity.
        stored = (h, id(item[0]))
        assert stored not in seen, "key %r twice under one hash" % (item[0],)
        seen[stored] = True


def flat_dump(hashes: Hashes, items: Items) -> List[str]:
    """One line per entry, ``  (hash, key, value)``, in insertion order."""
    # (unsigned, as the C core prints them: on PyPy stored hashes are signed)
    return ["  (%d, %r, %r)" % (h & MASK, item[0], item[1]) for h, item in zip(hashes, items)]
