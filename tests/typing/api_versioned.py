"""Static typing checks for ``frozenmap.Versioned`` (see test_api.py for the rules).

Checked by mypy and pyright through ``scripts/checks/20-typing.sh``, and run
there as a plain script so every expression typed here also works at run time.
Kept apart from test_api.py so each capability above the cores has its own file.
"""

from __future__ import annotations

import sys
from typing import Any

from frozenmap import Versioned, frozendict
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


@config.override({"retries": 0})
def decorated(n: int) -> int:
    return n


def on_change(old: frozendict[str, int], new: frozendict[str, int], diff: Any) -> None:
    pass


subscription = config.subscribe(on_change)
assert_type(subscription, Subscription)
assert_type(subscription.active, bool)
with subscription:
    pass
assert_type(Versioned(0).get(), int)


def expected_errors() -> None:
    config.set("text")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    config.update(lambda c: 1)  # type: ignore[arg-type, return-value]  # pyright: ignore[reportArgumentType]
    config.version = 3  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]


if __name__ == "__main__":
    print("typing/api_versioned.py ran")
