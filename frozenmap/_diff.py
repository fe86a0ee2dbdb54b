"""``Diff``: what changed from one mapping to another, as a patch to apply or invert.

``frozendict.diff`` of either core returns a ``Diff`` (the C core takes the
class from here), so a diff made with one core applies to the other's
frozendicts.  ``deepen_diff`` is the rest of ``diff(other, deep=True)``.

``Diff.to_json_patch`` writes JSON Patch with ``frozenmap.jsonpatch``, which
sits above the cores (it freezes values into the loaded core's frozendict),
so this module, below the cores, cannot import it: ``jsonpatch`` registers
its writer here when it is imported (``register_json_patch_writer``), as
``import frozenmap`` does before any ``Diff`` can exist.

>>> from frozenmap import Diff, frozendict
>>> patch = frozendict(a=1, b=2).diff(frozendict(b=3, c=4))
>>> type(patch) is Diff, len(patch)
(True, 3)
"""

from typing import Any, Callable, Dict, List, NamedTuple

from . import _registry

__all__ = ["Diff", "deepen_diff", "register_json_patch_writer"]

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

    def __bool__(self) -> bool:
        """False when nothing was added, removed or changed.

        >>> from frozenmap import frozendict
        >>> m = frozendict(a=1)
        >>> bool(m.diff(m)), bool(m.diff({'a': 2}))
        (False, True)
        """
        return bool(self.added or self.removed or self.changed)

    def __len__(self) -> int:
        """How many keys the diff touches (added, removed and changed).

        It is not the tuple's length: unpack ``added, removed, changed = d``.

        >>> from frozenmap import frozendict
        >>> len(frozendict(a=1, b=2).diff({'b': 3, 'c': 4}))
        3
        """
        return len(self.added) + len(self.removed) + len(self.changed)

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
        if not isinstance(mapping, _registry.own_types):
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
                if not isinstance(current, _registry.own_types):
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

    def to_json_patch(self) -> "list[dict[str, Any]]":
        """The JSON Patch (RFC 6902) that does what this diff does.

        ``remove`` for each removed key, ``add`` for each added one, and for
        each changed one the operations of its nested diff, or those
        ``make_json_patch`` writes for the pair (arrays, tuples, are
        aligned); a removed value that is added elsewhere is one ``move``.
        Keys are named as ``json.dumps`` writes them (``1`` is ``"1"``,
        ``True`` is ``"true"``) and JSON Pointer escaped.  The diff says
        what changed as Python compares (``1 == True``): ``make_json_patch``
        compares as JSON does.  Cost: O(d) for d changes, plus what each
        changed pair of arrays costs to align.

        >>> from frozenmap import frozendict
        >>> old = frozendict(user=frozendict(name='ada', age=36), todos=frozendict({1: 'x'}))
        >>> new = old.set_in(['user', 'age'], 37).set_in(['todos', 2], 'y')
        >>> old.diff(new, deep=True).to_json_patch()
        [{'op': 'replace', 'path': '/user/age', 'value': 37}, {'op': 'add', 'path': '/todos/2', 'value': 'y'}]
        """
        return _json_patch_writer(self)

    def invert(self) -> "Diff":
        """The diff that undoes this one: ``d.invert().apply(d.apply(m)) == m``."""
        changed = self.changed
        inverted = type(changed)(
            (key, change.invert() if isinstance(change, Diff) else (change[1], change[0]))
            for key, change in changed.items()
        )
        return Diff(self.removed, self.added, inverted)


Diff.added.__doc__ = "The keys only in the new mapping, with their new values (a frozendict)."
Diff.removed.__doc__ = "The keys only in the old mapping, with their old values (a frozendict)."
Diff.changed.__doc__ = (
    "The keys in both whose values differ, each with ``(old, new)`` -- or, in a deep "
    "diff, the nested ``Diff`` when both values are frozendicts (a frozendict)."
)


def _diff_make(cls: Any, iterable: Any) -> Diff:
    """``Diff._make``: namedtuple's checks the field count with ``len()``,
    which a Diff answers with the number of keys it touches."""
    result = tuple.__new__(cls, iterable)
    if tuple.__len__(result) != 3:
        raise TypeError("Expected 3 arguments, got %d" % tuple.__len__(result))
    return result  # type: ignore[no-any-return]


Diff._make = classmethod(_diff_make)  # type: ignore[assignment]


def deepen_diff(diff: Diff) -> Diff:
    """``diff`` with each change between two frozendicts replaced by their own
    (deep) diff; the rest of ``frozendict.diff(other, deep=True)``."""
    changed = diff.changed
    nested = [
        (key, old.diff(new, deep=True))
        for key, (old, new) in changed.items()
        if isinstance(old, _registry.own_types) and isinstance(new, _registry.own_types)
    ]
    if not nested:
        return diff
    e = changed.evolve()
    for key, sub in nested:
        e[key] = sub
    return Diff(diff.added, diff.removed, e.freeze())


_json_patch_writer: Callable[[Diff], List[Dict[str, Any]]]
"""``Diff.to_json_patch``'s writer: ``frozenmap.jsonpatch.diff_to_json_patch``."""


def register_json_patch_writer(writer: Callable[[Diff], List[Dict[str, Any]]]) -> None:
    """Make ``writer`` the function ``Diff.to_json_patch`` calls (by
    ``frozenmap.jsonpatch``, when it is imported).  Cost: O(1)."""
    global _json_patch_writer
    _json_patch_writer = writer
