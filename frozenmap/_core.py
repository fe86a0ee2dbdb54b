"""The core, chosen once: every module above the cores imports it from here.

The C core when it was built and ``FROZENMAP_PURE_PYTHON`` is not set, the
pure-Python core otherwise.  ``IMPLEMENTATION`` says which one was loaded
(``"c"`` or ``"python"``) and ``CORE_REASON`` why; ``frozendict`` and
``Evolver`` are its types.  On CPython a missing C core is never silent:
importing warns once (``RuntimeWarning``) with the reason, unless
``FROZENMAP_PURE_PYTHON=1`` (when frozenmap was built, or now) says the
pure-Python core is intended.

``core_frozendict`` finds a core by the name a pickle gives; this module
registers it with ``frozenmap._common`` (below the cores, which cannot
import this module) for ``restore``.

>>> from frozenmap import _core
>>> _core.IMPLEMENTATION in ("c", "python")
True
>>> _core.core_frozendict("python").__module__
'frozenmap'
"""

import os as _os
from types import FrameType
from typing import Any, Optional, Tuple

from . import _common

__all__ = ["IMPLEMENTATION", "CORE_REASON", "frozendict", "Evolver", "core_frozendict"]


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
    past ``runpy`` (``python -m``) and frozenmap's own modules; 1 (the
    function that warns) when no such code is on the stack.
    """
    import sys

    frame: Optional[FrameType] = sys._getframe(2)  # above the function that warns (level 1)
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


def _choose() -> Tuple[str, str, Any, Any]:
    """The core to load: ``(IMPLEMENTATION, CORE_REASON, frozendict,
    Evolver)``; warns when the C core is missing without being meant to."""
    frozendict: Any  # either core's
    Evolver: Any
    if _flag_set("FROZENMAP_PURE_PYTHON"):
        from ._pycore import Evolver, frozendict

        return "python", "FROZENMAP_PURE_PYTHON=1 is set", frozendict, Evolver
    try:
        from ._ccore import Evolver, frozendict
    except ImportError as exc:
        from ._pycore import Evolver, frozendict

        status = _build_status()
        shadow = _shadowing_source_tree()
        import platform  # only here: importing it takes ~2 ms, a twentieth of import frozenmap

        if platform.python_implementation() != "CPython":
            reason = "the C core is for CPython; this is %s" % platform.python_implementation()
        elif status.startswith("intended:"):
            reason = status[len("intended:") :].strip()
        elif shadow:
            reason = shadow
            import warnings

            warnings.warn(
                "frozenmap is using its slower pure-Python core because " + reason,
                RuntimeWarning,
                stacklevel=_importer_stacklevel(),
            )
        else:
            if status.startswith("failed:"):
                why = (
                    "its build failed when frozenmap was installed (%s)"
                    % status[len("failed:") :].strip()
                )
            elif getattr(exc, "name", None) == "frozenmap._ccore._cfrozenmap":
                why = "it was not built when frozenmap was installed"
            else:
                why = "it did not load: %s" % (exc,)
            reason = "the C core is not available: " + why
            import warnings

            warnings.warn(
                "frozenmap is using its slower pure-Python core because %s; %s"
                % (reason, _HOW_TO_GET_C),
                RuntimeWarning,
                stacklevel=_importer_stacklevel(),
            )
        return "python", reason, frozendict, Evolver
    return "c", "the C extension loaded", frozendict, Evolver


# Either core's types (the typed API is frozenmap/__init__.pyi's).
IMPLEMENTATION, CORE_REASON, frozendict, Evolver = _choose()


def core_frozendict(core: str) -> Any:
    """The frozendict type of the named core (``"c"``, or the pure core for
    any other name), or the loaded core's if that one cannot be loaded here:
    a pickle made with the C core loads without it.  Cost: an import, the
    first time."""
    named: Any
    try:
        if core == "c":
            from ._ccore import frozendict as named
        else:
            from ._pycore import frozendict as named
    except ImportError:
        return frozendict
    return named


_common.register_core_finder(core_frozendict)
