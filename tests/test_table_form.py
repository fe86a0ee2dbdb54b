"""The table form: a version of more than FLAT_MAX keys built once (from a
dict, pairs, keywords, fromkeys, JSON or a pickle) whose keys all hash
without user code holds a private dict; its first derivation builds the
tries (the *twin*) once, and every version derived from it is a tries
version that shares the twin's structure.

What is checked here, on both cores: which builds give the table form and
which do not; the table keeps its dict beside the twin (reads stay a
dict's); a derived version shares structure with the twin, so == and diff
between them call no value's __eq__ but the changed ones'; every read and
every operation gives what the same map in tries gives; pickles, copies and
subclasses with __slots__; the two cores agree on the form of each build.
The hostile side (re-entrant __eq__ during the twin's build, the GC, threads
deriving at once) is in hostile/test_table_form.py.
"""

import copy
import json
import pickle

import pytest
from conftest import available_cores

from frozenmap._pycore.flat import FLAT_MAX

N = FLAT_MAX + 8


def form(fd):
    """A version's form, as its _dump() names it: flat, table (with
    "+twin" once its tries are built) or tries."""
    head = fd._dump().split("\n", 1)[0]
    if " table" in head:
        return "table+twin" if "(and tries)" in head else "table"
    return "flat" if head.endswith(" flat") else "tries"


def plain(n=N):
    return {"k%d" % i: i for i in range(n)}


class CountingValue:
    """A value whose __eq__ counts its calls (equal by ``v``)."""

    calls = 0

    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        CountingValue.calls += 1
        return isinstance(other, CountingValue) and other.v == self.v

    __hash__ = None  # (unhashable, as a mutable value would be)


class HashedStr(str):
    """A str whose hash is Python code: a map holding it is not a table."""

    def __hash__(self):
        return str.__hash__(self)


class EqStr(str):
    """A str whose __eq__ is Python code but whose hash is str's: a table may hold it."""

    eq_calls = 0

    def __eq__(self, other):
        EqStr.eq_calls += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


# --- which builds are tables ------------------------------------------------------------


def test_builds_of_more_than_flat_max_plain_keys_are_tables(core):
    fd = core.frozendict
    d = plain()
    builds = {
        "dict": fd(d),
        "pairs": fd(list(d.items())),
        "generator of pairs": fd((k, v) for k, v in d.items()),
        "keywords": fd(**d),
        "dict and keywords": fd(d, extra=1),
        "fromkeys": fd.fromkeys(d),
        "json": json.loads(json.dumps(d), object_pairs_hook=fd),
        "pickle": pickle.loads(pickle.dumps(fd(d))),
        "int keys": fd({i: i for i in range(N)}),
        "mixed plain keys": fd({**d, 1: 1, 2.5: 2, b"b": 3, None: 4, (1, "t"): 5}),
        "the constructor on a table": fd(fd(d)),
    }
    for name, m in builds.items():
        assert form(m) == "table", name
        m._check()
    assert builds["dict"] == d and list(builds["dict"]) == list(d)
    assert builds["fromkeys"] == dict.fromkeys(d)


def test_a_table_owns_its_dict(core):
    source = plain()
    m = core.frozendict(source)
    source["k0"] = "changed"
    del source["k1"]
    source["new"] = 1
    assert m["k0"] == 0 and "k1" in m and "new" not in m and len(m) == N
    assert list(m) == list(plain())
    m._check()


def test_builds_that_are_not_tables(core):
    fd = core.frozendict
    d = plain()
    assert form(fd(plain(FLAT_MAX))) == "flat"  # (the limit: flat up to FLAT_MAX)
    assert form(fd(plain(FLAT_MAX + 1))) == "table"
    # A key whose hash is Python code, anywhere in the build: tries (the
    # build leaves the table before hashing it, and hashes it once).
    assert form(fd({**d, HashedStr("user"): 0})) == "tries"
    assert form(fd([(HashedStr("first"), 0)] + list(d.items()))) == "tries"
    assert form(fd({**d, (1, HashedStr("in a tuple")): 0})) == "tries"
    # Derived versions are tries, and the table keeps its dict beside its twin.
    base = fd(d)
    derived = base.set("k0", -1)
    assert form(derived) == "tries" and form(base) == "table+twin"
    assert form(base | {"new": 1}) == "tries"
    assert form(base.evolve().freeze()) in ("table", "table+twin")  # (nothing changed: base)


def test_a_key_with_python_eq_but_str_hash_may_be_in_a_table_and_is_found_as_in_a_dict(core):
    fd = core.frozendict
    keys = [EqStr("e%d" % i) for i in range(N)]
    m = fd({k: i for i, k in enumerate(keys)})
    d = {k: i for i, k in enumerate(keys)}
    assert form(m) == "table"
    EqStr.eq_calls = 0
    assert m["e5"] == 5 and m.get("e6") == 6 and "nope" not in m
    table_calls = EqStr.eq_calls
    EqStr.eq_calls = 0
    assert d["e5"] == 5 and d.get("e6") == 6 and "nope" not in d
    assert table_calls == EqStr.eq_calls  # (the dict's own lookup)


# --- reads ------------------------------------------------------------------------------


def test_every_read_of_a_table_is_the_same_maps_read_in_tries(core):
    fd = core.frozendict
    d = {**plain(), 7: "seven", (1, 2): "pair", None: "none"}
    table = fd(d)
    tries = fd(d).set("k0", "x").set("k0", 0)  # (equal, in tries, same order)
    assert form(table) == "table" and form(tries) == "tries"
    assert table == tries == d and hash(table) == hash(tries)
    assert repr(table) == repr(tries) and str(table) == str(tries)
    assert list(table.items()) == list(tries.items()) == list(d.items())
    assert list(reversed(table)) == list(reversed(d))
    assert list(reversed(table.items())) == list(reversed(d.items()))
    assert len(table) == len(d) and table.keys() == d.keys()
    for i in (0, 5, -1, len(d) - 1):
        assert table.key_at(i) == list(d)[i] and table.item_at(i) == list(d.items())[i]
    assert table.index("k3") == list(d).index("k3")
    assert list(table.slice(3, 9).items()) == list(d.items())[3:9]
    assert table.get("absent", "dflt") == "dflt" and table[(1, 2)] == "pair"
    # A probe whose hash is Python code is hashed once and found in the twin.
    assert table[HashedStr("k3")] == 3 and HashedStr("nope") not in table
    with pytest.raises(KeyError, match="absent"):
        table["absent"]
    with pytest.raises(TypeError, match="unhashable"):
        table[[]]
    assert table.keys() & {"k1", "zz"} == {"k1"} and table.items() >= {("k2", 2)}


def test_hash_of_a_table_is_the_hash_of_every_equal_frozendict(core):
    fd = core.frozendict
    d = plain()
    via_tries = fd(d).set("k1", "x").set("k1", 1)
    assert hash(fd(d)) == hash(via_tries) == hash(fd(list(d.items())))
    with pytest.raises(TypeError, match="unhashable"):
        hash(fd({**d, "list": []}))


def test_equality_between_two_tables_and_with_dicts(core):
    fd = core.frozendict
    d = plain()
    assert fd(d) == fd(dict(reversed(d.items())))  # (order does not count)
    assert fd(d) != fd({**d, "k0": "other"}) and fd(d) != fd({**d, "more": 1})
    assert fd(d) == d and d == fd(d) and fd(d) != list(d)


# --- derivations ------------------------------------------------------------------------


def test_derivations_of_a_table_are_right(core):
    fd = core.frozendict
    d = plain()
    base = fd(d)
    expected = dict(d)
    expected["k3"] = "x"
    del expected["k4"]
    expected["new"] = 1
    got = base.set("k3", "x").delete("k4").set("new", 1)
    assert got == expected and list(got) == list(expected)
    assert base == d  # (unchanged)
    assert base - {"k1", "k2"} == {k: v for k, v in d.items() if k not in ("k1", "k2")}
    assert base & {"k1", "zz"} == {"k1": 1}
    assert (base | {"k1": "one", "z": 26}) == {**d, "k1": "one", "z": 26}
    assert base.set_in(("k5",), 55)["k5"] == 55
    assert base.merge_with(lambda a, b: a + b, {"k1": 10})["k1"] == 11
    assert base.discard("absent") is base and base.set("k1", d["k1"]) is base
    assert base.merge_with(lambda a, b: a, {}) is base
    ev = base.evolve()
    ev["k0"] = "zero"
    del ev["k9"]
    assert ev.freeze() == {**{k: v for k, v in d.items() if k != "k9"}, "k0": "zero"}
    assert base.evolve().freeze() is base


def test_a_table_and_its_derivations_compare_by_what_differs(core):
    fd = core.frozendict
    values = {"k%d" % i: CountingValue(i) for i in range(200)}
    base = fd(values)
    assert form(base) == "table"
    derived = base.set("k7", CountingValue(-7))
    CountingValue.calls = 0
    assert base != derived
    diff = base.diff(derived)
    assert list(diff.changed) == ["k7"] and not diff.added and not diff.removed
    same = base.set("k8", CountingValue(8))  # (an equal value, another object)
    assert base == same
    # Only the changed entries' values are compared (a walk of everything
    # would call __eq__ 200 times per comparison).
    assert CountingValue.calls <= 4, CountingValue.calls


def test_a_table_builds_its_twin_once_and_every_derivation_shares_it(core):
    fd = core.frozendict
    base = fd(plain(1000))
    a, b = base.set("k1", "a"), base.set("k2", "b")
    assert form(base) == "table+twin"
    # a and b are both one path away from the twin: they share all but it.
    shared = set(a._node_ids()) & set(b._node_ids())
    assert len(shared) >= len(set(a._node_ids())) - 12, "a and b share the twin's nodes"


# --- pickles, copies, subclasses -------------------------------------------------------------


def test_pickles_and_copies_of_a_table(core):
    fd = core.frozendict
    base = fd(plain())
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(base, protocol))
        assert back == base and list(back) == list(base) and form(back) == "table"
    assert copy.copy(base) is base and copy.deepcopy(base) == base
    assert form(copy.deepcopy(base)) == "table"
    base.set("k1", 0)  # (with its twin built, too)
    assert form(pickle.loads(pickle.dumps(base))) == "table"


# A subclass with __slots__ per core, at module level (pickle finds it by name).
SLOTTED = {
    core.name: type(
        "Slotted_" + core.name,
        (core.frozendict,),
        {"__slots__": ("source",), "__module__": __name__},
    )
    for core in available_cores()
}
globals().update({cls.__name__: cls for cls in SLOTTED.values()})


def test_a_subclass_with_slots_holds_a_table(core):
    Config = SLOTTED[core.name]
    c = Config(plain())
    c.source = "file"
    assert form(c) == "table" and c == plain() and c.source == "file"
    assert type(c.set("k1", 0)) is core.frozendict  # (derivations are exact)
    assert c.set("k1", 0)["k1"] == 0 and c["k2"] == 2
    back = pickle.loads(pickle.dumps(Config(plain())))
    assert type(back) is Config and back == plain()
    d = Config(c)  # (a copy of another subclass instance's table)
    assert form(d) == "table+twin" and d == c  # (the twin c built is shared)


def test_both_cores_choose_the_same_form_for_each_build():
    cores = available_cores()
    if len(cores) < 2:
        pytest.skip("needs both cores")
    d = plain()
    builds = [
        lambda fd: fd(d),
        lambda fd: fd(plain(FLAT_MAX)),
        lambda fd: fd({**d, HashedStr("user"): 0}),
        lambda fd: fd(d).set("k1", 0),
        lambda fd: fd(**d),
        lambda fd: fd(d) | {"z": 1},
        lambda fd: fd(d) - {"k1"},
    ]
    for build in builds:
        forms = {form(build(core.frozendict)) for core in cores}
        assert len(forms) == 1, forms


def test_an_unhashable_probe_fails_alike_in_every_form(core):
    fd = core.frozendict
    forms = {"flat": fd(a=1), "table": fd(plain()), "tries": fd(plain()).set("x", 1)}
    reads = {"[]": lambda m: m[[]], "get": lambda m: m.get([]), "in": lambda m: [] in m}
    for name, m in forms.items():
        for read_name, read in reads.items():
            with pytest.raises(TypeError) as info:
                read(m)
            message = "cannot use 'list' as a frozendict key (unhashable type: 'list')"
            assert str(info.value) == message, (name, read_name)
            assert type(info.value.__cause__) is TypeError, (name, read_name)  # (the original)
