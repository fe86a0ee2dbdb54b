"""What differs on PyPy: the pure core only, and hashes PyPy keeps as returned.

PyPy keeps the int a Python ``__hash__`` returns as the hash only when it is a
machine-word int; one computed through big-int arithmetic (the pure core's
frozenset-compatible finaliser) is hashed again, so ``hash(fd)`` came out
different from ``hash(frozenset(fd.items()))``.  The hash tests run on every
core and implementation; the install test on PyPy only.
"""

import os
import platform
import subprocess
import sys

import pytest

ON_PYPY = platform.python_implementation() == "PyPy"


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 31, 33, 100])
def test_hash_is_the_frozenset_hash_of_the_items(core, n):
    items = [("k%d" % i, i * 7) for i in range(n)]
    m = core.frozendict(items)
    assert hash(m) == hash(frozenset(items))
    # a derived version's hash comes from the accumulator, not a walk
    derived = m.set("k0", -1)
    assert hash(derived) == hash(frozenset(dict(items, k0=-1).items()))


@pytest.mark.skipif(not ON_PYPY, reason="PyPy's install and report")
def test_pypy_reports_the_pure_core_and_warns_of_nothing(tmp_path):
    env = dict(os.environ)
    env.pop("FROZENMAP_PURE_PYTHON", None)
    out = subprocess.run(
        [sys.executable, "-W", "error", "-m", "frozenmap"],
        capture_output=True,
        text=True,
        cwd=tmp_path,  # not the source tree: the installed package
        env=env,
        check=True,
    )
    assert "core: python (the C core is for CPython; this is PyPy)" in out.stdout
    assert out.stderr == ""
