"""Which frozendict types are loaded: each core's and the builtin one (3.15+).

Each core registers its ``frozendict`` here when it is imported (the C core
from its module initialisation, both from their package ``__init__``), so
the modules that must recognise any frozendict -- the other core, the
capabilities above the cores, the serializers -- read these tuples instead
of importing a core.  A core imported later extends them: read them from
this module at each use (``_registry.frozendict_types``), never copy them
at import.

>>> import frozenmap
>>> from frozenmap import _registry
>>> frozenmap.frozendict in _registry.own_types
True
>>> set(_registry.own_types) <= set(_registry.frozendict_types)
True
"""

import builtins as _builtins
from typing import Any, Tuple

__all__ = ["frozendict_types", "own_types", "register_frozendict_type"]

frozendict_types: Tuple[type, ...] = tuple(
    t for t in (getattr(_builtins, "frozendict", None),) if t is not None
)
"""Every frozendict type loaded: each core's and the builtin (3.15+).  A core
treats the others' instances as it treats a dict in ``==``, ``|`` and the
constructor, so the two cores' frozendicts interoperate."""

own_types: Tuple[Any, ...] = ()
"""frozenmap's own frozendict types (the ones with ``diff`` and ``evolve``)."""


def register_frozendict_type(cls: type) -> None:
    """Add a core's frozendict type to ``frozendict_types`` and ``own_types``
    (once: registering it again changes nothing).  Cost: O(number of types)."""
    global frozendict_types, own_types
    if cls not in frozendict_types:
        frozendict_types = frozendict_types + (cls,)
    if cls not in own_types:
        own_types = own_types + (cls,)
