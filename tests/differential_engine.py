"""Operation sequences run on a core and on a dict model, observed the same way.

Shared by ``tests/test_differential.py`` (hypothesis draws the operations) and
``fuzz/fuzz_ops.py`` (atheris bytes are decoded into them).  An operation is a
plain tuple of small integers and lists of them (indexes into fixed pools of
keys and values, and into the list of versions made so far), so the same
sequence can be replayed on the C core, the pure core and ``DictModel``.

``run(backend, ops)`` returns one observation per operation.  An observation
is a tuple built from ``norm()`` of everything the operation returned (items in
order, which key object was kept, hashes, reprs, lengths) or, when it raised,
``("raise", type name, message)``.  Observations are split in two: what a dict
model can predict, and what only two cores can be compared on (identity
shortcuts like ``fd.set(k, same) is fd``, and the outcome of comparisons whose
order of ``__eq__`` calls differs from a dict's).

The operations are the entries of ``tests/operations.py`` that name the
``differential`` engine, in table order: an op is ``(code, *fields)`` where
``code`` indexes ``OPS`` and the fields are, in order, the index of the version
it runs on (for an operation on a frozendict) and one field per argument role
(``FIELDS`` says what each role is encoded as: a key index, a list of pairs
of indexes, a version index, an index into ``POSITIONS`` or a pair of them ...).  ``frozendict.evolve`` takes a list of edits
encoded the same way over ``EDITS`` (the registry's Evolver operations), and
``hostile operand`` feeds every operation that reads another mapping (==,
|, the constructor, update(), diff, and x | fd) a hostile operand:
HOSTILE_TYPES[h] made from pairs (dict subclasses and mapping-likes whose
methods return wrong types, raise, lie or edit themselves).

Every op that makes a version appends it to the versions list; version
indexes are taken modulo its length.  ``code(name)`` and ``edit_code(name)``
give an operation's code, for hand-written sequences.
"""

import math
import sys

import operations as registry
from fault_helpers import M61
from keys import CrashError, EqBomb, HashBomb, HashKey, TypeErrorHash
from operations import DictModel, model_hash  # noqa: F401  (model_hash: re-exported)

NAN = float("nan")
EQBOMB = EqBomb(77)

GOOD_KEYS = [
    0, 1, 2, 3, -1, -2, M61, 2 * M61, 2**61, 1.0, 0.0, 2.5, NAN, True, False,
    "a", "b", "", (1, 2),
    HashKey(7, "x"), HashKey(7, "y"), HashKey(7, "z"),
    HashKey((1 << 60) | 5, "d1"), HashKey((2 << 60) | 5, "d2"), HashKey(-(2**63), "min"),
    EQBOMB, HashKey(77, "bombmate"),
]  # fmt: skip
BAD_KEYS = [[], HashBomb(), TypeErrorHash()]
KEYS = GOOD_KEYS + BAD_KEYS
VALUES = [0, 1, "v", None, NAN, [], 1.0, True, (1, []), "w", 2, -2]
# positions (the "position" role; a "span" is two of them): in and out of range
# for the engine's small versions, negative, beyond a C Py_ssize_t, and not
# ints (True is one; None and 1.5 are TypeErrors, except None in a span)
POSITIONS = [0, 1, 2, 3, 5, 8, -1, -2, -3, -6, -9, 2**63, -(2**70), True, None, 1.5]  # fmt: skip

OPS = [op for op in registry.for_engine(registry.DIFFERENTIAL) if op.on != "Evolver"]
EDITS = registry.for_engine(registry.DIFFERENTIAL, on="Evolver")
N_OPS = len(OPS)
N_EDITS = len(EDITS)


def code(name):
    """The op code of the registry entry ``name``."""
    return OPS.index(registry.BY_NAME[name])


def edit_code(name):
    """The edit code of the registry's Evolver entry ``name``."""
    return EDITS.index(registry.BY_NAME[name])


def fields(entry):
    """The field kinds of an op (or edit) for ``entry``: its version, then its roles."""
    return (("version",) if entry.on == "frozendict" else ()) + tuple(entry.args)


_TOKENS = {}
for _i, _obj in enumerate(KEYS):
    _TOKENS.setdefault(id(_obj), "K%d" % _i)
for _i, _obj in enumerate(VALUES):
    _TOKENS.setdefault(id(_obj), "V%d" % _i)


def key(k):
    return KEYS[k % len(KEYS)]


def value(v):
    return VALUES[v % len(VALUES)]


def position(p):
    return POSITIONS[p % len(POSITIONS)]


def pairs_of(pairs):
    return [(key(k), value(v)) for k, v in pairs]


def norm(obj):
    """A comparable, hashable description of ``obj`` that never calls user ``__eq__``."""
    token = _TOKENS.get(id(obj))
    if token is not None:
        return token
    t = type(obj)
    if t in (int, str, bool, type(None)):
        return (t.__name__, repr(obj))
    if t is float:
        return ("float", "nan" if math.isnan(obj) else repr(obj))
    if t is tuple:
        return ("tuple",) + tuple(norm(x) for x in obj)
    if t is list:
        return ("list",) + tuple(norm(x) for x in obj)
    if t.__name__ == "Diff":
        return ("Diff",) + tuple(
            ("fd",) + tuple((norm(k), norm(v)) for k, v in part.items()) for part in obj
        )
    if t.__name__ in ("frozendict", "DictModel"):
        return ("fd",) + tuple((norm(k), norm(v)) for k, v in obj.items())
    if t is dict:
        return ("dict",) + tuple((norm(k), norm(v)) for k, v in obj.items())
    return ("?", t.__name__)


def capture(fn, *args):
    """``("ok", norm(result))`` or ``("raise", type name, message)``."""
    try:
        return ("ok", norm(fn(*args)))
    except MemoryError:
        raise
    except Exception as exc:
        return raised(exc)


def raised(exc):
    return ("raise", type(exc).__name__, str(exc))


# --- hostile operands ----------------------------------------------------------------------
# dict's own operations read a dict subclass from its storage unless it
# overrides __iter__ (then through keys() and d[key]), and never call its
# __len__, items() or get(); the model runs dict's operations on the same
# objects, so it predicts every answer and every error message.


class ItemsAsLists(dict):
    def items(self):
        return [[k, v] for k, v in dict.items(self)]


class LyingDict(dict):
    """Overrides what dict's merge and == never call."""

    def items(self):
        raise CrashError("items")

    def keys(self):
        return 12345

    def get(self, key, default=None):
        return "lie"

    def __getitem__(self, key):
        return "lie"

    def __len__(self):
        return 0


class IterKeysDict(dict):
    """Overrides __iter__: read through keys() (reversed here) and d[key]."""

    def __iter__(self):
        return iter(list(dict.keys(self))[::-1])

    def keys(self):
        return list(dict.keys(self))[::-1]

    def __getitem__(self, key):
        return ("got", dict.__getitem__(self, key))


class IterKeysInt(LyingDict):
    """Overrides __iter__ too: now keys() is read, and it is not iterable."""

    def __iter__(self):
        return iter(())


class IterKeysRaise(IterKeysDict):
    def keys(self):
        raise CrashError("keys")


class GetitemRaises(IterKeysDict):
    def __getitem__(self, key):
        raise CrashError("__getitem__")


class SelfEditingDict(IterKeysDict):
    """keys() adds a key and changes a value before dict reads the values."""

    def keys(self):
        dict.__setitem__(self, "added", "by keys()")
        for k in list(dict.keys(self))[:1]:
            dict.__setitem__(self, k, "changed")
        return list(dict.keys(self))


class KeysMapping:
    """Not a dict: a mapping through keys() and [] only."""

    def __init__(self, pairs):
        self.d = dict(pairs)

    def keys(self):
        return list(self.d)

    def __getitem__(self, key):
        return self.d[key]


class ClaimsToBeADict(KeysMapping):
    """isinstance(x, dict) is True through __class__; it is not a dict."""

    @property
    def __class__(self):
        return dict


HOSTILE_TYPES = [ItemsAsLists, LyingDict, IterKeysDict, IterKeysInt, IterKeysRaise, GetitemRaises,
                 SelfEditingDict, KeysMapping, ClaimsToBeADict]  # fmt: skip


def hostile(h, pairs):
    """A new HOSTILE_TYPES[h] holding pairs, or an exception (unhashable keys)."""
    try:
        return HOSTILE_TYPES[h % len(HOSTILE_TYPES)](pairs_of(pairs))
    except Exception as exc:
        return exc


# --- the backends: the dict model and a core ------------------------------------------------


class ModelBackend:
    """Runs each operation's dict model (``tests/operations.py``).

    A version is a ``DictModel``; operations get its dict.
    """

    name = "model"
    is_model = True

    def empty(self):
        return DictModel()

    def version(self, v):
        return v.d

    def call(self, entry, subject, args):
        return entry.model(subject, *args)

    def made(self, result):
        return DictModel(result)

    def evolver(self, fd):
        return dict(fd.d)

    def freeze(self, e):
        return DictModel(dict(e))

    def hostile(self, fd, make):
        """What dict's operations do with the operand (None: only cores compare)."""
        is_dict = issubclass(type(make()), dict)

        def updated():
            tmp = dict(fd.d)
            tmp.update(make())
            return DictModel(tmp)

        def ror():
            result = dict.copy(make())
            result.update(fd.d)
            return result

        return (
            capture(lambda: dict.__eq__(fd.d, make())),
            capture(lambda: DictModel(fd.d | make())) if is_dict else None,
            capture(lambda: DictModel(dict(make()))),
            capture(updated),
            capture(ror) if is_dict else None,
        )


class CoreBackend:
    """Runs the operations on one core's frozendict and Evolver."""

    is_model = False

    def __init__(self, core, check=True):
        self.core = core
        self.fd = core.frozendict
        self.name = getattr(core, "name", "core")
        self.check = check

    def empty(self):
        return self.fd()

    def version(self, v):
        return v

    def call(self, entry, subject, args):
        result = entry.call(self.core, subject, *args)
        if self.check and type(result).__name__ == "Diff":
            for part in result:
                part._check()
        return result

    def made(self, v):
        return self._made(v)

    def _made(self, v):
        if self.check:
            v._check()
        return v

    def evolver(self, fd):
        return fd.evolve()

    def freeze(self, e):
        return e.freeze()

    def hostile(self, fd, make):
        def updated():
            e = fd.evolve()
            e.update(make())
            return self._made(e.freeze())

        return (
            capture(lambda: fd.__eq__(make())),
            capture(lambda: self._made(fd | make())),
            capture(lambda: self._made(self.fd(make()))),
            capture(updated),
            capture(lambda: make() | fd),
        ), capture(lambda: self.diff(fd, make()))


# --- running a sequence ------------------------------------------------------------------------


class _Skip(Exception):
    """An op whose arguments cannot be made (a dict of unhashable keys)."""


def _dict_or_skip(pairs):
    try:
        return dict(pairs)
    except Exception:
        raise _Skip from None


RESOLVE = registry.role_table(
    registry.DIFFERENTIAL,
    {
        "key": lambda backend, versions, field: key(field),
        "value": lambda backend, versions, field: value(field),
        "pairs": lambda backend, versions, field: pairs_of(field),
        "mapping": lambda backend, versions, field: _dict_or_skip(pairs_of(field)),
        "keys": lambda backend, versions, field: [key(k) for k in field],
        "path": lambda backend, versions, field: [key(k) for k in field],
        "version": lambda backend, versions, field: backend.version(_pick(versions, field)),
        "other": lambda backend, versions, field: dict(_pick(versions, field).items()),
        "fn": lambda backend, versions, field: registry.FN_POOL[field % len(registry.FN_POOL)],
        "position": lambda backend, versions, field: position(field),
        "span": lambda backend, versions, field: (position(field[0]), position(field[1])),
    },
    besides=("edits", "hostile"),  # (frozendict.evolve and the hostile operand: run below)
)
"""The argument a field stands for, by role (tests/operations.py ROLES)."""


def _resolve(backend, versions, kind, field):
    """The argument that ``field`` (of role ``kind``) stands for on ``backend``."""
    return RESOLVE[kind](backend, versions, field)


def run(backend, ops, observe_each_version=True):
    """Run ``ops`` on ``backend``; return a list of (model_part, core_part) observations."""
    versions = [backend.empty()]
    return [_run_one(backend, versions, op, observe_each_version) for op in ops]


def _pick(versions, i):
    return versions[i % len(versions)]


def _run_one(backend, versions, op, observe):
    entry = OPS[op[0] % N_OPS]
    if entry.name == "frozendict.evolve":
        return _run_evolve(backend, versions, op, observe)
    if entry.name == "hostile operand":
        return _run_hostile(backend, versions, op)
    kinds = fields(entry)
    try:
        args = [_resolve(backend, versions, kind, f) for kind, f in zip(kinds, op[1:])]
    except _Skip:
        return (("skip",), None)
    if entry.on == "frozendict":
        subject, args = args[0], args[1:]
        operands = [_pick(versions, op[1])] + [
            _pick(versions, f) for kind, f in zip(kinds[1:], op[2:]) if kind == "version"
        ]
    else:
        subject, operands = (None if backend.is_model else backend.fd), []
    try:
        result = backend.call(entry, subject, args)
        if entry.makes:
            made = backend.made(result)
    except Exception as exc:
        if entry.order_dependent:
            return _lenient(raised(exc))
        return (raised(exc), None)
    if not entry.makes:
        outcome = ("ok", norm(result))
        return _lenient(outcome) if entry.order_dependent else (outcome, None)
    versions.append(made)
    core_part = None if backend.is_model else tuple(made is v for v in operands)
    return (("made", norm(made) if observe else len(made)), core_part)


def _run_evolve(backend, versions, op, observe):
    e = backend.evolver(_pick(versions, op[1]))
    # Only len() is observed between edits: reading items or freezing would
    # end the evolver's in-place ownership (some edits do that on purpose).
    steps = tuple((_edit(backend, versions, e, edit), len(e)) for edit in op[2])
    made = backend.freeze(e)
    core_part = None
    if not backend.is_model:
        backend.made(made)
        core_part = made is e.freeze()
    versions.append(made)
    return (("evolve", steps, norm(made) if observe else len(made)), core_part)


def _edit(backend, versions, e, edit):
    """One evolver edit; returns an observation (model-comparable)."""
    entry = EDITS[edit[0] % N_EDITS]
    try:
        args = [_resolve(backend, versions, kind, f) for kind, f in zip(entry.args, edit[1:])]
    except _Skip:
        return ("skip",)
    return capture(backend.call, entry, e, args)


def _run_hostile(backend, versions, op):
    fd = _pick(versions, op[1])
    if isinstance(hostile(op[2], op[3]), Exception):
        return (("skip",), None)
    make = lambda: hostile(op[2], op[3])  # noqa: E731  (a fresh one each time)
    if backend.is_model:
        return (("hostile",) + backend.hostile(fd, make), None)
    seen, diff = backend.hostile(fd, make)
    # the model predicts what it can (None where only cores compare)
    return (("hostile",) + seen, (seen, diff))


def _lenient(outcome):
    """``==`` and ``diff`` between tries call ``__eq__`` in trie order, not dict order.

    When a key's ``__eq__`` raises, whether the answer is the exception or
    False depends on that order: compare such outcomes between cores only.
    """
    if outcome[0] == "raise" and outcome[1] == "CrashError":
        return (("order-dependent",), outcome)
    return (outcome, None)


def compare(runs, ops):
    """Assert that every backend's observations agree; ``runs`` maps name -> observations.

    The model (if present) is compared on the model part; cores on both parts.
    Returns None, or raises AssertionError naming the first differing op.
    """
    names = list(runs)
    n = len(ops)
    for name in names:
        assert len(runs[name]) == n
    for index in range(n):
        per = {name: runs[name][index] for name in names}
        cores = [name for name in names if name != "model"]
        ref_name = cores[0] if cores else names[0]
        ref = per[ref_name]
        for name in cores[1:]:
            if per[name] != ref:
                raise AssertionError(_mismatch(ops, index, ref_name, ref, name, per[name]))
        if "model" in per and cores:
            model_part = per["model"][0]
            for name in cores:
                core_model_part = per[name][0]
                if model_part == ("order-dependent",) or core_model_part == ("order-dependent",):
                    continue
                if not _model_agrees(model_part, core_model_part):
                    raise AssertionError(
                        _mismatch(ops, index, "model", per["model"], name, per[name])
                    )


def _model_agrees(model_part, core_part):
    """A HOSTILE observation's None parts are for the cores only; and whether
    == with a key whose __eq__ raises ends in the exception or in False
    depends on the order of __eq__ calls (see _lenient)."""
    if model_part[:1] != ("hostile",) or core_part[:1] != ("hostile",):
        return model_part == core_part
    for i, (m, c) in enumerate(zip(model_part, core_part)):
        if m is None or m == c:
            continue
        if i == 1 and "CrashError" in (m[1:2] + c[1:2]):
            continue
        return False
    return len(model_part) == len(core_part)


def _mismatch(ops, index, a_name, a, b_name, b):
    return "op #%d %s differs:\n  %s: %r\n  %s: %r\nops so far:\n%s" % (
        index,
        describe(ops[index]),
        a_name,
        a,
        b_name,
        b,
        "\n".join("  %2d %s" % (i, describe(op)) for i, op in enumerate(ops[: index + 1])),
    )


def describe(op):
    """A readable form of one op, for failure messages."""
    entry = OPS[op[0] % N_OPS]
    if entry.name == "hostile operand":
        return "hostile operand(%r, %s, %r)" % (
            op[1],
            HOSTILE_TYPES[op[2] % len(HOSTILE_TYPES)].__name__,
            op[3],
        )
    if entry.name == "frozendict.evolve":
        edits = ", ".join(
            "%s%r" % (EDITS[edit[0] % N_EDITS].name, tuple(edit[1:])) for edit in op[2]
        )
        return "frozendict.evolve(%r, [%s])" % (op[1], edits)
    return "%s%r" % (entry.name, tuple(op[1:]))


def check_against_model(core, ops, check=True):
    """Run ``ops`` on ``core`` and on the dict model; raise AssertionError on a difference."""
    runs = {
        "model": run(ModelBackend(), ops),
        getattr(core, "name", "core"): run(CoreBackend(core, check=check), ops),
    }
    compare(runs, ops)


if sys.hash_info.width != 64:  # pragma: no cover
    raise ImportError("the differential engine assumes 64-bit hashes")
