"""The examples in the package's module docstrings run, on both cores.

The public names' examples are tests/test_docs_examples.py's; these are the
ones that open a module (``frozenmap._registry``, ``frozenmap._diff``, ...).
"""

import doctest
import importlib
from pathlib import Path

import pytest

import frozenmap

PACKAGE = Path(frozenmap.__file__).resolve().parent


def _modules_with_examples():
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] in ("__init__", "__main__"):
            continue
        name = ".".join(parts)
        if name.startswith("frozenmap.bench"):
            continue  # optional dependencies
        doc = importlib.import_module(name).__doc__
        if doc and ">>>" in doc:
            names.append(name)
    return names


def test_the_split_modules_have_examples():
    assert {"frozenmap._registry", "frozenmap._diff", "frozenmap._core"} <= set(
        _modules_with_examples()
    )


@pytest.mark.parametrize("name", _modules_with_examples())
def test_module_docstring_examples(core, monkeypatch, name):
    monkeypatch.setattr(frozenmap, "frozendict", core.frozendict)
    module = importlib.import_module(name)
    test = doctest.DocTestParser().get_doctest(module.__doc__, {}, name, module.__file__, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    assert test.examples
