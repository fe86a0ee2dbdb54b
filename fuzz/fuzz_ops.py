#!/usr/bin/env python3
"""Fuzz harness: bytes -> a sequence of frozendict operations, checked against a dict.

The bytes are decoded (``decode``) into the operation tuples of
``tests/differential_engine.py`` -- construction from pairs and from dicts,
set/delete/discard, ``|``, ``-``, ``&``, evolver edits, ``diff``, ``==``,
``hash``, ``repr``, iteration, lookups, ``fromkeys`` -- over a pool of
adversarial keys and values.  Each sequence runs on the core under test and on
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

    def pairs(self):
        return [(self.key(), self.value()) for _ in range(self.count(8))]

    def keys(self):
        return [self.key() for _ in range(self.count(6))]


def decode(data):
    """The operation sequence ``data`` stands for (see the module docstring)."""
    _ensure_loaded()
    r = Reader(data)
    ops = []
    while r.more() and len(ops) < MAX_OPS:
        code = r.byte() % de.N_OPS
        if code in (de.BUILD, de.BUILD_DICT):
            ops.append((code, r.pairs()))
        elif code == de.SET:
            ops.append((code, r.byte(), r.key(), r.value()))
        elif code in (de.DELETE, de.DISCARD, de.LOOKUP):
            ops.append((code, r.byte(), r.key()))
        elif code in (de.OR, de.DIFF, de.DIFF_DICT, de.EQ):
            ops.append((code, r.byte(), r.byte()))
        elif code == de.OR_DICT:
            ops.append((code, r.byte(), r.pairs()))
        elif code in (de.SUB, de.AND):
            ops.append((code, r.byte(), r.keys()))
        elif code == de.EVOLVE:
            ver = r.byte()
            edits = [
                (r.byte() % de.N_EDITS, r.key(), r.value(), r.pairs()) for _ in range(r.count(12))
            ]
            ops.append((code, ver, edits))
        elif code in (de.HASH, de.REPR, de.ITER):
            ops.append((code, r.byte()))
        elif code == de.HOSTILE:
            ops.append((code, r.byte(), r.byte(), r.pairs()))
        else:  # FROMKEYS
            ops.append((code, r.keys(), r.value()))
    return ops


def encode(ops):
    """Bytes that ``decode`` turns back into ``ops`` (for writing seeds)."""
    _ensure_loaded()
    n_good = len(de.GOOD_KEYS)
    out = bytearray()

    def key(k):
        out.append(k if k < n_good else BAD_KEY_BYTE + (k - n_good))

    def pairs(ps):
        out.append(len(ps))
        for k, v in ps:
            key(k)
            out.append(v)

    def keys(ks):
        out.append(len(ks))
        for k in ks:
            key(k)

    for op in ops:
        code = op[0]
        out.append(code)
        if code in (de.BUILD, de.BUILD_DICT):
            pairs(op[1])
        elif code == de.SET:
            out.append(op[1] % 256)
            key(op[2])
            out.append(op[3])
        elif code in (de.DELETE, de.DISCARD, de.LOOKUP):
            out.append(op[1] % 256)
            key(op[2])
        elif code in (de.OR, de.DIFF, de.DIFF_DICT, de.EQ):
            out += bytes([op[1] % 256, op[2] % 256])
        elif code == de.OR_DICT:
            out.append(op[1] % 256)
            pairs(op[2])
        elif code in (de.SUB, de.AND):
            out.append(op[1] % 256)
            keys(op[2])
        elif code == de.EVOLVE:
            out.append(op[1] % 256)
            out.append(len(op[2]))
            for ecode, k, v, ps in op[2]:
                out.append(ecode)
                key(k)
                out.append(v)
                pairs(ps)
        elif code in (de.HASH, de.REPR, de.ITER):
            out.append(op[1] % 256)
        elif code == de.HOSTILE:
            out += bytes([op[1] % 256, op[2] % 256])
            pairs(op[3])
        else:
            keys(op[1])
            out.append(op[2])
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


def _canonical(op):
    """``op`` with version indexes reduced to a byte, as ``decode`` yields them."""
    code = op[0]
    if code in (de.BUILD, de.BUILD_DICT, de.FROMKEYS):
        return op
    op = list(op)
    op[1] %= 256
    if code in (de.OR, de.DIFF, de.DIFF_DICT, de.EQ, de.HOSTILE):
        op[2] %= 256
    return tuple(op)


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
