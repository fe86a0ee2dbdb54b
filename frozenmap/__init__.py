"""frozenmap: PEP 814's ``frozendict`` on a persistent trie.

Every modified copy (``set``, ``delete``, ``|``, ``-``, ``&``, an evolver batch)
costs O(log n) time and memory, and every old version stays valid.

This module only chooses the core and re-exports it: the C core when it was
built and ``FROZENMAP_PURE_PYTHON`` is not set, the pure-Python core otherwise.
``IMPLEMENTATION`` says which one was loaded (``"c"`` or ``"python"``).
It also exports the serializer helpers ``json_default`` and ``thaw`` (see
``frozenmap._interop``).
"""

import os as _os

from ._common import Diff
from ._interop import json_default, thaw

if _os.environ.get("FROZENMAP_PURE_PYTHON", "") not in ("", "0"):
    from ._pycore import Evolver, frozendict

    IMPLEMENTATION = "python"
else:
    try:
        from ._ccore import Evolver, frozendict
    except ImportError:
        from ._pycore import Evolver, frozendict

        IMPLEMENTATION = "python"
    else:
        IMPLEMENTATION = "c"

__all__ = ["frozendict", "Evolver", "Diff", "IMPLEMENTATION", "json_default", "thaw"]
__version__ = "0.1.0"
