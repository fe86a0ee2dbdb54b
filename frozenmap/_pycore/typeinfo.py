"""The pure core's name for ``frozenmap._typeinfo`` (shared with ``frozenmap._cold``,
which the C core uses too, so it lives outside the pure core's package)."""

from .._typeinfo import lookup_special, type_dict, type_fullname, type_lookup, type_mro, type_name

__all__ = ["type_name", "type_fullname", "type_mro", "type_dict", "type_lookup", "lookup_special"]
