"""The order index: a radix trie on sequence numbers (leaves of 8 items,
inner nodes of 16 children).

Every new key takes the version's ``next_seq`` (which only grows along a line of
descent); replacing a value keeps the key's seq, so its position stays, as in
``dict``.  This trie maps seq -> ``(key, value)``, with the most significant
digit first, so an in-order walk is insertion order and a reverse walk is
``reversed()``.

A leaf (``shift`` 0) holds up to 8 items, chosen by the 3-bit digit
``seq & 7``; an inner node at shift s (3, 7, ..., 63) holds up to 16 children,
chosen by the 4-bit digit ``(seq >> s) & 15``.  Small leaves make the path a
derivation copies cheaper: at n = 100,000 it copies 8 + 4 x 16 slots rather
than 16 + 5 x 8 (leaves of 16, inner nodes of 8), one node fewer; measured in
the C core, 5-11% fewer instructions for set and delete, for about 3.5 more
bytes per item.  ``bitmap`` marks the occupied digits and the
slots are dense in digit order.  A node is one flat Python list, ``[shift,
prefix, bitmap, owner, slots...]``: cheaper to build, copy and index in the
interpreter than an object with attributes, and a copy along a path is one
slice.  Paths are compressed: a child may sit at any lower shift, and every
node records ``prefix = seq >> (shift + width)``, the digits above its own
that all seqs below it share, so a walk can tell a miss from a hit.

Deletion really removes: a leaf left empty disappears, and an inner node left
with one child is replaced by that child.  Inner nodes therefore always have two
or more children, the trie has fewer than 2n nodes under any deletion pattern,
and no edit ever pays for tombstones or a compaction pass, whichever old version
it starts from.  Depth is at most 17 (64-bit seqs); with dense seqs it is
1 + log16(n / 8).

**Counts.**  An inner node ends with one more field, the number of items
below it (``[shift, prefix, bitmap, owner, children..., size]``); a leaf's is
its number of slots.  That makes positional access O(log n): ``order_at``
finds the i-th item by summing the sizes of the children left of the one that
holds it, ``order_rank`` the position of a seq the same way.  Edits keep the
sizes along the path they copy or edit anyway (+1 for an insert, -1 for a
removal).  Inner nodes are about 1/120 of the items (16 children of 8), so
the field costs well under a byte per item; a field in every leaf would have
cost 2 (the list's item array grows by one 16-byte allocation step).

Mirrors ``frozenmap/_ccore/ordertrie.c``.
"""

from __future__ import annotations

from typing import Any, Generator, Iterator, List, Optional, Sequence, Tuple

__all__ = [
    "OrderNode",
    "order_get",
    "order_insert",
    "order_insert_copying",
    "order_replace",
    "order_replace_copying",
    "order_remove",
    "order_remove_copying",
    "order_last",
    "order_size",
    "order_at",
    "order_rank",
    "order_items",
    "order_items_reversed",
    "order_build",
    "order_check",
    "order_node_ids",
    "order_dump",
]

Item = Tuple[Any, Any]
"""``(key, value)``: what iteration over items yields, shared, never copied."""

# The layout's numbers, derived from the two widths as the C core derives its
# own (ORDER_LEAF_BITS and the rest, cfrozenmap.h; tests/test_layout_constants.py
# holds each to its C twin, and this module to writing none of them out).
LEAF_BITS = 3
"""Bits of seq a leaf reads (its digit)."""
INNER_BITS = 4
"""Bits of seq an inner node reads."""
LEAF_SIZE = 1 << LEAF_BITS
INNER_SIZE = 1 << INNER_BITS
LEAF_FULL = (1 << LEAF_SIZE) - 1
"""The bitmap of a full leaf (whose slot for a digit is the digit itself)."""
INNER_FULL = (1 << INNER_SIZE) - 1
"""The bitmap of a full inner node."""
MAX_SHIFT = LEAF_BITS + (63 - LEAF_BITS) // INNER_BITS * INNER_BITS
"""The top inner node's shift (63): inner digits start at LEAF_BITS, one every
INNER_BITS, below 64."""


def _width(shift: int) -> int:
    """How many bits of seq a node at ``shift`` reads."""
    return LEAF_BITS if shift == 0 else INNER_BITS


def order_digit(seq: int, shift: int) -> int:
    return (seq >> shift) & ((1 << _width(shift)) - 1)


def order_prefix_of(seq: int, shift: int) -> int:
    return seq >> (shift + _width(shift))


# A node's fixed fields, then its slots from FIRST on.  (The hot loops write
# them as the literals 0, 1, 2, 3, 4: a global read per use costs time.)
SHIFT = 0
PREFIX = 1
BITMAP = 2
OWNER = 3
FIRST = 4

OrderNode = List[Any]
"""``[shift, prefix, bitmap, owner, slots...]``: up to 8 item slots (a leaf)
or 16 child slots, path-compressed."""

Path = List[Tuple[OrderNode, int]]


def order_leaf(seq: int, item: Item, owner: Optional[object]) -> OrderNode:
    return [0, seq >> LEAF_BITS, 1 << (seq & (LEAF_SIZE - 1)), owner, item]


def order_base(node: OrderNode) -> int:
    """The smallest seq the node's range covers."""
    return node[PREFIX] << (node[SHIFT] + _width(node[SHIFT]))  # type: ignore[no-any-return]


def _size(node: OrderNode) -> int:
    """How many items the node holds (see Counts above)."""
    return node[-1] if node[0] else len(node) - FIRST


def _grow(path: Path, delta: int) -> None:
    """Add ``delta`` to the size of every (owned) node along ``path``."""
    for parent, _ in path:
        parent[-1] += delta


def _reattach(path: Path, new: OrderNode, owner: Optional[object], delta: int) -> OrderNode:
    """Install ``new`` in place of the last node taken along ``path`` (a list of
    (parent, slot index)), copying the parents the caller does not own, each
    parent's size changed by ``delta`` (the items gained below); return the
    root.  Only stores into owned nodes, which happen after every copy."""
    if owner is None:
        for parent, i in reversed(path):
            copy = parent[:]
            copy[3] = None
            copy[i] = new
            copy[-1] += delta
            new = copy
        return new
    for k in range(len(path) - 1, -1, -1):
        parent, i = path[k]
        if owner is not None and parent[OWNER] is owner:
            parent[i] = new  # its own parent is owned too and keeps it
            _grow(path[: k + 1], delta)
            return path[0][0]
        copy = parent[:]
        copy[OWNER] = owner
        copy[i] = new
        copy[-1] += delta
        new = copy
    return new


def order_get(node: Optional[OrderNode], seq: int) -> Optional[Item]:
    """The item at ``seq``, or None.  Cost: O(log8 next_seq)."""
    while node is not None:
        shift = node[0]
        if shift:
            if seq >> (shift + INNER_BITS) != node[1]:
                return None
            bit = 1 << ((seq >> shift) & (INNER_SIZE - 1))
        else:
            if seq >> LEAF_BITS != node[1]:
                return None
            bit = 1 << (seq & (LEAF_SIZE - 1))
        bitmap = node[2]
        if not bitmap & bit:
            return None
        slot = node[4 + (bitmap & (bit - 1)).bit_count()]
        if not shift:
            return slot  # type: ignore[no-any-return]
        node = slot
    return None


def order_join(a: OrderNode, b: OrderNode, owner: Optional[object]) -> OrderNode:
    """A new inner node over two nodes with disjoint ranges."""
    sa = order_base(a)
    sb = order_base(b)
    top = (sa ^ sb).bit_length() - 1  # the highest bit telling them apart
    shift = 0 if top < LEAF_BITS else LEAF_BITS + (top - LEAF_BITS) // INNER_BITS * INNER_BITS
    da = order_digit(sa, shift)
    db = order_digit(sb, shift)
    bitmap = (1 << da) | (1 << db)
    size = _size(a) + _size(b)
    if da < db:
        return [shift, order_prefix_of(sa, shift), bitmap, owner, a, b, size]
    return [shift, order_prefix_of(sa, shift), bitmap, owner, b, a, size]


def order_insert(
    node: Optional[OrderNode], seq: int, item: Item, owner: Optional[object]
) -> OrderNode:
    """Return the trie with ``item`` at a ``seq`` it does not hold yet.

    Appending (seq = next_seq) walks the right spine.  Cost: O(log n) new nodes.
    """
    if node is None:
        return order_leaf(seq, item, owner)
    if owner is None:
        return order_insert_copying(node, seq, item)
    root = node
    path: Path = []
    while True:
        shift = node[0]
        width = INNER_BITS if shift else LEAF_BITS
        if seq >> (shift + width) != node[1]:
            new = order_join(node, order_leaf(seq, item, owner), owner)
            break
        bit = 1 << ((seq >> shift) & ((1 << width) - 1))
        bitmap = node[2]
        i = 4 + (bitmap & (bit - 1)).bit_count()
        if bitmap & bit:
            assert shift, "order_insert: seq already present"
            path.append((node, i))
            node = node[i]
            continue
        slot = order_leaf(seq, item, owner) if shift else item
        if owner is not None and node[3] is owner:
            node.insert(i, slot)  # one step, then stores
            node[2] = bitmap | bit
            if shift:
                node[-1] += 1
            _grow(path, 1)
            return root
        new = node[:]
        new.insert(i, slot)
        new[2] = bitmap | bit
        new[3] = owner
        if shift:
            new[-1] += 1
        break
    return _reattach(path, new, owner, 1)


def order_insert_copying(node: Optional[OrderNode], seq: int, item: Item) -> OrderNode:
    """``order_insert`` with no owner: the path is copied top-down, each copy
    stored into the copy above it (as ``order_replace_copying``); a node whose
    range does not cover ``seq`` is joined with the new leaf where it hangs."""
    if node is None:
        return order_leaf(seq, item, None)
    shift = node[0]
    width = INNER_BITS if shift else LEAF_BITS
    if seq >> (shift + width) != node[1]:
        return order_join(node, order_leaf(seq, item, None), None)
    root = new = node[:]
    new[3] = None
    while True:
        bit = 1 << ((seq >> shift) & ((1 << width) - 1))
        bitmap = new[2]
        i = 4 + (bitmap & (bit - 1)).bit_count()
        if shift:
            new[-1] += 1  # every inner node on the path gains the item
        if not bitmap & bit:
            new.insert(i, order_leaf(seq, item, None) if shift else item)
            new[2] = bitmap | bit
            return root
        assert shift, "order_insert: seq already present"
        child = new[i]
        shift = child[0]
        width = INNER_BITS if shift else LEAF_BITS
        if seq >> (shift + width) != child[1]:
            new[i] = order_join(child, order_leaf(seq, item, None), None)
            return root
        child = child[:]
        child[3] = None
        new[i] = child
        new = child


def order_replace(node: OrderNode, seq: int, item: Item, owner: Optional[object]) -> OrderNode:
    """Return the trie with the item at ``seq`` (which must exist) replaced.

    Cost: O(log n) new nodes.
    """
    if owner is None:
        return order_replace_copying(node, seq, item)
    root = node
    path: Path = []
    while True:
        shift = node[0]
        bitmap = node[2]
        if shift:
            bit = 1 << ((seq >> shift) & (INNER_SIZE - 1))
            i = 4 + (bitmap & (bit - 1)).bit_count()
            path.append((node, i))
            node = node[i]
            continue
        bit = 1 << (seq & (LEAF_SIZE - 1))
        i = 4 + (bitmap & (bit - 1)).bit_count()
        if owner is not None and node[3] is owner:
            node[i] = item
            return root
        new = node[:]
        new[3] = owner
        new[i] = item
        return _reattach(path, new, owner, 0)


def order_replace_copying(node: OrderNode, seq: int, item: Item) -> OrderNode:
    """``order_replace`` with no owner: the path is copied top-down, each copy
    stored into the copy above it (no path list, no second walk; nothing is
    reachable from outside until the new root is returned).  A full node's
    slot is its digit (no popcount): dense seqs fill every node but the last
    ones."""
    root = new = node[:]
    new[3] = None
    shift = new[0]
    while shift:
        d = (seq >> shift) & (INNER_SIZE - 1)
        bitmap = new[2]
        i = 4 + (d if bitmap == INNER_FULL else (bitmap & ((1 << d) - 1)).bit_count())
        child = new[i][:]
        child[3] = None
        new[i] = child
        new = child
        shift = new[0]
    d = seq & (LEAF_SIZE - 1)
    bitmap = new[2]
    new[4 + (d if bitmap == LEAF_FULL else (bitmap & ((1 << d) - 1)).bit_count())] = item
    return root


def order_remove(node: OrderNode, seq: int, owner: Optional[object]) -> Optional[OrderNode]:
    """Return the trie without the item at ``seq`` (which must exist), or None.

    Empty leaves vanish and one-child inner nodes give way to their child.
    Cost: O(log n) new nodes.
    """
    if owner is None and node[0]:
        return order_remove_copying(node, seq)
    root = node
    path: Path = []
    while node[0]:
        d = (seq >> node[0]) & (INNER_SIZE - 1)
        bitmap = node[2]
        i = 4 + (d if bitmap == INNER_FULL else (bitmap & ((1 << d) - 1)).bit_count())
        path.append((node, i))
        node = node[i]
    bit = 1 << (seq & (LEAF_SIZE - 1))
    if node[2] == bit:
        # The leaf's last item: the leaf vanishes, and its parent loses a child.
        if not path:
            return None
        node, i = path.pop()
        if len(node) == FIRST + 3:
            # an inner node left with one child gives way to it
            return _reattach(path, node[(2 * FIRST + 1) - i], owner, -1)
        bit = 1 << ((seq >> node[0]) & (INNER_SIZE - 1))
    bitmap = node[2]
    i = 4 + (bitmap & (bit - 1)).bit_count()
    if owner is not None and node[3] is owner:
        del node[i]  # one step, then stores
        node[2] = bitmap ^ bit
        if node[0]:
            node[-1] -= 1
        _grow(path, -1)
        return root
    new = node[:]
    del new[i]
    new[2] = bitmap ^ bit
    new[3] = owner
    if new[0]:
        new[-1] -= 1
    return _reattach(path, new, owner, -1)


def order_remove_copying(node: OrderNode, seq: int) -> Optional[OrderNode]:
    """``order_remove`` with no owner: the path is copied top-down (as
    ``order_replace_copying``).  A leaf about to lose its last item is not
    copied: its parent's copy drops it, or, left with one child, gives way to
    that child in the copy above (or as the root).  (A root leaf goes the
    general way.)"""
    if not node[0]:
        return order_remove(node, seq, None)
    root = new = node[:]
    new[3] = None
    shift = new[0]
    up: Optional[OrderNode] = None
    up_i = 0
    while True:
        new[-1] -= 1  # every inner node on the path loses the item
        d = (seq >> shift) & (INNER_SIZE - 1)
        bitmap = new[2]
        i = 4 + (d if bitmap == INNER_FULL else (bitmap & ((1 << d) - 1)).bit_count())
        child = new[i]
        shift = child[0]
        if shift:
            child = child[:]
            child[3] = None
            new[i] = child
            up = new
            up_i = i
            new = child
            continue
        bit = 1 << (seq & (LEAF_SIZE - 1))
        leaf_bitmap = child[2]
        if leaf_bitmap == bit:
            # The leaf's last item: the leaf vanishes, and its parent loses a child.
            if len(new) == FIRST + 3:
                other = new[(2 * FIRST + 1) - i]  # the parent gives way to it
                if up is None:
                    return other  # type: ignore[no-any-return]
                up[up_i] = other
                return root
            del new[i]
            new[2] = bitmap ^ (1 << d)
            return root
        leaf = child[:]
        del leaf[4 + (leaf_bitmap & (bit - 1)).bit_count()]
        leaf[2] = leaf_bitmap ^ bit
        leaf[3] = None
        new[i] = leaf
        return root


def order_last(node: Optional[OrderNode]) -> Optional[Tuple[int, Item]]:
    """The last item in insertion order and its seq, or None.  Cost: O(log n)."""
    if node is None:
        return None
    while node[SHIFT]:
        node = node[-2]  # (node[-1] is its size)
    seq = order_base(node) | (node[BITMAP].bit_length() - 1)  # the leaf's highest digit
    return seq, node[-1]


def order_child_at(node: OrderNode, index: int) -> Tuple[int, int]:
    """The slot of the child of an inner node holding position ``index``, and
    the position within that child."""
    for i in range(FIRST, len(node) - 1):
        size = _size(node[i])
        if index < size:
            return i, index
        index -= size
    raise AssertionError("position beyond the node's size")


def order_size(node: Optional[OrderNode]) -> int:
    """How many items the trie holds.  Cost: O(1)."""
    return 0 if node is None else _size(node)


def order_at(node: OrderNode, index: int) -> Tuple[int, Item]:
    """The seq and the item at position ``index`` (0 <= index < size).

    At each inner node the children's sizes are summed, left to right, until
    the one holding the position.  Cost: O(log n) (up to 16 sizes a level).
    """
    while node[0]:
        i, index = order_child_at(node, index)
        node = node[i]
    bitmap = node[2]
    for _ in range(index):
        bitmap &= bitmap - 1  # drop the lowest set bit
    seq = (node[1] << LEAF_BITS) | ((bitmap & -bitmap).bit_length() - 1)
    return seq, node[FIRST + index]


def order_rank(node: Optional[OrderNode], seq: int) -> int:
    """The position of ``seq`` (how many items come before it), or -1 when
    the trie does not hold it.  Cost: O(log n) (up to 16 sizes a level)."""
    rank: int = 0
    while node is not None:
        shift: int = node[0]
        width = INNER_BITS if shift else LEAF_BITS
        if seq >> (shift + width) != node[1]:
            return -1
        bit = 1 << ((seq >> shift) & ((1 << width) - 1))
        bitmap: int = node[2]
        if not bitmap & bit:
            return -1
        i = FIRST + (bitmap & (bit - 1)).bit_count()
        if not shift:
            return rank + i - FIRST
        for k in range(FIRST, i):
            child = node[k]
            rank += child[-1] if child[0] else len(child) - FIRST
        node = node[i]
    return -1


def order_items(node: Optional[OrderNode], start: int = 0) -> Generator[Item, None, None]:
    """The items in insertion order, from position ``start`` on; an explicit
    stack, no lookups.  Positions before ``start`` are skipped by one descent
    by the sizes (as ``order_at``).  Cost: O(log n + k) for k items taken."""
    if node is None:
        return
    stack: List[Iterator[OrderNode]] = []
    while start and node[SHIFT]:
        i, start = order_child_at(node, start)
        stack.append(iter(node[i + 1 : -1]))  # the siblings still to come
        node = node[i]
    if node[SHIFT]:
        stack.append(iter(node[FIRST:-1]))
    else:
        yield from node[FIRST + start :]
    while stack:
        for child in stack[-1]:
            if not child[SHIFT]:
                yield from child[FIRST:]
            else:
                stack.append(iter(child[FIRST:-1]))
                break
        else:
            stack.pop()


def order_items_reversed(node: Optional[OrderNode]) -> Iterator[Item]:
    """The items in reverse insertion order.  Cost: O(n)."""
    if node is None:
        return
    if not node[SHIFT]:
        yield from node[: FIRST - 1 : -1]
        return
    stack = [iter(node[-2 : FIRST - 1 : -1])]
    while stack:
        for child in stack[-1]:
            if not child[SHIFT]:
                yield from child[: FIRST - 1 : -1]
            else:
                stack.append(iter(child[-2 : FIRST - 1 : -1]))
                break
        else:
            stack.pop()


def order_build(items: Sequence[Item], owner: Optional[object]) -> Optional[OrderNode]:
    """Build the trie holding ``items[i]`` at seq i, bottom-up.  Cost: O(n)."""
    n = len(items)
    if not n:
        return None
    level: List[OrderNode] = []
    for start in range(0, n, LEAF_SIZE):
        chunk = items[start : start + LEAF_SIZE]
        node: OrderNode = [0, order_prefix_of(start, 0), (1 << len(chunk)) - 1, owner]
        node += chunk
        level.append(node)
    shift = LEAF_BITS
    while len(level) > 1:
        parents: List[OrderNode] = []
        for start in range(0, len(level), INNER_SIZE):
            group = level[start : start + INNER_SIZE]
            if len(group) == 1:
                parents.append(group[0])  # a lone child is not wrapped
                continue
            bitmap = 0
            size = 0
            for child in group:
                bitmap |= 1 << order_digit(order_base(child), shift)
                size += _size(child)
            node = [shift, order_prefix_of(order_base(group[0]), shift), bitmap, owner]
            node += group
            node.append(size)
            parents.append(node)
        level = parents
        shift += INNER_BITS
    return level[0]


def order_check(node: Optional[OrderNode]) -> List[int]:
    """Assert the trie invariants; return every seq it holds, in order."""
    seqs: List[int] = []
    if node is not None:
        order_check_node(node, None, seqs)
    assert seqs == sorted(set(seqs)), "seqs out of order"
    return seqs


def order_check_node(node: OrderNode, parent_shift: Optional[int], seqs: List[int]) -> None:
    assert type(node) is list and len(node) > FIRST, "unknown order node %r" % (type(node),)
    shift = node[SHIFT]
    bitmap = node[BITMAP]
    slots = node[FIRST:-1] if shift else node[FIRST:]
    before = len(seqs)
    assert shift == 0 or (
        shift % INNER_BITS == LEAF_BITS % INNER_BITS and LEAF_BITS <= shift <= MAX_SHIFT
    ), "bad shift %d" % shift
    if parent_shift is not None:
        assert shift < parent_shift, "child not below its parent"
    assert 0 < bitmap < (1 << (1 << _width(shift))), "bad bitmap %#x" % bitmap
    assert bitmap.bit_count() == len(slots), "bitmap/slots mismatch"
    if shift:
        assert len(slots) >= 2, "inner node with one child (must be collapsed)"
    bits = bitmap
    for slot in slots:
        bit = bits & -bits
        bits ^= bit
        seq_here = order_base(node) | ((bit.bit_length() - 1) << shift)
        if shift == 0:
            assert type(slot) is tuple and len(slot) == 2, "leaf slot is not a (key, value)"
            seqs.append(seq_here)
        else:
            assert order_base(slot) >> shift == seq_here >> shift, "child off its digit"
            order_check_node(slot, shift, seqs)
    if shift:
        assert node[-1] == len(seqs) - before, "size %r, %d items below" % (
            node[-1],
            len(seqs) - before,
        )


def order_node_ids(node: Optional[OrderNode], out: List[int]) -> None:
    """Append ``id()`` of every node of the trie."""
    if node is None:
        return
    out.append(id(node))
    if node[SHIFT]:
        for child in node[FIRST:-1]:
            order_node_ids(child, out)


def order_dump(node: Optional[OrderNode], indent: int = 0) -> List[str]:
    """Lines describing the trie, for failing tests."""
    if node is None:
        return ["  " * indent + "(empty)"]
    pad = "  " * indent
    lines = [
        "%sOrder shift=%d prefix=%#x bitmap=%#x size=%d"
        % (pad, node[SHIFT], node[PREFIX], node[BITMAP], _size(node))
    ]
    for slot in node[FIRST:-1] if node[SHIFT] else node[FIRST:]:
        if node[SHIFT] == 0:
            lines.append("%s  %r" % (pad, slot))
        else:
            lines += order_dump(slot, indent + 1)
    return lines
