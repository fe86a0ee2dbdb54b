"""The public names: ``frozenmap.__all__`` is written twice, in
``frozenmap/__init__.py`` and in the stub ``frozenmap/__init__.pyi`` (type
checkers read a stub's ``__all__`` only as a literal list), so the two
lists must be the same, in the same order, and every name must exist."""

import ast
import pathlib

import frozenmap


def _stub_all():
    stub = pathlib.Path(frozenmap.__file__).with_suffix(".pyi")
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["__all__"]:
            return ast.literal_eval(node.value)
    raise AssertionError("%s assigns no __all__" % stub)


def test_the_stub_exports_what_the_package_exports():
    assert _stub_all() == frozenmap.__all__


def test_every_exported_name_exists_once():
    assert len(set(frozenmap.__all__)) == len(frozenmap.__all__)
    for name in frozenmap.__all__:
        assert hasattr(frozenmap, name), name
