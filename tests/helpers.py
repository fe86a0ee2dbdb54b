"""Helpers for the behaviour tests: PEP 814's messages, item lists, snapshots.

The keys and values the tests use (``HashKey``, ``Crasher``, ``CountingKey``
...) are in ``keys.py``.
"""


# --- PEP 814 behaviour helpers (used by tests/test_pep814_*.py) -------------


def type_name_as_T(obj):
    """The type name the way C's ``%T`` prints it (PEP 737): fully qualified,
    except that the module is left out for ``builtins`` and ``__main__``."""
    cls = type(obj)
    if cls.__module__ in ("builtins", "__main__"):
        return cls.__qualname__
    return "%s.%s" % (cls.__module__, cls.__qualname__)


def unhashable_key_message(key):
    """The builtin frozendict's message for an unhashable key (docs/pep814.md, rows C8 and L3).

    ``cannot use '%T' as a frozendict key (%S)``, where ``%S`` is the text of the
    ``TypeError`` that ``hash(key)`` raised on this Python version.
    """
    try:
        hash(key)
    except TypeError as exc:
        original = str(exc)
    else:
        raise AssertionError("%r is hashable" % (key,))
    return "cannot use '%s' as a frozendict key (%s)" % (type_name_as_T(key), original)


# --- helpers for the derivation, evolver, structure and bad-input tests ------


def typed_items(mapping):
    """``[(type(k), k, v), ...]`` in iteration order.

    Comparing these lists checks order, values and which key object was kept
    (``1`` versus ``1.0`` versus ``True``), which ``==`` on items cannot see.
    """
    return [(type(k), k, v) for k, v in mapping.items()]


class Snapshot:
    """What a mapping held when taken; ``check()`` asserts it still does.

    Records the items by identity as well as by value, so a version whose
    value object was swapped for an equal one is caught too.
    """

    def __init__(self, mapping):
        self.mapping = mapping
        self.items = list(mapping.items())
        self.length = len(mapping)

    def check(self):
        mapping = self.mapping
        assert len(mapping) == self.length
        now = list(mapping.items())
        assert len(now) == len(self.items)
        for (k1, v1), (k2, v2) in zip(now, self.items):
            assert k1 is k2 and v1 is v2, "item changed: %r -> %r" % ((k2, v2), (k1, v1))
        if hasattr(mapping, "_check"):
            mapping._check()
