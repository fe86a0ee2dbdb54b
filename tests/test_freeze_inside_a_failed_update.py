"""A ``freeze()`` taken inside an ``Evolver.update`` that then fails is not
kept: the next ``freeze()`` shows the restored contents.

``test_rules.py`` checks this with an update that adds a key, so the kept
version's length differs from the restored evolver's and a length check
discards it anyway (mutant ``freeze-inside-edit-kept`` survived it).
Here the update replaces values only: the kept version would have the
evolver's length.
"""

import pytest
from keys import CrashError


def test_freeze_from_inside_a_failed_update_that_replaces_is_not_kept(core):
    e = core.frozendict(a=1, b=2).evolve()
    e["b"] = 3  # no freeze() cached now
    seen = []

    def pairs():
        yield ("a", 9)
        seen.append(e.freeze())  # from inside the update: whatever it shows
        raise CrashError("the pairs ran out")

    with pytest.raises(CrashError):
        e.update(pairs())
    assert e["a"] == 1
    assert e.freeze() == {"a": 1, "b": 3}
    assert list(e.freeze().items()) == [("a", 1), ("b", 3)]
    assert len(seen) == 1
