"""The collector and finalizers: ``tp_clear``, weakref callbacks and ``__del__``.

**GC clear order** (what a weakref callback sees while an object is cleared).
The cyclic GC breaks a cycle by calling each object's ``tp_clear``.  The
release of the references one ``tp_clear`` drops can run user code -- here a
weakref callback on a value that is not itself tracked by the GC (an
``array``), so the GC did not clear its weakrefs beforehand -- and that code
can reach the object being cleared (through another object of the cycle
that the GC could not clear and ``gc.get_objects()``, or simply because it
holds it).  Such code must find a consistent object: the C core used to
release the order trie (which owns keys and values) before the key trie that
borrows them, so a lookup from the callback compared against freed keys,
and an iterator released its root before exhausting its cursor.

``tp_clear`` is called here through ctypes on objects the test holds, which
is what the GC does to garbage but deterministic; a second test lets the
real collector clear a cycle while a callback reads every frozenmap object
``gc.get_objects()`` can find.  Both cores; the pure core's objects are
cleared by CPython's own ``subtype_clear`` (a read may then raise
``AttributeError``, never crash).

**Finalizers** (docs/spec.md §4; docs/how-it-works.md, "User code, finalizers
and threads").  Values whose ``__del__`` reads, derives from or edits the map
or evolver when a version or a replaced value is released, when a GC pass
starts in the middle of an Evolver's edit, or when a cycle through the map is
collected.
"""

import array
import gc
import weakref
from functools import partial

import pytest
from fault_helpers import call_tp_clear
from helpers import Snapshot
from keys import Finalizer, HashKey

SlowKey = partial(HashKey, 42)  # compared by a Python __eq__; all share one hash


def _values_with_callback(n, callback):
    values = [array.array("i", [i]) for i in range(n)]
    refs = [weakref.ref(v, callback) for v in values]
    return values, refs


def _read_everything(obj, core):
    """Every read of obj; returns what it saw (for consistency checks)."""
    if isinstance(obj, core.frozendict) or isinstance(obj, core.Evolver):
        items = list(obj.items())
        assert len(items) == len(obj)
        for k, v in items:
            assert obj[k] is v
        assert obj.get(SlowKey("absent")) is None
        assert SlowKey(0) in obj or SlowKey(0) not in obj
        assert (SlowKey(0), None) not in obj.items()
        repr(obj)
        hash(obj) if isinstance(obj, core.frozendict) else obj.freeze()._check()
        obj._check()
        return items
    return list(obj)  # an iterator: whatever is left


def _clear_while_reading(core, target, reader):
    """tp_clear(target) with a reader run by each release it causes."""
    seen, errors = [], []

    def callback(_ref):
        try:
            seen.append(reader())
        except AttributeError as exc:  # the pure core's cleared slots
            if core.name == "c":
                raise
            errors.append(exc)

    return seen, errors, callback


@pytest.mark.parametrize("kind", ["frozendict", "evolver"])
def test_a_mapping_read_while_its_tp_clear_releases_values(core, kind):
    holder = {}

    def reader():
        return _read_everything(holder["m"], core)

    seen, errors, callback = _clear_while_reading(core, None, reader)
    values, refs = _values_with_callback(8, callback)
    items = {SlowKey(i): v for i, v in enumerate(values)}
    m = core.frozendict(items) if kind == "frozendict" else core.Evolver(items)
    holder["m"] = m
    del values, items
    assert call_tp_clear(m) == 0
    assert len(seen) + len(errors) == 8, "each released value ran the callback"
    if core.name == "c":
        # Cleared means empty at once, before anything was released.
        assert all(s == [] for s in seen)
        assert len(m) == 0 and list(m) == [] and m.get(SlowKey(1)) is None
        m._check()
        if kind == "evolver":  # still usable afterwards
            m[SlowKey(1)] = 1
            assert m.freeze() == {SlowKey(1): 1}
    assert all(r() is None for r in refs)


@pytest.mark.parametrize("kind", ["frozendict", "evolver"])
@pytest.mark.parametrize("view", ["keys", "values", "items"])
def test_an_iterator_advanced_while_its_tp_clear_releases_values(core, kind, view):
    holder = {}

    def reader():
        return [next(holder["it"], None) for _ in range(3)]

    seen, errors, callback = _clear_while_reading(core, None, reader)
    values, refs = _values_with_callback(40, callback)
    items = {SlowKey(i): v for i, v in enumerate(values)}
    m = core.frozendict(items) if kind == "frozendict" else core.Evolver(items)
    it = iter(getattr(m, view)())
    next(it)
    holder["it"] = it
    del m, values, items
    assert call_tp_clear(it) == 0
    assert len(seen) + len(errors) == 40
    if core.name == "c":
        assert all(s == [None, None, None] for s in seen)  # exhausted first
        assert list(it) == []
        assert it.__length_hint__() == 0
        assert it.__reduce__()[1] == ([],)


def test_the_collector_clearing_a_cycle_while_a_callback_reads_what_it_finds(core):
    """The real GC: a callback reads every frozenmap object it can find."""
    gc.collect()
    found = []

    def callback(_ref):
        for obj in gc.get_objects():
            if isinstance(obj, (core.frozendict, core.Evolver)):
                try:
                    found.append(_read_everything(obj, core))
                except AttributeError:
                    assert core.name == "python"

    class Node:
        pass

    keep_refs = []
    for _round in range(5):
        values, refs = _values_with_callback(6, callback)
        keep_refs += refs
        node = Node()
        items = {SlowKey(i): v for i, v in enumerate(values)}
        items[SlowKey("cycle")] = node
        fd = core.frozendict(items)
        e = fd.evolve()
        e[SlowKey("more")] = node
        node.box = (fd, e, iter(fd.items()), iter(e))  # tuples have no tp_clear
        del values, items, fd, e, node
        gc.collect()
    assert all(r() is None for r in keep_refs)


# --- finalizers that run code when a version or a replaced value is released -------------------


@pytest.fixture
def finalizer_log():
    gc.collect()
    Finalizer.log = []
    yield Finalizer.log
    gc.collect()  # cycles through finalizers die here, not in a later test
    Finalizer.log = []


def test_finalizer_deriving_from_a_sibling_when_a_version_is_released(core, finalizer_log):
    base = core.frozendict((i, i) for i in range(100))
    hash(base)
    holder = {}

    def derive():
        sibling = holder["sibling"]
        made = sibling.set("from-del", 1).delete(3) | {"x": 2}
        made._check()
        return (len(made), hash(sibling) == hash(frozenset(sibling.items())), list(sibling)[:3])

    v = base.set("f", Finalizer("f", derive))
    holder["sibling"] = v.set(5, "five")
    holder["sibling"] = holder["sibling"].delete("f")  # the finalizer value is only in v
    del v
    gc.collect()
    assert finalizer_log == [("f", (101, True, [0, 1, 2]))]
    base._check()
    holder["sibling"]._check()


def test_finalizers_reading_the_map_of_which_they_are_part(core, finalizer_log):
    """A value's finalizer reads a version that shares structure with the dying one."""
    survivors = []
    base = core.frozendict((i, i) for i in range(50))

    def make(i):
        return Finalizer(
            i, lambda: (len(survivors[0]), survivors[0].get(i), list(survivors[0].items())[-1])
        )

    v = base
    for i in range(50, 80):
        v = v.set(i, make(i))
    survivors.append(v.delete(79))
    snap = Snapshot(survivors[0])
    del v  # only value 79 dies
    gc.collect()
    assert finalizer_log and finalizer_log[0][0] == 79
    assert finalizer_log[0][1][0] == 79
    snap.check()


@pytest.mark.parametrize(
    "release",
    [
        "setitem",
        "delitem",
        "pop",
        "popitem",
        "discard",
        "update",
        "update-fails",
        "clear",
        "drop-evolver",
    ],
)
def test_evolver_replaced_value_finalizer_reads_and_edits_the_evolver(core, finalizer_log, release):
    """The finalizer of a value the evolver releases reads and edits the evolver.

    Reads must see a consistent evolver; an edit must raise RuntimeError (the
    evolver is busy) or apply cleanly; afterwards the evolver holds exactly the
    model, plus the finalizer's edit if it reported success.
    """
    e = core.frozendict((i, i) for i in range(40)).evolve()
    holder = [e]

    def action():
        ev = holder[0]
        seen = (len(ev), list(ev.items()) == list(ev.freeze().items()), ev.get(0))
        ev.freeze()._check()
        try:
            ev["from-finalizer"] = "yes"
            applied = True
        except RuntimeError:
            applied = False
        return seen, applied

    e[100] = Finalizer("victim", action)  # owned by the evolver only
    e[101] = 1
    # the model must not keep the victim alive: it stands in as a string
    d = {k: "victim" if k == 100 else v for k, v in e.items()}
    if release == "setitem":
        e[100] = "replaced"
        d[100] = "replaced"
    elif release == "delitem":
        del e[100]
        del d[100]
    elif release == "pop":
        e.pop(100)
        d.pop(100)
    elif release == "popitem":
        del e[101]
        del d[101]
        e.popitem()
        d.popitem()
    elif release == "discard":
        e.discard(100)
        del d[100]
    elif release == "update":
        e.update([(100, "u"), (0, "zero")])
        d.update([(100, "u"), (0, "zero")])
    elif release == "update-fails":
        # the value is new in this update, and released when the update rolls back
        del e[100]
        del d[100]
        gc.collect()
        finalizer_log.clear()
        with pytest.raises(TypeError):
            e.update([(200, Finalizer("victim", action)), ([], 1)])
    elif release == "clear":
        e.clear()
        d.clear()
    else:
        # the evolver itself dies; the finalizer edits another one
        other = core.frozendict(x=1).evolve()
        holder[0] = other
        d.clear()
        del e
        gc.collect()
        assert finalizer_log and finalizer_log[0][0] == "victim"
        seen, applied = finalizer_log[0][1]
        assert applied and other["from-finalizer"] == "yes"
        other._check()
        return
    gc.collect()
    assert finalizer_log, "the finalizer never ran"
    name, outcome = finalizer_log[0]
    assert not isinstance(outcome, BaseException), outcome
    seen, applied = outcome
    assert seen[1], "the evolver was inconsistent inside the finalizer"
    if applied:
        d["from-finalizer"] = "yes"
    e._check()
    assert list(e.items()) == list(d.items())
    assert list(e.freeze().items()) == list(d.items())


@pytest.mark.parametrize("schedule", ["threshold 1", "threshold 1 to 23"])
def test_gc_finalizer_freezing_an_evolver_mid_edit_sees_a_whole_version(core, schedule):
    """A GC run can start at any allocation inside an Evolver's edit.  Its
    finalizers may freeze (or read) the evolver: what they publish must be a
    whole version -- both tries agreeing, the hash right -- that never changes
    afterwards.  (Both cores used to publish half-applied edits here.)

    With the first threshold at 1 the collection starts at the finalizer's
    own allocations, before the edit; moving it from 1 to 23 across the edits
    lands the collection at every allocation of the edits in turn, between
    the key-trie step and the order-trie step too (mutant ``gc-not-paused``
    of scripts/mutants.py survived the first schedule alone)."""
    base = core.frozendict({i: i for i in range(600)})
    hash(base)  # known hash: the edits also update the accumulator
    e = base.evolve()
    published = []

    class Bomb:
        def __init__(self):
            self.me = self  # only the cycle collector frees it

        def __del__(self):
            frozen = e.freeze()
            published.append((frozen, list(frozen.items()), len(e), e.get(7)))

    rotating = schedule == "threshold 1 to 23"
    thresholds = gc.get_threshold()
    gc.set_threshold(1, 1, 1)  # a collection at nearly every allocation
    try:
        for i in range(800 if rotating else 1500):
            if rotating:
                gc.set_threshold(1 + i % 23, 1, 1)
            Bomb()
            e[i % 700] = -i
            if i % 5 == 0:
                e.pop((i * 13) % 700, None)
            if i % 11 == 0:
                e.setdefault(("new", i), i)
    finally:
        gc.set_threshold(*thresholds)
    gc.collect()
    assert len(published) > 100  # the finalizers really ran during edits
    for frozen, items, length, _ in published:
        frozen._check()
        assert list(frozen.items()) == items
        assert len(frozen) == length == len(items)
        assert hash(frozen) == hash(frozenset(items))
    e._check()


def test_finalizer_of_a_value_in_a_self_referencing_cycle_resurrects_the_map(core, finalizer_log):
    rescued = []

    class Box:
        def __init__(self):
            self.fd = None

        def __del__(self):
            rescued.append(self.fd)

    box = Box()
    fd = core.frozendict((i, i) for i in range(30)).set("box", box)
    box.fd = fd
    e = fd.evolve()
    e["more"] = box
    box.evolver = e
    del fd, box, e
    gc.collect()
    assert len(rescued) == 1
    back = rescued[0]
    back._check()
    assert len(back) == 31 and back["box"].evolver["more"] is back["box"]
    back["box"].evolver["again"] = 1
    back["box"].evolver._check()
    assert hash(back.delete("box")) == hash(frozenset(back.delete("box").items()))
    rescued.clear()  # the cycle is collectable again
    gc.collect()


def test_dropping_many_versions_with_finalizers_that_derive(core, finalizer_log):
    keep = core.frozendict((i, -i) for i in range(64))
    versions = []
    for i in range(300):
        versions.append(keep.set(i % 80, Finalizer(i, lambda: len(keep.set("x", 1).delete(0)))))
    del versions
    gc.collect()
    assert len(finalizer_log) == 300 and all(out == 64 for _, out in finalizer_log)
    keep._check()
