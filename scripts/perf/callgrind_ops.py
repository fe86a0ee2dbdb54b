"""Instructions per operation (callgrind) and interleaved wall ratios for the C core.

README: ``python scripts/perf/callgrind_ops.py callgrind --n 100000`` runs each
operation under ``valgrind --tool=callgrind`` twice (K and 2K repetitions on
one map of n string keys built once) and prints instructions/op as the
difference divided by K, for frozenmap's C core, ``immutables.Map`` and
``dict``.  ``python scripts/perf/callgrind_ops.py wall --n 100000 --rounds 11``
times the same loops interleaved in one process and prints, per operation,
the median ratio against the peer (immutables for set/delete, dict for
lookups and construction) with its spread (min..max over rounds).  Callgrind
counts are stable on a busy machine; wall times are not, ratios of
interleaved runs are the fair wall comparison.  ``--annotate OP`` keeps the
callgrind output of frozenmap's larger run and prints callgrind_annotate.

Every loop is ``for x in xs: <op>``; the per-op count includes the loop and
the call (the same for every library).  "empty" is that loop alone.
"""

import argparse
import gc
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

LIBS = ("frozenmap", "immutables", "dict")


def make_map(lib, data):
    if lib == "frozenmap":
        os.environ.setdefault("FROZENMAP_REQUIRE_C", "1")
        from frozenmap._ccore import frozendict

        return frozendict(data)
    if lib == "immutables":
        import immutables

        return immutables.Map(data)
    return dict(data)


def workload(n, k, seed=814):
    rng = random.Random(seed)
    keys = ["key%d" % i for i in range(n)]
    data = dict(zip(keys, range(n)))
    picks = [keys[rng.randrange(n)] for _ in range(k)]
    misses = ["miss%d" % i for i in range(k)]
    return data, picks, misses


def op_loop(lib, op, m, data, picks, misses):
    """A zero-argument function running op over its inputs once."""
    if op == "empty":

        def run():
            for _k in picks:
                pass

    elif op == "set_existing":
        f = m.set if lib != "dict" else None

        def run():
            for k in picks:
                f(k, -1)

    elif op == "set_new":
        f = m.set

        def run():
            for k in misses:
                f(k, -1)

    elif op == "delete":
        f = m.delete

        def run():
            for k in picks:
                f(k)

    elif op == "lookup_hit":

        def run():
            for k in picks:
                m[k]

    elif op == "lookup_cold":  # picks are spread over the whole map

        def run():
            for k in picks:
                m[k]

    elif op == "reducer":  # the benchmark's nested reducer, every state kept
        from frozenmap.bench.operations import Reducer

        # The same 40,000 actions drawn in every run (drawing them costs the
        # same in the K and the 2K run), the first len(picks) of them applied.
        r = Reducer(10_000, actions=40_000)
        state = reducer_build(lib, r)
        actions = r.actions[: len(picks)]

        def run():
            history = [state]
            for action in actions:
                history.append(reducer_step(history[-1], action))

    elif op == "lookup_miss":

        def run():
            for k in misses:
                k in m

    elif op == "construct":
        if lib == "frozenmap":
            from frozenmap._ccore import frozendict as ctor
        elif lib == "immutables":
            import immutables

            ctor = immutables.Map
        else:
            ctor = dict

        def run():
            for _ in picks:
                ctor(data)

    elif op == "iterate":

        def run():
            for _ in picks:
                for _k in m.items():
                    pass

    else:
        raise SystemExit("unknown op %r" % op)
    return run


def reducer_build(lib, r):
    """The reducer's initial state as lib's maps, all the way down."""
    todos = make_map(lib, {key: make_map(lib, todo) for key, todo in r.todos.items()})
    return make_map(lib, {"filter": "all", "todos": todos})


def reducer_step(state, action):
    """One action of the benchmark's reducer through .set/.delete (frozenmap
    and immutables spell them alike)."""
    kind, key, arg = action
    todos = state["todos"]
    if kind == "delete":
        todos = todos.delete(key)
    elif kind == "add":
        todos = todos.set(key, type(state)(arg))
    else:
        todo = todos[key]
        if kind == "toggle":
            todo = todo.set("done", not todo["done"])
        else:
            todo = todo.set("title", arg)
        todos = todos.set(key, todo)
    return state.set("todos", todos)


OPS = {
    "empty": ("frozenmap", "dict"),
    "set_existing": ("frozenmap", "immutables"),
    "set_new": ("frozenmap", "immutables"),
    "delete": ("frozenmap", "immutables"),
    "lookup_hit": ("frozenmap", "dict"),
    "lookup_miss": ("frozenmap", "dict"),
    "lookup_cold": ("frozenmap", "immutables", "dict"),
    "reducer": ("frozenmap", "immutables"),
    "construct": ("frozenmap", "dict"),
    "iterate": ("frozenmap", "dict"),
}
PER_ITEM = ("construct", "iterate")


def child(args):
    """Runs inside valgrind: build, then the op args.k times."""
    data, picks, misses = workload(args.n, args.kmax)
    m = make_map(args.lib, data)
    # The map and inputs move to the GC's permanent generation: a full
    # collection of a million objects landing in one run and not the other
    # would swamp the difference (it did at n = 1,000,000).
    gc.collect()
    gc.freeze()
    run = op_loop(args.lib, args.op, m, data, picks[: args.k], misses[: args.k])
    run()


def callgrind_count(lib, op, n, k, kmax, keep=None, cache_sim=False):
    """Instructions of one child run; with cache_sim, (instructions, D1 read
    misses, last-level read misses) from callgrind's simulated caches."""
    with tempfile.TemporaryDirectory() as d:
        out = keep or os.path.join(d, "cg.out")
        cmd = [
            "valgrind",
            "--tool=callgrind",
            *(["--cache-sim=yes", "--LL=" + cache_sim] if cache_sim else []),
            "--callgrind-out-file=" + out,
            sys.executable,
            os.path.abspath(__file__),
            "child",
            "--lib",
            lib,
            "--op",
            op,
            "--n",
            str(n),
            "--k",
            str(k),
            "--kmax",
            str(kmax),
        ]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(r.stderr[-3000:])
        for line in r.stderr.splitlines():
            if "Collected :" in line:
                counts = [int(x) for x in line.split(":")[-1].split()]
                # Events with --cache-sim: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
                return (counts[0], counts[4], counts[7]) if cache_sim else counts[0]
    raise SystemExit("no count in callgrind output")


def annotate_self(path):
    """{function: self instructions} from callgrind_annotate."""
    r = subprocess.run(
        ["callgrind_annotate", "--inclusive=no", "--threshold=100", path],
        capture_output=True,
        text=True,
    )
    out = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(\S+)", line)
        if m and ":" in m.group(2):
            fn = m.group(2).rsplit("/", 1)[-1]
            out[fn] = out.get(fn, 0) + int(m.group(1).replace(",", ""))
    return out


def cmd_callgrind(args):
    ops = args.ops.split(",") if args.ops else list(OPS)
    print(
        "n=%d  instructions/op (K vs 2K runs; K=%d, %d for per-item ops)"
        % (args.n, args.k, args.kc)
    )
    cache = {}
    for op in ops:
        row = []
        k = args.k if op not in PER_ITEM else args.kc
        for lib in OPS[op]:
            keep = [None, None]
            if op in args.annotate.split(","):
                keep = [os.path.abspath("callgrind.%s.%s.%d.out" % (op, lib, i)) for i in (1, 2)]
            a = callgrind_count(lib, op, args.n, k, 2 * k, keep[0], args.cache_sim)
            b = callgrind_count(lib, op, args.n, 2 * k, 2 * k, keep[1], args.cache_sim)
            scale = k * (args.n if op in PER_ITEM else 1)
            if args.cache_sim:
                ir, d1, ll = ((y - x) / scale for x, y in zip(a, b))
                per = ir
                row.append("%s %.0f (D1 %.2f, LL %.2f)" % (lib, ir, d1, ll))
            else:
                per = (b - a) / scale
                row.append("%s %.0f" % (lib, per))
            cache[(op, lib)] = per
        ratio = cache[(op, "frozenmap")] / cache[(op, OPS[op][1])]
        unit = "/item" if op in PER_ITEM else ""
        print("%-13s %-40s ratio %.2f  %s" % (op, "  ".join(row), ratio, unit), flush=True)
        if op in args.annotate.split(","):
            for lib in OPS[op]:
                print("  %s: instructions/op by function (self cost, 2K run minus K run)" % lib)
                files = ["callgrind.%s.%s.%d.out" % (op, lib, i) for i in (1, 2)]
                diff = {}
                for sign, f in zip((-1, 1), files):
                    for fn, ir in annotate_self(f).items():
                        diff[fn] = diff.get(fn, 0) + sign * ir
                top = sorted(diff.items(), key=lambda x: -x[1])[: args.top]
                for fn, ir in top:
                    print("    %8.1f  %s" % (ir / k, fn))


def cmd_wall(args):
    ops = args.ops.split(",") if args.ops else [op for op in OPS if op != "empty"]
    data, picks, misses = workload(args.n, args.k)
    maps = {lib: make_map(lib, data) for lib in LIBS if any(lib in OPS[op] for op in ops)}
    # The thread's CPU time leaves out the time other processes held the core
    # (on a loaded machine most of the wall time), not their cache pollution.
    clock = time.thread_time if args.cpu else time.perf_counter
    if args.no_gc:  # the benchmark's convention (timeit's): no collection while timed
        gc.disable()
    print("n=%d  wall ratio frozenmap/peer: median [min..max] of %d rounds" % (args.n, args.rounds))
    for op in ops:
        libs = OPS[op]
        k = args.k if op not in PER_ITEM else args.kc
        loops = {lib: op_loop(lib, op, maps[lib], data, picks[:k], misses[:k]) for lib in libs}
        ratios, per = [], {lib: [] for lib in libs}
        for _ in range(args.rounds):
            t = {}
            for lib in libs:
                t0 = clock()
                loops[lib]()
                t[lib] = clock() - t0
                scale = k * (args.n if op in PER_ITEM else 1)
                per[lib].append(t[lib] / scale * 1e9)
            ratios.append(t[libs[0]] / t[libs[1]])
        print(
            "%-13s %.2f [%.2f..%.2f]   %s"
            % (
                op,
                statistics.median(ratios),
                min(ratios),
                max(ratios),
                "  ".join("%s %.1f ns" % (lib, statistics.median(per[lib])) for lib in libs),
            ),
            flush=True,
        )


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["callgrind", "wall", "child"])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--k", type=int, default=20_000, help="ops per run")
    p.add_argument("--kmax", type=int, default=0, help="inputs generated (child)")
    p.add_argument("--kc", type=int, default=2, help="constructions per run")
    p.add_argument("--rounds", type=int, default=11)
    p.add_argument("--ops", default="")
    p.add_argument("--lib", default="frozenmap")
    p.add_argument("--op", default="empty")
    p.add_argument("--annotate", default="", help="ops (comma-separated) to break down")
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--cpu", action="store_true", help="wall: time the thread's CPU time")
    p.add_argument("--no-gc", action="store_true", help="wall: the cyclic GC disabled")
    p.add_argument(
        "--cache-sim",
        default="",
        metavar="SIZE,ASSOC,LINE",
        help="also count simulated D1 and last-level read misses per op, the"
        " last level as given (this machine's L3: 33554432,16,64; its L2: 1048576,8,64)",
    )
    args = p.parse_args()
    {"callgrind": cmd_callgrind, "wall": cmd_wall, "child": child}[args.mode](args)


if __name__ == "__main__":
    main()
