"""``frozenmap.Versioned``: a process-wide current version, overridable per task.

Everything runs with real threads and asyncio tasks, on each core's frozendict
(``Versioned`` itself is one Python class above the cores).  Threads start
together on a barrier and the switch interval is lowered so the GIL changes
hands inside operations; asyncio tasks interleave on events, never on time.
There are no sleeps and no timing assertions; the ``join`` timeout in the
lock test only turns a deadlock into a failure instead of a hang.
"""

import asyncio
import builtins
import contextvars
import copy
import doctest
import pickle
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from test_threads import fast_switching
from test_threads import run_threads as run_threads_together

import frozenmap
from frozenmap import versioned as versioned_module
from frozenmap.history import History
from frozenmap.versioned import Subscription, Versioned

JOIN_TIMEOUT = 120  # seconds; only to fail instead of hanging on a deadlock


def run_threads(targets):
    """test_threads.run_threads (a barrier start, the first failure re-raised)
    with the GIL changing hands every 10 µs."""
    with fast_switching(1e-5):
        run_threads_together(targets)


@pytest.fixture
def unraisable(monkeypatch):
    """What reaches ``sys.unraisablehook`` during the test."""
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    return seen


# -- the global version -----------------------------------------------------------


def test_get_set_update_and_version(core):
    fd = core.frozendict
    initial = fd(a=1)
    cfg = Versioned(initial)
    assert cfg.get() is initial and cfg.version == 0
    second = fd(a=2)
    assert cfg.set(second) is second
    assert cfg.get() is second and cfg.version == 1
    third = cfg.update(lambda c: c.set("b", 3))
    assert third == {"a": 2, "b": 3} and cfg.get() is third and cfg.version == 2
    # the very same value again is not a change
    assert cfg.set(third) is third and cfg.version == 2
    assert cfg.update(lambda c: c) is third and cfg.version == 2
    # an equal but distinct value is a change
    cfg.set(fd(dict(third)))
    assert cfg.version == 3


def test_update_calls_fn_again_after_a_conflict(core):
    """Compare-and-swap, made to conflict on purpose: another thread publishes
    while ``fn`` runs, so ``fn`` runs again on the newer version."""
    fd = core.frozendict
    cfg = Versioned(fd(n=0))
    seen = []

    def bump(current):
        seen.append(current["n"])
        if len(seen) == 1:
            other = threading.Thread(target=cfg.set, args=(fd(n=100),))
            other.start()
            other.join(JOIN_TIMEOUT)
        return current.set("n", current["n"] + 1)

    assert cfg.update(bump) == {"n": 101}
    assert seen == [0, 100] and cfg.version == 2

    def broken(current):
        raise KeyError("fn failed")

    with pytest.raises(KeyError, match="fn failed"):
        cfg.update(broken)
    assert cfg.get() == {"n": 101} and cfg.version == 2


def test_update_at_path(core):
    fd = core.frozendict
    cfg = Versioned(fd(db=fd(pool=10, host="h"), debug=False))
    new = cfg.update(lambda n: n + 1, at=iter(["db", "pool"]))
    assert new == {"db": {"pool": 11, "host": "h"}, "debug": False}
    assert new["db"]["host"] is cfg.get()["db"]["host"]
    with pytest.raises(KeyError, match="nope"):
        cfg.update(lambda n: n, at=["db", "nope"])
    with pytest.raises(TypeError, match="at must be an iterable of keys, not 'str'"):
        cfg.update(lambda n: n, at="db")
    with pytest.raises(
        TypeError, match="at=\\['x'\\] needs a frozendict version, not one of type 'int'"
    ):
        Versioned(5).update(lambda n: n, at=["x"])
    assert cfg.version == 1


def test_errors_are_clear(core):
    cfg = Versioned(core.frozendict(a=1))
    with pytest.raises(
        TypeError, match="update\\(\\) needs a function of the current version, not 'int'"
    ):
        cfg.update(5)
    with pytest.raises(
        TypeError, match="subscribe\\(\\) needs a callable taking \\(old, new, diff\\), not 'str'"
    ):
        cfg.subscribe("print")
    with pytest.raises(TypeError, match="override\\(\\) takes a mapping of changes or a function"):
        cfg.override(3)
    with pytest.raises(TypeError, match="history must have a commit\\(version\\) method"):
        Versioned(1, history=[])
    with pytest.raises(TypeError, match="cannot pickle a Versioned"):
        pickle.dumps(cfg)
    for copier in (copy.copy, copy.deepcopy):
        with pytest.raises(TypeError) as caught:
            copier(cfg)
        assert str(caught.value) == (
            "copy.%s() cannot copy a Versioned: it is the one current version of a value "
            "for the whole process, and a copy would be a second one, changing apart; share "
            "the Versioned itself, take its value with get() (an immutable snapshot: nothing "
            "to copy), or start another holder with Versioned(v.get())" % copier.__name__
        )
    with pytest.raises(TypeError, match="copy.deepcopy\\(\\) cannot copy a Versioned"):
        copy.deepcopy({"config": cfg})  # also inside what is copied
    with pytest.raises(TypeError, match="the current version is of type 'int'"):
        Versioned(1).override({"a": 2}).__enter__()
    with pytest.raises(TypeError, match="the value at path \\['a'\\] is of type 'int'"):
        cfg.override({"x": 1}, at=["a"]).__enter__()
    assert cfg.version == 0 and cfg.get() == {"a": 1}


def test_repr(core):
    cfg = Versioned(core.frozendict(a=1))
    cfg.set(core.frozendict(a=2))
    assert repr(cfg) == "Versioned(frozendict({'a': 2}), version=1)"
    with cfg.override({"a": 3}), cfg.override({"b": 4}):
        assert repr(cfg) == "Versioned(frozendict({'a': 2}), version=1, overrides here=2)"
    assert "override of Versioned" in repr(cfg.override({"a": 1}, at=["a"]))
    assert "at=['a']" in repr(cfg.override({"a": 1}, at=["a"]))
    sub = cfg.subscribe(print)
    assert repr(sub).startswith("<Subscription of <built-in function print>")
    sub.unsubscribe()
    assert "(ended)" in repr(sub)
    recursive = Versioned([])
    recursive.get().append(recursive)
    assert repr(recursive) == "Versioned([Versioned(...)], version=0)"
    inside = Versioned(core.frozendict())
    inside.set(core.frozendict(me=inside))
    assert repr(inside) == "Versioned(frozendict({'me': Versioned(...)}), version=1)"


def test_repr_is_bounded(core):
    """A holder of a big map prints a line, as History does, and reads only
    the items it prints."""
    big = core.frozendict.fromkeys(range(100_000), 0)
    cfg = Versioned(big)
    assert repr(cfg) == (
        "Versioned(frozendict({0: 0, 1: 0, 2: 0, 3: 0, 4: 0, 5: 0, 6: 0, 7: 0, 8: 0, 9: 0, "
        "10: 0, ...}), version=0)"
    )
    nested = Versioned(core.frozendict(db=core.frozendict(hosts=tuple(range(10_000)))))
    assert len(repr(nested)) < 120 and repr(nested).startswith(
        "Versioned(frozendict({'db': frozendict({'hosts': (0, 1, 2,"
    )
    assert len(repr(Versioned("x" * 10_000))) < 120
    assert len(repr(cfg.override(dict.fromkeys(range(10_000), 1)))) < 130

    counted = []

    class Key:
        def __init__(self, n):
            self.n = n

        def __repr__(self):
            counted.append(self.n)
            return "K%d" % self.n

    keyed = Versioned(core.frozendict((Key(n), n) for n in range(10_000)))
    text = repr(keyed)
    assert len(text) < 120 and len(counted) < 30


# -- a holder of frozendicts stays one --------------------------------------------------

HOLDS = "this Versioned holds frozendicts (it was created with one)"


@pytest.mark.parametrize(
    "value, message",
    [
        (
            {"a": 2},
            "Versioned.set() needs a frozendict, not 'dict': %s; "
            "convert it with frozenmap.freeze()" % HOLDS,
        ),
        (
            None,
            "Versioned.set() needs a frozendict, not None: %s; pass a frozendict "
            "(frozenmap.freeze() converts a mapping)" % HOLDS,
        ),
        (
            [("a", 2)],
            "Versioned.set() needs a frozendict, not 'list': %s; pass a "
            "frozendict (frozenmap.freeze() converts a mapping)" % HOLDS,
        ),
    ],
)
def test_set_refuses_what_is_not_a_frozendict(core, value, message):
    history = History(core.frozendict(a=1))
    cfg = Versioned(history.present, history=history)
    calls = []
    cfg.subscribe(lambda *args: calls.append(args))
    with pytest.raises(TypeError) as caught:
        cfg.set(value)
    assert str(caught.value) == message
    assert cfg.get() == {"a": 1} and cfg.version == 0 and len(history) == 1 and not calls


@pytest.mark.parametrize(
    "fn, message",
    [
        (
            lambda c: None,
            "the function given to Versioned.update() must return a frozendict, not None "
            "(a forgotten return?): %s; return a frozendict (frozenmap.freeze() converts "
            "a mapping)" % HOLDS,
        ),
        (
            lambda c: dict(c, a=2),
            "the function given to Versioned.update() must return a frozendict, not "
            "'dict': %s; convert it with frozenmap.freeze()" % HOLDS,
        ),
        (
            lambda c: c["a"] + 1,
            "the function given to Versioned.update() must return a frozendict, not "
            "'int': %s; return a frozendict (frozenmap.freeze() converts a mapping)" % HOLDS,
        ),
    ],
)
def test_update_refuses_a_result_that_is_not_a_frozendict(core, fn, message):
    history = History(core.frozendict(a=1))
    cfg = Versioned(history.present, history=history)
    with pytest.raises(TypeError) as caught:
        cfg.update(fn)
    assert str(caught.value) == message
    assert cfg.get() == {"a": 1} and cfg.version == 0 and len(history) == 1


def test_update_refuses_after_a_conflict_too(core):
    """The check is on every attempt, not only the first."""
    fd = core.frozendict
    cfg = Versioned(fd(n=0))
    attempts = []

    def forgetful(current):
        attempts.append(current["n"])
        if len(attempts) == 1:
            other = threading.Thread(target=cfg.set, args=(fd(n=100),))
            other.start()
            other.join(JOIN_TIMEOUT)
            return current.set("n", 1)  # loses the race: computed again
        return None

    with pytest.raises(TypeError, match="must return a frozendict, not None"):
        cfg.update(forgetful)
    assert attempts == [0, 100] and cfg.get() == {"n": 100} and cfg.version == 1


def test_override_function_must_return_a_frozendict(core):
    fd = core.frozendict
    cfg = Versioned(fd(a=1))
    with pytest.raises(TypeError) as caught:
        with cfg.override(lambda c: None):
            pass
    assert str(caught.value) == (
        "the function given to override() must return a frozendict, not None (a forgotten "
        "return?): %s; return a frozendict (frozenmap.freeze() converts a mapping)" % HOLDS
    )
    assert cfg.get() == {"a": 1}  # nothing was entered

    # a function that returns a frozendict only for some versions fails where it
    # is reapplied: in the get() that reads it over a new global version
    with cfg.override(lambda c: c if c["a"] == 1 else dict(c)):
        cfg.set(fd(a=2))
        with pytest.raises(TypeError, match="must return a frozendict, not 'dict'"):
            cfg.get()
    assert cfg.get() == {"a": 2}


def test_what_a_frozendict_holder_accepts(core):
    fd = core.frozendict

    class Settings(core.frozendict):
        pass

    cfg = Versioned(fd(a=1))
    assert type(cfg.set(Settings(a=2))) is Settings
    assert cfg.update(lambda c: c.set("a", 3)) == {"a": 3}
    # the value at a path may be anything: only the whole version is checked
    nested = Versioned(fd(db=fd(pool=10)))
    assert nested.update(lambda n: None, at=["db", "pool"]) == {"db": {"pool": None}}
    with nested.override(lambda n: None, at=["db"]):
        assert nested.get() == {"db": None}
    builtin = getattr(builtins, "frozendict", None)
    if builtin is not None:  # 3.15: the builtin frozendict is a frozendict too
        assert type(cfg.set(builtin(a=4))) is builtin


def test_other_values_are_held_as_given(core):
    """Created with anything but a frozendict, a Versioned holds whatever it is
    given, as documented (``Versioned(1)``); the initial value decides."""
    cfg = Versioned(1)
    assert cfg.set("two") == "two" and cfg.update(lambda v: None) is None
    assert cfg.set(core.frozendict(a=1)) == {"a": 1}
    assert cfg.set([3]) == [3] and cfg.version == 4
    with cfg.override(lambda v: None):
        assert cfg.get() is None
    assert Versioned({"a": 1}).set({"a": 2}) == {"a": 2}


def test_concurrent_updates_lose_nothing(core):
    """8 threads x 10,000 increments: compare-and-swap with retry loses none."""
    threads, increments = 8, 10_000
    cfg = Versioned(core.frozendict(n=0, other="kept"))
    calls = [0] * threads

    def incrementer(index):
        def run():
            bump = lambda c: c.set("n", c["n"] + 1)  # noqa: E731

            def counted(c):
                calls[index] += 1
                return bump(c)

            for _ in range(increments):
                cfg.update(counted)

        return run

    run_threads([incrementer(i) for i in range(threads)])
    total = threads * increments
    assert cfg.get() == {"n": total, "other": "kept"}
    assert cfg.version == total
    assert sum(calls) >= total  # the rest are retries after a conflict


def test_readers_never_see_half_an_update(core):
    fd = core.frozendict
    cfg = Versioned(fd(primary="db-0", replica="db-0-replica", n=0))
    done = threading.Event()
    seen = []

    def writer():
        for n in range(1, 3001):
            cfg.update(
                lambda c, n=n: c | {"primary": "db-%d" % n, "replica": "db-%d-replica" % n, "n": n}
            )
        done.set()

    def reader():
        last = -1
        while True:
            finished = done.is_set()
            snapshot = cfg.get()
            assert snapshot["replica"] == snapshot["primary"] + "-replica", snapshot
            assert snapshot["n"] >= last  # versions only move forward
            last = snapshot["n"]
            if finished:
                seen.append(last)
                return

    run_threads([writer, reader, reader, reader])
    assert seen == [3000, 3000, 3000]


# -- overrides --------------------------------------------------------------------


def test_override_block_nests_and_restores(core):
    fd = core.frozendict
    cfg = Versioned(fd(timeout=30, retries=3))
    with cfg.override({"timeout": 2}) as seen:
        assert seen == {"timeout": 2, "retries": 3} and cfg.get() == seen
        with cfg.override(lambda c: c.set("retries", c["retries"] * 10)):
            assert cfg.get() == {"timeout": 2, "retries": 30}
            with pytest.raises(ZeroDivisionError):
                with cfg.override({"retries": 0}):
                    assert cfg.get()["retries"] == 0
                    1 / 0
            assert cfg.get() == {"timeout": 2, "retries": 30}
        assert cfg.get() == {"timeout": 2, "retries": 3}
    assert cfg.get() == {"timeout": 30, "retries": 3}
    assert cfg.version == 0  # overrides are not changes


def test_override_changes_that_raise_leave_nothing_behind(core):
    cfg = Versioned(core.frozendict(a=1))

    def broken(current):
        raise LookupError("bad override")

    with pytest.raises(LookupError, match="bad override"):
        with cfg.override(broken):
            pass  # pragma: no cover
    assert cfg.get() == {"a": 1} and "overrides" not in repr(cfg)


def test_override_at_path(core):
    fd = core.frozendict
    cfg = Versioned(fd(db=fd(pool=10, host="h"), cache=fd(ttl=5)))
    with cfg.override({"pool": 1}, at=["db"]):
        assert cfg.get() == {"db": {"pool": 1, "host": "h"}, "cache": {"ttl": 5}}
        assert cfg.get()["cache"] is cfg.get()["cache"]
        with cfg.override(lambda ttl: ttl * 2, at=("cache", "ttl")):
            assert cfg.get()["cache"]["ttl"] == 10 and cfg.get()["db"]["pool"] == 1
    with pytest.raises(KeyError, match="missing"):
        cfg.override({"x": 1}, at=["missing"]).__enter__()
    assert cfg.get() == {"db": {"pool": 10, "host": "h"}, "cache": {"ttl": 5}}


def test_override_copies_a_mutable_mapping(core):
    cfg = Versioned(core.frozendict(a=1))
    changes = {"a": 2}
    override = cfg.override(changes)
    changes["a"] = 99
    with override:
        assert cfg.get()["a"] == 2


def test_global_change_shows_through_an_override(core):
    """The documented choice: an override is applied to the version below it
    when read, so a later global change to another key is seen inside."""
    fd = core.frozendict
    cfg = Versioned(fd(timeout=30, level="info"))
    calls = []

    def halve(c):
        calls.append(c)
        return c.set("timeout", c["timeout"] // 2)

    with cfg.override({"timeout": 2}), cfg.override(halve):
        assert cfg.get() == {"timeout": 1, "level": "info"}
        first = cfg.get()
        assert cfg.get() is first and len(calls) == 1  # cached while nothing changes
        cfg.set(fd(timeout=60, level="debug"))
        assert cfg.get() == {"timeout": 1, "level": "debug"}
        assert len(calls) == 2
        pinned = cfg.get()
        with cfg.override(lambda _: pinned):  # a snapshot, when one is wanted
            cfg.update(lambda c: c.set("level", "error"))
            assert cfg.get() is pinned
        assert cfg.get()["level"] == "error"
    assert cfg.get() == {"timeout": 60, "level": "error"}


def test_writes_inside_an_override_act_on_the_global_version(core):
    cfg = Versioned(core.frozendict(a=1, b=1))
    with cfg.override({"a": 100}):
        new = cfg.update(lambda c: c.set("b", c["a"] + 1))
        assert new == {"a": 1, "b": 2}  # fn saw the global version
        assert cfg.get() == {"a": 100, "b": 2}


def test_one_override_object_entered_in_many_threads(core):
    cfg = Versioned(core.frozendict(n=0))
    override = cfg.override(lambda c: c.set("n", c["n"] + 1))

    def nest():
        for _ in range(300):
            with override:
                assert cfg.get()["n"] == 1
                with override:
                    assert cfg.get()["n"] == 2
                assert cfg.get()["n"] == 1
            assert cfg.get()["n"] == 0

    run_threads([nest] * 4)
    assert cfg.get()["n"] == 0


def test_exit_where_not_entered_is_an_error(core):
    cfg = Versioned(core.frozendict(a=1))
    override = cfg.override({"a": 2})
    with pytest.raises(RuntimeError, match="exited in a context where it was not entered"):
        override.__exit__(None, None, None)
    override.__enter__()
    with pytest.raises(RuntimeError, match="not entered"):
        contextvars.copy_context().run(cfg.override({"a": 3}).__exit__, None, None, None)
    override.__exit__(None, None, None)
    assert cfg.get() == {"a": 1}


def test_override_decorates_plain_and_async_functions(core):
    cfg = Versioned(core.frozendict(depth=0))
    bump = cfg.override(lambda c: c.set("depth", c["depth"] + 1))

    @bump
    def recurse(n):
        """Docstring kept."""
        if n == 0:
            return cfg.get()["depth"]
        return recurse(n - 1)

    assert recurse(3) == 4 and cfg.get()["depth"] == 0
    assert recurse.__doc__ == "Docstring kept." and recurse.__name__ == "recurse"

    @bump
    async def read_later(gate):
        await gate.wait()  # the override must span the await
        return cfg.get()["depth"]

    async def main():
        gate = asyncio.Event()
        task = asyncio.ensure_future(read_later(gate))
        await asyncio.sleep(0)
        outside = cfg.get()["depth"]
        gate.set()
        return outside, await task

    assert asyncio.run(main()) == (0, 1)
    assert asyncio.iscoroutinefunction(read_later)

    def gen():
        yield cfg.get()

    async def agen():
        yield cfg.get()

    for fn in (gen, agen):
        with pytest.raises(TypeError, match="cannot decorate the generator function"):
            bump(fn)
    with pytest.raises(TypeError, match="decorates functions, not 'int'"):
        bump(3)


class AsyncGate:
    """Every task waits until ``count`` tasks arrived (asyncio.Barrier is 3.11+)."""

    def __init__(self, count):
        self.count = count
        self.event = asyncio.Event()

    async def wait(self):
        self.count -= 1
        if self.count == 0:
            self.event.set()
        await self.event.wait()


def test_overrides_do_not_leak_between_gathered_tasks(core):
    cfg = Versioned(core.frozendict(who="global"))

    async def main():
        gate = AsyncGate(4)

        async def worker(name):
            with cfg.override({"who": name}):
                await gate.wait()  # every override is active at once here
                inner = cfg.get()["who"]
                child = await asyncio.gather(asyncio.ensure_future(child_reads()))
            return inner, child[0], cfg.get()["who"]

        async def child_reads():
            return cfg.get()["who"]

        async def bystander():
            await gate.wait()
            return cfg.get()["who"]

        results = await asyncio.gather(worker("a"), worker("b"), worker("c"), bystander())
        return results, cfg.get()["who"]

    results, after = asyncio.run(main())
    assert results == [
        ("a", "a", "global"),
        ("b", "b", "global"),
        ("c", "c", "global"),
        "global",
    ]
    assert after == "global"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.TaskGroup is 3.11+")
def test_overrides_do_not_leak_between_taskgroup_tasks(core):
    cfg = Versioned(core.frozendict(tenant="none", level="info"))

    async def main():
        entered, changed = AsyncGate(3), AsyncGate(3)
        seen = {}

        async def handle(tenant):
            with cfg.override({"tenant": tenant}):
                async with asyncio.TaskGroup() as group:
                    child = group.create_task(read(tenant))
                seen[tenant] = (child.result(), cfg.get()["tenant"])

        async def read(tenant):
            await entered.wait()  # all three overrides are active now
            if tenant == "x":
                cfg.update(lambda c: c.set("level", "debug"))
            await changed.wait()
            return (cfg.get()["tenant"], cfg.get()["level"])

        async with asyncio.TaskGroup() as group:
            for tenant in "xyz":
                group.create_task(handle(tenant))
        return seen

    seen = asyncio.run(main())
    # each child sees its own tenant, and all see the global change one made
    assert seen == {t: ((t, "debug"), t) for t in "xyz"}
    assert cfg.get()["tenant"] == "none"


def test_overrides_follow_copied_contexts_into_executors(core):
    cfg = Versioned(core.frozendict(region="eu"))

    def read():
        return cfg.get()["region"]

    with ThreadPoolExecutor(max_workers=2) as pool:
        with cfg.override({"region": "us"}):
            copied = pool.submit(contextvars.copy_context().run, read).result()
            plain = pool.submit(read).result()  # a bare submit does not copy the context

            async def via_loop():
                loop = asyncio.get_running_loop()
                ctx = contextvars.copy_context()
                return (
                    await loop.run_in_executor(pool, ctx.run, read),
                    await asyncio.to_thread(read),  # copies the context itself
                )

            in_loop = asyncio.run(via_loop())
    assert (copied, plain, in_loop) == ("us", "eu", ("us", "us"))
    assert read() == "eu"


# -- subscribers --------------------------------------------------------------------


def test_subscribers_see_each_change_once_in_order_under_concurrent_updaters(core):
    threads, increments = 4, 2_500
    cfg = Versioned(core.frozendict(n=0))
    events = []
    other = []

    def record(old, new, diff):
        events.append((old["n"], new["n"], diff.changed["n"]))

    handle = cfg.subscribe(record)
    second = cfg.subscribe(lambda old, new, diff: other.append(new["n"]))

    def incrementer():
        for _ in range(increments):
            cfg.update(lambda c: c.set("n", c["n"] + 1))

    run_threads([incrementer] * threads)
    total = threads * increments
    assert len(events) == total
    assert events == [(n, n + 1, (n, n + 1)) for n in range(total)]
    assert other == list(range(1, total + 1))
    handle.unsubscribe()
    second.unsubscribe()


def test_subscriber_gets_only_later_changes_and_can_unsubscribe(core):
    fd = core.frozendict
    cfg = Versioned(fd(a=0))
    cfg.set(fd(a=1))
    got = []
    with cfg.subscribe(lambda old, new, diff: got.append((old, new, diff))) as sub:
        assert isinstance(sub, Subscription) and sub.active
        cfg.set(fd(a=2, b=1))
        cfg.set(cfg.get())  # not a change
    assert not sub.active
    cfg.set(fd(a=3))
    sub.unsubscribe()  # a second call does nothing
    assert got == [(fd(a=1), fd(a=2, b=1), core.Diff(fd(b=1), fd(), fd(a=(1, 2))))]

    plain = Versioned(1)
    values = []
    plain.subscribe(lambda old, new, diff: values.append((old, new, diff)))
    plain.set(2)
    assert values == [(1, 2, None)]  # no diff for values that are not frozendicts


def test_raising_subscriber_is_reported_and_others_still_called(core, unraisable):
    cfg = Versioned(core.frozendict(a=0))
    calls = []

    def first(old, new, diff):
        calls.append("first")

    def broken(old, new, diff):
        raise ValueError("subscriber failed")

    def last(old, new, diff):
        calls.append("last")

    for callback in (first, broken, last):
        cfg.subscribe(callback)
    assert cfg.set(core.frozendict(a=1))["a"] == 1
    cfg.set(core.frozendict(a=2))
    assert calls == ["first", "last"] * 2
    assert cfg.get() == {"a": 2} and cfg.version == 2
    assert len(unraisable) == 2
    report = unraisable[0]
    assert report.exc_type is ValueError and str(report.exc_value) == "subscriber failed"
    assert report.exc_traceback is report.exc_value.__traceback__
    assert report.object is broken
    assert report.err_msg == "Exception ignored in a subscriber of Versioned (change 1)"


def test_raising_subscriber_with_the_default_hook_prints_the_report(core, monkeypatch, capsys):
    monkeypatch.setattr(sys, "unraisablehook", sys.__unraisablehook__)
    cfg = Versioned(core.frozendict(a=0))
    cfg.subscribe(lambda old, new, diff: 1 / 0)
    cfg.set(core.frozendict(a=1))
    err = capsys.readouterr().err
    assert err.startswith("Exception ignored in a subscriber of Versioned (change 1): <function")
    assert "ZeroDivisionError: division by zero" in err


def test_callbacks_run_outside_the_lock_and_may_change_the_value(core):
    fd = core.frozendict
    cfg = Versioned(fd(n=0))
    order = []

    def react(old, new, diff):
        order.append(new["n"])
        if new["n"] == 1:
            # another thread can change the value while this callback runs ...
            helper = threading.Thread(target=cfg.update, args=(lambda c: c.set("n", 2),))
            helper.start()
            helper.join(JOIN_TIMEOUT)
            assert not helper.is_alive(), "the writers' lock is held during callbacks"
            # ... and so can the callback; both changes are delivered after this one
            cfg.update(lambda c: c.set("n", c["n"] + 1))
            order.append("end of 1")

    cfg.subscribe(react)
    cfg.set(fd(n=1))
    assert order == [1, "end of 1", 2, 3]
    assert cfg.get() == {"n": 3}


# -- history ---------------------------------------------------------------------------


def test_history_records_every_global_change_in_order(core):
    fd = core.frozendict
    initial = fd(n=0)
    history = History(initial)
    cfg = Versioned(initial, history=history)
    assert cfg.history is history

    def incrementer():
        for _ in range(500):
            cfg.update(lambda c: c.set("n", c["n"] + 1))

    run_threads([incrementer] * 4)
    with cfg.override({"n": -1}):
        pass  # not a change
    cfg.set(cfg.get())  # not a change
    assert [v["n"] for v in history] == list(range(2001))
    assert history.present is cfg.get()


def test_history_with_a_limit(core):
    initial = core.frozendict(n=0)
    cfg = Versioned(initial, history=History(initial, limit=3))
    for n in range(1, 11):
        cfg.set(core.frozendict(n=n))
    assert [v["n"] for v in cfg.history] == [7, 8, 9, 10]


def test_failing_or_reentrant_history_commit(core):
    fd = core.frozendict

    class Refusing:
        def commit(self, version):
            raise OSError("disk full")

    cfg = Versioned(fd(a=0), history=Refusing())
    with pytest.raises(OSError, match="disk full"):
        cfg.set(fd(a=1))
    assert cfg.get() == {"a": 0} and cfg.version == 0  # the change was not made

    class Reentrant:
        def commit(self, version):
            reentrant_cfg.set(fd(a=-1))

    reentrant_cfg = Versioned(fd(a=0), history=Reentrant())
    with pytest.raises(RuntimeError, match="must not change the Versioned it records"):
        reentrant_cfg.update(lambda c: c.set("a", 1))
    assert reentrant_cfg.get() == {"a": 0}
    reentrant_cfg._history = None
    assert reentrant_cfg.set(fd(a=2)) == {"a": 2}  # the lock was released


# -- documentation ---------------------------------------------------------------------


def test_docstring_examples(core, monkeypatch):
    monkeypatch.setattr(frozenmap, "frozendict", core.frozendict)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    ran = 0
    for test in finder.find(versioned_module, globs={"Versioned": Versioned}):
        runner.run(test)
        ran += len(test.examples)
    assert ran > 15
    assert runner.summarize(verbose=False).failed == 0


def test_exported():
    assert frozenmap.Versioned is Versioned and "Versioned" in frozenmap.__all__
