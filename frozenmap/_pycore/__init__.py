"""The pure-Python core: the reference implementation, mirrored by the C core.

How a frozendict is built, in short (``frozenmap/_ccore/frozendict.c`` opens
with the long version):

- ``keytrie``: a CHAMP trie over the full 64-bit key hash maps each key to its
  entry ``(hash, seq, key, value)``.  Lookups descend 5 hash bits per level.
  Deletion keeps the shape canonical, so equal maps have equal shapes and two
  versions compare (``==``, ``diff``) by a parallel walk that skips the
  subtrees they share.  ``keytrie`` is CPython's layout of the nodes,
  ``keytrie_pypy`` PyPy's; ``champ`` chooses one and is what the layers above
  import.
- ``ordertrie``: a path-compressed radix trie (leaves of 8, inner nodes of 16) maps each key's ``seq`` (a
  counter that only grows) to ``(key, value)``; walking it in order is
  insertion order.  Removal really removes, with no tombstones.
- ``flat``: a version of at most ``FLAT_MAX`` = 32 keys holds neither trie:
  its stored hashes and its ``(key, value)`` pairs, two tuples in insertion
  order, scanned by a lookup; one key more promotes it to the tries, a
  derivation leaving 32 keys demotes it back.
- ``hashing``: ``hash(fd) == hash(frozenset(fd.items()))``, kept as an XOR
  accumulator so a derived version's hash is an O(1) update.
- ``transient``: transient ownership.  Nodes carry an owner token; a
  Transient (the internal builder) edits its own nodes in place and copies
  shared ones once.
- ``derive``: the one-key derivations of a version (``set``, ``delete``,
  ``discard``): one lookup and one copy of each trie's path.
- ``reads``: the reads that ``frozendict`` and ``Evolver`` share
  (``mapping_equal``, ``mapping_repr``, the positional reads).
- ``merge``: the one merge (``merge_into``: the constructor, ``|``,
  ``Evolver.update``), with a keys path and a pairs path as ``dict.update``.
- ``views``: keys/values/items views; ``paths``: nested paths.
- ``frozendict``: the public type; ``evolver``: the public ``Evolver``, a
  Transient with a guard.

Layers: ``keytrie`` (<- ``keytrie_pypy`` <- ``champ``), ``ordertrie``,
``hashing`` (and the shared ``frozenmap._typeinfo``) <- ``flat`` <-
``transient`` <- ``reads``, ``derive`` <- ``merge``, ``views``, ``paths``
<- ``evolver`` <- ``frozendict``.  No module imports one above it:
``frozendict`` and ``evolver`` register their classes with
``reads.register_types`` when imported.

Every single-key derivation costs O(log n) time and new memory in the worst
case, from any version, old or new.
"""

from collections.abc import Mapping as _Mapping
from collections.abc import MutableMapping as _MutableMapping

from .. import _interop, _registry, _viewsets
from .evolver import Evolver
from .frozendict import frozendict

_Mapping.register(frozendict)
_MutableMapping.register(Evolver)
_registry.register_frozendict_type(frozendict)
_viewsets.register_view_types(type(frozendict().keys()), type(frozendict().items()))
_interop.install(frozendict)

__all__ = ["frozendict", "Evolver"]
