"""``frozenmap.History``: undo/redo over versions, and its persistence.

The line of versions is checked against a model (a list and an index) under
random commits, undos and redos; pickling and deep-copying store one version
and diffs, and must give back versions equal to the originals, in their key
order, sharing structure again.  Both cores, through their frozendicts.
"""

import copy
import pickle
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frozenmap import History
from frozenmap.history import _step

try:
    from frozenmap._ccore import frozendict as _c_frozendict

    class SubC(_c_frozendict):
        pass

except ImportError:
    SubC = None

from frozenmap._pycore import frozendict as _py_frozendict


class SubPy(_py_frozendict):
    pass


def counter(core, n=0):
    return core.frozendict(count=n)


def test_commit_undo_redo(core):
    h = History(counter(core))
    v1 = h.present.set("count", 1)
    v2 = v1.set("count", 2)
    h.commit(v1)
    h.commit(v2)
    assert h.present is v2
    assert h.undo() is v1
    assert h.present is v1
    assert (h.can_undo, h.can_redo) == (True, True)
    assert h.past == (counter(core),) and h.future == (v2,)
    assert h.redo() is v2
    assert h.undo(2) == counter(core)
    assert (h.can_undo, h.can_redo) == (False, True)
    assert h.future == (v1, v2)  # next first
    assert len(h) == 3 and list(h) == [counter(core), v1, v2]


def test_commit_forgets_the_future(core):
    h = History(counter(core))
    for n in (1, 2, 3):
        h.commit(counter(core, n))
    h.undo(2)
    h.commit(counter(core, 9))
    assert not h.can_redo and h.future == ()
    assert [v["count"] for v in h] == [0, 1, 9]


def test_every_commit_is_a_step(core):
    v = counter(core)
    h = History(v)
    h.commit(v)
    assert len(h) == 2 and h.undo() is v


@pytest.mark.parametrize("verb", ["undo", "redo"])
def test_moving_past_an_end_raises_and_does_not_move(core, verb):
    h = History(counter(core))
    h.commit(counter(core, 1))
    if verb == "redo":
        h.undo()
    before = (h.present, h.past, h.future)
    with pytest.raises(IndexError, match="cannot %s 2 steps: the history has 1" % verb):
        getattr(h, verb)(2)
    assert (h.present, h.past, h.future) == before
    assert getattr(h, verb)(0) is h.present


def test_bad_arguments():
    with pytest.raises(ValueError):
        History(0).undo(-1)
    with pytest.raises(TypeError):
        History(0).redo(1.0)
    with pytest.raises(ValueError):
        History(0, limit=-1)
    with pytest.raises(TypeError):
        History(0, 5)  # limit is keyword-only


def test_limit_keeps_that_many_undo_steps(core):
    h = History(counter(core), limit=2)
    for n in range(1, 6):
        h.commit(counter(core, n))
    assert [v["count"] for v in h.past] == [3, 4]
    assert h.present["count"] == 5 and len(h) == 3
    h.undo(2)
    with pytest.raises(IndexError):
        h.undo()
    none = History(0, limit=0)
    none.commit(1)
    assert list(none) == [1] and not none.can_undo


def test_repr_names_present_and_steps(core):
    h = History(counter(core), limit=5)
    h.commit(counter(core, 1))
    assert repr(h) == ("<History present=frozendict({'count': 1}), 1 to undo, 0 to redo, limit=5>")
    big = History(core.frozendict.fromkeys(range(100), 0))
    assert len(repr(big)) < 160 and " ...," in repr(big)


def test_any_values(core):
    h = History([1])
    h.commit("two")
    h.commit(counter(core))
    loaded = pickle.loads(pickle.dumps(h))
    assert list(loaded) == [[1], "two", counter(core)]


# --- the model --------------------------------------------------------------------

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("commit"), st.sampled_from("abcde"), st.integers(0, 3)),
        st.tuples(st.just("delete"), st.sampled_from("abcde")),
        st.tuples(st.sampled_from(["undo", "redo"]), st.integers(0, 3)),
    ),
    max_size=30,
)


@given(ops=OPS, limit=st.one_of(st.none(), st.integers(0, 5)))
def test_model(core, ops, limit):
    """History against a list of versions and an index."""
    h = History(core.frozendict(a=0), limit=limit)
    versions, index = [h.present], 0
    for op in ops:
        if op[0] in ("commit", "delete"):
            present = versions[index]
            new = present.set(op[1], op[2]) if op[0] == "commit" else present.discard(op[1])
            h.commit(new)
            versions = versions[: index + 1] + [new]
            if limit is not None and len(versions) - 1 > limit:
                versions = versions[len(versions) - 1 - limit :]
            index = len(versions) - 1
        else:
            delta = op[1] if op[0] == "redo" else -op[1]
            if 0 <= index + delta < len(versions):
                assert getattr(h, op[0])(op[1]) is versions[index + delta]
                index += delta
            else:
                with pytest.raises(IndexError):
                    getattr(h, op[0])(op[1])
        assert h.present is versions[index]
        assert list(h) == versions and len(h) == len(versions)
        assert h.past == tuple(versions[:index])
        assert h.future == tuple(versions[index + 1 :])
        assert (h.can_undo, h.can_redo) == (index > 0, index < len(versions) - 1)
    loaded = pickle.loads(pickle.dumps(h))
    assert_same_versions(loaded, h)
    assert loaded.present == h.present and loaded.future == h.future


# --- persistence ------------------------------------------------------------------


def assert_same_versions(loaded, original):
    assert len(loaded) == len(original)
    for a, b in zip(loaded, original):
        assert type(a) is type(b)
        assert a == b
        if hasattr(b, "items"):
            assert list(a.items()) == list(b.items())  # the key order too
            if hasattr(b, "_check"):
                a._check()
    assert loaded.past == tuple(loaded)[: len(loaded.past)]
    assert loaded.limit == original.limit


def edited_history(core, n=200, steps=50, limit=None):
    base = core.frozendict(("key%d" % i, i) for i in range(n))
    h = History(base, limit=limit)
    for i in range(steps):
        h.commit(h.present.set("key%d" % (i * 7 % n), -i))
    return h


@pytest.mark.parametrize("dump", ["pickle", "deepcopy"])
def test_loaded_versions_share_structure(core, dump):
    h = edited_history(core)
    h.undo(3)
    if dump == "pickle":
        loaded = pickle.loads(pickle.dumps(h, protocol=5))
    else:
        loaded = copy.deepcopy(h)
    assert_same_versions(loaded, h)
    assert loaded.present == h.present and len(loaded.future) == 3
    versions = list(loaded)
    for a, b in zip(versions, versions[1:]):
        ids_a, ids_b = set(a._node_ids()), set(b._node_ids())
        # one set() apart: only the nodes on two paths differ
        assert len(ids_b - ids_a) < 12, len(ids_b - ids_a)


def test_pickle_stores_one_version_and_diffs(core):
    h = edited_history(core, n=2000, steps=100)
    one = len(pickle.dumps(h.present, protocol=5))
    dumped = len(pickle.dumps(h, protocol=5))
    assert dumped < one + 100 * 60
    assert dumped * 20 < len(pickle.dumps(list(h), protocol=5))


def test_nested_step_stores_only_the_leaf(core):
    fd = core.frozendict
    todos = fd(("t%d" % i, fd(title="todo %d" % i, done=False)) for i in range(50))
    state = fd(todos=todos, filter="all", user="ada", theme="dark")
    new = state.set_in(["todos", "t7", "done"], True)
    step = _step(state, new)
    assert step == (3, "todos", (3, "t7", (2, "done", True)))
    assert len(pickle.dumps(step)) < 60
    two = new.set("filter", "done").set("extra", 1)
    assert _step(state, two) == (5, (), {"filter": "done", "extra": 1}, {"todos": step[2]})


def test_key_order_survives_when_a_diff_would_lose_it(core):
    fd = core.frozendict
    a = fd(x=1, y=2, z=3)
    reordered = fd(z=3, y=2, x=1)  # equal, other order: no diff at all
    rebuilt = fd(w=0, x=1, y=2)  # z removed, w added before the others
    moved = a.delete("x").set("x", 1).set("q", 5)  # x moved, q added
    h = History(a)
    for version in (reordered, a, rebuilt, a, moved):
        h.commit(version)
    assert_same_versions(pickle.loads(pickle.dumps(h)), h)


def sub_class(core):
    return {"c": SubC, "python": SubPy}[core.name]


def test_subclass_versions_are_stored_whole(core):
    Sub = sub_class(core)
    h = History(core.frozendict(a=1))
    h.commit(Sub(a=1, b=2))
    h.commit(core.frozendict(a=1, b=2))
    loaded = pickle.loads(pickle.dumps(h))
    assert [type(v) for v in loaded] == [core.frozendict, Sub, core.frozendict]
    assert _step(h.past[0], h.past[1])[0] == 1  # stored whole


class MyHistory(History):
    pass


def test_pickle_loads_subclass_and_limit(core):
    h = MyHistory(counter(core), limit=3)
    h.commit(counter(core, 1))
    loaded = pickle.loads(pickle.dumps(h))
    assert type(loaded) is MyHistory and loaded.limit == 3
    loaded.commit(counter(core, 2))  # a loaded history has its own lock
    assert len(h) == 2 and len(loaded) == 3


def test_copy_is_independent(core):
    h = History(counter(core))
    h.commit(counter(core, 1))
    c = copy.copy(h)
    c.undo()
    c.commit(counter(core, 5))
    assert h.present == counter(core, 1) and len(h) == 2
    assert [v["count"] for v in c] == [0, 5]


@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("set"), st.lists(st.sampled_from("abc"), min_size=1, max_size=3)),
            st.tuples(st.just("delete"), st.lists(st.sampled_from("abc"), min_size=1, max_size=3)),
            st.tuples(st.just("value"), st.integers(0, 2)),
        ),
        max_size=15,
    )
)
def test_nested_edits_round_trip(core, edits):
    fd = core.frozendict
    h = History(fd(a=fd(b=fd(c=0))))
    for kind, arg in edits:
        present = h.present
        try:
            if kind == "set":
                new = present.set_in(arg, len(h))
            elif kind == "delete":
                new = present.delete_in(arg)
        except (KeyError, TypeError):  # a path through a missing key or a value
            continue
        if kind == "value":
            new = present.set("a", [0, 0.0, False][arg])
        h.commit(new)
    assert_same_versions(pickle.loads(pickle.dumps(h)), h)
    assert_same_versions(copy.deepcopy(h), h)


# --- threads ----------------------------------------------------------------------


def test_threads_see_whole_steps(core):
    """Writers commit and undo while readers check that what they see is a
    whole history: the versions count up along the line."""
    h = History(counter(core))
    errors = []
    done = threading.Event()

    def writer(start):
        for i in range(300):
            h.commit(counter(core, start + i))
            if i % 3 == 0:
                try:
                    h.undo()
                    h.redo()
                except IndexError as exc:  # another writer committed in between
                    errors.append(exc)

    def reader():
        while not done.is_set():
            # one atomic read (h.past then h.present would be two, with a
            # writer's undo in between)
            snapshot = copy.copy(h)
            versions = list(snapshot)
            if len(versions) != len(set(map(id, versions))):
                errors.append("a version appears twice")
            past, present = snapshot.past, snapshot.present
            if past and past[-1] is present:
                errors.append("present in its own past")
            if versions != [*past, present, *snapshot.future]:
                errors.append("the line is not past + present + future")
            # each version was committed while the one before it was the
            # present: every writer's counts go up along the line
            for base in (1000, 2000, 3000):
                mine = [c for c in (v["count"] for v in versions) if base <= c < base + 1000]
                if mine != sorted(mine):
                    errors.append("a writer's versions out of order")

    readers = [threading.Thread(target=reader) for _ in range(2)]
    writers = [threading.Thread(target=writer, args=((k + 1) * 1000,)) for k in range(3)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    done.set()
    for t in readers:
        t.join()
    assert not [e for e in errors if isinstance(e, str)]
    assert len(h) == len(h.past) + 1 + len(h.future)
    counts = [v["count"] for v in h]
    assert len(set(counts)) == len(counts)
