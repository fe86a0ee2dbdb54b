"""User code that raises, at every call an operation makes into it (docs/spec.md §4;
docs/how-it-works.md, "User code, finalizers and threads"), on both cores.

Each operation is first run with ``FaultKey`` and ``FaultValue`` objects that
only count their calls into user code (``__hash__``, ``__eq__``, the truth
test of ``__eq__``'s result, ``__repr__``); then it is run again once per
call, failing at exactly that call, with ``CrashError``, ``KeyboardInterrupt``
and ``MemoryError``.  After each run every version built beforehand holds the
same objects and passes ``_check()``, an evolver that failed is exactly as it
was, one that succeeded holds what a dict would, and a fault that did not
propagate was one the design allows to be absorbed (a value's ``__hash__``
while a derivation updates the cached hash accumulator).  Nothing leaks on
the failure paths (reference counts come back).

``test_raising_hash_and_eq.py`` has the targeted cases.
"""

import gc
import pickle
import sys
from collections.abc import Mapping

import pytest
from fault_helpers import assert_same_items, same_items
from helpers import Snapshot
from keys import CrashError, FaultKey, FaultPlan, FaultValue

ERRORS = [CrashError, KeyboardInterrupt, MemoryError]
ERROR_IDS = ["CrashError", "KeyboardInterrupt", "MemoryError"]


# --- the world every fault sweep runs in ---------------------------------------------------


class World:
    """Keys, values, versions and an evolver, all built with the plan not armed.

    Keys 0-11 come in groups of three sharing one full hash (collision nodes),
    and all twelve share their low 35 bits (a path seven levels deep); keys
    12-23 spread over the root.  ``probes[i]`` equals ``keys[i]`` but is
    another object, so finding it runs ``__eq__``.  ``extra[i]`` are new keys
    that collide with ``keys[i]``.
    """

    def __init__(self, core):
        self.core = core
        fd = core.frozendict
        plan = self.plan = FaultPlan()
        hashes = [((i // 3) << 35) | 7 for i in range(12)] + [i * 33 for i in range(12, 24)]
        self.keys = [FaultKey(i, h, plan) for i, h in enumerate(hashes)]
        self.probes = [FaultKey(i, h, plan) for i, h in enumerate(hashes)]
        self.extra = [FaultKey(100 + i, h, plan) for i, h in enumerate(hashes)]
        self.values = [FaultValue(i, plan) for i in range(24)]
        self.new_values = [FaultValue(1000 + i, plan) for i in range(24)]
        self.equal_values = [FaultValue(i, plan) for i in range(24)]  # == values[i]
        base = fd(zip(self.keys[:16], self.values[:16]))
        hash(base)  # known hash: derivations update the accumulator (values' __hash__)
        # hash unknown; equal keys that are other objects, so == must call __eq__
        cold = fd(zip(self.probes[:16], self.values[:16]))
        self.versions = {
            "base": base,
            "cold": cold,
            "set": base.set(self.keys[20], self.values[20]),
            "changed": base.set(self.keys[4], self.new_values[4]),
            # derived from a version whose hash is unknown: == must walk
            "cold_changed": cold.set(self.keys[4], self.new_values[4]),
            "equalvalue": base.set(self.keys[5], self.equal_values[5]),
            "deleted": base.delete(self.keys[4]),
            "small": fd(zip(self.keys[:4], self.values[:4])),
        }
        e = base.evolve()
        e[self.keys[17]] = self.values[17]
        del e[self.keys[1]]
        e[self.keys[2]] = self.new_values[2]
        self.frozen_before = e.freeze()
        e[self.keys[18]] = self.values[18]  # owned nodes again after the freeze
        e[self.keys[7]] = self.new_values[7]
        self.evolver = e
        self.snapshots = [Snapshot(v) for v in self.versions.values()]
        self.snapshots.append(Snapshot(self.frozen_before))
        self.evolver_before = list(e.items())

    def model(self, name):
        """A dict with the items of a version (runs the keys' hash: plan must be idle)."""
        return dict(self.versions[name].items())

    def check_versions(self):
        for snap in self.snapshots:
            snap.check()

    def check_evolver_unchanged(self):
        e = self.evolver
        assert len(e) == len(self.evolver_before)
        assert_same_items(e, self.evolver_before, "evolver after a failed edit")
        e._check()
        assert same_items(e.freeze().items(), self.evolver_before)

    def check_evolver_usable(self):
        e = self.evolver
        e[self.extra[23]] = self.values[23]
        assert list(e.items())[-1][0] is self.extra[23]
        e._check()


def _frozendict_result(w, expected_items):
    def check(result):
        assert type(result) is w.core.frozendict
        result._check()
        assert_same_items(result, expected_items, "result")
        assert hash(result) == hash(frozenset(result.items()))

    return check


def _equals(expected):
    def check(result):
        assert result == expected, (result, expected)

    return check


def _evolver_result(w, model, returned=None, returned_is=None):
    expected_items = list(model.items())

    def check(result):
        e = w.evolver
        assert_same_items(e, expected_items, "evolver")
        e._check()
        frozen = e.freeze()
        assert_same_items(frozen, expected_items, "frozen evolver")
        assert hash(frozen) == hash(frozenset(frozen.items()))
        if returned is not None:
            assert result == returned
        if returned_is is not None:
            assert result is returned_is

    return check


class Pairs(Mapping):
    """A Mapping that is not a dict: read through ``keys()`` and ``[]``."""

    def __init__(self, items):
        self._items = list(items)

    def __getitem__(self, key):
        for k, v in self._items:
            if k is key:
                return v
        raise KeyError(key)

    def __iter__(self):
        return iter([k for k, _ in self._items])

    def __len__(self):
        return len(self._items)


# Each operation takes the World and returns (run, check, absorbable):
# ``run()`` performs it (with the plan armed), ``check(result)`` verifies a
# successful result, ``absorbable`` names the calls whose faults the operation
# may legitimately absorb.

HASH_ACC = {"vhash"}  # a value's __hash__ while a derivation updates the accumulator


def op_construct_pairs(w):
    pairs = list(zip(w.keys[:10], w.values[:10])) + [
        (w.probes[3], w.new_values[3]),
        (w.extra[5], w.values[20]),
    ]
    d = {}
    for k, v in pairs:
        d[k] = v
    expected = list(d.items())
    return lambda: w.core.frozendict(pairs), _frozendict_result(w, expected), set()


def op_construct_dict(w):
    d = dict(zip(w.keys[:14], w.values[:14]))
    return lambda: w.core.frozendict(d), _frozendict_result(w, list(d.items())), set()


def op_construct_mapping(w):
    pairs = list(zip(w.keys[6:12], w.values[6:12]))
    source = Pairs(pairs)
    return lambda: w.core.frozendict(source), _frozendict_result(w, pairs), set()


def op_construct_with_kwargs(w):
    pairs = list(zip(w.keys[:6], w.values[:6]))
    expected = pairs + [("x", w.values[7])]
    return (
        lambda: w.core.frozendict(pairs, x=w.values[7]),
        _frozendict_result(w, expected),
        set(),
    )


def op_fromkeys(w):
    keys = w.keys[:8] + [w.probes[2], w.extra[2]]
    d = dict.fromkeys(keys, w.values[0])
    return (
        lambda: w.core.frozendict.fromkeys(keys, w.values[0]),
        _frozendict_result(w, list(d.items())),
        set(),
    )


def _set(name, key_of, value_of):
    def op(w):
        v = w.versions[name]
        key, value = key_of(w), value_of(w)
        d = w.model(name)
        d[key] = value
        return lambda: v.set(key, value), _frozendict_result(w, list(d.items())), HASH_ACC

    op.__name__ = "op_set_%s" % name
    return op


op_set_new_colliding = _set("base", lambda w: w.extra[3], lambda w: w.values[23])
op_set_new_on_cold = _set("cold", lambda w: w.extra[13], lambda w: w.values[23])
op_set_existing_via_probe = _set("base", lambda w: w.probes[4], lambda w: w.new_values[4])
op_set_existing_deep = _set("changed", lambda w: w.probes[10], lambda w: w.new_values[10])


def op_set_same_value(w):
    v = w.versions["base"]
    key, value = w.probes[5], w.values[5]

    def check(result):
        assert result is v

    return lambda: v.set(key, value), check, set()


def op_delete_probe(w):
    v = w.versions["base"]
    d = w.model("base")
    del d[w.probes[4]]
    return lambda: v.delete(w.probes[4]), _frozendict_result(w, list(d.items())), HASH_ACC


def op_delete_absent(w):
    v = w.versions["base"]

    def run():
        try:
            v.delete(w.extra[4])
        except KeyError as exc:
            return exc.args
        raise AssertionError("delete of an absent key did not raise KeyError")

    def check(result):
        assert result == (w.extra[4],)

    return run, check, set()


def op_discard_probe(w):
    v = w.versions["set"]
    d = w.model("set")
    del d[w.probes[9]]
    return lambda: v.discard(w.probes[9]), _frozendict_result(w, list(d.items())), HASH_ACC


def op_discard_absent(w):
    v = w.versions["base"]

    def check(result):
        assert result is v

    return lambda: v.discard(w.extra[10]), check, set()


def op_or_dict(w):
    v = w.versions["base"]
    other = {w.probes[3]: w.new_values[3], w.extra[3]: w.values[22], w.extra[15]: w.values[21]}
    d = w.model("base")
    d.update(other)
    return lambda: v | other, _frozendict_result(w, list(d.items())), HASH_ACC


def op_or_version(w):
    v = w.versions["deleted"]
    other = w.versions["set"]
    d = w.model("deleted")
    d.update(other.items())
    return lambda: v | other, _frozendict_result(w, list(d.items())), HASH_ACC


def op_sub(w):
    v = w.versions["base"]
    drop = [w.probes[0], w.extra[1], w.probes[14], w.probes[8]]
    d = w.model("base")
    for k in drop:
        d.pop(k, None)
    return lambda: v - drop, _frozendict_result(w, list(d.items())), HASH_ACC


def op_and(w):
    v = w.versions["base"]
    keep = [w.probes[9], w.extra[1], w.probes[2], w.probes[13]]
    d = w.model("base")
    expected = [(k, val) for k, val in d.items() if k in set(keep)]
    return lambda: v & keep, _frozendict_result(w, expected), set()


def _eq(a_name, b_name):
    def op(w):
        a, b = w.versions[a_name], w.versions[b_name]
        expected = w.model(a_name) == w.model(b_name)
        return lambda: a == b, _equals(expected), set()

    op.__name__ = "op_eq_%s_%s" % (a_name, b_name)
    return op


op_eq_changed = _eq("cold", "cold_changed")
op_eq_changed_hashed = _eq("base", "changed")  # the old value's hash is not trusted: a walk
op_eq_equal_value = _eq("base", "equalvalue")
op_eq_cold = _eq("cold", "base")


def op_eq_dict(w):
    v = w.versions["equalvalue"]
    d = w.model("base")
    d[w.probes[6]] = d.pop(w.keys[6])  # same items, another key object, other order
    expected = True
    return lambda: (v == d, d == v, v != d), _equals((expected, expected, not expected)), set()


def _diff(a_name, b_name, as_dict=False):
    def op(w):
        a = w.versions[a_name]
        b = w.versions[b_name]
        da, db = w.model(a_name), w.model(b_name)
        other = db if as_dict else b
        added = [(k, v) for k, v in db.items() if k not in da]
        removed = [(k, v) for k, v in da.items() if k not in db]
        changed = [
            (k, (v, db[k])) for k, v in da.items() if k in db and v is not db[k] and v != db[k]
        ]

        def check(result):
            assert_same_items(result.added, added, "added")
            assert_same_items(result.removed, removed, "removed")
            got = list(result.changed.items())
            assert len(got) == len(changed)
            for (k1, (o1, n1)), (k2, (o2, n2)) in zip(got, changed):
                assert k1 is k2 and o1 is o2 and n1 is n2
            for part in result:
                part._check()

        return lambda: a.diff(other), check, set()

    op.__name__ = "op_diff_%s_%s%s" % (a_name, b_name, "_dict" if as_dict else "")
    return op


op_diff_versions = _diff("deleted", "set")
op_diff_equal_value = _diff("base", "equalvalue")
op_diff_dict = _diff("changed", "set", as_dict=True)


def op_lookups(w):
    v = w.versions["set"]
    d = w.model("set")

    def run():
        return (
            w.probes[5] in v,
            w.extra[5] in v,
            v.get(w.probes[20]),
            v.get(w.extra[20], "default"),
            v[w.probes[11]],
        )

    expected = (True, False, d[w.keys[20]], "default", d[w.keys[11]])

    def check(result):
        assert all(a is b or a == b for a, b in zip(result, expected))

    return run, check, set()


def op_views(w):
    v = w.versions["base"]
    probes = {w.probes[1], w.extra[2], w.probes[12]}  # built idle: hashes done

    def run():
        return (v.keys() & probes, (w.probes[3], w.values[3]) in v.items())

    def check(result):
        common, contains = result
        assert common == {w.keys[1], w.keys[12]}
        assert contains is True

    return run, check, set()


def op_hash_cold(w):
    v = w.versions["cold"]
    expected = hash(frozenset(w.model("cold").items()))
    return lambda: hash(v), _equals(expected), set()


def op_repr(w):
    v = w.versions["small"]
    expected = "frozendict({K0: V0, K1: V1, K2: V2, K3: V3})"
    return lambda: repr(v), _equals(expected), set()


def op_pickle_roundtrip(w):
    v = w.versions["small"]
    protocol = pickle.HIGHEST_PROTOCOL

    def run():
        # FaultKeys pickle with a copy of their plan: only this side's calls count
        return pickle.dumps(v, protocol)

    def check(result):
        assert len(pickle.loads(result)) == 4

    return run, check, set()


# --- evolver operations -------------------------------------------------------------------


def _evolver_model(w):
    return dict(w.evolver.items())


def op_e_setitem_new(w):
    d = _evolver_model(w)
    d[w.extra[6]] = w.values[21]
    return lambda: w.evolver.__setitem__(w.extra[6], w.values[21]), _evolver_result(w, d), HASH_ACC


def op_e_setitem_existing(w):
    d = _evolver_model(w)
    d[w.probes[0]] = w.new_values[0]
    return (
        lambda: w.evolver.__setitem__(w.probes[0], w.new_values[0]),
        _evolver_result(w, d),
        HASH_ACC,
    )


def op_e_setitem_owned(w):
    d = _evolver_model(w)
    d[w.probes[7]] = w.values[19]  # the key edited last: its path is owned
    return lambda: w.evolver.__setitem__(w.probes[7], w.values[19]), _evolver_result(w, d), HASH_ACC


def op_e_delitem(w):
    d = _evolver_model(w)
    del d[w.probes[10]]
    return lambda: w.evolver.__delitem__(w.probes[10]), _evolver_result(w, d), HASH_ACC


def op_e_pop(w):
    d = _evolver_model(w)
    value = d.pop(w.probes[18])
    return lambda: w.evolver.pop(w.probes[18]), _evolver_result(w, d, returned_is=value), HASH_ACC


def op_e_pop_absent(w):
    d = _evolver_model(w)
    return lambda: w.evolver.pop(w.extra[0], "dflt"), _evolver_result(w, d, returned="dflt"), set()


def op_e_discard(w):
    d = _evolver_model(w)
    del d[w.probes[3]]
    return (
        lambda: w.evolver.discard(w.probes[3]),
        _evolver_result(w, d, returned_is=w.evolver),
        HASH_ACC,
    )


def op_e_popitem(w):
    d = _evolver_model(w)
    item = d.popitem()
    # (popitem hashes its key only to find the entry: an Exception from that
    # hash is discarded and the entry found by a scan)
    return lambda: w.evolver.popitem(), _evolver_result(w, d, returned=item), HASH_ACC | {"hash"}


def op_e_setdefault(w):
    d = _evolver_model(w)
    d.setdefault(w.extra[9], w.values[9])
    return (
        lambda: (
            w.evolver.setdefault(w.probes[9], "x"),
            w.evolver.setdefault(w.extra[9], w.values[9]),
        ),
        _evolver_result(w, d, returned=(w.values[9], w.values[9])),
        HASH_ACC,
    )


def op_e_update_pairs(w):
    pairs = [
        (w.probes[0], w.new_values[0]),
        (w.extra[0], w.values[20]),
        (w.probes[17], w.new_values[17]),
        (w.extra[1], w.values[21]),
        (w.extra[0], w.values[22]),
    ]
    d = _evolver_model(w)
    for k, v in pairs:
        d[k] = v
    return lambda: w.evolver.update(pairs), _evolver_result(w, d), HASH_ACC


def op_e_update_dict_and_kwargs(w):
    other = {w.probes[11]: w.new_values[11], w.extra[11]: w.values[11]}
    d = _evolver_model(w)
    d.update(other)
    d["kw"] = w.values[0]
    return lambda: w.evolver.update(other, kw=w.values[0]), _evolver_result(w, d), HASH_ACC


def op_e_update_version(w):
    other = w.versions["changed"]
    d = _evolver_model(w)
    d.update(other.items())
    return lambda: w.evolver.update(other), _evolver_result(w, d), HASH_ACC


def op_e_reads(w):
    d = _evolver_model(w)
    expected = (True, False, d[w.keys[17]], None)

    def run():
        e = w.evolver
        return (w.probes[17] in e, w.extra[17] in e, e[w.probes[17]], e.get(w.extra[12]))

    def check(result):
        assert all(a is b for a, b in zip(result, expected))
        _evolver_result(w, d)(None)

    return run, check, set()


def op_e_eq(w):
    # the same items under equal, distinct key objects: every lookup runs __eq__
    other = {w.probes[k.name]: v for k, v in w.evolver.items()}
    return lambda: (w.evolver == other, other == w.evolver), _equals((True, True)), set()


OPS = [
    op_construct_pairs,
    op_construct_dict,
    op_construct_mapping,
    op_construct_with_kwargs,
    op_fromkeys,
    op_set_new_colliding,
    op_set_new_on_cold,
    op_set_existing_via_probe,
    op_set_existing_deep,
    op_set_same_value,
    op_delete_probe,
    op_delete_absent,
    op_discard_probe,
    op_discard_absent,
    op_or_dict,
    op_or_version,
    op_sub,
    op_and,
    op_eq_changed,
    op_eq_equal_value,
    op_eq_cold,
    op_eq_dict,
    op_diff_versions,
    op_diff_equal_value,
    op_diff_dict,
    op_lookups,
    op_views,
    op_hash_cold,
    op_repr,
    op_pickle_roundtrip,
    op_e_setitem_new,
    op_e_setitem_existing,
    op_e_setitem_owned,
    op_e_delitem,
    op_e_pop,
    op_e_pop_absent,
    op_e_discard,
    op_e_popitem,
    op_e_setdefault,
    op_e_update_pairs,
    op_e_update_dict_and_kwargs,
    op_e_update_version,
    op_e_reads,
    op_e_eq,
]
OP_IDS = [op.__name__[3:] for op in OPS]


def _run_with_fault(core, op, n, error):
    """Run ``op`` failing at call ``n``; check everything afterwards.

    Returns True if the fault propagated, False if it was absorbed.
    """
    w = World(core)
    run, check, absorbable = op(w)
    w.plan.arm(n, error)
    try:
        result = run()
    except error as exc:
        w.plan.disarm()
        assert w.plan.fired is not None, "%r raised without an injected fault" % (exc,)
        assert str(exc).startswith("injected fault at call %d" % n), exc
        propagated = True
    else:
        w.plan.disarm()
        assert w.plan.fired is not None, "call %d never happened (the run made %d)" % (
            n,
            w.plan.calls,
        )
        assert w.plan.fired in absorbable and error is not KeyboardInterrupt, (
            "a fault in %s (call %d) was swallowed" % (w.plan.fired, n)
        )
        check(result)
        propagated = False
    w.check_versions()
    if propagated:
        w.check_evolver_unchanged()
    w.check_evolver_usable()
    w.check_versions()
    return propagated


def _count_calls(core, op):
    w = World(core)
    run, check, _ = op(w)
    w.plan.count()
    result = run()
    calls = w.plan.calls
    w.plan.disarm()
    check(result)
    w.check_versions()
    return calls


@pytest.mark.parametrize("error", ERRORS, ids=ERROR_IDS)
@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
def test_fault_at_every_call_into_user_code(core, op, error):
    calls = _count_calls(core, op)
    # (popitem's calls: its key's __hash__ when that is Python code, and the
    # popped value's __hash__ for the hash accumulator when it is not; a diff
    # of two related flat versions -- 16 and 17 keys under a FLAT_MAX of 32 --
    # pairs the keys by position and, with no value changed, calls nothing)
    assert calls > 0 or op in (op_construct_with_kwargs, op_e_popitem, op_diff_versions), (
        "operation makes no user calls"
    )
    propagated = 0
    for n in range(1, calls + 1):
        propagated += _run_with_fault(core, op, n, error)
    # every fault outside the hash accumulator must reach the caller
    # (popitem absorbs the faults of both its calls: its key's hash only
    # guides the search, and the value's feeds the accumulator)
    assert propagated >= 1 or calls == 0 or op is op_e_popitem


def test_the_sweeps_reach_every_kind_of_call(core):
    """The world is adversarial enough: each kind of user call happens somewhere."""
    kinds = set()
    for op in OPS:
        w = World(core)
        run, check, _ = op(w)
        original = w.plan.tick
        seen = set()

        def tick(what, original=original, seen=seen):
            seen.add(what)
            original(what)

        w.plan.tick = tick
        w.plan.count()
        run()
        kinds |= seen
    assert {"hash", "eq", "bool", "repr", "vhash", "veq", "vrepr"} <= kinds, kinds


FROZENDICT_OPS = [op for op in OPS if not op.__name__.startswith("op_e_")]


@pytest.mark.parametrize("op", FROZENDICT_OPS, ids=[op.__name__[3:] for op in FROZENDICT_OPS])
def test_failure_paths_do_not_leak_references(core, op):
    """Reference counts of every key and value come back after failing runs."""
    w = World(core)
    run, check, absorbable = op(w)
    w.plan.count()
    run()
    calls = w.plan.calls
    w.plan.disarm()
    objects = w.keys + w.probes + w.extra + w.values + w.new_values + w.equal_values
    gc.collect()
    before = [sys.getrefcount(o) for o in objects]
    for _ in range(20):
        for n in sorted({1, (calls + 1) // 2, calls} - {0}):
            w.plan.arm(n, CrashError)
            try:
                run()
            except CrashError:
                pass
            w.plan.disarm()
    gc.collect()
    after = [sys.getrefcount(o) for o in objects]
    grown = [(_label(o), a - b) for o, a, b in zip(objects, after, before) if a != b]
    assert not grown, "reference counts changed: %r" % (grown,)


def _label(o):
    return "%s(%s)" % (type(o).__name__, getattr(o, "name", getattr(o, "payload", "?")))


def test_evolver_failure_paths_do_not_leak_references(core):
    """Failing evolver edits keep no reference to the key or value involved."""
    plan = FaultPlan()
    stored = [FaultKey(i, 77 if i < 4 else i, plan) for i in range(12)]
    e = core.frozendict((k, FaultValue(k.name, plan)) for k in stored).evolve()
    e[stored[5]] = FaultValue(-5, plan)
    key = FaultKey(99, 77, plan)  # collides: finding it runs stored keys' __eq__
    value = FaultValue(99, plan)
    edits = [
        lambda: e.__setitem__(key, value),
        lambda: e.setdefault(key, value),
        lambda: e.pop(key, value),
        lambda: e.discard(key),
        lambda: e.update([(stored[1], value), (key, value)]),
        lambda: e.update({stored[2]: value}, k=value),
    ]
    gc.collect()
    before = (sys.getrefcount(key), sys.getrefcount(value))
    for _ in range(200):
        for edit in edits:
            plan.arm(2)
            try:
                edit()
            except CrashError:
                pass
            plan.disarm()
            assert key not in e
    gc.collect()
    assert (sys.getrefcount(key), sys.getrefcount(value)) == before
    e._check()


def test_eq_of_hashed_versions_one_set_apart_makes_no_user_calls(core):
    """A version derived from one whose hash is known has its hash at once, and
    two versions with different known hashes compare unequal without a walk.
    (The value replaced is an int: an old value whose ``__hash__`` is Python
    code is never trusted twice, so replacing one leaves the hash unknown and
    == walks, as op_eq_changed_hashed does.)"""
    w = World(core)
    base = core.frozendict(zip(w.keys[:16], w.values[:15] + [15]))
    hash(base)
    changed = base.set(w.keys[15], w.new_values[15])
    w.plan.count()
    result = base == changed
    calls = w.plan.calls
    w.plan.disarm()
    assert result is False and calls == 0
    assert _count_calls(core, op_eq_changed_hashed) > 0
    assert _count_calls(core, op_eq_changed) > 0
