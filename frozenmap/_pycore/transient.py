"""The transient layer: the internal builder, the one merge, the shared reads.

A ``Transient`` holds a private, editable version: the two trie roots, the
length, ``next_seq``, the hash accumulator and an *owner token*.  Nodes created
by its edits carry the token and are edited in place by later edits; nodes
without it (shared with published versions) are copied on first touch.  So k
edits in one transient copy each trie path at most once, instead of k times.

Publishing (``_publish``) wraps the roots in a new frozendict in O(1) and
takes a fresh token, so nothing reachable from a published version is ever
edited again.  The constructor, ``|``, ``-``, ``&``, ``fromkeys`` and the
single-key derivations all go through a Transient.

Every edit locates first (``champ_find``: the only step that runs user code,
the keys' ``__eq__`` and ``__hash__``), computes the new hash accumulator (a
value's ``__hash__``), and only then changes the tries, with no user code
left to fail half-way.

Also here, as the layers above share them: ``merge_into``, the one reading of
``dict(arg, **kwargs)``'s argument (the constructor, ``|``, ``Evolver.update``),
with ``_bulk_load`` for a plain dict into an empty builder; ``mapping_equal``
(``==`` against a dict or any frozendict) and ``items_repr``.

Layers: ``keytrie``, ``ordertrie``, ``hashing``, ``views`` (and the shared ``frozenmap._typeinfo``) and
``paths`` sit below this module; ``frozendict`` (the public type) and
``evolver`` (the public ``Evolver``, a Transient with a guard) sit above it.
This module imports neither of them: each registers its class here when it is
imported (``register_types``), for the few places that must recognise a
frozendict or an Evolver of this core.

Mirrors ``frozenmap/_ccore/transient.c``.
"""

from __future__ import annotations

import gc
import itertools
import operator
import sys
import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple

from .. import _common
from .._typeinfo import type_fullname, type_lookup, type_name
from .flat import FLAT_MAX, flat_entries, flat_find, flat_promote
from .hashing import acc_replace, key_hash
from .keytrie import (
    EMPTY_ROOT,
    BitmapNode,
    Entry,
    champ_build,
    champ_diff,
    champ_entries,
    champ_find,
    champ_put,
    champ_remove,
)
from .ordertrie import (
    OrderNode,
    order_at,
    order_build,
    order_insert,
    order_items,
    order_items_reversed,
    order_rank,
    order_remove,
    order_replace,
    order_size,
)
from .views import mapping_len

__all__ = [
    "Transient",
    "merge_into",
    "mapping_equal",
    "items_repr",
    "register_types",
    "position_at",
    "position_of",
    "position_slice",
    "trie_parts",
    "entries_of",
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


def trie_parts(version: Any) -> Tuple[BitmapNode, Optional[OrderNode], int, int, Optional[int]]:
    """A frozendict's ``(root, order, length, next_seq, acc)`` as tries, what
    a Transient starts from: a flat version's entries are promoted (seqs
    0..k-1, nodes no transient owns)."""
    length = version._len
    if length <= FLAT_MAX:
        root, order = flat_promote(version._root, version._order)
        return root, order, length, length, version._acc
    return version._root, version._order, length, version._next_seq, version._acc


def entries_of(version: Any) -> List[Entry]:
    """A frozendict's entries ``(hash, seq, key, value)``: a flat version's in
    order (positions for seqs), a trie version's in trie order."""
    if version._len <= FLAT_MAX:
        return flat_entries(version._root, version._order)
    return list(champ_entries(version._root))


# --- the builder -----------------------------------------------------------------


class _GCPaused:
    """Pauses the garbage collector for an Evolver's write phase.

    Allocating a node can start a GC run, whose finalizers could read or
    ``freeze()`` an Evolver whose tries are half-updated, and publish a version
    that then changes.  The write phase runs no user code of its own, so it
    pauses the collector (as the C core does).  Private transients (builders,
    one-shot derivations) are out of any finalizer's reach and skip it.
    """

    __slots__ = ("paused",)

    def __init__(self, shared: bool) -> None:
        self.paused = shared and gc.isenabled()

    def __enter__(self) -> None:
        if self.paused:
            gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.paused:
            gc.enable()


class Transient:
    """A private editable version (see the module docstring).  Internal."""

    __slots__ = ("root", "order", "length", "next_seq", "acc", "owner")

    #: True for an Evolver: user code (a finalizer) can reach it mid-edit.
    _shared = False

    def __init__(
        self,
        root: BitmapNode = EMPTY_ROOT,
        order: Optional[OrderNode] = None,
        length: int = 0,
        next_seq: int = 0,
        acc: Optional[int] = None,
    ) -> None:
        self.root = root
        self.order = order
        self.length = length
        self.next_seq = next_seq
        self.acc = acc
        self.owner = object()

    def _lookup(self, key: Any) -> Optional[Entry]:
        return champ_find(self.root, key_hash(key), key)

    def _put_new(self, h: int, key: Any, value: Any) -> None:
        """Append a key known to be absent (no lookup, no user code)."""
        with _GCPaused(self._shared):
            # Read the owner token only now: a GC run before the pause could
            # have frozen the evolver (a finalizer), which takes a new token.
            seq = self.next_seq
            owner = self.owner
            entry = (h, seq, key, value)
            root = champ_put(self.root, 0, entry, None, owner)
            try:
                order = order_insert(self.order, seq, (key, value), owner)
            except BaseException:
                if root is self.root:  # edited in place: take the entry out again
                    champ_remove(root, 0, entry, owner)
                raise
            self.root, self.order = root, order
            self.next_seq = seq + 1
            self.length += 1

    def _assoc(self, key: Any, value: Any) -> bool:
        """Set ``key`` to ``value``; False if it already held that very object."""
        return self._assoc_hashed(key_hash(key), key, value)

    def _assoc_hashed(self, h: int, key: Any, value: Any) -> bool:
        """``_assoc`` for a key whose hash is known (a stored key)."""
        old = champ_find(self.root, h, key)
        if old is None:
            acc = acc_replace(self.acc, h, None, value, False, True)
            with _GCPaused(self._shared):  # (the inner pause in _put_new is then a no-op)
                self._put_new(h, key, value)
                self.acc = acc
            return True
        if old[3] is value:
            return False
        acc = acc_replace(self.acc, h, old[3], value, True, True)
        seq = old[1]
        stored_key = old[2]  # the first key object stays, as in dict
        with _GCPaused(self._shared):
            owner = self.owner  # (after the pause: see _put_new)
            entry = (h, seq, stored_key, value)
            root = champ_put(self.root, 0, entry, old, owner)
            try:
                order = order_replace(self.order, seq, (stored_key, value), owner)  # type: ignore[arg-type]
            except BaseException:
                if root is self.root:  # edited in place: put the old entry back
                    champ_put(root, 0, old, entry, owner)
                raise
            self.root, self.order = root, order
            self.acc = acc
        return True

    def _dissoc(self, key: Any) -> Optional[Entry]:
        """Remove ``key``; return its entry, or None if it was absent."""
        h = key_hash(key)
        old = champ_find(self.root, h, key)
        if old is not None:
            self._remove_entry(old)
        return old

    def _remove_entry(self, old: Entry) -> None:
        acc = acc_replace(self.acc, old[0], old[3], None, True, False)
        with _GCPaused(self._shared):
            owner = self.owner  # (after the pause: see _put_new)
            root = champ_remove(self.root, 0, old, owner)
            try:
                order = order_remove(self.order, old[1], owner)  # type: ignore[arg-type]
            except BaseException:
                if root is self.root:  # edited in place: put the entry back
                    champ_put(root, 0, old, None, owner)
                raise
            self.root, self.order = root, order
            self.length -= 1
            self.acc = acc

    def _items(self) -> Iterator[Tuple[Any, Any]]:
        return order_items(self.order)

    def _items_reversed(self) -> Iterator[Tuple[Any, Any]]:
        return order_items_reversed(self.order)

    def _seal(self) -> None:
        """Take a fresh token: nodes reachable now are never edited in place."""
        self.owner = object()

    def _publish(self, cls: Any) -> Any:
        """The current contents as a new ``cls`` version, in O(1)."""
        self._seal()
        return cls._from_parts(self.root, self.order, self.length, self.next_seq, self.acc)


# --- merging: dict(arg, **kwargs) into a builder ---------------------------------


def _foreign_frozendict_types() -> Tuple[type, ...]:
    """frozendict types other than this core's: the other core's, the builtin."""
    return _common.frozendict_types


def _is_anydict(obj: Any) -> bool:
    """Whether ``obj`` counts as a dict or frozendict for ``==`` and ``|``.

    By its real type: ``isinstance`` would believe a ``__class__`` property.
    """
    cls = type(obj)
    return issubclass(cls, (dict, _frozendict)) or _foreign_base(cls) is not None


def _foreign_base(cls: type) -> Any:
    """The frozendict type of another core (or the builtin) that ``cls`` derives
    from, or None."""
    for base in _foreign_frozendict_types():
        if base is not _frozendict and issubclass(cls, base):
            return base
    return None


def _default_iter(cls: type, base: type) -> bool:
    """Whether ``cls`` iterates as ``base`` does (it does not override ``__iter__``)."""
    return type_lookup(cls, "__iter__")[1] is type_lookup(base, "__iter__")[1]


def _dict_sequence_error() -> Tuple[str, List[str]]:
    """The message and notes of the running interpreter's ``dict([None])``:
    its error for element #0 of a pairs iterable, an object of type
    ``NoneType`` that is not iterable.  CPython up to 3.13 names the index in
    the message, 3.14 in a note; PyPy names the element's type instead."""
    element: Any = None
    try:
        dict([element])
    except TypeError as exc:
        return str(exc), list(getattr(exc, "__notes__", ()))
    raise AssertionError("dict([None]) did not raise TypeError")  # pragma: no cover


_DICT_SEQUENCE_ERROR = _dict_sequence_error()


def _sequence_error(index: int, element: Any) -> TypeError:
    """dict's error for an element of a pairs iterable that is not iterable:
    the running interpreter's words (``_dict_sequence_error``), for this
    index and this element's type."""

    def fill(text: str) -> str:
        return text.replace("#0", "#%d" % index).replace(
            "'NoneType'", "'%s'" % type_name(type(element))
        )

    message, notes = _DICT_SEQUENCE_ERROR
    exc = TypeError(fill(message))
    if notes:
        exc.__notes__ = [fill(note) for note in notes]  # type: ignore[attr-defined]
    return exc


def _keys_not_iterable(cls: type, keys_type: type) -> str:
    """dict's message when ``keys()`` returns something not iterable."""
    if sys.implementation.name == "pypy":  # PyPy's dict iterates it as it is
        return "'%s' object is not iterable" % type_name(keys_type)
    if sys.version_info >= (3, 15):
        return "%s.keys() must return an iterable, not %s" % (
            type_fullname(cls),
            type_fullname(keys_type),
        )
    return "%s.keys() returned a non-iterable (type %s)" % (type_name(cls), type_name(keys_type))


def merge_into(t: Transient, arg: Any, kwargs: Optional[Dict[str, Any]]) -> None:
    """Add ``arg`` (as ``dict(arg)`` reads it) and then ``kwargs`` to ``t``.

    As ``dict.update`` does (``dict_merge``): a frozendict of this core, and a
    dict or another core's frozendict (subclasses included) that does not
    override ``__iter__``, are read from their own storage -- overridden
    ``keys``, ``items``, ``__getitem__`` are never called; another object with
    ``keys`` is read through ``keys()`` (all of it first, unless it is an exact
    ``list``, which dict walks as it is) and ``obj[key]``; anything else as an
    iterable of pairs, with ``dict``'s errors.  Later duplicates win; the first
    key object stays.
    """
    cls = type(arg)
    if issubclass(cls, _frozendict):
        _merge_frozendict(t, arg)
    elif issubclass(cls, dict) and _default_iter(cls, dict):
        if not t.length and cls is dict:
            _bulk_load(t, arg)
        else:
            for key, value in dict.items(arg):
                t._assoc(key, value)
    elif (foreign := _foreign_base(cls)) is not None and _default_iter(cls, foreign):
        for key, value in foreign.items(arg):
            t._assoc(key, value)
    elif (keys_method := getattr(arg, "keys", _MISSING)) is not _MISSING:
        keys = keys_method()
        # As dict_merge (PyMapping_Keys): an exact list is walked as it is, so
        # keys that ``arg[key]`` appends are read too; anything else is read
        # to the end first, then the lookups.
        if type(keys) is not list:
            try:
                it = iter(keys)
            except TypeError:
                raise TypeError(_keys_not_iterable(cls, type(keys))) from None
            keys = list(it)
        for key in keys:
            t._assoc(key, arg[key])
    else:
        for index, element in enumerate(arg):
            if type(element) is not tuple:
                try:
                    element = tuple(iter(element))
                except TypeError:
                    raise _sequence_error(index, element) from None
            if len(element) != 2:
                raise ValueError(
                    "dictionary update sequence element #%d has length %d; 2 is required"
                    % (index, len(element))
                )
            t._assoc(element[0], element[1])
    if kwargs:
        for key, value in kwargs.items():
            t._assoc(key, value)


SHARING_WALK_RATIO = 4
"""A merge with a frozendict of this core walks the two key tries together
(``champ_diff``, skipping the subtrees they share) when the operand holds at
least 1/4 as many entries as the map it is merged into.  The walk costs
O(d log n) for tries d edits apart and never more than O(n + k) for a map of
n entries and an operand of k, so with n <= 4k it is never worse than
reading the operand's k entries one by one (O(k log n)), which a smaller
operand still gets: a walk would list a big map's subtrees beside a small
operand's entries."""


def _merge_frozendict(t: Transient, source: Any) -> None:
    """Add a frozendict's items in its order, with their stored hashes: stored
    keys are never hashed again.

    Only the entries that change something are applied: those whose key
    ``t`` lacks and those bringing another value object (``champ_diff`` by
    identity, which skips the subtrees both tries share: the same node
    object holds the very same key and value objects, which applying would
    leave as they are).  They are applied in ``source``'s order, one by one
    as before, so the result (items, order, which key object stays, the
    hash accumulator) is what applying every entry gives, in O(d log n)
    for versions d edits apart.  A flat source's entries are all applied.
    """
    if source._len <= FLAT_MAX:
        # A flat source: its few entries, in order (those that change nothing
        # leave t as it was).
        entries = flat_entries(source._root, source._order)
    elif source._len * SHARING_WALK_RATIO >= t.length:
        added: List[Entry] = []
        changed: List[Tuple[Entry, Entry]] = []
        # t.root is not edited meanwhile: a private builder, or an Evolver's
        # update(), which sealed it and refuses edits from inside.
        champ_diff(t.root, source._root, (added, None, changed), True)
        entries = added
        for pair in changed:
            entries.append(pair[1])
    else:
        entries = list(champ_entries(source._root))
    if source._len > FLAT_MAX:
        entries.sort(key=_seq_of)
    for entry in entries:
        t._assoc_hashed(entry[0], entry[2], entry[3])


def _seq_of(entry: Entry) -> int:
    return entry[1]


def _bulk_load(t: Transient, source: Dict[Any, Any]) -> None:
    """Fill an empty transient from a dict, whose keys are known to be distinct.

    The order trie is built bottom-up in O(n) and the key trie top-down
    (``champ_build``), with no lookups and no ``__eq__`` calls.
    """
    _load_items(t, list(source.items()))


def _load_items(t: Transient, items: List[Tuple[Any, Any]]) -> None:
    """Fill an empty transient from pairs whose keys are known to be distinct
    (a dict's, or a version's run of positions): each key is hashed once, then
    both tries are built with no lookups and no ``__eq__`` calls."""
    hashes = [key_hash(key) for key, _ in items]  # may raise: nothing built yet
    if items:
        entries = [(h, seq, key, value) for seq, ((key, value), h) in enumerate(zip(items, hashes))]
        del hashes  # (the build's peak: the entries hold the hashes now)
        t.root = champ_build(entries, t.owner)
    t.order = order_build(items, t.owner)
    t.length = t.next_seq = len(items)
    t.acc = None  # unknown until someone hashes the result


# --- reads shared by frozendict and Evolver --------------------------------------


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
        foreign = _foreign_base(cls)
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


def items_repr(mapping: Any, name: str) -> str:
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
    and the new map is built from them as from a dict (``_load_items``): each
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
        _load_items(t, kept)
    return t._publish(cls)
