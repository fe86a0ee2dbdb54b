"""Drafts of a C-core state run their hot paths in C (frozenmap/_ccore/drafts.c);
those of a pure-core state run drafts.py alone.  Both must give the same
states and the same patches.

What is checked here: which path each state takes (so that the other draft
tests, run on both cores, test both implementations); the same recipes on
both cores give equal results and identical patches, including the cases the
C paths hand back to Python (a second change, a value to deep-freeze, a
list, keys that need escaping, a shared draft); a state mixing the two cores'
frozendicts; and the revoked and foreign-thread uses the C slots refuse.
"""

import threading

import pytest
from conftest import available_cores
from test_drafts import deep, ordered

import frozenmap
from frozenmap import drafts, produce, produce_with_patches

CORES = {core.name: core for core in available_cores()}
needs_both = pytest.mark.skipif(
    not (drafts._C is not None and {"c", "python"} <= set(CORES)),
    reason="needs the C core loaded as frozenmap's core, and the pure core",
)


@needs_both
def test_each_core_takes_its_own_path():
    produce(CORES["python"].frozendict(), lambda d: None)  # (the types are synced)
    c_root, c_finish, c_patches = drafts._ROOTS[CORES["c"].frozendict]
    py_root, py_finish, py_patches = drafts._ROOTS[CORES["python"].frozendict]
    assert (py_root, py_finish, py_patches) == (drafts._new_root, drafts._finish, drafts._patches)
    assert c_root is not py_root and c_finish is not py_finish and c_patches is not py_patches
    # The item access of a DictDraft is its C base's (calling drafts.py for a
    # pure-core state), not drafts.py's methods.
    assert "__getitem__" not in drafts.DictDraft.__dict__
    assert drafts.DictDraft.__getitem__ is not drafts.DictDraft._getitem


def _recipes():
    def one_leaf(d):
        d["a"]["b"]["c"] = 5

    def two_changes_one_map(d):
        d["a"]["b"]["c"] = 5
        d["a"]["b"]["d"] = 6  # (the second change of a map: an Evolver)

    def delete_and_readd(d):
        del d["a"]["b"]["c"]
        d["a"]["b"]["new"] = 1
        d["a"]["b"]["c"] = 0

    def nested_values(d):
        d["a"]["fresh"] = {"x": [1, {"y": 2}]}  # deep-frozen
        d["list"].append({"z": 1})
        d["list"][0] = 10

    def escaped_keys(d):
        d["odd/key"]["~tilde"] = "t"
        d["ints"][1] = "one"

    def shared_draft(d):
        d["copy"] = d["a"]["b"]  # one draft in two places
        d["a"]["b"]["c"] = 7

    def cleared_and_popped(d):
        d["a"]["b"].clear()
        d["ints"].popitem()

    def many(d):
        for i in range(30):
            d["many"]["k%d" % (i % 7)]["v%d" % (i % 5)] = i

    return [
        one_leaf,
        two_changes_one_map,
        delete_and_readd,
        nested_values,
        escaped_keys,
        shared_draft,
        cleared_and_popped,
        many,
    ]


PLAIN = {
    "a": {"b": {"c": 1, "d": 2}, "e": 3},
    "list": [1, 2],
    "odd/key": {"~tilde": "x"},
    "ints": {1: "i", 2: "ii"},
    "many": {"k%d" % i: {"v%d" % j: j for j in range(5)} for i in range(7)},
}


@needs_both
@pytest.mark.parametrize("recipe", _recipes(), ids=lambda r: r.__name__)
def test_c_and_python_paths_agree(recipe):
    c_base, py_base = deep(CORES["c"], PLAIN), deep(CORES["python"], PLAIN)
    c_new, c_forward, c_inverse = produce_with_patches(c_base, recipe)
    py_new, py_forward, py_inverse = produce_with_patches(py_base, recipe)
    assert ordered(c_new) == ordered(py_new)
    assert (c_forward, c_inverse) == (py_forward, py_inverse)
    assert ordered(produce(c_base, recipe)) == ordered(produce(py_base, recipe))
    assert type(c_new) is CORES["c"].frozendict and type(py_new) is CORES["python"].frozendict
    # Untouched subtrees are shared in both.
    assert c_new["odd/key"] is c_base["odd/key"] or recipe.__name__ == "escaped_keys"


@needs_both
def test_a_state_mixing_the_cores():
    pure = CORES["python"].frozendict
    base = CORES["c"].frozendict(top=pure(inner=pure(x=1), y=2), t=(pure(z=1),))

    def recipe(d):
        d["top"]["inner"]["x"] = 10  # a pure map drafted from a C-core state
        d["top"]["y"] = 20
        d["t"][0]["z"] = 2

    new, forward, inverse = produce_with_patches(base, recipe)
    assert type(new) is CORES["c"].frozendict and type(new["top"]) is pure
    assert new == {"top": {"inner": {"x": 10}, "y": 20}, "t": ({"z": 2},)}
    assert forward == [
        {"op": "replace", "path": "/top/inner/x", "value": 10},
        {"op": "replace", "path": "/top/y", "value": 20},
        {"op": "replace", "path": "/t/0/z", "value": 2},
    ]
    assert frozenmap.apply_json_patch(new, inverse) == base


@pytest.mark.parametrize("core_name", ["c", "python"])
def test_a_revoked_or_foreign_draft_is_refused_by_both_paths(core_name):
    if core_name not in CORES:
        pytest.skip("core not available")
    base = deep(CORES[core_name], {"a": {"b": 1}})
    kept = {}

    def recipe(d):
        kept["root"], kept["a"] = d, d["a"]
        errors = []

        def elsewhere():
            for use in (lambda: d["a"], lambda: d.__setitem__("x", 1)):
                try:
                    use()
                except RuntimeError as exc:
                    errors.append(str(exc))

        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
        assert len(errors) == 2 and all("another thread" in e for e in errors)

    produce(base, recipe)
    for use in (lambda: kept["root"]["a"], lambda: kept["a"].__setitem__("b", 2)):
        with pytest.raises(RuntimeError, match="revoked"):
            use()


class _Logged:
    """A key that records its __hash__ and __eq__ calls (two share a hash)."""

    log: list = []

    def __init__(self, name, h):
        self.name, self.h = name, h

    def __hash__(self):
        _Logged.log.append(("hash", self.name))
        return self.h

    def __eq__(self, other):
        _Logged.log.append(("eq", self.name, getattr(other, "name", other)))
        return isinstance(other, _Logged) and other.name == self.name

    def __repr__(self):
        return self.name


@needs_both
def test_c_and_python_paths_make_the_same_user_calls():
    a, b, c, fresh = _Logged("a", 1), _Logged("b", 1), _Logged("c", 2), _Logged("fresh", 1)
    twin_b = _Logged("b", 1)  # equal to b, not b: found by __eq__

    def recipe(d):
        inner = d["m"]
        inner[a] = 10  # a first change
        inner[twin_b] = 20  # a second change, through __eq__
        del inner[c]
        inner[fresh] = 0
        assert twin_b in inner and c not in inner
        d["m2"][a] = inner.get(b)

    logs = []
    for core in (CORES["c"], CORES["python"]):
        fd = core.frozendict
        base = fd(m=fd({a: 1, b: 2, c: 3}), m2=fd({a: 0}))
        _Logged.log = []
        new = produce(base, recipe)
        logs.append(list(_Logged.log))
        assert list(new["m"].items()) == [(a, 10), (b, 20), (fresh, 0)]
    assert logs[0] == logs[1] and ("eq", "b", "b") in logs[0]
