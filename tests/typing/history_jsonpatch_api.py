"""Static typing checks for ``History`` and JSON Patch (checked by mypy and
pyright like test_api.py; it also runs as a plain script)."""

from __future__ import annotations

import sys
from typing import Any

from frozenmap import Diff, History, JsonPatchError, apply_json_patch, frozendict, make_json_patch

if sys.version_info >= (3, 11):
    from typing import assert_type
else:
    from typing_extensions import assert_type

h = History(frozendict(a=1), limit=10)
assert_type(h, History[frozendict[str, int]])
assert_type(h.present, frozendict[str, int])
h.commit(h.present.set("a", 2))
assert_type(h.undo(), frozendict[str, int])
assert_type(h.redo(1), frozendict[str, int])
assert_type(h.past, tuple[frozendict[str, int], ...])
assert_type(h.future, tuple[frozendict[str, int], ...])
assert_type(h.can_undo, bool)
assert_type(h.limit, "int | None")
assert_type(len(h), int)
assert_type(list(h), list[frozendict[str, int]])

patch = make_json_patch(h.past[0], h.present)
assert_type(patch, list[dict[str, Any]])
assert_type(apply_json_patch(h.past[0], patch), Any)
assert_type(h.past[0].diff(h.present).to_json_patch(), list[dict[str, Any]])
d: Diff[str, int] = h.past[0].diff(h.present)
error = JsonPatchError("bad", 0, "/a")
assert_type(error.index, "int | None")
assert isinstance(error, ValueError)


def rejected() -> None:
    History(0, 10)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    h.commit("not a frozendict")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
