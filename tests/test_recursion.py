"""Deep nesting and long chains: RecursionError or success, never a crash.

Frozendicts nested 100,000 levels deep -- through values, through keys,
through Evolvers, through a subclass, mixed with tuples and lists -- go
through ``repr``, ``hash``, ``==``, ``!=``, pickling, ``copy.deepcopy``,
``diff``, ``gc.collect()`` and deallocation.  Each must succeed or raise
``RecursionError`` (or, for pickle, the RecursionError pickle raises); the
interpreter must not die.  The risky part runs in a subprocess, so a crash
(a C stack overflow is a segfault) fails one test with the last operation it
started, instead of killing pytest.

A long chain of versions, each holding the previous one (history snapshots:
``state = state.set("prev", state)``), must deallocate without overflowing
the C stack: 200,000 versions by default (50,000 on the pure core); 10
million with ``-m slow`` (1 million on the pure core).  Measured on the C
core (CPython 3.11.7, 2 shared cores): a 10,000,000-version ``set("prev", ...)``
chain built in 44 s and freed in 2.7 s; the same depth through keys built in
69 s and freed in 3.2 s.
"""

import pytest
from fault_helpers import describe_crash, require_slow, run_python

DEPTH = 100_000

_PRELUDE = """
import copy, gc, pickle, sys
import importlib
core = importlib.import_module({module!r})
fd = core.frozendict

class Sub(fd):
    pass

def attempt(name, fn):
    print("start", name, flush=True)
    try:
        result = fn()
    except RecursionError:
        print("RecursionError", name, flush=True)
        return
    except TypeError as exc:  # an Evolver, a list: unhashable
        print("TypeError", name, str(exc).replace(" ", "_"), flush=True)
        return
    print("ok", name, type(result).__name__, flush=True)
"""

# Each builder defines make(), returning a structure DEPTH levels deep.
BUILDERS = {
    "values": """
def make():
    v = fd()
    for i in range(DEPTH):
        v = fd(a=v)
    return v
""",
    "keys": """
def make():
    v = fd()
    for i in range(DEPTH):
        v = fd({v: i})
    return v
""",
    "set-chain": """
def make():
    v = fd(x=0)
    for i in range(DEPTH):
        v = v.set("prev", v)
    return v
""",
    "evolvers": """
def make():
    e = fd(x=0).evolve()
    for i in range(DEPTH):
        nxt = fd(x=i).evolve()
        nxt["inner"] = e
        e = nxt
    return e
""",
    "subclass": """
def make():
    v = Sub()
    for i in range(DEPTH):
        v = Sub(a=v)
    return v
""",
    "mixed": """
def make():
    v = fd()
    for i in range(DEPTH):
        v = fd(a=(v,)) if i % 2 else fd(b=[v])
    return v
""",
}

_BODY = """
DEPTH = {depth}
KEYS_SHAPE = {keys_shape}
{builder}
top = make()
if not KEYS_SHAPE:
    DEPTH = min(DEPTH, 20000)  # deep enough for == and diff to reach the recursion limit
twin = make()  # through keys, only an equally deep twin has the same hash: == must recurse
attempt("repr", lambda: repr(top))
attempt("str", lambda: str(top))
attempt("hash", lambda: hash(top))
attempt("hash-again", lambda: hash(top))
attempt("eq", lambda: top == twin)
attempt("ne", lambda: top != twin)
attempt("eq-self", lambda: top == top)
for protocol in (0, 2, pickle.HIGHEST_PROTOCOL):
    attempt("pickle-%d" % protocol, lambda: pickle.loads(pickle.dumps(top, protocol)))
attempt("deepcopy", lambda: copy.deepcopy(top))
attempt("copy", lambda: copy.copy(top))
if isinstance(top, fd):
    attempt("diff", lambda: top.diff(twin))
    attempt("derive", lambda: top.set("z", 1) | twin)
attempt("gc", gc.collect)
print("start dealloc", flush=True)
del top
gc.collect()
del twin
gc.collect()
print("done", flush=True)
"""


def _run_nested(core, builder, depth=DEPTH, timeout=600):
    code = _PRELUDE.format(module=core.module.__name__) + _BODY.format(
        depth=depth, builder=BUILDERS[builder], keys_shape=builder == "keys"
    )
    proc = run_python(code, timeout=timeout)
    assert proc.returncode == 0 and proc.stdout.rstrip().endswith("done"), describe_crash(proc)
    return proc.stdout


@pytest.mark.parametrize("builder", sorted(BUILDERS))
def test_deep_nesting_gives_recursion_error_or_succeeds(core, builder):
    # 100,000 levels everywhere on the C core (where a missing guard crashes);
    # the pure core, whose recursion is Python's own, does 100,000 through
    # values and keys and 20,000 for the other shapes, to keep the suite quick.
    depth = DEPTH if core.name == "c" or builder in ("values", "keys") else 20_000
    out = _run_nested(core, builder, depth)
    lines = out.splitlines()
    # every operation was attempted and ended one way or the other
    started = [line.split()[1] for line in lines if line.startswith("start ")]
    ended = [
        line.split()[1]
        for line in lines
        if line.split()[0] in ("ok", "RecursionError", "TypeError")
    ]
    assert started[:-1] == ended  # the last "start" is the deallocation
    for line in lines:
        if line.startswith("TypeError"):
            assert builder in ("evolvers", "mixed") and line.split()[1] in ("hash", "hash-again"), (
                line
            )


_CHAIN = """
import gc, importlib, sys, time
core = importlib.import_module({module!r})
fd = core.frozendict
N = {n}
t0 = time.monotonic()
{build}
built = time.monotonic() - t0
gc.collect()
t0 = time.monotonic()
del v
gc.collect()
print("built %d in %.1fs, freed in %.1fs" % (N, built, time.monotonic() - t0), flush=True)
print("done", flush=True)
"""

CHAINS = {
    "set-prev": "v = fd(x=0)\nfor i in range(N):\n    v = v.set('prev', v)",
    "through-keys": "v = fd()\nfor i in range(N):\n    v = fd({v: i})",
    "evolver-freeze": "e = fd(x=0).evolve()\nfor i in range(N):\n    e['prev'] = e.freeze()\nv = e.freeze()\ndel e",
    "history-list": "v = []\ncur = fd()\nfor i in range(N):\n    cur = cur.set(i % 1000, i)\n    v.append(cur)\ndel cur",
}


@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_deallocating_a_long_chain_of_versions(core, chain):
    """200,000 versions on the C core, 50,000 on the pure core (Python's own deallocation)."""
    n = 200_000 if core.name == "c" else 50_000
    code = _CHAIN.format(module=core.module.__name__, n=n, build=CHAINS[chain])
    proc = run_python(code, timeout=600)
    assert proc.returncode == 0 and "done" in proc.stdout, describe_crash(proc)


@pytest.mark.slow
@pytest.mark.parametrize("chain", ["set-prev", "through-keys"])
def test_deallocating_a_chain_of_10_million_versions(request, core, chain):
    """The C core must survive a 10-million-version chain (the pure core: 1 million)."""
    require_slow(request)
    n = 10_000_000 if core.name == "c" else 1_000_000
    code = _CHAIN.format(module=core.module.__name__, n=n, build=CHAINS[chain])
    proc = run_python(code, timeout=3600)
    assert proc.returncode == 0 and "done" in proc.stdout, describe_crash(proc)
    print(proc.stdout)


def test_nesting_inside_one_process_with_the_default_limit(core):
    """The same, in-process, 3,000 deep: RecursionError or success, state intact afterwards."""
    import copy
    import pickle

    v = core.frozendict()
    for _ in range(3_000):
        v = core.frozendict(a=(v,), b=1)
    for op in (repr, hash, lambda x: x == core.frozendict(x), pickle.dumps, copy.deepcopy):
        try:
            op(v)
        except RecursionError:
            pass
    v._check()
    inner = v
    for _ in range(2_900):
        inner = inner["a"][0]
    assert hash(inner) == hash(frozenset(inner.items()))
    assert repr(inner).startswith("frozendict({'a': (frozendict(")
