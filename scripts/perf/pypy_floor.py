"""A lower bound for any persistent trie map on PyPy (issue 26, PyPy goal).

Usage: pypy3 scripts/perf/pypy_floor.py [pypy_ratios.py options]
       (default: --libs floor,py,dict,frozendict,immutables,pyrsistent
        --sizes 100000 --rounds 10 --ops construct,...,delete,mem)

``FloorMap`` is the leanest persistent map we could write for this job: an
unordered 32-way CHAMP whose node is one flat list
``[bitmaps, k0, v0, k1, v1, ..., child_m, ..., child_0]`` (the two bitmaps
in one int, datamap in the low 32 bits and nodemap above them; children in
reverse digit order at the end, so child ``j`` is ``node[-1 - j]``).  No
hashes are stored (a split re-hashes the one displaced key: PyPy caches a
str's hash), no entry tuples, no owner field, no per-node index, no order
trie and no frozenset-style hash accumulator: it does less than frozenmap
must (insertion order, a cached hash, diff and equality by shared
subtrees), so what it cannot reach no ordered design can.  Equal full hashes
go into a ``_Collision`` list ``[k0, v0, ...]`` below the last digit.
``FloorTupleMap`` is the same trie with tuple nodes, ``FloorOrdered`` the
least an insertion-ordered map adds (memory only), and ``OrderedFloorMap``
the floor with order and edits: its key trie maps each key to
``(seq, value)`` and frozenmap's own order trie maps seq -> ``(key, value)``
(what an ordered map with O(log n) edits, positional access and iteration
from one index pays at least; ``pypy_ratios.py --libs orderedfloor``);
``OrderedFloorHashed`` also stores each key's hash and compares it first,
as frozenmap's contract requires (lookups and memory only,
``--libs orderedfloorhashed``).

Only what the goal measures is here: construction from a dict, ``m[k]``,
``k in m``, ``set``, ``delete`` and ``len``.  The walks are recursive (no
loops): PyPy's JIT inlines a recursive call into the caller's trace where it
compiles a loop apart and calls it (docs/notes/pypy.md, second session).

The timing harness is ``pypy_ratios.py``'s (every pair in turn per round,
median of the rounds, CPU time); ``mem`` is the benchmark's memory per item
(``frozenmap.bench.operations._traced``: on PyPy the growth of the live heap
between full collections).  Results: docs/notes/pypy.md, sessions 5 and 8.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Mapping, Tuple

MAX_SHIFT = 60  # the last digit: bits 60-63 (sign-extended on PyPy's signed hashes)
LOW = 0xFFFFFFFF  # the datamap's bits in a node's bitmaps (the nodemap's: >> 32)

Node = List[Any]

_NODE_BIT = [1 << (d + 32) for d in range(31)] + [-(1 << 63)]
"""Digit d's nodemap bit in a node's bitmaps: digit 31's is the sign bit,
so that the bitmaps stay a machine int (above ``sys.maxsize`` PyPy computes
in big ints, 10x slower)."""


class _Collision(List[Any]):
    """``[k0, v0, k1, v1, ...]``: two or more keys of one full hash."""

    __slots__ = ()


def _bits_below(x: int) -> int:
    """Popcount of a 32-bit int: ``int.bit_count`` is a call on PyPy; this
    is a few machine instructions in the JIT's trace."""
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) & LOW) >> 24


# --- lookup ------------------------------------------------------------------

_MISSING = object()


def _find(node: Node, shift: int, h: int, key: Any) -> Any:
    """The value of ``key`` (hash ``h``) below ``node`` at ``shift``, or _MISSING."""
    if shift > MAX_SHIFT:
        for i in range(0, len(node), 2):
            k = node[i]
            if k is key or k == key:
                return node[i + 1]
        return _MISSING
    bm = node[0]
    d = (h >> shift) & 31
    bit = 1 << d
    if bm & bit:
        i = 2 * _bits_below(bm & (bit - 1)) + 1
        k = node[i]
        if k is key or k == key:
            return node[i + 1]
        return _MISSING
    nm = (bm >> 32) & LOW
    if nm & bit:
        return _find(node[-1 - _bits_below(nm & (bit - 1))], shift + 5, h, key)
    return _MISSING


# --- insertion ---------------------------------------------------------------


def _pair(k1: Any, v1: Any, h1: int, k2: Any, v2: Any, h2: int, shift: int) -> Node:
    """The canonical subtree at ``shift`` holding two distinct keys."""
    if shift > MAX_SHIFT:
        node = _Collision()
        node.extend((k1, v1, k2, v2))
        return node
    d1 = (h1 >> shift) & 31
    d2 = (h2 >> shift) & 31
    if d1 == d2:
        return [_NODE_BIT[d1], _pair(k1, v1, h1, k2, v2, h2, shift + 5)]
    if d1 < d2:
        return [(1 << d1) | (1 << d2), k1, v1, k2, v2]
    return [(1 << d1) | (1 << d2), k2, v2, k1, v1]


def _set(node: Node, shift: int, h: int, key: Any, value: Any) -> Tuple[Node, int]:
    """(``node`` with ``key`` set to ``value`` (a copy; ``node`` itself if
    it already holds this very value), 1 if the key is new else 0)."""
    if shift > MAX_SHIFT:
        for i in range(0, len(node), 2):
            k = node[i]
            if k is key or k == key:
                if node[i + 1] is value:
                    return node, 0
                new = _Collision(node)  # (a slice would be a plain list)
                new[i + 1] = value
                return new, 0
        new = _Collision(node)
        new.append(key)
        new.append(value)
        return new, 1
    bm = node[0]
    d = (h >> shift) & 31
    bit = 1 << d
    if bm & bit:
        i = 2 * _bits_below(bm & (bit - 1)) + 1
        k = node[i]
        if k is key or k == key:
            if node[i + 1] is value:
                return node, 0
            new = node[:]
            new[i + 1] = value
            return new, 0
        child = _pair(k, node[i + 1], hash(k), key, value, h, shift + 5)
        new = node[:]
        del new[i : i + 2]
        nm = ((bm >> 32) & LOW) | bit
        new.insert(len(new) - _bits_below(nm & (bit - 1)), child)
        new[0] = (bm ^ bit) | _NODE_BIT[d]
        return new, 1
    nm = (bm >> 32) & LOW
    if nm & bit:
        j = len(node) - 1 - _bits_below(nm & (bit - 1))
        child = node[j]
        sub, added = _set(child, shift + 5, h, key, value)
        if sub is child:
            return node, 0
        new = node[:]
        new[j] = sub
        return new, added
    i = 2 * _bits_below(bm & (bit - 1)) + 1
    new = node[:i]
    new.append(key)
    new.append(value)
    new += node[i:]
    new[0] = bm | bit
    return new, 1


def _insert(node: Node, shift: int, h: int, key: Any, value: Any) -> int:
    """``_set`` in place, for a map being built (no node is shared yet)."""
    if shift > MAX_SHIFT:
        for i in range(0, len(node), 2):
            k = node[i]
            if k is key or k == key:
                node[i + 1] = value
                return 0
        node.append(key)
        node.append(value)
        return 1
    bm = node[0]
    d = (h >> shift) & 31
    bit = 1 << d
    if bm & bit:
        i = 2 * _bits_below(bm & (bit - 1)) + 1
        k = node[i]
        if k is key or k == key:
            node[i + 1] = value
            return 0
        child = _pair(k, node[i + 1], hash(k), key, value, h, shift + 5)
        del node[i : i + 2]
        nm = ((bm >> 32) & LOW) | bit
        node.insert(len(node) - _bits_below(nm & (bit - 1)), child)
        node[0] = (bm ^ bit) | _NODE_BIT[d]
        return 1
    nm = (bm >> 32) & LOW
    if nm & bit:
        return _insert(node[-1 - _bits_below(nm & (bit - 1))], shift + 5, h, key, value)
    i = 2 * _bits_below(bm & (bit - 1)) + 1
    node.insert(i, value)
    node.insert(i, key)
    node[0] = bm | bit
    return 1


# --- removal -----------------------------------------------------------------


def _delete(node: Node, shift: int, h: int, key: Any) -> Any:
    """``node`` without ``key`` (a copy), or None if the key is absent.

    Canonical as CHAMP: a non-root node left with one key and no child is
    inlined into its parent (a collision list left with one key too).
    """
    if shift > MAX_SHIFT:
        for i in range(0, len(node), 2):
            k = node[i]
            if k is key or k == key:
                new = _Collision(node)
                del new[i : i + 2]
                return new
        return None
    bm = node[0]
    d = (h >> shift) & 31
    bit = 1 << d
    if bm & bit:
        i = 2 * _bits_below(bm & (bit - 1)) + 1
        k = node[i]
        if not (k is key or k == key):
            return None
        new = node[:]
        del new[i : i + 2]
        new[0] = bm ^ bit
        return new
    nm = (bm >> 32) & LOW
    if not nm & bit:
        return None
    j = len(node) - 1 - _bits_below(nm & (bit - 1))
    sub = _delete(node[j], shift + 5, h, key)
    if sub is None:
        return None
    if len(sub) == 2 if shift == MAX_SHIFT else (len(sub) == 3 and not sub[0] >> 32):
        # one key left below: the parent takes it inline
        k, v = sub[-2], sub[-1]
        data = (bm & LOW) | bit
        i = 2 * _bits_below(data & (bit - 1)) + 1
        new = node[:]
        del new[j]
        new.insert(i, v)
        new.insert(i, k)
        new[0] = bm ^ _NODE_BIT[d] | bit
        return new
    new = node[:]
    new[j] = sub
    return new


# --- the map -------------------------------------------------------------------


class FloorMap:
    """The floor map: ``FloorMap(mapping)``, ``m[k]``, ``k in m``, ``len(m)``,
    ``m.set(k, v)`` and ``m.delete(k)`` (new maps)."""

    __slots__ = ("_root", "_size")

    def __init__(self, data: Mapping[Any, Any] = ()) -> None:  # type: ignore[assignment]
        root: Node = [0]
        size = 0
        for key, value in dict(data).items() if type(data) is not dict else data.items():
            size += _insert(root, 0, hash(key), key, value)
        self._root = root
        self._size = size

    @classmethod
    def _make(cls, root: Node, size: int) -> FloorMap:
        m = cls.__new__(cls)
        m._root = root
        m._size = size
        return m

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, key: Any) -> Any:
        value = _find(self._root, 0, hash(key), key)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __contains__(self, key: Any) -> bool:
        return _find(self._root, 0, hash(key), key) is not _MISSING

    def set(self, key: Any, value: Any) -> FloorMap:
        root, added = _set(self._root, 0, hash(key), key, value)
        if root is self._root:
            return self
        return FloorMap._make(root, self._size + added)

    def delete(self, key: Any) -> FloorMap:
        root = _delete(self._root, 0, hash(key), key)
        if root is None:
            raise KeyError(key)
        return FloorMap._make(root, self._size - 1)


def _frozen(node: Node, shift: int) -> Any:
    """``node`` and its subtree as tuples (collision lists stay lists)."""
    if shift > MAX_SHIFT:
        return node
    nm = (node[0] >> 32) & LOW
    if not nm:
        return tuple(node)
    k = len(node) - _bits_below(nm)
    return tuple(node[:k]) + tuple(_frozen(c, shift + 5) for c in node[k:])


class FloorTupleMap(FloorMap):
    """The floor's trie with tuple nodes: what immutable nodes would save
    (PyPy: a tuple is two objects, a list three).  Built as ``FloorMap``,
    then converted; only lookups (the same code) and memory are measured."""

    __slots__ = ()

    def __init__(self, data: Mapping[Any, Any] = ()) -> None:  # type: ignore[assignment]
        FloorMap.__init__(self, data)
        self._root = _frozen(self._root, 0)


class FloorOrdered:
    """Memory only: the least an insertion-ordered map adds to the floor.
    The key trie maps each key to its seq (a new int per item, as the seqs
    of a real map are), and the order index is its leaves alone: tuples of
    16 items stored flat, ``(k0, v0, ..., k15, v15)`` (no inner nodes, no
    bitmaps, no counts).  With ``tuples`` the key trie's nodes are tuples
    too."""

    __slots__ = ("keys", "order")

    def __init__(self, data: Mapping[Any, Any], tuples: bool = False) -> None:
        seqs = {key: seq for seq, key in enumerate(data)}
        self.keys = (FloorTupleMap if tuples else FloorMap)(seqs)
        flat = [x for item in data.items() for x in item]
        self.order = [tuple(flat[i : i + 32]) for i in range(0, len(flat), 32)]


# --- the ordered floor, with edits ---------------------------------------------


def _oset(node: Node, shift: int, h: int, key: Any, value: Any, seq: int) -> Tuple[Node, Any]:
    """``_set`` for ``OrderedFloorMap``'s key trie, whose payloads are
    ``(seq, value)``: (the copy, the old payload or _MISSING).  A new key
    takes ``seq``; a present one keeps its own."""
    if shift > MAX_SHIFT:
        for i in range(0, len(node), 2):
            k = node[i]
            if k is key or k == key:
                old = node[i + 1]
                new = _Collision(node)
                new[i + 1] = (old[0], value)
                return new, old
        new = _Collision(node)
        new.append(key)
        new.append((seq, value))
        return new, _MISSING
    bm = node[0]
    d = (h >> shift) & 31
    bit = 1 << d
    if bm & bit:
        i = 2 * _bits_below(bm & (bit - 1)) + 1
        k = node[i]
        if k is key or k == key:
            old = node[i + 1]
            new = node[:]
            new[i + 1] = (old[0], value)
            return new, old
        child = _pair(k, node[i + 1], hash(k), key, (seq, value), h, shift + 5)
        new = node[:]
        del new[i : i + 2]
        nm = ((bm >> 32) & LOW) | bit
        new.insert(len(new) - _bits_below(nm & (bit - 1)), child)
        new[0] = (bm ^ bit) | _NODE_BIT[d]
        return new, _MISSING
    nm = (bm >> 32) & LOW
    if nm & bit:
        j = len(node) - 1 - _bits_below(nm & (bit - 1))
        sub, old = _oset(node[j], shift + 5, h, key, value, seq)
        new = node[:]
        new[j] = sub
        return new, old
    i = 2 * _bits_below(bm & (bit - 1)) + 1
    new = node[:i]
    new.append(key)
    new.append((seq, value))
    new += node[i:]
    new[0] = bm | bit
    return new, _MISSING


def _odelete(node: Node, shift: int, h: int, key: Any) -> Any:
    """``_delete`` that also returns what it removed: (the copy, the
    removed payload), or None if the key is absent."""
    if shift > MAX_SHIFT:
        for i in range(0, len(node), 2):
            k = node[i]
            if k is key or k == key:
                new = _Collision(node)
                del new[i : i + 2]
                return new, node[i + 1]
        return None
    bm = node[0]
    d = (h >> shift) & 31
    bit = 1 << d
    if bm & bit:
        i = 2 * _bits_below(bm & (bit - 1)) + 1
        k = node[i]
        if not (k is key or k == key):
            return None
        new = node[:]
        del new[i : i + 2]
        new[0] = bm ^ bit
        return new, node[i + 1]
    nm = (bm >> 32) & LOW
    if not nm & bit:
        return None
    j = len(node) - 1 - _bits_below(nm & (bit - 1))
    found = _odelete(node[j], shift + 5, h, key)
    if found is None:
        return None
    sub, old = found
    if len(sub) == 2 if shift == MAX_SHIFT else (len(sub) == 3 and not sub[0] >> 32):
        k, v = sub[-2], sub[-1]
        data = (bm & LOW) | bit
        i = 2 * _bits_below(data & (bit - 1)) + 1
        new = node[:]
        del new[j]
        new.insert(i, v)
        new.insert(i, k)
        new[0] = bm ^ _NODE_BIT[d] | bit
        return new, old
    new = node[:]
    new[j] = sub
    return new, old


def _bulk(where: Any, hashes: List[int], items: List[Tuple[Any, Any]], shift: int) -> Node:
    """``OrderedFloorMap``'s key trie for the items at the positions
    ``where`` (seq = position), built top-down: positions bucketed by digit
    (unboxed int lists on PyPy), each node allocated at its final size, one
    ``(seq, value)`` tuple per key (the build frozenmap's PyPy layout uses,
    ``_nx_build_columns``, for this node format)."""
    if shift > MAX_SHIFT:
        node = _Collision()
        for i in where:
            key, value = items[i]
            node.append(key)
            node.append((i, value))
        return node
    buckets: List[Any] = [None] * 32
    for i in where:
        d = (hashes[i] >> shift) & 31
        bucket = buckets[d]
        if bucket is None:
            buckets[d] = [i]
        else:
            bucket.append(i)
    bm = entries = children = 0
    for d in range(32):
        bucket = buckets[d]
        if bucket is not None:
            if len(bucket) == 1:
                bm |= 1 << d
                entries += 1
            else:
                bm |= _NODE_BIT[d]
                children += 1
    node: Node = [None] * (1 + 2 * entries + children)
    node[0] = bm
    at = 1
    below = len(node) - 1
    for d in range(32):
        bucket = buckets[d]
        if bucket is None:
            continue
        i = bucket[0]
        if len(bucket) == 1:
            key, value = items[i]
            node[at] = key
            node[at + 1] = (i, value)
            at += 2
            continue
        if len(bucket) == 2:
            j = bucket[1]
            ki, vi = items[i]
            kj, vj = items[j]
            node[below] = _pair(ki, (i, vi), hashes[i], kj, (j, vj), hashes[j], shift + 5)
        else:
            node[below] = _bulk(bucket, hashes, items, shift + 5)
        below -= 1
    return node


class OrderedFloorMap:
    """The floor with insertion order and edits: what an ordered map with
    O(log n) lookups, edits and positional access pays at least.  The key
    trie is the floor's, mapping each key to ``(seq, value)`` (one walk per
    lookup); the order index is frozenmap's own order trie
    (``ordertrie.py``: seq -> ``(key, value)``, so iteration reads it alone).
    A set copies both paths (the value is in both), a delete removes from
    both.  No stored hashes, no accumulator, no owner fields.  Built in bulk
    (``_bulk``), or with ``bulk=False`` by inserting the keys one by one."""

    __slots__ = ("_keys", "_order", "_next")

    def __init__(self, data: Mapping[Any, Any] = (), bulk: bool = True) -> None:  # type: ignore[assignment]
        from frozenmap._pycore.ordertrie import order_build

        items = list((data if type(data) is dict else dict(data)).items())
        if bulk:
            hashes = [hash(key) for key, _ in items]
            root = _bulk(range(len(items)), hashes, items, 0) if items else [0]
        else:
            root = [0]
            for seq, (key, value) in enumerate(items):
                _insert(root, 0, hash(key), key, (seq, value))
        self._keys = root
        self._order = order_build(items, None)
        self._next = len(items)

    @classmethod
    def _make(cls, keys: Node, order: Any, next_seq: int) -> OrderedFloorMap:
        m = cls.__new__(cls)
        m._keys = keys
        m._order = order
        m._next = next_seq
        return m

    def __len__(self) -> int:
        from frozenmap._pycore.ordertrie import order_size

        return order_size(self._order)

    def __getitem__(self, key: Any) -> Any:
        payload = _find(self._keys, 0, hash(key), key)
        if payload is _MISSING:
            raise KeyError(key)
        return payload[1]

    def __contains__(self, key: Any) -> bool:
        return _find(self._keys, 0, hash(key), key) is not _MISSING

    def items(self) -> List[Tuple[Any, Any]]:
        from frozenmap._pycore.ordertrie import order_items

        return list(order_items(self._order))

    def set(self, key: Any, value: Any) -> OrderedFloorMap:
        from frozenmap._pycore import ordertrie as ot

        seq = self._next
        keys, old = _oset(self._keys, 0, hash(key), key, value, seq)
        if old is _MISSING:
            order = ot.order_insert_copying(self._order, seq, (key, value))
            return OrderedFloorMap._make(keys, order, seq + 1)
        order = ot.order_replace_copying(self._order, old[0], (key, value))
        return OrderedFloorMap._make(keys, order, seq)

    def delete(self, key: Any) -> OrderedFloorMap:
        from frozenmap._pycore import ordertrie as ot

        found = _odelete(self._keys, 0, hash(key), key)
        if found is None:
            raise KeyError(key)
        keys, old = found
        return OrderedFloorMap._make(keys, ot.order_remove_copying(self._order, old[0]), self._next)


def _hfind(node: Node, shift: int, h: int, key: Any) -> Any:
    """``_find`` for payloads ``(hash, seq, value)``: the stored hash is
    compared before the key, as frozenmap's contract wants (no key's
    ``__hash__`` runs again; a changed hash misses)."""
    if shift > MAX_SHIFT:
        for i in range(0, len(node), 2):
            k = node[i]
            payload = node[i + 1]
            if payload[0] == h and (k is key or k == key):
                return payload
        return _MISSING
    bm = node[0]
    d = (h >> shift) & 31
    bit = 1 << d
    if bm & bit:
        i = 2 * _bits_below(bm & (bit - 1)) + 1
        payload = node[i + 1]
        if payload[0] == h:
            k = node[i]
            if k is key or k == key:
                return payload
        return _MISSING
    nm = (bm >> 32) & LOW
    if nm & bit:
        return _hfind(node[-1 - _bits_below(nm & (bit - 1))], shift + 5, h, key)
    return _MISSING


class OrderedFloorHashed(OrderedFloorMap):
    """``OrderedFloorMap`` storing each key's hash, ``(hash, seq, value)``,
    and comparing it first: the floor's lookup under frozenmap's contract.
    Lookups and memory only (built by insertion; no edits)."""

    __slots__ = ()

    def __init__(self, data: Mapping[Any, Any] = ()) -> None:  # type: ignore[assignment]
        from frozenmap._pycore.ordertrie import order_build

        items = list((data if type(data) is dict else dict(data)).items())
        root: Node = [0]
        for seq, (key, value) in enumerate(items):
            h = hash(key)
            _insert(root, 0, h, key, (h, seq, value))
        self._keys = root
        self._order = order_build(items, None)
        self._next = len(items)

    def __getitem__(self, key: Any) -> Any:
        payload = _hfind(self._keys, 0, hash(key), key)
        if payload is _MISSING:
            raise KeyError(key)
        return payload[2]

    def __contains__(self, key: Any) -> bool:
        return _hfind(self._keys, 0, hash(key), key) is not _MISSING


def check(m: FloorMap, model: Dict[Any, Any]) -> None:
    """Assert ``m`` holds ``model``'s items, in canonical shape."""
    assert len(m) == len(model)
    for k, v in model.items():
        assert m[k] is v
    assert _count(m._root, 0, True) == len(model)


def _count(node: Node, shift: int, root: bool) -> int:
    if shift > MAX_SHIFT:
        assert type(node) is _Collision and len(node) >= 4
        return len(node) // 2
    data = node[0] & LOW
    nm = (node[0] >> 32) & LOW
    assert not data & nm
    assert len(node) == 1 + 2 * bin(data).count("1") + bin(nm).count("1")
    total = bin(data).count("1")
    for j in range(bin(nm).count("1")):
        total += _count(node[-1 - j], shift + 5, False)
    assert root or total >= 2
    return total


def _selftest() -> None:
    """Random sets and deletes against a dict, with forced collisions."""
    import random

    class Clash:
        def __init__(self, n: int) -> None:
            self.n = n

        def __hash__(self) -> int:
            return self.n % 7

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Clash) and other.n == self.n

    rng = random.Random(26)
    for pool in (["k%d" % i for i in range(3000)], [Clash(i) for i in range(60)]):
        model: Dict[Any, Any] = dict.fromkeys(pool[:100], 0)
        m = FloorMap(model)
        check(m, model)
        for step in range(4000):
            k = rng.choice(pool)
            if rng.random() < 0.4 and k in model:
                m = m.delete(k)
                del model[k]
            else:
                v = object()
                m = m.set(k, v)
                model[k] = v
            if step % 500 == 0:
                check(m, model)
        check(m, model)
    for pool in (["k%d" % i for i in range(3000)], [Clash(i) for i in range(60)]):
        model = dict.fromkeys(pool[:100], 0)
        om = OrderedFloorMap(model)
        assert om._keys == OrderedFloorMap(model, bulk=False)._keys, "the two builds differ"
        for step in range(4000):
            k = rng.choice(pool)
            if rng.random() < 0.4 and k in model:
                om = om.delete(k)
                del model[k]
            else:
                v = object()
                om = om.set(k, v)
                model[k] = v
            if step % 500 == 0:
                assert om.items() == list(model.items()) and len(om) == len(model)
                assert all(om[k] is v for k, v in model.items())
        assert om.items() == list(model.items())
        hm = OrderedFloorHashed(model)
        assert all(hm[k] is v for k, v in model.items()) and len(hm) == len(model)


def main() -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pypy_ratios

    _selftest()
    defaults = [
        "--libs",
        "floor,py,dict,frozendict,immutables,pyrsistent",
        "--sizes",
        "100000",
        "--rounds",
        "10",
        "--ops",
        ",".join(pypy_ratios.OPS) + ",mem",
    ]
    pypy_ratios.main(defaults + sys.argv[1:])


if __name__ == "__main__":
    main()
