"""The product speaks of the product: no tracked file refers to the work that
made it instead of to what it is.

Every file of the checkout (``git ls-files``, else a walk of the source tree)
is read for references that mean nothing to a reader of the product: a work
session, an issue or a stop of this project by number, a bare ``#N`` issue
reference, and the house-style file or the shared folder of the people who
wrote it, which are not in this repository.  A reference to another project's
tracker (``python/cpython#131173``) is a citation and allowed.  The failure
lists every offending ``file:line``.

The tests run against the installed package, so the checkout is found from
this file's place (``tests/`` in it); outside a checkout the test is skipped.
"""

import os
import re
import subprocess
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
THIS = Path(__file__).resolve()

#: (what it is, the pattern); case-insensitive.
_I = re.IGNORECASE
FORBIDDEN: List[Tuple[str, "re.Pattern[str]"]] = [
    ("a session number", re.compile(r"\bsessions?\s+#?\d", _I)),
    (
        "a session by its ordinal",
        re.compile(
            r"\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)\s+session\b", _I
        ),
    ),
    ("an issue number", re.compile(r"\bissues?\s+#?\d", _I)),
    ("a stop number", re.compile(r"\bstops?\s+#?\d", _I)),
    (
        "a bare #N issue reference",
        re.compile(r"(?:\(|\bsee\s+|\bfix(?:es|ed)?\s+|\bcloses?\s+|\bPR\s+)#\d+\b", _I),
    ),
    ("the house-style file", re.compile(r"\bSTYLE\.md\b", _I)),
    ("the shared folder", re.compile(r"(?:\.\./|/work/)?\bshared/", _I)),
]

#: What a walk of the tree (no git) leaves out: builds, environments, caches.
_NOT_SOURCE = {".git", ".venv", "build", "dist", "__pycache__", ".hypothesis", "_build"}


def _checkout() -> Optional[Path]:
    """The repository root, or None when these tests do not sit in a checkout."""
    if (ROOT / "pyproject.toml").is_file() and (ROOT / "frozenmap").is_dir():
        return ROOT
    return None


def _tracked_files(root: Path) -> List[str]:
    """Paths relative to ``root``: git's tracked files, else every file of the
    source tree."""
    if (root / ".git").exists():
        try:
            out = subprocess.run(
                ["git", "ls-files", "-z"],
                cwd=root,
                capture_output=True,
                check=True,
            ).stdout
        except (OSError, subprocess.CalledProcessError):
            pass
        else:
            return [name for name in out.decode().split("\0") if name]
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _NOT_SOURCE and not d.endswith(".egg-info")]
        for name in files:
            found.append(os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/"))
    return found


def offences(root: Path, paths: List[str]) -> Iterator[str]:
    """``file:line: what: the line`` for each forbidden reference in ``paths``
    (text files only; this file, which names the patterns, is left out)."""
    for rel in paths:
        path = root / rel
        if path.resolve() == THIS or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue  # binary (a chart, a compiled file)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for what, pattern in FORBIDDEN:
                if pattern.search(line):
                    yield "%s:%d: %s: %s" % (rel, number, what, line.strip()[:120])


def test_no_file_speaks_of_sessions_issues_or_the_house_style() -> None:
    root = _checkout()
    if root is None:
        pytest.skip("the tests are not in a checkout of frozenmap: no tree to read")
    paths = _tracked_files(root)
    assert any(p.startswith("frozenmap/_ccore/") for p in paths), "the tree was not read"
    found = list(offences(root, paths))
    assert not found, "%d reference(s) to the work instead of the product:\n%s" % (
        len(found),
        "\n".join(found),
    )


@pytest.mark.parametrize(
    "line",
    [
        "measured in session 7 of the work",
        "as the seventh session found",
        "(issue 23, goal 2)",
        "see issue #35",
        "landed at stop 28",
        "fixed in (#35)",
        "the house style (STYLE.md 18)",
        "read ../shared/notes",
    ],
)
def test_each_pattern_catches_what_it_is_for(line: str) -> None:
    assert any(pattern.search(line) for _, pattern in FORBIDDEN), line


@pytest.mark.parametrize(
    "line",
    [
        "dictionary update sequence element #1 has length 3; 2 is required",
        "op #2 fd | version",
        "(a frame object made for the traceback: python/cpython#131173)",
        "@pytest.fixture(scope='session')",
        "fd.slice(start, stop)",
        "shared by the two tries",
        "Issues = 'https://github.com/frozenmap/frozenmap/issues'",
    ],
)
def test_ordinary_text_passes(line: str) -> None:
    assert not any(pattern.search(line) for _, pattern in FORBIDDEN), line
