"""No import cycle among frozenmap's modules, and every import goes down the
package's layers (docs/how-it-works.md, "The package's layers").

Read from the source tree, not the installed package: the rule is about the
code.  Every import that can run counts, wherever it is written (at module
level, inside a function, in a branch): ``import frozenmap.x``, ``from .
import x``, ``from .x import y``, and the module named by
``importlib.import_module`` or ``__import__``.  The C core
(``frozenmap._ccore._cfrozenmap``) imports the modules its C files name to
``fm_import_attr`` and ``PyImport_ImportModule``.  An import under ``if
TYPE_CHECKING:`` never runs: the type checker reads it, against the typed
API of ``frozenmap/__init__.pyi``, and it may name only that
(``test_imports_for_the_type_checker_name_only_the_typed_api``).

``from . import x`` depends on the submodule ``x`` when there is one, and on
the package's ``__init__`` otherwise.  Importing ``frozenmap.a.b`` also runs
the packages ``frozenmap`` and ``frozenmap.a`` first, as every submodule
does; that is not counted (it would tie every module to the package), only
the module named.

A lower layer that must reach an upper one is handed what it needs by a
registration the upper one makes when it is imported (the cores register
their types with ``_registry``, ``jsonpatch`` its writer with ``_diff``,
``_core`` its core finder with ``_common``), never by an import.
"""

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "frozenmap"
if not (PACKAGE / "_pycore" / "transient.py").exists():  # pragma: no cover
    pytest.skip("needs the source tree", allow_module_level=True)

C_EXTENSION = "frozenmap._ccore._cfrozenmap"

# The package's layers, bottom first: a module imports only modules of lower
# layers.  A name stands for the module and, for a package, every module in
# it (the cores' own layers are tests/test_layers.py's).  The same list as the
# drawing in docs/how-it-works.md (test_the_drawing_in_how_it_works_shows_these_layers).
LAYERS = [
    ("_typeinfo", "_registry", "_viewsets"),
    ("_diff", "_interop", "_shortrepr"),
    ("_common", "_cold"),
    ("_pycore", "_ccore"),
    ("_core",),
    ("_freeze",),
    ("jsonpatch", "history", "versioned"),
    ("drafts",),
    ("frozenmap",),
    ("__main__", "bench"),
]

# Imports whose module is computed: where they are, and the modules they can
# name.  A computed import that is not listed here fails the test, which
# cannot read it.
COMPUTED_IMPORTS = {
    # the benchmark measures each core that imports
    "frozenmap.bench.peers": {"frozenmap._ccore", "frozenmap._pycore"},
}
# The C core's only import of a computed name: fm_import_attr's own body.
C_COMPUTED_IMPORTS = {("frozenmap/_ccore/module.c", "PyImport_ImportModule(module")}

_C_IMPORT = re.compile(r"\b(fm_import_attr|PyImport_Import\w*)\s*\(\s*([^,)]*)")
_C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def _where(path, line):
    try:
        path = path.relative_to(ROOT)
    except ValueError:  # a file of this test's own (tmp_path)
        path = Path(path.name)
    return "%s:%d" % (path, line)


def _module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _python_modules():
    """Each module of the package (dotted name) -> its file."""
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _c_files():
    return sorted((PACKAGE / "_ccore").glob("*.[ch]"))


def _is_import_call(node):
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name in ("import_module", "__import__")


def _is_type_checking(test):
    return getattr(test, "id", getattr(test, "attr", None)) == "TYPE_CHECKING"


def _type_checking_only(tree):
    """The nodes under an ``if TYPE_CHECKING:`` (not its ``else``)."""
    nodes = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for statement in node.body:
                nodes.update(id(inner) for inner in ast.walk(statement))
    return nodes


def _python_imports(name, path, known, type_checking=False):
    """(imported module, line) for each import written in ``path`` that can
    run (or, with ``type_checking``, each one under ``if TYPE_CHECKING:``);
    raises AssertionError for an import the test cannot resolve."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for_type_checker = _type_checking_only(tree)
    for node in ast.walk(tree):
        if (id(node) in for_type_checker) != type_checking:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "frozenmap":
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "frozenmap":
                continue
            for alias in node.names:
                submodule = "%s.%s" % (target, alias.name)
                yield (submodule if submodule in known else target), node.lineno
        elif isinstance(node, ast.Call) and _is_import_call(node) and node.args:
            argument = node.args[0]
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                if argument.value.split(".")[0] == "frozenmap":
                    yield argument.value, node.lineno
            else:
                assert name in COMPUTED_IMPORTS, (
                    "%s: an import whose module is computed; list the modules it can "
                    "import in COMPUTED_IMPORTS" % _where(path, node.lineno)
                )
                for target in sorted(COMPUTED_IMPORTS[name]):
                    yield target, node.lineno


def _c_imports():
    """(imported module, where) for each module the C core imports; raises
    AssertionError for an import of a computed name it does not know."""
    for path in _c_files():
        text = _C_COMMENT.sub(lambda m: "\n" * m.group().count("\n"), path.read_text())
        for match in _C_IMPORT.finditer(text):
            function, argument = match.group(1), match.group(2).strip()
            where = _where(path, text.count("\n", 0, match.start()) + 1)
            if argument.startswith('"'):
                module = argument.strip('"')
                if module.split(".")[0] == "frozenmap":
                    yield module, where
            elif not argument.startswith("const "):  # (not a declaration)
                site = (path.relative_to(ROOT).as_posix(), "%s(%s" % (function, argument))
                assert site in C_COMPUTED_IMPORTS, (
                    "%s: %s(%s): an import whose module is computed; name the module "
                    "with a string literal, which this test reads" % (where, function, argument)
                )


def import_graph():
    """module -> {imported module: [where, ...]}, over the package's modules
    (the C core's imports read from its sources, when they are here)."""
    files = _python_modules()
    known = set(files) | {C_EXTENSION}
    graph = {module: defaultdict(list) for module in known}
    for name, path in files.items():
        for target, line in _python_imports(name, path, known):
            where = _where(path, line)
            assert target in known, "%s imports %s, not a module of the package" % (where, target)
            if where not in graph[name][target]:  # one line may import two names
                graph[name][target].append(where)
    for target, where in _c_imports():
        assert target in known, "%s imports %s, not a module of the package" % (where, target)
        graph[C_EXTENSION][target].append(where)
    return graph


def find_cycle(graph):
    """One import cycle as a list of modules (its first repeated at the end),
    or None.  Depth first, in sorted order, so the report is stable."""
    state = {}  # module -> 1 on the current path, 2 done
    path = []

    def visit(module):
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


def describe_cycle(graph, cycle):
    return "\n".join(
        "  %s imports %s (%s)" % (a, b, ", ".join(graph[a][b])) for a, b in zip(cycle, cycle[1:])
    )


def layer_of(module):
    """The name in LAYERS that stands for ``module``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def imports_not_down_the_layers(graph):
    """Each import from one layer to the same or a higher one, described."""
    return [
        "%s imports %s (%s)" % (module, target, ", ".join(where))
        for module, targets in sorted(graph.items())
        for target, where in sorted(targets.items())
        if layer_of(module) != layer_of(target)
        and not RANK[layer_of(module)] > RANK[layer_of(target)]
    ]


# --- the tests --------------------------------------------------------------------


def test_the_package_imports_no_module_in_a_cycle():
    graph = import_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "an import cycle:\n" + describe_cycle(graph, cycle)


def test_every_import_goes_down_the_layers():
    upward = imports_not_down_the_layers(import_graph())
    assert not upward, "imports that do not go down the layers (LAYERS):\n" + "\n".join(upward)


def test_every_module_has_its_layer():
    """A new module is placed in LAYERS (and in the drawing) before it is
    checked: none goes unranked."""
    names = {layer_of(module) for module in import_graph()}
    assert names == set(RANK), (sorted(names - set(RANK)), sorted(set(RANK) - names))


def _drawn_layers():
    """The layers drawn in docs/how-it-works.md's "The package's layers",
    bottom first: each line names its modules (comma-separated) before its
    description."""
    text = (ROOT / "docs" / "how-it-works.md").read_text(encoding="utf-8")
    heading = "## The package's layers"
    assert heading in text, "docs/how-it-works.md has no section %r" % heading
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    assert "```text\n" in section, "the section %r draws no layers" % heading
    drawing = section.split("```text\n", 1)[1].split("```", 1)[0]
    layers = []
    for line in drawing.splitlines():
        match = re.match(r"\s*((?:[\w.]+)(?:, [\w.]+)*)(?:\s{2,}|$)", line)
        if match:
            layers.append(tuple(match.group(1).split(", ")))
    return layers[::-1]


def test_the_drawing_in_how_it_works_shows_these_layers():
    assert _drawn_layers() == LAYERS


def test_imports_for_the_type_checker_name_only_the_typed_api():
    files = _python_modules()
    for name, path in files.items():
        for target, line in _python_imports(name, path, set(files), type_checking=True):
            assert target == "frozenmap", (
                "%s: an import for the type checker names %s; name the public API "
                "(frozenmap/__init__.pyi) or import it where it runs" % (_where(path, line), target)
            )


# --- the test can fail --------------------------------------------------------------


def test_a_cycle_is_found_and_reported_with_its_imports():
    graph = {
        "a": {"b": ["a.py:3"]},
        "b": {"c": ["b.py:9"]},
        "c": {"a": ["c.py:1"]},
        "d": {"a": ["d.py:2"]},
    }
    cycle = find_cycle(graph)
    assert cycle == ["a", "b", "c", "a"]
    assert describe_cycle(graph, cycle).splitlines() == [
        "  a imports b (a.py:3)",
        "  b imports c (b.py:9)",
        "  c imports a (c.py:1)",
    ]
    assert find_cycle({"a": {"b": []}, "b": {}, "c": {"a": [], "b": []}}) is None


def test_an_import_up_or_across_the_layers_is_reported():
    graph = {
        "frozenmap._registry": {"frozenmap._diff": ["frozenmap/_registry.py:5"]},
        "frozenmap._diff": {"frozenmap._registry": ["frozenmap/_diff.py:3"]},
        "frozenmap.history": {"frozenmap.jsonpatch": ["frozenmap/history.py:7"]},
        "frozenmap._pycore.reads": {"frozenmap._pycore.champ": ["frozenmap/_pycore/reads.py:2"]},
    }
    assert imports_not_down_the_layers(graph) == [
        "frozenmap._registry imports frozenmap._diff (frozenmap/_registry.py:5)",
        "frozenmap.history imports frozenmap.jsonpatch (frozenmap/history.py:7)",
    ]


def test_function_level_and_computed_imports_count(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text(
        "import importlib\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from . import frozendict\n"
        "else:\n"
        "    from ._core import frozendict\n"
        "def f():\n"
        "    from .jsonpatch import diff_to_json_patch\n"
        "    from . import _freeze, os\n"
        "    import frozenmap.history\n"
        "    return importlib.import_module('frozenmap.versioned')\n"
    )
    known = {"frozenmap", "frozenmap._core", "frozenmap._freeze", "frozenmap.jsonpatch"}
    known.add("frozenmap.history")
    found = list(_python_imports("frozenmap.mod", path, known))
    assert sorted(found) == [
        ("frozenmap", 9),  # os is no submodule: the package's attribute
        ("frozenmap._core", 6),
        ("frozenmap._freeze", 9),
        ("frozenmap.history", 10),
        ("frozenmap.jsonpatch", 8),
        ("frozenmap.versioned", 11),
    ]
    assert list(_python_imports("frozenmap.mod", path, known, type_checking=True)) == [
        ("frozenmap", 4)
    ]
    computed = tmp_path / "computed.py"
    computed.write_text("import importlib\nimportlib.import_module('frozenmap._%score' % 'c')\n")
    with pytest.raises(AssertionError, match="computed.py:2: an import whose module is computed"):
        list(_python_imports("frozenmap.computed", computed, known))


def test_the_c_core_imports_are_read_from_its_sources():
    imported = {target for target, _ in _c_imports()}
    if not _c_files():  # pragma: no cover (a copy without the C sources)
        pytest.skip("no C sources here")
    assert "frozenmap._cold" in imported and "frozenmap._registry" in imported
