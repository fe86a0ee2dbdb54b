"""JSON Patch ``test`` compares whole objects (RFC 6902 section 4.6): two
objects are equal only when they have the same members, so an expected
object that holds some of the document's members, or a document object that
holds some of the expected members, fails the test.  (A check of the members
of one side only, in either direction, is the plausible slip.)
"""

import pytest

from frozenmap import JsonPatchError, apply_json_patch
from frozenmap.jsonpatch import json_equal


@pytest.mark.parametrize(
    "actual, expected",
    [
        ({"a": 1, "b": 2}, {"a": 1}),  # the expected object misses a member
        ({"a": 1}, {"a": 1, "b": 2}),  # the document's object misses one
        ({"a": {"x": 1, "y": 2}}, {"a": {"x": 1}}),  # nested
    ],
)
def test_test_of_an_object_with_other_members_fails(core, actual, expected):
    fd = core.frozendict
    doc = fd(v=fd((k, fd(v) if isinstance(v, dict) else v) for k, v in actual.items()))
    with pytest.raises(JsonPatchError) as info:
        apply_json_patch(doc, [{"op": "test", "path": "/v", "value": expected}])
    assert info.value.index == 0 and info.value.pointer == "/v"
    assert not json_equal(doc["v"], expected) and not json_equal(expected, doc["v"])


def test_test_of_the_same_members_passes(core):
    fd = core.frozendict
    doc = fd(v=fd(a=1, b=fd(c=[1])))
    patch = [{"op": "test", "path": "/v", "value": {"b": {"c": [1.0]}, "a": 1}}]
    assert apply_json_patch(doc, patch) is doc
