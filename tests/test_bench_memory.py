"""The benchmark's memory and use-case measurements: kept versions,
small maps, the nested reducer and construction's peak.

No timing assertions: the reducer's actions are checked against a dict model,
the operations with sizes of their own are checked to be planned at those
sizes, and the tracemalloc figures for structure (and for construction's
peak, the bound the C core's bulk build keeps).
"""

import pytest

from frozenmap import bench
from frozenmap.bench import operations, timing
from frozenmap.bench.peers import FrozenMap, load_library


def _library(core):
    return FrozenMap("c" if core.name == "c" else "py")


def _plain(m):
    """A nested map as nested dicts."""
    return {k: _plain(v) if hasattr(v, "items") else v for k, v in m.items()}


def test_reducer_actions_are_valid_and_every_library_reaches_the_same_state(core):
    r = operations.Reducer(50, actions=400, seed=3)
    kinds = {action[0] for action in r.actions}
    assert kinds == {r.TOGGLE, r.RENAME, r.ADD, r.DELETE}
    model = {k: dict(v) for k, v in r.todos.items()}
    for kind, key, arg in r.actions:  # every action targets a live (or, for add, new) id
        if kind == r.ADD:
            assert key not in model
            model[key] = dict(arg)
        elif kind == r.DELETE:
            del model[key]
        elif kind == r.TOGGLE:
            model[key]["done"] = not model[key]["done"]
        else:
            model[key]["title"] = arg
    for lib in (_library(core), load_library("dict")):
        state, step = r.build(lib), r.stepper(lib)
        first = state
        for action in r.actions:
            state = step(state, action)
        assert _plain(state) == {"filter": "all", "todos": model}
        assert len(first["todos"]) == 50  # every state kept as it was
        assert all(not todo["done"] for todo in first["todos"].values())


def test_operations_with_their_own_sizes_are_planned_at_those_sizes(monkeypatch):
    measured = []

    def fake_measure(op, libs, w, target, repeat, **settings):
        measured.append((w.n, op.key))
        return []

    class FakeWorkload:
        def __init__(self, n):
            self.n = n

    monkeypatch.setattr(timing, "measure_interleaved", fake_measure)
    monkeypatch.setattr(timing, "Workload", FakeWorkload)
    ops = {op.key: op for op in bench.OPERATIONS}
    chosen = [ops["mem_small"], ops["reducer"], ops["mem_version_delete"]]
    timing.run([100, 5000], [load_library("dict")], chosen, 0.001, 3, progress=False)
    assert sorted(measured) == sorted(
        [(n, "mem_small") for n in operations.SMALL_SIZES]
        + [(operations.REDUCER_TODOS, "reducer")]
        + [(100, "mem_version_delete"), (5000, "mem_version_delete")]
    )


@pytest.mark.parametrize("key", ["mem_version", "mem_version_new", "mem_version_delete"])
def test_kept_versions_cost_far_less_than_a_copy_for_frozenmap(core, key):
    """A derived version shares all but one path with its parent: at n = 2,000 a
    kept version costs a small fraction of the map, where dict's costs a copy."""
    op = {op.key: op for op in bench.OPERATIONS}[key]
    w = operations.Workload(2000)
    lib, copy = _library(core), load_library("dict")
    whole = operations.bytes_per_item(lib, w) * w.n
    version = op.measure(lib, w)
    assert 0 < version < whole / 20 < op.measure(copy, w)


def test_small_maps_are_measured_per_map(core, monkeypatch):
    """Bytes of one small map grow with its keys; a derived version is about
    one map at most (a few keys: everything is copied), never a multiple."""
    # PyPy measures the live heap, rounded to its arenas' pages (a few KiB):
    # 50 one-key maps are within that noise, 1,000 are well above it.
    monkeypatch.setattr(operations, "SMALL_COUNT", 1000 if operations.ON_PYPY else 50)
    ops = {op.key: op for op in bench.OPERATIONS}
    lib = _library(core)
    sizes = ops["mem_small"].sizes
    whole = [ops["mem_small"].measure(lib, operations.Workload(n)) for n in sizes]
    derived = [ops["mem_small_version"].measure(lib, operations.Workload(n)) for n in sizes]
    assert 0 < whole[0] < whole[-1]
    assert all(0 < d <= 1.25 * m for d, m in zip(derived, whole))


def test_untraced_library_has_no_memory_figures():
    try:
        rpds = load_library("rpds")
    except ImportError:
        pytest.skip("rpds-py is not installed")
    w = operations.Workload(10)
    # (a pickle's size is counted in bytes written, not traced allocations)
    for op in bench.OPERATIONS:
        if op.measure is not None and op.key != "history_pickle":
            assert op.measure(rpds, w) is None, op.key


def test_construction_peak_stays_near_the_finished_map(core):
    """Building from a dict (the bulk path, wide root at
    n >= 512) peaks at most 1.25x what the finished map keeps; the C core's
    build once held two copies of its entries beside the tries (2x)."""
    lib = _library(core)
    for n in (600, 5000):
        w = operations.Workload(n)
        kept = operations.bytes_per_item(lib, w)
        peak = operations._build_peak(lib, w)
        # (two builds measured apart: a table version's build keeps all it
        # allocates, so the two agree but for a few bytes either way)
        assert 0.99 * kept <= peak <= 1.25 * kept, (n, kept, peak)


def test_the_undo_history_is_pickled_once_for_both_of_its_rows(core, monkeypatch):
    """``history_pickle`` leaves its pickle for ``history_loaded``, which
    unpickles it once (under tracemalloc) and counts the versions it knows."""
    dumped, loaded = [], []
    dumps, loads = operations.pickle.dumps, operations.pickle.loads
    monkeypatch.setattr(
        operations.pickle, "dumps", lambda *a, **k: dumped.append(1) or dumps(*a, **k)
    )
    monkeypatch.setattr(
        operations.pickle, "loads", lambda *a, **k: loaded.append(1) or loads(*a, **k)
    )
    w = operations.Workload(300)
    for lib in (_library(core), load_library("dict")):
        per_version = operations.history_pickle_per_version(lib, w)
        in_memory = operations.history_loaded_per_version(lib, w)
        assert 0 < per_version < in_memory
    assert (len(dumped), len(loaded)) == (2, 2)
    assert w._undo == {}  # used up: nothing kept after the row


@pytest.mark.parametrize(
    "n, versions",
    [
        (1000, operations.UNDO_ITEMS // 1000),  # by items
        (10_000, operations.UNDO_VERSIONS),  # never fewer than this ...
        (100_000, operations.HISTORY_BYTES // (64 * 100_000)),  # ... unless bytes say so
    ],
)
def test_a_peers_undo_history_is_bounded_and_frozenmaps_is_whole(n, versions):
    class Sized:
        """A workload's fields the history reads, without building n keys."""

        def __init__(self, w):
            self.n, self.history = n, w.history

        def base(self, lib):
            return lib.build({})

    w = Sized(operations.Workload(10))
    w.history = [("key%d" % i, i) for i in range(operations.HISTORY)]
    # the base and one version per update
    assert len(operations._history_versions(load_library("dict"), w)) == versions + 1
    whole = operations._history_versions(FrozenMap("py"), w)
    assert len(whole) == operations.HISTORY + 1
