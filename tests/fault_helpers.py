"""Fault injection and harness helpers for the reliability suites.

Used by ``test_adversarial.py``, ``test_differential.py``, ``test_threads.py``,
``test_recursion.py`` and ``test_scale.py`` (and by ``fuzz/fuzz_ops.py``'s
tests).  ``helpers.py`` has the basic keys (``HashKey``, ``Crasher``); this
module adds keys and values that fail on the *n-th* call into user code, so a
test can sweep n over every call an operation makes and hit each failure point
once.

``FaultPlan`` counts calls of ``__hash__``, ``__eq__``, ``__bool__`` (of what
``__eq__`` returns) and ``__repr__`` on every ``FaultKey`` and ``FaultValue``
that shares it, and raises the chosen exception on call number ``fail_at``.
"""

import os
import subprocess
import sys
import textwrap

from helpers import CrashError

M61 = 2**61 - 1
"""CPython hashes integers modulo this prime: ``hash(k * M61) == 0`` for every k."""


class FaultPlan:
    """A shared call counter that raises ``error`` on call number ``fail_at``."""

    def __init__(self):
        self.calls = 0
        self.fail_at = 0  # 0: never fail, just count
        self.error = CrashError
        self.fired = None

    def count(self):
        """Count calls from now on without failing."""
        self.calls = 0
        self.fail_at = 0
        self.fired = None

    def arm(self, n, error=CrashError):
        """Fail on the n-th call from now on (n >= 1)."""
        self.calls = 0
        self.fail_at = n
        self.error = error
        self.fired = None

    def disarm(self):
        self.fail_at = 0

    def __reduce__(self):
        # A pickled FaultKey takes an idle plan along, never an armed one.
        return (FaultPlan, ())

    def tick(self, what):
        self.calls += 1
        if self.calls == self.fail_at:
            self.fired = what
            self.fail_at = 0
            raise self.error("injected fault at call %d (%s)" % (self.calls, what))


class FaultBool:
    """What ``FaultKey.__eq__`` returns: its truth test is one more call into user code."""

    __slots__ = ("value", "plan")

    def __init__(self, value, plan):
        self.value = value
        self.plan = plan

    def __bool__(self):
        self.plan.tick("bool")
        return self.value


class FaultKey:
    """A key with a chosen hash, equal to FaultKeys of the same name.

    Every ``__hash__``, ``__eq__`` (and the truth test of its result) and
    ``__repr__`` call ticks the plan.
    """

    __slots__ = ("name", "hash_value", "plan", "__weakref__")

    def __init__(self, name, hash_value, plan):
        self.name = name
        self.hash_value = hash_value
        self.plan = plan

    def __hash__(self):
        self.plan.tick("hash")
        return self.hash_value

    def __eq__(self, other):
        self.plan.tick("eq")
        if not isinstance(other, FaultKey):
            return NotImplemented
        return FaultBool(self.name == other.name, self.plan)

    def __ne__(self, other):
        self.plan.tick("ne")
        if not isinstance(other, FaultKey):
            return NotImplemented
        return FaultBool(self.name != other.name, self.plan)

    def __repr__(self):
        self.plan.tick("repr")
        return "K%s" % (self.name,)


class FaultValue:
    """A value whose ``__hash__``, ``__eq__`` and ``__repr__`` tick the plan."""

    __slots__ = ("payload", "plan", "__weakref__")

    def __init__(self, payload, plan):
        self.payload = payload
        self.plan = plan

    def __hash__(self):
        self.plan.tick("vhash")
        return hash(self.payload)

    def __eq__(self, other):
        self.plan.tick("veq")
        if not isinstance(other, FaultValue):
            return NotImplemented
        return FaultBool(self.payload == other.payload, self.plan)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else FaultBool(not result.value, self.plan)

    def __repr__(self):
        self.plan.tick("vrepr")
        return "V%s" % (self.payload,)


class EqBomb:
    """A key whose ``__eq__`` always raises; equal keys are only itself."""

    __slots__ = ("hash_value", "label")

    def __init__(self, hash_value, label="bomb"):
        self.hash_value = hash_value
        self.label = label

    def __hash__(self):
        return self.hash_value

    def __eq__(self, other):
        raise CrashError("eq of %s" % (self.label,))

    __ne__ = __eq__

    def __repr__(self):
        return "EqBomb(%r)" % (self.hash_value,)


class HashBomb:
    """A key whose ``__hash__`` raises ``CrashError`` (not a TypeError)."""

    def __hash__(self):
        raise CrashError("hash of HashBomb")

    def __repr__(self):
        return "HashBomb()"


class TypeErrorHash:
    """A key whose ``__hash__`` raises an exact ``TypeError`` (reworded by the cores)."""

    def __hash__(self):
        raise TypeError("TypeErrorHash refuses to hash")

    def __repr__(self):
        return "TypeErrorHash()"


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
