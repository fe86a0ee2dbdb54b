"""Every bad array index in a JSON Patch is a ``JsonPatchError`` that names
the operation (``index``) and the pointer (``pointer``): too many digits for
``int()`` (more than 4,300), leading zeros, ``-`` where no element is meant,
signs, other characters, and indexes out of range -- in the last token and
on the way to it, in ``path`` and in ``from``.  Never a bare ``ValueError``
or ``IndexError`` from the conversion.
"""

import pytest

from frozenmap import JsonPatchError, apply_json_patch

DIGITS_4301 = "1" + "0" * 4300  # one more digit than int() converts by default
BAD_INDEXES = [
    DIGITS_4301,
    "9" * 5000,
    "0" * 4301,  # leading zeros, and too long
    "99999999999999999999",  # 20 digits: past any tuple
    "01",
    "00",
    "-1",
    "+1",
    "1.0",
    "1e3",
    " 1",
    "1 ",
    "\u0661",  # ARABIC-INDIC DIGIT ONE: a digit to int(), not to RFC 6901
    "",
    "3",  # the length, where an element is meant
    "4",  # past the end
]


def doc(core):
    return core.frozendict(a=(10, 11, 12), o=core.frozendict(k=(0,)))


def operations(token):
    """Operations where ``token`` names an element of /a (it must exist)."""
    return [
        {"op": "remove", "path": "/a/" + token},
        {"op": "replace", "path": "/a/" + token, "value": 0},
        {"op": "test", "path": "/a/" + token, "value": 10},
        {"op": "move", "from": "/a/" + token, "path": "/o/x"},
        {"op": "copy", "from": "/a/" + token, "path": "/o/x"},
        {"op": "add", "path": "/a/%s/x" % token, "value": 0},  # on the way
    ]


@pytest.mark.parametrize("token", BAD_INDEXES + ["-"], ids=lambda t: t[:12] + "..%d" % len(t))
def test_a_bad_index_is_a_json_patch_error(core, token):
    for op in operations(token):
        patch = [{"op": "test", "path": "/a/0", "value": 10}, op]
        with pytest.raises(JsonPatchError) as info:
            apply_json_patch(doc(core), patch)
        error = info.value
        assert error.index == 1
        assert error.pointer == op.get("from", op["path"])
        assert str(error).startswith("operation 1 (%s at " % op["op"])


@pytest.mark.parametrize("token", [t for t in BAD_INDEXES if t not in ("3",)])
def test_a_bad_index_to_insert_at_is_a_json_patch_error(core, token):
    # add may name the length (the end), not past it
    with pytest.raises(JsonPatchError) as info:
        apply_json_patch(doc(core), [{"op": "add", "path": "/a/" + token, "value": 0}])
    assert info.value.index == 0 and info.value.pointer == "/a/" + token


def test_an_index_of_4301_digits_says_what_is_wrong_briefly(core):
    pointer = "/a/" + DIGITS_4301
    with pytest.raises(JsonPatchError) as info:
        apply_json_patch(doc(core), [{"op": "remove", "path": pointer}])
    message = str(info.value)
    assert "array index 100000000000... (4301 digits) is out of range (length 3)" in message
    assert "(4304 characters)" in message  # the pointer, cut
    assert len(message) < 300
    assert info.value.pointer == pointer  # whole on the exception
    assert not isinstance(info.value.__cause__, ValueError)


def test_dash_names_the_end_only_to_insert(core):
    result = apply_json_patch(doc(core), [{"op": "add", "path": "/a/-", "value": 13}])
    assert result["a"] == (10, 11, 12, 13)
    with pytest.raises(JsonPatchError, match="'-' names no element") as info:
        apply_json_patch(doc(core), [{"op": "remove", "path": "/a/-"}])
    assert info.value.pointer == "/a/-"


def test_good_indexes_still_work(core):
    d = doc(core)
    assert apply_json_patch(d, [{"op": "add", "path": "/a/3", "value": 13}])["a"][3] == 13
    assert apply_json_patch(d, [{"op": "remove", "path": "/a/2"}])["a"] == (10, 11)
    assert apply_json_patch(d, [{"op": "test", "path": "/a/0", "value": 10}]) is d
    assert apply_json_patch(d, [{"op": "copy", "from": "/o/k/0", "path": "/a/0"}])["a"][0] == 0
