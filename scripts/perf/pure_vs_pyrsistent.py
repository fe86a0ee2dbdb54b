"""The pure-Python core against ``pyrsistent.pmap``: interleaved single-key timings.

Usage: ``python scripts/perf/pure_vs_pyrsistent.py [--sizes 100000,1000000]
[--rounds 15] [--ops lookup_hit,...] [--pyrsistent c,pure]``

Benchmarks the working tree's ``frozenmap._pycore`` (this file's repository
goes first on ``sys.path``) against the installed ``pyrsistent``.  Each round
times every operation on both libraries back to back (the order alternates
between rounds), over the same 1,000 sampled keys, and records the ratio
frozenmap / pyrsistent of that round (each time the best of 3 calls).  Printed: the median µs per operation of
each library and the median ratio with its spread (min..max over the rounds).
The machine is shared and noisy: compare ratios, not absolute times.

``pyrsistent.pmap`` keeps its buckets in a ``pvector``, which is the C
extension ``pvectorc`` when it is installed (it is, in 0.20.0 wheels), so
"pyrsistent" alone means a pure-Python map over a C vector.  ``--pyrsistent``
picks the modes to compare against: ``c`` (as installed) and/or ``pure``
(``PYRSISTENT_NO_C_EXTENSION=1``, which ``pyrsistent._pvector`` reads once at
import, so each mode runs in its own subprocess of this script).  With both,
a summary puts the two ratios side by side.

``--against REV`` times the working tree's pure core against commit REV's
instead, both in one process (the old one imported under another package
name), interleaved the same way: ratio tree / REV.  On a shared machine that
is the fairest before/after; even so, one median of 15 rounds moves by up to
±20% (an A/B of two identical trees gave 0.84 to 1.22).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import time
from importlib import metadata
from typing import Any, Callable, Dict, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
os.environ["FROZENMAP_PURE_PYTHON"] = "1"

MODES = {"c": "C pvector (as installed)", "pure": "pure-Python pvector"}

SAMPLE = 1000
OPS = ["lookup_hit", "lookup_miss", "set_existing", "set_new", "delete", "iterate"]


def make_ops(
    m: Any, lib: str, data: Dict[str, int], rng: random.Random
) -> Dict[str, Tuple[Callable[[], None], int]]:
    """Per operation: a function doing SAMPLE (or n, for iterate) operations, and that count."""
    keys = list(data)
    hits = [keys[i] for i in rng.sample(range(len(keys)), SAMPLE)]
    misses = ["miss%d" % i for i in range(SAMPLE)]
    n = len(keys)
    updates = [(k, data[k] + n + 1) for k in hits]
    inserts = [("new%d" % i, i) for i in range(SAMPLE)]
    setter = m.set
    deleter = m.delete if lib == "frozenmap" else m.remove

    def lookup_hit() -> None:
        for k in hits:
            m[k]

    def lookup_miss() -> None:
        for k in misses:
            k in m

    def set_existing() -> None:
        for k, v in updates:
            setter(k, v)

    def set_new() -> None:
        for k, v in inserts:
            setter(k, v)

    def delete() -> None:
        for k in hits:
            deleter(k)

    def iterate() -> None:
        for _ in m.items():
            pass

    return {
        "lookup_hit": (lookup_hit, SAMPLE),
        "lookup_miss": (lookup_miss, SAMPLE),
        "set_existing": (set_existing, SAMPLE),
        "set_new": (set_new, SAMPLE),
        "delete": (delete, SAMPLE),
        "iterate": (iterate, n),
    }


def timed(fn: Callable[[], None], count: int, repeat: int = 3) -> float:
    """Seconds per operation: the best of ``repeat`` calls of ``fn`` (GC off while timing)."""
    best = float("inf")
    gc.disable()
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
    finally:
        gc.enable()
    return best / count


Result = Dict[str, Any]
Times = Dict[Tuple[str, str], List[float]]


def interleave(
    libs: Dict[str, Dict[str, Tuple[Callable[[], None], int]]],
    a: str,
    b: str,
    rounds: int,
    ops: List[str],
) -> Tuple[Times, Dict[str, List[float]]]:
    """Time each operation on ``a`` and ``b`` back to back, the order
    alternating between rounds; return the times and the ratios a / b."""
    times: Times = {}
    ratios: Dict[str, List[float]] = {op: [] for op in ops}
    for r in range(rounds):
        for op in ops:
            got = {}
            for lib in (a, b) if r % 2 == 0 else (b, a):
                fn, count = libs[lib][op]
                got[lib] = timed(fn, count)
                times.setdefault((lib, op), []).append(got[lib])
            ratios[op].append(got[a] / got[b])
    return times, ratios


def run_against(rev: str, sizes: List[int], rounds: int, ops: List[str]) -> None:
    """The working tree's pure core against commit ``rev``'s, in one process
    (``git archive`` of its ``frozenmap`` imported as ``frozenmap_base``):
    the fairest before/after on a noisy machine."""
    import io
    import tarfile
    import tempfile

    tar = subprocess.run(
        ["git", "-C", ROOT, "archive", "--format=tar", rev, "frozenmap"],
        stdout=subprocess.PIPE,
        check=True,
    ).stdout
    with tempfile.TemporaryDirectory(prefix="frozenmap_base_") as tmp:
        with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
            archive.extractall(tmp)
        os.rename(os.path.join(tmp, "frozenmap"), os.path.join(tmp, "frozenmap_base"))
        sys.path.insert(0, tmp)
        # (imported while the directory exists: the operations timed import nothing later)
        from frozenmap_base._pycore.frozendict import frozendict as old  # type: ignore

        sys.path.remove(tmp)
    from frozenmap._pycore.frozendict import frozendict as new

    print("Python %s; the working tree / commit %s, pure cores" % (sys.version.split()[0], rev))
    for n in sizes:
        data = {"key%d" % i: i for i in range(n)}
        libs = {
            "tree": make_ops(new(data), "frozenmap", data, random.Random(814)),
            rev: make_ops(old(data), "frozenmap", data, random.Random(814)),
        }
        ratios = interleave(libs, "tree", rev, rounds, ops)[1]
        print("n=%d\n%-14s %8s %16s" % (n, "operation", "ratio", "spread"))
        for op in ops:
            rs = ratios[op]
            print(
                "%-14s %7.3fx %7.2f..%-7.2f" % (op, statistics.median(rs), min(rs), max(rs)),
                flush=True,
            )
        print()


def pyrsistent_mode() -> str:
    """Which vector ``pmap`` stands on in this process: "c" or "pure"."""
    import pyrsistent

    return "pure" if type(pyrsistent.pvector()).__module__.startswith("pyrsistent") else "c"


def run(n: int, rounds: int, ops: List[str]) -> Result:
    """Time every operation at size ``n``; print the table and return it."""
    import pyrsistent

    from frozenmap._pycore.frozendict import frozendict

    data = {"key%d" % i: i for i in range(n)}
    t0 = time.perf_counter()
    fm = frozendict(data)
    t1 = time.perf_counter()
    pm = pyrsistent.pmap(data)
    t2 = time.perf_counter()
    mode = pyrsistent_mode()
    print(
        "n=%d, pyrsistent over the %s  (built: frozenmap %.1fs, pyrsistent %.1fs)"
        % (n, MODES[mode], t1 - t0, t2 - t1)
    )
    libs = {
        "frozenmap": make_ops(fm, "frozenmap", data, random.Random(814)),
        "pyrsistent": make_ops(pm, "pyrsistent", data, random.Random(814)),
    }
    times, ratios = interleave(libs, "frozenmap", "pyrsistent", rounds, ops)
    print(
        "%-14s %12s %12s %8s %16s" % ("operation", "frozenmap µs", "pyrsist. µs", "ratio", "spread")
    )
    result: Result = {"n": n, "mode": mode, "ops": {}}
    for op in ops:
        f = statistics.median(times[("frozenmap", op)]) * 1e6
        p = statistics.median(times[("pyrsistent", op)]) * 1e6
        rs = ratios[op]
        row = (statistics.median(rs), min(rs), max(rs))
        result["ops"][op] = {"frozenmap_us": f, "pyrsistent_us": p, "ratio": row}
        print("%-14s %12.3f %12.3f %7.2fx %7.2f..%-7.2f" % ((op, f, p) + row))
    print(flush=True)
    return result


def run_mode(mode: str, args: argparse.Namespace) -> List[Result]:
    """Run this script in a subprocess with pyrsistent in ``mode``; pass its
    tables through and return its results."""
    env = dict(os.environ)
    env.pop("PYRSISTENT_NO_C_EXTENSION", None)
    if mode == "pure":
        env["PYRSISTENT_NO_C_EXTENSION"] = "1"
    cmd = [sys.executable, os.path.abspath(__file__), "--child"]
    cmd += ["--sizes", args.sizes, "--rounds", str(args.rounds), "--ops", args.ops]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True)
    lines = proc.stdout.rstrip("\n").split("\n")
    print("\n".join(lines[:-1]), flush=True)
    results: List[Result] = json.loads(lines[-1])
    for res in results:
        if res["mode"] != mode:
            raise SystemExit(
                "asked for pyrsistent mode %r, the subprocess ran %r" % (mode, res["mode"])
            )
    return results


def summary(results: List[Result], ops: List[str]) -> None:
    """Both ratios per size and operation: median (min..max over the rounds)."""
    print("Summary: frozenmap (pure core) / pyrsistent.pmap, median (min..max)")
    modes = [m for m in MODES if any(r["mode"] == m for r in results)]
    print("%-9s %-14s" % ("n", "operation") + "".join(" %-22s" % ("vs " + m) for m in modes))
    for n in sorted({r["n"] for r in results}):
        for op in ops:
            cells = []
            for m in modes:
                res = [r for r in results if r["n"] == n and r["mode"] == m][0]
                cells.append(" %5.2fx (%4.2f..%-4.2f)    " % tuple(res["ops"][op]["ratio"]))
            print("%-9d %-14s" % (n, op) + "".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument(
        "--pyrsistent",
        default="c,pure",
        help="pyrsistent modes to compare against: c (C pvector, as installed), pure",
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        help="instead: the working tree's pure core against commit REV's (ratio tree / REV)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    ops = args.ops.split(",")
    for op in ops:
        if op not in OPS:
            parser.error("unknown operation %r (one of %s)" % (op, ", ".join(OPS)))
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.against:
        run_against(args.against, sizes, args.rounds, ops)
        return
    if args.child:
        results = [run(n, args.rounds, ops) for n in sizes]
        print(json.dumps(results))
        return
    modes = args.pyrsistent.split(",")
    for mode in modes:
        if mode not in MODES:
            parser.error("unknown pyrsistent mode %r (one of %s)" % (mode, ", ".join(MODES)))
    print("Python %s, pyrsistent %s" % (sys.version.split()[0], metadata.version("pyrsistent")))
    results = []
    for mode in modes:
        results += run_mode(mode, args)
    summary(results, ops)


if __name__ == "__main__":
    main()
