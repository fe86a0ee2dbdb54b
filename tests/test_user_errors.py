"""Errors and small behaviours a new user meets first.

Each message is as good as dict's or better, and the same on both cores:
pairs that are not pairs, a ``diff`` against something that is not a mapping,
a str or bytes operand of ``-``/``&`` (read as its characters, almost always a
mistake), a path through a plain dict or list, and the truth and length of a
``Diff``.
"""

import re

import pytest


@pytest.mark.parametrize("bad", [[1, 2], [("a", 1), 5]])
def test_update_with_a_non_pair_says_what_dict_says(core, bad):
    with pytest.raises(TypeError) as expected:
        dict(bad)
    for call in (core.frozendict, lambda arg: core.frozendict().evolve().update(arg)):
        with pytest.raises(TypeError) as got:
            call(bad)
        assert str(got.value) == str(expected.value)
        assert getattr(got.value, "__notes__", None) == getattr(expected.value, "__notes__", None)


@pytest.mark.parametrize(
    "other, name", [(5, "int"), ([("a", 1)], "list"), ({"a"}, "set"), (None, "NoneType")]
)
def test_diff_with_a_non_mapping_names_its_type(fd, other, name):
    with pytest.raises(
        TypeError, match=re.escape("diff() argument must be a mapping, not '%s'" % name)
    ):
        fd(a=1).diff(other)


def test_diff_accepts_any_object_with_keys_and_getitem(fd):
    class Pairs:
        def keys(self):
            return ["a", "b"]

        def __getitem__(self, key):
            return {"a": 1, "b": 2}[key]

        def __iter__(self):
            return iter(self.keys())

        def __contains__(self, key):
            return key in ("a", "b")

    assert fd(a=1).diff(Pairs()).added == fd(b=2)


@pytest.mark.parametrize("text", ["users", b"users", bytearray(b"users")])
@pytest.mark.parametrize("op", ["-", "&"])
def test_text_operand_of_minus_and_and_is_refused(fd, text, op):
    m = fd(a=1, users=2, u=3, s=4)
    with pytest.raises(TypeError) as info:
        m - text if op == "-" else m & text
    message = str(info.value)
    assert message.startswith(
        "unsupported operand type(s) for %s: 'frozendict' and '%s'" % (op, type(text).__name__)
    )
    assert "write fd %s {key}" % op in message
    # the map is untouched, and a set of str keys still works
    assert m - {"users"} == fd(a=1, u=3, s=4)
    assert m & {"users"} == fd(users=2)


def test_text_operand_error_names_the_subclass(fd):
    class Config(fd):
        pass

    with pytest.raises(TypeError, match=r"for -: 'Config' and 'str'"):
        Config(a=1) - "a"


def test_empty_diff_is_falsy_and_len_counts_keys(fd):
    m = fd(a=1, b=2, c=3)
    assert not m.diff(m)
    assert len(m.diff(m)) == 0
    d = m.diff({"b": 20, "c": 3, "d": 4, "e": 5})  # a removed, b changed, d and e added
    assert d
    assert len(d) == 4
    added, removed, changed = d  # still unpacks into its three parts
    assert (len(added), len(removed), len(changed)) == (2, 1, 1)


def test_diff_namedtuple_helpers_still_work(fd):
    d = fd(a=1).diff(fd(a=2))
    assert d._replace(added=fd(z=1)).added == fd(z=1)
    assert type(d)._make(d) == d
    with pytest.raises(TypeError, match="Expected 3 arguments, got 2"):
        type(d)._make([1, 2])
    assert d._asdict()["changed"] == fd(a=(1, 2))


@pytest.mark.parametrize(
    "inner, hint",
    [
        ({"b": 1}, "frozenmap.freeze() turns nested dicts into frozendicts"),
        (
            [1, 2],
            "a path goes through frozendicts only: update_in() can replace the whole sequence",
        ),
        (
            (1, 2),
            "a path goes through frozendicts only: update_in() can replace the whole sequence",
        ),
    ],
)
def test_path_through_a_plain_container_hints_at_the_fix(fd, inner, hint):
    m = fd(a=inner)
    for call in (
        lambda: m.set_in(("a", 0), 2),
        lambda: m.get_in(("a", 0, 1)),
        lambda: m.delete_in(("a", 0)),
    ):
        with pytest.raises(TypeError) as info:
            call()
        assert str(info.value) == "path[0] leads to a value of type '%s', not a frozendict; %s" % (
            type(inner).__name__,
            hint,
        )


def test_path_through_another_value_has_no_hint(fd):
    with pytest.raises(TypeError) as info:
        fd(a=5).set_in(("a", "b"), 1)
    assert str(info.value) == "path[0] leads to a value of type 'int', not a frozendict"
