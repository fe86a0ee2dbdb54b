"""The README's tour and every docstring example run, against each core."""

import doctest
import pathlib

import pytest

import frozenmap

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _run(tests, globs):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    ran = 0
    for test in tests:
        test.globs.update(globs)
        runner.run(test)
        ran += len(test.examples)
    return runner.summarize(verbose=False), ran


@pytest.mark.skipif(not README.exists(), reason="README.md is not beside tests/")
def test_readme_tour(core, monkeypatch):
    # The README imports ``frozenmap.frozendict``: point it at the core under test.
    monkeypatch.setattr(frozenmap, "frozendict", core.frozendict)
    text = README.read_text(encoding="utf-8")
    test = doctest.DocTestParser().get_doctest(text, {}, "README.md", str(README), 0)
    (failed, _), ran = _run([test], {})
    assert ran > 10
    assert failed == 0


CORE_NAMES = {"frozendict", "Evolver"}
"""The public names each core defines; the others are written once, above the
cores, and run against whichever core the test's globals name."""


def _public_with_examples():
    """Every public name of the package whose docstring (or a method's) holds
    an example: none may be left out of the test below."""
    names = []
    for name in frozenmap.__all__:
        obj = getattr(frozenmap, name)
        docs = [getattr(obj, "__doc__", None)]
        if isinstance(obj, type):
            # (as _examples reads them: a dunder's value, such as 3.13's
            # __firstlineno__, would bring int's own docstring examples)
            docs += [
                getattr(v, "__doc__", None) for k, v in vars(obj).items() if not k.startswith("__")
            ]
        if name in CORE_NAMES or any(d and ">>>" in d for d in docs if isinstance(d, str)):
            names.append(name)
    return names


def _examples(obj, name):
    """The doctests of ``obj`` and, for a class, of its methods and properties."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    attrs = [obj]
    if isinstance(obj, type):
        attrs += [v for k, v in vars(obj).items() if not k.startswith("__")]
    tests = []
    for attr in attrs:
        func = getattr(attr, "__func__", getattr(attr, "fget", attr))
        if isinstance(getattr(func, "__doc__", None), str) and ">>>" in func.__doc__:
            label = "%s.%s" % (name, getattr(func, "__name__", name))
            tests.extend(finder.find(func, label, globs={}))
    return tests


def test_every_public_name_with_examples_is_checked():
    names = _public_with_examples()
    assert {"frozendict", "Evolver", "Diff", "History", "Versioned"} <= set(names)


@pytest.mark.parametrize("name", _public_with_examples())
def test_docstring_examples(core, monkeypatch, name):
    monkeypatch.setattr(frozenmap, "frozendict", core.frozendict)
    obj = getattr(core, name) if name in CORE_NAMES else getattr(frozenmap, name)
    tests = _examples(obj, name)
    globs = {n: getattr(frozenmap, n) for n in frozenmap.__all__}
    globs.update(frozendict=core.frozendict, Evolver=core.Evolver)
    (failed, _), ran = _run(tests, globs)
    assert ran > 0
    assert failed == 0
