"""The user calls of every operation, recorded on both cores and compared.

Spec §5 says the two cores behave identically, and a key's ``__eq__`` is
behaviour: it may count, raise or edit.  This engine runs each entry of
``tests/operations.py`` that names the ``transcript`` engine on the C core and
on the pure core with keys, values, positions and functions that write every
call into one shared log (``keys.CALLS``: ``__hash__`` with the object's
label, ``__eq__``/``__ne__`` with both labels, the called side first,
``__index__``, a function's arguments, and the finalizers of keys and values
the operation drops), and compares the two logs -- the *transcripts* -- line
by line, and the results.

A ``Case`` describes the operands as plain numbers, so the same description
builds the same objects, with the same labels, on either core:

* a *base* map (``MapSpec``) of 0-100 keys, its sizes drawn near the flat
  form's limit (``FLAT_MAX`` = 32 keys) half of the time; its keys are spread
  (``s7``), share one full hash (``c3``: a collision), or have hashes that
  differ only in their high bits (``h5``: a path as deep as the trie goes);
  a *plain* map's keys are exact ints with those same hashes (they run no
  user code when hashed, so a plain map of more than ``FLAT_MAX`` keys is
  held in the table form, a dict), and a new key picked for it is a plain
  int or a recording key, in turn;
* the other operand, either *related* (derived from the base by a few steps
  -- set, add, delete, ``|`` with a small map -- so the two share structure
  and key objects, and may sit on either side of the limit) or *unrelated*
  (built apart: a key it shares with the base is an equal object of its own,
  a *twin*, labelled with a prime: ``s7'``);
* which of the two is the receiver (both directions: a flat receiver with a
  trie operand and the other way round), the edits made to an Evolver
  started from the receiver before the operation, and one choice for each
  argument role (``operations.py`` lists the roles; here ``keys`` and
  ``pairs`` are either a list or the other operand itself).

``run(core, operation, case)`` builds the operands with recording off, then
records the call, then what each release frees (``RELEASES``: the
arguments, the subject, the result, the versions), and last what a
collection of the youngest generation frees (nothing, unless a core left
garbage in a cycle).  The finalizers one release runs are compared as a
set: which objects a release frees, and between which other calls, is
behaviour; the order among them is the order of the memory they lay in (a
trie's nodes or a tuple), which nothing promises.
``compare(operation, case, cores)`` returns None or a message naming the
operation, the case and the first differing transcript lines.

Used by ``tests/test_transcripts.py`` (hypothesis draws the cases; a seeded
sweep draws thousands more from ``random.Random``).  ``draw_case`` takes
the drawing function, so the two share one description of the space.
"""

import gc
import random
import sys
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable, Optional, Tuple

import differential_engine as de
import operations as registry
from keys import CALLS, RecordingFunction, RecordingIndex, RecordingKey, RecordingValue

from frozenmap._pycore.flat import FLAT_MAX

OPERATIONS = registry.for_engine(registry.TRANSCRIPT)
"""The operations this engine runs, in the registry's order."""

SPREAD, COLLIDING, HIGH_BITS = "s", "c", "h"
UNIVERSE = {SPREAD: 160, COLLIDING: 24, HIGH_BITS: 24}
"""How many keys of each kind there are to draw from (identities s0..s159, ...)."""

COLLIDING_HASH = 0x2C1B3C6D
"""The one full hash every colliding key has."""
HIGH_BITS_LOW = 0x15
"""The low bits every high-bits key has; its index sets bits 54 and up."""


@lru_cache(maxsize=None)
def key_hash(identity: str) -> int:
    """The hash of the key named ``identity`` (a kind letter and an index)."""
    kind, index = identity[0], int(identity[1:])
    if kind == COLLIDING:
        return COLLIDING_HASH
    if kind == HIGH_BITS:
        return HIGH_BITS_LOW | (index << 54)
    return ((index + 1) * 0x9E3779B97F4A7C15) % (1 << 61)  # (never -1)


PLAIN_MODULUS = sys.hash_info.modulus
"""An int's hash is the int modulo this (so n and n + PLAIN_MODULUS collide)."""


def plain_key(identity: str) -> int:
    """A new int object whose hash is ``key_hash(identity)``: the plain key
    named ``identity`` (an exact int: hashing it runs no user code).  Each
    call makes a new object, so a twin is an equal int of its own."""
    kind, index = identity[0], int(identity[1:])
    if kind == COLLIDING:  # (one hash, distinct ints)
        return COLLIDING_HASH + (index + 1) * PLAIN_MODULUS
    return key_hash(identity) % PLAIN_MODULUS + PLAIN_MODULUS


# --- the description ---------------------------------------------------------------------


@dataclass(frozen=True)
class MapSpec:
    """A map built from scratch: ``size`` keys chosen and ordered by ``seed``,
    ``colliding`` of them sharing one hash, ``high`` with high-bit hashes;
    ``plain`` keys are ints (see ``plain_key``), built from a dict when the
    seed is odd and from pairs when it is even."""

    size: int
    seed: int
    colliding: int = 0
    high: int = 0
    plain: bool = False

    def identities(self):
        return _identities(self)

    def contents(self):
        return _contents(self)


@lru_cache(maxsize=4096)
def _identities(spec):
    """The identities of ``spec``'s keys, in insertion order (the same on every call)."""
    rng = random.Random(spec.seed)
    colliding = min(spec.colliding, spec.size, UNIVERSE[COLLIDING])
    high = min(spec.high, spec.size - colliding, UNIVERSE[HIGH_BITS])
    spread = spec.size - colliding - high
    chosen = (
        ["%s%d" % (COLLIDING, i) for i in rng.sample(range(UNIVERSE[COLLIDING]), colliding)]
        + ["%s%d" % (HIGH_BITS, i) for i in rng.sample(range(UNIVERSE[HIGH_BITS]), high)]
        + ["%s%d" % (SPREAD, i) for i in rng.sample(range(UNIVERSE[SPREAD]), spread)]
    )
    rng.shuffle(chosen)
    return tuple(chosen)


@lru_cache(maxsize=4096)
def _contents(spec):
    """The contents of ``spec``'s values (0-3: equal values made apart are common)."""
    rng = random.Random(spec.seed ^ 0x5A5A)
    return tuple(rng.randrange(4) for _ in range(spec.size))


# A step: ("set", pick, content) gives the pick-th key (modulo the size) a new
# value; ("add", identity, content) adds a key (a twin if it is there);
# ("delete", pick); ("or", MapSpec): | with a map built apart.
Step = Tuple


@dataclass(frozen=True)
class KeyPick:
    """A key argument: the ``n``-th stored key of the subject (``"stored"``), a
    twin of it (``"twin"``), or a new key (``"new"``: identity ``n``)."""

    source: str
    n: int


@dataclass(frozen=True)
class Case:
    """Everything an operation's operands are built from (see the module docstring)."""

    base: MapSpec
    related: bool
    steps: Tuple[Step, ...]  # related: from the base to the other operand
    apart: MapSpec  # unrelated: the other operand
    swap: bool  # the receiver is the other operand, and the base the operand
    evolver_edits: Tuple[Step, ...]  # on an Evolver of the receiver, before the operation
    key: KeyPick
    path_tail: Optional[KeyPick]
    value: int
    as_version: bool  # keys, pairs: the operand itself, not a list
    fn: int
    position: object  # an int, or a bool, None or float (differential_engine.POSITIONS)
    span: Tuple[object, object]  # (a position or None, the same)


def _size(draw):
    kind = draw(0, 3)
    if kind <= 1:
        return draw(FLAT_MAX - 3, FLAT_MAX + 3)
    if kind == 2:
        return draw(0, 6)
    return draw(0, 100)


def _map_spec(draw, size=None):
    size = _size(draw) if size is None else size
    colliding = (0, 0, 2, 5, 12)[draw(0, 4)]
    high = (0, 0, 2, 6)[draw(0, 3)]
    return MapSpec(size, draw(0, 2**16), colliding, high, plain=draw(0, 1) == 0)


def _identity(draw):
    kind = (SPREAD, SPREAD, COLLIDING, HIGH_BITS)[draw(0, 3)]
    return "%s%d" % (kind, draw(0, UNIVERSE[kind] - 1))


def _step(draw, with_or=True):
    kind = draw(0, 3 if with_or else 2)
    if kind == 0:
        return ("set", draw(0, 99), draw(0, 3))
    if kind == 1:
        return ("add", _identity(draw), draw(0, 3))
    if kind == 2:
        return ("delete", draw(0, 99))
    return ("or", _map_spec(draw, size=draw(0, 8) if draw(0, 1) else draw(0, 40)))


def _key_pick(draw):
    source = ("stored", "stored", "twin", "new")[draw(0, 3)]
    return KeyPick(source, draw(0, 99))


def _position(draw):
    """A position: one of the differential engine's (in and out of range for
    small maps, beyond a C Py_ssize_t, a bool, None or a float), or one in
    or just out of range of the maps here (up to 100 keys and a few more)."""
    kind = draw(0, 2)
    if kind == 0:
        return de.POSITIONS[draw(0, len(de.POSITIONS) - 1)]
    if kind == 1:
        return draw(-4, 4)
    return draw(-110, 110)


def draw_case(draw: Callable[[int, int], int]) -> Case:
    """A Case from ``draw(lo, hi)``, which returns an int in [lo, hi]."""
    base = _map_spec(draw)
    related = draw(0, 2) > 0
    steps = tuple(_step(draw) for _ in range(draw(1, 4))) if related else ()
    apart = _map_spec(draw) if not related else MapSpec(0, 0)
    if not related and draw(0, 1):  # (a plain base meets a plain map built apart)
        apart = replace(apart, plain=base.plain)
    swap = bool(draw(0, 1))
    evolver_edits = tuple(_step(draw, with_or=False) for _ in range(draw(0, 3)))
    key = _key_pick(draw)
    path_tail = _key_pick(draw) if draw(0, 2) == 0 else None
    span = tuple(None if draw(0, 3) == 0 else _position(draw) for _ in range(2))
    return Case(base, related, steps, apart, swap, evolver_edits, key, path_tail,
                value=draw(0, 3), as_version=bool(draw(0, 1)),
                fn=draw(0, len(registry.FN_POOL) - 1), position=_position(draw),
                span=span)  # fmt: skip


def random_case(rng: random.Random) -> Case:
    """A Case drawn from ``rng`` (the seeded sweep)."""
    return draw_case(rng.randint)


# --- building the operands on one core ----------------------------------------------------


class _Builder:
    """Makes the keys, values and maps of a Case on one core, with the same
    labels on every core (a counter numbers the values; a key's label is its
    identity, with a prime for each equal key made before it).  In a case
    whose base is plain, the keys it makes are plain too (but for half of
    the new keys picked: see ``key_pick``)."""

    def __init__(self, core, plain=False):
        self.core = core
        self.plain = plain
        self.values = 0
        self.twins = {}
        self.plain_identities = {}

    def identity(self, key):
        """The identity of a key this builder made (a recording key or a plain int)."""
        if type(key) is int:
            return self.plain_identities[key]
        return key.identity

    def key(self, identity, plain=None):
        if self.plain if plain is None else plain:
            made = plain_key(identity)
            self.plain_identities[made] = identity
            return made
        made = self.twins.get(identity, 0)
        self.twins[identity] = made + 1
        return RecordingKey(identity, key_hash(identity), identity + "'" * made)

    def value(self, content):
        self.values += 1
        return RecordingValue(content, "v%d.%d" % (content, self.values))

    def map(self, spec):
        pairs = [
            (self.key(identity, spec.plain), self.value(content))
            for identity, content in zip(spec.identities(), spec.contents())
        ]
        if spec.plain and spec.seed % 2:
            return self.core.frozendict(dict(pairs))
        return self.core.frozendict(pairs)

    def derive(self, fd, step):
        """The frozendict ``fd`` after one step."""
        keys = list(fd)
        if step[0] == "or":
            return fd | self.map(step[1])
        key, value = self._step_key(step, keys)
        if key is None:
            return fd
        return fd.delete(key) if value is None else fd.set(key, value)

    def edit(self, evolver, steps, keys):
        """Make ``steps`` (no ``|``) on ``evolver``; ``keys`` lists its keys in
        order and is kept so (iterating the Evolver would end its in-place
        ownership of the nodes it copied: the operation is to meet them)."""
        for step in steps:
            key, value = self._step_key(step, keys)
            if key is None:
                continue
            if value is None:
                del evolver[key]
                keys[:] = [k for k in keys if k is not key]  # (no __eq__)
            else:
                if self.identity(key) not in {self.identity(k) for k in keys}:
                    keys.append(key)
                evolver[key] = value

    def _step_key(self, step, keys):
        """(key, new value or None to delete) of a set, add or delete step;
        (None, None) for a delete from nothing."""
        kind = step[0]
        if kind == "set" and keys:
            return keys[step[1] % len(keys)], self.value(step[2])
        if kind in ("set", "add"):
            identity = step[1] if kind == "add" else "s%d" % step[1]
            return self.key(identity), self.value(step[2])
        if kind == "delete":
            return (keys[step[1] % len(keys)] if keys else None), None
        raise AssertionError("no such step: %r" % (step,))

    def key_pick(self, pick, keys):
        """The key ``pick`` names, among ``keys`` (the subject's, in order)."""
        if pick.source == "new" or not keys:
            kind = (SPREAD, COLLIDING, HIGH_BITS)[pick.n % 3]
            identity = "%s%d" % (kind, pick.n // 3 % UNIVERSE[kind])
            return self.key(identity, self.plain and pick.n % 2 == 0)
        key = keys[pick.n % len(keys)]
        if pick.source == "stored":
            return key
        return self.key(self.identity(key), type(key) is int)


def _versions(builder, case):
    """[receiver, operand, every version made on the way]: the base and the
    other operand in the case's direction, then the versions between them
    (kept until the end: see ``_run``)."""
    base = builder.map(case.base)
    made = []
    if case.related:
        other = base
        for step in case.steps:
            made.append(other)
            other = builder.derive(other, step)
    else:
        other = builder.map(case.apart)
    return ([other, base] if case.swap else [base, other]) + made


def _arguments(builder, entry, case, receiver, operand, keys):
    """The objects the entry's roles stand for (operations.py lists the roles)."""
    versions = [operand, receiver]
    made = []
    for role in entry.args:
        if role == "key":
            made.append(builder.key_pick(case.key, keys))
        elif role == "value":
            made.append(builder.value(case.value))
        elif role == "pairs":
            made.append(operand if case.as_version else list(operand.items()))
        elif role == "keys":
            made.append(operand if case.as_version else list(operand))
        elif role in ("mapping", "other"):
            made.append(dict(operand.items()))
        elif role == "version":
            made.append(versions.pop(0) if versions else operand)
        elif role == "path":
            path = [builder.key_pick(case.key, keys)]
            if case.path_tail is not None:
                path.append(builder.key_pick(case.path_tail, keys))
            made.append(path)
        elif role == "fn":
            made.append(RecordingFunction(registry.FN_POOL[case.fn], "fn%d" % case.fn))
        elif role == "position":
            made.append(_recording_position(case.position, "position"))
        elif role == "span":
            made.append(tuple(_recording_position(bound, name)
                              for bound, name in zip(case.span, ("start", "stop"))))  # fmt: skip
        else:
            raise AssertionError("the transcript engine has no role %r" % (role,))
    return made


def _recording_position(position, label):
    """An int position as a RecordingIndex; anything else as it is."""
    if type(position) is int:
        return RecordingIndex(position, label)
    return position


# --- running one operation -----------------------------------------------------------------


def norm(obj):
    """A comparable description of a result, by labels; never calls user code."""
    label = getattr(type(obj), "_transcript_label", None)
    if label is not None:
        return ("obj", label(obj))
    t = type(obj)
    if t in (int, str, bool, float, type(None)):
        return (t.__name__, repr(obj))
    if t in (tuple, list):
        return (t.__name__,) + tuple(norm(x) for x in obj)
    if t.__name__ == "Diff":
        return ("Diff",) + tuple(norm(part) for part in obj)
    if t.__name__ in ("frozendict", "Evolver") or t is dict:
        return (t.__name__,) + tuple((norm(k), norm(v)) for k, v in obj.items())
    return ("?", t.__name__)


@dataclass
class Outcome:
    """What one core did: the observation of the result, and the transcript."""

    result: tuple
    transcript: list


class _Paused:
    """Recording off for a moment (the engine's own checks and reads)."""

    def __enter__(self):
        self.was = CALLS.recording
        CALLS.recording = False

    def __exit__(self, *exc_info):
        CALLS.recording = self.was


def _check(core, obj):
    with _Paused():
        if isinstance(obj, (core.frozendict, core.Evolver)):
            obj._check()
        elif type(obj).__name__ == "Diff":
            for part in obj:
                part._check()


RELEASES = ("arguments", "subject", "result", "versions")
"""What the engine drops after the call, in this order (each under a mark).
The result goes before the versions it was made from: when a version keeps
another's replaced values alive, those die with the versions on either core,
so the transcript shows what the operation drops, not how versions share."""


def run(core, entry, case: Case, releases=RELEASES) -> Outcome:
    """Run ``entry`` on ``core`` with the operands ``case`` describes, then
    drop what it held in the order ``releases`` gives."""
    gc_was_enabled = gc.isenabled()
    gc.disable()  # (a collection must not run finalizers of one case in another)
    try:
        return _run(core, entry, case, releases)
    finally:
        CALLS.stop()
        if gc_was_enabled:
            gc.enable()


def _run(core, entry, case, releases):
    builder = _Builder(core, case.base.plain)
    # Everything the operation can reach is held here and nowhere else, so
    # that each release below frees exactly what it held last.
    # The versions made between the base and the other operand are held too:
    # a version that shares another's storage may keep that one's replaced
    # values alive, and those must die in the same release on both cores.
    held = {"versions": _versions(builder, case)}
    receiver, operand = held["versions"][:2]
    keys = list(receiver if entry.on != "type" else operand)
    if entry.on == "Evolver":
        held["subject"] = receiver.evolve()
        builder.edit(held["subject"], case.evolver_edits, keys)
    elif entry.on == "frozendict":
        held["subject"] = receiver
    else:
        held["subject"] = core.frozendict
    held["arguments"] = _arguments(builder, entry, case, receiver, operand, keys)
    del receiver, operand, keys
    gc.collect(0)  # (the building's own garbage, before recording)

    CALLS.start()
    try:
        held["result"] = entry.call(core, held["subject"], *held["arguments"])
    except Exception as exc:
        with _Paused():
            observed = ("raise", type(exc).__name__, str(exc))
    else:
        with _Paused():
            result = held["result"]
            _check(core, result)
            observed = ("ok", norm(result))
            if entry.makes:
                observed += (tuple(result is version for version in held["versions"][:2]),)
            del result
    if entry.on == "Evolver":
        with _Paused():
            _check(core, held["subject"])
            observed += (norm(held["subject"]),)
    for part in releases:
        CALLS.mark("drop", part)
        held.pop(part, None)
    CALLS.mark("collect")
    gc.collect(0)
    return Outcome(observed, CALLS.stop())


def canonical(transcript):
    """The transcript with each run of finalizers sorted (see the module docstring)."""
    out = []
    run_start = 0
    for entry in transcript:
        if entry[0] != "del":
            if len(out) - run_start > 1:
                out[run_start:] = sorted(out[run_start:])
            out.append(entry)
            run_start = len(out)
        else:
            out.append(entry)
    if len(out) - run_start > 1:
        out[run_start:] = sorted(out[run_start:])
    return out


def _line(entry):
    return " ".join(entry)


def difference(outcomes) -> Optional[str]:
    """None when every core's outcome is the same; else what differs first.

    ``outcomes`` maps a core's name to its Outcome.
    """
    names = list(outcomes)
    first = outcomes[names[0]]
    for name in names[1:]:
        other = outcomes[name]
        if other.result != first.result:
            return "results differ:\n  %s: %r\n  %s: %r" % (
                names[0], first.result, name, other.result)  # fmt: skip
        a, b = canonical(first.transcript), canonical(other.transcript)
        if a != b:
            at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            text = ["transcripts differ at line %d (%d lines on %s, %d on %s):"
                    % (at, len(a), names[0], len(b), name)]  # fmt: skip
            for core_name, lines in ((names[0], a), (name, b)):
                text.append("  %s:" % core_name)
                for i in range(max(0, at - 3), min(len(lines), at + 6)):
                    text.append("   %s%4d  %s" % (">" if i == at else " ", i, _line(lines[i])))
            return "\n".join(text)
    return None


def compare(entry, case: Case, cores, releases=RELEASES) -> Optional[str]:
    """None when ``entry`` makes the same calls with the same result on every
    core for ``case``; else a message naming the operation, the case and the
    first differing lines."""
    outcomes = {core.name: run(core, entry, case, releases) for core in cores}
    found = difference(outcomes)
    if found is None:
        return None
    return "%s: the cores differ\ncase: %r\n%s" % (entry.name, case, found)
