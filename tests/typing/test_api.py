"""Static typing checks for frozenmap's public API.

Checked by mypy (``warn_unused_ignores``) and pyright (``reportUnnecessaryTypeIgnoreComment``)
through ``scripts/checks/20-typing.sh``; not collected by pytest (see conftest.py).
Each ``assert_type`` states the type both checkers must infer.  Lines that must be
rejected carry an ignore comment for each checker, so a checker that stops
rejecting them reports the ignore as unused.

The module also runs as a plain script (the check does so), which proves that every
expression typed here also works at run time; the expected errors sit in functions
that are never called.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import ItemsView, Iterator, KeysView, Mapping, MutableMapping, ValuesView
from typing import Any, Literal

from frozenmap import IMPLEMENTATION, Diff, Evolver, frozendict

if sys.version_info >= (3, 11):
    from typing import assert_type
else:
    from typing_extensions import assert_type

# -- construction ------------------------------------------------------------------

fd = frozendict(a=1, b=2)
assert_type(fd, frozendict[str, int])
assert_type(frozendict({"a": 1}), frozendict[str, int])
assert_type(frozendict({1: "x"}), frozendict[int, str])
pairs: list[tuple[str, float]] = [("a", 1.0)]
assert_type(frozendict(pairs), frozendict[str, float])
assert_type(frozendict({"a": 1}, b=2), frozendict[str, int])
assert_type(frozendict([("a", 1)], b=2), frozendict[str, int])
assert_type(frozendict(fd), frozendict[str, int])
empty: frozendict[str, int] = frozendict()
assert_type(empty, frozendict[str, int])
assert_type(frozendict.fromkeys("ab"), frozendict[str, Any | None])
assert_type(frozendict.fromkeys(range(3), 0), frozendict[int, int])
assert_type(fd.fromkeys(["x"], "v"), frozendict[str, str])

# -- PEP 814 read API -----------------------------------------------------------------

assert_type(fd["a"], int)
assert_type(fd.get("a"), int | None)
assert_type(fd.get("a", 0), int)
assert_type(fd.get("a", "none"), int | str)
assert_type("a" in fd, bool)
assert_type(len(fd), int)
assert_type(bool(fd), bool)
assert_type(iter(fd), Iterator[str])
assert_type(list(reversed(fd)), list[str])
assert_type(fd.keys(), KeysView[str])
assert_type(fd.values(), ValuesView[int])
assert_type(fd.items(), ItemsView[str, int])
assert_type(fd.keys() & {"a", "z"}, set[str])
assert_type(fd.copy(), frozendict[str, int])
assert_type(copy.copy(fd), frozendict[str, int])
assert_type(copy.deepcopy(fd), frozendict[str, int])
assert_type(hash(fd), int)
assert_type(fd == {"a": 1, "b": 2}, bool)
assert_type(repr(fd), str)

as_mapping: Mapping[str, int] = fd
as_object_values: frozendict[str, object] = fd  # covariant in the value


def widen(m: frozendict[str, object]) -> frozendict[str, object]:
    return m.set("name", "text")  # the static view of the value type is object


assert_type(widen(fd), frozendict[str, object])

# -- union ------------------------------------------------------------------------------

assert_type(fd | {"c": 3}, frozendict[str, int])
assert_type(fd | frozendict(c=3), frozendict[str, int])
assert_type(fd | {1: "x"}, frozendict[str | int, int | str])
assert_type({"c": 3} | fd, dict[str, int])
merged = fd
merged |= {"c": 3}
assert_type(merged, frozendict[str, int])

# -- derivations --------------------------------------------------------------------------

assert_type(fd.set("c", 3), frozendict[str, int])
assert_type(fd.delete("a"), frozendict[str, int])
assert_type(fd.discard("zzz"), frozendict[str, int])
assert_type(fd - ["a"], frozendict[str, int])
assert_type(fd - {"a", "b"}, frozendict[str, int])
assert_type(fd & ("a",), frozendict[str, int])
assert_type(fd & fd.keys(), frozendict[str, int])

# -- positions --------------------------------------------------------------------------

assert_type(fd.key_at(0), str)
assert_type(fd.value_at(-1), int)
assert_type(fd.item_at(0), tuple[str, int])
assert_type(fd.index("a"), int)
assert_type(fd.slice(0, 1), frozendict[str, int])
assert_type(fd.slice(), frozendict[str, int])

# -- the evolver ------------------------------------------------------------------------

ev = fd.evolve()
assert_type(ev, Evolver[str, int])
as_mutable: MutableMapping[str, int] = ev
ev["c"] = 3
assert_type(ev.set("d", 4).discard("zzz"), Evolver[str, int])
del ev["a"]
assert_type(ev.pop("b"), int)
assert_type(ev.pop("zzz", None), int | None)
assert_type(ev.setdefault("e", 5), int)
ev.update({"f": 6})
ev.update(g=7)
assert_type(ev.popitem(), tuple[str, int])
assert_type(ev.key_at(-1), str)
assert_type(ev.item_at(0), tuple[str, int])
assert_type(ev.index(ev.key_at(0)), int)
assert_type(ev.slice(None, 2), frozendict[str, int])
assert_type(ev.get("c"), int | None)
assert_type(len(ev), int)
assert_type(list(reversed(ev)), list[str])
assert_type(ev.copy(), Evolver[str, int])
assert_type(ev.freeze(), frozendict[str, int])
ev.clear()
assert_type(Evolver(fd), Evolver[str, int])
assert_type(Evolver(pairs), Evolver[str, float])
fresh: Evolver[str, int] = Evolver()
assert_type(fresh, Evolver[str, int])

# -- diff ---------------------------------------------------------------------------------

changes = fd.diff(fd.set("a", 10).delete("b").set("z", 0))
assert_type(changes, Diff[str, int])
assert_type(changes.added, frozendict[str, int])
assert_type(changes.removed, frozendict[str, int])
assert_type(changes.changed, frozendict[str, tuple[int, int]])
added, removed, changed = changes
assert_type(added, frozendict[str, int])
assert_type(changed, frozendict[str, tuple[int, int]])
assert_type(fd.diff({"a": "text"}), Diff[str, int | str])

# -- subclasses -----------------------------------------------------------------------------


class Settings(frozendict[str, int]):
    pass


settings = Settings(a=1)
assert_type(settings, Settings)
assert_type(settings["a"], int)
assert_type(settings.set("b", 2), frozendict[str, int])  # derivations return exact frozendicts
assert_type(settings.copy(), frozendict[str, int])
assert_type(settings | {"b": 2}, frozendict[str, int])

# ``case frozendict(x)`` binds the subject itself.  (mypy forgets the type
# arguments of a generic class pattern, so only the subclass is asserted.)
match settings:
    case Settings(whole_settings):
        assert_type(whole_settings, Settings)
    case _:
        pass

# -- module attributes --------------------------------------------------------------------

assert_type(IMPLEMENTATION, Literal["c", "python"])


# -- what must be rejected -------------------------------------------------------------------


def expected_errors() -> None:
    fd["a"] = 1  # type: ignore[index]  # pyright: ignore[reportIndexIssue]
    del fd["a"]  # type: ignore[attr-defined]  # pyright: ignore[reportIndexIssue]
    fd.update({"c": 3})  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
    fd.pop("a")  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
    fd | [("c", 3)]  # type: ignore[operator]  # pyright: ignore[reportOperatorIssue, reportUnusedExpression]
    fd | None  # type: ignore[operator]  # pyright: ignore[reportOperatorIssue, reportUnusedExpression]
    fd - 1  # type: ignore[operator]  # pyright: ignore[reportOperatorIssue, reportUnusedExpression]
    fd & 1  # type: ignore[operator]  # pyright: ignore[reportOperatorIssue, reportUnusedExpression]
    fd.set(1, 2)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    fd.set("c", "text")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    fd.delete(1)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    ev["c"] = "text"  # type: ignore[assignment]  # pyright: ignore[reportArgumentType]
    frozendict(1)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]
    fd < fd  # type: ignore[operator]  # pyright: ignore[reportOperatorIssue, reportUnusedExpression]
    bad_impl: Literal["c"] = IMPLEMENTATION  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]
    wrong: frozendict[str, str] = fd  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]
    print(bad_impl, wrong)


if __name__ == "__main__":
    print("typing/test_api.py ran with the %s core" % IMPLEMENTATION)
