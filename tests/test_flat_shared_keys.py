"""A flat version derived by a value change shares its keys.

A ``set`` of an existing key on a flat map (or a copy of one into another
type, or an Evolver's ``freeze()`` after value changes) makes a version
holding its own values beside the keys of the version it came from: in the
C core a key block that every version using it holds (and a reference to
each key in it of its own), in the pure core the same tuple of hashes.
Sharing is invisible: every operation on a sharing version gives what it
gives on a map built from the same items, any of the versions can go first,
a version never keeps another's replaced values alive, and a version the GC
(or ctypes) cleared never changes what the others read.
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


def _shares_keys_with(version, other):
    """Whether two flat versions read their keys from one place: the first
    of ``_node_ids()`` is the C core's key block, the pure core's hashes."""
    return version._node_ids()[0] == other._node_ids()[0]


SIZES = sorted({1, 2, FLAT_MAX // 2, FLAT_MAX})


@pytest.mark.parametrize("n", SIZES)
def test_a_set_of_an_existing_key_shares_the_keys(core, n):
    base = core.frozendict(items(n))
    key = "k%d" % (n - 1)
    v1 = base.set(key, "one")
    v2 = v1.set("k0", "two")
    assert _shares_keys_with(v1, base)
    assert _shares_keys_with(v2, base)
    assert not _shares_keys_with(base.set("new", 1).delete("new"), base)  # new keys: new block
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


def test_replaced_values_go_with_the_version_that_held_them(core):
    """The versions sharing keys hold no other version: the first one's
    values (one replaced in every later version) are released when it is
    dropped, while the later versions read the shared keys."""
    n = FLAT_MAX
    marker = Marker()
    base = core.frozendict(items(n)).set("k3", marker)
    values = [object() for _ in range(4)]
    versions = [base.set("k3", v) for v in values]
    chained = versions[0].set("k5", "x").set("k6", "y")
    dead = weakref.ref(marker)
    del base, marker
    gc.collect()
    assert dead() is None  # no version that shares the keys keeps it
    for v, value in zip(versions, values):
        v._check()
        assert v["k3"] is value and len(v) == n
        assert [k for k in v] == ["k%d" % i for i in range(n)]
    assert chained["k5"] == "x" and chained["k6"] == "y" and chained["k3"] is values[0]


def test_an_evolvers_value_edits_publish_versions_sharing_the_keys(core):
    base = core.frozendict(items(8))
    ev = base.evolve()
    ev["k1"] = "one"
    first = ev.freeze()
    ev["k2"] = "two"
    second = ev.freeze()
    assert _shares_keys_with(first, base) and _shares_keys_with(second, base)
    ev["new"] = 1  # a key edit: the evolver's keys are copied, published ones stay
    third = ev.freeze()
    assert dict(second) == dict(items(8), k1="one", k2="two")
    assert list(third)[-1] == "new" and not _shares_keys_with(third, base)
    for fd in (base, first, second, third):
        fd._check()


def test_every_operation_on_a_sharing_version_matches_a_built_one(core):
    n = FLAT_MAX
    base = core.frozendict(items(n))
    shared = base.set("k2", "two")
    built = core.frozendict([(k, "two" if k == "k2" else v) for k, v in items(n)])
    assert _shares_keys_with(shared, base)
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


def test_a_subclass_instance_is_never_kept_alive_by_a_version_made_from_it(core):
    """A version derived from a subclass instance shares its keys, never the
    instance (its __dict__, its finalizer), which goes when it is dropped."""

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


def test_a_cleared_version_changes_nothing_another_reads(core):
    """tp_clear (what the GC calls on a cycle; here through ctypes) empties
    one version; the versions sharing its keys still read every key, and the
    cleared one is a valid empty map."""
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
    assert base == dict(items(5))
    base._check()
    # The first version cleared: the others read the real keys, not placeholders.
    other = base.set("k2", "y")
    assert call_tp_clear(base) == 0
    base._check()
    assert len(base) == 0 and base == {} and list(base) == []
    expected = dict(items(5), k2="y")
    assert dict(other) == expected and list(other) == list(expected)
    assert repr(other) == repr(core.frozendict(expected))
    assert other.set("k2", 1) == dict(expected, k2=1)
    assert other.discard("k0") == {k: v for k, v in expected.items() if k != "k0"}
    other._check()
    derived = other.set("k3", "z")
    derived._check()
    assert dict(derived) == dict(expected, k3="z")


def test_weakref_callbacks_read_versions_whose_source_the_gc_collects(core):
    """Collections of cycles through the version a value change was made
    from, each running a weakref callback that reads and derives from the
    version that lives on: it reads its own keys, whatever the collector did
    to its source."""

    class Box:
        pass

    seen = {}  # (the collector calls the callbacks in an order of its own)
    survivors = []
    refs = []

    def reader(i, survivor):
        def callback(_ref):
            read = list(survivor.items())
            derived = survivor.set("k1", "d")
            derived._check()
            seen[i] = (read, list(derived))

        return callback

    for i in range(20):
        box = Box()
        source = core.frozendict(items(6)).set("k0", box)
        survivor = source.set("k0", i)  # shares the keys; holds no box
        box.cycle = source
        survivors.append(survivor)
        refs.append(weakref.ref(box, reader(i, survivor)))
        del box, source
    gc.collect()
    assert len(seen) == 20
    for i, survivor in enumerate(survivors):
        survivor._check()
        assert dict(survivor) == dict(items(6), k0=i)
        assert seen[i] == (list(dict(items(6), k0=i).items()), ["k%d" % j for j in range(6)])


def test_a_real_gc_cycle_through_versions_that_share_keys(core):
    """A cycle version -> value -> version that shares its keys -> ...,
    collected by the GC."""

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


def test_a_key_whose_eq_drops_the_other_versions_mid_lookup(core):
    """A stored key's __eq__ that drops every other version sharing the
    keys (and collects) does not free the keys being scanned."""
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
    shared = holder["base"].set("m", "gone")
    dead = weakref.ref(marker)
    del marker
    probe = HashKey(7, "c")
    assert shared[probe] == 2
    assert not holder
    gc.collect()
    assert dead() is None  # the dropped version's value went with it
    assert shared.get(HashKey(7, "zz")) is None
    assert shared.set(probe, "two")[probe] == "two"
    assert list(shared.values()) == [0, 1, 2, "gone"]
    shared._check()


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


def test_weakref_callbacks_derive_from_shared_versions_while_cycles_are_collected(core):
    """Cycles of versions sharing keys collected by the GC, each running a
    weakref callback that derives from a live version: no crash, and every
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
        first = core.frozendict(items(4)).set("k0", box)
        shared = first.set("k1", box).set("k2", i)
        box.cycle = (first, shared)
        refs.append(weakref.ref(box, callback))
    del box, first, shared
    gc.collect()
    assert len(made) == 50
    assert [v["k2"] for v in made] == list(range(50))
    assert keep["k1"] == "kept" and base["k1"] == 1


def test_an_eq_that_clears_another_version_mid_scan_changes_nothing(core):
    """Only ctypes can clear a live version; a stored key's __eq__ doing so
    in the middle of a scan of a version sharing its keys leaves that scan
    reading the real keys: the right answer."""
    from fault_helpers import call_tp_clear

    if core.name != "c":
        pytest.skip("the pure core's objects are cleared by subtype_clear")
    holder = {}

    class Clearer(HashKey):
        def __eq__(self, other):
            if "first" in holder:
                assert call_tp_clear(holder.pop("first")) == 0
            return HashKey.__eq__(self, other)

        __hash__ = HashKey.__hash__

    stored = [Clearer(3, "a"), Clearer(3, "b")]
    first = core.frozendict([(stored[0], 0), (stored[1], 1), ("z", 2)])
    shared = first.set("z", 3)
    holder["first"] = first
    del first
    assert shared.get(HashKey(3, "b")) == 1
    assert not holder
    assert list(shared.items()) == [(stored[0], 0), (stored[1], 1), ("z", 3)]
    assert shared.set(HashKey(3, "b"), 9)[stored[1]] == 9
    assert shared.discard("z") == {stored[0]: 0, stored[1]: 1}
    assert shared | {"q": 1} == {stored[0]: 0, stored[1]: 1, "z": 3, "q": 1}
    shared._check()
