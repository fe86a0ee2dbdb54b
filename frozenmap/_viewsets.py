"""The set operations and comparisons of keys and items views, as dict's views do them.

PEP 814's frozendict returns dict's own views, so ``fd.items() - other`` must
do exactly what ``dict_items - other`` does: the same result, the same
exceptions with the same messages, the same element kept among equal ones
(``1`` or ``True``).  ``collections.abc.Set``'s mixins do not: they test
membership one element at a time where dict's views build a set, so an
unhashable pair on either side gave a result instead of dict's TypeError.
``ViewSetOps`` therefore follows CPython's ``dictviews_*`` functions
(Objects/dictobject.c) step for step, leaving the hashing, adding and error
messages to the same set methods they call.  The pure core's views inherit
it; the C core calls its methods on its own views (views.c, view_set_op).
Each core registers its keys and items view types here when it is imported
(``register_view_types``), so that a view of either core counts as one of
dict's.

>>> from frozenmap import frozendict
>>> frozendict(a=1, b=2).keys() & {'b', 'c'}
{'b'}
>>> frozendict(a=1).items() ^ {'a': 1, 'b': 2}.items()
{('b', 2)}
"""

import builtins as _builtins
import operator
from typing import Any, Iterable, Tuple

__all__ = ["ViewSetOps", "register_view_types"]

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
