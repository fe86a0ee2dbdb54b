"""User code that raises: a failing ``__hash__`` or ``__eq__`` (docs/spec.md §4), on both cores.

A failing ``__hash__`` or ``__eq__``, a ``KeyboardInterrupt`` or ``MemoryError``
(or another base exception) from user code: the exception reaches the caller
unchanged, every existing version is unchanged and passes ``_check()``, an
evolver is left as it was, and nothing is kept alive.  A failure part-way
through a bulk operation (``|``, ``-``, ``&``, ``update``, construction) too.
``test_raising_at_every_user_call.py`` fails each call into user code in turn.
"""

import gc
import operator
import weakref
from functools import partial

import pytest
from helpers import Snapshot, typed_items
from keys import Crasher, CrashError, HashKey, RaiseAfter


def crashers(kind, error=CrashError):
    """A stored Crasher and a probe with the same hash, armed to fail in ``kind``.

    For ``eq`` both are armed, so the comparison fails whichever side a core
    asks first.  For ``hash`` only the probe is armed (the stored key was
    hashed when it went in).
    """
    stored = Crasher("stored", hash_value=1234, error=error)
    probe = Crasher("probe", hash_value=1234, error=error)
    return stored, probe


def arm(kind, stored, probe):
    if kind == "hash":
        probe.crash_hash = True
    else:
        stored.crash_eq = True
        probe.crash_eq = True


def disarm(*keys):
    for k in keys:
        k.crash_hash = k.crash_eq = k.crash_repr = False


FD_OPERATIONS = [
    ("getitem", lambda fd, k: fd[k]),
    ("get", lambda fd, k: fd.get(k)),
    ("contains", lambda fd, k: k in fd),
    ("keys-contains", lambda fd, k: k in fd.keys()),
    ("items-contains", lambda fd, k: (k, 1) in fd.items()),
    ("set", lambda fd, k: fd.set(k, 1)),
    ("delete", lambda fd, k: fd.delete(k)),
    ("discard", lambda fd, k: fd.discard(k)),
    ("sub", lambda fd, k: fd - ["a", k]),
    ("and", lambda fd, k: fd & ["a", k]),
    ("construct-pairs", lambda fd, k: type(fd)(list(fd.items()) + [(k, 2)])),
    ("construct-pairs+kwargs", lambda fd, k: type(fd)([(k, 2)] + list(fd.items()), a=5)),
    ("construct-mapping+kw", lambda fd, k: type(fd)(fd, b=2).set(k, 3)),
    ("fromkeys", lambda fd, k: type(fd).fromkeys(list(fd) + [k])),
]


def base_versions(core, stored):
    """A few related versions holding ``stored``, with snapshots of each."""
    fd = core.frozendict([("a", 1), (stored, 2)] + [(i, i) for i in range(100)])
    versions = [fd, fd.set("b", 3), fd.delete(5), fd | {"c": 4}, fd.evolve().set(0, "e").freeze()]
    hash(versions[1])
    return versions, [Snapshot(v) for v in versions]


@pytest.mark.parametrize("kind", ["hash", "eq"])
@pytest.mark.parametrize("name,op", FD_OPERATIONS, ids=[o[0] for o in FD_OPERATIONS])
@pytest.mark.parametrize(
    "error", [CrashError, KeyboardInterrupt, MemoryError], ids=["exc", "kbint", "memerr"]
)
def test_failing_hash_or_eq_reaches_the_caller(core, kind, name, op, error):
    stored, probe = crashers(kind, error)
    versions, snaps = base_versions(core, stored)
    arm(kind, stored, probe)
    with pytest.raises(error):
        op(versions[0], probe)
    disarm(stored, probe)
    for snap in snaps:
        snap.check()
    # Every version is still fully usable afterwards.
    for v in versions:
        assert v[stored] == 2
        v.set(probe, 9)._check()
        assert hash(v.set(stored, 0).discard(probe)) == hash(frozenset(v.set(stored, 0).items()))


@pytest.mark.parametrize("kind", ["hash", "eq"])
def test_failing_key_in_or(core, kind):
    stored, probe = crashers(kind)
    versions, snaps = base_versions(core, stored)
    other = {"z": 1, probe: 2, "y": 3}  # built while the probe still hashes
    other_fd = core.frozendict(other)
    if kind == "eq":
        arm(kind, stored, probe)
        for right in (other, other_fd):
            with pytest.raises(CrashError):
                versions[0] | right
    else:
        # A core may reuse the hashes dict and frozendict already store, so a
        # key whose __hash__ now fails need not be asked again; if it is asked,
        # its exception must reach the caller.
        arm(kind, stored, probe)
        for right in (other, other_fd):
            try:
                out = versions[0] | right
            except CrashError:
                pass
            else:
                disarm(probe)
                assert list(out)[-3:] == ["z", probe, "y"]
                out._check()
                probe.crash_hash = True
    disarm(stored, probe)
    for snap in snaps:
        snap.check()


def test_failing_key_part_way_through_sub_and_and(core):
    stored, probe = crashers("hash")
    versions, snaps = base_versions(core, stored)

    def keys():
        yield 1
        yield 2
        yield probe
        yield 3

    probe.crash_hash = True
    with pytest.raises(CrashError):
        versions[0] - keys()
    with pytest.raises(CrashError):
        versions[0] & keys()

    def broken():
        yield 1
        raise ValueError("iterator broke")

    with pytest.raises(ValueError):
        versions[0] - broken()
    with pytest.raises(ValueError):
        versions[0] & broken()
    for snap in snaps:
        snap.check()


EVOLVER_OPERATIONS = [
    ("setitem", lambda e, k: e.__setitem__(k, 1)),
    ("getitem", lambda e, k: e[k]),
    ("get", lambda e, k: e.get(k)),
    ("contains", lambda e, k: k in e),
    ("delitem", lambda e, k: e.__delitem__(k)),
    ("pop", lambda e, k: e.pop(k, None)),
    ("setdefault", lambda e, k: e.setdefault(k, 1)),
    ("set", lambda e, k: e.set(k, 1)),
    ("discard", lambda e, k: e.discard(k)),
    ("update-pairs", lambda e, k: e.update([("new", 1), (k, 2)])),
    ("update-mapping", lambda e, k: e.update({"new": 1, k: 2})),
]


@pytest.mark.parametrize("kind", ["hash", "eq"])
@pytest.mark.parametrize("name,op", EVOLVER_OPERATIONS, ids=[o[0] for o in EVOLVER_OPERATIONS])
@pytest.mark.parametrize("error", [CrashError, KeyboardInterrupt], ids=["exc", "kbint"])
def test_failing_hash_or_eq_leaves_the_evolver_as_it_was(core, kind, name, op, error):
    stored, probe = crashers(kind, error)
    versions, snaps = base_versions(core, stored)
    e = versions[0].evolve()
    for i in range(50):
        e[i] = ("edited", i)  # nodes the evolver owns and edits in place
    before = typed_items(e)
    frozen = e.freeze()
    arm(kind, stored, probe)
    if name == "update-mapping" and kind == "hash":
        # The dict argument is built before the call, so hash it first.
        probe.crash_hash = False
        arg = {"new": 1, probe: 2}
        probe.crash_hash = True
        op = lambda e, k: e.update(arg)  # noqa: E731
    try:
        op(e, probe)
    except error:
        pass
    else:
        # Only a core reusing the dict's stored hash may get here, and then the
        # update must have gone through completely.
        assert name == "update-mapping" and kind == "hash"
        disarm(stored, probe)
        assert e["new"] == 1 and e[probe] == 2
        return
    disarm(stored, probe)
    assert typed_items(e) == before
    assert e.freeze() == frozen
    e._check()
    frozen._check()
    for snap in snaps:
        snap.check()
    e[probe] = "works"
    assert list(e)[-1] is probe


def test_value_hash_failing_with_a_base_exception_reaches_the_caller(core):
    class Interrupting:
        def __hash__(self):
            raise KeyboardInterrupt

    fd = core.frozendict(a=1)
    hash(fd)
    snap = Snapshot(fd)
    try:
        out = fd.set("b", Interrupting())
    except KeyboardInterrupt:
        pass
    else:  # a core that does not hash values while deriving: hash() must raise it
        with pytest.raises(KeyboardInterrupt):
            hash(out)
        out._check()
    snap.check()
    assert hash(fd) == hash(frozenset(fd.items()))


def test_a_failing_non_type_error_hash_is_not_rewritten(core):
    probe = Crasher("probe")
    probe.crash_hash = True
    for op in (
        lambda: core.frozendict([(probe, 1)]),
        lambda: core.frozendict()[probe],
        lambda: core.frozendict(a=1).set(probe, 1),
    ):
        with pytest.raises(CrashError) as info:
            op()
        assert str(info.value) == "hash of probe"
    bad = Crasher("bad", error=KeyError)
    bad.crash_hash = True
    with pytest.raises(KeyError):
        bad in core.frozendict(a=1)


def test_nothing_is_kept_alive_after_a_failure(core):
    class Value:
        pass

    stored, _ = crashers("eq")
    fd = core.frozendict([(stored, 1)])
    e = fd.evolve()

    def fail_with_fresh_objects():
        """Run failing edits with a value and key nothing else refers to."""
        probe = Crasher("probe", hash_value=1234)
        value = Value()
        arm("eq", stored, probe)
        for op in (
            lambda: fd.set(probe, value),
            lambda: e.__setitem__(probe, value),
            lambda: e.update([("x", value), (probe, value)]),
        ):
            try:
                op()
            except CrashError:
                pass
            else:  # pragma: no cover
                raise AssertionError("the failing __eq__ was not called")
        return weakref.ref(probe), weakref.ref(value)

    ref_probe, ref_value = fail_with_fresh_objects()
    gc.collect()
    assert ref_value() is None
    assert ref_probe() is None
    stored.crash_eq = False
    assert list(e.items()) == [(stored, 1)]
    assert list(fd.items()) == [(stored, 1)]


# --- KeyboardInterrupt and MemoryError from user code (beyond the sweeps) -----------------------


@pytest.mark.parametrize("error", [KeyboardInterrupt, MemoryError, SystemExit, GeneratorExit])
def test_base_exceptions_from_eq_in_bulk_operations(core, error):
    """Part-way through |, -, &, update and construction, after several items went in."""
    fd = core.frozendict((HashKey(9, "s%d" % i), i) for i in range(6))
    fd2 = fd.set("x", 1)
    snaps = [Snapshot(fd), Snapshot(fd2)]
    e = fd2.evolve()
    e["owned"] = 1
    e_before = list(e.items())
    ops = [
        lambda k: partial(operator.or_, fd, {HashKey(1, "a"): 1, HashKey(2, "b"): 2, k: 3}),
        lambda k: partial(operator.sub, fd, [HashKey(9, "s1"), k]),
        lambda k: partial(operator.and_, fd, [HashKey(9, "s1"), k]),
        lambda k: partial(
            core.frozendict, [(HashKey(9, "c%d" % i), 1) for i in range(6)] + [(k, 1)]
        ),
        lambda k: partial(e.update, [("p", 1), ("q", 2), (k, 3)]),
        lambda k: partial(e.update, {"p": 1, k: 3}),
        lambda k: partial(fd.diff, {k: 1}),
        lambda k: partial(operator.contains, e, k),
    ]
    for n in (1, 2, 4):
        for op in ops:
            key = RaiseAfter(9, 10**9, error)
            thunk = op(key)  # arguments built before the fault is armed
            key.n = n
            with pytest.raises(error):
                thunk()
            for snap in snaps:
                snap.check()
            assert list(e.items()) == e_before
            e._check()
