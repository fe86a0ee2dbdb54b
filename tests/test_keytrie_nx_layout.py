"""The pure core's second key-trie layout (entries flat in the node, no index:
PyPy's, chosen at import; docs/design-decisions.md, "PyPy: the key trie's
layout and the floors") gives what the first gives: the same answers, the same ``_dump()`` (the C core's), and versions
that pass ``_check()``.  One workload runs in two fresh interpreters, one per
layout (``FROZENMAP_KEYTRIE_NX``), and their outputs are compared line by
line: every version's dump after sets, deletes, evolver edits, merges, diffs
and equality, and of a map built afresh from each kept version's items (PyPy's
build reads the hash and item columns), over keys whose hashes collide in full
and in part (ints and keys with a chosen hash: the same in every process, on
PyPy too)."""

import os
import subprocess
import sys

WORKLOAD = r"""
import random
from frozenmap._pycore import frozendict
from frozenmap._pycore import keytrie

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
out = ["nx=%s" % keytrie._NX]
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
        entries = sorted(keytrie.champ_entries(a._root), key=lambda e: e[1])
        out.append(repr(keytrie.champ_dump(keytrie.champ_build(entries, None))))
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
    assert flat[0] == "nx=True" and tuples[0] == "nx=False"
    assert len(flat) == len(tuples)
    for i, (a, b) in enumerate(zip(flat[1:], tuples[1:]), 1):
        assert a == b, "line %d differs" % i
