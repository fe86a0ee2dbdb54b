"""Every hand-made mutant of scripts/mutants.py still applies.

A mutant is one textual change, found by its exact text, which must occur
exactly once in its file.  A refactor that changes or duplicates that text
makes the mutant stale, and the mutant run then stops before it starts; this
test fails instead, in the suite, so whoever did the refactor re-targets the
mutant at the same slip in the new code (same name, same kind).  Runs no
mutant and needs no core.
"""

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "mutants.py"

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason="no scripts/ (an installed copy)")


def _load():
    name = "_frozenmap_mutants_script"
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.spec_from_file_location(name, SCRIPT)
    module = importlib.util.module_from_spec(spec)
    # (dataclass looks its module up in sys.modules while building the class)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _mutants():
    mutants = _load()
    return [*mutants.MUTANTS, mutants.CANARY]


def _source(module_key):
    mutants = _load()
    return (mutants.ROOT / mutants.FILES[module_key]).read_text(encoding="utf-8")


@pytest.mark.parametrize("mutant", _mutants() if SCRIPT.exists() else [], ids=lambda m: m.name)
def test_mutant_text_occurs_once(mutant):
    count = _source(mutant.module).count(mutant.old)
    assert count == 1, "mutant %s: its text occurs %d times in %s (must be once): re-target it" % (
        mutant.name,
        count,
        _load().FILES[mutant.module],
    )


@pytest.mark.parametrize("mutant", _mutants() if SCRIPT.exists() else [], ids=lambda m: m.name)
def test_mutant_changes_the_text(mutant):
    assert mutant.old != mutant.new
    assert _load().apply(_source(mutant.module), mutant) != _source(mutant.module)


def test_mutant_names_are_distinct():
    names = [m.name for m in _mutants()]
    assert len(names) == len(set(names))


def test_every_mutant_names_known_tests():
    mutants = _load()
    tests = mutants.ROOT / "tests"
    for mutant in _mutants():
        assert mutant.module in mutants.FILES and mutant.module in mutants.TESTS, mutant.name
        for name in mutants.tests_for(mutant, [], False):
            assert (tests / name).is_file(), "mutant %s: no test file %s" % (mutant.name, name)


def test_every_module_file_exists():
    mutants = _load()
    for key, path in mutants.FILES.items():
        assert (mutants.ROOT / path).is_file(), "FILES[%r]: no %s" % (key, path)
