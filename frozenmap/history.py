"""An undo/redo history of versions that pickles as one version and its diffs.

``History`` keeps a line of versions with one of them the *present*: ``commit``
adds a version after the present (forgetting the versions that were undone),
``undo`` and ``redo`` move along the line.  The versions are usually
frozendicts derived from one another, which share all but O(log n) nodes, so
keeping a version costs what it changed.

Persistence keeps that sharing.  A History pickles (and deep-copies) as its
first version in full and each later version as the deep diff from the one
before it (the structural diff of ``frozendict.diff``, so O(d log n) for d
changes, with a nested change stored as the diff of the nested map); loading
applies the diffs in turn, so the loaded versions share structure as the
originals did.  A step between values that are not two frozendicts of the
same type, or whose key order a diff would not reproduce, is stored in full.

This module is built on frozenmap's public API only and serves both cores.
"""

from __future__ import annotations

import operator
import threading
from itertools import islice
from typing import (
    Any,
    Generic,
    Iterator,
    List,
    Optional,
    SupportsIndex,
    Tuple,
    TypeVar,
    overload,
)

from . import _registry
from ._shortrepr import short_repr
from ._typeinfo import type_lookup, type_name

__all__ = ["History"]

_T = TypeVar("_T")

# How a step is stored (the first item of its tuple).  The one-edit kinds are
# the common case (an edit of one key, maybe deep inside nested maps): one small
# tuple each, cheap to unpickle and applied with one ``set`` or ``delete``.
_SAME = 0  # (_SAME,): the previous version again
_PLAIN = 1  # (_PLAIN, version): the version itself
_SET = 2  # (_SET, key, value)
_NESTED = 3  # (_NESTED, key, step): a step of the frozendict at key
_DELETE = 4  # (_DELETE, key)
_EDITS = 5  # (_EDITS, removed keys, {key: new value}, {key: nested step})

Step = Tuple[Any, ...]


def _diffable(old: Any, new: Any) -> bool:
    """Whether ``new`` can be stored as the diff from ``old``: two frozendicts
    of the very same frozenmap type (a subclass would come back as its base)."""
    return type(old) is type(new) and type(new) in _registry.own_types


def _in_diff_order(old: Any, new: Any, removed: Any, added: Any) -> bool:
    """Whether ``new``'s keys are in the order applying the diff leaves them:
    ``old``'s keys but the ``removed`` ones, in ``old``'s order, then the
    ``added`` keys in their order -- by identity (a diff cannot carry a move,
    and versions built apart with equal keys are stored whole).  No key is
    hashed or compared.  Cost: O(n), the walks in C."""
    kept = len(new) - len(added)
    if kept != len(old) - len(removed):
        return False
    if removed:
        gone = {id(key) for key in removed}  # (old's key objects: no hashing)
        old_keys: Any = (key for key in old if id(key) not in gone)
    else:
        old_keys = iter(old)
    new_keys = iter(new)
    if not all(map(operator.is_, old_keys, islice(new_keys, kept))):
        return False
    return all(map(operator.is_, added, new_keys))


def _encode(old: Any, new: Any) -> Optional[Step]:
    """The diff step from frozendict ``old`` to ``new``, or None when applying
    it would not give back ``new``'s key order (store ``new`` in full)."""
    diff = old.diff(new)
    removed, changed, added = diff.removed, diff.changed, diff.added
    if not (removed or changed or added):
        # Equal but not the same object: only the key order can differ.
        return (_SAME,) if list(old) == list(new) else None
    if len(removed) + len(changed) + len(added) >= len(new):
        return None  # as large as the version itself
    if not _in_diff_order(old, new, removed, added):
        return None
    sets = {}
    nested = {}
    for key, (before, after) in changed.items():
        sub = _encode(before, after) if _diffable(before, after) else None
        if sub is None:
            sets[key] = after
        else:
            nested[key] = sub
    for key, value in added.items():
        sets[key] = value
    if len(sets) + len(nested) + len(removed) == 1:
        for key, value in sets.items():
            return (_SET, key, value)
        for key, sub in nested.items():
            return (_NESTED, key, sub)
        for key in removed:
            return (_DELETE, key)
    return (_EDITS, tuple(removed), sets, nested)


def _step(old: Any, new: Any) -> Step:
    """How ``new`` is stored after ``old`` in a pickle."""
    if new is old:
        return (_SAME,)
    if _diffable(old, new):
        step = _encode(old, new)
        if step is not None:
            return step
    return (_PLAIN, new)


def _apply(old: Any, step: Step) -> Any:
    """The version ``step`` makes from ``old`` (the inverse of ``_step``)."""
    kind = step[0]
    if kind == _SET:
        return old.set(step[1], step[2])
    if kind == _NESTED:
        return old.set(step[1], _apply(old[step[1]], step[2]))
    if kind == _DELETE:
        return old.delete(step[1])
    if kind == _SAME:
        return old
    if kind == _PLAIN:
        return step[1]
    _, removed, sets, nested = step
    e = old.evolve()
    for key in removed:
        del e[key]
    for key, sub in nested.items():
        e[key] = _apply(e[key], sub)
    for key, value in sets.items():
        e[key] = value
    return e.freeze()


# The length of a step of each kind, for checking a loaded one.
_STEP_LENGTHS = {_SAME: 1, _PLAIN: 2, _SET: 3, _NESTED: 3, _DELETE: 2, _EDITS: 4}


def _check_step(step: Any, where: str) -> None:
    """Raise ``ValueError`` (or ``TypeError``) unless ``step`` has the shape
    ``_step`` gives a step; ``where`` names it in the message."""
    if type(step) is not tuple:
        raise TypeError("%s must be a tuple, not '%s'" % (where, type(step).__name__))
    kind = step[0] if step else None
    if type(kind) is not int or _STEP_LENGTHS.get(kind) != len(step):
        raise ValueError(
            "%s is not a step of a History: %d item%s, starting with %s"
            % (where, len(step), "" if len(step) == 1 else "s", _short(kind))
        )
    if kind == _NESTED:
        _check_step(step[2], where + " (nested at key %s)" % _short(step[1]))
    elif kind == _EDITS:
        for position, expected in ((1, tuple), (2, dict), (3, dict)):
            if type(step[position]) is not expected:
                raise TypeError(
                    "%s holds a '%s' where a step of several edits has a %s"
                    % (where, type(step[position]).__name__, expected.__name__)
                )
        for key, sub in step[3].items():
            _check_step(sub, where + " (nested at key %s)" % _short(key))


def _short(value: Any) -> str:
    return short_repr(value, 40)


def _check_count(value: Any, field: str) -> int:
    """``value`` as a pickle stores an index or a limit: an int >= 0."""
    if type(value) is not int:
        raise TypeError(
            "a History pickle's %s must be an int, not '%s'" % (field, type(value).__name__)
        )
    if value < 0:
        raise ValueError("a History pickle's %s must be >= 0, not %d" % (field, value))
    return value


def _load(cls: Any, limit: Any, index: Any, first: Any, steps: Any) -> Any:
    """Rebuild a pickled History: ``first`` and the versions its steps make.

    A pickle that no History could have written (a wrong type, an index or a
    limit out of range, a step of no known shape or one that does not apply)
    raises ``TypeError`` or ``ValueError`` naming what is wrong: a History
    that loads is one whose every call works.
    """
    if not (isinstance(cls, type) and issubclass(cls, History)):
        raise TypeError(
            "a History pickle's class must be History or a subclass, not %s" % _short(cls)
        )
    if limit is not None:
        limit = _check_count(limit, "limit")
    index = _check_count(index, "index")
    if type(steps) is not tuple:
        raise TypeError("a History pickle's steps must be a tuple, not '%s'" % type(steps).__name__)
    count = len(steps) + 1  # the first version, then one per step
    if index >= count:
        raise ValueError(
            "a History pickle's index is %d, but it holds %d version%s "
            "(positions 0 to %d)" % (index, count, "" if count == 1 else "s", count - 1)
        )
    if limit is not None and count > limit + 1:
        raise ValueError(
            "a History pickle with limit=%d holds %d versions, but a history with that "
            "limit keeps at most %d (the present and %d in the past or future)"
            % (limit, count, limit + 1, limit)
        )
    for number, step in enumerate(steps, 1):
        _check_step(step, "a History pickle's step %d" % number)
    versions = [first]
    version = first
    for number, step in enumerate(steps, 1):
        try:
            version = _apply(version, step)
        except (LookupError, AttributeError, TypeError, ValueError) as exc:
            raise ValueError(
                "a History pickle's step %d does not apply to version %d: %s: %s"
                % (number, number - 1, type(exc).__name__, exc)
            ) from exc
        versions.append(version)
    return _make(cls, versions, index, limit)


def _make(cls: Any, versions: List[Any], index: int, limit: Optional[int]) -> Any:
    history = cls.__new__(cls)
    history._lock = threading.Lock()
    history._versions = versions
    history._index = index
    history._limit = limit
    return history


def _check_limit(limit: Any) -> Optional[int]:
    if limit is None:
        return None
    limit = operator.index(limit)
    if limit < 0:
        raise ValueError("limit must be None or >= 0, not %d" % limit)
    return limit  # type: ignore[no-any-return]


def _check_steps(steps: Any) -> int:
    steps = operator.index(steps)
    if steps < 0:
        raise ValueError("steps must be >= 0, not %d" % steps)
    return steps  # type: ignore[no-any-return]


def _versions(count: int) -> str:
    """``count`` versions, in words: "no version", "1 version", "3 versions"."""
    if count == 0:
        return "no version"
    return "%d version%s" % (count, "" if count == 1 else "s")


def _positions(count: int) -> str:
    """The positions a history of ``count`` versions has, in words."""
    return "the history keeps %s (positions 0 to %d, or -%d to -1)" % (
        _versions(count),
        count - 1,
        count,
    )


def _slice_bounds(key: slice) -> slice:
    """``key`` with each bound read through ``__index__`` once, here, outside
    the lock (user code must not run while the history is locked)."""
    return slice(
        *(
            None if bound is None else operator.index(bound)
            for bound in (key.start, key.stop, key.step)
        )
    )


class History(Generic[_T]):
    """An undo/redo history of versions (any values, typically frozendicts).

    The versions form a line: ``past`` (oldest first), the ``present``, and
    ``future`` (the versions undone, next first).  ``commit(v)`` makes ``v``
    the present after the current one, forgets the future and, with a
    ``limit``, drops the oldest versions so that at most ``limit`` remain in
    the past (``limit`` undo steps).  ``undo(n)`` and ``redo(n)`` move ``n``
    steps and return the new present; moving past either end raises
    ``IndexError`` and changes nothing.  ``len()`` and iteration cover every
    kept version, oldest first; ``h[i]`` reads the version at position ``i``
    in that line (negative from the newest, a slice gives a tuple),
    ``h.index`` is the present's position and ``h.goto(i)`` moves the present
    there.  Positions count the versions kept: with a ``limit``, dropping the
    oldest shifts them down.

    Each call is atomic (one lock per history), so a history can be shared
    between threads: a reader sees the history before or after a step, never
    in between.

    ``pickle`` and ``copy.deepcopy`` store the first version once and every
    later one as its deep diff from the one before; loading applies the diffs,
    so the loaded versions share structure like the originals.  A loaded
    version equals the original and has its key order; a value that was
    replaced by an equal one (``1`` by ``1.0``), or a key that moved without
    its value changing while other keys changed in the same step, loads as
    it was before that step.

    The versions are kept in a list, one reference each: in memory a
    version costs what it does not share with its neighbours, and reading
    any of them is O(1).

    Cost: ``commit``, ``undo``, ``redo``, ``goto``, ``h[i]``, ``index``,
    ``present``: O(1) (``commit`` with a full ``limit``: O(limit) to drop
    the oldest).  ``past``, ``future``, iteration: O(len); a slice: O(its
    length).  Pickling: O(d log n) per step of d changes; loading: one
    version's unpickling plus O(d log n) per step.

    >>> from frozenmap import History, frozendict
    >>> h = History(frozendict(count=0))
    >>> h.commit(h.present.set('count', 1))
    >>> h.commit(h.present.set('count', 2))
    >>> h.undo()
    frozendict({'count': 1})
    >>> h.can_redo, len(h)
    (True, 3)
    >>> h.commit(h.present.set('label', 'x'))  # forgets the redo side
    >>> [v.get('label') for v in h], h.can_redo
    ([None, None, 'x'], False)
    >>> h[0], h[-1] is h.present, h.index
    (frozendict({'count': 0}), True, 2)
    >>> h.goto(0)
    frozendict({'count': 0})
    >>> h.undo()
    Traceback (most recent call last):
      ...
    IndexError: cannot undo 1 step: no version is in the past
    """

    __slots__ = ("_lock", "_versions", "_index", "_limit", "__weakref__")

    _lock: threading.Lock
    _versions: List[_T]
    _index: int
    _limit: Optional[int]

    def __init__(self, initial: _T, *, limit: Optional[int] = None) -> None:
        self._lock = threading.Lock()
        self._versions = [initial]
        self._index = 0
        self._limit = _check_limit(limit)

    @property
    def present(self) -> _T:
        """The current version."""
        with self._lock:
            return self._versions[self._index]

    @property
    def limit(self) -> Optional[int]:
        """At most this many versions are kept in the past (None: no limit)."""
        return self._limit

    def commit(self, version: _T) -> None:
        """Make ``version`` the present, after the current one.

        The future (what was undone) is forgotten, and with a ``limit`` the
        oldest versions beyond it are dropped.  Every commit is a step, even
        of a version equal to the present.  Cost: O(1).
        """
        with self._lock:
            versions = self._versions
            index = self._index + 1
            del versions[index:]
            versions.append(version)
            limit = self._limit
            if limit is not None and index > limit:
                del versions[: index - limit]
                index = limit
            self._index = index

    def undo(self, steps: int = 1) -> _T:
        """Move ``steps`` versions back and return the new present.

        ``IndexError`` (and no move) when fewer than ``steps`` versions are
        in the past.  Cost: O(1).
        """
        return self._move(-_check_steps(steps), "undo")

    def redo(self, steps: int = 1) -> _T:
        """Move ``steps`` versions forward (re-doing what was undone) and
        return the new present.

        ``IndexError`` (and no move) when fewer than ``steps`` versions are
        in the future.  Cost: O(1).
        """
        return self._move(_check_steps(steps), "redo")

    def _move(self, delta: int, verb: str) -> _T:
        with self._lock:
            index = self._index + delta
            if not 0 <= index < len(self._versions):
                if delta < 0:
                    available, where = self._index, "in the past"
                else:
                    available, where = len(self._versions) - 1 - self._index, "in the future"
                at_limit = delta < 0 and available == self._limit
                raise IndexError(
                    "cannot %s %d step%s: %s%s %s %s%s"
                    % (
                        verb,
                        abs(delta),
                        "" if abs(delta) == 1 else "s",
                        "only " if available else "",
                        _versions(available),
                        "are" if available > 1 else "is",
                        where,
                        " (limit=%d keeps no more)" % available if at_limit else "",
                    )
                )
            self._index = index
            return self._versions[index]

    @property
    def index(self) -> int:
        """The present's position among the kept versions: how many are in the
        past (0 for the oldest).  Cost: O(1).

        >>> from frozenmap import History
        >>> h = History('a')
        >>> h.commit('b')
        >>> h.index, h[h.index]
        (1, 'b')
        """
        with self._lock:
            return self._index

    def goto(self, index: SupportsIndex) -> _T:
        """Make the version at position ``index`` the present, and return it.

        ``index`` counts as ``h[index]`` does (negative from the newest);
        nothing is forgotten, so ``goto`` can move either way and back.
        ``IndexError`` (and no move) when no version is at that position,
        ``TypeError`` when ``index`` is not an integer (its ``__index__`` is
        called once).  Cost: O(1).

        >>> from frozenmap import History
        >>> h = History('draft')
        >>> for text in ('edit 1', 'edit 2', 'edit 3'):
        ...     h.commit(text)
        >>> h.goto(1), h.past, h.future
        ('edit 1', ('draft',), ('edit 2', 'edit 3'))
        >>> h.goto(-1), h.can_redo
        ('edit 3', False)
        """
        if not type_lookup(type(index), "__index__")[0]:
            raise TypeError(
                "History.goto() needs an integer position, not '%s'" % type_name(type(index))
            )
        position = operator.index(index)
        with self._lock:
            count = len(self._versions)
            target = position + count if position < 0 else position
            if not 0 <= target < count:
                raise IndexError("cannot go to position %d: %s" % (position, _positions(count)))
            self._index = target
            return self._versions[target]

    @overload
    def __getitem__(self, index: SupportsIndex) -> _T: ...
    @overload
    def __getitem__(self, index: slice) -> Tuple[_T, ...]: ...
    def __getitem__(self, index: Any) -> Any:
        """The version at position ``index`` (oldest first, negative from the
        newest), or a tuple of them for a slice.  The present does not move.
        ``IndexError`` and ``TypeError`` as a list raises them.  Cost: O(1);
        a slice: O(its length).

        >>> from frozenmap import History
        >>> h = History(0)
        >>> for n in (1, 2, 3):
        ...     h.commit(n)
        >>> h[0], h[-1], h[1:3]
        (0, 3, (1, 2))
        >>> h[4]
        Traceback (most recent call last):
          ...
        IndexError: History index 4 is out of range: the history keeps 4 versions (positions 0 to 3, or -4 to -1)
        """
        if isinstance(index, slice):
            bounds = _slice_bounds(index)
            with self._lock:
                return tuple(self._versions[bounds])
        if not type_lookup(type(index), "__index__")[0]:
            raise TypeError(
                "History indices must be integers or slices, not %s" % type_name(type(index))
            )
        position = operator.index(index)
        with self._lock:
            count = len(self._versions)
            if not -count <= position < count:
                raise IndexError(
                    "History index %d is out of range: %s" % (position, _positions(count))
                )
            return self._versions[position]

    @property
    def can_undo(self) -> bool:
        """Whether a version is in the past."""
        with self._lock:
            return self._index > 0

    @property
    def can_redo(self) -> bool:
        """Whether a version is in the future (was undone and not replaced)."""
        with self._lock:
            return self._index < len(self._versions) - 1

    @property
    def past(self) -> Tuple[_T, ...]:
        """The versions before the present, oldest first."""
        with self._lock:
            return tuple(self._versions[: self._index])

    @property
    def future(self) -> Tuple[_T, ...]:
        """The versions after the present (undone), the next one first."""
        with self._lock:
            return tuple(self._versions[self._index + 1 :])

    def _snapshot(self) -> Tuple[List[Any], int]:
        with self._lock:
            return list(self._versions), self._index

    def __len__(self) -> int:
        with self._lock:
            return len(self._versions)

    def __iter__(self) -> Iterator[_T]:
        """Every kept version, oldest first (a snapshot taken at the call)."""
        return iter(self._snapshot()[0])

    def __repr__(self) -> str:
        versions, index = self._snapshot()
        present = short_repr(versions[index], 80)
        limit = "" if self._limit is None else ", limit=%d" % self._limit
        return "<%s present=%s, %d to undo, %d to redo%s>" % (
            type(self).__name__,
            present,
            index,
            len(versions) - 1 - index,
            limit,
        )

    def __copy__(self) -> "History[_T]":
        versions, index = self._snapshot()
        return _make(type(self), versions, index, self._limit)  # type: ignore[no-any-return]

    def __reduce__(self) -> Any:
        versions, index = self._snapshot()
        steps = tuple(_step(old, new) for old, new in zip(versions, versions[1:]))
        return (_load, (type(self), self._limit, index, versions[0], steps))
