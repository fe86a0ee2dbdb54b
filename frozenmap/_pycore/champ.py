"""The key trie as the rest of the core uses it: the layout chosen, once, and
the algorithms written once over either layout.

The key trie has two layouts of its bitmap nodes, with the same shapes, the
same API and the same answers: ``keytrie`` (entry tuples and a digit index:
CPython's, the reference twin of ``frozenmap/_ccore/keytrie.c``) and
``keytrie_pypy`` (the entries' fields flat in the node, walked by the
bitmaps: PyPy's).  Each provides the node-level functions: the lookups, the
one-walk copies, the builds, the walks over entries, and the steps below
(``_descend``, ``champ_put_path``, ``champ_remove_path``, ``_split``, ...).
This module imports one of them, chosen here and nowhere else, and every
other module of the core imports the key trie from here; nothing is
rebound, so the hot paths are the chosen layout's own module-level
functions, with no indirection.

The choice: PyPy's layout on PyPy, CPython's elsewhere;
``FROZENMAP_KEYTRIE_NX=1`` forces PyPy's (to run the suite over it on
CPython), ``=0`` CPython's on PyPy (docs/design-decisions.md, "PyPy: the key
trie's layout and the floors").

Written here once, over the chosen layout's steps: ``champ_put`` and
``champ_remove`` (locate the node, then the layout's edit), the general way
the one-walk copies hand their rare shapes to (``champ_set_general``,
``champ_delete_general``), and the whole-trie algorithms ``champ_diff``,
``champ_check``, ``champ_node_ids``, ``champ_dump``.

With ``keytrie``, mirrors ``frozenmap/_ccore/keytrie.c``.
"""

from __future__ import annotations

import os
import sys
from typing import Any, List, Optional, Tuple

from .keytrie import (
    _NO_INDEX,
    BITS,
    DATAMAP,
    DIGIT_MASK,
    EMPTY_ROOT,
    FANOUT,
    FIRST,
    INDEX,
    MAX_SHIFT,
    NODEMAP,
    BitmapNode,
    CollisionNode,
    DiffOut,
    Entry,
    Node,
    Path,
    champ_diff_lists,
)

LAYOUT = (
    "pypy"
    if os.environ.get("FROZENMAP_KEYTRIE_NX", "1" if sys.implementation.name == "pypy" else "0")
    == "1"
    else "cpython"
)
"""The key trie's layout in this process: ``"cpython"`` (``keytrie``) or
``"pypy"`` (``keytrie_pypy``)."""

if LAYOUT == "pypy":
    from .keytrie_pypy import (
        _check_layout,
        _descend,
        _diff_inline_entries,
        _split,
        champ_build,
        champ_build_items,
        champ_collect,
        champ_delete_copying,
        champ_entries,
        champ_equal,
        champ_find,
        champ_find_stored,
        champ_identical,
        champ_put_path,
        champ_remove_path,
        champ_set_copying,
        champ_subtree_entries,
    )
else:
    from .keytrie import (
        _check_layout,
        _descend,
        _diff_inline_entries,
        _split,
        champ_build,
        champ_build_items,
        champ_collect,
        champ_delete_copying,
        champ_entries,
        champ_equal,
        champ_find,
        champ_find_stored,
        champ_identical,
        champ_put_path,
        champ_remove_path,
        champ_set_copying,
        champ_subtree_entries,
    )

__all__ = [
    "LAYOUT",
    "Entry",
    "BitmapNode",
    "CollisionNode",
    "DiffOut",
    "EMPTY_ROOT",
    "champ_diff_lists",
    "champ_find",
    "champ_find_stored",
    "champ_put",
    "champ_remove",
    "champ_set_copying",
    "champ_set_general",
    "champ_delete_copying",
    "champ_delete_general",
    "champ_build",
    "champ_build_items",
    "champ_entries",
    "champ_collect",
    "champ_equal",
    "champ_identical",
    "champ_diff",
    "champ_check",
    "champ_node_ids",
    "champ_dump",
]


# --- edits ---------------------------------------------------------------------


def champ_put(
    node: BitmapNode, shift: int, entry: Entry, old: Optional[Entry], owner: Optional[object]
) -> BitmapNode:
    """Return ``node`` with ``entry`` stored, replacing ``old`` if given.

    ``old`` is what ``champ_find`` returned for the key (None: the key is
    absent).  Runs no user code.  Nodes owned by ``owner`` are edited in place.
    Cost: O(log n) new nodes.

    Failure-atomic (a MemoryError leaves the trie as it was): the new node at
    the bottom is built first, an in-place edit is one step (a node owned by
    ``owner`` has owned ancestors, which then keep their child), and the
    copies above it are made bottom-up before the caller installs the root.
    """
    path: Path = []
    node, shift = _descend(node, shift, entry[0], path)
    return champ_put_path(path, node, shift, entry, old, owner)


def champ_remove(node: BitmapNode, shift: int, old: Entry, owner: Optional[object]) -> BitmapNode:
    """Return ``node`` without the entry ``old`` (as located by ``champ_find``).

    Keeps the canonical shape (see the module docstring).  Runs no user code.
    Cost: O(log n) new nodes.

    Failure-atomic, as ``champ_put``: the node that loses the entry is a new
    one below the root (its parent may inline it, and that may fail), a node
    below the root that inlines a child's last entry is a new one too (for the
    same reason), and the nodes above only store a child pointer (after every
    copy) or are rebuilt from lists made before anything is stored.
    """
    path: Path = []
    node, shift = _descend(node, shift, old[0], path)
    return champ_remove_path(path, node, shift, old, owner)


def champ_set_general(
    root: BitmapNode, h: int, key: Any, value: Any, seq: int
) -> Tuple[Optional[BitmapNode], Optional[Entry]]:
    """``champ_set_copying``'s answer where its walk ends at a collision node
    (it then answers None, having run no user code): ``champ_find``, then
    ``champ_put`` from the untouched root.  Cost: O(log n)."""
    old = champ_find(root, h, key)
    if old is None:
        return champ_put(root, 0, (h, seq, key, value), None, None), None
    if old[3] is value:
        return None, old
    return champ_put(root, 0, (h, old[1], old[2], value), old, None), old


def champ_delete_general(
    root: BitmapNode, h: int, key: Any, old: Optional[Entry]
) -> Optional[Tuple[BitmapNode, Entry]]:
    """``champ_delete_copying``'s answer for the rare shapes it hands back
    (``(None, old)``): ``old`` is the entry if its walk located it (its key's
    ``__eq__`` must not run twice), else None.  ``champ_find`` when needed,
    then ``champ_remove`` from the untouched root; None if the key is
    absent.  Cost: O(log n)."""
    if old is None:
        old = champ_find(root, h, key)
        if old is None:
            return None
    return champ_remove(root, 0, old, None), old


# --- whole-trie algorithms ------------------------------------------------------


def champ_diff(a: Node, b: Node, out: DiffOut, by_identity: bool = False) -> None:
    """Append to ``out`` = (added, removed, changed) what differs from a to b.

    ``added`` gets b's entries whose key is not in a, ``removed`` a's entries
    whose key is not in b, ``changed`` pairs (a's entry, b's entry) for keys in
    both whose values differ (``old is not new and old != new``; with
    ``by_identity``, ``old is not new``: no value's ``__eq__`` runs).  Shared
    subtrees are skipped: O(d log n) for versions d edits apart.  A list
    given as None is not wanted: a subtree only the other side has is then
    not even listed (``|`` needs no ``removed``, ``-`` and ``&`` only it), and
    without ``changed`` no values are compared.
    """
    if a is b:
        return
    if type(a) is not list or type(b) is not list:
        champ_diff_lists(list(champ_entries(a)), list(champ_entries(b)), out, by_identity)
        return
    a_nodes = a[NODEMAP]
    b_nodes = b[NODEMAP]
    if a_nodes == b_nodes and a[DATAMAP] == b[DATAMAP]:
        # The same digits on both sides (the usual case between versions):
        # the slots pair up by position, and a shared one is one ``is``.
        first_child = _diff_inline_entries(a, b, out, by_identity)
        for k in range(len(a) - 1, first_child - 1, -1):  # the children, in digit order
            if a[k] is not b[k]:
                champ_diff(a[k], b[k], out, by_identity)
        return
    a_bits = a[DATAMAP] | a_nodes
    b_bits = b[DATAMAP] | b_nodes
    # digits only one side holds, when what they would give is not wanted
    skip = (0 if out[1] is not None else a_bits & ~b_bits) | (
        0 if out[0] is not None else b_bits & ~a_bits
    )
    bits = (a_bits | b_bits) & ~skip
    while bits:
        bit = bits & -bits
        bits ^= bit
        if a_nodes & bit and b_nodes & bit:
            champ_diff(
                a[-1 - (a_nodes & (bit - 1)).bit_count()],
                b[-1 - (b_nodes & (bit - 1)).bit_count()],
                out,
                by_identity,
            )
            continue
        side_a = champ_subtree_entries(a, bit)
        side_b = champ_subtree_entries(b, bit)
        if len(side_a) == 1 and len(side_b) == 1 and side_a[0] is side_b[0]:
            continue
        champ_diff_lists(side_a, side_b, out, by_identity)


def champ_check(node: Node, shift: int = 0, prefix: int = 0, is_root: bool = True) -> int:
    """Assert the trie invariants below ``node``; return its number of entries.

    Bitmaps match the lists, every hash agrees with the digits that led to it,
    collision nodes hold >= 2 entries of one hash, and the shape is canonical.
    """
    low = (1 << shift) - 1
    assert len(node) >= FIRST, "node too short"
    if type(node) is CollisionNode:
        assert not is_root, "the root must be a bitmap node"
        assert node[DATAMAP] == 0 and node[NODEMAP] == 0, "collision node with bitmaps"
        assert node[INDEX] == _NO_INDEX, "collision node with an index"
        entries = node[FIRST:]
        assert len(entries) >= 2, "collision node with %d entries" % len(entries)
        for e in entries:
            assert type(e) is tuple and len(e) == 4, "malformed entry"
            assert e[0] == entries[0][0], "collision node holds a foreign hash"
            assert e[0] & low == prefix, "collision hash off its path"
        return len(entries)
    assert type(node) is list, "unknown node type %r" % (type(node),)
    assert shift <= MAX_SHIFT, "bitmap node below the last digit"
    datamap = node[DATAMAP]
    nodemap = node[NODEMAP]
    assert datamap & nodemap == 0, "digit both inline and child"
    assert datamap < (1 << FANOUT) and nodemap < (1 << FANOUT), "bitmap wider than FANOUT"
    _check_layout(node, datamap, nodemap)
    entries, children = _split(node)
    digits = []
    for e in entries:
        assert type(e) is tuple and len(e) == 4, "malformed entry"
        assert e[0] & low == prefix, "entry hash off its path"
        digits.append((e[0] >> shift) & DIGIT_MASK)
    assert digits == sorted(digits), "entries out of digit order"
    for d in digits:
        assert datamap >> d & 1, "entry at the wrong digit"
    total = len(entries)
    # Hashes seen directly at this node; a bitmap child always stands for
    # two or more distinct hashes.
    hashes = {e[0] for e in entries}
    has_bitmap_child = False
    bits = nodemap
    for child in children:
        bit = bits & -bits
        bits ^= bit
        d = bit.bit_length() - 1
        total += champ_check(child, shift + BITS, prefix | (d << shift), False)
        if type(child) is CollisionNode:
            hashes.add(child[FIRST][0])
        else:
            has_bitmap_child = True
    if not is_root:
        assert total >= 2, "non-root node with %d entries (must be inlined)" % total
        assert has_bitmap_child or len(hashes) >= 2, "non-root bitmap node over a single hash"
    return total


def champ_node_ids(node: Node, out: List[int]) -> None:
    """Append ``id()`` of every node below ``node`` (itself included)."""
    out.append(id(node))
    if type(node) is list:
        for child in _split(node)[1]:
            champ_node_ids(child, out)


def champ_dump(node: Node, indent: int = 0) -> List[str]:
    """Lines describing the trie, for failing tests."""
    pad = "  " * indent
    if type(node) is CollisionNode:
        lines = ["%sCollision hash=%#x" % (pad, node[FIRST][0])]
        lines += ["%s  %r" % (pad, e) for e in node[FIRST:]]
        return lines
    entries, children = _split(node)
    lines = ["%sBitmap data=%#x nodes=%#x" % (pad, node[DATAMAP], node[NODEMAP])]
    lines += ["%s  %r" % (pad, e) for e in entries]
    for child in children:
        lines += champ_dump(child, indent + 1)
    return lines
