"""Time iteration of the keys-only order prototype (branch keysonly-proto).

    python scripts/perf/keysonly_iter.py MAIN_SO ROUNDS N [N ...]

Loads main's C extension (MAIN_SO, built from main) under another module name
beside the prototype's (the installed frozenmap) and immutables, in one
process.  For each n: a map of n str keys -> int values, built identically in
the three; per round, items() / values() / keys() of each are iterated in
chunks, the three sides interleaved (order rotated per round), each side's
fastest of 9 blocks taken; reported: medians over rounds of ns per item and
of the ratios proto/main and proto/immutables, main/immutables.
"""

import gc
import importlib.machinery
import importlib.util
import statistics
import sys
import time

import immutables

from frozenmap._ccore import frozendict as Proto


def load_main(path):
    loader = importlib.machinery.ExtensionFileLoader("kp_main._cfrozenmap", path)
    spec = importlib.util.spec_from_file_location("kp_main._cfrozenmap", path, loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod.frozendict


def block(view, reps, pairs):
    t = time.perf_counter_ns()
    if pairs:  # the usual idiom: the tuple is released, so it can be reused
        for _ in range(reps):
            for _k, _v in view():
                pass
    else:
        for _ in range(reps):
            for _x in view():
                pass
    return time.perf_counter_ns() - t


def main():
    main_fd = load_main(sys.argv[1])
    rounds = int(sys.argv[2])
    for n in map(int, sys.argv[3:]):
        data = {"key%d" % i: i * 7 for i in range(n)}
        maps = {"proto": Proto(data), "main": main_fd(data), "imm": immutables.Map(data)}
        # also a version chain: the proto's values live only in the key trie
        assert list(maps["proto"].items()) == list(data.items())
        assert list(maps["main"].items()) == list(data.items())
        reps = max(1, 200_000 // n)
        for kind in ("items", "values", "keys"):
            per = {s: [] for s in maps}
            for r in range(rounds):
                order = list(maps)[r % 3 :] + list(maps)[: r % 3]
                best = {s: float("inf") for s in maps}
                gc.collect()
                gc.disable()
                for _ in range(9):
                    for s in order:
                        best[s] = min(best[s], block(getattr(maps[s], kind), reps, kind == "items"))
                gc.enable()
                for s in maps:
                    per[s].append(best[s] / (reps * n))
            med = {s: statistics.median(v) for s, v in per.items()}

            def ratio(a, b):
                return statistics.median(x / y for x, y in zip(per[a], per[b]))

            def rng(a, b):
                rs = [x / y for x, y in zip(per[a], per[b])]
                return min(rs), max(rs)

            print(
                "n=%-9s %-6s ns/item proto %.1f main %.1f imm %.1f | proto/main %.2f (%.2f-%.2f)"
                " proto/imm %.2f (%.2f-%.2f) main/imm %.2f"
                % (
                    format(n, ","),
                    kind,
                    med["proto"],
                    med["main"],
                    med["imm"],
                    ratio("proto", "main"),
                    *rng("proto", "main"),
                    ratio("proto", "imm"),
                    *rng("proto", "imm"),
                    ratio("main", "imm"),
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
