"""The two cores make the same user calls, in the same order, for every operation.

Each operation of the registry (``tests/operations.py``, the ``transcript``
engine) runs on the C core and on the pure core with keys, values,
positions and functions that record their calls -- ``__hash__``, ``__eq__``
and ``__ne__`` (with both objects' labels, the called side first),
``__index__``, the arguments of a function, and the finalizers of what the
operation drops -- and the two transcripts must be identical, as must the
results (``tests/transcript_engine.py`` says how).

* ``test_both_cores_make_the_same_user_calls``: hypothesis draws the operands
  (maps of 0-100 keys around the flat form's limit of 32, colliding keys,
  keys whose hashes differ in their high bits only, related and unrelated
  operands in both directions, Evolvers edited before the call), one test per
  operation.
* ``test_the_seeded_sweep_finds_no_difference``: a fixed seed, the same space,
  every operation on each of ``SWEEP_CASES`` cases, counted per operation;
  ``test_the_seeded_sweep_counts`` prints the counts (``pytest -s``).

An operation whose calls differ is listed in ``DIFFERS_TODAY`` with the
reason (a strict xfail, so that the mark goes when the cores agree again);
the list is empty.
"""

import collections
import dataclasses
import platform
import random
import time
from functools import lru_cache

import operations as registry
import pytest
import transcript_engine as te
from conftest import available_cores
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from keys import CALLS, RecordingKey
from transcript_engine import Case, KeyPick, MapSpec

CORES = available_cores()  # raises under FROZENMAP_REQUIRE_C=1 if the C core is missing

finalizers_run_at_once = pytest.mark.skipif(
    platform.python_implementation() == "PyPy",
    reason="PyPy runs finalizers at a later collection, not when the last reference goes",
)

needs_both_cores = pytest.mark.skipif(
    len(CORES) < 2,
    reason="comparing transcripts needs both cores; only %s imports"
    % (", ".join(c.name for c in CORES) or "no core"),
)

DIFFERS_TODAY: dict = {}
"""The operations whose transcripts differ between the cores today, with why."""


def _per_operation():
    """One parameter per operation of the engine, marked if it differs today."""
    return [
        pytest.param(
            entry.name,
            marks=[pytest.mark.xfail(strict=True, reason=DIFFERS_TODAY[entry.name])]
            if entry.name in DIFFERS_TODAY
            else [],
            id=entry.name,
        )
        for entry in te.OPERATIONS
    ]


# Cases every run tries first: each showed the cores making different calls
# before they took one path per pair of layouts (mapping_pair_path), and every
# operation must pass on them.
EXAMPLES = [
    # an empty receiver and a one-key version derived from it: - and & with
    # the version (the C core hashed its stored key again)
    Case(base=MapSpec(0, 20919, 2, 6), related=True, steps=(("set", 44, 3),),
         apart=MapSpec(0, 0), swap=False, evolver_edits=(("set", 9, 0),),
         key=KeyPick("stored", 85), path_tail=None, value=0, as_version=True, fn=3,
         position=-4, span=(None, 3)),
    # related flat versions of colliding keys: diff (C called __eq__ between
    # colliding keys, the pure core paired them by position and identity)
    Case(base=MapSpec(2, 41379, 5, 6), related=True, steps=(("delete", 58), ("add", "h5", 1)),
         apart=MapSpec(0, 0), swap=False, evolver_edits=(("delete", 38), ("add", "h16", 1)),
         key=KeyPick("new", 66), path_tail=None, value=1, as_version=True, fn=3, position=0,
         span=(3, 2**63)),
    # a flat receiver of colliding keys and a trie built apart that has them
    # too: | (the cores called __eq__ on opposite sides), Evolver.update
    Case(base=MapSpec(33, 52832, 2, 6), related=False, steps=(),
         apart=MapSpec(2, 50530, 5, 2), swap=True, evolver_edits=(("set", 26, 3), ("delete", 52)),
         key=KeyPick("stored", 99), path_tail=None, value=3, as_version=True, fn=0,
         position=-5, span=(None, 88)),
    # an Evolver emptied by its edits, updated from a version of 14 keys
    # derived from its map (the pure core compared the colliding keys, C none)
    Case(base=MapSpec(1, 48401, 2, 0), related=True,
         steps=(("set", 5, 0), ("or", MapSpec(13, 65474, 5, 6))), apart=MapSpec(0, 0),
         swap=False, evolver_edits=(("delete", 74), ("delete", 10)),
         key=KeyPick("stored", 88), path_tail=KeyPick("stored", 17), value=0, as_version=True,
         fn=3, position=-1, span=(2**63, None)),
    # discard of a colliding key from a trie of 34 keys
    Case(base=MapSpec(34, 12539, 12, 6), related=True, steps=(("add", "h14", 0),),
         apart=MapSpec(0, 0), swap=False, evolver_edits=(), key=KeyPick("stored", 52),
         path_tail=None, value=1, as_version=True, fn=1, position=1, span=(2**63, 1)),
    # an empty receiver and a span of two negative bounds: slice
    Case(base=MapSpec(0, 64008, 5, 6), related=False, steps=(), apart=MapSpec(0, 37483, 2, 0),
         swap=True, evolver_edits=(("set", 17, 0),), key=KeyPick("stored", 99), path_tail=None,
         value=2, as_version=True, fn=3, position=1, span=(-11, -3)),
]  # fmt: skip

cases = st.composite(lambda draw: te.draw_case(lambda lo, hi: draw(st.integers(lo, hi))))()
"""Cases drawn by hypothesis through the engine's own description of the space."""

RAN = collections.Counter()
"""Hypothesis cases run per operation, for the count printed at the end of the module."""


@pytest.fixture(scope="module", autouse=True)
def _print_the_count():
    yield
    if RAN:
        print(
            "\ntranscripts: %d operations run on both cores by hypothesis (%d operations,"
            " %d to %d cases each)"
            % (sum(RAN.values()), len(RAN), min(RAN.values()), max(RAN.values()))
        )


@needs_both_cores
@pytest.mark.parametrize("name", _per_operation())
def test_both_cores_make_the_same_user_calls(name):
    entry = registry.BY_NAME[name]

    @settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(case=cases)
    def same_calls(case):
        RAN[name] += 1
        found = te.compare(entry, case, CORES)
        assert found is None, found

    for case in EXAMPLES:
        same_calls = example(case=case)(same_calls)
    same_calls()


# --- the seeded sweep -------------------------------------------------------------------------

SWEEP_SEED = 34
SWEEP_CASES = 200
"""Cases of the seeded sweep; each runs every operation on both cores."""


@lru_cache(maxsize=None)
def _sweep():
    """(operations run, mismatches, first message, seconds) per operation name."""
    rng = random.Random(SWEEP_SEED)
    ran, mismatches, first = collections.Counter(), collections.Counter(), {}
    start = time.perf_counter()
    for _ in range(SWEEP_CASES):
        case = te.random_case(rng)
        for entry in te.OPERATIONS:
            ran[entry.name] += 1
            found = te.compare(entry, case, CORES)
            if found is not None:
                mismatches[entry.name] += 1
                first.setdefault(entry.name, found)
    return ran, mismatches, first, time.perf_counter() - start


@needs_both_cores
@pytest.mark.parametrize("name", _per_operation())
def test_the_seeded_sweep_finds_no_difference(name):
    ran, mismatches, first, _ = _sweep()
    assert ran[name] == SWEEP_CASES
    assert mismatches[name] == 0, "%d of %d cases differ; the first:\n%s" % (
        mismatches[name],
        ran[name],
        first[name],
    )


@needs_both_cores
def test_the_seeded_sweep_counts():
    ran, mismatches, _, seconds = _sweep()
    total = sum(ran.values())
    assert set(ran) == {entry.name for entry in te.OPERATIONS}
    assert total == SWEEP_CASES * len(te.OPERATIONS)
    print(
        "\nseeded sweep: %d operations (%d cases x %d operations) on both cores in %.1f s;"
        " transcripts differ in %d: %s"
        % (total, SWEEP_CASES, len(te.OPERATIONS), seconds, sum(mismatches.values()),
           ", ".join("%s %d" % pair for pair in mismatches.most_common()) or "none")
    )  # fmt: skip


@needs_both_cores
def test_what_an_operation_replaced_dies_with_the_last_version_holding_it():
    """The engine's releases with the versions dropped before the result: a
    value the result replaced dies with the receiver, as a dict's would."""
    receiver_first = ("arguments", "subject", "versions", "result")
    rng = random.Random(SWEEP_SEED)
    making = [entry for entry in te.OPERATIONS
              if entry.makes and entry.name not in DIFFERS_TODAY]  # fmt: skip
    differ = collections.Counter()
    for _ in range(SWEEP_CASES // 5):
        case = te.random_case(rng)
        for entry in making:
            differ[entry.name] += te.compare(entry, case, CORES, receiver_first) is not None
    assert not +differ, "transcripts differ (cases per operation): %s" % dict(+differ)


# --- what the cases cover ----------------------------------------------------------------------


def _form(fd):
    """A version's form, as its _dump() names it: flat, table or tries."""
    head = fd._dump().split("\n", 1)[0].split()
    return head[2] if head[2:3] in (["flat"], ["table"]) else "tries"


def _shape(core, case):
    """(receiver size, operand size, colliding keys in both, the two forms) of a case."""
    builder = te._Builder(core, case.base.plain)
    receiver, operand = te._versions(builder, case)[:2]

    def colliding(fd):
        identities = {builder.identity(k) for k in fd}
        return {identity for identity in identities if identity.startswith(te.COLLIDING)}

    shared = bool(colliding(receiver) & colliding(operand))
    return len(receiver), len(operand), shared, (_form(receiver), _form(operand))


def test_the_cases_cover_both_sides_of_the_flat_limit_in_both_directions(core):
    rng = random.Random(SWEEP_SEED)
    drawn = [te.random_case(rng) for _ in range(SWEEP_CASES)]
    shapes = [_shape(core, case) for case in drawn]
    flat, trie = (lambda n: n <= te.FLAT_MAX), (lambda n: n > te.FLAT_MAX)
    seen = collections.Counter()
    for case, (receiver, operand, shared_collisions, forms) in zip(drawn, shapes):
        relation = "related" if case.related else "unrelated"
        if flat(receiver) and trie(operand):
            seen["flat receiver, trie operand, " + relation] += 1
        if trie(receiver) and flat(operand):
            seen["trie receiver, flat operand, " + relation] += 1
        seen["sizes 31-34"] += receiver in range(31, 35)
        seen["colliding keys in both"] += shared_collisions
        seen["high-bit keys"] += bool(case.base.high)
        seen["an Evolver edited first"] += bool(case.evolver_edits)
        seen["operand of 0-100 keys"] += operand <= 100
        seen["forms %s, %s" % forms] += 1
    for kind in (
        "flat receiver, trie operand, related",
        "flat receiver, trie operand, unrelated",
        "trie receiver, flat operand, related",
        "trie receiver, flat operand, unrelated",
    ):
        assert seen[kind] >= 5, (kind, seen)  # fmt: skip
    # The table form (a plain map of more than FLAT_MAX keys built apart)
    # meets each form on either side, and itself.
    for forms in ("table, flat", "flat, table", "table, tries", "tries, table", "table, table"):
        assert seen["forms " + forms] >= 3, (forms, seen)
    assert seen["sizes 31-34"] >= SWEEP_CASES // 6, seen
    assert seen["colliding keys in both"] >= SWEEP_CASES // 10, seen
    assert seen["high-bit keys"] >= SWEEP_CASES // 4, seen
    assert seen["an Evolver edited first"] >= SWEEP_CASES // 2, seen
    built_apart = [case.base.size for case in drawn] + [case.apart.size for case in drawn]
    assert min(built_apart) == 0 and 90 <= max(built_apart) <= 100


# --- the engine sees what it is meant to see ---------------------------------------------------


def _outcomes(core, entry, case, wrong_call):
    wrong = registry.Operation(entry.name, entry.on, entry.covers, entry.args, wrong_call,
                               makes=entry.makes)  # fmt: skip
    return {"right": te.run(core, entry, case), "wrong": te.run(core, wrong, case)}


CASE = EXAMPLES[2]


def test_an_extra_hash_call_is_a_difference(core):
    entry = registry.BY_NAME["frozendict.set"]

    def hashes_twice(core, fd, key, value):
        hash(key)
        return fd.set(key, value)

    found = te.difference(_outcomes(core, entry, CASE, hashes_twice))
    # (line 0 is the first hash on both; the right one's next call is an __eq__)
    assert found is not None and found.startswith("transcripts differ at line 1"), found


def test_a_swapped_eq_call_is_a_difference(core):
    """__eq__ called on the other side is another call (the called side is named first)."""
    entry = registry.BY_NAME["=="]
    a = RecordingKey("s1", 5, "left")
    b = RecordingKey("s1", 5, "right")
    CALLS.start()
    assert a == b and b == a
    assert CALLS.stop() == [("eq", "left", "right"), ("eq", "right", "left")]

    def reversed_eq(core, x, y):
        return registry.BY_NAME["=="].call(core, y, x)

    found = te.difference(_outcomes(core, entry, EXAMPLES[1], reversed_eq))
    assert found is not None


@finalizers_run_at_once
def test_a_value_kept_alive_is_a_difference(core):
    """A finalizer that runs in another release is a difference."""
    entry = registry.BY_NAME["frozendict.set"]
    kept = []

    def keeps_the_value(core, fd, key, value):
        kept.append(value)  # (released only when the test ends)
        return fd.set(key, value)

    found = te.difference(_outcomes(core, entry, CASE, keeps_the_value))
    kept.clear()
    assert found is not None and "del v" in found


def test_a_different_result_is_a_difference(core):
    entry = registry.BY_NAME["frozendict.delete"]
    found = te.difference(_outcomes(core, entry, CASE, lambda core, fd, key: fd))
    assert found is not None and found.startswith("results differ")


RECORDING_CASE = Case(base=MapSpec(5, 1), related=True, steps=(("set", 0, 1),),
                      apart=MapSpec(0, 0), swap=False, evolver_edits=(("set", 0, 2),),
                      key=KeyPick("stored", 0), path_tail=None, value=1, as_version=False, fn=0,
                      position=1, span=(0, 2))  # fmt: skip
"""Five keys, a version with one value changed, an Evolver that set one value."""


@finalizers_run_at_once
def test_the_transcript_records_every_kind_of_user_call(core):
    """The engine's objects record hashes, both sides of __eq__, positions,
    a function's calls and the finalizers the operation runs."""
    seen = set()
    for name in ("frozendict.set", "frozendict.merge_with", "frozendict.key_at", "=="):
        outcome = te.run(core, registry.BY_NAME[name], RECORDING_CASE)
        seen |= {entry[0] for entry in outcome.transcript}
    assert {"hash", "eq", "index", "call", "del", "drop", "collect"} <= seen, seen


@finalizers_run_at_once
def test_a_finalizer_the_operation_runs_is_recorded_in_the_call(core):
    """clear() drops the value only the Evolver held: its finalizer runs
    inside the call, before the engine releases anything."""
    transcript = te.run(core, registry.BY_NAME["Evolver.clear"], RECORDING_CASE).transcript
    assert transcript[0][0] == "del" and transcript[0][1].startswith("v2."), transcript
    assert transcript.index(("drop", "arguments")) == 1


def test_a_failing_operation_is_compared_by_its_exception(core):
    entry = registry.BY_NAME["fd[k]"]
    case = dataclasses.replace(CASE, key=KeyPick("new", 300))
    outcome = te.run(core, entry, case)
    assert outcome.result[:2] == ("raise", "KeyError")
