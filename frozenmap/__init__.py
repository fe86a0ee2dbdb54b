"""frozenmap: PEP 814's ``frozendict`` on a persistent trie.

Every modified copy (``set``, ``delete``, ``|``, ``-``, ``&``, an evolver batch)
costs O(log n) time and memory, and every old version stays valid.

This module re-exports the public names.  ``frozendict`` and ``Evolver`` are
the core's that ``frozenmap._core`` chose: the C core when it was built and
``FROZENMAP_PURE_PYTHON`` is not set, the pure-Python core otherwise.
``IMPLEMENTATION`` says which one was loaded (``"c"`` or ``"python"``);
``python -m frozenmap`` says which and why.  On CPython a missing C core is
never silent: importing warns once (``RuntimeWarning``) with the reason,
unless ``FROZENMAP_PURE_PYTHON=1`` (when frozenmap was built, or now) says the
pure-Python core is intended.  It also exports the serializer helpers
``json_default`` and ``thaw`` (see ``frozenmap._interop``), and the
capabilities built on the public API, written once above both cores:
``History`` (``frozenmap.history``), JSON Patch (``frozenmap.jsonpatch``),
``Versioned`` (``frozenmap.versioned``) and drafts (``produce`` and its
helpers, ``frozenmap.drafts``).  docs/how-it-works.md draws the package's
layers.
"""

from ._core import CORE_REASON as _CORE_REASON  # noqa: F401  (python -m frozenmap says it)
from ._core import IMPLEMENTATION, Evolver, frozendict
from ._diff import Diff
from ._freeze import freeze
from ._interop import json_default, thaw
from .drafts import current, is_draft, original, produce, produce_with_patches
from .history import History
from .jsonpatch import JsonPatchError, apply_json_patch, make_json_patch
from .versioned import Versioned

__all__ = [
    "frozendict",
    "Evolver",
    "Diff",
    "IMPLEMENTATION",
    "freeze",
    "json_default",
    "thaw",
    "Versioned",
    "History",
    "apply_json_patch",
    "make_json_patch",
    "JsonPatchError",
    "produce",
    "produce_with_patches",
    "current",
    "original",
    "is_draft",
]
__version__ = "0.1.0"
