"""Bad arguments: wrong types, wrong shapes, and objects used out of turn
(docs/spec.md §4), on both cores.

Unhashable keys get the message PEP 814's builtin gives (docs/pep814.md, rows
C8 and L3) and change nothing; unhashable values are allowed, only ``hash()``
fails (every time).  Pairs of the wrong length and elements that are not pairs
get dict's errors.  Views are not pickled or copied (as ``dict_keys``); an
iterator whose Evolver changed size raises on ``next`` and ``__reduce__``, and
keeps raising; an Evolver made by ``__new__`` without ``__init__`` is empty.
"""

import copy
import pickle

import pytest
from helpers import Snapshot, unhashable_key_message
from keys import UnhashableKey

LIST_KEY_MESSAGE = "cannot use 'list' as a frozendict key (unhashable type: 'list')"


# --- unhashable keys and values --------------------------------------------------------


@pytest.mark.parametrize(
    "op",
    [
        lambda fd: type(fd)([("a", 1), ([], 2)]),
        lambda fd: type(fd).fromkeys(["a", []]),
        lambda fd: fd[[]],
        lambda fd: fd.get([]),
        lambda fd: [] in fd,
        lambda fd: [] in fd.keys(),
        lambda fd: fd.set([], 1),
        lambda fd: fd.delete([]),
        lambda fd: fd.discard([]),
        lambda fd: fd - ["a", []],
        lambda fd: fd & ["a", []],
    ],
    ids=[
        "construct",
        "fromkeys",
        "getitem",
        "get",
        "in",
        "keys-in",
        "set",
        "delete",
        "discard",
        "sub",
        "and",
    ],
)
def test_unhashable_key_message(core, op):
    fd = core.frozendict(a=1)
    snap = Snapshot(fd)
    with pytest.raises(TypeError) as info:
        op(fd)
    assert str(info.value) == LIST_KEY_MESSAGE
    snap.check()


def test_unhashable_user_class_key_message(core):
    key = UnhashableKey()
    with pytest.raises(TypeError) as info:
        core.frozendict([(key, 1)])
    assert str(info.value) == unhashable_key_message(key)
    with pytest.raises(TypeError) as info:
        core.frozendict(a=1).set(key, 1)
    assert str(info.value) == unhashable_key_message(key)


def test_unhashable_key_in_an_evolver(core):
    e = core.frozendict(a=1).evolve()
    for op in (lambda: e.__setitem__([], 1), lambda: e.setdefault([]), lambda: e.pop([], None)):
        with pytest.raises(TypeError, match=r"unhashable type: 'list'"):
            op()
    assert list(e.items()) == [("a", 1)]


def test_unhashable_values_are_allowed_only_hash_fails(core):
    value = [1, 2]
    fd = core.frozendict(a=value, b=2)
    assert fd["a"] is value
    fd._check()
    for _ in range(3):  # fails every time: the failure is not cached
        with pytest.raises(TypeError, match=r"unhashable type: 'list'"):
            hash(fd)
    with pytest.raises(TypeError):
        {fd: 1}
    assert fd == {"a": [1, 2], "b": 2}
    assert fd == core.frozendict(a=[1, 2], b=2)
    out = fd.set("c", {"x": 1}).delete("a")
    out._check()
    with pytest.raises(TypeError, match=r"unhashable type: 'dict'"):
        hash(out)
    healed = out - ["c"]
    assert hash(healed) == hash(frozenset({"b": 2}.items()))


# --- wrong-length and malformed pairs -------------------------------------------------------


@pytest.mark.parametrize(
    "pairs,message",
    [
        (
            [("a", 1), ("b", 2, 3)],
            "dictionary update sequence element #1 has length 3; 2 is required",
        ),
        ([("a",)], "dictionary update sequence element #0 has length 1; 2 is required"),
        ([("a", 1), ()], "dictionary update sequence element #1 has length 0; 2 is required"),
        (["ab", "abc"], "dictionary update sequence element #1 has length 3; 2 is required"),
    ],
)
def test_wrong_length_pairs(core, pairs, message):
    with pytest.raises(ValueError) as info:
        core.frozendict(pairs)
    assert str(info.value) == message
    with pytest.raises(ValueError) as info:
        dict(pairs)
    assert str(info.value) == message


def test_non_sequence_element(core):
    with pytest.raises(TypeError):
        core.frozendict([("a", 1), 5])
    with pytest.raises(TypeError):
        core.frozendict(5)


# --- objects used out of turn: a stale iterator, views, a bare Evolver -------------------


@pytest.mark.parametrize("make", ["iter", "keys", "values", "items", "reversed"])
def test_iterator_reduce_after_the_evolver_changed_size(core, make):
    e = core.frozendict({i: i for i in range(5)}).evolve()
    view = {
        "iter": lambda: iter(e),
        "keys": lambda: iter(e.keys()),
        "values": lambda: iter(e.values()),
        "items": lambda: iter(e.items()),
        "reversed": lambda: reversed(e),
    }[make]
    it = view()
    next(it)
    e[99] = 1
    # like next(), and like a dict iterator's __reduce__; and it stays stale
    for op in (it.__reduce__, lambda: next(it), it.__reduce__, lambda: next(it)):
        with pytest.raises(RuntimeError, match="Evolver changed size during iteration"):
            op()


def test_iterator_reduce_keeps_checking_the_evolver(core):
    e = core.frozendict({i: i for i in range(5)}).evolve()
    it = iter(e)
    next(it)
    assert it.__reduce__()[1] == ([1, 2, 3, 4],)
    assert next(it) == 1
    del e[4]
    with pytest.raises(RuntimeError):
        next(it)


def test_an_exhausted_iterator_stays_exhausted(core):
    e = core.frozendict({1: 1}).evolve()
    it = iter(e)
    assert list(it) == [1]
    e[2] = 2
    with pytest.raises(StopIteration):
        next(it)
    assert it.__reduce__()[1] == ([],)


@pytest.mark.parametrize("view", ["keys", "values", "items"])
@pytest.mark.parametrize("owner", ["frozendict", "evolver"])
def test_views_are_not_pickled_or_copied(core, view, owner):
    # Like dict_keys; the pure core pickled them.
    fd = core.frozendict({1: 2})
    v = getattr(fd if owner == "frozendict" else fd.evolve(), view)()
    name = "frozendict_%s" % view
    for op in [copy.copy, copy.deepcopy] + [lambda v, p=p: pickle.dumps(v, p) for p in range(6)]:
        with pytest.raises(TypeError, match="cannot pickle '%s' object" % name):
            op(v)


def test_evolver_new_without_init_is_an_empty_evolver(core):
    # It worked in C, raised AttributeError in the pure core.
    e = core.Evolver.__new__(core.Evolver)
    assert len(e) == 0 and list(e) == [] and repr(e) == "Evolver()"
    e[1] = 2
    assert e.freeze() == {1: 2}
    assert e.popitem() == (1, 2)
    e.update({3: 4})
    assert e == {3: 4} and e.copy() == {3: 4}
