"""``|``, the Evolver and ``diff`` of flat versions (9 to FLAT_MAX keys too).

The pure core works on a flat version's tuples for these (a builder in flat
mode that promotes itself as it outgrows FLAT_MAX; a diff that pairs
positions first), where it built tries for the call before; the C core's
twins are its own.  Whatever a core does inside, the results must be what a
dict model gives: the items and their order, which key object stays, the
form on each side of the threshold (flat exactly when ``len <= FLAT_MAX``),
the very same object when nothing changed, and a failing key's ``__eq__``
leaving everything as it was.  Sizes follow ``FLAT_MAX``, so these hold at
any threshold.
"""

import pytest
from keys import Crasher, CrashError, HashKey

from frozenmap._pycore.flat import FLAT_MAX


def items(n, start=0):
    return [("k%d" % i, i) for i in range(start, start + n)]


def is_flat(fd):
    return fd._dump().split("\n", 1)[0].endswith(" flat")


def check(fd, expected):
    """``fd`` holds ``expected`` (a list of pairs) in order, in the right form."""
    fd._check()
    assert list(fd.items()) == expected
    assert is_flat(fd) == (len(fd) <= FLAT_MAX), fd._dump()


# --- | ------------------------------------------------------------------------------


@pytest.mark.parametrize("start", [FLAT_MAX - 2, FLAT_MAX - 1, FLAT_MAX, FLAT_MAX + 1])
def test_or_across_the_threshold_keeps_order_and_the_form(core, start):
    fd = core.frozendict(items(start))
    # one key replaced (keeps its place), two added (last, in the operand's order)
    operand = {"new1": "a", "k0": "zero", "new2": "b"}
    model = dict(items(start))
    model.update(operand)
    result = fd | operand
    check(result, list(model.items()))
    check(fd, items(start))  # the receiver as it was
    # the same through a frozendict operand, and through |= on a name
    check(fd | core.frozendict(operand), list(model.items()))
    acc = fd
    acc |= operand
    check(acc, list(model.items()))


@pytest.mark.parametrize("n", [1, FLAT_MAX - 1, FLAT_MAX])
def test_or_changing_nothing_is_the_receiver(core, n):
    values = [object() for _ in range(n)]
    fd = core.frozendict(("k%d" % i, v) for i, v in enumerate(values))
    assert (fd | {"k0": values[0]}) is fd
    assert (fd | fd) is fd
    assert (fd | core.frozendict(k0=values[0])) is fd
    # an equal but distinct value is a change: the new object is stored
    other = [1]
    changed = core.frozendict(fd, k0=other) | {"k0": [1]}
    assert changed["k0"] is not other and changed["k0"] == other


@pytest.mark.parametrize("n", [1, FLAT_MAX, FLAT_MAX + 2])
def test_an_equal_but_distinct_value_is_stored(core, n):
    old = [1]
    new = [1]
    fd = core.frozendict(items(n - 1) + [("x", old)])
    e = fd.evolve()
    e["x"] = new
    for result in (fd | {"x": new}, e.freeze()):
        assert result["x"] is new and result is not fd
        check(result, items(n - 1) + [("x", new)])


def test_or_keeps_the_first_key_object(core):
    first = HashKey(7, "a")
    fd = core.frozendict([(first, 1)] + items(FLAT_MAX - 1))
    result = fd | {HashKey(7, "a"): 2}
    assert result[first] == 2
    assert next(iter(result)) is first


def test_or_of_a_subclass_receiver_is_an_exact_frozendict(core):
    class Sub(core.frozendict):
        pass

    fd = Sub(items(FLAT_MAX - 1))
    result = fd | {"x": 1}
    assert type(result) is core.frozendict
    check(result, items(FLAT_MAX - 1) + [("x", 1)])


@pytest.mark.parametrize("start", [FLAT_MAX - 1, FLAT_MAX])
def test_or_with_a_key_eq_raising_midway_changes_nothing(core, start):
    stored = Crasher("a", hash_value=5)
    fd = core.frozendict([(stored, 0)] + items(start - 1))
    before = list(fd.items())
    probe = Crasher("b", hash_value=5)  # equal hash: compared with the stored key
    stored.crash_eq = probe.crash_eq = True
    # the first operand key is new (and may promote), the failing one comes next
    with pytest.raises(CrashError):
        fd | {"new": 1, probe: 2}
    stored.crash_eq = probe.crash_eq = False
    assert list(fd.items()) == before
    fd._check()


# --- the Evolver ------------------------------------------------------------------


def test_evolver_grows_and_shrinks_across_the_threshold(core):
    e = core.frozendict(items(FLAT_MAX - 1)).evolve()
    model = dict(items(FLAT_MAX - 1))
    for i in range(FLAT_MAX - 1, FLAT_MAX + 3):  # up, freezing at each step
        e["k%d" % i] = i
        model["k%d" % i] = i
        assert len(e) == len(model) and e["k%d" % i] == i
        check(e.freeze(), list(model.items()))
    for i in range(FLAT_MAX + 2, FLAT_MAX - 3, -1):  # and down again
        del e["k%d" % i]
        del model["k%d" % i]
        assert "k%d" % i not in e
        check(e.freeze(), list(model.items()))
    assert list(e) == list(model) and list(e.values()) == list(model.values())


def test_evolver_crosses_twice_between_freezes(core):
    e = core.frozendict(items(FLAT_MAX)).evolve()
    e["up"] = 1  # promotes
    e["up2"] = 2
    del e["k0"]
    e.pop("up")
    assert e.popitem() == ("up2", 2)  # back to FLAT_MAX - 1
    assert e.setdefault("k1", "no") == 1
    assert e.setdefault("d", "yes") == "yes"
    check(e.freeze(), items(FLAT_MAX - 1, 1) + [("d", "yes")])
    e.update({"x%d" % i: i for i in range(3)})
    check(e.freeze(), items(FLAT_MAX - 1, 1) + [("d", "yes")] + [("x%d" % i, i) for i in range(3)])


def test_evolver_popitem_is_lifo_on_both_sides_of_the_threshold(core):
    e = core.frozendict(items(FLAT_MAX + 2)).evolve()
    popped = [e.popitem() for _ in range(FLAT_MAX + 2)]
    assert popped == items(FLAT_MAX + 2)[::-1]
    with pytest.raises(KeyError):
        e.popitem()
    check(e.freeze(), [])


@pytest.mark.parametrize("n", [FLAT_MAX - 1, FLAT_MAX])
def test_evolver_edits_that_cancel_out_freeze_to_the_source(core, n):
    values = [object() for _ in range(n)]
    source = core.frozendict(("k%d" % i, v) for i, v in enumerate(values))
    e = source.evolve()
    assert e.freeze() is source
    e["k0"] = "other"
    e["k0"] = values[0]
    assert e.freeze() is source
    e["new"] = 1  # at FLAT_MAX: promoted, then back
    e["new2"] = 2
    del e["new"]
    del e["new2"]
    assert e.freeze() is source
    # freeze() is cached until the next change
    e["k0"] = 1
    assert e.freeze() is e.freeze() and e.freeze() is not source


def test_evolver_iteration_is_a_snapshot_across_a_value_change(core):
    fd = core.frozendict(items(FLAT_MAX))
    e = fd.evolve()
    seen = []
    for key, value in e.items():
        seen.append((key, value))
        e["k%d" % (FLAT_MAX - 1)] = "changed"  # no size change: the walk goes on
    assert seen == items(FLAT_MAX)
    it = iter(e)
    next(it)
    e["grow"] = 1  # crosses the threshold: the iterator stops
    with pytest.raises(RuntimeError):
        next(it)


def test_evolver_frozen_versions_never_change(core):
    e = core.frozendict(items(FLAT_MAX - 1)).evolve()
    e["a"] = 1
    v1 = e.freeze()
    e["a"] = 2
    e["b"] = 3  # promotes at FLAT_MAX - 1 + 2 keys
    e["c"] = 4
    v2 = e.freeze()
    del e["b"]
    del e["c"]
    e["a"] = 5
    check(v1, items(FLAT_MAX - 1) + [("a", 1)])
    check(v2, items(FLAT_MAX - 1) + [("a", 2), ("b", 3), ("c", 4)])
    check(e.freeze(), items(FLAT_MAX - 1) + [("a", 5)])


def test_evolver_update_with_a_raising_key_eq_is_all_or_nothing(core):
    stored = Crasher("a", hash_value=5)
    source = core.frozendict([(stored, 0)] + items(FLAT_MAX - 1))
    e = source.evolve()
    probe = Crasher("b", hash_value=5)
    pairs = [("n%d" % i, i) for i in range(3)] + [(probe, 1)]  # crosses, then fails
    stored.crash_eq = probe.crash_eq = True
    with pytest.raises(CrashError):
        e.update(pairs)
    stored.crash_eq = probe.crash_eq = False
    assert len(e) == FLAT_MAX
    assert e.freeze() is source


def test_evolver_of_an_empty_map_and_clear(core):
    e = core.Evolver()
    e.update({})
    assert e.freeze() == core.frozendict()
    for i in range(FLAT_MAX + 1):
        e["k%d" % i] = i
    e.clear()
    assert len(e) == 0 and list(e) == []
    e["a"] = 1
    check(e.freeze(), [("a", 1)])
    e.update(dict(items(FLAT_MAX + 1)))
    check(e.freeze(), [("a", 1)] + items(FLAT_MAX + 1))


# --- diff --------------------------------------------------------------------------


def _model_diff(a, b):
    added = [(k, v) for k, v in b.items() if k not in a]
    removed = [(k, v) for k, v in a.items() if k not in b]
    changed = [(k, (v, b[k])) for k, v in a.items() if k in b and b[k] != v]
    return added, removed, changed


def _assert_diff(a, b, case):
    d = a.diff(b)
    added, removed, changed = _model_diff(dict(a), dict(b))
    assert list(d.added.items()) == added, case
    assert list(d.removed.items()) == removed, case
    assert list(d.changed.items()) == changed, case


def _edits(fd):
    """Versions a few edits away from ``fd`` (a flat map of FLAT_MAX keys)."""
    n = len(fd)
    middle = "k%d" % (n // 2)
    return {
        "same": fd,
        "set one": fd.set(middle, "x"),
        "set first and last": fd.set("k0", "x").set("k%d" % (n - 1), "y"),
        "equal value": fd.set(middle, float(n // 2)),
        "delete middle": fd.delete(middle),
        "delete first and a set after it": fd.delete("k0").set("k%d" % (n - 1), "y"),
        "delete two": fd.delete("k0").delete(middle),
        "delete and re-add": fd.delete(middle).set(middle, "back"),
        "replace a key": fd.delete(middle).set("other", 1),
        "unrelated": type(fd)(reversed(list(fd.items()))),
    }


@pytest.mark.parametrize("n", [2, FLAT_MAX // 2, FLAT_MAX])
def test_diff_of_related_flat_versions_both_ways(core, n):
    fd = core.frozendict(items(n))
    for case, other in _edits(fd).items():
        _assert_diff(fd, other, case)
        _assert_diff(other, fd, case + ", reversed")
        # across the threshold too: a version grown past FLAT_MAX
        grown = other | {"g%d" % i: i for i in range(FLAT_MAX)}
        _assert_diff(other, grown, case + ", grown")


def test_diff_of_versions_whose_keys_all_collide(core):
    keys = [Crasher("c%d" % i, hash_value=3) for i in range(FLAT_MAX)]  # all collide
    fd = core.frozendict((k, i) for i, k in enumerate(keys))
    other = fd.set(keys[-1], "x").delete(keys[0])
    d = fd.diff(other)  # (each key is equal only to itself)
    assert list(d.removed.items()) == [(keys[0], 0)]
    assert list(d.changed.items()) == [(keys[-1], (FLAT_MAX - 1, "x"))]
    assert not d.added
