"""The layers of both cores (docs/how-it-works.md, "Layers"): no module calls
one above it.

Read from the source files, not the installed package: the rule is about the
code.  A module of the pure core may import only modules of a lower rank (any
import, also one inside a function); in the C core, ``evolver.c`` calls no
``fd_*`` function, ``frozendict.c`` no ``evolver_*`` function, and the lower
files neither.
"""

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "frozenmap"
if not (PACKAGE / "_pycore" / "transient.py").exists():  # pragma: no cover
    pytest.skip("needs the source tree", allow_module_level=True)

# Rank of each pure-core module: it may import modules of lower rank only.
# The same picture as the C core's below and docs/how-it-works.md's drawing.
PY_RANKS = {
    "hashing": 0,
    "keytrie": 0,  # the key trie in CPython's layout, and its layout-free parts
    "ordertrie": 0,
    "keytrie_pypy": 1,  # the key trie in PyPy's layout (shares keytrie's layout-free parts)
    "champ": 2,  # chooses the layout, once; what is written once over either
    "flat": 3,  # beside the tries, above them: it builds and reads both
    "table": 3,  # beside them too: a dict read, and the tries built from it
    "transient": 4,  # the builder
    "derive": 5,  # the one-key derivations of a version (set, delete, discard)
    "reads": 5,  # the reads both types share (a slice is built by a builder)
    "merge": 6,  # the one merge (it recognises operands through reads)
    "views": 6,  # views and iterators, over what reads reads
    "paths": 6,  # nested paths (they derive through derive)
    "evolver": 7,
    "frozendict": 8,  # evolve() constructs an Evolver, through its constructor
    "__init__": 9,
}

# C files: the function prefixes each may call, by layer.
C_LOWER = ("champ_", "order_", "hashing_")
C_ALLOWED_UPWARD = {
    "keytrie.c": (),
    "ordertrie.c": (),
    "hashing.c": (),
    # The one exception to the pure core's picture: flat.c promotes a flat
    # version into a transient (flat_promote fills one, for transient_init_from)
    # and publishes the ninth key's tries and the unchanged version through
    # the builder (transient_publish, transient_version_exact), where flat.py
    # returns the two roots and leaves wrapping them to its callers.  In C
    # the builder is what owns two trie roots and turns them into a version
    # of either form (transient_version_new demotes to the flat form), so
    # flat.c and transient.c call each other.
    "flat.c": ("transient_",),
    # table.c the same: its twin is built and its build published through
    # the builder, which starts from a table's twin and leaves table mode
    "table.c": ("transient_", "flat_"),
    "transient.c": ("flat_", "table_"),
    "derive.c": ("flat_", "table_", "transient_"),
    "reads.c": ("flat_", "table_", "transient_"),
    "merge.c": ("flat_", "table_", "transient_", "mapping_"),
    "views.c": ("flat_", "table_", "transient_", "mapping_"),
    "paths.c": ("flat_", "table_", "transient_", "derive_", "mapping_"),
    # The C bases of frozenmap.drafts' classes: drafts read through mapping_get
    # and make a map's first change through derive_with.
    "drafts.c": ("derive_", "mapping_"),
    "evolver.c": (
        "flat_",
        "table_",
        "transient_",
        "mapping_",
        "position_",
        "merge_",
        "view_",
        "path_",
    ),
    "frozendict.c": (
        "flat_",
        "table_",
        "transient_",
        "derive_",
        "mapping_",
        "position_",
        "merge_",
        "view_",
        "path_",
    ),
}

# The prefixes of each C file's own functions.
C_PREFIX = {
    "keytrie.c": ("champ_",),
    "ordertrie.c": ("order_",),
    "hashing.c": ("hashing_",),
    "flat.c": ("flat_",),
    "table.c": ("table_",),
    "transient.c": ("transient_",),
    "derive.c": ("derive_",),
    "drafts.c": ("draft_",),
    "reads.c": ("mapping_", "position_"),
    "merge.c": ("merge_",),
    "views.c": ("view_",),
    "paths.c": ("path_",),
    "evolver.c": ("evolver_",),
    "frozendict.c": ("fd_",),
}


def _imported_siblings(path):
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module is not None:
                yield node.module.split(".")[0]
            else:
                yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[:2] == ["frozenmap", "_pycore"] and len(parts) > 2:
                yield parts[2]


@pytest.mark.parametrize("name", sorted(PY_RANKS))
def test_pure_core_module_imports_only_lower_layers(name):
    rank = PY_RANKS[name]
    for imported in _imported_siblings(PACKAGE / "_pycore" / (name + ".py")):
        assert imported in PY_RANKS, (name, imported)
        assert PY_RANKS[imported] < rank, "%s imports %s" % (name, imported)


def _called(path):
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)  # not the comments
    return set(re.findall(r"\b([a-z]+_)[a-z_0-9]*\s*\(", text))


@pytest.mark.parametrize("name", sorted(C_ALLOWED_UPWARD))
def test_c_core_file_calls_only_lower_layers(name):
    own = C_PREFIX[name]
    layered = {prefix for prefixes in C_PREFIX.values() for prefix in prefixes}
    allowed = set(C_LOWER) | set(C_ALLOWED_UPWARD[name]) | set(own)
    called = _called(PACKAGE / "_ccore" / name) & layered
    assert called <= allowed, "%s calls %s" % (name, sorted(called - allowed))


def test_every_module_and_c_file_has_its_place():
    """A new file is placed in the layers above (and in docs/how-it-works.md's
    drawing) before it is checked: none goes unranked."""
    assert {path.stem for path in (PACKAGE / "_pycore").glob("*.py")} == set(PY_RANKS)
    c_files = {path.name for path in (PACKAGE / "_ccore").glob("*.c")}
    assert c_files - {"module.c"} == set(C_ALLOWED_UPWARD) == set(C_PREFIX)
