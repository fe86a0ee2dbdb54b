"""Static typing checks for nested state and deep diffs (the guide's "Typing
nested state"; checked by mypy and pyright like test_api.py; it also runs as a
plain script)."""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

from frozenmap import Diff, freeze, frozendict

if sys.version_info >= (3, 11):
    from typing import assert_type
else:
    from typing_extensions import assert_type

# -- a map of maps: every level typed -------------------------------------------------

Scores = frozendict[str, frozendict[str, int]]
scores: Scores = frozendict(ada=frozendict(chess=3), bob=frozendict(go=1))
assert_type(scores["ada"]["chess"], int)
assert_type(scores.set("ada", scores["ada"].set("go", 2)), Scores)


def record(scores: Scores, player: str, game: str, points: int) -> Scores:
    games = scores.get(player, frozendict())
    return scores.set(player, games.set(game, points))


assert_type(record(scores, "ada", "go", 2), Scores)
assert_type(scores.get_in(["ada", "chess"]), Any)  # a path's keys are not typed
assert_type(scores.set_in(["ada", "go"], 2), frozendict[str, Any])
annotated: Scores = scores.set_in(["ada", "go"], 2)  # where the shape is known
assert_type(annotated["ada"]["go"], int)

# -- diffs: shallow (old, new) pairs, deep ones with nested Diffs ----------------------

new_scores = scores.set("ada", scores["ada"].set("chess", 4))
shallow = scores.diff(new_scores)
assert_type(shallow, Diff[str, frozendict[str, int]])
assert_type(shallow.changed["ada"], tuple[frozendict[str, int], frozendict[str, int]])

# A deep diff's third parameter: what ``changed`` maps a key to.
DeepScoresDiff = Diff[
    str,
    frozendict[str, int],
    "tuple[frozendict[str, int], frozendict[str, int]] | Diff[Any, Any, Any]",
]
deep = scores.diff(new_scores, deep=True)
assert_type(deep, DeepScoresDiff)
change = deep.changed["ada"]
if isinstance(change, Diff):
    assert_type(change, Diff[Any, Any, Any])
    assert change.changed["chess"] == (3, 4)
else:
    raise AssertionError("a change between two frozendicts is a nested Diff")
assert_type(deep.invert(), DeepScoresDiff)


def changed_pairs(diff: Diff[str, int]) -> list[tuple[int, int]]:
    return list(diff.changed.values())


assert changed_pairs(frozendict(a=1).diff(frozendict(a=2))) == [(1, 2)]

# -- fixed shapes: typed fields where the keys are known --------------------------------


class Settings(NamedTuple):
    host: str
    port: int
    limits: frozendict[str, int]


settings = Settings("localhost", 80, frozendict(rps=10))
assert_type(settings.limits["rps"], int)
assert_type(settings._replace(port=443), Settings)

# A mix of value types in one map: the value type is their union (or object), and
# reading it back needs narrowing; freeze() of JSON-like data is typed Any.
server: frozendict[str, str | int] = frozendict(host="h", port=80)
port = server["port"]
assert isinstance(port, int)
assert_type(port, int)
assert_type(freeze({"a": [1]}), Any)


def rejected() -> tuple[Any, ...]:
    scores.set("ada", 3)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    # a deep change may be a nested Diff: narrow it before unpacking (old, new)
    old, new = deep.changed["ada"]  # type: ignore[misc]  # pyright: ignore[reportAssignmentType]
    server["port"].bit_length()  # type: ignore[union-attr]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
    return old, new


if __name__ == "__main__":
    print("typing/api_nested_state.py ran")
