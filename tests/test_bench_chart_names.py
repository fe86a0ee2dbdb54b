"""Chart file names on the performance page: one per operation, and a
memory chart never called ``time-...`` (the first memory rows of kept
versions and small maps were, until the names got a rule)."""

from frozenmap.bench.operations import OPERATIONS
from frozenmap.bench.plots import chart_name


def test_each_operation_has_its_own_chart_named_for_what_it_measures():
    names = [chart_name(op) for op in OPERATIONS]
    assert len(set(names)) == len(names)
    for op, name in zip(OPERATIONS, names):
        kind = "memory-" if op.unit == "B" else "time-"
        assert name.startswith(kind), (op.key, name)
    by_key = dict(zip((op.key for op in OPERATIONS), names))
    assert by_key["mem_item"] == "memory-per-item"  # names the docs link to
    assert by_key["mem_version"] == "memory-per-version"
    assert by_key["mem_small"] == "memory-small"
    assert by_key["reducer"] == "time-reducer"
