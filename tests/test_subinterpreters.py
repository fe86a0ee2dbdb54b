"""frozenmap in subinterpreters: both cores, interpreters in parallel, versions passed between them.

The C core declares ``Py_MOD_PER_INTERPRETER_GIL_SUPPORTED``: each
interpreter gets its own module state, and interpreters with their own GIL
run it at once.  These tests use ``concurrent.interpreters`` (PEP 734,
CPython 3.14+):

* several interpreters, one thread each and all at once, build, derive,
  edit through an Evolver, read views, keep a ``History`` and a
  ``Versioned``, and call ``_check()`` on every version they make or
  receive;
* versions cross interpreters by pickle (``bytes``) and through queues
  (which pickle what they carry) both ways: main to a subinterpreter, one
  subinterpreter to another, and back to main;
* an interpreter created after others have closed imports frozenmap afresh
  and works.

Each test runs on both cores: a subinterpreter chooses its core as any
process does, by ``FROZENMAP_PURE_PYTHON`` in the environment when it first
imports frozenmap (the imports happen one interpreter at a time, from this
thread, so that setting the variable for one never reaches another's import).

Skipped below 3.14 and on other implementations, with the reason.
``FROZENMAP_REQUIRE_SUBINTERPRETERS=1`` (``scripts/checks/35-versions.sh``
sets it) turns the skip into a failure on CPython 3.14+, so that a CI run
cannot lose these tests silently.
"""

import copy
import os
import pickle
import platform
import sys
import textwrap
import threading

import pytest

from frozenmap import Diff, History, Versioned

_REQUIRED = os.environ.get("FROZENMAP_REQUIRE_SUBINTERPRETERS", "") not in ("", "0")
_CAN_HAVE_THEM = platform.python_implementation() == "CPython" and sys.version_info >= (3, 14)

try:
    from concurrent import interpreters
except ImportError as exc:
    if _REQUIRED and _CAN_HAVE_THEM:
        raise ImportError(
            "FROZENMAP_REQUIRE_SUBINTERPRETERS=1, but concurrent.interpreters does not import"
            " on CPython %s: %s" % (platform.python_version(), exc)
        ) from exc
    pytestmark = pytest.mark.skip(
        reason="concurrent.interpreters (PEP 734) is CPython 3.14+; this is %s %s"
        % (platform.python_implementation(), platform.python_version())
    )
    interpreters = None

N_INTERPRETERS = 4
"""Interpreters running at once (each in its own thread)."""

TIMEOUT = 120
"""Seconds a queue waits for a partner that failed before it gave its item:
a safety net that turns a hang into a failure, never a measure of speed."""


IMPORT = """
import os
_saved = os.environ.get("FROZENMAP_PURE_PYTHON")
if want_core == "python":
    os.environ["FROZENMAP_PURE_PYTHON"] = "1"
else:
    os.environ.pop("FROZENMAP_PURE_PYTHON", None)
try:
    import frozenmap
finally:
    if _saved is None:
        os.environ.pop("FROZENMAP_PURE_PYTHON", None)
    else:
        os.environ["FROZENMAP_PURE_PYTHON"] = _saved
assert frozenmap.IMPLEMENTATION == want_core, (
    "this interpreter loaded the %s core, not the %s core: %s"
    % (frozenmap.IMPLEMENTATION, want_core, frozenmap._CORE_REASON))
"""
"""Run first in a new interpreter (from the main thread): import frozenmap with
``want_core``, leaving the process environment as it was."""

CORE_NAMES = """
import copy
import pickle
from frozenmap import Diff, Evolver, History, Versioned, frozendict
"""
"""What WORKLOAD and PASS_ALONG use, bound in a subinterpreter by importing them."""

WORKLOAD = '''
class Colliding:
    """A key whose hash it shares with every other Colliding key."""

    def __init__(self, name):
        self.name = name

    def __hash__(self):
        return 77

    def __eq__(self, other):
        return isinstance(other, Colliding) and other.name == self.name


def checked(version):
    version._check()
    return version


def workload(seed):
    """Every public type, derived and read; returns (final version, History, counts)."""
    base = checked(frozendict(("k%d" % n, n * seed) for n in range(100)))
    small = checked(frozendict(list(base.items())[:20]))  # (flat: at most 32 keys)
    counts = {"versions": 2}
    version = base
    for n in range(300):
        step = n % 6
        if step == 0:
            version = version.set("new%d" % (n % 41), n)
        elif step == 1:
            version = version.delete("k%d" % (n % 100)) if "k%d" % (n % 100) in version else version
        elif step == 2:
            version = version | small.set("k%d" % (n % 20), -n)
        elif step == 3:
            version = version - ["new%d" % (n % 41), "k%d" % ((n * 7) % 100)]
        elif step == 4:
            version = version & list(base.keys())[: 60 + n % 40] + ["new%d" % m for m in range(41)]
        else:
            evolver = version.evolve()
            evolver["e%d" % (n % 13)] = n
            evolver.pop("k%d" % ((n * 3) % 100), None)
            evolver.update({"u%d" % (n % 5): n, "k1": -1})
            evolver._check()
            assert ("k1", -1) in evolver.items() and len(evolver.keys()) == len(evolver)
            version = evolver.freeze()
        checked(version)
        counts["versions"] += 1
    # small maps across the flat limit, both ways, and a collision node
    flat = small
    for n in range(40):
        flat = checked(flat.set(Colliding(n % 35), n) if n % 3 else flat.discard(Colliding(n)))
    counts["flat"] = len(flat)
    # views
    keys, values, items = version.keys(), version.values(), version.items()
    assert len(keys) == len(values) == len(items) == len(version)
    assert list(reversed(keys)) == list(keys)[::-1]
    common = keys & base.keys()
    assert common == {k for k in version if k in base}
    assert (items - base.items()) == set(version.items()) - set(base.items())
    counts["views"] = len(common)
    # the module's other entry points: fromkeys, repr, copies
    assert frozendict.fromkeys("abc", 0) == {"a": 0, "b": 0, "c": 0}
    assert repr(small).startswith("frozendict({'k0': 0")
    assert checked(copy.deepcopy(version)) == version and copy.copy(version) is version
    # diffs both ways
    diff = base.diff(version)
    assert isinstance(diff, Diff) and checked(diff.apply(base)) == version
    assert checked(diff.invert().apply(version)) == base
    # History: commits, undo, redo, and a pickle of it
    history = History(base, limit=50)
    for n in range(30):
        history.commit(history.present.set("h", n))
    assert history.undo(5)["h"] == 24 and history.redo(2)["h"] == 26
    loaded = pickle.loads(pickle.dumps(history))
    assert list(loaded) == list(history)
    for kept in loaded:
        checked(kept)
    # Versioned: updates, an override, a subscriber
    seen = []
    config = Versioned(small, history=History(small))
    config.subscribe(lambda old, new, diff: seen.append(len(new)))
    for n in range(10):
        config.update(lambda c: c.set("n", n))
    with config.override({"n": "overridden"}):
        assert config.get()["n"] == "overridden"
    assert checked(config.get())["n"] == 9 and config.version == 10 and len(seen) == 10
    counts["history"] = len(history)
    return version, history, counts
'''
"""Defines ``workload(seed)``, run in every interpreter (and in this one, on
the core under test, for the expected answers)."""


def _defined(code, core):
    """The names ``code`` defines, run here with ``core``'s types."""
    namespace = {"frozendict": core.frozendict, "Evolver": core.Evolver, "Diff": Diff,
                 "History": History, "Versioned": Versioned, "pickle": pickle,
                 "copy": copy}  # fmt: skip
    exec(code, namespace)
    return namespace


def _new_interpreter(core_name, **names):
    """A new interpreter that has imported frozenmap with ``core_name``."""
    interp = interpreters.create()
    interp.prepare_main(want_core=core_name, **names)
    interp.exec(textwrap.dedent(IMPORT))
    return interp


def _in_threads(jobs):
    """Run each (interpreter, code) at once, one thread each; return the errors."""
    errors = []

    def run(interp, code):
        try:
            interp.exec(code)
        except Exception as exc:  # (ExecutionFailed carries the interpreter's traceback)
            errors.append(exc)

    threads = [threading.Thread(target=run, args=job) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_interpreters_in_parallel_threads_use_every_public_type(core):
    out = interpreters.create_queue()
    made = [_new_interpreter(core.name, out=out, seed=seed)
            for seed in range(1, N_INTERPRETERS + 1)]  # fmt: skip
    try:
        code = CORE_NAMES + WORKLOAD + textwrap.dedent("""
            version, history, counts = workload(seed)
            out.put((seed, version, pickle.dumps(version), pickle.dumps(history), counts))
        """)  # fmt: skip
        errors = _in_threads([(interp, code) for interp in made])
        assert not errors, errors
        results = {}
        while not out.empty():
            seed, version, version_bytes, history_bytes, counts = out.get_nowait()
            results[seed] = (version, pickle.loads(version_bytes), pickle.loads(history_bytes),
                             counts)  # fmt: skip
    finally:
        for interp in made:
            interp.close()
    assert sorted(results) == list(range(1, N_INTERPRETERS + 1))
    workload = _defined(WORKLOAD, core)["workload"]
    for seed, (by_queue, by_pickle, history, counts) in results.items():
        version, expected_history, expected_counts = workload(seed)
        for received in (by_queue, by_pickle, *history):
            assert type(received) is core.frozendict
            received._check()
        assert list(by_queue.items()) == list(by_pickle.items()) == list(version.items())
        assert [list(v.items()) for v in history] == [list(v.items()) for v in expected_history]
        assert counts == expected_counts


PASS_ALONG = """
def pass_along(version, evolver, history, name):
    \"\"\"Each interpreter's change to what it was passed.\"\"\"
    version = version.set(("mark", name), len(version)).delete(("drop", name))
    evolver[("mark", name)] = len(evolver)
    evolver.update(version)
    history.commit(version)
    return version, evolver, history
"""
"""Defines ``pass_along``: what each interpreter (and this one, for the
expected answers) does to the version, Evolver and History it was passed."""

RECEIVE_AND_PASS = """
version = inbox.get(timeout=timeout)
version_bytes = inbox.get(timeout=timeout)
evolver = inbox.get(timeout=timeout)
history = pickle.loads(inbox.get(timeout=timeout))
assert type(version) is frozendict and type(evolver) is Evolver, (type(version), type(evolver))
assert list(pickle.loads(version_bytes).items()) == list(version.items())
for received in (version, evolver, *history):
    received._check()
version, evolver, history = pass_along(version, evolver, history, name)
version._check()
evolver._check()
outbox.put(version)
outbox.put(pickle.dumps(version))
outbox.put(evolver)
outbox.put(pickle.dumps(history))
"""
"""Take a version, its pickle, an Evolver and a pickled History from ``inbox``,
check and change them, and put them in ``outbox``."""


def test_versions_cross_interpreters_by_pickle_and_queues_both_ways(core):
    """main -> first -> second -> main, the two subinterpreters at once: the
    second waits on its queue for what the first passes it."""
    fd = core.frozendict
    start = fd({("k", n): fd(nested=n, deep=fd(x=n)) for n in range(60)})
    start = start | {("drop", "first"): 1, ("drop", "second"): 2}
    history = History(start)
    history.commit(start.set("committed", True))
    to_first, to_second, to_main = (interpreters.create_queue() for _ in range(3))
    first = _new_interpreter(core.name, inbox=to_first, outbox=to_second, name="first",
                             timeout=TIMEOUT)  # fmt: skip
    second = _new_interpreter(core.name, inbox=to_second, outbox=to_main, name="second",
                              timeout=TIMEOUT)  # fmt: skip
    try:
        for item in (start, pickle.dumps(start), start.evolve(), pickle.dumps(history)):
            to_first.put(item)
        code = CORE_NAMES + PASS_ALONG + RECEIVE_AND_PASS
        errors = _in_threads([(second, code), (first, code)])
        assert not errors, errors
        version = to_main.get_nowait()
        version_bytes = to_main.get_nowait()
        evolver = to_main.get_nowait()
        loaded_history = pickle.loads(to_main.get_nowait())
        assert to_main.empty()
    finally:
        first.close()
        second.close()
    pass_along = _defined(PASS_ALONG, core)["pass_along"]
    expected = (start, start.evolve(), pickle.loads(pickle.dumps(history)))
    for name in ("first", "second"):
        expected = pass_along(*expected, name)
    expected_version, expected_evolver, expected_history = expected
    for received in (version, pickle.loads(version_bytes), evolver, *loaded_history):
        assert type(received) in (fd, core.Evolver)
        received._check()
    assert list(version.items()) == list(expected_version.items())
    assert list(pickle.loads(version_bytes).items()) == list(expected_version.items())
    assert list(evolver.items()) == list(expected_evolver.items())
    assert [list(v.items()) for v in loaded_history] == [list(v.items()) for v in expected_history]
    assert version[("k", 7)]["deep"]["x"] == 7 and type(version[("k", 7)]["deep"]) is fd


def _drain(queue):
    """What ``queue`` holds now, unpickled; read before the interpreters that
    put it close (their items go with them)."""
    received = []
    while not queue.empty():
        seed, version_bytes = queue.get_nowait()
        received.append((seed, pickle.loads(version_bytes)))
    return received


def test_an_import_in_a_fresh_interpreter_after_others_closed(core):
    """The C core's module state is per interpreter: closing interpreters frees
    theirs, and a later import builds a new one that works."""
    out = interpreters.create_queue()
    code = CORE_NAMES + WORKLOAD + "\nout.put((seed, pickle.dumps(workload(seed)[0])))\n"
    received = []
    for round_number in range(3):
        closed = [_new_interpreter(core.name, out=out, seed=seed) for seed in (1, 2)]
        try:
            errors = _in_threads([(interp, code) for interp in closed])
            received += _drain(out)
        finally:
            for interp in closed:
                interp.close()
        assert not errors, (round_number, errors)
    fresh = _new_interpreter(core.name, out=out, seed=3)
    try:
        fresh.exec(code)
        received += _drain(out)
    finally:
        fresh.close()
    assert sorted(seed for seed, _ in received) == [1, 1, 1, 2, 2, 2, 3]
    workload = _defined(WORKLOAD, core)["workload"]
    expected = {seed: list(workload(seed)[0].items()) for seed in (1, 2, 3)}
    for seed, version in received:
        assert type(version) is core.frozendict
        version._check()
        assert list(version.items()) == expected[seed]


def test_the_main_interpreter_keeps_working_beside_them(core):
    """Versions made here before subinterpreters ran are untouched after they closed."""
    fd = core.frozendict
    before = fd((n, str(n)) for n in range(200))
    small = fd(a=1, b=2)
    interp = _new_interpreter(core.name, seed=5)
    try:
        interp.exec(CORE_NAMES + WORKLOAD + "\nworkload(seed)\n")
    finally:
        interp.close()
    before._check()
    small._check()
    assert list(before.items()) == [(n, str(n)) for n in range(200)]
    assert before.set(0, "zero")[0] == "zero"
    assert small | {"c": 3} == {"a": 1, "b": 2, "c": 3}
