"""The key index: a CHAMP trie over the full hash.

A key finds its entry by the 5-bit digits of its (unsigned, 64-bit) hash, taken
from the low end: digit ``(h >> shift) & 31`` for shift 0, 5, ..., 60.  Each
``BitmapNode`` keeps two bitmaps (CHAMP, Steindorfer & Vinju 2015): ``datamap``
marks digits that hold an entry inline, ``nodemap`` digits that hold a child
node; ``entries`` and ``children`` are dense lists in digit order, indexed by the
popcount of the bitmap below the digit's bit.  An entry is the tuple
``(hash, seq, key, value)``: the stored hash means a key is never re-hashed; the
``seq`` is its position in the order trie.

Two entries whose digits clash go into a child built canonically: equal full
hashes make a ``CollisionNode`` (a short list compared as a set); otherwise a
``BitmapNode`` at the next shift.  Deletion undoes exactly that: a non-root child
left with one entry is inlined into its parent, and a non-root ``BitmapNode``
left holding only a ``CollisionNode`` is replaced by it.  The shape is therefore
a function of the set of hashes alone, never of history, which is what lets
``champ_equal`` and ``champ_diff`` compare two versions position by position and
skip subtrees they share (``is``).

Edits are split in two: ``champ_find`` locates (it may run the keys' ``__eq__``),
then ``champ_put`` / ``champ_remove`` edit knowing the old entry by identity and
run no user code, so a failing or re-entrant ``__eq__`` can never leave a
half-edited trie.  Nodes whose ``owner`` is the caller's owner token belong to
one transient (an Evolver or an internal builder) and are edited in place;
everything else is copied along the path (O(log n) new nodes).

Mirrors ``frozenmap/_ccore/keytrie.c``.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

__all__ = [
    "Entry",
    "BitmapNode",
    "CollisionNode",
    "EMPTY_ROOT",
    "champ_find",
    "champ_put",
    "champ_remove",
    "champ_equal",
    "champ_identical",
    "champ_diff",
    "champ_entries",
    "champ_check",
    "champ_node_ids",
    "champ_dump",
]

Entry = Tuple[int, int, Any, Any]
"""``(hash, seq, key, value)``."""

BITS = 5
DIGIT_MASK = 31
MAX_SHIFT = 60  # the last digit holds the top 4 bits of a 64-bit hash


class BitmapNode:
    """A CHAMP node: inline entries and child nodes, selected by hash digit."""

    __slots__ = ("datamap", "nodemap", "entries", "children", "owner")

    def __init__(
        self,
        datamap: int,
        nodemap: int,
        entries: List[Entry],
        children: List["Node"],
        owner: Optional[object],
    ) -> None:
        self.datamap = datamap
        self.nodemap = nodemap
        self.entries = entries
        self.children = children
        self.owner = owner


class CollisionNode:
    """Two or more entries whose full hashes are equal."""

    __slots__ = ("hash", "entries", "owner")

    def __init__(self, hash: int, entries: List[Entry], owner: Optional[object]) -> None:
        self.hash = hash
        self.entries = entries
        self.owner = owner


Node = Union[BitmapNode, CollisionNode]

EMPTY_ROOT = BitmapNode(0, 0, [], [], None)
"""The root of every empty version; never edited (its owner is None)."""


def _index(bitmap: int, bit: int) -> int:
    return (bitmap & (bit - 1)).bit_count()


def _editable_bitmap(node: BitmapNode, owner: Optional[object]) -> BitmapNode:
    """``node`` itself if the caller owns it, else a copy the caller owns."""
    if owner is not None and node.owner is owner:
        return node
    return BitmapNode(node.datamap, node.nodemap, node.entries[:], node.children[:], owner)


def _editable_collision(node: CollisionNode, owner: Optional[object]) -> CollisionNode:
    if owner is not None and node.owner is owner:
        return node
    return CollisionNode(node.hash, node.entries[:], owner)


# --- lookup ------------------------------------------------------------------


def champ_find(root: BitmapNode, h: int, key: Any) -> Optional[Entry]:
    """Return the entry for ``key`` (whose unsigned hash is ``h``), or None.

    Compares the stored hash, then identity, then ``stored_key == key``; that
    ``__eq__`` is the only user code run, and its exceptions propagate.
    Cost: O(log32 n) nodes.
    """
    node: Node = root
    shift = 0
    while True:
        if type(node) is CollisionNode:
            if node.hash == h:
                for entry in node.entries:
                    k = entry[2]
                    if k is key or k == key:
                        return entry
            return None
        bit = 1 << ((h >> shift) & DIGIT_MASK)
        if node.datamap & bit:  # type: ignore[union-attr]
            entry = node.entries[_index(node.datamap, bit)]  # type: ignore[union-attr]
            if entry[0] == h:
                k = entry[2]
                if k is key or k == key:
                    return entry
            return None
        if not node.nodemap & bit:  # type: ignore[union-attr]
            return None
        node = node.children[_index(node.nodemap, bit)]  # type: ignore[union-attr]
        shift += BITS


def champ_find_stored(root: BitmapNode, h: Optional[int], key: Any) -> Optional[Entry]:
    """The entry holding this very key object, found by identity alone: no
    ``__eq__`` and no ``__hash__`` runs (a stored key is never hashed again).

    With the key's hash known (``h``), O(log32 n); with ``h`` None, a scan of
    every entry, O(n).
    """
    if h is None:
        for entry in champ_entries(root):
            if entry[2] is key:
                return entry
        return None
    node: Node = root
    shift = 0
    while True:
        if type(node) is CollisionNode:
            for entry in node.entries:
                if entry[2] is key:
                    return entry
            return None
        bit = 1 << ((h >> shift) & DIGIT_MASK)
        if node.datamap & bit:  # type: ignore[union-attr]
            entry = node.entries[_index(node.datamap, bit)]  # type: ignore[union-attr]
            return entry if entry[2] is key else None
        if not node.nodemap & bit:  # type: ignore[union-attr]
            return None
        node = node.children[_index(node.nodemap, bit)]  # type: ignore[union-attr]
        shift += BITS


# --- insertion ---------------------------------------------------------------


def _pair_subtree(a: Entry, b: Entry, shift: int, owner: Optional[object]) -> Node:
    """The canonical subtree at ``shift`` holding two distinct entries."""
    if a[0] == b[0]:
        return CollisionNode(a[0], [a, b], owner)
    da = (a[0] >> shift) & DIGIT_MASK
    db = (b[0] >> shift) & DIGIT_MASK
    if da == db:
        child = _pair_subtree(a, b, shift + BITS, owner)
        return BitmapNode(0, 1 << da, [], [child], owner)
    pair = [a, b] if da < db else [b, a]
    return BitmapNode((1 << da) | (1 << db), 0, pair, [], owner)


def _split_collision(
    coll: CollisionNode, entry: Entry, shift: int, owner: Optional[object]
) -> BitmapNode:
    """A BitmapNode at ``shift`` holding ``coll`` and an entry of another hash."""
    dc = (coll.hash >> shift) & DIGIT_MASK
    de = (entry[0] >> shift) & DIGIT_MASK
    if dc == de:
        child = _split_collision(coll, entry, shift + BITS, owner)
        return BitmapNode(0, 1 << dc, [], [child], owner)
    return BitmapNode(1 << de, 1 << dc, [entry], [coll], owner)


def _collision_put(
    node: CollisionNode, shift: int, entry: Entry, old: Optional[Entry], owner: Optional[object]
) -> Node:
    if entry[0] != node.hash:
        return _split_collision(node, entry, shift, owner)
    new = _editable_collision(node, owner)
    if old is not None:
        for i, e in enumerate(new.entries):
            if e is old:
                new.entries[i] = entry
                return new
        raise AssertionError("champ_put: old entry not in its collision node")
    new.entries.append(entry)  # one step: done, or MemoryError with nothing done
    return new


def champ_put(
    node: BitmapNode, shift: int, entry: Entry, old: Optional[Entry], owner: Optional[object]
) -> BitmapNode:
    """Return ``node`` with ``entry`` stored, replacing ``old`` if given.

    ``old`` is what ``champ_find`` returned for the key (None: the key is
    absent).  Runs no user code.  Nodes owned by ``owner`` are edited in place.
    Cost: O(log n) new nodes.

    Failure-atomic (a MemoryError leaves the trie as it was): every in-place
    edit allocates what it needs first and then only stores, and the nodes
    above it only store a child pointer.
    """
    h = entry[0]
    bit = 1 << ((h >> shift) & DIGIT_MASK)
    if node.datamap & bit:
        i = _index(node.datamap, bit)
        current = node.entries[i]
        new = _editable_bitmap(node, owner)
        if current is old:
            new.entries[i] = entry
            return new
        child = _pair_subtree(current, entry, shift + BITS, owner)
        nodemap = node.nodemap | bit
        entries = new.entries[:i] + new.entries[i + 1 :]
        children = new.children[:]
        children.insert(_index(nodemap, bit), child)
        datamap = node.datamap ^ bit
        new.entries, new.children, new.datamap, new.nodemap = entries, children, datamap, nodemap
        return new
    if node.nodemap & bit:
        j = _index(node.nodemap, bit)
        child = node.children[j]
        if type(child) is CollisionNode:
            new_child: Node = _collision_put(child, shift + BITS, entry, old, owner)
        else:
            new_child = champ_put(child, shift + BITS, entry, old, owner)  # type: ignore[arg-type]
        if new_child is child:
            return node
        new = _editable_bitmap(node, owner)
        new.children[j] = new_child
        return new
    new = _editable_bitmap(node, owner)
    datamap = node.datamap | bit
    new.entries.insert(_index(datamap, bit), entry)  # one step, then a store
    new.datamap = datamap
    return new


# --- removal -----------------------------------------------------------------


def _collision_remove(node: CollisionNode, old: Entry, owner: Optional[object]) -> Node:
    # Always a new node: the parent may still fail to inline what is left,
    # and the node it holds must then be as it was.
    for i, e in enumerate(node.entries):
        if e is old:
            return CollisionNode(node.hash, node.entries[:i] + node.entries[i + 1 :], owner)
    raise AssertionError("champ_remove: old entry not in its collision node")


def champ_remove(node: BitmapNode, shift: int, old: Entry, owner: Optional[object]) -> BitmapNode:
    """Return ``node`` without the entry ``old`` (as located by ``champ_find``).

    Keeps the canonical shape (see the module docstring).  Runs no user code.
    Cost: O(log n) new nodes.

    Failure-atomic, as ``champ_put``: the node that loses the entry is a new
    one below the root (its parent may inline it, and that may fail), and
    the nodes above only store a child pointer or are rebuilt from lists
    made before anything is stored.
    """
    bit = 1 << ((old[0] >> shift) & DIGIT_MASK)
    if node.datamap & bit:
        i = _index(node.datamap, bit)
        datamap = node.datamap ^ bit
        if shift:
            return BitmapNode(
                datamap,
                node.nodemap,
                node.entries[:i] + node.entries[i + 1 :],
                node.children[:],
                owner,
            )
        new = _editable_bitmap(node, owner)
        del new.entries[i]  # one step, then a store
        new.datamap = datamap
        return new
    j = _index(node.nodemap, bit)
    child = node.children[j]
    if type(child) is CollisionNode:
        new_child: Node = _collision_remove(child, old, owner)
        single = len(new_child.entries) == 1
    else:
        new_child = champ_remove(child, shift + BITS, old, owner)  # type: ignore[arg-type]
        if not new_child.children:
            single = len(new_child.entries) == 1
        else:
            single = False
            if not new_child.entries and len(new_child.children) == 1:
                only = new_child.children[0]
                if type(only) is CollisionNode:
                    new_child = only  # a lone collision node moves up
    new = _editable_bitmap(node, owner) if (single or new_child is not child) else node
    if single:
        # Inline the child's last entry into this node: new lists first.
        datamap = node.datamap | bit
        nodemap = node.nodemap ^ bit
        entries = new.entries[:]
        entries.insert(_index(datamap, bit), new_child.entries[0])
        children = new.children[:j] + new.children[j + 1 :]
        new.entries, new.children, new.datamap, new.nodemap = entries, children, datamap, nodemap
    elif new_child is not child:
        new.children[j] = new_child
    return new


# --- whole-trie walks ----------------------------------------------------------


def champ_entries(node: Node) -> Iterator[Entry]:
    """Every entry below ``node``, in trie order.  Cost: O(n)."""
    if type(node) is CollisionNode:
        yield from node.entries
        return
    yield from node.entries
    for child in node.children:  # type: ignore[union-attr]
        yield from champ_entries(child)


def _same_pair(a: Entry, b: Entry) -> bool:
    """Whether two entries at one position hold equal keys and equal values."""
    ka = a[2]
    kb = b[2]
    if a[0] != b[0] or not (ka is kb or ka == kb):
        return False
    va = a[3]
    vb = b[3]
    return va is vb or bool(va == vb)


def _find_in(entries: List[Entry], entry: Entry) -> Optional[Entry]:
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
                found = _find_in(b, entry)
                if found is None:
                    return False
                match = found
        if not _same_pair(entry, match):
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
        if a.hash != b.hash or len(a.entries) != len(b.entries):  # type: ignore[union-attr]
            return False
        return _collision_equal(a.entries, b.entries)
    if a.datamap != b.datamap or a.nodemap != b.nodemap:  # type: ignore[union-attr]
        return False
    for ea, eb in zip(a.entries, b.entries):
        if ea is not eb and not _same_pair(ea, eb):
            return False
    for ca, cb in zip(a.children, b.children):  # type: ignore[union-attr]
        if not champ_equal(ca, cb):
            return False
    return True


def champ_identical(a: Node, b: Node) -> bool:
    """Whether two tries hold the very same entries: the same key and value
    objects at the same sequence numbers.  Shared subtrees are skipped and no
    user code runs; a collision node's entries are compared by position (a
    rare false "no" is possible, never a false "yes")."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if type(a) is BitmapNode and (
        a.datamap != b.datamap or a.nodemap != b.nodemap  # type: ignore[union-attr]
    ):
        return False
    if len(a.entries) != len(b.entries):
        return False
    for ea, eb in zip(a.entries, b.entries):
        if ea is not eb and (ea[2] is not eb[2] or ea[3] is not eb[3] or ea[1] != eb[1]):
            return False
    if type(a) is CollisionNode:
        return True
    return all(champ_identical(ca, cb) for ca, cb in zip(a.children, b.children))  # type: ignore[union-attr]


DiffOut = Tuple[List[Entry], List[Entry], List[Tuple[Entry, Entry]]]


def _diff_lists(a: List[Entry], b: List[Entry], out: DiffOut) -> None:
    """Diff two small entry lists matched by hash, then key."""
    added, removed, changed = out
    by_hash: Dict[int, List[Entry]] = {}
    for e in b:
        by_hash.setdefault(e[0], []).append(e)
    for ea in a:
        candidates = by_hash.get(ea[0])
        match = _find_in(candidates, ea) if candidates else None
        if match is None:
            removed.append(ea)
            continue
        candidates.remove(match)  # type: ignore[union-attr]
        va = ea[3]
        vb = match[3]
        if va is not vb and va != vb:
            changed.append((ea, match))
    for rest in by_hash.values():
        # (not added.extend(rest): on CPython < 3.13, extending an empty list
        # leaks a reference to the argument when the allocation fails)
        for e in rest:
            added.append(e)


def champ_diff(a: Node, b: Node, out: DiffOut) -> None:
    """Append to ``out`` = (added, removed, changed) what differs from a to b.

    ``added`` gets b's entries whose key is not in a, ``removed`` a's entries
    whose key is not in b, ``changed`` pairs (a's entry, b's entry) for keys in
    both whose values differ (``old is not new and old != new``).  Shared
    subtrees are skipped: O(d log n) for versions d edits apart.
    """
    if a is b:
        return
    if type(a) is not BitmapNode or type(b) is not BitmapNode:
        _diff_lists(list(champ_entries(a)), list(champ_entries(b)), out)
        return
    bits = a.datamap | a.nodemap | b.datamap | b.nodemap
    while bits:
        bit = bits & -bits
        bits ^= bit
        if a.nodemap & bit and b.nodemap & bit:
            champ_diff(a.children[_index(a.nodemap, bit)], b.children[_index(b.nodemap, bit)], out)
            continue
        side_a = _subtree_entries(a, bit)
        side_b = _subtree_entries(b, bit)
        if len(side_a) == 1 and len(side_b) == 1 and side_a[0] is side_b[0]:
            continue
        _diff_lists(side_a, side_b, out)


def _subtree_entries(node: BitmapNode, bit: int) -> List[Entry]:
    if node.datamap & bit:
        return [node.entries[_index(node.datamap, bit)]]
    if node.nodemap & bit:
        return list(champ_entries(node.children[_index(node.nodemap, bit)]))
    return []


# --- checking and debugging ----------------------------------------------------


def champ_check(node: Node, shift: int = 0, prefix: int = 0, is_root: bool = True) -> int:
    """Assert the trie invariants below ``node``; return its number of entries.

    Bitmaps match the lists, every hash agrees with the digits that led to it,
    collision nodes hold >= 2 entries of one hash, and the shape is canonical.
    """
    low = (1 << shift) - 1
    if type(node) is CollisionNode:
        assert not is_root, "the root must be a BitmapNode"
        assert len(node.entries) >= 2, "collision node with %d entries" % len(node.entries)
        for e in node.entries:
            assert e[0] == node.hash, "collision node holds a foreign hash"
            assert e[0] & low == prefix, "collision hash off its path"
        return len(node.entries)
    assert type(node) is BitmapNode, "unknown node type %r" % (type(node),)
    assert shift <= MAX_SHIFT, "bitmap node below the last digit"
    assert node.datamap & node.nodemap == 0, "digit both inline and child"
    assert node.datamap.bit_count() == len(node.entries), "datamap/entries mismatch"
    assert node.nodemap.bit_count() == len(node.children), "nodemap/children mismatch"
    assert node.datamap < (1 << 32) and node.nodemap < (1 << 32), "bitmap over 32 bits"
    digits = []
    for e in node.entries:
        assert len(e) == 4, "malformed entry"
        assert e[0] & low == prefix, "entry hash off its path"
        digits.append((e[0] >> shift) & DIGIT_MASK)
    assert digits == sorted(digits), "entries out of digit order"
    for d in digits:
        assert node.datamap >> d & 1, "entry at the wrong digit"
    total = len(node.entries)
    # Hashes seen directly at this node; a BitmapNode child always stands for
    # two or more distinct hashes.
    hashes = {e[0] for e in node.entries}
    has_bitmap_child = False
    bits = node.nodemap
    for child in node.children:
        bit = bits & -bits
        bits ^= bit
        d = bit.bit_length() - 1
        total += champ_check(child, shift + BITS, prefix | (d << shift), False)
        if type(child) is CollisionNode:
            hashes.add(child.hash)
        else:
            has_bitmap_child = True
    if not is_root:
        assert total >= 2, "non-root node with %d entries (must be inlined)" % total
        assert has_bitmap_child or len(hashes) >= 2, "non-root bitmap node over a single hash"
    return total


def champ_node_ids(node: Node, out: List[int]) -> None:
    """Append ``id()`` of every node below ``node`` (itself included)."""
    out.append(id(node))
    if type(node) is BitmapNode:
        for child in node.children:
            champ_node_ids(child, out)


def champ_dump(node: Node, indent: int = 0) -> List[str]:
    """Lines describing the trie, for failing tests."""
    pad = "  " * indent
    if type(node) is CollisionNode:
        lines = ["%sCollision hash=%#x" % (pad, node.hash)]
        lines += ["%s  %r" % (pad, e) for e in node.entries]
        return lines
    lines = ["%sBitmap data=%#x nodes=%#x" % (pad, node.datamap, node.nodemap)]  # type: ignore[union-attr]
    lines += ["%s  %r" % (pad, e) for e in node.entries]
    for child in node.children:  # type: ignore[union-attr]
        lines += champ_dump(child, indent + 1)
    return lines
