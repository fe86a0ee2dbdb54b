"""The reads both public types share: ``==``, ``repr``, lookups by position.

``mapping_equal`` (``==`` of a frozendict or an Evolver against a dict or any
frozendict, with ``dict``'s rules), ``mapping_repr``, ``mapping_len``, the
positional reads (``position_at``, ``position_of``, ``position_slice``), and
``mapping_pair_path``, the one place that chooses how an operation on two
versions of this core reads them.
Also what recognises the other operand: this core's two classes, registered
here by their modules when imported (``register_types``), so no lower module
imports upward; ``mapping_is_anydict`` and ``mapping_foreign_base`` for another core's or
the builtin frozendict.

Layers: above ``transient`` (``position_slice`` builds its result through a
builder), below ``merge``, ``views``, ``paths`` and the public types.

Mirrors ``frozenmap/_ccore/reads.c``.
"""

from __future__ import annotations

import itertools
import operator
import threading
from typing import Any, List, Tuple

from .. import _registry
from .._typeinfo import type_lookup
from .champ import Entry, champ_collect, champ_find
from .flat import FLAT_MAX, flat_entries, flat_find
from .hashing import KEY_MASK, hashing_key_hash
from .ordertrie import order_at, order_items, order_rank, order_size
from .table import TABLE_MISSING, table_find
from .transient import Transient, _seq_of, load_items, trie_parts

__all__ = [
    "register_types",
    "frozendict_type",
    "mapping_is_anydict",
    "mapping_foreign_base",
    "mapping_len",
    "mapping_pair_path",
    "PAIR_FLAT",
    "PAIR_WALK",
    "PAIR_ENTRIES",
    "PAIR_TABLES",
    "FORM_FLAT",
    "FORM_TRIES",
    "FORM_TABLE",
    "mapping_form_of",
    "SHARING_WALK_RATIO",
    "mapping_entries_in_order",
    "mapping_equal",
    "mapping_repr",
    "position_at",
    "position_of",
    "position_slice",
]

_MISSING: Any = object()
_repr_running = threading.local()


# --- the classes of the layers above ---------------------------------------------

# This core's frozendict and Evolver classes, registered once by their modules
# when imported (both are, by the package, before any Transient is used).
_frozendict: Any = None
_evolver: Any = None


def register_types(*, frozendict: Any = None, evolver: Any = None) -> None:
    """Record this core's ``frozendict`` or ``Evolver`` class (at their import)."""
    global _frozendict, _evolver
    if frozendict is not None:
        _frozendict = frozendict
    if evolver is not None:
        _evolver = evolver


def frozendict_type() -> Any:
    """This core's frozendict class, as registered."""
    return _frozendict


# --- what the other operand is ---------------------------------------------------


def _foreign_frozendict_types() -> Tuple[type, ...]:
    """frozendict types other than this core's: the other core's, the builtin."""
    return _registry.frozendict_types


def mapping_is_anydict(obj: Any) -> bool:
    """Whether ``obj`` counts as a dict or frozendict for ``==`` and ``|``.

    By its real type: ``isinstance`` would believe a ``__class__`` property.
    """
    cls = type(obj)
    return issubclass(cls, (dict, _frozendict)) or mapping_foreign_base(cls) is not None


def mapping_foreign_base(cls: type) -> Any:
    """The frozendict type of another core (or the builtin) that ``cls`` derives
    from, or None."""
    for base in _foreign_frozendict_types():
        if base is not _frozendict and issubclass(cls, base):
            return base
    return None


def mapping_len(mapping: Any) -> int:
    """The stored length of a frozendict or Evolver (``_len``).

    What ``repr``, ``==`` and the views use: like ``dict``'s own operations,
    they never call a subclass's ``__len__``.
    """
    return mapping._len  # type: ignore[no-any-return]


# --- two versions: the one choice of path ---------------------------------------

PAIR_FLAT = 0
"""Both sides flat: their entries paired by position first."""
PAIR_WALK = 1
"""A parallel walk of the two key tries that skips the subtrees they share."""
PAIR_ENTRIES = 2
"""The operand's entries one by one, in its order, with their stored hashes."""
PAIR_TABLES = 3
"""Both table versions: ``==`` compares the two dicts; else as ``PAIR_WALK``."""

FORM_FLAT = 0
"""A version (or a builder) of at most ``FLAT_MAX`` keys in two tuples."""
FORM_TRIES = 1
"""A version (or a builder) in the two tries."""
FORM_TABLE = 2
"""A version built once and read: a private dict, and its tries once built."""

SHARING_WALK_RATIO = 4
"""The walk is taken when the operand holds at least 1/4 as many entries as
the other side.  It costs O(d log n) for tries d edits apart and never more
than O(n + k) for n entries beside an operand of k, so with n <= 4k it is
never worse than reading the operand's k entries one by one (O(k log n)),
which a smaller operand still gets: a walk would list a big map's subtrees
beside a small operand's entries."""


def mapping_form_of(version: Any) -> int:
    """A version's form: ``FORM_FLAT``, ``FORM_TABLE`` or ``FORM_TRIES``."""
    if version._len <= FLAT_MAX:
        return FORM_FLAT
    return FORM_TABLE if type(version._root) is dict else FORM_TRIES


def mapping_pair_path(a_len: int, a_form: int, b: Any) -> int:
    """How an operation reads two versions of this core: ``a`` (a version,
    or a builder: ``a_len`` entries in the form ``a_form``) and ``b``, a
    frozendict of this core (any subclass) that the operation reads from its
    own storage.  Every operation on two such maps asks here, and only here:
    ``==``, ``diff``, ``-``, ``&``, ``|``, ``Evolver.update`` (and the
    constructor and ``|=``, through the one merge) and ``merge_with``.

    - ``PAIR_FLAT``: both flat.  Entries are paired by position first (the
      same key object under the same stored hash: versions derived from one
      another keep their keys in order), the rest looked up (``flat_diff``,
      ``flat_equal``); a merge applies ``b``'s entries in order.
    - ``PAIR_TABLES``: both table versions (two maps built apart: nothing is
      shared).  ``==`` compares the two dicts as dicts compare; any other
      operation walks their tries (``PAIR_WALK``).
    - ``PAIR_ENTRIES``: ``b`` flat beside tries or a table, or in tries (or a
      table) but holding less than 1/``SHARING_WALK_RATIO`` of ``a``'s
      entries: ``b``'s entries are read one by one in ``b``'s insertion
      order and looked up in ``a`` with their stored hashes.  (``diff`` lists
      all of both sides anyway: it walks here too, over a trie built for the
      flat side.)
    - ``PAIR_WALK``: otherwise.  The two key tries are walked together
      (``champ_diff``, ``champ_equal``), skipping the subtrees they share; a
      flat ``a`` takes tries for the walk (a builder is promoted, a version
      gets a key trie built for the call, ``flat_key_trie``).

    A table version is read through its tries on every path but the first:
    its twin, built once and kept (``table_twin``), so versions derived from
    it walk beside it.  Every path keeps the guarantees of the tries: a
    stored key is never hashed again (its stored hash is compared, then the
    key object itself, then ``==``; a table's keys hash without Python code);
    on each entry identity is tried before ``__eq__``, so the keys two related
    versions share are matched with no user code; values are compared
    identity first (merges: by identity alone); and both cores choose the
    same path for the same operands and walk it the same way, so they make
    the same user calls (``__eq__``, ``__hash__`` of values for the hash
    accumulator) in the same order.  Cost: O(1).
    """
    b_form = mapping_form_of(b)
    if a_form == FORM_TABLE and b_form == FORM_TABLE:
        return PAIR_TABLES
    if b_form == FORM_FLAT:
        return PAIR_FLAT if a_form == FORM_FLAT else PAIR_ENTRIES
    if b._len * SHARING_WALK_RATIO < a_len:
        return PAIR_ENTRIES
    return PAIR_WALK


def mapping_entries_in_order(version: Any) -> List[Entry]:
    """A version's entries ``(hash, seq, key, value)`` in insertion order
    (the order ``PAIR_ENTRIES`` reads them in): a flat version's with
    positions for seqs, a table's in its dict's order (its keys' hashes run
    no Python code), a trie version's key-trie entries sorted by seq.
    Runs no user code.  Cost: O(n log n)."""
    if version._len <= FLAT_MAX:
        return flat_entries(version._root, version._order)
    root = version._root
    entries: List[Entry] = []
    if type(root) is dict:
        for seq, item in enumerate(root.items()):
            entries.append((hash(item[0]) & KEY_MASK, seq, item[0], item[1]))
        return entries
    champ_collect(root, entries)
    entries.sort(key=_seq_of)
    return entries


# --- == and repr ------------------------------------------------------------------


def mapping_equal(a: Any, b: Any) -> Any:
    """``a == b`` for a frozendict or Evolver ``a``, following ``dict``'s rules.

    Order is ignored; the other operand must be a dict, a frozendict (any) or an
    Evolver, otherwise the answer is ``NotImplemented``.  As in ``dict``'s own
    ``==``, both sides are read from their own storage: a subclass's ``__len__``,
    ``get`` or ``__getitem__`` is never called.  An Evolver on either side that
    changes size meanwhile (from a key's or value's ``__eq__``) raises
    ``RuntimeError``.
    """
    cls = type(b)
    b_get: Any
    if issubclass(cls, (_frozendict, _evolver)):
        b_len = mapping_len(b)
        b_get = mapping_get
    elif issubclass(cls, dict):
        b_len = dict.__len__(b)
        b_get = dict.get
    else:
        foreign = mapping_foreign_base(cls)
        if foreign is None:
            return NotImplemented
        b_len = foreign.__len__(b)
        b_get = foreign.get
    if mapping_len(a) != b_len:
        return False
    a_resized = mapping_resized(a)
    b_resized = mapping_resized(b)
    for key, value in a._items():
        other = b_get(b, key, _MISSING)
        equal = other is not _MISSING and (value is other or bool(value == other))
        if mapping_resized(a) != a_resized or mapping_resized(b) != b_resized:
            raise RuntimeError("Evolver changed size during iteration")
        if not equal:
            return False
    return True


def mapping_get(mapping: Any, key: Any, default: Any) -> Any:
    """``get`` of a frozendict or Evolver of this core, never a subclass's
    (a table version's: its dict, or its twin for a key whose hash is Python
    code)."""
    if issubclass(type(mapping), _frozendict) and type(mapping._root) is dict:
        value = table_find(mapping, key)
        return default if value is TABLE_MISSING else value
    entry = mapping._lookup(key)
    return default if entry is None else entry[3]


def mapping_resized(mapping: Any) -> int:
    """How often an Evolver changed size (-1 for anything else)."""
    return mapping._resized if issubclass(type(mapping), _evolver) else -1


def mapping_repr(mapping: Any, name: str) -> str:
    """``Name({k: v, ...})``, ``Name()`` when empty, ``Name({...})`` on recursion."""
    if not mapping_len(mapping):
        return "%s()" % name
    running = getattr(_repr_running, "ids", None)
    if running is None:
        running = _repr_running.ids = set()
    key = id(mapping)  # made once: finally must not allocate, or the key would stay
    if key in running:
        return "%s({...})" % name
    running.add(key)
    try:
        body = ", ".join("%r: %r" % item for item in mapping._items())
    finally:
        running.discard(key)
    return "%s({%s})" % (name, body)


# --- positional reads: frozendict and Evolver ------------------------------------


def position_at(order: Any, index: Any, name: str) -> Tuple[int, Tuple[Any, Any]]:
    """The seq and item at position ``index`` of the trie ``order``: an int
    (or ``__index__``), negative from the end as for a list.  ``TypeError``
    and ``IndexError`` as ``list.pop`` raises them, ``name`` in the message."""
    i = operator.index(index)
    flat = type(order) is tuple  # a flat version's items
    size = len(order) if flat else order_size(order)
    if i < 0:
        i += size
    if not 0 <= i < size:
        raise IndexError("%s index out of range" % name)
    if flat:
        return i, order[i]
    return order_at(order, i)


def position_of(version: Any, key: Any) -> int:
    """The position of ``key`` in a frozendict (``KeyError`` when absent)."""
    if version._len <= FLAT_MAX:
        i = flat_find(version._root, version._order, hashing_key_hash(key), key)
        if i < 0:
            raise KeyError(key)
        return i
    root, order = trie_parts(version)[:2]  # (a table version's twin)
    entry = champ_find(root, hashing_key_hash(key), key)
    if entry is None:
        raise KeyError(key)
    return order_rank(order, entry[1])


def _slice_bound(bound: Any) -> Any:
    """A slice bound as ``PySlice_Unpack`` reads it: None, or an int from
    ``__index__`` (called once), else the interpreter's own TypeError."""
    if bound is None or type(bound) is int:
        return bound
    if not type_lookup(type(bound), "__index__")[0]:
        ().__getitem__(slice(bound))  # (no __index__: raises with its words)
    return operator.index(bound)


def position_slice(version: Any, start: Any, stop: Any) -> Any:
    """An exact frozendict of the items of ``version`` (a frozendict) at
    positions ``start:stop`` (a list's slice rules).

    The k kept items are read from the order trie from position ``start`` on,
    and the new map is built from them as from a dict (``load_items``): each
    kept key is hashed once -- the order trie does not store hashes, and
    reading them from the key trie would mean a walk of all n entries -- and
    no ``__eq__`` runs, the keys being distinct already.  O(log n + k).
    """
    cls = frozendict_type()
    length = version._len
    # Each bound read once, start first, as the C core's PySlice_Unpack and
    # list's slicing read them.
    lo, hi, _ = slice(_slice_bound(start), _slice_bound(stop)).indices(length)
    if lo == 0 and hi == length:
        return version if type(version) is cls else version._exact()
    t = Transient()
    if lo < hi:
        if length <= FLAT_MAX:  # the flat form's pairs, in order
            kept = list(version._order[lo:hi])
        else:
            items = order_items(trie_parts(version)[1], lo)  # (a table's twin)
            try:
                kept = list(itertools.islice(items, hi - lo))
            finally:
                items.close()  # (now: a MemoryError closing it is the caller's, not a finalizer's)
        # every kept key hashed once, as in a map built from these items (the
        # C core does the same for both forms)
        load_items(t, kept)
    return t._publish(cls)
