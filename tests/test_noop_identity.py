"""A derivation that changes nothing returns the very object it started from.

A reducer that tests ``new is old`` to skip a history entry relies on it.
Values are compared by identity, as ``set`` always has: an equal but distinct
value is a change.  An evolver whose edits cancel each other out freezes to the
version it started from (or the last one it published).
"""

import copy
import sys

import pytest


def _fd(core):
    return core.frozendict(a=[1], b="x", c=3)


def test_union_with_the_values_already_there_is_self(core):
    fd = _fd(core)
    assert fd | {"a": fd["a"]} is fd
    assert fd | {"a": fd["a"], "c": fd["c"]} is fd
    assert fd | core.frozendict(b=fd["b"]) is fd
    assert fd | {} is fd
    assert (fd | {"a": [1]}) is not fd  # equal, not identical: a change
    assert (fd | {"z": 1}) is not fd


def test_union_on_a_subclass_gives_an_equal_exact_frozendict(core):
    class Sub(core.frozendict):
        pass

    s = Sub(a=1)
    out = s | {"a": s["a"]}
    assert type(out) is core.frozendict and out == s


def test_minus_and_and_that_remove_nothing_are_self(core):
    fd = _fd(core)
    assert fd - {"zz"} is fd
    assert fd - [] is fd
    assert fd & ["a", "b", "c", "zz"] is fd
    assert (fd - {"a"}) is not fd


def test_set_in_and_update_in_that_change_nothing_are_self(core):
    fd_value = object()
    fd = core.frozendict(n=core.frozendict(v=fd_value))
    assert fd.set_in(["n", "v"], fd_value) is fd
    assert fd.update_in(["n", "v"], lambda v: v) is fd


def test_freeze_of_an_unedited_evolver_is_its_source(core):
    fd = _fd(core)
    assert fd.evolve().freeze() is fd
    e = fd.evolve()
    e["a"] = fd["a"]  # the very value: no change
    assert e.freeze() is fd


@pytest.mark.skipif(sys.version_info < (3, 13), reason="copy.replace is new in 3.13")
def test_copy_replace_is_union_with_the_changes(core):
    fd = _fd(core)
    out = copy.replace(fd, b="y", d=4)
    assert out == {"a": [1], "b": "y", "c": 3, "d": 4}
    assert list(out) == ["a", "b", "c", "d"]
    assert copy.replace(fd) is fd
    assert copy.replace(fd, b=fd["b"]) is fd


def test_dunder_replace_on_every_version(core):
    fd = _fd(core)
    assert fd.__replace__(c=4) == {"a": [1], "b": "x", "c": 4}
    with pytest.raises(TypeError):
        fd.__replace__({"c": 4})


def test_freeze_after_edits_that_cancel_out_is_the_source(core):
    fd = core.frozendict({i: str(i) for i in range(200)})
    e = fd.evolve()
    e["new"] = 1
    del e["new"]
    old = e[5]
    e[5] = "five"
    e[5] = old
    assert e.freeze() is fd
    e[7] = "seven"
    v2 = e.freeze()
    assert v2 is not fd and v2[7] == "seven"
    e[7] = fd[7]
    e[7] = "seven"
    assert e.freeze() is v2  # back to the last version published
    e.pop(7)
    e[7] = "seven"  # re-added: it moved to the end, a real change
    v3 = e.freeze()
    assert v3 is not v2 and list(v3)[-1] == 7
    v3._check()


def test_merge_with_and_apply_that_change_nothing_are_self(core):
    fd = _fd(core)
    assert fd.merge_with(lambda old, new: old, {"a": 0, "c": 0}) is fd
    assert fd.diff(fd).apply(fd) is fd
    grown = fd | {"z": 1}
    assert fd.diff(grown).invert().apply(grown) == fd
