"""How a case is timed, and the measuring loop over sizes, operations and libraries.

Runs are timed with the process's CPU time (:func:`time.process_time`), not
wall time: on a busy machine the slices other processes take while a run
waits for the processor add to wall time, never to CPU time.  The two agree
on an idle machine.
"""

import gc
import math
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

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
    attempts: int = 1  # measurements of the row made (a noisy row is measured again)


#: The clock timed runs read (see the module's docstring).
clock = time.process_time
#: What :data:`clock` measures, for the report.
CLOCK_NAME = "process CPU time"
_clock_cost: List[float] = []


def clock_cost() -> float:
    """Seconds one reading of :data:`clock` adds to a timed interval (the least
    of a few measurements, made once): CPU time is read by a system call,
    which costs about a microsecond where wall time costs a tenth of that."""
    if not _clock_cost:
        best = math.inf
        for _ in range(5):
            start = clock()
            for _ in range(200):
                clock()
            best = min(best, (clock() - start) / 201)
        _clock_cost.append(best)
    return _clock_cost[0]


def _passes(
    run, xs_source, count: int, passes: int, consumes: bool, collect: bool = False
) -> float:
    """Seconds for ``passes`` passes of ``run``; fresh inputs per pass if
    ``consumes``.  The cyclic GC is off while timed (as ``timeit`` does)
    unless ``collect``: then it runs over what the passes make only."""
    timer = clock
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
    bare loop's time (``overhead``: same inputs, body ``pass``, and the clock's
    own readings when each pass is timed apart) is subtracted.
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
        """One run: seconds per operation.

        A run of fewer than :data:`WARM_UP_BELOW` passes begins with one more,
        untimed: the other libraries' runs of the round (interleaved) leave
        the caches and the allocator's free memory to whatever they did, and a
        run of many passes spreads that first pass's extra cost thin, where a
        run of one pass would be nothing else (a map of 100,000 keys built
        once into memory the allocator just gave back to the system).
        """
        case = self.case
        if self.passes < WARM_UP_BELOW:
            _passes(self.run, self.inputs, self.count, 1, case.consumes, case.gc)
        elapsed = _passes(self.run, self.inputs, self.count, self.passes, case.consumes, case.gc)
        ops = self.passes * self.count * self.case.scale
        return max(elapsed - self.overhead, 0.0) / ops


#: A run of fewer passes than this begins with an untimed one (:meth:`Timer.once`).
WARM_UP_BELOW = 4
#: A pass takes as many inputs (up to the case's limit) as last this many
#: seconds, or a run's target when that is shorter.
PASS_SECONDS = 0.01
#: Inputs timed to estimate the time per input of a fast operation (the first
#: call, which also warms up, costs more than the ones after it).
PROBE = 16


def calibrate(case: Case, target: float, repeat: int, max_seconds: float = 15.0) -> Timer:
    """A :class:`Timer` for ``case`` whose runs last about ``target`` seconds.

    A pass takes the case's ``limit`` inputs when they fit in
    :data:`PASS_SECONDS` (or ``target``, if shorter), fewer otherwise; a run
    makes as many passes as fit in ``target`` (at least one).  Fewer than
    ``repeat`` runs are asked for when they would take more than
    ``max_seconds`` (never fewer than 3).
    """
    run = case.compile()
    bare = case.compile("pass")
    one = _passes(run, case.inputs, 1, 1, case.consumes, case.gc)  # also warms up
    budget = min(PASS_SECONDS, target)
    if case.whole:
        count = case.limit
    else:
        per_input = one
        probe = min(case.limit, PROBE)
        if probe > 1 and one * probe < budget:
            per_input = _passes(run, case.inputs, probe, 1, case.consumes, case.gc) / probe
        count = max(1, min(case.limit, int(budget / max(per_input, 1e-9))))
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
    if case.consumes:  # each pass is timed apart: one more clock reading per pass
        overhead += (passes - 1) * clock_cost()
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


#: A row is measured again (see :func:`measure_interleaved`) when a frozenmap
#: core's per-round ratios to the best peer are not all beyond this factor on
#: the same side of 1 while their medians differ by more: the rounds cannot
#: call it (the verdict's rule, :meth:`~frozenmap.bench.report.Ratio.call`).
RETRY_APART = 1.05


def _spread(runs: Dict[int, List[float]]) -> float:
    """The widest noise (IQR / median) of the libraries' ``runs`` in one attempt."""
    return max((_noise(r, statistics.median(r)) for r in runs.values() if r), default=0.0)


def _unsettled(results: Sequence[Measurement], runs: Dict[int, List[float]], cores) -> bool:
    """True when one attempt's rounds cannot call the row: a frozenmap core
    against the best peer (the least median) whose medians differ by more
    than :data:`RETRY_APART`, though not every round's ratio does (on the
    same side of 1)."""
    medians = {i: statistics.median(r) for i, r in runs.items() if r}
    peers = [i for i in medians if results[i].lib not in cores]
    if not peers:
        return False
    best = min(peers, key=lambda i: medians[i])
    for i in medians:
        if results[i].lib not in cores:
            continue
        ratios = [a / b for a, b in zip(runs[i], runs[best]) if b > 0]
        if not ratios:
            continue
        apart = medians[i] / max(medians[best], 1e-300)
        settled = min(ratios) > RETRY_APART or max(ratios) < 1 / RETRY_APART
        if not settled and not 1 / RETRY_APART <= apart <= RETRY_APART:
            return True
    return False


def measure_interleaved(
    op: Operation,
    libraries: Sequence[Library],
    w: Workload,
    target: float,
    repeat: int,
    retries: int = 0,
    tick: Optional[Callable[[str], None]] = None,
    max_seconds: float = 15.0,
    retry_seconds: float = math.inf,
) -> List[Measurement]:
    """Run one operation for each of ``libraries`` on one workload, one result each.

    Timed operations run in interleaved rounds: every round makes one run of
    each library (in an order that rotates from round to round), so that
    ``runs[i]`` of two libraries were measured side by side and their ratio
    is fair even when the machine's speed drifts.  A library that asks for
    fewer runs (a slow one) sits out the last rounds.

    A row whose rounds cannot call it (:func:`_unsettled`: a frozenmap
    core's ratio to a peer on both sides of 1, though their medians differ)
    is measured again, all its libraries in fresh rounds, up to ``retries``
    times (and only when an attempt takes at most ``retry_seconds``); the attempt whose runs spread least is kept (the choice looks at
    the noise only, never at who is faster), and ``attempts`` says how many
    were made.  A library gets fewer rounds when its runs would take more
    than ``max_seconds`` (:func:`calibrate`).  ``tick(detail)`` is called as
    the work goes on (the library being set up, the round), for progress
    lines.
    """
    results = [Measurement(op.key, w.n, lib.name, None, op.unit) for lib in libraries]
    cores = {lib.name for lib in libraries if getattr(lib, "is_frozenmap", False)}
    timers = []  # (index in results, timer)
    for i, (lib, result) in enumerate(zip(libraries, results)):
        if tick:
            tick(lib.name)
        if op.measure is not None:
            result.value = op.measure(lib, w)
            continue
        case = op.case(lib, w) if op.case is not None else None
        if case is not None:
            timers.append((i, calibrate(case, target, repeat, max_seconds)))
    if not timers:
        return results
    rounds = max(timer.runs for _, timer in timers)

    def attempt(label: str) -> Dict[int, List[float]]:
        runs: Dict[int, List[float]] = {i: [] for i, _ in timers}
        for r in range(rounds):
            if tick:
                tick("%sround %d of %d" % (label, r + 1, rounds))
            shift = r % len(timers)
            for i, timer in timers[shift:] + timers[:shift]:
                if r < timer.runs:
                    runs[i].append(timer.once())
        return runs

    started = clock()
    kept = attempt("")
    cost = clock() - started
    attempts = 1
    while attempts <= retries and cost <= retry_seconds and _unsettled(results, kept, cores):
        attempts += 1
        again = attempt("noisy, measured again (%d of %d): " % (attempts - 1, retries))
        if _spread(again) < _spread(kept):
            kept = again
    for i, timer in timers:
        result = results[i]
        result.runs = kept[i]
        result.value = statistics.median(result.runs)
        result.noise = _noise(result.runs, result.value)
        result.per_pass, result.passes = timer.count, timer.passes
        result.attempts = attempts
    return results


class Progress:
    """Progress on stderr: one updating line on a terminal; otherwise a line when
    the size or library changes and every few seconds, each naming the
    operation being measured (and, within a long one, what it is at)."""

    EVERY = 3.0  # seconds between lines when stderr is not a terminal

    def __init__(self, total: int):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.tty = sys.stderr.isatty()
        self.last_group: Optional[str] = None
        self.last_line = -self.EVERY
        self.current = ""

    def _write(self, line: str, due: bool, elapsed: float) -> None:
        if self.tty:
            sys.stderr.write("\r\x1b[K" + line[:150])
        elif due:
            sys.stderr.write(line + "\n")
            self.last_line = elapsed
        sys.stderr.flush()

    def step(self, group: str, detail: str) -> None:
        """A new step: ``group`` (the size) and ``detail`` (the operation)."""
        self.done += 1
        elapsed = time.monotonic() - self.start
        self.current = "%s: %s" % (group, detail)
        line = "[%*d/%d %3.0fs] %s" % (
            len(str(self.total)),
            self.done,
            self.total,
            elapsed,
            self.current,
        )
        self._write(
            line, group != self.last_group or elapsed - self.last_line >= self.EVERY, elapsed
        )
        self.last_group = group

    def tick(self, detail: str) -> None:
        """Where the current step is (``detail``: a library, a round); off a
        terminal, a line only when the last one is a few seconds old, so
        that a long step is never silent."""
        elapsed = time.monotonic() - self.start
        line = "[%*d/%d %3.0fs] %s (%s)" % (
            len(str(self.total)),
            self.done,
            self.total,
            elapsed,
            self.current,
            detail,
        )
        self._write(line, elapsed - self.last_line >= self.EVERY, elapsed)

    def finish(self) -> None:
        if self.tty:
            sys.stderr.write("\r\x1b[K")
        sys.stderr.write("done in %.0f s\n" % (time.monotonic() - self.start))


def run(
    sizes,
    libraries,
    operations,
    target,
    repeat,
    progress=True,
    keep=None,
    retries=0,
    max_seconds=15.0,
    retry_seconds=math.inf,
) -> List[Measurement]:
    """Measure every operation for every library at every size.

    ``keep(n, lib, op)``, when given, says which of those to measure.  An
    operation with its own sizes (``op.sizes``: small maps, the nested
    reducer) is measured at those instead.  The libraries measured for one
    operation at one size are timed together, in interleaved rounds
    (:func:`measure_interleaved`, which measures a noisy row again up to
    ``retries`` times when an attempt costs at most ``retry_seconds``, and
    gives a library at most ``max_seconds`` of runs).
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
                results.extend(
                    measure_interleaved(
                        op,
                        chosen,
                        w,
                        target,
                        repeat,
                        retries=retries,
                        tick=bar.tick if bar else None,
                        max_seconds=max_seconds,
                        retry_seconds=retry_seconds,
                    )
                )
        del w
        gc.collect()
    if bar:
        bar.finish()
    return results
