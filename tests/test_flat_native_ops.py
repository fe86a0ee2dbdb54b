"""`|`, the Evolver and `diff` of flat versions (9 to FLAT_MAX keys too).

The C core does these three on the flat form itself (no tries built for the
call): a merge into a flat receiver edits a private flat copy and publishes it
while it stays within FLAT_MAX, the Evolver of a flat version edits a flat
buffer until it outgrows FLAT_MAX, and the diff of two flat versions pairs
entries by position first.  What must not change is what a user sees: items,
order, which key object stays, values replaced in place, the identity of an
unchanged result, the user calls, and the errors.  Sizes derive from FLAT_MAX
so the tests hold at 8 and at 32.  Every test runs on both cores.
"""

import gc

import pytest
from keys import CountingKey, Crasher, CrashError, HashKey, HookKey

from frozenmap._pycore.flat import FLAT_MAX


def items(n, start=0):
    return [("k%d" % i, i) for i in range(start, start + n)]


def is_flat(fd):
    return fd._dump().split("\n", 1)[0].endswith(" flat")


def checked(fd):
    fd._check()
    assert is_flat(fd) == (len(fd) <= FLAT_MAX)
    return fd


# --- | of a flat receiver -----------------------------------------------------------


@pytest.mark.parametrize("extra", [1, 2])
def test_or_stays_flat_up_to_flat_max_and_promotes_past_it(core, extra):
    base = core.frozendict(items(FLAT_MAX - 1))
    result = checked(base | dict(items(extra, FLAT_MAX - 1)))
    assert list(result.items()) == items(FLAT_MAX - 1 + extra)
    assert is_flat(result) == (FLAT_MAX - 1 + extra <= FLAT_MAX)
    assert list(base.items()) == items(FLAT_MAX - 1)  # the receiver is unchanged


def test_or_replaces_values_in_place_and_keeps_the_first_key_object(core):
    first = "".join(["k", "1"])  # an equal key object that is not the literal
    base = core.frozendict([("k0", 0), (first, 1), ("k2", 2)])
    result = checked(base | {"k1": "one", "new": 9, "k0": "zero"})
    assert list(result.items()) == [("k0", "zero"), ("k1", "one"), ("k2", 2), ("new", 9)]
    assert [k for k in result if k == "k1"][0] is first
    assert hash(result) == hash(core.frozendict(dict(result)))


def test_or_with_nothing_new_returns_the_receiver_itself(core):
    values = [object() for _ in range(FLAT_MAX)]
    base = core.frozendict(zip(range(FLAT_MAX), values))
    assert (base | {3: values[3], 0: values[0]}) is base
    assert (base | core.frozendict({1: values[1]})) is base

    class Sub(dict):
        pass

    assert (base | Sub({2: values[2]})) is base


def test_or_of_a_subclass_receiver_gives_an_exact_frozendict(core):
    class Sub(core.frozendict):
        pass

    base = Sub(items(3))
    result = checked(base | {"k1": "one"})
    assert type(result) is core.frozendict
    assert list(result.items()) == [("k0", 0), ("k1", "one"), ("k2", 2)]
    same = base | {"k1": 1}
    assert type(same) is core.frozendict and same == base


def test_or_with_a_flat_and_a_large_frozendict(core):
    small = core.frozendict(items(3))
    large = core.frozendict(items(FLAT_MAX + 2, 2))
    result = checked(small | large)
    assert list(result.items()) == items(FLAT_MAX + 4)
    result = checked(core.frozendict() | small)
    assert result == small


def test_or_promotes_when_a_later_key_outgrows_flat_max(core):
    base = core.frozendict(items(FLAT_MAX - 1))
    other = {"k0": "zero", "new1": 1, "k1": "one", "new2": 2}
    result = checked(base | other)
    expected = dict(items(FLAT_MAX - 1))
    expected.update(other)
    assert list(result.items()) == list(expected.items())
    assert not is_flat(result)


def test_or_calls_user_eq_as_a_lookup_does(core):
    CountingKey.reset()
    keys = [CountingKey("a%d" % i, hash_value=7) for i in range(3)]
    base = core.frozendict((k, i) for i, k in enumerate(keys))
    other = {CountingKey("a2", hash_value=7): "two"}
    CountingKey.reset()
    result = base | other
    assert CountingKey.hash_calls == 1
    # the stored keys are asked in order until one says equal
    assert CountingKey.eq_calls == 3
    assert list(result.values()) == [0, 1, "two"]
    assert list(result)[2] is keys[2]


@pytest.mark.parametrize("where", ["hash", "eq"])
def test_or_raising_mid_merge_leaves_the_receiver_and_leaks_nothing(core, where):
    a, b = Crasher("a", hash_value=5), Crasher("b", hash_value=5)
    base = core.frozendict([(a, 1), ("x", 2)])
    before = list(base.items())
    bomb = Crasher("c", hash_value=5)
    if where == "hash":
        bomb.crash_hash = True
    else:
        a.crash_eq = True  # the stored key's __eq__ runs when the hashes match
    with pytest.raises(CrashError):
        base | {b: 1, bomb: 2}
    a.crash_eq = False
    assert list(base.items()) == before
    checked(base)


def test_or_whose_key_eq_drops_every_other_reference_to_the_receiver(core):
    holder = {}

    def drop():
        holder.clear()
        gc.collect()

    stored = HashKey(3, "s")
    base = core.frozendict([(stored, 1), ("y", 2)])
    holder["base"] = base
    result = base | {HookKey("s", 3, drop): 10, "z": 3}
    del base
    assert list(result.items()) == [(stored, 10), ("y", 2), ("z", 3)]
    checked(result)


def test_or_never_edits_a_frozendict_user_code_has_got_hold_of(core):
    """The merge edits its private result in place only while nothing else
    holds it: user code that finds it (gc.get_objects) mid-merge keeps a
    version that never changes afterwards."""
    seen = []

    def grab():
        for o in gc.get_objects():
            if type(o) is core.frozendict and len(o) <= FLAT_MAX:
                seen.append((o, list(o.items())))

    base = core.frozendict([(HashKey(1, "a"), 1), ("b", 2)])
    other = {"c": 3, HookKey("a", 1, grab): 10, "d": 4}
    result = checked(base | other)
    assert list(result.items()) == [(HashKey(1, "a"), 10), ("b", 2), ("c", 3), ("d", 4)]
    assert seen
    for o, before in seen:
        assert list(o.items()) == before
        o._check()


# --- the Evolver of a flat version --------------------------------------------------


def test_evolver_round_trip_edits_a_copy_and_leaves_the_source(core):
    src = core.frozendict(items(FLAT_MAX))
    ev = src.evolve()
    ev["k1"] = "one"
    del ev["k0"]
    ev["new"] = 1
    out = checked(ev.freeze())
    assert list(out.items()) == items(FLAT_MAX - 2, 2)[:0] + [("k1", "one")] + items(
        FLAT_MAX - 2, 2
    ) + [("new", 1)]
    assert list(src.items()) == items(FLAT_MAX)
    assert ev.freeze() is out
    ev["k1"] = "uno"  # an edit after freeze() copies: the published one stays
    assert out["k1"] == "one" and checked(ev.freeze())["k1"] == "uno"


def test_evolver_value_edits_publish_versions_that_stay_apart(core):
    src = core.frozendict(items(FLAT_MAX))
    ev = src.evolve()
    ev["k0"] = "a"
    first = checked(ev.freeze())
    ev["k1"] = "b"
    second = checked(ev.freeze())
    ev["k0"] = "c"
    del src
    gc.collect()
    third = checked(ev.freeze())
    assert list(first.values())[:2] == ["a", 1]
    assert list(second.values())[:2] == ["a", "b"]
    assert list(third.values())[:2] == ["c", "b"]
    assert list(third) == [k for k, _ in items(FLAT_MAX)]
    assert hash(third) == hash(core.frozendict(dict(third)))


def test_or_of_values_only_then_of_keys(core):
    base = core.frozendict(items(4))
    values_only = checked(base | {"k2": "two"})
    both = checked(values_only | {"k2": 2, "k9": 9, "k0": "zero"})
    assert list(values_only.items()) == [("k0", 0), ("k1", 1), ("k2", "two"), ("k3", 3)]
    assert list(both.items()) == [("k0", "zero"), ("k1", 1), ("k2", 2), ("k3", 3), ("k9", 9)]
    del base
    gc.collect()
    assert values_only["k3"] == 3 and hash(values_only) == hash(core.frozendict(dict(values_only)))


def test_evolver_without_changes_freezes_to_the_source(core):
    src = core.frozendict(items(5))
    ev = src.evolve()
    ev["k1"] = 1
    ev["k2"] = "two"
    ev["k2"] = 2
    assert ev.freeze() is src


def test_evolver_crosses_flat_max_both_ways(core):
    ev = core.frozendict(items(FLAT_MAX - 1)).evolve()
    ev["a"] = 1
    ev["b"] = 2  # FLAT_MAX + 1
    big = checked(ev.freeze())
    assert not is_flat(big)
    del ev["a"]
    del ev["b"]
    small = checked(ev.freeze())
    assert list(small.items()) == items(FLAT_MAX - 1)
    ev.update({"c": 3, "d": 4, "k0": "zero"})
    assert list(checked(ev.freeze()).items()) == [("k0", "zero")] + items(FLAT_MAX - 2, 1) + [
        ("c", 3),
        ("d", 4),
    ]


def test_evolver_api_on_a_flat_version(core):
    src = core.frozendict(items(4))
    ev = src.evolve()
    assert len(ev) == 4 and ev["k2"] == 2 and ev.get("nope", 7) == 7 and "k3" in ev
    assert ev.setdefault("k1", "x") == 1
    assert ev.setdefault("new", "n") == "n"
    assert ev.pop("k0") == 0
    assert ev.pop("gone", None) is None
    assert ev.popitem() == ("new", "n")
    assert list(ev) == ["k1", "k2", "k3"]
    assert list(ev.items()) == [("k1", 1), ("k2", 2), ("k3", 3)]
    assert list(reversed(ev.values())) == [3, 2, 1]
    ev.clear()
    assert len(ev) == 0 and checked(ev.freeze()) == core.frozendict()
    ev.update(items(2))
    assert list(checked(ev.freeze()).items()) == items(2)
    assert src == core.frozendict(items(4))


def test_evolver_popitem_down_to_empty(core):
    ev = core.frozendict(items(3)).evolve()
    assert [ev.popitem() for _ in range(3)] == list(reversed(items(3)))
    with pytest.raises(KeyError):
        ev.popitem()
    assert checked(ev.freeze()) == core.frozendict()


def test_evolver_iteration_sees_a_snapshot_and_notices_a_resize(core):
    ev = core.frozendict(items(3)).evolve()
    it = iter(ev.items())
    assert next(it) == ("k0", 0)
    ev["k1"] = "one"  # no resize: the walk goes on
    next(it)
    ev["new"] = 1
    with pytest.raises(RuntimeError):
        next(it)


def test_evolver_edit_from_a_key_eq_is_refused_and_changes_nothing(core):
    ev = core.frozendict([(HashKey(1, "a"), 1), ("b", 2)]).evolve()
    errors = []

    def edit():
        try:
            ev["z"] = 26
        except RuntimeError as exc:
            errors.append(exc)

    ev[HookKey("a", 1, edit)] = "A"
    assert len(errors) == 1
    assert list(ev.freeze().items()) == [(HashKey(1, "a"), "A"), ("b", 2)]


def test_evolver_read_whose_key_eq_edits_sees_the_state_it_started_from(core):
    src = core.frozendict([(HashKey(1, "a"), 1), ("b", 2)])
    ev = src.evolve()
    ev["b"] = 20  # the evolver now owns its copy

    def edit():
        ev["b"] = 200
        ev["c"] = 3
        return ev.freeze()

    probe = HookKey("a", 1, edit)
    assert ev[probe] == 1
    assert list(ev.freeze().items()) == [(HashKey(1, "a"), 1), ("b", 200), ("c", 3)]
    assert probe.results[0] == ev.freeze()
    assert src["b"] == 2


def test_evolver_freeze_from_a_finalizer_during_an_edit(core):
    ev = core.frozendict(items(3)).evolve()
    ev["k0"] = "zero"
    seen = []

    class Value:
        def __del__(self):
            seen.append(dict(ev.freeze()))

    ev["k1"] = Value()
    ev["k1"] = "one"  # releases the Value, whose finalizer freezes
    assert seen and seen[0]["k1"] == "one"
    assert list(checked(ev.freeze()).items()) == [("k0", "zero"), ("k1", "one"), ("k2", 2)]


def test_evolver_update_failing_mid_way_rolls_back(core):
    ev = core.frozendict(items(3)).evolve()
    ev["k0"] = "zero"
    bomb = Crasher("bomb")
    bomb.crash_hash = True
    with pytest.raises(CrashError):
        ev.update([("k1", "one"), ("new", 1), (bomb, 2)])
    assert list(checked(ev.freeze()).items()) == [("k0", "zero"), ("k1", 1), ("k2", 2)]


def test_evolver_items_are_out_of_reach_of_user_code(core):
    """An Evolver's private flat copy is edited in place: no frozendict that
    user code can find (gc) is ever that copy."""
    ev = core.frozendict(items(4)).evolve()
    ev["k0"] = "zero"
    found = [o for o in gc.get_objects() if type(o) is core.frozendict]
    found += [o for o in gc.get_referents(ev) if type(o) is core.frozendict]
    snapshots = [(o, list(o.items())) for o in found]
    ev["k1"] = "one"
    ev["new"] = 1
    del ev["k2"]
    for o, before in snapshots:
        assert list(o.items()) == before
    assert list(checked(ev.freeze()).items()) == [
        ("k0", "zero"),
        ("k1", "one"),
        ("k3", 3),
        ("new", 1),
    ]


def test_evolver_in_a_cycle_is_collected_with_its_items(core):
    class Box:
        pass

    ev = core.frozendict(items(3)).evolve()
    box = Box()
    box.ev = ev
    ev["box"] = box  # ev -> its items -> box -> ev
    ev["k0"] = "zero"
    ref = __import__("weakref").ref(box)
    del ev, box
    gc.collect()
    assert ref() is None


# --- diff of flat versions ----------------------------------------------------------


def diff_as_lists(d):
    return list(d.added.items()), list(d.removed.items()), list(d.changed.items())


def test_diff_of_related_flat_versions(core):
    a = core.frozendict(items(FLAT_MAX))
    b = a.set("k2", "two").delete("k0").set("new", 1)
    assert diff_as_lists(a.diff(b)) == ([("new", 1)], [("k0", 0)], [("k2", (2, "two"))])
    assert diff_as_lists(b.diff(a)) == ([("k0", 0)], [("new", 1)], [("k2", ("two", 2))])
    assert diff_as_lists(a.diff(a)) == ([], [], [])


def test_diff_after_delete_and_reinsert_has_the_orders_of_each_side(core):
    a = core.frozendict(items(6))
    b = a.delete("k1").delete("k3").set("k3", "three").set("k1", "one").set("x", 0)
    added, removed, changed = diff_as_lists(a.diff(b))
    assert added == [("x", 0)] and removed == []
    assert changed == [("k1", (1, "one")), ("k3", (3, "three"))]  # a's order
    added, removed, changed = diff_as_lists(b.diff(a))
    assert added == [] and removed == [("x", 0)]
    assert changed == [("k3", ("three", 3)), ("k1", ("one", 1))]  # b's order


def test_diff_of_equal_but_not_identical_values_and_keys(core):
    a = core.frozendict({"k": 1.0, "j": [1], (1, 2): "t"})
    b = core.frozendict({(1, 2): "t", "j": [1], "k": 1})
    assert diff_as_lists(a.diff(b)) == ([], [], [])


def test_diff_with_colliding_hashes(core):
    keys = [HashKey(9, "h%d" % i) for i in range(4)]
    a = core.frozendict((k, i) for i, k in enumerate(keys))
    b = core.frozendict([(HashKey(9, "h3"), 3), (HashKey(9, "h1"), "one"), (HashKey(9, "z"), 0)])
    added, removed, changed = diff_as_lists(a.diff(b))
    assert added == [(HashKey(9, "z"), 0)]
    assert removed == [(keys[0], 0), (keys[2], 2)]
    assert changed == [(keys[1], (1, "one"))]


def test_diff_value_ne_raising_propagates(core):
    class Bad:
        def __ne__(self, other):
            raise CrashError("ne")

        __eq__ = __ne__
        __hash__ = object.__hash__

    a = core.frozendict(x=Bad(), y=1)
    b = a.set("x", Bad())
    with pytest.raises(CrashError):
        a.diff(b)


def test_diff_results_are_flat_and_checked(core):
    a = core.frozendict(items(FLAT_MAX + 3))
    b = a.set("k4", "four").delete("k7")
    d = a.diff(b)
    for part in d:
        checked(part)
    assert diff_as_lists(d) == ([], [("k7", 7)], [("k4", (4, "four"))])
