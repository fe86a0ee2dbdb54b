"""Deep ``freeze`` and ``thaw`` (docs/spec.md §2): nested plain data to
immutable data and back, sharing what is already frozen."""

import collections
import json

import pytest
from fault_helpers import run_python
from hypothesis import given
from hypothesis import strategies as st

import frozenmap
from frozenmap import freeze, thaw

json_docs = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


def _is_deeply_frozen(obj):
    if isinstance(obj, frozenmap.frozendict):
        return all(_is_deeply_frozen(v) for v in obj.values())
    if isinstance(obj, tuple):
        return all(_is_deeply_frozen(v) for v in obj)
    return not isinstance(obj, (dict, list, set))


@given(json_docs)
def test_thaw_of_freeze_is_the_document(doc):
    frozen = freeze(doc)
    assert _is_deeply_frozen(frozen)
    assert thaw(frozen) == doc
    assert json.loads(json.dumps(thaw(frozen))) == json.loads(json.dumps(doc))
    assert freeze(frozen) is frozen  # frozen data is shared, not copied
    if isinstance(frozen, frozenmap.frozendict):
        hash(frozen)


def test_freeze_converts_each_container_kind():
    out = freeze({"l": [1, [2]], "t": (3, {"x": 4}), "s": {5}, "f": frozenset({6}), "o": None})
    assert out == {
        "l": (1, (2,)),
        "t": (3, {"x": 4}),
        "s": frozenset({5}),
        "f": frozenset({6}),
        "o": None,
    }
    assert type(out) is frozenmap.frozendict
    assert type(out["t"][1]) is frozenmap.frozendict
    assert type(out["s"]) is frozenset


def test_freeze_shares_what_is_already_frozen(core):
    F = core.frozendict
    inner = F(a=1, b=(2, 3))
    outer = F(inner=inner, other=F(c=frozenset({4})))
    assert freeze(outer) is outer
    mixed = outer.set("raw", {"d": [5]})
    frozen = freeze(mixed)
    assert frozen["inner"] is inner and frozen["other"] is outer["other"]
    assert frozen["raw"] == {"d": (5,)}
    assert type(frozen) is F and type(frozen["raw"]) is frozenmap.frozendict
    t = (1, "x", inner)
    assert freeze(t) is t


def test_freeze_leaves_other_objects_alone_and_keeps_namedtuples():
    class Thing:
        def __init__(self):
            self.items = [1]

    thing = Thing()
    assert freeze(thing) is thing and thing.items == [1]  # no __dict__ magic
    Point = collections.namedtuple("Point", "x y")
    p = freeze(Point([1], 2))
    assert type(p) is Point and p == ((1,), 2)


def test_freeze_registration_hook():
    class Bag:
        def __init__(self, *items):
            self.items = list(items)

    @freeze.register(Bag)
    def _(bag):
        return tuple(freeze(x) for x in bag.items)

    assert freeze({"b": Bag([1], 2)}) == {"b": ((1,), 2)}
    assert freeze.dispatch(Bag) is _


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_deep_nesting_gives_recursion_error_or_success_never_a_crash(kind):
    code = f"""
import sys
from frozenmap import freeze, thaw
x = 0
for _ in range(100_000):
    x = [x] if {kind!r} == "list" else {{"k": x}}
for fn in (freeze, thaw):
    try:
        fn(x)
    except RecursionError:
        pass
print("ok")
"""
    proc = run_python(code)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-2000:]
