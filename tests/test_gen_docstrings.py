"""scripts/gen_docstrings.py: the C core's docstrings and method signatures come
from the pure core of the checkout the script sits in.

The script runs from a checkout with any Python (it puts the checkout first on
the path), reads that checkout's pure core and no other (a copy of the tree
with one docstring changed is reported stale; a script with no ``frozenmap``
beside it refuses to read the installed one), and the built C core carries
exactly the signatures it derives from the pure core's ``inspect.signature``.
"""

import importlib.util
import inspect
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import available_cores

from frozenmap import _pycore

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "gen_docstrings.py"


def _script():
    if not SCRIPT.is_file() or not (ROOT / "frozenmap" / "_pycore").is_dir():
        pytest.skip("scripts/gen_docstrings.py not found (tests run outside a checkout)")
    return SCRIPT


def _generator():
    """The script as a module (importing it reads no frozenmap: only main does)."""
    spec = importlib.util.spec_from_file_location("gen_docstrings", _script())
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(script, *args, cwd):
    env = {"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _methods(cls, generator):
    names = sorted(k for k in vars(cls) if not k.startswith("_"))
    return names + [d for d in generator.DUNDERS if d in vars(cls)]


def test_the_c_cores_method_signatures_are_the_pure_cores():
    if "c" not in {core.name for core in available_cores()}:
        pytest.skip("the C core does not import here")
    from frozenmap._ccore import _cfrozenmap

    generator = _generator()
    checked = 0
    for pure, c in (
        (_pycore.frozendict, _cfrozenmap.frozendict),
        (_pycore.Evolver, _cfrozenmap.Evolver),
    ):
        for name in _methods(pure, generator):
            expected = generator.text_signature(pure, name)
            if expected is None:
                continue
            c_text = getattr(c, name).__text_signature__
            assert name + (c_text or "<none>") == expected, "%s.%s" % (pure.__name__, name)
            checked += 1
    assert checked >= 40  # every public method of both types has one


def test_text_signatures_read_back_as_the_pure_signature():
    """What the script writes parses as the pure method's own parameters:
    names, kinds and defaults (a sentinel default aside)."""
    generator = _generator()
    get = generator.text_signature(_pycore.frozendict, "get")
    parsed = inspect.signature(eval("lambda %s: None" % get[len("get(") : -1].replace("$", "")))
    pure = inspect.signature(_pycore.frozendict.get)
    assert [(p.name, p.kind, p.default) for p in parsed.parameters.values()] == [
        (p.name, p.kind, p.default) for p in pure.parameters.values()
    ]
    assert generator.text_signature(_pycore.Evolver, "pop").endswith(
        "default=<unrepresentable>, /)"
    )


def test_check_passes_from_another_folder_with_any_python():
    result = _run(_script(), "--check", cwd="/")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "matches" in result.stdout


def test_it_reads_the_checkout_it_sits_in(tmp_path):
    """A copy of the tree whose pure core has one docstring changed is stale
    there, although the installed frozenmap is unchanged."""
    _script()
    tree = tmp_path / "tree"
    shutil.copytree(
        ROOT / "frozenmap", tree / "frozenmap", ignore=shutil.ignore_patterns("*.so", "__pycache__")
    )
    (tree / "scripts").mkdir()
    shutil.copy2(SCRIPT, tree / "scripts" / "gen_docstrings.py")
    source = tree / "frozenmap" / "_pycore" / "frozendict.py"
    text = source.read_text()
    marker = "Return an exact frozendict with the same items"
    assert marker in text
    source.write_text(
        text.replace(marker, "Return a copy: an exact frozendict with the same items", 1)
    )
    result = _run(tree / "scripts" / "gen_docstrings.py", "--check", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "stale" in result.stdout


def test_it_refuses_to_read_an_installed_copy(tmp_path):
    _script()
    (tmp_path / "scripts").mkdir()
    lone = tmp_path / "scripts" / "gen_docstrings.py"
    shutil.copy2(SCRIPT, lone)
    result = _run(lone, "--check", cwd=tmp_path)
    assert result.returncode != 0
    # frozenmap is installed where the tests run, so the import finds that copy
    assert "another copy" in result.stderr, result.stderr
    assert str(tmp_path / "frozenmap" / "_pycore") in result.stderr
    assert not (tmp_path / "frozenmap").exists()  # nothing written


def test_the_scripts_own_examples_hold():
    import doctest

    assert doctest.testmod(_generator()).failed == 0
