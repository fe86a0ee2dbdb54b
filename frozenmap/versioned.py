"""``Versioned``: the current version of a value, shared by a whole process.

A ``Versioned`` holds one value -- typically a frozendict of configuration --
that many threads and asyncio tasks read and a few of them change.  It is
written once, in Python, on the public API, so both cores share it (a
capability above the cores gets no C twin unless a measured hot path needs
one); nothing in it depends on which core is loaded.

How it stays correct without readers ever locking:

- **The global version** is one tuple ``(number, value)`` in one attribute.
  A change builds the new value first and publishes the tuple with one
  attribute store; a read is one attribute load.  Both are atomic in CPython,
  with the GIL and free-threaded, and the published value is immutable, so a
  reader gets a whole version or the one before, never half of an update.
- **Writers** serialize on a lock held only to compare and publish.
  ``update(fn)`` calls ``fn`` *outside* the lock on the version it read, then
  publishes only if that version is still current (compare-and-swap) and
  calls ``fn`` again on the newer version otherwise, so concurrent updates
  never overwrite one another and no user code runs under the lock.
- **Overrides** live in a ``ContextVar`` (one per ``Versioned``): a tuple of
  layers, outermost first.  A layer is a function of the version below it (a
  mapping merged with ``|``, a function, or either at a nested path), applied
  when read and cached against the exact object it was applied to.  Setting
  and resetting the variable follows ``contextvars``: the current thread or
  task and what it starts (``asyncio.gather``, ``TaskGroup``,
  ``copy_context().run``) see it; siblings and the parent never do.
- **A frozendict holder stays one.**  A ``Versioned`` created with a
  frozendict refuses, at the call that makes it, any other value as the next
  version (``set``, ``update``, an override's function): a forgotten
  ``return`` or a plain dict would otherwise be published to every reader of
  the process, and fail far from the code that made it.
- **Subscribers** are called after each change, outside any lock, in the
  order of changes.  Each change is appended to a queue under the lock; the
  thread that finds no delivery running becomes the deliverer and empties the
  queue (taking the lock only to pop), while a thread that finds one running
  leaves its change to it.  So one change is delivered at a time, in order,
  exactly once, and a subscriber that changes the value again queues that
  change behind the current one instead of recursing.

Why overrides are applied at read time instead of snapshotted at entry: an
override says "these settings differ here", not "freeze the configuration
here".  A long-lived task under an override (a connection handler, a worker
loop, a test) should still see a global change to an unrelated setting -- a
rotated credential, a new log level -- exactly as a ``collections.ChainMap``
child sees later changes to its parents and as Django's
``override_settings`` falls back to the live settings.  Clojure's ``binding``
replaces a var's whole value, which is the special case of an override whose
function ignores its argument: ``override(lambda _: pinned)`` pins a
version.  A unit of work that needs one consistent version takes one
snapshot with ``get()`` and reads it, as it would without overrides.  What a
context holds is the layer (the changes), not a copy of the configuration,
so copying a context for a task stays O(1) (PEP 567) and the global version
can move on underneath it.

Why subscribers are ordered: Clojure's ``add-watch`` calls watches on the
thread that made the change, so two threads' changes can reach a watch
concurrently and in either order, and each watch must cope.  Here one
thread delivers at a time, so a subscriber sees changes as one sequence:
each call's ``old`` is the previous call's ``new``.

Why the name: it holds a sequence of versions and counts them
(``.version``), which is what "versioned configuration" users look for;
Clojure's "atom" names only the compare-and-swap half and reads as
"atomic" in Python, and "Ref" suggests a weak reference.
"""

from __future__ import annotations

import contextvars
import enum
import functools
import inspect
import sys
import threading
import traceback
from collections import deque
from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Deque,
    Generic,
    Iterable,
    Optional,
    ParamSpec,
    Set,
    Tuple,
    TypeVar,
    cast,
    overload,
)

from . import _registry
from ._shortrepr import short_repr
from ._typeinfo import type_lookup, type_name

if TYPE_CHECKING:
    from . import Diff, frozendict

__all__ = ["Versioned", "Override", "Subscription"]

T = TypeVar("T")
_K = TypeVar("_K")
_V = TypeVar("_V")
_P = ParamSpec("_P")
_R = TypeVar("_R")

_UNSET: Any = object()

_REPR_RUNNING: Set[Tuple[int, int]] = set()
"""``(id(versioned), thread id)`` of the reprs running, to stop a recursive one."""


class _Outcome(enum.Enum):
    """What ``Versioned._publish`` did."""

    CHANGED = 1  # the new value is the global version now
    UNCHANGED = 2  # the new value is the current one: nothing to publish
    CONFLICT = 3  # another change came first; compute again


class _UnraisableArgs:
    """The five attributes of ``sys.UnraisableHookArgs`` (whose type Python
    does not expose), for a ``sys.unraisablehook`` the user installed."""

    __slots__ = ("exc_type", "exc_value", "exc_traceback", "err_msg", "object")

    def __init__(self, exc: BaseException, err_msg: str, obj: Any) -> None:
        self.exc_type = type(exc)
        self.exc_value = exc
        self.exc_traceback = exc.__traceback__
        self.err_msg = err_msg
        self.object = obj


def _report_unraisable(exc: BaseException, err_msg: str, obj: Any) -> None:
    """Report ``exc`` as CPython reports an error in a ``__del__``: through
    ``sys.unraisablehook``.  The default hook accepts only the type it makes
    itself, so for it (or a hook that fails) the report is written to
    ``sys.stderr`` in the default hook's format."""
    hook = sys.unraisablehook
    if hook is not sys.__unraisablehook__:
        try:
            hook(_UnraisableArgs(exc, err_msg, obj))  # type: ignore[arg-type]
            return
        except Exception:
            pass
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write("%s: %r\n" % (err_msg, obj))
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=stream)
        stream.flush()
    except Exception:
        pass


class _Layer:
    """One entered override: ``apply`` maps the version below it to the
    version seen here.  ``_cache`` is ``(below, result)`` for the last
    version it was applied to; threads that share the layer may both miss
    and both store, which is harmless because ``apply`` is pure."""

    __slots__ = ("apply", "owner", "token", "_cache")

    def __init__(self, apply: Callable[[Any], Any], owner: "Override[Any]") -> None:
        self.apply = apply
        self.owner = owner
        self.token: Optional[contextvars.Token[Tuple[_Layer, ...]]] = None
        self._cache: Tuple[Any, Any] = (_UNSET, None)

    def resolve(self, below: Any) -> Any:
        cache = self._cache
        if cache[0] is below:
            return cache[1]
        result = self.apply(below)
        self._cache = (below, result)
        return result


def _type_name(obj: Any) -> str:
    return type_name(type(obj))


def _is_frozendict(value: Any) -> bool:
    return issubclass(type(value), _registry.frozendict_types)


def _not_a_frozendict(value: Any, where: str, from_function: bool) -> TypeError:
    """The error for ``value`` offered as the next version of a Versioned that
    holds frozendicts; ``where`` says who offered it (a function returned it
    when ``from_function``)."""
    if value is None:
        what = "None" + (" (a forgotten return?)" if from_function else "")
    else:
        what = "'%s'" % _type_name(value)
    if isinstance(value, Mapping) or type_lookup(type(value), "keys")[0]:
        advice = "convert it with frozenmap.freeze()"
    else:
        advice = "%s a frozendict (frozenmap.freeze() converts a mapping)" % (
            "return" if from_function else "pass"
        )
    return TypeError(
        "%s a frozendict, not %s: this Versioned holds frozendicts (it was created "
        "with one); %s" % (where, what, advice)
    )


def _check_frozendict(value: Any, where: str) -> None:
    if not isinstance(value, _registry.own_types):
        raise TypeError(
            "override() merges a mapping into a frozendict, but %s is of type '%s'; "
            "pass a function of it instead" % (where, _type_name(value))
        )


def _merge_function(changes: Mapping[Any, Any], path: Optional[Tuple[Any, ...]]) -> Any:
    """The function that merges ``changes`` with ``|`` (at ``path``)."""
    if path is None:

        def merge(current: Any) -> Any:
            _check_frozendict(current, "the current version")
            return current | changes

        return merge

    def merge_at(sub: Any) -> Any:
        _check_frozendict(sub, "the value at path %r" % (list(path),))
        return sub | changes

    return _at_path(merge_at, path)


def _at_path(fn: Callable[[Any], Any], path: Tuple[Any, ...]) -> Callable[[Any], Any]:
    def update_at(current: Any) -> Any:
        if not isinstance(current, _registry.own_types):
            raise TypeError(
                "at=%r needs a frozendict version, not one of type '%s'"
                % (list(path), _type_name(current))
            )
        return current.update_in(path, fn)

    return update_at


def _path_tuple(at: Iterable[Any]) -> Tuple[Any, ...]:
    """``at`` as a tuple of keys, so a path given as an iterator can be walked
    at every application; the rest is checked by ``update_in``."""
    if isinstance(at, (str, bytes)):
        raise TypeError("at must be an iterable of keys, not '%s'" % _type_name(at))
    try:
        return tuple(at)
    except TypeError:
        raise TypeError("at must be an iterable of keys, not '%s'" % _type_name(at)) from None


class Versioned(Generic[T]):
    """The current version of a value, for a whole process; overridable per task.

    ``get()`` returns the version visible in the calling context: the
    innermost ``override`` entered by this thread or task (or by the task
    that started it), else the global version.  ``set``, ``update`` and
    ``override`` never change a version; they publish or layer new ones, so
    the value should be immutable (a frozendict, usually).  Created with a
    frozendict, a ``Versioned`` holds frozendicts for good: ``set``,
    ``update`` and a function given to ``override`` must give one, or raise
    ``TypeError`` at that call (so a forgotten ``return`` or a plain dict
    never reaches the readers).  Created with any other value, it holds
    whatever it is given.

    ``history``, if given, is an object with a ``commit(version)`` method,
    such as ``frozenmap.History(initial)``; each global change is committed
    to it, in order, under the writers' lock and before it is published (if
    ``commit`` raises, the change is not made).  ``commit`` is the only
    method called, and it must not change this ``Versioned``.  Going back is
    a change like any other: ``cfg.set(old_version)``.

    A ``Versioned`` owns a ``ContextVar``, and ``ContextVar`` objects are
    meant to live as long as the program: create a ``Versioned`` once
    (at module level, typically), not per request.

    Cost: O(1) to create.

    >>> from frozenmap import Versioned, frozendict
    >>> cfg = Versioned(frozendict(timeout=30, retries=3))
    >>> cfg.get()['timeout']
    30
    >>> cfg.update(lambda c: c.set('retries', c['retries'] + 1))['retries']
    4
    >>> cfg
    Versioned(frozendict({'timeout': 30, 'retries': 4}), version=1)
    >>> cfg.update(lambda c: None)
    Traceback (most recent call last):
      ...
    TypeError: the function given to Versioned.update() must return a frozendict, not None (a forgotten return?): this Versioned holds frozendicts (it was created with one); return a frozendict (frozenmap.freeze() converts a mapping)
    """

    __slots__ = (
        "_state",
        "_lock",
        "_history",
        "_committing",
        "_layers",
        "_subscriptions",
        "_pending",
        "_delivering",
        "_holds_frozendicts",
        "__weakref__",
    )

    def __init__(self, initial: T, /, *, history: Any = None) -> None:
        if history is not None and not callable(getattr(history, "commit", None)):
            raise TypeError(
                "history must have a commit(version) method (a frozenmap.History), "
                "not '%s'" % _type_name(history)
            )
        self._state: Tuple[int, T] = (0, initial)
        self._lock = threading.RLock()  # an RLock only to detect re-entry from history.commit
        self._history = history
        self._committing = False
        self._layers: contextvars.ContextVar[Tuple[_Layer, ...]] = contextvars.ContextVar(
            "frozenmap.Versioned.overrides", default=()
        )
        self._subscriptions: Tuple[Subscription, ...] = ()
        self._pending: Deque[Tuple[int, T, T]] = deque()
        self._delivering = False
        self._holds_frozendicts = _is_frozendict(initial)

    # -- reading

    def get(self) -> T:
        """The version visible here: the innermost override, else the global version.

        Never locks and never sees half of a change.  Take one ``get()`` per
        unit of work and read everything from it: two calls may return two
        versions.

        Cost: O(1) with no override; O(k) identity checks under k nested
        overrides, plus one application of an override's changes the first
        time it is read over a new global version.

        >>> from frozenmap import Versioned, frozendict
        >>> cfg = Versioned(frozendict(debug=False))
        >>> with cfg.override({'debug': True}):
        ...     cfg.get()['debug']
        True
        >>> cfg.get()['debug']
        False
        """
        layers = self._layers.get()
        if not layers:
            return self._state[1]
        value = self._state[1]
        for layer in layers:
            cache = layer._cache  # inline of layer.resolve's cache hit: the common case
            value = cache[1] if cache[0] is value else layer.resolve(value)
        return value

    @property
    def version(self) -> int:
        """How many global changes were made: 0 for the initial value.

        Overrides do not count, and neither does a ``set`` or ``update`` whose
        result is the current value itself.  Cost: O(1).
        """
        return self._state[0]

    @property
    def history(self) -> Any:
        """The history given to the constructor, or ``None``."""
        return self._history

    # -- changing the global version

    def _publish(self, expected: Optional[Tuple[int, T]], new: T) -> _Outcome:
        """Make ``new`` the global version if the state is still ``expected``
        (any state when ``expected`` is None); queue it for the subscribers."""
        with self._lock:
            if self._committing:
                raise RuntimeError("history.commit() must not change the Versioned it records")
            state = self._state
            if expected is not None and state is not expected:
                return _Outcome.CONFLICT
            old = state[1]
            if new is old:
                return _Outcome.UNCHANGED
            number = state[0] + 1
            if self._history is not None:
                self._committing = True
                try:
                    self._history.commit(new)
                finally:
                    self._committing = False
            self._state = (number, new)
            if not self._subscriptions:
                return _Outcome.CHANGED
            self._pending.append((number, old, new))
            if self._delivering:
                return _Outcome.CHANGED  # the running delivery will take it
            self._delivering = True
        self._deliver()
        return _Outcome.CHANGED

    def set(self, new: T, /) -> T:
        """Make ``new`` the global version; returns it.

        Setting the current value itself is not a change (no new version
        number, no callbacks).  Subscribers are called before this returns,
        unless another thread is delivering earlier changes at that moment:
        then that thread calls them for this change too, after those.  (So a
        thread that is delivering keeps delivering, before it returns, while
        other threads keep changing the value.)

        A ``Versioned`` created with a frozendict takes only a frozendict
        (``TypeError`` otherwise, and nothing changes).

        Cost: O(1) plus the subscribers (and ``history.commit``).

        >>> from frozenmap import Versioned, frozendict
        >>> cfg = Versioned(1)
        >>> cfg.set(2), cfg.version
        (2, 1)
        >>> Versioned(frozendict(a=1)).set({'a': 2})
        Traceback (most recent call last):
          ...
        TypeError: Versioned.set() needs a frozendict, not 'dict': this Versioned holds frozendicts (it was created with one); convert it with frozenmap.freeze()
        """
        if self._holds_frozendicts and not _is_frozendict(new):
            raise _not_a_frozendict(new, "Versioned.set() needs", False)
        self._publish(None, new)
        return new

    @overload
    def update(self, fn: Callable[[T], T], /, *, at: None = None) -> T: ...
    @overload
    def update(self, fn: Callable[[Any], Any], /, *, at: Iterable[Any]) -> T: ...
    def update(self, fn: Callable[[Any], Any], /, *, at: Optional[Iterable[Any]] = None) -> T:
        """Replace the global version by ``fn(current)``, atomically; returns the new one.

        ``fn`` runs outside any lock.  If another change was published while
        it ran, ``fn`` is called again on the newer version (compare-and-swap
        with retry), so concurrent updates never lose one another -- and
        ``fn`` may be called more than once: it should compute, not act.
        With ``at=path``, ``fn`` gets and replaces the value at that path
        through nested frozendicts (``update_in``; ``KeyError`` if a key is
        missing).  The update acts on the global version even inside an
        override.  Returning the current value itself is not a change.  A
        ``Versioned`` created with a frozendict needs one back from ``fn``
        (``TypeError`` otherwise, and nothing changes).

        Cost: one call of ``fn`` per attempt, plus ``set``'s.

        >>> from frozenmap import Versioned, frozendict
        >>> cfg = Versioned(frozendict(db=frozendict(pool=10)))
        >>> cfg.update(lambda n: n * 2, at=['db', 'pool'])
        frozendict({'db': frozendict({'pool': 20})})
        """
        if not callable(fn):
            raise TypeError(
                "update() needs a function of the current version, not '%s'" % _type_name(fn)
            )
        apply = fn if at is None else _at_path(fn, _path_tuple(at))
        while True:
            state = self._state
            new: T = apply(state[1])
            if self._holds_frozendicts and not _is_frozendict(new):
                raise _not_a_frozendict(
                    new, "the function given to Versioned.update() must return", True
                )
            if self._publish(state, new) is not _Outcome.CONFLICT:
                return new

    # -- overriding in the calling context

    @overload
    def override(
        self, changes: Mapping[Any, Any] | Callable[[T], T], /, *, at: None = None
    ) -> "Override[T]": ...
    @overload
    def override(
        self, changes: Mapping[Any, Any] | Callable[[Any], Any], /, *, at: Iterable[Any]
    ) -> "Override[T]": ...
    def override(self, changes: Any, /, *, at: Optional[Iterable[Any]] = None) -> "Override[T]":
        """Layer ``changes`` over the version seen in this thread or task.

        ``changes`` is a mapping merged like ``current | changes`` (copied
        now, so later edits to it do not leak in), or a function
        ``fn(current) -> version``.  With ``at=path`` the mapping is merged
        into, or the function applied to, the nested frozendict at ``path``
        (``KeyError`` if a key is missing).

        The result is a context manager and a decorator (of plain and
        ``async`` functions; not of generators, whose ``yield`` would let the
        override leak into their caller).  Inside, ``get()`` returns the
        changes applied to the version below -- the global version, or an
        enclosing override's -- as it is *when read*: a later global change
        shows through wherever the override does not replace it.  The
        changes are applied once on entry (so bad changes raise there), then
        again only when the version below changes; a function given here
        should therefore depend on its argument only.  The override is seen
        by this thread or task and by the tasks and contexts it starts
        (``contextvars`` rules), is undone on exit even when the block
        raises, and nests.  Under a ``Versioned`` created with a frozendict,
        a function that returns anything else raises ``TypeError`` where it
        is applied (on entry, or in the ``get()`` that reapplies it).

        Cost: O(k log n) on entry for k changed keys, and again after each
        global change that is read under it; O(1) on exit.

        >>> from frozenmap import Versioned, frozendict
        >>> cfg = Versioned(frozendict(timeout=30, db=frozendict(pool=10)))
        >>> with cfg.override({'timeout': 2}), cfg.override({'pool': 1}, at=['db']):
        ...     cfg.get()
        frozendict({'timeout': 2, 'db': frozendict({'pool': 1})})
        >>> @cfg.override(lambda c: c.set('timeout', c['timeout'] * 2))
        ... def patient():
        ...     return cfg.get()['timeout']
        >>> patient()
        60
        """
        path = None if at is None else _path_tuple(at)
        apply: Callable[[Any], Any]
        if isinstance(changes, Mapping) or (
            hasattr(changes, "keys") and hasattr(changes, "__getitem__")
        ):
            if not isinstance(changes, _registry.frozendict_types):
                changes = dict(changes)
            apply = _merge_function(changes, path)
        elif callable(changes):
            if path is not None:
                apply = _at_path(changes, path)
            elif self._holds_frozendicts:
                apply = _returning_frozendict(changes)
            else:
                apply = changes
        else:
            raise TypeError(
                "override() takes a mapping of changes or a function of the current "
                "version, not '%s'" % _type_name(changes)
            )
        return Override(self, apply, changes, path)

    # -- subscribers

    @overload
    def subscribe(
        self: Versioned[frozendict[_K, _V]],
        callback: Callable[
            [frozendict[_K, _V], frozendict[_K, _V], Optional[Diff[_K, _V]]], object
        ],
        /,
    ) -> Subscription: ...
    @overload
    def subscribe(
        self, callback: Callable[[T, T, Optional[Diff[Any, Any]]], object], /
    ) -> Subscription: ...
    def subscribe(self, callback: Callable[[Any, Any, Any], object], /) -> Subscription:
        """Call ``callback(old, new, diff)`` after each later global change.

        ``diff`` is ``old.diff(new)`` when both are frozenmap frozendicts,
        else ``None`` (and ``None`` too, reported through
        ``sys.unraisablehook``, when computing it raised: a value's
        ``__eq__``, say); it is computed once per change, and only when
        someone is subscribed.  Callbacks run outside any lock, one change
        at a time, in the order of changes, each change once, even when
        several threads change the value at once (see ``set`` for which
        thread runs them).  An exception from a callback is reported through
        ``sys.unraisablehook`` and neither stops the other callbacks nor
        undoes the change.  Overrides are not changes.  A callback may change
        the value again: that change is delivered after the current one.

        Returns a ``Subscription``; ``unsubscribe()`` it, or use it in a
        ``with`` block.  Cost: O(s) for s subscriptions.

        >>> from frozenmap import Versioned, frozendict
        >>> cfg = Versioned(frozendict(level='info'))
        >>> def show(old, new, diff):
        ...     print(dict(diff.changed))
        >>> with cfg.subscribe(show):
        ...     _ = cfg.set(cfg.get() | {'level': 'debug'})
        {'level': ('info', 'debug')}
        >>> _ = cfg.set(frozendict(level='warning'))  # unsubscribed: nothing printed
        """
        if not callable(callback):
            raise TypeError(
                "subscribe() needs a callable taking (old, new, diff), not '%s'"
                % _type_name(callback)
            )
        with self._lock:
            subscription = Subscription(self, callback, self._state[0])
            self._subscriptions = self._subscriptions + (subscription,)
        return subscription

    def _unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscriptions = tuple(s for s in self._subscriptions if s is not subscription)

    def _deliver(self) -> None:
        """Call the subscribers for every queued change, in order, until the
        queue is empty.  Only the thread that set ``_delivering`` runs this."""
        try:
            while True:
                with self._lock:
                    if not self._pending:
                        self._delivering = False
                        return
                    number, old, new = self._pending.popleft()
                    subscriptions = self._subscriptions
                diff = _UNSET
                for subscription in subscriptions:
                    if not subscription._active or number <= subscription._after:
                        continue
                    if diff is _UNSET:
                        diff = self._diff(old, new)
                    try:
                        subscription.callback(old, new, diff)
                    except Exception as exc:
                        _report_unraisable(
                            exc,
                            "Exception ignored in a subscriber of Versioned (change %d)" % number,
                            subscription.callback,
                        )
        except BaseException:
            # KeyboardInterrupt and the like: let the next change deliver the rest.
            with self._lock:
                self._delivering = False
            raise

    @staticmethod
    def _diff(old: Any, new: Any) -> Any:
        if not (isinstance(old, _registry.own_types) and isinstance(new, _registry.own_types)):
            return None
        try:
            return old.diff(new)
        except Exception as exc:  # a value's __eq__ raised
            _report_unraisable(exc, "Exception ignored computing the diff of a Versioned", old)
            return None

    # -- the rest

    def __repr__(self) -> str:
        key = (id(self), threading.get_ident())
        if key in _REPR_RUNNING:  # the value contains this Versioned
            return "%s(...)" % type(self).__name__
        _REPR_RUNNING.add(key)
        try:
            number, value = self._state
            # Bounded as History's repr is: a map of a million keys prints a line.
            text = "%s(%s, version=%d" % (type(self).__name__, short_repr(value, 80), number)
        finally:
            _REPR_RUNNING.discard(key)
        layers = len(self._layers.get())
        if layers:
            text += ", overrides here=%d" % layers
        return text + ")"

    def __reduce__(self) -> Any:
        raise TypeError(
            "cannot pickle a Versioned: it holds a process's current version; "
            "pickle its value (cfg.get()) instead"
        )

    def __copy__(self) -> Versioned[T]:
        raise TypeError(_CANNOT_COPY % "copy.copy()")

    def __deepcopy__(self, memo: Any) -> Versioned[T]:
        raise TypeError(_CANNOT_COPY % "copy.deepcopy()")


_CANNOT_COPY = (
    "%s cannot copy a Versioned: it is the one current version of a value for "
    "the whole process, and a copy would be a second one, changing apart; "
    "share the Versioned itself, take its value with get() (an immutable "
    "snapshot: nothing to copy), or start another holder with Versioned(v.get())"
)


def _returning_frozendict(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``fn``, checked to return a frozendict (an override's function under
    a Versioned that holds frozendicts)."""

    def checked(current: Any) -> Any:
        result = fn(current)
        if not _is_frozendict(result):
            raise _not_a_frozendict(result, "the function given to override() must return", True)
        return result

    return checked


class Override(Generic[T]):
    """What ``Versioned.override`` returns: a context manager and a decorator.

    One object can be entered several times, nested or in several threads and
    tasks at once; each entry is its own layer, undone by its own exit.
    """

    __slots__ = ("_versioned", "_apply", "_changes", "_path")

    def __init__(
        self,
        versioned: Versioned[T],
        apply: Callable[[Any], Any],
        changes: Any,
        path: Optional[Tuple[Any, ...]],
    ) -> None:
        self._versioned = versioned
        self._apply = apply
        self._changes = changes
        self._path = path

    def __enter__(self) -> T:
        """Push a layer in the current context; returns the version seen inside."""
        versioned = self._versioned
        layers = versioned._layers.get()
        layer = _Layer(self._apply, self)
        seen = layer.resolve(versioned.get())  # bad changes raise here, before anything is set
        layer.token = versioned._layers.set(layers + (layer,))
        return seen  # type: ignore[no-any-return]

    def __exit__(self, *exc_info: Any) -> None:
        """Undo this object's innermost entry in the current context."""
        layers = self._versioned._layers.get()
        for layer in reversed(layers):
            if layer.owner is self and layer.token is not None:
                token, layer.token = layer.token, None
                self._versioned._layers.reset(token)
                return
        raise RuntimeError(
            "override exited in a context where it was not entered "
            "(a generator that yields inside it, or a task that did not enter it)"
        )

    def __call__(self, fn: Callable[_P, _R], /) -> Callable[_P, _R]:
        """Decorate ``fn`` to run under this override on every call (its
        signature is kept, for type checkers too)."""
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            raise TypeError(
                "override() cannot decorate the generator function %r: its yield would "
                "let the override leak into the caller; enter it inside the generator "
                "around the code that needs it" % getattr(fn, "__qualname__", fn)
            )
        if not callable(fn):
            raise TypeError("override() decorates functions, not '%s'" % _type_name(fn))
        if inspect.iscoroutinefunction(fn):
            coroutine_function = cast(Any, fn)

            @functools.wraps(fn)
            async def run_async(*args: _P.args, **kwargs: _P.kwargs) -> Any:
                with self:
                    return await coroutine_function(*args, **kwargs)

            # A coroutine function again: _R is the coroutine it returns.
            return cast(Callable[_P, _R], run_async)

        @functools.wraps(fn)
        def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            with self:
                return fn(*args, **kwargs)

        return run

    def __repr__(self) -> str:
        at = "" if self._path is None else ", at=%r" % (list(self._path),)
        return "<override of Versioned %#x: %s%s>" % (
            id(self._versioned),
            short_repr(self._changes, 80),
            at,
        )


class Subscription:
    """A subscriber of a ``Versioned``: ``unsubscribe()`` it, or use it in ``with``.

    After ``unsubscribe()`` returns, the callback is not called again
    (a call already running in another thread may still finish).
    """

    __slots__ = ("_versioned", "callback", "_after", "_active")

    def __init__(self, versioned: Versioned[Any], callback: Callable[..., Any], after: int) -> None:
        self._versioned = versioned
        self.callback = callback
        self._after = after  # the version number when it subscribed
        self._active = True

    @property
    def active(self) -> bool:
        """``True`` until ``unsubscribe()``."""
        return self._active

    def unsubscribe(self) -> None:
        """Stop the calls; a second call does nothing.  Cost: O(s)."""
        if self._active:
            self._active = False
            self._versioned._unsubscribe(self)

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.unsubscribe()

    def __repr__(self) -> str:
        return "<Subscription %s %r since version %d>" % (
            "of" if self._active else "(ended) of",
            self.callback,
            self._after,
        )
