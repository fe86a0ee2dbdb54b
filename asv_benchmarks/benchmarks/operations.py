"""Every operation of ``frozenmap.bench``, for every library, as asv benchmarks.

The operations, the library adapters and the data come from
:mod:`frozenmap.bench`; this module only generates, for each entry of
``frozenmap.bench.OPERATIONS``, one asv class parametrized over the library
(frozenmap's C and pure-Python cores, dict copy-on-write, and the peers) and
the size n:

* ``Time<Op>.time_<op>`` (e.g. ``TimeSetExisting.time_set_existing``): one
  timed call performs ``Operation.asv_count`` operations (100 lookups, 100
  ``set`` calls, 10 ``|``, ...; the docstring says how many), each on the same
  base map of n items, so results compare across libraries and sizes.
* ``Track<Op>.track_<op>`` for the memory operations, in bytes (tracemalloc;
  keys and values excluded).

A library that is not installed, or that does not offer an operation, is
skipped (asv shows n/a).

Setup cost.  asv runs each parameter combination in its own process, and
re-runs ``setup`` before timed calls; the workload and the base maps are
therefore cached at module level (:func:`_workload`), so a re-run of
``setup`` costs only the inputs of one call.  ``setup_cache`` is not used: its
result is pickled to disk and unpickled in every benchmark process, which for
a map of a million items costs about as much as building it.

Sizes: 10, 1,000, 100,000 and 1,000,000, or the comma-separated list in
``FROZENMAP_ASV_SIZES`` (CI uses small sizes to keep the check short).
"""

import gc
import os

from frozenmap import bench

SIZES = [
    int(float(size))
    for size in os.environ.get("FROZENMAP_ASV_SIZES", "10,1000,100000,1000000").split(",")
    if size.strip()
]
LIBRARIES = bench.LIBRARY_NAMES

_libraries = {}
_workloads = {}


def _library(name):
    """The adapter for ``name``; NotImplementedError (asv: skipped) when unavailable."""
    if name not in _libraries:
        try:
            _libraries[name] = bench.load_library(name)
        except ImportError as exc:
            _libraries[name] = exc
    found = _libraries[name]
    if isinstance(found, Exception):
        raise NotImplementedError("%s is not available: %s" % (name, found))
    return found


def _workload(n):
    """The data for size ``n``, with its base maps, built once per process."""
    if n not in _workloads:
        _workloads[n] = bench.Workload(n)
    return _workloads[n]


class _Parametrized:
    params = (LIBRARIES, SIZES)
    param_names = ["library", "n"]
    timeout = 600
    op = None  # the bench.Operation, set by _generate


class _Time(_Parametrized):
    def setup(self, library, n):
        case = self.op.case(_library(library), _workload(n))
        if case is None:
            raise NotImplementedError("%s does not offer %s" % (library, self.op.title))
        if case.consumes:  # e.g. hash() caches: every timed call needs fresh inputs
            self.number = 1
        self.inputs = case.inputs(min(case.limit, self.op.asv_count))
        self.run = case.compile()
        self.collect = case.gc

    def time(self, library, n):
        if not self.collect:
            self.run(self.inputs)
            return
        # asv times with the GC off (as timeit does); this case keeps it on.
        was_enabled = gc.isenabled()
        gc.enable()
        try:
            self.run(self.inputs)
        finally:
            if not was_enabled:
                gc.disable()


class _Track(_Parametrized):
    unit = "bytes"

    def setup(self, library, n):
        self.library = _library(library)
        if not self.library.traced:
            raise NotImplementedError("%s allocates where tracemalloc cannot see" % library)

    def track(self, library, n):
        return self.op.measure(self.library, _workload(n))


def _generate():
    """One ``Time*``/``Track*`` class per operation, named after its key."""
    for op in bench.OPERATIONS:
        base, prefix = (_Time, "time") if op.unit == "s" else (_Track, "track")
        camel = "".join(part.capitalize() for part in op.key.split("_"))
        doc = "%s: %s" % (
            op.title,
            "bytes" if op.unit == "B" else "%d operation(s) per call" % op.asv_count,
        )
        attrs = {"op": op, "__doc__": doc}
        if op.sizes is not None:  # small maps, the nested reducer: sizes of their own
            attrs["params"] = (LIBRARIES, list(op.sizes))
        cls = type(prefix.capitalize() + camel, (base,), attrs)
        method = getattr(base, prefix)
        setattr(cls, "%s_%s" % (prefix, op.key), method)
        globals()[cls.__name__] = cls


_generate()
