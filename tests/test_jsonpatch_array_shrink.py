"""``make_json_patch`` shortens an array from its end: each ``remove`` names
an index that still exists when it is applied, so the patch applies and
gives the target.  (Removing from the first index past the common part up
shifts the later elements down and runs off the end: mutant
``jp-make-removes-from-front``, caught only now and then by the round-trip
property test.)
"""

from frozenmap import apply_json_patch, make_json_patch


def test_a_shortened_array_is_removed_from_its_end(core):
    fd = core.frozendict
    a = fd(x=(1, 2, 3, 4), y=fd(z=(5, 6, 7)))
    b = fd(x=(1,), y=fd(z=(5,)))
    patch = make_json_patch(a, b)
    removes = [op["path"] for op in patch if op["op"] == "remove"]
    assert sorted(removes) == ["/x/1", "/x/2", "/x/3", "/y/z/1", "/y/z/2"]
    assert removes.index("/x/3") < removes.index("/x/2") < removes.index("/x/1")
    assert removes.index("/y/z/2") < removes.index("/y/z/1")
    assert apply_json_patch(a, patch) == b
