"""The key index: a CHAMP trie over the full hash, in CPython's layout.

A key finds its entry by the 5-bit digits of its (unsigned, 64-bit) hash, taken
from the low end: digit ``(h >> shift) & 31`` for shift 0, 5, ..., 60.  Each
bitmap node keeps two bitmaps (CHAMP, Steindorfer & Vinju 2015): ``datamap``
marks digits that hold an entry inline, ``nodemap`` digits that hold a child
node, indexed by the popcount of the bitmap below the digit's bit.  An entry is
the tuple ``(hash, seq, key, value)``: the stored hash means a key is never
re-hashed; the ``seq`` is its position in the order trie.

A node is one flat Python list (the cheapest object to build, copy and index
in the interpreter): ``[datamap, nodemap, owner, index, entries...,
children...]``, the entries in digit order from index ``FIRST`` on and the
children in *reverse* digit order at the end, so child ``j`` is ``node[-1 - j]``
and no popcount of the other bitmap is needed (the C core keeps the same two
dense arrays).  A copy along a path is one list slice.  ``index`` is what
only the pure core has: 64 bytes, the position in the node of each digit's
child (bytes 0-31) and of its entry (bytes ``ENTRY + d``), 0 for none, so a
lookup level is ``node[index[digit]]`` with no bitmap test, popcount or type
test.  Edits keep it with ``bytes.translate`` (see ``_UP``); a node copied
along a path shares its parent version's index object.

Two entries whose digits clash go into a child built canonically: equal full
hashes make a ``CollisionNode`` (a list subclass ``[0, 0, owner, _NO_INDEX,
entries...]``, compared as a set; both bitmaps are 0 and its index empty, so a
lookup that reaches one finds no slot, and only then asks for its type);
otherwise a bitmap node at the next shift.  Deletion undoes exactly that: a
non-root child left with one entry is inlined into its parent, and a non-root
bitmap node left holding only a ``CollisionNode`` is replaced by it.  The shape is
therefore a function of the set of hashes alone, never of history, which is
what lets ``champ_equal`` and ``champ_diff`` compare two versions position by
position and skip subtrees they share (``is``).

Edits are split in two: ``champ_find`` locates (it may run the keys' ``__eq__``),
then ``champ_put`` / ``champ_remove`` edit knowing the old entry (found again by
its key object and seq, never by the entry object's identity) and run no user
code, so a failing or re-entrant ``__eq__`` can never leave a half-edited
trie.  Nodes whose ``owner`` is the caller's owner token belong to
one transient (an Evolver or an internal builder) and are edited in place;
everything else is copied along the path (O(log n) new nodes).  Nodes are never
compared with ``==`` (that would compare their entries, running user code).

A published version's ``set`` and ``delete`` take a shortcut local to this
core (``champ_set_copying``, ``champ_delete_copying``): one walk that copies
the path top-down and compares the key at the bottom.  The copies are
reachable from nowhere until the new root is returned, so an ``__eq__`` that
fails or re-enters there leaves no trace either; the rare shapes are handed
back to the caller, which goes the general way above.

This module is one layout of the bitmap nodes, CPython's: the nodes, the
lookups, the one-walk copies, the builds and the walks over entries, and the
node-level steps of an edit (``_descend``, ``champ_put_path``,
``champ_remove_path``).  PyPy's layout (the entries' fields flat in the
node, no index) is ``keytrie_pypy``, which shares this module's collision
nodes and layout-free helpers.  ``champ`` chooses the layout, once, and
holds what is written once over either: ``champ_put``, ``champ_remove``,
``champ_diff``, ``champ_check``, ``champ_dump``.  The rest of the core
imports the key trie from ``champ``.

With ``champ``, mirrors ``frozenmap/_ccore/keytrie.c``.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

__all__ = [
    "Entry",
    "BitmapNode",
    "CollisionNode",
    "EMPTY_ROOT",
    "champ_find",
    "champ_find_stored",
    "champ_set_copying",
    "champ_delete_copying",
    "champ_build",
    "champ_build_items",
    "champ_entries",
    "champ_collect",
    "champ_equal",
    "champ_identical",
    "champ_diff_lists",
]

Entry = Tuple[int, int, Any, Any]
"""``(hash, seq, key, value)``."""

# The layout's numbers, derived from the bit width as the C core derives its
# own (CHAMP_BITS and the rest, cfrozenmap.h; tests/test_layout_constants.py
# holds each to its C twin).  The hot paths write BITS, DIGIT_MASK and
# ENTRY as the literals 5, 31 and 32, and the fields below as 0-4: a global
# read per use costs time.  That test holds every such literal in this
# module and in keytrie_pypy to the constant it stands for.
BITS = 5
"""Hash bits per level: each level reads one digit of this many bits."""
FANOUT = 1 << BITS
"""Digits per node: the width of its two bitmaps."""
DIGIT_MASK = FANOUT - 1
MAX_SHIFT = 63 // BITS * BITS
"""The last digit's shift (60: that digit holds the top 4 bits of a 64-bit hash)."""

# A node's fixed fields, then its payload from FIRST on.
DATAMAP = 0
NODEMAP = 1
OWNER = 2
INDEX = 3
FIRST = 4

# The digit -> slot index: ``bytes`` of 2 * FANOUT, byte d the position in the
# node of digit d's child and byte ``ENTRY + d`` that of its entry, 0 for none.  A
# lookup reads one object per level instead of two bitmaps and a popcount,
# and needs no type test; an edit derives the new index from the old one with
# ``bytes.translate`` (positions at or above ``lo`` moved up or down by one:
# _UP[lo], _DOWN[lo]) and one or two bytes stored (_with, _with2).  Collision
# nodes and the empty root hold _NO_INDEX.
ENTRY = FANOUT
_NO_INDEX = bytes(2 * FANOUT)
_MAX_POS = FIRST + FANOUT
_UP = [bytes(b + 1 if lo <= b < 255 else b for b in range(256)) for lo in range(_MAX_POS + 2)]
_DOWN = [bytes(b - 1 if lo <= b and b else b for b in range(256)) for lo in range(_MAX_POS + 2)]
_DEL = [
    bytes(0 if b == lo else b - 1 if b > lo else b for b in range(256))
    for lo in range(_MAX_POS + 2)
]
"""``_DEL[i]``: the index of a node that loses its slot at position ``i``
(positions are distinct, so the one byte holding ``i`` becomes 0, and those
above move down)."""
_BYTE = [bytes((b,)) for b in range(256)]
_SOLO = [_NO_INDEX[:d] + _BYTE[FIRST] + _NO_INDEX[d + 1 :] for d in range(FANOUT)]
"""The index of a node whose one slot is a child at digit d."""

Node = List[Any]
Path = List[Tuple[Node, int]]
"""A walk down the trie: (parent, index of the child taken) per level."""
BitmapNode = List[Any]
"""``[datamap, nodemap, owner, index, entries..., children in reverse digit order...]``."""


def _with(index: bytes, b: int, pos: int) -> bytes:
    """``index`` with byte ``b`` (``d`` or ``ENTRY + d``) set to ``pos``."""
    return index[:b] + _BYTE[pos] + index[b + 1 :]


def _with2(index: bytes, d: int, child: int, entry: int) -> bytes:
    """``index`` with digit ``d``'s child position ``child``, entry position
    ``entry`` (one of them 0).  (Through a bytearray: fewer objects than
    slices for two bytes.)"""
    new = bytearray(index)
    new[d] = child
    new[ENTRY + d] = entry
    return bytes(new)


def _pair_index(b1: int, b2: int) -> bytes:
    """The index of a node with two slots: byte ``b1`` at FIRST, then ``b2``."""
    new = bytearray(2 * FANOUT)
    new[b1] = FIRST
    new[b2] = FIRST + 1
    return bytes(new)


_PAIRS = [
    _pair_index(ENTRY + lo, ENTRY + hi) if lo < hi else _NO_INDEX
    for lo in range(FANOUT)
    for hi in range(FANOUT)
]
"""``_PAIRS[lo << BITS | hi]`` (lo < hi): the index of a node holding two entries,
at digits lo and hi: shared by every such node (a third of the nodes at
n = 100,000, most of them made by ``champ_pair_subtree``), which saves building
one per split and ~10 bytes per item."""


def _index_of(datamap: int, nodemap: int) -> bytes:
    """The index of a node with these bitmaps, built from scratch (checks)."""
    index = bytearray(2 * FANOUT)
    pos = FIRST
    bits = datamap
    while bits:
        low = bits & -bits
        index[ENTRY + low.bit_length() - 1] = pos
        pos += 1
        bits ^= low
    pos = FIRST + datamap.bit_count() + nodemap.bit_count() - 1
    bits = nodemap
    while bits:
        low = bits & -bits
        index[low.bit_length() - 1] = pos
        pos -= 1
        bits ^= low
    return bytes(index)


class CollisionNode(List[Any]):
    """``[0, 0, owner, _NO_INDEX, entries...]``: two or more entries whose full
    hashes are equal."""

    __slots__ = ()


def champ_collision_alloc(owner: Optional[object], entries: List[Entry]) -> CollisionNode:
    """A new collision node, filled by appends: on CPython < 3.13, building a
    list (subclass) from an iterable leaks the iterable when the first
    allocation fails."""
    node = CollisionNode()
    node.append(0)
    node.append(0)
    node.append(owner)
    node.append(_NO_INDEX)
    for entry in entries:
        node.append(entry)
    return node


EMPTY_ROOT: BitmapNode = [0, 0, None, _NO_INDEX]
"""The root of every empty version; never edited (its owner is None)."""


def _split(node: BitmapNode) -> Tuple[List[Entry], List[Node]]:
    """A bitmap node's entries and children, both in digit order (new lists)."""
    d = FIRST + node[DATAMAP].bit_count()
    return node[FIRST:d], node[: d - 1 : -1]


# --- lookup ------------------------------------------------------------------


def champ_find(root: BitmapNode, h: int, key: Any) -> Optional[Entry]:
    """Return the entry for ``key`` (whose unsigned hash is ``h``), or None.

    Compares the stored hash, then identity, then ``stored_key == key``; that
    ``__eq__`` is the only user code run, and its exceptions propagate.
    Cost: O(log32 n) nodes.
    """
    # The first four levels are written out, with no loop (n = 100,000 is
    # 3-4 levels deep): PyPy's JIT compiles a loop apart and calls it, where
    # this code is inlined into the caller's trace: measured 1.6-2.4x faster
    # on PyPy at n = 1,000 to 1,000,000, 0-8% on CPython
    # (docs/design-decisions.md, "PyPy: the key trie's layout and the floors").
    node = root
    d = h & 31
    j = node[3][d]
    if j:
        node = node[j]
        d = (h >> 5) & 31
        j = node[3][d]
        if j:
            node = node[j]
            d = (h >> 10) & 31
            j = node[3][d]
            if j:
                node = node[j]
                d = (h >> 15) & 31
                j = node[3][d]
                if j:
                    node, d = _walk_below(node[j], h)
    j = node[3][32 + d]
    if j:
        entry = node[j]
        if entry[0] == h:
            k = entry[2]
            if k is key or k == key:
                return entry  # type: ignore[no-any-return]
        return None
    if type(node) is CollisionNode:
        return _collision_find(node, h, key)
    return None


def _walk_below(node: Node, h: int) -> Tuple[Node, int]:
    """Where ``champ_find``'s walk ends from a node at shift 20: that node
    and the digit of ``h`` there."""
    shift = 20
    while True:
        d = (h >> shift) & 31
        j = node[3][d]
        if not j:
            return node, d
        node = node[j]
        shift += 5


def _collision_find(node: CollisionNode, h: int, key: Any) -> Optional[Entry]:
    if node[4][0] == h:
        for entry in node[4:]:
            k = entry[2]
            if k is key or k == key:
                return entry  # type: ignore[no-any-return]
    return None


def champ_is_stored_key(entry: Entry, old: Optional[Entry]) -> bool:
    """Whether ``entry`` (as stored) is the one ``old`` describes: the same
    key object at the same seq.  Entries are told apart by what they hold,
    never by the entry object's identity, so a layout that builds entries on
    demand (the nodes of ``keytrie_pypy``) keeps the edits' meaning."""
    return old is not None and entry[2] is old[2] and entry[1] == old[1]


def _slot_of(node: CollisionNode, old: Entry) -> int:
    """The position of the entry ``old`` describes in a collision node, or -1."""
    for i in range(FIRST, len(node)):
        if champ_is_stored_key(node[i], old):
            return i
    return -1


def champ_find_stored(root: BitmapNode, h: Optional[int], key: Any, seq: int) -> Optional[Entry]:
    """The entry holding this very key object at order position ``seq``, found
    by identity alone: no ``__eq__`` and no ``__hash__`` runs (the caller gives
    the hash when it has one).  The seq tells apart two entries of one key object
    (stored twice, its hash having changed between the insertions, as dict
    keeps both).

    With the key's hash known (``h``), O(log32 n); with ``h`` None, a scan of
    every entry, O(n).
    """
    entries: Iterator[Entry]
    if h is None:
        entries = champ_entries(root)
    else:
        node = root
        while True:
            index = node[3]
            j = index[h & 31]
            if j:
                node = node[j]
                h >>= 5
                continue
            j = index[32 + (h & 31)]
            if j:
                entry: Entry = node[j]
                return entry if entry[2] is key and entry[1] == seq else None
            if type(node) is not CollisionNode:
                return None
            entries = iter(node[FIRST:])
            break
    for entry in entries:
        if entry[2] is key and entry[1] == seq:
            return entry
    return None


# --- insertion ---------------------------------------------------------------


def champ_pair_subtree(a: Entry, b: Entry, shift: int, owner: Optional[object]) -> Node:
    """The canonical subtree at ``shift`` holding two distinct entries."""
    if a[0] == b[0]:
        return champ_collision_alloc(owner, [a, b])
    da = (a[0] >> shift) & DIGIT_MASK
    db = (b[0] >> shift) & DIGIT_MASK
    if da == db:
        return [0, 1 << da, owner, _SOLO[da], champ_pair_subtree(a, b, shift + BITS, owner)]
    if da < db:
        return [(1 << da) | (1 << db), 0, owner, _PAIRS[da << 5 | db], a, b]
    return [(1 << da) | (1 << db), 0, owner, _PAIRS[db << 5 | da], b, a]


def champ_split_collision(
    coll: CollisionNode, entry: Entry, shift: int, owner: Optional[object]
) -> Node:
    """A bitmap node at ``shift`` holding ``coll`` and an entry of another hash."""
    dc = (coll[FIRST][0] >> shift) & DIGIT_MASK
    de = (entry[0] >> shift) & DIGIT_MASK
    if dc == de:
        return [
            0,
            1 << dc,
            owner,
            _SOLO[dc],
            champ_split_collision(coll, entry, shift + BITS, owner),
        ]
    return [1 << de, 1 << dc, owner, _pair_index(ENTRY + de, dc), entry, coll]


def champ_collision_put(
    node: CollisionNode, entry: Entry, old: Optional[Entry], owner: Optional[object]
) -> Node:
    """``node`` with ``entry`` (of the same full hash) stored, replacing the
    entry ``old`` describes if given: ``node`` itself when owned by
    ``owner``, else a new collision node."""
    if owner is not None and node[OWNER] is owner:
        new = node
    else:
        new = champ_collision_alloc(owner, node[FIRST:])
    if old is not None:
        i = _slot_of(new, old)
        if i < 0:
            raise AssertionError("champ_put: old entry not in its collision node")
        new[i] = entry
        return new
    new.append(entry)  # one step: done, or MemoryError with nothing done
    return new


def _descend(node: Node, shift: int, h: int, path: Path) -> Tuple[Node, int]:
    """Walk down by the digits of ``h`` to the node (and its shift) that holds,
    or would hold, an entry of that hash inline (a collision node's bitmaps
    are 0: it stops there too); append each step to ``path``."""
    while True:
        j = node[3][(h >> shift) & 31]
        if not j:
            return node, shift
        path.append((node, j))
        node = node[j]
        shift += BITS


def champ_put_path(
    path: Path, node: Node, shift: int, entry: Entry, old: Optional[Entry], owner: Optional[object]
) -> BitmapNode:
    """``champ_put``'s edit of ``node`` (at ``shift``, reached along ``path``)
    and of the nodes above it."""
    if type(node) is CollisionNode:
        if entry[0] != node[FIRST][0]:  # another hash: both go below a bitmap node
            new = champ_split_collision(node, entry, shift, owner)
        else:
            new = champ_collision_put(node, entry, old, owner)
            if new is node:
                return path[0][0]
    else:
        d = (entry[0] >> shift) & 31
        bit = 1 << d
        bitmap = node[0]
        if not bitmap & bit:
            i = 4 + (bitmap & (bit - 1)).bit_count()
            index = _with(node[3].translate(_UP[i]), ENTRY + d, i)
            if owner is not None and node[2] is owner:
                node.insert(i, entry)  # one step, then stores
                node[0] = bitmap | bit
                node[3] = index
                return path[0][0] if path else node
            new = node[:]
            new.insert(i, entry)
            new[0] = bitmap | bit
            new[2] = owner
            new[3] = index
        elif champ_is_stored_key(node[i := node[3][ENTRY + d]], old):
            if owner is not None and node[2] is owner:
                node[i] = entry
                return path[0][0] if path else node
            new = node[:]
            new[2] = owner
            new[i] = entry
        else:
            # The entry gives way to a child: positions above it move down
            # one, and those from the child's on move back up.
            child = champ_pair_subtree(node[i], entry, shift + BITS, owner)
            nodemap = node[1] | bit
            new = node[:]  # (one copy, cheaper than two slices and a concatenation)
            del new[i]
            c = len(new) - (nodemap & (bit - 1)).bit_count()
            new.insert(c, child)
            new[0] = bitmap ^ bit
            new[1] = nodemap
            new[2] = owner
            new[3] = _with2(node[3].translate(_DOWN[i + 1]).translate(_UP[c]), d, c, 0)
            if owner is not None and node[2] is owner:
                node[:] = new  # one step
                return path[0][0] if path else node
    return _put_above(path, new, owner)


def _put_above(path: Path, new: Node, owner: Optional[object]) -> BitmapNode:
    """The new root once ``new`` replaces the bottom node of ``path``: stored
    into the first owned node up the path, or into copies of the nodes above."""
    if owner is None:
        return _copy_path(path, new)
    for k in range(len(path) - 1, -1, -1):
        parent, j = path[k]
        if parent[2] is owner:
            parent[j] = new
            return path[0][0]
        copy = parent[:]
        copy[2] = owner
        copy[j] = new
        new = copy
    return new


def _copy_path(path: Path, new: Node) -> BitmapNode:
    """The new root when no node is owned: ``new`` stored into a copy of each
    node along ``path``, bottom-up."""
    for parent, j in reversed(path):
        copy = parent[:]
        copy[2] = None
        copy[j] = new
        new = copy
    return new


def champ_set_copying(
    root: BitmapNode, h: int, key: Any, value: Any, seq: int
) -> Optional[Tuple[Optional[BitmapNode], Optional[Entry]]]:
    """Locate ``key`` (unsigned hash ``h``) and set it to ``value`` in one walk,
    for a published version: return (new root, old entry or None).

    A new key gets the entry ``(h, seq, key, value)``; a present one keeps
    its seq and key object; a present one already holding this very value
    object gives (None, its entry) and no new root.  The path is copied
    top-down, each copy stored into the copy above it, and the bottom copy
    edited in place: nothing is reachable from outside until the new root is
    returned, so the stored key's ``__eq__`` (the only user code, run at the
    bottom, as ``champ_find`` runs it) and a MemoryError leave no trace.  A
    walk that ends at a collision node answers None, having run no user
    code: the caller takes the general way (``champ.champ_set_general``:
    ``champ_find``, then ``champ_put`` from the untouched root).
    """
    top = new = root[:]
    new[2] = None
    hh = h
    shift = 0
    while True:
        j = new[3][hh & 31]
        if not j:
            break
        child = new[j][:]  # (a collision node's slice is a plain list: see below)
        child[2] = None
        new[j] = child
        new = child
        hh >>= 5
        shift += 5
    d = hh & 31
    bit = 1 << d
    bitmap = new[0]
    if not bitmap & bit:
        if not bitmap and not new[1] and len(new) > 4:
            return None  # a collision node: the general way (see above)
        i = 4 + (bitmap & (bit - 1)).bit_count()
        new.insert(i, (h, seq, key, value))
        new[0] = bitmap | bit
        new[3] = _with(new[3].translate(_UP[i]), ENTRY + d, i)
        return top, None
    i = new[3][ENTRY + d]
    old = new[i]
    if old[0] == h:
        k = old[2]
        if k is key or k == key:
            if old[3] is value:
                return None, old
            new[i] = (h, old[1], k, value)
            return top, old
    # The entry gives way to a child: positions above it move down one, and
    # those from the child's on move back up.
    child = champ_pair_subtree(old, (h, seq, key, value), shift + BITS, None)
    del new[i]
    nodemap = new[1] | bit
    c = len(new) - (nodemap & (bit - 1)).bit_count()
    new.insert(c, child)
    new[0] = bitmap ^ bit
    new[1] = nodemap
    new[3] = _with(new[3].translate(_DEL[i]).translate(_UP[c]), d, c)
    return top, None


def champ_build(entries: List[Entry], owner: Optional[object]) -> BitmapNode:
    """The root of the trie holding ``entries`` (distinct keys, in seq order),
    every node owned by ``owner``: what inserting them one by one with
    ``champ_put`` gives (the shape is canonical; a collision node keeps its
    entries in seq order), built top-down without a lookup.  Runs no user
    code.  Cost: O(n log32 n) steps, one new node per node of the result.
    (Also what a flat map's promotion builds: ``flat_promote``.)

    The C core's ``champ_build`` has no twin function by function here: it
    reaches the same trie by another route, a radix sort of the entries in
    place into a scratch array, one or two digits at a time
    (``champ_build_root``, ``_partition``, ``_wide``, ``_buckets``,
    ``_child``, ``_collision``, ``_node``), where this core splits the
    entries into lists by digit (``champ_build_bitmap``, whose C namesake
    builds one bitmap node too), already the fast way in Python.  Same rule,
    same trie, node for node.
    """
    if not entries:
        return EMPTY_ROOT
    return champ_build_bitmap(entries, 0, owner)


def champ_build_items(
    hashes: Sequence[int], items: Sequence[Tuple[Any, Any]], owner: Optional[object]
) -> BitmapNode:
    """``champ_build`` of the entries ``(hashes[i], i, key, value)`` for
    ``items[i] == (key, value)``: the seq is the position, as in a fresh
    builder (``load_items``) and a flat map's promotion.  This layout stores
    the entries, so they are made here; a list ``hashes`` is emptied once
    read (the build's peak: the entries hold the hashes).  PyPy's layout
    builds from the two columns without them (``_nx_champ_build_items``).
    Runs no user code."""
    entries: List[Entry] = []
    for seq, item in enumerate(items):  # (a loop: see flat_promote)
        entries.append((hashes[seq], seq, item[0], item[1]))
    if type(hashes) is list:
        del hashes[:]
    return champ_build(entries, owner)


def champ_build_bitmap(entries: List[Entry], shift: int, owner: Optional[object]) -> BitmapNode:
    """The bitmap node at ``shift`` holding ``entries`` (at the root any;
    below it two or more distinct hashes).

    The buckets are a list of 32 slots, visited in digit order (no dict, no
    sort), and a bucket of two entries is ``champ_pair_subtree``'s: 0.7x the time
    of a dict of buckets on PyPy at n = 1,000, 0.9x on CPython; at
    n = 100,000 within the noise of PyPy's collections (docs/design-decisions.md,
    "PyPy: the key trie's layout and the floors")."""
    buckets: List[Optional[List[Entry]]] = [None] * FANOUT
    for entry in entries:  # split by digit, keeping seq order in each bucket
        d = (entry[0] >> shift) & 31
        bucket = buckets[d]
        if bucket is None:
            buckets[d] = [entry]
        else:
            bucket.append(entry)
    node: BitmapNode = [0, 0, owner, _NO_INDEX]
    children: List[Node] = []
    datamap = nodemap = 0
    for d in range(FANOUT):
        bucket = buckets[d]
        if bucket is None:
            continue
        buckets[d] = None  # (released once its subtree is built: the build's peak)
        if len(bucket) == 1:
            datamap |= 1 << d
            node.append(bucket[0])
            continue
        nodemap |= 1 << d
        if len(bucket) == 2:  # (the usual child near the leaves)
            children.append(champ_pair_subtree(bucket[0], bucket[1], shift + BITS, owner))
            continue
        h = bucket[0][0]
        for entry in bucket:
            if entry[0] != h:
                children.append(champ_build_bitmap(bucket, shift + BITS, owner))
                break
        else:
            children.append(champ_collision_alloc(owner, bucket))
    for child in reversed(children):
        node.append(child)
    node[0] = datamap
    node[1] = nodemap
    if not nodemap and len(node) == FIRST + 2:  # two entries: the shared index
        node[3] = _PAIRS[((node[4][0] >> shift) & 31) << 5 | ((node[5][0] >> shift) & 31)]
    else:
        node[3] = _index_of(datamap, nodemap)
    return node


# --- removal -----------------------------------------------------------------


def champ_collision_remove(
    node: CollisionNode, old: Entry, owner: Optional[object]
) -> CollisionNode:
    # Always a new node: the parent may still fail to inline what is left,
    # and the node it holds must then be as it was.
    i = _slot_of(node, old)
    if i < 0:
        raise AssertionError("champ_remove: old entry not in its collision node")
    return champ_collision_alloc(owner, node[FIRST:i] + node[i + 1 :])


def champ_delete_copying(
    root: BitmapNode, h: int, key: Any
) -> Optional[Tuple[Optional[BitmapNode], Optional[Entry]]]:
    """Locate ``key`` (unsigned hash ``h``) and remove it in one walk, for a
    published version: return (new root, old entry), or None if it is absent.

    Copied top-down as ``champ_set_copying`` (the same reasoning makes the
    stored key's ``__eq__`` harmless).  With the stored key object itself as
    ``key`` no ``__eq__`` runs.  The usual shapes are done here: the bottom
    node loses the entry, and a non-root one left with one entry is inlined
    into its parent's copy.  The rare ones (a collision node, a lone
    collision node moving up, a parent left with one entry in turn) answer
    ``(None, old)``, ``old`` the entry if the walk located it (its key's
    ``__eq__`` ran) or None: the caller takes the general way
    (``champ.champ_delete_general``: ``champ_find`` unless located, then
    ``champ_remove`` from the untouched root).
    """
    top = new = root[:]
    new[2] = None
    up: Optional[Node] = None
    up_j = up_hh = 0
    hh = h
    while True:
        j = new[3][hh & 31]
        if not j:
            break
        child = new[j][:]
        child[2] = None
        new[j] = child
        up = new
        up_j = j
        up_hh = hh
        new = child
        hh >>= 5
    d = hh & 31
    i = new[3][ENTRY + d]
    if not i:
        if not new[0] and not new[1] and len(new) > 4:
            return None, None  # a collision node: the general way
        return None
    old = new[i]
    if old[0] != h:
        return None
    k = old[2]
    if not (k is key or k == key):
        return None
    del new[i]
    bitmap = new[0] ^ (1 << d)
    new[0] = bitmap
    if len(new) == FIRST + 2 and not new[1]:  # two entries left: the shared index
        new[3] = _PAIRS[((bitmap & -bitmap).bit_length() - 1) << 5 | (bitmap.bit_length() - 1)]
    else:
        new[3] = new[3].translate(_DEL[i])
    if len(new) != 5 or up is None:
        return top, old
    if new[1]:
        if type(new[4]) is CollisionNode:
            return None, old  # it moves up: the general way
        return top, old
    # One entry left and no children: the parent's copy takes it inline.
    up_d = up_hh & 31
    bit = 1 << up_d
    bitmap = up[0] | bit
    e = 4 + (bitmap & (bit - 1)).bit_count()
    del up[up_j]
    up.insert(e, new[4])
    up[0] = bitmap
    up[1] ^= bit
    up[3] = _with(up[3].translate(_DEL[up_j]).translate(_UP[e]), ENTRY + up_d, e)
    if len(up) == 5 and not up[1] and up is not top:
        return None, old  # the parent is left with one entry: the general way
    return top, old


def champ_remove_path(
    path: Path, node: Node, shift: int, old: Entry, owner: Optional[object]
) -> BitmapNode:
    """``champ_remove``'s edit of ``node`` (at ``shift``, holding ``old``,
    reached along ``path``) and of the nodes above it.

    Going up, what replaces the child at each level is either ``new`` (a node)
    or, when ``single`` is set, the one entry ``new[4]`` left in it, which the
    parent takes inline.  A non-root node left with no entries and a lone
    collision node child gives way to that child.
    """
    new: Node
    if type(node) is CollisionNode:
        new = champ_collision_remove(node, old, owner)  # (never the root)
    else:
        d = (old[0] >> shift) & 31
        bitmap = node[0] ^ (1 << d)
        i = node[3][ENTRY + d]
        index = _with(node[3].translate(_DOWN[i + 1]), ENTRY + d, 0)
        if not path:
            if owner is not None and node[2] is owner:
                del node[i]  # one step, then stores
                node[0] = bitmap
                node[3] = index
                return node
        new = node[:]  # below the root: always a new node
        del new[i]
        new[0] = bitmap
        new[2] = owner
        new[3] = index
        if not path:
            return new
    base = shift - BITS * len(path)  # the shift of path[0]'s node
    for k in range(len(path) - 1, -1, -1):
        if len(new) == 5:
            if type(new) is CollisionNode or not new[1]:
                single = True  # one entry and no children
            elif type(new[4]) is CollisionNode:
                single = False
                new = new[4]  # a lone collision node moves up
            else:
                single = False
        else:
            single = False
        parent, j = path[k]
        if single:
            # Inline the child's last entry into the parent: a new list first.
            # Positions from the entry's up to the child's move up one.
            d = (old[0] >> (base + BITS * k)) & 31
            bit = 1 << d
            bitmap = parent[0] | bit
            e = 4 + (bitmap & (bit - 1)).bit_count()
            rebuilt = parent[:]
            del rebuilt[j]
            rebuilt.insert(e, new[4])
            rebuilt[0] = bitmap
            rebuilt[1] ^= bit
            rebuilt[2] = owner
            rebuilt[3] = _with2(parent[3].translate(_UP[e]).translate(_DOWN[j + 1]), d, 0, e)
            if k == 0 and owner is not None and parent[2] is owner:
                parent[:] = rebuilt  # one step
                return parent
            new = rebuilt
            continue
        if k and type(new) is CollisionNode and not parent[0] and len(parent) == 5:
            continue  # the parent would hold only it: it moves up again
        if owner is None:
            # From here up every level is a plain copy: this parent's copy
            # holds more than a lone collision node, and stays.
            return _copy_path(path[: k + 1], new)
        if parent[2] is owner:
            parent[j] = new  # its own parent is owned too and keeps it
            return path[0][0]
        copy = parent[:]
        copy[2] = owner
        copy[j] = new
        new = copy
    return new


# --- whole-trie walks ----------------------------------------------------------


def champ_entries(node: Node) -> Iterator[Entry]:
    """Every entry below ``node``, in trie order.  Cost: O(n)."""
    if type(node) is CollisionNode:
        yield from node[FIRST:]
        return
    d = FIRST + node[DATAMAP].bit_count()
    yield from node[FIRST:d]
    for k in range(len(node) - 1, d - 1, -1):
        yield from champ_entries(node[k])


def champ_collect(node: Node, out: List[Entry]) -> None:
    """Append every entry below ``node`` to ``out``, in trie order
    (``champ_entries`` as one list, without a generator per node: a flat
    map's demotion reads them all).  Cost: O(n)."""
    if type(node) is CollisionNode:
        for k in range(FIRST, len(node)):
            out.append(node[k])
        return
    d = FIRST + node[DATAMAP].bit_count()
    for k in range(FIRST, d):
        out.append(node[k])
    for k in range(len(node) - 1, d - 1, -1):
        champ_collect(node[k], out)


def champ_same_pair(a: Entry, b: Entry) -> bool:
    """Whether two entries at one position hold equal keys and equal values."""
    ka = a[2]
    kb = b[2]
    if a[0] != b[0] or not (ka is kb or ka == kb):
        return False
    va = a[3]
    vb = b[3]
    return va is vb or bool(va == vb)


def champ_find_in(entries: List[Entry], entry: Entry) -> Optional[Entry]:
    for e in entries:
        if e[0] == entry[0]:
            k = e[2]
            if k is entry[2] or k == entry[2]:
                return e
    return None


def _index_of_key(entries: List[Entry], key: Any) -> int:
    """The index of the entry holding this very key object, or -1."""
    for i, e in enumerate(entries):
        if e[2] is key:
            return i
    return -1


def _collision_equal(a: List[Entry], b: List[Entry]) -> bool:
    """Whether two collision lists of one length hold equal items, as sets.

    Versions derived from one another keep the same key objects in the same
    order, so each key is looked for at the next position, then anywhere by
    identity, and only then with ``__eq__``: O(k) for them instead of O(k**2).
    """
    j = 0
    for entry in a:
        key = entry[2]
        if j < len(b) and b[j][2] is key:
            match = b[j]
        else:
            k = _index_of_key(b, key)
            if k >= 0:
                j = k
                match = b[k]
            else:
                found = champ_find_in(b, entry)
                if found is None:
                    return False
                match = found
        if not champ_same_pair(entry, match):
            return False
        j += 1
    return True


def champ_equal(a: Node, b: Node) -> bool:
    """Whether two tries of equal size hold equal items.

    A parallel walk: canonical shapes mean equal maps have identical bitmaps,
    and subtrees shared between versions (``is``) are skipped, so versions d
    edits apart compare in O(d log n).
    """
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if type(a) is CollisionNode:
        if a[FIRST][0] != b[FIRST][0] or len(a) != len(b):
            return False
        return _collision_equal(a[FIRST:], b[FIRST:])
    if a[DATAMAP] != b[DATAMAP] or a[NODEMAP] != b[NODEMAP]:
        return False
    d = FIRST + a[DATAMAP].bit_count()
    for k in range(FIRST, d):
        ea = a[k]
        eb = b[k]
        if ea is not eb and not champ_same_pair(ea, eb):
            return False
    for k in range(len(a) - 1, d - 1, -1):  # the children, in digit order
        if not champ_equal(a[k], b[k]):
            return False
    return True


def champ_identical(a: Node, b: Node) -> bool:
    """Whether two tries hold the very same entries: the same key and value
    objects at the same sequence numbers.  Shared subtrees are skipped and no
    user code runs; a collision node's entries are compared by position (a
    rare false "no" is possible, never a false "yes")."""
    if a is b:
        return True
    if type(a) is not type(b) or len(a) != len(b):
        return False
    if a[DATAMAP] != b[DATAMAP] or a[NODEMAP] != b[NODEMAP]:
        return False
    d = len(a) if type(a) is CollisionNode else FIRST + a[DATAMAP].bit_count()
    for k in range(FIRST, d):
        ea = a[k]
        eb = b[k]
        if ea is not eb and (ea[2] is not eb[2] or ea[3] is not eb[3] or ea[1] != eb[1]):
            return False
    return all(champ_identical(a[k], b[k]) for k in range(d, len(a)))


DiffOut = Tuple[Optional[List[Entry]], Optional[List[Entry]], Optional[List[Tuple[Entry, Entry]]]]
"""(added, removed, changed); a list left None is not wanted (see ``champ_diff``)."""


def champ_diff_lists(a: List[Entry], b: List[Entry], out: DiffOut, by_identity: bool) -> None:
    """Diff two small entry lists matched by hash, then key."""
    added, removed, changed = out
    by_hash: Dict[int, List[Entry]] = {}
    for e in b:
        by_hash.setdefault(e[0], []).append(e)
    for ea in a:
        candidates = by_hash.get(ea[0])
        match = champ_find_in(candidates, ea) if candidates else None
        if match is None:
            if removed is not None:
                removed.append(ea)
            continue
        candidates.remove(match)  # type: ignore[union-attr]
        if changed is None:
            continue
        va = ea[3]
        vb = match[3]
        if va is not vb and (by_identity or va != vb):
            changed.append((ea, match))
    if added is None:
        return
    for rest in by_hash.values():
        # (not added.extend(rest): on CPython < 3.13, extending an empty list
        # leaks a reference to the argument when the allocation fails)
        for e in rest:
            added.append(e)


def _diff_inline_entries(a: BitmapNode, b: BitmapNode, out: DiffOut, by_identity: bool) -> int:
    """``champ_diff``'s step for two bitmap nodes with the same digits on
    both sides: their inline entries, paired by position (a shared one is one
    ``is``); return the position of their first child."""
    d: int = FIRST + a[DATAMAP].bit_count()
    for k in range(FIRST, d):
        if a[k] is not b[k]:
            champ_diff_lists([a[k]], [b[k]], out, by_identity)
    return d


def champ_subtree_entries(node: BitmapNode, bit: int) -> List[Entry]:
    if node[DATAMAP] & bit:
        return [node[FIRST + (node[DATAMAP] & (bit - 1)).bit_count()]]
    if node[NODEMAP] & bit:
        return list(champ_entries(node[-1 - (node[NODEMAP] & (bit - 1)).bit_count()]))
    return []


# --- checking and debugging ----------------------------------------------------


def _check_layout(node: BitmapNode, datamap: int, nodemap: int) -> None:
    """Assert that a bitmap node's length and index agree with its bitmaps."""
    assert FIRST + datamap.bit_count() + nodemap.bit_count() == len(node), (
        "bitmaps/payload mismatch"
    )
    index = node[INDEX]
    assert type(index) is bytes and index == _index_of(datamap, nodemap), "index off the bitmaps"
