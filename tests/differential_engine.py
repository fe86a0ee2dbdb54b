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

Operation codes (``op[0]``)::

    BUILD pairs         frozendict(list of pairs)
    BUILD_DICT pairs    frozendict(dict(pairs))
    SET i k v           versions[i].set(k, v)
    DELETE i k          versions[i].delete(k)
    DISCARD i k         versions[i].discard(k)
    OR i j              versions[i] | versions[j]
    OR_DICT i pairs     versions[i] | dict(pairs)
    SUB i keys          versions[i] - keys
    AND i keys          versions[i] & keys
    EVOLVE i edits      an Evolver from versions[i], edited, then frozen
    DIFF i j            versions[i].diff(versions[j])
    DIFF_DICT i j       versions[i].diff(dict(versions[j]))
    EQ i j              ==, != against the version and against a dict
    HASH i              hash(versions[i])
    REPR i              repr(versions[i])
    ITER i              items, reversed keys, values, len
    LOOKUP i k          get, in, []
    FROMKEYS keys v     frozendict.fromkeys(keys, v)
    HOSTILE i h pairs   every operation that reads another mapping (==, |, the
                        constructor, update(), diff, and x | fd) fed a hostile
                        operand: HOSTILE_TYPES[h] made from pairs (dict
                        subclasses and mapping-likes whose methods return
                        wrong types, raise, lie or edit themselves)

Every op that makes a version appends it to the versions list; ``i`` and
``j`` are taken modulo its length.
"""

import math
import sys

from fault_helpers import M61
from helpers import unhashable_key_message
from keys import CrashError, EqBomb, HashBomb, HashKey, TypeErrorHash

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

(BUILD, BUILD_DICT, SET, DELETE, DISCARD, OR, OR_DICT, SUB, AND, EVOLVE, DIFF, DIFF_DICT,
 EQ, HASH, REPR, ITER, LOOKUP, FROMKEYS, HOSTILE) = range(19)  # fmt: skip
N_OPS = 19
OP_NAMES = [
    "BUILD", "BUILD_DICT", "SET", "DELETE", "DISCARD", "OR", "OR_DICT", "SUB", "AND", "EVOLVE",
    "DIFF", "DIFF_DICT", "EQ", "HASH", "REPR", "ITER", "LOOKUP", "FROMKEYS", "HOSTILE",
]  # fmt: skip

# Evolver edit codes: (code, k, v, pairs)
(E_SETITEM, E_DELITEM, E_POP, E_POP_DEFAULT, E_POPITEM, E_SETDEFAULT, E_UPDATE, E_UPDATE_KW,
 E_CLEAR, E_DISCARD, E_GET, E_CONTAINS, E_FREEZE) = range(13)  # fmt: skip
N_EDITS = 13

_TOKENS = {}
for _i, _obj in enumerate(KEYS):
    _TOKENS.setdefault(id(_obj), "K%d" % _i)
for _i, _obj in enumerate(VALUES):
    _TOKENS.setdefault(id(_obj), "V%d" % _i)


def key(k):
    return KEYS[k % len(KEYS)]


def value(v):
    return VALUES[v % len(VALUES)]


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
        return ("Diff", norm(obj.added), norm(obj.removed), norm(obj.changed))
    if t.__name__ in ("frozendict", "DictModel"):
        return ("fd",) + tuple((norm(k), norm(v)) for k, v in obj.items())
    if t is dict:
        return ("dict",) + tuple((norm(k), norm(v)) for k, v in obj.items())
    return ("?", t.__name__)


def capture(fn, *args):
    """``("ok", norm(result))`` or ``("raise", type name, message)``."""
    try:
        return ("ok", norm(fn(*args)))
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


# --- the dict model ---------------------------------------------------------------------


def model_hash(k):
    """``hash(k)`` with the frozendict message for an exact TypeError."""
    try:
        return hash(k)
    except TypeError as exc:
        if type(exc) is not TypeError:
            raise
        raise TypeError(unhashable_key_message(k)) from None


class DictModel:
    """What a frozendict should be: a dict, never changed after it is made."""

    __slots__ = ("d",)

    def __init__(self, d=None):
        self.d = {} if d is None else d

    def items(self):
        return self.d.items()

    def __len__(self):
        return len(self.d)


class EvolverModel:
    """What an Evolver should do: a dict, with all-or-nothing update()."""

    def __init__(self, d):
        self.d = dict(d)

    def items(self):
        return self.d.items()

    def __len__(self):
        return len(self.d)

    def setitem(self, k, v):
        model_hash(k)
        self.d[k] = v

    def delitem(self, k):
        model_hash(k)
        del self.d[k]

    def pop(self, k, *default):
        model_hash(k)
        return self.d.pop(k, *default)

    def popitem(self):
        if not self.d:
            raise KeyError("popitem(): evolver is empty")
        return self.d.popitem()

    def setdefault(self, k, v):
        model_hash(k)
        return self.d.setdefault(k, v)

    def update(self, source, **kw):
        tmp = dict(self.d)
        items = source.items() if isinstance(source, dict) else source
        for k, v in items:
            model_hash(k)
            tmp[k] = v
        for k, v in kw.items():
            tmp[k] = v
        self.d = tmp

    def clear(self):
        self.d.clear()

    def discard(self, k):
        model_hash(k)
        self.d.pop(k, None)
        return self

    def get(self, k):
        model_hash(k)
        return self.d.get(k)

    def contains(self, k):
        model_hash(k)
        return k in self.d

    def freeze(self):
        return DictModel(dict(self.d))


class ModelBackend:
    name = "model"

    def empty(self):
        return DictModel()

    def build(self, pairs):
        d = {}
        for k, v in pairs:
            model_hash(k)
            d[k] = v
        return DictModel(d)

    def build_dict(self, source):
        return DictModel(dict(source))

    def set(self, fd, k, v):
        model_hash(k)
        d = dict(fd.d)
        d[k] = v
        return DictModel(d)

    def delete(self, fd, k):
        model_hash(k)
        d = dict(fd.d)
        del d[k]
        return DictModel(d)

    def discard(self, fd, k):
        model_hash(k)
        d = dict(fd.d)
        d.pop(k, None)
        return DictModel(d)

    def or_(self, fd, other_items):
        d = dict(fd.d)
        for k, v in other_items:
            d[k] = v
        return DictModel(d)

    def sub(self, fd, keys):
        d = dict(fd.d)
        for k in keys:
            model_hash(k)
            d.pop(k, None)
        return DictModel(d)

    def and_(self, fd, keys):
        keep = []
        for k in keys:
            model_hash(k)
            if k in fd.d:
                keep.append(k)
        wanted = set(keep)
        return DictModel({k: v for k, v in fd.d.items() if k in wanted})

    def evolver(self, fd):
        return EvolverModel(fd.d)

    def diff(self, fd, other_items):
        old = fd.d
        new = dict(other_items)
        added = {k: v for k, v in new.items() if k not in old}
        removed = {k: v for k, v in old.items() if k not in new}
        changed = {}
        for k, v in old.items():
            if k in new:
                w = new[k]
                if v is not w and v != w:
                    changed[k] = (v, w)
        return ("Diff", norm(DictModel(added)), norm(DictModel(removed)), norm(DictModel(changed)))

    def eq(self, a, b):
        return a.d == b.d

    def hash(self, fd):
        # The builtin hashes each pair in insertion order, so the first
        # unhashable value raises its own TypeError; hash(frozenset(...))
        # rewords it on 3.15 ("cannot use 'tuple' as a set element (...)").
        for pair in fd.d.items():
            hash(pair)
        return hash(frozenset(fd.d.items()))

    def repr(self, fd):
        return "frozendict(%r)" % (fd.d,) if fd.d else "frozendict()"

    def reversed_keys(self, fd):
        return list(reversed(fd.d))

    def values(self, fd):
        return list(fd.d.values())

    def lookup(self, fd, k):
        def get():
            model_hash(k)
            return fd.d.get(k)

        def contains():
            model_hash(k)
            return k in fd.d

        def getitem():
            model_hash(k)
            return fd.d[k]

        return capture(get), capture(contains), capture(getitem)

    def fromkeys(self, keys, v):
        d = {}
        for k in keys:
            model_hash(k)
            d[k] = v
        return DictModel(d)

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

    def __init__(self, core, check=True):
        self.core = core
        self.fd = core.frozendict
        self.name = getattr(core, "name", "core")
        self.check = check

    def _made(self, v):
        if self.check:
            v._check()
        return v

    def empty(self):
        return self.fd()

    def build(self, pairs):
        return self._made(self.fd(pairs))

    def build_dict(self, source):
        return self._made(self.fd(source))

    def set(self, fd, k, v):
        return self._made(fd.set(k, v))

    def delete(self, fd, k):
        return self._made(fd.delete(k))

    def discard(self, fd, k):
        return self._made(fd.discard(k))

    def or_(self, fd, other):
        return self._made(fd | other)

    def sub(self, fd, keys):
        return self._made(fd - keys)

    def and_(self, fd, keys):
        return self._made(fd & keys)

    def evolver(self, fd):
        return fd.evolve()

    def diff(self, fd, other):
        result = fd.diff(other)
        if self.check:
            for part in result:
                part._check()
        return norm(result)

    def eq(self, a, b):
        return a == b

    def hash(self, fd):
        return hash(fd)

    def repr(self, fd):
        return repr(fd)

    def reversed_keys(self, fd):
        return list(reversed(fd))

    def values(self, fd):
        return list(fd.values())

    def lookup(self, fd, k):
        return capture(fd.get, k), capture(fd.__contains__, k), capture(fd.__getitem__, k)

    def fromkeys(self, keys, v):
        return self._made(self.fd.fromkeys(keys, v))

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


def _dict_or_none(pairs):
    try:
        return dict(pairs)
    except Exception as exc:
        return exc


def _edit(backend, e, edit):
    """One evolver edit; returns an observation (model-comparable)."""
    code, k, v, pairs = edit
    code %= N_EDITS
    model = isinstance(e, EvolverModel)
    k, v = key(k), value(v)
    if code == E_SETITEM:
        return capture(e.setitem if model else e.__setitem__, k, v)
    if code == E_DELITEM:
        return capture(e.delitem if model else e.__delitem__, k)
    if code == E_POP:
        return capture(e.pop, k)
    if code == E_POP_DEFAULT:
        return capture(e.pop, k, "default")
    if code == E_POPITEM:
        return capture(e.popitem)
    if code == E_SETDEFAULT:
        return capture(e.setdefault, k, v)
    if code == E_UPDATE:
        return capture(lambda: e.update(pairs_of(pairs)) and None)
    if code == E_UPDATE_KW:
        source = _dict_or_none(pairs_of(pairs))
        if isinstance(source, Exception):
            return ("skip",)
        return capture(lambda: e.update(source, kw=v) and None)
    if code == E_CLEAR:
        return capture(e.clear)
    if code == E_DISCARD:
        return capture(lambda: e.discard(k) is e)
    if code == E_GET:
        return capture(e.get, k)
    if code == E_CONTAINS:
        return capture(e.contains if model else e.__contains__, k)
    # E_FREEZE: freeze mid-way, then keep editing
    return capture(lambda: norm(e.freeze()))


def run(backend, ops, observe_each_version=True):
    """Run ``ops`` on ``backend``; return a list of (model_part, core_part) observations."""
    versions = [backend.empty()]
    out = []
    model = isinstance(backend, ModelBackend)
    for op in ops:
        out.append(_run_one(backend, model, versions, op, observe_each_version))
    return out


def _pick(versions, i):
    return versions[i % len(versions)]


def _run_one(backend, model, versions, op, observe):
    code = op[0] % N_OPS
    made = None
    core_part = None
    try:
        if code == BUILD:
            made = backend.build(pairs_of(op[1]))
        elif code == BUILD_DICT:
            source = _dict_or_none(pairs_of(op[1]))
            if isinstance(source, Exception):
                return (("skip",), None)
            made = backend.build_dict(source)
        elif code == SET:
            src = _pick(versions, op[1])
            made = backend.set(src, key(op[2]), value(op[3]))
            core_part = made is src
        elif code == DELETE:
            made = backend.delete(_pick(versions, op[1]), key(op[2]))
        elif code == DISCARD:
            src = _pick(versions, op[1])
            made = backend.discard(src, key(op[2]))
            core_part = made is src
        elif code == OR:
            a, b = _pick(versions, op[1]), _pick(versions, op[2])
            made = backend.or_(a, list(b.items()) if model else b)
            core_part = (made is a, made is b)
        elif code == OR_DICT:
            source = _dict_or_none(pairs_of(op[2]))
            if isinstance(source, Exception):
                return (("skip",), None)
            src = _pick(versions, op[1])
            made = backend.or_(src, list(source.items()) if model else source)
            core_part = made is src
        elif code in (SUB, AND):
            src = _pick(versions, op[1])
            keys = [key(k) for k in op[2]]
            made = (backend.sub if code == SUB else backend.and_)(src, keys)
            core_part = made is src
        elif code == EVOLVE:
            e = backend.evolver(_pick(versions, op[1]))
            # Only len() is observed between edits: reading items or freezing
            # would end the evolver's in-place ownership (E_FREEZE does that
            # on purpose).
            steps = tuple((_edit(backend, e, edit), len(e)) for edit in op[2])
            made = e.freeze()
            if not model:
                backend._made(made)
                core_part = made is e.freeze()
            versions.append(made)
            return (("evolve", steps, norm(made) if observe else len(made)), core_part)
        elif code in (DIFF, DIFF_DICT):
            a, b = _pick(versions, op[1]), _pick(versions, op[2])
            other = list(b.items()) if model else (b if code == DIFF else dict(b.items()))
            result = backend.diff(a, other)
            return _lenient(code, ("ok", result))
        elif code == EQ:
            a, b = _pick(versions, op[1]), _pick(versions, op[2])
            if model:
                result = (
                    backend.eq(a, b),
                    not backend.eq(a, b),
                    backend.eq(a, b),
                    backend.eq(a, b),
                )
            else:
                d = dict(b.items())
                result = (a == b, a != b, a == d, d == a)
            return _lenient(code, ("ok", result))
        elif code == HASH:
            return (("ok", backend.hash(_pick(versions, op[1]))), None)
        elif code == REPR:
            return (("ok", backend.repr(_pick(versions, op[1]))), None)
        elif code == ITER:
            v = _pick(versions, op[1])
            return (
                (
                    "ok",
                    norm(list(v.items())),
                    norm(backend.reversed_keys(v)),
                    norm(backend.values(v)),
                    len(v),
                ),
                None,
            )
        elif code == LOOKUP:
            return (("ok",) + backend.lookup(_pick(versions, op[1]), key(op[2])), None)
        elif code == HOSTILE:
            fd = _pick(versions, op[1])
            if isinstance(hostile(op[2], op[3]), Exception):
                return (("skip",), None)
            make = lambda: hostile(op[2], op[3])  # noqa: E731  (a fresh one each time)
            if model:
                return (("hostile",) + backend.hostile(fd, make), None)
            seen, diff = backend.hostile(fd, make)
            # the model predicts what it can (None where only cores compare)
            return (("hostile",) + seen, (seen, diff))
        else:  # FROMKEYS
            made = backend.fromkeys([key(k) for k in op[1]], value(op[2]))
    except Exception as exc:
        if code in (EQ, DIFF, DIFF_DICT):
            return _lenient(code, raised(exc))
        return (raised(exc), None)
    versions.append(made)
    return (("made", norm(made) if observe else len(made)), core_part)


def _lenient(code, outcome):
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
    code = op[0] % N_OPS
    if code == HOSTILE:
        return "HOSTILE(%r, %s, %r)" % (
            op[1],
            HOSTILE_TYPES[op[2] % len(HOSTILE_TYPES)].__name__,
            op[3],
        )
    return "%s%r" % (OP_NAMES[code], tuple(op[1:]))


def check_against_model(core, ops, check=True):
    """Run ``ops`` on ``core`` and on the dict model; raise AssertionError on a difference."""
    runs = {
        "model": run(ModelBackend(), ops),
        getattr(core, "name", "core"): run(CoreBackend(core, check=check), ops),
    }
    compare(runs, ops)


if sys.hash_info.width != 64:  # pragma: no cover
    raise ImportError("the differential engine assumes 64-bit hashes")
