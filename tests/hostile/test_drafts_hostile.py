"""Drafts under hostile recipes, keys, values and threads.

A draft lives only inside its recipe and only in the thread running its
``produce``; these tests try every way out of that rule and check each ends
in an exception (never a half-changed draft or a wrong state) while ``base``
stays as it was:

- recipes that raise part-way, and drafts kept after ``produce`` returned
  (in a global, as an iterator or a view): ``RuntimeError`` on every use;
- ``produce`` inside a recipe, on the same base, on another one or on a
  draft, with the inner one raising;
- another thread using a draft while its recipe runs: ``RuntimeError`` in
  that thread, the draft untouched; many threads each running ``produce``
  on one shared base;
- keys whose ``__eq__``/``__hash__`` collide, raise at any call, change, or
  read and write the draft while a change of it is under way;
- values whose finalizers read or change the draft while it changes, or
  after it was revoked, and a ``freeze`` hook that edits the draft.
"""

import gc
import threading

import pytest
from keys import (
    ChangingHashKey,
    CrashError,
    EqBomb,
    FaultKey,
    FaultPlan,
    Finalizer,
    HashKey,
    HookKey,
)

from frozenmap import current, freeze, is_draft, produce, produce_with_patches
from frozenmap.drafts import DictDraft

REFUSED = "cannot be changed now"


def check_valid(value):
    """Every frozendict in ``value`` passes its invariant checks."""
    if hasattr(value, "_check"):
        value._check()
        for item in value.values():
            check_valid(item)
    elif type(value) is tuple:
        for item in value:
            check_valid(item)


def nested(core):
    fd = core.frozendict
    return fd(a=fd(x=1, l=(1, fd(y=2))), b=2)


# --- recipes that raise, drafts kept -------------------------------------------------


@pytest.mark.parametrize("where", ["first read", "after writes", "deep", "in a nested produce"])
def test_a_recipe_raising_anywhere_leaves_base_and_revokes_every_draft(core, where):
    base = nested(core)
    kept = []

    def recipe(d):
        kept.append(d)
        if where == "first read":
            raise CrashError(where)
        d["b"] = 3
        kept.append(d["a"])
        d["a"]["x"] = 10
        kept.append(d["a"]["l"])
        d["a"]["l"].append(5)
        if where == "deep":
            d["a"]["l"][1]["y"] = CrashError
            kept.append(d["a"]["l"][1])
            raise CrashError(where)
        if where == "in a nested produce":
            produce(d["a"], lambda a: (a.__setitem__("z", 1), a["zz"]))
        raise CrashError(where)

    with pytest.raises((CrashError, KeyError)):
        produce(base, recipe)
    assert base == nested(core)
    for draft in kept:
        with pytest.raises(RuntimeError, match="revoked"):
            len(draft)


def test_drafts_kept_after_produce_refuse_every_use(core):
    base = nested(core)
    kept = {}

    def recipe(d):
        kept["draft"] = d
        kept["list"] = d["a"]["l"]
        kept["items"] = d.items()
        kept["values iterator"] = iter(d.values())
        kept["list iterator"] = iter(d["a"]["l"])
        kept["reversed"] = reversed(d)
        d["b"] = 5

    new, _, _ = produce_with_patches(base, recipe)
    assert new["b"] == 5
    uses = [
        lambda: kept["draft"]["b"],
        lambda: kept["draft"].setdefault("c", 1),
        lambda: kept["draft"].copy(),
        lambda: kept["draft"] | {},
        lambda: kept["list"].count(1),
        lambda: kept["list"] + [],
        lambda: kept["list"].extend([1]),
        lambda: kept["list"].insert(0, 1),
        lambda: kept["list"].__imul__(2),
        lambda: kept["list"].reverse(),
        lambda: kept["list"] < [],
        lambda: list(kept["items"]),
        lambda: next(kept["values iterator"]),
        lambda: next(kept["list iterator"]),
        lambda: next(kept["reversed"]),
        lambda: freeze(kept["draft"]),
        lambda: produce(base, lambda d: d.__setitem__("x", kept["draft"])),
        lambda: produce(base, lambda d: kept["list"]),
    ]
    for use in uses:
        with pytest.raises(RuntimeError, match="revoked"):
            use()
    assert is_draft(kept["draft"])


# --- produce inside produce ----------------------------------------------------------


def test_an_inner_produce_that_raises_leaves_the_outer_recipe_going(core):
    base = nested(core)

    def outer(d):
        inner_drafts = []

        def inner(i):
            inner_drafts.append(i)
            i["b"] = 100
            raise CrashError("inner")

        with pytest.raises(CrashError):
            produce(base, inner)  # the same base, its own drafts
        with pytest.raises(RuntimeError, match="revoked"):
            inner_drafts[0]["b"]
        with pytest.raises(CrashError):
            produce(d["a"], inner)  # on a draft: its change before the error stays
        assert d["a"]["b"] == 100
        d["b"] = 3

    new = produce(base, outer)
    assert new["b"] == 3 and new["a"]["b"] == 100 and base == nested(core)


def test_produce_recursing_on_its_own_base(core):
    base = core.frozendict(n=0)

    def recipe(depth):
        def edit(d):
            if depth < 5:
                d["inner"] = produce(base, recipe(depth + 1))
            d["n"] = depth

        return edit

    new = produce(base, recipe(0))
    for depth in range(6):
        assert new["n"] == depth
        new = new.get("inner")
    assert new is None


# --- threads --------------------------------------------------------------------------


def test_another_thread_cannot_use_a_draft(core):
    base = nested(core)
    errors = []

    def other_thread(d, a):
        for use in (
            lambda: d["b"],
            lambda: d.__setitem__("b", 99),
            lambda: a.__setitem__("x", 99),
            lambda: len(a["l"]),
            lambda: current(d),
            lambda: produce(d, lambda x: None),
            lambda: list(d),
        ):
            try:
                use()
            except RuntimeError as exc:
                errors.append(str(exc))

    def recipe(d):
        a = d["a"]
        d["b"] = 3
        thread = threading.Thread(target=other_thread, args=(d, a))
        thread.start()
        thread.join()
        assert repr(d).startswith("DictDraft(")
        assert d["b"] == 3 and a["x"] == 1

    new = produce(base, recipe)
    assert len(errors) == 7 and all(
        "belongs to the thread running its produce()" in e for e in errors
    )
    assert new == core.frozendict(a=base["a"], b=3) and new["a"] is base["a"]


def test_a_drafts_repr_from_another_thread_says_so(core):
    seen = []

    def recipe(d):
        thread = threading.Thread(target=lambda: seen.append(repr(d)))
        thread.start()
        thread.join()

    produce(core.frozendict(), recipe)
    assert seen == ["<DictDraft (of another thread)>"]


def test_many_threads_producing_from_one_base(core):
    fd = core.frozendict
    base = fd({"k%d" % i: fd(n=0) for i in range(50)})
    results = {}
    start = threading.Barrier(4)

    def worker(number):
        start.wait()
        mine = []
        for round_ in range(30):

            def recipe(d):
                for i in range(0, 50, 7):
                    d["k%d" % i]["n"] += number + round_

            mine.append(produce(base, recipe))
        results[number] = mine

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for number, states in results.items():
        for round_, state in enumerate(states):
            for i in range(50):
                expected = number + round_ if i % 7 == 0 else 0
                assert state["k%d" % i]["n"] == expected
                if i % 7:
                    assert state["k%d" % i] is base["k%d" % i]
    assert all(v["n"] == 0 for v in base.values())


# --- keys that lie -------------------------------------------------------------------


def test_colliding_keys_behave_as_in_a_dict(core):
    fd = core.frozendict
    keys = [HashKey(7, "k%d" % i) for i in range(40)]  # one hash for all
    base = fd({k: fd(v=i) for i, k in enumerate(keys)})
    model = {k: {"v": i} for i, k in enumerate(keys)}

    def edit(m):
        for i, key in enumerate(keys[::3]):
            m[key]["v"] = -i
        del m[keys[1]]
        m[HashKey(7, "k1")] = {"v": "back"}  # an equal key object, re-added last
        m.pop(keys[2])

    edit(model)
    new = produce(base, edit)
    assert list(new) == list(model)
    assert new == freeze(model)
    check_valid(new)


def test_keys_raising_in_eq_or_hash_leave_the_draft_usable(core):
    fd = core.frozendict
    bomb = EqBomb(5)
    base = fd({HashKey(5, "a"): 1, "plain": fd(x=1)})

    def recipe(d):
        with pytest.raises(CrashError):
            d[bomb] = 1  # compared with the HashKey of the same hash
        with pytest.raises(CrashError):
            bomb in d
        with pytest.raises(CrashError):
            d.pop(bomb)
        d["plain"]["x"] = 2
        assert len(d) == 2

    new = produce(base, recipe)
    assert new["plain"]["x"] == 2 and len(new) == 2
    check_valid(new)


def test_a_key_whose_hash_changed_is_not_found_as_in_a_dict(core):
    key = ChangingHashKey(1)
    base = core.frozendict({key: core.frozendict(x=1)})

    def recipe(d):
        key.h = 2
        with pytest.raises(KeyError):
            d[key]
        key.h = 1
        d[key]["x"] = 2

    new = produce(base, recipe)
    assert new[key]["x"] == 2


def test_a_fault_at_every_user_call(core):
    """Each call into a key's ``__hash__``/``__eq__`` fails in turn: the
    ``produce`` raises, ``base`` is as it was, and the drafts are revoked; a
    recipe catching each failure still gets a valid state."""
    plan = FaultPlan()
    fd = core.frozendict
    keys = [FaultKey(str(i), i % 3, plan) for i in range(6)]
    base = fd({k: fd(v=i) for i, k in enumerate(keys[:4])})

    def steps(d):
        yield lambda: d[keys[0]]["v"]
        yield lambda: d[keys[1]].__setitem__("v", 10)
        yield lambda: d.__setitem__(keys[4], {"v": 4})
        yield lambda: d.__delitem__(keys[2])
        yield lambda: d.pop(keys[3])
        yield lambda: d.__setitem__(keys[5], d[keys[0]])
        yield lambda: d.update({keys[2]: 2})
        yield lambda: d.setdefault(keys[0], 0)
        yield lambda: d.popitem()

    def strict(d):
        for step in steps(d):
            step()

    plan.count()
    expected = produce(base, strict)
    total = plan.calls
    assert total > 10
    kept = []
    for n in range(1, total + 1):
        plan.arm(n)

        def failing(d):
            kept.append(d)
            strict(d)

        try:
            new = produce(base, failing)
        except CrashError:
            pass
        else:  # (a call made only on the way that did not fail)
            assert new == expected
        plan.disarm()
        with pytest.raises(RuntimeError, match="revoked"):
            len(kept[-1])
        check_valid(base)
        assert len(base) == 4

        def tolerant(d):
            for step in steps(d):
                try:
                    step()
                except CrashError:
                    pass

        plan.arm(n)
        try:
            new = produce(base, tolerant)
        except CrashError:  # from the finish, where the recipe cannot catch it
            new = base
        finally:
            plan.disarm()
        check_valid(new)
        for value in new.values():
            assert value in (0, 2, 10, fd(v=0), fd(v=1), fd(v=2), fd(v=3), fd(v=4), fd(v=10))


def test_a_key_editing_the_draft_during_a_change_is_refused(core):
    fd = core.frozendict
    holder = {}

    def edit_during():
        return holder["draft"].__setitem__("other", 1)

    def read_during():
        return holder["draft"].get("plain")

    editing = HookKey("k", 9, action=lambda: _record(edit_during))
    reading = HookKey("r", 9, action=lambda: _record(read_during))
    base = fd({HashKey(9, "k"): 0, HashKey(9, "r"): 0, "plain": 5})

    def recipe(d):
        holder["draft"] = d
        d[editing] = 1  # its __eq__ (against the stored key) edits the draft
        d[reading] = 2  # its __eq__ reads it: allowed

    new = produce(base, recipe)
    assert editing.results[0][0] is RuntimeError and REFUSED in editing.results[0][1]
    assert reading.results == [(None, 5)]
    assert "other" not in new and new[HashKey(9, "k")] == 1 and new[HashKey(9, "r")] == 2
    check_valid(new)


def _record(action):
    try:
        return (None, action())
    except Exception as exc:
        return (type(exc), str(exc))


# --- finalizers and hooks --------------------------------------------------------------


def test_finalizers_reading_and_changing_the_draft(core):
    holder = {}
    Finalizer.log = []
    base = core.frozendict(a=0, b=0)

    def recipe(d):
        holder["draft"] = d
        d["a"] = Finalizer("reader", lambda: holder["draft"]["b"])
        d["a"] = Finalizer("writer", lambda: holder["draft"].__setitem__("c", 1))
        d["a"] = 1  # releases both finalizers, inside these changes
        gc.collect()
        d["b"] = 2

    new = produce(base, recipe)
    log = dict(Finalizer.log)
    assert log["reader"] in (0, 2) or isinstance(log["reader"], RuntimeError)
    writer = log["writer"]
    assert writer is None or (isinstance(writer, RuntimeError) and REFUSED in str(writer))
    assert new["a"] == 1 and new["b"] == 2
    assert ("c" in new) == (writer is None)
    check_valid(new)


def test_a_finalizer_using_a_draft_after_produce_is_refused(core):
    Finalizer.log = []

    def make_garbage():
        holder = {}  # the draft holds the value, whose finalizer holds the draft

        def recipe(d):
            holder["draft"] = d
            d["value"] = Finalizer("late", lambda: holder["draft"]["value"])

        produce(core.frozendict(), recipe)

    make_garbage()
    gc.collect()
    ((name, result),) = Finalizer.log
    assert name == "late" and isinstance(result, RuntimeError) and "revoked" in str(result)


def test_a_freeze_hook_that_edits_the_draft(core):
    class Custom:
        pass

    holder = {}

    @freeze.register(Custom)
    def _freeze_custom(value):
        holder["draft"]["from the hook"] = True  # runs before the change it serves
        return "frozen custom"

    def recipe(d):
        holder["draft"] = d
        d["c"] = [Custom()]

    new = produce(core.frozendict(), recipe)
    assert new == {"from the hook": True, "c": ("frozen custom",)}


def test_values_whose_eq_raises_in_list_searches(core):
    class Bad:
        def __eq__(self, other):
            raise CrashError("eq")

        __hash__ = object.__hash__

    bad = Bad()
    base = (1, bad, 2)

    def recipe(items):
        with pytest.raises(CrashError):
            items.remove(2)  # 1 == 2 is False, then bad == 2 raises
        with pytest.raises(CrashError):
            items.index(3)
        with pytest.raises(CrashError):
            items.count(3)
        items.append(3)

    new = produce(base, recipe)
    assert new[:2] == (1,) + (bad,) and new[2:] == (2, 3)


def test_a_draft_holding_itself_is_refused_at_the_finish(core):
    base = nested(core)
    kept = []

    def recipe(d):
        kept.append(d)
        d["a"]["l"][1]["loop"] = d["a"]

    with pytest.raises(ValueError, match="contains itself"):
        produce(base, recipe)
    with pytest.raises(RuntimeError, match="revoked"):
        kept[0]["a"]
    assert base == nested(core)


def test_a_recipe_keeping_a_draft_in_a_state_it_returns(core):
    base = nested(core)
    new = produce(base, lambda d: core.frozendict(inside=d["a"]))  # a draft inside a frozendict
    assert new == core.frozendict(inside=base["a"]) and new["inside"] is base["a"]
    assert type(new) is core.frozendict and not isinstance(new["inside"], DictDraft)
