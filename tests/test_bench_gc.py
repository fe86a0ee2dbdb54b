"""The nested reducer timed with the cyclic GC on.

Every timed case runs with the collector off, as ``timeit`` does, except
``reducer_gc``: a program keeping every state pays for the collector's
passes over them, and that is the row's point.  Checked here by what the
timed loop sees (no timing assertions).
"""

import gc

from frozenmap.bench import timing
from frozenmap.bench.operations import OPERATIONS, Case, Workload
from frozenmap.bench.peers import FrozenMap


def _seen_case(collect):
    seen = []
    case = Case("seen.append(gc.isenabled())", {"seen": seen, "gc": gc}, lambda c: [0] * c, 3)
    case.gc = collect
    return case, seen


def test_a_case_times_with_the_collector_off_unless_it_asks():
    assert gc.isenabled()
    for collect in (False, True):
        case, seen = _seen_case(collect)
        timer = timing.calibrate(case, target=0.001, repeat=3)
        seen.clear()
        timer.once()
        assert seen and set(seen) == {collect}
        assert gc.isenabled()  # restored after the pass either way


def test_the_reducer_has_a_gc_on_twin_with_the_same_actions():
    ops = {op.key: op for op in OPERATIONS}
    w = Workload(ops["reducer"].sizes[0])
    lib = FrozenMap("py")
    plain, collected = ops["reducer"].case(lib, w), ops["reducer_gc"].case(lib, w)
    assert (plain.gc, collected.gc) == (False, True)
    assert plain.body == collected.body and plain.limit == collected.limit
    assert collected.inputs(5) == plain.inputs(5)
    assert ops["reducer_gc"].sizes == ops["reducer"].sizes
