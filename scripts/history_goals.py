"""Measure ``frozenmap.History``'s persistence against the goals of issue 24.

For ``STEPS`` single-key edits of an ``N``-key map (defaults: 10,000 and
100,000), on the core that loads (``FROZENMAP_PURE_PYTHON=1`` for the other):

* the History's pickle against one version's pickle plus 200 B per step
  (and a list of the same versions, for scale);
* memory after loading (tracemalloc) against the History's before dumping
  (built from a loaded first version, so that both count its keys and values);
* load time (CPU time) against twice one version's unpickling plus 10 us per step;
* a nested reducer state (state -> todos -> todo), one changed leaf per step,
  against 300 B per step.

Usage: ``python scripts/history_goals.py [N] [STEPS]``.
"""

import pickle
import sys
import time

import frozenmap
from frozenmap import History, frozendict
from frozenmap.bench.operations import _traced as traced


def best_time(fn, repeat=5):
    """The best of ``repeat`` runs, in CPU time of this process (on a shared
    machine the wall clock counts the other processes too)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def edits(base, n, steps):
    h = History(base)
    m = base
    for i in range(steps):
        m = m.set("key%d" % (i * 7919 % n), -i)
        h.commit(m)
    return h


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    print("frozenmap %s core, n=%d, steps=%d" % (frozenmap.IMPLEMENTATION, n, steps))
    base = frozendict(("key%d" % i, i) for i in range(n))
    one = pickle.dumps(base, protocol=5)

    # the history as a process builds it from a loaded first version (its
    # keys and values counted, as they are in a loaded history)
    before = traced(lambda: edits(pickle.loads(one), n, steps))
    h = edits(base, n, steps)
    dumped = pickle.dumps(h, protocol=5)
    goal = 1.5 * len(one) + 200 * steps
    print(
        "pickle: %d B (one version %d B; goal <= %d B: %s); %.1f B/step beyond one version"
        % (len(dumped), len(one), goal, len(dumped) <= goal, (len(dumped) - len(one)) / steps)
    )
    if steps <= 10_000 and n <= 100_000:
        as_list = len(pickle.dumps(list(h)[:100], protocol=5)) * len(h) / 100
        print("a list of the same versions: ~%.0f MB (extrapolated from 100)" % (as_list / 1e6))

    after = traced(lambda: pickle.loads(dumped))
    print(
        "memory: %.1f MB before dumping, %.1f MB after loading (ratio %.2f; goal <= 1.2: %s)"
        % (before / 1e6, after / 1e6, after / before, after <= 1.2 * before)
    )

    t_one = best_time(lambda: pickle.loads(one))
    t_load = best_time(lambda: pickle.loads(dumped), repeat=3)
    goal_t = 2 * t_one + 10e-6 * steps
    print(
        "load: %.3f s (one version %.3f s; goal <= %.3f s: %s)"
        % (t_load, t_one, goal_t, t_load <= goal_t)
    )

    todos = frozendict(
        ("todo%d" % i, frozendict(id=i, title="todo number %d" % i, done=False, tags=("a",)))
        for i in range(1000)
    )
    state = frozendict(todos=todos, filter="all", user=frozendict(name="ada"))
    nested = History(state)
    s = state
    for i in range(steps // 10):
        s = s.set_in(["todos", "todo%d" % (i * 37 % 1000), "done"], i % 2 == 0)
        nested.commit(s)
    size = len(pickle.dumps(nested, protocol=5)) - len(pickle.dumps(state, protocol=5))
    per_step = size / (steps // 10)
    print("nested reducer state: %.1f B/step (goal <= 300: %s)" % (per_step, per_step <= 300))


if __name__ == "__main__":
    main()
