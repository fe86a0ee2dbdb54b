"""Pieces shared by both cores: the ``Diff`` result type and pickle helpers.

Both cores use these same objects, so a ``Diff`` or a pickle made with one core
is understood by the other.
"""

from typing import Any, NamedTuple, Tuple

__all__ = ["Diff", "restore", "restore_evolver", "frozendict_types", "register_frozendict_type"]

import builtins as _builtins

frozendict_types: Tuple[type, ...] = tuple(
    t for t in (getattr(_builtins, "frozendict", None),) if t is not None
)
"""Every frozendict type loaded: each core's and the builtin (3.15+).  A core
treats the others' instances as it treats a dict in ``==``, ``|`` and the
constructor, so the two cores' frozendicts interoperate."""


def register_frozendict_type(cls: type) -> None:
    """Add a core's frozendict type to ``frozendict_types``."""
    global frozendict_types
    if cls not in frozendict_types:
        frozendict_types = frozendict_types + (cls,)


class Diff(NamedTuple):
    """What changed from one mapping to another; the result of ``frozendict.diff``.

    ``added`` holds the keys only in the new mapping, with their new values;
    ``removed`` the keys only in the old one, with their old values; ``changed``
    maps each key present in both whose value differs to ``(old, new)``.
    All three are ``frozendict`` instances.
    """

    added: Any
    removed: Any
    changed: Any


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
