"""Diffs as patches (``Diff.apply``, ``Diff.invert``, deep diffs) and ``merge_with``.

docs/spec.md §2.  Properties on both cores: ``a.diff(b).apply(a) == b`` and
``a.diff(b).invert().apply(b) == a`` for any a, b, shallow and deep; a patch
that does not fit raises ``ValueError`` naming the key and changes nothing;
``a.diff(b).to_json_patch()``, sent as JSON text and applied to ``a``, gives
``b`` as JSON, ``int`` keys included.
"""

import json
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frozenmap import apply_json_patch, json_default

KEYS = st.sampled_from(["a", "b", "c", "d", 1, 2])
LEAVES = st.one_of(st.integers(0, 3), st.sampled_from(["x", "y"]))


def frozen(core):
    return st.recursive(
        LEAVES,
        lambda children: st.dictionaries(KEYS, children, max_size=4).map(core.frozendict),
        max_leaves=10,
    ).filter(lambda v: isinstance(v, core.frozendict))


@given(st.data())
def test_apply_and_invert_round_trip(core, data):
    a = data.draw(frozen(core))
    b = data.draw(frozen(core))
    for deep in (False, True):
        d = a.diff(b, deep=deep)
        assert d.apply(a) == b
        assert d.invert().apply(b) == a
        assert d.invert().invert() == d
        assert pickle.loads(pickle.dumps(d)) == d
        a._check()
        b._check()


@given(st.data())
def test_a_diff_as_json_patch_gives_the_target_as_json(core, data):
    a = data.draw(frozen(core))
    b = data.draw(frozen(core))
    as_json = lambda doc: json.loads(json.dumps(doc, default=json_default))  # noqa: E731
    for deep in (False, True):
        text = json.dumps(a.diff(b, deep=deep).to_json_patch(), default=json_default)
        assert as_json(apply_json_patch(a, json.loads(text))) == as_json(b)


@given(st.data())
def test_a_deep_diff_of_derived_versions_round_trips(core, data):
    a = data.draw(frozen(core))
    b = a
    for _ in range(data.draw(st.integers(1, 4))):
        path = data.draw(st.lists(KEYS, min_size=1, max_size=3))
        try:
            b = b.set_in(path, data.draw(LEAVES))
        except TypeError:  # the path goes through a leaf
            pass
    d = a.diff(b, deep=True)
    assert d.apply(a) == b and d.invert().apply(b) == a


def _state(core):
    F = core.frozendict
    return F(
        todos=F({i: F(title="t%d" % i, done=False) for i in range(50)}),
        user=F(name="ada", prefs=F(theme="dark")),
    )


def test_deep_diff_holds_nested_diffs_and_skips_shared_sub_maps(core):
    s = _state(core)
    s2 = s.set_in(["todos", 7, "done"], True)
    d = s.diff(s2, deep=True)
    assert not d.added and not d.removed
    assert list(d.changed) == ["todos"]  # 'user' is shared: not even looked at
    inner = d.changed["todos"]
    assert isinstance(inner, core.Diff)
    assert list(inner.changed) == [7]
    assert inner.changed[7].changed == {"done": (False, True)}
    # the shallow diff keeps the pair
    shallow = s.diff(s2)
    assert shallow.changed["todos"] == (s["todos"], s2["todos"])


def test_apply_refuses_conflicts_and_names_the_key(core):
    F = core.frozendict
    a = F(x=1, y=2)
    d = a.diff(F(x=5, z=3))  # x changed, y removed, z added
    with pytest.raises(ValueError, match="conflict at key 'x'"):
        d.apply(F(x=9, y=2))
    with pytest.raises(ValueError, match="conflict at key 'y'"):
        d.apply(F(x=1, y=7))
    with pytest.raises(ValueError, match="conflict at key 'y'"):
        d.apply(F(x=1))
    with pytest.raises(ValueError, match="conflict at key 'z'"):
        d.apply(F(x=1, y=2, z=4))
    assert d.apply(F(x=1, y=2, z=3)) == {"x": 5, "z": 3}  # already there, equal: fine
    assert d.apply(F(x=1.0, y=2)) == {"x": 5, "z": 3}  # equal old values count
    nested = F(u=F(k=1)).diff(F(u=F(k=2)), deep=True)
    with pytest.raises(ValueError, match="conflict at key 'u'"):
        nested.apply(F(u=3))
    with pytest.raises(ValueError, match="conflict at key 'k'"):
        nested.apply(F(u=F(k=7)))
    with pytest.raises(TypeError):
        d.apply({"x": 1, "y": 2})


def test_an_empty_diff_applies_as_the_mapping_itself(core):
    s = _state(core)
    d = s.diff(s)
    assert d == (core.frozendict(), core.frozendict(), core.frozendict())
    assert d.apply(s) is s
    assert s.diff(s, deep=True).apply(s) is s


def test_undo_redo_with_patches(core):
    s0 = _state(core)
    s1 = s0.set_in(["user", "prefs", "theme"], "light")
    s2 = s1.update_in(["todos", 3, "title"], str.upper).delete_in(["todos", 4])
    history = [s0.diff(s1, deep=True), s1.diff(s2, deep=True)]
    state = s2
    for patch in reversed(history):  # undo
        state = patch.invert().apply(state)
    assert state == s0
    for patch in history:  # redo
        state = patch.apply(state)
    assert state == s2
    state._check()


def test_merge_with(core):
    F = core.frozendict
    base = F(a=1, b=(1,), c="x")
    out = base.merge_with(lambda old, new: old + new, {"a": 10, "d": 4}, F(b=(2,), a=100))
    assert out == {"a": 111, "b": (1, 2), "c": "x", "d": 4}
    assert list(out) == ["a", "b", "c", "d"]  # as | orders
    assert type(out) is F
    assert base.merge_with(lambda old, new: old, {"a": 5, "b": 6}) is base
    assert base.merge_with(max) is base
    with pytest.raises(TypeError, match="must be mappings"):
        base.merge_with(max, [("a", 1)])
    with pytest.raises(ZeroDivisionError):
        base.merge_with(lambda old, new: 1 / 0, {"a": 2})
    assert base == {"a": 1, "b": (1,), "c": "x"}
