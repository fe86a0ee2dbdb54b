#!/usr/bin/env python3
"""Hand-made mutants of the pure core: which plausible slips does the suite catch?

Each mutant below is one textual change to the pure core (or to the Python
modules both cores share: ``_diff``, ``_viewsets``, ``_cold``, ``_interop``,
and the modules above the cores: ``_freeze``, ``history``, ``jsonpatch``,
``versioned``) that a careful person could plausibly make: an off-by-one in a
one-walk copy, a comparison dropped or turned around, a restore forgotten on a
failure path, equality where identity is meant, a subclass instance returned
where an exact ``frozendict`` is due, an import that closes a cycle.  The
script applies them one at a time to a temporary copy of the package and of
``tests/``, runs a few targeted test files on the pure core
(``FROZENMAP_PURE_PYTHON=1``, ``FROZENMAP_TEST_CORES=python``, ``-x``, a
timeout) and reports which mutants the tests kill and which survive.

    python scripts/mutants.py                      # every mutant, its targeted tests
    python scripts/mutants.py --exclude test_rules.py   # as the suite was without it
    python scripts/mutants.py --only find-no-hash-check bytes-path
    python scripts/mutants.py --wide               # survivors again, on a wider set
    python scripts/mutants.py --list               # the mutants, applied to nothing

Run it with the venv's Python (pytest and hypothesis installed; the package
itself is imported from the temporary copy).  Mutants run one after another
(niced), so it stays within a shared 2-core machine: about 15-30 s each.
A mutant the tests kill is expected; a survivor is either a missing test or an
equivalent mutant (a change that cannot alter behaviour; ``equivalent=``
says why for the few kept on purpose).

Each mutant's text must occur exactly once in its file:
``tests/test_mutants_apply.py`` checks that in the suite, so a refactor that
makes a mutant stale fails there.  Re-target a stale mutant at the same slip
in the new code (same name and kind); drop it only if the slip cannot be made
any more, and say why in the commit message.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent

FILES = {
    "hashing": "frozenmap/_pycore/hashing.py",
    "keytrie": "frozenmap/_pycore/keytrie.py",
    "keytrie_pypy": "frozenmap/_pycore/keytrie_pypy.py",
    "champ": "frozenmap/_pycore/champ.py",
    "ordertrie": "frozenmap/_pycore/ordertrie.py",
    "transient": "frozenmap/_pycore/transient.py",
    "reads": "frozenmap/_pycore/reads.py",
    "merge": "frozenmap/_pycore/merge.py",
    "evolver": "frozenmap/_pycore/evolver.py",
    "frozendict": "frozenmap/_pycore/frozendict.py",
    "derive": "frozenmap/_pycore/derive.py",
    "views": "frozenmap/_pycore/views.py",
    "paths": "frozenmap/_pycore/paths.py",
    "freeze": "frozenmap/_freeze.py",
    "diff": "frozenmap/_diff.py",
    "viewsets": "frozenmap/_viewsets.py",
    "cold": "frozenmap/_cold.py",
    "interop": "frozenmap/_interop.py",
    "flat": "frozenmap/_pycore/flat.py",
    "table": "frozenmap/_pycore/table.py",
    "jsonpatch": "frozenmap/jsonpatch.py",
    "history": "frozenmap/history.py",
    "versioned": "frozenmap/versioned.py",
}

# The builder's layer and the two above it (reads, merge) split from it.
_BUILDER_TESTS = [
    "test_rules.py",
    "test_evolver.py",
    "test_derivations.py",
    "test_pep814_construction.py",
    "hostile/test_reentry_sweep.py",
    "hostile/test_gc_and_finalizers.py",
    "test_rules_in_tries.py",
]

# The test files run against a mutant of each module: the quick ones that
# exercise it (seconds each).  A rule tested only in a file left out here
# shows as a survivor: --wide runs survivors again on almost every file.
TESTS = {
    "hashing": [
        "test_rules.py",
        "test_derivations.py",
        "test_pep814_objects.py",
        "test_pep814_construction.py",
        "hostile/test_raising_hash_and_eq.py",
        "hostile/test_bad_arguments.py",
        "hostile/test_colliding_and_equal_keys.py",
    ],
    "keytrie": [
        "test_rules.py",
        "test_structure.py",
        "test_derivations.py",
        "test_noop_identity.py",
        "test_pep814_read.py",
        "test_diff.py",
        "test_evolver.py",
        "test_rules_in_tries.py",
    ],
    "champ": [
        "test_rules.py",
        "test_structure.py",
        "test_derivations.py",
        "test_noop_identity.py",
        "test_pep814_read.py",
        "test_diff.py",
        "test_evolver.py",
        "test_rules_in_tries.py",
    ],
    "keytrie_pypy": ["test_keytrie_nx_layout.py"],
    "ordertrie": ["test_rules.py", "test_structure.py", "test_derivations.py", "test_evolver.py"],
    "transient": _BUILDER_TESTS,
    "reads": _BUILDER_TESTS,
    "merge": _BUILDER_TESTS + ["test_merge_sharing.py"],
    "evolver": [
        "test_rules.py",
        "test_evolver.py",
        "test_noop_identity.py",
        "test_freeze_inside_a_failed_update.py",
        "hostile/test_reentry_sweep.py",
        "hostile/test_gc_and_finalizers.py",
    ],
    "frozendict": [
        "test_rules.py",
        "test_derivations.py",
        "test_noop_identity.py",
        "test_pep814_ops.py",
        "test_pep814_objects.py",
        "test_diff.py",
        "test_rules_in_tries.py",
    ],
    "derive": [
        "test_rules.py",
        "test_derivations.py",
        "test_noop_identity.py",
        "test_pep814_ops.py",
        "test_paths.py",
        "test_rules_in_tries.py",
    ],
    "views": ["test_rules.py", "test_pep814_read.py", "test_view_setops.py", "test_evolver.py"],
    "paths": ["test_rules.py", "test_paths.py"],
    "freeze": ["test_rules.py", "test_freeze.py"],
    "diff": ["test_rules.py", "test_patches.py", "test_diff.py"],
    "viewsets": ["test_rules.py", "test_view_setops.py"],
    "cold": ["test_rules.py", "test_pep814_objects.py", "test_diff.py"],
    "interop": ["test_rules.py", "test_serializers.py", "test_pprint.py"],
    # the user calls themselves (counted; both cores' transcripts compared)
    "user calls": ["test_derivations.py", "test_transcripts.py"],
    "flat": [
        "test_flat_maps.py",
        "test_flat_lookup_collisions.py",
        "test_flat_maps_pure.py",
        "test_rules.py",
        "test_derivations.py",
        "test_evolver.py",
        "test_pep814_read.py",
    ],
    "table": [
        "test_table_form.py",
        "hostile/test_table_form.py",
        "test_cleared_and_borrowed.py",
        "test_rules.py",
        "test_derivations.py",
    ],
    "jsonpatch": [
        "test_jsonpatch.py",
        "test_jsonpatch_object_equality.py",
        "test_jsonpatch_array_shrink.py",
        "test_jsonpatch_keys.py",
        "test_jsonpatch_indexes.py",
        "test_jsonpatch_lengths.py",
    ],
    "history": ["test_history.py"],
    "versioned": ["test_versioned.py", "test_versioned_delivery.py"],
}

# --wide: what a survivor is run against a second time (everything but the
# long sweeps, the packaging build and the scale tests).
WIDE_EXCLUDED = {
    "hostile/test_raising_at_every_user_call.py",
    "hostile/test_colliding_and_equal_keys.py",
    "test_differential.py",
    "hostile/test_allocation_failure.py",
    "test_packaging.py",
    "test_bench_report.py",
    "test_scale.py",
    "test_threads.py",
}


@dataclass
class Mutant:
    name: str
    module: str  # a key of FILES
    old: str
    new: str
    kind: str  # the class of slip, for the summary
    tests: Optional[List[str]] = None  # instead of TESTS[module]
    equivalent: str = ""  # why it cannot change behaviour (kept as a control)
    extra: List[str] = field(default_factory=list)  # added to the module's tests


M = Mutant

# The table, one mutant per entry (kept compact: ruff format would give each
# argument a line of its own).
# fmt: off
MUTANTS: List[Mutant] = [
    # --- hashing: the accumulator and key hashes -------------------------------------
    M("acc-memoryerror-swallowed", "hashing",
      "    except MemoryError:\n        raise\n    except Exception:",
      "    except Exception:", "cold paths"),
    M("acc-baseexception-swallowed", "hashing",
      "    except Exception:\n        return None", "    except BaseException:\n        return None",
      "cold paths"),
    M("acc-ordinary-error-fails-edit", "hashing",
      "    except Exception:\n        return None", "    except Exception:\n        raise",
      "cold paths"),
    M("unhashable-rewords-subclass", "hashing",
      "if type(exc) is not TypeError:", "if not isinstance(exc, TypeError):", "interop"),
    M("pure-hash-subclass-iter", "hashing",
      "for item in tuple.__iter__(key):", "for item in key:", "cold paths"),
    M("finalize-length-off-by-one", "hashing",
      "h = acc ^ (((length + 1) * 1927868237) & MASK)", "h = acc ^ ((length * 1927868237) & MASK)",
      "off-by-one"),
    # --- keytrie: lookups ---------------------------------------------------------------
    M("find-no-hash-check", "keytrie",
      "        if entry[0] == h:\n            k = entry[2]", "        if True:\n            k = entry[2]",
      "hash before eq"),
    M("find-no-identity", "keytrie",
      "        if entry[0] == h:\n            k = entry[2]\n            if k is key or k == key:",
      "        if entry[0] == h:\n            k = entry[2]\n            if k == key:",
      "identity vs equality"),
    M("collision-find-no-hash-check", "keytrie",
      "    if node[4][0] == h:", "    if True:", "hash before eq"),
    M("find-stored-any-key", "keytrie",
      "return entry if entry[2] is key and entry[1] == seq else None", "return entry",
      "identity vs equality"),
    # --- keytrie: the one-walk copies ----------------------------------------------------
    M("set-copying-no-hash-check", "keytrie",
      "    if old[0] == h:\n        k = old[2]", "    if True:\n        k = old[2]", "hash before eq"),
    M("set-copying-noop-by-equality", "keytrie",
      "            if old[3] is value:\n                return None, old",
      "            if old[3] == value:\n                return None, old",
      "identity vs equality"),
    M("set-copying-new-key-object", "keytrie",
      "new[i] = (h, old[1], k, value)", "new[i] = (h, old[1], key, value)", "one-walk copies"),
    M("set-copying-new-seq", "keytrie",
      "new[i] = (h, old[1], k, value)", "new[i] = (h, seq, k, value)", "one-walk copies"),
    M("set-copying-insert-index", "keytrie",
      "        new[3] = _with(new[3].translate(_UP[i]), ENTRY + d, i)\n        return top, None",
      "        new[3] = _with(new[3].translate(_UP[i + 1]), ENTRY + d, i)\n        return top, None",
      "off-by-one"),
    M("set-copying-split-index", "keytrie",
      "new[3] = _with(new[3].translate(_DEL[i]).translate(_UP[c]), d, c)",
      "new[3] = _with(new[3].translate(_DOWN[i]).translate(_UP[c]), d, c)", "off-by-one"),
    M("set-copying-split-shift", "keytrie",
      "child = champ_pair_subtree(old, (h, seq, key, value), shift + BITS, None)",
      "child = champ_pair_subtree(old, (h, seq, key, value), shift, None)", "off-by-one"),
    M("set-copying-owner-kept", "keytrie",
      "    top = new = root[:]\n    new[2] = None\n    hh = h\n    shift = 0",
      "    top = new = root[:]\n    hh = h\n    shift = 0", "one-walk copies",
      equivalent="a published root holds only retired owner tokens (publishing seals)"),
    M("delete-copying-no-hash-check", "keytrie",
      "    if old[0] != h:\n        return None", "    if False:\n        return None",
      "hash before eq"),
    M("delete-copying-lone-collision-stays", "keytrie",
      "        if type(new[4]) is CollisionNode:\n            return None, old  # it moves up",
      "        if False:\n            return None, old  # it moves up",
      "canonical shape"),
    M("delete-copying-parent-single-stays", "keytrie",
      "    if len(up) == 5 and not up[1] and up is not top:",
      "    if False:", "canonical shape"),
    M("delete-copying-inline-index", "keytrie",
      "up[3] = _with(up[3].translate(_DEL[up_j]).translate(_UP[e]), ENTRY + up_d, e)",
      "up[3] = _with(up[3].translate(_DEL[up_j + 1]).translate(_UP[e]), ENTRY + up_d, e)",
      "off-by-one"),
    M("delete-copying-collision-missing", "keytrie",
      "            return None, None  # a collision node: the general way",
      "            return None  # a collision node: the general way", "one-walk copies"),
    M("delete-copying-no-identity", "keytrie",
      "    k = old[2]\n    if not (k is key or k == key):\n        return None",
      "    k = old[2]\n    if not k == key:\n        return None", "identity vs equality"),
    # --- keytrie: the general edits -----------------------------------------------------
    M("remove-lone-collision-stays", "keytrie",
      "                new = new[4]  # a lone collision node moves up",
      "                pass  # a lone collision node moves up", "canonical shape"),
    M("remove-collision-chain-stays", "keytrie",
      "        if k and type(new) is CollisionNode and not parent[0] and len(parent) == 5:",
      "        if False:", "canonical shape"),
    M("remove-inplace-below-root", "keytrie",
      "            if k == 0 and owner is not None and parent[2] is owner:",
      "            if owner is not None and parent[2] is owner:", "transient"),
    M("put-edits-unowned-node", "keytrie",
      "            if owner is not None and node[2] is owner:\n                node.insert(i, entry)",
      "            if node[2] is owner:\n                node.insert(i, entry)", "transient",
      equivalent="owner None reaches champ_put only from champ_set_general: a collision node"),
    M("collision-put-edits-unowned", "keytrie",
      "    if owner is not None and node[OWNER] is owner:\n        new = node",
      "    if node[OWNER] is owner:\n        new = node", "transient"),
    M("collision-remove-in-place", "keytrie",
      "    return champ_collision_alloc(owner, node[FIRST:i] + node[i + 1 :])",
      "    del node[i]\n    return node", "transient"),
    # --- keytrie: equality, diff, identity -----------------------------------------------
    M("same-pair-no-hash-check", "keytrie",
      "if a[0] != b[0] or not (ka is kb or ka == kb):", "if not (ka is kb or ka == kb):",
      "hash before eq"),
    M("same-pair-no-identity", "keytrie",
      "    return va is vb or bool(va == vb)", "    return bool(va == vb)", "identity vs equality"),
    M("diff-lists-no-identity", "keytrie",
      "        if va is not vb and (by_identity or va != vb):",
      "        if va is not vb if by_identity else va != vb:", "identity vs equality"),
    M("diff-child-index", "champ",
      "                a[-1 - (a_nodes & (bit - 1)).bit_count()],",
      "                a[-(a_nodes & (bit - 1)).bit_count()],", "off-by-one"),
    M("identical-ignores-seq", "keytrie",
      " or ea[3] is not eb[3] or ea[1] != eb[1]):", " or ea[3] is not eb[3]):", "transient"),
    M("collision-equal-no-value-check", "keytrie",
      "        if not champ_same_pair(entry, match):\n            return False\n        j += 1",
      "        j += 1", "diff/patches"),
    # --- ordertrie ------------------------------------------------------------------------
    M("order-insert-copying-owner-kept", "ordertrie",
      "        child = child[:]\n        child[3] = None\n        new[i] = child\n        new = child",
      "        child = child[:]\n        new[i] = child\n        new = child", "one-walk copies",
      equivalent="a published node holds only retired owner tokens (publishing seals)"),
    M("order-replace-copying-slot", "ordertrie",
      "    new[4 + (d if bitmap == LEAF_FULL else (bitmap & ((1 << d) - 1)).bit_count())] = item",
      "    new[4 + (d if bitmap == LEAF_FULL else (bitmap & (1 << d)).bit_count())] = item",
      "off-by-one"),
    M("order-remove-copying-sibling", "ordertrie",
      "                other = new[(2 * FIRST + 1) - i]  # the parent gives way to it",
      "                other = new[(2 * FIRST) - i]  # the parent gives way to it", "off-by-one"),
    M("order-remove-copying-keeps-empty-parent", "ordertrie",
      "            if len(new) == FIRST + 3:\n                other = new[",
      "            if False:\n                other = new[", "canonical shape"),
    M("order-reversed-drops-first", "ordertrie",
      "        yield from node[: FIRST - 1 : -1]\n        return",
      "        yield from node[: FIRST : -1]\n        return", "off-by-one"),
    M("order-build-wraps-lone-child", "ordertrie",
      "            if len(group) == 1:\n                parents.append(group[0])",
      "            if False:\n                parents.append(group[0])", "canonical shape"),
    M("order-insert-edits-unowned", "ordertrie",
      "        if owner is not None and node[3] is owner:\n            node.insert(i, slot)",
      "        if node[3] is owner:\n            node.insert(i, slot)", "transient",
      equivalent="order_insert hands owner None to order_insert_copying first"),
    M("order-remove-one-child-kept", "ordertrie",
      "        if len(node) == FIRST + 3:\n            # an inner node left with one child gives way to it",
      "        if False:\n            # an inner node left with one child gives way to it",
      "canonical shape"),
    # --- transient ------------------------------------------------------------------------
    M("put-new-no-undo", "transient",
      "                    champ_remove(root, 0, entry, owner)", "                    pass",
      "failure restore"),
    M("assoc-replace-no-undo", "transient",
      "                    champ_put(root, 0, old, entry, owner)", "                    pass",
      "failure restore"),
    M("remove-entry-no-undo", "transient",
      "                    champ_put(root, 0, old, None, owner)", "                    pass",
      "failure restore"),
    M("assoc-noop-by-equality", "transient",
      "        if old[3] is value:\n            return False",
      "        if old[3] == value:\n            return False", "identity vs equality",
      extra=["test_flat_native_ops_py.py"]),
    M("flat-assoc-noop-by-equality", "transient",
      "        if old is value:\n            return False",
      "        if old == value:\n            return False", "identity vs equality"),
    M("assoc-keeps-new-key-object", "transient",
      "        stored_key = old[2]  # the first key object stays", "        stored_key = key  #",
      "interop"),
    M("gc-not-paused", "transient",
      "        self.paused = shared and gc.isenabled()", "        self.paused = False",
      "transient"),
    M("merge-frozendict-trie-order", "merge",
      "        entries.sort(key=_seq_of)\n", "", "merge"),
    M("merge-dict-subclass-iter-ignored", "merge",
      "    elif issubclass(cls, dict) and merge_default_iter(cls, dict):",
      "    elif issubclass(cls, dict):", "interop"),
    M("merge-keys-interleaved", "merge",
      "        keys = list(it)\n", "        keys = it\n",
      "interop"),
    M("bulk-load-acc-zero", "transient", "    t.acc = None  # unknown", "    t.acc = 0  # unknown",
      "transient"),
    M("equal-no-identity", "reads",
      "(value is other or bool(value == other))", "bool(value == other)", "identity vs equality"),
    M("equal-no-resize-check", "reads",
      "        if mapping_resized(a) != a_resized or mapping_resized(b) != b_resized:",
      "        if False:", "cold paths"),
    M("publish-no-seal", "transient",
      "        self._seal()\n        return cls._from_parts(", "        return cls._from_parts(",
      "transient"),
    M("sequence-element-length", "merge",
      "        if len(element) != 2:", "        if len(element) < 2:", "interop"),
    # --- evolver --------------------------------------------------------------------------
    M("evolver-frozen-subclass", "evolver",
      "        frozen = source if type(source) is frozendict else None", "        frozen = source",
      "interop"),
    M("update-no-acc-restore", "evolver",
      "            self.root, self.order, self.length, self.next_seq, self.acc = saved",
      "            self.root, self.order, self.length, self.next_seq = saved[:4]",
      "failure restore"),
    M("update-no-seal", "evolver",
      "        self._seal()  # the saved roots must not be edited in place", "",
      "failure restore"),
    M("begin-no-seal-while-reading", "evolver",
      "            # from its key's __eq__): edit copies, not the nodes it reads.\n            self._seal()",
      "            # from its key's __eq__): edit copies, not the nodes it reads.\n            pass",
      "transient",
      equivalent="champ_find reads the entry before __eq__ and walks a copy of a collision node"),
    M("end-keeps-stale-freeze", "evolver",
      "        if changed:\n            self._frozen = None", "        if False:\n            self._frozen = None",
      "transient"),
    M("freeze-inside-edit-kept", "evolver",
      "                if self._busy:  # a freeze from inside an edit: not kept\n                    return frozen\n",
      "", "transient"),
    M("setdefault-acc-unchanged", "evolver",
      "            acc = hashing_acc_replace(self.acc, h, None, default, False, True)",
      "            acc = self.acc", "transient"),
    M("clear-keeps-acc", "evolver",
      "            self._set_flat((), (), 0, 0)", "            self._set_flat((), (), 0, self.acc)",
      "transient"),
    M("restart-keeps-iterators", "evolver",
      "            self._resized += 1  # iterators over the old contents stop", "", "transient"),
    M("iter-snapshot-no-seal", "evolver",
      "            self._seal()\n            return _Snapshot(self, self._resized, Transient._items(self))",
      "            return _Snapshot(self, self._resized, Transient._items(self))",
      "transient"),
    # --- frozendict -----------------------------------------------------------------------
    M("set-new-acc-unchanged", "derive",
      "            acc = hashing_acc_replace(acc, h, None, value, False, True)\n        order =",
      "            pass\n        order =", "one-walk copies"),
    M("set-replace-acc-old-kept", "derive",
      "        acc = hashing_acc_replace(acc, h, old[3], value, True, True)",
      "        acc = hashing_acc_replace(acc, h, old[3], value, False, True)", "one-walk copies"),
    M("without-acc-unchanged", "derive",
      "        acc = hashing_acc_replace(acc, old[0], old[3], None, True, False)", "        pass",
      "one-walk copies"),
    M("or-unchanged-returns-subclass", "frozendict",
      "            return self._exact()  # every value already there", "            return self  #",
      "interop"),
    M("sub-unchanged-returns-subclass", "frozendict",
      "        if t.length == self._len:\n            return self._exact()",
      "        if t.length == self._len:\n            return self", "interop"),
    M("and-all-returns-subclass", "frozendict",
      "        if len(found) == self._len:\n            return self._exact()",
      "        if len(found) == self._len:\n            return self", "interop"),
    M("and-in-argument-order", "frozendict", "        for seq in sorted(found):",
      "        for seq in found:", "interop"),
    M("set-same-value-returns-subclass", "derive",
      "    if root is None:  # the very value already stored\n        return version._exact()",
      "    if root is None:  # the very value already stored\n        return version",
      "interop"),
    M("discard-missing-returns-subclass", "derive",
      "        if located is None:\n            return version._exact()\n        key = located[2]",
      "        if located is None:\n            return version\n        key = located[2]", "interop"),
    M("discard-collision-second-eq", "derive",
      "found = champ_delete_general(root, h, key, found[1] or located)",
      "found = champ_delete_general(root, h, key, found[1])", "user calls"),
    M("constructor-shares-subclass", "frozendict",
      "                if cls is frozendict and type(arg) is frozendict:",
      "                if type(arg) is cls:", "interop"),
    M("deepcopy-memo-ignored", "cold",
      "    existing = memo.get(id(fd))\n    if existing is not None:\n        return existing\n", "",
      "cold paths", extra=["test_deepcopy_cold_path.py"]),
    M("diff-changed-trie-order", "frozendict",
      "            changed.sort(key=_first_seq_of)\n", "", "diff/patches"),
    M("eq-hash-shortcut-inverted", "frozendict",
      "and self._hash != that._hash:", "and self._hash == that._hash and False:", "one-walk copies",
      equivalent="only drops a shortcut: the walk gives the same answer"),
    M("missing-on-exact", "frozendict",
      "        if type(self) is not frozendict:\n            # Looked up as dict does",
      "        if True:\n            # Looked up as dict does", "cold paths",
      equivalent="frozendict has no __missing__, so the lookup finds none"),
    # --- views ----------------------------------------------------------------------------
    M("values-contains-no-identity", "views",
      "            if v is value or v == value:", "            if v == value:", "identity vs equality"),
    M("items-contains-no-identity", "views",
      "        return value is item[1] or bool(value == item[1])",
      "        return bool(value == item[1])", "identity vs equality"),
    M("items-contains-any-length", "views",
      "if not isinstance(item, tuple) or len(item) != 2:", "if not isinstance(item, tuple):",
      "interop"),
    M("length-hint-static", "views", "        self._remaining -= 1\n", "", "cold paths"),
    M("iterator-reduce-consumes", "views",
      "        self._walk = iter(rest) if rewound is None else rewound(rest)\n", "",
      "cold paths"),
    M("reversed-view-forward", "views",
      "            self._mapping._items_reversed(), self._select", "            self._mapping._items(), self._select",
      "interop"),
    # --- paths ----------------------------------------------------------------------------
    M("bytes-path-accepted", "paths",
      "    if _is(path, (str, bytes)):", "    if _is(path, str):", "paths"),
    M("get-in-checks-top", "paths",
      "        if i and not _is(m, fd_type):", "        if not _is(m, fd_type):", "paths"),
    M("walk-error-position", "paths", "            raise path_not_a_frozendict(i, child)",
      "            raise path_not_a_frozendict(i + 1, child)", "off-by-one"),
    M("update-in-default-passed-on", "paths",
      '    default = kwargs.pop("default", _MISSING)', '    default = kwargs.get("default", _MISSING)',
      "paths"),
    M("set-in-no-create", "paths", "    maps = path_walk(top, keys, fd_type, True)",
      "    maps = path_walk(top, keys, fd_type, False)", "paths"),
    M("delete-in-evolver-rebuilds", "paths",
      "    if last == 0 and not _is(top, fd_type):  # an Evolver's own key",
      "    if False:  # an Evolver's own key", "paths"),
    # --- freeze ----------------------------------------------------------------------------
    M("freeze-mapping-by-equality", "freeze",
      "for fv in (freeze(v),) if fv is not v]", "for fv in (freeze(v),) if fv != v]",
      "identity vs equality"),
    M("freeze-items-by-equality", "freeze",
      "    return all(a is b for a, b in zip(old, new))",
      "    return all(a == b for a, b in zip(old, new))", "identity vs equality"),
    M("freeze-namedtuple-rebuilt", "freeze",
      "        return obj if _same_items(obj, items) else obj._make(items)",
      "        return obj._make(items)", "freeze"),
    M("freeze-list-kept", "freeze",
      "    if type(obj) is tuple and _same_items(obj, items):",
      "    if _same_items(obj, items):", "freeze"),
    # --- diff and patches (_diff) ------------------------------------------------------------
    M("differs-no-identity", "diff",
      "    return current is not expected and current != expected",
      "    return current != expected", "identity vs equality"),
    M("apply-removed-conflict-ignored", "diff",
      "            if _differs(current, old):\n                raise ValueError(\n                    \"Diff.apply(): conflict at key %r: it does not hold the value \"",
      "            if False:\n                raise ValueError(\n                    \"Diff.apply(): conflict at key %r: it does not hold the value \"",
      "diff/patches"),
    M("apply-added-conflict-ignored", "diff",
      "            elif _differs(current, new):", "            elif False:", "diff/patches"),
    M("apply-removed-missing-ignored", "diff",
      "            if current is _MISSING:\n                raise ValueError(\"Diff.apply(): conflict at key %r: it is missing\" % (key,))\n            if _differs(current, old):",
      "            if _differs(current, old):", "diff/patches"),
    M("deepen-either-side", "diff",
      "if isinstance(old, _registry.own_types) and isinstance(new, _registry.own_types)",
      "if isinstance(old, _registry.own_types) or isinstance(new, _registry.own_types)",
      "diff/patches"),
    M("merge-with-arguments-swapped", "frozendict",
      "value if found is None else fn(found[3], value)",
      "value if found is None else fn(value, found[3])", "diff/patches"),
    M("items-xor-no-identity", "viewsets", "        elif mine is value or mine == value:",
      "        elif mine == value:", "identity vs equality"),
    M("invert-keeps-sides", "diff", "        return Diff(self.removed, self.added, inverted)",
      "        return Diff(self.added, self.removed, inverted)", "diff/patches"),
    # --- the package's layers: an import that closes a cycle runs as before, so only
    # tests/test_imports.py, which reads the imports, can catch it
    M("diff-imports-jsonpatch", "diff", "        return _json_patch_writer(self)",
      "        from .jsonpatch import diff_to_json_patch\n\n        return diff_to_json_patch(self)",
      "layers", tests=["test_imports.py"]),
    M("freeze-core-from-package", "freeze", "from ._core import frozendict as _frozendict",
      "from . import frozendict as _frozendict", "layers", tests=["test_imports.py"]),
    # --- cold paths --------------------------------------------------------------------------
    M("generic-diff-no-identity", "cold", "        if old is not new and old != new:",
      "        if old != new:", "identity vs equality"),
    M("slots-mangling-unstripped", "cold",
      '                    name = "_%s%s" % (stripped, name)',
      '                    name = "_%s%s" % (type_name(cls), name)', "cold paths"),
    M("subclass-state-dict-dropped", "cold",
      '    state = getattr(obj, "__dict__", None) or None', "    state = None", "cold paths"),
    M("reconstruct-no-memo", "cold",
      "    return _copy._reconstruct(obj, memo, *rv)", "    return _copy._reconstruct(obj, None, *rv)",
      "cold paths"),
    # --- interop -----------------------------------------------------------------------------
    M("thaw-memo-after", "interop", "        result = memo[id(obj)] = {}\n", "        result = {}\n",
      "interop"),
    M("thaw-set-shared", "interop", "        result = memo[id(obj)] = set(obj)",
      "        result = memo[id(obj)] = obj", "interop"),
    M("json-default-any-mapping", "interop", "    if _is_frozendict(obj):\n        return dict(obj)",
      "    if hasattr(obj, 'keys'):\n        return dict(obj)", "interop"),
    M("pprint-sort-inverted", "interop", "    if printer._sort_dicts:\n        import pprint\n",
      "    if not printer._sort_dicts:\n        import pprint\n", "interop"),
    # --- table: maps built once and read (frozenmap/_pycore/table.py) -------------------------
    M("table-any-keys", "table",
      "    if not table_keys_are_pure(table):\n        return None",
      "    if False:\n        return None", "table form"),
    M("table-shares-the-callers-dict", "table",
      "    table = dict(source)\n", "    table = source\n", "table form"),
    M("table-twin-not-kept", "table",
      "            _set_twin(version, built)\n", "            pass\n", "table form"),
    # --- flat: small maps (frozenmap/_pycore/flat.py and its callers) ------------------------
    M("flat-find-no-hash-check", "flat",
      "    if h in hashes:\n        i = hashes.index(h)\n", "    if items:\n        i = 0\n",
      "hash before eq"),
    M("flat-find-no-identity", "flat",
      "        if k is key or k == key:\n            return i\n        return flat_find_after",
      "        if k == key:\n            return i\n        return flat_find_after", "identity vs equality"),
    M("flat-find-first-only", "flat",
      "        return flat_find_after(hashes, items, h, key, i)\n    return -1",
      "        return -1\n    return -1", "flat form"),
    M("flat-find-after-no-identity", "flat",
      "        k = items[i][0]\n        if k is key or k == key:\n            return i\n\n",
      "        k = items[i][0]\n        if k == key:\n            return i\n\n", "identity vs equality"),
    M("flat-find-after-skips-one", "flat",
      "            i = hashes.index(h, i + 1)", "            i = hashes.index(h, i + 2)", "off-by-one"),
    M("flat-getitem-inline-no-identity", "frozendict",
      "                    if k is key or k == key:\n                        return item[1]",
      "                    if k == key:\n                        return item[1]", "identity vs equality",
      extra=["test_flat_lookup_collisions.py"]),
    M("flat-getitem-inline-first-only", "frozendict",
      "                    i = flat_find_after(hashes, items, h, key, i)  # type: ignore[arg-type]\n"
      "                    if i >= 0:",
      "                    i = -1\n                    if i >= 0:", "flat form",
      extra=["test_flat_lookup_collisions.py"]),
    M("flat-get-inline-first-only", "frozendict",
      "                i = flat_find_after(hashes, items, h, key, i)  # type: ignore[arg-type]\n            else:",
      "                i = -1\n            else:", "flat form", extra=["test_flat_lookup_collisions.py"]),
    M("flat-contains-inline-first-only", "frozendict",
      "                return flat_find_after(hashes, self._order, h, key, i) >= 0",
      "                return False", "flat form", extra=["test_flat_lookup_collisions.py"]),
    M("flat-index-last-position", "flat",
      "    return dict(zip(reversed(hashes), range(len(hashes) - 1, -1, -1)))",
      "    return dict(zip(hashes, range(len(hashes))))", "flat form",
      extra=["test_flat_lookup_index.py", "test_flat_lookup_collisions.py"]),
    M("flat-index-never-built", "frozendict",
      "            _set_hindex(version, index + 1)", "            _set_hindex(version, index)",
      "flat form", extra=["test_flat_lookup_index.py"]),
    M("flat-index-built-at-once", "frozendict",
      "            _set_hindex(self, 0)  # no lookup yet (_indexed_find)",
      "            _set_hindex(self, FLAT_INDEX_AFTER)  # no lookup yet (_indexed_find)",
      "flat form", extra=["test_flat_lookup_index.py"]),
    M("flat-indexed-find-no-identity", "frozendict",
      "    k = items[i][0]\n    if k is key or k == key:\n        return i\n    return flat_find_after(version",
      "    k = items[i][0]\n    if k == key:\n        return i\n    return flat_find_after(version",
      "identity vs equality", extra=["test_flat_lookup_index.py", "test_flat_lookup_collisions.py"]),
    M("flat-with-moves-last", "flat",
      "    return items[:i] + ((items[i][0], value),) + items[i + 1 :]",
      "    return items[:i] + items[i + 1 :] + ((items[i][0], value),)", "flat form"),
    M("nx-columns-child-slot", "keytrie_pypy",
      "            slot = last - (twice & (bit - 1)).bit_count()",
      "            slot = last - (nodemap & (bit - 1)).bit_count()", "off-by-one",
      tests=["test_keytrie_nx_layout.py"]),
    M("nx-columns-child-misses-first", "keytrie_pypy",
      "            for u in range(t, len(where)):\n                if digits[u] == digits[t]:",
      "            for u in range(t + 1, len(where)):\n                if digits[u] == digits[t]:",
      "off-by-one", tests=["test_keytrie_nx_layout.py"]),
    M("nx-columns-collision-seq-is-position", "keytrie_pypy",
      "        entries.append((h, i if seqs is None else seqs[i], key, value))",
      "        entries.append((h, i, key, value))", "off-by-one",
      tests=["test_keytrie_nx_layout.py"]),
    M("flat-promote-seq", "keytrie",
      "        entries.append((hashes[seq], seq, item[0], item[1]))",
      "        entries.append((hashes[seq], seq + 1, item[0], item[1]))", "off-by-one"),
    M("flat-demote-trie-order", "flat",
      "    entries.sort(key=_seq_of)\n", "",
      "flat form"),
    M("flat-equal-no-identity", "flat",
      "        if not (va is vb or va == vb):", "        if not va == vb:", "identity vs equality"),
    M("flat-equal-by-position", "flat",
      "            vb = ib[j][1]", "            vb = ib[i][1]", "flat form"),
    M("flat-equal-position-no-hash-check", "flat",
      "        if other[0] is key and hb[i] == h:", "        if other[0] is key:", "hash before eq"),
    M("flat-identical-by-equality", "flat",
      "        if a[0] is not b[0] or a[1] is not b[1]:", "        if a[0] != b[0] or a[1] != b[1]:",
      "identity vs equality"),
    M("flat-promote-late", "derive",
      "        if length > FLAT_MAX:\n            hashes, items = flat_promote",
      "        if length > FLAT_MAX + 1:\n            hashes, items = flat_promote",
      "off-by-one", extra=["test_flat_maps.py", "test_flat_maps_pure.py"]),
    M("flat-demote-late", "frozendict",
      "        if length <= FLAT_MAX and type(root) is not tuple:",
      "        if length < FLAT_MAX and type(root) is not tuple:", "off-by-one",
      extra=["test_flat_maps.py", "test_flat_maps_pure.py"]),
    M("flat-set-new-acc-unchanged", "derive",
      "            acc = hashing_acc_replace(acc, h, None, value, False, True)\n        length =",
      "            pass\n        length =", "flat form",
      extra=["test_flat_maps.py", "test_flat_maps_pure.py"]),
    M("flat-set-replace-acc-old-kept", "derive",
      "        acc = hashing_acc_replace(acc, h, old, value, True, True)",
      "        acc = hashing_acc_replace(acc, h, old, value, False, True)", "flat form",
      extra=["test_flat_maps.py", "test_flat_maps_pure.py"]),
    M("flat-delete-acc-unchanged", "derive",
      "        acc = hashing_acc_replace(acc, hashes[i], items[i][1], None, True, False)",
      "        pass", "flat form", extra=["test_flat_maps.py", "test_flat_maps_pure.py"]),
    M("flat-set-same-value-by-equality", "derive",
      "    if old is value:  # the very value already stored",
      "    if old == value:  # the very value already stored", "identity vs equality",
      extra=["test_flat_maps.py", "test_flat_maps_pure.py"]),
    M("flat-discard-missing-returns-subclass", "derive",
      "        if missing_ok:\n            return version._exact()\n        raise KeyError(key)",
      "        if missing_ok:\n            return version\n        raise KeyError(key)", "interop"),
    M("flat-delete-next-seq", "derive",
      "    return cls._from_parts(hashes, items, version._len - 1, version._len - 1, acc)",
      "    return cls._from_parts(hashes, items, version._len - 1, version._len, acc)",
      "flat form", equivalent="a flat version's next seq is its length: _from_parts never reads it",
      extra=["test_flat_maps.py", "test_flat_maps_pure.py"]),
    # --- jsonpatch (RFC 6902 / RFC 6901) ------------------------------------------------------
    M("jp-unescape-order", "jsonpatch",
      'tokens[i] = token.replace("~1", "/").replace("~0", "~")',
      'tokens[i] = token.replace("~0", "~").replace("~1", "/")', "json patch"),
    M("jp-escape-order", "jsonpatch",
      'return key.replace("~", "~0").replace("/", "~1")',
      'return key.replace("/", "~1").replace("~", "~0")', "json patch"),
    M("jp-escape-slash-only", "jsonpatch",
      'return key.replace("~", "~0").replace("/", "~1")', 'return key.replace("/", "~1")',
      "json patch"),
    M("jp-dash-on-read", "jsonpatch",
      '    if token == "-" and insert:', '    if token == "-":', "json patch"),
    M("jp-index-end-readable", "jsonpatch",
      "    if index > len(array) or (index == len(array) and not insert):",
      "    if index > len(array):", "off-by-one"),
    M("jp-leading-zero-index", "jsonpatch",
      '_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")', '_ARRAY_INDEX = re.compile(r"[0-9]+")',
      "json patch"),
    M("jp-test-true-is-1", "jsonpatch",
      "        return isinstance(a, bool) and isinstance(b, bool) and a is b",
      "        return a == b", "json patch"),
    M("jp-test-object-length-unchecked", "jsonpatch",
      "        if len(a) != len(b):\n            return False\n        for key, value in a.items():",
      "        for key, value in a.items():", "json patch"),
    M("jp-move-into-own-prefix", "jsonpatch",
      '        if path.startswith(source + "/"):', "        if path.startswith(source):",
      "json patch"),
    M("jp-move-to-itself-reorders", "jsonpatch",
      "        if source == path:\n            return doc\n", "", "json patch"),
    M("jp-remove-missing-member", "jsonpatch",
      "        if key is _MISSING:\n            raise _Fail(\"member %s does not exist\" % _shown(token), pointer)\n"
      "        new_parent = parent.delete(key)",
      "        new_parent = parent.delete(key)", "json patch"),
    M("jp-replace-missing-adds", "jsonpatch",
      "    key = _resolve(path[-1], tokens[-1], pointer)  # the target must exist\n",
      "    key = _member(path[-1], tokens[-1], pointer) if _is_object(path[-1]) else int(tokens[-1])\n"
      "    key = tokens[-1] if key is _MISSING else key\n", "json patch"),
    M("jp-add-to-array-replaces", "jsonpatch",
      "        new_parent = parent[:index] + (value,) + parent[index:]",
      "        new_parent = parent[:index] + (value,) + parent[index + 1 :]", "off-by-one"),
    M("jp-make-removes-from-front", "jsonpatch",
      "                for step in reversed(run):", "                for step in run:", "json patch"),
    M("jp-ambiguous-name-first-wins", "jsonpatch",
      "    if len(keys) == 1:\n        return keys[0]", "    if keys:\n        return keys[0]", "json patch"),
    M("jp-index-digits-unchecked", "jsonpatch",
      "    index = int(token) if len(token) <= 18 else 10**18", "    index = int(token)", "json patch"),
    M("jp-value-not-json-unchecked", "jsonpatch",
      "    if problem is not None:\n        raise _Fail(\"the value \" + problem",
      "    if False:\n        raise _Fail(\"the value \" + problem", "json patch"),
    M("jp-key-true-named-as-int", "jsonpatch",
      "    if key is True:\n        return \"true\"\n", "", "json patch"),
    M("jp-make-true-is-1", "jsonpatch",
      "        if kind is str or kind is int or kind is float or value is None:",
      "        if kind is str or kind is int or kind is float or kind is bool or value is None:",
      "json patch"),
    M("jp-nested-plain-dict-unfrozen", "jsonpatch",
      "    return key, freeze(value) if type(value) in (dict, list) else value", "    return key, value",
      "json patch"),
    # --- history: undo/redo and its pickles ---------------------------------------------------
    M("hist-commit-keeps-future", "history", "            del versions[index:]\n", "", "history"),
    M("hist-limit-off-by-one", "history",
      "            if limit is not None and index > limit:",
      "            if limit is not None and index > limit + 1:", "off-by-one"),
    M("hist-move-past-end", "history",
      "            if not 0 <= index < len(self._versions):",
      "            if not 0 <= index <= len(self._versions):", "failure restore"),
    M("hist-load-steps-reversed", "history",
      "    for number, step in enumerate(steps, 1):\n        try:\n",
      "    for number, step in enumerate(reversed(steps), 1):\n        try:\n", "history"),
    M("hist-pickle-present-last", "history",
      "        return (_load, (type(self), self._limit, index, versions[0], steps))",
      "        return (_load, (type(self), self._limit, len(steps), versions[0], steps))", "history"),
    M("hist-same-ignores-order", "history",
      "return (_SAME,) if list(old) == list(new) else None", "return (_SAME,)", "history"),
    M("hist-diff-order-unchecked", "history",
      "    if not _in_diff_order(old, new, removed, added):\n        return None\n", "", "history"),
    M("hist-diff-order-equality", "history",
      "    if not all(map(operator.is_, old_keys, islice(new_keys, kept))):",
      "    if not all(map(operator.eq, old_keys, islice(new_keys, kept))):", "history"),
    M("hist-diffable-subclass", "history",
      "    return type(old) is type(new) and type(new) in _registry.own_types",
      "    return isinstance(old, _registry.own_types) and isinstance(new, _registry.own_types)",
      "interop"),
    # --- versioned: overrides, compare-and-swap, subscribers ------------------------------------
    M("ver-cas-no-retry", "versioned",
      "            if expected is not None and state is not expected:",
      "            if False:", "versioned"),
    M("ver-update-reads-override", "versioned",
      "            new: T = apply(state[1])", "            new: T = apply(self.get())", "versioned"),
    M("ver-unchanged-by-equality", "versioned",
      "            if new is old:\n                return _Outcome.UNCHANGED",
      "            if new == old:\n                return _Outcome.UNCHANGED", "identity vs equality"),
    M("ver-committing-not-reset", "versioned",
      "                try:\n                    self._history.commit(new)\n                finally:\n                    self._committing = False",
      "                self._history.commit(new)\n                self._committing = False",
      "failure restore"),
    M("ver-enter-sets-before-check", "versioned",
      "        seen = layer.resolve(versioned.get())  # bad changes raise here, before anything is set\n        layer.token = versioned._layers.set(layers + (layer,))",
      "        layer.token = versioned._layers.set(layers + (layer,))\n        seen = versioned.get()",
      "failure restore"),
    M("ver-exit-outermost-first", "versioned",
      "        for layer in reversed(layers):\n            if layer.owner is self",
      "        for layer in layers:\n            if layer.owner is self", "failure restore"),
    M("ver-layers-inner-first", "versioned",
      "        for layer in layers:\n            cache = layer._cache", "        for layer in reversed(layers):\n            cache = layer._cache",
      "versioned"),
    M("ver-override-changes-not-copied", "versioned",
      "            if not isinstance(changes, _registry.frozendict_types):\n                changes = dict(changes)\n",
      "", "versioned"),
    M("ver-delivering-stuck-on-interrupt", "versioned",
      "            with self._lock:\n                self._delivering = False\n            raise",
      "            raise", "failure restore"),
    M("ver-subscriber-sees-earlier-change", "versioned",
      "if not subscription._active or number <= subscription._after:",
      "if not subscription._active:", "off-by-one"),
]
# fmt: on

# A control that must be killed by any test: if it survives, the runs do not
# import the mutated copy (the harness is broken, not the suite).
CANARY = M(
    "canary-len",
    "frozendict",
    "    def __len__(self) -> int:\n        return self._len",
    "    def __len__(self) -> int:\n        return self._len + 1",
    "control",
    tests=["test_pep814_read.py"],
)


# --- running ------------------------------------------------------------------------


def apply(text: str, mutant: Mutant) -> str:
    count = text.count(mutant.old)
    if count != 1:
        raise ValueError(
            "mutant %s: its text occurs %d times in %s (must be once)"
            % (mutant.name, count, FILES[mutant.module])
        )
    return text.replace(mutant.old, mutant.new)


def make_sandbox() -> Path:
    """A temporary copy of the package's Python files, tests/ and pyproject.toml."""
    base = Path(tempfile.mkdtemp(prefix="frozenmap-mutants-"))
    shutil.copytree(
        ROOT / "frozenmap",
        base / "frozenmap",
        ignore=shutil.ignore_patterns("*.so", "*.c", "*.h", "__pycache__", "_build_status.txt"),
    )
    shutil.copytree(
        ROOT / "tests", base / "tests", ignore=shutil.ignore_patterns("__pycache__", ".hypothesis")
    )
    shutil.copy(ROOT / "pyproject.toml", base / "pyproject.toml")
    return base


def run_tests(base: Path, tests: List[str], timeout: float, python: str) -> Tuple[str, str, float]:
    """Run pytest on ``tests`` in the sandbox: (outcome, detail, seconds)."""
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(base),
        FROZENMAP_PURE_PYTHON="1",
        FROZENMAP_TEST_CORES="python",
        HYPOTHESIS_PROFILE=env.get("HYPOTHESIS_PROFILE", "ci"),
        FROZENMAP_NOMEMORY="off",
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("FROZENMAP_REQUIRE_C", None)
    cmd = [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header", *tests]
    if hasattr(os, "nice"):
        cmd = ["nice", "-n", "10", *cmd]
    started = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        cwd=base / "tests",
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        return "timeout", "no result in %ds" % timeout, time.monotonic() - started
    seconds = time.monotonic() - started
    if proc.returncode == 0:
        return "survived", "", seconds
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", out, re.M)
    if proc.returncode in (1, 2) and failed:
        return "killed", failed[0], seconds
    tail = " | ".join(out.strip().splitlines()[-3:])
    return "killed", "exit %d: %s" % (proc.returncode, tail[:200]), seconds


def tests_for(
    mutant: Mutant, exclude: List[str], wide: bool, chosen: Optional[List[str]] = None
) -> List[str]:
    if chosen:
        names = list(chosen)
    elif wide:
        tests = ROOT / "tests"
        names = sorted(
            str(p.relative_to(tests))
            for p in [*tests.glob("test_*.py"), *tests.glob("hostile/test_*.py")]
        )
        names = [n for n in names if n not in WIDE_EXCLUDED]
    else:
        names = list(mutant.tests or TESTS[mutant.module]) + mutant.extra
    return [n for n in names if n not in exclude]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", default=[], help="run only these mutants")
    parser.add_argument("--exclude", nargs="+", default=[], help="test files to leave out")
    parser.add_argument(
        "--new",
        nargs="+",
        default=[],
        help="test files measured apart: run first without them (before), then they "
        "run against each survivor (after)",
    )
    parser.add_argument("--tests", nargs="+", default=[], help="run these test files instead")
    parser.add_argument("--wide", action="store_true", help="run survivors again on a wider set")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    parser.add_argument("--python", default=sys.executable, help="the interpreter (with pytest)")
    parser.add_argument("--list", action="store_true", help="check and list the mutants only")
    parser.add_argument("--start", help="skip the mutants listed before this one")
    parser.add_argument(
        "--shard", default="0/1", help="K/N: run every N-th mutant from the K-th (0-based)"
    )
    args = parser.parse_args(argv)

    names = [m.name for m in MUTANTS]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise SystemExit("duplicate mutant names: %s" % ", ".join(sorted(duplicates)))
    unknown = set(args.only) - set(names)
    if unknown:
        raise SystemExit("no such mutant: %s" % ", ".join(sorted(unknown)))
    chosen = [m for m in MUTANTS if not args.only or m.name in args.only]
    if args.start:
        chosen = chosen[[m.name for m in chosen].index(args.start) :]
    shard, shards = (int(x) for x in args.shard.split("/"))
    chosen = chosen[shard::shards]

    sources: Dict[str, str] = {
        key: (ROOT / path).read_text(encoding="utf-8") for key, path in FILES.items()
    }
    for mutant in chosen + [CANARY]:
        apply(sources[mutant.module], mutant)  # fails early on a stale mutant
    if args.list:
        for m in chosen:
            print("%-40s %-12s %s" % (m.name, m.module, m.kind))
        print("%d mutants" % len(chosen))
        return 0

    base = make_sandbox()

    def run(mutant: Optional[Mutant], tests: List[str]) -> Tuple[str, str, float]:
        path = base / FILES[mutant.module] if mutant is not None else None
        if mutant is not None and path is not None:
            path.write_text(apply(sources[mutant.module], mutant), encoding="utf-8")
        try:
            return run_tests(base, tests, args.timeout, args.python)
        finally:
            if mutant is not None and path is not None:
                path.write_text(sources[mutant.module], encoding="utf-8")

    # (mutant, outcome without the --new files, outcome with them, detail)
    results: List[Tuple[Mutant, str, str, str]] = []
    try:
        outcome, detail, _ = run(None, tests_for(CANARY, [], False))
        if outcome != "survived":
            raise SystemExit("the unmutated copy fails its tests: %s" % detail)
        outcome, detail, _ = run(CANARY, tests_for(CANARY, [], False))
        if outcome != "killed":
            raise SystemExit("the canary mutant %s: the sandbox does not run the copy" % outcome)
        for mutant in chosen:
            outcome, detail, seconds = run(
                mutant, tests_for(mutant, args.exclude + args.new, False, args.tests)
            )
            before = outcome
            if outcome == "survived" and args.new:
                outcome, detail, more = run(mutant, [n for n in args.new if n not in args.exclude])
                seconds += more
                if outcome != "survived":
                    detail = "(new) " + detail
            if outcome == "survived" and args.wide:
                outcome, detail, more = run(mutant, tests_for(mutant, args.exclude, True))
                seconds += more
                if outcome != "survived":
                    detail = "(wide) " + detail
                    before = outcome  # the suite without the new files killed it
            results.append((mutant, before, outcome, detail))
            print(
                "%-8s %-40s %5.0fs %s%s"
                % (
                    outcome.upper(),
                    mutant.name,
                    seconds,
                    detail,
                    "  [equivalent: %s]" % mutant.equivalent if mutant.equivalent else "",
                ),
                flush=True,
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)

    real = [r for r in results if not r[0].equivalent]
    print()
    if args.new:
        before = sum(1 for r in real if r[1] != "survived")
        print("without %s: killed %d of %d" % (", ".join(args.new), before, len(real)))
    after = sum(1 for r in real if r[2] != "survived")
    print(
        "killed %d of %d mutants (%d equivalent controls not counted)%s"
        % (
            after,
            len(real),
            len(results) - len(real),
            "; left out: %s" % ", ".join(args.exclude) if args.exclude else "",
        )
    )
    survivors = [r[0].name for r in real if r[2] == "survived"]
    if survivors:
        print("survived: %s" % ", ".join(survivors))
    controls = [r[0].name for r in results if r[0].equivalent and r[2] != "survived"]
    if controls:
        print("equivalent controls killed (check them): %s" % ", ".join(controls))
    return 0 if not survivors else 1


if __name__ == "__main__":
    sys.exit(main())
