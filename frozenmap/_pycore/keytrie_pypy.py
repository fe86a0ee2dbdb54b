"""The key trie's bitmap nodes in PyPy's layout: the entries' fields flat in
the node, walked by the bitmaps.

A bitmap node is ``[datamap, nodemap, owner, _NO_INDEX, h0, s0, k0, v0, ...,
children in reverse digit order]``: the entry of the digit with bit ``bit``
at ``4 + 4 * popcount(datamap & (bit - 1))``, the child at ``-1 -
popcount(nodemap & (bit - 1))``.  A lookup then loads no entry tuple and no
index (at n = 100,000 on PyPy: lookup 0.53x, set 0.66x, delete 0.60x of the
time of ``keytrie``'s layout, entry tuples and a digit index; on CPython the
bitmap walk in bytecode makes lookups 1.7-2x slower, so CPython keeps
``keytrie``'s: docs/design-decisions.md, "PyPy: the key trie's layout and
the floors").

The shapes, the collision nodes (entry tuples, as in ``keytrie``) and the API
are ``keytrie``'s: readers get entries as ``(hash, seq, key, value)`` tuples
built on demand, and edits find an old entry by its key object and seq
(``keytrie.champ_is_stored_key``), never by the entry object's identity.
This module has its own version of each function of ``keytrie`` that reads
or writes a bitmap node, under the same name; the layout-free parts (collision nodes,
``_put_above``, ``champ_diff_lists``, ...) are ``keytrie``'s.  ``champ`` chooses
between the two layouts and holds what is written once over either
(``champ_put``, ``champ_remove``, ``champ_diff``, ``champ_check``, ...).

A Python-only module: the C core has one layout.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, List, Optional, Sequence, Tuple

from .keytrie import (
    _NO_INDEX,
    BITS,
    DATAMAP,
    DIGIT_MASK,
    EMPTY_ROOT,
    FANOUT,
    FIRST,
    INDEX,
    NODEMAP,
    BitmapNode,
    CollisionNode,
    DiffOut,
    Entry,
    Node,
    Path,
    _collision_equal,
    _collision_find,
    _put_above,
    champ_collision_alloc,
    champ_collision_put,
    champ_collision_remove,
    champ_diff_lists,
)

__all__ = [
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
]


def _split(node: BitmapNode) -> Tuple[List[Entry], List[Node]]:
    """A bitmap node's entries (as tuples) and children, both in digit order."""
    d = FIRST + 4 * node[DATAMAP].bit_count()
    return [(node[i], node[i + 1], node[i + 2], node[i + 3]) for i in range(FIRST, d, 4)], node[
        : d - 1 : -1
    ]


def champ_find(root: BitmapNode, h: int, key: Any) -> Optional[Entry]:
    """``keytrie.champ_find`` in this layout, by the bitmaps; the entry found
    is a tuple built for the caller.  Cost: O(log32 n) nodes."""
    # (the first four levels written out, as above)
    node = root
    bit = 1 << (h & 31)
    nm = node[1]
    if nm & bit:
        node = node[-1 - (nm & (bit - 1)).bit_count()]
        bit = 1 << ((h >> 5) & 31)
        nm = node[1]
        if nm & bit:
            node = node[-1 - (nm & (bit - 1)).bit_count()]
            bit = 1 << ((h >> 10) & 31)
            nm = node[1]
            if nm & bit:
                node = node[-1 - (nm & (bit - 1)).bit_count()]
                bit = 1 << ((h >> 15) & 31)
                nm = node[1]
                if nm & bit:
                    node, bit = _walk_below(node[-1 - (nm & (bit - 1)).bit_count()], h)
    dm = node[0]
    if dm & bit:
        j = 4 + 4 * (dm & (bit - 1)).bit_count()
        if node[j] == h:
            k = node[j + 2]
            if k is key or k == key:
                return (h, node[j + 1], k, node[j + 3])
        return None
    if type(node) is CollisionNode:
        return _collision_find(node, h, key)
    return None


def _walk_below(node: Node, h: int) -> Tuple[Node, int]:
    """``_walk_below`` by the bitmaps: the node and the bit of ``h``'s digit there."""
    shift = 20
    while True:
        bit = 1 << ((h >> shift) & 31)
        nm = node[1]
        if not nm & bit:
            return node, bit
        node = node[-1 - (nm & (bit - 1)).bit_count()]
        shift += 5


def champ_find_stored(root: BitmapNode, h: Optional[int], key: Any, seq: int) -> Optional[Entry]:
    """``keytrie.champ_find_stored`` in this layout."""
    if h is None:
        for entry in champ_entries(root):
            if entry[2] is key and entry[1] == seq:
                return entry
        return None
    node = root
    while True:
        bit = 1 << (h & 31)
        nm = node[1]
        if not nm & bit:
            break
        node = node[-1 - (nm & (bit - 1)).bit_count()]
        h >>= 5
    dm = node[0]
    if dm & bit:
        j = 4 + 4 * (dm & (bit - 1)).bit_count()
        if node[j + 2] is key and node[j + 1] == seq:
            return (node[j], seq, key, node[j + 3])
        return None
    if type(node) is CollisionNode:
        for entry in node[FIRST:]:
            if entry[2] is key and entry[1] == seq:
                return entry  # type: ignore[no-any-return]
    return None


def champ_pair_subtree(a: Entry, b: Entry, shift: int, owner: Optional[object]) -> Node:
    """The canonical subtree at ``shift`` holding two distinct entries."""
    if a[0] == b[0]:
        return champ_collision_alloc(owner, [a, b])
    da = (a[0] >> shift) & DIGIT_MASK
    db = (b[0] >> shift) & DIGIT_MASK
    if da == db:
        return [0, 1 << da, owner, _NO_INDEX, champ_pair_subtree(a, b, shift + BITS, owner)]
    if da > db:
        a, b = b, a
    # (the fields written out: 0.8x the time of ``*a, *b`` on PyPy in a build)
    bits = (1 << da) | (1 << db)
    return [bits, 0, owner, _NO_INDEX, a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]]


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
            _NO_INDEX,
            champ_split_collision(coll, entry, shift + BITS, owner),
        ]
    return [1 << de, 1 << dc, owner, _NO_INDEX, *entry, coll]


def _descend(node: Node, shift: int, h: int, path: Path) -> Tuple[Node, int]:
    """``keytrie._descend`` in this layout: the path's child positions are
    negative (children counted from the end)."""
    while True:
        bit = 1 << ((h >> shift) & 31)
        nm = node[1]
        if not nm & bit:
            return node, shift
        j = -1 - (nm & (bit - 1)).bit_count()
        path.append((node, j))
        node = node[j]
        shift += BITS


def champ_put_path(
    path: Path,
    node: Node,
    shift: int,
    entry: Entry,
    old: Optional[Entry],
    owner: Optional[object],
) -> BitmapNode:
    """``keytrie.champ_put_path`` in this layout (``champ_put``'s edit of ``node``
    and of the nodes above it)."""
    if type(node) is CollisionNode:
        if entry[0] != node[FIRST][0]:  # another hash: both go below a bitmap node
            return _put_above(path, champ_split_collision(node, entry, shift, owner), owner)
        new = champ_collision_put(node, entry, old, owner)
        if new is node:
            return path[0][0]
        return _put_above(path, new, owner)
    bit = 1 << ((entry[0] >> shift) & 31)
    bitmap = node[0]
    i = 4 + 4 * (bitmap & (bit - 1)).bit_count()
    owned = owner is not None and node[2] is owner
    if not bitmap & bit:
        new = node if owned else node[:]
        new[i:i] = entry  # one step, then stores
        new[0] = bitmap | bit
    elif old is not None and node[i + 2] is old[2] and node[i + 1] == old[1]:
        new = node if owned else node[:]
        new[i : i + 4] = entry
    else:
        # The entry gives way to a child (built before anything is stored).
        child = champ_pair_subtree(tuple(node[i : i + 4]), entry, shift + BITS, owner)
        nodemap = node[1] | bit
        new = node[:]
        del new[i : i + 4]
        new.insert(len(new) - (nodemap & (bit - 1)).bit_count(), child)
        new[0] = bitmap ^ bit
        new[1] = nodemap
        if owned:
            node[:] = new  # one step
            new = node
    if new is node:
        return path[0][0] if path else node
    new[2] = owner
    return _put_above(path, new, owner)


def champ_set_copying(
    root: BitmapNode, h: int, key: Any, value: Any, seq: int
) -> Optional[Tuple[Optional[BitmapNode], Optional[Entry]]]:
    """``keytrie.champ_set_copying`` in this layout (None: a collision node
    at the bottom, the caller's general way)."""
    new = top = root[:]
    new[2] = None
    hh = h
    shift = 0
    while True:
        bit = 1 << (hh & 31)
        nm = new[1]
        if not nm & bit:
            break
        j = -1 - (nm & (bit - 1)).bit_count()
        child = new[j][:]
        child[2] = None
        new[j] = child
        new = child
        hh >>= 5
        shift += 5
    bitmap = new[0]
    i = 4 + 4 * (bitmap & (bit - 1)).bit_count()
    if not bitmap & bit:
        if not bitmap and not nm and len(new) > 4:
            return None  # a collision node: the general way
        new[i:i] = (h, seq, key, value)
        new[0] = bitmap | bit
        return top, None
    if new[i] == h:
        k = new[i + 2]
        if k is key or k == key:
            old = (h, new[i + 1], k, new[i + 3])
            if value is old[3]:
                return None, old
            new[i + 3] = value
            return top, old
    child = champ_pair_subtree(tuple(new[i : i + 4]), (h, seq, key, value), shift + BITS, None)
    del new[i : i + 4]
    nodemap = nm | bit
    new.insert(len(new) - (nodemap & (bit - 1)).bit_count(), child)
    new[0] = bitmap ^ bit
    new[1] = nodemap
    return top, None


def champ_build(entries: List[Entry], owner: Optional[object]) -> BitmapNode:
    """``keytrie.champ_build`` in this layout: from the columns of the entries."""
    if not entries:
        return EMPTY_ROOT
    hashes: List[int] = []
    seqs: List[int] = []
    items: List[Tuple[Any, Any]] = []
    for entry in entries:
        hashes.append(entry[0])
        seqs.append(entry[1])
        items.append((entry[2], entry[3]))
    return _build_columns(range(len(entries)), hashes, items, 0, owner, seqs)


def champ_build_items(
    hashes: Sequence[int], items: Sequence[Tuple[Any, Any]], owner: Optional[object]
) -> BitmapNode:
    """``keytrie.champ_build_items`` in this layout: built from the two
    columns, with no entry tuples for the entries stored inline."""
    if not items:
        return EMPTY_ROOT
    return _build_columns(range(len(items)), hashes, items, 0, owner)


def _build_columns(
    where: Iterable[int],
    hashes: Sequence[int],
    items: Sequence[Tuple[Any, Any]],
    shift: int,
    owner: Optional[object],
    seqs: Optional[Sequence[int]] = None,
) -> BitmapNode:
    """The bitmap node at ``shift`` holding the entries at the positions
    ``where`` (ascending), read from the columns: the entry at position i is
    ``(hashes[i], seq, *items[i])``, its seq ``seqs[i]``, or i itself when
    ``seqs`` is None (a fresh build).  No entry tuple is made for an item
    stored inline, the buckets hold positions (a list of ints is unboxed on
    PyPy), and each node is allocated at its final size rather than grown by
    appends (on PyPy at n = 100,000, among kept maps as in the benchmark: the
    whole construction 0.62x the time of entries and appends,
    docs/design-decisions.md, "PyPy: the key trie's layout and the floors")."""
    if len(where) <= _FEW:  # type: ignore[arg-type]
        return _build_few(where, hashes, items, shift, owner, seqs)  # type: ignore[arg-type]
    buckets: List[Optional[List[int]]] = [None] * FANOUT
    for i in where:
        d = (hashes[i] >> shift) & 31
        bucket = buckets[d]
        if bucket is None:
            buckets[d] = [i]
        else:
            bucket.append(i)
    datamap = nodemap = 0
    for d in range(FANOUT):
        bucket = buckets[d]
        if bucket is not None:
            if len(bucket) == 1:
                datamap |= 1 << d
            else:
                nodemap |= 1 << d
    node: BitmapNode = [None] * (FIRST + 4 * datamap.bit_count() + nodemap.bit_count())
    node[0] = datamap
    node[1] = nodemap
    node[2] = owner
    node[3] = _NO_INDEX
    at = FIRST  # the next entry's slot
    below = len(node) - 1  # the next child's (children in reverse digit order)
    for d in range(FANOUT):
        bucket = buckets[d]
        if bucket is None:
            continue
        buckets[d] = None
        if len(bucket) == 1:
            i = bucket[0]
            key, value = items[i]
            node[at] = hashes[i]
            node[at + 1] = i if seqs is None else seqs[i]
            node[at + 2] = key
            node[at + 3] = value
            at += 4
            continue
        node[below] = _column_child(bucket, hashes, items, shift + BITS, owner, seqs)
        below -= 1
    return node


_FEW = 16
"""Up to this many positions, ``_build_columns`` places them without
buckets (``_build_few``): at n = 100,000 most calls are near the leaves,
with 3-10 positions each."""


def _build_few(
    where: List[int],
    hashes: Sequence[int],
    items: Sequence[Tuple[Any, Any]],
    shift: int,
    owner: Optional[object],
    seqs: Optional[Sequence[int]],
) -> BitmapNode:
    """``_build_columns`` for a few positions: no 32-slot bucket array
    and no bucket lists.  The digits are read once; a digit seen once is an
    inline entry, placed at its slot by the popcount of the datamap below
    it; a digit seen more often is a child, placed from the end by the
    nodemap's."""
    digits: List[int] = []
    seen = twice = 0
    for i in where:
        d = (hashes[i] >> shift) & 31
        digits.append(d)
        bit = 1 << d
        if seen & bit:
            twice |= bit
        seen |= bit
    datamap = seen & ~twice
    nodemap = twice
    node: BitmapNode = [None] * (FIRST + 4 * datamap.bit_count() + nodemap.bit_count())
    node[0] = datamap
    node[1] = nodemap
    node[2] = owner
    node[3] = _NO_INDEX
    last = len(node) - 1
    for t in range(len(where)):
        bit = 1 << digits[t]
        if datamap & bit:
            i = where[t]
            at = FIRST + 4 * (datamap & (bit - 1)).bit_count()
            key, value = items[i]
            node[at] = hashes[i]
            node[at + 1] = i if seqs is None else seqs[i]
            node[at + 2] = key
            node[at + 3] = value
        elif nodemap & bit:
            # the digit's first position: its child, from all its positions
            below: List[int] = []
            for u in range(t, len(where)):
                if digits[u] == digits[t]:
                    below.append(where[u])
            nodemap ^= bit  # (done: a later position of this digit skips it)
            slot = last - (twice & (bit - 1)).bit_count()
            node[slot] = _column_child(below, hashes, items, shift + BITS, owner, seqs)
    return node


def _column_child(
    where: List[int],
    hashes: Sequence[int],
    items: Sequence[Tuple[Any, Any]],
    shift: int,
    owner: Optional[object],
    seqs: Optional[Sequence[int]],
) -> Node:
    """The node at ``shift`` holding two or more positions (ascending): a
    pair's subtree, a bitmap node, or a collision node when every hash is
    equal.  (Loops, not comprehensions, in these builds: CPython 3.11 leaks a
    comprehension's closure, and with it ``items``, when an allocation fails
    in it; the layout runs there when forced, for tests.)"""
    i = where[0]
    if len(where) == 2:
        j = where[1]
        ki, vi = items[i]
        kj, vj = items[j]
        si, sj = (i, j) if seqs is None else (seqs[i], seqs[j])
        return champ_pair_subtree((hashes[i], si, ki, vi), (hashes[j], sj, kj, vj), shift, owner)
    h = hashes[i]
    for i in where:
        if hashes[i] != h:
            return _build_columns(where, hashes, items, shift, owner, seqs)
    entries: List[Entry] = []
    for i in where:
        key, value = items[i]
        entries.append((h, i if seqs is None else seqs[i], key, value))
    return champ_collision_alloc(owner, entries)


def champ_delete_copying(
    root: BitmapNode, h: int, key: Any
) -> Optional[Tuple[Optional[BitmapNode], Optional[Entry]]]:
    """``keytrie.champ_delete_copying`` in this layout (``(None, old)``: a
    rare shape, the caller's general way)."""
    new = top = root[:]
    new[2] = None
    up: Optional[Node] = None
    up_j = up_bit = 0
    hh = h
    while True:
        bit = 1 << (hh & 31)
        nm = new[1]
        if not nm & bit:
            break
        j = -1 - (nm & (bit - 1)).bit_count()
        child = new[j][:]
        child[2] = None
        new[j] = child
        up = new
        up_j = j
        up_bit = bit
        new = child
        hh >>= 5
    bitmap = new[0]
    if not bitmap & bit:
        if not bitmap and not nm and len(new) > 4:
            return None, None  # a collision node: the general way
        return None
    i = 4 + 4 * (bitmap & (bit - 1)).bit_count()
    if new[i] != h:
        return None
    k = new[i + 2]
    if not (k is key or k == key):
        return None
    old = (h, new[i + 1], k, new[i + 3])
    del new[i : i + 4]
    new[0] = bitmap ^ bit
    if up is None:
        return top, old
    if len(new) == 5:  # no entry left, one child: a lone collision node moves up
        return (None, old) if type(new[4]) is CollisionNode else (top, old)
    if len(new) != 8 or nm:
        return top, old
    # One entry left and no children: the parent's copy takes it inline.
    bitmap = up[0] | up_bit
    e = 4 + 4 * (bitmap & (up_bit - 1)).bit_count()
    del up[up_j]
    up[e:e] = new[4:8]
    up[0] = bitmap
    up[1] ^= up_bit
    if len(up) == 8 and not up[1] and up is not top:
        return None, old  # the parent is left with one entry: the general way
    return top, old


def champ_remove_path(
    path: Path, node: Node, shift: int, old: Entry, owner: Optional[object]
) -> BitmapNode:
    """``keytrie.champ_remove_path`` in this layout (``champ_remove``'s edit)."""
    new: Node
    if type(node) is CollisionNode:
        new = champ_collision_remove(node, old, owner)  # (never the root)
    else:
        bit = 1 << ((old[0] >> shift) & 31)
        i = 4 + 4 * (node[0] & (bit - 1)).bit_count()
        bitmap = node[0] ^ bit
        if not path and owner is not None and node[2] is owner:
            del node[i : i + 4]  # one step, then a store
            node[0] = bitmap
            return node
        new = node[:]  # below the root: always a new node
        del new[i : i + 4]
        new[0] = bitmap
        new[2] = owner
        if not path:
            return new
    base = shift - BITS * len(path)  # the shift of path[0]'s node
    for k in range(len(path) - 1, -1, -1):
        single: Any = None  # the one entry left (its four fields), to inline
        if type(new) is CollisionNode:
            if len(new) == 5:
                single = new[4]  # (the tuple: list() of it leaks it on a MemoryError, < 3.13)
        elif len(new) == 8 and not new[1]:
            single = new[4:8]
        elif len(new) == 5 and type(new[4]) is CollisionNode:
            new = new[4]  # a lone collision node moves up
        parent, j = path[k]
        if single is not None:
            bit = 1 << ((old[0] >> (base + BITS * k)) & 31)
            bitmap = parent[0] | bit
            e = 4 + 4 * (bitmap & (bit - 1)).bit_count()
            rebuilt = parent[:]
            del rebuilt[j]
            rebuilt[e:e] = single
            rebuilt[0] = bitmap
            rebuilt[1] ^= bit
            rebuilt[2] = owner
            if not k and owner is not None and parent[2] is owner:
                parent[:] = rebuilt  # one step
                return parent
            new = rebuilt
            continue
        if k and type(new) is CollisionNode and len(parent) == 5 and not parent[0]:
            continue  # the parent would hold only it: it moves up again
        return _put_above(path[: k + 1], new, owner)
    return new


def champ_entries(node: Node) -> Iterator[Entry]:
    """Every entry below ``node``, in trie order, as tuples.  Cost: O(n)."""
    if type(node) is CollisionNode:
        yield from node[FIRST:]
        return
    d = FIRST + 4 * node[DATAMAP].bit_count()
    for i in range(FIRST, d, 4):
        yield (node[i], node[i + 1], node[i + 2], node[i + 3])
    for k in range(len(node) - 1, d - 1, -1):
        yield from champ_entries(node[k])


def champ_collect(node: Node, out: List[Entry]) -> None:
    """Append every entry below ``node`` to ``out``, in trie order.  Cost: O(n)."""
    if type(node) is CollisionNode:
        for k in range(FIRST, len(node)):
            out.append(node[k])
        return
    d = FIRST + 4 * node[DATAMAP].bit_count()
    for i in range(FIRST, d, 4):
        out.append((node[i], node[i + 1], node[i + 2], node[i + 3]))
    for k in range(len(node) - 1, d - 1, -1):
        champ_collect(node[k], out)


def champ_equal(a: Node, b: Node) -> bool:
    """``keytrie.champ_equal`` in this layout: the fields compared in place."""
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
    d = FIRST + 4 * a[DATAMAP].bit_count()
    for i in range(FIRST, d, 4):
        if a[i] != b[i]:
            return False
        ka = a[i + 2]
        kb = b[i + 2]
        if not (ka is kb or ka == kb):
            return False
        va = a[i + 3]
        vb = b[i + 3]
        if not (va is vb or va == vb):
            return False
    for k in range(len(a) - 1, d - 1, -1):
        if not champ_equal(a[k], b[k]):
            return False
    return True


def champ_identical(a: Node, b: Node) -> bool:
    """``keytrie.champ_identical`` in this layout."""
    if a is b:
        return True
    if type(a) is not type(b) or len(a) != len(b):
        return False
    if type(a) is CollisionNode:
        for ea, eb in zip(a[FIRST:], b[FIRST:]):
            if ea is not eb and (ea[1] != eb[1] or ea[2] is not eb[2] or ea[3] is not eb[3]):
                return False
        return True
    if a[DATAMAP] != b[DATAMAP] or a[NODEMAP] != b[NODEMAP]:
        return False
    d = FIRST + 4 * a[DATAMAP].bit_count()
    for i in range(FIRST, d, 4):
        if a[i + 2] is not b[i + 2] or a[i + 3] is not b[i + 3] or a[i + 1] != b[i + 1]:
            return False
    return all(champ_identical(a[k], b[k]) for k in range(d, len(a)))


def _diff_inline_entries(a: BitmapNode, b: BitmapNode, out: DiffOut, by_identity: bool) -> int:
    """``keytrie._diff_inline_entries`` in this layout: the entries' fields
    compared in place, a tuple built only for an entry that differs."""
    d: int = FIRST + 4 * a[DATAMAP].bit_count()
    for i in range(FIRST, d, 4):
        if a[i + 2] is not b[i + 2] or a[i + 3] is not b[i + 3] or a[i] != b[i]:
            champ_diff_lists([tuple(a[i : i + 4])], [tuple(b[i : i + 4])], out, by_identity)
    return d


def champ_subtree_entries(node: BitmapNode, bit: int) -> List[Entry]:
    """The entries below the digit with bit ``bit`` of ``node`` (for ``champ_diff``)."""
    if node[DATAMAP] & bit:
        i = FIRST + 4 * (node[DATAMAP] & (bit - 1)).bit_count()
        return [(node[i], node[i + 1], node[i + 2], node[i + 3])]
    if node[NODEMAP] & bit:
        return list(champ_entries(node[-1 - (node[NODEMAP] & (bit - 1)).bit_count()]))
    return []


def _check_layout(node: BitmapNode, datamap: int, nodemap: int) -> None:
    """Assert that a bitmap node's length and fields agree with its bitmaps."""
    assert FIRST + 4 * datamap.bit_count() + nodemap.bit_count() == len(node), (
        "bitmaps/payload mismatch"
    )
    assert node[INDEX] is _NO_INDEX, "a flat-entry node with an index"
    for i in range(FIRST, FIRST + 4 * datamap.bit_count(), 4):
        assert type(node[i]) is int and type(node[i + 1]) is int, "malformed entry"
