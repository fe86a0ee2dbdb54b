"""Cold paths shared by both cores, written once in Python.

Pickling a subclass instance, ``copy.copy`` of one, ``copy.deepcopy`` of
any frozendict, ``diff`` against a mapping that is not a frozendict, and the
message of a wrong call are rare and dominated by calls into Python anyway;
there is no speed to gain in C.  The pure core
imports this module; the C core imports it on first use (``fm_import_attr``),
so ``import frozenmap`` with the C core never loads it.

Each function takes the calling core's exact ``frozendict`` type where it
needs one, and uses only that core's public API on it, so the result is the
same on both cores by construction.  Hostile types are read as CPython reads
them: a metaclass can make ``__mro__``, ``__dict__`` and ``__name__`` return
anything, so the real fields are read through ``frozenmap._typeinfo``.
"""

from __future__ import annotations

import copy as _copy
from collections import UserDict, defaultdict
from types import ClassMethodDescriptorType, MethodDescriptorType
from typing import Any, Callable, Dict, NoReturn, Optional, Tuple

from . import _diff
from ._typeinfo import type_dict, type_fullname, type_mro, type_name

__all__ = [
    "subclass_state",
    "reconstruct",
    "deepcopy",
    "generic_diff",
    "or_foreign",
    "merge_with_items",
    "wrong_call",
]

_MISSING: Any = object()


def subclass_state(obj: Any, fdtype: type) -> Any:
    """A subclass instance's ``__dict__`` and slot values, as pickle stores them
    (``copyreg``'s ``_getstate``): ``state``, or ``(state, slots)`` when any slot
    is set.  ``fdtype`` is the core's ``frozendict``: the walk of the MRO stops
    there."""
    state = getattr(obj, "__dict__", None) or None
    slots = {}
    # The real MRO, dicts and names: a metaclass can make __mro__, __dict__
    # and __name__ anything.
    for cls in type_mro(type(obj)):
        if cls is fdtype:
            break
        names = type_dict(cls).get("__slots__", ())
        if issubclass(type(names), str):
            names = (names,)
        else:
            names = tuple(names)
        for name in names:
            if not issubclass(type(name), str):
                continue
            name = str.__str__(name)  # an exact str: a subclass's methods never run
            if name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):
                stripped = type_name(cls).lstrip("_")
                if stripped:  # Python's name mangling: none in a class named only '_'s
                    name = "_%s%s" % (stripped, name)
            try:
                slots[name] = getattr(obj, name)
            except AttributeError:
                pass
    if slots:
        return (state, slots)
    return state


def reconstruct(obj: Any, memo: Any) -> Any:
    """``copy._reconstruct(obj, memo, *obj.__reduce_ex__(4))``, as ``copy`` does
    it: a string (a global name, legal for pickle) means ``obj`` is its own
    copy; anything but a tuple is a ``TypeError``."""
    rv = obj.__reduce_ex__(4)
    if issubclass(type(rv), str):
        return obj
    if not issubclass(type(rv), tuple):
        raise TypeError(
            "%s.__reduce_ex__() must return a string or a tuple, not %s"
            % (type_fullname(type(obj)), type_fullname(type(rv)))
        )
    return _copy._reconstruct(obj, memo, *rv)  # type: ignore[attr-defined]


def deepcopy(fd: Any, memo: Any, fdtype: Any) -> Any:
    """``fd.__deepcopy__(memo)``.  A subclass instance goes through its
    ``__reduce_ex__(4)`` (``reconstruct``); an exact ``fdtype`` instance
    becomes a new ``fdtype`` of deep copies of its keys and values (each key
    copied before its value, in order), even when every one is atomic.

    A value that holds ``fd`` itself copies ``fd`` first, from inside this
    loop, and records that copy in ``memo``: the copy found there afterwards
    is the result, so the value's copy and the result are the same object
    (``x = frozendict(a=[]); x['a'].append(x)``: ``y['a'][0] is y``)."""
    if type(fd) is not fdtype:
        return reconstruct(fd, memo)
    copy_of = _copy.deepcopy
    items = {}
    # (a loop, not a comprehension: CPython 3.11's debug build aborts when an
    # allocation fails as a comprehension's frame starts; tests/test_nomemory.py)
    for key, value in fdtype.items(fd):
        key = copy_of(key, memo)
        items[key] = copy_of(value, memo)
    existing = memo.get(id(fd))
    if existing is not None:
        return existing
    result = fdtype(items)
    memo[id(fd)] = result
    return result


def generic_diff(fd: Any, other: Any, fdtype: Any) -> _diff.Diff:
    """``fd.diff(other)`` for an ``other`` that is not a frozendict of this core:
    one pass over each side.  ``fd`` is read from its own storage (``fdtype``'s
    methods, never a subclass's); ``other`` through ``get`` (looked up once),
    ``in`` and ``[]``, in that order, then ``iter(other)``.  The three parts are
    exact ``fdtype`` instances, built with Evolvers of an empty version (whose
    hash is unknown, so no value's ``__hash__`` runs).  An ``other`` with no
    ``keys`` and ``__getitem__`` (as ``dict()`` tells a mapping from pairs) is a
    ``TypeError``: a list of pairs would otherwise fail deep inside."""
    cls = type(other)
    if not (hasattr(cls, "keys") and hasattr(cls, "__getitem__")):
        raise TypeError("diff() argument must be a mapping, not '%s'" % type_name(cls))
    removed = fdtype().evolve()
    changed = fdtype().evolve()
    # other.get, looked up once; only an AttributeError means there is none
    get = getattr(other, "get", _MISSING)
    for key, old in fdtype.items(fd):
        new = _MISSING if get is _MISSING else get(key, _MISSING)
        if new is _MISSING:
            if key in other:
                new = other[key]
            else:
                removed[key] = old
                continue
        if old is not new and old != new:
            changed[key] = (old, new)
    added = fdtype().evolve()
    contains = fdtype.__contains__
    for key in other:
        if not contains(fd, key):
            added[key] = other[key]
    return _diff.Diff(added.freeze(), removed.freeze(), changed.freeze())


def or_foreign(fd: Any, other: Any, fd_on_left: bool) -> Any:
    """``fd | other`` (``fd_on_left``) or ``other | fd`` for the mapping types
    whose own ``|`` takes CPython 3.15's builtin frozendict but cannot know
    ours (its ``isinstance`` tests name the builtin): the result they give
    the builtin.  ``NotImplemented`` for any other ``other``.

    ``UserDict`` either side: a ``UserDict`` of ``other``'s class around
    ``fd | other.data`` or ``other.data | fd`` (its ``__ror__``/``__or__``).
    A ``defaultdict`` on the left: ``defaultdict.__or__``'s copy, ``type(other)
    (other.default_factory, other)``, updated with ``fd`` (a ``defaultdict``
    on the right is a dict: ``fd``'s own ``|`` answers)."""
    if isinstance(other, UserDict):
        if fd_on_left:
            return other.__class__(fd | other.data)
        return other.__class__(other.data | fd)
    if not fd_on_left and isinstance(other, defaultdict):
        result = type(other)(other.default_factory, other)
        dict.update(result, fd)  # PyDict_Update: never a subclass's update
        return result
    return NotImplemented


def merge_with_items(other: Any) -> Any:
    """``merge_with``'s reading of an operand that is not a frozendict of the
    calling core: its ``items()``, read to the end, as a list of pairs
    (unpacked as ``for key, value in other.items()`` unpacks them), or a
    ``TypeError`` for an object without ``items``.  Both cores then merge the
    pairs in order, each key hashed once."""
    items = getattr(other, "items", None)
    if items is None:
        raise TypeError(
            "merge_with() arguments must be mappings, not '%s'" % type_name(type(other))
        )
    pairs = []
    for key, value in items():
        pairs.append((key, value))
    return pairs


#: The C core's methods, as their types' dicts hold them.
_C_METHODS: Tuple[type, ...] = (MethodDescriptorType, ClassMethodDescriptorType)
#: (qualified name, text signature) -> the stub that words its wrong calls.
_STUBS: Dict[Tuple[str, str], Callable[..., None]] = {}


def wrong_call(
    name: str, bound: Any, args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]]
) -> NoReturn:
    """Raise the ``TypeError`` of a wrong call of the C core's method ``name``
    on ``bound`` (the instance, or the class for a class method): wrong count
    of positional arguments, an unexpected or duplicated keyword, a missing
    argument.

    The pure core's twin is a Python function, whose wrong calls Python words
    (``frozendict.set() missing 1 required positional argument: 'value'``);
    the C method carries the same signature, generated from that function
    (``__text_signature__``), and the same qualified name.  So the C core
    calls a function made from the two and lets Python word the error: the
    same text as the pure core's by construction, on every Python version
    (3.13 added "Did you mean" hints for keywords).

    >>> from frozenmap._ccore import frozendict  # doctest: +SKIP
    >>> wrong_call("set", frozendict(), (1,), None)  # doctest: +SKIP
    Traceback (most recent call last):
    TypeError: frozendict.set() missing 1 required positional argument: 'value'
    """
    owner = bound if isinstance(bound, type) else type(bound)
    # The nearest C method of that name: a subclass's own Python method of
    # the same name (which called it through super()) is not it.
    for cls in type_mro(owner):
        method = type_dict(cls).get(name)
        if type(method) in _C_METHODS:
            break
    else:  # pragma: no cover - the C core calls this for its own methods only
        raise SystemError("no C method %r on %s" % (name, type_name(owner)))
    qualname, signature = method.__qualname__, method.__text_signature__
    stub = _STUBS.get((qualname, signature))
    if stub is None:
        stub = _STUBS[(qualname, signature)] = _signature_stub(name, qualname, signature)
    stub(bound, *args, **(kwargs or {}))
    raise SystemError("%s() accepts the call its C method refused" % qualname)


def _signature_stub(name: str, qualname: str, signature: str) -> Callable[..., None]:
    """A Python function named ``qualname`` with the parameters of the text
    signature ``signature`` (``($self, key, default=None, /)``), doing nothing.
    A default that the text cannot spell (``<unrepresentable>``) becomes None:
    a wrong call's message never shows a default."""
    parameters = signature.strip()[1:-1].replace("<unrepresentable>", "None")
    parameters = parameters.replace("$self", "self").replace("$type", "cls")
    namespace: Dict[str, Any] = {}
    exec("def %s(%s):\n    pass" % (name, parameters), namespace)
    stub: Callable[..., None] = namespace[name]
    stub.__qualname__ = qualname
    return stub
