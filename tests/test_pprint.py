"""Pretty printing: pprint as CPython 3.15 prints its builtin frozendict; rich; IPython.

The expected texts below are what CPython 3.15's ``pprint`` prints for the
builtin ``frozendict`` with the same items (``PrettyPrinter._pprint_frozendict``
in Lib/pprint.py): ``frozendict({`` and one ``key: value`` a line, aligned under
the first, when the repr does not fit the width.  On 3.15+ the same cases are
also compared with the builtin's output directly.
"""

import builtins
import pprint

import pytest
from hypothesis import given
from hypothesis import strategies as st

BUILTIN = getattr(builtins, "frozendict", None)
needs_builtin = pytest.mark.skipif(BUILTIN is None, reason="no builtin frozendict before 3.15")

ROWS = {"k%02d" % i: list(range(i)) for i in range(8)}


def test_wraps_one_item_a_line(fd):
    assert pprint.pformat(fd(ROWS)) == (
        "frozendict({'k00': [],\n"
        "            'k01': [0],\n"
        "            'k02': [0, 1],\n"
        "            'k03': [0, 1, 2],\n"
        "            'k04': [0, 1, 2, 3],\n"
        "            'k05': [0, 1, 2, 3, 4],\n"
        "            'k06': [0, 1, 2, 3, 4, 5],\n"
        "            'k07': [0, 1, 2, 3, 4, 5, 6]})"
    )


def test_fits_on_one_line_as_repr(fd):
    assert pprint.pformat(fd(a=1, b=[2, 3])) == "frozendict({'a': 1, 'b': [2, 3]})"
    assert pprint.pformat(fd()) == "frozendict()"
    assert pprint.pformat(fd(), width=1) == "frozendict()"


def test_indent_pads_after_the_brace(fd):
    assert pprint.pformat(fd(alpha=1, beta=2, gamma=3), indent=4, width=20) == (
        "frozendict({   'alpha': 1,\n               'beta': 2,\n               'gamma': 3})"
    )


def test_sort_dicts_sorts_a_wrapped_frozendict_and_pp_keeps_order(fd):
    value = fd(zeta="z" * 30, alpha="a" * 30, mu="m" * 30)
    assert pprint.pformat(value) == (
        "frozendict({'alpha': 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',\n"
        "            'mu': 'mmmmmmmmmmmmmmmmmmmmmmmmmmmmmm',\n"
        "            'zeta': 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz'})"
    )
    assert pprint.pformat(value, sort_dicts=False) == (
        "frozendict({'zeta': 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz',\n"
        "            'alpha': 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',\n"
        "            'mu': 'mmmmmmmmmmmmmmmmmmmmmmmmmmmmmm'})"
    )


def test_nested_in_containers_and_in_itself(fd):
    inner = fd(first="x" * 20, second="y" * 20)
    assert pprint.pformat([inner, {"key": inner}], width=50) == (
        "[frozendict({'first': 'xxxxxxxxxxxxxxxxxxxx',\n"
        "             'second': 'yyyyyyyyyyyyyyyyyyyy'}),\n"
        " {'key': frozendict({'first': 'xxxxxxxxxxxxxxxxxxxx',\n"
        "                     'second': 'yyyyyyyyyyyyyyyyyyyy'})}]"
    )
    assert pprint.pformat(fd(outer=inner, n=1), width=50, sort_dicts=False) == (
        "frozendict({'outer': frozendict({'first': 'xxxxxxxxxxxxxxxxxxxx',\n"
        "                                 'second': 'yyyyyyyyyyyyyyyyyyyy'}),\n"
        "            'n': 1})"
    )


def test_subclass_shows_its_name(fd):
    class Config(fd):
        pass

    assert pprint.pformat(Config(host="h" * 40, port=8080), width=40) == (
        "Config({'host': 'hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh',\n        'port': 8080})"
    )
    assert pprint.pformat(Config()) == "Config()"


def test_a_subclass_with_its_own_repr_is_left_alone(fd):
    class Quiet(fd):
        def __repr__(self):
            return "Quiet<%d %s>" % (len(self), "." * 100)

    assert pprint.pformat(Quiet(a=1)) == repr(Quiet(a=1))


def test_recursion_is_reported_not_followed(fd):
    box = []
    value = fd(box=box, pad="p" * 80)
    box.append(value)
    text = pprint.pformat(value)
    assert text.startswith("frozendict({'box': [<Recursion on frozendict with id=")
    assert text.endswith("'pad': '%s'})" % ("p" * 80))


def test_pprint_writes_the_same_text(fd, capsys):
    pprint.pprint(fd(ROWS))
    assert capsys.readouterr().out == pprint.pformat(fd(ROWS)) + "\n"


# --- against the builtin, where there is one -----------------------------------------

values = st.recursive(
    st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=5),
    max_leaves=12,
)
mappings = st.dictionaries(st.text(max_size=8), values, max_size=8)


@needs_builtin
def test_matches_the_builtin_on_fixed_cases(fd):
    for items in (ROWS, {}, {"a": 1}, {"alpha": 1, "beta": 2, "gamma": 3}):
        for kwargs in ({}, {"width": 20}, {"indent": 4, "width": 20}, {"sort_dicts": False}):
            assert pprint.pformat(fd(items), **kwargs) == pprint.pformat(BUILTIN(items), **kwargs)


@needs_builtin
@given(mappings, st.integers(10, 100), st.integers(1, 4))
def test_matches_the_builtin_wrapped_or_not(core, items, width, indent):
    ours = core.frozendict({"in": core.frozendict(items), **items})
    theirs = BUILTIN({"in": BUILTIN(items), **items})
    for wrap in (lambda x: x, lambda x: [x, x], lambda x: {"k": x}):
        for kwargs in ({}, {"sort_dicts": False}, {"depth": 1}, {"depth": 2}):
            assert pprint.pformat(wrap(ours), width=width, indent=indent, **kwargs) == (
                pprint.pformat(wrap(theirs), width=width, indent=indent, **kwargs)
            )


NESTED_KEYS = [("key%d" % i, {"z": 1, "y": {"q": "x" * 30}}) for i in (3, 2, 1)]


def test_one_line_form_sorts_keys_and_honours_depth(fd):
    value = fd(b=1, a=fd(d=2, c=fd(x=1)))
    assert (
        pprint.pformat(value)
        == "frozendict({'a': frozendict({'c': frozendict({'x': 1}), 'd': 2}), 'b': 1})"
    )
    assert pprint.pformat(value, sort_dicts=False) == (
        "frozendict({'b': 1, 'a': frozendict({'d': 2, 'c': frozendict({'x': 1})})})"
    )
    assert pprint.pformat(value, depth=1) == "frozendict({'a': frozendict({...}), 'b': 1})"
    assert pprint.pformat(value, depth=2) == (
        "frozendict({'a': frozendict({'c': frozendict({...}), 'd': 2}), 'b': 1})"
    )
    assert pprint.saferepr(value) == pprint.pformat(value)
    assert pprint.isreadable(value) and not pprint.isrecursive(value)


def test_depth_applies_inside_a_wrapped_frozendict(fd):
    value = fd({key: fd(z=inner["z"], y=inner["y"]) for key, inner in NESTED_KEYS})
    assert pprint.pformat(value, depth=2) == (
        "frozendict({'key1': frozendict({'y': {...}, 'z': 1}),\n"
        "            'key2': frozendict({'y': {...}, 'z': 1}),\n"
        "            'key3': frozendict({'y': {...}, 'z': 1})})"
    )
    assert pprint.pformat(value, depth=1) == (
        "frozendict({'key1': frozendict({...}),\n"
        "            'key2': frozendict({...}),\n"
        "            'key3': frozendict({...})})"
    )


def test_one_line_form_leaves_other_objects_to_pprint(fd):
    class Loud(fd):
        def __repr__(self):
            return "Loud!"

    assert pprint.pformat([Loud(a=1), {"b": 2, "a": 1}]) == "[Loud!, {'a': 1, 'b': 2}]"


# --- rich and IPython ----------------------------------------------------------------


def test_rich_shows_a_mapping(fd):
    rich_pretty = pytest.importorskip("rich.pretty")
    assert rich_pretty.pretty_repr(fd(a=1, b=[2])) == "frozendict({'a': 1, 'b': [2]})"
    assert rich_pretty.pretty_repr(fd()) == "frozendict()"
    assert rich_pretty.pretty_repr(fd(first="x" * 20, second="y" * 20), max_width=30) == (
        "frozendict(\n"
        "    {\n"
        "        'first': 'xxxxxxxxxxxxxxxxxxxx',\n"
        "        'second': 'yyyyyyyyyyyyyyyyyyyy'\n"
        "    }\n"
        ")"
    )


def test_ipython_shows_a_mapping(fd):
    ipython_pretty = pytest.importorskip("IPython.lib.pretty")
    assert ipython_pretty.pretty(fd(a=1, b=[2])) == "frozendict({'a': 1, 'b': [2]})"
    assert ipython_pretty.pretty(fd()) == "frozendict()"
    assert ipython_pretty.pretty(fd(first="x" * 20, second="y" * 20), max_width=30) == (
        "frozendict({'first': 'xxxxxxxxxxxxxxxxxxxx',\n"
        "            'second': 'yyyyyyyyyyyyyyyyyyyy'})"
    )
    box = []
    value = fd(box=box)
    box.append(value)
    assert ipython_pretty.pretty(value) == "frozendict({'box': [frozendict({...})]})"


def test_printers_that_look_up_the_class_itself_still_work(fd):
    # hypothesis's copy of IPython's printer calls ``cls._repr_pretty_(printer,
    # cycle)`` when an example holds the type itself (a regression: it raised
    # TypeError and broke the differential tests' reports).
    from hypothesis.vendor.pretty import pretty as hypothesis_pretty

    assert hypothesis_pretty(fd) == repr(fd)
    assert hypothesis_pretty([fd(a=1)]) == "[frozendict({'a': 1})]"
    ipython_pretty = pytest.importorskip("IPython.lib.pretty")
    assert ipython_pretty.pretty(fd) == "%s.%s" % (fd.__module__, fd.__qualname__)
