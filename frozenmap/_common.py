"""Pieces shared by both cores: the ``Diff`` result type and pickle helpers.

Both cores use these same objects, so a ``Diff`` or a pickle made with one core
is understood by the other.
"""

from typing import Any, Generic, NamedTuple, Tuple, TypeVar

__all__ = ["Diff", "restore", "restore_evolver"]


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


def restore(items):
    """Rebuild an exact ``frozendict`` from a pickle, with whichever core is loaded."""
    from frozenmap import frozendict

    return frozendict(items)


def restore_evolver(items):
    """Rebuild an ``Evolver`` from a pickle, with whichever core is loaded."""
    from frozenmap import frozendict

    return frozendict(items).evolve()
