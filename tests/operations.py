"""Every public operation of frozendict, Evolver and Diff, in one table.

Each ``Operation`` says how to call the operation, what the same operation
does to a plain ``dict`` (its model), and which test engines run it.  The
engines read this table instead of keeping lists of their own, so an entry
added here is run by every engine it names:

``differential``  ``tests/differential_engine.py``: hypothesis draws sequences
                  of operations; the C core, the pure core and the dict model
                  must agree on every result, error type and message
                  (``tests/test_differential.py``).
``fuzz``          ``fuzz/fuzz_ops.py`` decodes bytes into the same sequences.
``reentrancy``    ``tests/hostile/test_reentry_sweep.py``: a key's ``__eq__``/``__hash__`` or
                  a value's ``__del__`` runs another operation on the same
                  object while this one runs.
``hostile``       ``tests/hostile/test_lying_types.py``: the operation on a subclass
                  with lying methods and metaclass, and fed one as an operand.
``nomemory``      ``tests/hostile/test_allocation_failure.py``: every allocation inside the
                  operation fails in turn.
``leaks``         ``scripts/leakcheck.py``: many rounds, no growth in blocks or
                  references.
``transcript``    ``tests/transcript_engine.py``: each operation runs on both
                  cores with keys, values, positions and functions that record
                  their user calls (``__hash__``, ``__eq__``, ``__index__``,
                  finalizers) in one log; the two logs must be identical, not
                  only the results (``tests/test_transcripts.py``).  For the
                  roles ``keys`` and ``pairs`` it passes either a list or the
                  other version itself, so ``-``, ``&``, the constructor and
                  ``Evolver.update`` meet frozendict operands too.
``cleared``       ``tests/test_cleared_and_borrowed.py``: the operation on an
                  object the collector cleared (``tp_clear``), and with one as
                  its operand, answers as on an empty one.

An operation's arguments are named by role (``ROLES``: what each stands for,
and how the sequence engines encode it).  Each engine supplies its own object
for a role (the differential engine an index into its pools, the re-entrancy
sweep a key whose ``__eq__`` runs code, the nomemory sweep a key made at run
time): it declares them in one table per engine with ``role_table``, which
fails at import, naming the engine and the role, when an operation it runs
takes a role the table lacks; ``arguments`` builds an entry's arguments from
it.  So a new operation whose roles exist needs no change in any engine, and
a new role is added here and, where the failure says, to each engine's table.

``call(core, subject, *args)`` runs the operation on a core (``core`` has
``frozendict`` and ``Evolver``); ``subject`` is a frozendict (``on =
"frozendict"``), an Evolver (``"Evolver"``, edited in place) or the
frozendict class (``"type"``).  ``model(d, *args)`` does the same to a dict
``d``: a frozendict's contents (never changed) or an Evolver's (edited in
place), with versions given as dicts and nested frozendicts as ``DictModel``.
With ``makes``, ``call`` returns a new version and ``model`` its contents as a
dict.

``tests/test_operation_registry.py`` fails when a public attribute of either
core's classes is neither covered here nor excluded with a reason in
``NOT_OPERATIONS``.
"""

import copy
import operator
import pickle
from dataclasses import dataclass

from helpers import unhashable_key_message
from keys import CrashError

DIFFERENTIAL = "differential"
FUZZ = "fuzz"
REENTRANCY = "reentrancy"
HOSTILE = "hostile"
NOMEMORY = "nomemory"
LEAKS = "leaks"
TRANSCRIPT = "transcript"

CLEARED = "cleared"
ENGINES = frozenset({DIFFERENTIAL, FUZZ, REENTRANCY, HOSTILE, NOMEMORY, LEAKS, TRANSCRIPT, CLEARED})


@dataclass(frozen=True)
class Role:
    """An argument role: what it stands for, and how the sequence engines
    (``differential``, ``fuzz``) encode it in an operation: ``"key"`` or
    ``"value"`` (an index into a pool), ``"pairs"`` (a list of key and value
    indexes), ``"keys"`` (a list of key indexes), ``"index"`` (one small int,
    read as the role needs: a version, a function, a position ...),
    ``"index pair"`` or ``"edits"`` (a list of Evolver operations); ``most``:
    the longest list drawn."""

    name: str
    meaning: str
    field: str
    most: int = 0


ROLES = {
    role.name: role
    for role in (
        Role("key", "one key", "key"),
        Role("value", "one value", "value"),
        Role("pairs", "a list of (key, value) pairs", "pairs", most=8),
        Role("mapping", "a dict", "pairs", most=8),
        Role("keys", "a list of keys", "keys", most=6),
        Role("version", "another frozendict", "index"),
        Role("other", "a dict holding another version's items", "index"),
        Role("path", "a list of keys (get_in and friends)", "keys", most=3),
        Role("fn", "a function taking any number of arguments", "index"),
        Role("edits", "a list of Evolver operations (frozendict.evolve only)", "edits", most=12),
        Role("hostile", "the differential engine's hostile operand (a type index)", "index"),
        Role("position", "a position for key_at and friends: an int in or out of range, "
             "negative, huge, or a bool, None or float", "index"),
        Role("span", "a (start, stop) pair of positions for slice", "index pair"),
    )
}  # fmt: skip
FIELDS = frozenset({"key", "value", "pairs", "keys", "index", "index pair", "edits"})


@dataclass(frozen=True)
class Operation:
    name: str
    on: str  # "frozendict", "Evolver" or "type" (the frozendict class)
    covers: tuple  # the public attributes this entry calls ("Diff.apply": another class's)
    args: tuple  # argument roles (ROLES)
    call: object
    model: object = None  # None: no dict model (the cores are compared with each other)
    engines: frozenset = ENGINES
    makes: bool = False  # returns a new frozendict version
    # order_dependent: calls __eq__ in trie order, so a raising __eq__ may or
    # may not be reached (the model's answer is then not compared)
    order_dependent: bool = False
    reads: bool = False  # returns the value stored under its key (or a default)
    # fires: the user code it runs on a present key ("eq", "hash", "del"),
    # which the re-entrancy sweep requires to have run
    fires: frozenset = frozenset()
    in_python: bool = False  # written once in Python below the cores (frozenmap/_diff.py)
    # stdlib_python: the call runs the standard library's Python code
    # (copy.deepcopy), so the allocation-failure sweep fails its points one at a
    # time on the C core too (see tests/hostile/test_allocation_failure.py, Sweep.run)
    stdlib_python: bool = False

    def __repr__(self):
        return "Operation(%s)" % self.name


FN_POOL = [
    lambda *a: a[-1],  # merge_with: the new value; update_in: the old value (no change)
    lambda *a: a[0],  # merge_with: the old value
    lambda *a: len(a),
    lambda *a: (_ for _ in ()).throw(CrashError("fn")),
]
"""The functions the ``fn`` role draws from (any number of arguments)."""


# --- the dict model ---------------------------------------------------------------------------


def model_hash(k):
    """``hash(k)`` with the frozendict message for an exact TypeError."""
    try:
        return hash(k)
    except TypeError as exc:
        if type(exc) is not TypeError:
            raise
        raise TypeError(unhashable_key_message(k)) from None


class DictModel:
    """What a frozendict should be: a dict, never changed after it is made.

    Hashes, compares and prints as a frozendict does, so that versions nested
    in a model's values (``set_in``) behave as the cores' do.
    """

    __slots__ = ("d",)

    def __init__(self, d=None):
        self.d = {} if d is None else d

    def items(self):
        return self.d.items()

    def __len__(self):
        return len(self.d)

    def __eq__(self, other):
        return isinstance(other, DictModel) and self.d == other.d

    def __hash__(self):
        # The builtin hashes each pair in insertion order, so the first
        # unhashable value raises its own TypeError; hash(frozenset(...))
        # rewords it on 3.15 ("cannot use 'tuple' as a set element (...)").
        for pair in self.d.items():
            hash(pair)
        return hash(frozenset(self.d.items()))

    def __repr__(self):
        return "frozendict(%r)" % (self.d,) if self.d else "frozendict()"


class ModelDiff(tuple):
    """The model's ``Diff``: (added, removed, changed) dicts."""

    __slots__ = ()


ModelDiff.__name__ = "Diff"  # (norm() in the differential engine reads it)


def _hashed(k):
    model_hash(k)
    return k


def _model_build(pairs):
    d = {}
    for k, v in pairs:
        d[_hashed(k)] = v
    return d


def _model_set(d, k, v):
    d = dict(d)
    d[_hashed(k)] = v
    return d


def _model_delete(d, k):
    d = dict(d)
    del d[_hashed(k)]
    return d


def _model_discard(d, k):
    d = dict(d)
    d.pop(_hashed(k), None)
    return d


def _model_or(d, other):
    d = dict(d)
    d.update(other)
    return d


def _model_sub(d, keys):
    d = dict(d)
    for k in keys:
        d.pop(_hashed(k), None)
    return d


def _model_and(d, keys):
    wanted = set()
    for k in keys:
        if _hashed(k) in d:
            wanted.add(k)
    return {k: v for k, v in d.items() if k in wanted}


def _model_diff(old, new):
    added = {k: v for k, v in new.items() if k not in old}
    removed = {k: v for k, v in old.items() if k not in new}
    changed = {}
    for k, v in old.items():
        if k in new:
            w = new[k]
            if v is not w and v != w:
                changed[k] = (v, w)
    return ModelDiff((added, removed, changed))


_MISSING = object()


def _differs(current, expected):
    return current is not expected and current != expected


def _model_apply(diff, d):
    added, removed, changed = diff
    if not (added or removed or changed):
        return d
    d = dict(d)
    for k, old in removed.items():
        current = d.get(k, _MISSING)
        if current is _MISSING:
            raise ValueError("Diff.apply(): conflict at key %r: it is missing" % (k,))
        if _differs(current, old):
            raise ValueError(
                "Diff.apply(): conflict at key %r: it does not hold the value the diff removes"
                % (k,)
            )
        del d[k]
    for k, (old, new) in changed.items():
        current = d.get(k, _MISSING)
        if current is _MISSING:
            raise ValueError("Diff.apply(): conflict at key %r: it is missing" % (k,))
        if _differs(current, old):
            raise ValueError(
                "Diff.apply(): conflict at key %r: it does not hold the old value of the change"
                % (k,)
            )
        d[k] = new
    for k, new in added.items():
        current = d.get(k, _MISSING)
        if current is _MISSING:
            d[k] = new
        elif _differs(current, new):
            raise ValueError(
                "Diff.apply(): conflict at key %r: it is already there with another value" % (k,)
            )
    return d


def _model_invert(diff):
    added, removed, changed = diff
    return ModelDiff((removed, added, {k: (new, old) for k, (old, new) in changed.items()}))


def _model_merge_with(d, fn, other):
    d = dict(d)
    for k, v in other.items():
        d[k] = fn(d[k], v) if k in d else v
    return d


# nested paths: the maps along a path are DictModels below the top


def _path_keys(path):
    keys = tuple(path)
    if not keys:
        raise ValueError("path must not be empty")
    return keys


def _not_a_frozendict(index, value):
    hint = ""
    if issubclass(type(value), dict):
        hint = "; frozenmap.freeze() turns nested dicts into frozendicts"
    elif issubclass(type(value), (list, tuple)):
        hint = "; a path goes through frozendicts only: update_in() can replace the whole sequence"
    return TypeError(
        "path[%d] leads to a value of type '%s', not a frozendict%s"
        % (index, type(value).__name__, hint)
    )


def _model_get_in(d, path, default):
    keys = _path_keys(path)
    m = d
    for i, k in enumerate(keys):
        if i:
            if not isinstance(m, DictModel):
                raise _not_a_frozendict(i - 1, m)
            m = m.d
        model_hash(k)
        if k not in m:
            return default
        m = m[k]
    return m


def _model_walk(d, keys, create):
    maps = [d]
    m = d
    for i in range(len(keys) - 1):
        k = _hashed(keys[i])
        if k not in m:
            if not create:
                raise KeyError(k)
            child = {}
        elif not isinstance(m[k], DictModel):
            raise _not_a_frozendict(i, m[k])
        else:
            child = m[k].d
        maps.append(child)
        m = child
    return maps


def _model_set_in(d, path, value):
    keys = _path_keys(path)
    maps = _model_walk(d, keys, True)
    model_hash(keys[-1])
    return _model_put(maps, keys, len(keys) - 1, value)


def _model_put(maps, keys, level, new):
    """The top dict with ``new`` at ``keys[level]`` of ``maps[level]`` (copied up)."""
    for i in range(level, -1, -1):
        m = dict(maps[i])
        m[keys[i]] = new
        new = DictModel(m) if i else m
    return new


def _model_update_in(d, path, fn, *default):
    keys = _path_keys(path)
    maps = _model_walk(d, keys, bool(default))
    last = maps[-1]
    k = _hashed(keys[-1])
    if k in last:
        old = last[k]
    elif default:
        old = default[0]
    else:
        raise KeyError(k)
    return _model_put(maps, keys, len(keys) - 1, fn(old))


def _model_delete_in(d, path):
    keys = _path_keys(path)
    maps = _model_walk(d, keys, False)
    last = len(keys) - 1
    m = dict(maps[last])
    del m[_hashed(keys[last])]
    if last == 0:
        return m
    return _model_put(maps, keys, last - 1, DictModel(m))


# Evolver edits on the model: d is edited in place


def _model_update(d, pairs):
    tmp = dict(d)
    for k, v in pairs:
        tmp[_hashed(k)] = v
    d.clear()
    d.update(tmp)


def _model_popitem(d):
    if not d:
        raise KeyError("popitem(): evolver is empty")
    return d.popitem()


# positions: list(d.items()) read as a list is read (operator.index: list.pop's
# TypeError; our IndexError message names the type)


def _model_at(d, i, name):
    items = list(d.items())
    try:
        return items[operator.index(i)]
    except IndexError:
        raise IndexError("%s index out of range" % name) from None


def _model_index(d, k):
    # a dict of positions looks k up as d does (the same hashes and __eq__ calls)
    return dict(zip(d, range(len(d))))[_hashed(k)]


def _model_slice(d, span):
    start, stop = span
    return dict(list(d.items())[start:stop])


def _model_edit_in(d, path, fn):
    """An Evolver's path edit: the model's version-level result, stored back."""
    new = fn(d, path)
    d.clear()
    d.update(new)
    return True


# --- the table --------------------------------------------------------------------------------

CORES_ONLY = frozenset(
    {REENTRANCY, HOSTILE, NOMEMORY, LEAKS, TRANSCRIPT, CLEARED}
)  # (no dict model)
LOOKUP = frozenset({"eq", "hash"})
LOOKUP_DEL = frozenset({"eq", "hash", "del"})


def _eq4(a, b):
    d = dict(b.items())
    return (a == b, a != b, a == d, d == a)


def _iteration(m):
    return (list(m.items()), list(reversed(m)), list(m.values()), list(m.keys()), len(m))


def _positional(on):
    """The positional reads of a frozendict or an Evolver (``on``); slice
    hashes the keys it keeps and never compares them.  On a frozendict it
    makes a version; an Evolver's is observed as a result."""
    if on == "frozendict":
        slice_model, makes = _model_slice, True
    else:
        slice_model, makes = (lambda d, span: DictModel(_model_slice(d, span))), False
    return [
        Operation("%s.key_at" % on, on, ("key_at",), ("position",),
                  lambda core, m, i: m.key_at(i), lambda d, i: _model_at(d, i, on)[0]),
        Operation("%s.value_at" % on, on, ("value_at",), ("position",),
                  lambda core, m, i: m.value_at(i), lambda d, i: _model_at(d, i, on)[1]),
        Operation("%s.item_at" % on, on, ("item_at",), ("position",),
                  lambda core, m, i: m.item_at(i), lambda d, i: _model_at(d, i, on)),
        Operation("%s.index" % on, on, ("index",), ("key",),
                  lambda core, m, k: m.index(k), _model_index, fires=LOOKUP),
        Operation("%s.slice" % on, on, ("slice",), ("span",),
                  lambda core, m, span: m.slice(*span), slice_model, makes=makes,
                  fires=frozenset({"hash"})),
    ]  # fmt: skip


OPERATIONS = [
    # The order gives the differential engine's codes (the first nineteen are
    # its old ones): add a new entry at the end of its group, so that the seed
    # corpus (fuzz/corpus) keeps most of its meaning.
    Operation("frozendict(pairs)", "type", ("__new__", "__init__"), ("pairs",),
              lambda core, cls, pairs: cls(pairs), lambda d, pairs: _model_build(pairs),
              makes=True, fires=frozenset({"hash"})),
    Operation("frozendict(dict)", "type", ("__new__",), ("mapping",),
              lambda core, cls, m: cls(m), lambda d, m: dict(m), makes=True, fires=frozenset({"hash"})),
    Operation("frozendict.set", "frozendict", ("set",), ("key", "value"),
              lambda core, fd, k, v: fd.set(k, v), _model_set, makes=True, fires=LOOKUP),
    Operation("frozendict.delete", "frozendict", ("delete",), ("key",),
              lambda core, fd, k: fd.delete(k), _model_delete, makes=True, fires=LOOKUP),
    Operation("frozendict.discard", "frozendict", ("discard",), ("key",),
              lambda core, fd, k: fd.discard(k), _model_discard, makes=True, fires=LOOKUP),
    Operation("fd | version", "frozendict", ("__or__",), ("version",),
              lambda core, fd, other: fd | other, _model_or, makes=True),
    Operation("fd | dict", "frozendict", ("__or__",), ("mapping",),
              lambda core, fd, other: fd | other, _model_or, makes=True, fires=LOOKUP),
    Operation("fd - keys", "frozendict", ("__sub__",), ("keys",),
              lambda core, fd, keys: fd - keys, _model_sub, makes=True, fires=LOOKUP),
    Operation("fd & keys", "frozendict", ("__and__",), ("keys",),
              lambda core, fd, keys: fd & keys, _model_and, makes=True, fires=LOOKUP),
    Operation("frozendict.evolve", "frozendict", ("evolve",), ("edits",), None,  # (run by the engine)
              engines=frozenset({DIFFERENTIAL, FUZZ}), makes=True),
    Operation("frozendict.diff", "frozendict", ("diff",), ("version",),
              lambda core, fd, other: fd.diff(other), _model_diff, order_dependent=True,
              fires=frozenset({"eq"})),  # (a version's keys are never hashed again)
    Operation("frozendict.diff(dict)", "frozendict", ("diff",), ("other",),
              lambda core, fd, other: fd.diff(other), _model_diff, order_dependent=True, fires=LOOKUP),
    Operation("==", "frozendict", ("__eq__", "__ne__"), ("version",), lambda core, a, b: _eq4(a, b),
              lambda a, b: (a == b, a != b, a == b, a == b), order_dependent=True, fires=LOOKUP),
    Operation("hash", "frozendict", ("__hash__",), (), lambda core, fd: hash(fd),
              lambda d: hash(DictModel(d))),
    Operation("repr", "frozendict", ("__repr__",), (), lambda core, fd: repr(fd),
              lambda d: repr(DictModel(d))),
    Operation("iteration", "frozendict", ("__iter__", "__reversed__", "__len__", "items", "values", "keys"),
              (), lambda core, fd: _iteration(fd), lambda d: _iteration(d)),
    Operation("lookup", "frozendict", ("get", "__contains__"), ("key",),
              lambda core, fd, k: (fd.get(k), k in fd),
              lambda d, k: (d.get(_hashed(k)), k in d), fires=LOOKUP),
    Operation("frozendict.fromkeys", "type", ("fromkeys",), ("keys", "value"),
              lambda core, cls, keys, v: cls.fromkeys(keys, v),
              lambda d, keys, v: {_hashed(k): v for k in keys}, makes=True, fires=frozenset({"hash"})),
    Operation("hostile operand", "frozendict", (), ("hostile", "pairs"), None,
              engines=frozenset({DIFFERENTIAL, FUZZ})),
    # --- added with the registry ---
    Operation("frozendict.get default", "frozendict", ("get",), ("key", "value"),
              lambda core, fd, k, v: fd.get(k, v), lambda d, k, v: d.get(_hashed(k), v),
              reads=True, fires=LOOKUP),
    Operation("fd[k]", "frozendict", ("__getitem__",), ("key",), lambda core, fd, k: fd[k],
              lambda d, k: d[_hashed(k)], reads=True, fires=LOOKUP),
    Operation("dict | fd", "frozendict", ("__ror__",), ("mapping",),
              lambda core, fd, m: m | fd, lambda d, m: {**m, **d}),
    Operation("frozendict.copy", "frozendict", ("copy",), (), lambda core, fd: fd.copy(),
              lambda d: dict(d), makes=True),
    Operation("copy.copy", "frozendict", ("__copy__",), (), lambda core, fd: copy.copy(fd),
              lambda d: dict(d), makes=True),
    # (copies of keys and values are new objects: observed, not kept as versions,
    # since a copied NaN hashes by its identity)
    Operation("copy.deepcopy", "frozendict", ("__deepcopy__",), (),
              lambda core, fd: copy.deepcopy(fd), lambda d: DictModel(copy.deepcopy(d)),
              order_dependent=True, stdlib_python=True),
    # (not nomemory: pickle turns a failed import of the reconstructor into a
    # PicklingError; test_allocation_failure sweeps __reduce__ and unpickling on their own)
    Operation("pickle", "frozendict", ("__reduce__", "__reduce_ex__", "__getnewargs__"), (),
              lambda core, fd: pickle.loads(pickle.dumps(fd)),
              lambda d: DictModel(pickle.loads(pickle.dumps(d))), engines=ENGINES - {NOMEMORY},
              order_dependent=True),
    Operation("frozendict.get_in", "frozendict", ("get_in",), ("path", "value"),
              lambda core, fd, path, v: fd.get_in(path, v), _model_get_in, reads=True, fires=LOOKUP),
    Operation("frozendict.set_in", "frozendict", ("set_in",), ("path", "value"),
              lambda core, fd, path, v: fd.set_in(path, v), _model_set_in, makes=True, fires=LOOKUP),
    Operation("frozendict.update_in", "frozendict", ("update_in",), ("path", "fn"),
              lambda core, fd, path, fn: fd.update_in(path, fn), _model_update_in, makes=True,
              fires=LOOKUP),
    Operation("frozendict.update_in default", "frozendict", ("update_in",), ("path", "fn", "value"),
              lambda core, fd, path, fn, v: fd.update_in(path, fn, default=v), _model_update_in,
              makes=True, fires=LOOKUP),
    Operation("frozendict.delete_in", "frozendict", ("delete_in",), ("path",),
              lambda core, fd, path: fd.delete_in(path), _model_delete_in, makes=True, fires=LOOKUP),
    Operation("frozendict.merge_with", "frozendict", ("merge_with",), ("fn", "version"),
              lambda core, fd, fn, other: fd.merge_with(fn, other), _model_merge_with, makes=True),
    Operation("Diff.apply", "frozendict", ("Diff.apply",), ("version", "version"),
              lambda core, fd, a, b: a.diff(b).apply(fd),
              lambda d, a, b: _model_apply(_model_diff(a, b), d), makes=True, order_dependent=True,
              in_python=True),
    Operation("Diff.invert", "frozendict", ("Diff.invert",), ("version",),
              lambda core, fd, b: fd.diff(b).invert(),
              lambda d, b: _model_invert(_model_diff(d, b)), order_dependent=True,
              in_python=True),
    *_positional("frozendict"),
    # --- the Evolver: edits in place (the differential engine runs them inside frozendict.evolve)
    Operation("Evolver[k] = v", "Evolver", ("__setitem__",), ("key", "value"),
              lambda core, e, k, v: e.__setitem__(k, v),
              lambda d, k, v: d.__setitem__(_hashed(k), v), fires=LOOKUP_DEL),
    Operation("del Evolver[k]", "Evolver", ("__delitem__",), ("key",),
              lambda core, e, k: e.__delitem__(k),
              lambda d, k: d.__delitem__(_hashed(k)), fires=LOOKUP_DEL),
    Operation("Evolver.pop", "Evolver", ("pop",), ("key",), lambda core, e, k: e.pop(k),
              lambda d, k: d.pop(_hashed(k)), reads=True, fires=LOOKUP),
    Operation("Evolver.pop default", "Evolver", ("pop",), ("key", "value"),
              lambda core, e, k, v: e.pop(k, v), lambda d, k, v: d.pop(_hashed(k), v), reads=True,
              fires=LOOKUP),
    Operation("Evolver.popitem", "Evolver", ("popitem",), (), lambda core, e: e.popitem(),
              _model_popitem, fires=frozenset({"hash"})),  # (its key's: to find the entry)
    Operation("Evolver.setdefault", "Evolver", ("setdefault",), ("key", "value"),
              lambda core, e, k, v: e.setdefault(k, v),
              lambda d, k, v: d.setdefault(_hashed(k), v), reads=True, fires=LOOKUP),
    Operation("Evolver.update", "Evolver", ("update",), ("pairs",),
              lambda core, e, pairs: e.update(pairs), _model_update, fires=LOOKUP_DEL),
    Operation("Evolver.update kw", "Evolver", ("update",), ("mapping", "value"),
              lambda core, e, m, v: e.update(m, kw=v),
              lambda d, m, v: _model_update(d, list(m.items()) + [("kw", v)]), fires=LOOKUP_DEL),
    Operation("Evolver.clear", "Evolver", ("clear",), (), lambda core, e: e.clear(),
              lambda d: d.clear(), fires=frozenset({"del"})),
    Operation("Evolver.discard", "Evolver", ("discard",), ("key",),
              lambda core, e, k: e.discard(k) is e,
              lambda d, k: d.pop(_hashed(k), None) is None or True, fires=LOOKUP_DEL),
    Operation("Evolver.get", "Evolver", ("get",), ("key",), lambda core, e, k: e.get(k),
              lambda d, k: d.get(_hashed(k)), reads=True, fires=LOOKUP),
    Operation("in Evolver", "Evolver", ("__contains__",), ("key",), lambda core, e, k: k in e,
              lambda d, k: _hashed(k) in d, fires=LOOKUP),
    Operation("Evolver.freeze", "Evolver", ("freeze",), (), lambda core, e: e.freeze(),
              lambda d: DictModel(dict(d))),
    # added with the registry
    Operation("Evolver.set", "Evolver", ("set",), ("key", "value"),
              lambda core, e, k, v: e.set(k, v) is e,
              lambda d, k, v: d.__setitem__(_hashed(k), v) or True, fires=LOOKUP_DEL),
    Operation("Evolver[k]", "Evolver", ("__getitem__",), ("key",), lambda core, e, k: e[k],
              lambda d, k: d[_hashed(k)], reads=True, fires=LOOKUP),
    Operation("Evolver.copy", "Evolver", ("copy",), (), lambda core, e: e.copy().freeze(),
              lambda d: DictModel(dict(d))),
    Operation("Evolver iteration", "Evolver",
              ("__iter__", "__reversed__", "__len__", "items", "values", "keys"), (),
              lambda core, e: _iteration(e), lambda d: _iteration(d)),
    Operation("Evolver.get_in", "Evolver", ("get_in",), ("path", "value"),
              lambda core, e, path, v: e.get_in(path, v), _model_get_in, reads=True, fires=LOOKUP),
    Operation("Evolver.set_in", "Evolver", ("set_in",), ("path", "value"),
              lambda core, e, path, v: e.set_in(path, v) is e,
              lambda d, path, v: _model_edit_in(d, path, lambda d, p: _model_set_in(d, p, v)),
              fires=LOOKUP_DEL),
    Operation("Evolver.update_in", "Evolver", ("update_in",), ("path", "fn"),
              lambda core, e, path, fn: e.update_in(path, fn) is e,
              lambda d, path, fn: _model_edit_in(d, path, lambda d, p: _model_update_in(d, p, fn)),
              fires=LOOKUP_DEL),
    Operation("Evolver.update_in default", "Evolver", ("update_in",), ("path", "fn", "value"),
              lambda core, e, path, fn, v: e.update_in(path, fn, default=v) is e,
              lambda d, path, fn, v: _model_edit_in(d, path, lambda d, p: _model_update_in(d, p, fn, v)),
              fires=LOOKUP_DEL),
    Operation("Evolver.delete_in", "Evolver", ("delete_in",), ("path",),
              lambda core, e, path: e.delete_in(path) is e,
              lambda d, path: _model_edit_in(d, path, _model_delete_in), fires=LOOKUP_DEL),
    Operation("Evolver ==", "Evolver", ("__eq__", "__ne__"), ("other",),
              lambda core, e, other: (e == other, e != other), None, engines=CORES_ONLY,
              fires=LOOKUP),
    Operation("Evolver repr", "Evolver", ("__repr__",), (), lambda core, e: repr(e),
              lambda d: "Evolver(%r)" % (d,), engines=CORES_ONLY),
    Operation("Evolver pickle", "Evolver", ("__reduce__",), (),
              lambda core, e: pickle.loads(pickle.dumps(e)).freeze(), None,
              engines=CORES_ONLY - {NOMEMORY}),
    Operation("Evolver(mapping)", "Evolver", ("__init__", "__new__"), ("mapping",),
              lambda core, e, m: type(e).__init__(e, m), None,
              # (hostile: a lying subclass's __init__ is its own; nomemory: the pure
              # core's re-init is not failure-atomic, the C core's is -- see the report)
              engines=CORES_ONLY - {HOSTILE, NOMEMORY},
              fires=frozenset({"hash", "del"})),
    *_positional("Evolver"),  # read from its current contents
]  # fmt: skip

BY_NAME = {op.name: op for op in OPERATIONS}
assert len(BY_NAME) == len(OPERATIONS), "two operations share a name"


def for_engine(engine, on=None):
    """The operations ``engine`` runs (on one kind of subject, or one of a
    tuple of them, if given), in table order."""
    subjects = (on,) if isinstance(on, str) else on
    return [op for op in OPERATIONS if engine in op.engines and (on is None or op.on in subjects)]


def role_table(engine, makers, on=None, besides=()):
    """``makers`` (role -> what makes the engine's object for it), checked:
    every role an operation of ``engine`` takes (on the subjects ``on``, as
    ``for_engine``) has one, but the roles the engine handles itself
    (``besides``), and every role named is in ``ROLES``.  A LookupError
    saying which otherwise, raised where the engine declares its table (at
    its import)."""
    unknown = sorted(set(makers) - set(ROLES))
    taken = {role for op in for_engine(engine, on) for role in op.args}
    missing = sorted(taken - set(makers) - set(besides))
    if unknown or missing:
        raise LookupError(
            "the %s engine's role table%s: %s (tests/operations.py: ROLES lists the roles; "
            "each engine makes an object for every role its operations take)"
            % (
                engine,
                "" if on is None else " for operations on %s" % (on,),
                "; ".join(
                    part
                    for part in (
                        "no object for the role(s) %s" % ", ".join(missing) if missing else "",
                        "unknown role(s) %s" % ", ".join(unknown) if unknown else "",
                    )
                    if part
                ),
            )
        )
    return makers


def arguments(table, entry, *context):
    """``entry``'s arguments: each role's object from an engine's ``role_table``,
    made by calling its maker with ``context``."""
    return [table[role](*context) for role in entry.args]


NOT_OPERATIONS = {
    "__class_getitem__": "typing only (frozendict[str, int]); tests/typing checks it",
    "__get_pydantic_core_schema__": "pydantic's hook; tests/test_pydantic.py",
    "__rich_repr__": "rich's display hook; tests/test_pprint.py",
    "_repr_pretty_": "IPython's display hook; tests/test_pprint.py",
    "__match_args__": "an attribute for class patterns, not an operation",
    "__replace__": "copy.replace (3.13+): a copy with keyword items; tests/test_pep814_objects.py",
    "__rsub__": "the C type's subtraction slot; `keys - fd` returns NotImplemented (no such operation)",
    "__rand__": "the C type's & slot; `keys & fd` returns NotImplemented (no such operation)",
    "__lt__": "the C type's rich-compare slot: ordering is not supported, as for dict",
    "__le__": "the C type's rich-compare slot: ordering is not supported, as for dict",
    "__gt__": "the C type's rich-compare slot: ordering is not supported, as for dict",
    "__ge__": "the C type's rich-compare slot: ordering is not supported, as for dict",
    "__setattr__": "the pure core refuses attribute assignment; tests/test_pep814_objects.py",
    "__delattr__": "the pure core refuses attribute deletion; tests/test_pep814_objects.py",
    # Diff (one Python class for both cores): its public methods, as "Diff.name"
    "Diff.to_json_patch": "reads a Diff into RFC 6902 operations, whose pointers need str keys "
    "(the engines' keys are not JSON); tests/test_jsonpatch.py checks it on both cores",
}
"""Public attributes that are not operations for the engines, each with why
(``Diff``'s methods as ``"Diff.name"``)."""
