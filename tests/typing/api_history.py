"""Static typing checks for ``History``'s random access (checked by mypy and
pyright like test_api.py; it also runs as a plain script)."""

from __future__ import annotations

import sys

from frozenmap import History, frozendict

if sys.version_info >= (3, 11):
    from typing import assert_type
else:
    from typing_extensions import assert_type


class Position:
    """An integer by ``__index__``, as ``h[i]`` and ``goto`` accept."""

    def __index__(self) -> int:
        return 1


h = History(frozendict(count=0))
for n in (1, 2, 3):
    h.commit(h.present.set("count", n))
assert_type(h[0], frozendict[str, int])
assert_type(h[-1], frozendict[str, int])
assert_type(h[Position()], frozendict[str, int])
assert_type(h[1:], tuple[frozendict[str, int], ...])
assert_type(h.index, int)
assert_type(h.goto(1), frozendict[str, int])
assert_type(h.goto(Position()), frozendict[str, int])
assert h.index == 1 and h[h.index] is h.present


def rejected() -> None:
    h["latest"]  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]
    h.goto(1.5)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    h.index = 2  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]


if __name__ == "__main__":
    print("typing/api_history.py ran")
