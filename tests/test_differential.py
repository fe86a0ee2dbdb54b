"""Differential testing: the C core, the pure core and a dict model, op for op.

Hypothesis draws sequences of operations (every entry of
``tests/operations.py`` that names the differential engine: construction,
set/delete/discard, ``|``, ``-``, ``&``, evolver edits including failing and
all-or-nothing ones, ``diff`` and ``Diff.apply``, ``==``, ``hash``, ``repr``,
iteration, lookups, copies and pickles, nested paths, ``merge_with`` ...)
over a pool of adversarial keys (``1``/``1.0``/``True``, ``-1``/``-2``,
multiples of 2**61-1, NaN, colliding and deep-hashed ``HashKey`` objects, a key
whose ``__eq__`` raises, unhashable keys, a ``__hash__`` raising a non-TypeError
and one raising an exact TypeError) and values (unhashable ones included).
Every observation must be identical between the two cores: results, the key
objects kept, orders, hashes, reprs, identity shortcuts, exception types and
messages; and identical to the dict model wherever a dict can predict it.

The two-core test is skipped (with the reason) when only one core imports,
and fails under ``FROZENMAP_REQUIRE_C=1`` (``available_cores()`` raises then).
Each core is also checked against the model on its own, and the fuzz corpus
(``fuzz/corpus``) is replayed on every core.
"""

import os

import differential_engine as de
import pytest
from conftest import available_cores
from hypothesis import example, given, settings
from hypothesis import strategies as st

CORES = available_cores()  # raises under FROZENMAP_REQUIRE_C=1 if the C core is missing

key_index = st.integers(0, len(de.GOOD_KEYS) - 1) | st.integers(0, len(de.KEYS) - 1)
value_index = st.integers(0, len(de.VALUES) - 1)
version = st.integers(0, 63)
pairs = st.lists(st.tuples(key_index, value_index), max_size=8)
key_list = st.lists(key_index, max_size=6)
# a few keys, so that paths meet the maps set_in made
path = st.lists(st.integers(0, 3) | key_index, max_size=3)

FIELD = de.registry.role_table(
    de.registry.DIFFERENTIAL,
    {
        "version": version,
        "other": version,
        "key": key_index,
        "value": value_index,
        "pairs": pairs,
        "mapping": pairs,
        "keys": key_list,
        "path": path,
        "fn": st.integers(0, len(de.registry.FN_POOL) - 1),
        "hostile": st.integers(0, len(de.HOSTILE_TYPES) - 1),
        "position": st.integers(0, len(de.POSITIONS) - 1),
        "span": st.tuples(
            st.integers(0, len(de.POSITIONS) - 1), st.integers(0, len(de.POSITIONS) - 1)
        ),
    },
    besides=("edits",),  # (drawn from the edits below)
)
"""A strategy for each role's field (differential_engine.fields)."""


def _drawn(code, entry, edit_strategy=None):
    parts = [FIELD[kind] if kind != "edits" else st.lists(edit_strategy, max_size=12)
             for kind in de.fields(entry)]  # fmt: skip
    return st.tuples(st.just(code), *parts)


edit = st.one_of([_drawn(i, entry) for i, entry in enumerate(de.EDITS)])
operation = st.one_of([_drawn(i, entry, edit) for i, entry in enumerate(de.OPS)])
operations = st.lists(operation, min_size=3, max_size=60)

# Each example takes milliseconds: run five times the profile's count
# (300 under the ci profile, 750 under dev, 15,000 under long).
many = settings(max_examples=5 * settings.default.max_examples)

K = {repr(k): i for i, k in enumerate(de.KEYS)}  # key index by repr, for the examples below
C = de.code
E = de.edit_code

# Hand-written sequences that must always run (regressions and corner cases).
EXAMPLES = [
    # 1, 1.0 and True are one key; the first object stays; -1/-2 collide
    [(C("frozendict(pairs)"), [(K["1"], 0), (K["1.0"], 1), (K["True"], 2), (K["-1"], 3), (K["-2"], 4)]),
     (C("iteration"), 1), (C("hash"), 1), (C("frozendict.delete"), 1, K["True"]), (C("iteration"), 2)],
    # the key whose __eq__ raises against its hash-mate, in every derivation
    [(C("frozendict(pairs)"), [(K["EqBomb(77)"], 0)]), (C("frozendict.set"), 1, K["HashKey(77, 'bombmate')"], 1),
     (C("fd - keys"), 1, [K["HashKey(77, 'bombmate')"]]), (C("lookup"), 1, K["HashKey(77, 'bombmate')"]),
     (C("frozendict.evolve"), 1, [(E("Evolver.update"), [(0, 1), (K["HashKey(77, 'bombmate')"], 2)]),
                                  (E("Evolver[k] = v"), 3, 3)])],
    # unhashable keys and values; a failing update applies nothing
    [(C("frozendict(pairs)"), [(0, 5), (len(de.GOOD_KEYS), 0)]), (C("frozendict(pairs)"), [(0, 5), (1, 8)]),
     (C("hash"), 2),
     (C("frozendict.evolve"), 2, [(E("Evolver.update"), [(2, 1), (len(de.GOOD_KEYS) + 2, 1)]),
                                  (E("Evolver.popitem"),)])],
    # colliding and deep keys, deleted down to nothing
    [(C("frozendict(pairs)"), [(K["HashKey(7, 'x')"], 0), (K["HashKey(7, 'y')"], 1), (K["HashKey(7, 'z')"], 2),
                               (K["HashKey(1152921504606846981, 'd1')"], 3), (K["HashKey(2305843009213693957, 'd2')"], 4)]),
     (C("frozendict.delete"), 1, K["HashKey(7, 'y')"]), (C("frozendict.diff"), 1, 2), (C("=="), 2, 1),
     (C("fd - keys"), 2, [K["HashKey(7, 'x')"], K["HashKey(7, 'z')"], K["HashKey(1152921504606846981, 'd1')"]]),
     (C("fd - keys"), 3, [K["HashKey(2305843009213693957, 'd2')"], K["HashKey(7, 'y')"]]), (C("iteration"), 4)],
    # nested paths: set_in makes the maps, the others walk them; merge_with; a diff applied elsewhere
    [(C("frozendict.set_in"), 0, [0, 1], 2), (C("frozendict.get_in"), 1, [0, 1], 3),
     (C("frozendict.update_in"), 1, [0, 1], 2), (C("frozendict.set_in"), 2, [0, 2, 3], 4),
     (C("frozendict.delete_in"), 3, [0, 1]), (C("frozendict.get_in"), 3, [0, 1, 2], 0),
     (C("frozendict.merge_with"), 3, 1, 2), (C("Diff.apply"), 1, 1, 3), (C("Diff.apply"), 2, 0, 4),
     (C("frozendict.evolve"), 3, [(E("Evolver.set_in"), [0, 5], 1), (E("Evolver.delete_in"), [0, 2, 3]),
                                  (E("Evolver.update_in"), [0, 5], 2)]), (C("repr"), 9), (C("hash"), 9)],
]  # fmt: skip


def _with_examples(test):
    for ops in EXAMPLES:
        test = example(ops=ops)(test)
    return test


@pytest.mark.skipif(
    len(CORES) < 2,
    reason="differential test needs both cores; only %s imports"
    % (", ".join(c.name for c in CORES) or "no core"),
)
@many
@_with_examples
@given(ops=operations)
def test_both_cores_and_the_dict_model_agree(ops):
    runs = {"model": de.run(de.ModelBackend(), ops)}
    for core in CORES:
        runs[core.name] = de.run(de.CoreBackend(core), ops)
    de.compare(runs, ops)


@many
@_with_examples
@given(ops=operations)
def test_each_core_agrees_with_the_dict_model(core, ops):
    de.check_against_model(core, ops)


def _corpus_files():
    here = os.path.dirname(os.path.abspath(__file__))
    corpus = os.path.join(os.path.dirname(here), "fuzz", "corpus")
    if not os.path.isdir(corpus):
        return []
    return sorted(os.path.join(corpus, name) for name in os.listdir(corpus))


def test_fuzz_corpus_replays_on_every_core(core):
    """Each seed in fuzz/corpus decodes to ops that agree with the dict model."""
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(os.path.dirname(here), "fuzz", "fuzz_ops.py")
    if not os.path.exists(path):
        pytest.skip("fuzz/fuzz_ops.py not found (tests run outside the source tree)")
    spec = importlib.util.spec_from_file_location("fuzz_ops_under_test", path)
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    files = _corpus_files()
    assert files, "fuzz/corpus holds no seeds"
    total = 0
    for name in files:
        with open(name, "rb") as f:
            data = f.read()
        ops = harness.decode(data)
        de.check_against_model(core, ops)
        total += len(ops)
    assert total > 0


class _Reordering(de.CoreBackend):
    """A deliberately wrong core: ``|`` puts the right side's items first."""

    def call(self, entry, subject, args):
        if entry.name != "fd | version":
            return super().call(entry, subject, args)
        (other,) = args
        return self.fd(list(other.items()) + [(k, v) for k, v in subject.items() if k not in other])


def test_the_engine_notices_a_wrong_answer(core):
    ops = [
        (C("frozendict(pairs)"), [(K["'a'"], 0), (K["'b'"], 1)]),
        (C("frozendict(pairs)"), [(K["'b'"], 2), (K["''"], 3)]),
        (C("fd | version"), 1, 2),
    ]
    de.check_against_model(core, ops)
    runs = {"model": de.run(de.ModelBackend(), ops), "wrong": de.run(_Reordering(core), ops)}
    with pytest.raises(AssertionError, match=r"op #2 fd \| version"):
        de.compare(runs, ops)
