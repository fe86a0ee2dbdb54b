"""The cold lookup of the benchmark: random keys over the
whole map, every one of them in every pass.

A hot probe set (the 1,000 keys of ``lookup_hit``) stays in the caches; the
cold case is only cold if the timer never trims its inputs to fit a run's
target, so that is what is checked here (no timing assertions).
"""

from frozenmap.bench import operations, timing
from frozenmap.bench.operations import COLD, OPERATIONS, Workload
from frozenmap.bench.peers import FrozenMap


def _cold_case(w):
    op = next(op for op in OPERATIONS if op.key == "lookup_cold")
    return op, op.case(FrozenMap("py"), w)


def test_cold_keys_are_spread_over_the_whole_map_with_repeats():
    w = Workload(5000)
    keys = w.cold_keys()
    assert len(keys) == COLD
    assert set(keys) <= set(w.data)
    # 200,000 draws over 5,000 keys reach (nearly) all of them, not a probe set
    assert len(set(keys)) > 4900
    assert keys is w.cold_keys()  # drawn once per workload
    assert Workload(5000).cold_keys() == keys  # and the same in every process


def test_every_pass_of_the_cold_lookup_uses_every_key():
    w = Workload(2000)
    op, case = _cold_case(w)
    assert case.whole and case.limit == COLD
    # a target far too short for 200,000 lookups: a hot case would be trimmed
    timer = timing.calibrate(case, target=1e-6, repeat=3, max_seconds=0.1)
    assert timer.count == COLD
    assert op.asv_count == COLD


def test_a_hot_case_is_still_trimmed_to_its_target():
    w = Workload(2000)
    hot = next(op for op in OPERATIONS if op.key == "lookup_hit").case(FrozenMap("py"), w)
    timer = timing.calibrate(hot, target=1e-6, repeat=3, max_seconds=0.1)
    assert timer.count < operations.SAMPLE


def test_no_cold_lookup_of_an_empty_map():
    assert _cold_case(Workload(0))[1] is None
