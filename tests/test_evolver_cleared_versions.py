"""An Evolver beside frozendicts the GC has cleared, and an Evolver cleared
itself: its ``len``, iteration and ``freeze()`` always agree.

The cyclic GC clears the objects of a garbage cycle one at a time, so an
Evolver in such a cycle can be reached (by a weakref callback, a finalizer)
after the frozendict it was made from, or its cached ``freeze()``, was
cleared, and before it is cleared itself.  A cleared frozendict is an empty
one; the Evolver still holds its contents, so ``freeze()`` publishes them
again instead of returning the cleared version.  ``tp_clear`` is called
through ctypes (``call_tp_clear``), as in ``test_cleared_and_borrowed.py``.
The pure core's objects are cleared by CPython's ``subtype_clear``, which
deletes their slots: a cleared pure Evolver raises ``AttributeError`` from
every method (never a wrong answer), as that file allows.
"""

import pytest
from fault_helpers import call_tp_clear

_ITEMS = [("a", [1]), ("b", (2,)), (3, "three")]


def _agree(core, e, items):
    """len, iteration, freeze() and the positional reads of ``e`` all show ``items``."""
    assert len(e) == len(items)
    assert list(e.items()) == items
    frozen = e.freeze()
    assert type(frozen) is core.frozendict
    assert list(frozen.items()) == items
    assert len(frozen) == len(items)
    frozen._check()
    assert e.freeze() is frozen, "published once, then cached"
    assert list(e.copy().items()) == items
    if items:
        assert e.item_at(-1) == items[-1]
    return frozen


def test_freeze_after_the_source_version_was_cleared(core):
    source = core.frozendict(_ITEMS)
    e = source.evolve()
    assert call_tp_clear(source) == 0
    assert _agree(core, e, _ITEMS) is not source


def test_freeze_after_the_cached_freeze_was_cleared(core):
    e = core.Evolver(_ITEMS)
    e["c"] = 4
    first = e.freeze()
    assert call_tp_clear(first) == 0
    assert _agree(core, e, _ITEMS + [("c", 4)]) is not first


def test_edits_that_cancel_out_after_the_last_freeze_was_cleared(core):
    """freeze() returns the last version published when the edits since cancel
    out; a cleared one is not that version any more."""
    e = core.Evolver(_ITEMS)
    e["c"] = 4
    first = e.freeze()
    assert call_tp_clear(first) == 0
    e["d"] = 5
    del e["d"]
    assert _agree(core, e, _ITEMS + [("c", 4)]) is not first


def test_an_empty_evolver_beside_its_cleared_source(core):
    source = core.frozendict()
    e = source.evolve()
    assert call_tp_clear(source) == 0
    _agree(core, e, [])
    e["x"] = 1
    _agree(core, e, [("x", 1)])


def _answers(e):
    """len, list and the length of freeze() -- or the exception each raised."""
    out = []
    for read in (len, list, lambda e: len(e.freeze())):
        try:
            out.append(read(e))
        except AttributeError:
            out.append(AttributeError)
    return out


@pytest.mark.parametrize("state", ["new", "frozen", "edited after freeze"])
def test_a_cleared_evolver_is_empty_to_every_read(core, state):
    e = core.Evolver(_ITEMS)
    if state != "new":
        e.freeze()
    if state == "edited after freeze":
        e["c"] = 4
    assert call_tp_clear(e) == 0
    if core.name == "python":
        assert _answers(e) == [AttributeError] * 3
        return
    assert _answers(e) == [0, [], 0]
    e["x"] = 1  # and it is a usable empty evolver
    _agree(core, e, [("x", 1)])


class _ClearsOnEq:
    """A key whose ``__eq__`` clears the evolver being edited, once."""

    def __init__(self, victim=None):
        self.victim = victim

    def __hash__(self):
        return 7

    def __eq__(self, other):
        victim, self.victim = self.victim, None
        if victim is not None:
            assert call_tp_clear(victim) == 0
        return self is other


@pytest.mark.parametrize("edit", ["setitem", "update", "delitem"])
def test_an_evolver_cleared_during_its_own_edit(core, edit):
    """The edit then lands on the empty evolver (the C core) or raises
    AttributeError (the pure core); either way len, iteration and freeze()
    agree afterwards."""
    stored = _ClearsOnEq()
    e = core.Evolver([(stored, 1), ("x", 2)])
    stored.victim = e
    new = _ClearsOnEq()
    try:
        if edit == "setitem":
            e[new] = 3
        elif edit == "update":
            e.update([(new, 3), ("y", 4)])
        else:
            del e[new]
    except (KeyError, AttributeError):
        pass
    if core.name == "python":
        assert _answers(e) == [AttributeError] * 3
        return
    expected = {"setitem": [(new, 3)], "update": [(new, 3), ("y", 4)], "delitem": []}[edit]
    _agree(core, e, expected)
