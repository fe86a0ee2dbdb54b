"""Nested paths: ``get_in``, ``set_in``, ``update_in``, ``delete_in`` (docs/spec.md §2).

On frozendicts (a new version) and Evolvers (edited in place), both cores,
checked against a model of plain nested dicts; only the maps along the path
are new (identity of every other sub-map), and a change that changes nothing
returns the original object.
"""

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

KEYS = ["a", "b", "c", 1, 2]


def to_frozen(core, value):
    if isinstance(value, dict):
        return core.frozendict({k: to_frozen(core, v) for k, v in value.items()})
    return value


def to_plain(value):
    if hasattr(value, "items") and not isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    return value


nested = st.recursive(
    st.integers(0, 3),
    lambda children: st.dictionaries(st.sampled_from(KEYS), children, max_size=4),
    max_leaves=12,
).filter(lambda x: isinstance(x, dict))
paths = st.lists(st.sampled_from(KEYS), min_size=1, max_size=4)


class Outcome(Exception):
    """The model's verdict when the path hits a non-map or a missing key."""


def model_walk(d, path, create):
    for i, k in enumerate(path[:-1]):
        if k not in d:
            if not create:
                raise KeyError(k)
            d[k] = {}
        if not isinstance(d[k], dict):
            raise TypeError("path[%d]" % i)
        d = d[k]
    return d


def model_op(d, op, path, value):
    d = copy.deepcopy(d)
    if op == "set":
        model_walk(d, path, True)[path[-1]] = value
    elif op == "update":
        parent = model_walk(d, path, False)
        parent[path[-1]] = parent[path[-1]] * 10 + value
    elif op == "update_default":
        parent = model_walk(d, path, True)
        parent[path[-1]] = parent.get(path[-1], 5) * 10 + value
    elif op == "delete":
        del model_walk(d, path, False)[path[-1]]
    return d


def apply_op(target, op, path, value):
    if op == "set":
        return target.set_in(path, value)
    if op == "update":
        return target.update_in(path, lambda old, v: old * 10 + v, value)
    if op == "update_default":
        return target.update_in(path, lambda old, v: old * 10 + v, value, default=5)
    return target.delete_in(path)


def outcome(fn):
    try:
        return ("ok", fn())
    except (KeyError, TypeError) as exc:
        return (type(exc).__name__, None)


def model_get(d, path, default):
    for i, k in enumerate(path):
        if i and not isinstance(d, dict):
            raise TypeError
        if k not in d:
            return default
        d = d[k]
    return d


@given(
    nested, paths, st.sampled_from(["set", "update", "update_default", "delete"]), st.integers(0, 9)
)
def test_path_operations_match_a_nested_dict_model(core, data, path, op, value):
    fd = to_frozen(core, data)
    before = to_plain(fd)
    expected = outcome(lambda: model_op(data, op, path, value))
    got = outcome(lambda: to_plain(apply_op(fd, op, path, value)))
    assert got[0] == expected[0]
    if got[0] == "ok":
        assert got[1] == expected[1]
        # the Evolver does the same, in place
        e = fd.evolve()
        assert apply_op(e, op, path, value) is e
        assert to_plain(e.freeze()) == expected[1]
        e._check()
    assert to_plain(fd) == before  # the source never changes
    assert outcome(lambda: fd.get_in(path, "dflt")) == outcome(
        lambda: model_get(data, path, "dflt")
    )


def _state(core):
    F = core.frozendict
    return F(
        todos=F({1: F(title="a", tags=F(x=True)), 2: F(title="b", tags=F())}),
        user=F(name="ada"),
        settings=F(theme="dark"),
    )


def test_only_the_maps_along_the_path_are_new(core):
    s = _state(core)
    s2 = s.set_in(["todos", 1, "tags", "y"], True)
    assert s2.get_in(["todos", 1, "tags"]) == {"x": True, "y": True}
    for new, old in [
        (s2, s),
        (s2["todos"], s["todos"]),
        (s2["todos"][1], s["todos"][1]),
        (s2["todos"][1]["tags"], s["todos"][1]["tags"]),
    ]:
        assert new is not old
    assert s2["user"] is s["user"] and s2["settings"] is s["settings"]
    assert s2["todos"][2] is s["todos"][2]
    assert s2["todos"][1]["title"] is s["todos"][1]["title"]
    s2._check()


def test_a_change_that_changes_nothing_returns_self(core):
    s = _state(core)
    assert s.set_in(["todos", 1, "title"], s["todos"][1]["title"]) is s
    assert s.update_in(["user", "name"], lambda v: v) is s
    assert s.set_in(["settings"], s["settings"]) is s
    e = s.evolve()
    e.set_in(["todos", 1, "title"], s["todos"][1]["title"])
    assert e["todos"] is s["todos"]


def test_missing_maps_are_created_empty(core):
    s = core.frozendict()
    s2 = s.set_in(["a", "b", "c"], 1)
    assert s2 == {"a": {"b": {"c": 1}}}
    assert type(s2["a"]["b"]) is core.frozendict
    assert s.update_in(["n", "count"], lambda c: c + 1, default=0) == {"n": {"count": 1}}
    with pytest.raises(KeyError):
        s.update_in(["n", "count"], lambda c: c + 1)


def test_update_in_passes_arguments_and_keeps_default_for_itself(core):
    s = core.frozendict(n=core.frozendict(v=2))
    assert s.update_in(["n", "v"], lambda old, a, b=0: old * a + b, 10, b=1) == {"n": {"v": 21}}
    assert s.update_in(["n", "w"], lambda old, k: old + k, 5, default=1) == {"n": {"v": 2, "w": 6}}


@pytest.mark.parametrize(
    "method, args",
    [
        ("get_in", ()),
        ("set_in", (1,)),
        ("update_in", (abs,)),
        ("delete_in", ()),
    ],
)
def test_path_errors_are_the_same_in_both_cores(core, method, args):
    s = core.frozendict(a=core.frozendict(b=[1]))
    call = getattr(s, method)
    with pytest.raises(ValueError, match="^path must not be empty$"):
        call([], *args)
    with pytest.raises(TypeError, match="^path must be an iterable of keys, not 'str'$"):
        call("ab", *args)
    with pytest.raises(TypeError, match="not iterable"):
        call(5, *args)
    with pytest.raises(
        TypeError,
        match=r"^path\[1\] leads to a value of type 'list', "
        r"not a frozendict; a path goes through frozendicts only",
    ):
        call(["a", "b", "c"], *args)
    e = s.evolve()
    with pytest.raises(TypeError, match=r"^path\[1\] leads to a value of type 'list'"):
        getattr(e, method)(["a", "b", "c"], *args)
    assert e.freeze() == s


def test_get_in_default_and_keywords(core):
    s = core.frozendict(a=core.frozendict(b=None))
    assert s.get_in(["a", "b"], 1) is None  # a stored None is a value
    assert s.get_in(["a", "z"]) is None
    assert s.get_in(path=["a", "z"], default=3) == 3
    assert s.get_in(iter(["a", "b"]), default=3) is None
    with pytest.raises(TypeError, match="multiple values for argument 'default'"):
        s.get_in(["a"], 1, default=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'dflt'"):
        s.get_in(["a"], dflt=2)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'path'"):
        s.get_in()


def test_delete_in(core):
    s = _state(core)
    s2 = s.delete_in(["todos", 1, "tags", "x"])
    assert s2.get_in(["todos", 1, "tags"]) == {}
    assert s2["user"] is s["user"]
    with pytest.raises(KeyError):
        s.delete_in(["todos", 3, "tags"])
    with pytest.raises(KeyError):
        s.delete_in(["todos", 1, "nope"])
    assert s.delete_in(["user"]) == {"todos": s["todos"], "settings": s["settings"]}
    e = s.evolve()
    assert e.delete_in(["user"]) is e and "user" not in e
    with pytest.raises(KeyError):
        e.delete_in(["user"])


def test_evolver_paths_edit_in_place_with_one_edit(core):
    s = _state(core)
    e = s.evolve()
    assert e.set_in(["todos", 2, "title"], "B") is e
    assert e.update_in(["todos", 2, "tags", "z"], lambda v: v + 1, default=0) is e
    assert e.get_in(["todos", 2]) == {"title": "B", "tags": {"z": 1}}
    assert e.set_in(["new"], 1) is e and e["new"] == 1
    out = e.freeze()
    out._check()
    assert out["user"] is s["user"] and out["todos"][1] is s["todos"][1]
    assert s == _state(core)  # the source is untouched


def test_subclass_top_gives_an_exact_frozendict(core):
    class Sub(core.frozendict):
        pass

    s = Sub(a=core.frozendict(b=1))
    out = s.set_in(["a", "b"], 2)
    assert type(out) is core.frozendict and out == {"a": {"b": 2}}
