"""Reprs cut to a width, for the reprs of the holders (``History``, ``Versioned``).

A holder's repr shows the version it holds, and that version may be a map of
a million keys: printing it whole would flood a log line or a debugger.  A
frozendict (and a tuple, the other container ``freeze`` makes) is read here
only as far as the width needs, so the repr costs what it prints, not the
size of the map; any other value is repr'd in full and then cut.
"""

from __future__ import annotations

from typing import Any, Iterator, List, Tuple

from . import _registry
from ._typeinfo import type_lookup, type_name

__all__ = ["short_repr"]

_ELLIPSIS = "..."


def _frozendict_reprs() -> Tuple[Any, ...]:
    """The ``__repr__`` of each frozendict type loaded (a subclass that keeps
    it prints as ``Name({...})`` too)."""
    return tuple(type_lookup(cls, "__repr__")[1] for cls in _registry.frozendict_types)


def short_repr(value: Any, width: int) -> str:
    """``repr(value)``, ended with ``...`` where it would pass ``width`` characters.

    Items of a frozendict or a tuple are shown while they fit, each cut in
    turn to the room left, then ``...`` stands for the rest; so the result
    stays within a few characters of ``width`` (the closing brackets).

    Cost: O(width) for frozendicts and tuples (however large); otherwise
    one full ``repr``.

    >>> from frozenmap import frozendict
    >>> short_repr(frozendict.fromkeys(range(100_000), 0), 30)
    'frozendict({0: 0, 1: 0, 2: 0, ...})'
    >>> short_repr(frozendict(a=frozendict(b='x' * 50)), 48)
    "frozendict({'a': frozendict({'b': 'xxxxx ...})})"
    """
    value_type = type(value)
    if value_type is tuple:
        if len(value) == 1:
            return "(%s,)" % short_repr(value[0], width - 3)
        return _items_repr("(", ")", iter(value), False, width)
    if issubclass(value_type, _registry.frozendict_types) and (
        type_lookup(value_type, "__repr__")[1] in _frozendict_reprs()
    ):
        name = type_name(value_type)
        if not len(value):
            return "%s()" % name
        return _items_repr("%s({" % name, "})", iter(value.items()), True, width)
    text = repr(value)
    if len(text) <= width:
        return text
    if width <= len(_ELLIPSIS) + 1:
        return _ELLIPSIS
    return text[: width - len(_ELLIPSIS) - 1] + " " + _ELLIPSIS


def _items_repr(opening: str, closing: str, items: Iterator[Any], pairs: bool, width: int) -> str:
    """``opening``, the items (``key: value`` when ``pairs``) separated by
    commas while they fit in ``width``, then ``closing``."""
    parts: List[str] = []
    used = len(opening) + len(closing)
    for item in items:
        separator = 2 if parts else 0
        room = width - used - separator
        if room <= len(_ELLIPSIS):
            parts.append(_ELLIPSIS)
            break
        if pairs:
            key_text = short_repr(item[0], room)
            piece = "%s: %s" % (key_text, short_repr(item[1], room - len(key_text) - 2))
        else:
            piece = short_repr(item, room)
        if parts and used + separator + len(piece) > width:
            parts.append(_ELLIPSIS)
            break
        parts.append(piece)
        used += separator + len(piece)
    return opening + ", ".join(parts) + closing
