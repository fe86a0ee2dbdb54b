"""Static typing checks for ``frozenmap.Versioned`` (see test_api.py for the rules).

Checked by mypy and pyright through ``scripts/checks/20-typing.sh``, and run
there as a plain script so every expression typed here also works at run time.
Kept apart from test_api.py so each capability above the cores has its own file.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any

from frozenmap import Diff, Versioned, frozendict
from frozenmap.versioned import Override, Subscription

if sys.version_info >= (3, 11):
    from typing import assert_type
else:
    from typing_extensions import assert_type

config = Versioned(frozendict(timeout=30, retries=3))
assert_type(config, Versioned[frozendict[str, int]])
assert_type(config.get(), frozendict[str, int])
assert_type(config.version, int)
assert_type(config.set(frozendict(timeout=1, retries=1)), frozendict[str, int])
assert_type(config.update(lambda c: c.set("retries", c["retries"] + 1)), frozendict[str, int])
assert_type(config.update(lambda n: n, at=["timeout"]), frozendict[str, int])

override = config.override({"timeout": 2})
assert_type(override, Override[frozendict[str, int]])
with override as seen:
    assert_type(seen, frozendict[str, int])
with config.override(lambda c: c.set("timeout", c["timeout"] + 1)):
    pass
nested = Versioned(frozendict(db=frozendict(pool=10)))
with nested.override({"pool": 1}, at=["db"]), nested.override(lambda n: n, at=["db", "pool"]):
    assert_type(nested.get(), frozendict[str, frozendict[str, int]])


# The decorator keeps the decorated function's signature (a ParamSpec).
@config.override({"retries": 0})
def decorated(n: int, *, label: str = "") -> int:
    return n + config.get()["retries"]


assert_type(decorated(1, label="x"), int)
assert decorated(1) == 1


@config.override({"timeout": 1})
async def fetch(path: str) -> bytes:
    return b"%d" % config.get()["timeout"]


pending: Coroutine[Any, Any, bytes] = fetch("/")
assert asyncio.run(pending) == b"1"


# A subscriber's diff is typed from the value held: None only when no diff
# could be computed (a value's __eq__ raised).
def on_change(
    old: frozendict[str, int], new: frozendict[str, int], diff: Diff[str, int] | None
) -> None:
    pass


subscription = config.subscribe(on_change)
assert_type(subscription, Subscription)
changes_seen: list[frozendict[str, tuple[int, int]]] = []
config.subscribe(lambda old, new, diff: changes_seen.append(diff.changed) if diff else None)
assert_type(Versioned(0).subscribe(lambda old, new, diff: None), Subscription)
assert_type(subscription.active, bool)
with subscription:
    pass
assert_type(Versioned(0).get(), int)


def not_optional(
    old: frozendict[str, int], new: frozendict[str, int], diff: Diff[str, int]
) -> None:
    pass


def of_str(
    old: frozendict[str, str], new: frozendict[str, str], diff: Diff[str, str] | None
) -> None:
    pass


def expected_errors() -> None:
    decorated("1")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    decorated(1, colour="red")  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    fetch(b"/")  # type: ignore[arg-type, unused-coroutine]  # pyright: ignore[reportArgumentType, reportUnusedCoroutine]
    config.subscribe(not_optional)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
    config.subscribe(of_str)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
    config.set("text")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    config.update(lambda c: 1)  # type: ignore[arg-type, return-value]  # pyright: ignore[reportArgumentType]
    config.version = 3  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]


if __name__ == "__main__":
    print("typing/api_versioned.py ran")
