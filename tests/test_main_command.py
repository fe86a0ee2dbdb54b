"""The commands a new user runs first: ``python -m frozenmap`` (with ``--help``,
and from a clone's root, where the source tree shadows the installed package)
and ``bash scripts/bench.sh --help`` (at once, nothing built).

Each runs in a child process, as the user would run it.
"""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import frozenmap

ROOT = pathlib.Path(__file__).resolve().parent.parent
HAVE_SOURCE = (ROOT / "pyproject.toml").exists() and (
    ROOT / "frozenmap" / "_ccore" / "module.c"
).exists()
CPYTHON = sys.implementation.name == "cpython"


def _run(args, cwd, **env):
    """``args`` in ``cwd`` with this Python, without the test run's path settings."""
    full_env = dict(os.environ)
    for name in ("PYTHONPATH", "FROZENMAP_PURE_PYTHON", "PYTHONWARNINGS"):
        full_env.pop(name, None)
    full_env.update(env)
    return subprocess.run(
        args, cwd=str(cwd), env=full_env, capture_output=True, text=True, timeout=120
    )


def test_python_m_frozenmap_help_prints_a_usage(tmp_path):
    proc = _run([sys.executable, "-m", "frozenmap", "--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: python -m frozenmap [-h]")
    assert "which core is loaded" in " ".join(proc.stdout.split())
    assert "core:" not in proc.stdout  # the help only, no report
    wrong = _run([sys.executable, "-m", "frozenmap", "--cores"], tmp_path)
    assert wrong.returncode == 2 and "unrecognized arguments: --cores" in wrong.stderr


@pytest.mark.skipif(not HAVE_SOURCE, reason="needs the source tree beside tests/")
@pytest.mark.skipif(not CPYTHON, reason="the C core is for CPython")
def test_a_source_tree_that_shadows_the_installed_package_is_named(tmp_path):
    # A clone's root: the package's sources (no built extension) and pyproject.toml.
    shutil.copytree(
        ROOT / "frozenmap",
        tmp_path / "frozenmap",
        ignore=shutil.ignore_patterns("__pycache__", "_cfrozenmap*.so", "_cfrozenmap*.pyd"),
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    proc = _run([sys.executable, "-m", "frozenmap"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    core = next(line for line in proc.stdout.splitlines() if line.startswith("core:"))
    assert core.startswith("core: python (")
    assert "source tree %s, where the C core is not built" % (tmp_path / "frozenmap") in core
    assert "run from another directory (e.g. cd /tmp)" in core
    assert "was not built when frozenmap was installed" not in proc.stdout + proc.stderr
    assert "reinstall" not in proc.stdout + proc.stderr
    installed = pathlib.Path(frozenmap.__file__).resolve().parent
    if ROOT not in installed.parents:  # this test run uses an installed frozenmap
        assert "shadows the installed frozenmap (%s)" % installed in core
    # the import warns once, with the same reason
    assert proc.stderr.count("RuntimeWarning") == 1 and "shadows" in proc.stderr
    # from another directory, the installed package is used: no word of a source tree
    elsewhere = _run([sys.executable, "-m", "frozenmap"], tmp_path / "frozenmap" / "_pycore")
    assert "source tree" not in elsewhere.stdout + elsewhere.stderr


@pytest.mark.skipif(not HAVE_SOURCE, reason="needs the source tree beside tests/")
def test_bench_sh_help_is_at_once_and_builds_nothing(tmp_path):
    venv = tmp_path / "venv"
    proc = _run(
        ["bash", str(ROOT / "scripts" / "bench.sh"), "--quick", "--help"],
        tmp_path,
        VENV=str(venv),
        PYTHON=sys.executable,
        COLUMNS="70",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: bash scripts/bench.sh [OPTIONS]")
    assert "--quick" in proc.stdout and "--sizes" in proc.stdout
    assert not venv.exists()  # no environment made, nothing installed or built
    # names are wrapped whole: every library's name is on one line
    from frozenmap.bench import LIBRARY_NAMES

    for name in LIBRARY_NAMES:
        assert name in proc.stdout, name
