"""The pure core is the C core's mirror by name: each C function has its Python
twin under a name the rule below gives, or is in the reasoned list of C-only
functions; each function of the pure core is a twin, or in the reasoned list
of Python-only ones.  Read from both source trees, as ``test_layers.py``
reads the ranks: a function added, renamed or removed in one core only
fails here, naming it.

The rule, for a C file ``X.c`` and its twin ``frozenmap/_pycore/X.py``
(``keytrie.c``'s twin is ``keytrie.py`` with ``champ.py``, which holds what
is written once over the key trie's two layouts):

1. A module function keeps the C name: ``hashing_key_hash``,
   ``champ_pair_subtree``, ``transient_version_new``.
2. ``<prefix>_py_<name>`` (a Python method or attribute implemented in C)
   and ``<prefix>_tp_<slot>`` (a type slot) are the module function
   ``<prefix>_<name>`` / ``<prefix>_<slot>``, the marker dropped, when the
   pure core has one (``path_py_get_in`` is ``path_get_in``,
   ``view_mapping_py_keys`` is ``view_mapping_keys``).
3. In the files of a type, the prefix names the class (``TYPES``):
   ``<t>_py_<name>`` is its method ``<name>`` (or ``_<name>`` for the
   private ones the C core also exposes, ``__<name>__`` for a dunder, and
   ``dunder_<name>`` is ``__<name>__``); ``<t>_tp_<slot>`` is the slot's
   dunder (``SLOTS``); any other ``<t>_<name>`` is the class's method
   ``_<name>`` or the module's function ``_<name>`` (the prefix is the
   module's: ``fd_keys_missing_from`` is ``frozendict._keys_missing_from``).
4. ``transient_<name>``, when it works on a transient, is the method
   ``Transient._<name>`` (``transient_assoc_hashed`` is
   ``Transient._assoc_hashed``).

The C-only functions are memory management (allocation, free lists,
reference counts), the collector's slots, C's calling and argument parsing,
and the work Python's objects do for free (a tuple's copy, a sort's
comparator); each is listed with why.  The Python-only ones are the pure
core's own mechanisms (the digit index of the key trie, the registered
classes, the one-walk copies) and the helpers of a Python idiom.

``python tests/test_mirror_names.py`` prints, per file pair, the share of
C functions that have a twin.
"""

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "frozenmap"
CCORE = PACKAGE / "_ccore"
PYCORE = PACKAGE / "_pycore"
if not (CCORE / "keytrie.c").exists() or not (PYCORE / "keytrie.py").exists():  # pragma: no cover
    pytest.skip("needs the source tree", allow_module_level=True)

# The pure module(s) each C file mirrors.
TWINS = {
    "hashing.c": ("hashing",),
    "keytrie.c": ("keytrie", "champ"),
    "ordertrie.c": ("ordertrie",),
    "flat.c": ("flat",),
    "table.c": ("table",),
    "transient.c": ("transient",),
    "derive.c": ("derive",),
    "reads.c": ("reads",),
    "merge.c": ("merge",),
    "views.c": ("views",),
    "paths.c": ("paths",),
    "evolver.c": ("evolver",),
    "frozendict.c": ("frozendict",),
    "module.c": ("__init__",),
}

# C files that are not a core's but speed up a module above the cores, which
# stays the whole implementation (and runs alone for the pure core's states):
# the pure core has no twin of them.
ACCELERATORS = {
    "drafts.c": "drafts",
}

# Rule 3: the class a type file's prefix stands for (the longest prefix wins).
TYPES = {
    "fd": "frozendict",
    "evolver": "Evolver",
    "view": "_View",
    "view_keys": "frozendict_keys",
    "view_values": "frozendict_values",
    "view_items": "frozendict_items",
    "view_iter": "frozendict_iterator",
}
TYPE_FILES = {"frozendict.c", "evolver.c", "views.c"}

# Rule 3: a slot's dunders (a slot with none here is C's alone: see C_ONLY).
SLOTS = {
    "new": ("__new__",),
    "init": ("__init__",),
    "length": ("__len__",),
    "subscript": ("__getitem__",),
    "ass_subscript": ("__setitem__", "__delitem__"),
    "contains": ("__contains__",),
    "richcompare": ("__eq__", "__ne__"),
    "repr": ("__repr__",),
    "hash": ("__hash__",),
    "iter": ("__iter__",),
    "next": ("__next__",),
    "or": ("__or__", "__ror__"),
    "subtract": ("__sub__",),
    "and": ("__and__",),
}

# Twins the rule cannot see: one core does the work in another file or under
# a Python idiom's name.  C function -> "module:qualname", and why.
TWINS_ELSEWHERE = {
    "keytrie.c": {
        "champ_foreach": (
            "keytrie:champ_entries",
            "a callback over every entry in C, a generator in Python",
        ),
    },
    "ordertrie.c": {
        "order_with_child": (
            "ordertrie:_reattach",
            "one level in C; the Python helper walks the path's levels",
        ),
    },
    "flat.c": {
        "flat_with": (
            "derive:derive_flat_with",
            "the pure flat layer makes no versions: derive wraps its tuples",
        ),
        "flat_without": ("derive:derive_flat_without", "as flat_with"),
        "flat_from_dict": (
            "frozendict:_flat_from_dict",
            "a version is made where its class is (frozendict.py)",
        ),
        "flat_t_find": (
            "transient:Transient._find",
            "the lookup of a transient in flat mode: _find's flat branch",
        ),
        "flat_t_promote": ("transient:Transient._promote", "a transient leaving flat mode"),
    },
    "table.c": {
        "table_version_new": (
            "frozendict:frozendict._from_parts",
            "a version is made where its class is (frozendict.py)",
        ),
        "table_entries": (
            "table:table_tries",
            "C lists the entries for the builder's bulk load; Python builds the tries",
        ),
        "table_version_tries": (
            "transient:trie_parts",
            "a table version read through its twin: what a builder starts from",
        ),
    },
    "transient.c": {
        "transient_version_new": (
            "frozendict:frozendict._from_parts",
            "a version is made from its slots, frozendict's",
        ),
        "transient_version_exact": ("frozendict:frozendict._exact", "as transient_version_new"),
        "transient_init": (
            "transient:Transient.__init__",
            "a transient made from a version's parts",
        ),
        "transient_init_flat_from": (
            "transient:trie_parts",
            "what a Transient starts from (a flat version stays flat)",
        ),
        "transient_gc_pause": ("transient:_GCPaused.__enter__", "the pause, as a context manager"),
        "transient_gc_resume": ("transient:_GCPaused.__exit__", "as transient_gc_pause"),
        "transient_load_entries": (
            "transient:load_items",
            "C fills from hashed entries, Python hashes the pairs itself",
        ),
        "transient_compare_seq": (
            "transient:_seq_of",
            "qsort's comparator in C, sort's key in Python",
        ),
    },
    "views.c": {
        "view_iter_new": ("views:frozendict_iterator.__init__", "the iterator's constructor"),
        "view_tp_repr": (
            "views:frozendict_keys.__repr__",
            "one slot for the three views in C, one method per view class in Python",
        ),
    },
    "evolver.c": {
        "evolver_pop_entry_locked": (
            "evolver:Evolver._pop_entry",
            "Python's edit guard (_begin) is C's edit lock",
        ),
        "evolver_read_frozen": ("evolver:Evolver._item_at", "the positional reads of a freeze()"),
    },
    "frozendict.c": {
        "fd_equal_versions": (
            "frozendict:frozendict.__eq__",
            "the == of two versions, written inside __eq__ in Python",
        ),
        "fd_find_entry": (
            "frozendict:frozendict._lookup",
            "_lookup is the entry lookup every holder of tries has (Transient, Evolver)",
        ),
        "fd_flat_equal": ("flat:flat_equal", "the flat layer compares two flat versions' tuples"),
        "fd_diff_flat": ("flat:flat_diff", "as fd_flat_equal"),
        "fd_flat_entry": ("flat:flat_entry", "as fd_flat_equal"),
        "fd_flat_value_change": ("flat:_value_change", "flat_diff's step"),
        "fd_without_entries": (
            "frozendict:_flat_entries_but",
            "what a version keeps without the entries gone",
        ),
        "fd_diff_tries": ("frozendict:frozendict._diff", "the diff of two versions of this core"),
    },
}

# C functions with no Python twin, and why.
_GC = "the collector's slot: Python objects are traversed and cleared by the interpreter"
_ALLOC = "memory management: Python allocates and frees its lists and tuples itself"
_REFS = "reference counts and ownership by count: the pure core marks nodes with an owner token"
C_ONLY = {
    "hashing.c": {
        "hashing_is_pure": "hashing_pure_key_hash's recursion, which Python writes as one function with a depth",
        "hashing_unfinalize": "C keeps no accumulator beside the hash and recovers it; a pure version stores _acc",
        "hashing_check_cached": "as hashing_unfinalize: a pure _check compares _acc with the hash",
    },
    "keytrie.c": {
        "champ_editable": _REFS,
        "champ_child_owner": _REFS,
        "champ_alloc_raw": _ALLOC,
        "champ_bitmap_alloc_flags": _ALLOC,
        "champ_bitmap_alloc": _ALLOC,
        "champ_derive_alloc": _ALLOC,
        "champ_adopt": _REFS,
        "champ_empty_root": "the shared empty root: keytrie.EMPTY_ROOT, a constant",
        "champ_bitmap_copy": "a list slice in Python",
        "champ_with_child": "one level of the copies above an edit: keytrie._put_above walks them all",
        "champ_free": _ALLOC,
        "champ_find_path": "C records the path while locating; Python copies it in the walk (champ_set_copying)",
        "champ_remove_merge": "champ_remove_path's step per level, inline in Python",
        "champ_digit_pair": "the C build's radix sort by two digits: Python splits entries into lists",
        "champ_build_collision": "the C build's radix sort: Python's champ_build_bitmap does this inline",
        "champ_build_child": "as champ_build_collision",
        "champ_build_drop": _ALLOC,
        "champ_build_node": "as champ_build_collision",
        "champ_build_buckets": "as champ_digit_pair",
        "champ_build_wide": "as champ_digit_pair",
        "champ_build_partition": "as champ_digit_pair",
        "champ_build_root": "as champ_digit_pair",
        "champ_difflist_free": _ALLOC,
        "champ_difflist_append": "C's growable entry arrays: Python's lists",
        "champ_fail": "champ_check's error: an assert in Python",
        "champ_dump_line": "string building for champ_dump: Python's % formatting",
        "champ_pad": "as champ_dump_line",
        "champ_dump_entry": "as champ_dump_line",
    },
    "ordertrie.c": {
        "order_editable": _REFS,
        "order_covers": "the path-compressed walk's range test, inline in Python",
        "order_index": "a slot's popcount index, inline in Python",
        "order_units": _ALLOC,
        "order_item_needs_gc": _GC,
        "order_track_if": _GC,
        "order_is_tracked": _GC,
        "order_free_lists_clear": _ALLOC,
        "order_alloc_units": _ALLOC,
        "order_alloc": _ALLOC,
        "order_capacity": "room left in a C node: Python lists grow",
        "order_new_capacity": "as order_capacity",
        "order_leaf_copy": "a list slice in Python",
        "order_sizeof": "__sizeof__ of a C node: Python's lists report their own",
        "order_traverse": _GC,
        "order_dealloc": _ALLOC,
        "order_release": _ALLOC,
        "order_build_release": _ALLOC,
        "order_cursor_init": "the cursor of an in-order walk: Python's generators order_items, order_items_reversed",
        "order_cursor_init_at": "as order_cursor_init",
        "order_cursor_next": "as order_cursor_init",
        "order_fail": "order_check's error: an assert in Python",
        "order_dump_line": "string building for order_dump: Python's % formatting",
        "order_as_dict": "dict(order_items(...)) in Python",
    },
    "flat.c": {
        "flat_keys_new": _ALLOC,
        "flat_values_new": _ALLOC,
        "flat_parts_new": _ALLOC,
        "flat_release": _ALLOC,
        "flat_release_partial": _ALLOC,
        "flat_clear": _GC,
        "flat_version_new": "a flat version made from its parts: frozendict._from_parts, as for tries",
        "flat_copy_values": "a tuple is shared or sliced in Python",
        "flat_share_keys": "the C key block shared between versions: Python shares the hashes tuple",
        "flat_copy_items": "a tuple slice in Python",
        "flat_version_copy": "a copy into another type: frozendict._exact, as for tries",
        "flat_collect_entry": "a foreach callback: Python collects with champ_collect",
        "flat_sort_by_seq": "qsort in C: Python sorts by key",
        "flat_collect": "flat_demote's collection, inline in Python",
        "flat_entries_version": "flat_demote's version: Python returns the tuples for _from_parts",
        "flat_build_tries": "flat_promote's work, inline in Python",
        "flat_order": "flat_promote's order trie, inline in Python",
        "flat_from_kwnames": "C's vectorcall keywords: Python gets a dict (frozendict._flat_from_dict)",
        "flat_t_editable": _REFS,
        "flat_copy": "as flat_version_copy",
        "flat_t_own": _REFS,
        "flat_t_set_at": "an edit in place of a transient's flat items: Python makes new tuples (Transient._set_flat)",
        "flat_t_append": "as flat_t_set_at",
        "flat_t_remove_at": "as flat_t_set_at",
        "flat_t_same_items": "flat_same_items, which takes a transient's flat tuples too in Python",
        "flat_from_entries": "a version from entries: frozendict._from_entries, which makes either form",
    },
    "transient.c": {
        "transient_init_from": "the pure core's builders start from trie_parts, a flat version's in flat mode",
        "transient_clear": _ALLOC,
        "transient_traverse": _GC,
        "transient_write_new": "the tries' edit of transient_put_new, inline in Transient._put_new",
        "transient_flat_unchanged": "C's no-op test on the flat items it edits in place; Python compares tuples",
        "transient_remove_at": "Transient._remove_entry's flat branch (a position is the flat entry's seq)",
        "transient_shared_get": "holds the roots while __eq__ runs: Python's references keep them alive",
        "transient_entries_free": _ALLOC,
    },
    "derive.c": {
        "derive_take": "a one-shot transient's roots handed to the version without increfs: nothing to hand over in Python",
    },
    "reads.c": {
        "position_tries": "a table version's positions read through its twin: trie_parts in Python",
        "position_at_tries": "as position_tries",
        "mapping_order": "the order trie to walk (a flat version's built): Python walks the items tuple itself",
        "mapping_collect_entry": "a foreach callback: Python collects with champ_collect",
        "mapping_walk_next": "mapping_equal's step of a cursor: a generator in Python",
        "mapping_get_or": "the other operand's get, inline in Python's mapping_equal",
        "position_index": "PyNumber_AsSsize_t and the bounds test: inline in Python's position_at",
        "position_slice_load": "position_slice's fill of a builder, inline in Python",
    },
    "merge.c": {
        "merge_sequence_error": "replaces the error being raised: Python raises merge_sequence_exc from None",
        "merge_stored_hash_is_pure": "C reads a dict's stored hashes; Python's dict keeps them to itself",
        "merge_items_iter": "the pairs of an items() iterator, inline in Python's merge_items_of",
        "merge_pair": "merge_pairs's step per element, inline in Python",
        "merge_kwargs": "C's keywords dict or vectorcall names: Python gets a dict, merged as one operand",
    },
    "views.c": {
        "view_of": "a C cast to the view's struct",
        "view_iter_of": "a C cast to the iterator's struct",
        "view_iter_select": "an itemgetter in Python (the iterator's select)",
        "view_iter_stale": "the size check of a C iterator: an Evolver's _Snapshot in Python",
        "view_iter_flat_next": "a flat version's step: Python iterates the items tuple",
        "view_iter_tp_traverse": _GC,
        "view_iter_tp_clear": _GC,
        "view_iter_tp_dealloc": _ALLOC,
        "view_new": "a view's constructor: the view classes' own",
        "view_kind": "which view a C object is: a Python view is its class",
        "view_tp_traverse": _GC,
        "view_tp_dealloc": _ALLOC,
        "view_set_op": "the views' set operations: Python's views take them from _viewsets.ViewSetOps",
        "view_is_setlike": "as view_set_op",
        "view_tp_richcompare": "as view_set_op (and collections.abc's views)",
        "view_py_isdisjoint": "as view_set_op",
        "view_py_from_iterable": "as view_set_op",
    },
    "paths.c": {
        "path_maps_init": _ALLOC,
        "path_maps_free": _ALLOC,
    },
    "table.c": {
        "table_version_share": (
            "a copy of the dict for a new holder: each dict has one holder, whose traverse"
            " visits its items (a Python dict needs no traverse: the pure core shares it)"
        ),
        "table_twin_if_built": "the twin read atomically when free-threaded: Python reads the slot",
        "table_traverse": _GC,
        "table_walk_next": "a dict's walk by position: Python iterates dict.items()",
    },
    "evolver.c": {
        "evolver_same_tries": "freeze()'s check that edits cancelled out, inside Evolver.freeze in Python",
        "evolver_lock": "the edit lock across threads: Python's edit guard (_begin, _end) under the GIL",
        "evolver_unlock": "as evolver_lock",
        "evolver_forget_frozen": "the cached freeze() released last, inline in Python's _end",
        "evolver_finish": "the end of an edit, inline in Python's _end",
        "evolver_init_fields": "a C object's fields: Python's __init__",
        "evolver_new_from": "evolve()'s Evolver, made by its constructor in Python",
        "evolver_tp_traverse": _GC,
        "evolver_tp_clear": _GC,
        "evolver_tp_dealloc": _ALLOC,
        "evolver_as_dict": "dict(self._items()) in Python",
        "evolver_setitem_locked": "__setitem__'s edit, inline in Python",
        "evolver_popitem_hint": "popitem's hash of the last key, inline in Python",
        "evolver_call_on_frozen": "calls a frozendict method on a freeze(): Python calls it directly",
    },
    "frozendict.c": {
        "fd_new_impl": "the constructor's body shared by tp_new and vectorcall: Python's __new__",
        "fd_tp_vectorcall": "C's fast calling convention",
        "fd_tp_traverse": _GC,
        "fd_tp_clear": _GC,
        "fd_tp_dealloc": _ALLOC,
        "fd_find": "the value lookup, inline in Python's __getitem__ and get",
        "fd_eq": "__eq__'s body for two frozendicts: Python's __eq__ calls mapping_equal",
        "fd_hash_entry": "a foreach callback: Python's __hash__ loops over the items",
        "fd_order_snapshot": "the order trie to walk (a flat version's built): Python walks the items tuple",
        "fd_as_dict": "dict(self._items()) in Python",
        "fd_cold": "imports frozenmap._cold on first use: Python imports it",
        "fd_reconstruct": "copy's reconstruction: Python calls _cold.reconstruct directly",
        "fd_or_foreign": "| with UserDict and defaultdict: Python calls _cold.or_foreign directly",
        "fd_or_impl": "__or__'s body: Python's __or__",
        "fd_or_merge": "as fd_or_impl",
        "fd_ror_impl": "__ror__'s body: Python's __ror__",
        "fd_left_state": "which operand of a binary slot is ours: Python has __or__ and __ror__",
        "fd_iter_or_notimpl": "iter() or NotImplemented, inline in Python",
        "fd_keys_walk": "- and & on the walk path, inline in Python's __sub__ and __and__",
        "fd_minus_entries": "as fd_keys_walk",
        "fd_and_found": "as fd_keys_walk",
        "fd_flat_same_key": "flat_diff's step, inline in Python",
        "fd_flat_keys_at_hash": "as fd_flat_same_key",
        "fd_diff_generic": "diff against another mapping: Python calls _cold.generic_diff directly",
        "fd_check_entry": "a foreach callback of _check: Python loops",
    },
    "module.c": {
        "fm_state_of_module": "C's module state: the pure core's state is its modules' globals",
        "fm_find_state": "as fm_state_of_module",
        "fm_state_of_type": "as fm_state_of_module",
        "fm_tp_name_tail": "a type's name from tp_name: frozenmap._typeinfo.type_name, shared",
        "fm_getattr_optional": "getattr with a default, in Python",
        "fm_type_fullname": "frozenmap._typeinfo.type_fullname, shared by both cores",
        "fm_type_lookup": "frozenmap._typeinfo.type_lookup, shared by both cores",
        "fm_set_key_error": "raise KeyError(key) in Python",
        "fm_lookup_special": "frozenmap._typeinfo.lookup_special, shared by both cores",
        "fm_traverse": _GC,
        "fm_clear": _GC,
        "fm_free": _ALLOC,
        "fm_add_type": "C's type objects: Python's classes, registered by the package (__init__)",
        "fm_import_attr": "an import in Python",
        "fm_register": "as fm_add_type",
        "fm_exec": "C's module initialisation: the package's imports",
        "fm_wrong_call": "a wrong call's TypeError: Python words it for a Python function",
        "fm_wrong_call_tuple": "as fm_wrong_call",
    },
}

# Python functions and methods with no C twin, and why.
_INDEX = "the pure key trie's digit index (bytes): C tests the bitmaps"
_ONE_WALK = "the one-walk copy of a published version's path: C records the path, then copies it"
_PROTOCOL = "the read protocol every holder of tries has in Python (frozendict, Evolver, Transient)"
_PATHS_METHOD = "C's method table points at paths.c's path_py_* directly"
PY_ONLY = {
    "hashing": {
        "unhashable": "the TypeError of an unhashable key, worded as dict's: C raises it inside hashing_key_hash",
        "_hash_slot": "a type's __hash__ as the interpreter finds it: C reads tp_hash",
        "_signed": "PyPy's machine-word hashes (the PyPy branch)",
        "register_cached_hash": "how hashing_is_stable recognises a frozendict's cached hash without importing it",
    },
    "keytrie": {
        "_with": _INDEX,
        "_with2": _INDEX,
        "_pair_index": _INDEX,
        "_index_of": _INDEX,
        "_split": "a node's entries and children as two lists, for the cold walks",
        "_walk_below": "champ_find's levels past the four written out",
        "_collision_find": "champ_find's end at a collision node",
        "_slot_of": "the position of an entry in a collision node (a list)",
        "_descend": "the walk that records the path for champ_put and champ_remove",
        "_put_above": "the copies above an edit, all levels (C: champ_with_child per level)",
        "_copy_path": "as _put_above, with no owner",
        "champ_set_copying": _ONE_WALK,
        "champ_delete_copying": _ONE_WALK,
        "champ_build_items": "a build from the hash and item columns (a flat map's promotion, a fresh builder)",
        "_index_of_key": "_collision_equal's search by identity",
        "_collision_equal": "champ_equal of two collision nodes (a list each)",
        "_diff_inline_entries": "champ_diff's step over two nodes' inline entries, one per layout",
        "_check_layout": "champ_check's test of a node's layout, one per layout",
    },
    "champ": {
        "champ_set_general": "the general way champ_set_copying hands its rare shapes to",
        "champ_delete_general": "as champ_set_general, for champ_delete_copying",
    },
    "ordertrie": {
        "_width": "the bits a node at a shift reads, inline in C",
        "_size": "a node's item count (an inner node's last field), inline in C",
        "_grow": "the sizes along an owned path, inline in C",
        "order_size": "a trie's item count, inline in C",
        "order_insert_copying": "the one-walk copy of a published version's path (order_insert with no owner)",
        "order_replace_copying": "as order_insert_copying",
        "order_remove_copying": "as order_insert_copying",
        "order_items": "the in-order walk as a generator (C: order_cursor_*)",
        "order_items_reversed": "as order_items",
    },
    "flat": {
        "_flat_find_scan": "flat_find on CPython: C scans the stored hashes inline (fm_flat_next_hash)",
        "_flat_find_loop": "flat_find on PyPy",
        "flat_find_after": "the rest of a scan after a colliding hash",
        "flat_index": "the index of a flat version read often (frozendict._indexed_find): C's scan is fast enough",
        "flat_entries": "a flat version's entries, positions for seqs (C reads the arrays in place)",
    },
    "transient": {
        "entries_of": "a version's entries as a list (C walks the trie with champ_foreach)",
        "_GCPaused.__init__": "the pause's context manager (C: transient_gc_pause and _resume)",
        "Transient._adopt": "a version's tries taken by an empty transient in O(1): C adopts by reference counts",
        "Transient._items": _PROTOCOL,
        "Transient._items_reversed": _PROTOCOL,
        "Transient._seal": "a fresh owner token (C's transients own by reference count)",
        "Transient._set_flat": "installs new flat tuples at once (C edits its flat items in place)",
    },
    "derive": {
        "derive_trie_without": "derive_without's end on tries, a helper of the two callers",
    },
    "table": {
        "table_register": "the frozendict class's slot setter, registered at its import (C writes the field)",
        "table_find": "cfrozenmap.h's inline table_find, in every lookup of a table",
    },
    "reads": {
        "mapping_form_of": "cfrozenmap.h's inline fm_form_of, which every C file reads",
        "register_types": "the classes of the layers above, registered at their import (C: the module state)",
        "frozendict_type": "as register_types",
        "_foreign_frozendict_types": "the other core's and the builtin frozendict, from _registry",
        "_slice_bound": "a slice bound read as PySlice_Unpack reads it (C calls PySlice_Unpack)",
    },
    "merge": {
        "_dict_sequence_error": "the running interpreter's words for dict([None]), read once",
    },
    "views": {
        "call_error": "the TypeError of a view method called with arguments, as C's argument parsing words it",
        "_bad_call": "as call_error",
        "method_named": "a shared function's copy named for a class (C names its methods in tables)",
        "frozendict_iterator.__iter__": "an iterator's __iter__ (C: PyObject_SelfIter)",
        "frozendict_values.__repr__": "one __repr__ per view class (C: view_tp_repr)",
        "frozendict_items.__repr__": "as frozendict_values.__repr__",
    },
    "paths": {
        "_is": "the type test as C makes it (not isinstance)",
        "_get": "a map's value by its own lookup (C: mapping_get)",
    },
    "evolver": {
        "_stored_len": "a frozendict's length after the collector cleared it (C's cleared one is empty)",
        "_Snapshot.__init__": "an Evolver's iteration with dict's size check (C: view_iter_stale)",
        "_Snapshot.__iter__": "as _Snapshot.__init__",
        "_Snapshot.__next__": "as _Snapshot.__init__",
        "_Snapshot._rewound": "as _Snapshot.__init__",
        "Evolver._lookup": _PROTOCOL,
        "Evolver._items": _PROTOCOL,
        "Evolver._items_reversed": _PROTOCOL,
        "Evolver._flat_popitem": "popitem's flat branch",
        "Evolver.get_in": _PATHS_METHOD,
        "Evolver.set_in": _PATHS_METHOD,
        "Evolver.update_in": _PATHS_METHOD,
        "Evolver.delete_in": _PATHS_METHOD,
    },
    "frozendict": {
        "_signature_of": "inspect's signature, for a method taking *args",
        "frozendict.__class_getitem__": "C's table holds CPython's Py_GenericAlias (METH_O)",
        "_no_dict_suffix": "the interpreter's words for a missing __dict__, read once",
        "_hash_recursion_error": "RecursionError's words when hashing a self-containing value",
        "_first_seq_of": "a sort key (C sorts with transient_compare_seq)",
        "_indexed_find": "flat_find through a flat version's index (flat_index)",
        "frozendict.__setattr__": "refuses the slots from outside: C's members are read-only",
        "frozendict.__delattr__": "as __setattr__",
        "frozendict._items": _PROTOCOL,
        "frozendict._items_reversed": _PROTOCOL,
        "frozendict._transient": "a builder of this version (C: transient_init_from)",
        "frozendict.get_in": _PATHS_METHOD,
        "frozendict.set_in": _PATHS_METHOD,
        "frozendict.update_in": _PATHS_METHOD,
        "frozendict.delete_in": _PATHS_METHOD,
    },
}


# --- reading the sources -------------------------------------------------------------


def c_functions(name):
    """The functions defined in a C file, in order."""
    text = re.sub(r"/\*.*?\*/", "", (CCORE / name).read_text(), flags=re.S)
    found = re.findall(r"^([a-z][a-z_0-9]*)\s*\(", text, flags=re.M)
    return [f for f in dict.fromkeys(found) if f not in ("if", "while", "for", "switch", "return")]


def _module_statements(statements):
    """Module-level statements, through ``if``/``try`` blocks (a function may
    be defined once per interpreter: ``hashing``)."""
    for node in statements:
        if isinstance(node, ast.If):
            yield from _module_statements(node.body)
            yield from _module_statements(node.orelse)
        elif isinstance(node, ast.Try):
            for block in [node.body, node.orelse, node.finalbody] + [h.body for h in node.handlers]:
                yield from _module_statements(block)
        else:
            yield node


def py_definitions(module):
    """(functions, {class: methods}) of a pure module."""
    tree = ast.parse((PYCORE / (module + ".py")).read_text())
    functions, classes = set(), {}
    for node in _module_statements(tree.body):
        if isinstance(node, ast.FunctionDef):
            functions.add(node.name)
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = {sub.name for sub in node.body if isinstance(sub, ast.FunctionDef)}
    return functions, classes


def _class_of(c_name):
    """(prefix, class, rest) for a C name in a type's file, by the longest prefix."""
    for prefix in sorted(TYPES, key=len, reverse=True):
        if c_name.startswith(prefix + "_"):
            return prefix, TYPES[prefix], c_name[len(prefix) + 1 :]
    return None, None, None


def twin_of(c_file, c_name, functions, classes):
    """The Python twin of a C function by the rule ("module.function" or
    "Class.method"), or None."""
    modules_functions = functions  # {name: module}
    if c_name in modules_functions:  # rule 1
        return c_name
    marker = re.match(r"^(.*?)_(py|tp)_(.*)$", c_name)
    if marker:  # rule 2
        dropped = marker.group(1) + "_" + marker.group(3)
        if dropped in modules_functions:
            return dropped
    if c_file in TYPE_FILES:  # rule 3
        prefix, cls, rest = _class_of(c_name)
        methods = classes.get(cls, set())
        if rest is not None and rest.startswith("py_"):
            name = rest[3:]
            wanted = (
                ["__%s__" % name[7:]]
                if name.startswith("dunder_")
                else [name, "_" + name, "__%s__" % name]
            )
            for method in wanted:
                if method in methods:
                    return "%s.%s" % (cls, method)
            return None
        if rest is not None and rest.startswith("tp_"):
            for method in SLOTS.get(rest[3:], ()):
                if method in methods:
                    return "%s.%s" % (cls, method)
            return None
        if rest is not None:
            if "_" + rest in methods:
                return "%s._%s" % (cls, rest)
            if "_" + rest in modules_functions:
                return "_" + rest
    if c_file == "transient.c" and c_name.startswith("transient_"):  # rule 4
        method = "_" + c_name[len("transient_") :]
        if method in classes.get("Transient", set()):
            return "Transient." + method
    return None


def _python_side(c_file):
    functions, classes = {}, {}
    for module in TWINS[c_file]:
        fs, cs = py_definitions(module)
        functions.update(dict.fromkeys(fs, module))
        for cls, methods in cs.items():
            classes.setdefault(cls, set()).update(methods)
    return functions, classes


def _qualified(c_file, twin, functions, classes):
    """A twin found by the rule as "module:qualname"."""
    if "." in twin:
        cls = twin.split(".")[0]
        for module in TWINS[c_file]:
            if cls in py_definitions(module)[1]:
                return "%s:%s" % (module, twin)
    return "%s:%s" % (functions[twin], twin)


def pairing(c_file):
    """{C function: its twin as "module:qualname", or None}."""
    functions, classes = _python_side(c_file)
    elsewhere = TWINS_ELSEWHERE.get(c_file, {})
    twins = {}
    for name in c_functions(c_file):
        if name in elsewhere:
            twins[name] = elsewhere[name][0]
            continue
        twin = twin_of(c_file, name, functions, classes)
        twins[name] = _qualified(c_file, twin, functions, classes) if twin else None
    return twins


def claimed():
    """Every Python definition some C function claims, as "module:qualname"
    (a slot's sibling dunders too: __ne__ beside __eq__, __ror__ beside __or__)."""
    found = set()
    for c_file in TWINS:
        for c_name, twin in pairing(c_file).items():
            if twin is None:
                continue
            found.add(twin)
            prefix, cls, rest = _class_of(c_name) if c_file in TYPE_FILES else (None, None, None)
            if rest and rest.startswith("tp_"):
                module = twin.split(":")[0]
                found |= {"%s:%s.%s" % (module, cls, m) for m in SLOTS.get(rest[3:], ())}
    return found


def python_definitions(module):
    functions, classes = py_definitions(module)
    return set(functions) | {"%s.%s" % (c, m) for c, ms in classes.items() for m in ms}


def report():
    """Per file pair: C functions, twins by the rule, twins listed elsewhere, their share."""
    lines = []
    for c_file in TWINS:
        twins = pairing(c_file)
        n = len(twins)
        listed = len(TWINS_ELSEWHERE.get(c_file, {}))
        paired = sum(1 for t in twins.values() if t) - listed
        lines.append(
            "%-13s %3d C functions, %3d twins by the rule + %2d listed (%3.0f%%), %3d C-only"
            % (c_file, n, paired, listed, 100 * (paired + listed) / n, len(C_ONLY.get(c_file, {})))
        )
    return "\n".join(lines)


# --- the tests -----------------------------------------------------------------------


def test_every_c_file_has_its_twin_modules():
    assert set(TWINS) | set(ACCELERATORS) == {path.name for path in CCORE.glob("*.c")}
    assert not set(TWINS) & set(ACCELERATORS)
    for module in ACCELERATORS.values():
        assert (PACKAGE / (module + ".py")).is_file(), module
    for modules in TWINS.values():
        for module in modules:
            assert (PYCORE / (module + ".py")).is_file(), module


@pytest.mark.parametrize("c_file", sorted(TWINS))
def test_every_c_function_has_its_twin_or_a_reason(c_file):
    twins = pairing(c_file)
    only = C_ONLY.get(c_file, {})
    missing = sorted(name for name, twin in twins.items() if twin is None and name not in only)
    assert not missing, "%s: no Python twin by the rule, and not listed in C_ONLY: %s" % (
        c_file,
        missing,
    )
    stale = sorted(name for name in only if name not in twins or twins[name] is not None)
    assert not stale, "%s: listed in C_ONLY but gone or twinned: %s" % (c_file, stale)
    for name, (twin, _) in TWINS_ELSEWHERE.get(c_file, {}).items():
        module, qualname = twin.split(":")
        assert name in twins, "%s: %s is listed in TWINS_ELSEWHERE but gone" % (c_file, name)
        assert qualname in python_definitions(module), "%s's twin %s is gone" % (name, twin)


@pytest.mark.parametrize("module", sorted({m for ms in TWINS.values() for m in ms}))
def test_every_python_function_is_a_twin_or_has_a_reason(module):
    unclaimed = {
        name for name in python_definitions(module) if "%s:%s" % (module, name) not in CLAIMED
    }
    only = set(PY_ONLY.get(module, {}))
    missing = sorted(unclaimed - only)
    assert not missing, "%s.py: no C function by the rule, and not listed in PY_ONLY: %s" % (
        module,
        missing,
    )
    stale = sorted(only - unclaimed)
    assert not stale, "%s.py: listed in PY_ONLY but twinned or gone: %s" % (module, stale)


def test_the_pypy_layout_uses_the_cpython_layouts_names():
    # keytrie_pypy (Python only: the C core has one layout) defines, under
    # keytrie's names, what it does in its own layout; its own helpers are
    # those of its build from columns.
    own = {"_build_columns", "_build_few", "_column_child"}
    pypy = python_definitions("keytrie_pypy")
    assert own <= pypy
    assert pypy - own <= python_definitions("keytrie")


def test_every_reason_is_given():
    for table in (C_ONLY, PY_ONLY):
        for names in table.values():
            for name, why in names.items():
                assert isinstance(why, str) and len(why) > 10, name
    for names in TWINS_ELSEWHERE.values():
        for name, (twin, why) in names.items():
            assert ":" in twin and len(why) > 10, name


CLAIMED = claimed()


if __name__ == "__main__":  # pragma: no cover
    print(report())
