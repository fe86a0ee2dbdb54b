"""JSON Patch over the keys ``json.dumps`` accepts, and JSON's own types.

``make_json_patch`` and ``Diff.to_json_patch`` name ``int``, ``float``,
``bool`` and ``None`` keys as ``json.dumps`` writes them; ``apply_json_patch``
finds such a key from its name when no ``str`` key has it, and refuses a name
two keys share.  A patch tells apart what JSON tells apart (``true`` is not
``1``), so the patched document is the target as JSON.  Values JSON cannot
hold are refused where a patch would carry them.
"""

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frozenmap import JsonPatchError, apply_json_patch, json_default, make_json_patch, thaw
from frozenmap.jsonpatch import json_key


def deep(core, value):
    """``value`` (plain data) as a document of ``core``'s frozendicts."""
    if isinstance(value, dict):
        return core.frozendict((k, deep(core, v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(deep(core, v) for v in value)
    return value


def as_json(doc):
    """``doc`` as ``json.dumps`` writes it, member order and the spelling of
    equal numbers aside (``1`` and ``1.0`` are one number in JSON)."""

    def canonical(value):
        if isinstance(value, dict):
            return {k: canonical(v) for k, v in value.items()}
        if isinstance(value, list):
            return [canonical(v) for v in value]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        return value

    text = json.dumps(doc, default=json_default)
    return json.dumps(canonical(json.loads(text)), sort_keys=True)


# --- names ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key, name",
    [
        ("a", "a"),
        (1, "1"),
        (-7, "-7"),
        (10**30, "1" + "0" * 30),
        (1.5, "1.5"),
        (1e100, "1e+100"),
        (-0.0, "-0.0"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (math.nan, "NaN"),
        (True, "true"),
        (False, "false"),
        (None, "null"),
    ],
)
def test_json_key_is_what_json_dumps_writes(key, name):
    assert json_key(key) == name
    assert json.dumps({key: 0}) == '{"%s": 0}' % name


def test_json_key_refuses_what_json_dumps_refuses():
    with pytest.raises(TypeError, match="not tuple"):
        json_key((1, 2))
    with pytest.raises(TypeError):
        json.dumps({(1, 2): 0})


def test_make_names_keys_as_json_dumps_writes_them(core):
    fd = core.frozendict
    a = fd({1: "one", 2.5: "x", False: "f", None: "n", "s": fd({3: (1, 2)})})
    b = fd({1: "uno", 2.5: "x", False: "f", "s": fd({3: (1, 2, 3)}), 7: "new"})
    patch = make_json_patch(a, b)
    assert patch == [
        {"op": "remove", "path": "/null"},
        {"op": "replace", "path": "/1", "value": "uno"},
        {"op": "add", "path": "/s/3/-", "value": 3},
        {"op": "add", "path": "/7", "value": "new"},
    ]
    result = apply_json_patch(a, patch)
    assert as_json(result) == as_json(b)
    # existing members keep their keys; a new one is a str, as JSON has it
    assert 1 in result and 3 in result["s"] and "7" in result and 7 not in result
    assert json.loads(json.dumps(patch, default=json_default)) == json.loads(
        json.dumps(patch, default=json_default)
    )


def test_to_json_patch_names_keys_as_json_dumps_writes_them(core):
    fd = core.frozendict
    todos = fd({1: fd(title="a", done=False), 2: fd(title="b", done=False)})
    new = todos.set_in([2, "done"], True).delete(1).set(3, fd(title="c", done=False))
    patch = todos.diff(new, deep=True).to_json_patch()
    assert patch == [
        {"op": "remove", "path": "/1"},
        {"op": "replace", "path": "/2/done", "value": True},
        {"op": "add", "path": "/3", "value": fd(title="c", done=False)},
    ]
    assert as_json(apply_json_patch(todos, patch)) == as_json(new)
    assert make_json_patch(todos, new) == patch


def test_a_key_equal_in_python_but_named_apart_in_json(core):
    # True == 1 in Python, so they are one key of a frozendict; JSON writes
    # "true" and "1": the member is renamed (a move)
    fd = core.frozendict
    a, b = fd({True: "x"}), fd({1: "x"})
    assert a == b
    patch = make_json_patch(a, b)
    assert patch == [{"op": "move", "from": "/true", "path": "/1"}]
    assert as_json(apply_json_patch(a, patch)) == as_json(b) == '{"1": "x"}'


def test_keys_named_alike_in_json_are_one_member(core):
    # 1 and "1" are two keys in Python, one member "1" in JSON
    fd = core.frozendict
    a, b = fd({1: "x", "k": 0}), fd({"1": "y", "k": 0})
    patch = make_json_patch(a, b)
    assert patch == [{"op": "replace", "path": "/1", "value": "y"}]
    assert as_json(apply_json_patch(a, patch)) == as_json(b)


def test_make_refuses_two_keys_json_writes_alike_where_it_needs_them(core):
    fd = core.frozendict
    both = fd({1: "a", "1": "b", "z": 0})
    with pytest.raises(ValueError, match=r"the keys .* which JSON writes alike \('1'\)"):
        make_json_patch(both, both.set(1, "c"))
    with pytest.raises(ValueError, match="which JSON writes alike"):
        make_json_patch(fd(v=both), fd(v=both.set("1", "c")))
    # elsewhere in the document they are no trouble
    assert make_json_patch(both, both.set("z", 1)) == [{"op": "replace", "path": "/z", "value": 1}]


def test_make_refuses_a_key_json_cannot_name_where_it_needs_it(core):
    fd = core.frozendict
    a = fd({(1, 2): "pair", "z": 0})
    with pytest.raises(TypeError, match=r"member \(1, 2\).*not tuple"):
        make_json_patch(a, a.set((1, 2), "other"))
    assert make_json_patch(a, a.set("z", 1)) == [{"op": "replace", "path": "/z", "value": 1}]


# --- finding keys from names --------------------------------------------------------


@pytest.mark.parametrize(
    "key, name",
    [(1, "1"), (-2, "-2"), (1.5, "1.5"), (math.inf, "Infinity"), (True, "true"),
     (False, "false"), (None, "null")],
)  # fmt: skip
def test_apply_finds_a_key_from_its_name(core, key, name):
    fd = core.frozendict
    doc = fd({key: "old", "other": fd({key: (0,)})})
    assert apply_json_patch(doc, [{"op": "replace", "path": "/" + name, "value": "new"}]) == {
        key: "new",
        "other": {key: (0,)},
    }
    result = apply_json_patch(doc, [{"op": "add", "path": "/other/%s/-" % name, "value": 1}])
    assert result["other"][key] == (0, 1)
    assert apply_json_patch(doc, [{"op": "remove", "path": "/" + name}]) == {"other": {key: (0,)}}
    assert apply_json_patch(doc, [{"op": "test", "path": "/" + name, "value": "old"}]) is doc
    moved = apply_json_patch(doc, [{"op": "move", "from": "/" + name, "path": "/m"}])
    assert moved == {"m": "old", "other": {key: (0,)}}
    copied = apply_json_patch(doc, [{"op": "copy", "from": "/other/" + name, "path": "/c"}])
    assert copied["c"] == (0,)
    # add to an existing member replaces it and keeps its key
    added = apply_json_patch(doc, [{"op": "add", "path": "/" + name, "value": 5}])
    assert list(added.items()) == [(key, 5), ("other", fd({key: (0,)}))]
    assert type(next(iter(added))) is type(key)


@pytest.mark.parametrize(
    "key, name",
    [(1, "01"), (1, "1.0"), (1, "+1"), (1, "true"), (True, "1"), (True, "True"),
     (1.5, "1.50"), (None, "None"), (10, "1e1")],
)  # fmt: skip
def test_apply_finds_a_key_only_by_the_name_json_writes(core, key, name):
    doc = core.frozendict({key: "v"})
    with pytest.raises(JsonPatchError, match="does not exist") as info:
        apply_json_patch(doc, [{"op": "remove", "path": "/" + name}])
    assert info.value.index == 0 and info.value.pointer == "/" + name
    # add makes a new member, with a str key
    added = apply_json_patch(doc, [{"op": "add", "path": "/" + name, "value": "w"}])
    assert added == {key: "v", name: "w"}


@pytest.mark.parametrize(
    "keys, name", [((1, "1"), "1"), ((True, "true"), "true"), ((None, "null"), "null"),
                   ((2.5, "2.5"), "2.5")],
)  # fmt: skip
@pytest.mark.parametrize("op", ["remove", "replace", "test", "add", "move-from", "deeper"])
def test_a_name_two_keys_share_is_an_error(core, keys, name, op):
    doc = core.frozendict({keys[0]: "a", keys[1]: "b"})
    operation = {
        "remove": {"op": "remove", "path": "/" + name},
        "replace": {"op": "replace", "path": "/" + name, "value": 0},
        "test": {"op": "test", "path": "/" + name, "value": "a"},
        "add": {"op": "add", "path": "/" + name, "value": 0},
        "move-from": {"op": "move", "from": "/" + name, "path": "/x"},
        "deeper": {"op": "add", "path": "/%s/y" % name, "value": 0},
    }[op]
    patch = [{"op": "test", "path": "", "value": thaw(doc)}, operation]
    with pytest.raises(JsonPatchError, match="ambiguous") as info:
        apply_json_patch(doc, patch)
    assert info.value.index == 1
    assert info.value.pointer == operation.get("from", operation["path"])
    assert "the keys %r and %r, which JSON writes alike" % (keys[1], keys[0]) in str(info.value)


# --- JSON's own types ----------------------------------------------------------------


@pytest.mark.parametrize(
    "old, new",
    [(1, True), (0, False), (True, 1), (1.0, True), ([1], [True]), ({"k": 0}, {"k": False}),
     ([[1, 2]], [[1, True]]), (None, False)],
)  # fmt: skip
def test_true_is_not_one(core, old, new):
    fd = core.frozendict
    a, b = deep(core, {"a": old}), deep(core, {"a": new})
    patch = make_json_patch(a, b)
    assert len(patch) == 1 and patch[0]["op"] == "replace"
    result = apply_json_patch(a, patch)
    assert as_json(result) == as_json(b)
    assert make_json_patch(fd(a=1), fd(a=True)) == [{"op": "replace", "path": "/a", "value": True}]


def test_equal_numbers_are_one_number(core):
    fd = core.frozendict
    assert make_json_patch(fd(a=1, b=(2,)), fd(a=1.0, b=(2.0,))) == []
    # and an array of ones is not rewritten because some are floats
    assert make_json_patch((1, 1.0, 1), (1.0, 1, 1.0)) == []


def test_moves_tell_true_from_one(core):
    # the 1 that leaves is not the true that arrives: no move between them
    fd = core.frozendict
    a, b = fd(x=(1, 2), y=fd()), fd(x=(2,), y=fd(z=True))
    patch = make_json_patch(a, b)
    assert not any(op["op"] == "move" for op in patch)
    assert as_json(apply_json_patch(a, patch)) == as_json(b)
    c = fd(x=(2,), y=fd(z=1))
    assert make_json_patch(a, c) == [{"op": "move", "from": "/x/0", "path": "/y/z"}]


# --- values JSON cannot hold --------------------------------------------------------


class Opaque:
    pass


@pytest.mark.parametrize(
    "value, said",
    [
        ({1, 2}, "the value is of type 'set'"),
        (frozenset(), "the value is of type 'frozenset'"),
        (b"bytes", "the value is of type 'bytes'"),
        (Opaque(), "the value is of type 'Opaque'"),
        ([1, {"k": {2}}], "the value holds a value of type 'set' at '/1/k'"),
        ({"a/b": [Opaque()]}, "the value holds a value of type 'Opaque' at '/a~1b/0'"),
        ({(1, 2): 0}, "the value has an object key of type tuple"),
    ],
)
@pytest.mark.parametrize("op", ["add", "replace", "test"])
def test_a_value_json_cannot_hold_is_refused(core, value, said, op):
    doc = core.frozendict(a=1)
    patch = [{"op": "test", "path": "/a", "value": 1}, {"op": op, "path": "/a", "value": value}]
    with pytest.raises(JsonPatchError) as info:
        apply_json_patch(doc, patch)
    assert info.value.index == 1 and info.value.pointer == "/a"
    assert str(info.value).startswith("operation 1 (%s at '/a'): %s" % (op, said))


def test_a_value_that_contains_itself_is_refused(core):
    loop = []
    loop.append(loop)
    with pytest.raises(JsonPatchError, match="contains itself") as info:
        apply_json_patch(core.frozendict(), [{"op": "add", "path": "/a", "value": loop}])
    assert info.value.index == 0


def test_json_values_of_every_kind_are_accepted(core):
    value = {"s": "x", "i": 1, "f": 1.5, "t": True, "n": None, "l": [1, [2]], 1: "int key",
             "fd": core.frozendict(k=(1,)), "nan": math.nan}  # fmt: skip
    result = apply_json_patch(core.frozendict(), [{"op": "add", "path": "/v", "value": value}])
    assert result["v"]["fd"] == {"k": (1,)} and result["v"][1] == "int key"


def test_make_refuses_a_value_json_cannot_hold(core):
    fd = core.frozendict
    with pytest.raises(TypeError, match=r"the value at '/tags' is of type 'set'"):
        make_json_patch(fd(tags=(1,)), fd(tags={1, 2}))
    with pytest.raises(
        TypeError, match=r"the value at '/x/-' holds a value of type 'Opaque' at '/1'"
    ):
        make_json_patch(fd(x=(0,)), fd(x=(0, (1, Opaque()))))


# --- the property -----------------------------------------------------------------------

# Keys json.dumps accepts; no str key is named like another key here (a
# document with the keys 1 and "1" cannot be written as JSON).
KEYS = st.sampled_from(["a", "b", "x/y", 2, 1.5, None, True, False, 1])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([0.0, 1.0, 2.5, "", "a"])
)
JSON = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(KEYS, children, max_size=4)
    ),
    max_leaves=12,
)


@given(a=JSON, b=JSON)
def test_the_result_is_the_target_as_json(core, a, b):
    da, db = deep(core, a), deep(core, b)
    patch = make_json_patch(da, db)
    assert as_json(apply_json_patch(da, patch)) == as_json(db)
    text = json.dumps(patch, default=json_default)
    assert as_json(apply_json_patch(da, json.loads(text))) == as_json(db)
    if isinstance(da, core.frozendict) and isinstance(db, core.frozendict):
        # a Diff compares as Python does (True == 1, as keys and as values):
        # its patch gives the target as Python sees it
        from_diff = da.diff(db, deep=True).to_json_patch()
        assert apply_json_patch(da, from_diff) == db or not str_keys_only(db)


def str_keys_only(doc):
    if isinstance(doc, tuple):
        return all(str_keys_only(v) for v in doc)
    if hasattr(doc, "items"):
        return all(type(k) is str and str_keys_only(v) for k, v in doc.items())
    return True
