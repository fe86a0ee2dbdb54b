"""Threads (docs/spec.md §4: "Versions are safe to share between threads without locks").

- Versions shared by threads: readers iterate, reverse, hash, compare and diff
  the shared roots while writers derive new versions (set, delete, ``|``,
  ``-``, ``&``, evolvers) from the same roots; every result is checked against
  what was computed before the threads started.
- One Evolver per thread, all from one version: each checked against its own
  dict model.
- One Evolver shared by threads: edits from different threads take turns (an
  edit waits while another thread's edit runs its keys' ``__eq__``; only
  re-entry from the same thread raises ``RuntimeError``); afterwards
  ``_check()`` passes and the contents are one of the possible
  serializations: each thread owns its own keys, so the final items are
  exactly the ones each thread's edits leave, and each thread's keys appear
  in its own order.  Reads from other threads see each key's value before or
  after an edit, never a freed or foreign object (keys are frozen
  dataclasses whose ``__eq__`` is Python code, two or three to a hash).

The switch interval is lowered to 1 µs during each test so the GIL changes
hands inside operations.  Barriers start the threads together; there are no
sleeps and every count is bounded.  The ``test_parallel_*`` tests are also
written for ``pytest-run-parallel``: ``scripts/checks/75-threads.sh`` runs
them with ``--parallel-threads=4``, so four copies read and derive from the
same module-level versions at once.
"""

import random
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass

from keys import HashKey

THREADS = 4


@contextmanager
def fast_switching(interval=1e-6):
    old = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def run_threads(targets):
    """Start ``targets`` (callables) together; re-raise the first failure."""
    barrier = threading.Barrier(len(targets))
    errors = []

    def wrap(fn):
        def body():
            try:
                barrier.wait()
                fn()
            except BaseException as exc:  # reported in the main thread
                errors.append(exc)

        return body

    threads = [threading.Thread(target=wrap(fn)) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def _keys(n):
    # strings, ints and colliding keys: deep and collision paths both get traffic
    return (
        ["s%d" % i for i in range(n)]
        + list(range(n))
        + [HashKey(i % 17, "c%d" % i) for i in range(n // 4)]
    )


# --- versions shared between readers and deriving writers ---------------------------------------


def test_readers_and_writers_share_versions(core):
    keys = _keys(1500)
    base = core.frozendict((k, i) for i, k in enumerate(keys))
    twin = core.frozendict(reversed(list(base.items())))  # equal, built separately
    child = base.set(keys[5], "changed").delete(keys[7]).set("new", 1)
    expected_items = list(base.items())
    expected_reversed = list(reversed(expected_items))
    expected_hash = hash(frozenset(base.items()))
    expected_diff = base.diff(dict(child.items()))
    ops_done = [0]
    lock = threading.Lock()

    def reader(seed):
        rng = random.Random(seed)
        n = 0
        for _step in range(40):
            assert list(base.items()) == expected_items
            assert list(reversed(base.items())) == expected_reversed
            assert hash(base) == expected_hash
            assert base == twin and twin == base and not base != twin
            assert base != child
            assert base.diff(child) == expected_diff
            for _ in range(50):
                i = rng.randrange(len(keys))
                assert base[keys[i]] == i
                assert base.get(keys[i]) == i
            n += 58
        with lock:
            ops_done[0] += n

    def writer(seed):
        rng = random.Random(seed)
        model = dict(expected_items)
        cur = base
        n = 0
        for step in range(400):
            k = keys[rng.randrange(len(keys))]
            r = rng.random()
            if r < 0.5:
                cur = cur.set(k, (seed, step))
                model[k] = (seed, step)
            elif r < 0.8:
                cur = cur.discard(k)
                model.pop(k, None)
            elif r < 0.9:
                extra = {keys[rng.randrange(len(keys))]: step for _ in range(5)}
                cur = cur | extra
                model.update(extra)
            else:
                drop = [keys[rng.randrange(len(keys))] for _ in range(5)]
                cur = cur - drop
                for d in drop:
                    model.pop(d, None)
            n += 1
            if step % 100 == 99:
                cur._check()
                assert list(cur.items()) == list(model.items())
                assert hash(cur) == hash(frozenset(model.items()))
        e = base.evolve()
        for i in range(seed, len(keys), 29):
            e[keys[i]] = seed
        frozen = e.freeze()
        frozen._check()
        assert all(frozen[keys[i]] == seed for i in range(seed, len(keys), 29))
        with lock:
            ops_done[0] += n + len(range(seed, len(keys), 29))

    with fast_switching():
        run_threads(
            [lambda s=s: reader(s) for s in range(THREADS)]
            + [lambda s=s: writer(s) for s in range(THREADS)]
        )
    base._check()
    twin._check()
    assert list(base.items()) == expected_items
    assert hash(base) == expected_hash
    assert ops_done[0] > 0


def test_one_evolver_per_thread_from_one_version(core):
    keys = _keys(800)
    base = core.frozendict((k, i) for i, k in enumerate(keys))
    before = list(base.items())
    results = {}

    def work(seed):
        rng = random.Random(seed)
        e = base.evolve()
        model = dict(before)
        frozen = []
        for step in range(600):
            k = keys[rng.randrange(len(keys))]
            r = rng.random()
            if r < 0.45:
                e[k] = (seed, step)
                model[k] = (seed, step)
            elif r < 0.7:
                assert e.pop(k, None) == model.pop(k, None)
            elif r < 0.8:
                assert e.setdefault(k, seed) == model.setdefault(k, seed)
            elif r < 0.85 and model:
                assert e.popitem() == model.popitem()
            elif r < 0.95:
                extra = [(keys[rng.randrange(len(keys))], -step) for _ in range(4)]
                e.update(extra)
                model.update(extra)
            else:
                frozen.append((e.freeze(), list(model.items())))
        for version, items in frozen:
            version._check()
            assert list(version.items()) == items
        e._check()
        assert list(e.items()) == list(model.items())
        results[seed] = e.freeze()

    with fast_switching():
        run_threads([lambda s=s: work(s) for s in range(THREADS)])
    assert len(results) == THREADS
    assert list(base.items()) == before
    base._check()


# --- one evolver shared by threads ---------------------------------------------------------------


def test_one_evolver_shared_by_threads(core):
    """Each thread edits its own keys; edits apply or raise RuntimeError, never corrupt."""
    shared_keys = ["base%d" % i for i in range(200)]
    e = core.frozendict((k, 0) for k in shared_keys).evolve()
    logs = {}
    refused = [0]
    lock = threading.Lock()
    steps = 500

    def attempt(fn, *args):
        try:
            fn(*args)
            return True
        except RuntimeError:  # would be a bug: another thread's edit waits
            with lock:
                refused[0] += 1
            return False

    def work(t):
        rng = random.Random(t)
        mine = [(t, i) for i in range(60)] + [HashKey(i % 5, "t%d-%d" % (t, i)) for i in range(20)]
        model = {}  # what this thread's successful edits leave, in order
        for step in range(steps):
            k = mine[rng.randrange(len(mine))]
            r = rng.random()
            if r < 0.5:
                if attempt(e.__setitem__, k, (t, step)):
                    model[k] = (t, step)
            elif r < 0.75:
                if attempt(e.pop, k, None):
                    model.pop(k, None)
            elif r < 0.85:
                batch = [(mine[rng.randrange(len(mine))], (t, step, j)) for j in range(3)]
                if attempt(e.update, batch):
                    model.update(batch)
            elif r < 0.9:
                # reads of this thread's own keys see its own last write
                try:
                    got = e.get(k, "absent")
                except RuntimeError:
                    continue
                assert got == model.get(k, "absent"), (k, got, model.get(k, "absent"))
            elif r < 0.95:
                try:
                    items = list(e.items())
                except RuntimeError:
                    continue
                seen = [kk for kk, _ in items]
                assert len(seen) == len(set(map(repr, seen))), "a key twice in one iteration"
            else:
                try:
                    frozen = e.freeze()
                except RuntimeError:
                    continue
                frozen._check()
        logs[t] = model

    with fast_switching():
        run_threads([lambda t=t: work(t) for t in range(THREADS)])
    assert refused[0] == 0, "an edit was refused because another thread was editing"
    e._check()
    final = list(e.items())
    expected = {k: 0 for k in shared_keys}
    for model in logs.values():
        expected.update(model)
    assert len(final) == len(expected)
    assert dict(final) == expected
    assert [k for k, _ in final[: len(shared_keys)]] == shared_keys
    for t, model in logs.items():
        own = [k for k, _ in final if k in model]
        assert own == list(model), "thread %d's keys are out of its order" % t
    e["after"] = 1
    e._check()
    frozen = e.freeze()
    frozen._check()
    assert len(frozen) == len(expected) + 1


def test_threads_freezing_one_evolver_while_another_edits(core):
    e = core.frozendict((i, i) for i in range(300)).evolve()
    snapshots = []
    done = threading.Event()

    def editor():
        try:
            for step in range(6000):
                try:
                    e[step % 400] = -step
                    if step % 7 == 0:
                        e.pop((step * 13) % 400, None)
                except RuntimeError:
                    pass
        finally:
            done.set()

    def freezer():
        for _ in range(2000):
            try:
                snapshots.append(e.freeze())
            except RuntimeError:
                pass

    with fast_switching():
        run_threads([editor, freezer])
    assert done.is_set()
    for frozen in snapshots:
        frozen._check()
        items = list(frozen.items())
        assert len(items) == len(frozen)
        for k, v in items:
            assert v == k or (isinstance(v, int) and v <= 0)
    e._check()


# --- for pytest-run-parallel: module-level versions shared by its threads --------------------


_SHARED = {}
_SHARED_LOCK = threading.Lock()


def _shared_versions(core):
    with _SHARED_LOCK:
        if core.name not in _SHARED:
            keys = _keys(2000)
            base = core.frozendict((k, i) for i, k in enumerate(keys))
            _SHARED[core.name] = (keys, base, list(base.items()), hash(frozenset(base.items())))
        return _SHARED[core.name]


def test_parallel_readers_of_a_shared_version(core):
    keys, base, items, expected_hash = _shared_versions(core)
    with fast_switching(5e-6):
        assert list(base.items()) == items
        assert hash(base) == expected_hash
        for i in range(0, len(keys), 7):
            assert base[keys[i]] == i
        other = core.frozendict(items)
        assert base == other
        assert list(reversed(base)) == [k for k, _ in reversed(items)]


def test_parallel_derivations_from_a_shared_version(core):
    keys, base, items, expected_hash = _shared_versions(core)
    ident = threading.get_ident()
    rng = random.Random(ident)
    model = dict(items)
    cur = base
    with fast_switching(5e-6):
        for step in range(300):
            k = keys[rng.randrange(len(keys))]
            if rng.random() < 0.6:
                cur = cur.set(k, (ident, step))
                model[k] = (ident, step)
            else:
                cur = cur.discard(k)
                model.pop(k, None)
        e = cur.evolve()
        for k in keys[:100]:
            e[k] = ident
            model[k] = ident
        cur = e.freeze()
    cur._check()
    assert list(cur.items()) == list(model.items())
    assert list(base.items()) == items
    assert hash(base) == expected_hash


# --- one Evolver, threads with Python-level key comparisons ----------------------------------------


@dataclass(frozen=True)
class DKey:
    """A frozen dataclass key whose __eq__ is Python code (the GIL
    changes hands inside it); two or three keys share each hash (collision
    nodes that edits create and collapse)."""

    owner: int
    name: int

    def __hash__(self):
        return self.name % 20

    def __eq__(self, other):
        # Two Python frames per comparison: two points where the GIL can
        # change hands while an edit or a lookup is comparing keys.
        return other.__class__ is DKey and _same_fields(self, other)


def _same_fields(a, b):
    return a.owner == b.owner and a.name == b.name


def test_one_writer_and_two_readers_share_an_evolver(core):
    keys = [DKey(0, i) for i in range(40)]
    e = core.Evolver({k: (k.name, -1) for k in keys})
    rounds = 60
    done = threading.Event()
    checked = [0, 0]

    def writer():
        try:
            rng = random.Random(1)
            for r in range(rounds):
                for k in keys:
                    x = rng.random()
                    if x < 0.7:
                        e[DKey(0, k.name)] = (k.name, r)
                    elif x < 0.85:
                        e.pop(DKey(0, k.name), None)
                    else:
                        e.setdefault(DKey(0, k.name), (k.name, r))
                if r % 5 == 0:
                    e.update({DKey(0, k.name): (k.name, r) for k in keys[:10]})
        finally:
            done.set()

    def reader(t):
        rng = random.Random(t)
        while not done.is_set() or checked[t] < 200:
            k = DKey(0, rng.randrange(40))
            got = e.get(k)
            assert got is None or (got[0] == k.name and -1 <= got[1] < rounds), (k, got)
            try:
                got = e[k]
                assert got[0] == k.name and -1 <= got[1] < rounds, (k, got)
            except KeyError:
                pass
            assert isinstance(k in e, bool)
            assert isinstance(k in e.keys(), bool)
            assert (k, (k.name, -2)) not in e.items()
            if checked[t] % 50 == 0:
                fd = e.freeze()
                fd._check()
                assert all(v[0] == kk.name for kk, v in fd.items())
            checked[t] += 1

    with fast_switching():
        run_threads([writer, lambda: reader(0), lambda: reader(1)])
    e._check()
    assert all(v[0] == k.name for k, v in e.items())


def test_two_writers_share_an_evolver_and_take_turns(core):
    e = core.Evolver()
    steps = 2000
    models = {}

    def writer(t):
        rng = random.Random(t)
        model = {}
        for step in range(steps):
            k = DKey(t, rng.randrange(30))
            if rng.random() < 0.75:
                e[k] = (t, step)  # never RuntimeError: the other thread's edit waits
                model[k] = (t, step)
            else:
                assert e.pop(k, None) == model.pop(k, None)
            assert e.get(k) == model.get(k)  # this thread's keys: its own last write
        models[t] = model

    with fast_switching():
        run_threads([lambda: writer(1), lambda: writer(2)])
    e._check()
    expected = dict(models[1])
    expected.update(models[2])
    assert dict(e.items()) == expected
    for t, model in models.items():
        assert [k for k in e if k.owner == t] == list(model)
