"""The docs name ``FLAT_MAX`` where they state the flat threshold, and every
number they give for it is the constant's.

The threshold is one constant in each core (``flat.FLAT_MAX`` in the pure core,
``FLAT_MAX`` in ``cfrozenmap.h``, exported as ``_cfrozenmap._layout``), held
equal by ``test_layout_constants.py``.  The prose of the docs, the README and
CONTRIBUTING writes it as "at most ``FLAT_MAX`` (32) keys", "key ``FLAT_MAX`` +
1 (33)" or "``FLAT_MAX`` is 32"; here each such number is read back and
compared, and a bound on keys written with the bare number ("at most 32 keys")
is refused, so that changing the constant fails here until the prose follows.
The CHANGELOG is left out: its entries say what was true when they were made.
"""

import re
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest
from conftest import available_cores

from frozenmap._pycore import flat

ROOT = Path(__file__).resolve().parent.parent

#: "FLAT_MAX (32)", "FLAT_MAX = 32", "FLAT_MAX is 32" (backticks optional).
_VALUE = re.compile(r"\bFLAT_MAX`?\s*(?:=|is\b|\()\s*(\d+)")
#: "FLAT_MAX + 1 (33)", "FLAT_MAX + 1 (the 33rd)", "FLAT_MAX + 1 = 33".
_NEXT = re.compile(r"\bFLAT_MAX`?\s*\+\s*1`?\s*(?:=|is\b|\()\s*(?:the\s+)?(\d+)(?:st|nd|rd|th)?")
#: A bound on keys written with a bare number: "at most 32 keys", "<= 32 keys".
_BARE_BOUND = re.compile(r"(?:at most|up to|≤|<=)\s*(\d+)\s+keys\b")


def _pages() -> List[Path]:
    docs = ROOT / "docs"
    if not docs.is_dir():
        pytest.skip("the tests are not in a checkout of frozenmap: no docs beside them")
    pages = sorted(p for p in docs.rglob("*.md") if "_build" not in p.parts)
    return pages + [p for p in (ROOT / "README.md", ROOT / "CONTRIBUTING.md") if p.is_file()]


def stated_values(text: str) -> Iterator[Tuple[int, str, int, int]]:
    """``(line, what, stated, expected)`` for each number the text gives for
    the threshold, and for each bare bound equal to it (expected: the name)."""
    for number, line in enumerate(text.splitlines(), 1):
        for match in _VALUE.finditer(line):
            yield number, "FLAT_MAX", int(match.group(1)), flat.FLAT_MAX
        for match in _NEXT.finditer(line):
            yield number, "FLAT_MAX + 1", int(match.group(1)), flat.FLAT_MAX + 1
        for match in _BARE_BOUND.finditer(line):
            if int(match.group(1)) == flat.FLAT_MAX:
                yield number, "a bare bound (write `FLAT_MAX` (N))", int(match.group(1)), -1


def test_every_number_the_docs_give_for_flat_max_is_the_constant():
    wrong, stated = [], 0
    for page in _pages():
        for line, what, value, expected in stated_values(page.read_text(encoding="utf-8")):
            stated += 1
            if value != expected:
                rel = page.relative_to(ROOT)
                wrong.append("%s:%d: %s stated as %d" % (rel, line, what, value))
    assert not wrong, "FLAT_MAX is %d; the docs say otherwise:\n%s" % (
        flat.FLAT_MAX,
        "\n".join(wrong),
    )
    # The docs do state it (the flat form is described): a check that reads
    # nothing would pass whatever the prose says.
    assert stated >= 5, "only %d statements of FLAT_MAX found in the docs" % stated


def test_the_c_cores_flat_max_is_the_one_the_docs_are_checked_against():
    if "c" not in {core.name for core in available_cores()}:
        pytest.skip("the C core does not import here")
    from frozenmap._ccore import _cfrozenmap

    assert _cfrozenmap._layout["flat_max"] == flat.FLAT_MAX


@pytest.mark.parametrize(
    "line, found",
    [
        ("a version of at most `FLAT_MAX` (16) keys", [("FLAT_MAX", 16)]),
        ("small maps (≤ FLAT_MAX = 8 keys)", [("FLAT_MAX", 8)]),
        ("Why `FLAT_MAX` is 40 and not more", [("FLAT_MAX", 40)]),
        ("the set that makes key `FLAT_MAX` + 1 (the 17th)", [("FLAT_MAX + 1", 17)]),
        ("the key FLAT_MAX + 1 = 9", [("FLAT_MAX + 1", 9)]),
        ("at most `FLAT_MAX` keys, then `FLAT_SCAN_MAX` + 1 = 9", []),
        ("Leaves hold up to 8 items", []),
    ],
)
def test_the_statements_are_read(line, found):
    assert [(what, value) for _, what, value, _ in stated_values(line)] == found


def test_a_bare_bound_equal_to_flat_max_is_refused():
    line = "a version of at most %d keys has no tries" % flat.FLAT_MAX
    assert [expected for _, _, _, expected in stated_values(line)] == [-1]
    assert list(stated_values("a map of at most %d keys" % (flat.FLAT_MAX + 7))) == []
