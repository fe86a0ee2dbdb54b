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
PY_RANKS = {
    "hashing": 0,
    "keytrie": 0,
    "ordertrie": 0,
    "views": 0,
    "paths": 0,
    "flat": 0.5,  # beside the tries, above them: it builds and reads both
    "transient": 1,
    "evolver": 2,
    "frozendict": 3,  # evolve() constructs an Evolver, through its constructor
    "__init__": 4,
}

# C files: the function prefixes each may call, by layer.
C_LOWER = ("champ_", "order_", "hashing_")
C_ALLOWED_UPWARD = {
    "keytrie.c": (),
    "ordertrie.c": (),
    "hashing.c": (),
    # flat.c promotes and edits through the builder (transient_init/publish),
    # where the pure core's flat.py builds the tries itself and sits below
    # transient.py: the one place the C layers are not the pure core's (the
    # transient.c split of issue 27 is where flat.c's builder calls move)
    "flat.c": ("transient_",),
    "transient.c": ("flat_",),
    "views.c": ("flat_", "transient_"),
    "paths.c": ("flat_", "transient_"),
    "evolver.c": ("flat_", "transient_", "view_", "path_"),
    "frozendict.c": ("flat_", "transient_", "view_", "path_"),
}

# The prefix of each C file's own functions.
C_PREFIX = {
    "keytrie.c": "champ_",
    "ordertrie.c": "order_",
    "hashing.c": "hashing_",
    "flat.c": "flat_",
    "transient.c": "transient_",
    "views.c": "view_",
    "paths.c": "path_",
    "evolver.c": "evolver_",
    "frozendict.c": "fd_",
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
    layered = set(C_PREFIX.values())
    allowed = set(C_LOWER) | set(C_ALLOWED_UPWARD[name]) | {own}
    called = _called(PACKAGE / "_ccore" / name) & layered
    assert called <= allowed, "%s calls %s" % (name, sorted(called - allowed))
