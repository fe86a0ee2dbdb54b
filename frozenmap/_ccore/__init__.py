"""The C core: a CPython extension mirroring ``frozenmap._pycore`` file by file.

Importing this package raises ImportError when the extension was not built;
``frozenmap`` then falls back to the pure-Python core.
"""

from collections.abc import Mapping as _Mapping
from collections.abc import MutableMapping as _MutableMapping

from .. import _interop, _registry, _viewsets
from ._cfrozenmap import Evolver, frozendict  # noqa: F401  (ImportError if not built)

_Mapping.register(frozendict)
_MutableMapping.register(Evolver)
_registry.register_frozendict_type(frozendict)
_viewsets.register_view_types(type(frozendict().keys()), type(frozendict().items()))
_interop.install(frozendict)

__all__ = ["frozendict", "Evolver"]
