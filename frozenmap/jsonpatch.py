"""JSON Patch (RFC 6902) over immutable documents.

A document is made of frozendicts (JSON objects), tuples (arrays) and JSON
scalars (``str``, ``int``, ``float``, ``bool``, ``None``); ``freeze`` turns
plain JSON data into one.  ``apply_json_patch`` returns the patched document
as a new version that shares everything the patch did not touch;
``make_json_patch`` and ``Diff.to_json_patch`` write the patch between two
versions from their structural diff.  Pointers follow RFC 6901.

This module is built on frozenmap's public API only and serves both cores.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Dict, List, Optional, Tuple

from . import _common
from ._freeze import freeze

__all__ = ["JsonPatchError", "apply_json_patch", "make_json_patch", "diff_to_json_patch"]

_MISSING: Any = object()
_SCALARS = (str, int, float, bool, type(None))
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")


class JsonPatchError(ValueError):
    """A JSON Patch operation that cannot be applied (RFC 6902 section 5).

    ``index`` is the operation's position in the patch (None when the patch
    itself is malformed), ``pointer`` its ``path`` (or ``from``) pointer.
    """

    def __init__(self, message: str, index: Optional[int] = None, pointer: Any = None):
        super().__init__(message)
        self.index = index
        self.pointer = pointer


class _Fail(Exception):
    """One operation failed; ``apply_json_patch`` adds its index and pointer."""

    def __init__(self, reason: str, pointer: Any):
        super().__init__(reason)
        self.reason = reason
        self.pointer = pointer


# --- JSON Pointer (RFC 6901) ------------------------------------------------------


def _tokens(pointer: Any) -> List[str]:
    """The reference tokens of ``pointer``, unescaped (``~1`` is ``/``, then
    ``~0`` is ``~``)."""
    if not isinstance(pointer, str):
        raise _Fail("the pointer must be a string, not %s" % type(pointer).__name__, pointer)
    if pointer == "":
        return []
    if pointer[0] != "/":
        raise _Fail("a pointer must be empty or start with '/'", pointer)
    tokens = pointer[1:].split("/")
    for i, token in enumerate(tokens):
        if "~" in token:
            if re.search(r"~(?![01])", token):
                raise _Fail("'~' must be followed by '0' or '1' in a pointer", pointer)
            tokens[i] = token.replace("~1", "/").replace("~0", "~")
    return tokens


def _escape(key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError("a JSON object's keys are strings, not %s" % type(key).__name__)
    return key.replace("~", "~0").replace("/", "~1")


def _frozen(value: Any) -> Any:
    """``value`` frozen; a frozendict is taken as it is (no O(n) walk): the
    plain dicts and lists inside one are frozen when a pointer reaches them."""
    if type(value) in _SCALARS or isinstance(value, _common._own_types):
        return value
    return freeze(value)


def _is_object(value: Any) -> bool:
    return isinstance(value, _common._own_types)


def _array_index(array: Tuple[Any, ...], token: str, pointer: str, insert: bool) -> int:
    """The array index ``token`` names; ``-`` (and ``len``) only to ``insert``."""
    if token == "-" and insert:
        return len(array)
    if not _ARRAY_INDEX.fullmatch(token):
        raise _Fail("%r is not an array index" % token, pointer)
    index = int(token)
    if index > len(array) or (index == len(array) and not insert):
        raise _Fail("array index %d is out of range (length %d)" % (index, len(array)), pointer)
    return index


def _child(container: Any, token: str, pointer: str) -> Any:
    """The value ``token`` names in ``container`` (which must exist)."""
    if _is_object(container):
        value = container.get(token, _MISSING)
        if value is _MISSING:
            raise _Fail("member %r does not exist" % token, pointer)
    elif isinstance(container, tuple):
        value = container[_array_index(container, token, pointer, False)]
    else:
        raise _Fail("%s is not a container" % type(container).__name__, pointer)
    return freeze(value) if type(value) in (dict, list) else value


def _walk(doc: Any, tokens: List[str], pointer: str) -> List[Any]:
    """``[doc, ...]``: the containers along ``tokens``, up to the last one's parent."""
    path = [doc]
    for token in tokens[:-1]:
        path.append(_child(path[-1], token, pointer))
    return path


def _rebuild(path: List[Any], tokens: List[str], new_parent: Any) -> Any:
    """The document with ``path[-1]`` replaced by ``new_parent``, each
    container above it rebuilt with one edit."""
    new = new_parent
    for i in range(len(path) - 2, -1, -1):
        new = _with(path[i], tokens[i], new)
    return new


def _with(container: Any, token: str, value: Any) -> Any:
    """``container`` with its existing child ``token`` replaced by ``value``."""
    if _is_object(container):
        return container.set(token, value)
    index = int(token)
    return container[:index] + (value,) + container[index + 1 :]


def _get(doc: Any, pointer: str) -> Any:
    value = doc
    for token in _tokens(pointer):
        value = _child(value, token, pointer)
    return value


def _add(doc: Any, pointer: str, value: Any) -> Any:
    tokens = _tokens(pointer)
    if not tokens:
        return value
    path = _walk(doc, tokens, pointer)
    parent, token = path[-1], tokens[-1]
    if _is_object(parent):
        new_parent = parent.set(token, value)
    elif isinstance(parent, tuple):
        index = _array_index(parent, token, pointer, True)
        new_parent = parent[:index] + (value,) + parent[index:]
    else:
        raise _Fail("%s is not a container" % type(parent).__name__, pointer)
    return _rebuild(path, tokens, new_parent)


def _remove(doc: Any, pointer: str) -> Any:
    tokens = _tokens(pointer)
    if not tokens:
        raise _Fail("the whole document cannot be removed", pointer)
    path = _walk(doc, tokens, pointer)
    parent, token = path[-1], tokens[-1]
    if _is_object(parent):
        if token not in parent:
            raise _Fail("member %r does not exist" % token, pointer)
        new_parent = parent.delete(token)
    elif isinstance(parent, tuple):
        index = _array_index(parent, token, pointer, False)
        new_parent = parent[:index] + parent[index + 1 :]
    else:
        raise _Fail("%s is not a container" % type(parent).__name__, pointer)
    return _rebuild(path, tokens, new_parent)


def _replace(doc: Any, pointer: str, value: Any) -> Any:
    tokens = _tokens(pointer)
    if not tokens:
        return value
    path = _walk(doc, tokens, pointer)
    _child(path[-1], tokens[-1], pointer)  # the target must exist
    return _rebuild(path, tokens, _with(path[-1], tokens[-1], value))


def json_equal(a: Any, b: Any) -> bool:
    """Equality of two JSON values (RFC 6902 section 4.6): numbers by value
    (``1 == 1.0``), but booleans only equal booleans (``True`` is not ``1``);
    arrays element by element, objects member by member."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        if len(a) != len(b):
            return False
        for key, value in a.items():
            other = b.get(key, _MISSING)
            if other is _MISSING or not json_equal(value, other):
                return False
        return True
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (Mapping, tuple, list, int, float)) or isinstance(
        b, (Mapping, tuple, list, int, float)
    ):
        return False  # different JSON types
    return type(a) is type(b) and a == b


def _member(op: Any, name: str) -> Any:
    value = op.get(name, _MISSING)
    if value is _MISSING:
        raise _Fail("the operation has no %r member" % name, op.get("path"))
    return _frozen(value) if name == "value" else value


def _apply_one(doc: Any, op: Any) -> Any:
    if type(op) is not dict and not isinstance(op, Mapping):
        raise _Fail("an operation must be an object, not %s" % type(op).__name__, None)
    name = _member(op, "op")
    path = _member(op, "path")
    if name == "add":
        return _add(doc, path, _member(op, "value"))
    if name == "remove":
        return _remove(doc, path)
    if name == "replace":
        return _replace(doc, path, _member(op, "value"))
    if name == "move":
        source = _member(op, "from")
        value = _get(doc, source)  # the location must exist
        _tokens(path)
        if source == path:
            return doc
        if path.startswith(source + "/"):
            raise _Fail("a location cannot be moved into one of its children", path)
        return _add(_remove(doc, source), path, value)
    if name == "copy":
        return _add(doc, path, _get(doc, _member(op, "from")))
    if name == "test":
        expected = _member(op, "value")
        if not json_equal(_get(doc, path), expected):
            raise _Fail("test failed: the value is not %r" % (expected,), path)
        return doc
    raise _Fail("unknown operation %r" % (name,), path)


def apply_json_patch(doc: Any, patch: Any) -> Any:
    """``doc`` with the JSON Patch ``patch`` (RFC 6902) applied.

    ``doc`` is made of frozendicts, tuples and JSON scalars; plain dicts and
    lists, in ``doc`` or in the patch's values, are frozen first
    (``frozenmap.freeze``).  ``patch`` is a sequence of operations: ``add``,
    ``remove``, ``replace``, ``move``, ``copy`` and ``test``, with
    ``path``/``from`` JSON Pointers (RFC 6901: ``~1`` for ``/``, ``~0`` for
    ``~``, ``-`` for the end of an array).  ``add`` to an existing member
    replaces it; ``test`` compares JSON values (``1`` equals ``1.0``, ``True``
    is not ``1``).  All or nothing: a failing operation raises
    ``JsonPatchError`` (a ``ValueError``) naming its index and pointer, and
    ``doc`` is never changed.  Everything the patch does not touch is shared
    with ``doc``.

    Cost: O(k log n) for k operations on objects of n members along the
    paths; an operation on an array (a tuple) copies it, O(length).

    >>> from frozenmap import apply_json_patch, freeze
    >>> doc = freeze({'user': {'name': 'ada', 'langs': ['en']}})
    >>> apply_json_patch(doc, [
    ...     {'op': 'add', 'path': '/user/langs/-', 'value': 'fr'},
    ...     {'op': 'replace', 'path': '/user/name', 'value': 'Ada'},
    ... ])
    frozendict({'user': frozendict({'name': 'Ada', 'langs': ('en', 'fr')})})
    """
    if type(patch) not in (list, tuple) and (
        isinstance(patch, (str, bytes, Mapping)) or not isinstance(patch, Sequence)
    ):
        raise JsonPatchError(
            "a JSON Patch must be a sequence of operations, not %s" % type(patch).__name__
        )
    doc = _frozen(doc)
    for index, op in enumerate(patch):
        try:
            doc = _apply_one(doc, op)
        except _Fail as fail:
            kind = op.get("op") if isinstance(op, Mapping) else None
            raise JsonPatchError(
                "operation %d (%s at %r): %s" % (index, kind, fail.pointer, fail.reason),
                index,
                fail.pointer,
            ) from None
    return doc


# --- making patches ---------------------------------------------------------------


def _op(name: str, path: str, value: Any = _MISSING) -> Dict[str, Any]:
    op = {"op": name, "path": path}
    if value is not _MISSING:
        op["value"] = value
    return op


def _diff_values(a: Any, b: Any, path: str, out: List[Dict[str, Any]]) -> None:
    """Append to ``out`` the operations that turn ``a`` into ``b`` at ``path``."""
    if a is b:
        return
    if _is_object(a) and _is_object(b):
        _diff_ops(a.diff(b, deep=True), path, out)
    elif isinstance(a, tuple) and isinstance(b, tuple):
        common = min(len(a), len(b))
        for i in range(common):
            _diff_values(a[i], b[i], "%s/%d" % (path, i), out)
        for i in range(len(a) - 1, common - 1, -1):
            out.append(_op("remove", "%s/%d" % (path, i)))
        for i in range(common, len(b)):
            out.append(_op("add", path + "/-", b[i]))
    elif not json_equal(a, b):
        out.append(_op("replace", path, b))


def _diff_ops(diff: Any, path: str, out: List[Dict[str, Any]]) -> None:
    for key in diff.removed:
        out.append(_op("remove", "%s/%s" % (path, _escape(key))))
    for key, change in diff.changed.items():
        where = "%s/%s" % (path, _escape(key))
        if isinstance(change, _common.Diff):
            _diff_ops(change, where, out)
        else:
            _diff_values(change[0], change[1], where, out)
    for key, value in diff.added.items():
        out.append(_op("add", "%s/%s" % (path, _escape(key)), value))


def diff_to_json_patch(diff: Any) -> List[Dict[str, Any]]:
    """The JSON Patch that does what ``diff`` (a ``Diff``) does; what
    ``Diff.to_json_patch()`` returns."""
    out: List[Dict[str, Any]] = []
    _diff_ops(diff, "", out)
    return out


def make_json_patch(a: Any, b: Any) -> List[Dict[str, Any]]:
    """A JSON Patch (RFC 6902) that turns document ``a`` into ``b``.

    Both are frozen first (``frozenmap.freeze``).  Objects are compared by
    their structural diff (``frozendict.diff(deep=True)``), so the patch
    holds ``remove``, ``replace`` and ``add`` operations for what differs
    only; arrays are compared element by element, then shortened or
    extended at the end.  ``apply_json_patch(a, make_json_patch(a, b)) == b``.
    The operations are plain dicts whose values are parts of ``b``
    (``json.dumps(patch, default=frozenmap.json_default)`` serializes it).
    Members whose values are equal in Python but not in JSON (``1`` and
    ``True``) are not told apart inside objects.

    Cost: O(d log n) for objects d edits apart that share structure (one
    derived from the other), O(n) for unrelated ones; O(length) per array
    that differs.

    >>> from frozenmap import freeze, make_json_patch
    >>> a = freeze({'name': 'ada', 'tags': ['x'], 'old': 1})
    >>> make_json_patch(a, a.set('name', 'Ada').delete('old'))
    [{'op': 'remove', 'path': '/old'}, {'op': 'replace', 'path': '/name', 'value': 'Ada'}]
    """
    out: List[Dict[str, Any]] = []
    _diff_values(_frozen(a), _frozen(b), "", out)
    return out
