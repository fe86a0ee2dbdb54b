"""Shared fixtures: every behavioural test runs against each core.

The ``core`` fixture is parametrized over ``["c", "python"]`` and yields a
namespace with ``frozendict``, ``Evolver``, ``Diff`` and ``name``.  A core that
cannot be imported is skipped locally with the reason, and is a failure when
``FROZENMAP_REQUIRE_C=1`` is set (CI sets it).

Hypothesis profiles: ``ci`` (bounded, the default under ``CI=true``), ``dev``
(the local default) and ``long`` (for deliberate soak runs); choose one with
``HYPOTHESIS_PROFILE=name``.  ``FROZENMAP_TEST_CORES=python`` limits a local
run to one core.
"""

import importlib
import os
import types

import pytest
from hypothesis import HealthCheck, settings

from frozenmap._common import Diff

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "dev", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)

# FROZENMAP_TEST_CORES=python (or c) restricts the run to one core, for work
# on one core while the other is being changed; CI never sets it.
CORE_NAMES = [
    name
    for name in ["c", "python"]
    if name in os.environ.get("FROZENMAP_TEST_CORES", "c,python").split(",")
]
_MODULES = {"c": "frozenmap._ccore", "python": "frozenmap._pycore"}


def _require_c():
    return os.environ.get("FROZENMAP_REQUIRE_C", "") not in ("", "0")


def load_core(name):
    """Import one core and return its namespace, or raise ImportError."""
    module = importlib.import_module(_MODULES[name])
    return types.SimpleNamespace(
        name=name,
        module=module,
        frozendict=module.frozendict,
        Evolver=module.Evolver,
        Diff=Diff,
    )


def available_cores():
    """The cores that import here, as namespaces (used by differential tests)."""
    found = []
    for name in CORE_NAMES:
        try:
            found.append(load_core(name))
        except ImportError:
            if name == "c" and _require_c():
                raise
    return found


@pytest.fixture(params=CORE_NAMES, scope="session")
def core(request):
    """The core under test: ``core.frozendict``, ``core.Evolver``, ``core.Diff``."""
    try:
        return load_core(request.param)
    except ImportError as exc:
        if request.param == "c" and _require_c():
            pytest.fail(
                "the C core is required (FROZENMAP_REQUIRE_C=1) but failed to import: %s" % exc
            )
        pytest.skip("%s core not available: %s" % (request.param, exc))


@pytest.fixture
def fd(core):
    """Shorthand for the frozendict class of the core under test."""
    return core.frozendict
