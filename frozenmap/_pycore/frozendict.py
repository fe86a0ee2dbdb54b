"""The public ``frozendict``: PEP 814's behaviour plus persistent derivations.

A version holds the key-trie root (``keytrie``), the order-trie root
(``ordertrie``), its length, ``next_seq`` (the seq the next new key gets), the
cached hash and the XOR accumulator behind it (``hashing``).  Nothing reachable
from a version is ever changed, so versions are safe to share between threads,
and every derivation shares all but O(log n) nodes with its source.  A
version of at most ``FLAT_MAX`` = 32 keys holds no tries (``flat``): ``_root``
is the tuple of its stored hashes and ``_order`` the tuple of its
``(key, value)`` pairs, in insertion order; every method tests ``_len``
first.

Layers: this module sits above ``transient`` (the builder every derivation
goes through), ``reads`` (``mapping_equal``, ``mapping_repr``, positions,
which it registers its class with), ``merge`` (``merge_into``), ``views`` and
``paths``; it uses ``evolver`` only to construct an ``Evolver`` in
``evolve()``.

Mirrors ``frozenmap/_ccore/frozendict.c``.
"""

from __future__ import annotations

import builtins
import copyreg
import inspect
import sys
from collections import OrderedDict
from types import GenericAlias
from typing import (
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    SupportsIndex,
    Tuple,
    TypeGuard,
    Union,
)

from .. import _cold, _common
from .._diff import Diff, deepen_diff
from .._typeinfo import lookup_special, type_lookup, type_name
from .champ import (
    BitmapNode,
    Entry,
    champ_check,
    champ_diff,
    champ_dump,
    champ_entries,
    champ_equal,
    champ_find,
    champ_find_stored,
    champ_identical,
    champ_node_ids,
)
from .derive import derive_with, derive_without
from .evolver import Evolver
from .flat import (
    FLAT_INDEX_AFTER,
    FLAT_MAX,
    FLAT_SCAN_IN_C,
    FLAT_SCAN_MAX,
    Hashes,
    Items,
    flat_check,
    flat_demote,
    flat_diff,
    flat_dump,
    flat_entry,
    flat_equal,
    flat_find,
    flat_find_after,
    flat_index,
    flat_key_trie,
    flat_same_items,
)
from .hashing import (
    KEY_MASK,
    hashing_finalize,
    hashing_key_hash,
    hashing_pair_hash,
    hashing_shuffle_bits,
    register_cached_hash,
    unhashable,
)
from .merge import merge_into
from .ordertrie import (
    OrderNode,
    order_check,
    order_dump,
    order_get,
    order_items,
    order_items_reversed,
    order_node_ids,
)
from .paths import path_delete_in, path_get_in, path_set_in, path_update_in
from .reads import (
    PAIR_ENTRIES,
    PAIR_FLAT,
    PAIR_TABLES,
    mapping_entries_in_order,
    mapping_equal,
    mapping_form_of,
    mapping_is_anydict,
    mapping_pair_path,
    mapping_repr,
    position_at,
    position_of,
    position_slice,
    register_types,
)
from .table import (
    TABLE_MISSING,
    table_check,
    table_dump,
    table_find_hashed,
    table_from_dict,
    table_register,
    table_twin,
)
from .transient import Transient, _seq_of, transient_init_table, trie_parts
from .views import call_error as _call_error
from .views import (
    method_named,
    view_mapping_items,
    view_mapping_iter,
    view_mapping_keys,
    view_mapping_reversed,
    view_mapping_values,
)

__all__ = ["frozendict"]

_MISSING: Any = object()
_newobj: Any = copyreg.__newobj__  # type: ignore[attr-defined]


# --- helpers ---------------------------------------------------------------------


_builtin_frozendict: Any = getattr(builtins, "frozendict", None)

# The builtin's methods check their arguments in C, with argument clinic's
# wording; these few take *args/**kwargs to say the same (their
# __signature__ is the real one, for inspect and stubtest).
_NOARG: Any = object()


def _signature_of(fn: Any) -> inspect.Signature:
    return inspect.signature(fn)


def _no_dict_suffix() -> str:
    """What this Python adds to "'X' object has no attribute 'y'" when X has no
    ``__dict__`` ("and no __dict__ for setting new attributes" on 3.13+)."""

    class Probe:
        __slots__ = ()

    try:
        Probe().y = 1  # type: ignore[attr-defined]
    except AttributeError as exc:
        return str(exc)[len("'Probe' object has no attribute 'y'") :]
    return ""  # pragma: no cover


_NO_DICT_SUFFIX = _no_dict_suffix()

# ``fd - "name"`` would remove the letters n, a, m, e: a str or bytes operand of
# ``-`` or ``&`` is refused with what to write instead.
_TEXT_TYPES = (str, bytes, bytearray)


def _refuse_text_operand(self: Any, op: str, keys: Any) -> TypeError:
    return TypeError(
        "unsupported operand type(s) for %s: '%s' and '%s' (text would be read as its "
        "characters; for one key write fd %s {key})"
        % (op, type_name(type(self)), type_name(type(keys)), op)
    )


# --- the type --------------------------------------------------------------------


_HASHING = " while hashing a frozendict"
_ON_PYPY = sys.implementation.name == "pypy"


def _hash_recursion_error(exc: RecursionError) -> None:
    """Re-raise Python's own recursion limit, reached under ``hash(fd)``, with
    the text the C core and the builtin give (" while hashing a frozendict");
    a RecursionError already saying so, or raised by a value's own code, as
    it is.  (Called in the ``except`` clause.)"""
    text = str(exc)
    if text.startswith("maximum recursion depth exceeded") and not text.endswith(_HASHING):
        raise RecursionError("maximum recursion depth exceeded" + _HASHING) from None
    raise exc


class frozendict:
    """An immutable, insertion-ordered mapping (PEP 814) with cheap derivations.

    ``frozendict()``, ``frozendict(mapping_or_pairs, **kwargs)`` build it like
    ``dict()``.  It is hashable when its values are, compares equal to any dict
    or frozendict with the same items (order ignored), and keeps every version
    valid: ``set``, ``delete``, ``discard``, ``|``, ``-``, ``&`` and
    ``evolve()`` return new versions that share all but O(log n) nodes.

    Cost: construction O(n log n) worst case (O(n) trie nodes).

    >>> fd = frozendict(a=1, b=2)
    >>> fd.set('c', 3)
    frozendict({'a': 1, 'b': 2, 'c': 3})
    >>> fd
    frozendict({'a': 1, 'b': 2})
    """

    __slots__ = ("_root", "_order", "_len", "_next_seq", "_hash", "_acc", "_hindex")

    __module__ = "frozenmap"
    __match_args__ = ("_match_self",)

    @classmethod
    def __class_getitem__(cls, *args: Any, **kwargs: Any) -> GenericAlias:
        if len(args) != 1 or kwargs:
            raise _call_error(cls, "__class_getitem__", 1, 1, len(args), kwargs)
        return GenericAlias(cls, args[0])

    _root: Union[BitmapNode, Dict[Any, Any]]  # (a flat version's: Hashes; a table's: its dict)
    _order: Optional[OrderNode]  # (a flat version's: Items; a table's: its twin's parts)
    _len: int
    _next_seq: int
    _hash: Optional[int]
    _acc: Optional[int]
    # A flat version of > FLAT_SCAN_MAX keys: how many lookups it had, then
    # its index (_indexed_find); unset in every other version.
    _hindex: Union[int, Dict[int, int]]

    def __new__(cls, /, *args: Any, **kwargs: Any) -> "frozendict":
        if len(args) > 1:
            raise TypeError("frozendict expected at most 1 argument, got %d" % len(args))
        if args:
            arg = args[0]
            if not kwargs:
                if issubclass(type(arg), frozendict):
                    if cls is frozendict and type(arg) is frozendict:
                        return arg
                    return cls._from_parts(arg._root, arg._order, arg._len, arg._next_seq, arg._acc)
                if type(arg) is dict:
                    if len(arg) <= FLAT_MAX:
                        return _flat_from_dict(cls, arg)  # type: ignore[no-any-return]
                    # Built once from a dict: the table form, when its keys allow
                    table = table_from_dict(cls, arg)
                    if table is not None:
                        return table  # type: ignore[no-any-return]
            t = transient_init_table()  # a build from nothing
            merge_into(t, arg, kwargs)
        else:
            if len(kwargs) <= FLAT_MAX:
                return _flat_from_dict(cls, kwargs)  # type: ignore[no-any-return]
            t = transient_init_table()
            merge_into(t, (), kwargs)
        return t._publish(cls)  # type: ignore[no-any-return]

    @classmethod
    def _from_parts(
        cls,
        root: Union[BitmapNode, Hashes, Dict[Any, Any]],
        order: Union[OrderNode, Items, None],
        length: int,
        next_seq: int,
        acc: Optional[int],
    ) -> "frozendict":
        if length <= FLAT_MAX and type(root) is not tuple:
            # A version of few keys made in tries (a transient's, a delete
            # leaving FLAT_MAX keys) is read into the flat form.
            root, order = flat_demote(root, order)  # type: ignore[arg-type]
            next_seq = length
        self = object.__new__(cls)
        _set_root(self, root)
        _set_order(self, order)
        _set_len(self, length)
        _set_next_seq(self, next_seq)
        _set_acc(self, acc)
        if FLAT_SCAN_MAX < length <= FLAT_MAX:
            _set_hindex(self, 0)  # no lookup yet (_indexed_find)
        # A known accumulator is finalised at once (O(1)), so versions derived
        # from one whose hash is known compare unequal by hash without a walk.
        _set_hash(self, None if acc is None else hashing_finalize(acc, length))
        return self

    def __setattr__(self, name: str, value: Any, /) -> None:
        if name in frozendict.__slots__:
            raise AttributeError(
                "'%s' object attribute '%s' is read-only" % (type(self).__name__, name)
            )
        try:
            object.__setattr__(self, name, value)
        except AttributeError as exc:
            # object.__setattr__ called from a __setattr__ leaves out what a
            # plain instance without __dict__ says (3.13+), and the C core says.
            text = str(exc)
            if (
                _NO_DICT_SUFFIX
                and not hasattr(self, "__dict__")
                and not text.endswith(_NO_DICT_SUFFIX)
            ):
                raise AttributeError(text + _NO_DICT_SUFFIX, name=name, obj=self) from None
            raise

    def __delattr__(self, name: str, /) -> None:
        if name in frozendict.__slots__:
            raise AttributeError(
                "'%s' object attribute '%s' is read-only" % (type(self).__name__, name)
            )
        object.__delattr__(self, name)

    def _exact(self) -> "frozendict":
        """``self`` as an exact frozendict (itself if it already is one)."""
        if type(self) is frozendict:
            return self
        return frozendict._from_parts(self._root, self._order, self._len, self._next_seq, self._acc)

    def _transient(self) -> Transient:
        return Transient(*trie_parts(self))

    # --- reads ---------------------------------------------------------------------

    def _lookup(self, key: Any) -> Optional[Entry]:
        return self._find_entry_hashed(hashing_key_hash(key), key)

    def _find_entry_hashed(self, h: int, key: Any) -> Optional[Entry]:
        """``_lookup`` of a key whose hash is known (a stored key); a table
        version's entry is its twin's (its seq: its position)."""
        if self._len <= FLAT_MAX:
            i = flat_find(self._root, self._order, h, key)  # type: ignore[arg-type]
            return None if i < 0 else flat_entry(self._root, self._order, i)  # type: ignore[arg-type]
        root = self._root
        if isinstance(root, dict):
            root = table_twin(self)[0]
        return champ_find(root, h, key)

    def _items(self) -> Iterator[Tuple[Any, Any]]:
        if self._len <= FLAT_MAX:
            return iter(self._order)  # type: ignore[arg-type]
        if isinstance(self._root, dict):  # the table form: the dict's own walk
            return iter(self._root.items())
        return order_items(self._order)

    def _items_reversed(self) -> Iterator[Tuple[Any, Any]]:
        if self._len <= FLAT_MAX:
            return reversed(self._order)  # type: ignore[arg-type]
        return order_items_reversed(trie_parts(self)[1])

    def __getitem__(self, key: Any, /) -> Any:
        try:
            h = hash(key) & KEY_MASK  # hashing_key_hash, inlined
        except TypeError as exc:
            unhashable(key, exc)
        if self._len <= FLAT_MAX:
            items = self._order
            if self._len > FLAT_SCAN_MAX:
                i = _indexed_find(self, h, key)
                if i >= 0:
                    return items[i][1]  # type: ignore[index]
            elif FLAT_SCAN_IN_C:  # flat_find, inlined
                hashes: Any = self._root
                if h in hashes:
                    i = hashes.index(h)
                    item = items[i]  # type: ignore[index]
                    k = item[0]
                    if k is key or k == key:
                        return item[1]
                    i = flat_find_after(hashes, items, h, key, i)  # type: ignore[arg-type]
                    if i >= 0:
                        return items[i][1]  # type: ignore[index]
            else:
                i = flat_find(self._root, items, h, key)  # type: ignore[arg-type]
                if i >= 0:
                    return items[i][1]  # type: ignore[index]
        elif isinstance(self._root, dict):  # the table form
            value = table_find_hashed(self, h, key)
            if value is not TABLE_MISSING:
                return value
        else:
            entry = champ_find(self._root, h, key)
            if entry is not None:
                return entry[3]
        if type(self) is not frozendict:
            # Looked up as dict does (on the class's MRO, bound like any
            # special method), not as an attribute of the type, which a
            # metaclass controls.
            found, missing = lookup_special(self, "__missing__")
            if found:
                return missing(key)
        raise KeyError(key)

    def get(self, key: Any = _NOARG, default: Any = None, /, *extra: Any, **kwargs: Any) -> Any:
        """Return the value for ``key`` if present, else ``default``.

        Cost: O(log32 n).

        >>> frozendict(a=1).get('b', 0)
        0
        """
        if key is _NOARG or extra or kwargs:
            raise _call_error(
                frozendict, "get", 1, 2, 0 if key is _NOARG else 2 + len(extra), kwargs
            )
        try:
            h = hash(key) & KEY_MASK  # hashing_key_hash, inlined
        except TypeError as exc:
            unhashable(key, exc)
        if self._len <= FLAT_MAX:
            items = self._order
            if self._len > FLAT_SCAN_MAX:
                i = _indexed_find(self, h, key)
            elif FLAT_SCAN_IN_C:  # flat_find, inlined
                hashes: Any = self._root
                if h not in hashes:
                    return default
                i = hashes.index(h)
                item = items[i]  # type: ignore[index]
                k = item[0]
                if k is key or k == key:
                    return item[1]
                i = flat_find_after(hashes, items, h, key, i)  # type: ignore[arg-type]
            else:
                i = flat_find(self._root, items, h, key)  # type: ignore[arg-type]
            return default if i < 0 else items[i][1]  # type: ignore[index]
        if isinstance(self._root, dict):  # the table form
            value = table_find_hashed(self, h, key)
            return default if value is TABLE_MISSING else value
        entry = champ_find(self._root, h, key)
        return default if entry is None else entry[3]

    get.__signature__ = _signature_of(lambda self, key, default=None, /: None)  # type: ignore[attr-defined]

    def __contains__(self, key: object, /) -> bool:
        try:
            h = hash(key) & KEY_MASK  # hashing_key_hash, inlined
        except TypeError as exc:
            unhashable(key, exc)
        if self._len <= FLAT_MAX:
            if self._len > FLAT_SCAN_MAX:
                return _indexed_find(self, h, key) >= 0
            if FLAT_SCAN_IN_C:  # flat_find, inlined
                hashes: Any = self._root
                if h not in hashes:
                    return False
                i = hashes.index(h)
                k = self._order[i][0]  # type: ignore[index]
                if k is key or k == key:
                    return True
                return flat_find_after(hashes, self._order, h, key, i) >= 0  # type: ignore[arg-type]
            return flat_find(self._root, self._order, h, key) >= 0  # type: ignore[arg-type]
        if isinstance(self._root, dict):  # the table form
            return table_find_hashed(self, h, key) is not TABLE_MISSING
        return champ_find(self._root, h, key) is not None

    def __len__(self) -> int:
        return self._len

    __iter__ = method_named(view_mapping_iter, "frozendict.__iter__")
    __reversed__ = view_mapping_reversed
    keys = view_mapping_keys
    values = view_mapping_values
    items = view_mapping_items

    @property
    def _match_self(self) -> "frozendict":
        # ``case frozendict(x)`` binds x to the subject, as for dict(x).
        return self

    def copy(self, *args: Any, **kwargs: Any) -> "frozendict":
        """Return an exact frozendict with the same items (``self`` if exact).

        Cost: O(1).

        >>> m = frozendict(a=1)
        >>> m.copy() is m
        True
        >>> class Config(frozendict):
        ...     pass
        >>> type(Config(a=1).copy()).__name__
        'frozendict'
        """
        if args or kwargs:
            raise _call_error(frozendict, "copy", 0, 0, len(args), kwargs)
        return self._exact()

    copy.__signature__ = _signature_of(lambda self: None)  # type: ignore[attr-defined]

    @classmethod
    def fromkeys(
        cls, iterable: Iterable[Any] = _NOARG, value: Any = None, /, *extra: Any, **kwargs: Any
    ) -> "frozendict":
        """A new frozendict mapping every key of ``iterable`` to ``value``.

        On a subclass, as in PEP 814: ``cls()`` is called first, its items are
        kept, the keys added, and the result passed to ``cls(...)``.
        Cost: O(k log k).

        >>> frozendict.fromkeys('ab', 0)
        frozendict({'a': 0, 'b': 0})
        """
        if iterable is _NOARG or extra or kwargs:
            raise _call_error(
                cls, "fromkeys", 1, 2, 0 if iterable is _NOARG else 2 + len(extra), kwargs
            )
        if cls is frozendict:
            t = transient_init_table()  # a build from nothing
            for key in iterable:
                t._assoc(key, value)
            return t._publish(frozendict)  # type: ignore[no-any-return]
        start: Any = cls()
        if not issubclass(type(start), frozendict):
            for key in iterable:
                start[key] = value
            return start  # type: ignore[no-any-return]
        t = start._transient()
        for key in iterable:
            t._assoc(key, value)
        return cls(t._publish(frozendict))

    # --- equality and hashing --------------------------------------------------------

    def __eq__(self, other: object, /) -> Any:
        if issubclass(type(other), frozendict):  # (not isinstance: see mapping_is_anydict)
            that: Any = other
            if self is that:
                return True
            if self._len != that._len:
                return False
            if self._hash is not None and that._hash is not None and self._hash != that._hash:
                return False
            # (equal lengths: both flat, two tables, or tries (a table's
            # twin) walked)
            path = mapping_pair_path(self._len, mapping_form_of(self), that)
            if path == PAIR_FLAT:
                return flat_equal(self._root, self._order, that._root, that._order)  # type: ignore[arg-type]
            if path == PAIR_TABLES:
                return self._root == that._root
            return champ_equal(_key_trie(self), _key_trie(that))
        return mapping_equal(self, other)

    def __ne__(self, other: object, /) -> Any:
        # The base comparison, not self.__eq__: a subclass overriding only
        # __eq__ keeps dict's (and the C core's) inherited !=.
        result = frozendict.__eq__(self, other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        """``hash(frozenset(self.items()))``, computed once and cached.

        Cost: O(n) the first time, O(1) after; O(1) for a version derived from
        one whose hash is known.  Raises ``TypeError`` for an unhashable value.

        >>> m = frozendict(a=1, b=2)
        >>> hash(m) == hash(frozenset(m.items())) == hash(frozendict(b=2, a=1))
        True
        >>> {m: 'config v1'}[frozendict(b=2, a=1)]
        'config v1'
        """
        h = self._hash
        if h is None:
            acc = self._acc
            if acc is None:
                acc = 0
                try:
                    if self._len <= FLAT_MAX:
                        for khash, item in zip(self._root, self._order):  # type: ignore[arg-type]
                            acc ^= hashing_shuffle_bits(hashing_pair_hash(khash, item[1]))
                    elif isinstance(self._root, dict):  # (its keys' hashes run no Python code)
                        for key, value in self._root.items():
                            khash = hash(key) & KEY_MASK
                            acc ^= hashing_shuffle_bits(hashing_pair_hash(khash, value))
                    else:
                        for entry in champ_entries(self._root):
                            acc ^= hashing_shuffle_bits(hashing_pair_hash(entry[0], entry[3]))
                except RecursionError as exc:
                    if _ON_PYPY:  # no headroom there: a call in this clause fails
                        raise
                    _hash_recursion_error(exc)
                _set_acc(self, acc)
            h = hashing_finalize(acc, self._len)
            _set_hash(self, h)
        return h

    # --- repr, pickle, copy ----------------------------------------------------------

    def __repr__(self) -> str:
        # The real name, as the builtin prints tp_name (a metaclass can make
        # __name__ anything).
        return mapping_repr(self, type_name(type(self)))

    def __getnewargs__(self, *args: Any, **kwargs: Any) -> Tuple[Dict[Any, Any]]:
        if args or kwargs:
            raise _call_error(self, "__getnewargs__", 0, 0, len(args), kwargs)
        return (dict(self._items()),)

    def __reduce_ex__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) != 1 or kwargs:  # (the protocol: every one reduces alike)
            raise _call_error(self, "__reduce_ex__", 1, 1, len(args), kwargs)
        items = dict(self._items())
        if type(self) is frozendict:
            return (_common.restore, (items, "python"))
        return (_newobj, (type(self), items), _cold.subclass_state(self, frozendict))

    def __reduce__(self, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            raise _call_error(self, "__reduce__", 0, 0, len(args), kwargs)
        return self.__reduce_ex__(2)

    __getnewargs__.__signature__ = _signature_of(lambda self: None)  # type: ignore[attr-defined]
    __reduce_ex__.__signature__ = _signature_of(lambda self, protocol, /: None)  # type: ignore[attr-defined]
    __reduce__.__signature__ = _signature_of(lambda self: None)  # type: ignore[attr-defined]

    def __copy__(self) -> "frozendict":
        if type(self) is frozendict:
            return self
        return _cold.reconstruct(self, None)  # type: ignore[no-any-return]

    def __deepcopy__(self, memo: Dict[int, Any], /) -> "frozendict":
        return _cold.deepcopy(self, memo, frozendict)  # type: ignore[no-any-return]

    # --- derivations ------------------------------------------------------------------

    def set(self, key: Any, value: Any, /) -> "frozendict":
        """A version with ``key`` set to ``value``; ``self`` is unchanged.

        A replaced key keeps its position; a new key goes last.  Setting the
        very value already stored returns ``self``.  Cost: O(log n).

        >>> frozendict(a=1, b=2).set('a', 9)
        frozendict({'a': 9, 'b': 2})
        """
        return derive_with(frozendict, self, key, value)  # type: ignore[no-any-return]

    def delete(self, key: Any, /) -> "frozendict":
        """A version without ``key``; ``KeyError`` if it is absent.  Cost: O(log n).

        >>> frozendict(a=1, b=2).delete('a')
        frozendict({'b': 2})
        """
        return derive_without(frozendict, self, key, False)  # type: ignore[no-any-return]

    def discard(self, key: Any, /) -> "frozendict":
        """A version without ``key``, or ``self`` if it is absent.  Cost: O(log n).

        >>> frozendict(a=1).discard('z')
        frozendict({'a': 1})
        """
        return derive_without(frozendict, self, key, True)  # type: ignore[no-any-return]

    def __or__(self, other: Any, /) -> Any:
        """``self | other``: ``other``'s items win; new keys go last in its order.

        ``other`` must be a dict or a frozendict.  Cost: O(k log n), k = len(other);
        O(d log n) for a frozendict ``other`` d edits away from ``self`` (one
        derived from the other, or both from a common ancestor): the subtrees
        both share are skipped.

        >>> frozendict(a=1, b=2) | {'b': 3, 'c': 4}
        frozendict({'a': 1, 'b': 3, 'c': 4})
        """
        if not mapping_is_anydict(other):
            return _cold.or_foreign(self, other, True)
        if type(self) is frozendict:
            # The builtin's order: frozendict() | frozendict() is the right side.
            if not self._len and type(other) is frozendict:
                return other
            if (type(other) is dict and not dict.__len__(other)) or (
                type(other) is frozendict and not other._len
            ):
                return self
        # (A flat self's transient is in flat mode: the result is made on
        # the tuples while it has at most FLAT_MAX keys.)
        t = self._transient()
        start = (t.root, t.order)
        merge_into(t, other, None)  # as dict | other reads other
        if t.root is start[0] and t.order is start[1]:
            return self._exact()  # every value already there, by identity
        return t._publish(frozendict)

    def __ror__(self, other: Any, /) -> Any:
        """``other | self`` for a mapping ``other``: what ``other | dict(self)``
        gives (a ``dict``; an ``OrderedDict`` stays one), as with the builtin.

        >>> {'a': 1, 'b': 2} | frozendict(b=3)
        {'a': 1, 'b': 3}
        """
        cls = type(other)
        if cls is not dict:
            result = _cold.or_foreign(self, other, False)  # UserDict, defaultdict
            if result is not NotImplemented:
                return result
        if issubclass(cls, OrderedDict):
            # OrderedDict's | takes the builtin frozendict (3.15): the same here
            ordered = cls(other)
            ordered.update(self)
            return ordered
        if issubclass(cls, dict):
            result = dict.copy(other)
            result.update(self._items())
            return result
        if _builtin_frozendict is not None and issubclass(cls, _builtin_frozendict):
            # builtin | ours: the left side's type, as dict | frozendict is a dict
            return other | dict(self._items())
        if issubclass(cls, frozendict):
            # (only reached by a direct fd.__ror__(x) call) x | fd, with the
            # shortcuts only for an exact x, as the builtin's slot does
            return frozendict.__or__(other, self)
        if mapping_is_anydict(other):  # the other core's: a new one
            t = Transient()
            merge_into(t, other, None)
            merge_into(t, self, None)
            return t._publish(frozendict)
        return NotImplemented

    def __sub__(self, keys: Iterable[Any], /) -> "frozendict":
        """A version without the given keys (missing ones are ignored).

        Cost: O(k log n) for k keys; O(d log n) for a frozendict of keys d
        edits away from ``self`` (the subtrees both share are skipped).

        >>> frozendict(a=1, b=2, c=3) - {'a', 'z'}
        frozendict({'b': 2, 'c': 3})

        A str or bytes operand is refused (it would be read as its
        characters): write ``fd - {key}`` or ``fd.delete(key)``.
        """
        if issubclass(type(keys), _TEXT_TYPES):  # (the type itself: __class__ can lie)
            raise _refuse_text_operand(self, "-", keys)
        if _keys_from_storage(keys):
            path = mapping_pair_path(self._len, mapping_form_of(self), keys)
            if path == PAIR_ENTRIES:
                t = self._transient()
                for entry in mapping_entries_in_order(keys):
                    t._dissoc_hashed(entry[0], entry[2])
                return self._exact() if t.length == self._len else t._publish(frozendict)
            # What stays: the entries whose key is not in keys (in self's
            # order), listed by a walk that skips the subtrees both share.
            kept = self._keys_missing_from(keys, path)
            if len(kept) == self._len:
                return self._exact()
            return _from_entries([(e[0], e[2], e[3]) for e in kept])
        try:
            it = iter(keys)
        except TypeError:
            return NotImplemented
        t = self._transient()
        for key in it:
            t._dissoc(key)
        if t.length == self._len:
            return self._exact()
        return t._publish(frozendict)  # type: ignore[no-any-return]

    def __and__(self, keys: Iterable[Any], /) -> "frozendict":
        """A version with only the given keys, in ``self``'s order.

        Cost: O(k log n) for k keys; O(d log n) for a frozendict of keys d
        edits away from ``self`` (the subtrees both share are skipped).

        >>> frozendict(a=1, b=2, c=3) & ['c', 'a', 'z']
        frozendict({'a': 1, 'c': 3})

        A str or bytes operand is refused (it would be read as its
        characters): write ``fd & {key}``.
        """
        if issubclass(type(keys), _TEXT_TYPES):  # (the type itself: __class__ can lie)
            raise _refuse_text_operand(self, "&", keys)
        found: Dict[int, Entry] = {}
        if _keys_from_storage(keys):
            path = mapping_pair_path(self._len, mapping_form_of(self), keys)
            if path != PAIR_ENTRIES:
                # self without the entries whose key is not in keys, listed
                # by a walk that skips the subtrees both share.
                gone = self._keys_missing_from(keys, path)
                if not gone:
                    return self._exact()
                if self._len <= FLAT_MAX:  # what stays: the positions not gone
                    return _from_entries(_flat_entries_but(self, gone))
                t = self._transient()
                for lost in gone:
                    # located again in the transient's current trie (removals
                    # copy nodes), by key identity: no user code runs
                    stored = champ_find_stored(t.root, lost[0], lost[2], lost[1])
                    t._remove_entry(stored)  # type: ignore[arg-type]
                return t._publish(frozendict)  # type: ignore[no-any-return]
            for entry in mapping_entries_in_order(keys):
                mine = self._find_entry_hashed(entry[0], entry[2])
                if mine is not None:
                    found[mine[1]] = mine
        else:
            try:
                it = iter(keys)
            except TypeError:
                return NotImplemented
            for key in it:
                mine = frozendict._lookup(self, key)
                if mine is not None:
                    found[mine[1]] = mine
        if len(found) == self._len:
            return self._exact()
        t = Transient()
        for seq in sorted(found):
            entry = found[seq]
            t._put_new(entry[0], entry[2], entry[3])
        return t._publish(frozendict)  # type: ignore[no-any-return]

    def _keys_missing_from(self, other: "frozendict", path: int) -> List[Entry]:
        """Self's entries whose key ``other`` lacks, in self's order, on the
        path ``mapping_pair_path`` chose (``PAIR_FLAT`` or ``PAIR_WALK``):
        the ``removed`` of ``flat_diff`` or ``champ_diff`` (keys only, no
        value compared), which skip what both share.  O(d log n) for
        versions d edits apart."""
        missing: List[Entry] = []
        if path == PAIR_FLAT:
            flat_diff(self._root, self._order, other._root, other._order, (None, missing, None))  # type: ignore[arg-type]
        else:
            champ_diff(_key_trie(self), _key_trie(other), (None, missing, None))
        missing.sort(key=_seq_of)
        return missing

    def __replace__(self, /, **changes: Any) -> "frozendict":
        """``copy.replace(fd, **changes)`` (Python 3.13+): ``fd | changes``.

        >>> frozendict(a=1, b=2).__replace__(b=3)
        frozendict({'a': 1, 'b': 3})
        """
        return self | changes  # type: ignore[no-any-return]

    # --- nested paths -----------------------------------------------------------------

    def get_in(self, path: Iterable[Any], default: Any = None) -> Any:
        """The value at ``path`` (an iterable of keys) through nested frozendicts.

        ``default`` when a key along the path is missing; ``TypeError`` when
        the path goes through a value that is not a frozendict; ``ValueError``
        for an empty path.  Cost: O(d log n) for a path of d keys.

        >>> state = frozendict(user=frozendict(name='ada', tags=frozendict()))
        >>> state.get_in(['user', 'name'])
        'ada'
        >>> state.get_in(['user', 'email'], 'none')
        'none'
        """
        return path_get_in(self, path, default, frozendict)

    def set_in(self, path: Iterable[Any], value: Any, /) -> "frozendict":
        """A version with the value at ``path`` set to ``value``.

        Only the maps along the path are new; missing ones are created as
        empty frozendicts.  Setting the very value already there returns
        ``self``.  Errors as ``get_in``.  Cost: O(d log n).

        >>> state = frozendict(user=frozendict(name='ada'))
        >>> state.set_in(['user', 'name'], 'grace')
        frozendict({'user': frozendict({'name': 'grace'})})
        >>> state.set_in(['prefs', 'theme'], 'dark')['prefs']
        frozendict({'theme': 'dark'})
        """
        return path_set_in(self, path, value, frozendict)  # type: ignore[no-any-return]

    def update_in(self, path: Iterable[Any], fn: Any, /, *args: Any, **kwargs: Any) -> "frozendict":
        """A version with the value at ``path`` replaced by ``fn(old, *args, **kwargs)``.

        A missing key raises ``KeyError`` unless ``default=`` is given (as a
        keyword): then ``fn`` gets ``default`` and missing maps are created.
        When ``fn`` returns the very object it got, the result is ``self``.

        >>> state = frozendict(counts=frozendict(a=1))
        >>> state.update_in(['counts', 'a'], lambda n: n + 1)
        frozendict({'counts': frozendict({'a': 2})})
        >>> state.update_in(['counts', 'b'], lambda n: n + 1, default=0)
        frozendict({'counts': frozendict({'a': 1, 'b': 1})})
        """
        return path_update_in(self, path, fn, args, kwargs, frozendict)  # type: ignore[no-any-return]

    def delete_in(self, path: Iterable[Any], /) -> "frozendict":
        """A version without the key at the end of ``path``; ``KeyError`` if absent.

        >>> frozendict(user=frozendict(name='ada', age=36)).delete_in(['user', 'age'])
        frozendict({'user': frozendict({'name': 'ada'})})
        """
        return path_delete_in(self, path, frozendict)  # type: ignore[no-any-return]

    def evolve(self) -> Evolver:
        """A mutable ``Evolver`` starting from this version.  Cost: O(1).

        >>> e = frozendict(a=1).evolve()
        >>> e['b'] = 2
        >>> e.freeze()
        frozendict({'a': 1, 'b': 2})
        """
        return Evolver(self)

    def diff(self, other: Any, /, *, deep: bool = False) -> Diff:
        """What changed from ``self`` to ``other`` (any mapping).

        Returns ``Diff(added, removed, changed)``: frozendicts of the keys only
        in ``other`` (new values, in ``other``'s order), the keys only in
        ``self`` (old values, in ``self``'s order), and, for keys in both whose
        values differ, ``(old, new)`` pairs (in ``self``'s order).  With
        ``deep=True``, a change between two frozendicts is their own deep
        diff instead of the pair.
        Cost: O(d log n) for frozendicts d edits apart, O(n) otherwise.

        >>> frozendict(a=1, b=2).diff({'b': 3, 'c': 4})
        Diff(added=frozendict({'c': 4}), removed=frozendict({'a': 1}), changed=frozendict({'b': (2, 3)}))
        >>> old = frozendict(user=frozendict(name='ada', age=36))
        >>> old.diff(old.set_in(['user', 'age'], 37), deep=True).changed['user'].changed
        frozendict({'age': (36, 37)})
        """
        result = self._diff(other)
        return deepen_diff(result) if deep else result

    # --- positions ------------------------------------------------------------------

    def key_at(self, index: SupportsIndex, /) -> Any:
        """The key at position ``index`` in insertion order.

        Negative indices count from the end, as for a list; ``IndexError``
        when out of range, ``TypeError`` when ``index`` is not an integer.
        Cost: O(log n).

        >>> fd = frozendict(a=1, b=2, c=3)
        >>> fd.key_at(0), fd.key_at(-1)
        ('a', 'c')
        """
        return position_at(trie_parts(self)[1], index, "frozendict")[1][0]

    def value_at(self, index: SupportsIndex, /) -> Any:
        """The value at position ``index`` (as ``key_at``).  Cost: O(log n).

        >>> frozendict(a=1, b=2, c=3).value_at(1)
        2
        """
        return position_at(trie_parts(self)[1], index, "frozendict")[1][1]

    def item_at(self, index: SupportsIndex, /) -> Tuple[Any, Any]:
        """The ``(key, value)`` pair at position ``index`` (as ``key_at``).
        Cost: O(log n).

        >>> frozendict(a=1, b=2, c=3).item_at(-2)
        ('b', 2)
        """
        return position_at(trie_parts(self)[1], index, "frozendict")[1]

    def index(self, key: Any, /) -> int:
        """The position of ``key`` in insertion order; ``KeyError`` if absent.

        Cost: O(log n).

        >>> frozendict(a=1, b=2, c=3).index('c')
        2
        """
        return position_of(self, key)

    def slice(
        self, start: Optional[SupportsIndex] = None, stop: Optional[SupportsIndex] = None, /
    ) -> "frozendict":
        """A frozendict of the items at positions ``start`` to ``stop``.

        ``start`` and ``stop`` follow a list's slice rules (negative from the
        end, ``None`` for the ends, clamped to the length); the result keeps
        the order.  All of an exact frozendict is ``self``.  The result is
        built as ``frozendict(list(self.items())[start:stop])`` would be: each
        kept key is hashed once (its ``__hash__`` runs, if it has one in
        Python; a key whose hash changed since it was stored goes in under
        its new hash, as in a dict built from it) but never compared, the
        kept keys being distinct already.  An exception from a ``__hash__``
        propagates and no version is made.
        Cost: O(log n + k) for k items kept.

        >>> fd = frozendict(a=1, b=2, c=3, d=4)
        >>> fd.slice(1, 3)
        frozendict({'b': 2, 'c': 3})
        >>> fd.slice(-2)
        frozendict({'c': 3, 'd': 4})
        """
        return position_slice(self, start, stop)  # type: ignore[no-any-return]

    def merge_with(self, fn: Any, /, *others: Any) -> "frozendict":
        """A version with each of ``others`` (mappings) merged in, in turn.

        A key already present gets ``fn(old, new)``; the others are added,
        in the order ``|`` gives.  When nothing changes, the result is
        ``self``.  Cost: O(k log n) for k keys in ``others``, even for
        versions that share structure: ``fn`` is called for every key both
        hold, so no shared subtree can be skipped.

        >>> base = frozendict(retries=1, hosts=('a',))
        >>> base.merge_with(lambda old, new: old + new, {'hosts': ('b',), 'debug': True})
        frozendict({'retries': 1, 'hosts': ('a', 'b'), 'debug': True})
        """
        t = self._transient()
        for other in others:
            if issubclass(type(other), frozendict):
                # Read from its storage, as the merge reads one: its entries
                # in its order, with their stored hashes.
                for entry in mapping_entries_in_order(other):
                    _merge_entry_with(t, fn, entry[0], entry[2], entry[3])
                continue
            for key, value in _cold.merge_with_items(other):
                _merge_entry_with(t, fn, hashing_key_hash(key), key, value)
        if t.length == self._len and (
            flat_same_items(self._root, self._order, t.root, t.order)  # type: ignore[arg-type]
            if self._len <= FLAT_MAX
            else champ_identical(_key_trie(self), t.root)
        ):
            return self._exact()  # nothing changed (or changes that cancel out)
        return t._publish(frozendict)  # type: ignore[no-any-return]

    def _diff(self, other: Any) -> Diff:
        if issubclass(type(other), frozendict):
            added: List[Entry] = []
            removed: List[Entry] = []
            changed: List[Tuple[Entry, Entry]] = []
            out = (added, removed, changed)
            # (diff lists every entry of both sides that differs, so it walks
            # where another operation would read the operand's entries)
            if mapping_pair_path(self._len, mapping_form_of(self), other) == PAIR_FLAT:
                flat_diff(self._root, self._order, other._root, other._order, out)  # type: ignore[arg-type]
            else:
                champ_diff(_key_trie(self), _key_trie(other), out)
            added.sort(key=_seq_of)
            removed.sort(key=_seq_of)
            changed.sort(key=_first_seq_of)
            return Diff(
                _from_entries([(e[0], e[2], e[3]) for e in added]),
                _from_entries([(e[0], e[2], e[3]) for e in removed]),
                _from_entries([(a[0], a[2], (a[3], b[3])) for a, b in changed]),
            )
        return _cold.generic_diff(self, other, frozendict)

    # --- checking and debugging -----------------------------------------------------

    def _check(self) -> None:
        """Assert every invariant of this version (tests call it after edits)."""
        if self._hash is not None:
            assert self._acc is not None and hashing_finalize(self._acc, self._len) == self._hash
        if self._len <= FLAT_MAX:
            flat_check(self._root, self._order, self._len)
            index = getattr(self, "_hindex", None)
            if index is not None:
                assert self._len > FLAT_SCAN_MAX, "an index on a version of %d keys" % self._len
                if type(index) is int:
                    assert 0 <= index <= FLAT_INDEX_AFTER, "a lookup count of %d" % index
                else:
                    assert index == flat_index(self._root), "the index is not the hashes'"  # type: ignore[arg-type]
            return
        if isinstance(self._root, dict):
            table_check(self)
            if self._order is not None:  # its twin: the tries of a version
                twin = frozendict._from_parts(*trie_parts(self))
                frozendict._check(twin)
            return
        assert type(self._root) is list, "a version of %d keys is not in tries" % self._len
        count = champ_check(self._root)
        assert count == self._len, "key trie holds %d entries, len is %d" % (count, self._len)
        seqs = order_check(self._order)
        assert len(seqs) == self._len, "order trie holds %d items, len is %d" % (
            len(seqs),
            self._len,
        )
        assert not seqs or seqs[-1] < self._next_seq, "next_seq not above every seq"
        for entry in champ_entries(self._root):
            item = order_get(self._order, entry[1])
            assert item is not None, "entry %r has no item in the order trie" % (entry,)
            assert item[0] is entry[2] and item[1] is entry[3], (
                "tries disagree at seq %d" % entry[1]
            )

    def _node_ids(self) -> List[int]:
        """``id()`` of every key-trie and order-trie node of this version (of
        a flat version: its two tuples)."""
        if self._len <= FLAT_MAX:
            return [id(self._root), id(self._order)]
        out: List[int] = []
        if isinstance(self._root, dict):  # its table, then its twin's nodes once built
            out.append(id(self._root))
            if self._order is None:
                return out
            root, order = self._order
        else:
            root, order = self._root, self._order
        champ_node_ids(root, out)
        order_node_ids(order, out)
        return out

    def _dump(self) -> str:
        """A readable dump of both tries (of a flat version: its entries)."""
        if self._len <= FLAT_MAX:
            head = "frozendict len=%d flat" % self._len
            return "\n".join([head] + flat_dump(self._root, self._order))  # type: ignore[arg-type]
        if isinstance(self._root, dict):
            return table_dump(self)
        lines = ["frozendict len=%d next_seq=%d" % (self._len, self._next_seq), "key trie:"]
        lines += champ_dump(self._root, 1)
        lines.append("order trie:")
        lines += order_dump(self._order, 1)
        return "\n".join(lines)


frozendict.__dict__["fromkeys"].__func__.__signature__ = _signature_of(
    lambda cls, iterable, value=None, /: None
)
frozendict.__dict__["__class_getitem__"].__func__.__signature__ = _signature_of(
    lambda cls, item, /: None
)

# What the transient layer (and through it the Evolver) recognises and builds.
register_types(frozendict=frozendict)

# The fields are read-only from outside (``__setattr__`` refuses them); the core
# writes them through the slot descriptors.

_slot_setters: List[Any] = [frozendict.__dict__[name].__set__ for name in frozendict.__slots__]
_set_root, _set_order, _set_len, _set_next_seq, _set_hash, _set_acc, _set_hindex = _slot_setters
table_register(_set_order)  # (a table version keeps its twin in _order)


# A frozendict value's hash, once known, is trusted when a derivation replaces
# or deletes it (hashing.hashing_is_stable); read through the slot, never an
# attribute a subclass could shadow.
register_cached_hash(frozendict.__hash__, frozendict.__dict__["_hash"].__get__)


def _merge_entry_with(t: Transient, fn: Any, h: int, key: Any, value: Any) -> None:
    """One entry of ``merge_with``: ``key`` (hash ``h``) set to ``value``, or
    to ``fn(old, value)`` when ``t`` holds it."""
    found = t._find(h, key)
    t._assoc_hashed(h, key, value if found is None else fn(found[3], value))


def _keys_from_storage(keys: Any) -> "TypeGuard[frozendict]":
    """Whether ``-`` and ``&`` read their operand's keys from its storage, with
    the stored hashes: a frozendict of this core whose class iterates as
    frozendict does (one that overrides ``__iter__`` is iterated, as dict's
    operations iterate a dict subclass that overrides it)."""
    cls = type(keys)
    return cls is frozendict or (
        issubclass(cls, frozendict)
        and type_lookup(cls, "__iter__")[1] is frozendict.__dict__["__iter__"]
    )


def _key_trie(version: frozendict) -> BitmapNode:
    """A version's key trie; a flat version's built for the walk, a table
    version's twin's (built once)."""
    if version._len <= FLAT_MAX:
        return flat_key_trie(version._root, version._order)  # type: ignore[arg-type]
    root = version._root
    if isinstance(root, dict):
        return table_twin(version)[0]
    return root


def _first_seq_of(pair: Tuple[Entry, Entry]) -> int:
    return pair[0][1]


def _indexed_find(version: frozendict, h: int, key: Any) -> int:
    """``flat_find`` in a flat version of more than FLAT_SCAN_MAX keys.

    Its first FLAT_INDEX_AFTER lookups scan, counted in the slot ``_hindex``
    (0 from ``_from_parts``: reading an unset slot raises, ~1 us);
    the next one builds the version's index ``{stored hash: first position}``
    into that slot (once: the version never changes), and every later lookup
    takes its first candidate from it, then makes the same user calls in the
    same order as the scan.  So a version read a few times (a reducer's
    intermediate states) pays one slot write a lookup and keeps no index; a
    version read often (a shared configuration) finds any key in O(1).
    (Setting the slot in ``_from_parts``, or passing an index on to a version
    made by a value change, cost every set 7-12%.)"""
    index = version._hindex
    if type(index) is int:
        if index < FLAT_INDEX_AFTER:
            _set_hindex(version, index + 1)
            return flat_find(version._root, version._order, h, key)  # type: ignore[arg-type]
        index = flat_index(version._root)  # type: ignore[arg-type]
        _set_hindex(version, index)
    i = index.get(h, -1)  # type: ignore[union-attr]
    if i < 0:
        return -1
    items: Any = version._order
    k = items[i][0]
    if k is key or k == key:
        return i
    return flat_find_after(version._root, items, h, key, i)  # type: ignore[arg-type]


def _flat_from_dict(cls: Any, source: Dict[Any, Any]) -> Any:
    """A flat ``cls`` of a dict's (at most FLAT_MAX) items: its keys are
    known to be distinct, so each is hashed once and never compared."""
    items = tuple(source.items())
    hashes: List[int] = []
    for item in items:
        hashes.append(hashing_key_hash(item[0]))  # may raise: nothing built yet
    return cls._from_parts(tuple(hashes), items, len(items), len(items), None)


def _flat_entries_but(version: frozendict, gone: List[Entry]) -> List[Tuple[int, Any, Any]]:
    """A flat version's ``(hash, key, value)`` triples in order, but those at
    the positions of ``gone`` (its entries, as ``flat_entry`` makes them).
    (Loops, not comprehensions: see ``flat_promote``.)"""
    lost = set()
    for entry in gone:
        lost.add(entry[1])
    kept: List[Tuple[int, Any, Any]] = []
    for i, item in enumerate(version._order):  # type: ignore[arg-type]
        if i not in lost:
            kept.append((version._root[i], item[0], item[1]))
    return kept


def _from_entries(triples: List[Tuple[int, Any, Any]]) -> frozendict:
    """A frozendict of distinct keys with known hashes, in the order given."""
    if len(triples) <= FLAT_MAX:
        hashes: List[int] = []
        items: List[Tuple[Any, Any]] = []
        for h, key, value in triples:
            hashes.append(h)
            items.append((key, value))
        return frozendict._from_parts(tuple(hashes), tuple(items), len(items), len(items), None)
    t = Transient()
    for h, key, value in triples:
        t._put_new(h, key, value)
    return t._publish(frozendict)  # type: ignore[no-any-return]
