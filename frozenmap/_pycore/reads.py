"""The reads both public types share: ``==``, ``repr``, lookups by position.

``mapping_equal`` (``==`` of a frozendict or an Evolver against a dict or any
frozendict, with ``dict``'s rules), ``mapping_repr``, ``mapping_len``, and
the positional reads (``position_at``, ``position_of``, ``position_slice``).
Also what recognises the other operand: this core's two classes, registered
here by their modules when imported (``register_types``), so no lower module
imports upward; ``is_anydict`` and ``foreign_base`` for another core's or
the builtin frozendict.

Layers: above ``transient`` (``position_slice`` builds its result through a
builder), below ``merge``, ``views``, ``paths`` and the public types.

Mirrors ``frozenmap/_ccore/reads.c``.
"""

from __future__ import annotations

import itertools
import operator
import threading
from typing import Any, Tuple

from .. import _common
from .flat import FLAT_MAX, flat_find
from .hashing import key_hash
from .keytrie import champ_find
from .ordertrie import order_at, order_items, order_rank, order_size
from .transient import Transient, load_items

__all__ = [
    "register_types",
    "frozendict_type",
    "is_anydict",
    "foreign_base",
    "mapping_len",
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
    return _common.frozendict_types


def is_anydict(obj: Any) -> bool:
    """Whether ``obj`` counts as a dict or frozendict for ``==`` and ``|``.

    By its real type: ``isinstance`` would believe a ``__class__`` property.
    """
    cls = type(obj)
    return issubclass(cls, (dict, _frozendict)) or foreign_base(cls) is not None


def foreign_base(cls: type) -> Any:
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
        b_get = _stored_get
    elif issubclass(cls, dict):
        b_len = dict.__len__(b)
        b_get = dict.get
    else:
        foreign = foreign_base(cls)
        if foreign is None:
            return NotImplemented
        b_len = foreign.__len__(b)
        b_get = foreign.get
    if mapping_len(a) != b_len:
        return False
    a_resized = _resized_of(a)
    b_resized = _resized_of(b)
    for key, value in a._items():
        other = b_get(b, key, _MISSING)
        equal = other is not _MISSING and (value is other or bool(value == other))
        if _resized_of(a) != a_resized or _resized_of(b) != b_resized:
            raise RuntimeError("Evolver changed size during iteration")
        if not equal:
            return False
    return True


def _stored_get(mapping: Any, key: Any, default: Any) -> Any:
    """``get`` of a frozendict or Evolver of this core, never a subclass's."""
    entry = mapping._lookup(key)
    return default if entry is None else entry[3]


def _resized_of(mapping: Any) -> int:
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
        i = flat_find(version._root, version._order, key_hash(key), key)
        if i < 0:
            raise KeyError(key)
        return i
    entry = champ_find(version._root, key_hash(key), key)
    if entry is None:
        raise KeyError(key)
    return order_rank(version._order, entry[1])


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
    bounds = slice(start, stop)
    # (a tuple reads a slice as the C core does, PySlice_Unpack: its TypeError
    # for a bad bound is worded as the C core's on every Python -- 3.15 words
    # slice.indices' own differently)
    ().__getitem__(bounds)
    lo, hi, _ = bounds.indices(length)
    if lo == 0 and hi == length:
        return version if type(version) is cls else version._exact()
    t = Transient()
    if lo < hi:
        if length <= FLAT_MAX:  # the flat form's pairs, in order
            kept = list(version._order[lo:hi])
        else:
            items = order_items(version._order, lo)
            try:
                kept = list(itertools.islice(items, hi - lo))
            finally:
                items.close()  # (now: a MemoryError closing it is the caller's, not a finalizer's)
        # every kept key hashed once, as in a map built from these items (the
        # C core does the same for both forms)
        load_items(t, kept)
    return t._publish(cls)
