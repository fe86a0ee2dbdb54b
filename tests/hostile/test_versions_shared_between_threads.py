"""Threads: versions shared between threads that read them, derive from them and
evolve them at once, on both cores (the thread harness and the free-threaded
cases are in ``tests/test_threads.py``).
"""

import threading

# --- threads ----------------------------------------------------------------------------------------


def test_versions_shared_between_threads(core):
    base = core.frozendict((i, i) for i in range(2_000))
    errors = []

    def work(seed):
        try:
            cur = base
            for step in range(300):
                k = (seed * 7919 + step * 31) % 2_500
                cur = cur.set(k, (seed, step)) if step % 3 else cur.discard(k)
                assert base[k % 2_000] == k % 2_000
            cur._check()
            e = base.evolve()
            for k in range(seed, 2_000, 50):
                e[k] = seed
            frozen = e.freeze()
            assert all(frozen[k] == seed for k in range(seed, 2_000, 50))
            assert hash(base) == hash(frozenset(base.items()))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert list(base.items()) == [(i, i) for i in range(2_000)]
    base._check()
