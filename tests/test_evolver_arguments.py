"""``Evolver(source)``: one argument, by position or as ``source=``; anything
else is a ``TypeError`` in the same words on both cores and every Python.

The words are dict's for too many positional arguments (``dict expected at
most 1 argument, got 2``, docs/pep814.md row C2) and a Python function's for
keywords.  They are written out in both cores rather than left to the
interpreter: CPython's argument parser for C types words an unknown keyword
one way up to 3.12 and another from 3.13, and a Python ``__init__`` names
itself ``Evolver.__init__()`` and adds "Did you mean" hints from 3.13.
"""

import pytest

_BAD = [
    ((), {"a": 1, "b": 2}, "Evolver() got an unexpected keyword argument 'a'"),
    ((), {"a": 1}, "Evolver() got an unexpected keyword argument 'a'"),
    ((), {"sourc": {}}, "Evolver() got an unexpected keyword argument 'sourc'"),
    ((), {"source": {}, "b": 2}, "Evolver() got an unexpected keyword argument 'b'"),
    (({"x": 1},), {"a": 1}, "Evolver() got an unexpected keyword argument 'a'"),
    (({"x": 1},), {"source": {}}, "Evolver() got multiple values for argument 'source'"),
    (({"x": 1}, {}), {}, "Evolver expected at most 1 argument, got 2"),
    (({}, {}, {}), {"a": 1}, "Evolver expected at most 1 argument, got 3"),
]


@pytest.mark.parametrize("args, kwargs, message", _BAD)
def test_bad_arguments_are_worded_the_same_on_both_cores(core, args, kwargs, message):
    with pytest.raises(TypeError) as info:
        core.Evolver(*args, **kwargs)
    assert str(info.value) == message


@pytest.mark.parametrize("args, kwargs, message", _BAD)
def test_reinitialising_with_bad_arguments_changes_nothing(core, args, kwargs, message):
    e = core.Evolver({"k": 1})
    with pytest.raises(TypeError) as info:
        e.__init__(*args, **kwargs)
    assert str(info.value) == message
    assert list(e.items()) == [("k", 1)]


def test_source_by_position_or_by_name(core):
    pairs = [("b", 2), ("a", 1)]
    assert list(core.Evolver(pairs).items()) == pairs
    assert list(core.Evolver(source=pairs).items()) == pairs
    assert list(core.Evolver(source=dict(pairs)).freeze().items()) == pairs
    assert len(core.Evolver()) == 0


def test_a_keyword_name_is_printed_as_the_str_it_holds(core):
    """A str subclass as a keyword name: its ``__str__``/``__repr__`` never run."""

    class Name(str):
        def __str__(self):
            raise AssertionError("__str__ called")

        __repr__ = __str__

    assert list(core.Evolver(**{Name("source"): {"a": 1}}).items()) == [("a", 1)]
    with pytest.raises(TypeError) as info:
        core.Evolver(**{Name("colour"): 1})
    assert str(info.value) == "Evolver() got an unexpected keyword argument 'colour'"


def test_a_subclass_init_takes_its_own_arguments(core):
    """Only Evolver's own ``__init__`` parses them: ``__new__`` accepts any."""

    class Counter(core.Evolver):
        def __init__(self, *keys, start=0):
            super().__init__((key, start) for key in keys)

    assert list(Counter("a", "b", start=5).items()) == [("a", 5), ("b", 5)]
