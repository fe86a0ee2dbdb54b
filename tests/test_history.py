"""``frozenmap.History``: undo/redo over versions, and its persistence.

The line of versions is checked against a model (a list and an index) under
random commits, undos, redos and jumps; pickling and deep-copying store one
version and diffs, and must give back versions equal to the originals, in
their key order, sharing structure again; a pickle no History could have
written is refused on load, naming what is wrong.  Both cores, through their
frozendicts.
"""

import copy
import doctest
import pickle
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

import frozenmap
from frozenmap import History, _shortrepr, history
from frozenmap.history import _load, _step

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


@pytest.mark.parametrize("verb, where", [("undo", "in the past"), ("redo", "in the future")])
def test_moving_past_an_end_raises_and_does_not_move(core, verb, where):
    h = line_of(core, 3)
    if verb == "redo":
        h.goto(0)
    words = {2: "only 2 versions are", 1: "only 1 version is", 0: "no version is"}
    for available in (2, 1, 0):
        before = (h.present, h.past, h.future)
        with pytest.raises(IndexError) as caught:
            getattr(h, verb)(available + 1)
        assert str(caught.value) == "cannot %s %d step%s: %s %s" % (
            verb,
            available + 1,
            "" if available == 0 else "s",
            words[available],
            where,
        )
        assert (h.present, h.past, h.future) == before
        assert getattr(h, verb)(0) is h.present
        if available:
            getattr(h, verb)(1)


def test_undo_past_the_limit_names_it(core):
    h = History(counter(core), limit=2)
    for n in range(1, 5):
        h.commit(counter(core, n))
    with pytest.raises(IndexError) as caught:
        h.undo(3)
    assert str(caught.value) == (
        "cannot undo 3 steps: only 2 versions are in the past (limit=2 keeps no more)"
    )
    h.undo()
    with pytest.raises(IndexError, match="only 1 version is in the past$"):
        h.undo(2)  # below the limit: no mention of it


# --- random access ----------------------------------------------------------------


def line_of(core, n):
    """A history of ``n`` versions, counting 0 to n - 1, with the present last."""
    h = History(counter(core))
    for i in range(1, n):
        h.commit(counter(core, i))
    return h


def test_getitem_reads_any_version_without_moving(core):
    h = line_of(core, 4)
    h.undo(2)
    versions = list(h)
    for i in range(-4, 4):
        assert h[i] is versions[i]
    assert h.index == 1 and h.present is versions[1]
    assert h[1:] == tuple(versions[1:]) and h[::-2] == (versions[3], versions[1])
    assert h[5:] == () and type(h[:]) is tuple


@pytest.mark.parametrize("index", [4, -5, 10**30, -(10**30)])
def test_getitem_out_of_range(core, index):
    h = line_of(core, 4)
    with pytest.raises(IndexError) as caught:
        h[index]
    assert str(caught.value) == (
        "History index %d is out of range: the history keeps 4 versions "
        "(positions 0 to 3, or -4 to -1)" % index
    )
    with pytest.raises(IndexError):
        ([0] * 4)[index]  # the same error as a list's


def test_getitem_and_goto_type_errors():
    h = History("a")
    for bad in ("0", 1.0, None):
        with pytest.raises(TypeError) as caught:
            h[bad]
        assert str(caught.value) == (
            "History indices must be integers or slices, not %s" % type(bad).__name__
        )
        with pytest.raises(TypeError):
            ["a"][bad]  # a list refuses the same indices
        with pytest.raises(TypeError) as caught:
            h.goto(bad)
        assert str(caught.value) == (
            "History.goto() needs an integer position, not '%s'" % type(bad).__name__
        )
    assert h[False] == "a"  # a bool is an int, as for a list

    class OwnError:
        def __index__(self):
            raise TypeError("my own")

    for call in (h.__getitem__, h.goto):  # an __index__'s own error is not replaced
        with pytest.raises(TypeError, match="^my own$"):
            call(OwnError())


class CountingIndex:
    """An integer by ``__index__`` that counts its calls."""

    def __init__(self, value):
        self.value = value
        self.calls = 0

    def __index__(self):
        self.calls += 1
        return self.value


def test_index_is_read_once(core):
    h = line_of(core, 3)
    for call in (h.__getitem__, h.goto):
        position = CountingIndex(-3)
        assert call(position) is h[0]
        assert position.calls == 1
    bounds = [CountingIndex(0), CountingIndex(2), CountingIndex(1)]
    assert h[slice(*bounds)] == (h[0], h[1])
    assert [b.calls for b in bounds] == [1, 1, 1]


def test_index_that_reenters_the_history(core):
    """``__index__`` runs before the lock is taken: it may use the history."""
    h = line_of(core, 3)

    class Reentrant:
        def __index__(self):
            h.commit(counter(core, 99))  # forgets nothing: the present is last
            return len(h) - 1

    assert h.goto(Reentrant()) == counter(core, 99) and h.index == 3
    assert h[Reentrant()] == counter(core, 99) and len(h) == 5


def test_goto_moves_the_present_either_way(core):
    h = line_of(core, 5)
    versions = list(h)
    assert h.goto(1) is versions[1]
    assert (h.index, h.past, h.future) == (1, (versions[0],), tuple(versions[2:]))
    assert h.goto(-1) is versions[4] and h.index == 4 and not h.can_redo
    assert h.goto(0) is versions[0] and not h.can_undo
    assert h.redo(2) is versions[2]
    assert list(h) == versions  # goto forgets nothing
    h.commit(counter(core, 9))  # but a commit still forgets the future
    assert [v["count"] for v in h] == [0, 1, 2, 9] and h.index == 3


@pytest.mark.parametrize("index", [5, -6])
def test_goto_out_of_range_does_not_move(core, index):
    h = line_of(core, 5)
    h.goto(2)
    with pytest.raises(IndexError) as caught:
        h.goto(index)
    assert str(caught.value) == (
        "cannot go to position %d: the history keeps 5 versions "
        "(positions 0 to 4, or -5 to -1)" % index
    )
    assert h.index == 2


def test_positions_shift_when_the_limit_drops_the_oldest(core):
    h = History(counter(core), limit=2)
    for n in range(1, 4):
        h.commit(counter(core, n))
    assert [h[i]["count"] for i in range(len(h))] == [1, 2, 3]
    assert h.index == 2 and h.limit == 2


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
    with pytest.raises(IndexError) as caught:
        none.undo()
    assert str(caught.value) == (
        "cannot undo 1 step: no version is in the past (limit=0 keeps no more)"
    )


def test_repr_names_present_and_steps(core):
    h = History(counter(core), limit=5)
    h.commit(counter(core, 1))
    assert repr(h) == ("<History present=frozendict({'count': 1}), 1 to undo, 0 to redo, limit=5>")
    big = History(core.frozendict.fromkeys(range(100_000), 0))
    assert repr(big) == (
        "<History present=frozendict({0: 0, 1: 0, 2: 0, 3: 0, 4: 0, 5: 0, 6: 0, 7: 0, 8: 0, "
        "9: 0, 10: 0, ...}), 0 to undo, 0 to redo>"
    )
    long_value = History(core.frozendict(text="x" * 1000))
    assert len(repr(long_value)) < 130 and "x ...})" in repr(long_value)


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
        st.tuples(st.just("goto"), st.integers(-6, 6)),
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
        elif op[0] == "goto":
            if -len(versions) <= op[1] < len(versions):
                assert h.goto(op[1]) is versions[op[1]]
                index = op[1] % len(versions)
            else:
                with pytest.raises(IndexError):
                    h.goto(op[1])
        else:
            delta = op[1] if op[0] == "redo" else -op[1]
            if 0 <= index + delta < len(versions):
                assert getattr(h, op[0])(op[1]) is versions[index + delta]
                index += delta
            else:
                with pytest.raises(IndexError):
                    getattr(h, op[0])(op[1])
        assert h.present is versions[index] and h.index == index
        assert all(h[i] is versions[i] for i in range(-len(versions), len(versions)))
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


# --- a pickle no History could have written ------------------------------------------


class Forged:
    """Pickles as a History whose reduce arguments were edited."""

    def __init__(self, history, **changes):
        load, (cls, limit, index, first, steps) = history.__reduce__()
        assert load is _load
        fields = dict(cls=cls, limit=limit, index=index, first=first, steps=steps)
        fields.update(changes)
        self.arguments = tuple(fields[name] for name in ("cls", "limit", "index", "first", "steps"))

    def __reduce__(self):
        return (_load, self.arguments)


def load_forged(history, **changes):
    return pickle.loads(pickle.dumps(Forged(history, **changes)))


def three_versions(core, limit=None):
    h = History(counter(core), limit=limit)
    h.commit(counter(core, 1))
    h.commit(counter(core, 2))
    h.undo()
    return h


def test_forged_pickle_round_trips_unchanged(core):
    h = three_versions(core, limit=5)
    loaded = load_forged(h)
    assert_same_versions(loaded, h)
    assert loaded.index == 1 and loaded.present == counter(core, 1)


@pytest.mark.parametrize(
    "changes, error, message",
    [
        ({"limit": "5"}, TypeError, "a History pickle's limit must be an int, not 'str'"),
        ({"limit": 2.0}, TypeError, "a History pickle's limit must be an int, not 'float'"),
        ({"limit": True}, TypeError, "a History pickle's limit must be an int, not 'bool'"),
        ({"limit": -1}, ValueError, "a History pickle's limit must be >= 0, not -1"),
        (
            {"limit": 1},
            ValueError,
            "a History pickle with limit=1 holds 3 versions, but a history with that limit "
            "keeps at most 2 (the present and 1 in the past or future)",
        ),
        ({"index": None}, TypeError, "a History pickle's index must be an int, not 'NoneType'"),
        ({"index": "1"}, TypeError, "a History pickle's index must be an int, not 'str'"),
        ({"index": -1}, ValueError, "a History pickle's index must be >= 0, not -1"),
        (
            {"index": 3},
            ValueError,
            "a History pickle's index is 3, but it holds 3 versions (positions 0 to 2)",
        ),
        ({"steps": []}, TypeError, "a History pickle's steps must be a tuple, not 'list'"),
        (
            {"steps": None, "index": 0},
            TypeError,
            "a History pickle's steps must be a tuple, not 'NoneType'",
        ),
        ({"cls": dict}, TypeError, "a History pickle's class must be History or a subclass"),
    ],
)
def test_bad_index_or_limit_is_refused_on_load(core, changes, error, message):
    h = three_versions(core, limit=5)
    with pytest.raises(error) as caught:
        load_forged(h, **changes)
    assert type(caught.value) is error
    assert str(caught.value).startswith(message), str(caught.value)


def test_counts_that_add_up_load(core):
    """The edges of the checks: what a History can hold loads."""
    h = three_versions(core, limit=2)  # 3 versions fill limit=2 exactly
    assert load_forged(h, index=2).present == counter(core, 2)
    assert load_forged(h, index=0).present == counter(core)
    one = History(counter(core), limit=0)
    assert list(load_forged(one)) == [counter(core)]
    assert load_forged(h, limit=None).limit is None


@pytest.mark.parametrize(
    "step, error, message",
    [
        ("not a step", TypeError, "a History pickle's step 2 must be a tuple, not 'str'"),
        ((), ValueError, "a History pickle's step 2 is not a step of a History: 0 items"),
        ((9,), ValueError, "a History pickle's step 2 is not a step of a History: 1 item, "),
        ((2, "count"), ValueError, "a History pickle's step 2 is not a step of a History: 2 items"),
        (("2", "count", 5), ValueError, "a History pickle's step 2 is not a step of a History"),
        (
            (3, "count", (4,)),
            ValueError,
            "a History pickle's step 2 (nested at key 'count') is not a step of a History",
        ),
        (
            (5, ["count"], {}, {}),
            TypeError,
            "a History pickle's step 2 holds a 'list' where a step of several edits has a tuple",
        ),
        (
            (5, (), {}, {"count": "x"}),
            TypeError,
            "a History pickle's step 2 (nested at key 'count') must be a tuple, not 'str'",
        ),
        (
            (4, "missing"),
            ValueError,
            "a History pickle's step 2 does not apply to version 1: KeyError: 'missing'",
        ),
        (
            (3, "count", (2, "x", 1)),
            ValueError,
            "a History pickle's step 2 does not apply to version 1: AttributeError",
        ),
    ],
)
def test_bad_step_is_refused_on_load(core, step, error, message):
    h = three_versions(core)
    good = h.__reduce__()[1][4]
    with pytest.raises(error) as caught:
        load_forged(h, steps=(good[0], step))
    assert type(caught.value) is error
    assert str(caught.value).startswith(message), str(caught.value)


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


# --- documentation ------------------------------------------------------------------


@pytest.mark.parametrize("module", [history, _shortrepr])
def test_docstring_examples(core, monkeypatch, module):
    monkeypatch.setattr(frozenmap, "frozendict", core.frozendict)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    ran = 0
    for test in doctest.DocTestFinder(exclude_empty=True).find(module):
        runner.run(test)
        ran += len(test.examples)
    assert ran >= (20 if module is history else 2)
    assert runner.summarize(verbose=False).failed == 0


@pytest.mark.parametrize(
    "before, after",
    [
        ("abcd", "bacde"),  # two keys swapped at the front, one added
        ("abcdef", "abdcef"),  # a key moved in the middle, the last one stays
        ("abcd", "abcd"),  # equal, same order
        ("abcd", "dcba"),  # reversed
        ("abcdef", "acdebf"),  # a key moved to the end
    ],
)
def test_a_pickle_keeps_the_key_order_of_versions_built_apart(core, before, after):
    """A version built apart may hold its keys in another order than the
    diff from the one before leaves them; the pickle then stores it whole."""
    first = core.frozendict((k, ord(k)) for k in before)
    second = core.frozendict((k, ord(k) + (k == "c")) for k in after)
    h = History(first)
    h.commit(second)
    h.commit(second.set("z", 0))
    loaded = pickle.loads(pickle.dumps(h))
    assert [list(v.items()) for v in loaded] == [list(v.items()) for v in h]


def test_a_pickle_keeps_the_key_objects_of_versions_built_apart(core):
    """Equal keys that are other objects (1.0 for 1) in a version built apart:
    a diff would bring back the older version's objects, so the version is
    stored whole."""
    first = core.frozendict({1: "a", 2: "b", 3: "c"})
    second = core.frozendict({1.0: "a", 2: "x", 3: "c"})
    h = History(first)
    h.commit(second)
    loaded = pickle.loads(pickle.dumps(h))
    assert [type(k) for k in loaded.present] == [float, int, int]
    assert [type(k) for k in loaded[0]] == [int, int, int]
