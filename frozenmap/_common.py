"""Pieces shared by both cores: the ``Diff`` result type and pickle helpers.

Both cores use these same objects, so a ``Diff`` or a pickle made with one core
is understood by the other.
"""

from typing import Any, NamedTuple, Tuple

__all__ = [
    "Diff",
    "restore",
    "restore_evolver",
    "frozendict_types",
    "register_frozendict_type",
    "deepen_diff",
    "merge_with",
]

import builtins as _builtins

frozendict_types: Tuple[type, ...] = tuple(
    t for t in (getattr(_builtins, "frozendict", None),) if t is not None
)
"""Every frozendict type loaded: each core's and the builtin (3.15+).  A core
treats the others' instances as it treats a dict in ``==``, ``|`` and the
constructor, so the two cores' frozendicts interoperate."""


def register_frozendict_type(cls: type) -> None:
    """Add a core's frozendict type to ``frozendict_types``."""
    global frozendict_types, _own_types
    if cls not in frozendict_types:
        frozendict_types = frozendict_types + (cls,)
    if cls not in _own_types:
        _own_types = _own_types + (cls,)


_own_types: Tuple[Any, ...] = ()
"""frozenmap's own frozendict types (the ones with ``diff`` and ``evolve``)."""

_MISSING: Any = object()


def _differs(current: Any, expected: Any) -> bool:
    return current is not expected and current != expected


class Diff(NamedTuple):
    """What changed from one mapping to another; the result of ``frozendict.diff``.

    ``added`` holds the keys only in the new mapping, with their new values;
    ``removed`` the keys only in the old one, with their old values; ``changed``
    maps each key present in both whose value differs to ``(old, new)`` -- or,
    in a deep diff, to the nested ``Diff`` when both values are frozendicts.
    All three are ``frozendict`` instances.  A ``Diff`` is a patch: ``apply``
    it to the old mapping to get the new one, ``invert`` it to go back.

    >>> from frozenmap import frozendict
    >>> old = frozendict(a=1, b=2)
    >>> new = frozendict(b=3, c=4)
    >>> patch = old.diff(new)
    >>> patch.apply(old) == new
    True
    >>> patch.invert().apply(new) == old
    True
    """

    added: Any
    removed: Any
    changed: Any

    def apply(self, mapping: Any, /) -> Any:
        """``mapping`` (a frozendict) with this diff applied, as a new version.

        Every removed or changed key must hold the value the diff expects
        (the same object, or an equal one) and every added key must be
        absent (or already hold an equal value); otherwise ``ValueError``
        names the key: a conflict is never overwritten.  An empty diff
        returns ``mapping`` itself.  Cost: O(d log n) for d changes.
        """
        if not (self.added or self.removed or self.changed):
            return mapping
        if not isinstance(mapping, _own_types):
            raise TypeError(
                "Diff.apply() needs a frozenmap frozendict, not '%s'" % type(mapping).__name__
            )
        e = mapping.evolve()
        for key, old in self.removed.items():
            current = e.get(key, _MISSING)
            if current is _MISSING:
                raise ValueError("Diff.apply(): conflict at key %r: it is missing" % (key,))
            if _differs(current, old):
                raise ValueError(
                    "Diff.apply(): conflict at key %r: it does not hold the value "
                    "the diff removes" % (key,)
                )
            del e[key]
        for key, change in self.changed.items():
            current = e.get(key, _MISSING)
            if current is _MISSING:
                raise ValueError("Diff.apply(): conflict at key %r: it is missing" % (key,))
            if isinstance(change, Diff):
                if not isinstance(current, _own_types):
                    raise ValueError(
                        "Diff.apply(): conflict at key %r: a nested diff needs a "
                        "frozendict there, not '%s'" % (key, type(current).__name__)
                    )
                e[key] = change.apply(current)
            else:
                old, new = change
                if _differs(current, old):
                    raise ValueError(
                        "Diff.apply(): conflict at key %r: it does not hold the old "
                        "value of the change" % (key,)
                    )
                e[key] = new
        for key, new in self.added.items():
            current = e.get(key, _MISSING)
            if current is _MISSING:
                e[key] = new
            elif _differs(current, new):
                raise ValueError(
                    "Diff.apply(): conflict at key %r: it is already there with "
                    "another value" % (key,)
                )
        return e.freeze()

    def invert(self) -> "Diff":
        """The diff that undoes this one: ``d.invert().apply(d.apply(m)) == m``."""
        changed = self.changed
        inverted = type(changed)(
            (key, change.invert() if isinstance(change, Diff) else (change[1], change[0]))
            for key, change in changed.items()
        )
        return Diff(self.removed, self.added, inverted)


def deepen_diff(diff: Diff) -> Diff:
    """``diff`` with each change between two frozendicts replaced by their own
    (deep) diff; the rest of ``frozendict.diff(other, deep=True)``."""
    changed = diff.changed
    nested = [
        (key, old.diff(new, deep=True))
        for key, (old, new) in changed.items()
        if isinstance(old, _own_types) and isinstance(new, _own_types)
    ]
    if not nested:
        return diff
    e = changed.evolve()
    for key, sub in nested:
        e[key] = sub
    return Diff(diff.added, diff.removed, e.freeze())


def merge_with(fd: Any, fn: Any, others: Tuple[Any, ...]) -> Any:
    """``fd.merge_with(fn, *others)`` for both cores: keys already present get
    ``fn(old, new)``, the others are added, in the order ``|`` gives."""
    e = fd.evolve()
    for other in others:
        items = getattr(other, "items", None)
        if items is None:
            raise TypeError(
                "merge_with() arguments must be mappings, not '%s'" % type(other).__name__
            )
        for key, value in items():
            current = e.get(key, _MISSING)
            e[key] = value if current is _MISSING else fn(current, value)
    return e.freeze()


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
