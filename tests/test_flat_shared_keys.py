"""A flat version derived by a value change shares its keys.

A ``set`` of an existing key on a flat map (or a copy of one into another
type) makes a version holding its own values and the keys of the version
they came from: in the C core a strong reference to the *owner* (the
frozendict whose block holds the hashes and keys; a version derived from a
sharing one points at the same owner, never at a chain), in the pure core
the same tuple of hashes.  Sharing is invisible: every operation on a
sharing version gives what it gives on a map built from the same items, the
owner can go away first, and a GC-cleared owner or sharer never crashes.
"""

import copy
import gc
import pickle
import threading
import weakref

import pytest
from keys import HashKey

from frozenmap._pycore.flat import FLAT_MAX


def items(n, start=0):
    return [("k%d" % i, i) for i in range(start, start + n)]


def _flat(core, fd):
    return fd._dump().split("\n", 1)[0].endswith(" flat")


def _shares_keys_with(core, version, owner):
    """Whether version reads its keys from owner's storage."""
    if core.name == "c":
        return owner in gc.get_referents(version)
    return version._root is owner._root


SIZES = sorted({1, 2, FLAT_MAX // 2, FLAT_MAX})


@pytest.mark.parametrize("n", SIZES)
def test_a_set_of_an_existing_key_shares_the_owners_keys(core, n):
    base = core.frozendict(items(n))
    key = "k%d" % (n - 1)
    v1 = base.set(key, "one")
    v2 = v1.set("k0", "two")
    assert _shares_keys_with(core, v1, base)
    assert _shares_keys_with(core, v2, base)
    if core.name == "c":  # never a chain: v2 holds base, not v1
        assert v1 not in gc.get_referents(v2)
    expected = dict(items(n))
    expected[key] = "one"
    assert dict(v1) == expected and list(v1) == list(expected)
    expected["k0"] = "two"
    assert dict(v2) == expected
    assert dict(base) == dict(items(n))
    for fd in (base, v1, v2):
        fd._check()
        assert _flat(core, fd)


class Marker:
    """A value whose lifetime a weakref watches (frozendict takes none)."""


def test_sharing_versions_survive_the_owners_release(core):
    """The owner outlives its last holder while sharers read its keys (its
    own values with it: the cost of sharing), and goes with the last one."""
    n = FLAT_MAX
    marker = Marker()
    base = core.frozendict(items(n)).set("k3", marker)
    values = [object() for _ in range(4)]
    versions = [base.set("k3", v) for v in values]
    chained = versions[0].set("k5", "x").set("k6", "y")
    dead = weakref.ref(marker)
    del base, marker
    gc.collect()
    for v, value in zip(versions, values):
        v._check()
        assert v["k3"] is value and len(v) == n
        assert [k for k in v] == ["k%d" % i for i in range(n)]
    assert chained["k5"] == "x" and chained["k6"] == "y" and chained["k3"] is values[0]
    del versions, chained
    gc.collect()
    assert dead() is None  # released with the last sharer


def test_every_operation_on_a_sharing_version_matches_a_built_one(core):
    n = FLAT_MAX
    base = core.frozendict(items(n))
    shared = base.set("k2", "two")
    built = core.frozendict([(k, "two" if k == "k2" else v) for k, v in items(n)])
    assert _shares_keys_with(core, shared, base)
    assert shared == built and built == shared and hash(shared) == hash(built)
    assert shared._dump() == built._dump()
    assert shared != base and shared.diff(base) == built.diff(base)
    d = base.diff(shared)
    assert dict(d.changed) == {"k2": (2, "two")} and not d.added and not d.removed
    assert d.apply(base) == shared
    # derivations: delete, set new (and promote past FLAT_MAX), |, Evolver
    assert shared.delete("k0") == built.delete("k0")
    assert list(shared.delete("k4")) == list(built.delete("k4"))
    grown = shared.set("new", 1)
    assert grown == built.set("new", 1) and list(grown)[-1] == "new"
    grown._check()
    assert shared | {"k1": "u", "z": 0} == built | {"k1": "u", "z": 0}
    ev = shared.evolve()
    ev["k7"] = "seven"
    del ev["k1"]
    assert ev.freeze() == built.set("k7", "seven").delete("k1")
    # reads
    assert shared["k2"] == "two" and shared.get("nope") is None and "k0" in shared
    assert list(reversed(shared)) == list(reversed(built))
    assert list(shared.values()) == list(built.values())
    assert shared.key_at(2) == "k2" and shared.index("k2") == 2
    assert repr(shared) == repr(built)
    # pickle and copies (a subclass copy, too)
    for made in (pickle.loads(pickle.dumps(shared)), copy.copy(shared), copy.deepcopy(shared)):
        assert made == built and list(made.items()) == list(built.items())
        made._check()

    class Sub(core.frozendict):
        pass

    sub = Sub(shared)
    assert type(sub) is Sub and sub == built and list(sub.items()) == list(built.items())
    sub._check()
    back = core.frozendict(sub.set("k0", "zero"))
    assert back == built.set("k0", "zero")
    back._check()


def test_a_subclass_instance_is_never_kept_alive_as_an_owner(core):
    """A version derived from a subclass instance copies the keys: the instance
    (its __dict__, its finalizer) goes when it is dropped."""

    class Sub(core.frozendict):
        pass

    sub = Sub(items(4))
    sub.note = "state"
    derived = sub.set("k1", "x")
    assert type(derived) is core.frozendict
    dead = weakref.ref(sub)
    del sub
    gc.collect()
    assert dead() is None
    assert dict(derived) == {"k0": 0, "k1": "x", "k2": 2, "k3": 3}
    derived._check()


def test_a_cleared_sharer_and_a_cleared_owner_are_valid_empty_maps(core):
    """tp_clear (what the GC calls on a cycle) empties a sharer, and an owner
    whose sharer is dropped with it; neither crashes afterwards."""
    from fault_helpers import call_tp_clear

    if core.name != "c":
        pytest.skip("the pure core's objects are cleared by subtype_clear")
    base = core.frozendict(items(5))
    shared = base.set("k1", "x")
    it = iter(shared.items())
    assert next(it) == ("k0", 0)
    assert call_tp_clear(shared) == 0
    shared._check()
    assert len(shared) == 0 and list(shared.items()) == [] and list(it) == []
    assert shared == {} and hash(shared) == hash(core.frozendict())
    assert shared.set("a", 1) == {"a": 1}
    assert base == dict(items(5))  # the owner is untouched
    base._check()
    # Clearing a live owner (only ctypes can) leaves its sharer memory-safe.
    other = base.set("k2", "y")
    assert call_tp_clear(base) == 0
    base._check()
    assert len(base) == 0 and base == {} and list(base) == []
    assert len(other) == 5
    list(other.items())
    repr(other)
    other.get("k2")
    other.set("k2", 1)
    other.discard("k0")
    del other
    gc.collect()


def test_a_real_gc_cycle_through_owner_and_sharer(core):
    """A cycle owner -> value -> sharer -> owner, collected by the GC."""

    class Box:
        pass

    box = Box()
    base = core.frozendict([("a", box), ("b", 2), ("c", 3)])
    shared = base.set("b", box)
    box.held = (base, shared)
    seen = []
    watch = weakref.ref(box, lambda _ref: seen.append(True))
    del box, base, shared
    gc.collect()
    assert seen == [True] and watch() is None


def test_a_key_whose_eq_drops_the_owner_mid_lookup(core):
    """The sharer holds its owner: a stored key's __eq__ that drops every
    other reference to the owner (and collects) does not free the keys being
    scanned."""
    holder = {}

    class Dropper(HashKey):
        def __eq__(self, other):
            holder.clear()
            gc.collect()
            return HashKey.__eq__(self, other)

        __hash__ = HashKey.__hash__

    stored = [Dropper(7, "a"), Dropper(7, "b"), Dropper(7, "c")]
    marker = Marker()
    holder["base"] = core.frozendict([(k, i) for i, k in enumerate(stored)] + [("m", marker)])
    shared = holder["base"].set(stored[0], "zero")
    dead = weakref.ref(marker)
    del marker
    probe = HashKey(7, "c")
    assert shared[probe] == 2
    assert not holder
    assert shared.get(HashKey(7, "zz")) is None
    assert shared.set(probe, "two")[probe] == "two"
    assert list(shared.values())[:3] == ["zero", 1, 2]
    shared._check()
    if core.name == "c":
        assert dead() is not None  # shared still holds the owner
    del shared
    gc.collect()
    assert dead() is None


def test_finalizers_and_threads_on_shared_versions(core):
    """Values whose finalizer derives from and drops versions, and threads
    deriving from one base at once: every version stays consistent."""
    log = []
    base = core.frozendict(items(FLAT_MAX))

    class Noisy:
        def __del__(self):
            v = base.set("k1", "from a finalizer")
            log.append(v["k1"])
            v._check()

    versions = [base.set("k0", Noisy()) for _ in range(20)]
    versions = [v.set("k0", i) for i, v in enumerate(versions)]  # drops each Noisy
    gc.collect()
    assert log == ["from a finalizer"] * 20
    assert [v["k0"] for v in versions] == list(range(20))

    errors = []

    def worker(t):
        try:
            v = base
            for i in range(300):
                v = v.set("k%d" % (i % FLAT_MAX), (t, i))
                assert v["k%d" % (i % FLAT_MAX)] == (t, i)
                if i % 50 == 0:
                    v._check()
                    gc.collect()
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert base == dict(items(FLAT_MAX))


def test_weakref_callbacks_derive_from_sharers_while_cycles_are_collected(core):
    """Cycles of owners and sharers collected by the GC, each running a
    weakref callback that derives from a live sharer: no crash, and every
    version made meanwhile is consistent."""

    class Box:
        pass

    base = core.frozendict(items(FLAT_MAX))
    keep = base.set("k1", "kept")
    made = []

    def callback(_ref):
        made.append(keep.set("k2", len(made)).set("k3", "x"))
        made[-1]._check()

    refs = []
    for i in range(50):
        box = Box()
        owner = core.frozendict(items(4)).set("k0", box)
        shared = owner.set("k1", box).set("k2", i)
        box.cycle = (owner, shared)
        refs.append(weakref.ref(box, callback))
    del box, owner, shared
    gc.collect()
    assert len(made) == 50
    assert [v["k2"] for v in made] == list(range(50))
    assert keep["k1"] == "kept" and base["k1"] == 1


def test_an_eq_that_clears_the_owner_mid_scan_reads_no_freed_memory(core):
    """Only ctypes can clear a live owner; a stored key's __eq__ doing so in
    the middle of a sharer's scan leaves the sharer reading placeholders,
    never the freed block (the answer itself is unspecified)."""
    from fault_helpers import call_tp_clear

    if core.name != "c":
        pytest.skip("the pure core's objects are cleared by subtype_clear")
    holder = {}

    class Clearer(HashKey):
        def __eq__(self, other):
            if "owner" in holder:
                assert call_tp_clear(holder.pop("owner")) == 0
            return HashKey.__eq__(self, other)

        __hash__ = HashKey.__hash__

    stored = [Clearer(3, "a"), Clearer(3, "b")]
    owner = core.frozendict([(stored[0], 0), (stored[1], 1), ("z", 2)])
    shared = owner.set("z", 3)
    holder["owner"] = owner
    del owner
    shared.get(HashKey(3, "b"))
    assert not holder
    for op in (
        lambda: list(shared.items()),
        lambda: shared.set(HashKey(3, "b"), 1),
        lambda: shared.set("z", 4),
        lambda: shared.discard("z"),
        lambda: repr(shared),
        lambda: hash(shared),
        lambda: shared == shared.copy(),
        lambda: shared | {"q": 1},
    ):
        op()
