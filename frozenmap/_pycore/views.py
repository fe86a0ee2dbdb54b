"""Views and iterators over a frozendict or an Evolver.

``keys()``, ``values()`` and ``items()`` return live views like ``dict``'s: the
keys and items views are set-like (``&``, ``|``, ``-``, ``^`` return plain
``set`` objects, comparisons work against any set), the values view is not.
Their set operations are ``frozenmap._viewsets.ViewSetOps``, shared with the
C core, which follows dict's views step for step (same results, same
exceptions).
Their ``repr`` is the builtin's text (``dict_keys([...])``), since PEP 814's
frozendict returns the ordinary dict views.

A wrong call of a method names it as the C core's method is named
(``frozendict_keys.isdisjoint() missing 1 required positional argument:
'other'``): a method written once for several classes is given to each as a
copy named for it (``method_named``), and a special method's parameters are
positional-only, as a C slot's are.

A view asks its mapping for four things only: ``_len``, ``_items()`` and
``_items_reversed()`` (iterators of ``(key, value)`` in insertion order, walking
the order trie with no lookups) and ``_lookup(key)`` (the key-trie entry or
None).  Iteration never calls user code.

Mirrors ``frozenmap/_ccore/views.c``.
"""

from __future__ import annotations

import inspect
from collections.abc import ItemsView, KeysView, ValuesView
from operator import itemgetter
from types import FunctionType, MappingProxyType
from typing import Any, Callable, Dict, Iterator, TypeVar

from .._viewsets import ViewSetOps
from .reads import mapping_len

__all__ = [
    "frozendict_keys",
    "frozendict_values",
    "frozendict_items",
    "frozendict_iterator",
    "view_mapping_iter",
    "mapping_len",
    "view_mapping_reversed",
    "view_mapping_keys",
    "view_mapping_values",
    "view_mapping_items",
    "method_named",
]

_first = itemgetter(0)
_second = itemgetter(1)

_F = TypeVar("_F", bound=Callable[..., Any])


def method_named(function: _F, qualname: str, positional_only: bool = False) -> _F:
    """A copy of ``function`` (the same code, defaults and attributes) named
    ``qualname``, ``"Class.method"``: what a wrong call's ``TypeError`` names,
    as the C core's method of that class is named.  ``positional_only``
    makes every parameter positional-only, as a slot's method's are.
    No cost per call: the copy runs the same code.

    >>> def shared(self, other):
    ...     return other
    >>> own = method_named(shared, "frozendict_keys.__and__", positional_only=True)
    >>> own.__qualname__, own(None, 1)
    ('frozendict_keys.__and__', 1)
    >>> own(None)
    Traceback (most recent call last):
    TypeError: frozendict_keys.__and__() missing 1 required positional argument: 'other'
    """
    code = function.__code__
    if positional_only:
        code = code.replace(co_posonlyargcount=code.co_argcount)
    name = qualname.rpartition(".")[2]
    copy = FunctionType(
        code, function.__globals__, name, function.__defaults__, function.__closure__
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__dict__.update(function.__dict__)
    copy.__doc__ = function.__doc__
    copy.__annotations__ = dict(function.__annotations__)
    copy.__module__ = function.__module__
    copy.__qualname__ = qualname
    return copy  # type: ignore[return-value]


class frozendict_iterator:
    """An iterator over keys, values or items, forward or reversed.

    Wraps a walk of the order trie.  Like dict's iterators it has a length
    hint and pickles as an iterator over what remains (pickling does not
    consume it).
    """

    __slots__ = ("_walk", "_select", "_remaining")

    def __init__(self, walk: Iterator[Any], select: Any, remaining: int) -> None:
        self._walk = walk
        self._select = select
        self._remaining = remaining

    def __iter__(self) -> "frozendict_iterator":
        return self

    def __next__(self) -> Any:
        item = next(self._walk)
        self._remaining -= 1
        select = self._select
        return item if select is None else select(item)

    def __length_hint__(self) -> int:
        return max(self._remaining, 0)

    def __reduce__(self) -> Any:
        walk = self._walk
        rest = list(walk)  # an Evolver's walk raises RuntimeError if it changed size
        rewound = getattr(walk, "_rewound", None)  # an Evolver's: keeps checking
        self._walk = iter(rest) if rewound is None else rewound(rest)
        select = self._select
        return (iter, ([item if select is None else select(item) for item in rest],))


class _View:
    """What the three views share: their length and their ``mapping`` proxy."""

    __slots__ = ()
    _mapping: Any
    _select: Any = None  # what an iterator yields of each (key, value)

    def __len__(self) -> int:
        return mapping_len(self._mapping)

    def __iter__(self) -> Iterator[Any]:
        return frozendict_iterator(self._mapping._items(), self._select, mapping_len(self._mapping))

    def __reversed__(self) -> Iterator[Any]:
        return frozendict_iterator(
            self._mapping._items_reversed(), self._select, mapping_len(self._mapping)
        )

    def __reduce__(self) -> Any:
        # Like dict's views (and the C core's): a view is not pickled or copied.
        raise TypeError("cannot pickle '%s' object" % type(self).__name__)

    @property
    def mapping(self) -> "MappingProxyType[Any, Any]":
        """A read-only proxy of the mapping this view looks at."""
        return MappingProxyType(self._mapping)


class frozendict_keys(_View, ViewSetOps, KeysView):  # type: ignore[type-arg]
    """A set-like view of a mapping's keys, in insertion order.  Cost: O(1)."""

    __slots__ = ()
    _select = staticmethod(_first)

    def __contains__(self, key: object, /) -> bool:
        return self._mapping._lookup(key) is not None

    def __repr__(self) -> str:
        return "dict_keys(%r)" % (list(self),)


class frozendict_values(_View, ValuesView):  # type: ignore[type-arg]
    """A view of a mapping's values, in insertion order.  Cost: O(1)."""

    __slots__ = ()
    _select = staticmethod(_second)

    def __contains__(self, value: object, /) -> bool:
        for v in self:
            if v is value or v == value:
                return True
        return False

    def __repr__(self) -> str:
        return "dict_values(%r)" % (list(self),)


class frozendict_items(_View, ViewSetOps, ItemsView):  # type: ignore[type-arg]
    """A set-like view of a mapping's ``(key, value)`` pairs.  Cost: O(1)."""

    __slots__ = ()

    def __contains__(self, item: object, /) -> bool:
        if not isinstance(item, tuple) or len(item) != 2:
            return False
        entry = self._mapping._lookup(item[0])
        if entry is None:
            return False
        value = entry[3]
        return value is item[1] or bool(value == item[1])

    def __repr__(self) -> str:
        return "dict_items(%r)" % (list(self),)


# Each view class's own copy of the methods it shares (named for it), the
# set operations' parameters positional-only as the C core's slots' are.
_VIEW_SHARED = ("__len__", "__iter__", "__reversed__", "__reduce__")
_VIEW_SET_OPERATIONS = (
    "__and__", "__rand__", "__or__", "__ror__", "__sub__", "__rsub__", "__xor__", "__rxor__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
)  # fmt: skip
for _cls in (frozendict_keys, frozendict_values, frozendict_items):
    for _name in _VIEW_SHARED:
        setattr(_cls, _name, method_named(getattr(_View, _name), "%s.%s" % (_cls.__name__, _name)))
for _cls in (frozendict_keys, frozendict_items):
    for _name in _VIEW_SET_OPERATIONS:
        _function = ViewSetOps.__dict__[_name]
        _qualname = "%s.%s" % (_cls.__name__, _name)
        setattr(_cls, _name, method_named(_function, _qualname, positional_only=True))
    _cls.isdisjoint = method_named(  # type: ignore[method-assign]
        ViewSetOps.isdisjoint, "%s.isdisjoint" % _cls.__name__, positional_only=True
    )
del _cls, _name, _function, _qualname


def call_error(
    owner: Any, name: str, at_least: int, at_most: int, given: int, kwargs: Dict[str, Any]
) -> TypeError:
    """The builtin's TypeError for a bad call of ``<owner>.<name>()``.

    ``owner`` is the instance whose method it is (a C method descriptor is
    named after the class that defines it, also when called on a subclass),
    or the class of a class method (which CPython names after the class it
    is bound to, by its ``__qualname__``).
    """
    if isinstance(owner, type):
        prefix = owner.__qualname__
    else:
        prefix = next(c for c in type(owner).__mro__ if name in vars(c)).__name__
    if kwargs:
        return TypeError("%s.%s() takes no keyword arguments" % (prefix, name))
    if at_most == 0:
        return TypeError("%s.%s() takes no arguments (%d given)" % (prefix, name, given))
    if at_least == at_most == 1:  # (METH_O)
        return TypeError("%s.%s() takes exactly one argument (%d given)" % (prefix, name, given))
    bound, count = ("at least ", at_least) if given < at_least else ("at most ", at_most)
    return TypeError(
        "%s expected %s%d argument%s, got %d"
        % (name, bound, count, "" if count == 1 else "s", given)
    )


def _bad_call(self: Any, name: str, args: Any, kwargs: Dict[str, Any]) -> TypeError:
    """The builtin's TypeError for ``<type>.<name>()`` called with arguments."""
    return call_error(self, name, 0, 0, len(args), kwargs)


# The read methods frozendict and Evolver share (bound as class attributes in
# both, so each type keeps ``object`` as its only base, as PEP 814 has it).


def view_mapping_iter(self: Any) -> Iterator[Any]:
    """Iterate over the keys in insertion order.

    >>> from frozenmap import frozendict
    >>> list(frozendict(b=1, a=2))
    ['b', 'a']
    """
    return iter(frozendict_keys(self))


def view_mapping_reversed(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    """Iterate over the keys in reverse insertion order.

    >>> from frozenmap import frozendict
    >>> list(reversed(frozendict(b=1, a=2)))
    ['a', 'b']
    """
    if args or kwargs:
        raise _bad_call(self, "__reversed__", args, kwargs)
    return reversed(frozendict_keys(self))


def view_mapping_keys(self: Any, *args: Any, **kwargs: Any) -> frozendict_keys:
    """A set-like view of the keys, in insertion order.  Cost: O(1).

    >>> from frozenmap import frozendict
    >>> keys = frozendict(b=1, a=2).keys()
    >>> keys, list(keys), 'a' in keys, keys & {'a', 'z'}
    (dict_keys(['b', 'a']), ['b', 'a'], True, {'a'})
    """
    if args or kwargs:
        raise _bad_call(self, "keys", args, kwargs)
    return frozendict_keys(self)


def view_mapping_values(self: Any, *args: Any, **kwargs: Any) -> frozendict_values:
    """A view of the values, in insertion order.  Cost: O(1).

    >>> from frozenmap import frozendict
    >>> values = frozendict(b=1, a=2).values()
    >>> values, sum(values), 2 in values
    (dict_values([1, 2]), 3, True)
    """
    if args or kwargs:
        raise _bad_call(self, "values", args, kwargs)
    return frozendict_values(self)


def view_mapping_items(self: Any, *args: Any, **kwargs: Any) -> frozendict_items:
    """A set-like view of the ``(key, value)`` pairs.  Cost: O(1).

    >>> from frozenmap import frozendict
    >>> items = frozendict(b=1, a=2).items()
    >>> items, ('a', 2) in items, items - {('b', 1)}
    (dict_items([('b', 1), ('a', 2)]), True, {('a', 2)})
    """
    if args or kwargs:
        raise _bad_call(self, "items", args, kwargs)
    return frozendict_items(self)


for _method in (view_mapping_reversed, view_mapping_keys, view_mapping_values, view_mapping_items):
    _method.__signature__ = inspect.signature(lambda self: None)  # type: ignore[union-attr]
del _method
