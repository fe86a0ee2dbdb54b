"""The libraries measured: how each one performs each benchmarked operation.

A :class:`Library` says how one library does each operation (``dict`` copied
on write is the baseline).  Its defaults go through the library's mutable
builder (``thaw``/``freeze``), and each library overrides them with its native
API where it has one (``immutables.Map.set``, ``pmap.remove``,
``HashTrieMap.insert``, ``frozendict.set`` ...).  :func:`load_libraries` loads
the ones that are installed and names the others as skipped.
"""

import importlib
import platform
from typing import Any, Callable, Optional, Sequence


class Library:
    """How one mapping library performs each benchmarked operation.

    Subclasses set :attr:`name` and :attr:`type` (or implement :meth:`build`)
    and implement :meth:`thaw` and :meth:`freeze`; the derivations default to going through ``thaw``/``freeze``
    and are overridden where the library has a native call.  Methods that
    return callables (``setter(m)`` -> ``f(key, value)``) let the timed loops
    call a bound method directly, with no extra Python frame.
    """

    #: Column label.
    name = "?"
    #: True for frozenmap's own cores (their ratio to the best peer is shown).
    is_frozenmap = False
    #: True when a derived version costs O(log n), False when it copies O(n).
    persistent = True
    #: False when the type cannot be hashed (dict).
    hashable = True
    #: False when the library allocates outside Python's allocator, where
    #: :mod:`tracemalloc` does not see it: its memory is then ``n/a``.
    traced = True

    def __init__(self, version: str = ""):
        self.version = version

    def __repr__(self):
        return "<%s %s>" % (type(self).__name__, self.name)

    #: The map type, when ``type(data)`` builds one.
    type: Any = None

    # -- the three primitives every library provides ------------------------
    def build(self, data: dict) -> Any:
        """A new map with the items of ``data``."""
        return self.type(data)

    def thaw(self, m: Any) -> Any:
        """A mutable builder (MutableMapping-like) starting from ``m``."""
        raise NotImplementedError

    def freeze(self, e: Any) -> Any:
        """The immutable map a builder made by :meth:`thaw` holds."""
        raise NotImplementedError

    # -- derivations; each returns a callable bound to ``m`` ----------------
    def setter(self, m: Any) -> Callable[[Any, Any], Any]:
        """``f(key, value)`` -> ``m`` with ``key`` set."""

        def set_(key, value):
            e = self.thaw(m)
            e[key] = value
            return self.freeze(e)

        return set_

    def deleter(self, m: Any) -> Callable[[Any], Any]:
        """``f(key)`` -> ``m`` without ``key`` (which is present)."""

        def delete(key):
            e = self.thaw(m)
            del e[key]
            return self.freeze(e)

        return delete

    def unioner(self, m: Any) -> Callable[[dict], Any]:
        """``f(other)`` -> ``m | other`` (right side wins)."""

        def union(other):
            e = self.thaw(m)
            e.update(other)
            return self.freeze(e)

        return union

    def minuser(self, m: Any) -> Callable[[Sequence], Any]:
        """``f(keys)`` -> ``m`` without ``keys`` (missing keys ignored)."""

        def minus(keys):
            e = self.thaw(m)
            for key in keys:
                if key in e:
                    del e[key]
            return self.freeze(e)

        return minus

    def keeper(self, m: Any) -> Callable[[Sequence], Any]:
        """``f(keys)`` -> ``m`` restricted to ``keys`` (missing keys ignored)."""

        def keep(keys):
            return self.build({key: m[key] for key in keys if key in m})

        return keep

    def batcher(self, m: Any) -> Callable[[Any], Any]:
        """``f((sets, deletes))`` -> ``m`` after a batch of edits in one builder."""

        def batch(edits):
            sets, deletes = edits
            e = self.thaw(m)
            for key, value in sets:
                e[key] = value
            for key in deletes:
                del e[key]
            return self.freeze(e)

        return batch

    def positioner(self, m: Any) -> Callable[[int], Any]:
        """``f(i)`` -> what sits at position ``i`` of ``m``'s iteration order:
        ``list(m)[i]``, O(n), where the library has no positional read."""
        return lambda i: list(m)[i]

    #: ``f(a, b)`` -> what changed from ``a`` to ``b``; None when not offered.
    differ: Optional[Callable[[Any, Any], Any]] = None

    #: ``f(doc, patch)`` -> ``doc`` with a JSON Patch applied, leaving ``doc``
    #: as it was; None when not offered.
    json_patcher: Optional[Callable[[Any, Any], Any]] = None

    def history(self, versions: list) -> Any:
        """What the library keeps as an undo history: a list of the versions."""
        return list(versions)


class FrozenMap(Library):
    """One of frozenmap's cores: every operation is native."""

    is_frozenmap = True

    def __init__(self, core: str):
        try:
            module = importlib.import_module("frozenmap._%score" % core)
        except ImportError as exc:
            raise ImportError("%s core does not import: %s" % (core.upper(), exc)) from exc
        self.type = module.frozendict
        self.name = "frozenmap:%s" % ("c" if core == "c" else "py")
        self.differ = self.type.diff
        from frozenmap.jsonpatch import apply_json_patch

        self.json_patcher = apply_json_patch
        super().__init__(_dist_version("frozenmap"))

    def history(self, versions):
        from frozenmap.history import History

        h = History(versions[0])
        for version in versions[1:]:
            h.commit(version)
        return h

    def thaw(self, m):
        return m.evolve()

    def freeze(self, e):
        return e.freeze()

    def setter(self, m):
        return m.set

    def deleter(self, m):
        return m.delete

    def unioner(self, m):
        return m.__or__

    def minuser(self, m):
        return m.__sub__

    def keeper(self, m):
        return m.__and__

    def positioner(self, m):
        return m.item_at


def mapping_diff(a, b):
    """``(added, removed, changed)`` from ``a`` to ``b`` as a dict user writes it.

    Cost: O(len(a) + len(b)).
    """
    added = {k: v for k, v in b.items() if k not in a}
    removed = {k: v for k, v in a.items() if k not in b}
    changed = {}
    for k, old in a.items():
        if k in b:
            new = b[k]
            if old is not new and old != new:
                changed[k] = (old, new)
    return added, removed, changed


class CopyOnWrite(Library):
    """A dict, or a dict-backed immutable type: every derivation copies O(n).

    ``kind`` is ``dict`` itself (the baseline: ``copy()`` then edit) or an
    immutable wrapper (PyPI ``frozendict``, ``immutabledict``, the builtin
    ``frozendict`` of Python 3.15), whose native ``set``/``delete`` and ``|``
    are used when present; its builder is a plain dict.
    """

    persistent = False

    def __init__(self, name: str, kind: type, version: str = ""):
        self.name = name
        self.type = kind
        self.hashable = kind.__hash__ is not None
        if kind is dict:
            self.differ = mapping_diff
            self.json_patcher = _jsonpatch_package()
        super().__init__(version)

    def thaw(self, m):
        return m.copy() if self.type is dict else dict(m)

    def freeze(self, e):
        return e if self.type is dict else self.type(e)

    def setter(self, m):
        if hasattr(m, "set"):
            return m.set
        union = m.__or__
        return lambda key, value: union({key: value})

    def deleter(self, m):
        return m.delete if hasattr(m, "delete") else super().deleter(m)

    def unioner(self, m):
        return m.__or__

    def positioner(self, m):
        # PyPI frozendict's item(i); the others list(m)[i].
        return m.item if hasattr(m, "item") else super().positioner(m)


class Immutables(Library):
    """``immutables.Map`` (PEP 603's HAMT); builder: ``Map.mutate()``."""

    name = "immutables"

    def __init__(self):
        import immutables

        self.type = immutables.Map
        super().__init__(immutables.__version__)

    def thaw(self, m):
        return m.mutate()

    def freeze(self, e):
        return e.finish()

    def setter(self, m):
        return m.set

    def deleter(self, m):
        return m.delete

    def unioner(self, m):
        return m.update


class Pyrsistent(Library):
    """``pyrsistent.pmap``; builder: ``pmap.evolver()``."""

    name = "pyrsistent"

    def __init__(self):
        import pyrsistent

        self.type = pyrsistent.pmap
        super().__init__(_dist_version("pyrsistent"))

    def thaw(self, m):
        return m.evolver()

    def freeze(self, e):
        return e.persistent()

    def setter(self, m):
        return m.set

    def deleter(self, m):
        return m.remove

    def unioner(self, m):
        return m.update


class _Rebinder:
    """A builder over a map with no mutable one: each edit rebinds to a new version."""

    def __init__(self, m, insert, remove):
        self.m, self._insert, self._remove = m, insert, remove

    def __contains__(self, key):
        return key in self.m

    def __setitem__(self, key, value):
        self.m = self._insert(self.m, key, value)

    def __delitem__(self, key):
        self.m = self._remove(self.m, key)

    def update(self, other):
        for key, value in other.items():
            self[key] = value


class Rpds(Library):
    """``rpds.HashTrieMap`` (rpds-py: Rust's HAMT, behind jsonschema).

    It has no mutable builder: ``insert``/``remove`` return new maps, and the
    builder (:class:`_Rebinder`) applies them one edit at a time.  Its nodes
    are allocated by Rust, unseen by :mod:`tracemalloc`: no memory figures.
    """

    name = "rpds"
    traced = False

    def __init__(self):
        import rpds

        self.type = rpds.HashTrieMap
        super().__init__(_dist_version("rpds-py"))

    def thaw(self, m):
        return _Rebinder(m, self.type.insert, self.type.remove)

    def freeze(self, e):
        return e.m

    def setter(self, m):
        return m.insert

    def deleter(self, m):
        return m.remove

    def unioner(self, m):
        return m.update


def _jsonpatch_package():
    """PyPI ``jsonpatch``'s ``apply_patch`` (it deep-copies the document), or None."""
    try:
        import jsonpatch
    except ImportError:
        return None
    return jsonpatch.apply_patch


def _pypi_frozendict():
    import frozendict as pypi_frozendict

    return CopyOnWrite("frozendict", pypi_frozendict.frozendict, _dist_version("frozendict"))


def _immutabledict():
    import immutabledict

    return CopyOnWrite("immutabledict", immutabledict.immutabledict, _dist_version("immutabledict"))


def _builtin_frozendict():
    import builtins

    kind = getattr(builtins, "frozendict", None)
    if kind is None:
        raise ImportError("needs Python 3.15+")
    return CopyOnWrite("builtin", kind, "Python %s" % platform.python_version())


#: Column order: frozenmap's cores, the dict baseline, then the peers.
LIBRARY_FACTORIES = [
    ("frozenmap:c", lambda: FrozenMap("c")),
    ("frozenmap:py", lambda: FrozenMap("py")),
    ("dict", lambda: CopyOnWrite("dict", dict, "Python %s" % platform.python_version())),
    ("immutables", Immutables),
    ("pyrsistent", Pyrsistent),
    ("rpds", Rpds),
    ("frozendict", _pypi_frozendict),
    ("immutabledict", _immutabledict),
    ("builtin", _builtin_frozendict),
]
LIBRARY_NAMES = [name for name, _ in LIBRARY_FACTORIES]


def load_library(name: str) -> Library:
    """The :class:`Library` called ``name``; ImportError when it is not available."""
    factory = dict(LIBRARY_FACTORIES)[name]
    try:
        return factory()
    except ImportError:
        raise
    except Exception as exc:  # a broken core is reported like a missing one
        raise ImportError("%s: %s" % (type(exc).__name__, exc)) from exc


def load_libraries(names: Optional[Sequence[str]] = None):
    """``(libraries, skipped)``: the available libraries and ``{name: reason}``."""
    libraries, skipped = [], {}
    for name in names or LIBRARY_NAMES:
        try:
            libraries.append(load_library(name))
        except ImportError as exc:
            skipped[name] = str(exc) or type(exc).__name__
    return libraries, skipped


def _dist_version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:
        return ""
