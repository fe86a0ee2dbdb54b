"""The builder: a private, editable version from which versions are published.

A ``Transient`` holds a private, editable version: the two trie roots, the
length, ``next_seq``, the hash accumulator and an *owner token*.  Nodes created
by its edits carry the token and are edited in place by later edits; nodes
without it (shared with published versions) are copied on first touch.  So k
edits in one transient copy each trie path at most once, instead of k times.

Publishing (``_publish``) wraps the roots in a new frozendict in O(1) and
takes a fresh token, so nothing reachable from a published version is ever
edited again.  The constructor, ``|``, ``-``, ``&``, ``fromkeys`` and the
bulk derivations all go through a Transient.

*Flat mode.*  A transient started from a flat version (``trie_parts``), and
an Evolver emptied by ``clear()``, hold the flat form itself: ``root`` the
tuple of stored hashes, ``order`` the tuple of items (``type(root) is
tuple`` tells the modes apart).  Each edit makes new tuples (O(FLAT_MAX)
pointer copies, done in C), so publishing shares them in O(1), a value
change shares the hashes, and an iteration snapshot is the tuple it
started on.  The key that makes FLAT_MAX + 1 promotes the transient to
tries it owns (``flat_promote``); a transient in tries mode stays there
when it shrinks (``_publish`` demotes the version it makes, and an Evolver
takes that flat form back: ``Evolver.freeze``).

Every edit locates first (``champ_find``: the only step that runs user code,
the keys' ``__eq__`` and ``__hash__``), computes the new hash accumulator (a
value's ``__hash__``), and only then changes the tries, with no user code
left to fail half-way.

Also here: ``load_items``, which fills an empty builder from pairs whose keys
are known to be distinct (a dict's, a slice's) with no lookups.  The one merge
that reads ``dict(arg, **kwargs)``'s argument is in ``merge``; the reads both
public types share (``==``, ``repr``, positions) in ``reads``.

Layers: ``keytrie``, ``ordertrie``, ``hashing`` and ``flat`` sit below this
module; ``reads``, ``merge``, ``views``, ``paths`` and the public types above
it.

Mirrors ``frozenmap/_ccore/transient.c``.
"""

from __future__ import annotations

import gc
from typing import Any, Iterator, List, Optional, Tuple

from .champ import (
    EMPTY_ROOT,
    Entry,
    champ_build_items,
    champ_entries,
    champ_find,
    champ_put,
    champ_remove,
)
from .flat import (
    FLAT_MAX,
    Items,
    flat_copy_without,
    flat_entries,
    flat_entry,
    flat_find,
    flat_promote,
    flat_with_value,
)
from .hashing import KEY_MASK, hashing_acc_replace, hashing_key_hash, hashing_key_is_pure
from .ordertrie import (
    order_build,
    order_insert,
    order_items,
    order_items_reversed,
    order_remove,
    order_replace,
)
from .table import table_twin

__all__ = [
    "Transient",
    "transient_init_table",
    "trie_parts",
    "entries_of",
    "load_items",
]


# --- what a builder starts from ---------------------------------------------------


def trie_parts(version: Any) -> Tuple[Any, Any, int, int, Optional[int]]:
    """A frozendict's ``(root, order, length, next_seq, acc)``, what a
    Transient starts from: a flat version's two tuples (the transient starts
    in flat mode), else its tries (a table version's twin, built once)."""
    root = version._root
    if type(root) is dict:
        root, order = table_twin(version)
        n = version._len
        return root, order, n, n, version._acc
    return root, version._order, version._len, version._next_seq, version._acc


def entries_of(version: Any) -> List[Entry]:
    """A frozendict's entries ``(hash, seq, key, value)``: a flat version's in
    order (positions for seqs), a trie version's in trie order."""
    if version._len <= FLAT_MAX:
        return flat_entries(version._root, version._order)
    return list(champ_entries(trie_parts(version)[0]))


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

    # A BitmapNode and an Optional[OrderNode]; in flat mode the two tuples
    # (flat.Hashes, flat.Items).
    root: Any
    order: Any

    def __init__(
        self,
        root: Any = EMPTY_ROOT,
        order: Any = None,
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
        return self._find(hashing_key_hash(key), key)

    def _find(self, h: int, key: Any) -> Optional[Entry]:
        """The entry of ``key`` (stored hash ``h``), or None: in flat mode
        shaped as ``flat_entry`` makes it (its position for the seq).  The
        keys' ``__eq__`` runs here."""
        if type(self.root) is dict:
            self._table_leave()
        root = self.root
        if type(root) is tuple:
            items = self.order  # (read with root: the pair the scan walks)
            i = flat_find(root, items, h, key)
            return None if i < 0 else flat_entry(root, items, i)
        return champ_find(root, h, key)

    def _set_flat(self, hashes: Any, items: Any, length: int, acc: Optional[int]) -> None:
        """Install a flat state, every field at once: with the collector
        paused for an Evolver (see ``_GCPaused``: a finalizer must never see
        half of it).  The tuples replaced stay alive until all is set."""
        released = (self.root, self.order)  # noqa: F841
        paused = self._shared and gc.isenabled()  # (_GCPaused, inlined: a hot path)
        if paused:
            gc.disable()
        try:
            self.root = hashes
            self.order = items
            self.length = self.next_seq = length
            self.acc = acc
        finally:
            if paused:
                gc.enable()

    def _put_new(self, h: int, key: Any, value: Any) -> None:
        """Append a key known to be absent (no lookup, no user code)."""
        if type(self.root) is dict:
            if hashing_key_is_pure(key):
                self.root[key] = value
                self.length = len(self.root)
                return
            self._table_leave()
        if type(self.root) is tuple:
            self._flat_put_new(h, key, value, self.acc)
            return
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
        if type(self.root) is dict:
            if hashing_key_is_pure(key):
                return self._assoc_hashed(0, key, value)  # (the dict hashes it)
            self._table_leave()  # before the key is hashed
        return self._assoc_hashed(hashing_key_hash(key), key, value)

    def _flat_put_new(self, h: int, key: Any, value: Any, acc: Optional[int]) -> None:
        """``_put_new`` in flat mode, with the new accumulator: the entry
        appended to both tuples, or, as the key FLAT_MAX + 1, both tries
        built (owned by this transient) and the transient in tries mode."""
        hashes = self.root + (h,)
        items = self.order + ((key, value),)
        length = self.length + 1
        if length <= FLAT_MAX:
            self._set_flat(hashes, items, length, acc)
            return
        released = (self.root, self.order)  # noqa: F841
        with _GCPaused(self._shared):
            root, order = flat_promote(hashes, items, self.owner)
            self.root, self.order = root, order
            self.length = self.next_seq = length
            self.acc = acc

    def _assoc_hashed(self, h: int, key: Any, value: Any) -> bool:
        """``_assoc`` for a key whose hash is known (a stored key)."""
        if type(self.root) is dict:
            if hashing_key_is_pure(key):
                # dict's own insertion (its hash of a pure key runs no Python
                # code): a later value wins, the first key object stays
                self.root[key] = value
                self.length = len(self.root)
                return True
            self._table_leave()
        if type(self.root) is tuple:
            return self._flat_assoc(h, key, value)
        old = champ_find(self.root, h, key)
        if old is None:
            acc = hashing_acc_replace(self.acc, h, None, value, False, True)
            with _GCPaused(self._shared):  # (the inner pause in _put_new is then a no-op)
                self._put_new(h, key, value)
                self.acc = acc
            return True
        if old[3] is value:
            return False
        acc = hashing_acc_replace(self.acc, h, old[3], value, True, True)
        seq = old[1]
        stored_key = old[2]  # the first key object stays, as in dict
        with _GCPaused(self._shared):
            owner = self.owner  # (after the pause: see _put_new)
            entry = (h, seq, stored_key, value)
            root = champ_put(self.root, 0, entry, old, owner)
            try:
                order = order_replace(self.order, seq, (stored_key, value), owner)
            except BaseException:
                if root is self.root:  # edited in place: put the old entry back
                    champ_put(root, 0, old, entry, owner)
                raise
            self.root, self.order = root, order
            self.acc = acc
        return True

    def _flat_assoc(self, h: int, key: Any, value: Any) -> bool:
        """``_assoc_hashed`` in flat mode: the same steps (locate, the
        accumulator, the new state)."""
        hashes = self.root
        items = self.order
        i = flat_find(hashes, items, h, key)
        if i < 0:
            acc = hashing_acc_replace(self.acc, h, None, value, False, True)
            self._flat_put_new(h, key, value, acc)
            return True
        old = items[i][1]
        if old is value:
            return False
        acc = hashing_acc_replace(self.acc, h, old, value, True, True)
        # (the first key object stays, as in dict; the hashes are shared)
        self._set_flat(hashes, flat_with_value(items, i, value), self.length, acc)
        return True

    def _dissoc(self, key: Any) -> Optional[Entry]:
        """Remove ``key``; return its entry, or None if it was absent."""
        return self._dissoc_hashed(hashing_key_hash(key), key)

    def _dissoc_hashed(self, h: int, key: Any) -> Optional[Entry]:
        """``_dissoc`` for a key whose hash is known (a stored key)."""
        old = self._find(h, key)
        if old is not None:
            self._remove_entry(old)
        return old

    def _table_leave(self) -> None:
        """Leave table mode: the items in tries (flat at most FLAT_MAX), built
        from the dict with its keys' hashes (they run no Python code), as the
        bulk load builds them (``table_t_leave`` in the C core)."""
        table = self.root
        items = list(table.items())
        hashes = []
        for key in table:
            hashes.append(hash(key) & KEY_MASK)
        released = table  # noqa: F841
        self.root = EMPTY_ROOT
        self.order = None
        self.length = self.next_seq = 0
        if len(items) <= FLAT_MAX:
            self._set_flat(tuple(hashes), tuple(items), len(items), None)
            return
        self.root = champ_build_items(hashes, items, self.owner)
        self.order = order_build(items, self.owner)
        self.length = self.next_seq = len(items)

    def _table_publish(self, cls: Any) -> Any:
        """``_publish`` in table mode: a table version of the dict (more than
        FLAT_MAX items; the transient is left empty) or a flat one."""
        table = self.root
        if len(table) > FLAT_MAX:
            self.root = {}
            self.length = 0
            return cls._from_parts(table, None, len(table), 0, None)
        self._table_leave()
        return self._publish(cls)

    def _adopt(self, version: Any) -> None:
        """Take a version's tries as this (empty) transient's contents, in
        O(1): its nodes carry other tokens, so later edits copy them.  Every
        field is installed at once, with the collector paused for an
        Evolver (see ``_GCPaused``)."""
        root, order, length, next_seq, acc = trie_parts(version)  # (a table's twin)
        released = (self.root, self.order)  # noqa: F841
        with _GCPaused(self._shared):
            self.root = root
            self.order = order
            self.length = length
            self.next_seq = next_seq
            self.acc = acc

    def _promote(self) -> None:
        """Leave flat mode: both tries built from the flat items, owned by
        this transient, as the key FLAT_MAX + 1 builds them (a merge whose
        operand alone outgrows FLAT_MAX walks them).  Runs no user code."""
        if type(self.root) is not tuple:
            return
        released = (self.root, self.order)  # noqa: F841
        with _GCPaused(self._shared):
            root, order = flat_promote(self.root, self.order, self.owner)
            self.root, self.order = root, order
            self.next_seq = self.length

    def _remove_entry(self, old: Entry) -> None:
        """Remove the entry ``old`` as ``_find`` gave it (in flat mode: the
        entry at its position, with nothing edited since)."""
        assert type(self.root) is not dict, "an entry found in table mode"
        acc = hashing_acc_replace(self.acc, old[0], old[3], None, True, False)
        if type(self.root) is tuple:
            hashes, items = flat_copy_without(self.root, self.order, old[1])
            self._set_flat(hashes, items, self.length - 1, acc)
            return
        with _GCPaused(self._shared):
            owner = self.owner  # (after the pause: see _put_new)
            root = champ_remove(self.root, 0, old, owner)
            try:
                order = order_remove(self.order, old[1], owner)
            except BaseException:
                if root is self.root:  # edited in place: put the entry back
                    champ_put(root, 0, old, None, owner)
                raise
            self.root, self.order = root, order
            self.length -= 1
            self.acc = acc

    def _items(self) -> Iterator[Tuple[Any, Any]]:
        if type(self.root) is dict:
            return iter(self.root.items())
        if type(self.root) is tuple:
            return iter(self.order)
        return order_items(self.order)

    def _items_reversed(self) -> Iterator[Tuple[Any, Any]]:
        if type(self.root) is tuple:
            items: Items = self.order
            return reversed(items)
        return order_items_reversed(self.order)

    def _seal(self) -> None:
        """Take a fresh token: nodes reachable now are never edited in place."""
        self.owner = object()

    def _publish(self, cls: Any) -> Any:
        """The current contents as a new ``cls`` version, in O(1) (in table
        mode, a table version of the dict, the transient left empty; or, of
        at most FLAT_MAX items, a flat one)."""
        if type(self.root) is dict:
            return self._table_publish(cls)
        self._seal()
        return cls._from_parts(self.root, self.order, self.length, self.next_seq, self.acc)


def transient_init_table() -> Transient:
    """A builder in table mode (its root a private dict): for the builds that
    make versions from nothing (the constructor, ``fromkeys``)."""
    t = Transient()
    t.root = {}
    return t


# --- filling an empty builder -----------------------------------------------------


def _seq_of(entry: Entry) -> int:
    """An entry's seq: the sort key of entries into insertion order
    (``transient_compare_seq`` in the C core)."""
    return entry[1]


def load_items(t: Transient, items: List[Tuple[Any, Any]]) -> None:
    """Fill an empty transient from pairs whose keys are known to be distinct
    (a dict's, or a version's run of positions): each key is hashed once, then
    both tries are built with no lookups and no ``__eq__`` calls (at most
    FLAT_MAX pairs: the flat form, the transient in flat mode)."""
    hashes = [hashing_key_hash(key) for key, _ in items]  # may raise: nothing built yet
    if len(items) <= FLAT_MAX:
        t._set_flat(tuple(hashes), tuple(items), len(items), None)
        return
    t.root = champ_build_items(hashes, items, t.owner)
    t.order = order_build(items, t.owner)
    t.length = t.next_seq = len(items)
    t.acc = None  # unknown until someone hashes the result
