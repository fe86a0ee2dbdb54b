"""The printed report: the table, its header and noise summary, and the verdict."""

import math
import os
import platform
import statistics
import textwrap
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from .operations import OPERATIONS
from .timing import Measurement


def format_value(value: Optional[float], unit: str) -> str:
    """``12.3 µs``, ``1.20 ms``, ``48.1 B``; ``n/a`` for None."""
    if value is None:
        return "n/a"
    if unit == "B":
        steps = ((1e6, "MB"), (1e3, "kB"), (1.0, "B"))
    else:
        steps = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
    for scale, suffix in steps:  # noqa: B007  (suffix is used after the loop)
        if value >= scale:
            break
    number = value / scale
    digits = 0 if number >= 100 else 1 if number >= 10 else 2
    return "%.*f %s" % (digits, number, suffix)


NOISY = 0.10  # cells noisier than this (IQR / median) are marked "?"


def _cell(m: Optional[Measurement], unit: str, best: bool) -> str:
    """A value with two marker columns: ``*`` best peer, ``?`` noisy."""
    if m is None:
        return "-  "
    if m.value is None:
        return "n/a  "
    return format_value(m.value, unit) + ("*" if best else " ") + ("?" if m.noise > NOISY else " ")


@dataclass
class Ratio:
    """A frozenmap core against the best peer for one operation at one size.

    ``ratio`` is the core's figure over the peer's (below 1: frozenmap is
    better).  From interleaved rounds it is the median of the per-round
    ratios, and ``low``/``high`` are their smallest and largest; otherwise
    (memory, or results saved before rounds were interleaved) it is the ratio
    of the two medians, with no spread.
    """

    best: str
    ratio: float
    low: Optional[float] = None
    high: Optional[float] = None
    rounds: int = 0

    def __str__(self) -> str:
        if self.low is None or self.high is None:
            return "%.3g×" % self.ratio
        return "%.3g× (%.3g–%.3g)" % (self.ratio, self.low, self.high)


def _divide(a: float, b: float) -> float:
    return a / b if b else (math.inf if a else 1.0)


def best_peer_ratio(
    row: Dict[str, Optional[Measurement]], core: str, peers: List[str], interleaved: bool
) -> Optional[Ratio]:
    """``core`` against the best of ``peers`` in ``row`` (library -> result).

    None when ``core`` or every peer is missing.
    """
    mine = row.get(core)
    measured = [(m.value, p) for p in peers for m in [row.get(p)] if m and m.value is not None]
    if mine is None or mine.value is None or not measured:
        return None
    best_value, best = min(measured)
    theirs = row[best]
    assert theirs is not None
    pairs = list(zip(mine.runs, theirs.runs)) if interleaved else []
    if not pairs:
        return Ratio(best, _divide(mine.value, best_value))
    ratios = [_divide(a, b) for a, b in pairs]
    return Ratio(best, statistics.median(ratios), min(ratios), max(ratios), len(ratios))


def render_table(
    results: List[Measurement],
    libraries: List[str],
    frozenmaps: List[str],
    interleaved: bool = False,
) -> str:
    """The terminal table: a block per operation, a row per size, a column per library.

    The last columns name the best peer (every library that is not a
    frozenmap core, dict included) and give each frozenmap core's
    :class:`Ratio` to it, with the range of the per-round ratios when the
    rounds were ``interleaved``.
    """
    peers = [name for name in libraries if name not in frozenmaps]
    cells = {(m.op, m.n, m.lib): m for m in results}
    sizes = sorted({m.n for m in results})
    header = [""] + [name + "  " for name in libraries]
    header += ["best peer"] + ["%s/best" % name.split(":")[1] for name in frozenmaps]
    blocks = []  # (operation title, rows)
    for op in OPERATIONS:
        rows = []
        for n in sizes:
            row = {lib: cells.get((op.key, n, lib)) for lib in libraries}
            if not any(row.values()):
                continue
            measured = [(row[p].value, p) for p in peers if row[p] and row[p].value is not None]
            best_name = min(measured)[1] if measured else None
            line = ["n=%s" % format(n, ",")]
            line += [_cell(row[lib], op.unit, lib == best_name) for lib in libraries]
            line.append(best_name or "-")
            for fm in frozenmaps:
                ratio = best_peer_ratio(row, fm, peers, interleaved)
                line.append(str(ratio) if ratio else "-")
            rows.append(line)
        if rows:
            blocks.append((op.title, rows))
    every_row = [header] + [row for _, rows in blocks for row in rows]
    widths = [max(len(row[i]) for row in every_row) for i in range(len(header))]
    widths[1:] = [max(w, 9) for w in widths[1:]]

    def join(row):
        return (
            "  "
            + row[0].ljust(widths[0])
            + "  ".join(c.rjust(w) for c, w in zip(row[1:], widths[1:]))
        )

    lines = [join(header)]
    lines.append("-" * len(lines[0]))
    for title, rows in blocks:
        lines.append(title)
        lines.extend(join(row) for row in rows)
    return "\n".join(lines)


def machine_description() -> Dict[str, str]:
    """Python, OS, CPU: what a reader needs to weigh the numbers."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "python": "%s %s" % (platform.python_implementation(), platform.python_version()),
        "platform": "%s %s" % (platform.system(), platform.machine()),
        "cpu": "%s, %d cores" % (cpu, os.cpu_count() or 0),
        "date": time.strftime("%Y-%m-%d %H:%M"),
    }


def render_report(data: Dict[str, Any]) -> str:
    """The whole printed report: header, skipped libraries, table, noise summary."""
    meta = data["meta"]
    results = [Measurement(**m) for m in data["results"]]
    libraries = [lib["name"] for lib in meta["libraries"]]
    frozenmaps = [lib["name"] for lib in meta["libraries"] if lib["frozenmap"]]
    out = [
        "frozenmap benchmark: %s on %s (%s), %s"
        % (
            meta["machine"]["python"],
            meta["machine"]["platform"],
            meta["machine"]["cpu"],
            meta["machine"]["date"],
        ),
        "libraries: "
        + ", ".join("%s %s" % (lib["name"], lib["version"]) for lib in meta["libraries"]),
    ]
    for name, reason in meta["skipped"].items():
        out.append("skipped: %s (%s)" % (name, reason))
    interleaved = bool(meta.get("interleaved"))
    out += [
        "time per operation, median of %d %s (%s), net of loop overhead; memory by %s."
        % (
            meta["repeat"],
            "interleaved rounds (each runs every library once)" if interleaved else "runs",
            "quick" if meta["quick"] else "full",
            meta.get("memory_by", "tracemalloc"),
        ),
        "* best peer (dict copied on write counts as a peer)   ? noisy (IQR > %d%% of median)"
        % (NOISY * 100),
        "x/best: frozenmap's core x divided by the best peer (below 1: frozenmap is better)"
        + (
            "; median of the rounds' ratios (lowest–highest)"
            if interleaved
            else "; ratio of the medians"
        ),
        "",
        render_table(results, libraries, frozenmaps, interleaved),
        "",
    ]
    timed = sorted(
        (m.noise, m.op, m.lib, m.n) for m in results if m.unit == "s" and m.value is not None
    )
    if timed:
        noises = [t[0] for t in timed]
        worst = timed[-1]
        out.append(
            "noise (IQR/median over runs): median %.1f%%, 90th percentile %.1f%%, "
            "worst %.1f%% (%s, %s, n=%s)"
            % (
                100 * statistics.median(noises),
                100 * noises[int(0.9 * (len(noises) - 1))],
                100 * worst[0],
                worst[1],
                worst[2],
                format(worst[3], ","),
            )
        )
    return "\n".join(out)


def _factor(ratio: float) -> str:
    """``2.9x``, ``393x``, ``13,300x``."""
    return "%.2gx" % ratio if ratio < 100 else "{:,}x".format(int(float("%.3g" % ratio)))


def render_verdict(data: Dict[str, Any]) -> str:
    """One paragraph at the largest size: where frozenmap is best, where a peer is, by how much.

    frozenmap means its C core when it was measured (else the pure-Python one);
    each operation compares it with the best of the other libraries.
    """
    results = [Measurement(**m) for m in data["results"]]
    libs = data["meta"]["libraries"]
    cores = [lib["name"] for lib in libs if lib["frozenmap"]]
    peers = [lib["name"] for lib in libs if not lib["frozenmap"]]
    if not cores or not peers or not results:
        return "verdict: nothing to compare (frozenmap and at least one peer are needed)"
    core = "frozenmap:c" if "frozenmap:c" in cores else cores[0]
    n = max(m.n for m in results)
    cells = {(m.op, m.lib): m for m in results if m.n == n and m.value is not None}
    interleaved = bool(data["meta"].get("interleaved"))
    wins, losses, alone = [], [], []  # (factor, op, best peer): factor >= 1
    unresolved = []  # a time of 0 after the loop overhead: below the timer's resolution
    for op in OPERATIONS:
        if (op.key, core) not in cells:
            continue
        row = {lib: cells.get((op.key, lib)) for lib in [core] + peers}
        ratio = best_peer_ratio(row, core, peers, interleaved)
        if ratio is None:
            alone.append(op.title)
        elif ratio.ratio == 0 or math.isinf(ratio.ratio):
            unresolved.append(op.title)
        elif ratio.ratio <= 1:
            wins.append((_divide(1.0, ratio.ratio), op, ratio.best))
        else:
            losses.append((ratio.ratio, op, ratio.best))

    def better(op):
        return "faster" if op.unit == "s" else "smaller"

    text = "Verdict at n=%s (%s against the best other library for each operation): " % (
        format(n, ","),
        core,
    )
    if wins:
        text += "frozenmap is best at %s. " % "; ".join(
            "%s (%s %s than %s)" % (op.title, _factor(factor), better(op), name)
            for factor, op, name in sorted(wins, key=lambda e: -e[0])
        )
    if losses:
        text += "A peer is best at %s. " % "; ".join(
            "%s (%s, %s %s)" % (op.title, name, _factor(factor), better(op))
            for factor, op, name in sorted(losses, key=lambda e: -e[0])
        )
    if alone:
        text += "Only frozenmap offers %s. " % ", ".join(alone)
    if unresolved:
        text += "Too fast to tell apart at this size: %s. " % ", ".join(unresolved)
    if data["meta"].get("quick"):
        text += "(A quick run: factors below 2x can flip between runs; run without --quick for firm numbers.)"
    return textwrap.fill(text.strip(), width=100)
