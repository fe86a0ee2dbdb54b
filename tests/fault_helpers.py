"""Harness helpers for the reliability suites.

Used by the hostile-input tests (``hostile/``), ``test_differential.py``,
``test_threads.py``, ``test_recursion.py``, ``test_scale.py`` and
``test_cleared_and_borrowed.py`` (and by ``fuzz/fuzz_ops.py``'s tests):
comparing items by identity, the slow-test switch, running Python in a
subprocess, and calling a type's ``tp_clear`` as the cyclic GC does.  The keys and values that fail on the *n-th* call into user
code (``FaultPlan``, ``FaultKey``, ``FaultValue``) are in ``keys.py``.
"""

import ctypes
import os
import platform
import subprocess
import sys
import textwrap

M61 = 2**61 - 1
"""CPython hashes integers modulo this prime: ``hash(k * M61) == 0`` for every k."""


def same_items(actual, expected):
    """Whether two item lists hold the very same key and value objects, in order."""
    actual = list(actual)
    expected = list(expected)
    if len(actual) != len(expected):
        return False
    return all(k1 is k2 and v1 is v2 for (k1, v1), (k2, v2) in zip(actual, expected))


def assert_same_items(mapping, expected, what="mapping"):
    items = list(mapping.items())
    assert same_items(items, expected), "%s holds %r, expected %r" % (
        what,
        [(id(k), id(v)) for k, v in items],
        [(id(k), id(v)) for k, v in expected],
    )


def slow_selected(config):
    """Whether ``-m`` selected slow tests explicitly (or FROZENMAP_SLOW=1 is set).

    Slow tests carry ``@pytest.mark.slow`` and are skipped otherwise, so a
    plain ``pytest tests`` stays fast.
    """
    if os.environ.get("FROZENMAP_SLOW", "") not in ("", "0"):
        return True
    expr = config.getoption("markexpr") or ""
    return "slow" in expr and "not slow" not in expr


def require_slow(request):
    import pytest

    if not slow_selected(request.config):
        pytest.skip("slow test: run with -m slow (or FROZENMAP_SLOW=1)")


def run_python(code, timeout=300, env=None):
    """Run ``code`` in a fresh interpreter with this tree importable.

    Returns the CompletedProcess; a crash (segfault, abort, stack overflow)
    shows as a negative return code instead of killing pytest.
    """
    import frozenmap

    here = os.path.dirname(os.path.abspath(__file__))
    # Whichever frozenmap this pytest imported (the installed one under
    # scripts/test.sh, the source tree with PYTHONPATH=.), the child imports too.
    root = os.path.dirname(os.path.dirname(os.path.abspath(frozenmap.__file__)))
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(
        [here, root] + ([full_env["PYTHONPATH"]] if full_env.get("PYTHONPATH") else [])
    )
    full_env.pop("FROZENMAP_PURE_PYTHON", None)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=here,
    )


def describe_crash(proc):
    """A failure message for a subprocess that did not exit cleanly."""
    how = (
        "killed by signal %d" % -proc.returncode
        if proc.returncode < 0
        else "exit status %d" % proc.returncode
    )
    return "subprocess %s\n--- stdout\n%s\n--- stderr\n%s" % (
        how,
        proc.stdout[-3000:],
        proc.stderr[-3000:],
    )


# PyTypeObject: tp_clear is the 25th pointer-sized field (after the object
# head, tp_name .. tp_flags, tp_doc, tp_traverse); the same on 3.10-3.15.
TP_CLEAR_INDEX = 24


def call_tp_clear(obj):
    """Run type(obj)'s tp_clear on obj, as the cyclic GC would (CPython only:
    it reads CPython's PyTypeObject layout; elsewhere the test is skipped)."""
    import pytest

    if platform.python_implementation() != "CPython":
        pytest.skip("calls tp_clear from CPython's PyTypeObject layout through ctypes")
    slots = ctypes.cast(id(type(obj)), ctypes.POINTER(ctypes.c_void_p))
    func = slots[TP_CLEAR_INDEX]
    assert func, "type has no tp_clear"
    inquiry = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object)
    return inquiry(func)(obj)  # PYFUNCTYPE: called with the GIL held
