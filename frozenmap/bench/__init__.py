"""Side-by-side benchmark of frozenmap against dict and the peer libraries.

Run ``python -m frozenmap.bench`` (or ``scripts/bench.sh``, which also installs
the peers).  It prints, for each operation and size, the time per operation of
each frozenmap core that imports (``frozenmap._ccore``, ``frozenmap._pycore``)
and of each installed peer, and frozenmap's ratio to the best peer::

    python -m frozenmap.bench                    # n = 1,000 / 100,000 / 1,000,000
    python -m frozenmap.bench --quick            # 1,000 and 10,000; 100,000 for the README table
    python -m frozenmap.bench --sizes 1000,1e5 --plot bench-plots --json bench.json
    python -m frozenmap.bench --load bench.json --plot bench-plots   # no re-run

How it measures
---------------
The code is organised as one table: *operations* x *libraries*.

* A :class:`Library` says how one library does each operation (``dict``
  copied on write is the baseline).  Its defaults go through the library's
  mutable builder (``thaw``/``freeze``), and each library overrides them with
  its native API where it has one (``immutables.Map.set``, ``pmap.remove``,
  ``HashTrieMap.insert``, ``frozendict.set`` ...).  An operation a library
  does not offer is ``n/a``.
* An :class:`Operation` turns a library and a :class:`Workload` (the data set
  for one size) into a :class:`Case`: a loop body such as ``m[x]`` or
  ``f(k, v)``, the names it uses, and the inputs it loops over.
* :func:`calibrate` compiles the case into a function and picks how many
  inputs one pass takes (all of them, when they fit in ``timing.PASS_SECONDS``)
  and how many passes one run takes (timeit-style auto-ranging).  The
  libraries are then run in interleaved rounds, one run of each library per
  round (:func:`measure_interleaved`), so that a drift of the machine's speed
  touches them all alike.  Runs are timed in process CPU time, which the
  other processes of a busy machine do not add to.  Each library's figure is
  the median over the rounds of the time per operation, net of the bare
  loop's own cost, with the spread (IQR / median) as a noise figure;
  frozenmap's ratio to the best peer is the median of the per-round ratios,
  shown with their range.  A row whose rounds fall on both sides of 1 for a
  frozenmap core against the best peer is measured again (the quietest
  attempt is kept), and the verdict claims a win or a loss only where every
  round agrees: otherwise the row is "within noise", or "too noisy to call".
  Garbage collection is off while timing, as in :mod:`timeit`.  Inputs an
  operation uses up (``hash()`` caches its result) are rebuilt, untimed,
  before every pass.
* Memory is measured with :mod:`tracemalloc`: bytes allocated by building the
  map from a dict (keys and values exist beforehand, so they are excluded),
  divided by n; and bytes per version kept in a history of 1,000 single-key
  updates (fewer for copy-on-write peers whose history would not fit in memory;
  the figure is per version either way), likewise for a history of new keys
  and of deletions; construction's peak (the most bytes held at once while
  building, to read against what the map keeps).  A library that allocates outside
  Python's allocator (rpds-py, in Rust) has no memory figures (``n/a``).
  PyPy has no tracemalloc: there the figure is the growth of the GC's live
  bytes across the build, with a full collection on each side.
* Two groups have sizes of their own (rows n=1 ... n=32, n=10,000),
  whatever the run's sizes: **small maps** (bytes of one map of 1, 3, 8, 16
  and 32 keys, and of one version derived from it by a set), and the
  **nested reducer** a state-keeping program runs (state -> todos -> todo of
  3 keys, 10,000 todos; toggle, rename, add and delete actions, every state
  kept): time per action and history memory per action.

Modules: :mod:`~frozenmap.bench.peers` (the libraries),
:mod:`~frozenmap.bench.operations` (the data and the operations),
:mod:`~frozenmap.bench.timing` (timing and the measuring loop),
:mod:`~frozenmap.bench.report` (the printed report and verdict),
:mod:`~frozenmap.bench.plots` (PNG charts) and :mod:`~frozenmap.bench.cli`
(the command line).  The asv suite in ``asv_benchmarks/`` reuses
:data:`OPERATIONS`, :func:`load_library` and :class:`Workload` from this package.
"""

from .cli import README_OPS, README_SIZE, main
from .operations import OPERATION_KEYS, OPERATIONS, Case, Operation, Workload
from .peers import LIBRARY_NAMES, Library, load_libraries, load_library
from .report import render_report, render_table, render_verdict
from .timing import Measurement, calibrate, measure_interleaved, time_case

__all__ = [
    "Library",
    "Workload",
    "Case",
    "Operation",
    "OPERATIONS",
    "OPERATION_KEYS",
    "LIBRARY_NAMES",
    "Measurement",
    "README_OPS",
    "README_SIZE",
    "load_library",
    "load_libraries",
    "calibrate",
    "measure_interleaved",
    "time_case",
    "render_report",
    "render_table",
    "render_verdict",
    "main",
]
