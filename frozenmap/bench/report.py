"""The printed report: the table, its header and noise summary, and the verdict."""

import math
import os
import platform
import re
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


#: A ratio within this factor of 1 reads "same".
SAME = 1.05
#: Rounds' ratios on both sides of 1 that span more than this factor: the row
#: is too noisy to call (narrower: within noise).
WIDE = 2.0
#: What :meth:`Ratio.call` says of a row, as the comparison tables print it.
CALLS = {
    "win": "better",
    "loss": "worse",
    "same": "same",
    "noise": "within noise",
    "noisy": "too noisy",
}


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
        spread = self.range_words(unit)
        text = in_words(self.ratio, unit)
        return "%s (%s)" % (text, spread) if spread else text

    def range_words(self, unit: str) -> str:
        """The rounds' range: ``1.8–2.4× slower`` (one direction, the better
        end first), ``4.3× faster – 1.2× slower`` (both); "" without rounds.
        An end within 5 % of 1 keeps two decimals (``1.02–1.7× slower``), so
        that the range shows which side of 1 it is on."""
        if self.low is None or self.high is None:
            return ""
        low, high = _range_end(self.low, unit), _range_end(self.high, unit)
        if low.split()[-1] == high.split()[-1] and low != "same":
            first, second = (high, low) if self.low < 1 else (low, high)
            return "%s–%s" % (first.split("×")[0], second)
        return "%s – %s" % (low, high)

    def call(self) -> str:
        """What may be said of the row: ``win`` or ``loss`` only when every
        round agrees, each by more than 5 % (or, without rounds, by the
        ratio); ``same`` when the ratio is within 5 %; otherwise ``noise``,
        or ``noisy`` (too noisy to call) when the rounds span more than
        :data:`WIDE`."""
        if self.low is None or self.high is None:
            if 1 / SAME <= self.ratio <= SAME:
                return "same"
            return "win" if self.ratio < 1 else "loss"
        if self.high < 1 / SAME:
            return "win"
        if self.low > SAME:
            return "loss"
        if self.low <= 0 or self.high / self.low > WIDE:
            return "noisy"
        return "same" if 1 / SAME <= self.ratio <= SAME else "noise"


def _range_end(ratio: float, unit: str) -> str:
    """One end of a range of ratios: :func:`in_words`, with two decimals near 1."""
    if ratio == 1 or not 1 / SAME <= ratio <= SAME:
        return in_words(ratio, unit)
    better, worse = ("smaller", "larger") if unit == "B" else ("faster", "slower")
    factor, words = (1 / ratio, better) if ratio < 1 else (ratio, worse)
    digits = 2 if factor >= 1.005 else 3  # never "1.00×", which reads as no difference
    return "%.*f× %s" % (digits, factor, words)


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
    if 1 / SAME <= ratio <= SAME:
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


#: The widest line the report prints.
WIDTH = 100
#: Between two cells of a table: cells never hold two spaces in a row.
GAP = "  "


def render_table(
    results: List[Measurement],
    libraries: List[str],
    frozenmaps: List[str],
    interleaved: bool = False,
) -> str:
    """The terminal tables, every line at most :data:`WIDTH` columns.

    First the measurements: a block per operation, a row per size, a column
    per library (short names, ``*`` the best peer, ``?`` a noisy cell); when
    the libraries do not fit across, the columns go to several tables, each
    with the sizes.  Then, for each frozenmap core, its comparison with the
    best peer of each row (every library that is not a frozenmap core, dict
    included): the ratio in words (:meth:`Ratio.words`), the range of the
    per-round ratios when the rounds were ``interleaved``, and the call
    (:meth:`Ratio.call`).
    """
    peers = [name for name in libraries if name not in frozenmaps]
    cells = {(m.op, m.n, m.lib): m for m in results}
    sizes = sorted({m.n for m in results})
    value_blocks: List[Any] = []  # (operation title, rows)
    ratio_blocks: Dict[str, List[Any]] = {fm: [] for fm in frozenmaps}
    section = ""  # the heading still to print, before the next block with rows
    for op in OPERATIONS:
        value_rows: List[List[str]] = []
        ratio_rows: Dict[str, List[List[str]]] = {fm: [] for fm in frozenmaps}
        for n in sizes:
            row = {lib: cells.get((op.key, n, lib)) for lib in libraries}
            if not any(row.values()):
                continue
            measured = [(m.value, p) for p in peers for m in [row[p]] if m and m.value is not None]
            best_name = min(measured)[1] if measured else None
            size = format(n, ",")
            value_rows.append(
                [size] + [_cell(row[lib], op.unit, lib == best_name) for lib in libraries]
            )
            for fm in frozenmaps:
                if row.get(fm) is None:
                    continue
                ratio = best_peer_ratio(row, fm, peers, interleaved)
                if ratio is None:
                    ratio_rows[fm].append([size, "-", "-", "-", "-"])
                    continue
                ratio_rows[fm].append(
                    [
                        size,
                        short_name(ratio.best),
                        in_words(ratio.ratio, op.unit),
                        ratio.range_words(op.unit) or "-",
                        CALLS[ratio.call()],
                    ]
                )
        if op.section:
            section = _heading(op.section)
        if value_rows:
            if section:  # (a heading, with no rows, opens a section that has some)
                value_blocks.append((section, []))
                for fm in frozenmaps:
                    ratio_blocks[fm].append((section, []))
                section = ""
            value_blocks.append((op.title, value_rows))
        for fm in frozenmaps:
            if ratio_rows[fm]:
                ratio_blocks[fm].append((op.title, ratio_rows[fm]))
    tables = [_layout(["n"] + [short_name(name) for name in libraries], value_blocks)]
    for fm in frozenmaps:
        if ratio_blocks[fm]:
            header = ["n", "best peer", "%s vs best" % short_name(fm), "rounds' range", "call"]
            tables.append(_layout(header, ratio_blocks[fm], left=2))
    return "\n\n".join(tables)


def _heading(section: str) -> str:
    """A section's heading line in the tables."""
    return "== %s ==" % section


def _layout(header: List[str], blocks: List[Any], left: int = 1) -> str:
    """Rows under their operation's title: the first ``left`` columns aligned
    left, the others right, cells :data:`GAP` apart.  When the columns do
    not fit in :data:`WIDTH`, the columns after the first go to as many
    tables as needed (each one beginning with the first column)."""
    every_row = [header] + [row for _, rows in blocks for row in rows]
    widths = [max(len(row[i]) for row in every_row) for i in range(len(header))]
    groups: List[List[int]] = [[]]
    used = 2 + widths[0]
    for i in range(1, len(header)):
        if groups[-1] and used + len(GAP) + widths[i] > WIDTH:
            groups.append([])
            used = 2 + widths[0]
        groups[-1].append(i)
        used += len(GAP) + widths[i]

    def join(row: List[str], columns: List[int]) -> str:
        cells = [
            row[i].ljust(widths[i]) if i < left else row[i].rjust(widths[i]) for i in [0] + columns
        ]
        return ("  " + GAP.join(cells)).rstrip()

    tables = []
    for columns in groups:
        lines = [join(header, columns)]
        rule = max([len(lines[0])] + [len(title) for title, _ in blocks])
        lines.append("-" * min(rule, WIDTH))
        for title, rows in blocks:
            lines.append(title)
            lines.extend(join(row, columns) for row in rows)
        tables.append("\n".join(lines))
    return "\n\n".join(tables)


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


def _prose(text: str) -> str:
    """A paragraph wrapped to :data:`WIDTH`, never breaking a word or a name."""
    return textwrap.fill(
        text,
        width=WIDTH,
        subsequent_indent="  ",
        break_long_words=False,
        break_on_hyphens=False,
    )


def _busy(meta: Dict[str, Any]) -> str:
    """A warning when the machine was busy while measuring ("" when idle or unknown)."""
    loads = [x for x in meta.get("load") or () if x is not None]
    cores = os.cpu_count() or 1
    match = re.search(r"(\d+) cores", meta.get("machine", {}).get("cpu", ""))
    if match:
        cores = int(match.group(1))
    if not loads or max(loads) < cores / 2:
        return ""
    return (
        "a busy machine: load average %s on %d cores while measuring; other "
        "processes slow memory access and the times run longer than on an idle machine "
        "(each row's libraries are timed side by side, so the ratios suffer less)"
        % (" to ".join("%.1f" % x for x in loads), cores)
    )


def render_report(data: Dict[str, Any]) -> str:
    """The whole printed report: header, skipped libraries, tables, noise summary.

    The header and the summary are paragraphs wrapped to :data:`WIDTH`
    columns; the tables are laid out to fit it (:func:`render_table`).
    """
    meta = data["meta"]
    results = [Measurement(**m) for m in data["results"]]
    libraries = [lib["name"] for lib in meta["libraries"]]
    frozenmaps = [lib["name"] for lib in meta["libraries"] if lib["frozenmap"]]
    interleaved = bool(meta.get("interleaved"))
    retried = sorted(
        {(m.n, m.op) for m in results if m.attempts > 1},
    )
    paragraphs = [
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
        paragraphs.append("skipped: %s (%s)" % (name, reason))
    busy = _busy(meta)
    if busy:
        paragraphs.append(busy)
    paragraphs += [
        "time per operation (%s), median of %d %s (%s run), net of loop overhead;%s "
        "memory by %s."
        % (
            meta.get("clock", "wall time"),
            meta["repeat"],
            "interleaved rounds" if interleaved else "runs",
            "quick" if meta["quick"] else "full",
            " %d noisy row%s measured again, the quietest attempt kept;"
            % (len(retried), "" if len(retried) == 1 else "s")
            if retried
            else "",
            meta.get("memory_by", "tracemalloc"),
        ),
        "* best peer (dict copied on write counts as a peer)   ? noisy (IQR > %d%% of median)"
        % (NOISY * 100),
        "columns: "
        + ", ".join(
            "%s = %s" % (short_name(name), name) for name in libraries if short_name(name) != name
        ),
        "vs best: each frozenmap core against the best peer, "
        + (
            "the median of the rounds' ratios and their range (the lowest and highest round)"
            if interleaved
            else "the ratio of the medians"
        )
        + "; same = within 5%%; call: better or worse only when every round says so by "
        "more than 5%%, within noise otherwise, too noisy when the rounds also span more "
        "than %s×" % ("%g" % WIDE),
    ]
    out = [_prose(text) for text in paragraphs]
    out += ["", render_table(results, libraries, frozenmaps, interleaved), ""]
    timed = sorted(
        (m.noise, m.op, m.lib, m.n) for m in results if m.unit == "s" and m.value is not None
    )
    if timed:
        noises = [t[0] for t in timed]
        worst = timed[-1]
        out.append(
            _prose(
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
        )
    return "\n".join(out)


def _compare(
    results: List[Measurement], core: str, peers: List[str], n: int, interleaved: bool
) -> Dict[str, List[Any]]:
    """``core`` against the best peer for each operation measured at size ``n``,
    by :meth:`Ratio.call`: ``wins``/``losses`` as ``(factor >= 1, operation,
    ratio)``, ``par``/``noise``/``noisy`` as ``(operation, ratio)``, ``alone``
    (no peer measures it) and ``unresolved`` (a time of 0 after the loop
    overhead: below the timer's resolution) as titles."""
    cells = {(m.op, m.lib): m for m in results if m.n == n and m.value is not None}
    kinds = ("wins", "losses", "par", "noise", "noisy", "alone", "unresolved")
    out: Dict[str, List[Any]] = {k: [] for k in kinds}
    for op in OPERATIONS:
        if (op.key, core) not in cells:
            continue
        row = {lib: cells.get((op.key, lib)) for lib in [core] + peers}
        ratio = best_peer_ratio(row, core, peers, interleaved)
        if ratio is None:
            out["alone"].append(op.title)
        elif ratio.ratio == 0 or math.isinf(ratio.ratio):
            out["unresolved"].append(op.title)
        else:
            call = ratio.call()
            if call == "win":
                out["wins"].append((_divide(1.0, ratio.ratio), op, ratio))
            elif call == "loss":
                out["losses"].append((ratio.ratio, op, ratio))
            else:
                out[{"same": "par", "noise": "noise", "noisy": "noisy"}[call]].append((op, ratio))
    return out


def _better(op: Any) -> str:
    return "faster" if op.unit == "s" else "smaller"


def _worse(op: Any) -> str:
    return "slower" if op.unit == "s" else "larger"


def render_verdict(data: Dict[str, Any]) -> str:
    """One paragraph: at the run's largest size, where frozenmap is best, where
    a peer is and by how much, where the rounds cannot tell; then the worst
    loss at each of the run's sizes, and the rows too noisy to call at the
    others.

    frozenmap means its C core when it was measured (else the pure-Python one);
    each operation compares it with the best of the other libraries.  A win
    or a loss is claimed only where every interleaved round agrees on it
    (:meth:`Ratio.call`); a row whose rounds disagree is "within noise", or
    "too noisy to call" when they also span more than :data:`WIDE`.
    """
    results = [Measurement(**m) for m in data["results"]]
    libs = data["meta"]["libraries"]
    cores = [lib["name"] for lib in libs if lib["frozenmap"]]
    peers = [lib["name"] for lib in libs if not lib["frozenmap"]]
    if not cores or not peers or not results:
        return "verdict: nothing to compare (frozenmap and at least one peer are needed)"
    core = "frozenmap:c" if "frozenmap:c" in cores else cores[0]
    interleaved = bool(data["meta"].get("interleaved"))
    # The run's sizes (not those of the operations with sizes of their own,
    # such as the small maps), where there are results.
    measured = {m.n for m in results}
    sizes = sorted(measured.intersection(data["meta"].get("sizes") or ()) or measured)
    n = sizes[-1]
    found = _compare(results, core, peers, n, interleaved)
    text = "Verdict at n=%s (%s against the best other library for each operation%s): " % (
        format(n, ","),
        core,
        "; a win or a loss only where every round agrees" if interleaved else "",
    )
    if found["wins"]:
        text += "frozenmap is best at %s. " % "; ".join(
            "%s (%s %s than %s)" % (op.title, factor_text(factor), _better(op), ratio.best)
            for factor, op, ratio in sorted(found["wins"], key=lambda e: -e[0])
        )
    if found["par"]:
        text += "On par (within 5%%) at %s. " % "; ".join(
            "%s (with %s)" % (op.title, ratio.best) for op, ratio in found["par"]
        )
    if found["noise"]:
        text += "Within noise (not every round has one %s by more than 5%%) at %s. " % (
            "faster" if all(op.unit == "s" for op, _ in found["noise"]) else "better",
            "; ".join(
                "%s (with %s: %s)" % (op.title, ratio.best, ratio.range_words(op.unit))
                for op, ratio in found["noise"]
            ),
        )
    if found["noisy"]:
        text += "Too noisy to call at %s. " % "; ".join(
            "%s (with %s: %s)" % (op.title, ratio.best, ratio.range_words(op.unit))
            for op, ratio in found["noisy"]
        )
    if found["losses"]:
        text += "A peer is best at %s. " % "; ".join(
            "%s (%s, %s %s)" % (op.title, ratio.best, factor_text(factor), _better(op))
            for factor, op, ratio in sorted(found["losses"], key=lambda e: -e[0])
        )
    if found["alone"]:
        text += "Only frozenmap offers %s. " % ", ".join(found["alone"])
    if found["unresolved"]:
        text += "Too fast to tell apart at this size: %s. " % ", ".join(found["unresolved"])
    worst, noisy_elsewhere = [], []
    for size in sizes:
        at_size = found if size == n else _compare(results, core, peers, size, interleaved)
        if at_size["losses"]:
            factor, op, ratio = max(at_size["losses"], key=lambda e: e[0])
            worst.append(
                "at n=%s %s (%s %s than %s)"
                % (format(size, ","), op.title, factor_text(factor), _worse(op), ratio.best)
            )
        else:
            worst.append("at n=%s none" % format(size, ","))
        if size != n and at_size["noisy"]:
            noisy_elsewhere.append(
                "Too noisy to call at n=%s: %s. "
                % (format(size, ","), "; ".join(op.title for op, _ in at_size["noisy"]))
            )
    text += "Worst loss %s. " % "; ".join(worst)
    text += "".join(noisy_elsewhere)
    if _busy(data["meta"]):
        text += (
            "The machine was busy: where memory is the bottleneck (lookups, single-key "
            "edits), a factor measured now can differ from an idle machine's even when every "
            "round agrees. "
        )
    if data["meta"].get("quick"):
        text += "(A quick run: fewer and shorter rounds; run without --quick for firm numbers.)"
    return textwrap.fill(text.strip(), width=WIDTH, break_long_words=False, break_on_hyphens=False)
