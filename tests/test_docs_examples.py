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


@pytest.mark.parametrize("name", ["frozendict", "Evolver"])
def test_docstring_examples(core, monkeypatch, name):
    monkeypatch.setattr(frozenmap, "frozendict", core.frozendict)
    cls = getattr(core, name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = []
    for attr in [cls] + [v for k, v in vars(cls).items() if not k.startswith("__")]:
        func = getattr(attr, "__func__", attr)
        if getattr(func, "__doc__", None) and ">>>" in func.__doc__:
            tests.extend(
                finder.find(func, "%s.%s" % (name, getattr(func, "__name__", name)), globs={})
            )
    (failed, _), ran = _run(tests, {"frozendict": core.frozendict})
    assert ran > 0
    assert failed == 0
