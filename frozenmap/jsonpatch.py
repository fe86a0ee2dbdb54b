"""JSON Patch (RFC 6902) over immutable documents.

A document is made of frozendicts (JSON objects), tuples (arrays) and JSON
scalars (``str``, ``int``, ``float``, ``bool``, ``None``); ``freeze`` turns
plain JSON data into one.  ``apply_json_patch`` returns the patched document
as a new version that shares everything the patch did not touch;
``make_json_patch`` and ``Diff.to_json_patch`` write the patch between two
versions.  Pointers follow RFC 6901.

Object keys are what ``json.dumps`` accepts: a ``str`` key is its own
member name, and ``int``, ``float``, ``bool`` and ``None`` keys are named as
``json.dumps`` writes them (``1`` is ``"1"``, ``True`` is ``"true"``), so a
pointer reaches them and the patches name them.

How a patch is made
-------------------
``make_json_patch`` matches the two documents, pairs the moves, then writes
the operations:

1. *Matching.*  Two objects are compared member by member: their structural
   diff finds the members that changed, and the members it calls equal are
   checked again with JSON's equality (``True`` is not ``1``); a member
   shared by both versions is not looked into.  Two arrays are aligned:
   their common start and end are set aside, and a few alignments of the
   middle are priced -- item by item, a longest common subsequence (Myers'
   algorithm, or Hunt and Szymanski's when the arrays differ a lot, each
   with a work budget), ``difflib``'s matching blocks; for each, the items
   between the matches paired in order or by kind (object, array, scalar),
   with or without the items that can move.  The cheapest is kept: an
   alignment keeps equal items, pairs the items between them (their nested
   patch, or one ``replace`` when that is shorter), and removes or inserts
   the rest.  A price counts the nested patches of the pairs (built once and
   kept for the alignment chosen), the removals and insertions, less the
   moves among them.
2. *Moves.*  Every value that leaves its place (a removed member or item) is
   matched with a value that arrives (an added member or item, or the new
   value of a member) that JSON calls equal: each match is one ``move``
   instead of a ``remove`` and an ``add``.  A replaced array item becomes a
   ``move`` out and a ``move`` in when both find a partner.  When values are
   left without a partner, the arrays are aligned a second time with their
   counts at hand (an item removed here may be the value added there), and
   the shorter patch is returned.
3. *Writing.*  The operations are written object by object in document
   order.  Matched containers never move, so every operation's parent
   exists when it applies; each array keeps which of its old and new items
   are present at every step (a Fenwick tree), so each index is the item's
   position at the moment its operation applies.  An added array or object
   that is already in the document (an untouched member, a kept item, or
   one added before) is written as a ``copy`` where the pointer is shorter
   than the value.

This module is built on frozenmap's public API only and serves both cores.
"""

from __future__ import annotations

import bisect
import difflib
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Dict, Iterator, List, Optional, Tuple

from . import _diff, _registry
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


def _shown(text: str, limit: int = 60) -> str:
    """``repr(text)``, cut when it is long (a 4,301-digit index should not
    make a 4,301-character message)."""
    if len(text) <= limit:
        return repr(text)
    return "%s...' (%d characters)" % (repr(text[:limit])[:-1], len(text))


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


def _escape(key: str) -> str:
    """``key`` (a member name) as a reference token: ``~`` is ``~0``, then
    ``/`` is ``~1``."""
    return key.replace("~", "~0").replace("/", "~1")


# --- member names: object keys as json.dumps writes them ------------------------


def json_key(key: Any) -> str:
    """The member name ``json.dumps`` writes for the object key ``key``.

    ``str`` keys are their own names; ``float`` keys are written as
    ``repr`` writes them (``NaN``, ``Infinity`` and ``-Infinity`` for the
    others), ``True``, ``False`` and ``None`` as ``true``, ``false`` and
    ``null``, and ``int`` keys in decimal.  Any other key is a
    ``TypeError``, as in ``json.dumps``.  Cost: O(1) (O(digits) for an int).

    >>> [json_key(k) for k in ('a', 1, 1.5, True, None, float('inf'))]
    ['a', '1', '1.5', 'true', 'null', 'Infinity']
    """
    if isinstance(key, str):
        return key if type(key) is str else str.__str__(key)
    if isinstance(key, float):  # before int: json checks floats first
        if key != key:
            return "NaN"
        if math.isinf(key):
            return "Infinity" if key > 0 else "-Infinity"
        return float.__repr__(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(
        "JSON object keys must be str, int, float, bool or None, not %s" % type(key).__name__
    )


_LITERAL_KEYS: Dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "Infinity": math.inf,
    "-Infinity": -math.inf,
}
_NUMBER_START = frozenset("-0123456789")
_INT_NAME = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT_NAME = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:e[-+][0-9]+)?")


def _non_str_keys_named(token: str) -> List[Any]:
    """The keys other than ``str`` that ``json_key`` could name ``token``
    (at most one; the caller checks the stored key's own name)."""
    literal = _LITERAL_KEYS.get(token, _MISSING)
    if literal is not _MISSING:
        return [literal]
    if token[:1] not in _NUMBER_START:
        return []
    if _INT_NAME.fullmatch(token):
        try:
            return [int(token)]
        except ValueError:  # more digits than int() converts: no key has that name
            return []
    if _FLOAT_NAME.fullmatch(token):
        return [float(token)]
    return []


def _keys_named(obj: Any, token: str) -> List[Any]:
    """The keys of ``obj`` (a frozendict) whose member name is ``token``:
    the ``str`` key ``token`` and any other key ``json_key`` writes so.
    Cost: O(log n)."""
    found = [token] if token in obj else []
    if token in _LITERAL_KEYS or token[:1] in _NUMBER_START:
        for candidate in _non_str_keys_named(token):
            try:
                stored = obj.key_at(obj.index(candidate))  # 1 finds True: check its name
            except KeyError:
                continue
            if type(stored) is not str and json_key(stored) == token:
                found.append(stored)
    return found


def _member(obj: Any, token: str, pointer: str) -> Any:
    """The key of ``obj`` whose member name is ``token``, or ``_MISSING``."""
    keys = _keys_named(obj, token)
    if len(keys) == 1:
        return keys[0]
    if not keys:
        return _MISSING
    raise _Fail(
        "member %s is ambiguous: the object has the keys %s, which JSON writes alike"
        % (_shown(token), " and ".join(repr(k) for k in keys)),
        pointer,
    )


# --- applying patches --------------------------------------------------------------


def _frozen(value: Any) -> Any:
    """``value`` frozen; a frozendict is taken as it is (no O(n) walk): the
    plain dicts and lists inside one are frozen when a pointer reaches them."""
    if type(value) in _SCALARS or isinstance(value, _registry.own_types):
        return value
    return freeze(value)


def _is_object(value: Any) -> bool:
    return isinstance(value, _registry.own_types)


def _array_index(array: Tuple[Any, ...], token: str, pointer: str, insert: bool) -> int:
    """The array index ``token`` names; ``-`` (and ``len``) only to ``insert``."""
    if token == "-" and insert:
        return len(array)
    if token == "-":
        raise _Fail("'-' names no element: it is the end of the array (for add)", pointer)
    if not _ARRAY_INDEX.fullmatch(token):
        raise _Fail("%s is not an array index" % _shown(token), pointer)
    # int() refuses more digits than sys.get_int_max_str_digits(), and no
    # tuple has 10**18 items: a longer index is out of range as it stands.
    index = int(token) if len(token) <= 18 else 10**18
    if index > len(array) or (index == len(array) and not insert):
        shown = token if len(token) <= 18 else "%s... (%d digits)" % (token[:12], len(token))
        raise _Fail("array index %s is out of range (length %d)" % (shown, len(array)), pointer)
    return index


def _resolve(container: Any, token: str, pointer: str) -> Any:
    """The key (or index) of the existing child ``token`` names."""
    if _is_object(container):
        key = _member(container, token, pointer)
        if key is _MISSING:
            raise _Fail("member %s does not exist" % _shown(token), pointer)
        return key
    if isinstance(container, tuple):
        return _array_index(container, token, pointer, False)
    raise _Fail("%s is not a container" % type(container).__name__, pointer)


def _child(container: Any, token: str, pointer: str) -> Tuple[Any, Any]:
    """The key (or index) ``token`` names in ``container`` and its value
    (which must exist), frozen if it is a plain dict or list."""
    key = _resolve(container, token, pointer)
    value = container[key]
    return key, freeze(value) if type(value) in (dict, list) else value


def _walk(doc: Any, tokens: List[str], pointer: str) -> Tuple[List[Any], List[Any]]:
    """``([doc, ...], keys)``: the containers along ``tokens`` up to the last
    one's parent, and the key (or index) each token names in its container."""
    path = [doc]
    keys = []
    for token in tokens[:-1]:
        key, value = _child(path[-1], token, pointer)
        path.append(value)
        keys.append(key)
    return path, keys


def _rebuild(path: List[Any], keys: List[Any], new_parent: Any) -> Any:
    """The document with ``path[-1]`` replaced by ``new_parent``, each
    container above it rebuilt with one edit."""
    new = new_parent
    for i in range(len(path) - 2, -1, -1):
        new = _with(path[i], keys[i], new)
    return new


def _with(container: Any, key: Any, value: Any) -> Any:
    """``container`` with its existing child ``key`` replaced by ``value``."""
    if _is_object(container):
        return container.set(key, value)
    return container[:key] + (value,) + container[key + 1 :]


def _get(doc: Any, pointer: str) -> Any:
    value = doc
    for token in _tokens(pointer):
        value = _child(value, token, pointer)[1]
    return value


def _add(doc: Any, pointer: str, value: Any) -> Any:
    tokens = _tokens(pointer)
    if not tokens:
        return value
    path, keys = _walk(doc, tokens, pointer)
    parent, token = path[-1], tokens[-1]
    if _is_object(parent):
        key = _member(parent, token, pointer)  # an existing member keeps its key
        new_parent = parent.set(token if key is _MISSING else key, value)
    elif isinstance(parent, tuple):
        index = _array_index(parent, token, pointer, True)
        new_parent = parent[:index] + (value,) + parent[index:]
    else:
        raise _Fail("%s is not a container" % type(parent).__name__, pointer)
    return _rebuild(path, keys, new_parent)


def _remove(doc: Any, pointer: str) -> Any:
    tokens = _tokens(pointer)
    if not tokens:
        raise _Fail("the whole document cannot be removed", pointer)
    path, keys = _walk(doc, tokens, pointer)
    parent, token = path[-1], tokens[-1]
    if _is_object(parent):
        key = _member(parent, token, pointer)
        if key is _MISSING:
            raise _Fail("member %s does not exist" % _shown(token), pointer)
        new_parent = parent.delete(key)
    elif isinstance(parent, tuple):
        index = _array_index(parent, token, pointer, False)
        new_parent = parent[:index] + parent[index + 1 :]
    else:
        raise _Fail("%s is not a container" % type(parent).__name__, pointer)
    return _rebuild(path, keys, new_parent)


def _replace(doc: Any, pointer: str, value: Any) -> Any:
    tokens = _tokens(pointer)
    if not tokens:
        return value
    path, keys = _walk(doc, tokens, pointer)
    key = _resolve(path[-1], tokens[-1], pointer)  # the target must exist
    return _rebuild(path, keys, _with(path[-1], key, value))


def json_equal(a: Any, b: Any) -> bool:
    """Equality of two JSON values (RFC 6902 section 4.6): numbers by value
    (``1 == 1.0``), but booleans only equal booleans (``True`` is not ``1``);
    arrays element by element, objects member by member."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        if a is b:
            return True
        if len(a) != len(b):
            return False
        for key, value in a.items():
            other = b.get(key, _MISSING)
            if other is _MISSING or not json_equal(value, other):
                return False
        return True
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        if a is b:
            return True
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (Mapping, tuple, list, int, float)) or isinstance(
        b, (Mapping, tuple, list, int, float)
    ):
        return False  # different JSON types
    return type(a) is type(b) and a == b


_JSON_HOLDS = "JSON holds objects, arrays, strings, numbers, true, false and null"


def _not_json(value: Any) -> Optional[str]:
    """What makes ``value`` not JSON data (what ``json.dumps`` refuses), as
    the end of a sentence about it ("holds a set at '/tags'"), or None.
    Cost: O(size of value)."""
    return _not_json_at(value, "", set())


def _not_json_at(value: Any, where: str, active: Any) -> Optional[str]:
    if value is None or isinstance(value, (str, int, float)):
        return None
    at = " at %s" % _shown(where) if where else ""
    if isinstance(value, Mapping):
        is_object = True
    elif isinstance(value, (tuple, list)):
        is_object = False
    else:
        name = type(value).__name__
        what = ("holds a value of type %r" if where else "is of type %r") % name
        return "%s%s (%s)" % (what, at, _JSON_HOLDS)
    if id(value) in active:
        return "contains itself%s" % at
    active.add(id(value))
    for key, item in value.items() if is_object else enumerate(value):
        if is_object:
            try:
                name = json_key(key)
            except TypeError:
                return (
                    "has an object key of type %s%s (JSON object keys are strings; "
                    "int, float, bool and None keys are written as strings)"
                    % (type(key).__name__, at)
                )
        else:
            name = str(key)
        if item is None or type(item) in _SCALARS:
            continue
        problem = _not_json_at(item, where + "/" + _escape(name), active)
        if problem is not None:
            return problem
    active.discard(id(value))
    return None


def _operand(op: Any, name: str) -> Any:
    value = op.get(name, _MISSING)
    if value is _MISSING:
        raise _Fail("the operation has no %r member" % name, op.get("path"))
    if name != "value":
        return value
    problem = _not_json(value)
    if problem is not None:
        raise _Fail("the value " + problem, op.get("path"))
    return _frozen(value)


def _apply_one(doc: Any, op: Any) -> Any:
    if type(op) is not dict and not isinstance(op, Mapping):
        raise _Fail("an operation must be an object, not %s" % type(op).__name__, None)
    name = _operand(op, "op")
    path = _operand(op, "path")
    if name == "add":
        return _add(doc, path, _operand(op, "value"))
    if name == "remove":
        return _remove(doc, path)
    if name == "replace":
        return _replace(doc, path, _operand(op, "value"))
    if name == "move":
        source = _operand(op, "from")
        value = _get(doc, source)  # the location must exist
        _tokens(path)
        if source == path:
            return doc
        if path.startswith(source + "/"):
            raise _Fail("a location cannot be moved into one of its children", path)
        return _add(_remove(doc, source), path, value)
    if name == "copy":
        return _add(doc, path, _get(doc, _operand(op, "from")))
    if name == "test":
        expected = _operand(op, "value")
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
    is not ``1``).  A member name finds the ``str`` key of that name, or an
    ``int``, ``float``, ``bool`` or ``None`` key that ``json.dumps`` writes
    so (``"1"`` finds the key ``1``); a name that finds two keys (``1`` and
    ``"1"``) is an error.  Values must be JSON data (a set or any other
    object is an error).  All or nothing: a failing operation raises
    ``JsonPatchError`` (a ``ValueError``) naming its index and pointer, and
    ``doc`` is never changed.  Everything the patch does not touch is shared
    with ``doc``.

    Cost: O(k log n) for k operations on objects of n members along the
    paths, plus the size of the values they carry (each is checked); an
    operation on an array (a tuple) copies it, O(length).

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
            shown = (
                _shown(fail.pointer, 100) if isinstance(fail.pointer, str) else repr(fail.pointer)
            )
            raise JsonPatchError(
                "operation %d (%s at %s): %s" % (index, kind, shown, fail.reason),
                index,
                fail.pointer,
            ) from None
    return doc


# --- making patches ----------------------------------------------------------------
#
# The maker matches the documents into *sites*: an _ObjectSite or an
# _ArraySite for each pair of containers that are matched (the roots, the
# members of matched objects with one name, the paired items of matched
# arrays) and differ.  A site records what leaves it (_Out: a removed member
# or item) and what arrives (_In: an added member or item, or the new value
# of a member), and what it costs on its own (its operations, less the moves
# inside it).  Sites are built bottom-up and memoized by the two values, so
# pricing an alignment builds the sites of the pairs it tries, and the pairs
# kept reuse them; the kept tree is then walked once (``adopt``) to link each
# site to its parent and gather what leaves and arrives.
#
# Matched containers stay where they are for the whole patch, so every
# operation's parent exists when it applies and no move goes into its own
# source; only array indices shift, and each _ArraySite counts them with a
# Fenwick tree over its steps (its old and new items, in an order both arrays
# agree with).

_KEEP, _PAIR, _REPLACE, _DEL, _INS = range(5)

# The longest common subsequence of two middles is searched for by Myers'
# algorithm (about d times the middles' length steps, for d items not in it),
# which gives up past _LCS_BUDGET steps, then by Hunt and Szymanski's (about
# r log n, for r pairs of equal items), which gives up past a quarter of
# that.  difflib's matching runs when the two middles' lengths multiply to
# at most _MATCHER_CELLS.  Pricing a pair of
# containers builds their site; after _TRIAL_BUDGET members and items have
# been looked at, pairs not built yet are priced item by item (``estimate``).
_LCS_BUDGET = 2_000_000
_MATCHER_CELLS = 250_000
_TRIAL_BUDGET = 1_000_000


class _Out:
    """A value that leaves its place (a removed member, ``key``, or array
    item, ``step``); ``to`` is the _In it moves to (None: it is removed)."""

    __slots__ = ("site", "key", "step", "value", "kind", "to")

    def __init__(self, site: Any, key: Any, step: Any, value: Any, kind: int):
        self.site, self.key, self.step, self.value, self.kind = site, key, step, value, kind
        self.to: Optional[_In] = None


class _In:
    """A value that arrives: an added member or array item, or the new value
    of a member (``replaces``); ``source`` is the _Out moved here."""

    __slots__ = ("site", "key", "step", "value", "kind", "replaces", "source")

    def __init__(self, site: Any, key: Any, step: Any, value: Any, kind: int, replaces: bool):
        self.site, self.key, self.step, self.value, self.kind = site, key, step, value, kind
        self.replaces = replaces
        self.source: Optional[_Out] = None


class _Step:
    """One step of an array's alignment: an item kept, paired (``site``, a
    nested diff), replaced, removed (``out``) or inserted (``into``); or a
    run of ``span`` items kept (``old`` is _RUN, ``new`` the new items and
    where the run starts in them)."""

    __slots__ = ("what", "old", "new", "pos", "span", "site", "out", "into")

    def __init__(self, what: int, old: Any, new: Any, span: int = 1):
        self.what, self.old, self.new = what, old, new
        self.pos = -1
        self.span = span
        self.site: Any = None
        self.out: Optional[_Out] = None
        self.into: Optional[_In] = None


class _Presence:
    """How many items each of an array's steps puts in the array now (0 or
    1, or a kept run's length), as a Fenwick tree: a step's index and a step
    coming or going cost O(log n)."""

    __slots__ = ("tree", "present")

    def __init__(self, present: List[int]):
        self.present = [count > 0 for count in present]
        size = len(present)
        tree = [0] * (size + 1)
        for i in range(1, size + 1):
            tree[i] += present[i - 1]
            up = i + (i & -i)
            if up <= size:
                tree[up] += tree[i]
        self.tree = tree

    def index(self, pos: int) -> int:
        """How many items the steps before step ``pos`` put in the array."""
        total, tree = 0, self.tree
        while pos > 0:
            total += tree[pos]
            pos -= pos & -pos
        return total

    def set(self, pos: int, here: bool) -> None:
        if self.present[pos] is here:
            return
        self.present[pos] = here
        delta = 1 if here else -1
        tree, i = self.tree, pos + 1
        while i < len(tree):
            tree[i] += delta
            i += i & -i


class _ObjectSite:
    """Two matched objects ``a`` and ``b`` (None for a site read from a
    Diff), the member ``link`` (or item ``link``, a _Step) of ``parent``."""

    __slots__ = (
        "parent", "link", "a", "b", "outs", "changes", "ins", "sources", "cost", "spare"
    )  # fmt: skip

    def __init__(self, a: Any, b: Any):
        self.parent: Any = None
        self.link: Any = None
        self.a, self.b = a, b
        self.outs: List[_Out] = []
        self.changes: List[Any] = []  # (key, nested site), and _In replacing a member
        self.ins: List[_In] = []
        # (value, key, step, by class too) of the values that stay: copy sources
        self.sources: List[Tuple[Any, Any, Any, bool]] = []
        self.cost = 0  # its operations, less the moves inside it
        self.spare: Any = _NO_SPARE  # the classes that leave and arrive unmatched inside it


class _ArraySite:
    """Two matched arrays, the member or item ``link`` of ``parent``."""

    __slots__ = ("parent", "link", "a", "b", "steps", "presence", "sources", "cost", "spare")

    def __init__(self, a: Any, b: Any):
        self.parent: Any = None
        self.link: Any = None
        self.a, self.b = a, b
        self.steps: List[_Step] = []
        self.presence: Any = None
        self.sources: List[Tuple[Any, Any, Any, bool]] = []
        self.cost = 0
        self.spare: Any = _NO_SPARE


_REPLACED: Any = object()  # what _Maker.compare returns for a value replaced whole
_NO_SPARE: Tuple[Dict[int, int], Dict[int, int]] = ({}, {})
_NESTED: Any = object()  # a _Step's site before it is built: write the pair's patch
_RUN: Any = object()  # the old value of a _Step that is a run of kept items


class _Tally:
    """Counts of the classes of values that leave and arrive, to price the
    moves among them: ``pair_off`` matches them and keeps what is left."""

    __slots__ = ("cost", "gone", "come")

    def __init__(self) -> None:
        self.cost = 0
        self.gone: Dict[int, int] = {}
        self.come: Dict[int, int] = {}

    def leave(self, kind: int) -> None:
        self.cost += 1
        self.gone[kind] = self.gone.get(kind, 0) + 1

    def arrive(self, kind: int) -> None:
        self.cost += 1
        self.come[kind] = self.come.get(kind, 0) + 1

    def take(self, site: Any) -> None:
        """Count a nested site: its cost and what it leaves unmatched."""
        self.cost += site.cost
        gone, come = site.spare
        for kind, count in gone.items():
            self.gone[kind] = self.gone.get(kind, 0) + count
        for kind, count in come.items():
            self.come[kind] = self.come.get(kind, 0) + count

    def pair_off(self) -> None:
        """One move for each value that leaves and an equal one that arrives."""
        gone, come = self.gone, self.come
        if not gone or not come:
            return
        for kind in [k for k in gone if k in come]:
            moves = min(gone[kind], come[kind])
            self.cost -= moves
            _drop(gone, kind, moves)
            _drop(come, kind, moves)

    def matches(self, spare: Any, hint: Any) -> int:
        """How many of what a nested site leaves unmatched (``spare``) could
        move to or from what is counted here or elsewhere (``hint``)."""
        moves = 0
        for mine, here, there in (
            (spare[0], self.come, hint and hint[1]),
            (spare[1], self.gone, hint and hint[0]),
        ):
            for kind, count in mine.items():
                moves += min(count, here.get(kind, 0) + (there.get(kind, 0) if there else 0))
        return moves

    def outside(self, hint: Any) -> int:
        """The moves the values left unmatched could make with unmatched
        values elsewhere in the documents (``hint``: their counts)."""
        if hint is None:
            return 0
        moves = 0
        for mine, theirs in ((self.gone, hint[1]), (self.come, hint[0])):
            for kind, count in mine.items():
                moves += min(count, theirs.get(kind, 0))
        return moves


def _drop(counts: Dict[int, int], kind: int, count: int) -> None:
    left = counts[kind] - count
    if left:
        counts[kind] = left
    else:
        del counts[kind]


def _kind(value: Any) -> int:
    """0 for a scalar, 1 for an object, 2 for an array."""
    if type(value) is tuple:
        return 2
    return 1 if _is_object(value) else 0


class _Maker:
    """Matches two documents (or reads a Diff), pairs the moves and writes
    the operations; one instance per patch."""

    def __init__(self, first: Optional["_Maker"] = None) -> None:
        self.buckets: Dict[int, List[Tuple[Any, int]]] = {}  # hash -> [(value, class)]
        self.known: Dict[int, Tuple[Any, int]] = {}  # id(value) -> (value, class)
        self.frozen: Dict[int, Tuple[Any, Any]] = {}  # id(plain) -> (plain, frozen)
        self.scalars: Dict[Any, int] = {}  # a str -> its class
        self.numbers: Dict[Any, int] = {}  # an int, float or None -> its class
        # what a first pass left unmatched: all of it, and each array's share
        self.unmatched: Any = None
        self.shares: Dict[Tuple[int, int], Any] = {}
        self.chosen: Dict[Tuple[int, int], Any] = {}  # id(a), id(b) -> an alignment
        self.estimates: Dict[Tuple[int, int], Tuple[Any, Any, int]] = {}
        if first is not None:  # a second pass: the same classes, and the first's counts
            self.buckets, self.known, self.frozen = first.buckets, first.known, first.frozen
            self.scalars, self.numbers = first.scalars, first.numbers
            self.unmatched, self.shares = first.unmatched, first.shares
            self.chosen, self.estimates = first.chosen, first.estimates
        self.results: Dict[Tuple[int, int], Tuple[Any, Any, Any]] = {}  # compare's
        self.work = 0  # members and items looked at
        self.aligned = False  # whether an array was aligned (a second pass may help)
        self.outs: List[_Out] = []
        self.ins: List[_In] = []
        self.replaced_items: List[Tuple[_ArraySite, _Step]] = []
        self.names: Dict[int, str] = {}  # id(site) -> its pointer token in its parent
        # where a value is that no operation changes: sources for copy
        self.by_identity: Dict[int, Tuple[Any, Any, Any, Any]] = {}
        self.by_class: Dict[int, Tuple[Any, Any, Any]] = {}
        self.runs: List[Tuple[_ArraySite, _Step]] = []  # kept runs not looked into yet
        self.ops: List[Dict[str, Any]] = []

    # --- values --------------------------------------------------------------------

    def norm(self, value: Any) -> Any:
        """``value`` with plain dicts and lists frozen (the frozen copy lives
        as long as the maker, so the ids the tables use stay unique)."""
        if type(value) not in (dict, list):
            return value
        done = self.frozen.get(id(value))
        if done is None:
            done = self.frozen[id(value)] = (value, freeze(value))
        return done[1]

    def cls(self, value: Any) -> int:
        """The class of ``value`` under JSON's equality: equal values (``1``
        and ``1.0``) share a class, ``True`` and ``1`` do not."""
        kind = type(value)
        if kind is str or kind is int or kind is float or value is None:
            # a scalar's class by its value (1 and 1.0 are one key; True is not 1)
            number = self.scalars.get(value, 0) if kind is str else self.numbers.get(value, 0)
            if not number:
                number = len(self.known) + len(self.scalars) + len(self.numbers) + 1
                (self.scalars if kind is str else self.numbers)[value] = number
            return number
        known = self.known.get(id(value))
        if known is not None:
            return known[1]
        try:
            bucket = self.buckets.setdefault(hash(value), [])
        except TypeError:  # not JSON: equal only to itself
            bucket = []
        number = 0
        for rep, its_class in bucket:
            if rep is value or json_equal(rep, value):
                number = its_class
                break
        if not number:
            # the tables only grow: numbers are unique
            number = len(self.known) + len(self.scalars) + len(self.numbers) + 1
            bucket.append((value, number))
        self.known[id(value)] = (value, number)
        return number

    def estimate(self, a: Any, b: Any) -> int:
        """About how many operations turn ``a`` into ``b`` when arrays are
        compared item by item: the price of a pair past _TRIAL_BUDGET."""
        if a is b:
            return 0
        done = self.estimates.get((id(a), id(b)))
        if done is not None:
            return done[2]
        x, y = self.norm(a), self.norm(b)
        if _is_object(x) and _is_object(y):
            cost = sum(1 for k in x if k not in y) + sum(1 for k in y if k not in x)
            for k, v in x.items():
                w = y.get(k, _MISSING)
                if w is not _MISSING:
                    cost += self.estimate(v, w)
        elif isinstance(x, tuple) and isinstance(y, tuple):
            cost = abs(len(x) - len(y)) + sum(self.estimate(v, w) for v, w in zip(x, y))
        else:
            cost = 0 if json_equal(x, y) else 1
        self.estimates[(id(a), id(b))] = (a, b, cost)
        return cost

    # --- matching ------------------------------------------------------------------

    def compare(self, old: Any, new: Any) -> Any:
        """What turns ``old`` into ``new``: None (nothing), a site
        (containers of one kind that differ), or _REPLACED.  Memoized."""
        if old is new:
            return None
        done = self.results.get((id(old), id(new)))
        if done is not None:
            return done[2]
        result = self.build(old, new)
        self.results[(id(old), id(new))] = (old, new, result)
        return result

    def build(self, old: Any, new: Any) -> Any:
        x, y = self.norm(old), self.norm(new)
        if _is_object(x) and _is_object(y):
            return self.object_site(x, y)
        if isinstance(x, tuple) and isinstance(y, tuple):
            return self.array_site(x, y)
        return None if json_equal(x, y) else _REPLACED

    def object_site(self, a: Any, b: Any) -> Any:
        site = _ObjectSite(a, b)
        self.work += len(b)
        diff = a.diff(b)  # the members that differ in Python
        added_map, changed = diff.added, diff.changed
        removed = list(diff.removed.items())
        added: List[Tuple[Any, Any]] = []
        changes: List[Tuple[Any, Any, Any]] = []  # (key, old, new), in b's order
        for key, new in b.items():
            if added_map and key in added_map:
                added.append((key, new))
                continue
            change = changed.get(key, _MISSING) if changed else _MISSING
            old = a[key] if change is _MISSING else change[0]
            if type(key) is not str:
                stored = a.key_at(a.index(key))
                if stored is not key and _name_or_none(stored) != _name_or_none(key):
                    removed.append((stored, old))  # equal in Python, not in JSON (True, 1)
                    added.append((key, new))
                    continue
            if old is new:
                if type(new) is tuple or _is_object(new):
                    site.sources.append((new, key, None, False))
                continue
            changes.append((key, old, new))
        changes += _same_names(removed, added)
        return self.fill_object(site, removed, changes, added)

    def diff_site(self, diff: Any) -> Any:
        """The site a ``Diff`` describes (it holds no maps, so two keys that
        JSON writes alike are looked for among the diff's own keys only)."""
        site = _ObjectSite(None, None)
        removed = list(diff.removed.items())
        added = list(diff.added.items())
        changes: List[Tuple[Any, Any, Any]] = []
        for key, change in diff.changed.items():
            if isinstance(change, _diff.Diff):
                changes.append((key, change, _MISSING))
            else:
                changes.append((key, change[0], change[1]))
        changes += _same_names(removed, added)
        return self.fill_object(site, removed, changes, added)

    def fill_object(
        self,
        site: _ObjectSite,
        removed: List[Tuple[Any, Any]],
        changes: List[Tuple[Any, Any, Any]],
        added: List[Tuple[Any, Any]],
    ) -> Any:
        tally = _Tally()
        for key, old in removed:
            out = _Out(site, key, None, old, self.cls(old))
            site.outs.append(out)
            tally.leave(out.kind)
        for key, old, new in changes:
            result = self.diff_site(old) if new is _MISSING else self.compare(old, new)
            if result is _REPLACED:
                into = _In(site, key, None, new, self.cls(new), True)
                site.changes.append(into)
                tally.arrive(into.kind)
            elif result is not None:
                site.changes.append((key, result))
                tally.take(result)
            elif type(new) is tuple or _is_object(new):  # equal: it stays
                site.sources.append((new, key, None, True))
        for key, new in added:
            into = _In(site, key, None, new, self.cls(new), False)
            site.ins.append(into)
            tally.arrive(into.kind)
        if not (site.outs or site.changes or site.ins):
            return None
        tally.pair_off()
        site.cost, site.spare = tally.cost, (tally.gone, tally.come)
        return site

    def array_site(self, a: Tuple[Any, ...], b: Tuple[Any, ...]) -> Any:
        site = _ArraySite(a, b)
        self.work += len(a) + len(b)
        hint = self.hint(a, b)
        self.aligned = True
        plain = {dict, list}
        if not plain.isdisjoint(map(type, a)):
            a = tuple(self.norm(x) for x in a)
        if not plain.isdisjoint(map(type, b)):
            b = tuple(self.norm(x) for x in b)
        site.steps = self.align(a, b, hint, (id(site.a), id(site.b)))
        tally = _Tally()
        changed = False
        for pos, step in enumerate(site.steps):
            step.pos = pos
            what = step.what
            if what == _PAIR:
                result = self.compare(step.old, step.new)
                if result is None:
                    step.what = what = _KEEP
                elif result is _REPLACED or (result.cost > 1 and step.site is not _NESTED):
                    step.what = _REPLACE  # one replace is shorter than its patch
                    tally.cost += 1
                else:
                    step.site = result
                    tally.take(result)
            elif what == _REPLACE:
                tally.cost += 1
            elif what == _DEL:
                step.out = _Out(site, None, step, step.old, self.cls(step.old))
                tally.leave(step.out.kind)
            elif what == _INS:
                step.into = _In(site, None, step, step.new, self.cls(step.new), False)
                tally.arrive(step.into.kind)
            if what == _KEEP:
                if step.old is _RUN:
                    site.sources.append((_RUN, None, step, False))
                elif type(step.new) is tuple or _is_object(step.new):
                    site.sources.append((step.new, None, (step, 0), True))
            else:
                changed = True
        if not changed:
            return None
        tally.pair_off()
        site.cost, site.spare = tally.cost, (tally.gone, tally.come)
        return site

    def hint(self, a: Any, b: Any) -> Any:
        """What a first pass left unmatched outside the arrays ``a`` and
        ``b`` (the classes that leave, and that arrive), or None."""
        if self.unmatched is None:
            return None
        share = self.shares.get((id(a), id(b)))
        gone, come = dict(self.unmatched[0]), dict(self.unmatched[1])
        if share is not None:  # what the first pass found in these arrays is theirs
            for counts, mine in ((gone, share[0]), (come, share[1])):
                for kind, count in mine.items():
                    counts[kind] = counts.get(kind, 0) - count
        # what leaves and arrives elsewhere moves there; the rest is left over
        spare_gone = {k: n - come.get(k, 0) for k, n in gone.items() if n > come.get(k, 0)}
        spare_come = {k: n - gone.get(k, 0) for k, n in come.items() if n > gone.get(k, 0)}
        return spare_gone, spare_come

    # --- aligning arrays -------------------------------------------------------------

    def align(
        self, a: Tuple[Any, ...], b: Tuple[Any, ...], hint: Any, name: Tuple[int, int]
    ) -> List[_Step]:
        """The cheapest of a few alignments of ``a`` with ``b`` (see the
        module docstring), as steps in an order both arrays agree with."""
        n, m = len(a), len(b)
        start = 0
        while (
            start < n
            and start < m
            and (a[start] is b[start] or self.cls(a[start]) == self.cls(b[start]))
        ):
            start += 1
        end = 0
        while (
            end < n - start
            and end < m - start
            and (
                a[n - 1 - end] is b[m - 1 - end]
                or self.cls(a[n - 1 - end]) == self.cls(b[m - 1 - end])
            )
        ):
            end += 1
        mid_a, mid_b = a[start : n - end], b[start : m - end]
        ca = [self.cls(x) for x in mid_a]
        cb = [self.cls(y) for y in mid_b]
        best: List[Tuple[int, int, int]] = []
        best_ways: Dict[int, bool] = {}
        done = self.chosen.get(name) if not (hint and (hint[0] or hint[1])) else None
        if done is not None:  # the first pass's choice, and nothing new to weigh
            best, best_ways = done
        else:
            best_cost: Tuple[int, int, int] = (-1, 0, 0)
            tried = set()
            for candidate in _alignments(ca, cb, (mid_a, mid_b)):
                if len(candidate) < 64:  # (long ones rarely coincide: not worth hashing)
                    if tuple(candidate) in tried:
                        continue
                    tried.add(tuple(candidate))
                cost, ways = self.price(candidate, mid_a, mid_b, ca, cb, hint)
                if best_cost[0] < 0 or cost < best_cost:
                    best, best_cost, best_ways = candidate, cost, ways
            if self.unmatched is None:
                self.chosen[name] = (best, best_ways)
        # a run of kept items is one step, its new value (the items, where
        # the run starts in them): copy sources, looked into when needed
        steps = [_Step(_KEEP, _RUN, (b, 0), start)] if start else []
        for k, (what, i, j) in enumerate(best):
            if what == _KEEP:
                if steps and steps[-1].old is _RUN:
                    steps[-1].span += 1
                else:
                    steps.append(_Step(_KEEP, _RUN, (mid_b, j)))
                continue
            step = _Step(what, mid_a[i] if i >= 0 else None, mid_b[j] if j >= 0 else None)
            way = best_ways.get(k)
            if way is not None:  # priced as a nested patch (False) or one replace (True)
                step.what, step.site = (_REPLACE, None) if way else (_PAIR, _NESTED)
            steps.append(step)
        if end:
            steps.append(_Step(_KEEP, _RUN, (b, m - end), end))
        return steps

    def price(
        self,
        candidate: List[Tuple[int, int, int]],
        a: Tuple[Any, ...],
        b: Tuple[Any, ...],
        ca: List[int],
        cb: List[int],
        hint: Any,
    ) -> Tuple[Tuple[int, int, int], Dict[int, bool]]:
        """How many operations ``candidate`` takes (each pair's patch, one
        for each item removed or inserted, less the moves among those and
        with the values ``hint`` says are unmatched elsewhere), then, to
        choose between equals, how many items it replaces whole and how few
        it keeps; and, for each pair of containers, whether one ``replace``
        (True) or their patch (False) writes it."""
        tally = _Tally()
        kept = 0
        pairs = []
        for k, (what, i, j) in enumerate(candidate):
            if what == _PAIR:
                pairs.append(k)
            elif what == _KEEP:
                kept += 1
            elif what == _DEL:
                tally.leave(ca[i])
            elif what == _INS:
                tally.arrive(cb[j])
        ways: Dict[int, bool] = {}
        whole = 0
        longer = []
        for k in pairs:
            _, i, j = candidate[k]
            old, new = a[i], b[j]
            if (id(old), id(new)) not in self.results and self.work > _TRIAL_BUDGET:
                tally.cost += min(self.estimate(old, new), 1)
                continue
            result = self.compare(old, new)
            if result is None:
                continue
            if result is _REPLACED:
                whole += 1
                tally.cost += 1
            elif result.cost > 1:
                longer.append((k, result))
            else:
                ways[k] = False
                tally.take(result)
        for k, result in longer:
            # a patch of more than one operation is longer than a replace,
            # unless what it removes or adds moves to or from elsewhere
            if result.cost - tally.matches(result.spare, hint) > 1:
                ways[k] = True
                whole += 1
                tally.cost += 1
            else:
                ways[k] = False
                tally.take(result)
        tally.pair_off()
        cost = tally.cost - tally.outside(hint) + self.blocked(candidate, a, b, ca, ways)
        return (cost, whole, -kept), ways

    def blocked(
        self,
        candidate: List[Tuple[int, int, int]],
        a: Tuple[Any, ...],
        b: Tuple[Any, ...],
        ca: List[int],
        ways: Dict[int, bool],
    ) -> int:
        """The moves ``candidate`` counts that RFC 6902 forbids: an item
        removed just before a paired item, moving into it, leaves the
        paired item its index, so the pointers are a prefix of each other
        (a ``remove`` and an ``add`` instead: one operation more)."""
        extra = 0
        if not ways:
            return 0
        run: List[int] = []
        for k, (what, i, j) in enumerate(candidate):
            if what == _DEL:
                run.append(ca[i])
                continue
            if run and what == _PAIR and ways.get(k) is False:
                arriving = self.compare(a[i], b[j]).spare[1]
                extra += sum(1 for kind in run if arriving.get(kind))
            run = []
        return extra

    # --- the kept tree ---------------------------------------------------------------

    def adopt(self, site: Any, parent: Any, link: Any, seen: Any) -> Any:
        """Link ``site`` (and the sites below it) into the kept tree and
        gather what leaves and arrives, in document order.  A site kept at
        two places (equal pairs of values shared by both documents) is
        built again for the second."""
        if id(site) in seen:
            site = self.build(site.a, site.b)
        seen.add(id(site))
        site.parent, site.link = parent, link
        outs, ins = len(self.outs), len(self.ins)
        if isinstance(site, _ObjectSite):
            self.outs += site.outs
            for k, change in enumerate(site.changes):
                if isinstance(change, _In):
                    self.ins.append(change)
                else:
                    child = self.adopt(change[1], site, change[0], seen)
                    site.changes[k] = (change[0], child)
            self.ins += site.ins
        else:
            for step in site.steps:
                if step.what == _PAIR:
                    step.site = self.adopt(step.site, site, step, seen)
                elif step.what == _REPLACE:
                    self.replaced_items.append((site, step))
                elif step.what == _DEL:
                    assert step.out is not None
                    self.outs.append(step.out)
                elif step.what == _INS:
                    assert step.into is not None
                    self.ins.append(step.into)
            if self.unmatched is None and (len(self.outs) > outs or len(self.ins) > ins):
                self.shares[(id(site.a), id(site.b))] = (
                    _counts(self.outs[outs:]),
                    _counts(self.ins[ins:]),
                )
        for value, key, step, by_class in site.sources:
            if value is _RUN:
                self.runs.append((site, step))
                continue
            self.by_identity.setdefault(id(value), (value, site, key, step))
            if by_class:
                self.by_class.setdefault(self.cls(value), (site, key, step))
        return site

    # --- moves -----------------------------------------------------------------------

    def pair_moves(self) -> None:
        """Match each value that leaves with an equal value that arrives (one
        ``move`` for the two): within one container first, then anywhere;
        then split a replaced array item in two moves when its old value has
        a place to go and its new value a source."""
        by_kind: Dict[int, List[_Out]] = {}
        by_site: Dict[Tuple[int, int], List[_Out]] = {}
        for out in reversed(self.outs):  # popped from the end: document order
            by_kind.setdefault(out.kind, []).append(out)
            by_site.setdefault((id(out.site), out.kind), []).append(out)
        if not by_kind:
            return
        for same_site in (True, False):
            for into in self.ins:
                if into.source is not None:
                    continue
                if same_site:
                    outs = by_site.get((id(into.site), into.kind))
                else:
                    outs = by_kind.get(into.kind)
                while outs and outs[-1].to is not None:
                    outs.pop()
                if outs:
                    out = outs.pop()
                    out.to, into.source = into, out
        if not self.replaced_items:
            return
        waiting: Dict[int, List[_In]] = {}
        for into in reversed(self.ins):
            if into.source is None and not into.replaces:
                waiting.setdefault(into.kind, []).append(into)
        for site, step in self.replaced_items:
            outs = by_kind.get(self.cls(step.new))
            while outs and outs[-1].to is not None:
                outs.pop()
            ins = waiting.get(self.cls(step.old))
            if outs and ins:
                self.split(site, step, outs.pop(), ins.pop())

    def split(self, site: _ArraySite, step: _Step, source: _Out, target: _In) -> None:
        """Write the replaced item ``step`` as two moves: its old value out to
        ``target``, and ``source``'s value in."""
        leave = _Step(_DEL, step.old, None)
        arrive = _Step(_INS, None, step.new)
        leave.out = _Out(site, None, leave, step.old, self.cls(step.old))
        arrive.into = _In(site, None, arrive, step.new, self.cls(step.new), False)
        k = site.steps.index(step)
        site.steps[k : k + 1] = [leave, arrive]
        leave.out.to, target.source = target, leave.out
        arrive.into.source, source.to = source, arrive.into

    # --- writing ---------------------------------------------------------------------

    def write(self, root: Any) -> List[Dict[str, Any]]:
        """The operations of the kept tree under ``root``."""
        first = self.unmatched is None
        root = self.adopt(root, None, None, set())
        if first:
            self.unmatched = (_counts(self.outs), _counts(self.ins))
        self.pair_moves()
        self.prepare(root)
        self.write_site(root)
        return self.ops

    def prepare(self, site: Any) -> None:
        """Number each array's steps and mark its old items present."""
        if isinstance(site, _ArraySite):
            for pos, step in enumerate(site.steps):
                step.pos = pos
            site.presence = _Presence(
                [0 if step.what == _INS else step.span for step in site.steps]
            )
            for step in site.steps:
                if step.site is not None:
                    self.prepare(step.site)
        else:
            for change in site.changes:
                if not isinstance(change, _In):
                    self.prepare(change[1])

    def path(self, site: Any) -> str:
        """The pointer to ``site``'s container now."""
        parts = []
        while site.parent is not None:
            parent = site.parent
            if isinstance(parent, _ArraySite):
                parts.append(str(parent.presence.index(site.link.pos)))
            else:
                token = self.names.get(id(site))
                if token is None:
                    token = self.names[id(site)] = _escape(_name(site.link, parent))
                parts.append(token)
            site = parent
        return "".join("/" + part for part in reversed(parts))

    def place(self, site: Any, key: Any, step: Any) -> str:
        """The pointer to a member (``key``) or an item (``step``, or a
        kept run's step and an offset in it) now."""
        if step is None:
            return self.path(site) + "/" + _escape(_name(key, site))
        offset = 0
        if type(step) is tuple:
            step, offset = step
        return "%s/%d" % (self.path(site), site.presence.index(step.pos) + offset)

    def write_site(self, site: Any) -> None:
        ops = self.ops
        if isinstance(site, _ObjectSite):
            for out in site.outs:
                if out.to is None:
                    ops.append({"op": "remove", "path": self.place(site, out.key, None)})
            for change in site.changes:
                if isinstance(change, _In):
                    self.write_in(change)
                else:
                    self.write_site(change[1])
            for into in site.ins:
                self.write_in(into)
            return
        steps = site.steps
        k = 0
        while k < len(steps):
            step = steps[k]
            what = step.what
            k += 1
            if what == _PAIR:
                self.write_site(step.site)
            elif what == _REPLACE:
                where = self.place(site, None, step)
                ops.append({"op": "replace", "path": where, "value": self.checked(step.new, where)})
                self.remember(step.new, site, None, step)
            elif what == _DEL:
                run = [step]
                while k < len(steps) and steps[k].what == _DEL:
                    run.append(steps[k])
                    k += 1
                # the last first: each index is the item's index in the old array
                for step in reversed(run):
                    assert step.out is not None
                    if step.out.to is None:
                        ops.append({"op": "remove", "path": self.place(site, None, step)})
                        site.presence.set(step.pos, False)
            elif what == _INS:
                assert step.into is not None
                self.write_in(step.into)

    def target(self, into: _In) -> Tuple[str, int]:
        """The pointer ``into`` arrives at (``-`` for the end of an array),
        and its index (-1 for a member)."""
        site, step = into.site, into.step
        if step is None:
            return self.place(site, into.key, None), -1
        index = site.presence.index(step.pos)
        if index == site.presence.index(len(site.steps)):
            return self.path(site) + "/-", index
        return "%s/%d" % (self.path(site), index), index

    def write_in(self, into: _In) -> None:
        site, source, value = into.site, into.source, into.value
        if source is not None:
            origin = self.place(source.site, source.key, source.step)
            left_at = -1
            if source.step is not None:
                left_at = source.site.presence.index(source.step.pos)
                source.site.presence.set(source.step.pos, False)
            where, index = self.target(into)
            if into.step is not None:
                site.presence.set(into.step.pos, True)
            if source.site is site and (index == left_at >= 0 or origin == where):
                pass  # out and back in at the same place: nothing to write
            elif where.startswith(origin + "/"):
                # RFC 6902 forbids moving a location into one of its children,
                # comparing the pointers as written
                self.ops.append({"op": "remove", "path": origin})
                self.ops.append({"op": "add", "path": where, "value": self.checked(value, where)})
            else:
                self.ops.append({"op": "move", "from": origin, "path": where})
        else:
            where, index = self.target(into)
            copied = self.copy_source(value)
            if copied is not None and len(copied) + 8 < _json_length(value):
                self.ops.append({"op": "copy", "from": copied, "path": where})
            else:
                op = "replace" if into.replaces else "add"
                self.ops.append({"op": op, "path": where, "value": self.checked(value, where)})
            if into.step is not None:
                site.presence.set(into.step.pos, True)
        self.remember(value, site, into.key, into.step)

    def remember(self, value: Any, site: Any, key: Any, step: Any) -> None:
        """``value`` is in place now and no later operation changes it: a
        source for ``copy``."""
        if type(value) is tuple or _is_object(value):
            self.by_class.setdefault(self.cls(value), (site, key, step))

    def copy_source(self, value: Any) -> Optional[str]:
        """A pointer to a value equal to ``value`` (an array or object) that
        is in the document now, or None."""
        if not value or not (type(value) is tuple or _is_object(value)):
            return None
        for _ in range(2):
            found = self.by_identity.get(id(value))
            if found is not None and found[0] is value:
                return self.place(found[1], found[2], found[3])
            place = self.by_class.get(self.cls(value))
            if place is not None:
                return self.place(*place)
            if not self.runs:
                return None
            # the first miss: look into the runs of kept items once
            for site, step in self.runs:
                items, first = step.new
                for offset in range(step.span):
                    item = items[first + offset]
                    if type(item) is tuple or _is_object(item):
                        self.by_identity.setdefault(id(item), (item, site, None, (step, offset)))
                        self.by_class.setdefault(self.cls(item), (site, None, (step, offset)))
            self.runs = []
        return None

    def checked(self, value: Any, where: str) -> Any:
        """``value``, for an operation at ``where``, if it is JSON data."""
        problem = _not_json(value)
        if problem is not None:
            raise TypeError("make_json_patch: the value at %s %s" % (_shown(where), problem))
        return value


def _counts(values: List[Any]) -> Dict[int, int]:
    """How many of ``values`` (_Out or _In) are of each class."""
    counts: Dict[int, int] = {}
    for value in values:
        counts[value.kind] = counts.get(value.kind, 0) + 1
    return counts


def _name_or_none(key: Any) -> Optional[str]:
    """``json_key(key)``, or None for a key JSON cannot name."""
    try:
        return json_key(key)
    except (TypeError, ValueError):
        return None


def _same_names(
    removed: List[Tuple[Any, Any]], added: List[Tuple[Any, Any]]
) -> List[Tuple[Any, Any, Any]]:
    """Take the removed and added members that JSON names alike (the keys
    ``1`` and ``"1"``: one member in JSON) out of both lists, as changes."""
    if not removed or not added or all(type(k) is str for k, _ in removed + added):
        return []
    names: Dict[str, int] = {}
    for r, (key, _) in enumerate(removed):
        name = _name_or_none(key)
        if name is not None:
            names[name] = r
    twins = []
    for k, (key, _) in enumerate(added):
        name = _name_or_none(key)
        r = -1 if name is None else names.pop(name, -1)
        if r >= 0:
            twins.append((r, k))
    if not twins:
        return []
    changes = [(removed[r][0], removed[r][1], added[k][1]) for r, k in twins]
    gone_r, gone_a = {r for r, _ in twins}, {k for _, k in twins}
    removed[:] = [item for r, item in enumerate(removed) if r not in gone_r]
    added[:] = [item for k, item in enumerate(added) if k not in gone_a]
    return changes


def _name(key: Any, site: Any) -> str:
    """The member name of ``key`` in ``site``'s objects, checked: a key JSON
    cannot name, or a name two keys share, is an error."""
    try:
        name = json_key(key)
    except (TypeError, ValueError) as error:
        raise TypeError("make_json_patch: the object member %r: %s" % (key, error)) from None
    if type(key) is str and name not in _LITERAL_KEYS and name[:1] not in _NUMBER_START:
        return name  # no other key has this name
    for obj in (site.a, site.b):
        if obj is None:
            continue
        keys = _keys_named(obj, name)
        if len(keys) > 1:
            raise ValueError(
                "make_json_patch: an object has the keys %s, which JSON writes alike (%s): "
                "a JSON Pointer cannot tell them apart"
                % (" and ".join(repr(k) for k in keys), _shown(name))
            )
    return name


def _json_length(value: Any) -> int:
    """How long ``value`` is as compact JSON (0 if it is not JSON)."""
    try:
        return len(json.dumps(value, default=_plain, separators=(",", ":")))
    except (TypeError, ValueError, RecursionError):
        return 0


def _plain(value: Any) -> Any:
    if _is_object(value):
        return dict(value)
    raise TypeError("not JSON")


def _alignments(
    ca: List[int], cb: List[int], items: Tuple[Tuple[Any, ...], Tuple[Any, ...]]
) -> Iterator[List[Tuple[int, int, int]]]:
    """Candidate alignments of ``ca`` with ``cb`` (the middles' classes; the
    middles are ``items``), as lists of (what, i, j), with -1 for the side a
    step does not have."""
    n, m = len(ca), len(cb)
    if not n or not m:
        yield [(_DEL, i, -1) for i in range(n)] + [(_INS, -1, j) for j in range(m)]
        return
    matchings: List[List[Tuple[int, int]]] = []
    if not set(ca).isdisjoint(cb):
        lcs = _myers(ca, cb, _LCS_BUDGET)
        if lcs is None:  # many differences: few pairs of equal items, perhaps
            lcs = _hunt_szymanski(ca, cb, _LCS_BUDGET // 4)
        if lcs is not None:
            matchings.append(lcs)
        if n * m <= _MATCHER_CELLS:
            matcher = difflib.SequenceMatcher(None, ca, cb, autojunk=False)
            blocks = [
                (i + k, j + k) for i, j, size in matcher.get_matching_blocks() for k in range(size)
            ]
            if blocks not in matchings:
                matchings.append(blocks)
    # item by item: unless a common subsequence leaves far fewer items out
    # than this pairs unequal ones (each pair costs an operation or more)
    unequal = sum(x != y for x, y in zip(ca, cb)) + abs(n - m)
    longest = max((len(matches) for matches in matchings), default=0)
    if unequal <= 2 * (n + m - 2 * longest) + 8:
        matchings.insert(0, [])  # no matches: the items paired in order
    for matches in matchings:
        movers = _movers(ca, cb, matches)
        for skip in (None, movers) if movers[0] else (None,):
            for kinds in (None, items):
                candidate = _fill_gaps(n, m, matches, skip, kinds)
                if candidate is not None:
                    yield candidate


def _fill_gaps(
    n: int, m: int, matches: List[Tuple[int, int]], movers: Any, kinds: Any
) -> Optional[List[Tuple[int, int, int]]]:
    """The alignment that keeps ``matches`` (increasing (i, j) pairs of equal
    items) and pairs the items between them in order: each with the next
    (or, given ``kinds``, the next of its kind: object, array or scalar);
    the items in ``movers`` (two sets of indexes) are not paired.  With
    ``kinds``, None when that pairs every item as the plain order does."""
    out: List[Tuple[int, int, int]] = []
    differs = False
    i = j = 0
    for mi, mj in matches + [(n, m)]:
        if mi == i or mj == j:  # a side without items: nothing to pair
            if mi > i:
                out.extend((_DEL, k, -1) for k in range(i, mi))
            elif mj > j:
                out.extend((_INS, -1, k) for k in range(j, mj))
        else:
            gap_a = [x for x in range(i, mi) if not movers or x not in movers[0]]
            gap_b = [y for y in range(j, mj) if not movers or y not in movers[1]]
            pairs = list(zip(gap_a, gap_b))
            if kinds is not None:
                by_kind = []
                q = 0
                for x in gap_a:
                    r = q
                    while r < len(gap_b) and _kind(kinds[1][gap_b[r]]) != _kind(kinds[0][x]):
                        r += 1
                    if r < len(gap_b):
                        by_kind.append((x, gap_b[r]))
                        q = r + 1
                if by_kind != pairs:
                    differs, pairs = True, by_kind
            x, y = i, j
            for pa, pb in pairs:
                out.extend((_DEL, k, -1) for k in range(x, pa))
                out.extend((_INS, -1, k) for k in range(y, pb))
                out.append((_PAIR, pa, pb))
                x, y = pa + 1, pb + 1
            out.extend((_DEL, k, -1) for k in range(x, mi))
            out.extend((_INS, -1, k) for k in range(y, mj))
        if mi < n:
            out.append((_KEEP, mi, mj))
        i, j = mi + 1, mj + 1
    return None if kinds is not None and not differs else out


def _movers(ca: List[int], cb: List[int], matches: List[Tuple[int, int]]) -> Tuple[Any, Any]:
    """The unmatched items of each side that have an equal unmatched item on
    the other side (they can move instead of pairing)."""
    free_a = [True] * len(ca)
    free_b = [True] * len(cb)
    for i, j in matches:
        free_a[i] = free_b[j] = False
    left: Dict[int, List[int]] = {}
    for i, kind in enumerate(ca):
        if free_a[i]:
            left.setdefault(kind, []).append(i)
    movers_a, movers_b = set(), set()
    for j, kind in enumerate(cb):
        if free_b[j]:
            items = left.get(kind)
            if items:
                movers_a.add(items.pop())
                movers_b.add(j)
    return movers_a, movers_b


def _myers(a: List[int], b: List[int], budget: int) -> Optional[List[Tuple[int, int]]]:
    """A longest common subsequence of ``a`` and ``b``, as increasing (i, j)
    pairs (Myers' O((n + m) d) search, d the items not in it), or None when
    the search would take more than ``budget`` steps."""
    n, m = len(a), len(b)
    frontier = {1: 0}  # diagonal k = x - y -> the furthest x reached on it
    trace = []
    steps = 0
    for d in range(n + m + 1):
        trace.append(frontier.copy())
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and frontier[k - 1] < frontier[k + 1]):
                x = frontier[k + 1]
            else:
                x = frontier[k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            frontier[k] = x
            if x >= n and y >= m:
                return _myers_path(trace, n, m, d, k)
        steps += n + m + d
        if steps > budget:
            return None
    return None


def _myers_path(
    trace: List[Dict[int, int]], n: int, m: int, d: int, k: int
) -> List[Tuple[int, int]]:
    """The equal items along the path Myers' search found, in order."""
    x = n
    matches = []
    for depth in range(d, 0, -1):
        frontier = trace[depth]
        if k == -depth or (k != depth and frontier[k - 1] < frontier[k + 1]):
            prev_k = k + 1  # came down: an insertion
            start_x = prev_x = frontier[prev_k]
        else:
            prev_k = k - 1  # came right: a removal
            prev_x = frontier[prev_k]
            start_x = prev_x + 1
        while x > start_x:
            x -= 1
            matches.append((x, x - k))
        x, k = prev_x, prev_k
    while x > 0:
        x -= 1
        matches.append((x, x))
    matches.reverse()
    return matches


def _hunt_szymanski(a: List[int], b: List[int], budget: int) -> Optional[List[Tuple[int, int]]]:
    """A longest common subsequence of ``a`` and ``b``, as increasing (i, j)
    pairs (Hunt and Szymanski: O(r log n) for r pairs of equal items), or
    None when there are more than ``budget`` such pairs."""
    where: Dict[int, List[int]] = {}
    for j, kind in enumerate(b):
        where.setdefault(kind, []).append(j)
    if sum(len(where.get(kind, ())) for kind in a) > budget:
        return None
    ends: List[int] = []  # ends[k]: the least j that ends a common run of k + 1
    tails: List[Any] = []  # tails[k]: that run, as nested (i, j, previous) links
    for i, kind in enumerate(a):
        for j in reversed(where.get(kind, ())):
            k = bisect.bisect_left(ends, j)
            link = (i, j, tails[k - 1] if k else None)
            if k == len(ends):
                ends.append(j)
                tails.append(link)
            else:
                ends[k] = j
                tails[k] = link
    matches = []
    run: Any = tails[-1] if tails else None
    while run is not None:
        matches.append((run[0], run[1]))
        run = run[2]
    matches.reverse()
    return matches


def diff_to_json_patch(diff: Any) -> List[Dict[str, Any]]:
    """The JSON Patch that does what ``diff`` (a ``Diff``) does; what
    ``Diff.to_json_patch()`` returns."""
    maker = _Maker()
    root = maker.diff_site(diff)
    return [] if root is None else maker.write(root)


_diff.register_json_patch_writer(diff_to_json_patch)  # Diff sits below: it cannot import this


def make_json_patch(a: Any, b: Any) -> List[Dict[str, Any]]:
    """A JSON Patch (RFC 6902) that turns document ``a`` into ``b``.

    Both are frozen first (``frozenmap.freeze``).  Objects are compared by
    their structural diff (``frozendict.diff``), then by JSON's equality
    (``True`` is not ``1``; ``1`` is ``1.0``).  Arrays are aligned: their
    common start and end are set aside, and the middle is matched by a
    longest common subsequence, by ``difflib``'s matching or item by item,
    whichever takes fewest operations (an item whose own patch would take
    several is replaced whole).  A value that leaves one place and arrives
    at another is one ``move``; an added array or object already in the
    document is a ``copy`` where the pointer is shorter than the value.

    ``apply_json_patch(a, make_json_patch(a, b)) == b``.  Keys that are
    ``int``, ``float``, ``bool`` or ``None`` are named as ``json.dumps``
    writes them (a key added by the patch becomes a ``str``), so with them
    the result is ``b`` as JSON: ``json.dumps`` writes both alike, member
    order aside (JSON objects have none).  The operations are plain dicts
    whose values are parts of ``b``
    (``json.dumps(patch, default=frozenmap.json_default)`` serializes one).
    A value JSON cannot hold is a ``TypeError``, and an object with two keys
    JSON writes alike (``1`` and ``"1"``) a ``ValueError``, where an
    operation needs them.

    Cost: O(n log n) for two objects of n members that differ (a member
    shared with ``a``, as in a version derived from it, is not looked into:
    O(1)); O(length) for an array, plus the alignment of what lies between the
    common start and end: Myers' search within ~2,000,000 steps (about d
    times the length, for d items that differ), else Hunt and Szymanski's
    within ~500,000 pairs of equal items, else item by item; at most twice
    that when a second pass runs.

    >>> from frozenmap import freeze, make_json_patch
    >>> a = freeze({'name': 'ada', 'tags': ['x', 'y', 'z'], 'old': 1})
    >>> make_json_patch(a, a.set('name', 'Ada').delete('old'))
    [{'op': 'remove', 'path': '/old'}, {'op': 'replace', 'path': '/name', 'value': 'Ada'}]
    >>> make_json_patch(a, freeze({'name': 'ada', 'labels': ['x', 'y', 'z'], 'old': True}))
    [{'op': 'replace', 'path': '/old', 'value': True}, {'op': 'move', 'from': '/tags', 'path': '/labels'}]
    >>> make_json_patch(freeze([4, 1, 2, 3]), freeze([1, 2, 3, 4]))
    [{'op': 'move', 'from': '/0', 'path': '/-'}]
    """
    maker = _Maker()
    # (a tuple is taken as it is too: the maker freezes what it compares)
    a = a if type(a) is tuple else _frozen(a)
    b = b if type(b) is tuple else _frozen(b)
    result = maker.compare(a, b)
    if result is None:
        return []
    if result is _REPLACED:
        return [{"op": "replace", "path": "", "value": maker.checked(maker.norm(b), "")}]
    ops = maker.write(result)
    if maker.aligned and (
        any(out.to is None for out in maker.outs) or any(into.source is None for into in maker.ins)
    ):
        # values left unmatched: align the arrays again knowing where they are
        second = _Maker(maker)
        again = second.write(second.compare(a, b))
        if len(again) < len(ops):
            return again
    return ops
