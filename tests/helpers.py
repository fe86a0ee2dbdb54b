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
    """The type name the way C's ``%T`` prints it: fully qualified unless builtin."""
    cls = type(obj)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return "%s.%s" % (cls.__module__, cls.__qualname__)


def unhashable_key_message(key):
    """The builtin frozendict's message for an unhashable key (PEP814-BEHAVIOUR C8/L3).

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
