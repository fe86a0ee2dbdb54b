"""How frozendicts meet the tools Python users already have.

- Serializers: ``json_default`` is a ``default=`` hook for ``json``, ``orjson``
  and ``msgspec`` (``enc_hook``); ``thaw`` turns frozen data back into plain
  mutable containers, for everything else.
- Pretty printers: ``pprint`` wraps a long frozendict as CPython 3.15 wraps its
  builtin one; ``rich`` (``__rich_repr__``) and IPython (``_repr_pretty_``)
  show it as a mapping.
- pydantic v2: ``__get_pydantic_core_schema__`` validates any mapping into a
  frozendict and dumps it as a dict / JSON object.  pydantic is imported only
  when a model asks for the schema.

``install(cls)`` gives a core's frozendict type these methods; each core's
``__init__`` calls it, so both cores carry the very same functions.
"""

from collections.abc import Mapping
from types import MethodType
from typing import Any, Callable, Dict, Iterator, Tuple

from . import _registry

__all__ = ["json_default", "thaw", "install"]


# --- serializers -----------------------------------------------------------------


def _is_frozendict(obj: Any) -> bool:
    """Is ``obj`` any core's frozendict, or the builtin one (3.15+)?"""
    return isinstance(obj, _registry.frozendict_types)


def json_default(obj: Any, /) -> Any:
    """Serialize a frozendict as a JSON object: the ``default=`` hook for json.

    ``json.dumps(data, default=frozenmap.json_default)`` writes every
    frozendict inside ``data`` as ``json`` writes a dict (so its keys follow
    json's rules for dict keys).  The same function is orjson's ``default=``
    and msgspec's ``enc_hook``.  Any other object raises ``TypeError``, as
    json's own default does.

    Cost: O(n) for an n-item frozendict (one shallow dict copy).

    >>> import json
    >>> from frozenmap import frozendict, json_default
    >>> json.dumps({"cfg": frozendict(port=80, tags=("a", "b"))}, default=json_default)
    '{"cfg": {"port": 80, "tags": ["a", "b"]}}'
    """
    if _is_frozendict(obj):
        return dict(obj)
    raise TypeError("Object of type %s is not JSON serializable" % type(obj).__name__)


def thaw(obj: Any, /) -> Any:
    """A deep mutable copy of frozen data: the inverse of freezing it.

    frozendict and dict become ``dict``, tuple and list become ``list``,
    frozenset and set become ``set``, recursively through values and items.
    Dict keys and set elements are kept as they are (they must stay
    hashable); any other object is returned as it is.  The result shares no
    container with ``obj``, and a container reached twice (or through a
    cycle) is thawed once.

    Cost: O(total size).

    >>> from frozenmap import frozendict, thaw
    >>> thaw(frozendict(a=(1, 2), b=frozendict(c=frozenset({3}))))
    {'a': [1, 2], 'b': {'c': {3}}}
    """
    return _thaw(obj, {})


def _thaw(obj: Any, memo: Dict[int, Any]) -> Any:
    if isinstance(obj, (str, bytes, int, float)) or obj is None:
        return obj
    done = memo.get(id(obj))
    if done is not None:
        return done
    result: Any
    if isinstance(obj, dict) or _is_frozendict(obj):
        result = memo[id(obj)] = {}
        for key, value in obj.items():
            result[key] = _thaw(value, memo)
    elif isinstance(obj, (tuple, list)):
        result = memo[id(obj)] = []
        result.extend(_thaw(item, memo) for item in obj)
    elif isinstance(obj, (frozenset, set)):
        result = memo[id(obj)] = set(obj)
    else:
        return obj
    return result


# --- pretty printers -------------------------------------------------------------


def _pprint_frozendict(
    printer: Any, obj: Any, stream: Any, indent: int, allowance: int, context: Any, level: int
) -> None:
    """pprint's formatter for a frozendict too wide for one line.

    The output of CPython 3.15's ``PrettyPrinter._pprint_frozendict`` for the
    builtin: ``Name({`` then ``key: value`` items one a line, aligned under
    the first, then ``})``.  On 3.15+ the printer's block helpers (for its
    ``expand`` mode) are used when it has them.
    """
    write = stream.write
    name = type(obj).__name__
    if not len(obj):
        write(repr(obj))
        return
    items: Any = obj.items()
    if printer._sort_dicts:
        import pprint

        items = sorted(items, key=pprint._safe_tuple)  # type: ignore[attr-defined]
    if hasattr(printer, "_format_block_start"):
        write(printer._format_block_start(name + "({", indent))
        printer._write_indent_padding(write)
        child_indent = printer._child_indent(indent, len(name) + 1)
        end = printer._format_block_end("})", indent)
    else:
        write(name + "({")
        if printer._indent_per_level > 1:
            write((printer._indent_per_level - 1) * " ")
        child_indent = indent + len(name) + 1
        end = "})"
    printer._format_dict_items(items, stream, child_indent, allowance + 2, context, level)
    write(end)


# The ``__repr__`` of each core's frozendict type: pprint's one-line form
# (``_safe_repr``) treats an object whose type's ``__repr__`` is one of them as
# CPython 3.15 treats its builtin frozendict.
_ONE_LINE_REPRS: Dict[Any, bool] = {}


def _safe_repr_frozendict(
    printer: Any, obj: Any, context: Any, maxlevels: Any, level: int
) -> Tuple[str, bool, bool]:
    """pprint's one-line form of a frozendict: CPython 3.15's ``_safe_repr``
    branch for its builtin (keys sorted unless ``sort_dicts=False``, ``depth=``
    shown as ``Name({...})``, recursion detected)."""
    import pprint

    name = obj.__class__.__name__
    if not obj:
        return "%s()" % name, True, False
    objid = id(obj)
    if maxlevels and level >= maxlevels:
        return "%s({...})" % name, False, objid in context
    if objid in context:
        return pprint._recursion(obj), False, True  # type: ignore[attr-defined]
    context[objid] = 1
    readable = True
    recursive = False
    components = []
    level += 1
    items: Any = obj.items()
    if printer._sort_dicts:
        items = sorted(items, key=pprint._safe_tuple)  # type: ignore[attr-defined]
    for key, value in items:
        krepr, kreadable, krecur = printer.format(key, context, maxlevels, level)
        vrepr, vreadable, vrecur = printer.format(value, context, maxlevels, level)
        components.append("%s: %s" % (krepr, vrepr))
        readable = readable and kreadable and vreadable
        recursive = recursive or krecur or vrecur
    del context[objid]
    return "%s({%s})" % (name, ", ".join(components)), readable, recursive


_VIEW_NAMES: Dict[Any, str] = {}
"""The name a view's repr starts with (``dict_keys`` ...), by its ``__repr__``."""


def _pprint_view(
    printer: Any, obj: Any, stream: Any, indent: int, allowance: int, context: Any, level: int
) -> None:
    """pprint's formatter for a keys, values or items view too wide for one line.

    CPython 3.15 wraps dict's views (and so the builtin frozendict's) with
    ``PrettyPrinter._pprint_dict_view``: ``dict_keys([`` then the members one
    a line, sorted unless ``sort_dicts=False``, then ``])``.  Ours print the
    same text (their ``repr`` already names them ``dict_keys`` and so on, as
    the builtin's do); registered only where the printer wraps dict's views.
    """
    import pprint

    name = _VIEW_NAMES[type(obj).__repr__]
    write = stream.write
    write(printer._format_block_start(name + "([", indent))
    if len(obj):
        entries: Any = obj
        if printer._sort_dicts:
            items = name == "dict_items"
            key = pprint._safe_tuple if items else pprint._safe_key  # type: ignore[attr-defined]
            entries = sorted(obj, key=key)
        printer._format_items(entries, stream, indent, allowance + 2, context, level)
    write(printer._format_block_end("])", indent))


def _register_pprint(cls: type) -> None:
    # pprint chooses a wrapping formatter by ``type(obj).__repr__`` in this
    # table, its only extension point (the builtin frozendict is registered the
    # same way).  Its one-line form has no table: ``_safe_repr`` is extended
    # once, for frozenmap's types only (any other object goes to pprint's own).
    import pprint

    dispatch = pprint.PrettyPrinter._dispatch  # type: ignore[attr-defined]
    dispatch[cls.__repr__] = _pprint_frozendict
    if hasattr(pprint.PrettyPrinter, "_pprint_dict_view"):  # 3.15+
        empty = cls()
        for view in (empty.keys(), empty.values(), empty.items()):
            _VIEW_NAMES[type(view).__repr__] = repr(view).partition("(")[0]
            dispatch[type(view).__repr__] = _pprint_view
    _ONE_LINE_REPRS[cls.__repr__] = True
    original = pprint.PrettyPrinter._safe_repr
    if getattr(original, "_frozenmap_original", None) is not None:
        return

    def _safe_repr(printer: Any, obj: Any, context: Any, maxlevels: Any, level: int) -> Any:
        if getattr(type(obj), "__repr__", None) in _ONE_LINE_REPRS:
            return _safe_repr_frozendict(printer, obj, context, maxlevels, level)
        return original(printer, obj, context, maxlevels, level)

    _safe_repr._frozenmap_original = original  # type: ignore[attr-defined]
    _safe_repr.__doc__ = original.__doc__
    setattr(pprint.PrettyPrinter, "_safe_repr", _safe_repr)  # noqa: B010 (a private method)


def _repr_pretty_(self: Any, printer: Any, cycle: bool, /) -> None:
    """IPython's pretty printer: ``Name({k: v, ...})``, wrapped like a dict."""
    name = type(self).__name__
    if cycle:
        printer.text(name + "({...})")
        return
    if not len(self):
        printer.text(name + "()")
        return
    with printer.group(len(name) + 2, name + "({", "})"):
        for index, (key, value) in enumerate(self.items()):
            if index:
                printer.text(",")
                printer.breakable()
            printer.pretty(key)
            printer.text(": ")
            printer.pretty(value)


def __rich_repr__(self: Any) -> Iterator[Any]:
    """rich's pretty printer: ``Name({...})`` with the items shown as a dict."""
    if len(self):
        yield dict(self.items())


# --- pydantic --------------------------------------------------------------------


def __get_pydantic_core_schema__(cls: Any, source: Any, handler: Any, /) -> Any:
    """pydantic v2: validate any mapping into ``cls``; dump it as a dict.

    ``frozendict[K, V]`` validates each key as ``K`` and each value as ``V``
    (a bare ``frozendict`` accepts anything).  Lax mode accepts any
    ``Mapping``; strict mode (``ConfigDict(strict=True)``) a frozendict or a
    dict, as a ``dict`` field accepts only a dict.  It serializes as a ``dict``
    (a JSON object), and its JSON schema is an object's.
    """
    from typing import get_args

    from pydantic_core import core_schema

    args = get_args(source)
    if len(args) == 2:
        key_schema, value_schema = (
            handler.generate_schema(args[0]),
            handler.generate_schema(args[1]),
        )
    else:
        key_schema = value_schema = core_schema.any_schema()
    as_dict = core_schema.dict_schema(key_schema, value_schema)
    return core_schema.no_info_after_validator_function(
        cls,
        core_schema.lax_or_strict_schema(
            lax_schema=core_schema.no_info_before_validator_function(_any_mapping_as_dict, as_dict),
            strict_schema=core_schema.no_info_before_validator_function(
                _unfreeze_one_level, as_dict
            ),
        ),
        serialization=core_schema.plain_serializer_function_ser_schema(
            _as_dict, return_schema=as_dict
        ),
    )


def _unfreeze_one_level(value: Any) -> Any:
    # strict mode: dict_schema takes only dicts; a frozendict is as good.
    if _is_frozendict(value):
        return dict(value.items())
    return value


def _any_mapping_as_dict(value: Any) -> Any:
    # lax mode: dict_schema takes dicts and a few mapping types; any Mapping is
    # as good.
    if isinstance(value, Mapping) and not isinstance(value, dict):
        return dict(value.items())
    return value


def _as_dict(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value.items())
    return value


# --- installation ----------------------------------------------------------------


class _PrettyMethod:
    """``_repr_pretty_`` as IPython and hypothesis's copy of its printer both call it.

    IPython finds it in the class and calls ``cls._repr_pretty_(obj, printer,
    cycle)``.  hypothesis's vendored printer looks the name up on whatever it
    prints, the class object included, and then calls
    ``frozendict._repr_pretty_(printer, cycle)``: that prints the class.
    """

    def __init__(self, function: Callable[..., Any]):
        self.function = function
        self.__doc__ = function.__doc__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is not None:
            return MethodType(self.function, instance)
        function = self.function

        def on_the_class(*args: Any) -> None:
            if len(args) == 2:  # (printer, cycle): the class itself is printed
                args[0].text(repr(owner))
                return None
            return function(*args)  # type: ignore[no-any-return]

        return on_the_class


def install(cls: Any) -> None:
    """Give a core's frozendict type the methods above and register it with pprint."""
    cls._repr_pretty_ = _PrettyMethod(_repr_pretty_)
    cls.__rich_repr__ = __rich_repr__
    cls.__get_pydantic_core_schema__ = classmethod(__get_pydantic_core_schema__)
    _register_pprint(cls)
