"""Shared fixtures: every behavioural test runs against each core.

The ``core`` fixture is parametrized over ``["c", "python"]`` and yields a
namespace with ``frozendict``, ``Evolver``, ``Diff`` and ``name``.  A core that
cannot be imported is skipped locally with the reason, and is a failure when
``FROZENMAP_REQUIRE_C=1`` is set (CI sets it) on CPython.  The C core is for
CPython only: on PyPy and other implementations it is never built, so there it
is skipped with that reason even under ``FROZENMAP_REQUIRE_C=1``.

Hypothesis profiles: ``ci`` (bounded, the default under ``CI=true``), ``dev``
(the local default) and ``long`` (for deliberate soak runs); choose one with
``HYPOTHESIS_PROFILE=name``.  ``FROZENMAP_TEST_CORES=python`` limits a local
run to one core.
"""

import importlib
import os
import platform
import types

import pytest
from hypothesis import HealthCheck, settings

from frozenmap._diff import Diff

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


ON_CPYTHON = platform.python_implementation() == "CPython"


def _require_c():
    """Whether a C core that does not import fails the run (CPython only)."""
    return ON_CPYTHON and os.environ.get("FROZENMAP_REQUIRE_C", "") not in ("", "0")


# Tests of CPython behaviour the pure core relies on or mirrors, which PyPy
# does differently by design; skipped there with the reason (file::test).
_IDENTICAL_NUMBERS = "PyPy: equal ints and floats are identical (`is` compares values)"
_FINALIZERS_LATER = "PyPy runs finalizers at a later collection, not when the last reference goes"
_NEEDS_C_COLUMN = "expects the C core's column (CPython)"
_ALL_WEAKREFABLE = "PyPy: every object accepts weak references (no __weakref__ slot needed)"
_REFCOUNTS = "sys.getrefcount: reference counts are CPython's (both cores are checked there)"
PYPY_SKIPS = {
    "test_wrong_answers.py::test_hashing_a_deep_nesting_says_while_hashing_a_frozendict": (
        "PyPy leaves no headroom after a RecursionError: a call in the except clause"
        " fails, so the pure core re-raises Python's own message unchanged there"
    ),
    "test_raising_at_every_user_call.py::test_failure_paths_do_not_leak_references": _REFCOUNTS,
    "test_raising_at_every_user_call.py::test_evolver_failure_paths_do_not_leak_references": _REFCOUNTS,
    "test_colliding_and_equal_keys.py::test_nan_keys_are_distinct_unless_identical": _IDENTICAL_NUMBERS,
    "test_gc_and_finalizers.py::test_dropping_many_versions_with_finalizers_that_derive": (
        _FINALIZERS_LATER
    ),
    "test_flat_native_ops.py::test_evolver_freeze_from_a_finalizer_during_an_edit": (
        _FINALIZERS_LATER
    ),
    "test_reentry_sweep.py::test_failed_update_shows_finalizers_the_state_before_it": (
        _FINALIZERS_LATER
    ),
    "test_derivations.py::test_set_of_an_equal_but_distinct_value_stores_the_new_object": (
        _IDENTICAL_NUMBERS
    ),
    "test_diff.py::test_changed_uses_identity_then_equality": _IDENTICAL_NUMBERS,
    "test_merge_sharing.py::test_or_of_an_equal_but_distinct_value_takes_it": _IDENTICAL_NUMBERS,
    "test_rules.py::test_values_membership_tries_identity_first": _IDENTICAL_NUMBERS,
    "test_rules.py::test_items_membership_tries_identity_first": _IDENTICAL_NUMBERS,
    "test_rules.py::test_equality_and_diff_try_identity_first": _IDENTICAL_NUMBERS,
    "test_rules_in_tries.py::test_equality_matches_values_by_identity_first": _IDENTICAL_NUMBERS,
    "test_rules.py::test_mapping_keys_are_read_as_dict_reads_them": (
        "asserts CPython's dict(m) walk of a keys() list; PyPy's dict reads it otherwise"
    ),
    "test_bench_memory.py::test_construction_peak_stays_near_the_finished_map": (
        "construction's peak is a tracemalloc figure (PyPy has none)"
    ),
    "test_pep814_ops.py::test_value_equality_uses_identity_first": _IDENTICAL_NUMBERS,
    "test_pep814_read.py::test_identity_is_checked_before_equality": _IDENTICAL_NUMBERS,
    "test_pep814_objects.py::test_exact_frozendict_has_no_weak_references": _ALL_WEAKREFABLE,
    "test_pep814_objects.py::test_slotted_subclass_without_weakref_slot_has_none": (
        _ALL_WEAKREFABLE
    ),
    "test_pep814_ops.py::test_or_with_mappingproxy": (
        "PyPy's mappingproxy has no reflected | for other mappings"
    ),
    "test_gc_and_finalizers.py::test_a_mapping_read_while_its_tp_clear_releases_values": (
        "calls tp_clear from CPython's PyTypeObject layout through ctypes"
    ),
    "test_gc_and_finalizers.py::test_an_iterator_advanced_while_its_tp_clear_releases_values": (
        "calls tp_clear from CPython's PyTypeObject layout through ctypes"
    ),
    "test_bench_report.py::test_quick_plan_covers_the_readme_table_at_100000": _NEEDS_C_COLUMN,
    "test_bench_report.py::test_a_tiny_real_run_reports_interleaved_ratios": _NEEDS_C_COLUMN,
    "test_gc_and_finalizers.py::test_gc_finalizer_freezing_an_evolver_mid_edit_sees_a_whole_version": (
        "gc.set_threshold: PyPy's collector has no generation thresholds"
    ),
    # only the parameters named: {file::test: (parameter, value, reason)}
    "test_view_setops.py::test_view_set_operations_match_the_reference": (
        "reference",
        "dict",
        "PyPy's dict items views make a set of their own items first: an unhashable"
        " value raises where CPython's (and frozenmap's) set operations do not hash it",
    ),
    "test_reentry_sweep.py::test_user_code_running_another_operation_on_the_same_evolver": (
        "mode",
        "del",
        _FINALIZERS_LATER,
    ),
}


def pytest_collection_modifyitems(config, items):
    """On PyPy, skip the tests of ``PYPY_SKIPS`` with their reasons."""
    if platform.python_implementation() != "PyPy":
        return
    for item in items:
        where = "%s::%s" % (item.path.name, item.originalname)
        skip = PYPY_SKIPS.get(where)
        if isinstance(skip, tuple):
            name, value, reason = skip
            callspec = getattr(item, "callspec", None)
            skip = reason if callspec is not None and callspec.params.get(name) == value else None
        if skip is not None:
            item.add_marker(pytest.mark.skip(reason=skip))


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
        if request.param == "c" and not ON_CPYTHON:
            pytest.skip("the C core is for CPython; this is %s" % platform.python_implementation())
        pytest.skip("%s core not available: %s" % (request.param, exc))


@pytest.fixture
def fd(core):
    """Shorthand for the frozendict class of the core under test."""
    return core.frozendict
