"""The public ``Evolver``: a Transient with the ``MutableMapping`` API.

The builder underneath (owner tokens, in-place edits of its own nodes,
publishing in O(1)) is ``transient.Transient``.  ``Evolver`` adds the public
``MutableMapping`` API, a guard that turns re-entrant edits (from a key's
``__eq__`` editing the same evolver) into ``RuntimeError``, all-or-nothing
``update()``, and iteration over a snapshot that raises ``RuntimeError`` if
keys are added or removed meanwhile.

Layers: this module sits above ``transient``, ``reads``, ``merge``,
``views`` and ``paths`` (and the tries below them) and below ``frozendict``,
which it never imports: the frozendict class it freezes into is the one
registered with ``reads``.

Mirrors ``frozenmap/_ccore/evolver.c``.
"""

from __future__ import annotations

import threading
from types import GenericAlias
from typing import Any, Dict, Iterable, Iterator, Optional, SupportsIndex, Tuple

from .. import _common
from .champ import Entry, champ_find_stored, champ_identical
from .flat import FLAT_MAX, flat_entry, flat_same_items
from .hashing import KEY_MASK, hashing_acc_replace, hashing_key_hash, hashing_pure_key_hash
from .merge import merge_into
from .ordertrie import order_last
from .paths import path_delete_in, path_get_in, path_set_in, path_update_in
from .reads import (
    frozendict_type,
    mapping_equal,
    mapping_repr,
    position_at,
    position_of,
    position_slice,
    register_types,
)
from .transient import Transient, _GCPaused, trie_parts
from .views import (
    frozendict_items,
    frozendict_keys,
    frozendict_values,
    method_named,
    view_mapping_iter,
)

__all__ = ["Evolver"]

_MISSING: Any = object()


def _stored_len(version: Any) -> int:
    """A frozendict's stored length, or -1 once the GC has cleared it
    (CPython's ``subtype_clear`` deletes its slots; the C core's cleared
    frozendict is an empty one instead)."""
    return getattr(version, "_len", -1)


def _source_argument(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    """``Evolver``'s one argument, ``source``, by position or by name
    (``_MISSING`` when absent), with the same words as the C core's
    ``evolver_source_argument`` on every Python version: dict's for too many
    positional arguments, a Python function's for the keywords."""
    if len(args) > 1:
        raise TypeError("Evolver expected at most 1 argument, got %d" % len(args))
    source = args[0] if args else _MISSING
    for name, value in kwargs.items():
        name = str.__str__(name)  # an exact str: a subclass's methods never run
        if name != "source":
            raise TypeError("Evolver() got an unexpected keyword argument '%s'" % name)
        if source is not _MISSING:
            raise TypeError("Evolver() got multiple values for argument 'source'")
        source = value
    return source


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
    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def __class_getitem__(cls, item: Any, /) -> GenericAlias:
        return GenericAlias(cls, item)

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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        source = _source_argument(args, kwargs)
        frozendict = frozendict_type()
        if source is _MISSING:
            source = frozendict()
        elif not issubclass(type(source), frozendict):
            source = frozendict(source)
        frozen = source if type(source) is frozendict else None
        self._start(source, frozen)

    def _start(self, source: Any, frozen: Any) -> None:
        """Install ``source``'s contents as one edit (``__init__``, also on a
        live evolver: a clean restart; ``RuntimeError`` inside an edit)."""
        self._begin()
        try:
            # Install the new state before the old one is released: the
            # release can run finalizers that read the evolver.
            released = (self.root, self.order)  # noqa: F841
            Transient.__init__(self, *trie_parts(source))
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
                return self._find(hashing_key_hash(key), key)
            finally:
                self._reading -= 1

    def __getitem__(self, key: Any, /) -> Any:
        entry = self._lookup(key)
        if entry is None:
            raise KeyError(key)
        return entry[3]

    def get(self, key: Any, default: Any = None, /) -> Any:
        """The value for ``key``, or ``default``.  Cost: O(log n).

        >>> from frozenmap import frozendict
        >>> e = frozendict(a=1).evolve()
        >>> e.get('a'), e.get('z'), e.get('z', 0)
        (1, None, 0)
        """
        entry = self._lookup(key)
        return default if entry is None else entry[3]

    def __contains__(self, key: object, /) -> bool:
        return self._lookup(key) is not None

    def _items(self) -> Iterator[Tuple[Any, Any]]:
        with self._lock:
            # The walk below sees nodes no edit will touch again (in flat
            # mode: the tuple of items, which edits replace).
            self._seal()
            return _Snapshot(self, self._resized, Transient._items(self))

    def _items_reversed(self) -> Iterator[Tuple[Any, Any]]:
        with self._lock:
            self._seal()
            return _Snapshot(self, self._resized, Transient._items_reversed(self))

    __iter__ = method_named(view_mapping_iter, "Evolver.__iter__")

    def __reversed__(self) -> Iterator[Any]:
        """Iterate over the keys in reverse insertion order.

        >>> from frozenmap import frozendict
        >>> list(reversed(frozendict(b=1, a=2).evolve()))
        ['a', 'b']
        """
        return reversed(frozendict_keys(self))

    def keys(self) -> frozendict_keys:
        """A set-like view of the keys, in insertion order.  Cost: O(1).

        >>> from frozenmap import frozendict
        >>> e = frozendict(b=1, a=2).evolve()
        >>> keys = e.keys()
        >>> e['c'] = 3
        >>> keys, 'c' in keys
        (dict_keys(['b', 'a', 'c']), True)
        """
        return frozendict_keys(self)

    def values(self) -> frozendict_values:
        """A view of the values, in insertion order.  Cost: O(1).

        >>> from frozenmap import frozendict
        >>> e = frozendict(b=1, a=2).evolve()
        >>> values = e.values()
        >>> e['b'] = 5
        >>> values, sum(values)
        (dict_values([5, 2]), 7)
        """
        return frozendict_values(self)

    def items(self) -> frozendict_items:
        """A set-like view of the ``(key, value)`` pairs.  Cost: O(1).

        >>> from frozenmap import frozendict
        >>> e = frozendict(b=1, a=2).evolve()
        >>> items = e.items()
        >>> del e['b']
        >>> items, ('a', 2) in items
        (dict_items([('a', 2)]), True)
        """
        return frozendict_items(self)

    # Positions: read from freeze() (O(1)), a snapshot no edit changes.

    def key_at(self, index: SupportsIndex, /) -> Any:
        """The key at position ``index`` (negative from the end, as for a list).

        Cost: O(log n).
        """
        return self._item_at(index)[0]

    def value_at(self, index: SupportsIndex, /) -> Any:
        """The value at position ``index``.  Cost: O(log n)."""
        return self._item_at(index)[1]

    def item_at(self, index: SupportsIndex, /) -> Tuple[Any, Any]:
        """The ``(key, value)`` pair at position ``index``.  Cost: O(log n)."""
        return self._item_at(index)

    def _item_at(self, index: SupportsIndex) -> Tuple[Any, Any]:
        # The positional reads read a freeze() (O(1)), a snapshot no edit
        # changes, as the frozendict methods do with "Evolver" in their
        # messages (evolver_read_frozen in the C core).
        return position_at(trie_parts(self.freeze())[1], index, "Evolver")[1]

    def index(self, key: Any, /) -> int:
        """The position of ``key``; ``KeyError`` if absent.  Cost: O(log n)."""
        return position_of(self.freeze(), key)

    def slice(
        self, start: Optional[SupportsIndex] = None, stop: Optional[SupportsIndex] = None, /
    ) -> Any:
        """A frozendict of the items at positions ``start`` to ``stop`` (a
        list's slice rules), as ``frozendict.slice`` (each kept key is hashed
        once).  Cost: O(log n + k) for k items kept."""
        return position_slice(self.freeze(), start, stop)

    def __eq__(self, other: object, /) -> Any:
        return mapping_equal(self, other)

    def __ne__(self, other: object, /) -> Any:
        result = mapping_equal(self, other)  # the base ==, as frozendict.__ne__
        return result if result is NotImplemented else not result

    def __repr__(self) -> str:
        return mapping_repr(self, "Evolver")

    def __reduce__(self) -> Any:
        return (_common.restore_evolver, (dict(self._items()), "python"))

    # --- edits ---------------------------------------------------------------------

    def __setitem__(self, key: Any, value: Any, /) -> None:
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
        """Set ``key`` to ``value`` and return the evolver.  Cost: O(log n).

        >>> from frozenmap import frozendict
        >>> frozendict(a=1).evolve().set('a', 2).set('b', 3).freeze()
        frozendict({'a': 2, 'b': 3})
        """
        self[key] = value
        return self

    def __delitem__(self, key: Any, /) -> None:
        if self._pop_entry(key) is None:
            raise KeyError(key)

    def discard(self, key: Any, /) -> "Evolver":
        """Remove ``key`` if present; return the evolver.  Cost: O(log n).

        >>> from frozenmap import frozendict
        >>> frozendict(a=1, b=2).evolve().discard('a').discard('z').freeze()
        frozendict({'b': 2})
        """
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
        """Remove ``key`` and return its value (or ``default``; else KeyError).

        Cost: O(log n).

        >>> from frozenmap import frozendict
        >>> e = frozendict(a=1, b=2).evolve()
        >>> e.pop('a'), e.pop('z', None), e
        (1, None, Evolver({'b': 2}))
        """
        old = self._pop_entry(key)
        if old is not None:
            return old[3]
        if default is _MISSING:
            raise KeyError(key)
        return default

    def popitem(self) -> Tuple[Any, Any]:
        """Remove and return the last ``(key, value)`` added (LIFO).

        The key's entry is found by the key's hash, so a key whose hash runs
        Python code has its ``__hash__`` called once (``dict.popitem`` calls
        none).  That hash only guides the search: the item removed is the
        last one even when the hash changed since the key was stored or
        raises an ``Exception`` (discarded; other exceptions, such as
        ``KeyboardInterrupt``, propagate and nothing is removed).
        Cost: O(log n); O(n) when the key's hash changed or raised.

        >>> from frozenmap import frozendict
        >>> e = frozendict(a=1, b=2).evolve()
        >>> e.popitem(), e
        (('b', 2), Evolver({'a': 1}))
        """
        self._begin()
        try:
            if type(self.root) is tuple:
                return self._flat_popitem()
            last = order_last(self.order)
            if last is None:
                raise KeyError("popitem(): evolver is empty")
            # The entry holding this key object at this seq (one key object
            # can be stored twice, see champ_find_stored), found by identity
            # along the key's hash path, or by a scan when the hash misleads.
            seq, item = last
            key = item[0]
            h = hashing_pure_key_hash(key)
            if h is None:
                try:
                    h = hash(key) & KEY_MASK  # user code: the evolver is busy
                except Exception:
                    h = None
            entry = None if h is None else champ_find_stored(self.root, h, key, seq)
            if entry is None:
                entry = champ_find_stored(self.root, None, key, seq)
            if entry is None:
                raise SystemError("popitem: tries disagree")
            self._remove_entry(entry)
            self._resized += 1
        finally:
            self._end()
        return item

    def _flat_popitem(self) -> Tuple[Any, Any]:
        """``popitem`` in flat mode (inside its edit): the last position.
        The key's hash is computed as in tries mode (the same user code: a
        ``__hash__`` that raises ``KeyboardInterrupt`` stops it), though the
        position alone says which entry goes."""
        items = self.order
        if not items:
            raise KeyError("popitem(): evolver is empty")
        item: Tuple[Any, Any] = items[-1]
        if hashing_pure_key_hash(item[0]) is None:
            try:
                hash(item[0])  # user code: the evolver is busy
            except Exception:
                pass
        self._remove_entry(flat_entry(self.root, self.order, len(items) - 1))
        self._resized += 1
        return item

    def setdefault(self, key: Any, default: Any = None, /) -> Any:
        """Return the value for ``key``, setting it to ``default`` if absent.

        Cost: O(log n).

        >>> from frozenmap import frozendict
        >>> e = frozendict(a=1).evolve()
        >>> e.setdefault('a', 0), e.setdefault('b', 0), e
        (1, 0, Evolver({'a': 1, 'b': 0}))
        """
        self._begin()
        try:
            h = hashing_key_hash(key)
            entry = self._find(h, key)
            if entry is not None:
                return entry[3]
            acc = hashing_acc_replace(self.acc, h, None, default, False, True)
            if type(self.root) is tuple:
                self._flat_put_new(h, key, default, acc)
            else:
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
        exactly as it was before the call.  Cost: O(k log n) for k items;
        O(d log n) for a frozendict d edits away from the evolver's contents
        (the subtrees both share are skipped).

        >>> from frozenmap import frozendict
        >>> e = frozendict(a=1).evolve()
        >>> e.update({'b': 2}, c=3)
        >>> e.update([('a', 10)])
        >>> e
        Evolver({'a': 10, 'b': 2, 'c': 3})
        """
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
        """Remove every item.  Cost: O(1).

        >>> from frozenmap import frozendict
        >>> e = frozendict(a=1).evolve()
        >>> e.clear()
        >>> e.freeze()
        frozendict()
        """
        self._begin()
        try:
            if self.length:
                self._resized += 1
            # The empty flat form (_set_flat keeps the old state alive until
            # every field is consistent: its values' finalizers may read the
            # evolver).
            self._set_flat((), (), 0, 0)
        finally:
            self._end()

    # --- nested paths (the nested maps stay immutable; this level is edited) -------

    def get_in(self, path: Iterable[Any], default: Any = None) -> Any:
        """The value at ``path`` through nested frozendicts (see ``frozendict.get_in``).

        >>> from frozenmap import frozendict
        >>> e = frozendict(user=frozendict(name='ada')).evolve()
        >>> e.get_in(['user', 'name']), e.get_in(['user', 'age'], 0)
        ('ada', 0)
        """
        return path_get_in(self, path, default, frozendict_type())

    def set_in(self, path: Iterable[Any], value: Any, /) -> "Evolver":
        """Set the value at ``path``, rebuilding the nested frozendicts along it.

        >>> from frozenmap import frozendict
        >>> e = frozendict(user=frozendict(name='ada')).evolve()
        >>> e.set_in(['user', 'name'], 'grace').freeze()
        frozendict({'user': frozendict({'name': 'grace'})})
        """
        return path_set_in(self, path, value, frozendict_type())  # type: ignore[no-any-return]

    def update_in(self, path: Iterable[Any], fn: Any, /, *args: Any, **kwargs: Any) -> "Evolver":
        """Replace the value at ``path`` with ``fn(old, *args, **kwargs)``
        (``default=`` as ``frozendict.update_in``).

        >>> from frozenmap import frozendict
        >>> e = frozendict(stats=frozendict(hits=1)).evolve()
        >>> e.update_in(['stats', 'hits'], lambda n: n + 1).freeze()
        frozendict({'stats': frozendict({'hits': 2})})
        """
        return path_update_in(self, path, fn, args, kwargs, frozendict_type())  # type: ignore[no-any-return]

    def delete_in(self, path: Iterable[Any], /) -> "Evolver":
        """Remove the key at the end of ``path``; ``KeyError`` if absent.

        >>> from frozenmap import frozendict
        >>> e = frozendict(user=frozendict(name='ada', age=36)).evolve()
        >>> e.delete_in(['user', 'age']).freeze()
        frozendict({'user': frozendict({'name': 'ada'})})
        """
        return path_delete_in(self, path, frozendict_type())  # type: ignore[no-any-return]

    def copy(self) -> "Evolver":
        """A new, independent evolver with the same contents.  Cost: O(1).

        >>> from frozenmap import frozendict
        >>> e = frozendict(a=1).evolve()
        >>> f = e.copy()
        >>> f['b'] = 2
        >>> e, f
        (Evolver({'a': 1}), Evolver({'a': 1, 'b': 2}))
        """
        return Evolver(self.freeze())

    def freeze(self) -> Any:
        """The contents as a ``frozendict``.  Cost: O(1).

        Later edits of the evolver never change the frozendict returned.

        >>> from frozenmap import frozendict
        >>> e = frozendict(a=1).evolve()
        >>> e['b'] = 2
        >>> v = e.freeze()
        >>> e['c'] = 3
        >>> v, e.freeze() is e.freeze()
        (frozendict({'a': 1, 'b': 2}), True)
        """
        with self._lock:
            if self._frozen is not None and _stored_len(self._frozen) != self.length:
                self._frozen = None  # the GC cleared it, not this evolver: published again
            if self._frozen is None:
                origin = self._origin
                if (
                    origin is not None
                    and _stored_len(origin) == self.length
                    and (
                        flat_same_items(origin._root, origin._order, self.root, self.order)
                        if self.length <= FLAT_MAX
                        else champ_identical(trie_parts(origin)[0], self.root)
                    )
                ):
                    # Edits that cancel out: the walk visits only what they copied.
                    frozen = origin
                else:
                    frozen = self._publish(frozendict_type())
                if self._busy:  # a freeze from inside an edit: not kept
                    return frozen
                if type(self.root) is not tuple and self.length <= FLAT_MAX and not self._reading:
                    # Tries that shrank to FLAT_MAX keys: take the flat form
                    # back from the version (the same entries), so the next
                    # edits and freezes are flat ones.  (Not under a lookup
                    # still walking the tries: a key's __eq__ freezing.)
                    self._set_flat(frozen._root, frozen._order, self.length, self.acc)
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


register_types(evolver=Evolver)
