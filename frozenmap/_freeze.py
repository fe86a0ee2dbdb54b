"""Deep freezing: nested plain data (JSON, YAML, configuration) to immutable data.

``freeze`` is a ``functools.singledispatch`` function, so a new type is taught
with ``@frozenmap.freeze.register(MyType)``.  ``thaw`` (in ``_interop``) is its
inverse.  A mapping becomes a frozendict of the core ``frozenmap._core``
chose; a frozendict of either core stays one of its own core.
"""

from collections.abc import Mapping, Set
from functools import singledispatch
from typing import Any, Iterable

from . import _registry
from ._core import frozendict as _frozendict

__all__ = ["freeze"]


@singledispatch
def freeze(obj: Any) -> Any:
    """A deeply immutable version of ``obj``.

    Mappings (``dict`` and any other ``Mapping``) become frozendicts, lists
    and tuples become tuples, sets and frozensets become frozensets, all the
    way down (keys and set elements are hashable already and are frozen
    only as elements); every other object is returned as it is -- no
    ``__dict__`` magic.  A container whose contents are already frozen is
    returned itself, so freezing frozen data shares it instead of copying.
    Teach it a new type with ``@freeze.register(MyType)``; very deep nesting
    raises ``RecursionError``.  ``thaw`` is the inverse.

    Cost: O(total size); a frozendict with a few values to freeze is
    rebuilt with O(log n) edits for each, sharing the rest.

    >>> from frozenmap import freeze
    >>> cfg = freeze({'db': {'hosts': ['a', 'b'], 'port': 5432}, 'flags': {'x'}})
    >>> cfg
    frozendict({'db': frozendict({'hosts': ('a', 'b'), 'port': 5432}), 'flags': frozenset({'x'})})
    >>> freeze(cfg) is cfg
    True
    """
    return obj


def _same_items(old: Iterable[Any], new: list) -> bool:  # type: ignore[type-arg]
    return all(a is b for a, b in zip(old, new))


@freeze.register(Mapping)
def _freeze_mapping(obj: Any) -> Any:
    if isinstance(obj, _registry.own_types):
        # Keep every value that is already frozen: only the rest is set,
        # and a frozendict with nothing to change comes back as itself.
        changes = [(k, fv) for k, v in obj.items() for fv in (freeze(v),) if fv is not v]
        if not changes:
            return obj
        e = obj.evolve()
        for key, value in changes:
            e[key] = value
        return e.freeze()
    return _frozendict([(k, freeze(v)) for k, v in obj.items()])


@freeze.register(list)
@freeze.register(tuple)
def _freeze_sequence(obj: Any) -> Any:
    items = [freeze(x) for x in obj]
    if type(obj) is tuple and _same_items(obj, items):
        return obj
    if isinstance(obj, tuple) and hasattr(obj, "_make"):  # a namedtuple keeps its type
        return obj if _same_items(obj, items) else obj._make(items)
    return tuple(items)


@freeze.register(Set)
def _freeze_set(obj: Any) -> Any:
    items = [freeze(x) for x in obj]
    if type(obj) is frozenset and _same_items(obj, items):
        return obj
    return frozenset(items)
