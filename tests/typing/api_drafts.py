"""Static typing checks for the drafts (``produce`` and its helpers; see
test_api.py for the rules).

Checked by mypy and pyright through ``scripts/checks/20-typing.sh``, and run
there as a plain script so every expression typed here also works at run time.
"""

from __future__ import annotations

import sys
from collections.abc import MutableMapping, MutableSequence
from typing import Any

from frozenmap import current, frozendict, is_draft, original, produce, produce_with_patches
from frozenmap.drafts import DictDraft, ListDraft

if sys.version_info >= (3, 11):
    from typing import assert_type
else:
    from typing_extensions import assert_type

state = frozendict(count=1, name=2)


def bump(draft: DictDraft[str, Any]) -> None:
    draft["count"] += 1
    assert_type(original(draft), frozendict[str, Any])
    assert_type(current(draft), frozendict[str, Any])


def as_mapping(draft: MutableMapping[str, Any]) -> None:  # a DictDraft is one
    draft["name"] = 3


def as_sequence(draft: MutableSequence[Any]) -> None:  # a ListDraft is one
    draft.append(4)


assert_type(produce(state, bump), frozendict[str, int])
assert_type(produce(state, as_mapping), frozendict[str, int])
assert_type(produce(state, lambda d: d.clear()), frozendict[str, int])


def make_pair() -> tuple[int, int]:
    return (1, 2)


pair = make_pair()
assert_type(produce(pair, as_sequence), tuple[int, int])
assert_type(produce(pair, lambda items: items.sort()), tuple[int, int])

new, patches, inverse = produce_with_patches(state, bump)
assert_type(new, frozendict[str, int])
assert_type(patches, list[dict[str, Any]])
assert_type(inverse, list[dict[str, Any]])
assert_type(produce_with_patches(pair, as_sequence)[0], tuple[int, int])


def check(value: object) -> None:
    if is_draft(value):
        assert_type(value, DictDraft[Any, Any] | ListDraft[Any])


def edits_items(items: ListDraft[int]) -> None:
    items[0:1] = [5]
    assert_type(items[0], int)
    assert_type(items[:], list[int])
    assert_type(current(items), tuple[Any, ...])


produce(state, lambda d: check(d))
produce(pair, edits_items)


def rejected() -> None:  # never called: each line is a type error
    produce(state, 5)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue,reportArgumentType]


if __name__ == "__main__":
    print("typing/api_drafts.py ran")
