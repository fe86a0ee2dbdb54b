"""Keys that pin the trie's shape and inject faults.

``HashKey(hash, name)`` has a chosen hash, so tests can force collisions and
particular trie shapes.  ``Crasher`` raises from ``__hash__``/``__eq__``/
``__repr__`` on demand.
"""


class HashKey:
    """A key with a fixed hash; equal only to HashKeys with the same name."""

    __slots__ = ("hash", "name")

    def __init__(self, hash, name):
        self.hash = hash
        self.name = name

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        if not isinstance(other, HashKey):
            return NotImplemented
        return self.name == other.name

    def __repr__(self):
        return "HashKey(%r, %r)" % (self.hash, self.name)


class CrashError(Exception):
    """Raised by a Crasher on demand."""


class Crasher:
    """A key whose ``__hash__``/``__eq__``/``__repr__`` raise when told to.

    Set ``crash_hash``, ``crash_eq`` or ``crash_repr`` to True to raise
    ``CrashError`` (or the exception given in ``error``) from that method.
    """

    def __init__(self, name, hash_value=None, error=CrashError):
        self.name = name
        self.hash_value = hash(name) if hash_value is None else hash_value
        self.error = error
        self.crash_hash = False
        self.crash_eq = False
        self.crash_repr = False

    def __hash__(self):
        if self.crash_hash:
            raise self.error("hash of %s" % self.name)
        return self.hash_value

    def __eq__(self, other):
        if self.crash_eq:
            raise self.error("eq of %s" % self.name)
        if not isinstance(other, Crasher):
            return NotImplemented
        return self.name == other.name

    def __repr__(self):
        if self.crash_repr:
            raise self.error("repr of %s" % self.name)
        return "Crasher(%r)" % (self.name,)


# --- PEP 814 behaviour helpers (used by tests/test_pep814_*.py) -------------


class UnhashableKey:
    """A user class whose instances are unhashable (``__hash__ = None``)."""

    __hash__ = None


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


class CountingKey:
    """A key that counts calls of its ``__hash__`` and ``__eq__`` (class-wide)."""

    hash_calls = 0
    eq_calls = 0

    __slots__ = ("name", "hash_value")

    def __init__(self, name, hash_value=None):
        self.name = name
        self.hash_value = hash(name) if hash_value is None else hash_value

    def __hash__(self):
        CountingKey.hash_calls += 1
        return self.hash_value

    def __eq__(self, other):
        CountingKey.eq_calls += 1
        if not isinstance(other, CountingKey):
            return NotImplemented
        return self.name == other.name

    def __repr__(self):
        return "CountingKey(%r)" % (self.name,)

    @classmethod
    def reset(cls):
        cls.hash_calls = 0
        cls.eq_calls = 0


class CountingValue:
    """A value that counts calls of its ``__hash__`` and ``__eq__`` (class-wide)."""

    hash_calls = 0
    eq_calls = 0

    __slots__ = ("payload",)

    def __init__(self, payload):
        self.payload = payload

    def __hash__(self):
        CountingValue.hash_calls += 1
        return hash(self.payload)

    def __eq__(self, other):
        CountingValue.eq_calls += 1
        if not isinstance(other, CountingValue):
            return NotImplemented
        return self.payload == other.payload

    def __repr__(self):
        return "CountingValue(%r)" % (self.payload,)

    @classmethod
    def reset(cls):
        cls.hash_calls = 0
        cls.eq_calls = 0
