"""Prototypes of other key-trie node layouts, timed against the real one (issue 26, PyPy).

Usage: python scripts/perf/pypy_flatkeys.py [--sizes 1000,100000] [--rounds 7]
                                            [--target 0.1] [--parts ...] [--mem]

The real key trie (``frozenmap/_pycore/keytrie.py``) stores an entry as a
tuple ``(hash, seq, key, value)`` in its node list and keeps a 64-byte
``bytes`` index per node.  Three variants of its hot paths:

- ``flat_*``: the four fields in the node itself, ``[datamap, nodemap,
  owner, index, h0, s0, k0, v0, h1, ..., children in reverse digit
  order]``, the index's entry byte giving the position of the hash;
  everything else as the real trie (index, owner, loops).
- ``nx_*``: entries flat as above and no index: ``[datamap, nodemap, owner,
  h0, s0, k0, v0, ..., children]``, slots found by bitmaps and
  ``int.bit_count`` (no ``translate`` on an edit).
- ``tx_*``: the real trie as it is, walked by its bitmaps instead of its
  index (lookup and set of an existing key only: what PyPy-only walks over
  today's layout would give).

Only the hot paths are here (build, lookup, a published version's set and
delete in their usual shapes; no collision nodes, which ``"key%d"`` keys do
not make at these sizes), each checked against the real trie's answers
before it is timed.  ``whole_set`` / ``whole_delete`` are ``frozendict.set``
/ ``delete``; ``nx_whole_*`` the ``nx`` key-trie edit followed by the real
order trie's (on PyPy the rest of an edit, hash, accumulator and new object,
is < 20 ns; on CPython it is not, so there the two are not comparable).
``--mem`` prints the memory per item each layout keeps (the benchmark's
measure).  The timing harness is ``pypy_parts.py``'s (each part in turn per
round, CPU time, median of the rounds, per key).  Results:
docs/notes/pypy.md, session 7.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import statistics
import sys
from typing import Any, List, Optional, Tuple

from pypy_parts import _time  # (the same harness)

from frozenmap._pycore.ordertrie import order_remove_copying, order_replace_copying

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

Node = List[Any]
ENTRY = 32
_NO_INDEX = bytes(64)
_BYTE = [bytes((b,)) for b in range(256)]
_MAX_POS = 4 + 4 * 32 + 1
_UP1 = [bytes(b + 1 if lo <= b < 255 else b for b in range(256)) for lo in range(_MAX_POS + 2)]
_UP4 = [bytes(b + 4 if lo <= b < 252 else b for b in range(256)) for lo in range(_MAX_POS + 2)]
_DEL4 = [
    bytes(0 if b == lo else b - 4 if b > lo and b >= 4 else b for b in range(256))
    for lo in range(_MAX_POS + 2)
]
"""``_DEL4[i]``: the index of a node losing its entry at position ``i``."""
_DEL1 = [
    bytes(0 if b == lo else b - 1 if b > lo else b for b in range(256))
    for lo in range(_MAX_POS + 2)
]
"""``_DEL1[i]``: the index of a node losing its child at position ``i``."""
_SOLO = [_NO_INDEX[:d] + _BYTE[4] + _NO_INDEX[d + 1 :] for d in range(32)]
MISSING = object()


def _with(index: bytes, b: int, pos: int) -> bytes:
    return index[:b] + _BYTE[pos] + index[b + 1 :]


def _pair_index(b1: int, b2: int) -> bytes:
    new = bytearray(64)
    new[b1] = 4
    new[b2] = 8
    return bytes(new)


_PAIRS = [
    _pair_index(ENTRY + lo, ENTRY + hi) if lo < hi else _NO_INDEX
    for lo in range(32)
    for hi in range(32)
]


def _index_of(datamap: int, nodemap: int) -> bytes:
    index = bytearray(64)
    pos = 4
    bits = datamap
    while bits:
        low = bits & -bits
        index[ENTRY + low.bit_length() - 1] = pos
        pos += 4
        bits ^= low
    pos = 4 + 4 * datamap.bit_count() + nodemap.bit_count() - 1
    bits = nodemap
    while bits:
        low = bits & -bits
        index[low.bit_length() - 1] = pos
        pos -= 1
        bits ^= low
    return bytes(index)


def _pair(ha, sa, ka, va, hb, sb, kb, vb, shift: int) -> Node:
    """The subtree at ``shift`` holding two entries of distinct hashes."""
    da = (ha >> shift) & 31
    db = (hb >> shift) & 31
    if da == db:
        return [0, 1 << da, None, _SOLO[da], _pair(ha, sa, ka, va, hb, sb, kb, vb, shift + 5)]
    if da < db:
        return [
            (1 << da) | (1 << db),
            0,
            None,
            _PAIRS[da << 5 | db],
            ha,
            sa,
            ka,
            va,
            hb,
            sb,
            kb,
            vb,
        ]
    return [(1 << da) | (1 << db), 0, None, _PAIRS[db << 5 | da], hb, sb, kb, vb, ha, sa, ka, va]


def flat_build(entries: List[Tuple[int, int, Any, Any]], shift: int = 0) -> Node:
    buckets: List[Optional[list]] = [None] * 32
    for entry in entries:
        d = (entry[0] >> shift) & 31
        bucket = buckets[d]
        if bucket is None:
            buckets[d] = [entry]
        else:
            bucket.append(entry)
    node: Node = [0, 0, None, _NO_INDEX]
    children = []
    datamap = nodemap = 0
    for d in range(32):
        bucket = buckets[d]
        if bucket is None:
            continue
        if len(bucket) == 1:
            datamap |= 1 << d
            node.extend(bucket[0])
            continue
        nodemap |= 1 << d
        if len(bucket) == 2:
            children.append(_pair(*bucket[0], *bucket[1], shift + 5))
        else:
            children.append(flat_build(bucket, shift + 5))
    for child in reversed(children):
        node.append(child)
    node[0] = datamap
    node[1] = nodemap
    node[3] = _index_of(datamap, nodemap)
    return node


def _walk_below(node: Node, h: int) -> Tuple[Node, int]:
    shift = 20
    while True:
        d = (h >> shift) & 31
        j = node[3][d]
        if not j:
            return node, d
        node = node[j]
        shift += 5


def flat_find(root: Node, h: int, key: Any) -> Any:
    """The value of ``key``, or MISSING (the real ``champ_find``'s walk)."""
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
    if j and node[j] == h:
        k = node[j + 2]
        if k is key or k == key:
            return node[j + 3]
    return MISSING


def flat_set_copying(root: Node, h: int, key: Any, value: Any, seq: int) -> Tuple[Node, int]:
    """(new root, the old entry's seq or -1 for a new key)."""
    top = new = root[:]
    new[2] = None
    hh = h
    shift = 0
    while True:
        j = new[3][hh & 31]
        if not j:
            break
        child = new[j][:]
        child[2] = None
        new[j] = child
        new = child
        hh >>= 5
        shift += 5
    d = hh & 31
    bit = 1 << d
    bitmap = new[0]
    if not bitmap & bit:
        i = 4 + 4 * (bitmap & (bit - 1)).bit_count()
        new[i:i] = (h, seq, key, value)
        new[0] = bitmap | bit
        new[3] = _with(new[3].translate(_UP4[i]), ENTRY + d, i)
        return top, -1
    i = new[3][ENTRY + d]
    if new[i] == h:
        k = new[i + 2]
        if k is key or k == key:
            new[i + 3] = value
            return top, new[i + 1]
    child = _pair(new[i], new[i + 1], new[i + 2], new[i + 3], h, seq, key, value, shift + 5)
    del new[i : i + 4]
    nodemap = new[1] | bit
    c = len(new) - (nodemap & (bit - 1)).bit_count()
    new.insert(c, child)
    new[0] = bitmap ^ bit
    new[1] = nodemap
    new[3] = _with(new[3].translate(_DEL4[i]).translate(_UP1[c]), d, c)
    return top, -1


def flat_delete_copying(root: Node, h: int, key: Any) -> Optional[Tuple[Node, int]]:
    """(new root, the old seq), or None; the usual shapes only."""
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
    if not i or new[i] != h:
        return None
    k = new[i + 2]
    if not (k is key or k == key):
        return None
    seq = new[i + 1]
    del new[i : i + 4]
    bitmap = new[0] ^ (1 << d)
    new[0] = bitmap
    if len(new) == 12 and not new[1]:
        new[3] = _PAIRS[((bitmap & -bitmap).bit_length() - 1) << 5 | (bitmap.bit_length() - 1)]
    else:
        new[3] = new[3].translate(_DEL4[i])
    if len(new) != 8 or up is None or new[1]:
        return top, seq
    up_d = up_hh & 31
    bit = 1 << up_d
    bitmap = up[0] | bit
    e = 4 + 4 * (bitmap & (bit - 1)).bit_count()
    del up[up_j]
    up[e:e] = new[4:8]
    up[0] = bitmap
    up[1] ^= bit
    up[3] = _with(up[3].translate(_DEL1[up_j]).translate(_UP4[e]), ENTRY + up_d, e)
    return top, seq


# --- variant "nx": entries flat and no ``bytes`` index (bitmaps and popcount) ---
#
# ``[datamap, nodemap, owner, h0, s0, k0, v0, ..., children in reverse digit
# order]``: entry slot of digit d at ``3 + 4 * popcount(datamap below d)``,
# child at ``-1 - popcount(nodemap below d)``.


def _nx_pair(ha, sa, ka, va, hb, sb, kb, vb, shift: int) -> Node:
    da = (ha >> shift) & 31
    db = (hb >> shift) & 31
    if da == db:
        return [0, 1 << da, None, _nx_pair(ha, sa, ka, va, hb, sb, kb, vb, shift + 5)]
    if da < db:
        return [(1 << da) | (1 << db), 0, None, ha, sa, ka, va, hb, sb, kb, vb]
    return [(1 << da) | (1 << db), 0, None, hb, sb, kb, vb, ha, sa, ka, va]


def nx_build(entries: List[Tuple[int, int, Any, Any]], shift: int = 0) -> Node:
    buckets: List[Optional[list]] = [None] * 32
    for entry in entries:
        d = (entry[0] >> shift) & 31
        bucket = buckets[d]
        if bucket is None:
            buckets[d] = [entry]
        else:
            bucket.append(entry)
    node: Node = [0, 0, None]
    children = []
    datamap = nodemap = 0
    for d in range(32):
        bucket = buckets[d]
        if bucket is None:
            continue
        if len(bucket) == 1:
            datamap |= 1 << d
            node.extend(bucket[0])
            continue
        nodemap |= 1 << d
        if len(bucket) == 2:
            children.append(_nx_pair(*bucket[0], *bucket[1], shift + 5))
        else:
            children.append(nx_build(bucket, shift + 5))
    for child in reversed(children):
        node.append(child)
    node[0] = datamap
    node[1] = nodemap
    return node


def _nx_walk_below(node: Node, h: int) -> Tuple[Node, int]:
    shift = 20
    while True:
        bit = 1 << ((h >> shift) & 31)
        nm = node[1]
        if not nm & bit:
            return node, bit
        node = node[-1 - (nm & (bit - 1)).bit_count()]
        shift += 5


def nx_find(root: Node, h: int, key: Any) -> Any:
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
                    node, bit = _nx_walk_below(node[-1 - (nm & (bit - 1)).bit_count()], h)
    dm = node[0]
    if dm & bit:
        j = 3 + 4 * (dm & (bit - 1)).bit_count()
        if node[j] == h:
            k = node[j + 2]
            if k is key or k == key:
                return node[j + 3]
    return MISSING


def nx_set_copying(root: Node, h: int, key: Any, value: Any, seq: int) -> Tuple[Node, int]:
    top = new = root[:]
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
    i = 3 + 4 * (bitmap & (bit - 1)).bit_count()
    if not bitmap & bit:
        new[i:i] = (h, seq, key, value)
        new[0] = bitmap | bit
        return top, -1
    if new[i] == h:
        k = new[i + 2]
        if k is key or k == key:
            new[i + 3] = value
            return top, new[i + 1]
    child = _nx_pair(new[i], new[i + 1], new[i + 2], new[i + 3], h, seq, key, value, shift + 5)
    del new[i : i + 4]
    nodemap = new[1] | bit
    new.insert(len(new) - (nodemap & (bit - 1)).bit_count(), child)
    new[0] = bitmap ^ bit
    new[1] = nodemap
    return top, -1


def nx_delete_copying(root: Node, h: int, key: Any) -> Optional[Tuple[Node, int]]:
    top = new = root[:]
    new[2] = None
    up: Optional[Node] = None
    up_j = 0
    up_bit = 0
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
        return None
    i = 3 + 4 * (bitmap & (bit - 1)).bit_count()
    if new[i] != h:
        return None
    k = new[i + 2]
    if not (k is key or k == key):
        return None
    seq = new[i + 1]
    del new[i : i + 4]
    new[0] = bitmap ^ bit
    if len(new) != 7 or up is None or new[1]:
        return top, seq
    bitmap = up[0] | up_bit
    e = 3 + 4 * (bitmap & (up_bit - 1)).bit_count()
    del up[up_j]
    up[e:e] = new[3:7]
    up[0] = bitmap
    up[1] ^= up_bit
    return top, seq


# --- variant "tx": the real trie (tuple entries, index kept up), walked by
# its bitmaps instead of its index (what PyPy-only walks would read) ---


def tx_find(root: Node, h: int, key: Any) -> Any:
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
                    node, bit = _nx_walk_below(node[-1 - (nm & (bit - 1)).bit_count()], h)
    dm = node[0]
    if dm & bit:
        entry = node[4 + (dm & (bit - 1)).bit_count()]
        if entry[0] == h:
            k = entry[2]
            if k is key or k == key:
                return entry
    return None


def tx_set_existing(root: Node, h: int, key: Any, value: Any, seq: int) -> Any:
    top = new = root[:]
    new[2] = None
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
        new = child
        hh >>= 5
    bitmap = new[0]
    i = 4 + (bitmap & (bit - 1)).bit_count()
    old = new[i]
    if old[0] == h:
        k = old[2]
        if k is key or k == key:
            new[i] = (h, old[1], k, value)
            return top, old
    raise AssertionError


def nx_whole_set(root, order, h, key, value):
    top, seq = nx_set_copying(root, h, key, value, 0)
    return top, order_replace_copying(order, seq, (key, value))


def nx_whole_delete(root, order, h, key):
    top, seq = nx_delete_copying(root, h, key)
    return top, order_remove_copying(order, seq)


def _parts(n):
    fd = importlib.import_module("frozenmap._pycore.frozendict").frozendict
    kt = importlib.import_module("frozenmap._pycore.keytrie")
    key_mask = importlib.import_module("frozenmap._pycore.hashing").KEY_MASK
    rng = random.Random(814)
    keys = ["key%d" % i for i in range(n)]
    data = dict(zip(keys, range(n)))
    sample = [keys[i] for i in rng.sample(range(n), min(n, 1000))]
    m = fd(data)
    root = m._root
    order = m._order
    entries = list(kt.champ_entries(root))
    entries.sort(key=lambda e: e[1])
    flat = flat_build(entries)
    triples = [(hash(k) & key_mask, k, data[k] + n + 1) for k in sample]
    news = [(hash(k) & key_mask, k, i) for i, k in enumerate("new%d" % i for i in range(1000))]
    # the prototype gives the real trie's answers
    for h, k, v in triples:
        assert flat_find(flat, h, k) == kt.champ_find(root, h, k)[3]
        top, s = flat_set_copying(flat, h, k, v, 0)
        assert flat_find(top, h, k) == v and s == kt.champ_find(root, h, k)[1]
        top, s = flat_delete_copying(flat, h, k)
        assert flat_find(top, h, k) is MISSING
        assert flat_find(top, triples[0][0], triples[0][1]) in (MISSING, data[triples[0][1]])
    nx = nx_build(entries)
    for h, k, v in triples:
        assert tx_find(root, h, k) is kt.champ_find(root, h, k)
        top, old = tx_set_existing(root, h, k, v, 0)
        assert kt.champ_find(top, h, k)[3] == v
    for h, k, v in triples:
        assert nx_find(nx, h, k) == v - n - 1
        top, s = nx_set_copying(nx, h, k, v, 0)
        assert nx_find(top, h, k) == v and s == kt.champ_find(root, h, k)[1]
        top, s = nx_delete_copying(nx, h, k)
        assert nx_find(top, h, k) is MISSING
        assert all(nx_find(top, h2, k2) == v2 - n - 1 for h2, k2, v2 in triples if k2 != k)
    for h, k, v in news:
        assert nx_find(nx, h, k) is MISSING
        top, s = nx_set_copying(nx, h, k, v, n + v)
        assert s == -1 and nx_find(top, h, k) == v
    for h, k, v in news:
        assert flat_find(flat, h, k) is MISSING
        top, s = flat_set_copying(flat, h, k, v, n + v)
        assert s == -1 and flat_find(top, h, k) == v

    def each(fn, args):
        def run():
            for a in args:
                fn(*a)

        return run

    parts = {
        "find": each(kt.champ_find, [(root, h, k) for h, k, _ in triples]),
        "flat_find": each(flat_find, [(flat, h, k) for h, k, _ in triples]),
        "set": each(kt.champ_set_copying, [(root, h, k, v, 0) for h, k, v in triples]),
        "flat_set": each(flat_set_copying, [(flat, h, k, v, 0) for h, k, v in triples]),
        "set_new": each(kt.champ_set_copying, [(root, h, k, v, n + v) for h, k, v in news]),
        "flat_set_new": each(flat_set_copying, [(flat, h, k, v, n + v) for h, k, v in news]),
        "delete": each(kt.champ_delete_copying, [(root, h, k) for h, k, _ in triples]),
        "flat_delete": each(flat_delete_copying, [(flat, h, k) for h, k, _ in triples]),
        "tx_find": each(tx_find, [(root, h, k) for h, k, _ in triples]),
        "tx_set": each(tx_set_existing, [(root, h, k, v, 0) for h, k, v in triples]),
        "nx_find": each(nx_find, [(nx, h, k) for h, k, _ in triples]),
        "nx_set": each(nx_set_copying, [(nx, h, k, v, 0) for h, k, v in triples]),
        "nx_set_new": each(nx_set_copying, [(nx, h, k, v, n + v) for h, k, v in news]),
        "nx_delete": each(nx_delete_copying, [(nx, h, k) for h, k, _ in triples]),
        # what a whole set / delete would cost with the nx key trie: its edit,
        # then the real order trie's (the hash, accumulator and new object add
        # < 20 ns: docs/notes/pypy.md, session 6)
        "whole_set": each(m.set, [(k, v) for _, k, v in triples]),
        "nx_whole_set": each(nx_whole_set, [(nx, order, h, k, v) for h, k, v in triples]),
        "whole_delete": each(m.delete, [(k,) for k in sample]),
        "nx_whole_delete": each(nx_whole_delete, [(nx, order, h, k) for h, k, _ in triples]),
        "build": lambda: kt.champ_build(entries, None),
        "flat_build": lambda: flat_build(entries),
        "nx_build": lambda: nx_build(entries),
    }
    try:
        import immutables
    except ImportError:
        return parts, len(sample)
    im = immutables.Map(data)
    parts["immutables_set"] = each(im.set, [(k, v) for _, k, v in triples])
    parts["immutables_delete"] = each(im.delete, [(k,) for k in sample])
    return parts, len(sample)


def _mem(sizes, rounds):
    """Bytes per item kept by each key-trie layout (the benchmark's measure)."""
    from frozenmap.bench.operations import _traced

    kt = importlib.import_module("frozenmap._pycore.keytrie")
    fd = importlib.import_module("frozenmap._pycore.frozendict").frozendict
    for n in sizes:
        data = {"key%d" % i: i for i in range(n)}
        entries = sorted(kt.champ_entries(fd(data)._root), key=lambda e: e[1])
        # (new entry tuples in each make: the tuple layout keeps them, the
        # flat ones drop them)
        makes = {
            "keytrie": lambda: kt.champ_build([(h, s, k, v) for h, s, k, v in entries], None),
            "flat": lambda: flat_build([(h, s, k, v) for h, s, k, v in entries]),
            "nx": lambda: nx_build([(h, s, k, v) for h, s, k, v in entries]),
            "frozendict": lambda: fd(data),
        }
        print("n = %d, median of %d rounds, bytes per item" % (n, rounds))
        for name, make in makes.items():
            make()
            kept = statistics.median(_traced(make) for _ in range(rounds))
            print("%-14s %8.1f B" % (name, kept / n))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="1000,100000")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--target", type=float, default=0.1)
    p.add_argument("--parts", help="comma-separated names (default: all)")
    p.add_argument("--mem", action="store_true", help="memory per item of each layout instead")
    args = p.parse_args(argv)
    print(sys.version.replace("\n", " "))
    if args.mem:
        return _mem([int(s) for s in args.sizes.split(",")], args.rounds)
    for n in [int(s) for s in args.sizes.split(",")]:
        parts, per = _parts(n)
        names = args.parts.split(",") if args.parts else list(parts)
        times = {name: [] for name in names}
        for _ in range(args.rounds):
            for name in names:
                scale = n if "build" in name else per
                times[name].append(_time(parts[name], args.target) / scale)
        print("n = %d, median of %d rounds, per key (build: per item)" % (n, args.rounds))
        for name in names:
            print("%-14s %8.0f ns" % (name, statistics.median(times[name]) * 1e9))


if __name__ == "__main__":
    main()
