"""The table form: a frozendict built once and read.

Most frozendicts are built once and read: configuration, constants, cache
keys, JSON documents.  A version of more than ``FLAT_MAX`` keys built from a
dict, pairs, keywords or ``fromkeys`` (the constructor, unpickling, a JSON
``object_pairs_hook``), whose keys all hash without running Python code
(``hashing_key_is_pure``: str, int, float, bytes, None, frozenset, the default
identity hash, tuples of those), holds its items in a private dict: the two
slots of the frozendict hold

- ``_root``: the dict (never changed, never handed out), and
- ``_order``: its *twin*, ``(root, order)``: the same items in the two tries,
  built by the first operation that needs tries (a derivation, a merge, a
  walk beside another version, a positional read), or None.

A lookup of a key whose hash runs no Python code is the dict's own, and so
are iteration, ``len``, ``==`` of two tables, ``repr`` and pickling; any other
key is hashed once (the PEP 814 message when it cannot be) and found in the
twin.  Every version derived from a table version is derived from its twin,
so ``==`` and ``diff`` between them walk only what differs; the table version
keeps its dict for its own reads.

Why the keys must hash without Python code: a dict keeps its keys' hashes
where Python cannot read them, and cannot be given a hash it already has, so
a table's keys are hashed again whenever the twin is built or ``hash()`` is
computed (no Python code, no visible call), and a build from pairs inserts
each key into the dict, which hashes it.  A build that meets another key
leaves the table first (``Transient._table_leave``), before that key is hashed,
and goes on in the flat or tries form.  The C core makes the same choice at
the same moments (``frozenmap/_ccore/table.c``, mirrored function by
function), so both hold the same forms and make the same user calls.

Layers: beside ``flat`` (it builds the tries from a dict); ``transient`` and
everything else sit above it.  The frozendict class registers its slot
setter here (``table_register``).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from .champ import BitmapNode, champ_build_items, champ_find
from .hashing import KEY_MASK, hashing_key_hash, hashing_key_is_pure, hashing_pure_key_hash
from .ordertrie import OrderNode, order_build, order_items

__all__ = [
    "table_from_dict",
    "table_keys_are_pure",
    "table_tries",
    "table_twin",
    "table_find",
    "table_find_hashed",
    "TABLE_MISSING",
    "table_register",
    "table_check",
    "table_dump",
]

Twin = Tuple[BitmapNode, Optional[OrderNode]]
"""A table version's tries: its key-trie root and order-trie root."""

# Types whose every instance hashes without Python code, and the equality of
# whose instances runs none either: a dict of such keys is read without a
# Python call (the common keys, checked by type in C speed).
_ATOM_TYPES = frozenset((str, int, float, bytes, bool, type(None)))

_set_twin: Any = None
"""The frozendict's ``_order`` slot setter (``table_register``)."""


def table_register(set_order: Any) -> None:
    """Record the frozendict class's ``_order`` slot setter (at its import)."""
    global _set_twin
    _set_twin = set_order


def table_keys_are_pure(table: Dict[Any, Any]) -> bool:
    """Whether every key of ``table`` hashes without Python code.  Cost: O(n),
    by type in C speed for the usual keys."""
    types = set(map(type, table))
    if types <= _ATOM_TYPES:
        return True
    for key in table:
        if type(key) not in _ATOM_TYPES and hashing_pure_key_hash(key) is None:
            return False
    return True


def table_from_dict(cls: Any, source: Dict[Any, Any]) -> Any:
    """``cls(source)`` of a dict of more than FLAT_MAX keys: a table version of
    a copy of it, or None when one of its keys hashes with Python code (the
    caller builds otherwise).  Cost: a dict copy and a scan of the keys'
    types."""
    table = dict(source)
    if not table_keys_are_pure(table):
        return None
    return cls._from_parts(table, None, len(table), 0, None)


def table_tries(table: Dict[Any, Any], owner: Optional[object] = None) -> Twin:
    """Both tries holding a table's items in its order, at seqs 0..n-1, with
    its keys' hashes (they run no Python code).  The nodes carry ``owner``
    (by default a fresh token: nobody edits them).  Cost: O(n log n)."""
    if owner is None:
        owner = object()
    items = list(table.items())
    hashes = []
    for key in table:
        hashes.append(hash(key) & KEY_MASK)
    return champ_build_items(hashes, items, owner), order_build(items, owner)


def table_twin(version: Any) -> Twin:
    """A table version's tries, built the first time and kept in its
    ``_order`` slot (two threads may both build them: each reads the tries it
    finds kept afterwards, the same items).  Runs no user code.
    Cost: O(n log n) once, O(1) after."""
    twin = version._order
    if twin is None:
        built = table_tries(version._root)
        twin = version._order
        if twin is None:
            _set_twin(version, built)
            twin = built
    return twin  # type: ignore[no-any-return]


TABLE_MISSING: Any = object()
"""What ``table_find`` and ``table_find_hashed`` give for a missing key."""


def table_find(version: Any, key: Any) -> Any:
    """The value of ``key`` in a table version, or ``TABLE_MISSING``: a key
    whose hash runs no Python code in the dict (which hashes it), any other
    hashed once here and found in the twin."""
    if hashing_key_is_pure(key):
        return version._root.get(key, TABLE_MISSING)
    return table_find_hashed(version, hashing_key_hash(key), key)


def table_find_hashed(version: Any, h: int, key: Any) -> Any:
    """``table_find`` of a key already hashed (``h``): a key whose hash runs
    no Python code in the dict (it hashes it again: no Python code), any
    other in the twin."""
    if hashing_key_is_pure(key):
        return version._root.get(key, TABLE_MISSING)
    entry = champ_find(table_twin(version)[0], h, key)
    return TABLE_MISSING if entry is None else entry[3]


def table_check(version: Any) -> None:
    """Assert a table version's invariants (no user code runs)."""
    table = version._root
    assert type(table) is dict, "a table version without its dict"
    assert len(table) == version._len, "a table of %d keys, len %d" % (len(table), version._len)
    assert version._next_seq == 0, "a table version with a next seq"
    assert table_keys_are_pure(table), "a table with a key whose hash is Python code"
    twin = version._order
    if twin is not None:
        assert list(order_items(twin[1])) == list(table.items()), "a twin with other items"


def table_dump(version: Any) -> str:
    """``frozendict len=N table``, then one line per item, in order."""
    head = "frozendict len=%d table%s" % (
        version._len,
        " (and tries)" if version._order is not None else "",
    )
    return "\n".join([head] + ["  (%r, %r)" % item for item in version._root.items()])
