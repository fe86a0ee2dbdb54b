"""Hashing: key hashes, the pair hash, and the frozenset-compatible finaliser.

``hash(fd)`` must equal ``hash(frozenset(fd.items()))`` exactly (PEP 814,
CPython 3.15).  A frozenset hashes its members and XORs ``hashing_shuffle_bits`` of each
member hash, then finalises with the size; the members here are the
``(key, value)`` pairs, and a pair's hash is CPython's 2-tuple hash.  We compute
that tuple hash ourselves from the key hash stored in the trie entry, so a key's
``__hash__`` is never called again after it was inserted.

The XOR accumulator makes the hash of a derived version an O(1) update: XOR the
old pair's shuffled hash out and the new one in (see ``hashing_acc_replace``).  The old
pair's hash is computed again, so it is trusted only when it cannot have
changed since it went in (``hashing_is_stable``); otherwise the derived
version forgets its hash and computes it from its items when asked.

Mirrors ``frozenmap/_ccore/hashing.c``.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn, Optional

from .._typeinfo import type_fullname, type_lookup

__all__ = [
    "MASK",
    "KEY_MASK",
    "hashing_key_hash",
    "unhashable",
    "hashing_pure_key_hash",
    "hashing_key_is_pure",
    "hashing_pair_hash",
    "hashing_shuffle_bits",
    "hashing_finalize",
    "hashing_is_stable",
    "register_cached_hash",
    "hashing_acc_replace",
]

_WIDTH: int = sys.hash_info.width
_ON_PYPY = sys.implementation.name == "pypy"
MASK: int = (1 << _WIDTH) - 1
"""The hash width's all-ones mask, for arithmetic modulo 2**width."""

KEY_MASK: int = -1 if _ON_PYPY else MASK
"""Stored key hashes are ``hash(key) & KEY_MASK``: on CPython the unsigned form
of ``hash(key)``; on PyPy ``hash(key)`` itself, a machine-word int where the
unsigned form of a negative hash is a big int (allocated on every lookup, and
slow in the JIT's bit arithmetic).  The trie reads digits as ``(h >> shift) &
31`` either way; a negative hash's top digit (shift 60) takes the sign bit as
its fifth bit, so distinct hashes still part at some digit."""

# CPython's xxHash-style tuple hash constants (Objects/tupleobject.c, 64-bit).
_XXPRIME_1 = 11400714785074694791
_XXPRIME_2 = 14029467366897019727
_XXPRIME_5 = 2870177450012600261
_MASK64 = (1 << 64) - 1


def hashing_key_hash(key: Any) -> int:
    """Return the unsigned hash of ``key``, with PEP 814's unhashable-key message.

    Only an exact ``TypeError`` from ``__hash__`` is rewritten (as the builtin
    does); every other exception, TypeError subclasses included, passes through.
    (The hot paths of ``frozendict`` inline this: ``hash(key) & KEY_MASK``, and
    ``unhashable`` on a TypeError.)
    """
    try:
        return hash(key) & KEY_MASK
    except TypeError as exc:
        unhashable(key, exc)


def unhashable(key: Any, exc: TypeError) -> NoReturn:
    """Raise what ``hashing_key_hash`` raises when ``hash(key)`` raised ``exc``; called
    in the ``except`` clause (the rewritten error's cause is ``exc``, as in C)."""
    if type(exc) is not TypeError:
        raise exc
    raise TypeError(
        "cannot use '%s' as a frozendict key (%s)" % (type_fullname(type(key)), exc)
    ) from exc


def _hash_slot(cls: type) -> Any:
    return type_lookup(cls, "__hash__")[1]


# The __hash__ of types whose hash runs no Python code and never changes.
_PURE_HASHES = tuple(
    _hash_slot(cls) for cls in (str, int, float, complex, bytes, frozenset, object, type(None))
)
_TUPLE_HASH = _hash_slot(tuple)
_PURE_DEPTH = 8


def hashing_key_is_pure(key: Any) -> bool:
    """Whether ``key``'s hash runs no Python code (``hashing_pure_key_hash``):
    what every key of a table version is.  An exact str first: the usual key."""
    return type(key) is str or hashing_pure_key_hash(key) is not None


def hashing_pure_key_hash(key: Any, depth: int = 0) -> Optional[int]:
    """The unsigned hash of ``key`` if computing it runs no Python code (str,
    int, float, bytes, frozenset, the default identity hash, and tuples of
    those), else None.  Such a hash cannot have changed since the key was
    stored, so it finds the key's entry without calling its ``__hash__``.
    """
    method = _hash_slot(type(key))
    for pure in _PURE_HASHES:
        if method is pure:
            return hash(key) & KEY_MASK
    if method is _TUPLE_HASH and depth < _PURE_DEPTH:
        for item in tuple.__iter__(key):  # never a subclass's __iter__
            if hashing_pure_key_hash(item, depth + 1) is None:
                return None
        return hash(key) & KEY_MASK
    return None


# The three functions of the hash, chosen once for the interpreter.
if not _ON_PYPY:

    def hashing_pair_hash(khash: int, value: Any) -> int:
        """``hash((key, value))`` computed from the stored key hash.

        Calls ``hash(value)``, which may raise.  The result is unsigned (on
        PyPy the signed int with the same bits: see below).
        """
        if _WIDTH != 64:  # pragma: no cover - 32-bit builds use the slow exact path
            raise NotImplementedError
        acc = _XXPRIME_5
        for lane in (khash, hash(value) & _MASK64):  # (a negative khash: same residue)
            acc = (acc + lane * _XXPRIME_2) & _MASK64
            acc = ((acc << 31) | (acc >> 33)) & _MASK64
            acc = (acc * _XXPRIME_1) & _MASK64
        acc = (acc + (2 ^ (_XXPRIME_5 ^ 3527539))) & _MASK64
        if acc == _MASK64:
            return 1546275796
        return acc

    def hashing_shuffle_bits(h: int) -> int:
        """frozenset's per-member scrambling of a hash (Objects/setobject.c)."""
        return (((h ^ 89869747) ^ (h << 16)) * 3644798167) & MASK

    def hashing_finalize(acc: int, length: int) -> int:
        """Turn the XOR accumulator into the signed hash value, like ``frozenset``."""
        h = acc ^ (((length + 1) * 1927868237) & MASK)
        h ^= (h >> 11) ^ (h >> 25)
        h = (h * 69069 + 907133923) & MASK
        if h == MASK:
            h = 590923713
        if h >> (_WIDTH - 1):
            h -= 1 << _WIDTH
        return h

else:  # pragma: no cover - measured by the PyPy suite
    # On PyPy the same three functions compute in machine words: every value
    # is the signed int with the bits of the unsigned one above (an
    # accumulator XORs such values and stays one), through __pypy__'s
    # wrapping operations.  The unsigned form is a big int for half of all
    # values there, allocated on each edit and slow in the JIT (hashing_acc_replace
    # measured 1.1 us -> 45 ns at n = 100,000); and PyPy keeps the int a
    # ``__hash__`` returns only if it is a machine-word one (a big int is
    # hashed again, modulo 2**61 - 1), which ``hashing_finalize``'s result now
    # is by construction.
    from __pypy__.intop import (  # type: ignore[import-not-found]
        int_add,
        int_lshift,
        int_mul,
        uint_rshift,
    )

    def _signed(u: int) -> int:
        return u - (1 << 64) if u >> 63 else u

    _S_PRIME_1 = _signed(_XXPRIME_1)
    _S_PRIME_2 = _signed(_XXPRIME_2)
    _S_TAIL = 2 ^ (_XXPRIME_5 ^ 3527539)

    def hashing_pair_hash(khash: int, value: Any) -> int:
        # (the two lanes written out: a loop would be compiled apart)
        acc: int = int_add(_XXPRIME_5, int_mul(khash, _S_PRIME_2))
        acc = int_mul(int_lshift(acc, 31) | uint_rshift(acc, 33), _S_PRIME_1)
        acc = int_add(acc, int_mul(hash(value), _S_PRIME_2))
        acc = int_mul(int_lshift(acc, 31) | uint_rshift(acc, 33), _S_PRIME_1)
        acc = int_add(acc, _S_TAIL)
        if acc == -1:
            return 1546275796
        return acc

    def hashing_shuffle_bits(h: int) -> int:
        shuffled: int = int_mul((h ^ 89869747) ^ int_lshift(h, 16), 3644798167)
        return shuffled

    def hashing_finalize(acc: int, length: int) -> int:
        h: int = acc ^ int_mul(length + 1, 1927868237)
        h ^= uint_rshift(h, 11) ^ uint_rshift(h, 25)
        h = int_add(int_mul(h, 69069), 907133923)
        if h == -1:
            h = 590923713
        return h


# Exact types whose hash runs no Python code and never changes (builtin types
# cannot be patched): the fast test of hashing_is_stable.
_STABLE_TYPES = frozenset((str, int, float, bool, bytes, complex, type(None)))
_cached_hash_method: Any = None
_cached_hash_of: Any = None


def register_cached_hash(method: Any, cached: Any) -> None:
    """Tell ``hashing_is_stable`` the frozendict's ``__hash__`` and how to
    read a version's cached hash (None when unknown); frozendict.py calls it
    (this module cannot import that one)."""
    global _cached_hash_method, _cached_hash_of
    _cached_hash_method, _cached_hash_of = method, cached


def hashing_is_stable(value: Any) -> bool:
    """Whether ``hash(value)`` is certainly what it was when ``value`` was
    stored: a hash that runs no Python code (``hashing_pure_key_hash``), or the cached
    hash of a frozendict (of this core, a subclass not overriding ``__hash__``
    included: a version's hash never changes once known).  A value whose
    ``__hash__`` is Python code may hash differently now (a mutable object
    hashing its state), so its hash is never trusted twice."""
    cls = type(value)
    if cls in _STABLE_TYPES:
        return True
    if cls is tuple:
        for item in value:  # the common tuple first: every member of those types
            if type(item) not in _STABLE_TYPES:
                return hashing_pure_key_hash(value) is not None
        return True
    if _hash_slot(cls) is _cached_hash_method:
        return _cached_hash_of(value) is not None
    return hashing_pure_key_hash(value) is not None


def hashing_acc_replace(
    acc: Optional[int], khash: int, old: Any, new: Any, has_old: bool, has_new: bool
) -> Optional[int]:
    """Update a hash accumulator for one pair leaving and/or one arriving.

    ``acc`` is None when unknown; it stays None.  A value whose hash raises an
    ``Exception`` makes the accumulator unknown instead of failing the edit;
    ``MemoryError`` and other ``BaseException`` (``KeyboardInterrupt``)
    propagate (docs/spec.md §4: memory exhaustion reaches the caller).

    The pair leaving is XORed out only when its value's hash is stable
    (``hashing_is_stable``): what went into ``acc`` is not stored, and a value
    whose hash changed since would leave a wrong hash behind (PEP 814:
    ``hash(fd) == hash(frozenset(fd.items()))``).  Otherwise ``acc`` becomes
    unknown; the new version's ``hash()`` then walks its items once.
    """
    if acc is None:
        return None
    try:
        if has_old:
            if not hashing_is_stable(old):
                return None
            acc ^= hashing_shuffle_bits(hashing_pair_hash(khash, old))
        if has_new:
            acc ^= hashing_shuffle_bits(hashing_pair_hash(khash, new))
    except MemoryError:
        raise
    except Exception:
        return None
    return acc
