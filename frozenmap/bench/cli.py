"""The command line: ``python -m frozenmap.bench``."""

import argparse
import json
import os
import sys
from typing import Any, Dict, List, Optional, Sequence

from . import timing
from .operations import MEMORY_BY, OPERATION_KEYS, OPERATIONS
from .peers import LIBRARY_NAMES, load_libraries
from .plots import write_plots
from .report import machine_description, render_report, render_verdict

#: The README's table: these operations at this size, for the C core and the
#: peers (``--quick`` measures them).
README_SIZE = 100_000
README_OPS = (
    "construct",
    "lookup_hit",
    "lookup_miss",
    "iterate",
    "build_first",
    "lookup_hit_derived",
    "set_existing",
    "set_new",
    "delete",
    "equal",
    "diff",
    "hash_derived",
    "mem_item",
    "mem_version",
)
QUICK_SIZES = [1000, 10_000, README_SIZE]
#: Rounds, seconds per run and re-runs of a noisy row: quick, then full.  The
#: quick run's rounds are many and short, so that a busy machine disturbs few
#: of them and the median sees past those.
#: ``seconds``: a library's runs in one row last at most about this long
#: (a slow one gets fewer rounds, never fewer than 3); ``retry_seconds``: a
#: row whose rounds took longer is not measured again.
QUICK = {"repeat": 9, "target": 0.003, "retries": 2, "seconds": 1.5, "retry_seconds": 1.5}
FULL = {"repeat": 7, "target": 0.1, "retries": 1, "seconds": 15.0, "retry_seconds": 60.0}


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help, wrapped between words only (a library's or an
    operation's name is never cut in two)."""

    def _split_lines(self, text, width):
        import textwrap

        return textwrap.wrap(
            " ".join(text.split()), width, break_long_words=False, break_on_hyphens=False
        )


def _load_average() -> Optional[float]:
    """The machine's 1-minute load average (None where the OS has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _sizes(text: str) -> List[int]:
    return [int(float(part)) for part in text.replace(" ", "").split(",") if part]


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m frozenmap.bench",
        description="Time frozenmap's cores side by side with dict and the peer libraries.",
        formatter_class=_HelpFormatter,
    )
    parser.add_argument(
        "--sizes",
        type=_sizes,
        help="comma-separated sizes (default 1000,100000,1000000; quick: 1000,10000, "
        "and 100000 for the operations of the README's table)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small sizes, %(repeat)d short rounds: about a minute and a half of CPU time" % QUICK,
    )
    parser.add_argument(
        "--repeat",
        type=int,
        help="interleaved rounds per measurement (default %d; quick: %d)"
        % (FULL["repeat"], QUICK["repeat"]),
    )
    parser.add_argument(
        "--target",
        type=float,
        help="seconds of CPU time per run (default %g; quick: %g)"
        % (FULL["target"], QUICK["target"]),
    )
    parser.add_argument(
        "--retries",
        type=int,
        help="times a noisy row is measured again, the quietest attempt kept (default %d; "
        "quick: %d)" % (FULL["retries"], QUICK["retries"]),
    )
    parser.add_argument(
        "--libs", help="comma-separated libraries (default: all of %s)" % ", ".join(LIBRARY_NAMES)
    )
    parser.add_argument(
        "--ops",
        help="comma-separated operations (default: all of %s)" % ", ".join(OPERATION_KEYS),
    )
    parser.add_argument("--json", metavar="FILE", help="also save the results as JSON")
    parser.add_argument(
        "--load",
        metavar="FILE",
        help="report (and plot) results saved by --json instead of measuring",
    )
    parser.add_argument("--plot", metavar="DIR", help="write PNG charts (matplotlib) into DIR")
    parser.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)

    if args.load:
        with open(args.load) as f:
            data = json.load(f)
    else:
        data = _measure_all(args, parser)
    print(render_report(data))
    print()
    print(render_verdict(data))
    if args.json and not args.load:
        with open(args.json, "w") as f:
            f.write(dumps_results(data))
        print("results saved to %s" % args.json)
    if args.plot:
        for path in write_plots(data, args.plot):
            print("wrote %s" % path)
    return 0


def dumps_results(data: Dict[str, Any]) -> str:
    """``data`` (``{"meta": ..., "results": [...]}``) as JSON with one
    measurement a line: a saved run is kept in the repository (the docs and the
    README are generated from it), where a line per number would make it tens
    of thousands of lines.  ``json.loads`` reads back exactly ``data``.

    >>> print(dumps_results({"meta": {"sizes": [10]}, "results": [{"n": 10}, {"n": 20}]}))
    {"meta": {"sizes": [10]},
     "results": [
      {"n": 10},
      {"n": 20}
     ]}
    <BLANKLINE>
    """
    results = ",\n".join("  " + json.dumps(m) for m in data["results"])
    rest = {key: value for key, value in data.items() if key not in ("meta", "results")}
    head = "".join(", %s: %s" % (json.dumps(k), json.dumps(v)) for k, v in rest.items())
    return '{"meta": %s%s,\n "results": [\n%s\n ]}\n' % (json.dumps(data["meta"]), head, results)


def _measure_all(args, parser) -> Dict[str, Any]:
    sizes = args.sizes or (QUICK_SIZES if args.quick else [1000, 100_000, 1_000_000])
    keep = None
    if args.quick and not args.sizes:
        # The quick run's largest size measures what the README's table shows
        # (its operations, the C core and the peers), so the README's numbers
        # can be checked in a couple of minutes.
        def keep(n, lib, op):
            return n != README_SIZE or (op.key in README_OPS and lib.name != "frozenmap:py")

    settings = QUICK if args.quick else FULL
    repeat = args.repeat or settings["repeat"]
    target = args.target or settings["target"]
    retries = settings["retries"] if args.retries is None else args.retries
    names = [name.strip() for name in args.libs.split(",")] if args.libs else None
    for name in names or []:
        if name not in LIBRARY_NAMES:
            parser.error("unknown library %r (choose from %s)" % (name, ", ".join(LIBRARY_NAMES)))
    ops = OPERATIONS
    if args.ops:
        wanted = [key.strip() for key in args.ops.split(",")]
        unknown = sorted(set(wanted) - set(OPERATION_KEYS))
        if unknown:
            parser.error(
                "unknown operation(s) %s (choose from %s)"
                % (", ".join(unknown), ", ".join(OPERATION_KEYS))
            )
        ops = [op for op in OPERATIONS if op.key in wanted]
    libraries, skipped = load_libraries(names)
    if not any(lib.is_frozenmap for lib in libraries):
        sys.stderr.write("warning: no frozenmap core imports; measuring the peers only\n")
    load_before = _load_average()
    results = timing.run(
        sizes,
        libraries,
        ops,
        target,
        repeat,
        progress=not args.no_progress,
        keep=keep,
        retries=retries,
        max_seconds=settings["seconds"],
        retry_seconds=settings["retry_seconds"],
    )
    return {
        "meta": {
            "machine": machine_description(),
            "libraries": [
                {"name": lib.name, "version": lib.version, "frozenmap": lib.is_frozenmap}
                for lib in libraries
            ],
            "skipped": skipped,
            "sizes": sizes,
            "repeat": repeat,
            "target": target,
            "quick": bool(args.quick),
            "interleaved": True,
            "clock": timing.CLOCK_NAME,
            "retries": retries,
            "load": [load_before, _load_average()],
            "memory_by": MEMORY_BY,
        },
        "results": [vars(m) for m in results],
    }
