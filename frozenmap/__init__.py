"""frozenmap: PEP 814's ``frozendict`` on a persistent trie.

Every modified copy (``set``, ``delete``, ``|``, ``-``, ``&``, an evolver batch)
costs O(log n) time and memory, and every old version stays valid.

This module chooses the core and re-exports it: the C core when it was built
and ``FROZENMAP_PURE_PYTHON`` is not set, the pure-Python core otherwise.
``IMPLEMENTATION`` says which one was loaded (``"c"`` or ``"python"``);
``python -m frozenmap`` says which and why.  On CPython a missing C core is
never silent: importing warns once (``RuntimeWarning``) with the reason,
unless ``FROZENMAP_PURE_PYTHON=1`` (when frozenmap was built, or now) says the
pure-Python core is intended.  It also exports the serializer helpers
``json_default`` and ``thaw`` (see ``frozenmap._interop``), and the
capabilities built on the public API, written once above both cores:
``History`` (``frozenmap.history``), JSON Patch (``frozenmap.jsonpatch``),
``Versioned`` (``frozenmap.versioned``) and drafts (``produce`` and its
helpers, ``frozenmap.drafts``).
"""

import os as _os
import platform as _platform

from . import _freeze
from ._common import Diff
from ._freeze import freeze
from ._interop import json_default, thaw


def _flag_set(name: str) -> bool:
    return _os.environ.get(name, "") not in ("", "0")


def _build_status() -> str:
    """What setup.py recorded when it did not build the C core, or ""."""
    path = _os.path.join(_os.path.dirname(__file__), "_ccore", "_build_status.txt")
    try:
        with open(path, encoding="utf-8") as file:
            return file.read().strip()
    except OSError:
        return ""


def _shadowing_source_tree() -> str:
    """Why the C core is missing when this package is a source tree without a
    built extension (its C sources beside it, ``pyproject.toml`` above it),
    imported because Python looks in the current directory first; "" otherwise."""
    import sys
    from importlib.machinery import EXTENSION_SUFFIXES, PathFinder

    package = _os.path.dirname(_os.path.abspath(__file__))
    tree = _os.path.dirname(package)
    ccore = _os.path.join(package, "_ccore")
    built = any(
        _os.path.exists(_os.path.join(ccore, "_cfrozenmap" + suffix))
        for suffix in EXTENSION_SUFFIXES
    )
    source = _os.path.exists(_os.path.join(tree, "pyproject.toml")) and _os.path.exists(
        _os.path.join(ccore, "module.c")
    )
    if built or not source:
        return ""

    elsewhere = [
        entry
        for entry in sys.path
        if _os.path.realpath(entry or _os.curdir) != _os.path.realpath(tree)
    ]
    installed = PathFinder.find_spec("frozenmap", elsewhere)
    if installed is not None and installed.submodule_search_locations:
        return (
            "the source tree %s, where the C core is not built, shadows the installed "
            "frozenmap (%s): Python imports from the current directory first; run from "
            "another directory (e.g. cd /tmp) to use the installed package"
            % (package, list(installed.submodule_search_locations)[0])
        )
    return (
        "frozenmap was imported from its source tree %s, where the C core is not built; "
        "install it (pip install .) and run from another directory (e.g. cd /tmp)" % package
    )


def _importer_stacklevel() -> int:
    """The ``stacklevel`` that names the code whose ``import`` loaded frozenmap.

    Counted as ``warnings`` counts (it skips the import machinery's frames),
    past ``runpy`` (``python -m``) and frozenmap's own modules; 1 (this
    module) when no such code is on the stack.
    """
    import sys

    frame = sys._getframe(2)  # the caller of the module code (level 1)
    level = 1
    while frame is not None:
        name = frame.f_code.co_filename
        if not ("importlib" in name and "_bootstrap" in name):  # warnings skips these
            level += 1
            if not (
                name.endswith(("runpy.py", "<frozen runpy>"))
                or str(frame.f_globals.get("__name__", "")).startswith("frozenmap")
            ):
                return level
        frame = frame.f_back
    return 1


_HOW_TO_GET_C = (
    "to get the C core, install a C compiler and the Python headers (on Debian/Ubuntu: "
    "apt install gcc python3-dev) and reinstall with "
    "'pip install --force-reinstall --no-cache-dir --no-binary frozenmap frozenmap' "
    "(from a clone: 'pip install --force-reinstall .', from a tree without a stale build/ "
    "folder); set FROZENMAP_PURE_PYTHON=1 if the pure-Python core is what you want"
)

if _flag_set("FROZENMAP_PURE_PYTHON"):
    from ._pycore import Evolver, frozendict

    IMPLEMENTATION = "python"
    _CORE_REASON = "FROZENMAP_PURE_PYTHON=1 is set"
else:
    try:
        from ._ccore import Evolver, frozendict
    except ImportError as _exc:
        from ._pycore import Evolver, frozendict

        IMPLEMENTATION = "python"
        _status = _build_status()
        _shadow = _shadowing_source_tree()
        if _platform.python_implementation() != "CPython":
            _CORE_REASON = (
                "the C core is for CPython; this is %s" % _platform.python_implementation()
            )
        elif _status.startswith("intended:"):
            _CORE_REASON = _status[len("intended:") :].strip()
        elif _shadow:
            _CORE_REASON = _shadow
            import warnings as _warnings

            _warnings.warn(
                "frozenmap is using its slower pure-Python core because " + _CORE_REASON,
                RuntimeWarning,
                stacklevel=_importer_stacklevel(),
            )
        else:
            if _status.startswith("failed:"):
                _why = (
                    "its build failed when frozenmap was installed (%s)"
                    % _status[len("failed:") :].strip()
                )
            elif getattr(_exc, "name", None) == "frozenmap._ccore._cfrozenmap":
                _why = "it was not built when frozenmap was installed"
            else:
                _why = "it did not load: %s" % (_exc,)
            _CORE_REASON = "the C core is not available: " + _why
            import warnings as _warnings

            _warnings.warn(
                "frozenmap is using its slower pure-Python core because %s; %s"
                % (_CORE_REASON, _HOW_TO_GET_C),
                RuntimeWarning,
                stacklevel=_importer_stacklevel(),
            )
    else:
        IMPLEMENTATION = "c"
        _CORE_REASON = "the C extension loaded"

_freeze.FROZENDICT = frozendict  # what freeze() builds

# Capabilities built on the public API, above the cores (they import this module's
# names lazily or not at all, so they come last).
from .drafts import current, is_draft, original, produce, produce_with_patches  # noqa: E402
from .history import History  # noqa: E402
from .jsonpatch import JsonPatchError, apply_json_patch, make_json_patch  # noqa: E402
from .versioned import Versioned  # noqa: E402

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
