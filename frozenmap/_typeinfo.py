"""What a type really is, whatever its metaclass says.

``__name__``, ``__qualname__``, ``__module__``, ``__mro__`` and ``__dict__`` are
data descriptors of ``type``, and a metaclass can override any of them (or
``__getattribute__``) to return anything at all.  CPython's own machinery reads
the type object's fields instead (``tp_name``, ``ht_qualname``, ``tp_mro``,
``tp_dict``); so does the C core (``fm_type_*`` in ``module.c``), and this
module reads the same fields through ``type``'s own descriptors, which no
metaclass can intercept.  ``isinstance()`` can be fooled too (it falls back to
``obj.__class__``); ``issubclass(type(obj), cls)`` cannot, for a ``cls`` whose
metaclass is ``type``.

Shared by both cores' Python code (the pure core, and ``_cold``, which the C
core also calls); mirrors the ``fm_type_*`` helpers of
``frozenmap/_ccore/module.c``.
"""

from __future__ import annotations

from typing import Any, Tuple

__all__ = ["type_name", "type_fullname", "type_mro", "type_dict", "type_lookup", "lookup_special"]

_MISSING: Any = object()

type_mro: Any = type.__dict__["__mro__"].__get__
"""``tp_mro``: the real method resolution order of a type."""
type_dict: Any = type.__dict__["__dict__"].__get__
"""``tp_dict`` (a read-only proxy)."""
_type_name: Any = type.__dict__["__name__"].__get__
_type_qualname: Any = type.__dict__["__qualname__"].__get__
_type_module: Any = type.__dict__["__module__"].__get__


def type_name(cls: type) -> str:
    """``PyType_GetName``: the real ``__name__`` (``tp_name`` of a class made in
    Python), as an exact ``str`` (``__name__`` may be set to a str subclass,
    whose methods are then never called)."""
    return str.__str__(_type_name(cls))


def type_fullname(cls: type) -> str:
    """The fully qualified name, as C's ``%T`` prints it: ``module.Qualname``,
    just ``Qualname`` for ``builtins`` and ``__main__`` or when the type's own
    ``__module__`` is missing or not a string."""
    qualname = str.__str__(_type_qualname(cls))  # exact str, as %U reads it
    try:
        module = _type_module(cls)
    except AttributeError:
        return qualname
    if not issubclass(type(module), str):
        return qualname
    module = str.__str__(module)
    if module in ("builtins", "__main__"):
        return qualname
    return "%s.%s" % (module, qualname)


def type_lookup(cls: type, name: str) -> Tuple[bool, Any]:
    """``_PyType_Lookup``: ``name`` in the dicts of the real MRO, never the metaclass.

    Returns ``(True, attribute)`` or ``(False, None)``.
    """
    for base in type_mro(cls):
        value = type_dict(base).get(name, _MISSING)
        if value is not _MISSING:
            return True, value
    return False, None


def lookup_special(obj: Any, name: str) -> Tuple[bool, Any]:
    """``_PyObject_LookupSpecial``: a special method looked up on the type, bound
    to ``obj`` as the interpreter binds it.  ``(True, bound)`` or ``(False, None)``."""
    found, attr = type_lookup(type(obj), name)
    if not found:
        return False, None
    found, get = type_lookup(type(attr), "__get__")
    if found:
        return True, get(attr, obj, type(obj))
    return True, attr
