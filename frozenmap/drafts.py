"""Drafts: change nested frozen state by writing ordinary mutations.

``produce(base, recipe)`` calls ``recipe(draft)`` with a *draft* of ``base``
(a frozendict or a tuple): a stand-in that reads like ``base`` and accepts
every ``dict`` (or ``list``) mutation.  When the recipe returns, the changes
become a new frozen state that shares every untouched subtree with ``base``;
``produce_with_patches`` also returns the JSON Patches (RFC 6902) that turn
``base`` into the new state and back.  Outside its recipe a draft is
*revoked*: any use raises ``RuntimeError``.

How it stays cheap and correct:

- **Lazy drafts.**  A nested exact frozendict or tuple gets its draft when the
  recipe reads it, and keeps it (the same node read twice is the same draft);
  a subtree never read costs nothing.  A read allocates nothing but the new
  draft.
- **A frozendict draft** (``DictDraft``) holds its contents in ``_map``: the
  base frozendict until the first write, one derived frozendict after it (a
  single ``set`` is the cheapest edit; ``_first`` remembers it), an
  ``Evolver`` of the base from the second write on, with the first write made
  again (cheaper per edit, and edits that cancel out give the base back).
  A nested draft is not stored in the map:
  the map holds the draft's *original* in its place and ``_children`` maps the
  key to the draft.  So a draft that is only read changes nothing, and
  finishing writes a child's final value only where that child changed.
- **A tuple draft** (``ListDraft``) reads its base tuple until the first
  write, then keeps a Python list ``_items`` of plain values and drafts.
- **Finishing** walks the drafts the recipe read, from the root.  Once a
  draft has been assigned somewhere it may stand in several places (or inside
  itself), so the finish memoizes by identity: a draft assigned in two places
  becomes one frozen object, the same in both, and a draft inside itself is a
  ``ValueError``.  A node whose children did not change returns its map (or
  base) itself, so untouched subtrees are the identical objects, and no
  change at all returns ``base``.
- **Assigned values are deep-frozen** as ``freeze`` does it, except that a
  draft inside the value stays a draft (it is finished with the state): a
  plain container holding drafts becomes a fresh draft over the frozen rest.
- **Patches are recorded from the operations**, not by diffing states: a
  frozendict draft's one change (``_first``) says its operation, and from
  its second change on the draft notes which keys it wrote (kept in place,
  or removed and maybe re-added at the end, which is what ``dict`` order
  does); a tuple draft keeps a log of positional edits.  At the finish each changed draft
  writes its operations along the path that reaches it; a list whose log is
  longer than the list (or that was sorted, reversed or cleared) becomes one
  ``replace``.  Inverse patches are the operations undone in reverse order.
- **Who may use a draft.**  The thread running ``produce`` only, while its
  recipe runs: another thread gets ``RuntimeError`` (the draft is never
  half-changed by two threads), and so does a change made from inside another
  change of the same ``produce`` (a key's ``__eq__`` or a finalizer editing
  while a write is under way) or after the recipe returned.

Built on frozenmap's public API; the drafts serve both cores (a draft builds
new frozendicts of its base's type).  With the C core loaded, ``_Scope``,
``DictDraft`` and ``ListDraft`` are built on its draft bases
(frozenmap/_ccore/drafts.c), which hold their fields and run the hot paths of
a C-core state in C: the scope and root, ``draft[key]`` and a map's first
change (``draft[key] = scalar``), and the finish of the map drafts with their
patches.  Every other case calls the Python here, which stays the whole
implementation: a state of the pure core runs it alone, with the same results.
"""

from __future__ import annotations

import copy as _copy
import operator
import sys
from _thread import get_ident
from collections.abc import (
    ItemsView,
    KeysView,
    Mapping,
    MutableMapping,
    MutableSequence,
    ValuesView,
)
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    FrozenSet,
    Iterable,
    Iterator,
    List,
    NoReturn,
    Optional,
    Set,
    Tuple,
    TypeVar,
    Union,
    overload,
)

from . import _core, _freeze, _registry
from . import jsonpatch as _jsonpatch

if TYPE_CHECKING:
    from typing_extensions import TypeGuard

    from . import frozendict

__all__ = [
    "produce",
    "produce_with_patches",
    "current",
    "original",
    "is_draft",
    "DictDraft",
    "ListDraft",
]


def _c_bases() -> Any:
    """The C core's module when it is the core loaded (its draft bases then
    carry the hot paths: see frozenmap/_ccore/drafts.c), else None."""
    module = sys.modules.get("frozenmap._ccore._cfrozenmap")
    if module is None or getattr(module, "frozendict", None) is not _core.frozendict:
        return None
    return module if hasattr(module, "_DictDraft") else None


_C = _c_bases()
#: The C core's frozendict when the drafts have their C paths: a state of
#: that type (or a tuple) runs them.
_C_FROZENDICT: Any = None if _C is None else _C.frozendict

_K = TypeVar("_K")
_V = TypeVar("_V")
_T = TypeVar("_T")
_State = TypeVar("_State")
_TupleT = TypeVar("_TupleT", bound=Tuple[Any, ...])

Patch = List[Dict[str, Any]]

_MISSING: Any = object()
_IN_PROGRESS: Any = object()
#: ``_touched`` / ``_log`` of a node that is patched as one ``replace``.
_WHOLE: Any = object()
# A key's mark in ``_touched``: set where it stands, or removed (and maybe
# added again, at the end).
_KEPT = 0
_MOVED = 1
# Positional edits in a ListDraft's log: (kind, index[, value]).
_ADD = 0
_REMOVE = 1
_REPLACE = 2

#: Immutable values stored as they are, with no call to ``freeze``.
_SCALARS: FrozenSet[type] = frozenset({str, int, float, bool, type(None), bytes, complex})


# --- who may use a draft ----------------------------------------------------------


class _PyScopeFields:
    """The fields of a ``_Scope`` (the C core's ``_DraftScope`` holds them when it is loaded)."""

    __slots__ = ("reader", "writer", "edits", "recording", "shared", "frozendict")
    reader: Optional[int]
    writer: Optional[int]
    edits: int
    recording: bool
    shared: bool
    frozendict: Any


class _PyDictDraftFields:
    """The fields of a ``DictDraft`` (the C core's ``_DictDraft`` when loaded)."""

    __slots__ = ("_scope", "_base", "_map", "_children", "_touched", "_first")
    _scope: Any
    _base: Any
    _map: Any
    _children: Any
    _touched: Any
    _first: Any


class _PyListDraftFields:
    """The fields of a ``ListDraft`` (the C core's ``_ListDraft`` when loaded)."""

    __slots__ = ("_scope", "_base", "_items", "_children", "_log")
    _scope: Any
    _base: Any
    _items: Any
    _children: Any
    _log: Any


if TYPE_CHECKING or _C is None:
    _ScopeFields = _PyScopeFields
    _DictDraftFields = _PyDictDraftFields
    _ListDraftFields = _PyListDraftFields
else:
    _ScopeFields = _C._DraftScope
    _DictDraftFields = _C._DictDraft
    _ListDraftFields = _C._ListDraft


class _Scope(_ScopeFields):
    """One ``produce`` call, shared by all its drafts (made with the root
    draft: ``_new_root``, or the C core's ``_root``).

    ``reader`` is the thread that may read the drafts (None once revoked);
    ``writer`` the thread that may change them (None while a change is
    under way or the finish runs).  Each draft operation compares one of them
    with the calling thread's id: one check covers revocation, other threads
    and re-entry.  ``edits`` counts the changes made through the drafts (the
    rule on the recipe's return value); ``recording`` is True in
    ``produce_with_patches`` (drafts note what they change); ``shared`` says
    a draft was stored somewhere (so it may stand in several places, or
    inside itself: only then does the finish need a memo); ``frozendict`` is
    the type plain dicts assigned become.
    """

    __slots__ = ()
    reader: Optional[int]
    writer: Optional[int]
    edits: int
    recording: bool
    shared: bool
    frozendict: Any

    def refuse(self, draft: Any) -> NoReturn:
        """Raise the ``RuntimeError`` that says why ``draft`` cannot be used now."""
        name = type(draft).__name__
        if self.reader is None:
            raise RuntimeError(
                "this %s is revoked: its produce() has returned, and a draft is valid only "
                "inside its recipe (keep current(draft), a frozen snapshot, to use its "
                "contents later)" % name
            )
        if self.reader != get_ident():
            raise RuntimeError(
                "this %s belongs to the thread running its produce(); another thread cannot "
                "use it (pass current(draft), a frozen snapshot, to other threads)" % name
            )
        raise RuntimeError(
            "this %s cannot be changed now: a change of the same produce() is under way "
            "(the change runs a key's __eq__ or __hash__, or a finalizer) or its recipe "
            "has returned" % name
        )


def _begin(scope: _Scope, draft: Any) -> int:
    """Start a change of ``draft``: check the caller may, mark the scope busy."""
    ident = get_ident()
    if scope.writer != ident:
        scope.refuse(draft)
    scope.edits += 1
    scope.writer = None
    return ident


# --- the nodes a draft is made for ------------------------------------------------

#: type -> the function that drafts a node of that exact type.
_DRAFTABLE: Dict[type, Callable[[_Scope, Any], Any]] = {}
#: frozenmap's exact frozendict types (each core's).
_FROZENDICT_TYPES: FrozenSet[type] = frozenset()
_synced_types: Any = None


def _sync_types() -> None:
    """Know every core's frozendict type loaded so far (a core registers
    its type when it is imported)."""
    global _FROZENDICT_TYPES, _synced_types
    own = _registry.own_types
    if own is not _synced_types:
        for cls in own:
            _DRAFTABLE[cls] = _new_dict_draft
            _ROOTS[cls] = _C_START if cls is _C_FROZENDICT else _PY_START
        _FROZENDICT_TYPES = frozenset(own)
        _synced_types = own


_object_new = object.__new__


def _new_dict_draft(scope: _Scope, base: Any) -> "DictDraft[Any, Any]":
    draft: DictDraft[Any, Any] = _object_new(DictDraft)
    draft._scope = scope
    draft._base = base
    draft._map = base
    draft._children = None
    draft._touched = None
    return draft


def _new_list_draft(scope: _Scope, base: Any) -> "ListDraft[Any]":
    draft: ListDraft[Any] = _object_new(ListDraft)
    draft._scope = scope
    draft._base = base
    draft._items = None
    draft._children = None
    draft._log = None
    return draft


_DRAFTABLE[tuple] = _new_list_draft


def _new_root(base: Any, recording: bool) -> Any:
    """The root draft of a new ``produce`` of ``base`` (an exact frozendict
    or tuple), with its scope (``root._scope``)."""
    scope = _object_new(_Scope)
    scope.reader = scope.writer = get_ident()
    scope.edits = 0
    scope.recording = recording
    scope.shared = False
    if type(base) is tuple:
        scope.frozendict = _core.frozendict
        return _new_list_draft(scope, base)
    scope.frozendict = type(base)
    return _new_dict_draft(scope, base)


#: type of a base -> (the function making its root draft, the finish of its
#: drafts, the end of its produce_with_patches): a state of the C core's
#: frozendict (and a tuple, with the C core loaded) has them in C
#: (frozenmap/_ccore/drafts.c), the others in Python.
_ROOTS: Dict[type, Tuple[Any, Any, Any]] = {}


def _finisher(scope: _Scope) -> Callable[[Any, Any, Optional[str]], Any]:
    """The finish of ``scope``'s drafts: ``_finish``, or the C core's."""
    return _C_START[1] if scope.frozendict is _C_FROZENDICT else _finish


def _detached(scope: _Scope, value: Any) -> Any:
    """``value`` as a read returns it: a new draft for a nested node."""
    make = _DRAFTABLE.get(type(value))
    return value if make is None else make(scope, value)


# --- assigned values: deep-frozen, drafts kept ---------------------------------


def _adopt(scope: _Scope, value: Any) -> Any:
    """``value`` ready to be stored in ``scope``'s state.

    Deep-frozen with ``freeze``'s rules, except that a draft of this scope
    stays a draft (finished with the state), and a dict, list, tuple or
    frozendict holding one becomes a fresh draft over the frozen rest.  A
    draft of another ``produce`` is stored as its frozen snapshot.
    """
    cls = type(value)
    if cls in _SCALARS:
        return value
    if cls is DictDraft or cls is ListDraft:
        if value._scope is scope:
            scope.shared = True
            return value
        return current(value)
    if cls is dict or (isinstance(value, dict) and cls not in _FROZENDICT_TYPES):
        return _adopt_pairs(scope, value.items())
    if cls is list:
        return _adopt_items(scope, value, None)
    if cls is tuple:
        return _adopt_items(scope, value, value)
    if cls in _FROZENDICT_TYPES:
        return _adopt_frozendict(scope, value)
    return _freeze.freeze(value)


def _adopt_pairs(scope: _Scope, pairs: Iterable[Tuple[Any, Any]]) -> Any:
    frozen_pairs = []
    children = None
    for key, item in pairs:
        if type(item) not in _SCALARS:
            item = _adopt(scope, item)
            if type(item) in _DRAFT_TYPES:
                if children is None:
                    children = {}
                children[key] = item
                item = item._base
        frozen_pairs.append((key, item))
    frozen = scope.frozendict(frozen_pairs)
    if children is None:
        return frozen
    fresh = _new_dict_draft(scope, frozen)
    fresh._children = children
    return fresh


def _adopt_items(scope: _Scope, items: Iterable[Any], unchanged: Optional[Tuple[Any, ...]]) -> Any:
    out = []
    drafts = False
    for item in items:
        if type(item) not in _SCALARS:
            item = _adopt(scope, item)
            drafts = drafts or type(item) in _DRAFT_TYPES
        out.append(item)
    if not drafts:
        if unchanged is not None and all(map(operator.is_, out, unchanged)):
            return unchanged
        return tuple(out)
    fresh = _new_list_draft(scope, tuple(_placeholder(item) for item in out))
    fresh._items = out
    return fresh


def _adopt_frozendict(scope: _Scope, value: Any) -> Any:
    changes = []
    children = None
    for key, item in value.items():
        if type(item) in _SCALARS:
            continue
        new = _adopt(scope, item)
        if type(new) in _DRAFT_TYPES:
            if children is None:
                children = {}
            children[key] = new
            new = new._base
        if new is not item:
            changes.append((key, new))
    frozen = value
    if changes:
        evolver = value.evolve()
        for key, new in changes:
            evolver[key] = new
        frozen = evolver.freeze()
    if children is None:
        return frozen
    fresh = _new_dict_draft(scope, frozen)
    fresh._children = children
    return fresh


def _placeholder(value: Any) -> Any:
    """What a node holds in the place of ``value``: a draft's original."""
    return value._base if type(value) in _DRAFT_TYPES else value


# --- finishing, and the patches written on the way ---------------------------------


class _Memo(Dict[int, Any]):
    """``id(draft) -> final value`` for one finish, and the patches it writes
    (``forward``, and ``undo``: for each forward operation the one undoing it,
    in the same order; the caller reverses it at the end)."""

    __slots__ = ("forward", "undo")
    forward: Patch
    undo: Patch


def _finish(draft: Any, memo: Any, path: Optional[str] = None) -> Any:
    """The frozen value of ``draft`` now (memoized in ``memo`` by identity;
    ``memo`` is None in a ``produce`` whose drafts each stand in one place,
    see ``_Scope.shared``).

    With ``path`` (produce_with_patches), ``draft`` stands in place at
    ``path`` (where its original is in the base): the operations of the keys
    it changed, and of the children it holds in place, are written too.
    """
    if type(draft) is not DictDraft:
        value = _finish_list(draft, memo)
        if path is not None:
            _emit_list(draft, path, memo)
        return value
    value = draft._map
    if type(value) not in _FROZENDICT_TYPES:
        value = value.freeze()  # an Evolver: O(1), the same object until it changes
    children = draft._children
    touched = draft._touched
    if touched is None and path is not None and type(draft._map) in _FROZENDICT_TYPES:
        if draft._map is not draft._base:  # exactly one change: _first
            touched = _first_change(draft)
    if children:  # (a draft without children needs no memo: the value is the same each time)
        if memo is not None:
            ident = id(draft)
            done = memo.get(ident, _MISSING)
            if done is not _MISSING:
                if done is _IN_PROGRESS:
                    raise _cycle()
                if path is not None:  # finished before, where it was not in place
                    _emit(draft, path, memo)
                return done
            memo[ident] = _IN_PROGRESS
        single = len(children) == 1  # (then its change is made at once, with no list)
        changes: List[Tuple[Any, Any]] = []
        # (a copy: a key's __eq__ run below may read the draft and add a child)
        for key, child in list(children.items()):
            if type(child) is DictDraft and not child._children:
                # A map without children, as _finish does it but without the
                # call: the most common node, a leaf map the recipe read.
                final = child._map
                if type(final) not in _FROZENDICT_TYPES:
                    final = final.freeze()
                if path is not None and final is not child._base:
                    base = child._base
                    if child._touched is None:  # one change: _first
                        written, stored = child._first
                        if (
                            stored is not _MISSING
                            and len(final) == len(base)
                            and (touched is None or not _written(touched, key))
                        ):  # one key set in place, the map in place: a replace
                            new, old = final[written], base[written]
                            if new is not old:
                                step = key
                                if type(step) is not str or "~" in step or "/" in step:
                                    step = _token(step)
                                if type(written) is not str or "~" in written or "/" in written:
                                    written = _token(written)
                                where = f"{path}/{step}/{written}"
                                memo.forward.append({"op": "replace", "path": where, "value": new})
                                memo.undo.append({"op": "replace", "path": where, "value": old})
                            if single:
                                value = value.set(key, final)
                            else:
                                changes.append((key, final))
                            continue
                    if touched is None or not _written(touched, key):
                        _finish(
                            child, memo, _pointer(path, key)
                        )  # (the same value, and its operations)
            else:
                where = None
                if path is not None and (touched is None or not _written(touched, key)):
                    if type(key) is str and "~" not in key and "/" not in key:
                        where = f"{path}/{key}"  # (_pointer, without the call)
                    else:
                        where = _pointer(path, key)
                final = _finish(child, memo, where)
            if final is not child._base:
                if single:
                    value = value.set(key, final)
                else:
                    changes.append((key, final))
        if len(changes) == 1:
            value = value.set(*changes[0])
        elif changes:
            evolver = value.evolve()
            for key, final in changes:
                evolver[key] = final
            value = evolver.freeze()
        if memo is not None:
            memo[ident] = value
    if path is None or not touched:
        return value
    return _emit_keys(draft, value, path, memo, touched)


def _emit_keys(draft: Any, value: Any, path: str, memo: _Memo, touched: Any) -> Any:
    """Write the operations of the keys ``draft`` changed (``touched``, see
    ``_mark``), ``value`` being its final map, in place at ``path``; return
    ``value``.  The end of ``_finish``, the C core's too."""
    base = draft._base
    if value is base:
        return value
    forward, undo = memo.forward, memo.undo
    if touched is _WHOLE:
        forward.append({"op": "replace", "path": path, "value": value})
        undo.append({"op": "replace", "path": path, "value": base})
        return value
    # In the order of the writes: a key set in place is a replace; a key
    # removed (and maybe added again, at the end) a remove and an add, so
    # the adds append the keys in the order dict gives them.
    for key, mark in (touched,) if type(touched) is tuple else touched.items():
        if type(key) is str and "~" not in key and "/" not in key:
            where = f"{path}/{key}"
        else:
            where = f"{path}/{_token(key)}"
        if mark == _KEPT:
            new, old = value[key], base[key]
            if new is not old:
                forward.append({"op": "replace", "path": where, "value": new})
                undo.append({"op": "replace", "path": where, "value": old})
            continue
        old = base.get(key, _MISSING)
        if old is not _MISSING:
            forward.append({"op": "remove", "path": where})
            undo.append({"op": "add", "path": where, "value": old})
        new = value.get(key, _MISSING)
        if new is not _MISSING:
            forward.append({"op": "add", "path": where, "value": new})
            undo.append({"op": "remove", "path": where})
    return value


def _cycle() -> ValueError:
    return ValueError(
        "a draft contains itself (it was assigned inside its own subtree): frozen data "
        "cannot hold a cycle"
    )


def _finish_list(draft: "ListDraft[Any]", memo: Any) -> Any:
    if memo is not None:
        ident = id(draft)
        done = memo.get(ident, _MISSING)
        if done is not _MISSING:
            if done is _IN_PROGRESS:
                raise _cycle()
            return done
        memo[ident] = _IN_PROGRESS
    base = draft._base
    items = draft._items
    value = base
    if items is None:
        changes = []
        for index, child in list((draft._children or {}).items()):
            final = _finish(child, memo)
            if final is not child._base:
                changes.append((index, final))
        if changes:
            out = list(base)
            for index, final in changes:
                out[index] = final
            value = tuple(out)
    else:
        out = [_finish(item, memo) if type(item) in _DRAFT_TYPES else item for item in items]
        if len(out) != len(base) or not all(map(operator.is_, out, base)):
            value = tuple(out)
    if memo is not None:
        memo[ident] = value
    return value


def _final(value: Any, memo: _Memo) -> Any:
    return _finish(value, memo) if type(value) in _DRAFT_TYPES else value


# --- patches ------------------------------------------------------------------------


def _token(key: Any) -> str:
    """``key`` as a JSON Pointer reference token (RFC 6901): the member name
    ``json.dumps`` writes for it (``1`` is ``"1"``, ``True`` is ``"true"``,
    see ``jsonpatch.json_key``), escaped."""
    try:
        name = _jsonpatch.json_key(key)
    except TypeError:
        raise TypeError(
            "produce_with_patches() cannot write a path through the key %r: a JSON object's "
            "keys are str (or int, float, bool and None, written as json.dumps writes them), "
            "not %s" % (key, type(key).__name__)
        ) from None
    return _jsonpatch._escape(name)


def _new_memo() -> _Memo:
    memo = _Memo()
    memo.forward = []
    memo.undo = []
    return memo


def _patches(root: Any) -> Tuple[Any, Patch, Patch]:
    """The end of a ``produce_with_patches`` whose recipe kept its draft
    ``root``: ``(new, patches, inverse_patches)``."""
    memo = _new_memo()
    new = _finish(root, memo, "")
    memo.undo.reverse()
    return new, memo.forward, memo.undo


def _replace_whole(path: str, new: Any, old: Any, memo: _Memo) -> None:
    memo.forward.append({"op": "replace", "path": path, "value": new})
    memo.undo.append({"op": "replace", "path": path, "value": old})


def _emit(draft: Any, path: str, memo: _Memo) -> None:
    """Write the operations of ``draft``, in place at ``path``, after a
    finish that reached it first where it was not in place (so wrote none)."""
    if type(draft) is not DictDraft:
        _emit_list(draft, path, memo)
        return
    ident = id(draft)
    done = memo.pop(ident, _MISSING)
    try:
        _finish(draft, memo, path)  # (the value it makes again is dropped)
    finally:
        if done is not _MISSING:
            memo[ident] = done


def _emit_list(draft: "ListDraft[Any]", path: str, memo: _Memo) -> None:
    base = draft._base
    final = _finish(draft, memo)
    if final is base:
        return
    items = draft._items
    if items is None:  # only children read in place changed
        for index, child in sorted((draft._children or {}).items()):
            _emit(child, "%s/%d" % (path, index), memo)
        return
    log = draft._log or []
    if log is _WHOLE or len(log) > max(8, len(final)):
        _replace_whole(path, final, base, memo)
        return
    forward, undo = memo.forward, memo.undo
    start = len(forward)
    # Replay the positional edits on the base's items: each one is an
    # operation, and ``replay`` ends as the list before the children held in
    # place change (their operations come after, at their final positions).
    replay = list(base)
    for edit in log:
        kind, index = edit[0], edit[1]
        where = "%s/%d" % (path, index)
        if kind == _ADD:
            value = _final(edit[2], memo)
            replay.insert(index, value)
            forward.append({"op": "add", "path": where, "value": value})
            undo.append({"op": "remove", "path": where})
        elif kind == _REMOVE:
            old = replay.pop(index)
            forward.append({"op": "remove", "path": where})
            undo.append({"op": "add", "path": where, "value": old})
        else:
            value = _final(edit[2], memo)
            old = replay[index]
            if value is not old:
                replay[index] = value
                forward.append({"op": "replace", "path": where, "value": value})
                undo.append({"op": "replace", "path": where, "value": old})
    if len(replay) != len(items):  # never expected: the log and the list disagree
        del forward[start:], undo[start:]
        _replace_whole(path, final, base, memo)
        return
    for index, item in enumerate(items):
        there = replay[index]
        if item is there:
            continue
        where = "%s/%d" % (path, index)
        if type(item) in _DRAFT_TYPES:
            if _finish(item, memo) is there:
                continue
            if item._base is there:
                _emit(item, where, memo)
                continue
        if final[index] is not there:
            forward.append({"op": "replace", "path": where, "value": final[index]})
            undo.append({"op": "replace", "path": where, "value": there})


def _mark(draft: "DictDraft[Any, Any]", key: Any, mark: int) -> None:
    """Note that ``draft`` wrote ``key`` (produce_with_patches).

    ``draft._touched`` is None (no change, or only the first one, which
    ``draft._first`` describes: see ``_first_change``), ``(key, mark)`` for
    one key, ``{key: mark}`` in the order of the writes (a key removed and
    added again moves to the end, as it does in the map), or ``_WHOLE``.
    The mark is ``_KEPT`` for a key set where it stands in the base,
    ``_MOVED`` for one removed (and maybe added again).
    """
    touched = draft._touched
    if touched is None:
        draft._touched = (key, mark)
        return
    if touched is _WHOLE:
        return
    if type(touched) is tuple:
        touched = draft._touched = {touched[0]: touched[1]}
    if mark == _KEPT:
        if key not in touched:
            touched[key] = _KEPT
    else:
        touched.pop(key, None)
        touched[key] = _MOVED


def _pointer(path: str, key: Any) -> str:
    """``path`` extended by ``key``'s reference token."""
    if type(key) is str and "~" not in key and "/" not in key:
        return f"{path}/{key}"
    return f"{path}/{_token(key)}"


def _first_change(draft: "DictDraft[Any, Any]") -> Tuple[Any, int]:
    """``(key, mark)`` for the one change a draft's map holds (``_first``):
    a set that kept the length changed a key in place."""
    key, value = draft._first
    if value is not _MISSING and len(draft._map) == len(draft._base):
        return key, _KEPT
    return key, _MOVED


def _written(touched: Any, key: Any) -> bool:
    """Whether ``key`` is among the keys ``touched`` says were written."""
    if touched is _WHOLE:
        return True
    if type(touched) is tuple:
        return touched[0] is key or bool(touched[0] == key)
    return key in touched


# --- the drafts -----------------------------------------------------------------------


class _NotIterable:
    """A value no list takes as items (see _list_says)."""


def _list_says(action: Callable[[List[Any]], Any], *items: Any) -> str:
    """What ``action`` says when it fails on a real list of ``items``: a list
    draft's errors are the running Python's list's, word for word (PyPy's
    and CPython's differ).  Where the message names the type of a
    ``_NotIterable`` given, the text has ``%s`` for the type's name."""
    try:
        action(list(items))
    except (IndexError, ValueError, TypeError) as exc:
        return str(exc).replace("'_NotIterable'", "'%s'")
    raise AssertionError("a list operation that should fail did not")


_NOT_ITERABLE: Any = _NotIterable()
_GET_OUT_OF_RANGE = _list_says(lambda items: items[0])
_SET_OUT_OF_RANGE = _list_says(lambda items: items.__setitem__(0, _NOT_ITERABLE))
_POP_OUT_OF_RANGE = _list_says(lambda items: items.pop(1), None)
_POP_EMPTY = _list_says(lambda items: items.pop())
_SLICE_NOT_ITERABLE = _list_says(lambda items: items.__setitem__(slice(0, 0), _NOT_ITERABLE))
_EXTENDED_NOT_ITERABLE = _list_says(lambda items: items.__setitem__(slice(0, 0, 2), _NOT_ITERABLE))
_EXTEND_NOT_ITERABLE = _list_says(lambda items: items.extend(_NOT_ITERABLE))


def _list_index(index: Any, length: int, what: str) -> int:
    """``index`` as a position in ``range(length)``, with ``list``'s errors."""
    if type(index) is not int:
        try:
            index = operator.index(index)
        except TypeError:
            raise TypeError(
                "list indices must be integers or slices, not %s" % type(index).__name__
            ) from None
    if index < 0:
        index += length
    if not 0 <= index < length:
        raise IndexError(what)
    return int(index)


def _repr_of(draft: Any) -> str:
    scope = draft._scope
    name = type(draft).__name__
    if scope.reader is None:
        return "<%s (revoked)>" % name
    if scope.reader != get_ident():
        return "<%s (of another thread)>" % name
    return "%s(%s)" % (name, _format(draft, set()))


def _format(value: Any, active: Set[int]) -> str:
    """``value`` written as the recipe sees it: nested nodes as dict and list."""
    cls = type(value)
    if cls is DictDraft or cls in _FROZENDICT_TYPES:
        if id(value) in active:
            return "{...}"
        active.add(id(value))
        try:
            if cls is DictDraft:
                children = value._children or {}
                pairs = [(k, children.get(k, v)) for k, v in value._map.items()]
            else:
                pairs = list(value.items())
            return "{%s}" % ", ".join("%r: %s" % (k, _format(v, active)) for k, v in pairs)
        finally:
            active.discard(id(value))
    if cls is ListDraft or cls is tuple:
        if id(value) in active:
            return "[...]"
        active.add(id(value))
        try:
            if cls is ListDraft:
                if value._items is not None:
                    items = list(value._items)
                else:
                    children = value._children or {}
                    items = [children.get(i, v) for i, v in enumerate(value._base)]
            else:
                items = list(value)
            return "[%s]" % ", ".join(_format(v, active) for v in items)
        finally:
            active.discard(id(value))
    return repr(value)


class _DraftKeys(KeysView[_K]):
    __slots__ = ()

    def __reversed__(self) -> Iterator[_K]:
        return reversed(self._mapping)  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return "draft_keys(%r)" % (list(self),)


class _DraftValues(ValuesView[_V]):
    __slots__ = ()

    def __reversed__(self) -> Iterator[_V]:
        mapping: Any = self._mapping  # type: ignore[attr-defined]
        for key in reversed(mapping):
            yield mapping[key]

    def __repr__(self) -> str:
        return "draft_values(%r)" % (list(self),)


class _DraftItems(ItemsView[_K, _V]):
    __slots__ = ()

    def __reversed__(self) -> Iterator[Tuple[_K, _V]]:
        mapping: Any = self._mapping  # type: ignore[attr-defined]
        for key in reversed(mapping):
            yield (key, mapping[key])

    def __repr__(self) -> str:
        return "draft_items(%r)" % (list(self),)


class DictDraft(_DictDraftFields, MutableMapping[_K, _V]):
    """The draft of a frozendict inside a ``produce`` recipe: a ``dict`` to edit.

    It has every ``dict`` method and keeps dict's order: a key assigned again
    keeps its place, a new or re-added key goes last, ``popitem`` takes the
    last.  Reading a nested exact frozendict or tuple returns its draft (the
    same one each time); any other value, subclasses of frozendict or tuple
    included, is returned as it is.  Assigned values are deep-frozen; an
    assigned draft stays a draft and ends as one frozen object wherever it
    was put.

    ``==`` compares the contents with a ``dict``, a frozendict or another
    draft as ``dict ==`` does (order ignored); a draft is unhashable, as a
    ``dict``.  ``copy()``, ``|`` and ``fromkeys`` return plain dicts (their
    nested values are the drafts a read returns).  Only the thread running
    the ``produce`` may use the draft, and only until its recipe returns:
    then it is revoked and every use raises ``RuntimeError``.

    >>> from frozenmap import frozendict, produce
    >>> state = frozendict(user=frozendict(name='ada', langs=('en',)))
    >>> def recipe(draft):
    ...     draft['user']['langs'].append('fr')
    ...     draft['seen'] = True
    >>> produce(state, recipe)
    frozendict({'user': frozendict({'name': 'ada', 'langs': ('en', 'fr')}), 'seen': True})
    """

    __slots__ = ()  # (the fields: _DictDraftFields)
    _scope: _Scope
    _base: Any
    _map: Any  # the contents: the base, the base after one change, or an Evolver
    _first: Tuple[Any, Any]  # that one change: (key, value stored or _MISSING)
    _children: Optional[Dict[Any, Any]]  # key -> the draft whose original the map holds
    _touched: Any  # (produce_with_patches) the keys written: see _mark

    def __new__(cls, *args: Any, **kwargs: Any) -> "DictDraft[_K, _V]":
        raise TypeError("DictDraft objects are made by produce(), for its recipe")

    # --- reads -------------------------------------------------------------------

    # The item access: with the C core loaded, draft[key] and its assignment
    # and deletion are the slots of its _DictDraft, which serve a C-core state
    # and call these for everything else.
    def _getitem(self, key: _K, /) -> _V:
        """``self[key]``: the value (a draft for a nested node).  Cost: O(log n)."""
        scope = self._scope
        if scope.reader != get_ident():
            scope.refuse(self)
        children = self._children
        if children is not None:
            child = children.get(key, _MISSING)
            if child is not _MISSING:
                return child  # type: ignore[no-any-return]
        value = self._map[key]
        cls = type(value)
        if cls in _FROZENDICT_TYPES:  # (_new_dict_draft, without its frame)
            child = _object_new(DictDraft)
            child._scope = scope
            child._base = child._map = value
            child._children = child._touched = None
        elif cls is tuple:
            child = _new_list_draft(scope, value)
        else:
            return value  # type: ignore[no-any-return]
        children = self._children  # (again: a key's __eq__ may have read the draft)
        if children is None:
            self._children = {key: child}
            return child  # type: ignore[no-any-return]
        return children.setdefault(key, child)  # type: ignore[no-any-return]

    def _keep_child(self, key: Any, child: Any) -> Any:
        children = self._children
        if children is None:
            children = self._children = {}
        # (setdefault: a read from a key's __eq__ may have made one first)
        return children.setdefault(key, child)

    def get(self, key: _K, default: Any = None, /) -> Any:
        """The value for ``key`` (a draft for a nested node), or ``default``.

        Cost: O(log n).
        """
        scope = self._scope
        if scope.reader != get_ident():
            scope.refuse(self)
        children = self._children
        if children is not None:
            child = children.get(key, _MISSING)
            if child is not _MISSING:
                return child
        value = self._map.get(key, _MISSING)
        if value is _MISSING:
            return default
        make = _DRAFTABLE.get(type(value))
        if make is None:
            return value
        return self._keep_child(key, make(scope, value))

    def __contains__(self, key: object) -> bool:
        scope = self._scope
        if scope.reader != get_ident():
            scope.refuse(self)
        return key in self._map

    def __len__(self) -> int:
        scope = self._scope
        if scope.reader != get_ident():
            scope.refuse(self)
        return len(self._map)

    def _snapshot(self) -> Any:
        scope = self._scope
        if scope.reader != get_ident():
            scope.refuse(self)
        contents = self._map
        return contents if type(contents) in _FROZENDICT_TYPES else contents.freeze()

    def __iter__(self) -> Iterator[_K]:
        snapshot = self._snapshot()
        return self._walk(iter(snapshot), len(snapshot))

    def __reversed__(self) -> Iterator[_K]:
        snapshot = self._snapshot()
        return self._walk(reversed(snapshot), len(snapshot))

    def _walk(self, keys: Iterator[Any], length: int) -> Iterator[Any]:
        scope = self._scope
        for key in keys:
            if scope.reader != get_ident():
                scope.refuse(self)
            if len(self._map) != length:
                raise RuntimeError("dictionary changed size during iteration")
            yield key

    def keys(self) -> KeysView[_K]:
        """A live view of the keys, as ``dict.keys()``."""
        return _DraftKeys(self)

    def values(self) -> ValuesView[_V]:
        """A live view of the values (drafts for nested nodes), as ``dict.values()``."""
        return _DraftValues(self)

    def items(self) -> ItemsView[_K, _V]:
        """A live view of the ``(key, value)`` pairs, as ``dict.items()``."""
        return _DraftItems(self)

    def copy(self) -> Dict[_K, _V]:
        """A shallow copy as a plain ``dict`` (nested nodes as their drafts)."""
        return dict(self)

    @classmethod
    def fromkeys(cls, iterable: Iterable[Any], value: Any = None, /) -> Dict[Any, Any]:
        """``dict.fromkeys``: a plain dict (a draft is made only by ``produce``)."""
        return dict.fromkeys(iterable, value)

    def __eq__(self, other: object) -> bool:
        scope = self._scope
        if scope.reader != get_ident():
            scope.refuse(self)
        if type(other) is DictDraft:
            other = dict(other)
        elif not isinstance(other, (dict,) + _registry.frozendict_types):
            return NotImplemented
        return dict(self) == other

    __hash__ = None  # type: ignore[assignment]

    def __or__(self, other: Any) -> Dict[Any, Any]:
        if not isinstance(other, (dict, DictDraft) + _registry.frozendict_types):
            return NotImplemented
        merged: Dict[Any, Any] = dict(self)
        merged.update(other)  # type: ignore[call-overload]
        return merged

    def __ror__(self, other: Any) -> Dict[Any, Any]:
        if not isinstance(other, (dict,) + _registry.frozendict_types):
            return NotImplemented
        merged: Dict[Any, Any] = dict(other)  # type: ignore[call-overload]
        merged.update(self)
        return merged

    def __ior__(self, other: Any) -> "DictDraft[_K, _V]":
        self.update(other)
        return self

    def __repr__(self) -> str:
        return _repr_of(self)

    def __copy__(self) -> Dict[_K, _V]:
        return self.copy()

    def __deepcopy__(self, memo: Dict[int, Any]) -> Dict[_K, _V]:
        return _copy.deepcopy(dict(self), memo)

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError("a DictDraft cannot be pickled: pickle current(draft), its frozen snapshot")

    # --- changes -----------------------------------------------------------------

    def _setitem(self, key: _K, value: _V, /) -> None:
        """``self[key] = value`` (deep-frozen).  Cost: O(log n)."""
        scope = self._scope
        ident = get_ident()
        if scope.writer != ident:
            scope.refuse(self)
        if type(value) not in _SCALARS:
            value = _adopt(scope, value)
        scope.edits += 1
        scope.writer = None
        try:
            # The previous map stays referenced by ``contents`` until this
            # method returns, after the change: the finalizers of the values
            # it releases see the draft changed and usable.
            children = self._children
            stored: Any = value
            if type(value) in _DRAFT_TYPES:
                if children is not None and children.get(key, _MISSING) is value:
                    return  # that draft is there already
                stored = value._base  # type: ignore[attr-defined]
            contents = self._map
            if contents is self._base:  # the first change: one derivation
                self._map = contents.set(key, stored)
                self._first = (key, stored)  # (which says what patches need of it)
            else:
                evolver = self._evolver()
                length = len(evolver)
                evolver[key] = stored
                if scope.recording:  # set where it stands, or new (or back): last
                    _mark(self, key, _KEPT if len(evolver) == length else _MOVED)
            if stored is not value:
                if children is None:
                    self._children = {key: value}
                else:
                    children[key] = value
            elif children:
                children.pop(key, None)
        finally:
            scope.writer = ident

    def _evolver(self) -> Any:
        """The Evolver holding the contents from the second change on."""
        contents = self._map
        if type(contents) not in _FROZENDICT_TYPES:
            return contents
        evolver = self._base.evolve()
        if contents is not self._base:
            # The first change is made again on an evolver of the base, so
            # that changes cancelling it give the base back (Evolver.freeze).
            key, value = self._first
            if value is _MISSING:
                del evolver[key]
            else:
                evolver[key] = value
            if self._scope.recording:
                _mark(self, *_first_change(self))
            del self._first  # (its value is the evolver's to keep or release)
        self._map = evolver
        return evolver

    def _discard(self, key: Any) -> Any:
        """Remove ``key`` (inside a change; ``KeyError`` if absent); return the
        previous map."""
        contents = self._map
        if contents is self._base:
            self._map = contents.delete(key)
            self._first = (key, _MISSING)
        else:
            del self._evolver()[key]
            if self._scope.recording:
                _mark(self, key, _MOVED)
        children = self._children
        if children:
            children.pop(key, None)
        return contents

    def _delitem(self, key: _K, /) -> None:
        """``del self[key]``.  Cost: O(log n)."""
        scope = self._scope
        ident = _begin(scope, self)
        try:
            released = self._discard(key)  # noqa: F841
        finally:
            scope.writer = ident

    if TYPE_CHECKING:

        def __getitem__(self, key: _K, /) -> _V: ...
        def __setitem__(self, key: _K, value: _V, /) -> None: ...
        def __delitem__(self, key: _K, /) -> None: ...

    elif _C is None:
        __getitem__ = _getitem
        __setitem__ = _setitem
        __delitem__ = _delitem

    def pop(self, key: _K, default: Any = _MISSING, /) -> Any:
        """Remove ``key`` and return its value (a draft for a nested node),
        or ``default``; ``KeyError`` without one.  Cost: O(log n)."""
        scope = self._scope
        ident = _begin(scope, self)
        try:
            children = self._children
            value = children.get(key, _MISSING) if children else _MISSING
            if value is _MISSING:
                value = self._map.get(key, _MISSING)
                if value is _MISSING:
                    if default is _MISSING:
                        raise KeyError(key)
                    return default
                value = _detached(scope, value)
            released = self._discard(key)  # noqa: F841
        finally:
            scope.writer = ident
        return value

    def popitem(self) -> Tuple[_K, _V]:
        """Remove and return the last ``(key, value)`` pair, as ``dict.popitem``."""
        scope = self._scope
        ident = _begin(scope, self)
        try:
            contents = self._map
            if not len(contents):
                raise KeyError("popitem(): dictionary is empty")
            key, value = self._evolver().popitem()
            children = self._children
            child = children.pop(key, _MISSING) if children else _MISSING
            value = _detached(scope, value) if child is _MISSING else child
            if scope.recording:
                _mark(self, key, _MOVED)
        finally:
            scope.writer = ident
        return key, value

    def setdefault(self, key: _K, default: Any = None, /) -> Any:
        """``self[key]`` if present; else set it to ``default`` (deep-frozen)
        and return it as a read would (a draft for a nested node)."""
        value = self.get(key, _MISSING)
        if value is not _MISSING:
            return value
        self[key] = default
        return self[key]

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Set each pair of ``other`` (a mapping or an iterable of pairs),
        then of ``kwargs``, as ``dict.update``."""
        if isinstance(other, Mapping) or hasattr(other, "keys"):
            for key in list(other.keys()):
                self[key] = other[key]
        else:
            for index, pair in enumerate(other):
                try:
                    both = tuple(pair)
                except TypeError:
                    raise TypeError(
                        "cannot convert dictionary update sequence element #%d to a sequence"
                        % index
                    ) from None
                if len(both) != 2:
                    raise ValueError(
                        "dictionary update sequence element #%d has length %d; 2 is required"
                        % (index, len(both))
                    )
                self[both[0]] = both[1]
        for key, value in kwargs.items():
            self[key] = value  # type: ignore[index]

    def clear(self) -> None:
        """Remove every key."""
        scope = self._scope
        ident = _begin(scope, self)
        try:
            released = self._map, self._children  # noqa: F841
            self._map = type(self._base)().evolve()
            self._children = None
            if scope.recording:
                self._touched = _WHOLE
        finally:
            scope.writer = ident


class ListDraft(_ListDraftFields, MutableSequence[_T]):
    """The draft of a tuple inside a ``produce`` recipe: a ``list`` to edit.

    It has every ``list`` method, slices included (read, assigned, deleted;
    extended slices too).  Reading a nested exact frozendict or tuple returns
    its draft; any other value is returned as it is.  Assigned values are
    deep-frozen; an assigned draft stays a draft.  A slice, ``copy()``, ``+``
    and ``*`` return plain lists (their nested values are drafts).

    ``==`` and ordering compare with a ``list`` or another draft as a list
    does, so a draft never equals a tuple (``[1] == (1,)`` is False too); a
    draft is unhashable.  Only the thread running the ``produce`` may use
    it, and only until its recipe returns.

    >>> from frozenmap import produce
    >>> produce((3, 1, 2), lambda draft: draft.sort())
    (1, 2, 3)
    """

    __slots__ = ()  # (the fields: _ListDraftFields)
    _scope: _Scope
    _base: Any
    _items: Optional[List[Any]]  # the contents after the first change (drafts included)
    _children: Optional[Dict[int, Any]]  # before it: index -> the draft of base[index]
    _log: Any  # None, [(kind, index[, value]), ...], or _WHOLE (produce_with_patches)

    def __new__(cls, *args: Any, **kwargs: Any) -> "ListDraft[_T]":
        raise TypeError("ListDraft objects are made by produce(), for its recipe")

    # --- reads -------------------------------------------------------------------

    def _read(self, index: Any) -> Any:
        items = self._items
        if items is not None:
            position = _list_index(index, len(items), _GET_OUT_OF_RANGE)
            value = items[position]
            make = _DRAFTABLE.get(type(value))
            if make is None:
                return value
            child = items[position] = make(self._scope, value)
            return child
        base = self._base
        position = _list_index(index, len(base), _GET_OUT_OF_RANGE)
        children = self._children
        if children is not None:
            child = children.get(position)
            if child is not None:
                return child
        value = base[position]
        make = _DRAFTABLE.get(type(value))
        if make is None:
            return value
        if children is None:
            children = self._children = {}
        return children.setdefault(position, make(self._scope, value))

    @overload
    def __getitem__(self, index: int) -> _T: ...

    @overload
    def __getitem__(self, index: slice) -> List[_T]: ...

    def __getitem__(self, index: Any) -> Any:
        scope = self._scope
        if scope.reader != get_ident():
            scope.refuse(self)
        if type(index) is slice:
            return [self._read(i) for i in range(*index.indices(len(self)))]
        return self._read(index)

    def __len__(self) -> int:
        scope = self._scope
        if scope.reader != get_ident():
            scope.refuse(self)
        items = self._items
        return len(self._base if items is None else items)

    def _drafted(self) -> List[_T]:
        """Every item as a read returns it, in a plain list."""
        return [self._read(i) for i in range(len(self))]

    def __iter__(self) -> Iterator[_T]:
        len(self)  # (checks the caller now, not at the first next())
        return self._walk(False)

    def __reversed__(self) -> Iterator[_T]:
        len(self)
        return self._walk(True)

    def _walk(self, backwards: bool) -> Iterator[Any]:
        # By position, as a list iterator: edits made meanwhile show.
        index = len(self) - 1 if backwards else 0
        while 0 <= index < len(self):
            yield self._read(index)
            index += -1 if backwards else 1

    def __contains__(self, value: object) -> bool:
        return value in self._drafted()

    def index(self, value: Any, start: Any = 0, stop: Any = None) -> int:
        """The first position of ``value`` (``ValueError`` if absent), as ``list.index``."""
        if stop is None:
            return self._drafted().index(value, start)
        return self._drafted().index(value, start, stop)

    def count(self, value: Any) -> int:
        """How many items equal ``value``."""
        return self._drafted().count(value)

    def copy(self) -> List[_T]:
        """A shallow copy as a plain ``list`` (nested nodes as their drafts)."""
        return self._drafted()

    def _compared(self, other: Any) -> Any:
        scope = self._scope
        if scope.reader != get_ident():
            scope.refuse(self)
        if type(other) is ListDraft:
            return other._drafted()
        return other if isinstance(other, list) else _MISSING

    def __eq__(self, other: object) -> bool:
        other = self._compared(other)
        return NotImplemented if other is _MISSING else self._drafted() == other

    def __lt__(self, other: Any) -> bool:
        other = self._compared(other)
        return NotImplemented if other is _MISSING else self._drafted() < other

    def __le__(self, other: Any) -> bool:
        other = self._compared(other)
        return NotImplemented if other is _MISSING else self._drafted() <= other

    def __gt__(self, other: Any) -> bool:
        other = self._compared(other)
        return NotImplemented if other is _MISSING else self._drafted() > other

    def __ge__(self, other: Any) -> bool:
        other = self._compared(other)
        return NotImplemented if other is _MISSING else self._drafted() >= other

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Any) -> List[Any]:
        if type(other) is ListDraft:
            other = other._drafted()
        result: List[Any] = self._drafted() + other  # list's TypeError for a non-list
        return result

    def __mul__(self, times: Any) -> List[_T]:
        result: List[_T] = self._drafted() * times
        return result

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return _repr_of(self)

    def __copy__(self) -> List[_T]:
        return self.copy()

    def __deepcopy__(self, memo: Dict[int, Any]) -> List[_T]:
        return _copy.deepcopy(self._drafted(), memo)

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError("a ListDraft cannot be pickled: pickle current(draft), its frozen snapshot")

    # --- changes -----------------------------------------------------------------

    def _contents(self) -> List[Any]:
        """The items as a list to edit (made on the first change)."""
        items = self._items
        if items is None:
            items = list(self._base)
            children = self._children
            if children:
                for index, child in children.items():
                    items[index] = child
                self._children = None
            self._items = items
        return items

    def _record(self, edit: Any) -> None:
        log = self._log
        if log is None:
            log = self._log = []
        if log is not _WHOLE:
            log.append(edit)

    def _record_whole(self) -> None:
        if self._scope.recording:
            self._log = _WHOLE

    def _adopted(self, values: Any, message: str) -> List[Any]:
        try:
            values = list(values)
        except TypeError:
            if not hasattr(values, "__iter__"):
                raise TypeError(message.replace("%s", type(values).__name__)) from None
            raise
        scope = self._scope
        return [v if type(v) in _SCALARS else _adopt(scope, v) for v in values]

    @overload
    def __setitem__(self, index: int, value: _T) -> None: ...

    @overload
    def __setitem__(self, index: slice, value: Iterable[_T]) -> None: ...

    def __setitem__(self, index: Any, value: Any) -> None:
        scope = self._scope
        ident = get_ident()
        if scope.writer != ident:
            scope.refuse(self)
        if type(index) is slice:
            self._set_slice(index, value)
            return
        if type(value) not in _SCALARS:
            value = _adopt(scope, value)
        scope.edits += 1
        scope.writer = None
        try:
            items = self._contents()
            position = _list_index(index, len(items), _SET_OUT_OF_RANGE)
            released = items[position]
            if released is not value:
                items[position] = value
                if scope.recording:
                    self._record((_REPLACE, position, value))
        finally:
            scope.writer = ident

    def _set_slice(self, where: slice, value: Any) -> None:
        scope = self._scope
        extended = where.step is not None and where.step != 1
        values = self._adopted(
            value,
            _EXTENDED_NOT_ITERABLE if extended else _SLICE_NOT_ITERABLE,
        )
        ident = _begin(scope, self)
        try:
            items = self._contents()
            start, stop, step = where.indices(len(items))
            released = items[where]
            items[where] = values  # list's errors (an extended slice's size)
            if scope.recording:
                if step == 1:
                    removed = max(stop - start, 0)
                    kept = min(removed, len(values))
                    for offset in range(kept):
                        if released[offset] is not values[offset]:
                            self._record((_REPLACE, start + offset, values[offset]))
                    for _ in range(removed - kept):
                        self._record((_REMOVE, start + kept))
                    for offset in range(kept, len(values)):
                        self._record((_ADD, start + offset, values[offset]))
                else:
                    for offset, position in enumerate(range(start, stop, step)):
                        if released[offset] is not values[offset]:
                            self._record((_REPLACE, position, values[offset]))
        finally:
            scope.writer = ident

    @overload
    def __delitem__(self, index: int) -> None: ...

    @overload
    def __delitem__(self, index: slice) -> None: ...

    def __delitem__(self, index: Any) -> None:
        scope = self._scope
        ident = _begin(scope, self)
        try:
            items = self._contents()
            if type(index) is slice:
                start, stop, step = index.indices(len(items))
                positions = range(start, stop, step)
                released = items[index]  # noqa: F841
                del items[index]
                if scope.recording:
                    for position in sorted(positions, reverse=True):
                        self._record((_REMOVE, position))
            else:
                position = _list_index(index, len(items), _SET_OUT_OF_RANGE)
                released = items.pop(position)  # noqa: F841
                if scope.recording:
                    self._record((_REMOVE, position))
        finally:
            scope.writer = ident

    def insert(self, index: Any, value: _T) -> None:
        """Insert ``value`` (deep-frozen) before position ``index``, as ``list.insert``."""
        scope = self._scope
        if scope.writer != get_ident():
            scope.refuse(self)
        index = operator.index(index)
        if type(value) not in _SCALARS:
            value = _adopt(scope, value)
        ident = _begin(scope, self)
        try:
            items = self._contents()
            length = len(items)
            position = max(0, index + length) if index < 0 else min(index, length)
            items.insert(position, value)
            if scope.recording:
                self._record((_ADD, position, value))
        finally:
            scope.writer = ident

    def append(self, value: _T) -> None:
        """Add ``value`` (deep-frozen) at the end."""
        scope = self._scope
        if scope.writer != get_ident():
            scope.refuse(self)
        if type(value) not in _SCALARS:
            value = _adopt(scope, value)
        ident = _begin(scope, self)
        try:
            items = self._contents()
            items.append(value)
            if scope.recording:
                self._record((_ADD, len(items) - 1, value))
        finally:
            scope.writer = ident

    def extend(self, values: Iterable[_T]) -> None:
        """Add every item of ``values`` (deep-frozen) at the end."""
        scope = self._scope
        if scope.writer != get_ident():
            scope.refuse(self)
        adopted = self._adopted(values, _EXTEND_NOT_ITERABLE)
        ident = _begin(scope, self)
        try:
            items = self._contents()
            start = len(items)
            items.extend(adopted)
            if scope.recording:
                for offset, value in enumerate(adopted):
                    self._record((_ADD, start + offset, value))
        finally:
            scope.writer = ident

    def __iadd__(self, values: Iterable[_T]) -> "ListDraft[_T]":  # type: ignore[misc]
        self.extend(values)
        return self

    def __imul__(self, times: Any) -> "ListDraft[_T]":
        scope = self._scope
        if scope.writer != get_ident():
            scope.refuse(self)
        if not hasattr(type(times), "__index__"):
            empty: Any = []
            empty *= times  # raises list's own error, in this Python's words
            raise TypeError(
                "can't multiply sequence by non-int of type '%s'" % type(times).__name__
            )
        times = operator.index(times)
        # Each nested node gets its draft first: the copies are that draft,
        # the same object in each place, as a list repeats its items.
        drafted = self._drafted() if times > 1 else None
        ident = _begin(scope, self)
        try:
            items = self._contents()
            if items and times != 1:
                released = items[:]  # noqa: F841
                if drafted is not None:
                    items[:] = drafted
                items *= times
                scope.shared = True  # (each draft in it is now in several places)
                self._record_whole()
        finally:
            scope.writer = ident
        return self

    def pop(self, index: Any = -1) -> _T:
        """Remove and return the item at ``index`` (a draft for a nested node)."""
        scope = self._scope
        ident = _begin(scope, self)
        try:
            items = self._contents()
            if not items:
                raise IndexError(_POP_EMPTY)
            position = _list_index(index, len(items), _POP_OUT_OF_RANGE)
            value = _detached(scope, items.pop(position))
            if scope.recording:
                self._record((_REMOVE, position))
        finally:
            scope.writer = ident
        return value  # type: ignore[no-any-return]

    def remove(self, value: Any) -> None:
        """Remove the first item equal to ``value``, as ``list.remove``."""
        try:
            position = self._drafted().index(value)
        except ValueError:
            position = -1
        if position < 0:
            [].remove(value)  # raises list's own error, in this Python's words
        del self[position]

    def sort(self, *, key: Optional[Callable[[Any], Any]] = None, reverse: bool = False) -> None:
        """Sort in place, as ``list.sort`` (comparing the items as a read returns them)."""
        scope = self._scope
        if scope.writer != get_ident():
            scope.refuse(self)
        drafted = self._drafted()
        ident = _begin(scope, self)
        try:
            items = self._contents()
            items[:] = drafted
            before = drafted[:]
            items.sort(key=key, reverse=reverse)
            if not all(map(operator.is_, items, before)):
                self._record_whole()
        finally:
            scope.writer = ident

    def reverse(self) -> None:
        """Reverse in place."""
        scope = self._scope
        ident = _begin(scope, self)
        try:
            items = self._contents()
            if len(items) > 1:
                items.reverse()
                self._record_whole()
        finally:
            scope.writer = ident

    def clear(self) -> None:
        """Remove every item."""
        scope = self._scope
        ident = _begin(scope, self)
        try:
            items = self._contents()
            if items:
                released = items[:]  # noqa: F841
                items.clear()
                self._record_whole()
        finally:
            scope.writer = ident


_DRAFT_TYPES: FrozenSet[type] = frozenset({DictDraft, ListDraft})

#: How a state of the pure core starts and finishes (and, without the C
#: core, every state): in Python.
_PY_START = (_new_root, _finish, _patches)
_C_START = _PY_START
if _C is not None:
    # The C core's draft bases learn the classes and the Python functions
    # that their C paths hand the other cases to.
    _C._DraftScope._register(
        _Scope,
        DictDraft,
        ListDraft,
        _DRAFTABLE,
        _finish,
        DictDraft._getitem,
        DictDraft._setitem,
        DictDraft._delitem,
        _emit_keys,
        _emit,
        _token,
        _cycle,
        _MISSING,
        _IN_PROGRESS,
        _WHOLE,
        _Memo,
    )
    _C_START = (_C._DraftScope._root, _C._DraftScope._finish, _C._DraftScope._patches)
_ROOTS[tuple] = _C_START

# freeze() of a draft is its frozen snapshot (a draft inside a value of a
# type freeze() was taught, or frozen by hand).
_freeze.freeze.register(DictDraft, lambda draft: current(draft))
_freeze.freeze.register(ListDraft, lambda draft: current(draft))


# --- the public functions -------------------------------------------------------------


def _refuse_start(base: Any, recipe: Any, name: str) -> NoReturn:
    """Raise the ``TypeError`` that says why ``name(base, recipe)`` cannot
    start (``base`` has no entry in ``_ROOTS``, or ``recipe`` is not callable)."""
    if type(base) not in _ROOTS:
        hint = ""
        if isinstance(base, dict):
            hint = " (freeze(base) makes a frozendict of a dict)"
        elif isinstance(base, list):
            hint = " (freeze(base) makes a tuple of a list)"
        elif isinstance(base, (tuple,) + tuple(_FROZENDICT_TYPES)):
            hint = " (a subclass is a leaf: convert it first)"
        raise TypeError(
            "%s() base must be an exact frozendict or tuple, not %s%s"
            % (name, type(base).__name__, hint)
        )
    raise TypeError("%s() recipe must be callable, not %s" % (name, type(recipe).__name__))


def _returned_after_changes(result: Any) -> RuntimeError:
    return RuntimeError(
        "the recipe changed the draft and also returned a value (%s): return None to keep "
        "the changes made to the draft, or return a new state without changing the draft"
        % type(result).__name__
    )


def _replacement(scope: _Scope, result: Any, memo: Any) -> Any:
    """The state a recipe returned: deep-frozen, its drafts finished."""
    if scope.edits:
        raise _returned_after_changes(result)
    adopted = _adopt(scope, result)
    if memo is None and scope.shared:  # (the value holds drafts: one memo for them)
        memo = {}
    return _final(adopted, memo)


def _in_place(draft: Any, recipe: Any) -> Any:
    """``produce`` on a draft (inside another recipe): the recipe edits that
    draft, and its own changes become part of the outer ``produce``."""
    scope = draft._scope
    if scope.writer != get_ident():
        scope.refuse(draft)
    if not callable(recipe):
        raise TypeError("produce() recipe must be callable, not %s" % type(recipe).__name__)
    edits = scope.edits
    result = recipe(draft)
    if result is None or result is draft:
        return draft
    if scope.edits != edits:
        raise _returned_after_changes(result)
    return result


@overload
def produce(
    base: "frozendict[_K, _V]", recipe: Callable[["DictDraft[_K, Any]"], object]
) -> "frozendict[_K, _V]": ...


@overload
def produce(base: _TupleT, recipe: Callable[["ListDraft[Any]"], object]) -> _TupleT: ...


@overload
def produce(base: _State, recipe: Callable[[_State], object]) -> _State: ...


def produce(base: Any, recipe: Callable[[Any], object]) -> Any:
    """The state ``recipe`` makes by editing a draft of ``base``.

    ``base`` is an exact frozendict or tuple.  ``recipe(draft)`` changes the
    draft as it would change a ``dict`` (or a ``list``): nested frozendicts
    and tuples read through it are drafts too, and assigned values are
    deep-frozen.  When it returns ``None`` (or the draft), the changes make
    the new state: every subtree that did not change is the identical object
    from ``base``, and no change at all returns ``base`` itself.  When it
    returns another value without having changed the draft, that value
    (deep-frozen) is the new state; returning one after changing the draft is
    a ``RuntimeError``.  If the recipe raises, the exception propagates (and
    ``base`` is untouched, as always).  Either way the drafts are revoked
    when ``produce`` returns.  Called on a draft, inside another recipe,
    ``produce`` runs ``recipe`` on that draft and returns it.

    Cost: O(d log n) for d changes in maps of n items, plus O(m) for each
    tuple of m items that changes (as a tuple costs); one draft per nested
    node the recipe reads.

    >>> from frozenmap import frozendict, produce
    >>> state = frozendict(todos=(frozendict(text='milk', done=False),), filter='all')
    >>> def toggle(draft):
    ...     draft['todos'][0]['done'] = True
    >>> new = produce(state, toggle)
    >>> new['todos'][0]
    frozendict({'text': 'milk', 'done': True})
    >>> produce(state, lambda draft: None) is state
    True
    """
    if _registry.own_types is not _synced_types:
        _sync_types()
    start = _ROOTS.get(type(base))
    if start is None or not callable(recipe):
        if type(base) in _DRAFT_TYPES:
            return _in_place(base, recipe)
        _refuse_start(base, recipe, "produce")
    root = start[0](base, False)
    scope = root._scope
    try:
        result = recipe(root)
        scope.writer = None  # the finish: reads only
        memo: Any = {} if scope.shared else None  # (a plain dict: no patches here)
        if result is None or result is root:
            return start[1](root, memo, None)
        return _replacement(scope, result, memo)
    finally:
        scope.reader = scope.writer = None


@overload
def produce_with_patches(
    base: "frozendict[_K, _V]", recipe: Callable[["DictDraft[_K, Any]"], object]
) -> Tuple["frozendict[_K, _V]", Patch, Patch]: ...


@overload
def produce_with_patches(
    base: _TupleT, recipe: Callable[["ListDraft[Any]"], object]
) -> Tuple[_TupleT, Patch, Patch]: ...


def produce_with_patches(base: Any, recipe: Callable[[Any], object]) -> Tuple[Any, Patch, Patch]:
    """``produce``, and the JSON Patches between ``base`` and the result.

    Returns ``(new, patches, inverse_patches)``: RFC 6902 operations as lists
    of plain dicts (the form ``make_json_patch`` returns), such that
    ``apply_json_patch(base, patches) == new`` and
    ``apply_json_patch(new, inverse_patches) == base``.  They are recorded
    from the draft's operations: a subtree the recipe did not change has no
    operation, a key set in place is a ``replace``, a key removed and added
    again is a ``remove`` and an ``add`` (so applying them gives dict's key
    order); a list's edits are ``add``/``remove``/``replace`` at positions,
    or one ``replace`` of the whole list when that is shorter (and after a
    sort, a reverse or a clear).  Paths are JSON Pointers (RFC 6901); a key
    that is not a string is written as ``json.dumps`` writes it (``1`` as
    ``"1"``), and any other key is a ``TypeError``.  (JSON names members by
    strings: a patch adding a key of another type adds its name, ``"1"``, so
    the round trip holds for string keys and for other keys that exist
    already.)  The inverse patches restore the contents; a key removed from
    the middle of a map comes back at its end.

    Cost: that of ``produce``, plus O(1) per change and O(m) per tuple of m
    items that changed.

    >>> from frozenmap import frozendict, produce_with_patches
    >>> state = frozendict(user=frozendict(name='ada'), tags=('x',))
    >>> def recipe(draft):
    ...     draft['user']['name'] = 'Ada'
    ...     draft['tags'].append('y')
    >>> new, patches, inverse = produce_with_patches(state, recipe)
    >>> patches
    [{'op': 'replace', 'path': '/user/name', 'value': 'Ada'}, {'op': 'add', 'path': '/tags/1', 'value': 'y'}]
    >>> inverse
    [{'op': 'remove', 'path': '/tags/1'}, {'op': 'replace', 'path': '/user/name', 'value': 'ada'}]
    """
    if _registry.own_types is not _synced_types:
        _sync_types()
    start = _ROOTS.get(type(base))
    if start is None or not callable(recipe):
        if type(base) in _DRAFT_TYPES:
            raise TypeError(
                "produce_with_patches() base must be an exact frozendict or tuple, not a "
                "draft: patches are recorded by the outermost produce_with_patches()"
            )
        _refuse_start(base, recipe, "produce_with_patches")
    root = start[0](base, True)
    scope = root._scope
    try:
        result = recipe(root)
        scope.writer = None
        if result is None or result is root:
            return start[2](root)  # type: ignore[no-any-return]
        memo = _new_memo()
        new = _replacement(scope, result, memo)
        if new is not base:
            _replace_whole("", new, base, memo)
        memo.undo.reverse()
        return new, memo.forward, memo.undo
    finally:
        scope.reader = scope.writer = None


@overload
def current(draft: "DictDraft[_K, _V]") -> "frozendict[_K, Any]": ...


@overload
def current(draft: "ListDraft[_T]") -> Tuple[Any, ...]: ...


def current(draft: Any) -> Any:
    """A frozen snapshot of ``draft`` as it is now.

    What ``produce`` would return if the recipe stopped here (for this
    subtree): later changes to the draft do not show in it, and it stays
    valid after the draft is revoked.  ``ValueError`` if the draft contains
    itself.

    Cost: O(drafts read below it), plus the changes they hold.

    >>> from frozenmap import current, frozendict, produce
    >>> seen = []
    >>> def recipe(draft):
    ...     draft['n'] += 1
    ...     seen.append(current(draft))
    ...     draft['n'] += 1
    >>> produce(frozendict(n=0), recipe), seen
    (frozendict({'n': 2}), [frozendict({'n': 1})])
    """
    if type(draft) not in _DRAFT_TYPES:
        raise TypeError("current() argument must be a draft, not %s" % type(draft).__name__)
    scope = draft._scope
    if scope.reader != get_ident():
        scope.refuse(draft)
    return _finisher(scope)(draft, {}, None)


@overload
def original(draft: "DictDraft[_K, _V]") -> "frozendict[_K, Any]": ...


@overload
def original(draft: "ListDraft[_T]") -> Tuple[Any, ...]: ...


def original(draft: Any) -> Any:
    """The frozen node ``draft`` was made for (its state before the recipe).

    Cost: O(1).

    >>> from frozenmap import frozendict, original, produce
    >>> state = frozendict(n=0)
    >>> def recipe(draft):
    ...     draft['n'] = 5
    ...     assert original(draft) is state
    >>> produce(state, recipe)
    frozendict({'n': 5})
    """
    if type(draft) not in _DRAFT_TYPES:
        raise TypeError("original() argument must be a draft, not %s" % type(draft).__name__)
    scope = draft._scope
    if scope.reader != get_ident():
        scope.refuse(draft)
    return draft._base


def is_draft(value: object) -> "TypeGuard[Union[DictDraft[Any, Any], ListDraft[Any]]]":
    """Whether ``value`` is a draft (a live or revoked one).  Cost: O(1).

    >>> from frozenmap import frozendict, is_draft, produce
    >>> produce(frozendict(a=frozendict()), lambda d: print(is_draft(d), is_draft(d['a'])))
    True True
    frozendict({'a': frozendict()})
    """
    return type(value) in _DRAFT_TYPES
