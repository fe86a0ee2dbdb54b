"""scripts/checks: each check has its own number, which gives the order
scripts/test.sh runs it in (0x: static checks, before pytest); and
``scripts/test.sh --help`` answers at once."""

import os
import re

import pytest

CHECKS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "checks"
)


def _checks():
    if not os.path.isdir(CHECKS):
        pytest.skip("scripts/checks not found (tests run outside the source tree)")
    return sorted(name for name in os.listdir(CHECKS) if name.endswith(".sh"))


def test_every_check_is_named_by_a_unique_number_and_a_name():
    names = _checks()
    assert names
    for name in names:
        assert re.fullmatch(r"[0-9]{2}-[a-z0-9-]+\.sh", name), name
    numbers = [name[:2] for name in names]
    assert len(set(numbers)) == len(numbers), names
    bare = [name[3:] for name in names]
    assert len(set(bare)) == len(bare), "test.sh --only NAME would be ambiguous: %s" % names


def test_lint_runs_before_typing_and_typing_before_the_other_pythons():
    order = [name[3:-3] for name in _checks()]
    assert order.index("lint") < order.index("typing") < order.index("versions")


TEST_SH = os.path.join(os.path.dirname(CHECKS), "test.sh")


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["--only", "lint", "--help"]])
def test_test_sh_help_prints_its_usage_and_builds_nothing(tmp_path, args):
    """``test.sh --help`` answers from its opening comment before anything
    else: no venv is created and no Python, pip or compiler is run.  Every
    interpreter it could reach (``$PYTHON``, and ``python3``/``pip`` on the
    PATH) is a stub that leaves a mark, and ``$VENV`` points at a folder that
    must stay absent."""
    if not os.path.isfile(TEST_SH):
        pytest.skip("scripts/test.sh not found (tests run outside the source tree)")
    import subprocess

    stubs = tmp_path / "bin"
    stubs.mkdir()
    marks = tmp_path / "ran"
    for name in ("python", "python3", "pip", "pip3", "gcc", "cc"):
        stub = stubs / name
        stub.write_text('#!/bin/sh\necho "%s $*" >> "%s"\nexit 1\n' % (name, marks))
        stub.chmod(0o755)
    venv = tmp_path / "venv"
    env = dict(
        os.environ,
        PATH="%s%s%s" % (stubs, os.pathsep, os.environ.get("PATH", "")),
        PYTHON=str(stubs / "python3"),
        VENV=str(venv),
        TMPDIR=str(tmp_path),
    )
    result = subprocess.run(
        ["bash", TEST_SH, *args], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "Usage:" in result.stdout and "--only NAME" in result.stdout
    assert "--help" in result.stdout
    assert result.stderr == ""
    assert not marks.exists(), marks.read_text()
    assert not venv.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin"]  # no source copy made
