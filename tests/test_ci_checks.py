"""scripts/checks: each check has its own number, which gives the order
scripts/test.sh runs it in (0x: static checks, before pytest)."""

import os
import re

import pytest

CHECKS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "checks"
)


def _checks():
    if not os.path.isdir(CHECKS):
        pytest.skip("scripts/checks not found (tests run outside the source tree)")
    return sorted(name for name in os.listdir(CHECKS) if name.endswith(".sh"))


def test_every_check_is_named_by_a_unique_number_and_a_name():
    names = _checks()
    assert names
    for name in names:
        assert re.fullmatch(r"[0-9]{2}-[a-z0-9-]+\.sh", name), name
    numbers = [name[:2] for name in names]
    assert len(set(numbers)) == len(numbers), names
    bare = [name[3:] for name in names]
    assert len(set(bare)) == len(bare), "test.sh --only NAME would be ambiguous: %s" % names


def test_lint_runs_before_typing_and_typing_before_the_other_pythons():
    order = [name[3:-3] for name in _checks()]
    assert order.index("lint") < order.index("typing") < order.index("versions")
