"""The pure core's second key-trie layout (``keytrie_pypy``: entries flat in
the node, no index, PyPy's; docs/design-decisions.md, "PyPy: the key trie's
layout and the floors") gives what the first (``keytrie``) gives: the same
answers, the same ``_dump()`` (the C core's), and versions that pass
``_check()``.  One workload runs in two fresh interpreters, one per layout
(``FROZENMAP_KEYTRIE_NX``), and their outputs are compared line by line:
every version's dump after sets, deletes, evolver edits, merges, diffs and
equality, and of a map built afresh from each kept version's items (PyPy's
build reads the hash and item columns), over keys whose hashes collide in
full and in part (ints and keys with a chosen hash: the same in every
process, on PyPy too).

And the layout is chosen in one place: only ``champ`` imports a layout
module, every other module of the core takes the key trie from ``champ``,
and no module rebinds a name it defined (the layouts used to be switched by
rebinding module globals)."""

import ast
import os
import subprocess
import sys

import pytest

WORKLOAD = r"""
import random
from frozenmap._pycore import frozendict
from frozenmap._pycore import champ

class K:
    # A key with a chosen hash: full collisions (same h) and shared digits.
    def __init__(self, name, h):
        self.name, self.h = name, h
    def __hash__(self):
        return self.h
    def __eq__(self, other):
        return isinstance(other, K) and self.name == other.name
    def __repr__(self):
        return "K(%r)" % (self.name,)

rng = random.Random(26)
pool = [K("k%d" % i, rng.choice([1, 2, 33, 1025, 1 << 40 | 1, rng.getrandbits(64)]))
        for i in range(300)] + [rng.getrandbits(64) for i in range(300)]
out = ["layout=%s" % champ.LAYOUT]
m = frozendict()
versions = []
for step in range(2000):
    k = rng.choice(pool)
    r = rng.random()
    if r < 0.55:
        m = m.set(k, step)
    elif r < 0.85:
        m = m.delete(k) if k in m else m
    elif r < 0.93:
        e = m.evolve()
        for _ in range(rng.randrange(1, 12)):
            k2 = rng.choice(pool)
            if rng.random() < 0.6:
                e[k2] = step
            elif k2 in e:
                del e[k2]
        m = e.freeze()
    else:
        m = m | {rng.choice(pool): step, rng.choice(pool): -step}
    m._check()
    if step % 50 == 0:
        versions.append(m)
        out.append(m._dump())
for a, b in zip(versions, versions[1:]):
    out.append(repr(a.diff(b)))
    built = frozendict(dict(a))  # a fresh build (PyPy's: from the columns)
    built._check()
    out.append(built._dump())
    if type(a._root) is list:  # the key trie from entries with gaps in their seqs
        entries = sorted(champ.champ_entries(a._root), key=lambda e: e[1])
        out.append(repr(champ.champ_dump(champ.champ_build(entries, None))))
    out.append(repr((a == b, a == built, len(a - b), len(a & b))))
    out.append(repr([m.get(k, None) for k in pool[::7]]))
print("\n".join(out))
"""


def _run(nx):
    env = dict(os.environ, FROZENMAP_KEYTRIE_NX=nx, FROZENMAP_PURE_PYTHON="1")
    done = subprocess.run(
        [sys.executable, "-c", WORKLOAD],
        env=env,
        capture_output=True,
        text=True,
        cwd=os.path.dirname(os.path.abspath(__file__)),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def test_both_layouts_dump_and_answer_alike():
    flat, tuples = _run("1"), _run("0")
    assert flat[0] == "layout=pypy" and tuples[0] == "layout=cpython"
    assert len(flat) == len(tuples)
    for i, (a, b) in enumerate(zip(flat[1:], tuples[1:]), 1):
        assert a == b, "line %d differs" % i


PYCORE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "frozenmap", "_pycore"
)
LAYOUTS = ("keytrie", "keytrie_pypy")


def _pycore_sources():
    if not os.path.isfile(os.path.join(PYCORE, "champ.py")):  # pragma: no cover
        pytest.skip("needs the source tree")
    for name in sorted(os.listdir(PYCORE)):
        if name.endswith(".py"):
            with open(os.path.join(PYCORE, name), encoding="utf-8") as file:
                yield name[:-3], ast.parse(file.read(), name)


def _imported_modules(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            yield node.module


def test_only_champ_imports_a_layout():
    importers = {}
    for name, tree in _pycore_sources():
        for module in _imported_modules(tree):
            if module in LAYOUTS:
                importers.setdefault(module, set()).add(name)
    # keytrie_pypy shares keytrie's layout-free parts (collision nodes, ...).
    assert importers == {"keytrie": {"champ", "keytrie_pypy"}, "keytrie_pypy": {"champ"}}


def _top_level_bindings(statements):
    """The names defined or assigned at module scope, blocks included (an
    ``if``'s two branches are alternatives: a name bound in both counts once)."""
    for node in statements:
        if isinstance(node, ast.If):
            yield from set(_top_level_bindings(node.body)) | set(_top_level_bindings(node.orelse))
        elif isinstance(node, ast.Try):
            for block in [node.body, node.orelse, node.finalbody] + [h.body for h in node.handlers]:
                yield from _top_level_bindings(block)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            yield node.name
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                yield from _names_bound(target)


def _names_bound(target):
    """The names an assignment target binds (``a``, ``a, b``; not ``a.b`` or ``a[i]``)."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _names_bound(element)
    elif isinstance(target, ast.Starred):
        yield from _names_bound(target.value)


def test_no_module_of_the_core_rebinds_a_name_it_defined():
    for name, tree in _pycore_sources():
        seen = set()
        for bound in _top_level_bindings(tree.body):
            assert bound not in seen, "%s.py binds %s twice" % (name, bound)
            seen.add(bound)


def test_the_chosen_layout_is_what_champ_hands_out():
    from frozenmap._pycore import champ, keytrie, keytrie_pypy

    chosen = keytrie_pypy if champ.LAYOUT == "pypy" else keytrie
    other = keytrie if chosen is keytrie_pypy else keytrie_pypy
    for name in keytrie_pypy.__all__:
        assert getattr(champ, name) is getattr(chosen, name), name
        assert getattr(champ, name) is not getattr(other, name), name
