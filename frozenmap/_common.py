"""The names frozenmap's pickles refer to, at the address every release's pickles use.

An exact frozendict pickles as a call of ``frozenmap._common.restore`` with
its items and the name of the core that made it, an Evolver as one of
``restore_evolver``; so either core loads the pickles of both, and those
made by earlier releases.  A ``Diff`` pickled by an earlier release names
``frozenmap._common.Diff``: it is kept here for them (``Diff`` itself is in
``frozenmap._diff``).  The module's name is fixed by those pickles.

The cores sit above this module (each hands ``restore`` to pickle), so it
cannot import them: ``frozenmap._core``, which loads the cores, registers
how to find one by name (``register_core_finder``) when it is imported.
That is before any pickle can call ``restore``: unpickling a reference to
``frozenmap._common`` imports the package first.

>>> import pickle
>>> from frozenmap import frozendict
>>> pickle.loads(pickle.dumps(frozendict(a=1))) == frozendict(a=1)
True
"""

from typing import Any, Callable

from ._diff import Diff

__all__ = ["restore", "restore_evolver", "register_core_finder", "Diff"]

_core_frozendict: Callable[[str], Any]
"""The frozendict type of the core a pickle names ("c" or "python"), or the
loaded core's when that one cannot be loaded here; ``frozenmap._core``
registers it."""


def register_core_finder(finder: Callable[[str], Any]) -> None:
    """Make ``finder`` the function that gives ``restore`` the frozendict
    type of a core named in a pickle (by ``frozenmap._core``, when it is
    imported).  Cost: O(1)."""
    global _core_frozendict
    _core_frozendict = finder


def restore(items: Any, core: str = "") -> Any:
    """Rebuild an exact ``frozendict`` from a pickle, with the core that made
    it (the loaded core when that one cannot be loaded).  Cost: O(n)."""
    return _core_frozendict(core)(items)


def restore_evolver(items: Any, core: str = "") -> Any:
    """Rebuild an ``Evolver`` from a pickle, with the core that made it (the
    loaded core when that one cannot be loaded).  Cost: O(n)."""
    return _core_frozendict(core)(items).evolve()
