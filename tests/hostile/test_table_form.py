"""The table form under attack: user code that runs while a table version
builds its tries (its *twin*), the collector, and threads deriving from one
table version at once.  Both cores.

A table's stored keys hash without user code, but their ``__eq__`` may be
Python (a str or int subclass that keeps its base's hash), and a probe may
be anything.  The twin is built by the first operation that needs tries;
each build allocates, so a GC pass, and any finalizer it runs, can start in
the middle of one.  Whatever runs then -- a key's ``__eq__``, a finalizer, a
weakref callback, another thread -- may use the same table version: read it,
derive from it (which builds the twin again, inside the first build), or
drop the last reference to a version.  Every result must be right, every
version must pass ``_check()``, and the table must end with one twin that
every derivation shares.
"""

import gc
import sys
import threading
import weakref

import pytest

from frozenmap._pycore.flat import FLAT_MAX

N = FLAT_MAX * 3
MODULUS = sys.hash_info.modulus


def form(fd):
    head = fd._dump().split("\n", 1)[0]
    if " table" in head:
        return "table+twin" if "(and tries)" in head else "table"
    return "flat" if head.endswith(" flat") else "tries"


class ReentrantInt(int):
    """An int with int's hash (so a table may hold it) and a Python __eq__
    that runs ``ReentrantInt.hook`` (once at a time) before it answers."""

    hook = None
    running = False

    def __eq__(self, other):
        _run_hook()
        return int(self) == int(other) if isinstance(other, int) else NotImplemented

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = int.__hash__


def _run_hook():
    """Run ReentrantInt.hook, unless one is running already."""
    hook = ReentrantInt.hook
    if hook is not None and not ReentrantInt.running:
        ReentrantInt.running = True
        try:
            hook()
        finally:
            ReentrantInt.running = False


class UserHashed:
    """A probe whose hash is Python code (found through the twin), equal to an int."""

    def __init__(self, n):
        self.n = n

    def __hash__(self):
        return hash(self.n)

    def __eq__(self, other):
        _run_hook()
        return isinstance(other, int) and int(other) == self.n


@pytest.fixture(autouse=True)
def _no_hook():
    yield
    ReentrantInt.hook = None
    ReentrantInt.running = False


def colliding_table(core):
    """A table of N ReentrantInt keys, pairs of which share a full hash
    (k and k + MODULUS), so the tries put them in collision nodes."""
    keys = [ReentrantInt(i if i % 2 == 0 else i - 1 + MODULUS) for i in range(N)]
    table = core.frozendict({k: "v%d" % i for i, k in enumerate(keys)})
    assert form(table) == "table"
    return table, keys


def expected_after(table, key, value):
    d = dict(table)
    d[key] = value
    return d


def test_an_eq_that_derives_from_the_table_while_its_twin_is_built(core):
    table, keys = colliding_table(core)
    seen = []

    def hook():  # derives (building the twin again, from inside a build), reads, compares
        inner = table.set(keys[4], "inner")
        inner._check()
        seen.append((inner[keys[4]], len(inner), table == inner, table[keys[6]]))

    ReentrantInt.hook = hook
    # A derivation with an equal key that is another object: the walk of a
    # collision node compares it with __eq__, inside the first build of the twin.
    twin_key = ReentrantInt(keys[3] + 0)
    assert twin_key is not keys[3]
    outer = table.set(twin_key, "outer")
    ReentrantInt.hook = None
    assert seen and seen[0] == ("inner", N, False, "v6")
    outer._check()
    table._check()
    assert outer == expected_after(table, keys[3], "outer") and list(outer) == list(table)
    assert form(table) == "table+twin" and table[keys[3]] == "v3"
    # Every version derived since shares the one twin the table kept.
    a, b = table.set(keys[1], "a"), table.set(keys[2], "b")
    assert len(set(a._node_ids()) & set(b._node_ids())) >= len(set(a._node_ids())) - 8


def test_a_probe_whose_eq_derives_while_it_is_looked_up_in_the_twin(core):
    table, keys = colliding_table(core)
    results = []

    def hook():
        results.append(table.set(keys[10], "x")[keys[10]])
        results.append(table.get(UserHashed(keys[12])))  # (the twin, re-entered)

    ReentrantInt.hook = hook
    assert table[UserHashed(int(keys[3]))] == "v3"  # (hash once, then the twin's walk)
    ReentrantInt.hook = None
    assert results[:2] == ["x", "v12"]
    table._check()


def test_an_eq_that_drops_the_last_reference_to_the_table_mid_lookup(core):
    holder = {}
    table, keys = colliding_table(core)
    holder["table"] = table
    probe = ReentrantInt(keys[5] + 0)
    del table

    def hook():
        holder.pop("table", None)  # the caller's reference is the last one

    ReentrantInt.hook = hook
    found = holder["table"].get(probe)
    assert found == "v5"


@pytest.mark.skipif(
    not hasattr(gc, "set_threshold"), reason="PyPy's collector has no thresholds to set"
)
def test_a_gc_pass_during_the_twins_build_runs_finalizers_that_derive_from_it(core):
    table, keys = colliding_table(core)
    derived, forms = [], []

    class Deriver:
        def __init__(self):
            self.cycle = self

        def __del__(self):
            # A derivation of the table whose twin is being built (or was).
            forms.append(form(table))
            v = table.set(keys[len(derived) % N], "fin")
            v._check()
            derived.append(v)

    old = gc.get_threshold()
    gc.collect()
    try:
        for _ in range(50):
            Deriver()  # garbage, collected by whichever allocation comes next
        gc.set_threshold(1, 1, 1)
        outer = table.set(keys[0], "outer")
    finally:
        gc.set_threshold(*old)
    gc.collect()
    assert derived, "no finalizer ran"
    if core.name == "c" and sys.version_info >= (3, 12):
        # From 3.12 on, CPython collects at the eval loop's next check, never
        # inside the C core's build (which runs no Python code): after it.
        assert forms[0] == "table+twin", forms
    elif sys.implementation.name == "cpython":
        # A collection runs inside the allocation that triggers it (up to
        # 3.11) or at the next check of the eval loop (in the pure core's
        # build): the first finalizer ran inside the outer derivation, before
        # a twin was installed, and its own derivation built one there.
        assert forms[0] == "table", forms
    outer._check()
    table._check()
    assert outer == expected_after(table, keys[0], "outer")
    for v in derived:
        v._check()
        assert sum(1 for value in v.values() if value == "fin") == 1


def test_the_collector_clears_a_table_in_a_cycle_while_a_callback_reads_it(core):
    """A table version (its twin built) in a cycle: the collector clears it,
    and a weakref callback that finds it meanwhile (gc.get_objects()) reads
    it and derives from it: it is a valid empty version."""
    cls = type("ClearedTable", (core.frozendict,), {})
    seen = []

    def callback(_ref):
        for m in [obj for obj in gc.get_objects() if type(obj) is cls]:
            try:
                seen.append((len(m), list(m), m.get("k1"), dict(m.set("x", 1)), m == {}))
                m._check()
            except AttributeError:  # (CPython's subtype_clear emptied the pure core's slots)
                assert core.name == "python"
                seen.append("slots cleared")

    def build():
        target = cls({"k%d" % i: [i] for i in range(N)})
        target.set("k1", 1)  # (its twin built)
        q = [target, compile("pass", "<cleared>", "exec"), None]
        q[2] = q
        target.q = q  # (the cycle: target -> __dict__ -> q -> target)
        return weakref.ref(q[1], callback)

    gc.collect()
    ref = build()
    gc.collect()
    assert ref() is None
    if not seen:
        pytest.skip("the collector cleared the cycle in another order")
    assert seen == [(0, [], None, {"x": 1}, True) if core.name == "c" else "slots cleared"]


@pytest.mark.parametrize("work", ["derive", "user-hashed lookup", "reversed", "diff"])
def test_threads_making_the_first_derivation_of_one_table_at_once(core, work):
    """Eight threads start together on a fresh table version (its twin not
    built): each needs the tries at once.  Each result is right, and all of
    them share the one twin the table keeps."""
    rounds, n_threads = 20, 8
    for _ in range(rounds):
        table = core.frozendict({i: "v%d" % i for i in range(500)})
        assert form(table) == "table"
        barrier = threading.Barrier(n_threads)
        results, errors = [None] * n_threads, []

        def run(t):
            try:
                barrier.wait()
                if work == "derive":
                    results[t] = table.set(t, "t%d" % t)
                elif work == "user-hashed lookup":
                    results[t] = table[UserHashed(t * 7)]
                elif work == "reversed":
                    results[t] = next(reversed(table))
                else:
                    results[t] = table.diff(table.set(t, "x"))
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(t,)) for t in range(n_threads)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors, errors
        table._check()
        assert form(table) == "table+twin"
        for t, result in enumerate(results):
            if work == "derive":
                result._check()
                assert result[t] == "t%d" % t and len(result) == 500
                assert result.delete(t) == table.delete(t)
            elif work == "user-hashed lookup":
                assert result == "v%d" % (t * 7)
            elif work == "reversed":
                assert result == 499
            else:
                assert list(result.changed) == [t]
        if work == "derive":
            ids = [set(r._node_ids()) for r in results]
            common = set.intersection(*ids)
            # (each copied its own path; with a twin each, they would share none)
            assert len(common) >= min(len(i) for i in ids) // 2, "one twin, shared by all"
