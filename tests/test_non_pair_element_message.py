"""A pairs iterable with an element that is not iterable: dict's error, in
the running interpreter's words (docs/pep814.md row C6).

CPython up to 3.13 names the element's index in the message, 3.14 in a note;
PyPy names the element's type.  The pure core takes the words from the
running interpreter's own ``dict`` (``merge._dict_sequence_error``), the
C core from the CPython it is built for; each test compares with what
``dict`` itself raises here, so the suite on PyPy checks PyPy's words.
"""

import pytest


class Opaque:
    """An element that is neither a pair nor iterable, with a type name of its own."""


def _raised(call, arg):
    with pytest.raises(TypeError) as info:
        call(arg)
    return type(info.value), str(info.value), getattr(info.value, "__notes__", None)


def _calls(core):
    def update(arg):
        core.Evolver({"z": 0}).update(arg)

    return {"frozendict": core.frozendict, "Evolver": core.Evolver, "Evolver.update": update}


_PAIRS = [("k%d" % i, i) for i in range(12)]


@pytest.mark.parametrize(
    "pairs",
    [
        [1, 2],
        [("a", 1), None],
        [("a", 1), Opaque()],
        _PAIRS + [3.5],  # index 12: two digits
        _PAIRS + [Opaque(), 1],
    ],
    ids=["int-first", "none-second", "user-type", "index-12", "user-type-12"],
)
def test_a_non_iterable_element_gets_dicts_words(core, pairs):
    expected = _raised(dict, pairs)
    for name, call in _calls(core).items():
        assert _raised(call, pairs) == expected, name


def test_the_failed_update_changes_nothing(core):
    e = core.Evolver({"z": 0})
    with pytest.raises(TypeError):
        e.update(_PAIRS + [Opaque()])
    assert list(e.items()) == [("z", 0)]
