"""Transient editing: the internal builder and the public ``Evolver``.

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
left to fail half-way.  ``Evolver`` adds the public ``MutableMapping`` API, a
guard that turns re-entrant edits (from a key's ``__eq__`` editing the same
evolver) into ``RuntimeError``, all-or-nothing ``update()``, and iteration
over a snapshot that raises ``RuntimeError`` if keys are added or removed
meanwhile.

Mirrors ``frozenmap/_ccore/evolver.c``.
"""

from __future__ import annotations

import gc
import threading
from types import GenericAlias
from typing import Any, Iterable, Iterator, Optional, Tuple

from .hashing import acc_replace, key_hash, pure_key_hash
from .keytrie import (
    EMPTY_ROOT,
    BitmapNode,
    Entry,
    champ_find,
    champ_find_stored,
    champ_identical,
    champ_put,
    champ_remove,
)
from .ordertrie import (
    OrderNode,
    order_insert,
    order_items,
    order_items_reversed,
    order_last,
    order_remove,
    order_replace,
)
from .paths import path_delete, path_get, path_set, path_update
from .views import mapping_items, mapping_iter, mapping_keys, mapping_reversed, mapping_values

__all__ = ["Transient", "Evolver"]

_MISSING: Any = object()


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


class _Snapshot:
    """A walk over an Evolver's items that raises ``RuntimeError`` once the
    Evolver changed size, and again on every later call, as dict's iterators
    do (until the walk has reached its end)."""

    __slots__ = ("_evolver", "_resized", "_walk", "_done")

    def __init__(self, evolver: "Evolver", resized: int, walk: Iterator[Tuple[Any, Any]]) -> None:
        self._evolver = evolver
        self._resized = resized
        self._walk = walk
        self._done = False

    def __iter__(self) -> "_Snapshot":
        return self

    def __next__(self) -> Tuple[Any, Any]:
        if self._done:
            raise StopIteration
        if self._evolver._resized != self._resized:
            raise RuntimeError("Evolver changed size during iteration")
        try:
            return next(self._walk)
        except StopIteration:
            self._done = True
            raise

    def _rewound(self, rest: Any) -> "_Snapshot":
        """The same walk over ``rest`` (what an iterator's ``__reduce__`` read)."""
        return _Snapshot(self._evolver, self._resized, iter(rest))


class Evolver(Transient):
    """A mutable ``MutableMapping`` over a private copy-on-write version.

    Get one from ``frozendict.evolve()``.  Edits cost O(log n) and copy each
    trie node at most once per evolver; ``freeze()`` returns the frozendict in
    O(1), and editing the evolver afterwards never changes what was frozen.
    Order, ``len`` and ``repr`` follow the frozendict's rules; every
    ``MutableMapping`` method behaves as on ``dict`` (``popitem`` is LIFO), and a
    failing edit, ``update()`` included, leaves the evolver as it was.

    >>> from frozenmap import frozendict
    >>> e = frozendict(a=1).evolve()
    >>> e['b'] = 2
    >>> del e['a']
    >>> e.freeze()
    frozendict({'b': 2})
    """

    __slots__ = ("_busy", "_resized", "_frozen", "_lock", "_reading", "_origin")
    _busy: bool
    _resized: int
    _frozen: Any
    _lock: Any
    _reading: int
    _origin: Any

    # The views and repr read the stored length as mapping._len (never a
    # subclass's __len__): here that is Transient's length slot.
    _len: Any = Transient.__dict__["length"]

    _shared = True

    __module__ = "frozenmap"
    __class_getitem__: Any = classmethod(GenericAlias)
    __hash__ = None  # type: ignore[assignment]

    def __new__(cls, *args: Any, **kwargs: Any) -> "Evolver":
        # An empty, usable evolver even without __init__ (as in the C core,
        # and as dict.__new__(dict) is an empty dict).
        self = object.__new__(cls)
        Transient.__init__(self, acc=0)
        self._busy = False
        self._resized = 0
        self._reading = 0
        # Edits, freezes and iteration snapshots are serialised per evolver
        # (the C core has a lock of its own; the GIL does not make a
        # multi-step Python edit atomic, so this core locks too).
        self._lock = threading.RLock()
        self._frozen = None
        # The last version published (or the source): freeze() returns it
        # when the edits since then cancel out.
        self._origin = None
        return self

    def __init__(self, source: Any = _MISSING) -> None:
        from .frozendict import frozendict

        if source is _MISSING:
            source = frozendict()
        elif not issubclass(type(source), frozendict):
            source = frozendict(source)
        frozen = source if type(source) is frozendict else None
        self._restart(source, frozen)

    def _restart(self, source: Any, frozen: Any) -> None:
        """Install ``source``'s contents as one edit (``__init__``, also on a
        live evolver: a clean restart; ``RuntimeError`` inside an edit)."""
        self._begin()
        try:
            # Install the new state before the old one is released: the
            # release can run finalizers that read the evolver.
            released = (self.root, self.order)  # noqa: F841
            Transient.__init__(
                self, source._root, source._order, source._len, source._next_seq, source._acc
            )
            self._resized += 1  # iterators over the old contents stop
        except BaseException:
            self._end()
            raise
        # As _end, keeping the frozen source: it is the contents now.
        self._busy = False
        self._frozen = self._origin = frozen
        self._lock.release()

    # --- guard -----------------------------------------------------------------

    def _begin(self) -> None:
        self._lock.acquire()
        if self._busy:  # only this thread can be inside: it re-entered
            self._lock.release()
            raise RuntimeError("Evolver edited from inside one of its own edits")
        self._busy = True
        if self._reading:
            # A lookup of this thread is walking the tries (this edit runs
            # from its key's __eq__): edit copies, not the nodes it reads.
            self._seal()

    def _end(self, changed: bool = True) -> None:
        # A freeze() cached before the edit, or taken by user code during it
        # (a key's __eq__), shows the state before the edit: keep it only if
        # that is still the state, so evolve() ... freeze() with no change
        # returns the source.
        self._busy = False
        if changed:
            self._frozen = None
        self._lock.release()

    # --- reads -------------------------------------------------------------------

    def __len__(self) -> int:
        return self.length

    def _lookup(self, key: Any) -> Optional[Entry]:
        # Under the lock, so another thread's edit is not half-applied; the
        # counter makes an edit run by a key's __eq__ copy what it changes.
        with self._lock:
            self._reading += 1
            try:
                return champ_find(self.root, key_hash(key), key)
            finally:
                self._reading -= 1

    def __getitem__(self, key: Any) -> Any:
        entry = self._lookup(key)
        if entry is None:
            raise KeyError(key)
        return entry[3]

    def get(self, key: Any, default: Any = None, /) -> Any:
        """The value for ``key``, or ``default``.  Cost: O(log n)."""
        entry = self._lookup(key)
        return default if entry is None else entry[3]

    def __contains__(self, key: object) -> bool:
        return self._lookup(key) is not None

    def _items(self) -> Iterator[Tuple[Any, Any]]:
        with self._lock:
            self._seal()  # the walk below sees nodes no edit will touch again
            return _Snapshot(self, self._resized, order_items(self.order))

    def _items_reversed(self) -> Iterator[Tuple[Any, Any]]:
        with self._lock:
            self._seal()
            return _Snapshot(self, self._resized, order_items_reversed(self.order))

    __iter__ = mapping_iter
    __reversed__ = mapping_reversed
    keys = mapping_keys
    values = mapping_values
    items = mapping_items

    def __eq__(self, other: object) -> Any:
        from .frozendict import mapping_equal

        return mapping_equal(self, other)

    def __ne__(self, other: object) -> Any:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __repr__(self) -> str:
        from .frozendict import items_repr

        return items_repr(self, "Evolver")

    def __reduce__(self) -> Any:
        from frozenmap._common import restore_evolver

        return (restore_evolver, (dict(self._items()), "python"))

    # --- edits ---------------------------------------------------------------------

    def __setitem__(self, key: Any, value: Any) -> None:
        self._begin()
        changed = False
        try:
            length = self.length
            changed = self._assoc(key, value)
            if self.length != length:
                self._resized += 1
        finally:
            self._end(changed)

    def set(self, key: Any, value: Any, /) -> "Evolver":
        """Set ``key`` to ``value`` and return the evolver.  Cost: O(log n)."""
        self[key] = value
        return self

    def __delitem__(self, key: Any) -> None:
        if self._pop_entry(key) is None:
            raise KeyError(key)

    def discard(self, key: Any, /) -> "Evolver":
        """Remove ``key`` if present; return the evolver.  Cost: O(log n)."""
        self._pop_entry(key)
        return self

    def _pop_entry(self, key: Any) -> Optional[Entry]:
        self._begin()
        old = None
        try:
            old = self._dissoc(key)
            if old is not None:
                self._resized += 1
            return old
        finally:
            self._end(old is not None)

    def pop(self, key: Any, default: Any = _MISSING, /) -> Any:
        """Remove ``key`` and return its value (or ``default``; else KeyError)."""
        old = self._pop_entry(key)
        if old is not None:
            return old[3]
        if default is _MISSING:
            raise KeyError(key)
        return default

    def popitem(self) -> Tuple[Any, Any]:
        """Remove and return the last ``(key, value)`` added (LIFO).

        As ``dict.popitem``, the key is not hashed again.  Cost: O(log n); O(n)
        for a key whose hash runs Python code (a class defining ``__hash__``).
        """
        self._begin()
        try:
            item = order_last(self.order)
            if item is None:
                raise KeyError("popitem(): evolver is empty")
            # As dict.popitem, the key is not hashed again: its entry is found
            # by identity (see champ_find_stored).
            key = item[0]
            entry = champ_find_stored(self.root, pure_key_hash(key), key)
            if entry is None:
                entry = champ_find_stored(self.root, None, key)
            if entry is None:
                raise SystemError("popitem: tries disagree")
            self._remove_entry(entry)
            self._resized += 1
        finally:
            self._end()
        return item

    def setdefault(self, key: Any, default: Any = None, /) -> Any:
        """Return the value for ``key``, setting it to ``default`` if absent."""
        self._begin()
        try:
            h = key_hash(key)
            entry = champ_find(self.root, h, key)
            if entry is not None:
                return entry[3]
            acc = acc_replace(self.acc, h, None, default, False, True)
            with _GCPaused(self._shared):
                self._put_new(h, key, default)
                self.acc = acc
            self._resized += 1
            return default
        finally:
            self._end()

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Update from a mapping or iterable of pairs and keywords, like ``dict``.

        All or nothing: if anything raises part-way, the evolver is left
        exactly as it was before the call.  Cost: O(k log n) for k items.
        """
        from .frozendict import merge_into

        self._begin()
        saved = (self.root, self.order, self.length, self.next_seq, self.acc)
        self._seal()  # the saved roots must not be edited in place
        try:
            merge_into(self, other, kwargs)
            if self.length != saved[2] or self.next_seq != saved[3]:
                self._resized += 1
        except BaseException:
            # The saved state goes back in place before the partial merge is
            # released (its finalizers see the state before update()).
            released = (self.root, self.order)  # noqa: F841
            self.root, self.order, self.length, self.next_seq, self.acc = saved
            raise
        finally:
            # (after the seal, every change made a new root)
            self._end(self.root is not saved[0] or self.order is not saved[1])

    def clear(self) -> None:
        """Remove every item.  Cost: O(1)."""
        self._begin()
        try:
            if self.length:
                self._resized += 1
            # Keep the old tries alive until every field is consistent: their
            # values' finalizers may read the evolver.
            released = (self.root, self.order)  # noqa: F841
            self.root = EMPTY_ROOT
            self.order = None
            self.length = 0
            self.acc = 0
        finally:
            self._end()

    # --- nested paths (the nested maps stay immutable; this level is edited) -------

    _fd_type: Any = None  # frozendict, set by frozendict.py

    def get_in(self, path: Iterable[Any], default: Any = None) -> Any:
        """The value at ``path`` through nested frozendicts (see ``frozendict.get_in``)."""
        return path_get(self, path, default, self._fd_type)

    def set_in(self, path: Iterable[Any], value: Any, /) -> "Evolver":
        """Set the value at ``path``, rebuilding the nested frozendicts along it.

        >>> from frozenmap import frozendict
        >>> e = frozendict(user=frozendict(name='ada')).evolve()
        >>> e.set_in(['user', 'name'], 'grace').freeze()
        frozendict({'user': frozendict({'name': 'grace'})})
        """
        return path_set(self, path, value, self._fd_type)  # type: ignore[no-any-return]

    def update_in(self, path: Iterable[Any], fn: Any, /, *args: Any, **kwargs: Any) -> "Evolver":
        """Replace the value at ``path`` with ``fn(old, *args, **kwargs)``
        (``default=`` as ``frozendict.update_in``)."""
        return path_update(self, path, fn, args, kwargs, self._fd_type)  # type: ignore[no-any-return]

    def delete_in(self, path: Iterable[Any], /) -> "Evolver":
        """Remove the key at the end of ``path``; ``KeyError`` if absent."""
        return path_delete(self, path, self._fd_type)  # type: ignore[no-any-return]

    def copy(self) -> "Evolver":
        """A new, independent evolver with the same contents.  Cost: O(1)."""
        return Evolver(self.freeze())

    def freeze(self) -> Any:
        """The contents as a ``frozendict``.  Cost: O(1).

        Later edits of the evolver never change the frozendict returned.
        """
        from .frozendict import frozendict

        with self._lock:
            if self._frozen is None:
                origin = self._origin
                if (
                    origin is not None
                    and origin._len == self.length
                    and champ_identical(origin._root, self.root)
                ):
                    # Edits that cancel out: the walk visits only what they copied.
                    frozen = origin
                else:
                    frozen = self._publish(frozendict)
                if self._busy:  # a freeze from inside an edit: not kept
                    return frozen
                self._origin = frozen
                self._frozen = frozen
            return self._frozen

    # --- checking ------------------------------------------------------------------

    def _check(self) -> None:
        """Assert every invariant of the evolver's current contents."""
        self.freeze()._check()

    def _node_ids(self) -> list:  # type: ignore[type-arg]
        return self.freeze()._node_ids()  # type: ignore[no-any-return]

    def _dump(self) -> str:
        return self.freeze()._dump()  # type: ignore[no-any-return]
