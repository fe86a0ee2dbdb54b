"""Drafts (``frozenmap.produce``): a recipe edits nested frozen state as plain
dicts and lists, and gets a new state sharing everything it did not touch.

What is checked here: each ``dict`` and ``list`` method on a draft against the
same call on a plain dict or list; the order rules; which reads return drafts
and which return the very object; deep-freezing of assigned values and drafts
assigned elsewhere; structural sharing (untouched subtrees are the identical
objects, no change returns ``base``); the recipe's return value; revocation;
``current``, ``original`` and ``is_draft``; the errors.  The state is built with
each core's frozendict (``deep``), and new maps are of that core's type.
"""

import collections
import copy
import operator
import pickle

import pytest

from frozenmap import current, freeze, is_draft, original, produce, thaw
from frozenmap.drafts import DictDraft, ListDraft


def deep(core, value):
    """``value`` (plain nested data) with dicts as ``core``'s frozendicts and lists as tuples."""
    if isinstance(value, dict):
        return core.frozendict((k, deep(core, v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(deep(core, v) for v in value)
    return value


def error_of(action, target):
    """The type and message of the error ``action(target)`` raises."""
    try:
        action(target)
    except Exception as exc:
        return type(exc), str(exc)
    return None, None


def ordered(value):
    """``value`` with its maps as lists of pairs: equal only in the same key order."""
    if isinstance(value, (dict, DictDraft)) or hasattr(value, "evolve"):
        return ("map", [(k, ordered(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        return ("seq", [ordered(v) for v in value])
    return value


def same_through_draft(core, plain, edit):
    """Apply ``edit`` to a draft of ``plain`` and to a deep copy of ``plain``;
    the frozen result equals the edited copy, in its key order."""
    model = copy.deepcopy(plain)
    edit(model)

    def recipe(draft):
        edit(draft)  # (the lambdas' results are not new states)

    new = produce(deep(core, plain), recipe)
    assert ordered(new) == ordered(model)
    return new


# --- reads ---------------------------------------------------------------------------


def test_reads_see_the_base(core):
    fd = core.frozendict
    inner = fd(x=1)
    leaf_tuple = collections.namedtuple("P", "a b")(1, 2)

    class Sub(fd):
        pass

    sub = Sub(y=2)
    base = fd(a=inner, b=(1, inner), c=leaf_tuple, d=sub, e="text", f=frozenset({1}))
    seen = {}

    def recipe(d):
        seen["a"] = d["a"]
        seen["a again"] = d["a"]
        seen["b"] = d["b"]
        seen["b0"] = d["b"][0]
        seen["b1"] = d["b"][1]
        seen["c"] = d["c"]
        seen["d"] = d["d"]
        seen["f"] = d.get("f")
        assert len(d) == 6 and "a" in d and "z" not in d
        assert list(d) == list(base) and list(reversed(d)) == list(reversed(base))

    assert produce(base, recipe) is base
    assert is_draft(seen["a"]) and type(seen["a"]) is DictDraft
    assert seen["a"] is seen["a again"]  # one draft per node
    assert type(seen["b"]) is ListDraft and seen["b0"] == 1
    assert seen["b1"] is not inner and is_draft(seen["b1"])
    # leaves are the very objects: a namedtuple, a frozendict subclass, a frozenset
    assert seen["c"] is leaf_tuple and seen["d"] is sub and seen["f"] is base["f"]


def test_get_returns_the_default_or_a_draft(core):
    base = deep(core, {"a": {"b": 1}})

    def recipe(d):
        assert d.get("missing") is None and d.get("missing", 5) == 5
        assert d.get("a") is d["a"]
        assert d.get("a").get("b") == 1

    produce(base, recipe)


def test_missing_key_and_bad_index_errors_are_the_containers(core):
    base = deep(core, {"a": [1, 2]})

    def recipe(d):
        with pytest.raises(KeyError) as info:
            d["nope"]
        assert info.value.args == ("nope",)
        for index in (5, -3):
            assert error_of(lambda x: x[index], d["a"]) == error_of(lambda x: x[index], [1, 2])
            assert error_of(lambda x: x[index], [1, 2])[0] is IndexError
        with pytest.raises(TypeError, match="^list indices must be integers or slices, not str$"):
            d["a"]["x"]
        assert d["a"][-1] == 2

    produce(base, recipe)


def test_views_are_live_and_reversible(core):
    base = deep(core, {"a": 1, "b": {"c": 2}})

    def recipe(d):
        keys, values, items = d.keys(), d.values(), d.items()
        d["z"] = 3
        assert list(keys) == ["a", "b", "z"]
        assert list(reversed(keys)) == ["z", "b", "a"]
        assert list(values)[2] == 3 and list(values)[1] is d["b"]
        assert list(reversed(items))[0] == ("z", 3)
        assert ("a", 1) in items and ("a", 2) not in items
        assert keys & {"a", "q"} == {"a"}
        assert len(keys) == len(values) == len(items) == 3
        assert repr(keys) == "draft_keys(['a', 'b', 'z'])"

    produce(base, recipe)


def test_iterating_while_the_size_changes_raises_as_dict(core):
    base = deep(core, {"a": 1, "b": 2})

    def recipe(d):
        with pytest.raises(RuntimeError, match="changed size during iteration"):
            for key in d:
                d[key + "x"] = 0

    produce(base, recipe)


# --- dict changes: every method, against dict ---------------------------------


@pytest.mark.parametrize(
    "name,edit",
    [
        ("set existing keeps its place", lambda d: d.__setitem__("a", 10)),
        ("set new goes last", lambda d: d.__setitem__("z", 26)),
        ("delete", lambda d: d.__delitem__("b")),
        ("delete and add again goes last", lambda d: (d.__delitem__("a"), d.__setitem__("a", 1))),
        ("pop", lambda d: d.pop("b")),
        ("pop default", lambda d: d.pop("nope", None)),
        ("popitem", lambda d: d.popitem()),
        ("popitem twice and add", lambda d: (d.popitem(), d.popitem(), d.__setitem__("c", 0))),
        ("setdefault present", lambda d: d.setdefault("a", 99)),
        ("setdefault absent", lambda d: d.setdefault("q", 99)),
        ("update mapping", lambda d: d.update({"b": 20, "y": 25})),
        ("update pairs and keywords", lambda d: d.update([("x", 1), ("a", 2)], k=3)),
        ("update from itself", lambda d: d.update(d)),
        ("ior", lambda d: d.__ior__({"b": 0, "new": 1})),
        ("clear", lambda d: d.clear()),
        ("clear and refill", lambda d: (d.clear(), d.update(b=1, a=2))),
        ("nested set", lambda d: d["n"].__setitem__("x", 5)),
        ("nested list append", lambda d: d["n"]["l"].append(4)),
        ("setdefault then append", lambda d: d.setdefault("tags", []).append("t")),
        ("nested moved", lambda d: d.__setitem__("m", d.pop("n"))),
    ],
)
def test_dict_method_matches_dict(core, name, edit):
    plain = {"a": 1, "b": 2, "c": 3, "n": {"x": 1, "l": [1, 2, 3]}}
    same_through_draft(core, plain, edit)


def test_dict_methods_return_what_dict_returns(core):
    base = deep(core, {"a": 1, "b": {"x": 1}, "c": 3})

    def recipe(d):
        assert d.pop("a") == 1
        popped = d.pop("b")
        assert is_draft(popped) and popped == {"x": 1}
        assert d.popitem() == ("c", 3)
        with pytest.raises(KeyError, match="popitem\\(\\): dictionary is empty"):
            d.popitem()
        with pytest.raises(KeyError):
            d.pop("gone")
        assert d.setdefault("s", {"deep": [1]}) == {"deep": [1]}
        assert is_draft(d["s"]["deep"])
        assert d.copy() == {"s": {"deep": [1]}} and type(d.copy()) is dict
        assert type(d | {"k": 1}) is dict and (d | {"k": 1})["k"] == 1
        assert ({"k": 1} | d)["s"] is d["s"]
        assert DictDraft.fromkeys("ab", 0) == {"a": 0, "b": 0}

    new = produce(base, recipe)
    assert new == deep(core, {"s": {"deep": [1]}})


def test_update_errors_are_dicts(core):
    base = core.frozendict(a=1)

    def recipe(d):
        with pytest.raises(ValueError, match="element #1 has length 3; 2 is required"):
            d.update([("x", 1), (1, 2, 3)])
        with pytest.raises(TypeError, match="element #0 to a sequence"):
            d.update([5])
        with pytest.raises(TypeError):
            d.update(5)
        with pytest.raises(TypeError, match="unhashable"):
            d[[1]] = 1
        assert d == {"a": 1, "x": 1}  # as dict.update: the pairs before the bad one stay

    produce(base, recipe)


# --- list changes: every method, slices included, against list -----------------


@pytest.mark.parametrize(
    "name,edit",
    [
        ("setitem", lambda items: items.__setitem__(1, 20)),
        ("setitem negative", lambda items: items.__setitem__(-1, 50)),
        ("slice assign grow", lambda items: items.__setitem__(slice(1, 3), [7, 8, 9, 10])),
        ("slice assign shrink", lambda items: items.__setitem__(slice(0, 4), [0])),
        ("slice assign empty", lambda items: items.__setitem__(slice(2, 2), ["in"])),
        ("slice assign reversed bounds", lambda items: items.__setitem__(slice(4, 1), ["x"])),
        (
            "extended slice assign",
            lambda items: items.__setitem__(slice(None, None, 2), ["a", "b", "c"]),
        ),
        (
            "negative step assign",
            lambda items: items.__setitem__(slice(None, None, -2), ["a", "b", "c"]),
        ),
        ("delitem", lambda items: items.__delitem__(0)),
        ("del slice", lambda items: items.__delitem__(slice(1, 3))),
        ("del extended slice", lambda items: items.__delitem__(slice(None, None, 2))),
        ("del negative step", lambda items: items.__delitem__(slice(None, None, -3))),
        ("append", lambda items: items.append(6)),
        ("extend", lambda items: items.extend(range(3))),
        ("extend with itself", lambda items: items.extend(items)),
        ("insert", lambda items: items.insert(2, "i")),
        ("insert far", lambda items: (items.insert(100, "end"), items.insert(-100, "start"))),
        ("insert negative", lambda items: items.insert(-1, "n")),
        ("pop", lambda items: items.pop()),
        ("pop index", lambda items: items.pop(1)),
        ("remove", lambda items: items.remove(3)),
        ("sort reverse", lambda items: items.sort(reverse=True)),
        ("sort by key", lambda items: items.sort(key=lambda v: -v)),
        ("reverse", lambda items: items.reverse()),
        ("clear", lambda items: items.clear()),
        ("iadd", lambda items: items.__iadd__((9, 9))),
        ("imul", lambda items: items.__imul__(2)),
        ("imul zero", lambda items: items.__imul__(0)),
        ("whole slice from itself", lambda items: items.__setitem__(slice(None), items)),
    ],
)
def test_list_method_matches_list(core, name, edit):
    plain = {"l": [1, 2, 3, 4, 5]}
    same_through_draft(core, plain, lambda d: edit(d["l"]))
    same_through_draft(core, [1, 2, 3, 4, 5], edit)  # a tuple as the base itself


def test_list_reads_and_returns_are_lists(core):
    base = deep(core, [3, {"a": 1}, [1, 2], 3])

    def recipe(items):
        assert items[1:3] == [{"a": 1}, [1, 2]] and type(items[1:3]) is list
        assert items[1:3][0] is items[1]  # a slice holds the same drafts
        assert items.index(3) == 0 and items.index(3, 1) == 3 and items.count(3) == 2
        assert {"a": 1} in items and [1, 2] in items and (1, 2) not in items  # a draft is a list
        assert items.copy() == list(items) and type(items.copy()) is list
        assert (
            items + [0] == [3, {"a": 1}, [1, 2], 3, 0]
            and items * 0 == []
            and 2 * items == items + items
        )
        assert (
            items == items
            and items[2] == [1, 2]
            and items[2] != (1, 2)
            and items[2] < [1, 3]
            and items[2] >= [1]
        )
        assert list(reversed(items))[0] == 3
        # The errors are a list's on this Python, word for word (3.15 and
        # PyPy word some of them differently).
        model = thaw(base)
        for action in (
            lambda x: x.index("nope"),
            lambda x: x.remove("nope"),
            lambda x: x.pop(10),
            lambda x: x.__setitem__(10, 1),
            lambda x: x[10],
            lambda x: x.__setitem__(slice(None, None, 2), [1]),
            lambda x: x.__setitem__(slice(0, 1), 5),
            lambda x: x + (1,),
            lambda x: operator.imul(x, "x"),
            lambda x: x.extend(5),
        ):
            assert error_of(action, items) == error_of(action, model) != (None, None)
        popped = items.pop(1)
        assert is_draft(popped) and popped == {"a": 1}
        items.clear()
        assert error_of(lambda x: x.pop(), items) == error_of(lambda x: x.pop(), [])

    assert produce(base, recipe) == ()


def test_iterating_a_list_draft_sees_edits_as_a_list_iterator(core):
    def recipe(items):
        seen = []
        for item in items:
            seen.append(item)
            if item == 1:
                items.append(4)
        assert seen == [1, 2, 4]

    assert produce((1, 2), recipe) == (1, 2, 4)


def test_sorting_nested_lists_compares_them_as_lists(core):
    base = ((3, 1), (1, 2), (2,))
    new = produce(base, lambda items: items.sort())
    assert new == ((1, 2), (2,), (3, 1))
    assert new[0] is base[1]  # moved, not copied
    with pytest.raises(TypeError):
        produce((core.frozendict(a=1), core.frozendict(a=2)), lambda items: items.sort())


# --- what is stored -----------------------------------------------------------------


def test_assigned_values_are_deep_frozen_with_the_bases_type(core):
    base = core.frozendict(a=1)
    point = collections.namedtuple("Point", "x y")

    def recipe(d):
        d["plain"] = {"l": [1, {"s": {2}}], "t": (1, [2])}
        d["named"] = point([1], 2)

    new = produce(base, recipe)
    assert type(new["plain"]) is core.frozendict
    assert new["plain"] == freeze({"l": [1, {"s": {2}}], "t": (1, [2])})
    assert type(new["plain"]["l"][1]) is core.frozendict
    assert type(new["plain"]["l"][1]["s"]) is frozenset
    assert new["named"] == point((1,), 2) and type(new["named"]) is point


def test_later_changes_to_an_assigned_plain_value_are_not_seen(core):
    kept = []

    def recipe(d):
        kept.append([1])
        d["a"] = kept[0]
        kept[0].append(2)  # the draft took a frozen copy
        d["b"] = kept[0]
        d["b"].append(3)  # a read gives the draft of what was stored

    new = produce(core.frozendict(), recipe)
    assert new == {"a": (1,), "b": (1, 2, 3)}


def test_frozen_values_assigned_are_kept_as_they_are(core):
    fd = core.frozendict
    shared = fd(x=(1, 2))
    base = fd(a=1)
    new = produce(base, lambda d: d.__setitem__("s", shared))
    assert new["s"] is shared


def test_a_draft_assigned_elsewhere_is_one_object_in_both_places(core):
    base = deep(core, {"a": {"x": 1}, "l": [0]})

    def recipe(d):
        d["b"] = d["a"]
        d["l"].append(d["a"])
        d["wrapped"] = {"inner": [d["a"]]}
        d["a"]["x"] = 2  # after the assignments: every place sees it

    new = produce(base, recipe)
    assert new["a"] == {"x": 2}
    assert new["b"] is new["a"] and new["l"][1] is new["a"]
    assert new["wrapped"]["inner"][0] is new["a"]


def test_repeating_a_list_repeats_its_nested_drafts(core):
    base = deep(core, {"l": [[0]]})

    def recipe(d):
        d["l"] *= 2  # one inner list, twice (never read before)
        d["l"][0].append(1)  # seen in both places, as with plain lists

    new = produce(base, recipe)
    assert new == deep(core, {"l": [[0, 1], [0, 1]]})
    assert new["l"][0] is new["l"][1]


def test_a_draft_moved_unchanged_is_the_base_node(core):
    base = deep(core, {"a": {"x": 1}, "b": 2})
    new = produce(base, lambda d: d.__setitem__("c", d.pop("a")))
    assert new["c"] is base["a"] and list(new) == ["b", "c"]


def test_a_draft_inside_itself_is_a_value_error(core):
    base = deep(core, {"a": {"x": 1}})

    def into_child(d):
        d["a"]["me"] = d

    with pytest.raises(ValueError, match="contains itself"):
        produce(base, into_child)
    with pytest.raises(ValueError, match="contains itself"):
        produce(base, lambda d: d["a"].__setitem__("me", [d["a"]]))


# --- structural sharing ---------------------------------------------------------------


def test_nothing_changed_returns_base(core):
    base = deep(core, {"a": {"b": [1, {"c": 2}]}, "d": 1})

    def read_everything(d):
        d["a"]["b"][1]["c"]
        list(d.items())

    assert produce(base, read_everything) is base
    assert produce(base, lambda d: None) is base
    tuple_base = deep(core, [1, [2]])

    def read_in_a_tuple(items):
        items[1][0]

    assert produce(tuple_base, read_in_a_tuple) is tuple_base


def test_identical_values_assigned_return_base(core):
    base = deep(core, {"a": {"b": [1, 2]}, "d": "x"})

    def assign_same(d):
        d["d"] = base["d"]
        d["a"] = d["a"]
        d["a"]["b"][0] = 1
        d["a"]["b"][:] = d["a"]["b"]
        d["a"]["b"].sort()
        d.update(d)

    assert produce(base, assign_same) is base


def test_edits_that_cancel_out_return_base(core):
    base = deep(core, {"a": 1, "n": {"x": 1}})

    def cancel(d):
        d["a"] = 2
        d["a"] = 1
        d["n"]["x"] = 5
        d["n"]["x"] = 1
        d["n"]["y"] = 1
        del d["n"]["y"]

    assert produce(base, cancel) is base

    def delete_and_put_back(d):
        del d["a"]
        d["a"] = 1  # now last: the order changed

    moved = produce(base, delete_and_put_back)
    assert moved == base and list(moved) == ["n", "a"]


def test_only_the_path_to_a_change_is_new(core):
    fd = core.frozendict
    base = fd(
        {
            "k%d" % i: fd({"j%d" % j: fd({"x%d" % x: x for x in range(10)}) for j in range(10)})
            for i in range(30)
        }
    )
    new = produce(base, lambda d: d["k5"]["j7"].__setitem__("x3", 99))
    assert new["k5"]["j7"]["x3"] == 99 and base["k5"]["j7"]["x3"] == 3
    assert (
        new is not base and new["k5"] is not base["k5"] and new["k5"]["j7"] is not base["k5"]["j7"]
    )
    for key in base:
        if key != "k5":
            assert new[key] is base[key]
    for key in base["k5"]:
        if key != "j7":
            assert new["k5"][key] is base["k5"][key]
    assert list(new) == list(base)


def test_a_tuple_changed_at_one_place_keeps_its_other_items(core):
    inner = core.frozendict(a=1)
    base = (inner, core.frozendict(b=2), (1,))
    new = produce(base, lambda items: items[1].__setitem__("b", 3))
    assert new[0] is inner and new[2] is base[2] and new[1] == {"b": 3}


# --- the recipe's return value -----------------------------------------------------


def test_a_returned_value_replaces_the_state(core):
    base = deep(core, {"a": {"x": 1}})
    new = produce(base, lambda d: {"wrapped": d, "also": [d["a"]]})
    assert new == deep(core, {"wrapped": {"a": {"x": 1}}, "also": [{"x": 1}]})
    assert new["wrapped"] is base and new["also"][0] is base["a"]
    assert produce(base, lambda d: 5) == 5
    assert produce(base, lambda d: d) is base  # the draft itself: as None
    assert produce(base, lambda d: d["a"]) is base["a"]


def test_returning_a_value_after_changing_the_draft_is_an_error(core):
    base = core.frozendict(a=1)

    def changes_and_returns(d):
        d["a"] = 2
        return {"other": 1}

    with pytest.raises(RuntimeError, match="changed the draft and also returned a value"):
        produce(base, changes_and_returns)


# --- current, original, is_draft --------------------------------------------------


def test_current_original_and_is_draft(core):
    base = deep(core, {"a": {"x": 1}, "l": [1]})
    snapshots = []

    def recipe(d):
        a = d["a"]
        assert original(a) is base["a"] and original(d) is base
        assert current(a) is base["a"]  # unchanged: the base node
        a["x"] = 2
        snapshots.append(current(d))
        d["l"].append(2)
        assert current(d["l"]) == (1, 2)
        assert original(d["l"]) is base["l"]
        assert is_draft(d) and is_draft(a) and not is_draft(base) and not is_draft({})

    new = produce(base, recipe)
    assert snapshots[0] == deep(core, {"a": {"x": 2}, "l": [1]})
    assert snapshots[0]["a"] is not new["a"] or snapshots[0]["a"] == new["a"]
    assert new["l"] == (1, 2)
    with pytest.raises(TypeError, match="current\\(\\) argument must be a draft, not dict"):
        current({})
    with pytest.raises(TypeError, match="original\\(\\) argument must be a draft, not int"):
        original(1)


def test_freeze_of_a_draft_is_its_snapshot(core):
    def recipe(d):
        d["x"] = 1
        assert freeze(d) == {"a": 1, "x": 1}
        assert freeze([d])[0] == {"a": 1, "x": 1}

    produce(core.frozendict(a=1), recipe)


# --- revocation --------------------------------------------------------------------


def test_drafts_are_revoked_when_produce_returns(core):
    kept = {}
    base = deep(core, {"a": {"x": 1}, "l": [1, 2]})

    def recipe(d):
        kept.update(root=d, a=d["a"], l=d["l"], keys=d.keys(), iterator=iter(d))
        next(kept["iterator"])

    produce(base, recipe)
    root, a, items = kept["root"], kept["a"], kept["l"]
    uses = [
        lambda: root["a"],
        lambda: root.get("a"),
        lambda: root.__setitem__("a", 1),
        lambda: root.__delitem__("a"),
        lambda: len(root),
        lambda: "a" in root,
        lambda: list(root),
        lambda: root.pop("a"),
        lambda: root.popitem(),
        lambda: root.clear(),
        lambda: root.update(a=1),
        lambda: root == {},
        lambda: a["x"],
        lambda: items[0],
        lambda: items.append(1),
        lambda: len(items),
        lambda: items[0:1],
        lambda: items.sort(),
        lambda: list(kept["keys"]),
        lambda: next(kept["iterator"]),
        lambda: current(root),
        lambda: original(a),
        lambda: produce(root, lambda d: None),
    ]
    for use in uses:
        with pytest.raises(RuntimeError, match="revoked"):
            use()
    assert repr(root) == "<DictDraft (revoked)>" and repr(items) == "<ListDraft (revoked)>"
    assert is_draft(root)
    assert base == deep(core, {"a": {"x": 1}, "l": [1, 2]})


def test_a_recipe_that_raises_leaves_base_and_revokes(core):
    base = deep(core, {"a": {"x": 1}})
    kept = []

    def recipe(d):
        kept.append(d["a"])
        d["a"]["x"] = 2
        raise KeyError("stop")

    with pytest.raises(KeyError, match="stop"):
        produce(base, recipe)
    assert base == deep(core, {"a": {"x": 1}})
    with pytest.raises(RuntimeError, match="revoked"):
        kept[0]["x"]


# --- produce inside produce ------------------------------------------------------------


def test_produce_on_a_draft_edits_it_in_place(core):
    base = deep(core, {"a": {"x": 1}, "b": 1})

    def inner(a):
        a["x"] += 1

    def outer(d):
        assert produce(d["a"], inner) is d["a"]
        d["a"] = produce(d["a"], inner)  # the usual spelling: a self-assignment
        d["b"] = produce(d["a"], lambda a: 5)  # a returned value is returned

    new = produce(base, outer)
    assert new == deep(core, {"a": {"x": 3}, "b": 5})


def test_produce_inside_a_recipe_on_another_or_the_same_base(core):
    base = deep(core, {"a": {"x": 1}})
    other = deep(core, {"y": 1})

    def outer(d):
        d["other"] = produce(other, lambda o: o.__setitem__("y", 2))
        d["again"] = produce(base, lambda b: b["a"].__setitem__("x", 10))
        d["a"]["x"] = 5

    new = produce(base, outer)
    assert new["other"] == {"y": 2} and new["again"] == {"a": {"x": 10}} and new["a"] == {"x": 5}
    assert base["a"]["x"] == 1


def test_a_draft_of_another_produce_is_stored_as_its_snapshot(core):
    base = deep(core, {"a": {"x": 1}})
    other = deep(core, {"y": {"z": 1}})

    def outer(d):
        def inner(o):
            o["y"]["z"] = 2
            d["copied"] = o["y"]  # a draft of the inner produce: copied now
            o["y"]["z"] = 3

        produce(other, inner)

    new = produce(base, outer)
    assert new["copied"] == {"z": 2}


# --- equality, hashing, copying, pickling, repr --------------------------------------


def test_equality_is_the_mutable_types(core):
    base = deep(core, {"a": {"x": [1]}, "l": [1, [2]], "n": {"k": 1}})

    def recipe(d):
        assert d == {"a": {"x": [1]}, "l": [1, [2]], "n": {"k": 1}}
        assert d["n"] == base["n"] and d == d and d["a"] == {"x": [1]}
        # as {"x": [1]} == frozendict(x=(1,)) is False: a tuple is not a list
        assert d != base and d["a"] != base["a"]
        assert d != {"a": 1} and d != [1] and not (d == 5)
        assert d["l"] == [1, [2]] and d["l"] != (1, (2,)) and d["l"] != (1, [2])
        with pytest.raises(TypeError, match="unhashable"):
            hash(d)
        with pytest.raises(TypeError, match="unhashable"):
            hash(d["l"])

    produce(base, recipe)


def test_copying_and_pickling(core):
    base = deep(core, {"a": {"x": [1]}})

    def recipe(d):
        shallow = copy.copy(d)
        assert type(shallow) is dict and shallow["a"] is d["a"]
        full = copy.deepcopy(d)
        assert full == {"a": {"x": [1]}} and type(full["a"]["x"]) is list
        assert thaw(current(d)) == full
        with pytest.raises(TypeError, match="cannot be pickled"):
            pickle.dumps(d)
        with pytest.raises(TypeError, match="cannot be pickled"):
            pickle.dumps(d["a"]["x"])

    produce(base, recipe)


def test_repr_shows_the_contents_as_the_recipe_sees_them(core):
    base = deep(core, {"a": {"x": [1, 2]}, "s": "t"})

    def recipe(d):
        d["a"]["x"].append(d["a"])
        assert repr(d) == "DictDraft({'a': {'x': [1, 2, {...}]}, 's': 't'})"
        assert repr(d["a"]["x"]) == "ListDraft([1, 2, {'x': [...]}])"
        d["a"]["x"].pop()

    produce(base, recipe)


def test_drafts_are_made_by_produce_only():
    with pytest.raises(TypeError, match="made by produce"):
        DictDraft()
    with pytest.raises(TypeError, match="made by produce"):
        ListDraft()


# --- bad arguments -------------------------------------------------------------------


def test_base_must_be_an_exact_frozendict_or_tuple(core):
    class Sub(core.frozendict):
        pass

    Point = collections.namedtuple("Point", "x")
    cases = [
        ({}, "not dict \\(freeze\\(base\\) makes a frozendict of a dict\\)"),
        ([1], "not list \\(freeze\\(base\\) makes a tuple of a list\\)"),
        (Sub(), "not Sub \\(a subclass is a leaf: convert it first\\)"),
        (Point(1), "not Point \\(a subclass is a leaf"),
        (None, "not NoneType$"),
        ("text", "not str$"),
    ]
    for base, message in cases:
        with pytest.raises(
            TypeError, match="^produce\\(\\) base must be an exact frozendict or tuple, " + message
        ):
            produce(base, lambda d: None)
    with pytest.raises(TypeError, match="^produce\\(\\) recipe must be callable, not int$"):
        produce(core.frozendict(), 5)


def test_docstring_examples(core, monkeypatch):
    import doctest

    import frozenmap
    from frozenmap import drafts

    monkeypatch.setattr(frozenmap, "frozendict", core.frozendict)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(drafts, "frozenmap.drafts", globs={})
    for test in tests:
        runner.run(test)
    failed, ran = runner.summarize(verbose=False)
    assert ran >= 8 and failed == 0
