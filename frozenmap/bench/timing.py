"""How a case is timed, and the measuring loop over sizes, operations and libraries."""

import gc
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence

from .operations import Case, Operation, Workload
from .peers import Library


@dataclass
class Measurement:
    """One result: the median value, its noise, and how it was obtained."""

    op: str
    n: int
    lib: str
    value: Optional[float]  # seconds per operation, or bytes; None for n/a
    unit: str
    noise: float = 0.0  # IQR / median over the runs
    runs: List[float] = field(default_factory=list)
    per_pass: int = 0  # inputs per pass
    passes: int = 0  # passes per run


def _passes(
    run, xs_source, count: int, passes: int, consumes: bool, collect: bool = False
) -> float:
    """Seconds for ``passes`` passes of ``run``; fresh inputs per pass if
    ``consumes``.  The cyclic GC is off while timed (as ``timeit`` does)
    unless ``collect``: then it runs over what the passes make only."""
    timer = time.perf_counter
    gc_was_enabled = gc.isenabled()
    # With the GC on, what was alive before the passes (the whole process's
    # heap: every library's maps) moves to the permanent generation, so the
    # collections timed are those of what the passes make and keep.
    frozen = collect and hasattr(gc, "freeze")
    if frozen:
        gc.freeze()
    elif not collect:
        gc.disable()
    try:
        if not consumes:
            xs = xs_source(count)
            start = timer()
            for _ in range(passes):
                run(xs)
            return timer() - start
        total = 0.0
        for _ in range(passes):
            xs = xs_source(count)
            start = timer()
            run(xs)
            total += timer() - start
            del xs
        return total
    finally:
        if frozen:
            gc.unfreeze()
        if gc_was_enabled:
            gc.enable()


@dataclass
class Timer:
    """A case made ready to time: each :meth:`once` is one run.

    A pass loops over ``count`` inputs, a run makes ``passes`` passes.  The
    bare loop's time (``overhead``: same inputs, body ``pass``) is subtracted.
    ``runs`` is how many runs the case should get.
    """

    case: Case
    run: Callable[[list], None]
    inputs: Callable[[int], list]
    count: int
    passes: int
    overhead: float
    runs: int

    def once(self) -> float:
        """One run: seconds per operation."""
        case = self.case
        elapsed = _passes(self.run, self.inputs, self.count, self.passes, case.consumes, case.gc)
        ops = self.passes * self.count * self.case.scale
        return max(elapsed - self.overhead, 0.0) / ops


def calibrate(case: Case, target: float, repeat: int, max_seconds: float = 15.0) -> Timer:
    """A :class:`Timer` for ``case`` whose runs last about ``target`` seconds.

    Fewer than ``repeat`` runs are asked for when they would take more than
    ``max_seconds`` (never fewer than 3).
    """
    run = case.compile()
    bare = case.compile("pass")
    one = _passes(run, case.inputs, 1, 1, case.consumes, case.gc)  # also warms up
    if case.whole:
        count = case.limit
    else:
        count = max(1, min(case.limit, int(target / 10 / max(one, 1e-9))))
    inputs = case.inputs
    if not case.consumes:  # build the pool once for every run
        pool = case.inputs(count)
        count = len(pool)
        inputs = lambda c: pool  # noqa: E731
    # A one-input pass already timed the single input a slow operation gets.
    per_pass = one if count == 1 else _passes(run, inputs, count, 1, case.consumes, case.gc)
    passes = max(1, int(target / max(per_pass, 1e-9)))
    runs = max(3, min(repeat, int(max_seconds / max(per_pass * passes, 1e-9))))
    overhead = min(_passes(bare, inputs, count, passes, False) for _ in range(3))
    return Timer(case, run, inputs, count, passes, overhead, runs)


def time_case(case: Case, target: float, repeat: int, max_seconds: float = 15.0):
    """Time ``case`` alone: ``(median seconds per operation, noise, runs, count, passes)``."""
    timer = calibrate(case, target, repeat, max_seconds)
    runs = [timer.once() for _ in range(timer.runs)]
    median = statistics.median(runs)
    return median, _noise(runs, median), runs, timer.count, timer.passes


def _noise(runs: List[float], median: float) -> float:
    if len(runs) < 2 or median <= 0:
        return 0.0
    q1, _, q3 = statistics.quantiles(runs, n=4, method="inclusive")
    return (q3 - q1) / median


def measure_interleaved(
    op: Operation, libraries: Sequence[Library], w: Workload, target: float, repeat: int
) -> List[Measurement]:
    """Run one operation for each of ``libraries`` on one workload, one result each.

    Timed operations run in interleaved rounds: every round makes one run of
    each library (in an order that rotates from round to round), so that
    ``runs[i]`` of two libraries were measured side by side and their ratio
    is fair even when the machine's speed drifts.  A library that asks for
    fewer runs (a slow one) sits out the last rounds.
    """
    results = [Measurement(op.key, w.n, lib.name, None, op.unit) for lib in libraries]
    timers = []  # (result, timer)
    for lib, result in zip(libraries, results):
        if op.measure is not None:
            result.value = op.measure(lib, w)
            continue
        case = op.case(lib, w) if op.case is not None else None
        if case is not None:
            timers.append((result, calibrate(case, target, repeat)))
    rounds = max((timer.runs for _, timer in timers), default=0)
    for r in range(rounds):
        shift = r % len(timers)
        for result, timer in timers[shift:] + timers[:shift]:
            if r < timer.runs:
                result.runs.append(timer.once())
    for result, timer in timers:
        result.value = statistics.median(result.runs)
        result.noise = _noise(result.runs, result.value)
        result.per_pass, result.passes = timer.count, timer.passes
    return results


class Progress:
    """Progress on stderr: one updating line on a terminal; otherwise a line when
    the size or library changes and every few seconds, each naming the
    operation being measured."""

    EVERY = 3.0  # seconds between lines when stderr is not a terminal

    def __init__(self, total: int):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.tty = sys.stderr.isatty()
        self.last_group = None
        self.last_line = -self.EVERY

    def step(self, group: str, detail: str) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.start
        line = "[%*d/%d %3.0fs] %s: %s" % (
            len(str(self.total)),
            self.done,
            self.total,
            elapsed,
            group,
            detail,
        )
        if self.tty:
            sys.stderr.write("\r\x1b[K" + line[:150])
        elif group != self.last_group or elapsed - self.last_line >= self.EVERY:
            sys.stderr.write(line + "\n")
            self.last_line = elapsed
        self.last_group = group
        sys.stderr.flush()

    def finish(self) -> None:
        if self.tty:
            sys.stderr.write("\r\x1b[K")
        sys.stderr.write("done in %.0f s\n" % (time.monotonic() - self.start))


def run(
    sizes, libraries, operations, target, repeat, progress=True, keep=None
) -> List[Measurement]:
    """Measure every operation for every library at every size.

    ``keep(n, lib, op)``, when given, says which of those to measure.  An
    operation with its own sizes (``op.sizes``: small maps, the nested
    reducer) is measured at those instead.  The libraries measured for one
    operation at one size are timed together, in interleaved rounds
    (:func:`measure_interleaved`).
    """
    plan = []  # (n, op, libraries)
    every_size = sorted(set(sizes).union(*(op.sizes or () for op in operations)))
    for n in every_size:
        for op in operations:
            if n not in (op.sizes or sizes):
                continue
            chosen = [lib for lib in libraries if keep is None or keep(n, lib, op)]
            if chosen:
                plan.append((n, op, chosen))
    results = []
    bar = Progress(len(plan)) if progress else None
    for n in sorted({n for n, _, _ in plan}):
        w = Workload(n)
        for size, op, chosen in plan:
            if size == n:
                if bar:
                    bar.step("n=%s" % format(n, ","), op.title)
                results.extend(measure_interleaved(op, chosen, w, target, repeat))
        del w
        gc.collect()
    if bar:
        bar.finish()
    return results
