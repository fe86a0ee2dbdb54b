"""JSON Patch (RFC 6902) and JSON Pointer (RFC 6901) over frozen documents.

RFC 6902 Appendix A's examples, the pointer and array-index rules, all or
nothing on failure, a model on plain dicts and lists, and the property
``apply_json_patch(a, make_json_patch(a, b)) == b``.  Documents are built
with each core's frozendict (``deep``).
"""

import copy
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frozenmap import Diff, JsonPatchError, apply_json_patch, json_default, make_json_patch, thaw
from frozenmap.jsonpatch import json_equal


def deep(core, value):
    """``value`` (plain JSON data) as a document of ``core``'s frozendicts."""
    if isinstance(value, dict):
        return core.frozendict((k, deep(core, v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(deep(core, v) for v in value)
    return value


def check(core, doc, patch, expected):
    result = apply_json_patch(deep(core, doc), patch)
    assert result == deep(core, expected)
    assert json_equal(result, expected)
    return result


def fails(core, doc, patch, index=0, match=None):
    with pytest.raises(JsonPatchError, match=match) as info:
        apply_json_patch(deep(core, doc), patch)
    assert info.value.index == index
    return info.value


# --- RFC 6902 Appendix A ------------------------------------------------------------


def test_a1_add_object_member(core):
    check(core, {"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}],
          {"baz": "qux", "foo": "bar"})  # fmt: skip


def test_a2_add_array_element(core):
    check(core, {"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/1", "value": "qux"}],
          {"foo": ["bar", "qux", "baz"]})  # fmt: skip


def test_a3_remove_object_member(core):
    check(core, {"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"})


def test_a4_remove_array_element(core):
    check(core, {"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}],
          {"foo": ["bar", "baz"]})  # fmt: skip


def test_a5_replace(core):
    check(core, {"baz": "qux", "foo": "bar"}, [{"op": "replace", "path": "/baz", "value": "boo"}],
          {"baz": "boo", "foo": "bar"})  # fmt: skip


def test_a6_move_value(core):
    doc = {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}}
    patch = [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}]
    check(core, doc, patch, {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}})


def test_a7_move_array_element(core):
    check(core, {"foo": ["all", "grass", "cows", "eat"]},
          [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
          {"foo": ["all", "cows", "eat", "grass"]})  # fmt: skip


def test_a8_test_success(core):
    doc = {"baz": "qux", "foo": ["a", 2, "c"]}
    patch = [{"op": "test", "path": "/baz", "value": "qux"},
             {"op": "test", "path": "/foo/1", "value": 2}]  # fmt: skip
    d = deep(core, doc)
    assert apply_json_patch(d, patch) is d


def test_a9_test_error(core):
    fails(core, {"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}], match="/baz")


def test_a10_add_nested_object(core):
    check(core, {"foo": "bar"}, [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
          {"foo": "bar", "child": {"grandchild": {}}})  # fmt: skip


def test_a11_unrecognized_members_ignored(core):
    check(core, {"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}],
          {"foo": "bar", "baz": "qux"})  # fmt: skip


def test_a12_add_to_nonexistent_target(core):
    fails(core, {"foo": "bar"}, [{"op": "add", "path": "/baz/bat", "value": "qux"}])


def test_a14_escape_ordering(core):
    doc = {"/": 9, "~1": 10}
    check(core, doc, [{"op": "test", "path": "/~01", "value": 10}], doc)


def test_a15_strings_are_not_numbers(core):
    fails(core, {"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": "10"}])


def test_a16_add_array_value(core):
    check(core, {"foo": ["bar"]}, [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
          {"foo": ["bar", ["abc", "def"]]})  # fmt: skip


# --- pointers, array indexes, members ------------------------------------------------


@pytest.mark.parametrize(
    "op",
    [
        {"op": "add", "path": "/a/01", "value": 0},  # leading zero
        {"op": "add", "path": "/a/-1", "value": 0},
        {"op": "add", "path": "/a/3", "value": 0},  # beyond the end
        {"op": "add", "path": "/a/+1", "value": 0},
        {"op": "remove", "path": "/a/-"},  # '-' names no element
        {"op": "remove", "path": "/a/2"},
        {"op": "replace", "path": "/a/2", "value": 0},
        {"op": "test", "path": "/a/-", "value": 0},
        {"op": "remove", "path": "/missing"},
        {"op": "replace", "path": "/missing", "value": 0},
        {"op": "add", "path": "/s/x", "value": 0},  # into a scalar
        {"op": "add", "path": "a", "value": 0},  # no leading '/'
        {"op": "test", "path": "/~2", "value": 0},  # bad escape
        {"op": "add", "path": "/x"},  # no value
        {"op": "move", "path": "/x"},  # no from
        {"op": "copy", "from": "/missing", "path": "/x"},
        {"op": "move", "from": "/o", "path": "/o/inner"},  # into its own child
        {"op": "frobnicate", "path": "/x"},
        {"path": "/x"},
        {"op": "add", "path": 5, "value": 0},
        {"op": "remove", "path": ""},
    ],
)
def test_invalid_operations(core, op):
    doc = {"a": [1, 2], "s": "text", "o": {"k": 1}}
    error = fails(core, doc, [{"op": "test", "path": "/s", "value": "text"}, op], index=1)
    assert isinstance(error, ValueError)
    assert str(error).startswith("operation 1 (")


def test_error_names_index_and_pointer(core):
    error = fails(core, {"a": 1}, [{"op": "add", "path": "/b", "value": 2},
                                    {"op": "remove", "path": "/c/d"}], index=1)  # fmt: skip
    assert error.pointer == "/c/d"
    assert "operation 1 (remove at '/c/d')" in str(error)


def test_all_or_nothing(core):
    doc = deep(core, {"a": {"b": 1}})
    before = list(doc.items())
    with pytest.raises(JsonPatchError):
        apply_json_patch(doc, [{"op": "replace", "path": "/a/b", "value": 2},
                               {"op": "test", "path": "/a/b", "value": 3}])  # fmt: skip
    assert list(doc.items()) == before and doc["a"]["b"] == 1


def test_array_indexes(core):
    doc = {"a": [0, 1, 2]}
    check(core, doc, [{"op": "add", "path": "/a/3", "value": 9}], {"a": [0, 1, 2, 9]})
    check(core, doc, [{"op": "add", "path": "/a/0", "value": 9}], {"a": [9, 0, 1, 2]})
    check(core, doc, [{"op": "replace", "path": "/a/0", "value": 9}], {"a": [9, 1, 2]})
    check(core, doc, [{"op": "copy", "from": "/a/2", "path": "/a/-"}], {"a": [0, 1, 2, 2]})
    check(core, doc, [{"op": "move", "from": "/a/0", "path": "/a/-"}], {"a": [1, 2, 0]})


def test_members_named_like_indexes_and_escapes(core):
    doc = {"-": 1, "0": 2, "a/b": 3, "m~n": 4, "": 5}
    check(core, doc, [{"op": "remove", "path": "/-"}, {"op": "remove", "path": "/0"},
                      {"op": "remove", "path": "/a~1b"}, {"op": "remove", "path": "/m~0n"},
                      {"op": "replace", "path": "/", "value": 6}], {"": 6})  # fmt: skip


def test_add_replaces_an_existing_member_in_place(core):
    result = check(core, {"a": 1, "b": 2}, [{"op": "add", "path": "/a", "value": 3}],
                   {"a": 3, "b": 2})  # fmt: skip
    assert list(result) == ["a", "b"]


def test_whole_document(core):
    check(core, {"a": 1}, [{"op": "replace", "path": "", "value": [1]}], [1])
    check(core, {"a": 1}, [{"op": "add", "path": "", "value": {"b": 2}}], {"b": 2})
    check(core, {"a": 1}, [{"op": "move", "from": "/a", "path": ""}], 1)
    check(core, [1, 2], [{"op": "test", "path": "", "value": [1, 2.0]}], [1, 2])


def test_move_to_itself_is_a_no_op(core):
    doc = deep(core, {"a": {"b": 1}})
    assert apply_json_patch(doc, [{"op": "move", "from": "/a", "path": "/a"}]) is doc
    # "/ab" starts with "/a" but is not inside it
    check(core, {"a": 1, "b": {}}, [{"op": "move", "from": "/a", "path": "/ab"}],
          {"b": {}, "ab": 1})  # fmt: skip


@pytest.mark.parametrize(
    "a, b, equal",
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        (None, False, False),
        (True, True, True),
        ("1", 1, False),
        ([1, [2]], [1.0, [2]], True),
        ([1, 2], [2, 1], False),
        ({"a": 1, "b": [True]}, {"b": [True], "a": 1.0}, True),
        ({"a": 1}, {"a": True}, False),
        ({"a": None}, {}, False),
        ([], {}, False),
    ],
)
def test_test_compares_json_values(core, a, b, equal):
    doc = {"v": a}
    patch = [{"op": "test", "path": "/v", "value": b}]
    if equal:
        check(core, doc, patch, doc)
    else:
        fails(core, doc, patch)


def test_plain_containers_are_frozen(core):
    fd = core.frozendict
    doc = fd(items=[1, 2], meta={"x": 1})  # plain containers inside a frozendict
    result = apply_json_patch(doc, [{"op": "add", "path": "/items/-", "value": {"y": [3]}},
                                    {"op": "add", "path": "/meta/z", "value": 2}])  # fmt: skip
    assert result["items"] == (1, 2, fd(y=(3,)))
    assert isinstance(result["items"][2]["y"], tuple)
    assert result["meta"] == {"x": 1, "z": 2} and hash(result)
    assert apply_json_patch({"a": [1]}, [{"op": "test", "path": "/a", "value": [1]}]) == {"a": (1,)}


def test_untouched_parts_are_shared(core):
    fd = core.frozendict
    other = fd(("k%d" % i, fd(v=i)) for i in range(200))
    doc = fd(other=other, target=fd(x=1))
    result = apply_json_patch(doc, [{"op": "replace", "path": "/target/x", "value": 2}])
    assert result["other"] is other
    assert len(set(result._node_ids()) - set(doc._node_ids())) <= 4


@pytest.mark.parametrize("patch", [{"op": "add"}, "ops", None])
def test_patch_must_be_a_sequence(patch):
    with pytest.raises(JsonPatchError, match="sequence") as info:
        apply_json_patch({}, patch)
    assert info.value.index is None


def test_patch_from_json_text(core):
    patch = json.loads('[{"op": "add", "path": "/a", "value": {"b": [1, null]}}]')
    result = apply_json_patch(core.frozendict(), patch)
    assert thaw(result) == {"a": {"b": [1, None]}}


# --- a model on plain dicts and lists ---------------------------------------------


ERROR = object()


def model_apply(doc, patch):
    """RFC 6902 on plain JSON data, written independently of frozenmap's (the
    simplest reading: deep copies, Python lists), or ``ERROR``."""
    doc = copy.deepcopy(doc)

    def tokens(pointer):
        if pointer == "":
            return []
        return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]

    def resolve(container, token, insert=False):
        if isinstance(container, dict):
            return token
        if isinstance(container, list):
            if insert and token == "-":
                return len(container)
            if not token.isdigit() or (token != "0" and token[0] == "0"):
                raise LookupError
            i = int(token)
            if i > len(container) or (i == len(container) and not insert):
                raise LookupError
            return i
        raise LookupError

    def get(root, pointer):
        node = root
        for t in tokens(pointer):
            key = resolve(node, t)
            if isinstance(node, dict) and key not in node:
                raise LookupError
            node = node[key]
        return node

    def split(root, pointer):
        ts = tokens(pointer)
        return get(
            root, "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in ts[:-1])
        ), ts[-1]

    def add(root, pointer, value):
        if pointer == "":
            return copy.deepcopy(value)
        parent, last = split(root, pointer)
        key = resolve(parent, last, insert=True)
        if isinstance(parent, list):
            parent.insert(key, copy.deepcopy(value))
        else:
            parent[key] = copy.deepcopy(value)
        return root

    def remove(root, pointer):
        if pointer == "":
            raise LookupError
        parent, last = split(root, pointer)
        key = resolve(parent, last)
        if isinstance(parent, dict) and key not in parent:
            raise LookupError
        del parent[key]
        return root

    try:
        for op in patch:
            name, path = op["op"], op["path"]
            if name == "add":
                doc = add(doc, path, op["value"])
            elif name == "remove":
                doc = remove(doc, path)
            elif name == "replace":
                get(doc, path)
                doc = (
                    add(remove(doc, path), path, op["value"])
                    if path
                    else copy.deepcopy(op["value"])
                )
            elif name == "move":
                value = get(doc, op["from"])
                if op["from"] != path:
                    if path.startswith(op["from"] + "/"):
                        raise LookupError
                    doc = add(remove(doc, op["from"]), path, value)
            elif name == "copy":
                doc = add(doc, path, get(doc, op["from"]))
            elif name == "test":
                if not json_equal(get(doc, path), op["value"]):
                    raise LookupError
    except LookupError:
        return ERROR
    return doc


SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 1.5, "", "a", "~/"])
)
NAMES = st.sampled_from(["a", "b", "c", "a/b", "m~n", "-", "0", "1", ""])
JSON = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(NAMES, children, max_size=4)
    ),
    max_leaves=12,
)


def pointers(doc):
    """Pointers to every location of ``doc``, and some that miss."""
    out = [""]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += ["/" + k.replace("~", "~0").replace("/", "~1") + p for p in pointers(v)]
        out.append("/zz")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += ["/%d%s" % (i, p) for p in pointers(v)]
        out += ["/-", "/%d" % len(doc), "/0%d" % len(doc)]
    return out


@st.composite
def patches(draw, doc):
    ops = []
    for _ in range(draw(st.integers(1, 4))):
        where = st.sampled_from(pointers(doc))
        name = draw(st.sampled_from(["add", "remove", "replace", "move", "copy", "test"]))
        op = {"op": name, "path": draw(where)}
        if name in ("add", "replace", "test"):
            if name == "test" and draw(st.booleans()):
                op["value"] = model_apply(doc, [{"op": "copy", "from": op["path"], "path": ""}])
            else:
                op["value"] = draw(JSON)
        if name in ("move", "copy"):
            op["from"] = draw(where)
        ops.append(op)
        after = model_apply(doc, [op])
        doc = doc if after is ERROR else after
    return ops


@given(st.data())
def test_model(core, data):
    doc = data.draw(JSON)
    patch = data.draw(patches(doc))
    expected = model_apply(doc, patch)
    if expected is ERROR:
        with pytest.raises(JsonPatchError):
            apply_json_patch(deep(core, doc), patch)
    else:
        result = apply_json_patch(deep(core, doc), patch)
        assert json_equal(result, expected), (result, expected)
        assert thaw(result) == expected


# --- make_json_patch and Diff.to_json_patch ------------------------------------------


@given(a=JSON, b=JSON)
def test_make_patch_round_trip(core, a, b):
    da, db = deep(core, a), deep(core, b)
    patch = make_json_patch(da, db)
    assert apply_json_patch(da, patch) == db
    assert make_json_patch(da, da) == []
    # the patch is plain JSON
    assert json.loads(json.dumps(patch, default=json_default)) is not None


@given(st.data())
def test_make_patch_between_related_versions(core, data):
    a = deep(core, data.draw(st.dictionaries(NAMES, JSON, max_size=6)))
    b = a
    for _ in range(data.draw(st.integers(0, 4))):
        patch = data.draw(patches(thaw(b)))
        try:
            b = apply_json_patch(b, patch)
        except JsonPatchError:
            pass
    patch = make_json_patch(a, b)
    result = apply_json_patch(a, patch)
    assert result == b
    if isinstance(b, core.frozendict) and isinstance(a, core.frozendict):
        assert apply_json_patch(a, a.diff(b, deep=True).to_json_patch()) == b


def test_make_patch_is_small_for_one_edit(core):
    fd = core.frozendict
    a = fd(("k%d" % i, fd(v=i, tags=("x",))) for i in range(1000))
    b = a.set_in(["k500", "v"], -1).set("new", True).delete("k3")
    assert make_json_patch(a, b) == [
        {"op": "remove", "path": "/k3"},
        {"op": "replace", "path": "/k500/v", "value": -1},
        {"op": "add", "path": "/new", "value": True},
    ]


def test_make_patch_tells_json_types_apart_where_it_compares(core):
    assert make_json_patch(1, True) == [{"op": "replace", "path": "", "value": True}]
    assert make_json_patch((1,), (True,)) == [{"op": "replace", "path": "/0", "value": True}]
    assert make_json_patch(1, 1.0) == []


def test_diff_to_json_patch(core):
    fd = core.frozendict
    old = fd(a=1, b=fd(c=(1, 2, 3)), gone=0)
    new = fd(a=2, b=fd(c=(1, 5)), **{"x/y": 1})
    patch = old.diff(new, deep=True).to_json_patch()
    assert patch == [
        {"op": "remove", "path": "/gone"},
        {"op": "replace", "path": "/a", "value": 2},
        {"op": "replace", "path": "/b/c/1", "value": 5},
        {"op": "remove", "path": "/b/c/2"},
        {"op": "add", "path": "/x~1y", "value": 1},
    ]
    assert apply_json_patch(old, patch) == new
    assert Diff(fd(), fd(), fd()).to_json_patch() == []
    # keys other than str are named as json.dumps writes them
    assert fd({1: 2}).diff(fd()).to_json_patch() == [{"op": "remove", "path": "/1"}]


@given(st.data())
def test_agrees_with_the_jsonpatch_package(core, data):
    """Where the model accepts a patch, PyPI's ``jsonpatch`` (on dicts and
    lists) gives the same document (``test`` left out: it compares with
    Python's ``==``, where ``True == 1``)."""
    jsonpatch = pytest.importorskip("jsonpatch")
    doc = data.draw(JSON)
    patch = [op for op in data.draw(patches(doc)) if op["op"] != "test"]
    expected = model_apply(doc, patch)
    if expected is ERROR:
        return
    assert jsonpatch.apply_patch(doc, patch) == expected
    assert json_equal(apply_json_patch(deep(core, doc), patch), expected)
