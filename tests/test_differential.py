"""Differential testing: the C core, the pure core and a dict model, op for op.

Hypothesis draws sequences of operations (``differential_engine`` lists them:
construction from pairs and from dicts, set/delete/discard, ``|``, ``-``,
``&``, evolver edits including failing and all-or-nothing ones, ``diff``,
``==``, ``hash``, ``repr``, iteration and ``reversed``, lookups, ``fromkeys``)
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
edit = st.tuples(st.integers(0, de.N_EDITS - 1), key_index, value_index, pairs)

operation = st.one_of(
    st.tuples(st.just(de.BUILD), pairs),
    st.tuples(st.just(de.BUILD_DICT), pairs),
    st.tuples(st.just(de.SET), version, key_index, value_index),
    st.tuples(st.just(de.DELETE), version, key_index),
    st.tuples(st.just(de.DISCARD), version, key_index),
    st.tuples(st.just(de.OR), version, version),
    st.tuples(st.just(de.OR_DICT), version, pairs),
    st.tuples(st.just(de.SUB), version, key_list),
    st.tuples(st.just(de.AND), version, key_list),
    st.tuples(st.just(de.EVOLVE), version, st.lists(edit, max_size=12)),
    st.tuples(st.just(de.DIFF), version, version),
    st.tuples(st.just(de.DIFF_DICT), version, version),
    st.tuples(st.just(de.EQ), version, version),
    st.tuples(st.just(de.HASH), version),
    st.tuples(st.just(de.REPR), version),
    st.tuples(st.just(de.ITER), version),
    st.tuples(st.just(de.LOOKUP), version, key_index),
    st.tuples(st.just(de.FROMKEYS), key_list, value_index),
    st.tuples(st.just(de.HOSTILE), version, st.integers(0, len(de.HOSTILE_TYPES) - 1), pairs),
)
operations = st.lists(operation, min_size=3, max_size=60)

# Each example takes milliseconds: run five times the profile's count
# (300 under the ci profile, 750 under dev, 15,000 under long).
many = settings(max_examples=5 * settings.default.max_examples)

K = {repr(k): i for i, k in enumerate(de.KEYS)}  # key index by repr, for the examples below

# Hand-written sequences that must always run (regressions and corner cases).
EXAMPLES = [
    # 1, 1.0 and True are one key; the first object stays; -1/-2 collide
    [(de.BUILD, [(K["1"], 0), (K["1.0"], 1), (K["True"], 2), (K["-1"], 3), (K["-2"], 4)]),
     (de.ITER, 1), (de.HASH, 1), (de.DELETE, 1, K["True"]), (de.ITER, 2)],
    # the key whose __eq__ raises against its hash-mate, in every derivation
    [(de.BUILD, [(K["EqBomb(77)"], 0)]), (de.SET, 1, K["HashKey(77, 'bombmate')"], 1),
     (de.SUB, 1, [K["HashKey(77, 'bombmate')"]]), (de.LOOKUP, 1, K["HashKey(77, 'bombmate')"]),
     (de.EVOLVE, 1, [(de.E_UPDATE, 0, 0, [(0, 1), (K["HashKey(77, 'bombmate')"], 2)]), (de.E_SETITEM, 3, 3, [])])],
    # unhashable keys and values; a failing update applies nothing
    [(de.BUILD, [(0, 5), (len(de.GOOD_KEYS), 0)]), (de.BUILD, [(0, 5), (1, 8)]), (de.HASH, 2),
     (de.EVOLVE, 2, [(de.E_UPDATE, 0, 0, [(2, 1), (len(de.GOOD_KEYS) + 2, 1)]), (de.E_POPITEM, 0, 0, [])])],
    # colliding and deep keys, deleted down to nothing
    [(de.BUILD, [(K["HashKey(7, 'x')"], 0), (K["HashKey(7, 'y')"], 1), (K["HashKey(7, 'z')"], 2),
                 (K["HashKey(1152921504606846981, 'd1')"], 3), (K["HashKey(2305843009213693957, 'd2')"], 4)]),
     (de.DELETE, 1, K["HashKey(7, 'y')"]), (de.DIFF, 1, 2), (de.EQ, 2, 1),
     (de.SUB, 2, [K["HashKey(7, 'x')"], K["HashKey(7, 'z')"], K["HashKey(1152921504606846981, 'd1')"]]),
     (de.SUB, 3, [K["HashKey(2305843009213693957, 'd2')"], K["HashKey(7, 'y')"]]), (de.ITER, 4)],
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

    def or_(self, fd, other):
        return self.fd(list(other.items()) + [(k, v) for k, v in fd.items() if k not in other])


def test_the_engine_notices_a_wrong_answer(core):
    ops = [
        (de.BUILD, [(K["'a'"], 0), (K["'b'"], 1)]),
        (de.BUILD, [(K["'b'"], 2), (K["''"], 3)]),
        (de.OR, 1, 2),
    ]
    de.check_against_model(core, ops)
    runs = {"model": de.run(de.ModelBackend(), ops), "wrong": de.run(_Reordering(core), ops)}
    with pytest.raises(AssertionError, match="op #2 OR"):
        de.compare(runs, ops)
