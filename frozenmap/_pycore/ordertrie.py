"""The order index: a radix trie on sequence numbers (leaves of 16 items,
inner nodes of 8 children).

Every new key takes the version's ``next_seq`` (which only grows along a line of
descent); replacing a value keeps the key's seq, so its position stays, as in
``dict``.  This trie maps seq -> ``(key, value)``, with the most significant
digit first, so an in-order walk is insertion order and a reverse walk is
``reversed()``.

A leaf (``shift`` 0) holds up to 16 items, chosen by the 4-bit digit
``seq & 15``; an inner node at shift s (4, 7, ..., 61) holds up to 8 children,
chosen by the 3-bit digit ``(seq >> s) & 7``.  Narrow inner nodes make the path
a derivation copies cheaper (8 pointers a level rather than 16, for one more
level every 8x more items).  ``bitmap`` marks the occupied digits and ``slots``
is dense in digit order.  Paths are compressed: a child may sit at any lower
shift, and every node records ``prefix = seq >> (shift + width)``, the digits
above its own that all seqs below it share, so a walk can tell a miss from a
hit.

Deletion really removes: a leaf left empty disappears, and an inner node left
with one child is replaced by that child.  Inner nodes therefore always have two
or more children, the trie has fewer than 2n nodes under any deletion pattern,
and no edit ever pays for tombstones or a compaction pass, whichever old version
it starts from.  Depth is at most 21 (64-bit seqs); with dense seqs it is
1 + log8(n / 16).

Mirrors ``frozenmap/_ccore/ordertrie.c``.
"""

from __future__ import annotations

from typing import Any, Iterator, List, Optional, Tuple

__all__ = [
    "OrderNode",
    "order_get",
    "order_insert",
    "order_replace",
    "order_remove",
    "order_last",
    "order_items",
    "order_items_reversed",
    "order_build",
    "order_check",
    "order_node_ids",
    "order_dump",
]

Item = Tuple[Any, Any]
"""``(key, value)``: what iteration over items yields, shared, never copied."""

LEAF_BITS = 4
INNER_BITS = 3
LEAF_SIZE = 1 << LEAF_BITS
INNER_SIZE = 1 << INNER_BITS
MAX_SHIFT = 61


def _width(shift: int) -> int:
    """How many bits of seq a node at ``shift`` reads."""
    return LEAF_BITS if shift == 0 else INNER_BITS


def _digit(seq: int, shift: int) -> int:
    return (seq >> shift) & ((1 << _width(shift)) - 1)


def _prefix_of(seq: int, shift: int) -> int:
    return seq >> (shift + _width(shift))


class OrderNode:
    """A radix-trie node: 16 item slots (a leaf) or 8 child slots, path-compressed."""

    __slots__ = ("shift", "prefix", "bitmap", "slots", "owner")

    def __init__(
        self, shift: int, prefix: int, bitmap: int, slots: List[Any], owner: Optional[object]
    ) -> None:
        self.shift = shift
        self.prefix = prefix
        self.bitmap = bitmap
        self.slots = slots
        self.owner = owner


def _index(bitmap: int, bit: int) -> int:
    return (bitmap & (bit - 1)).bit_count()


def _editable(node: OrderNode, owner: Optional[object]) -> OrderNode:
    if owner is not None and node.owner is owner:
        return node
    return OrderNode(node.shift, node.prefix, node.bitmap, node.slots[:], owner)


def _covers(node: OrderNode, seq: int) -> bool:
    return _prefix_of(seq, node.shift) == node.prefix


def _leaf(seq: int, item: Item, owner: Optional[object]) -> OrderNode:
    return OrderNode(0, _prefix_of(seq, 0), 1 << _digit(seq, 0), [item], owner)


def _base(node: OrderNode) -> int:
    """The smallest seq the node's range covers."""
    return node.prefix << (node.shift + _width(node.shift))


def order_get(node: Optional[OrderNode], seq: int) -> Optional[Item]:
    """The item at ``seq``, or None.  Cost: O(log8 next_seq)."""
    while node is not None:
        if not _covers(node, seq):
            return None
        bit = 1 << _digit(seq, node.shift)
        if not node.bitmap & bit:
            return None
        slot = node.slots[_index(node.bitmap, bit)]
        if node.shift == 0:
            return slot  # type: ignore[no-any-return]
        node = slot
    return None


def _join(a: OrderNode, b: OrderNode, owner: Optional[object]) -> OrderNode:
    """A new inner node over two nodes with disjoint ranges."""
    sa = _base(a)
    sb = _base(b)
    top = (sa ^ sb).bit_length() - 1  # the highest bit telling them apart
    shift = 0 if top < LEAF_BITS else LEAF_BITS + (top - LEAF_BITS) // INNER_BITS * INNER_BITS
    da = _digit(sa, shift)
    db = _digit(sb, shift)
    slots = [a, b] if da < db else [b, a]
    return OrderNode(shift, _prefix_of(sa, shift), (1 << da) | (1 << db), slots, owner)


def order_insert(
    node: Optional[OrderNode], seq: int, item: Item, owner: Optional[object]
) -> OrderNode:
    """Return the trie with ``item`` at a ``seq`` it does not hold yet.

    Appending (seq = next_seq) walks the right spine.  Cost: O(log n) new nodes.
    """
    if node is None:
        return _leaf(seq, item, owner)
    if not _covers(node, seq):
        return _join(node, _leaf(seq, item, owner), owner)
    bit = 1 << _digit(seq, node.shift)
    i = _index(node.bitmap, bit)
    if node.bitmap & bit:
        assert node.shift, "order_insert: seq already present"
        child = node.slots[i]
        new_child = order_insert(child, seq, item, owner)
        if new_child is child:
            return node
        new = _editable(node, owner)
        new.slots[i] = new_child
        return new
    new = _editable(node, owner)
    bitmap = node.bitmap | bit  # allocate first, then one step and a store
    new.slots.insert(i, item if node.shift == 0 else _leaf(seq, item, owner))
    new.bitmap = bitmap
    return new


def order_replace(node: OrderNode, seq: int, item: Item, owner: Optional[object]) -> OrderNode:
    """Return the trie with the item at ``seq`` (which must exist) replaced.

    Cost: O(log n) new nodes.
    """
    bit = 1 << _digit(seq, node.shift)
    i = _index(node.bitmap, bit)
    if node.shift == 0:
        new = _editable(node, owner)
        new.slots[i] = item
        return new
    child = node.slots[i]
    new_child = order_replace(child, seq, item, owner)
    if new_child is child:
        return node
    new = _editable(node, owner)
    new.slots[i] = new_child
    return new


def order_remove(node: OrderNode, seq: int, owner: Optional[object]) -> Optional[OrderNode]:
    """Return the trie without the item at ``seq`` (which must exist), or None.

    Empty leaves vanish and one-child inner nodes give way to their child.
    Cost: O(log n) new nodes.
    """
    bit = 1 << _digit(seq, node.shift)
    i = _index(node.bitmap, bit)
    if node.shift == 0:
        if node.bitmap == bit:
            return None
        new = _editable(node, owner)
        bitmap = node.bitmap ^ bit
        del new.slots[i]
        new.bitmap = bitmap
        return new
    child = node.slots[i]
    new_child = order_remove(child, seq, owner)
    if new_child is None:
        if len(node.slots) == 2:
            return node.slots[1 - i]  # type: ignore[no-any-return]
        new = _editable(node, owner)
        bitmap = node.bitmap ^ bit
        del new.slots[i]
        new.bitmap = bitmap
        return new
    if new_child is child:
        return node
    new = _editable(node, owner)
    new.slots[i] = new_child
    return new


def order_last(node: Optional[OrderNode]) -> Optional[Item]:
    """The last item in insertion order, or None.  Cost: O(log n)."""
    if node is None:
        return None
    while node.shift:
        node = node.slots[-1]
    return node.slots[-1]  # type: ignore[no-any-return]


def order_items(node: Optional[OrderNode]) -> Iterator[Item]:
    """The items in insertion order; an explicit stack, no lookups.  Cost: O(n)."""
    if node is None:
        return
    if node.shift == 0:
        yield from node.slots
        return
    stack = [iter(node.slots)]
    while stack:
        for child in stack[-1]:
            if child.shift == 0:
                yield from child.slots
            else:
                stack.append(iter(child.slots))
                break
        else:
            stack.pop()


def order_items_reversed(node: Optional[OrderNode]) -> Iterator[Item]:
    """The items in reverse insertion order.  Cost: O(n)."""
    if node is None:
        return
    if node.shift == 0:
        yield from reversed(node.slots)
        return
    stack = [reversed(node.slots)]
    while stack:
        for child in stack[-1]:
            if child.shift == 0:
                yield from reversed(child.slots)
            else:
                stack.append(reversed(child.slots))
                break
        else:
            stack.pop()


def order_build(items: List[Item], owner: Optional[object]) -> Optional[OrderNode]:
    """Build the trie holding ``items[i]`` at seq i, bottom-up.  Cost: O(n)."""
    n = len(items)
    if not n:
        return None
    level: List[OrderNode] = []
    for start in range(0, n, LEAF_SIZE):
        chunk = items[start : start + LEAF_SIZE]
        level.append(OrderNode(0, _prefix_of(start, 0), (1 << len(chunk)) - 1, chunk, owner))
    shift = LEAF_BITS
    while len(level) > 1:
        parents: List[OrderNode] = []
        for start in range(0, len(level), INNER_SIZE):
            group = level[start : start + INNER_SIZE]
            if len(group) == 1:
                parents.append(group[0])  # a lone child is not wrapped
                continue
            bitmap = 0
            for child in group:
                bitmap |= 1 << _digit(_base(child), shift)
            parents.append(
                OrderNode(shift, _prefix_of(_base(group[0]), shift), bitmap, group, owner)
            )
        level = parents
        shift += INNER_BITS
    return level[0]


def order_check(node: Optional[OrderNode]) -> List[int]:
    """Assert the trie invariants; return every seq it holds, in order."""
    seqs: List[int] = []
    if node is not None:
        _check_node(node, None, seqs)
    assert seqs == sorted(set(seqs)), "seqs out of order"
    return seqs


def _check_node(node: OrderNode, parent_shift: Optional[int], seqs: List[int]) -> None:
    assert type(node) is OrderNode, "unknown order node %r" % (type(node),)
    assert node.shift == 0 or (
        node.shift % INNER_BITS == LEAF_BITS % INNER_BITS and LEAF_BITS <= node.shift <= MAX_SHIFT
    ), "bad shift %d" % node.shift
    if parent_shift is not None:
        assert node.shift < parent_shift, "child not below its parent"
    assert 0 < node.bitmap < (1 << (1 << _width(node.shift))), "bad bitmap %#x" % node.bitmap
    assert node.bitmap.bit_count() == len(node.slots), "bitmap/slots mismatch"
    if node.shift:
        assert len(node.slots) >= 2, "inner node with one child (must be collapsed)"
    bits = node.bitmap
    for slot in node.slots:
        bit = bits & -bits
        bits ^= bit
        seq_here = _base(node) | ((bit.bit_length() - 1) << node.shift)
        if node.shift == 0:
            assert type(slot) is tuple and len(slot) == 2, "leaf slot is not a (key, value)"
            seqs.append(seq_here)
        else:
            assert _base(slot) >> (node.shift) == seq_here >> node.shift, "child off its digit"
            _check_node(slot, node.shift, seqs)


def order_node_ids(node: Optional[OrderNode], out: List[int]) -> None:
    """Append ``id()`` of every node of the trie."""
    if node is None:
        return
    out.append(id(node))
    if node.shift:
        for child in node.slots:
            order_node_ids(child, out)


def order_dump(node: Optional[OrderNode], indent: int = 0) -> List[str]:
    """Lines describing the trie, for failing tests."""
    if node is None:
        return ["  " * indent + "(empty)"]
    pad = "  " * indent
    lines = ["%sOrder shift=%d prefix=%#x bitmap=%#x" % (pad, node.shift, node.prefix, node.bitmap)]
    for slot in node.slots:
        if node.shift == 0:
            lines.append("%s  %r" % (pad, slot))
        else:
            lines += order_dump(slot, indent + 1)
    return lines
