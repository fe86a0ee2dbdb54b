"""Which core loads, and saying so: the import warning, ``python -m frozenmap``,
and builds that fail or skip the C core (with a stale ``build/`` folder too).

The build tests run ``pip wheel`` on a clean copy of the source tree, without
network (``--no-build-isolation``: the test extra installs setuptools>=77).
They are skipped when the source tree is not beside tests/ (an sdist without it).
"""

import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest
from fault_helpers import run_python

ROOT = pathlib.Path(__file__).resolve().parent.parent
HAVE_SOURCE = (ROOT / "setup.py").exists() and (ROOT / "frozenmap" / "_ccore" / "module.c").exists()
CPYTHON = sys.implementation.name == "cpython"


def _has_extension(names):
    return any("/_cfrozenmap." in n and n.endswith((".so", ".pyd")) for n in names)


# A child that cannot load the C extension, as when it was never built.
BLOCK_C_CORE = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "frozenmap._ccore._cfrozenmap":
            raise ModuleNotFoundError("No module named %r" % name, name=name)
sys.meta_path.insert(0, Block())
"""


def test_python_m_frozenmap_names_version_core_and_reason():
    proc = run_python("import runpy; runpy.run_module('frozenmap', run_name='__main__')")
    assert proc.returncode == 0, proc.stderr
    import frozenmap

    lines = proc.stdout.splitlines()
    assert lines[0].startswith("frozenmap %s on " % frozenmap.__version__)
    assert lines[1].startswith("core: %s (" % frozenmap.IMPLEMENTATION)
    assert proc.stderr == ""


def test_pure_python_switch_is_silent_and_named():
    proc = run_python(
        "import runpy; runpy.run_module('frozenmap', run_name='__main__')",
        env={"FROZENMAP_PURE_PYTHON": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "core: python (FROZENMAP_PURE_PYTHON=1 is set)" in proc.stdout
    assert proc.stderr == ""


@pytest.mark.skipif(not CPYTHON, reason="the C core and its warning are for CPython")
def test_missing_c_core_warns_once_with_the_reason_and_the_remedy():
    proc = run_python(
        BLOCK_C_CORE
        + "import warnings\n"
        + "with warnings.catch_warnings(record=True) as caught:\n"
        + "    warnings.simplefilter('always')\n"
        + "    import frozenmap, importlib\n"
        + "    import frozenmap._pycore\n"
        + "print(frozenmap.IMPLEMENTATION)\n"
        + "print(len(caught), caught[0].category.__name__)\n"
        + "print(caught[0].message)\n"
        + "print(frozenmap._CORE_REASON)\n"
    )
    assert proc.returncode == 0, proc.stderr
    implementation, count, message, reason = proc.stdout.splitlines()
    assert implementation == "python"
    assert count == "1 RuntimeWarning"
    assert "slower pure-Python core" in message
    assert "it was not built when frozenmap was installed" in message
    assert "C compiler" in message and "FROZENMAP_PURE_PYTHON=1" in message
    assert reason == "the C core is not available: it was not built when frozenmap was installed"


@pytest.mark.skipif(not CPYTHON, reason="the C core and its warning are for CPython")
def test_missing_c_core_with_the_switch_set_does_not_warn():
    proc = run_python(
        BLOCK_C_CORE + "import frozenmap; print(frozenmap.IMPLEMENTATION)",
        env={"FROZENMAP_PURE_PYTHON": "1", "PYTHONWARNINGS": "error"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "python" and proc.stderr == ""


# --- real builds -------------------------------------------------------------------


def _clean_copy(dest):
    """The source tree as a fresh clone has it (scripts/clean-copy.sh)."""
    subprocess.run(
        ["bash", "-c", '. scripts/clean-copy.sh && clean_copy "$1"', "clean-copy", str(dest)],
        cwd=ROOT,
        env=dict(os.environ, ROOT=str(ROOT)),
        check=True,
    )


def _build_wheel(src, out, **env):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("FROZENMAP_")}
    full_env.update(env)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-q",
            "-w",
            str(out),
            str(src),
        ],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = out.glob("*.whl")
    return wheel


def _import_from(wheel, target, env=None):
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("FROZENMAP_")}
    full_env["PYTHONPATH"] = str(target)
    full_env.update(env or {})
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import frozenmap; print(frozenmap.__file__); print(frozenmap.IMPLEMENTATION)",
        ],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=str(target),
        timeout=120,
    )


@pytest.fixture(scope="module")
def build_tools():
    if not HAVE_SOURCE or shutil.which("bash") is None:
        pytest.skip("needs the source tree beside tests/ (and bash)")
    if not CPYTHON:
        pytest.skip("builds the C core: CPython only")
    try:
        import setuptools
    except ImportError:
        pytest.skip("setuptools is not installed")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip("setuptools>=77 is needed (the test extra installs it)")


def test_failed_build_with_a_stale_build_folder_ships_no_extension_and_warns(build_tools, tmp_path):
    src = tmp_path / "src"
    _clean_copy(src)
    good = _build_wheel(src, tmp_path / "good")
    names = zipfile.ZipFile(good).namelist()
    assert _has_extension(names), names
    assert not any(
        n.endswith((".c", ".h", "_gen_docstrings.py", "_build_status.txt")) for n in names
    ), names
    assert (src / "build").is_dir()  # left behind, as a user's tree would have it

    # The same tree, now without a working compiler: touching a source forces
    # a rebuild, which fails; the extension from the first build must not ship.
    (src / "frozenmap" / "_ccore" / "module.c").touch()
    failed = _build_wheel(src, tmp_path / "failed", CC="false", CXX="false")
    names = zipfile.ZipFile(failed).namelist()
    assert not _has_extension(names), names
    assert "frozenmap/_ccore/_build_status.txt" in names

    proc = _import_from(failed, tmp_path / "site")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith(str(tmp_path / "site"))
    assert proc.stdout.splitlines()[1] == "python"
    assert proc.stderr.count("RuntimeWarning") == 1, proc.stderr
    assert "its build failed when frozenmap was installed" in proc.stderr
    assert "C compiler" in proc.stderr


def test_pure_build_records_the_choice_and_does_not_warn(build_tools, tmp_path):
    src = tmp_path / "src"
    _clean_copy(src)
    wheel = _build_wheel(src, tmp_path / "pure", FROZENMAP_PURE_PYTHON="1")
    assert wheel.name.endswith("-py3-none-any.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "frozenmap/_ccore/_build_status.txt" in names
    assert not _has_extension(names), names
    proc = _import_from(wheel, tmp_path / "site", env={"PYTHONWARNINGS": "error"})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.splitlines()[1] == "python"
