"""The one-key derivations of a version: ``set`` (``derive_with``),
``delete`` and ``discard`` (``derive_without``).

Each locates the key (its ``__hash__``, the stored keys' ``__eq__``), then
computes the new hash accumulator (a value's ``__hash__``), then makes the
new tries' paths: what a Transient's ``_assoc`` and ``_publish`` do, without
the transient.  The key trie's path is copied in the walk that locates
(``champ_set_copying``, ``champ_delete_copying``: nothing published is
edited, and nothing new is reachable until it is returned), so a failing or
re-entrant ``__eq__`` leaves no trace.  A flat version derives its two
tuples (``derive_flat_with``, ``derive_flat_without``); the key that makes
FLAT_MAX + 1 promotes it, and a result of FLAT_MAX keys or fewer is made
flat by ``_from_parts``.  A new one-key operation (one that derives a version
from one key, as a rename that keeps the item's position would) belongs
here, beside its C twin.

Each takes the class of the version it makes (``cls``: the exact frozendict,
from its methods and from ``paths``), as the C functions take the module
state that holds it; this module imports no layer above it.

Layers: above ``transient``'s layer (the tries, ``flat``, ``hashing``),
beside ``reads``; ``paths`` and ``frozendict`` call it.

Mirrors ``frozenmap/_ccore/derive.c``.
"""

from __future__ import annotations

from typing import Any, Tuple

from .champ import (
    BitmapNode,
    Entry,
    champ_delete_copying,
    champ_delete_general,
    champ_find,
    champ_set_copying,
    champ_set_general,
)
from .flat import FLAT_MAX, flat_copy_without, flat_find, flat_promote, flat_with_value
from .hashing import KEY_MASK, hashing_acc_replace, unhashable
from .ordertrie import order_insert_copying, order_remove_copying, order_replace_copying
from .transient import trie_parts

__all__ = ["derive_with", "derive_without"]


def derive_with(cls: Any, version: Any, key: Any, value: Any) -> Any:
    """A new ``cls`` version: ``version`` with ``key`` set to ``value``
    (``frozendict.set``); ``version`` itself as an exact frozendict when it
    already holds that very value object.

    A replaced key keeps its position and its first key object; a new key
    goes last.  The user code runs in the C core's order: the key's hash,
    the stored keys' ``__eq__`` down the path, then the values' ``__hash__``
    for the accumulator.  Cost: O(log n).

    >>> from frozenmap._pycore import frozendict
    >>> derive_with(frozendict, frozendict(a=1, b=2), 'a', 9)
    frozendict({'a': 9, 'b': 2})
    """
    # C records the key trie's path in a first walk (champ_find_path) and
    # copies it after the value's __hash__; here the walk that locates
    # copies it (list slicing is the cheap copy), which runs the same user
    # code in the same order.
    try:
        h = hash(key) & KEY_MASK  # hashing_key_hash, inlined
    except TypeError as exc:
        unhashable(key, exc)
    if version._len <= FLAT_MAX:
        return derive_flat_with(cls, version, h, key, value)
    # (a table version's tries: its twin, built once)
    vroot, vorder, length, seq, acc = trie_parts(version)
    found = champ_set_copying(vroot, h, key, value, seq)
    if found is None:  # a collision node at the bottom: the general way
        found = champ_set_general(vroot, h, key, value, seq)
    root, old = found
    if old is None:
        if acc is not None:
            acc = hashing_acc_replace(acc, h, None, value, False, True)
        order = order_insert_copying(vorder, seq, (key, value))
        return cls._from_parts(root, order, length + 1, seq + 1, acc)
    if root is None:  # the very value already stored
        return version._exact()
    if acc is not None:
        acc = hashing_acc_replace(acc, h, old[3], value, True, True)
    # (the first key object stays, as in dict)
    order = order_replace_copying(vorder, old[1], (old[2], value))
    return cls._from_parts(root, order, length, seq, acc)


def derive_flat_with(cls: Any, version: Any, h: int, key: Any, value: Any) -> Any:
    """``derive_with`` of a flat version (``key``'s hash ``h``): the same
    steps (locate, the accumulator, the new parts); the key that makes
    FLAT_MAX + 1 promotes to tries.  Cost: O(FLAT_MAX) pointer copies."""
    hashes: Any = version._root
    items: Any = version._order
    i = flat_find(hashes, items, h, key)
    acc = version._acc
    if i < 0:
        if acc is not None:
            acc = hashing_acc_replace(acc, h, None, value, False, True)
        length = version._len + 1
        hashes = hashes + (h,)
        items = items + ((key, value),)
        if length > FLAT_MAX:
            hashes, items = flat_promote(hashes, items)
        return cls._from_parts(hashes, items, length, length, acc)
    old = items[i][1]
    if old is value:  # the very value already stored
        return version._exact()
    if acc is not None:
        acc = hashing_acc_replace(acc, h, old, value, True, True)
    return cls._from_parts(
        hashes, flat_with_value(items, i, value), version._len, version._len, acc
    )


def derive_without(cls: Any, version: Any, key: Any, missing_ok: bool) -> Any:
    """A new ``cls`` version: ``version`` without ``key`` (``frozendict.delete``;
    ``frozendict.discard`` with ``missing_ok``).  A missing key is a
    ``KeyError``, or, with ``missing_ok``, gives ``version`` itself as an
    exact frozendict.  Cost: O(log n).

    >>> from frozenmap._pycore import frozendict
    >>> derive_without(frozendict, frozendict(a=1, b=2), 'a', False)
    frozendict({'b': 2})
    >>> derive_without(frozendict, frozendict(a=1), 'z', True)
    frozendict({'a': 1})
    """
    try:
        h = hash(key) & KEY_MASK  # hashing_key_hash, inlined
    except TypeError as exc:
        unhashable(key, exc)
    if version._len <= FLAT_MAX:
        i = flat_find(version._root, version._order, h, key)
        if i >= 0:
            return derive_flat_without(cls, version, i)
        if missing_ok:
            return version._exact()
        raise KeyError(key)
    root = trie_parts(version)[0]  # (a table version's twin)
    located = None
    if missing_ok:
        # Located first, so that an absent key costs no copies; the edit then
        # finds the stored key by identity, or (a collision node) takes the
        # entry located: no second __eq__.
        located = champ_find(root, h, key)
        if located is None:
            return version._exact()
        key = located[2]
    found = champ_delete_copying(root, h, key)  # locate and copy: as in set
    if found is not None and found[0] is None:  # a rare shape: the general way
        found = champ_delete_general(root, h, key, found[1] or located)
    if found is None:
        raise KeyError(key)
    return derive_trie_without(cls, version, found)  # type: ignore[arg-type]


def derive_flat_without(cls: Any, version: Any, i: int) -> Any:
    """A flat version without the entry at position ``i``: the accumulator
    (the value's ``__hash__``), then the two tuples.  Cost: O(FLAT_MAX)
    pointer copies.

    >>> from frozenmap._pycore import frozendict
    >>> derive_flat_without(frozendict, frozendict(a=1, b=2), 0)
    frozendict({'b': 2})
    """
    hashes: Any = version._root
    items: Any = version._order
    acc = version._acc
    if acc is not None:
        acc = hashing_acc_replace(acc, hashes[i], items[i][1], None, True, False)
    hashes, items = flat_copy_without(hashes, items, i)
    return cls._from_parts(hashes, items, version._len - 1, version._len - 1, acc)


def derive_trie_without(cls: Any, version: Any, found: Tuple[BitmapNode, Entry]) -> Any:
    """The new version from ``champ_delete_copying``'s (new key-trie root,
    removed entry), as a Transient's ``_remove_entry`` and ``_publish`` make
    it: the accumulator (the value's ``__hash__``), then the order trie's
    path.  A result of FLAT_MAX keys is made flat (``_from_parts``).
    Cost: O(log n)."""
    root, old = found
    _, vorder, length, next_seq, acc = trie_parts(version)  # (a table's twin)
    if acc is not None:
        acc = hashing_acc_replace(acc, old[0], old[3], None, True, False)
    order = order_remove_copying(vorder, old[1])
    return cls._from_parts(root, order, length - 1, next_seq, acc)
