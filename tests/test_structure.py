"""Structural sharing, counted by identity (docs/spec.md §3), and canonical shape.

A derivation may create only the nodes on the paths it touches: O(log n) new
nodes.  ``_node_ids()`` lists the identity of every key-trie and order-trie
node of a version, so ``set(new) - set(old)`` is exactly what a derivation
allocated.  Nothing here measures time.

Bounds: the key trie has at most 13 levels (5-bit digits of a 64-bit hash)
and the path-compressed order trie at most 17 (a 3-bit leaf digit, then 4-bit
digits of a 64-bit seq: ``ORDER_MAX_DEPTH``), so one path in each is at most
30 nodes, plus a split or join node: at most ``PER_EDIT`` = 40 new nodes for
one single-key derivation, whatever n.  In practice the depths are log32(n)
and 1 + log16(n / 8), so from n = 1,000 to n = 100,000 the count may grow by
about log32(100) + log16(100) ≈ 3 nodes (plus hash-placement luck), never by
anything proportional to n.
"""

import re

import pytest
from keys import CountingValue, HashKey

PER_EDIT = 40
GROWTH_1K_TO_100K = 8
SIZES = (1_000, 100_000)


def key(i):
    return "k%d" % i


@pytest.fixture(scope="module")
def built(core):
    """``{n: (frozendict of n string keys, set of its node ids)}``, built once per core."""
    out = {}
    for n in SIZES:
        fd = core.frozendict({key(i): i for i in range(n)})
        tries_of(fd)
        out[n] = (fd, frozenset(fd._node_ids()))
    return out


def tries_of(fd):
    """Build the tries of a map built once (the table form builds them at its
    first derivation, and keeps them: its derivations share their nodes), so
    that its node ids include them before any derivation is counted."""
    if len(fd):
        fd.key_at(0)
    return fd


def created(new, old_ids):
    return len(set(new._node_ids()) - old_ids)


def single_edits(fd, n):
    """Each single-key derivation we count, at the start, middle and end of the order."""
    edits = []
    for i in (0, n // 2, n - 1):
        edits.append(("set", fd.set(key(i), -1)))
        edits.append(("new", fd.set(("new", i), -1)))
        edits.append(("delete", fd.delete(key(i))))
        edits.append(("discard", fd.discard(key(i))))
    return edits


@pytest.mark.parametrize("n", SIZES)
def test_single_key_derivations_create_o_log_n_nodes(core, built, n):
    fd, ids = built[n]
    counts = {}
    for name, new in single_edits(fd, n):
        count = created(new, ids)
        counts.setdefault(name, []).append(count)
        assert 0 < count <= PER_EDIT, "%s at n=%d created %d nodes" % (name, n, count)
    # The source shares everything but the touched paths: it still has all its nodes.
    assert frozenset(fd._node_ids()) == ids


def test_new_nodes_do_not_grow_with_n(core, built):
    small_fd, small_ids = built[SIZES[0]]
    big_fd, big_ids = built[SIZES[1]]
    small = {}
    for name, new in single_edits(small_fd, SIZES[0]):
        small[name] = max(small.get(name, 0), created(new, small_ids))
    big = {}
    for name, new in single_edits(big_fd, SIZES[1]):
        big[name] = max(big.get(name, 0), created(new, big_ids))
    for name in small:
        assert big[name] - small[name] <= GROWTH_1K_TO_100K, (name, small[name], big[name])
    print("\nnew nodes per derivation (%s core): n=1k %r, n=100k %r" % (core.name, small, big))


def test_derivations_from_one_old_version_never_pay_o_n(core, built):
    """Worst case, not amortized: derive again and again from the same old version,
    including one that lost half its keys (where tombstones and a compaction pass
    would show up as one derivation copying O(n) nodes)."""
    fd, _ = built[SIZES[1]]
    e = fd.evolve()
    for i in range(0, 20_000, 2):  # holes all through the first fifth
        del e[key(i)]
    thinned = e.freeze()
    thinned_ids = frozenset(thinned._node_ids())
    for i in (1, 9_999, 19_999, 50_000):  # odd or past the holes: still present
        assert created(thinned.delete(key(i)), thinned_ids) <= PER_EDIT
        assert created(thinned.set(key(i), 0), thinned_ids) <= PER_EDIT
        assert created(thinned.set(("again", i), 0), thinned_ids) <= PER_EDIT
    thinned._check()


def test_node_count_stays_proportional_to_len_after_deletions(core):
    """Real removal: empty leaves vanish and one-child nodes collapse."""
    fd = core.frozendict({key(i): i for i in range(20_000)})
    e = fd.evolve()
    for i in range(20_000):
        if i % 1000:
            del e[key(i)]
    small = e.freeze()
    assert len(small) == 20
    small._check()
    # 20 entries: the key trie needs at most 20 nodes, the order trie at most
    # 20 leaves and 19 inner nodes.
    assert len(small._node_ids()) <= 60, small._dump()
    # The same through single deletions from the frontier.
    cur = core.frozendict({key(i): i for i in range(3_000)})
    for i in range(3_000):
        if i % 300:
            cur = cur.delete(key(i))
    assert len(cur) == 10
    assert len(cur._node_ids()) <= 30, cur._dump()
    cur._check()


def test_evolver_batch_creates_fewer_nodes_than_separate_sets(core, built):
    n = SIZES[0]
    fd, ids = built[n]
    k = 50
    targets = [key(i) for i in range(500, 500 + k)]  # neighbours in the order trie
    e = fd.evolve()
    for t in targets:
        e[t] = "batch"
    batch = created(e.freeze(), ids)
    separate = 0
    cur, cur_ids = fd, ids
    for t in targets:
        nxt = cur.set(t, "one")
        nxt_ids = frozenset(nxt._node_ids())
        separate += len(nxt_ids - cur_ids)
        cur, cur_ids = nxt, nxt_ids
    assert e.freeze() == cur | {t: "batch" for t in targets}
    assert batch < separate / 2, (batch, separate)
    # Each node is copied at most once per evolver: no more than k paths' worth.
    assert batch <= k * PER_EDIT
    print(
        "\nevolver batch of %d edits at n=%d (%s core): %d new nodes; separate sets: %d"
        % (k, n, core.name, batch, separate)
    )


def test_evolver_edits_in_place_do_not_grow_the_new_node_count(core, built):
    """Editing the same key again and again in one evolver copies its path once."""
    fd, ids = built[SIZES[1]]
    e = fd.evolve()
    e[key(77)] = 0
    once = created(e.freeze(), ids)
    for v in range(1, 200):
        e[key(77)] = v
    again = created(e.freeze(), ids)
    assert again <= once, (once, again)


def test_or_with_ten_keys_creates_o_k_log_n_nodes(core, built):
    fd, ids = built[SIZES[1]]
    other = {key(i * 9_973): "x" for i in range(5)}
    other.update({("new", i): i for i in range(5)})
    out = fd | other
    count = created(out, ids)
    assert count <= 10 * PER_EDIT // 2, count
    assert len(out) == SIZES[1] + 5
    out._check()
    print("\n| with 10 keys at n=100k (%s core): %d new nodes" % (core.name, count))
    # - and & with few keys are just as cheap.
    assert created(fd - [key(i * 1_001) for i in range(10)], ids) <= 10 * PER_EDIT // 2


def test_equality_of_versions_one_set_apart(core, built):
    base, _ = built[SIZES[1]]
    k = key(12_345)
    changed = base.set(k, -1)
    restored = changed.set(k, int("12345"))  # equal, but a distinct object
    assert base != changed and changed != base
    assert not (base == changed)
    assert restored == base and base == restored
    moved = base.delete(k).set(k, base[k])
    assert moved == base and base == moved
    assert list(moved)[-1] == k
    assert changed.delete(k) == base.delete(k)
    assert base.set("extra", 1) != base
    assert base.set("extra", 1).delete("extra") == base
    assert base.set(key(99_999), "x") != base.set(key(0), "x")


def test_equality_of_versions_one_set_apart_skips_shared_subtrees(core):
    base = core.frozendict({key(i): CountingValue(i) for i in range(20_000)})
    k = key(12_345)
    changed = base.set(k, CountingValue(-1))
    restored = changed.set(k, CountingValue(12_345))
    CountingValue.reset()
    assert base != changed and restored == base and base == restored
    # A parallel walk that skips shared subtrees compares a handful of values.
    assert CountingValue.eq_calls <= 16, CountingValue.eq_calls


def test_equality_one_set_apart_against_dicts(core):
    n = 20_000
    base = core.frozendict({key(i): i for i in range(n)})
    as_dict = dict(base.items())
    changed = base.set(key(7), "x")
    assert changed != as_dict and as_dict != changed
    assert base == as_dict and as_dict == base


# --- canonical shape --------------------------------------------------------------------


def key_trie_shape(fd):
    """The key-trie node lines of ``_dump()`` (bitmaps / collision hashes, indented),
    without the entries (whose seqs depend on history), or None when the dump
    has no such lines."""
    dump = fd._dump()
    section = dump.split("order trie")[0]
    lines = [
        line.rstrip() for line in section.splitlines() if re.match(r"\s*(Bitmap|Collision)\b", line)
    ]
    return lines or None


def canonical_keys():
    keys = [key(i) for i in range(1_500)]
    keys += [HashKey(99, "c%d" % i) for i in range(6)]  # one collision node
    keys += [HashKey(99 + (j << 5), "p%d" % j) for j in range(1, 4)]  # same first digit
    keys += [HashKey(99 + (1 << 60), "top")]  # differs only in the last digit
    keys += list(range(100))
    return keys


def test_same_keys_in_any_history_give_the_same_shape(core):
    import random

    keys = canonical_keys()
    rng = random.Random(7)
    forward = core.frozendict((k, 0) for k in keys)
    shuffled = keys[:]
    rng.shuffle(shuffled)
    other_order = core.frozendict((k, 0) for k in shuffled)
    extras = [key(-i) for i in range(1, 3_000)] + [HashKey(99, "x%d" % i) for i in range(5)]
    e = core.frozendict((k, 0) for k in extras[:1000]).evolve()
    for k in keys:
        e[k] = 0
    for k in extras[1000:]:
        e[k] = 0
    for k in extras:
        del e[k]
    via_deletes = e.freeze()
    step_by_step = core.frozendict((k, 0) for k in shuffled + extras[::7])
    for k in extras[::7]:
        step_by_step = step_by_step.delete(k)

    versions = [forward, other_order, via_deletes, step_by_step]
    for v in versions:
        v._check()
        assert len(v) == len(keys)
        for w in versions:
            assert v == w
    shapes = [key_trie_shape(v) for v in versions]
    if shapes[0] is not None:  # the dump is readable: compare the shapes themselves
        for shape in shapes[1:]:
            assert shape == shapes[0]


def test_dump_is_deterministic(core):
    fd = core.frozendict((k, 0) for k in canonical_keys())
    assert fd._dump() == fd._dump()
    assert isinstance(fd._dump(), str)


def test_a_derived_version_outlives_the_versions_it_was_derived_from(core):
    """In the C core a derived node borrows the children it shares with the
    node it was copied from (a loan) and keeps that node alive instead; a
    version must stay whole after every version before it is gone, through
    chains of sets, inserts and deletes (``_check`` verifies every loan)."""
    import gc
    import random

    rng = random.Random(11)
    model = {key(i): i for i in range(5_000)}
    cur = core.frozendict(model)
    for step in range(3_000):
        k = key(rng.randrange(6_000))
        if k in model and step % 3 == 0:
            del model[k]
            cur = cur.delete(k)
        else:
            model[k] = step
            cur = cur.set(k, step)
        if step % 500 == 0:
            gc.collect()
            cur._check()
    gc.collect()
    cur._check()
    assert dict(cur) == model
    assert list(cur.items()) == list(model.items())


def test_an_evolver_over_a_derived_version_never_writes_into_what_it_shares(core):
    """A derived version shares (in the C core: borrows) most of its children
    with the version it came from.  An evolver started on it owns the root
    only; every node it reaches through a shared child must be copied, not
    edited, whatever that child's own reference count says."""
    base = core.frozendict({key(i): i for i in range(2_000)})
    derived = base.set(key(5), "five").delete(key(6))
    del base  # the derived version's nodes now hold the only loans on base's nodes
    snapshot = list(derived.items())

    def edit(mapping):
        for i in range(0, 2_000, 3):
            mapping[key(i)] = -i
        for i in range(1, 2_000, 7):
            mapping.pop(key(i), None)
        for i in range(2_000, 2_300):
            mapping[key(i)] = i

    e = derived.evolve()
    edit(e)
    frozen = e.freeze()
    derived._check()
    frozen._check()
    assert list(derived.items()) == snapshot
    expected = dict(snapshot)
    edit(expected)
    assert dict(frozen) == expected
