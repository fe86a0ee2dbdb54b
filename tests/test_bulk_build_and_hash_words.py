"""Building from a dict and the hash accumulator, as the speed work for PyPy left them.

The pure core builds the key trie of ``frozendict(a_dict)`` top-down
(``champ_build``) instead of inserting the keys one by one, and on PyPy
computes the pair hash and the frozenset finaliser in machine words.  Both
must give exactly what the one-by-one path gives: the same canonical shape
(``==`` between two versions compares their tries position by position), the
same order, and ``hash(fd) == hash(frozenset(fd.items()))`` through derived
versions.
"""

import random

import pytest

# Ints a multiple of the hash modulus apart hash equal: collision nodes.
MODULUS = (1 << 61) - 1


def _keys(rng, n):
    keys = []
    seen = set()
    while len(keys) < n:
        k = rng.randrange(-4 * n - 10, 4 * n + 10)
        if rng.random() < 0.25:
            k += rng.choice((MODULUS, -MODULUS, 2 * MODULUS))
        if rng.random() < 0.2:
            k = "s%d" % k
        if k not in seen:
            seen.add(k)
            keys.append(k)
    return keys


@pytest.mark.parametrize("n", [0, 1, 2, 3, 9, 33, 200, 1500])
def test_built_from_a_dict_equals_built_one_by_one(core, n):
    rng = random.Random(n)
    keys = _keys(rng, n)
    d = {k: i for i, k in enumerate(keys)}
    bulk = core.frozendict(d)
    one_by_one = core.frozendict(list(d.items()))  # pairs: the per-key path
    stepwise = core.frozendict()
    for k, v in d.items():
        stepwise = stepwise.set(k, v)
    for fd in (bulk, one_by_one, stepwise):
        if hasattr(fd, "_check"):
            fd._check()
    assert list(bulk.items()) == list(d.items())
    assert bulk == one_by_one == stepwise
    assert not bulk.diff(stepwise)
    for k, v in d.items():
        assert bulk[k] == v
    assert hash(bulk) == hash(stepwise) == hash(frozenset(d.items()))
    # Edits from the bulk-built version keep the shape canonical.
    order = list(keys)
    rng.shuffle(order)
    smaller = bulk
    for k in order[: n // 2]:
        smaller = smaller.delete(k)
        del d[k]
    if hasattr(smaller, "_check"):
        smaller._check()
    assert smaller == core.frozendict(list(d.items()))
    assert list(smaller.items()) == list(d.items())


def test_hash_through_derived_versions_with_values_of_every_hash_sign(core):
    rng = random.Random(7)
    values = [-1, -2, 0, 1, -(1 << 63), (1 << 63) - 1, 1 << 64, -(1 << 70), 0.5, -0.5, None]
    values += [rng.getrandbits(64) - (1 << 63) for _ in range(40)]
    values += ["v%d" % i for i in range(40)]
    d = {("k", i): v for i, v in enumerate(values)}
    fd = core.frozendict(d)
    assert hash(fd) == hash(frozenset(d.items()))
    for i in range(0, len(values), 3):
        key = ("k", i)
        new_value = values[(i * 7) % len(values)]
        fd = fd.set(key, new_value)
        d[key] = new_value
        assert hash(fd) == hash(frozenset(d.items()))
        fd = fd.delete(("k", i + 1)) if ("k", i + 1) in d else fd
        d.pop(("k", i + 1), None)
        assert hash(fd) == hash(frozenset(d.items()))
    e = fd.evolve()
    e[-1] = -1
    d[-1] = -1
    assert hash(e.freeze()) == hash(frozenset(d.items()))
