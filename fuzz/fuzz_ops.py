#!/usr/bin/env python3
"""Fuzz harness: bytes -> a sequence of frozendict operations, checked against a dict.

The bytes are decoded (``decode``) into the operation tuples of
``tests/differential_engine.py`` -- every operation of ``tests/operations.py``
that names the ``fuzz`` engine: construction, set/delete/discard, ``|``,
``-``, ``&``, evolver edits, ``diff`` and ``Diff.apply``, ``==``, ``hash``,
``repr``, iteration, lookups, nested paths, ``merge_with`` ... -- over a pool
of adversarial keys and values.  A byte picks the operation; its fields follow
(``differential_engine.fields``), each decoded by its kind.  Each sequence runs on the core under test and on
the dict model; any difference in results, orders, hashes, reprs, exception
types or messages, or an invariant violation (``_check()`` runs on every
version made) raises ``AssertionError``, which the fuzzer reports as a crash
(and saves the input).  A crash of the interpreter is, of course, also found.

The core is the C core (``FUZZ_CORE=c``, the default) or, if it does not
import or ``FUZZ_CORE=python`` is set, the pure-Python core.

Usage (see fuzz/README.md)::

    python fuzz/fuzz_ops.py [libFuzzer flags] [corpus dirs]    # atheris
    python fuzz/fuzz_ops.py --random-seconds 60                # no atheris
    python fuzz/fuzz_ops.py --replay FILE...                   # re-run inputs
    python fuzz/fuzz_ops.py --write-seeds fuzz/corpus          # regenerate seeds
"""

import hashlib
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(os.path.dirname(HERE), "tests")
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)

MAX_OPS = 64
BAD_KEY_BYTE = 0xF0  # a key byte >= this picks a bad (unhashable / failing) key


def _import_engine_and_core(instrument=None):
    """Import the engine and the chosen core (under atheris instrumentation if given)."""
    import contextlib
    import types

    ctx = instrument() if instrument is not None else contextlib.nullcontext()
    with ctx:
        import differential_engine  # noqa: F401

        wanted = os.environ.get("FUZZ_CORE", "c")
        module = None
        if wanted == "c":
            try:
                import frozenmap._ccore as module
            except ImportError as exc:
                sys.stderr.write(
                    "fuzz_ops: C core not importable (%s); fuzzing the pure core\n" % exc
                )
        if module is None:
            import frozenmap._pycore as module
    name = "c" if module.__name__.endswith("_ccore") else "python"
    core = types.SimpleNamespace(name=name, frozendict=module.frozendict, Evolver=module.Evolver)
    return differential_engine, core


de = None
CORE = None


def _ensure_loaded(instrument=None):
    global de, CORE
    if de is None:
        de, CORE = _import_engine_and_core(instrument)


def _role(kind):
    """The registry's role ``kind``; a LookupError naming an encoding this
    harness cannot read (tests/operations.py: Role.field)."""
    role = de.registry.ROLES[kind]
    if role.field not in de.registry.FIELDS:
        raise LookupError(
            "fuzz_ops: the role %r is encoded as %r, which it cannot read" % (kind, role.field)
        )
    return role


class Reader:
    """Reads small integers from the input; 0 once the bytes run out."""

    def __init__(self, data):
        self.data = data
        self.pos = 0

    def more(self):
        return self.pos < len(self.data)

    def byte(self):
        if self.pos >= len(self.data):
            return 0
        b = self.data[self.pos]
        self.pos += 1
        return b

    def key(self):
        b = self.byte()
        n_good = len(de.GOOD_KEYS)
        if b >= BAD_KEY_BYTE:
            return n_good + (b - BAD_KEY_BYTE) % len(de.BAD_KEYS)
        return b % n_good

    def value(self):
        return self.byte() % len(de.VALUES)

    def count(self, limit):
        return self.byte() % (limit + 1)

    def field(self, kind):
        """One field of an op or an edit (see differential_engine.fields),
        read as its role is encoded (tests/operations.py ROLES)."""
        role = _role(kind)
        if role.field == "index":
            return self.byte()
        if role.field == "index pair":
            return (self.byte(), self.byte())
        if role.field == "key":
            return self.key()
        if role.field == "value":
            return self.value()
        if role.field == "pairs":
            return [(self.key(), self.value()) for _ in range(self.count(role.most))]
        if role.field == "keys":
            return [self.key() for _ in range(self.count(role.most))]
        return [self.entry(de.EDITS) for _ in range(self.count(role.most))]  # "edits"

    def entry(self, table):
        code = self.byte() % len(table)
        return (code,) + tuple(self.field(kind) for kind in de.fields(table[code]))


def decode(data):
    """The operation sequence ``data`` stands for (see the module docstring)."""
    _ensure_loaded()
    r = Reader(data)
    ops = []
    while r.more() and len(ops) < MAX_OPS:
        ops.append(r.entry(de.OPS))
    return ops


def encode(ops):
    """Bytes that ``decode`` turns back into ``ops`` (for writing seeds)."""
    _ensure_loaded()
    n_good = len(de.GOOD_KEYS)
    out = bytearray()

    def key(k):
        out.append(k if k < n_good else BAD_KEY_BYTE + (k - n_good))

    def keys(ks):
        out.append(len(ks))
        for k in ks:
            key(k)

    def field(kind, f):
        encoding = _role(kind).field
        if encoding == "index":
            out.append(f % 256)
        elif encoding == "index pair":
            out.extend((f[0] % 256, f[1] % 256))
        elif encoding == "key":
            key(f)
        elif encoding == "value":
            out.append(f)
        elif encoding == "pairs":
            out.append(len(f))
            for k, v in f:
                key(k)
                out.append(v)
        elif encoding == "keys":
            keys(f)
        else:  # edits
            out.append(len(f))
            for edit in f:
                entry(de.EDITS, edit)

    def entry(table, op):
        out.append(op[0])
        for kind, f in zip(de.fields(table[op[0]]), op[1:]):
            field(kind, f)

    for op in ops:
        entry(de.OPS, op)
    return bytes(out)


def check(data):
    """Decode ``data`` and run it on the core and the model; AssertionError on a difference."""
    _ensure_loaded()
    ops = decode(data)
    if ops:
        de.check_against_model(CORE, ops)


def TestOneInput(data):  # noqa: N802 (atheris's name)
    check(data)


# --- modes ---------------------------------------------------------------------------------


def random_mode(seconds, seed=None, max_len=600):
    """Feed random bytes to ``check`` for ``seconds``; the fallback without atheris."""
    _ensure_loaded()
    rng = random.Random(seed)
    deadline = time.monotonic() + seconds
    runs = 0
    start = time.monotonic()
    while time.monotonic() < deadline:
        data = bytes(rng.getrandbits(8) for _ in range(rng.randrange(max_len)))
        try:
            check(data)
        except BaseException:
            path = os.path.join(HERE, "crash-%s" % hashlib.sha1(data).hexdigest()[:16])
            with open(path, "wb") as f:
                f.write(data)
            sys.stderr.write("fuzz_ops: failing input saved to %s\n" % path)
            raise
        runs += 1
    elapsed = time.monotonic() - start
    print(
        "fuzz_ops (random bytes, no coverage guidance): %d runs in %.0fs (%.0f/s) on the %s core, no failures"
        % (runs, elapsed, runs / max(elapsed, 1e-9), CORE.name)
    )
    return runs


def replay(paths):
    _ensure_loaded()
    n = 0
    for path in paths:
        names = (
            [os.path.join(path, f) for f in sorted(os.listdir(path))]
            if os.path.isdir(path)
            else [path]
        )
        for name in names:
            with open(name, "rb") as f:
                check(f.read())
            n += 1
    print("fuzz_ops: replayed %d inputs on the %s core, no failures" % (n, CORE.name))


def write_seeds(directory):
    """Write the seed corpus: the differential test's examples and a few long sequences."""
    _ensure_loaded()
    import test_differential

    os.makedirs(directory, exist_ok=True)
    seeds = list(test_differential.EXAMPLES)
    rng = random.Random(814)
    for _ in range(4):
        data = bytes(rng.getrandbits(8) for _ in range(400))
        seeds.append(decode(data))
    for ops in seeds:
        data = encode(ops)
        assert decode(data) == [_canonical(op) for op in ops], ops
        name = hashlib.sha1(data).hexdigest()[:16]
        with open(os.path.join(directory, "seed-" + name), "wb") as f:
            f.write(data)
    print("fuzz_ops: wrote %d seeds to %s" % (len(seeds), directory))


def _canonical(op, table=None):
    """``op`` with its byte fields reduced to a byte, as ``decode`` yields them."""
    table = de.OPS if table is None else table
    out = [op[0]]
    for kind, f in zip(de.fields(table[op[0]]), op[1:]):
        encoding = _role(kind).field
        if encoding == "index":
            f %= 256
        elif encoding == "index pair":
            f = (f[0] % 256, f[1] % 256)
        elif encoding == "edits":
            f = [_canonical(edit, de.EDITS) for edit in f]
        out.append(f)
    return tuple(out)


def main(argv):
    if "--random-seconds" in argv:
        i = argv.index("--random-seconds")
        seconds = float(argv[i + 1])
        seed = int(os.environ["FUZZ_SEED"]) if os.environ.get("FUZZ_SEED") else None
        random_mode(seconds, seed)
        return 0
    if "--replay" in argv:
        replay(argv[argv.index("--replay") + 1 :])
        return 0
    if "--write-seeds" in argv:
        write_seeds(argv[argv.index("--write-seeds") + 1])
        return 0
    import atheris

    _ensure_loaded(atheris.instrument_imports)
    sys.stderr.write(
        "fuzz_ops: fuzzing the %s core with atheris %s\n"
        % (CORE.name, getattr(atheris, "__version__", ""))
    )
    atheris.Setup(argv, TestOneInput)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
