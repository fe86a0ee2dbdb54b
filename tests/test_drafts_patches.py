"""``produce_with_patches``: the JSON Patches (RFC 6902) recorded from a
recipe's operations, and their inverse.

Each case checks the exact operations (an untouched subtree has none, a list
edit is one operation, not a rewrite of what follows it) and that the patches
round-trip through ``apply_json_patch``: ``base`` patched is the new state in
its key order, the new state patched back equals ``base``.
"""

import json

import pytest
from test_drafts import deep, ordered

from frozenmap import apply_json_patch, json_default, produce, produce_with_patches


def round_trip(base, recipe):
    """Run ``recipe`` with patches; check them against ``produce`` and
    ``apply_json_patch``; return ``(new, patches, inverse)``."""
    new, patches, inverse = produce_with_patches(base, recipe)
    assert ordered(new) == ordered(produce(base, recipe))
    forward = apply_json_patch(base, patches)
    assert forward == new and ordered(forward) == ordered(new)
    assert apply_json_patch(new, inverse) == base
    json.dumps([patches, inverse], default=json_default)  # plain JSON data
    return new, patches, inverse


def test_one_deep_change_is_one_replace(core):
    base = deep(core, {"a": {"b": {"c": 1, "d": 2}}, "other": {"x": 1}})

    def recipe(d):
        d["other"]["x"]  # read, not changed: no operation
        d["a"]["b"]["c"] = 5

    new, patches, inverse = round_trip(base, recipe)
    assert patches == [{"op": "replace", "path": "/a/b/c", "value": 5}]
    assert inverse == [{"op": "replace", "path": "/a/b/c", "value": 1}]


def test_nothing_changed_is_no_operation(core):
    base = deep(core, {"a": {"b": [1]}})

    def read_only(d):
        d["a"]["b"][0]

    assert produce_with_patches(base, read_only) == (base, [], [])
    assert produce_with_patches(base, lambda d: None) == (base, [], [])


def test_keys_added_removed_and_added_again_keep_dict_order(core):
    base = deep(core, {"a": 1, "b": 2, "c": 3})

    def recipe(d):
        del d["a"]
        d["z"] = 26
        d["a"] = 0  # back, at the end
        d["b"] = 20  # in place
        d.pop("c")

    new, patches, inverse = round_trip(base, recipe)
    assert list(new) == ["b", "z", "a"]
    # in the order of the writes, each key once: "a" moved to the end after "z"
    assert patches == [
        {"op": "add", "path": "/z", "value": 26},
        {"op": "remove", "path": "/a"},
        {"op": "add", "path": "/a", "value": 0},
        {"op": "replace", "path": "/b", "value": 20},
        {"op": "remove", "path": "/c"},
    ]
    assert inverse == [
        {"op": "add", "path": "/c", "value": 3},
        {"op": "replace", "path": "/b", "value": 2},
        {"op": "remove", "path": "/a"},
        {"op": "add", "path": "/a", "value": 1},
        {"op": "remove", "path": "/z"},
    ]


def test_popitem_and_clear(core):
    base = deep(core, {"a": 1, "b": {"x": 1}, "c": 3})
    new, patches, _ = round_trip(base, lambda d: d.popitem() and None)
    assert patches == [{"op": "remove", "path": "/c"}]
    new, patches, inverse = round_trip(base, lambda d: (d.clear(), d.update(q=1)) and None)
    assert patches == [{"op": "replace", "path": "", "value": new}]
    assert inverse == [{"op": "replace", "path": "", "value": base}]


def test_paths_are_escaped_and_non_string_keys_written_as_json_writes_them(core):
    base = deep(core, {"a/b": {"m~n": 1}, "~": 0})

    def recipe(d):
        d["a/b"]["m~n"] = 2
        d["~"] = 1

    _, patches, _ = round_trip(base, recipe)
    # (the children's operations first, then the map's own keys)
    assert [op["path"] for op in patches] == ["/a~1b/m~0n", "/~0"]

    fd = core.frozendict
    keyed = fd({1: fd(x=0), False: 0, None: 0, 1.5: 0, "s": 0})

    def keys(d):
        d[1]["x"] = 1
        d[False] = 1
        d[None] = 1
        d[1.5] = 1

    _, patches, _ = produce_with_patches(keyed, keys)
    assert [op["path"] for op in patches] == ["/1/x", "/false", "/null", "/1.5"]
    assert (
        json.dumps({1: 0, False: 0, None: 0, 1.5: 0}) == '{"1": 0, "false": 0, "null": 0, "1.5": 0}'
    )
    with pytest.raises(TypeError, match="cannot write a path through the key \\(1, 2\\)"):
        produce_with_patches(fd({(1, 2): 0}), lambda d: d.__setitem__((1, 2), 1))


def test_list_edits_are_positional_operations(core):
    base = deep(core, {"l": list(range(1000))})

    def remove_first(d):
        del d["l"][0]

    _, patches, inverse = round_trip(base, remove_first)
    assert patches == [{"op": "remove", "path": "/l/0"}]  # not 999 replaces
    assert inverse == [{"op": "add", "path": "/l/0", "value": 0}]

    def several(d):
        items = d["l"]
        items.insert(0, "first")
        items.append("last")
        items[500] = "mid"
        items.pop(10)
        items[2:4] = ["x"]

    _, patches, _ = round_trip(base, several)
    assert patches == [
        {"op": "add", "path": "/l/0", "value": "first"},
        {"op": "add", "path": "/l/1001", "value": "last"},
        {"op": "replace", "path": "/l/500", "value": "mid"},
        {"op": "remove", "path": "/l/10"},
        {"op": "replace", "path": "/l/2", "value": "x"},
        {"op": "remove", "path": "/l/3"},
    ]


def test_a_nested_change_in_a_list_is_written_at_its_final_position(core):
    base = deep(core, {"l": [{"n": 0}, {"n": 1}, {"n": 2}]})

    def recipe(d):
        items = d["l"]
        items[2]["n"] = 20  # changed in place, then moved by the insert
        items.insert(0, {"n": -1})
        del items[1]

    new, patches, _ = round_trip(base, recipe)
    assert patches == [
        {"op": "add", "path": "/l/0", "value": new["l"][0]},
        {"op": "remove", "path": "/l/1"},
        {"op": "replace", "path": "/l/2/n", "value": 20},
    ]


def test_sort_reverse_clear_and_long_logs_replace_the_list(core):
    base = deep(core, {"l": [3, 1, 2], "m": [1]})
    for recipe in (
        lambda d: d["l"].sort(),
        lambda d: d["l"].reverse(),
        lambda d: d["l"].clear(),
        lambda d: d["l"].__imul__(2) and None,
    ):
        new, patches, inverse = round_trip(base, recipe)
        assert patches == [{"op": "replace", "path": "/l", "value": new["l"]}]
        assert inverse == [{"op": "replace", "path": "/l", "value": base["l"]}]

    def many_pops(d):
        for _ in range(20):
            d["m"].append(0)
            d["m"].pop()
        d["m"].append(5)

    new, patches, _ = round_trip(base, many_pops)
    assert patches == [{"op": "replace", "path": "/m", "value": (1, 5)}]


def test_a_sort_that_changes_nothing_writes_nothing(core):
    base = deep(core, {"l": [1, 2, 3]})
    assert produce_with_patches(base, lambda d: d["l"].sort()) == (base, [], [])


def test_assigned_drafts_and_moves_carry_their_final_values(core):
    base = deep(core, {"a": {"x": 1}, "b": 0})

    def recipe(d):
        d["b"] = d["a"]
        d["a"]["x"] = 2

    new, patches, inverse = round_trip(base, recipe)
    assert new["a"] is new["b"]
    assert {"op": "replace", "path": "/b", "value": new["a"]} in patches
    assert {"op": "replace", "path": "/a/x", "value": 2} in patches

    def move(d):
        d["c"] = d.pop("a")

    new, patches, inverse = round_trip(base, move)
    assert patches == [
        {"op": "remove", "path": "/a"},
        {"op": "add", "path": "/c", "value": base["a"]},
    ]


def test_values_in_patches_are_the_new_states_own_objects(core):
    base = deep(core, {"a": {"x": 1}})

    def recipe(d):
        d["n"] = {"deep": [1, 2]}

    new, patches, _ = round_trip(base, recipe)
    assert patches[0]["value"] is new["n"]


def test_a_returned_state_is_one_replace_of_the_root(core):
    base = deep(core, {"a": 1})
    new, patches, inverse = produce_with_patches(base, lambda d: {"b": 2})
    assert patches == [{"op": "replace", "path": "", "value": new}]
    assert inverse == [{"op": "replace", "path": "", "value": base}]
    assert apply_json_patch(base, patches) == new and apply_json_patch(new, inverse) == base
    assert produce_with_patches(base, lambda d: base) == (base, [], [])


def test_a_tuple_base(core):
    base = deep(core, [{"a": 1}, 2])

    def recipe(items):
        items[0]["a"] = 5
        items.append(3)

    new, patches, _ = round_trip(base, recipe)
    assert patches == [
        {"op": "add", "path": "/2", "value": 3},
        {"op": "replace", "path": "/0/a", "value": 5},
    ]


def test_inverse_puts_a_key_removed_from_the_middle_back_at_the_end(core):
    base = deep(core, {"a": 1, "b": 2, "c": 3})
    new, _, inverse = round_trip(base, lambda d: d.__delitem__("b"))
    back = apply_json_patch(new, inverse)
    assert back == base and list(back) == ["a", "c", "b"]  # (documented)


def test_produce_with_patches_refuses_a_draft_base(core):
    def outer(d):
        with pytest.raises(TypeError, match="not a draft"):
            produce_with_patches(d, lambda x: None)

    produce(core.frozendict(a=1), outer)
    with pytest.raises(TypeError, match="^produce_with_patches\\(\\) base must be an exact"):
        produce_with_patches({}, lambda d: None)
