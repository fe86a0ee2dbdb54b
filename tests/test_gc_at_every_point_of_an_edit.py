"""A GC run at any point of an Evolver's edit sees a whole version.

``hostile/test_gc_and_finalizers.py`` drops a cyclic finalizer before each
edit with the collector's first threshold at 1: the collection then starts
at the finalizer's own allocations, before the edit, never inside it, so an
edit that forgot to pause the collector (mutant ``gc-not-paused``, issue 22)
passed.  Here the threshold moves from 1 to 23 across the edits, so the
collection that runs the finalizer lands at every allocation of the edits in
turn: between the key-trie step and the order-trie step, too.  What the
finalizer freezes must be a whole version (both tries agreeing, the hash
right) that never changes afterwards.
"""

import gc


def test_finalizer_freezing_the_evolver_at_every_allocation_of_its_edits(core):
    base = core.frozendict({i: i for i in range(600)})
    hash(base)  # known hash: the edits also update the accumulator
    e = base.evolve()
    published = []

    class Bomb:
        def __init__(self):
            self.me = self  # only the cycle collector frees it

        def __del__(self):
            frozen = e.freeze()
            published.append((frozen, list(frozen.items()), len(e)))

    thresholds = gc.get_threshold()
    try:
        for i in range(800):
            gc.set_threshold(1 + i % 23, 1, 1)
            Bomb()
            e[i % 700] = -i
            if i % 5 == 0:
                e.pop((i * 13) % 700, None)
            if i % 11 == 0:
                e.setdefault(("new", i), i)
    finally:
        gc.set_threshold(*thresholds)
    gc.collect()
    assert len(published) > 100  # the finalizers really ran
    for frozen, items, length in published:
        frozen._check()
        assert list(frozen.items()) == items
        assert len(frozen) == length == len(items)
        assert hash(frozen) == hash(frozenset(items))
    e._check()
