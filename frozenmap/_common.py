"""Pieces shared by both cores: the ``Diff`` result type, pickle helpers and
the set operations of the keys and items views.

Both cores use these same objects, so a ``Diff`` or a pickle made with one core
is understood by the other, and their views' set operations cannot drift apart.
"""

import operator
from typing import Any, Iterable, NamedTuple, Tuple

__all__ = [
    "Diff",
    "restore",
    "restore_evolver",
    "frozendict_types",
    "register_frozendict_type",
    "deepen_diff",
    "ViewSetOps",
    "register_view_types",
]

import builtins as _builtins

frozendict_types: Tuple[type, ...] = tuple(
    t for t in (getattr(_builtins, "frozendict", None),) if t is not None
)
"""Every frozendict type loaded: each core's and the builtin (3.15+).  A core
treats the others' instances as it treats a dict in ``==``, ``|`` and the
constructor, so the two cores' frozendicts interoperate."""


def register_frozendict_type(cls: type) -> None:
    """Add a core's frozendict type to ``frozendict_types``."""
    global frozendict_types, _own_types
    if cls not in frozendict_types:
        frozendict_types = frozendict_types + (cls,)
    if cls not in _own_types:
        _own_types = _own_types + (cls,)


_own_types: Tuple[Any, ...] = ()
"""frozenmap's own frozendict types (the ones with ``diff`` and ``evolve``)."""

_MISSING: Any = object()


def _differs(current: Any, expected: Any) -> bool:
    return current is not expected and current != expected


class Diff(NamedTuple):
    """What changed from one mapping to another; the result of ``frozendict.diff``.

    ``added`` holds the keys only in the new mapping, with their new values;
    ``removed`` the keys only in the old one, with their old values; ``changed``
    maps each key present in both whose value differs to ``(old, new)`` -- or,
    in a deep diff, to the nested ``Diff`` when both values are frozendicts.
    All three are ``frozendict`` instances.  A ``Diff`` is a patch: ``apply``
    it to the old mapping to get the new one, ``invert`` it to go back.

    >>> from frozenmap import frozendict
    >>> old = frozendict(a=1, b=2)
    >>> new = frozendict(b=3, c=4)
    >>> patch = old.diff(new)
    >>> patch.apply(old) == new
    True
    >>> patch.invert().apply(new) == old
    True
    """

    added: Any
    removed: Any
    changed: Any

    def __bool__(self) -> bool:
        """False when nothing was added, removed or changed.

        >>> from frozenmap import frozendict
        >>> m = frozendict(a=1)
        >>> bool(m.diff(m)), bool(m.diff({'a': 2}))
        (False, True)
        """
        return bool(self.added or self.removed or self.changed)

    def __len__(self) -> int:
        """How many keys the diff touches (added, removed and changed).

        It is not the tuple's length: unpack ``added, removed, changed = d``.

        >>> from frozenmap import frozendict
        >>> len(frozendict(a=1, b=2).diff({'b': 3, 'c': 4}))
        3
        """
        return len(self.added) + len(self.removed) + len(self.changed)

    def apply(self, mapping: Any, /) -> Any:
        """``mapping`` (a frozendict) with this diff applied, as a new version.

        Every removed or changed key must hold the value the diff expects
        (the same object, or an equal one) and every added key must be
        absent (or already hold an equal value); otherwise ``ValueError``
        names the key: a conflict is never overwritten.  An empty diff
        returns ``mapping`` itself.  Cost: O(d log n) for d changes.
        """
        if not (self.added or self.removed or self.changed):
            return mapping
        if not isinstance(mapping, _own_types):
            raise TypeError(
                "Diff.apply() needs a frozenmap frozendict, not '%s'" % type(mapping).__name__
            )
        e = mapping.evolve()
        for key, old in self.removed.items():
            current = e.get(key, _MISSING)
            if current is _MISSING:
                raise ValueError("Diff.apply(): conflict at key %r: it is missing" % (key,))
            if _differs(current, old):
                raise ValueError(
                    "Diff.apply(): conflict at key %r: it does not hold the value "
                    "the diff removes" % (key,)
                )
            del e[key]
        for key, change in self.changed.items():
            current = e.get(key, _MISSING)
            if current is _MISSING:
                raise ValueError("Diff.apply(): conflict at key %r: it is missing" % (key,))
            if isinstance(change, Diff):
                if not isinstance(current, _own_types):
                    raise ValueError(
                        "Diff.apply(): conflict at key %r: a nested diff needs a "
                        "frozendict there, not '%s'" % (key, type(current).__name__)
                    )
                e[key] = change.apply(current)
            else:
                old, new = change
                if _differs(current, old):
                    raise ValueError(
                        "Diff.apply(): conflict at key %r: it does not hold the old "
                        "value of the change" % (key,)
                    )
                e[key] = new
        for key, new in self.added.items():
            current = e.get(key, _MISSING)
            if current is _MISSING:
                e[key] = new
            elif _differs(current, new):
                raise ValueError(
                    "Diff.apply(): conflict at key %r: it is already there with "
                    "another value" % (key,)
                )
        return e.freeze()

    def to_json_patch(self) -> "list[dict[str, Any]]":
        """The JSON Patch (RFC 6902) that does what this diff does.

        ``remove`` for each removed key, ``add`` for each added one, and for
        each changed one the operations of its nested diff, or those
        ``make_json_patch`` writes for the pair (arrays, tuples, are
        aligned); a removed value that is added elsewhere is one ``move``.
        Keys are named as ``json.dumps`` writes them (``1`` is ``"1"``,
        ``True`` is ``"true"``) and JSON Pointer escaped.  The diff says
        what changed as Python compares (``1 == True``): ``make_json_patch``
        compares as JSON does.  Cost: O(d) for d changes, plus what each
        changed pair of arrays costs to align.

        >>> from frozenmap import frozendict
        >>> old = frozendict(user=frozendict(name='ada', age=36), todos=frozendict({1: 'x'}))
        >>> new = old.set_in(['user', 'age'], 37).set_in(['todos', 2], 'y')
        >>> old.diff(new, deep=True).to_json_patch()
        [{'op': 'replace', 'path': '/user/age', 'value': 37}, {'op': 'add', 'path': '/todos/2', 'value': 'y'}]
        """
        from .jsonpatch import diff_to_json_patch

        return diff_to_json_patch(self)

    def invert(self) -> "Diff":
        """The diff that undoes this one: ``d.invert().apply(d.apply(m)) == m``."""
        changed = self.changed
        inverted = type(changed)(
            (key, change.invert() if isinstance(change, Diff) else (change[1], change[0]))
            for key, change in changed.items()
        )
        return Diff(self.removed, self.added, inverted)


Diff.added.__doc__ = "The keys only in the new mapping, with their new values (a frozendict)."
Diff.removed.__doc__ = "The keys only in the old mapping, with their old values (a frozendict)."
Diff.changed.__doc__ = (
    "The keys in both whose values differ, each with ``(old, new)`` -- or, in a deep "
    "diff, the nested ``Diff`` when both values are frozendicts (a frozendict)."
)


def _diff_make(cls: Any, iterable: Any) -> Diff:
    """``Diff._make``: namedtuple's checks the field count with ``len()``,
    which a Diff answers with the number of keys it touches."""
    result = tuple.__new__(cls, iterable)
    if tuple.__len__(result) != 3:
        raise TypeError("Expected 3 arguments, got %d" % tuple.__len__(result))
    return result  # type: ignore[no-any-return]


Diff._make = classmethod(_diff_make)  # type: ignore[assignment]


def deepen_diff(diff: Diff) -> Diff:
    """``diff`` with each change between two frozendicts replaced by their own
    (deep) diff; the rest of ``frozendict.diff(other, deep=True)``."""
    changed = diff.changed
    nested = [
        (key, old.diff(new, deep=True))
        for key, (old, new) in changed.items()
        if isinstance(old, _own_types) and isinstance(new, _own_types)
    ]
    if not nested:
        return diff
    e = changed.evolve()
    for key, sub in nested:
        e[key] = sub
    return Diff(diff.added, diff.removed, e.freeze())


def _core_frozendict(core: str) -> Any:
    """The frozendict type of the named core, or the default one if that core
    cannot be loaded here (a pickle made with the C core loads without it)."""
    import importlib

    try:
        module = importlib.import_module("frozenmap._%score" % ("c" if core == "c" else "py"))
    except ImportError:
        module = importlib.import_module("frozenmap")
    return module.frozendict


def restore(items: Any, core: str = "") -> Any:
    """Rebuild an exact ``frozendict`` from a pickle, with the core that made it."""
    return _core_frozendict(core)(items)


def restore_evolver(items: Any, core: str = "") -> Any:
    """Rebuild an ``Evolver`` from a pickle, with the core that made it."""
    return _core_frozendict(core)(items).evolve()


# --- the set operations of keys and items views ---------------------------------
#
# PEP 814's frozendict returns dict's own views, so ``fd.items() - other`` must
# do exactly what ``dict_items - other`` does: the same result, the same
# exceptions with the same messages, the same element kept among equal ones
# (``1`` or ``True``).  collections.abc.Set's mixins do not: they test
# membership one element at a time where dict's views build a set, so an
# unhashable pair on either side gave a result instead of dict's TypeError.
# ViewSetOps therefore follows CPython's dictviews_* functions
# (Objects/dictobject.c) step for step, leaving the hashing, adding and error
# messages to the same set methods they call.  The pure core's views inherit it;
# the C core calls its methods (views.c, view_set_op).

_dict_keys_type: type = type({}.keys())
_dict_items_type: type = type({}.items())
_keys_types: Tuple[type, ...] = (_dict_keys_type,)
_items_types: Tuple[type, ...] = (_dict_items_type,)
_builtin_frozendict = getattr(_builtins, "frozendict", None)
if _builtin_frozendict is not None:  # the same types on 3.15; in case that changes
    _keys_types += (type(_builtin_frozendict().keys()),)
    _items_types += (type(_builtin_frozendict().items()),)


def register_view_types(keys_type: type, items_type: type) -> None:
    """Add a core's keys and items view types to those treated like dict's."""
    global _keys_types, _items_types
    if keys_type not in _keys_types:
        _keys_types = _keys_types + (keys_type,)
    if items_type not in _items_types:
        _items_types = _items_types + (items_type,)


def _is_view_set(obj: Any) -> bool:
    """CPython's PyDictViewSet_Check: a keys or items view, dict's or ours."""
    return isinstance(obj, _keys_types) or isinstance(obj, _items_types)


_absent = object()


def _items_xor(self: Any, other: Any) -> "set[Any]":
    """dictitems_xor: both sides items views; pairs in one but not the other."""
    remaining = dict(self.mapping.items())
    result: "set[Any]" = set()
    for key, value in other.mapping.items():
        mine = remaining.get(key, _absent)
        if mine is _absent:
            result.add((key, value))
        elif mine is value or mine == value:
            del remaining[key]
        else:
            result.add((key, value))
    result.update(remaining.items())
    return result


def _intersect(self: Any, other: Any) -> "set[Any]":
    """_PyDictView_Intersect; ``self`` is the view (either operand of ``&``)."""
    len_self = len(self)
    if type(other) is set and len_self <= len(other):
        return other.intersection(self)
    if _is_view_set(other) and len(other) > len_self:
        self, other = other, self
    result: "set[Any]" = set()
    for item in other:
        if item in self:
            result.add(item)
    return result


def _updated(first: Any, update: Any, second: Any) -> "set[Any]":
    """``set(first)`` changed in place by ``update(result, second)``: how dict's
    views compute ``|``, ``-`` and ``^`` (either operand may be the view)."""
    result = set(first)
    update(result, second)
    return result


def _all_contained_in(inner: Iterable[Any], outer: Any) -> bool:
    for item in inner:
        if item not in outer:
            return False
    return True


# dictview_richcompare: for each operator, the test on the two lengths, and
# whether the other operand's items must be in the view (rather than the reverse).
_COMPARISONS = {
    "eq": (operator.eq, False),
    "lt": (operator.lt, False),
    "le": (operator.le, False),
    "gt": (operator.gt, True),
    "ge": (operator.ge, True),
}


def _compare(self: Any, other: Any, op: str) -> Any:
    """dictview_richcompare (the C core calls ViewSetOps's methods on its own
    views, which are not ViewSetOps instances: no method lookups on self)."""
    if not (isinstance(other, (set, frozenset)) or _is_view_set(other)):
        return NotImplemented
    if op == "ne":
        return not _compare(self, other, "eq")
    lengths_allow, reverse = _COMPARISONS[op]
    if not lengths_allow(len(self), len(other)):
        return False
    return _all_contained_in(other, self) if reverse else _all_contained_in(self, other)


class ViewSetOps:
    """The set operations and comparisons of dict's keys and items views.

    Each returns a plain ``set`` (or a bool), as dict's views do.  Cost: the
    size of both operands.
    """

    __slots__ = ()

    def __and__(self, other: Any) -> "set[Any]":
        return _intersect(self, other)

    __rand__ = __and__

    def __or__(self, other: Any) -> "set[Any]":
        return _updated(self, set.update, other)

    def __ror__(self, other: Any) -> "set[Any]":
        return _updated(other, set.update, self)

    def __sub__(self, other: Any) -> "set[Any]":
        return _updated(self, set.difference_update, other)

    def __rsub__(self, other: Any) -> "set[Any]":
        return _updated(other, set.difference_update, self)

    def __xor__(self, other: Any) -> "set[Any]":
        if isinstance(self, _items_types) and isinstance(other, _items_types):
            return _items_xor(self, other)
        return _updated(self, set.symmetric_difference_update, other)

    def __rxor__(self, other: Any) -> "set[Any]":
        return _updated(other, set.symmetric_difference_update, self)

    def isdisjoint(self, other: Any) -> bool:
        """Return True if the view and other have no elements in common."""
        if self is other:
            return len(self) == 0
        if isinstance(other, (set, frozenset)) or _is_view_set(other):
            if len(other) > len(self):  # type: ignore[arg-type]
                self, other = other, self
        for item in other:
            if item in self:  # type: ignore[operator]
                return False
        return True

    def __eq__(self, other: Any) -> Any:
        return _compare(self, other, "eq")

    def __ne__(self, other: Any) -> Any:
        return _compare(self, other, "ne")

    def __lt__(self, other: Any) -> Any:
        return _compare(self, other, "lt")

    def __le__(self, other: Any) -> Any:
        return _compare(self, other, "le")

    def __gt__(self, other: Any) -> Any:
        return _compare(self, other, "gt")

    def __ge__(self, other: Any) -> Any:
        return _compare(self, other, "ge")

    __hash__ = None  # type: ignore[assignment]
