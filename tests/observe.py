"""Observing a frozendict and the object it is compared with, in the same words.

Used by the tests that run one script of operations on frozenmap's frozendict
and on a reference (``dict`` or the builtin ``frozendict`` of CPython 3.15) and
compare what they observe: ``outcome(fn)`` is ``("ok", description of the
result)`` or ``("raise", exception type, message, notes)``.

A description names the frozendict type under test ``"FD"`` whichever it is
(ours or the builtin), so the same script gives the same description on both.
It records types (``1`` versus ``1.0`` versus ``True``), order where there is
one, and sorts the elements of sets.  The two sides may differ only where
docs/pep814.md says frozenmap differs from the builtin: the type names of views and iterators
(``frozendict_keys`` for ``dict_keys``), which are written as dict's in
exception messages too.
"""

import math

# Our type names as other code writes them in messages (dict's "cannot use
# '%T' as a dict key", with the module a builtin type does not show), and the
# builtin's; our view and iterator type names, and dict's.
_OUR_TYPE_NAMES = [
    ("frozenmap.frozendict", "frozendict"),
    ("frozenmap.frozendict_keys", "dict_keys"),
    ("frozenmap.frozendict_items", "dict_items"),
    ("frozenmap.frozendict_values", "dict_values"),
    ("frozendict_keys", "dict_keys"),
    ("frozendict_items", "dict_items"),
    ("frozendict_values", "dict_values"),
]


class Family:
    """The types one side of a comparison uses.

    ``fd`` is the frozendict type, ``sub`` a subclass of it; ``names`` maps
    every type the description should name abstractly to that name.
    """

    def __init__(self, label, fd, sub=None):
        self.label = label
        self.fd = fd
        self.sub = sub
        self.names = {fd: "FD"}
        if sub is not None:
            self.names[sub] = "SUB"

    def __repr__(self):
        return "Family(%s)" % self.label


def _view_kind(obj):
    name = type(obj).__name__
    for kind in ("keys", "items", "values"):
        if name in ("dict_" + kind, "frozendict_" + kind):
            return kind
    return None


def describe(obj, family, depth=0):
    """A hashable, comparable description of ``obj`` (see the module docstring)."""
    if depth > 6:
        return ("deep",)
    t = type(obj)
    name = family.names.get(t)
    if name is not None:
        return (name,) + tuple(
            (describe(k, family, depth + 1), describe(v, family, depth + 1)) for k, v in obj.items()
        )
    if t in (int, str, bool, type(None), bytes):
        return (t.__name__, repr(obj))
    if t is float:
        return ("float", "nan" if math.isnan(obj) else repr(obj))
    if t in (tuple, list):
        return (t.__name__,) + tuple(describe(x, family, depth + 1) for x in obj)
    if t in (set, frozenset):
        return (t.__name__,) + tuple(
            sorted((describe(x, family, depth + 1) for x in obj), key=repr)
        )
    if t is dict:
        return ("dict",) + tuple(
            (describe(k, family, depth + 1), describe(v, family, depth + 1)) for k, v in obj.items()
        )
    kind = _view_kind(obj)
    if kind is not None:
        return ("view-" + kind,) + tuple(describe(x, family, depth + 1) for x in obj)
    return (t.__name__, repr(obj))


def message(exc, family=None):
    """``str(exc)`` with our type names written as the builtin's, and the
    family's subclass named by its ``__name__`` alone (each family's subclass
    has its own ``__qualname__``, which pickle needs)."""
    text = str(exc)
    for ours, theirs in _OUR_TYPE_NAMES:
        text = text.replace(ours, theirs)
    sub = getattr(family, "sub", None)
    if sub is not None:
        text = text.replace("%s.%s" % (sub.__module__, sub.__qualname__), sub.__name__)
        text = text.replace(sub.__qualname__, sub.__name__)
    return text


def outcome(fn, family):
    """``("ok", describe(fn()))`` or ``("raise", type name, message, notes)``."""
    try:
        result = fn()
    except Exception as exc:
        notes = tuple(getattr(exc, "__notes__", ()))
        return ("raise", type(exc).__name__, message(exc, family), notes)
    return ("ok", describe(result, family))
