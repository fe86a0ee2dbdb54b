"""The drafts property: random edit scripts applied through a draft equal the
same edits applied to plain dicts and lists, then frozen.

A state is random nested data (frozendicts and tuples, several levels, with
keys that need escaping in a JSON Pointer).  An edit script is a list of
operations, each on a container chosen by a path of choices, with a value that
is a scalar, fresh nested data or another container of the same state (an
alias: the same object in two places).  The recipe runs each operation on the
draft and on a plain model side by side; an operation that raises must raise
the same exception on both.  Afterwards the new state equals the frozen model
in every key order, no draft is left inside it, and the patches of
``produce_with_patches`` turn the base into it and back.
"""

import copy

from hypothesis import given
from hypothesis import strategies as st
from test_drafts import deep, ordered

from frozenmap import apply_json_patch, is_draft, produce, produce_with_patches
from frozenmap.drafts import DictDraft, ListDraft

KEYS = st.sampled_from(["a", "b", "c", "d/e", "~f", "g"])
SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.text("xy", max_size=2)
PLAIN = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=12,
)
STATES = st.dictionaries(KEYS, PLAIN, max_size=5) | st.lists(PLAIN, max_size=5)
PATHS = st.lists(st.integers(0, 9), max_size=4)
OPERATIONS = st.tuples(
    PATHS,  # the container to edit
    st.integers(0, 99),  # which operation
    st.integers(-6, 6),  # an index, a count or a scalar value
    KEYS,
    st.integers(0, 2),  # the value: a scalar, fresh data, or an alias
    PLAIN,
    PATHS,  # the alias's path
)
SCRIPTS = st.lists(OPERATIONS, min_size=1, max_size=16)


def walk(model, draft, path):
    """The container ``path`` chooses in the model, and the same one in the draft."""
    for choice in path:
        if not model:
            break
        if isinstance(model, dict):
            key = list(model)[choice % len(model)]
            next_model, next_draft = model[key], draft[key]
        else:
            index = choice % len(model)
            next_model, next_draft = model[index], draft[index]
        if not isinstance(next_model, (dict, list)):
            break
        model, draft = next_model, next_draft
    assert type(draft) is (DictDraft if isinstance(model, dict) else ListDraft)
    return model, draft


def reachable(value, seen=None):
    """The ids of the containers reachable from ``value`` (itself included)."""
    seen = set() if seen is None else seen
    if isinstance(value, (dict, list)) and id(value) not in seen:
        seen.add(id(value))
        for item in value.values() if isinstance(value, dict) else value:
            reachable(item, seen)
    return seen


def operations(root_model, root_draft, step):
    """The operation ``step`` as (model operation, draft operation), or None to skip."""
    path, code, number, key, kind, data, alias_path = step
    model, draft = walk(root_model, root_draft, path)
    if kind == 0:
        values = (number, number)
    elif kind == 1:
        values = (copy.deepcopy(data), copy.deepcopy(data))
    else:
        values = walk(root_model, root_draft, alias_path)
        if id(model) in reachable(values[0]):
            return None  # the model would hold itself (the drafts' cycle error is tested apart)

    def both(edit):
        return (lambda: edit(model, values[0]), lambda: edit(draft, values[1]))

    def repeated(value, times):
        """``value`` in ``times`` places: fresh data is frozen at each place
        it is assigned to (so the model gets a copy each time), a container of
        the state is the same object in each."""
        if kind == 1:
            return [copy.deepcopy(value) for _ in range(times)]
        return [value] * times

    if isinstance(model, dict):
        existing = list(model)[number % len(model)] if model else key
        edits = [
            lambda m, v: m.__setitem__(key, v),
            lambda m, v: m.__setitem__(existing, v),
            lambda m, v: m.__delitem__(key),
            lambda m, v: m.pop(existing),
            lambda m, v: m.pop(key, None),
            lambda m, v: m.popitem(),
            lambda m, v: m.setdefault(key, v),
            lambda m, v: m.update({key: v, "g": number}),
            lambda m, v: m.clear(),
            lambda m, v: m.__ior__({existing: v}),
        ]
    else:
        span = slice(number, number + 2 if code % 2 else number - 3, (code % 3) or None)
        edits = [
            lambda m, v: m.__setitem__(number, v),
            lambda m, v: m.insert(number, v),
            lambda m, v: m.append(v),
            lambda m, v: m.extend([v, number]),
            lambda m, v: m.pop(number),
            lambda m, v: m.__delitem__(number),
            lambda m, v: m.__setitem__(slice(number, number + 2), [v, "s"]),
            lambda m, v: m.__setitem__(slice(number, number + 3), [v]),
            lambda m, v: m.__setitem__(slice(number, number + 1), [v, "s", "t"]),
            lambda m, v: m.__delitem__(span),
            lambda m, v: m.__setitem__(span, repeated(v, len(range(*span.indices(len(m)))))),
            lambda m, v: m.reverse(),
            lambda m, v: m.clear(),
            lambda m, v: m.__iadd__([v]),
            lambda m, v: m.__imul__(number % 3),
        ]
        if model:  # equal to an item (compared as a list compares)
            item = model[number % len(model)]
            edits.append(lambda m, v: m.remove(copy.deepcopy(item)))
            edits.append(lambda m, v: m.index(copy.deepcopy(item)))
        if all(type(x) is int for x in model):
            edits.append(lambda m, v: m.sort(reverse=bool(number % 2)))
    return both(edits[code % len(edits)])


def outcome(operation):
    try:
        operation()
    except Exception as exc:
        return type(exc)
    return None


def run(script, plain):
    """The recipe that runs ``script`` on its draft and on a copy of
    ``plain``; the edited model is in ``models``."""
    models = []

    def recipe(draft):
        model = copy.deepcopy(plain)
        models.append(model)
        for step in script:
            pair = operations(model, draft, step)
            if pair is not None:
                assert outcome(pair[0]) is outcome(pair[1]), step

    return recipe, models


def no_drafts_inside(value):
    assert not is_draft(value) and not isinstance(value, (dict, list))
    if isinstance(value, tuple):
        for item in value:
            no_drafts_inside(item)
    elif hasattr(value, "evolve"):
        for item in value.values():
            no_drafts_inside(item)


@given(plain=STATES, script=SCRIPTS)
def test_edits_through_a_draft_equal_the_edits_on_plain_data(core, plain, script):
    base = deep(core, plain)
    recipe, models = run(script, plain)
    new = produce(base, recipe)
    expected = deep(core, models[-1])
    assert ordered(new) == ordered(expected)
    no_drafts_inside(new)
    if ordered(models[-1]) == ordered(plain):
        assert new == base

    recipe, models = run(script, plain)
    again, patches, inverse = produce_with_patches(base, recipe)
    assert ordered(again) == ordered(expected)
    forward = apply_json_patch(base, patches)
    assert ordered(forward) == ordered(again)
    assert apply_json_patch(again, inverse) == base


@given(plain=STATES)
def test_a_recipe_that_changes_nothing_returns_base(core, plain):
    base = deep(core, plain)

    def read_everything(draft):
        def visit(node):
            for item in node.values() if isinstance(node, DictDraft) else node:
                if is_draft(item):
                    visit(item)

        visit(draft)

    assert produce(base, read_everything) is base
    assert produce_with_patches(base, read_everything) == (base, [], [])
