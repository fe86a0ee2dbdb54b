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
        return self.words("s")

    def words(self, unit: str) -> str:
        """The ratio for people: ``2.1× slower``, ``14,000× faster``, ``same``
        (within 5 %), with the rounds' range in the same words."""
        text = in_words(self.ratio, unit)
        if self.low is None or self.high is None:
            return text
        low, high = in_words(self.low, unit), in_words(self.high, unit)
        if low.split()[-1] == high.split()[-1] and low != "same":
            # one direction: "(1.8–2.4× slower)", the better end first
            first, second = (high, low) if self.low < 1 else (low, high)
            return "%s (%s–%s)" % (text, first.split("×")[0], second)
        return "%s (%s – %s)" % (text, low, high)


def factor_text(factor: float) -> str:
    """A factor of at least 1, for people: ``1.3×``, ``29×``, ``393×``, ``14,000×``."""
    if math.isinf(factor):
        return "∞×"
    if factor < 10:
        return "%.1f×" % factor
    if factor < 1000:
        return "%d×" % round(factor)
    return "{:,}×".format(int(float("%.2g" % factor)))


def in_words(ratio: float, unit: str = "s") -> str:
    """``ours / theirs`` in words: ``2.1× slower`` (``larger`` for bytes),
    ``14,000× faster`` (``smaller``), ``same`` within 5 %."""
    if 1 / 1.05 <= ratio <= 1.05:
        return "same"
    better, worse = ("smaller", "larger") if unit == "B" else ("faster", "slower")
    if ratio < 1:
        return "%s %s" % (factor_text(_divide(1.0, ratio)), better)
    return "%s %s" % (factor_text(ratio), worse)


# Column names in the terminal table; the legend under the header spells them out.
SHORT_NAMES = {
    "frozenmap:c": "fm:c",
    "frozenmap:py": "fm:py",
    "immutables": "immut",
    "pyrsistent": "pyrsist",
    "frozendict": "fdict",
    "immutabledict": "imdict",
}


def short_name(lib: str) -> str:
    return SHORT_NAMES.get(lib, lib)


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
    """The terminal tables, each under 100 columns.

    First the measurements: a block per operation, a row per size, a column
    per library (short names, ``*`` the best peer, ``?`` a noisy cell).  Then
    the comparison: for each row, the best peer (every library that is not a
    frozenmap core, dict included) and each frozenmap core against it in
    words (:meth:`Ratio.words`), with the range of the per-round ratios when
    the rounds were ``interleaved``.
    """
    peers = [name for name in libraries if name not in frozenmaps]
    cells = {(m.op, m.n, m.lib): m for m in results}
    sizes = sorted({m.n for m in results})
    values = [["n"] + [short_name(name) for name in libraries]]
    ratios = [["n", "best peer"] + ["%s vs best" % short_name(name) for name in frozenmaps]]
    value_blocks, ratio_blocks = [], []  # (operation title, rows)
    for op in OPERATIONS:
        value_rows, ratio_rows = [], []
        for n in sizes:
            row = {lib: cells.get((op.key, n, lib)) for lib in libraries}
            if not any(row.values()):
                continue
            measured = [(row[p].value, p) for p in peers if row[p] and row[p].value is not None]
            best_name = min(measured)[1] if measured else None
            size = format(n, ",")
            value_rows.append(
                [size] + [_cell(row[lib], op.unit, lib == best_name) for lib in libraries]
            )
            line = [size, short_name(best_name) if best_name else "-"]
            for fm in frozenmaps:
                ratio = best_peer_ratio(row, fm, peers, interleaved)
                line.append(ratio.words(op.unit) if ratio else "-")
            ratio_rows.append(line)
        if value_rows:
            value_blocks.append((op.title, value_rows))
            ratio_blocks.append((op.title, ratio_rows))
    return _layout(values[0], value_blocks) + "\n\n" + _layout(ratios[0], ratio_blocks, left=2)


def _layout(header: List[str], blocks: List[Any], left: int = 1) -> str:
    """Rows under their operation's title: the first ``left`` columns aligned
    left, the others right."""
    every_row = [header] + [row for _, rows in blocks for row in rows]
    widths = [max(len(row[i]) for row in every_row) for i in range(len(header))]

    def join(row: List[str]) -> str:
        cells = [
            c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))
        ]
        return ("  " + " ".join(cells)).rstrip()

    lines = [join(header)]
    lines.append("-" * max(len(lines[0]), max(len(t) for t, _ in blocks) if blocks else 0))
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
        "time per operation, median of %d %s (%s run), net of loop overhead;"
        % (
            meta["repeat"],
            "interleaved rounds" if interleaved else "runs",
            "quick" if meta["quick"] else "full",
        ),
        "memory by %s." % meta.get("memory_by", "tracemalloc"),
        "* best peer (dict copied on write counts as a peer)   ? noisy (IQR > %d%% of median)"
        % (NOISY * 100),
        "columns: "
        + ", ".join(
            "%s = %s" % (short_name(name), name) for name in libraries if short_name(name) != name
        ),
        "vs best: each frozenmap core against the best peer"
        + (
            ", median of the rounds' ratios (their range)"
            if interleaved
            else ", ratio of the medians"
        )
        + "; same = within 5%",
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
    return "\n".join(
        textwrap.fill(line, width=100, subsequent_indent="  ") if len(line) > 100 else line
        for text in out
        for line in text.split("\n")
    )


def _compare(
    results: List[Measurement], core: str, peers: List[str], n: int, interleaved: bool
) -> Dict[str, List[Any]]:
    """``core`` against the best peer for each operation measured at size ``n``:
    ``wins``/``losses``/``par`` as ``(factor >= 1, operation, best peer)``,
    ``alone`` (no peer measures it) and ``unresolved`` (a time of 0 after the
    loop overhead: below the timer's resolution) as titles."""
    cells = {(m.op, m.lib): m for m in results if m.n == n and m.value is not None}
    out: Dict[str, List[Any]] = {k: [] for k in ("wins", "losses", "par", "alone", "unresolved")}
    for op in OPERATIONS:
        if (op.key, core) not in cells:
            continue
        row = {lib: cells.get((op.key, lib)) for lib in [core] + peers}
        ratio = best_peer_ratio(row, core, peers, interleaved)
        if ratio is None:
            out["alone"].append(op.title)
        elif ratio.ratio == 0 or math.isinf(ratio.ratio):
            out["unresolved"].append(op.title)
        elif in_words(ratio.ratio) == "same":
            out["par"].append((1.0, op, ratio.best))
        elif ratio.ratio < 1:
            out["wins"].append((_divide(1.0, ratio.ratio), op, ratio.best))
        else:
            out["losses"].append((ratio.ratio, op, ratio.best))
    return out


def _better(op: Any) -> str:
    return "faster" if op.unit == "s" else "smaller"


def render_verdict(data: Dict[str, Any]) -> str:
    """One paragraph: at the largest size, where frozenmap is best, where a
    peer is and by how much; then the worst loss at every size measured.

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
    interleaved = bool(data["meta"].get("interleaved"))
    sizes = sorted({m.n for m in results})
    n = sizes[-1]
    found = _compare(results, core, peers, n, interleaved)
    text = "Verdict at n=%s (%s against the best other library for each operation): " % (
        format(n, ","),
        core,
    )
    if found["wins"]:
        text += "frozenmap is best at %s. " % "; ".join(
            "%s (%s %s than %s)" % (op.title, factor_text(factor), _better(op), name)
            for factor, op, name in sorted(found["wins"], key=lambda e: -e[0])
        )
    if found["par"]:
        text += "On par (within 5%%) at %s. " % "; ".join(
            "%s (with %s)" % (op.title, name) for _, op, name in found["par"]
        )
    if found["losses"]:
        text += "A peer is best at %s. " % "; ".join(
            "%s (%s, %s %s)" % (op.title, name, factor_text(factor), _better(op))
            for factor, op, name in sorted(found["losses"], key=lambda e: -e[0])
        )
    if found["alone"]:
        text += "Only frozenmap offers %s. " % ", ".join(found["alone"])
    if found["unresolved"]:
        text += "Too fast to tell apart at this size: %s. " % ", ".join(found["unresolved"])
    worst = []
    for size in sizes:
        losses = _compare(results, core, peers, size, interleaved)["losses"]
        if losses:
            factor, op, name = max(losses, key=lambda e: e[0])
            worse = "slower" if op.unit == "s" else "larger"
            worst.append(
                "at n=%s %s (%s %s than %s)"
                % (format(size, ","), op.title, factor_text(factor), worse, name)
            )
        else:
            worst.append("at n=%s none" % format(size, ","))
    text += "Worst loss %s. " % "; ".join(worst)
    if data["meta"].get("quick"):
        text += "(A quick run: factors below 2x can flip between runs; run without --quick for firm numbers.)"
    return textwrap.fill(text.strip(), width=100)
