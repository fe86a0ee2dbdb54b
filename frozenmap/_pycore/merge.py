"""The one merge: ``dict(arg, **kwargs)``'s argument read into a builder.

The constructor, ``|``, ``|=`` and ``Evolver.update`` all read their operand
here, as ``dict.update`` does (CPython's ``dict_merge`` and
``PyDict_MergeFromSeq2``).  ``merge_arg`` picks the path by the operand's
real type, in ``dict_merge``'s order:

- a frozendict of this core: ``merge_version``, from its own storage, with
  its stored hashes (the changed entries only, found by walking both tries);
- a dict, or another core's or the builtin frozendict, that does not
  override ``__iter__``: from its own storage (``merge_bulk_load`` for an
  exact dict into an empty builder);
- the *keys path* (``merge_keys``): any other object with ``keys``, read
  through ``keys()`` and ``obj[key]``;
- the *pairs path* (``merge_pairs``): anything else, an iterable of pairs,
  with ``dict``'s errors.

Layers: above ``transient`` and ``reads``; below the public types.

Mirrors ``frozenmap/_ccore/merge.c`` function by function.
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional, Tuple

from .._typeinfo import type_fullname, type_lookup, type_name
from .champ import Entry, champ_diff
from .reads import (
    FORM_FLAT,
    FORM_TRIES,
    PAIR_WALK,
    frozendict_type,
    mapping_entries_in_order,
    mapping_foreign_base,
    mapping_pair_path,
)
from .table import table_keys_are_pure
from .transient import Transient, _seq_of, load_items, trie_parts

__all__ = ["merge_into"]

_MISSING: Any = object()


# --- dict's words ------------------------------------------------------------------


def merge_default_iter(cls: type, base: type) -> bool:
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


def merge_sequence_exc(index: int, element: Any) -> TypeError:
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


def merge_keys_not_iterable(cls: type, keys_type: type) -> str:
    """dict's message when ``keys()`` returns something not iterable."""
    if sys.implementation.name == "pypy":  # PyPy's dict iterates it as it is
        return "'%s' object is not iterable" % type_name(keys_type)
    if sys.version_info >= (3, 15):
        return "%s.keys() must return an iterable, not %s" % (
            type_fullname(cls),
            type_fullname(keys_type),
        )
    return "%s.keys() returned a non-iterable (type %s)" % (type_name(cls), type_name(keys_type))


# --- the merge -------------------------------------------------------------------


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
    merge_arg(t, arg)
    if kwargs:
        for key, value in kwargs.items():
            t._assoc(key, value)


def merge_arg(t: Transient, arg: Any) -> None:
    """Add ``arg`` to ``t`` as ``dict.update(arg)`` reads it: the path chosen
    by its real type (see the module docstring)."""
    cls = type(arg)
    if issubclass(cls, frozendict_type()):
        merge_version(t, arg)
    elif issubclass(cls, dict) and merge_default_iter(cls, dict):
        if not t.length and cls is dict:
            merge_bulk_load(t, arg)
        else:
            merge_items_of(t, dict, arg)
    elif (foreign := mapping_foreign_base(cls)) is not None and merge_default_iter(cls, foreign):
        merge_items_of(t, foreign, arg)
    elif (keys_method := getattr(arg, "keys", _MISSING)) is not _MISSING:
        merge_keys(t, arg, keys_method)
    else:
        merge_pairs(t, arg)


def merge_items_of(t: Transient, base: type, arg: Any) -> None:
    """``base.items(arg)`` into ``t``: ``arg`` read from its base type's own
    storage, as ``dict_merge`` reads a dict (never a subclass's ``items``,
    ``keys`` or ``__getitem__``)."""
    for key, value in base.items(arg):  # type: ignore[attr-defined]
        t._assoc(key, value)


def merge_keys(t: Transient, arg: Any, keys_method: Any) -> None:
    """The keys path: ``for key in arg.keys(): t[key] = arg[key]``, with
    ``keys_method`` the bound ``arg.keys`` (as ``dict_merge`` reads a mapping
    that is not a dict)."""
    keys = keys_method()
    # As dict_merge (PyMapping_Keys): an exact list is walked as it is, so
    # keys that ``arg[key]`` appends are read too; anything else is read
    # to the end first, then the lookups.
    if type(keys) is not list:
        try:
            it = iter(keys)
        except TypeError:
            raise TypeError(merge_keys_not_iterable(type(arg), type(keys))) from None
        keys = list(it)
    for key in keys:
        t._assoc(key, arg[key])


def merge_pairs(t: Transient, arg: Any) -> None:
    """The pairs path: ``for key, value in arg: t[key] = value``, each element
    a pair, with dict's errors (``PyDict_MergeFromSeq2``)."""
    for index, element in enumerate(arg):
        if type(element) is not tuple:
            try:
                element = tuple(iter(element))
            except TypeError:
                raise merge_sequence_exc(index, element) from None
        if len(element) != 2:
            raise ValueError(
                "dictionary update sequence element #%d has length %d; 2 is required"
                % (index, len(element))
            )
        t._assoc(element[0], element[1])


def merge_version(t: Transient, source: Any) -> None:
    """Add a frozendict's items in its order, with their stored hashes: stored
    keys are never hashed again.

    The path is ``mapping_pair_path``'s.  ``PAIR_FLAT`` and ``PAIR_ENTRIES``
    apply every entry of ``source`` in its order (those that change nothing
    leave ``t`` as it was).  ``PAIR_WALK`` applies only the entries that
    change something: those whose key ``t`` lacks and those bringing another
    value object (``champ_diff`` by identity, which skips the subtrees both
    tries share: the same node object holds the very same key and value
    objects, which applying would leave as they are); a builder in flat mode
    is promoted first (``source`` alone outgrows it), and an empty builder
    takes the source's tries in O(1).  They are applied in
    ``source``'s order, one by one as before, so the result (items, order,
    which key object stays, the hash accumulator) is what applying every
    entry gives, in O(d log n) for versions d edits apart.
    """
    if type(t.root) is dict:
        if type(source._root) is dict and not t.length:
            # A build from a table version: a copy of its dict.
            t.root = dict(source._root)
            t.length = len(t.root)
            return
        t._table_leave()
    merge_version_tries(t, source)


def merge_version_tries(t: Transient, source: Any) -> None:
    """``merge_version`` once ``t`` has left table mode: ``source`` read
    through its tries (a table version's twin) on ``mapping_pair_path``'s
    path."""
    flat = type(t.root) is tuple
    path = mapping_pair_path(t.length, FORM_FLAT if flat else FORM_TRIES, source)
    if path != PAIR_WALK:
        entries = mapping_entries_in_order(source)
    elif not t.length:
        # An empty builder takes the source's tries (what applying every
        # entry in order would build), in O(1).
        t._adopt(source)
        return
    else:
        if flat:
            t._promote()
        added: List[Entry] = []
        changed: List[Tuple[Entry, Entry]] = []
        # t.root is not edited meanwhile: a private builder, or an Evolver's
        # update(), which sealed it and refuses edits from inside.
        champ_diff(t.root, trie_parts(source)[0], (added, None, changed), True)
        entries = added
        for pair in changed:
            entries.append(pair[1])
        entries.sort(key=_seq_of)
    for entry in entries:
        t._assoc_hashed(entry[0], entry[2], entry[3])


def merge_bulk_load(t: Transient, source: Dict[Any, Any]) -> None:
    """Fill an empty transient from a dict, whose keys are known to be distinct.

    A build from nothing (table mode) keeps a copy of the dict when its keys
    hash without Python code; else the order trie is built bottom-up in O(n)
    and the key trie top-down (``champ_build``), with no lookups and no
    ``__eq__`` calls.
    """
    if type(t.root) is dict:
        table = dict(source)
        if table_keys_are_pure(table):
            t.root = table
            t.length = len(table)
            return
        t._table_leave()
    load_items(t, list(source.items()))
