"""Nested paths: ``get_in``, ``set_in``, ``update_in``, ``delete_in``.

A path is an iterable of keys leading through nested frozendicts.  The top of
the path is a frozendict (the result is a new version) or an ``Evolver``
(edited in place; the nested maps stay immutable).  Only the maps along the
path are rebuilt, bottom up, each with one ``set``; every other sub-map is
shared, and a level whose value did not change comes back as the very same
object, so a change that changes nothing returns the original.

Rules shared by all four (and by the C core's ``paths.c``, which mirrors this
module): an empty path is ``ValueError``; a ``str`` or ``bytes`` path is
``TypeError`` (it is almost always a missing pair of brackets); a path that goes
through a value that is not a frozendict is ``TypeError`` naming the position.

This module knows the frozendict type only through the ``fd_type`` argument,
so it sits below both ``frozendict`` and ``Evolver``; in the layers it stands
beside ``views`` and ``merge``, above ``derive`` and ``reads``: it derives
through ``derive_with`` and ``derive_without``, as the C core's ``paths.c``
does, and reads through each map's own lookup.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from .derive import derive_with, derive_without

__all__ = ["path_keys", "path_get_in", "path_set_in", "path_update_in", "path_delete_in"]

_MISSING: Any = object()


def _is(obj: Any, types: Any) -> bool:
    """Whether ``obj``'s type is one of ``types``, by the type itself as the C
    core checks it (``isinstance`` would also ask a lying ``__class__``)."""
    return issubclass(type(obj), types)


def path_keys(path: Any) -> Tuple[Any, ...]:
    """The keys of ``path`` as a tuple (a non-empty iterable that is no string)."""
    if _is(path, (str, bytes)):
        raise TypeError("path must be an iterable of keys, not '%s'" % type(path).__name__)
    keys = tuple(path)
    if not keys:
        raise ValueError("path must not be empty")
    return keys


def _get(m: Any, key: Any) -> Any:
    """m's value for key (a frozendict or an Evolver, by its own lookup, as
    the C core reads it: no overridden ``get``), or ``_MISSING``."""
    entry = m._lookup(key)
    return _MISSING if entry is None else entry[3]


def path_not_a_frozendict(index: int, value: Any) -> TypeError:
    if issubclass(type(value), dict):  # the type itself, as the C core reads it
        hint = "; frozenmap.freeze() turns nested dicts into frozendicts"
    elif issubclass(type(value), (list, tuple)):
        hint = "; a path goes through frozendicts only: update_in() can replace the whole sequence"
    else:
        hint = ""
    return TypeError(
        "path[%d] leads to a value of type '%s', not a frozendict%s"
        % (index, type(value).__name__, hint)
    )


def path_get_in(top: Any, path: Any, default: Any, fd_type: type) -> Any:
    """The value at ``path`` below ``top``, or ``default`` when a key is missing."""
    keys = path_keys(path)
    m = top
    for i, key in enumerate(keys):
        if i and not _is(m, fd_type):
            raise path_not_a_frozendict(i - 1, m)
        m = _get(m, key)
        if m is _MISSING:
            return default
    return m


def path_walk(top: Any, keys: Tuple[Any, ...], fd_type: type, create: bool) -> List[Any]:
    """``maps[i]`` is the map that holds ``keys[i]``; missing ones are created
    empty when ``create``, else ``KeyError``."""
    maps = [top]
    m = top
    for i in range(len(keys) - 1):
        child = _get(m, keys[i])
        if child is _MISSING:
            if not create:
                raise KeyError(keys[i])
            child = fd_type()
        elif not _is(child, fd_type):
            raise path_not_a_frozendict(i, child)
        maps.append(child)
        m = child
    return maps


def path_rebuild(
    top: Any, maps: List[Any], keys: Tuple[Any, ...], level: int, new: Any, fd_type: type
) -> Any:
    """Put ``new`` at ``keys[level]`` of ``maps[level]``, and each rebuilt map
    into the one above it; the new top (or the evolver, edited)."""
    for i in range(level, 0, -1):
        new = derive_with(fd_type, maps[i], keys[i], new)
    if _is(top, fd_type):
        return derive_with(fd_type, top, keys[0], new)
    if level == 0 or new is not maps[1]:  # an Evolver: one edit, if any
        top[keys[0]] = new
    return top


def path_set_in(top: Any, path: Any, value: Any, fd_type: type) -> Any:
    keys = path_keys(path)
    maps = path_walk(top, keys, fd_type, True)
    return path_rebuild(top, maps, keys, len(keys) - 1, value, fd_type)


def path_update_in(
    top: Any, path: Any, fn: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any], fd_type: type
) -> Any:
    default = kwargs.pop("default", _MISSING)
    keys = path_keys(path)
    maps = path_walk(top, keys, fd_type, default is not _MISSING)
    old = _get(maps[-1], keys[-1])
    if old is _MISSING:
        if default is _MISSING:
            raise KeyError(keys[-1])
        old = default
    new = fn(old, *args, **kwargs)
    return path_rebuild(top, maps, keys, len(keys) - 1, new, fd_type)


def path_delete_in(top: Any, path: Any, fd_type: type) -> Any:
    keys = path_keys(path)
    maps = path_walk(top, keys, fd_type, False)
    last = len(keys) - 1
    if last == 0 and not _is(top, fd_type):  # an Evolver's own key
        del top[keys[0]]
        return top
    new = derive_without(fd_type, maps[last], keys[last], False)
    if last == 0:
        return new
    return path_rebuild(top, maps, keys, last - 1, new, fd_type)
