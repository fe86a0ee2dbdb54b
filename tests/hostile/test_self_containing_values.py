"""Values that contain the map itself, and deep nesting through values, on both cores.

``repr`` marks the cycle (for a subclass too), ``==`` and ``deepcopy`` work and
``hash`` raises for the unhashable list; a 30,000-deep chain of maps does not
crash ``hash`` or ``repr`` (a ``RecursionError`` at most) nor its release.
"""

import copy
import gc

import pytest

# --- values that contain the map -----------------------------------------------------------------


def test_value_containing_the_map_itself(core):
    fd = core.frozendict(a=[], b=2)
    fd["a"].append(fd)
    assert repr(fd) == "frozendict({'a': [frozendict({...})], 'b': 2})"
    assert fd == fd
    assert fd == core.frozendict(a=fd["a"], b=2)  # the same list object: equal by identity
    with pytest.raises(TypeError):
        hash(fd)
    derived = fd.set("c", 3)
    assert repr(derived) == "frozendict({'a': [frozendict({'a': [...], 'b': 2})], 'b': 2, 'c': 3})"
    derived._check()
    clone = copy.deepcopy(fd)
    assert clone["a"][0] is clone
    assert clone is not fd
    fd._check()


def test_subclass_repr_of_a_self_containing_value(core):
    class Sub(core.frozendict):
        pass

    sub = Sub(a=[])
    sub["a"].append(sub)
    assert repr(sub) == "Sub({'a': [Sub({...})]})"


def test_deep_nesting_through_values_does_not_crash(core):
    fd = core.frozendict()
    for _i in range(30_000):
        fd = core.frozendict(v=fd)
    for op in (hash, repr):
        try:
            op(fd)
        except RecursionError:
            pass
    assert len(fd) == 1
    del fd  # deallocating a 30,000-deep chain must not overflow the C stack
    gc.collect()
