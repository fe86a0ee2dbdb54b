"""GC clear order: what a weakref callback sees while an object is cleared.

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
"""

import array
import ctypes
import gc
import platform
import weakref

import pytest

# PyTypeObject: tp_clear is the 25th pointer-sized field (after the object
# head, tp_name .. tp_flags, tp_doc, tp_traverse); the same on 3.10-3.15.
_TP_CLEAR_INDEX = 24
_INQUIRY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object)


def call_tp_clear(obj):
    """Run type(obj)'s tp_clear on obj, as the cyclic GC would (CPython only:
    it reads CPython's PyTypeObject layout; elsewhere the test is skipped)."""
    if platform.python_implementation() != "CPython":
        pytest.skip("calls tp_clear from CPython's PyTypeObject layout through ctypes")
    slots = ctypes.cast(id(type(obj)), ctypes.POINTER(ctypes.c_void_p))
    func = slots[_TP_CLEAR_INDEX]
    assert func, "type has no tp_clear"
    return _INQUIRY(func)(obj)  # PYFUNCTYPE: called with the GIL held


class SlowKey:
    """A key compared by a Python __eq__ (all share one hash)."""

    def __init__(self, name):
        self.name = name

    def __hash__(self):
        return 42

    def __eq__(self, other):
        return isinstance(other, SlowKey) and other.name == self.name

    def __repr__(self):
        return f"SlowKey({self.name})"


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
